# -*- coding: utf-8 -*-
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""Every action plugin is a thin GpuAction (plugins/plugin_utils/core/action_base.py): its arguments are checked
against its module's documented options, its known errors are one-line failures naming the module, and the
modules that take the Google credentials form the action group gpudirect.gcp.gce that module_defaults reaches."""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import importlib
import os
import sys

import pytest
import yaml

from ansible_collections.gpudirect.gcp.plugins.plugin_utils.core.action_base import GpuAction
from ansible_collections.gpudirect.gcp.plugins.plugin_utils.gce import gce_api

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))))
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import _playbook_result  # noqa: E402

PACKAGE = "ansible_collections.gpudirect.gcp.plugins"
ACTIONS = sorted(name[:-3] for name in os.listdir(os.path.join(ROOT, "plugins", "action"))
                 if name.endswith(".py") and not name.startswith("_"))
MODULES = sorted(name[:-3] for name in os.listdir(os.path.join(ROOT, "plugins", "modules"))
                 if name.endswith(".py") and not name.startswith("_"))


def _doc(module):
    return yaml.safe_load(importlib.import_module("%s.modules.%s" % (PACKAGE, module)).DOCUMENTATION)


def fragments(module):
    """The doc fragments the module extends, by name (gpudirect.gcp.<name>[.<part>])."""
    return [name.split(".")[2] for name in _doc(module).get("extends_documentation_fragment") or []]


def documented(module):
    """The module's documented options, its doc fragments' included."""
    doc = _doc(module)
    options = dict(doc.get("options") or {})
    for name in doc.get("extends_documentation_fragment") or []:
        parts = name.split(".")
        text = getattr(importlib.import_module("%s.doc_fragments.%s" % (PACKAGE, parts[2])).ModuleDocFragment,
                       parts[3].upper() if len(parts) > 3 else "DOCUMENTATION")
        options.update((yaml.safe_load(text) or {}).get("options") or {})
    return options


@pytest.mark.parametrize("name", ACTIONS)
def test_each_action_is_the_frame_and_its_own_work(name):
    plugin = importlib.import_module("%s.action.%s" % (PACKAGE, name)).ActionModule
    assert issubclass(plugin, GpuAction) and plugin.MODULE == name
    # the frame runs it: validation, check mode and errors are said once
    assert "run" not in vars(plugin) and "act" in vars(plugin)


@pytest.mark.parametrize("name", [n for n in ACTIONS
                                  if importlib.import_module("%s.action.%s" % (PACKAGE, n)).ActionModule.ARGUMENT_SPEC])
def test_each_actions_arguments_are_its_modules_documented_options(name):
    spec = importlib.import_module("%s.action.%s" % (PACKAGE, name)).ActionModule.ARGUMENT_SPEC
    options = documented(name)
    assert sorted(spec) == sorted(options)
    for option, rule in spec.items():
        for key in ("type", "elements", "default", "required", "choices"):
            assert options[option].get(key) == rule.get(key), (option, key)
    assert ("gce_auth" in fragments(name)) == (set(gce_api.AUTH_ARGUMENT_SPEC) <= set(spec))


def test_the_gce_group_lists_exactly_the_modules_with_the_google_credentials():
    with open(os.path.join(ROOT, "meta", "runtime.yml")) as handle:
        group = yaml.safe_load(handle)["action_groups"]["gce"]
    assert group == sorted(group)
    assert group == [m for m in MODULES if "gce_auth" in fragments(m)]
    # each of them is an action on the controller, whose frame takes the credentials' options
    assert set(group) <= set(ACTIONS)


PLAY = """
- hosts: localhost
  gather_facts: false
  module_defaults:
    group/gpudirect.gcp.gce:
      auth_kind: accesstoken
      access_token: frame-test-token-not-a-secret
      api_endpoint: http://127.0.0.1:9/from-the-group
  tasks:
    - name: A dry run, its endpoint from the group's defaults
      gpudirect.gcp.gce_report_faulty_host:
        instance: vm-1
        project: proj-a
        zone: us-central1-a
        description: slow
      check_mode: true
      register: dry
    - name: An option missing
      gpudirect.gcp.gce_report_faulty_host:
        instance: vm-1
        project: proj-a
        zone: us-central1-a
      register: missing
      ignore_errors: true
    - name: A bucket that cannot be one
      gpudirect.gcp.gcs_upload:
        src: /nonexistent
        bucket: Not A Bucket
      check_mode: true
      register: bucket
      ignore_errors: true
    - name: Show
      ansible.builtin.debug:
        msg: "RESULT={{ {'dry': dry, 'missing': missing, 'bucket': bucket} | to_json }}"
"""


def test_module_defaults_of_the_group_reach_the_action_and_errors_are_one_line(tmp_path):
    book = tmp_path / "play.yml"
    book.write_text(PLAY)
    env = dict((var, "") for var in gce_api.AUTH_ENV.values())
    rc, out, result = _playbook_result.run(["-i", "localhost,", "-c", "local", book], env)
    assert rc == 0 and result, out
    dry = result["dry"]
    assert dry["dry_run"] and dry["changed"] and not dry.get("failed")
    assert dry["request"]["url"] == ("http://127.0.0.1:9/from-the-group/compute/v1/projects/proj-a/zones/"
                                     "us-central1-a/instances/vm-1/reportHostAsFaulty")
    assert result["missing"]["failed"]
    assert result["missing"]["msg"] == "gce_report_faulty_host: missing required arguments: description"
    assert result["bucket"]["failed"] and result["bucket"]["msg"].startswith("gcs_upload: ")
    assert "\n" not in result["bucket"]["msg"] and "Not A Bucket" in result["bucket"]["msg"]
