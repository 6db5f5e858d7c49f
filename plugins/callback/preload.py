# -*- coding: utf-8 -*-
# Copyright: (c) 2026, gpudirect.gcp contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)

from __future__ import absolute_import, division, print_function

__metaclass__ = type

DOCUMENTATION = r"""
name: preload
type: aggregate
short_description: Cut the controller's CPU per task and node by loading plugins once, before the workers fork
version_added: 1.1.0
description:
  - ansible-playbook runs each task on each node in a worker process forked from its main process. A worker
    imports every plugin the main process has not imported yet, and collects garbage across the main process's
    objects, copying their memory.
  - At the start of a playbook this callback imports the collection's filter and action plugins, and the core
    connection, become, shell and action plugins nearly every task uses, and ansible-core's Jinja tests and
    filters, so that every worker inherits them. It also looks up, once, each of Jinja's own filters and tests
    (C(default), C(map), C(defined)...) that ansible-core's plugin loader does not hold, and remembers that
    it does not, where each worker would search ansible-core's filter and test files again for each. And it
    fills ansible-core's own memos that each worker would fill on its first task result (on 2.21, a task
    result's fields worked out from their type hints).
    At the start of the first play, once that play's templates are compiled, it collects the garbage and
    freezes the objects still alive (C(gc.freeze())), once a run, which the workers then leave alone.
  - On ansible-core 2.16 to 2.21, which compile every templated string anew in each worker, it also compiles the
    templates a task will use before the workers fork for it (the task's arguments, conditionals and fields, its
    role's variables, and at each play's start the variables of one node of each set of groups), and each worker
    takes the compiled code instead of compiling its own. From 2.19 a conditional is compiled as a Jinja
    expression, and the cache holds it as one. A template that applies a filter or a test to
    constants alone is left out, since Jinja runs such a filter while compiling (a C(random) filter over a
    constant would otherwise give every node the same number). It holds at most 8 MiB of template source; a
    template beyond that compiles in its worker, as does one holding a backslash. Later releases are left alone.
    The O(template_cache) option switches this part off.
  - On the collection's 2-core test machine this takes about 0.5 CPU-s a node off a converged C(site.yml) run
    and about 1.5 CPU-s off a run's fixed cost by the imports, and the compiling about a fifth of the
    controller's CPU (docs/scale.md). It changes nothing in what a task does or reports.
  - It prints nothing, unless a plugin cannot be imported; the task that uses that plugin still fails on its own.
    With C(-vvv) it says how many templates it compiled, and why any it could not, or in one line why it
    compiles none (the option is off, or ansible-core is outside 2.16 to 2.21).
author:
  - gpudirect.gcp contributors (@gpudirect)
requirements:
  - Enable it in C(ansible.cfg) with C(callbacks_enabled = gpudirect.gcp.preload) (as this collection's
    sample AWX project does), or with E(ANSIBLE_CALLBACKS_ENABLED).
options:
  template_cache:
    description:
      - Compile templates before the workers fork, on ansible-core 2.16 to 2.21. Switched off, each worker
        compiles its own, as without this callback; the plugins are still loaded and the garbage frozen.
    type: bool
    default: true
    env:
      - name: GPUDIRECT_TEMPLATE_CACHE
    ini:
      - section: gpudirect
        key: template_cache
    version_added: 1.2.0
"""


from ansible import release
from jinja2.defaults import DEFAULT_FILTERS, DEFAULT_TESTS
from ansible.plugins.callback import CallbackBase
from ansible.plugins.loader import (
    action_loader, become_loader, connection_loader, filter_loader, shell_loader, test_loader)

from ansible_collections.gpudirect.gcp.plugins.plugin_utils.core import jinja_cache, preload

try:
    from ansible.template import Templar
except ImportError:
    Templar = None

# a task's fields that a worker templates, besides its arguments and conditionals
TASK_FIELDS = ("vars", "loop", "loop_control", "environment", "delegate_to", "run_once",
               "ignore_errors", "no_log", "retries", "delay")
SAMPLED_HOSTS = 8
CORE_VERSION = release.__version__
EXPRESSIONS = jinja_cache.compiles_expressions(CORE_VERSION)
CONDITIONALS = ("when", "changed_when", "failed_when", "until")
# actions whose argument is a list of conditionals
ASSERTS = ("assert", "ansible.builtin.assert", "ansible.legacy.assert")


def _templar_and_environment():
    """A templar, and the Jinja environment a worker's templating uses: from 2.19 behind the
    templar's engine (whose `environment` property is deprecated), before it the templar's own.
    Its class is the one the cache serves, so no private module of ansible-core is imported."""
    if Templar is None:
        return None, None
    try:
        templar = Templar(loader=None)
        engine = getattr(templar, "_engine", None)
        return templar, engine.environment if engine is not None else templar.environment
    except Exception:  # pylint: disable=broad-except
        return None, None


class CallbackModule(CallbackBase):
    CALLBACK_VERSION = 2.0
    CALLBACK_TYPE = "aggregate"
    CALLBACK_NAME = "gpudirect.gcp.preload"
    CALLBACK_NEEDS_ENABLED = True

    def __init__(self, *args, **kwargs):
        super(CallbackModule, self).__init__(*args, **kwargs)
        self.loaded = False
        self.templar = None
        self.environment = None
        self.conditional = None
        self.roles_seen = set()

    def v2_playbook_on_start(self, playbook):
        if self.loaded:
            return
        self.loaded = True
        _imported, problems = preload.import_collection_plugins()
        for problem in problems:
            self._display.warning("gpudirect.gcp.preload: cannot import %s" % problem)
        preload.load_core_plugins({"action": action_loader, "become": become_loader,
                                   "connection": connection_loader, "shell": shell_loader})
        preload.load_jinja_plugins({"filter": filter_loader, "test": test_loader})
        preload.remember_jinja_builtin_lookups({"filter": (filter_loader, DEFAULT_FILTERS),
                                                "test": (test_loader, DEFAULT_TESTS)})
        preload.fill_core_memos()
        self._start_template_cache()

    def _start_template_cache(self):
        refused = jinja_cache.refusal(CORE_VERSION, self.get_option("template_cache"))
        templar = environment = None
        if refused is None:
            templar, environment = _templar_and_environment()
            if environment is None or not jinja_cache.install(environment.__class__):
                refused = "ansible-core %s has no Jinja environment to serve" % CORE_VERSION
        if refused is not None:
            self._display.vvv("gpudirect.gcp.preload: templates compiled in each worker: %s" % refused)
            return
        self.templar, self.environment = templar, environment

    def _precompile(self, values, task=None):
        """Compile the templated text in values, and a task's own, before the workers fork.

        The cache only saves work: whatever goes wrong here leaves a template to its worker."""
        if self.templar is None:
            return
        try:
            self._collect_and_compile(values, task)
        except Exception as exc:  # pylint: disable=broad-except
            self._display.vvv("gpudirect.gcp.preload: templates left to the workers: %s" % exc)

    def _collect_and_compile(self, values, task):
        looks = self.templar.is_possibly_template
        found, expressions = [], []
        for value in values:
            jinja_cache.template_strings(value, looks, found)
        if task is not None:
            jinja_cache.template_strings(task.args, looks, found)
            for name in TASK_FIELDS:
                jinja_cache.template_strings(getattr(task, name, None), looks, found)
            self._collect_conditionals(task, found, expressions)
            role = getattr(task, "_role", None)
            if role is not None and id(role) not in self.roles_seen:
                self.roles_seen.add(id(role))
                for name in ("_default_vars", "_role_vars"):
                    jinja_cache.template_strings(getattr(role, name, None), looks, found)
        jinja_cache.precompile(self.environment, found, expressions)

    def _collect_conditionals(self, task, found, expressions):
        """A task's conditionals, as the running ansible-core compiles them: up to 2.18 each inside
        the template it makes of it (found), from 2.19 each as a Jinja expression, stripped."""
        if EXPRESSIONS:
            form = None
        else:
            if self.conditional is None:
                self.conditional = jinja_cache.conditional_form(
                    lambda text, templar: task._check_conditional(text, templar, {})) or ()
            if not self.conditional:
                return
            form = self.conditional
        asserts = ("that",) if task.action in ASSERTS else ()
        for name in CONDITIONALS + asserts:
            value = task.args.get("that") if name == "that" else getattr(task, name, None)
            for text in value if isinstance(value, list) else [value]:
                if not isinstance(text, str) or hasattr(text, "__UNSAFE__"):
                    continue
                if form is None:
                    expressions.append(text.strip())
                else:
                    found.append(form[0] + text + form[1])

    def _play_variables(self, play):
        """The variables of one node of each set of groups in the play (the inventory's, its
        group_vars', the play's and its roles'), which every task may template."""
        manager = play.get_variable_manager()
        samples = {}
        for host in manager._inventory.get_hosts(play.hosts):
            samples.setdefault(tuple(sorted(group.name for group in host.get_groups())), host)
        return [manager.get_vars(play=play, host=host, include_hostvars=False, include_delegate_to=False)
                for host in list(samples.values())[:SAMPLED_HOSTS]]

    def v2_playbook_on_play_start(self, play):
        if self.templar is not None:
            try:
                self._precompile(self._play_variables(play))
            except Exception as exc:  # pylint: disable=broad-except
                self._display.vvv("gpudirect.gcp.preload: play variables left to the workers: %s" % exc)
        preload.freeze_heap()  # once a run: after the first play's templates are compiled

    def v2_playbook_on_task_start(self, task, is_conditional):
        self._precompile((), task)

    def v2_playbook_on_handler_task_start(self, task):
        self._precompile((), task)

    def v2_playbook_on_stats(self, stats):
        if self.templar is not None:
            self._display.vvv("gpudirect.gcp.preload: %d templates compiled before the workers forked"
                              % jinja_cache.size())
