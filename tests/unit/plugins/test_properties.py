# -*- coding: utf-8 -*-
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""Property-based tests: random and mutated input never makes the NCCL parser or the inventory's record
normalisation raise, and what they return is strict JSON."""
from __future__ import absolute_import, division, print_function

__metaclass__ = type

import json
import os

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from ansible_collections.gpudirect.gcp.plugins.module_utils import families
from ansible_collections.gpudirect.gcp.plugins.module_utils.nccl_tests import nccl_parse
from ansible_collections.gpudirect.gcp.plugins.plugin_utils.gce import gce_hosts

FIXTURES = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "fixtures", "nccl")
REAL = []
for _name in sorted(os.listdir(FIXTURES)):
    if _name.endswith(".txt"):
        with open(os.path.join(FIXTURES, _name)) as _fh:
            REAL.append(_fh.read().splitlines())
SETTINGS = settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])
NUMBERS = st.sampled_from(["nan", "inf", "-inf", "NaN", "1e309", "-0", "0", "N/A", "1.5", "9" * 40, "", "-"])


def strict(value):
    json.loads(json.dumps(value, allow_nan=False))


@st.composite
def mutated_output(draw):
    """A real nccl-tests output, with lines dropped, cut, swapped for garbage, and numbers replaced."""
    lines = list(draw(st.sampled_from(REAL)))
    for _step in range(draw(st.integers(0, 12))):
        if not lines:
            break
        i = draw(st.integers(0, len(lines) - 1))
        action = draw(st.sampled_from(["drop", "cut", "garbage", "number", "dup"]))
        if action == "drop":
            del lines[i]
        elif action == "cut":
            lines[i] = lines[i][:draw(st.integers(0, len(lines[i])))]
        elif action == "garbage":
            lines[i] = draw(st.text(max_size=80))
        elif action == "number":
            words = lines[i].split()
            if words:
                words[draw(st.integers(0, len(words) - 1))] = draw(NUMBERS)
                lines[i] = " ".join(words)
        else:
            lines.insert(i, lines[i])
    return "\n".join(lines)


@SETTINGS
@given(mutated_output(), st.sampled_from([None, "all_gather", "all_reduce", "sendrecv"]))
def test_parser_never_raises_on_mutated_output(text, collective):
    strict(nccl_parse.parse(text, collective=collective))


@SETTINGS
@given(st.one_of(st.text(), st.binary().map(lambda b: b.decode("latin-1"))))
def test_parser_never_raises_on_random_text(text):
    strict(nccl_parse.parse(text))


JSONISH = st.recursive(st.none() | st.booleans() | st.integers() | st.floats(allow_nan=False) | st.text(max_size=20),
                       lambda kids: st.lists(kids, max_size=4) | st.dictionaries(st.text(max_size=10), kids, max_size=4),
                       max_leaves=12)
MACHINE_TYPES = st.sampled_from(sorted(families.MACHINE_TYPES) + ["n2-standard-8", ""]).map(
    lambda m: "zones/us-central1-a/machineTypes/%s" % m)


@st.composite
def nic(draw):
    return draw(st.fixed_dictionaries({}, optional={
        "name": st.text(max_size=8) | JSONISH, "network": st.sampled_from(["global/networks/n0", "x"]) | JSONISH,
        "subnetwork": st.text(max_size=20) | JSONISH, "networkIP": st.sampled_from(["10.0.0.2", ""]) | JSONISH,
        "nicType": st.sampled_from(["GVNIC", "MRDMA"]) | JSONISH, "macAddress": JSONISH,
        "accessConfigs": st.lists(st.dictionaries(st.sampled_from(["natIP", "name"]), JSONISH), max_size=2) | JSONISH}))


@st.composite
def instance(draw):
    return draw(st.fixed_dictionaries({}, optional={
        "name": st.text(max_size=12) | JSONISH, "zone": st.sampled_from(["zones/us-central1-a", ""]) | JSONISH,
        "selfLink": st.text(max_size=40) | JSONISH, "machineType": MACHINE_TYPES | JSONISH,
        "status": st.sampled_from(["RUNNING", "TERMINATED"]) | JSONISH, "labels": JSONISH,
        "networkInterfaces": st.lists(nic(), max_size=10) | JSONISH, "resourcePolicies": JSONISH,
        "scheduling": JSONISH, "reservationAffinity": JSONISH, "resourceStatus": JSONISH,
        "guestAccelerators": JSONISH, "id": JSONISH}))


@SETTINGS
@given(st.one_of(instance(), JSONISH))
def test_record_normalisation_never_raises(inst):
    hvars, why = gce_hosts.record(inst, "proj", {"global/networks/n0": 8244})
    assert (hvars is None) != (why is None)
    if hvars is not None:
        strict(hvars)
    assert isinstance(gce_hosts.left_out(inst) or "", str)
    if isinstance(inst, dict):
        zone = gce_hosts.instance_zone(inst)
        assert zone is None or isinstance(zone, str)
