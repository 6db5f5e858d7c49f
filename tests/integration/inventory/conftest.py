# Copyright: (c) 2026, gpudirect.gcp contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""Real `ansible-inventory` / `ansible-playbook` runs against the emulator process."""

import json
import os
import subprocess
import sys

import pytest
import yaml

ROOT = os.path.abspath(os.path.join(os.path.dirname(__file__), "..", "..", ".."))
EMULATOR_DIR = os.path.join(ROOT, "tests", "emulator")
sys.path.insert(0, EMULATOR_DIR)

import compute_fleet as fx  # noqa: E402
import compute_harness as harness  # noqa: E402

BIN = os.path.dirname(sys.executable)
CLEAN_ENV = ("GCP_PROJECT", "GCE_PROJECT", "GCP_AUTH_KIND", "GOOGLE_APPLICATION_CREDENTIALS",
             "GCP_SERVICE_ACCOUNT_FILE", "GCE_CREDENTIALS_FILE_PATH", "GCP_ACCESS_TOKEN")


@pytest.fixture
def emulator(tmp_path):
    """The emulator started through its command line (contract 2), page size 2."""
    path = str(tmp_path / "fixture.yml")
    with open(path, "w") as handle:
        yaml.safe_dump(fx.mixed_fleet(), handle)
    with harness.ProcessEmulator(path, str(tmp_path), page_size=2) as emu:
        yield emu


class Result(object):
    def __init__(self, proc):
        self.rc = proc.returncode
        self.stdout = proc.stdout
        self.stderr = proc.stderr
        self.data = None
        if self.rc == 0 and self.stdout.strip().startswith("{"):
            self.data = harness.unwrap(json.loads(self.stdout))

    @property
    def hostvars(self):
        return self.data["_meta"]["hostvars"]

    def group(self, name):
        return sorted(self.data.get(name, {}).get("hosts", []))


@pytest.fixture
def ansible(tmp_path):
    """ansible(args, config=None, env=None, name=...) runs an Ansible CLI, returns Result."""

    def run(args, config=None, env=None, name="test.gce_gpu.yml"):
        full_env = dict((k, v) for k, v in os.environ.items() if k not in CLEAN_ENV)
        full_env.update({"ANSIBLE_CONFIG": os.path.join(ROOT, "ansible.cfg"), "ANSIBLE_NOCOLOR": "1",
                         "PATH": BIN + os.pathsep + os.environ.get("PATH", ""),
                         "ANSIBLE_LOCAL_TEMP": str(tmp_path / "tmp")})
        full_env.update(env or {})
        cmd = [os.path.join(BIN, args[0])] + list(args[1:])
        if config is not None:
            path = str(tmp_path / name)
            with open(path, "w") as handle:
                yaml.safe_dump(config, handle)
            cmd += ["-i", path]
        proc = subprocess.run(cmd, cwd=ROOT, env=full_env, capture_output=True, text=True, timeout=120,
                              check=False)
        return Result(proc)

    return run


@pytest.fixture
def config():
    def make(emu, **extra):
        cfg = {"plugin": "gpudirect.gcp.gce_gpu", "api_endpoint": emu.url, "auth_kind": "accesstoken",
               "access_token": "integration-token", "projects": ["proj-a"], "retry_max_time": 5}
        cfg.update(extra)
        return dict((k, v) for k, v in cfg.items() if v is not None)
    return make
