# -*- coding: utf-8 -*-
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""container_registry_auth: credHelpers set and removed, other keys kept, check and diff, no secret shown."""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import json
import os


from ansible_collections.gpudirect.gcp.plugins.modules import container_registry_auth
from ansible_collections.gpudirect.gcp.tests.unit.plugins.modules.test_runtime_modules import run as run_module


def run(args, capsys, check_mode=False):
    return run_module(container_registry_auth, args, capsys, check_mode=check_mode, diff=True)


def test_sets_the_helper_keeps_the_rest_and_redacts(tmp_path, capsys):
    path = tmp_path / "docker" / "config.json"
    path.parent.mkdir()
    path.write_text(json.dumps({"auths": {"ghcr.io": {"auth": "c2VjcmV0"}}, "credHelpers": {"gcr.io": "gcloud"}}))
    args = {"path": str(path), "registries": ["us-docker.pkg.dev"], "helper": "gce-metadata"}
    check = run(args, capsys, check_mode=True)
    assert check["changed"] and "gce-metadata" in check["diff"]["after"]
    assert "c2VjcmV0" not in check["diff"]["before"] + check["diff"]["after"]
    assert "gce-metadata" not in path.read_text()
    out = run(args, capsys)
    data = json.loads(path.read_text())
    assert out["changed"] and data["credHelpers"] == {"gcr.io": "gcloud", "us-docker.pkg.dev": "gce-metadata"}
    assert data["auths"] == {"ghcr.io": {"auth": "c2VjcmV0"}}
    assert oct(os.stat(str(path)).st_mode & 0o777) == "0o600"
    assert run(args, capsys)["changed"] is False
    gone = run(dict(args, state="absent"), capsys)
    assert gone["changed"] and json.loads(path.read_text())["credHelpers"] == {"gcr.io": "gcloud"}


def test_creates_the_file_and_its_private_directory(tmp_path, capsys):
    path = tmp_path / "root" / ".docker" / "config.json"
    out = run({"path": str(path), "registries": ["us-docker.pkg.dev"], "helper": "gce-metadata"}, capsys)
    assert out["changed"] and out["cred_helpers"] == {"us-docker.pkg.dev": "gce-metadata"}
    assert oct(os.stat(str(path.parent)).st_mode & 0o777) == "0o700"
    # removing the only entries leaves nothing to keep: the file goes, in check mode only said
    absent = {"path": str(path), "registries": ["us-docker.pkg.dev"], "helper": "gce-metadata", "state": "absent"}
    checked = run(absent, capsys, check_mode=True)
    assert checked["changed"] and checked["diff"]["after"] == "" and path.exists()
    assert run(absent, capsys)["changed"] and not path.exists()
    assert run(absent, capsys)["changed"] is False


def test_bad_input_is_one_line(tmp_path, capsys):
    path = tmp_path / "config.json"
    path.write_text("{not json")
    out = run({"path": str(path), "registries": ["us-docker.pkg.dev"], "helper": "gce-metadata"}, capsys)
    assert out["failed"] and out["msg"].startswith("container_registry_auth: %s is not valid JSON" % path)
    out = run({"path": str(path), "registries": ["us-docker.pkg.dev/gce-ai-infra"], "helper": "x"}, capsys)
    assert out["failed"] and "registries are host[:port] names" in out["msg"]
