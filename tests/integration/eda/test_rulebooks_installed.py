# Copyright: (c) 2026, gpudirect.gcp contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""The rulebooks and the event source ship, and run from the installed collection.

The collection is built into a tarball and installed into an empty collection path, as an operator
installs it; ansible-rulebook then resolves gpudirect.gcp.gpudirect_remediate (the command line's
rulebook, run_playbook) and gpudirect.gcp.gpudirect_remediate_controller (the EDA controller's,
run_job_template) from there, nothing from this checkout. Alerts are posted to the real source over HTTP:
- the command line's rulebook runs gpudirect.gcp.remediate with an inventory directory, whose group_vars
  reach the playbook (a settings change there shows in the guard's audit);
- the controller's rulebook launches the remediation job template on a stand-in of the controller's API
  (tests/emulator/controller_api.py) with the alert as ansible_eda and the limit of the rulebook, and a
  post without the activation's token launches nothing.
"""

import json
import os
import socket
import subprocess
import sys
import time
import urllib.request

import pytest
import yaml

ROOT = os.path.abspath(os.path.join(os.path.dirname(__file__), "..", "..", ".."))
sys.path.insert(0, os.path.join(ROOT, "tests", "emulator"))
import controller_api  # noqa: E402  pylint: disable=wrong-import-position
import webhook_client  # noqa: E402  pylint: disable=wrong-import-position
from webhook_client import free_port  # noqa: E402  pylint: disable=wrong-import-position

BIN = os.path.join(ROOT, ".venv", "bin")
NODE = "node-a"
TEMPLATE = "GPU cluster - remediate"
ALERT = {"status": "firing", "labels": {"alertname": "GPUDirectNodeRemediable", "instance": NODE, "remediate": "true",
                                        "component": "gpu", "subject": "xid"},
         "annotations": {"summary": "GPU fell off the bus"}, "startsAt": "2026-12-02T10:00:00Z"}


@pytest.fixture(scope="module")
def installed(tmp_path_factory):
    """The collection path holding only the collection built from this tree."""
    base = tmp_path_factory.mktemp("installed")
    env = dict(os.environ, PATH=BIN + os.pathsep + os.environ["PATH"])
    env.pop("ANSIBLE_CONFIG", None)
    subprocess.check_call([os.path.join(BIN, "ansible-galaxy"), "collection", "build", "--force", "--output-path",
                           str(base), ROOT], stdout=subprocess.DEVNULL, env=env, cwd=str(base))
    tarball = [p for p in os.listdir(str(base)) if p.endswith(".tar.gz")][0]
    subprocess.check_call([os.path.join(BIN, "ansible-galaxy"), "collection", "install", "--no-deps", "-p",
                           str(base / "collections"), str(base / tarball)], stdout=subprocess.DEVNULL, env=env,
                          cwd=str(base))
    return base / "collections"


def _env(collections, **more):
    env = dict(os.environ, ANSIBLE_COLLECTIONS_PATH=str(collections), ANSIBLE_NOCOLOR="1",
               PATH=BIN + os.pathsep + os.environ["PATH"], **more)
    # nothing of this checkout's configuration: the installed collection alone
    env.pop("ANSIBLE_CONFIG", None)
    return env


def _post(port, alerts, token=None):
    body = json.dumps({"version": "4", "status": "firing", "receiver": "gpudirect", "alerts": alerts}).encode()
    return webhook_client.post(port, body, token, content_type="application/json")


def _wait(what, check, log, timeout=120):
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        try:
            found = check()
        except OSError:
            found = None
        if found:
            return found
        time.sleep(0.5)
    raise AssertionError("%s within %d s; ansible-rulebook said:\n%s" % (what, timeout, log.read_text()[-4000:]))


def _listening(port):
    with socket.create_connection(("127.0.0.1", port), timeout=1):
        return True


def _rulebook(argv, cwd, env):
    log = cwd / "rulebook.log"
    process = subprocess.Popen([os.path.join(BIN, "ansible-rulebook")] + argv + ["-v"], cwd=str(cwd), env=env,
                               stdout=log.open("w"), stderr=subprocess.STDOUT, start_new_session=True)
    return process, log


def _stop(process):
    process.terminate()
    try:
        process.wait(timeout=30)
    except subprocess.TimeoutExpired:
        process.kill()


def test_the_tarball_holds_both_rulebooks_and_the_source(installed):
    home = installed / "ansible_collections" / "gpudirect" / "gcp" / "extensions"
    for rel in ("eda/rulebooks/gpudirect_remediate.yml", "eda/rulebooks/gpudirect_remediate_controller.yml",
                "eda/plugins/event_source/alertmanager.py"):
        assert (home / rel).is_file(), rel
    assert not (home / "molecule").exists()


def test_the_command_line_rulebook_runs_the_playbook_with_the_inventory_directorys_settings(installed, tmp_path):
    inventory = tmp_path / "inventory"
    (inventory / "group_vars").mkdir(parents=True)
    local = {"ansible_connection": "local", "ansible_python_interpreter": sys.executable}
    (inventory / "hosts.yml").write_text(yaml.safe_dump({"all": {"hosts": {"localhost": local}, "children": {
        "gpu_nodes": {"hosts": {NODE: dict(local), "node-b": dict(local)}}}}}))
    # a setting only group_vars holds: the audit shows whether it reached the playbook
    (inventory / "group_vars" / "all.yml").write_text(yaml.safe_dump({"remediate_enabled": False}))
    state = tmp_path / "state"
    port = free_port()
    process, log = _rulebook(["-r", "gpudirect.gcp.gpudirect_remediate", "-i", str(inventory),
                              "--env-vars", "GPUDIRECT_EDA_PORT"], tmp_path,
                             _env(installed, GPUDIRECT_EDA_PORT=str(port), GPUDIRECT_REMEDIATE_DIR=str(state)))
    try:
        _wait("the command line rulebook's source listening", lambda: _listening(port), log)
        assert _post(port, [ALERT]) == 202
        audit = state / "audit.jsonl"
        lines = _wait("a decision in the audit", lambda: audit.exists() and [
            json.loads(line) for line in audit.read_text().splitlines() if line.strip()], log)
    finally:
        _stop(process)
    assert [(line["decision"], line["node"]) for line in lines] == [("held", NODE)], lines
    assert lines[0]["reason"] == "remediation is switched off (remediate_enabled)"


def test_the_controller_rulebook_launches_the_remediation_template_only_with_the_token(installed, tmp_path):
    server, api_port = controller_api.serve(
        [{"name": TEMPLATE, "organization": "Default", "ask_limit_on_launch": True,
          "ask_variables_on_launch": True}], token="controller-secret")
    port = free_port()
    variables = tmp_path / "activation.yml"
    # what the activation gives: the source's port and token
    variables.write_text(yaml.safe_dump({"gpudirect_eda_port": port, "gpudirect_eda_host": "127.0.0.1",
                                         "gpudirect_eda_token": "webhook-secret"}))
    inventory = tmp_path / "inventory.yml"
    inventory.write_text(yaml.safe_dump({"all": {"hosts": {NODE: {}}}}))
    process, log = _rulebook(["-r", "gpudirect.gcp.gpudirect_remediate_controller", "-i", str(inventory),
                              "--vars", str(variables), "--controller-url", "http://127.0.0.1:%d/" % api_port,
                              "--controller-token", "controller-secret"], tmp_path, _env(installed))

    def launches():
        with urllib.request.urlopen("http://127.0.0.1:%d/_emulator/launches" % api_port, timeout=5) as answer:
            return json.load(answer)

    try:
        _wait("the controller rulebook's source listening", lambda: _listening(port), log)
        assert _post(port, [ALERT]) == 401
        assert _post(port, [ALERT], token="wrong") == 401
        assert _post(port, [ALERT], token="webhook-secret") == 202
        launched = _wait("a launch of the remediation template", launches, log)
        time.sleep(2)
        launched = launches()
    finally:
        _stop(process)
        server.shutdown()
    assert len(launched) == 1, launched
    assert launched[0]["template"] == TEMPLATE
    assert launched[0]["ignored"] == {}
    assert launched[0]["taken"]["limit"] == "localhost,gpu_nodes"
    event = launched[0]["taken"]["extra_vars"]["ansible_eda"]["event"]
    assert event["alert"] == ALERT
    assert event["meta"]["node"] == NODE


def test_the_controller_rulebook_does_not_start_without_its_token(installed, tmp_path):
    variables = tmp_path / "activation.yml"
    variables.write_text(yaml.safe_dump({"gpudirect_eda_port": free_port()}))
    inventory = tmp_path / "inventory.yml"
    inventory.write_text(yaml.safe_dump({"all": {"hosts": {NODE: {}}}}))
    server, api_port = controller_api.serve([], token="controller-secret")
    try:
        done = subprocess.run([os.path.join(BIN, "ansible-rulebook"), "-r",
                               "gpudirect.gcp.gpudirect_remediate_controller", "-i", str(inventory), "--vars",
                               str(variables), "--controller-url", "http://127.0.0.1:%d/" % api_port,
                               "--controller-token", "controller-secret"], cwd=str(tmp_path), env=_env(installed),
                              stdout=subprocess.PIPE, stderr=subprocess.STDOUT, universal_newlines=True, timeout=120,
                              check=False)
    finally:
        server.shutdown()
    assert done.returncode != 0
    assert "gpudirect_eda_token" in done.stdout, done.stdout[-3000:]
