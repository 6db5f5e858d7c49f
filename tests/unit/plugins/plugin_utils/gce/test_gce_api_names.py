# -*- coding: utf-8 -*-
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""Names that reach a Compute API URL: checked against GCE's rules, escaped as one path segment."""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import pytest

from ansible_collections.gpudirect.gcp.plugins.plugin_utils.gce import gce_api


def test_a_valid_name_makes_the_path_it_names():
    assert gce_api.instance_path("proj-a", "us-central1-a", "mega-0", "reportHostAsFaulty") == \
        "projects/proj-a/zones/us-central1-a/instances/mega-0/reportHostAsFaulty"
    assert gce_api.instance_path("example.com:proj-a", "us-central1-a", "a")[:27] == "projects/example.com:proj-a"


@pytest.mark.parametrize("kind, args", [
    ("instance", ("proj-a", "us-central1-a", "..")), ("instance", ("proj-a", "us-central1-a", "a/b")),
    ("instance", ("proj-a", "us-central1-a", "a?b")), ("instance", ("proj-a", "us-central1-a", "a#b")),
    ("instance", ("proj-a", "us-central1-a", "a" * 64)), ("instance", ("proj-a", "us-central1-a", "-a")),
    ("instance", ("proj-a", "us-central1-a", None)), ("zone", ("proj-a", "../us", "a")),
    ("project", ("p", "us-central1-a", "a")), ("project", ("proj a", "us-central1-a", "a"))])
def test_a_name_against_gces_rules_is_refused_in_one_line_naming_it(kind, args):
    with pytest.raises(gce_api.GceApiError, match="^%s .* is not a valid GCE %s name$" % (kind, kind)):
        gce_api.instance_path(*args)


def test_list_paths_escape_what_they_are_given():
    assert gce_api.segment("a/../b?c#d") == "a%2F..%2Fb%3Fc%23d"


def test_a_key_file_others_can_read_and_a_plain_http_endpoint_are_warned_about(tmp_path):
    key = tmp_path / "key.json"
    key.write_text("{}")
    key.chmod(0o644)
    warnings = gce_api.auth_warnings("serviceaccount", "http://compute.internal:8080", str(key))
    assert warnings == ["service_account_file %s can be read by others (mode 0644): it holds a private key; "
                        "chmod 600 it" % key,
                        "api_endpoint http://compute.internal:8080 is plain HTTP: the bearer token crosses the "
                        "network unencrypted; use https"]
    key.chmod(0o600)
    assert gce_api.auth_warnings("serviceaccount", "https://compute.googleapis.com", str(key)) == []
    # a test server on loopback, and a key file that is not there (reading it names that), say nothing here
    assert gce_api.auth_warnings("serviceaccount", "http://127.0.0.1:8080", str(tmp_path / "none")) == []
    assert gce_api.auth_warnings("application", "http://[::1]:9/", str(key)) == []
