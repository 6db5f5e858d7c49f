# Copyright: (c) 2026, gpudirect.gcp contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""An alert's text is data: no field of it is evaluated on the controller, whichever way it arrives.

Real runs, no mocks: ansible-playbook gpudirect.gcp.remediate on the oldest and the newest supported
ansible-core, given the alerts the way ansible-rulebook's run_playbook gives them (its own code writes
the extra variables) and the way an AWX job gives them (remediate_alerts); and the real chain, the
collection's rulebook and event source under ansible-rulebook, with the alerts posted to the source over
HTTP. Every field of every alert is a template that would leave a file behind if evaluated
(hostile_alerts.py); the runs must leave none, and the audit must hold the text as it was sent.
"""

import json
import os
import subprocess
import sys
import time
import urllib.request

import pytest
import yaml

sys.path.insert(0, os.path.dirname(__file__))
import hostile_alerts  # noqa: E402  pylint: disable=wrong-import-position
sys.path.insert(0, os.path.join(os.path.dirname(__file__), "..", "..", "emulator"))
import webhook_client  # noqa: E402  pylint: disable=wrong-import-position

ROOT = os.path.abspath(os.path.join(os.path.dirname(__file__), "..", "..", ".."))
CORES = {"oldest": os.path.join(ROOT, ".venv", "bin"), "newest": os.path.join(ROOT, "build", "venv-newest", "bin")}
NODE = "node-a"


def _inventory(tmp_path, settings):
    """Two GPU nodes on this machine (a dry run previews the node it would act on: its check cannot run
    here, and the preview says so)."""
    local = {"ansible_connection": "local", "ansible_python_interpreter": sys.executable}
    inventory = {"all": {
        "hosts": {"localhost": local},
        "vars": settings,
        "children": {"gpu_nodes": {"hosts": {NODE: dict(local), "node-b": dict(local)}}}}}
    path = tmp_path / "inventory.yml"
    path.write_text(yaml.safe_dump(inventory))
    return path


def _env():
    return dict(os.environ, ANSIBLE_CONFIG=os.path.join(ROOT, "ansible.cfg"), ANSIBLE_NOCOLOR="1",
                ANSIBLE_COLLECTIONS_PATH=os.path.join(ROOT, "build", "collections"))


def _audit(state_dir):
    with open(os.path.join(str(state_dir), "audit.jsonl")) as handle:
        return [json.loads(line) for line in handle if line.strip()]


def _assert_text_kept(marks, lines, sent):
    assert sorted(os.listdir(str(marks))) == [], "evaluated: %s" % sorted(os.listdir(str(marks)))
    # the decisions (the preview of the node a dry run would act on follows them)
    by_node = dict((line["node"], line) for line in lines if line["decision"] != "preview")
    about_node, about_template = sent
    assert by_node[NODE]["alert"] == about_node["labels"]["alertname"]
    assert by_node[NODE]["finding"] == "%s %s" % (about_node["labels"]["component"], about_node["labels"]["subject"])
    assert by_node[NODE]["decision"] == "dry_run", by_node[NODE]
    template_node = about_template["labels"]["instance"]
    assert by_node[template_node]["decision"] == "ignored"
    assert by_node[template_node]["reason"] == "%s is not a node of this inventory" % template_node


def _rulebook_extra_vars(alert):
    """The extra variables ansible-rulebook's run_playbook writes for one event, by its own code."""
    from ansible_rulebook.action.helper import Helper  # the installed ansible-rulebook's own

    helper = Helper.__new__(Helper)
    helper.metadata = type("Metadata", (), {"rule_set": "GPU node remediation from Alertmanager",
                                            "rule": "A firing alert goes through the guard"})()
    helper.control = type("Control", (), {"variables": {"event": {"alert": alert, "meta": {
        "endpoint": hostile_alerts.expression("unused", "endpoint"), "node": NODE}}}})()
    return yaml.dump(helper.collect_extra_vars({}))


@pytest.mark.parametrize("core", sorted(CORES))
@pytest.mark.parametrize("path", ["rulebook", "awx"])
def test_no_field_of_an_alert_is_evaluated_by_the_playbook(tmp_path, core, path):
    """run_playbook's ansible_eda (one event each) and an AWX job's remediate_alerts, on both cores."""
    playbook = os.path.join(CORES[core], "ansible-playbook")
    assert os.access(playbook, os.X_OK), "no %s: make venv venv-newest" % playbook
    marks = tmp_path / "marks"
    marks.mkdir()
    state = tmp_path / "state"
    sent = [hostile_alerts.alert(str(marks), NODE + ":9100"), hostile_alerts.alert(str(marks), None)]
    inventory = _inventory(tmp_path, {"remediate_state_dir": str(state), "remediate_dry_run": True})
    # (arguments, the run's status): a run given an alert about no node of the inventory fails, red in AWX
    runs = []
    if path == "rulebook":
        for index, alert in enumerate(sent):
            extra = tmp_path / ("extravars-%d" % index)
            extra.write_text(_rulebook_extra_vars(alert))
            runs.append((["-e", "@%s" % extra], 0 if index == 0 else 2))
    else:
        extra = tmp_path / "extravars.json"
        extra.write_text(json.dumps({"remediate_alerts": sent}))
        runs.append((["-e", "@%s" % extra], 2))
    for args, status in runs:
        done = subprocess.run([playbook, "gpudirect.gcp.remediate", "-i", str(inventory)] + args, cwd=ROOT,
                              env=_env(), capture_output=True, text=True, timeout=300, check=False)
        assert done.returncode == status, done.stdout[-3000:] + done.stderr[-3000:]
        if status:
            assert "the alerts name what is no node of remediate_hosts" in done.stdout
    _assert_text_kept(marks, _audit(state), sent)


def test_a_template_given_as_the_alerts_is_refused_in_one_line(tmp_path):
    """remediate_alerts that is a string (a template, say) is not evaluated to find alerts."""
    marks = tmp_path / "marks"
    marks.mkdir()
    inventory = _inventory(tmp_path, {"remediate_state_dir": str(tmp_path / "state")})
    extra = tmp_path / "extravars.json"
    extra.write_text(json.dumps({"remediate_alerts": hostile_alerts.expression(str(marks), "list")}))
    done = subprocess.run([os.path.join(CORES["oldest"], "ansible-playbook"), "gpudirect.gcp.remediate", "-i",
                           str(inventory), "-e", "@%s" % extra], cwd=ROOT, env=_env(), capture_output=True,
                          text=True, timeout=300, check=False)
    assert done.returncode != 0
    assert "remediation_guard: remediate_alerts must be a list of alerts (data, never a template), not a str" \
        in done.stdout
    assert os.listdir(str(marks)) == []


def _post(port, body, deadline):
    while True:
        try:
            request = urllib.request.Request("http://127.0.0.1:%d/gpudirect" % port, data=json.dumps(body).encode(),
                                             headers={"Content-Type": "application/json"})
            with urllib.request.urlopen(request, timeout=5) as answer:
                return answer.status
        except OSError:
            if time.monotonic() > deadline:
                raise
            time.sleep(0.5)


def test_the_rulebook_chain_keeps_every_posted_field_as_text(tmp_path):
    """The shipped rulebook and event source under ansible-rulebook: a webhook post of hostile alerts."""
    marks = tmp_path / "marks"
    marks.mkdir()
    state = tmp_path / "state"
    inventory = _inventory(tmp_path, {"remediate_state_dir": str(state), "remediate_dry_run": True})
    port = webhook_client.free_port()
    # ansible-rulebook finds the collection with the ansible-galaxy beside it
    env = dict(_env(), GPUDIRECT_EDA_PORT=str(port), PATH=CORES["oldest"] + os.pathsep + os.environ["PATH"])
    log = open(str(tmp_path / "rulebook.log"), "w")
    rulebook = subprocess.Popen(
        [os.path.join(CORES["oldest"], "ansible-rulebook"), "-r", "gpudirect.gcp.gpudirect_remediate", "-i",
         str(inventory), "--env-vars", "GPUDIRECT_EDA_PORT"], cwd=str(tmp_path), env=env, stdout=log,
        stderr=subprocess.STDOUT)
    try:
        body = hostile_alerts.webhook(str(marks), NODE + ":9100")
        try:
            assert _post(port, body, time.monotonic() + 120) == 202
        except OSError:
            pytest.fail("the rulebook's source did not answer: %s" % (tmp_path / "rulebook.log").read_text()[-3000:])
        deadline = time.monotonic() + 180
        lines = []
        while time.monotonic() < deadline and len(lines) < 3:
            time.sleep(1)
            if (state / "audit.jsonl").exists():
                lines = _audit(state)
            assert rulebook.poll() is None, (tmp_path / "rulebook.log").read_text()[-3000:]
        # two decisions and the preview of the node the dry run would act on
        assert sorted(line["decision"] for line in lines) == ["dry_run", "ignored", "preview"], lines
    finally:
        rulebook.terminate()
        rulebook.wait(30)
        log.close()
    _assert_text_kept(marks, lines, body["alerts"])
