# -*- coding: utf-8 -*-
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""awx/controller/load.yml loads every definition with the awx.awx modules: each entry's fields are
options of its module (as the installed awx.awx documents them), the loader passes every field the
entries use, the names entries refer to are defined, and the repair template diagnose names exists
with the prompts a repair line needs. load.yml run by ansible-playbook (awx.awx replaced by stand-ins that
record their arguments) for each form of Google Cloud authentication: the credentials it creates, the key
files it reads, and the credentials every template and inventory source gets."""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import glob
import json
import os
import re
import subprocess
import sys

import pytest
import yaml

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__)))))
CONTROLLER = os.path.join(ROOT, "awx", "controller")
LOADER = os.path.join(CONTROLLER, "load.yml")


class _Loader(yaml.SafeLoader):  # pylint: disable=too-many-ancestors
    """SafeLoader that reads Ansible's !unsafe (the credential types' injectors) as the plain string."""


_Loader.add_constructor("!unsafe", lambda loader, node: loader.construct_scalar(node))


def _load(path):
    with open(path, encoding="utf-8") as fh:
        return yaml.load(fh, Loader=_Loader)  # nosec: a SafeLoader


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


def loop_variables(loop, play_vars):
    """The controller_* variables a loop expression reads, directly or through one play variable."""
    found = re.findall(r"\bcontroller_\w+", loop)
    first = re.match(r"^\{\{\s*(\w+)", loop).group(1)
    if first in play_vars:
        found += re.findall(r"\bcontroller_\w+", str(play_vars[first]))
    return sorted(set(found))


def loader_tasks():
    """[(module, variables it loops over, {option: template})] of load.yml's awx.awx tasks."""
    (play,) = _load(LOADER)
    out = []
    for task in play["tasks"]:
        modules = [k for k in task if k.startswith("awx.awx.")]
        if modules:
            (module,) = modules
            variables = loop_variables(task["loop"], play.get("vars") or {})
            out.append((module.split(".")[-1], variables, task[module]))
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
    assert sorted(v for _m, vs, _a in TASKS for v in vs) == sorted(definitions())
    assert [vs for _m, vs, _a in TASKS if _m == "credential"] == [["controller_credentials",
                                                                   "controller_credentials_key_file"]]


@pytest.mark.parametrize("module, variables, args", TASKS, ids=[m for m, _v, _a in TASKS])
def test_loader_options_are_module_options_and_cover_every_field(module, variables, args):
    options = module_options(module)
    assert sorted(set(args) - options) == []
    entries = [e for v in variables for e in definitions()[v]]
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
    names["controller_credentials"] |= names["controller_credentials_key_file"]
    types = names["controller_credential_types"] | {"Machine", "Google Compute Engine"}
    problems = []
    for cred in defs["controller_credentials"] + defs["controller_credentials_key_file"]:
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
    defs = definitions()
    for cred in defs["controller_credentials"] + defs["controller_credentials_key_file"]:
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
    words = {6: "six", 7: "seven", 8: "eight", 9: "nine", 10: "ten", 11: "eleven", 12: "twelve", 13: "thirteen"}
    assert "%s one-line playbooks" % words.get(len(playbooks), len(playbooks)) in doc
    assert "(%s, with surveys" % words.get(len(defs["controller_templates"]), len(defs["controller_templates"])) in doc


# --- load.yml run for each form of Google Cloud authentication -------------------------------------------

# Stands in for each awx.awx module the loader calls: records the arguments it got (after templating,
# omitted options left out) and changes nothing.
STUB = '''
import json
import os

from ansible.plugins.action import ActionBase


class ActionModule(ActionBase):
    def run(self, tmp=None, task_vars=None):
        result = super(ActionModule, self).run(tmp, task_vars)
        with open(os.environ["AWX_LOAD_CALLS"], "a") as fh:
            fh.write(json.dumps({"module": self._task.action.split(".")[-1], "args": self._task.args}) + "\\n")
        result["changed"] = False
        return result
'''

KEY = {"type": "service_account", "private_key": "-----BEGIN PRIVATE KEY-----\nstand-in\n-----END PRIVATE KEY-----\n"}
JOBS_SA = "gpu-jobs@proj.iam.gserviceaccount.com"
INVENTORY_SA = "gpu-inventory@proj.iam.gserviceaccount.com"
GCE = "Google Compute Engine"


@pytest.fixture(scope="module")
def run_loader(tmp_path_factory):
    """run_loader(name, *extra vars) -> (process, [recorded module calls]), with a stand-in awx.awx."""
    base = tmp_path_factory.mktemp("awx-load")
    action_dir = base / "collections" / "ansible_collections" / "awx" / "awx" / "plugins" / "action"
    action_dir.mkdir(parents=True)
    for module in set(m for m, _v, _a in TASKS):
        (action_dir / (module + ".py")).write_text(STUB)
    (base / "ansible.cfg").write_text("[defaults]\n")
    (base / "nodes-ssh").write_text("-----BEGIN OPENSSH PRIVATE KEY-----\nstand-in\n")
    for account in ("inventory", "jobs"):
        key = dict(KEY, client_email="gpu-%s@proj.iam.gserviceaccount.com" % account, project_id="proj")
        (base / ("%s-sa.json" % account)).write_text(json.dumps(key))

    done = {}

    def run(name, *extra):
        if name in done:
            return done[name]
        calls = base / ("%s.jsonl" % name)
        argv = [os.path.join(os.path.dirname(sys.executable), "ansible-playbook"), "-i", "localhost,", LOADER,
                "-e", "awx_nodes_ssh_user=gpuadmin", "-e", "awx_nodes_ssh_key_file=%s" % (base / "nodes-ssh")]
        for arg in extra:
            argv += ["-e", arg.replace("{dir}", str(base))]
        env = dict(os.environ, ANSIBLE_CONFIG=str(base / "ansible.cfg"), ANSIBLE_NOCOLOR="1",
                   ANSIBLE_COLLECTIONS_PATH=str(base / "collections"), ANSIBLE_COLLECTIONS_SCAN_SYS_PATH="false",
                   AWX_LOAD_CALLS=str(calls))
        proc = subprocess.run(argv, cwd=str(base), env=env, stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
                              universal_newlines=True, check=False)
        recorded = [json.loads(line) for line in calls.read_text().splitlines()] if calls.exists() else []
        done[name] = (proc, recorded)
        return done[name]
    return run


# name -> (extra vars, {credential the definitions name: the one each template or source gets})
FORMS = {
    "key": (["awx_inventory_key_file={dir}/inventory-sa.json", "awx_jobs_key_file={dir}/jobs-sa.json"],
            {"GCP inventory service account": "GCP inventory service account",
             "GCP jobs service account": "GCP jobs service account"}),
    # the key file variables name files that do not exist: reading one would fail the run
    "keyless-impersonation": (["awx_gcp_auth=keyless", "awx_inventory_impersonate=" + INVENTORY_SA,
                               "awx_jobs_impersonate=" + JOBS_SA, "awx_inventory_key_file={dir}/absent.json",
                               "awx_jobs_key_file={dir}/absent.json"],
                              {"GCP inventory service account": "GCP inventory impersonation",
                               "GCP jobs service account": "GCP jobs impersonation"}),
    "keyless-workload-identity": (["awx_gcp_auth=keyless"],
                                  {"GCP inventory service account": "GCP workload identity",
                                   "GCP jobs service account": "GCP workload identity"}),
    "keyless-jobs-impersonation": (["awx_gcp_auth=keyless", "awx_jobs_impersonate=" + JOBS_SA],
                                   {"GCP inventory service account": "GCP workload identity",
                                    "GCP jobs service account": "GCP jobs impersonation"}),
}


def _by_module(calls, module):
    return [c["args"] for c in calls if c["module"] == module]


@pytest.mark.parametrize("form", sorted(FORMS))
def test_each_auth_form_loads_everything_with_credentials_that_exist(run_loader, form):
    extra, expected = FORMS[form]
    proc, calls = run_loader(form, *extra)
    assert proc.returncode == 0, proc.stdout[-3000:]
    defs = definitions()
    created = dict((c["name"], c) for c in _by_module(calls, "credential"))
    types = set(t["name"] for t in _by_module(calls, "credential_type")) | {"Machine", GCE}
    assert sorted(c["credential_type"] for c in created.values() if c["credential_type"] not in types) == []
    # every template and source is loaded, with the credentials of this form, and each of those is created
    templates = dict((t["name"], t) for t in _by_module(calls, "job_template"))
    assert sorted(templates) == sorted(t["name"] for t in defs["controller_templates"])
    for definition in defs["controller_templates"]:
        got = templates[definition["name"]].get("credentials")
        assert got == [expected.get(c, c) for c in definition.get("credentials", [])] or got is None
        assert sorted(set(got or []) - set(created)) == [], definition["name"]
    sources = dict((s["name"], s) for s in _by_module(calls, "inventory_source"))
    assert sorted(sources) == sorted(s["name"] for s in defs["controller_inventory_sources"])
    for definition in defs["controller_inventory_sources"]:
        assert sources[definition["name"]]["credential"] == expected[definition["credential"]]
        assert sources[definition["name"]]["credential"] in created
    # nothing is created that no template or source uses
    used = set(c for t in templates.values() for c in t.get("credentials", [])) | set(
        s["credential"] for s in sources.values())
    assert sorted(created) == sorted(used)
    gce = sorted(n for n, c in created.items() if c["credential_type"] == GCE)
    if form == "key":
        assert gce == ["GCP inventory service account", "GCP jobs service account"]
        jobs = created["GCP jobs service account"]["inputs"]
        assert (jobs["username"], jobs["project"]) == ("gpu-jobs@proj.iam.gserviceaccount.com", "proj")
        assert jobs["ssh_key_data"] == KEY["private_key"]
    else:
        assert gce == []
        assert not [c for c in created.values() if "ssh_key_data" in c["inputs"] and c["name"] != "GPU nodes SSH"]


def test_keyless_impersonation_names_the_accounts_and_workload_identity_takes_no_input(run_loader):
    _proc, calls = run_loader("keyless-impersonation", *FORMS["keyless-impersonation"][0])
    created = dict((c["name"], c) for c in _by_module(calls, "credential"))
    assert created["GCP jobs impersonation"]["inputs"] == {"impersonate_service_account": JOBS_SA}
    assert created["GCP inventory impersonation"]["inputs"] == {"impersonate_service_account": INVENTORY_SA}
    _proc, calls = run_loader("keyless-workload-identity", *FORMS["keyless-workload-identity"][0])
    created = dict((c["name"], c) for c in _by_module(calls, "credential"))
    assert sorted(created) == ["GCP workload identity", "GPU nodes SSH"]
    assert created["GCP workload identity"]["inputs"] == {}


def test_credential_types_reach_the_controller_unrendered(run_loader):
    # AWX renders the injectors when a job starts: the loader must pass them as written
    _proc, calls = run_loader("key", *FORMS["key"][0])
    loaded = dict((t["name"], t) for t in _by_module(calls, "credential_type"))
    for ctype in definitions()["controller_credential_types"]:
        assert loaded[ctype["name"]]["injectors"] == ctype["injectors"]
        assert loaded[ctype["name"]]["inputs"] == ctype["inputs"]
    injected = loaded["GCP service account impersonation"]["injectors"]["env"]
    assert injected["GCP_IMPERSONATE_SERVICE_ACCOUNT"] == "{{ impersonate_service_account }}"


def test_an_unknown_auth_form_stops_before_anything_is_loaded(run_loader):
    proc, calls = run_loader("unknown", "awx_gcp_auth=keyfile")
    assert proc.returncode != 0
    assert "awx_gcp_auth must be key or keyless, not keyfile" in proc.stdout
    assert calls == []
