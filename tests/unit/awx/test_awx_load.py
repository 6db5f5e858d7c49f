# -*- coding: utf-8 -*-
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""awx/controller/load.yml loads every definition with the awx.awx modules: each entry's fields are
options of its module (as the installed awx.awx documents them), the loader passes every field the
entries use, the names entries refer to are defined, and the repair template diagnose names exists
with the prompts a repair line needs."""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import glob
import os
import re

import pytest
import yaml

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__)))))
CONTROLLER = os.path.join(ROOT, "awx", "controller")
LOADER = os.path.join(CONTROLLER, "load.yml")


def _load(path):
    with open(path, encoding="utf-8") as fh:
        return yaml.safe_load(fh)


def awx_modules_dir():
    """awx.awx's modules: this Python's `ansible` package has them up to ansible 9; newer releases
    dropped the collection, so the newest-core run reads the copy in the oldest-core .venv."""
    try:
        import ansible_collections.awx.awx.plugins.modules as mods
        return os.path.dirname(mods.__file__)
    except ImportError:
        found = glob.glob(os.path.join(ROOT, ".venv", "lib", "python3*", "site-packages", "ansible_collections",
                                       "awx", "awx", "plugins", "modules"))
        assert found, "awx.awx is not installed here or in .venv (make venv installs it)"
        return found[0]


def module_options(module):
    """The options (and aliases) an awx.awx module documents, from the installed collection."""
    path = os.path.join(awx_modules_dir(), module + ".py")
    with open(path, encoding="utf-8") as fh:
        text = fh.read()
    doc = re.search(r"DOCUMENTATION = r?(['\"]{3})(.*?)\1", text, re.S).group(2)
    options = yaml.safe_load(doc)["options"]
    return set(options) | set(a for o in options.values() for a in (o or {}).get("aliases") or [])


def loader_tasks():
    """[(module, variable it loops over, {option: template})] of load.yml."""
    (play,) = _load(LOADER)
    out = []
    for task in play["tasks"]:
        (module,) = [k for k in task if k.startswith("awx.awx.")]
        variable = re.match(r"^\{\{ (controller_\w+) \}\}$", task["loop"]).group(1)
        out.append((module.split(".")[-1], variable, task[module]))
    return out


def definitions():
    """{variable: entries} over the controller's variable files."""
    out = {}
    for path in sorted(glob.glob(os.path.join(CONTROLLER, "*.yml"))):
        if path != LOADER:
            for variable, entries in (_load(path) or {}).items():
                out.setdefault(variable, []).extend(entries)
    return out


TASKS = loader_tasks()


def test_the_loader_loads_every_definition_file_and_variable():
    (play,) = _load(LOADER)
    files = sorted(os.path.basename(p) for p in glob.glob(os.path.join(CONTROLLER, "*.yml")) if p != LOADER)
    assert sorted(play["vars_files"]) == files
    assert sorted(v for _m, v, _a in TASKS) == sorted(definitions())


@pytest.mark.parametrize("module, variable, args", TASKS, ids=[v for _m, v, _a in TASKS])
def test_loader_options_are_module_options_and_cover_every_field(module, variable, args):
    options = module_options(module)
    assert sorted(set(args) - options) == []
    entries = definitions()[variable]
    used = set(k for entry in entries for k in entry)
    # a field an entry sets but the loader does not pass would be silently lost
    assert sorted(used - set(args)) == []
    for option, value in args.items():
        assert "item.%s" % option in value, "%s: %s does not pass item.%s" % (module, option, option)


def test_the_checker_catches_an_unknown_option():
    assert "credentials" in module_options("job_template")
    assert "credentials" not in module_options("inventory_source")


def test_names_that_entries_refer_to_are_defined():
    defs = definitions()
    names = dict((v, set(e["name"] for e in entries)) for v, entries in defs.items())
    types = names["controller_credential_types"] | {"Machine", "Google Compute Engine"}
    problems = []
    for cred in defs["controller_credentials"]:
        if cred["credential_type"] not in types:
            problems.append("credential %s: type %s" % (cred["name"], cred["credential_type"]))
    for template in defs["controller_templates"]:
        problems += ["template %s: credential %s" % (template["name"], c) for c in template.get("credentials", [])
                     if c not in names["controller_credentials"]]
        if template["execution_environment"] not in names["controller_execution_environments"]:
            problems.append("template %s: execution environment" % template["name"])
    for source in defs["controller_inventory_sources"]:
        if source.get("credential") not in names["controller_credentials"]:
            problems.append("inventory source %s: credential %s" % (source["name"], source.get("credential")))
    assert problems == []


def test_no_secret_is_written_in_the_definitions():
    for cred in definitions()["controller_credentials"]:
        for key, value in cred["inputs"].items():
            assert "{{" in str(value), "credential %s: input %s is a literal" % (cred["name"], key)
    (play,) = _load(LOADER)
    (task,) = [t for t in play["tasks"] if "awx.awx.credential" in t]
    assert task["no_log"] is True


def test_the_repair_template_diagnose_names_prompts_for_a_repair_line():
    defaults = _load(os.path.join(ROOT, "roles", "diagnose", "defaults", "main.yml"))
    (template,) = [t for t in definitions()["controller_templates"]
                   if t["name"] == defaults["diagnose_repair_awx_template"]]
    assert template["playbook"] == "site.yml"
    for prompt in ("ask_limit_on_launch", "ask_tags_on_launch", "ask_variables_on_launch"):
        assert template[prompt] is True, prompt


def test_validate_takes_a_limit():
    (template,) = [t for t in definitions()["controller_templates"] if t["playbook"] == "validate.yml"]
    assert template["ask_limit_on_launch"] is True


def test_docs_name_every_template_workflow_and_project_playbook():
    with open(os.path.join(ROOT, "docs", "awx.md"), encoding="utf-8") as fh:
        doc = fh.read()
    defs = definitions()
    missing = [t["name"] for t in defs["controller_templates"] + defs["controller_workflows"]
               if t["name"].replace("GPU cluster - ", "") not in doc]
    playbooks = sorted(os.path.basename(p) for p in glob.glob(os.path.join(ROOT, "awx", "project", "*.yml")))
    missing += [p for p in playbooks if p not in doc]
    assert missing == []
    words = {6: "six", 8: "eight"}
    assert "%s one-line playbooks" % words.get(len(playbooks), len(playbooks)) in doc
    assert "(%s, with surveys" % words.get(len(defs["controller_templates"]), len(defs["controller_templates"])) in doc
