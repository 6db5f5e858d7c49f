# -*- coding: utf-8 -*-
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""plugin_utils/gce/gcs_upload: which files become which objects, the names Cloud Storage accepts, and an
upload the API stored differently."""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import os

import pytest

from ansible_collections.gpudirect.gcp.plugins.plugin_utils.gce import gcs_upload as gu


@pytest.mark.parametrize("name", ["abc", "my-gpu-reports", "a_b-1", "x" * 63])
def test_valid_bucket_names_pass(name):
    assert gu.valid_bucket(name) == name


@pytest.mark.parametrize("name", ["ab", "x" * 64, "Upper", "gs://b", "b/c", "-ab", "google-reports", "a.b.c", None])
def test_invalid_bucket_names_are_named(name):
    with pytest.raises(gu.UploadError, match="is not a valid Cloud Storage bucket name"):
        gu.valid_bucket(name)


def test_prefix_slashes_are_trimmed_and_bad_parts_refused():
    assert gu.valid_prefix("/a/b/") == "a/b"
    assert gu.valid_prefix("") == ""
    for bad in ("a//b", "a/../b", "./a", "a\nb"):
        with pytest.raises(gu.UploadError, match="is not a usable object name prefix"):
            gu.valid_prefix(bad)


def test_plan_names_each_file_under_the_runs_folder_and_skips_links(tmp_path):
    run = tmp_path / "run-1"
    (run / "d").mkdir(parents=True)
    (run / "a.json").write_text("{}")
    (run / "d" / "b.bin").write_bytes(b"\x00")
    (run / "ln").symlink_to(tmp_path)
    (run / "f").symlink_to(run / "a.json")
    out = gu.plan(str(run), "p/q")
    assert [(o["name"], o["content_type"]) for o in out] == [
        ("p/q/run-1/a.json", "application/json"), ("p/q/run-1/d/b.bin", "application/octet-stream")]


def test_links_escape_the_url_but_not_the_uri():
    assert gu.links("b", "p/r 1#x.html") == {
        "uri": "gs://b/p/r 1#x.html", "url": "https://storage.cloud.google.com/b/p/r%201%23x.html"}


class _Client(object):
    def __init__(self, md5=None):
        self.calls = []
        self.md5 = md5

    def upload(self, url, params, data, content_type, what=None, permission=None):
        self.calls.append((url, params, data, content_type))
        return {"md5Hash": self.md5 or gu.md5_b64(data), "generation": 7}


def test_upload_all_sends_each_object_and_returns_its_links():
    client = _Client()
    objects = [{"path": "x", "name": "p/r/a.json", "content_type": "application/json"}]
    out = gu.upload_all(client, "http://127.0.0.1:1/", "b", objects, read=lambda p: b"{}")
    assert client.calls == [("http://127.0.0.1:1/upload/storage/v1/b/b/o", {"uploadType": "media", "name": "p/r/a.json"},
                             b"{}", "application/json")]
    assert out == [{"name": "p/r/a.json", "size": 2, "generation": "7", "uri": "gs://b/p/r/a.json",
                    "url": "https://storage.cloud.google.com/b/p/r/a.json"}]


def test_an_object_stored_with_another_md5_is_an_error():
    objects = [{"path": "x", "name": "a", "content_type": "text/plain"}]
    with pytest.raises(gu.UploadError, match="uploading a to bucket b: the stored object's MD5 differs"):
        gu.upload_all(_Client(md5="AAAA"), None, "b", objects, read=lambda p: b"data")


def test_plan_takes_one_file_under_the_prefix_and_refuses_a_link_or_a_fifo(tmp_path):
    archive = tmp_path / "job-42-20261202T100000Z.tar.gz"
    archive.write_bytes(b"\x1f\x8b")
    assert [(o["name"], o["path"]) for o in gu.plan(str(archive), "p/q")] == [
        ("p/q/job-42-20261202T100000Z.tar.gz", str(archive))]
    (tmp_path / "ln.tar.gz").symlink_to(archive)
    with pytest.raises(gu.UploadError, match="is not a directory or a regular file"):
        gu.plan(str(tmp_path / "ln.tar.gz"), "p")
    os.mkfifo(str(tmp_path / "fifo"))
    with pytest.raises(gu.UploadError, match="is not a directory or a regular file"):
        gu.plan(str(tmp_path / "fifo"), "p")
