# -*- coding: utf-8 -*-
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""Every credential form masked by every masking function, and no pattern quadratic on hostile text."""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import json

import pytest

from ansible_collections.gpudirect.gcp.plugins.module_utils.common import safe_text

M = safe_text.MASK


@pytest.mark.parametrize("text, masked", [
    # URL user-info: the password, or a user-info without one (a token used as the user name)
    ("git clone https://user:hunter2@example.com/repo.git",
     "git clone https://user:%s@example.com/repo.git" % M),
    ("proxy=http://svc:p@ss@proxy:3128 next", "proxy=http://svc:%s@proxy:3128 next" % M),
    ("https://0123456789abcdef0123@github.com/o/r", "https://%s@github.com/o/r" % M),
    ('{"url": "redis://:s3cret@cache:6379/0"}', '{"url": "redis://:%s@cache:6379/0"}' % M),
    ("https://example.com/a@b and mailto:x@y", "https://example.com/a@b and mailto:x@y"),
    # OAuth access tokens in JSON text keep the JSON valid
    ('{"access_token": "opaque-value-1", "expires_in": 3599}', '{"access_token": "%s", "expires_in": 3599}' % M),
    ("{'refresh_token': 'opaque'}", "{'refresh_token': '%s'}" % M),
    ('{"client_secret":"abc","x":1}', '{"client_secret":"%s","x":1}' % M),
    ("access_token=opaque&expires_in=3599", "access_token=%s&expires_in=3599" % M),
    # a header's whole value, whatever its scheme
    ("Authorization: token opaque-123", "Authorization: %s" % M),
    ("Cookie: SID=abc; HSID=def", "Cookie: %s" % M),
    ("curl -H 'Authorization: Bearer opaque' x", "curl -H 'Authorization: %s' x" % M),
    ("token: opaque", "token: %s" % M),
    # key = value of a secret name, as config files write it
    ("aws_secret_access_key = wJalrXUtnFEMI", "aws_secret_access_key = %s" % M),
    ("if token == other", "if token == other"),
    # well-known prefixes
    ("hf_" + "a" * 34, M), ("GOCSPX-" + "b" * 28, M), ("1//0" + "c" * 40, M),
    ("sk-proj-" + "d" * 40, M), ("desk-" + "d" * 40, "desk-" + "d" * 40),
])
def test_every_credential_form_is_masked(text, masked):
    assert safe_text.mask_text(text) == masked


def test_json_text_stays_json():
    doc = json.dumps({"access_token": "ya29.opaque", "id_token": "x", "n": 1, "url": "https://u:p@h/"})
    out = json.loads(safe_text.mask_text(doc))
    assert out == {"access_token": M, "id_token": M, "n": 1, "url": "https://u:%s@h/" % M}


def test_nccl_names_are_not_secret_but_their_values_are_masked():
    env = {"NCCL_SOCKET_IFNAME": "enp0s12", "NCCL_X_URL": "https://u:pw@h/x", "NCCL_Y": "ya29.opaque",
           "NCCL_IB_GID_INDEX": "3"}
    assert safe_text.mask_env(env) == {"NCCL_SOCKET_IFNAME": "enp0s12", "NCCL_X_URL": "https://u:%s@h/x" % M,
                                       "NCCL_Y": M, "NCCL_IB_GID_INDEX": "3"}
    assert safe_text.mask_argv(["-x", "NCCL_X_URL=https://u:pw@h/x", "-x", "NCCL_SOCKET_IFNAME=eth0"]) == [
        "-x", "NCCL_X_URL=https://u:%s@h/x" % M, "-x", "NCCL_SOCKET_IFNAME=eth0"]


def test_masking_twice_changes_nothing():
    for text in ("https://u:pw@h/", '{"access_token": "x"}', "Authorization: Bearer y", "token: z"):
        once = safe_text.mask_text(text)
        assert safe_text.mask_text(once) == once


# ~200 KB of text built to make a careless pattern scan to the end from every position; a linear
# pattern masks it in milliseconds, a quadratic one would not finish within the suite's run
_UNITS = ["a", "a=", "a: ", "a:", "a://", "a://b:", "a://b@", "@", "://", "\"a\":", "\"a\": \"", "'a':'", "token: ",
          "token=", "x = ", "Bearer ", "Authorization: ", "ya29.", "hf_", "sk-", "1//0", "eyJ", "a.", "-",
          "-----BEGIN PRIVATE KEY-----", " ", "=", "\"", "a=b;"]


@pytest.mark.parametrize("unit", _UNITS)
def test_each_masking_function_on_200kb_of_hostile_text(unit):
    text = unit * (200000 // len(unit))
    masked = safe_text.mask_text(text)
    assert "ya29.a" not in masked
    assert safe_text.mask_argv([text, "--token", text])[1:] == ["--token", M]
    assert safe_text.mask_env({"HF_TOKEN": text, "NCCL_X": text}) == {"HF_TOKEN": M, "NCCL_X": masked}
    assert safe_text.mask_text(masked) == masked
    out = safe_text.one_line(masked)
    assert "\n" not in out


def test_200kb_with_a_credential_at_the_far_end_is_still_masked():
    text = "a" * 200000 + " https://u:pw@h/ " + "b" * 200000 + " ya29.zzz"
    out = safe_text.mask_text(text)
    assert "pw@" not in out and "ya29" not in out and out.count(M) == 2


def test_a_pem_key_as_an_argument_is_no_option():
    pem = "-----BEGIN RSA PRIVATE KEY-----\nMIIEsecret\n-----END RSA PRIVATE KEY-----"
    assert safe_text.mask_argv(["tool", pem, "next"]) == ["tool", M, "next"]


@pytest.mark.parametrize("text, masked", [
    ("--env=HF_TOKEN=abc", "--env=HF_TOKEN=%s" % M), ("Error: token=abc", "Error: token=%s" % M),
    ("cmd: HF_TOKEN=abc", "cmd: HF_TOKEN=%s" % M), ('{"cmd": "HF_TOKEN=abc x"}', '{"cmd": "HF_TOKEN=%s x"}' % M)])
def test_a_secret_inside_the_value_of_another_name_is_found(text, masked):
    assert safe_text.mask_text(text) == masked
