# -*- coding: utf-8 -*-
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""NVLink per-link bandwidth against the family's floor (NVIDIA's stated NVLink bandwidth per GPU)."""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import pytest

from ansible_collections.gpudirect.gcp.plugins.module_utils import families
from ansible_collections.gpudirect.gcp.plugins.module_utils.gpu import nvlink_floor


def status(speeds):
    """nvidia-smi nvlink -s text: speeds is {gpu: [per-link GB/s, or None for an inactive link]}."""
    out = []
    for gpu, links in sorted(speeds.items()):
        out.append("GPU %d: NVIDIA H100 80GB HBM3 (UUID: GPU-%d)" % (gpu, gpu))
        out += ["\t Link %d: %s" % (n, "<inactive>" if s is None else "%.3f GB/s" % s) for n, s in enumerate(links)]
    return "\n".join(out) + "\n"


@pytest.mark.parametrize("name, floor", [("a3-high", 25.0), ("a3-mega", 25.0), ("a3-ultra", 25.0),
                                         ("a4", 50.0), ("a4x", 50.0), ("a4x-max", None)])
def test_the_floor_is_nvidias_bandwidth_per_link_and_direction(name, floor):
    # 900 GB/s (NVLink 4) or 1.8 TB/s (NVLink 5) over 18 links, both directions; GB300: none published
    assert nvlink_floor.link_floor_gbps(families.FAMILIES[name]["gpu"]) == floor


def test_healthy_h100_links_meet_the_floor():
    text = status({0: [26.562] * 18, 1: [26.562] * 18})
    assert nvlink_floor.link_speeds(text)[1][17] == 26.562
    assert nvlink_floor.judge(25.0, nvlink_floor.link_speeds(text)) == []
    assert nvlink_floor.findings(families.FAMILIES["a3-mega"]["gpu"], text) == []


def test_a_link_below_the_floor_is_named_with_its_speed_and_the_floor():
    text = status({0: [26.562] * 18, 3: [26.562] * 16 + [13.281, 6.641]})
    [bad] = nvlink_floor.judge(25.0, nvlink_floor.link_speeds(text))
    assert bad["gpu"] == 3 and bad["links"] == [[16, 13.281], [17, 6.641]]
    assert bad["cause"] == ("NVLink: link 16 at 13.281 GB/s, link 17 at 6.641 GB/s, below the family's 25.0 GB/s "
                            "a link")
    [found] = nvlink_floor.findings(families.FAMILIES["a3-mega"]["gpu"], text, labels={3: "GPU 3 (9b:00)"})
    assert (found["component"], found["subject"], found["severity"], found["rung"]) == (
        "gpu", "GPU 3 (9b:00)", "fail", "reboot")
    assert found["cause"] == bad["cause"]


def test_inactive_links_and_unknown_floors_are_left_to_others():
    # an inactive link is the link-state check's finding, not a slow link
    text = status({0: [26.562] * 17 + [None]})
    assert nvlink_floor.judge(25.0, nvlink_floor.link_speeds(text)) == []
    assert nvlink_floor.findings(families.FAMILIES["a4x-max"]["gpu"], status({0: [1.0] * 18})) == []
    assert nvlink_floor.findings({}, status({0: [1.0] * 18})) == []


def test_a_b200_link_at_nvlink_4_speed_is_below_its_floor():
    [bad] = nvlink_floor.findings(families.FAMILIES["a4"]["gpu"], status({0: [53.125] * 17 + [26.562]}))
    assert "link 17 at 26.562 GB/s, below the family's 50.0 GB/s" in bad["cause"]


@pytest.mark.parametrize("text", [None, "", "garbage\n\x00\x01", "GPU x: foo\n Link a: b\n",
                                  "\t Link 0: 26.562 GB/s\n"])
def test_unreadable_text_finds_nothing_and_never_raises(text):
    assert nvlink_floor.findings(families.FAMILIES["a3-mega"]["gpu"], text) == []


def test_a_speed_that_is_no_number_is_not_guessed():
    text = "GPU 0: NVIDIA H100 (UUID: GPU-0)\n\t Link 0: fast GB/s\n\t Link 1: 26.562 GB/s\n"
    assert nvlink_floor.link_speeds(text) == {0: {1: 26.562}}
