# -*- coding: utf-8 -*-
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""The AWX definitions under awx/ match the collection they drive.

- every survey variable is an option of some role's meta/argument_specs.yml,
  with a compatible type, choices and default;
- job templates name playbooks the sample project has, and those import
  playbooks the collection ships;
- the environment variables the credential type injects and the inventory
  source passes are ones the inventory plugin reads.
"""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import glob
import os
import re

import pytest
import yaml

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__)))))
AWX = os.path.join(ROOT, "awx")

# AWX survey type -> argument_specs types that accept its answer
# (AWX sends integer/float answers as numbers and multiselect answers as lists).
COMPATIBLE = {
    "text": {"str", "path", "raw"},
    "textarea": {"str", "path", "raw"},
    "password": {"str", "raw"},
    "integer": {"int", "float", "raw"},
    "float": {"float", "raw"},
    "multiplechoice": {"str", "raw"},
    "multiselect": {"list"},
}


class _Loader(yaml.SafeLoader):  # pylint: disable=too-many-ancestors
    """SafeLoader that reads Ansible's !unsafe (the credential types' injectors) as the plain string."""


_Loader.add_constructor("!unsafe", lambda loader, node: loader.construct_scalar(node))


def _load(path):
    with open(path) as fh:
        return yaml.load(fh, Loader=_Loader)  # nosec: a SafeLoader


def role_options():
    """{variable: [(role, entry point, spec)]} over every role's argument_specs."""
    found = {}
    for path in sorted(glob.glob(os.path.join(ROOT, "roles", "*", "meta", "argument_specs.yml"))):
        role = path.split(os.sep)[-3]
        for entry, spec in (_load(path).get("argument_specs") or {}).items():
            for name, opt in ((spec or {}).get("options") or {}).items():
                found.setdefault(name, []).append((role, entry, opt or {}))
    return found


def _walk(node, key):
    if isinstance(node, dict):
        for k, v in node.items():
            if k == key:
                yield v
            else:
                yield from _walk(v, key)
    elif isinstance(node, list):
        for item in node:
            yield from _walk(item, key)


def definition_files():
    """The controller's variable files (load.yml, the playbook that loads them, is not one)."""
    return sorted(p for p in glob.glob(os.path.join(AWX, "controller", "*.yml")) if not p.endswith("load.yml"))


def surveys():
    out = []
    for path in definition_files():
        for survey in _walk(_load(path), "survey_spec"):
            out.append((os.path.relpath(path, ROOT), survey))
    return out


def _choices(value):
    if value is None:
        return []
    if isinstance(value, str):  # older AWX form: one choice per line
        return [c for c in value.split("\n") if c]
    return list(value)


def _type_ok(opt_type, value):
    checks = {"str": lambda v: isinstance(v, str), "path": lambda v: isinstance(v, str),
              "int": lambda v: isinstance(v, int) and not isinstance(v, bool),
              "float": lambda v: isinstance(v, (int, float)) and not isinstance(v, bool),
              "list": lambda v: isinstance(v, list), "raw": lambda v: True}
    return checks.get(opt_type, lambda v: False)(value)


def question_problems(question, options):
    """Why one survey question does not fit the roles' argument_specs ([] when it fits)."""
    var = question.get("variable")
    qtype = question.get("type")
    if qtype not in COMPATIBLE:
        return ["%s: unknown survey type %r" % (var, qtype)]
    if var not in options:
        return ["%s: no role has an option of this name" % var]
    problems = []
    for role, entry, opt in options[var]:
        where = "%s (%s.%s)" % (var, role, entry)
        opt_type = opt.get("type", "str")
        if opt_type not in COMPATIBLE[qtype]:
            problems.append("%s: survey type %s does not fit option type %s" % (where, qtype, opt_type))
            continue
        allowed = opt.get("choices")
        choices = _choices(question.get("choices"))
        if qtype in ("multiplechoice", "multiselect"):
            if not choices:
                problems.append("%s: %s question without choices" % (where, qtype))
            if allowed:
                extra = [c for c in choices if c not in allowed]
                if extra:
                    problems.append("%s: choices %s not allowed by the role (%s)" % (where, extra, allowed))
        if opt_type == "list" and opt.get("elements", "str") != "str":
            problems.append("%s: multiselect answers are strings, option elements are %s"
                            % (where, opt.get("elements")))
        default = question.get("default")
        if default not in (None, ""):
            if qtype == "multiselect":
                default = _choices(default)
                if not all(d in choices for d in default):
                    problems.append("%s: default %s not among the choices" % (where, default))
            elif qtype == "multiplechoice" and default not in choices:
                problems.append("%s: default %r not among the choices" % (where, default))
            elif not _type_ok(opt_type, default):
                problems.append("%s: default %r is not a %s" % (where, default, opt_type))
            if qtype in ("integer", "float"):
                lo, hi = question.get("min"), question.get("max")
                if (lo is not None and default < lo) or (hi is not None and default > hi):
                    problems.append("%s: default %r outside min/max" % (where, default))
    return problems


SURVEYS = surveys()


def test_there_are_surveys():
    assert len(SURVEYS) >= 3


@pytest.mark.parametrize("path,survey", SURVEYS, ids=["%s:%s" % (p, s.get("name")) for p, s in SURVEYS])
def test_survey_fields_match_role_argument_specs(path, survey):
    options = role_options()
    spec = survey.get("spec") or []
    assert spec, "%s: survey %r has no questions" % (path, survey.get("name"))
    names = [q.get("variable") for q in spec]
    assert len(names) == len(set(names)), "%s: a variable is asked twice" % path
    problems = []
    for question in spec:
        for key in ("question_name", "variable", "type"):
            if not question.get(key):
                problems.append("%s: question without %s" % (question.get("variable"), key))
        problems.extend(question_problems(question, options))
    assert not problems, "%s: %s" % (path, "; ".join(problems))


def test_checker_rejects_bad_questions():
    options = {"x_count": [("x", "main", {"type": "int"})],
               "x_mode": [("x", "main", {"type": "str", "choices": ["a", "b"]})],
               "x_list": [("x", "main", {"type": "list", "elements": "str", "choices": ["p", "q"]})]}
    assert question_problems({"variable": "x_count", "type": "integer", "default": 3}, options) == []
    assert question_problems({"variable": "nope", "type": "text"}, options)
    assert question_problems({"variable": "x_count", "type": "text"}, options)
    assert question_problems({"variable": "x_count", "type": "integer", "default": 9, "max": 5}, options)
    assert question_problems({"variable": "x_mode", "type": "multiplechoice", "choices": ["a", "c"]}, options)
    assert question_problems({"variable": "x_mode", "type": "multiplechoice", "choices": ["a"],
                              "default": "b"}, options)
    assert question_problems({"variable": "x_list", "type": "multiselect", "choices": ["p", "z"]}, options)
    assert question_problems({"variable": "x_list", "type": "multiselect", "choices": "p\nq"}, options) == []


def _templates():
    return [t for path in definition_files() for t in (_load(path).get("controller_templates") or [])]


def test_job_templates_use_project_playbooks_that_import_collection_playbooks():
    templates = _templates()
    assert templates
    for template in templates:
        playbook = os.path.join(AWX, "project", template["playbook"])
        assert os.path.exists(playbook), "%s: %s is not in awx/project" % (template["name"], template["playbook"])
        imported = [play["ansible.builtin.import_playbook"] for play in _load(playbook)]
        for name in imported:
            assert name.startswith("gpudirect.gcp."), "%s imports %s" % (playbook, name)
            target = os.path.join(ROOT, "playbooks", name.split(".", 2)[2] + ".yml")
            assert os.path.exists(target), "%s imports %s, which the collection lacks" % (playbook, name)
        # a sliced job would split the cluster for the NCCL tests: only the
        # configuration-only playbook may be sliced
        if template["playbook"] != "configure.yml":
            assert template.get("job_slice_count", 1) == 1, template["name"]


def _imports(path):
    """Every playbook path path imports, depth first, with the vars given at the import."""
    out = []
    for play in _load(path):
        name = play.get("ansible.builtin.import_playbook")
        if name:
            target = os.path.normpath(os.path.join(os.path.dirname(path), name))
            out.append((os.path.relpath(target, os.path.join(ROOT, "playbooks")), play.get("vars") or {}))
            out.extend(_imports(target))
    return out


def test_only_configuration_is_sliced_and_its_playbook_looks_across_no_node():
    sliced = [t for t in _templates() if t.get("job_slice_count", 1) > 1]
    assert [t["playbook"] for t in sliced] == ["configure.yml"]
    imported = dict(_imports(os.path.join(ROOT, "playbooks", "configure.yml")))
    assert imported["phases/preflight.yml"] == {"preflight_cluster_checks": False}
    assert "phases/gpu_host.yml" in imported and "phases/nccl_profile.yml" in imported
    for cross_node in ("phases/readiness.yml", "phases/nccl_tests.yml"):
        assert cross_node not in imported
    fabric = dict(_imports(os.path.join(ROOT, "playbooks", "fabric.yml")))
    assert fabric["phases/preflight.yml"] == {} and "phases/nccl_tests.yml" in fabric
    assert "phases/gpu_host.yml" not in fabric


def test_the_sliced_workflow_validates_every_node_in_one_job_whatever_the_slices_did():
    templates = dict((t["name"], t) for t in _templates())
    workflow = [w for path in definition_files() for w in (_load(path).get("controller_workflows") or [])
                if w["name"] == "GPU cluster - bring-up in slices"][0]
    nodes = dict((n["identifier"], n) for n in workflow["workflow_nodes"])
    configure = templates[nodes["configure"]["unified_job_template"]["name"]]
    fabric = templates[nodes["fabric"]["unified_job_template"]["name"]]
    preflight = templates[nodes["preflight"]["unified_job_template"]["name"]]
    assert configure["job_slice_count"] > 1 and configure["playbook"] == "configure.yml"
    assert fabric.get("job_slice_count", 1) == 1 and fabric["playbook"] == "fabric.yml"
    assert preflight.get("job_slice_count", 1) == 1 and preflight["job_tags"] == "preflight"
    assert nodes["preflight"]["related"]["success_nodes"] == [{"identifier": "configure"}]
    # the fabric job runs after failed slices too: its readiness and report name the nodes left behind
    assert nodes["configure"]["related"]["always_nodes"] == [{"identifier": "fabric"}]


def test_workflow_nodes_name_defined_templates_and_sources():
    known = set(t["name"] for t in _templates())
    sources = set(s["name"] for path in definition_files()
                  for s in (_load(path).get("controller_inventory_sources") or []))
    workflows = [w for path in definition_files() for w in (_load(path).get("controller_workflows") or [])]
    assert workflows
    for workflow in workflows:
        ids = set(n["identifier"] for n in workflow["workflow_nodes"])
        for node in workflow["workflow_nodes"]:
            ujt = node["unified_job_template"]
            pool = sources if ujt["type"] == "inventory_source" else known
            assert ujt["name"] in pool, "%s: node %s runs unknown %s" % (workflow["name"], node["identifier"], ujt)
            for kind in ("success_nodes", "failure_nodes", "always_nodes"):
                for nxt in (node.get("related") or {}).get(kind, []):
                    assert nxt["identifier"] in ids, "%s: %s -> missing %s" % (workflow["name"], node["identifier"],
                                                                               nxt["identifier"])


def plugin_env_names():
    names = set()
    # the plugin's own options and those of the doc fragments it may extend
    paths = [os.path.join(ROOT, "plugins", "inventory", "gce_gpu.py")]
    paths += glob.glob(os.path.join(ROOT, "plugins", "doc_fragments", "*.py"))
    for path in paths:
        with open(path) as fh:
            names.update(re.findall(r"-\s+name:\s+([A-Z][A-Z0-9_]+)\s*$", fh.read(), re.M))
    return names


def test_injected_and_source_variables_are_read_by_the_plugin():
    env = plugin_env_names()
    assert "GCP_IMPERSONATE_SERVICE_ACCOUNT" in env
    used = []
    for path in definition_files():
        data = _load(path)
        for ctype in data.get("controller_credential_types") or []:
            used.extend((ctype["name"], k) for k in (ctype["injectors"].get("env") or {}))
            fields = set(f["id"] for f in ctype["inputs"]["fields"])
            for value in (ctype["injectors"].get("env") or {}).values():
                for ref in re.findall(r"{{\s*(\w+)", value):
                    assert ref in fields, "%s injects unknown input %s" % (ctype["name"], ref)
        for source in data.get("controller_inventory_sources") or []:
            used.extend((source["name"], k) for k in (source.get("source_vars") or {}))
    assert used
    unknown = [u for u in used if u[1] not in env]
    assert not unknown, "the inventory plugin does not read %s" % unknown


def _credential_types():
    return dict((t["name"], t) for path in definition_files()
                for t in (_load(path).get("controller_credential_types") or []))


def injected_env(ctype, inputs):
    """The environment AWX gives a job for a credential of this type: its env injectors rendered with the
    credential's inputs, as AWX does (sandboxed Jinja)."""
    from jinja2.sandbox import SandboxedEnvironment
    env = SandboxedEnvironment()
    return dict((k, env.from_string(v).render(**inputs)) for k, v in (ctype["injectors"].get("env") or {}).items())


def _keyless_credentials():
    creds = [c for path in definition_files() for c in (_load(path).get("controller_credentials") or [])]
    return dict((c["name"], c) for c in creds if c["credential_type"] in _credential_types())


@pytest.mark.parametrize("name, account", [("GCP jobs impersonation", "gpu-jobs@p.iam.gserviceaccount.com"),
                                           ("GCP inventory impersonation", "gpu-inv@p.iam.gserviceaccount.com"),
                                           ("GCP workload identity", None)])
def test_keyless_credentials_give_the_actions_application_credentials_and_the_account(name, account):
    from ansible_collections.gpudirect.gcp.plugins.plugin_utils.gce import gce_api
    cred = _keyless_credentials()[name]
    inputs = dict(cred["inputs"], impersonate_service_account=account) if account else cred["inputs"]
    environ = injected_env(_credential_types()[cred["credential_type"]], inputs)
    # what the firewall check, the report upload and the host report read (gce_api.auth_from_env)
    args = {}
    gce_api.auth_from_env(args, environ)
    assert args.get("auth_kind") == "application" and "service_account_file" not in args
    assert args.get("impersonate_service_account") == account
    # the inventory plugin reads the same variables
    assert set(environ) <= plugin_env_names()


def test_a_jobs_token_gets_the_scope_each_action_asks_for():
    # GCP_SCOPES (compute.readonly unless set) is the inventory plugin's; were an action to read it, a
    # keyless job's uploads and host reports would get a read-only token
    from ansible_collections.gpudirect.gcp.plugins.plugin_utils.gce import gce_api
    assert "GCP_SCOPES" not in gce_api.AUTH_ENV.values()
    # the actions' shared frame reads the credentials from the environment; each action asks it to
    with open(os.path.join(ROOT, "plugins", "plugin_utils", "core", "action_base.py")) as fh:
        text = fh.read()
    assert "GCP_SCOPES" not in text and "auth_from_env(args, os.environ)" in text
    for action in ("gcs_upload", "gce_report_faulty_host", "gce_firewall_info"):
        with open(os.path.join(ROOT, "plugins", "action", action + ".py")) as fh:
            text = fh.read()
        assert "GCP_SCOPES" not in text and "self.gce_auth(result, args" in text, action
    with open(os.path.join(ROOT, "plugins", "action", "gcs_upload.py")) as fh:
        assert "scopes=gcs_upload.WRITE_SCOPES" in fh.read()
    with open(os.path.join(ROOT, "plugins", "action", "gce_report_faulty_host.py")) as fh:
        assert "scopes=WRITE_SCOPES" in fh.read()
    # the guard's books in Cloud Storage: read and replace objects
    with open(os.path.join(ROOT, "plugins", "plugin_utils", "remediation", "guard_store.py")) as fh:
        text = fh.read()
    assert "GCP_SCOPES" not in text and "auth_from_env(args, environ)" in text
    assert "scopes=gcs_upload.WRITE_SCOPES" in text
    env = injected_env(_credential_types()["GCP service account impersonation"],
                       {"impersonate_service_account": "a@p.iam.gserviceaccount.com"})
    assert env["GCP_SCOPES"] == "https://www.googleapis.com/auth/compute.readonly"
