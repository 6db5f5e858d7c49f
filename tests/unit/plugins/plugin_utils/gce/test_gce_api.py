# Copyright: (c) 2026, gpudirect.gcp contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""Credentials and the Compute API client against the emulator (real HTTP, real google-auth)."""

import json
import os
import re
import socket
import sys
import time

import pytest

from ansible_collections.gpudirect.gcp.plugins.plugin_utils.gce import gce_api

sys.path.insert(0, os.path.join(os.path.dirname(__file__), "..", "..", "..", "..", "emulator"))
import compute_fleet as fx  # noqa: E402
import compute_harness as harness  # noqa: E402

EMAIL = "inventory@proj-a.iam.gserviceaccount.com"


def _fixture(public_pem=None):
    data = {"projects": {"proj-a": {"instances": [fx.gpu_instance("vm-%d" % i, "a3-mega", index=i)
                                                  for i in range(5)],
                                    "networks": fx.networks_for("gpu", "a3-mega")}}}
    if public_pem:
        data["service_accounts"] = {EMAIL: public_pem}
    return data


@pytest.fixture
def keyed(tmp_path):
    """An emulator that verifies JWTs signed by a freshly generated service account key."""
    key_file = str(tmp_path / "sa.json")
    emu = harness.ThreadEmulator({"projects": {}})
    public = harness.make_service_account_key(key_file, emu.url + "/token", EMAIL)
    emu.state.__init__(_fixture(public), page_size=2)
    with emu:
        yield emu, key_file


def _client(creds, emu, **kw):
    kw.setdefault("backoff_base", 0.01)
    return gce_api.ComputeClient(creds, endpoint=emu.url, **kw)


def test_service_account_flow_runs_for_real(keyed):
    emu, key_file = keyed
    creds = gce_api.build_credentials("serviceaccount", service_account_file=key_file)
    client = _client(creds, emu)
    instances, unreachable = client.aggregated_instances("proj-a")[:2]
    assert len(instances) == 5 and unreachable == []
    stats = emu.stats()
    assert stats["token"] == 1  # one token, reused by one session for every page
    assert stats["by_kind"]["aggregated"] == 3


def test_answers_come_gzipped():
    with harness.ThreadEmulator(_fixture(), page_size=2) as emu:
        client = _client(gce_api.build_credentials("accesstoken", access_token="t"), emu)
        instances = client.aggregated_instances("proj-a")[0]
        stats = emu.stats()
    assert len(instances) == 5
    assert stats["gzip"] == stats["api"] == 3  # page size 2


def test_service_account_contents_and_impersonation(keyed):
    emu, key_file = keyed
    with open(key_file) as handle:
        contents = handle.read()
    creds = gce_api.build_credentials("serviceaccount", service_account_contents=contents,
                                      impersonate_service_account="target@proj-a.iam.gserviceaccount.com",
                                      iam_endpoint=emu.url)
    assert len(_client(creds, emu).zone_instances("proj-a", "us-central1-a")) == 5
    stats = emu.stats()
    assert stats["token"] == 1 and stats["iam"] == 1


def test_wrong_key_is_rejected_by_the_token_endpoint(keyed, tmp_path):
    emu, _key_file = keyed
    other = str(tmp_path / "other.json")
    harness.make_service_account_key(other, emu.url + "/token", EMAIL)  # same email, different key
    creds = gce_api.build_credentials("serviceaccount", service_account_file=other)
    with pytest.raises(gce_api.GceApiError, match="project proj-a: could not obtain an access token: .*"
                                                  "Invalid JWT Signature"):
        _client(creds, emu).aggregated_instances("proj-a")


def test_application_default_credentials_from_the_environment(keyed, monkeypatch):
    emu, key_file = keyed
    monkeypatch.setenv("GOOGLE_APPLICATION_CREDENTIALS", key_file)
    creds = gce_api.build_credentials("application")
    assert len(_client(creds, emu).aggregated_instances("proj-a")[0]) == 5


@pytest.mark.parametrize("kwargs, message", [
    ({"service_account_file": "/nonexistent/key.json"}, "service_account_file /nonexistent/key.json cannot be read"),
    ({}, "auth_kind serviceaccount needs service_account_file or service_account_contents"),
    ({"service_account_contents": "{not json"}, "option service_account_contents is not valid JSON"),
    ({"service_account_contents": json.dumps({"type": "authorized_user"})},
     "service_account_contents is not a service account key"),
    ({"service_account_contents": json.dumps({"type": "service_account", "client_email": "x"})},
     "service_account_contents is not a usable service account key"),
])
def test_bad_service_account_keys(kwargs, message):
    with pytest.raises(gce_api.GceApiError) as err:
        gce_api.build_credentials("serviceaccount", **kwargs)
    assert message in str(err.value) and "\n" not in str(err.value)


def test_unreadable_key_file(tmp_path):
    path = tmp_path / "key.json"
    path.write_text("{}")
    path.chmod(0)
    if os.access(str(path), os.R_OK):  # root reads anything: use a directory instead
        path = tmp_path
    with pytest.raises(gce_api.GceApiError, match="service_account_file .* cannot be read"):
        gce_api.build_credentials("serviceaccount", service_account_file=str(path))


def test_key_file_that_is_not_json(tmp_path):
    path = tmp_path / "key.json"
    path.write_text("-----BEGIN PRIVATE KEY-----\n")
    with pytest.raises(gce_api.GceApiError, match="service_account_file .*key.json is not valid JSON"):
        gce_api.build_credentials("serviceaccount", service_account_file=str(path))


def test_application_default_credentials_file_missing(monkeypatch, tmp_path):
    monkeypatch.setenv("GOOGLE_APPLICATION_CREDENTIALS", str(tmp_path / "missing.json"))
    with pytest.raises(gce_api.GceApiError, match="auth_kind application found no usable Application Default "
                                                  "Credentials: File .*missing.json was not found"):
        gce_api.build_credentials("application")


def _closed_port():
    sock = socket.socket()
    sock.bind(("127.0.0.1", 0))
    port = sock.getsockname()[1]
    sock.close()
    return port


def test_no_credentials_at_all_names_every_way(monkeypatch, tmp_path):
    for var in ("GOOGLE_APPLICATION_CREDENTIALS", "GOOGLE_CLOUD_PROJECT"):
        monkeypatch.delenv(var, raising=False)
    monkeypatch.setenv("HOME", str(tmp_path))
    monkeypatch.setenv("CLOUDSDK_CONFIG", str(tmp_path / "gcloud"))
    # the metadata server, google-auth's last resort, is a closed loopback port here
    monkeypatch.setenv("GCE_METADATA_HOST", "127.0.0.1:%d" % _closed_port())
    monkeypatch.setenv("GCE_METADATA_IP", "127.0.0.1:%d" % _closed_port())
    monkeypatch.setenv("NO_GCE_CHECK", "True")
    with pytest.raises(gce_api.GceApiError) as info:
        gce_api.build_credentials("application")
    text = str(info.value)
    assert "\n" not in text
    assert text.startswith("no Google Cloud credentials found")
    for way in ("gcloud auth application-default login", "GOOGLE_APPLICATION_CREDENTIALS", "auth_kind",
                "service_account_file", "access_token"):
        assert way in text, way


def test_unresolvable_endpoint_is_named_at_once():
    creds = gce_api.build_credentials("accesstoken", access_token="t")
    sleeps = []
    client = gce_api.ComputeClient(creds, endpoint="https://compute.gpudirect-test.invalid", retries=8,
                                   sleep=sleeps.append)
    started = time.monotonic()
    with pytest.raises(gce_api.GceApiError, match=r"cannot resolve the host name compute\.gpudirect-test\.invalid"):
        client.aggregated_instances("proj-a")
    assert time.monotonic() - started < 3
    assert sleeps == [] and client.request_count == 1  # never retried


def test_refused_endpoint_is_tried_three_times_and_named():
    creds = gce_api.build_credentials("accesstoken", access_token="t")
    endpoint = "http://127.0.0.1:%d" % _closed_port()
    client = gce_api.ComputeClient(creds, endpoint=endpoint, backoff_base=0.01)
    with pytest.raises(gce_api.GceApiError, match="connection refused by %s after 3 attempts" % re.escape(endpoint)):
        client.aggregated_instances("proj-a")


@pytest.mark.parametrize("text, url, expected", [
    ("HTTPSConnectionPool(host='compute.x.invalid', port=443): Max retries exceeded with url: /compute/v1/p "
     "(Caused by NameResolutionError(\"<urllib3.connection.HTTPSConnection object at 0x7f>: Failed to resolve "
     "'compute.x.invalid' ([Errno -2] Name or service not known)\"))", "https://compute.x.invalid/compute/v1/p",
     "cannot resolve the host name compute.x.invalid (Name or service not known)"),
    ("HTTPSConnectionPool(host='oauth2.googleapis.com', port=443): Max retries exceeded with url: /token (Caused "
     "by NewConnectionError('<urllib3.connection.HTTPSConnection object>: Failed to establish a new connection: "
     "[Errno -3] Temporary failure in name resolution'))", None,
     "cannot resolve the host name oauth2.googleapis.com (Temporary failure in name resolution)"),
    ("HTTPSConnectionPool(host='oauth2.googleapis.com', port=443): Max retries exceeded with url: /token (Caused "
     "by ConnectTimeoutError(<urllib3.connection.HTTPSConnection object>, 'Connection to oauth2.googleapis.com "
     "timed out. (connect timeout=3)'))", None, "no answer connecting to oauth2.googleapis.com:443 within 3 s"),
    ("HTTPConnectionPool(host='127.0.0.1', port=9): Max retries exceeded (Caused by NewConnectionError("
     "'Failed to establish a new connection: [Errno 111] Connection refused'))", "http://127.0.0.1:9/x", None),
    ("('Connection aborted.', RemoteDisconnected('Remote end closed connection without response'))",
     "https://compute.googleapis.com/x", None),
])
def test_unreachable_names_the_host_only_for_what_retrying_cannot_cure(text, url, expected):
    found = gce_api.unreachable(Exception(text), url, 3)
    if expected is None:
        assert found is None
    else:
        assert found.startswith(expected), found


def test_backoff_grows_and_honours_retry_after():
    sleeps = []
    emu = harness.ThreadEmulator(_fixture())
    with emu:
        emu.set_faults({"fail_first": {"count": 4, "status": 503}})
        creds = gce_api.build_credentials("accesstoken", access_token="t")
        client = gce_api.ComputeClient(creds, endpoint=emu.url, backoff_base=1.0, sleep=sleeps.append)
        client.aggregated_instances("proj-a")
        assert len(sleeps) == 4
        for attempt, delay in enumerate(sleeps):
            assert 2 ** attempt / 2.0 <= delay <= 2 ** attempt  # jittered exponential
        sleeps[:] = []
        emu.set_faults({"fail_first": {"count": 1, "status": 429, "retry_after": 7}})
        client.aggregated_instances("proj-a")
        assert sleeps[0] >= 7


def test_retry_budget_stops_early():
    sleeps = []
    with harness.ThreadEmulator(_fixture()) as emu:
        emu.set_faults({"fail_first": {"count": 100, "status": 429, "retry_after": 30}})
        creds = gce_api.build_credentials("accesstoken", access_token="t")
        client = gce_api.ComputeClient(creds, endpoint=emu.url, retry_max_time=10, sleep=sleeps.append)
        with pytest.raises(gce_api.GceApiError, match="kept failing with HTTP 429 after 1 attempts"):
            client.aggregated_instances("proj-a")
        assert sleeps == []  # a 30 s Retry-After does not fit a 10 s budget


def test_client_error_is_not_retried():
    with harness.ThreadEmulator(_fixture()) as emu:
        creds = gce_api.build_credentials("accesstoken", access_token="t")
        client = gce_api.ComputeClient(creds, endpoint=emu.url)
        with pytest.raises(gce_api.GceApiError, match=r"project nope: not found \(404\)"):
            client.aggregated_instances("nope")
        assert emu.stats()["api"] == 1


def test_auth_from_env_takes_the_inventory_variables_then_an_awx_job_key_file():
    from ansible_collections.gpudirect.gcp.plugins.plugin_utils.gce import gce_api as api
    args = dict((k, None) for k in api.AUTH_ARGUMENT_SPEC)
    endpoint = api.auth_from_env(args, {"GCP_AUTH_KIND": "accesstoken", "GCP_ACCESS_TOKEN": "t",
                                        "GCP_COMPUTE_API_ENDPOINT": "http://127.0.0.1:1/"})
    assert endpoint == "http://127.0.0.1:1" and args["auth_kind"] == "accesstoken" and args["access_token"] == "t"
    job = dict((k, None) for k in api.AUTH_ARGUMENT_SPEC)
    assert api.auth_from_env(job, {"GCE_CREDENTIALS_FILE_PATH": "/runner/key.json"}) == api.DEFAULT_ENDPOINT
    assert (job["auth_kind"], job["service_account_file"]) == ("serviceaccount", "/runner/key.json")
    chosen = dict((k, None) for k in api.AUTH_ARGUMENT_SPEC)
    chosen["auth_kind"] = "application"
    api.auth_from_env(chosen, {"GCE_CREDENTIALS_FILE_PATH": "/runner/key.json"})
    assert chosen["auth_kind"] == "application" and chosen["service_account_file"] is None
