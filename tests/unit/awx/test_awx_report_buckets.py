# -*- coding: utf-8 -*-
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""Every job template whose playbook writes a report, an archive or an audit asks for the bucket it goes
to: what a job writes inside its private directory dies with the job."""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import os

import yaml

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__)))))
TEMPLATES = os.path.join(ROOT, "awx", "controller", "job_templates.yml")
# the collection's playbooks that write files on the controller: NCCL test and diagnosis reports, the job
# evidence archive, the remediation audit
WRITERS = ("site", "validate", "fabric", "upgrade_plugin", "remediate", "diagnose_job")
# tags that run only phases writing no file
READ_ONLY_TAGS = ("preflight",)


def _templates():
    with open(TEMPLATES) as handle:
        return yaml.safe_load(handle)["controller_templates"]


def _project_playbook(template):
    with open(os.path.join(ROOT, "awx", "project", template["playbook"])) as handle:
        return [play["ansible.builtin.import_playbook"] for play in yaml.safe_load(handle)]


def writes(template):
    imported = [name.split(".", 2)[2] for name in _project_playbook(template)]
    return any(name in WRITERS for name in imported) and template.get("job_tags") not in READ_ONLY_TAGS


def asks_for_the_bucket(template):
    spec = (template.get("survey_spec") or {}).get("spec") or []
    return template.get("survey_enabled") and "gpudirect_report_bucket" in [q["variable"] for q in spec]


def test_every_template_that_writes_asks_for_the_bucket():
    writers = [t for t in _templates() if writes(t)]
    assert {"GPU cluster - remediate", "GPU cluster - release node", "GPU cluster - job evidence"} <= set(
        t["name"] for t in writers)
    assert [t["name"] for t in writers if not asks_for_the_bucket(t)] == []


def test_the_check_sees_a_writer_without_the_bucket():
    template = dict(_templates()[0], survey_spec={"spec": []})
    assert writes(template) and not asks_for_the_bucket(template)


def test_the_remediation_templates_keep_the_guards_books_in_a_bucket_and_take_the_alerts():
    by_name = dict((t["name"], t) for t in _templates())
    for name in ("GPU cluster - remediate", "GPU cluster - release node"):
        spec = dict((q["variable"], q) for q in by_name[name]["survey_spec"]["spec"])
        assert spec["remediate_state_bucket"]["required"] is True, name
    remediate = by_name["GPU cluster - remediate"]
    # the EDA controller's launch sends the alert as extra variables and the rulebook's hosts as the limit
    assert remediate["ask_variables_on_launch"] and remediate["ask_limit_on_launch"]
    evidence = by_name["GPU cluster - job evidence"]
    assert evidence["ask_limit_on_launch"]
    assert "diagnose_job" in [q["variable"] for q in evidence["survey_spec"]["spec"]]
