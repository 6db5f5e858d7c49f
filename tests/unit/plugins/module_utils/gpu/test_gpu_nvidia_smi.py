# -*- coding: utf-8 -*-
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""nvidia-smi output read from real captures (tests/fixtures/gpu/*/SOURCE*.md say where from)."""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import glob
import os

import pytest

from ansible_collections.gpudirect.gcp.plugins.module_utils.gpu import nvidia_smi

FIXTURES = os.path.join(os.path.dirname(__file__), "..", "..", "..", "..", "fixtures", "gpu")
H100 = os.path.join(FIXTURES, "h100-580.159.04", "nvidia-smi-q-x.xml")


def read(path):
    with open(path) as fh:
        return fh.read()


def test_real_h100_capture():
    gpus = nvidia_smi.parse(read(H100))
    assert len(gpus) == 1
    gpu = gpus[0]
    assert set(nvidia_smi.FIELDS) <= set(gpu)
    assert gpu["index"] == 0 and gpu["pci_bus_id"] == "00000000:00:06.0"
    assert gpu["product_name"] == "NVIDIA H100 80GB HBM3"
    assert gpu["uuid"] == "GPU-1a2a9fc2-8691-e53c-321d-2463973ae867"
    assert (gpu["pcie_gen_current"], gpu["pcie_gen_max"], gpu["pcie_width_current"], gpu["pcie_width_max"]) == \
        (5, 5, 16, 16)
    assert gpu["ecc_volatile_uncorrectable"] == 0
    assert gpu["remapped_rows_pending"] is False and gpu["remapped_rows_failure"] is False
    # Hopper retires no pages (it remaps rows): N/A is unknown, not "no"
    assert gpu["retired_pages_pending"] is None
    assert gpu["clock_event_reasons_active"] == ["gpu_idle"]
    assert gpu["persistence_mode"] is True and gpu["performance_state"] == "P0"
    # a GPU outside any multi-node NVLink fabric prints N/A for every fabric field
    assert [gpu[k] for k in ("fabric_state", "fabric_status", "fabric_clique_id", "fabric_cluster_uuid")] == \
        [None] * 4


@pytest.mark.parametrize("path", sorted(glob.glob(os.path.join(FIXTURES, "public", "*.xml"))))
def test_every_public_capture_parses_to_complete_records(path):
    gpus = nvidia_smi.parse(read(path))
    assert gpus, path
    for number, gpu in enumerate(gpus):
        assert gpu["index"] == number
        assert set(nvidia_smi.FIELDS) <= set(gpu)
        assert gpu["pci_bus_id"] and gpu["product_name"] and gpu["uuid"].startswith("GPU-")
        assert isinstance(gpu["clock_event_reasons_active"], list)


def test_older_throttle_schema_names_its_reasons():
    older = [p for p in glob.glob(os.path.join(FIXTURES, "public", "*.xml")) if "clocks_throttle_reasons" in read(p)]
    assert older, "a real capture of the older schema is among the fixtures"
    for path in older:
        for gpu in nvidia_smi.parse(read(path)):
            assert gpu["clock_event_reasons_active"] is not None


def test_faults_in_a_real_capture():
    text = read(H100)
    text = text.replace("<remapped_row_pending>No<", "<remapped_row_pending>Yes<")
    text = text.replace("<dram_uncorrectable>0</dram_uncorrectable>\n\t\t\t</volatile>",
                        "<dram_uncorrectable>2</dram_uncorrectable>\n\t\t\t</volatile>")
    text = text.replace("<current_link_width>16x<", "<current_link_width>8x<")
    text = text.replace("<clocks_event_reason_hw_slowdown>Not Active<", "<clocks_event_reason_hw_slowdown>Active<")
    gpu = nvidia_smi.parse(text)[0]
    assert gpu["remapped_rows_pending"] is True
    assert gpu["ecc_volatile_uncorrectable"] == 2
    assert gpu["pcie_width_current"] == 8
    assert gpu["clock_event_reasons_active"] == ["gpu_idle", "hw_slowdown"]


@pytest.mark.parametrize("text,why", [
    ("", "printed nothing"),
    ("NVIDIA-SMI has failed because it couldn't communicate with the NVIDIA driver.", "not XML"),
    ("<?xml version='1.0'?><other/>", "no nvidia_smi_log"),
])
def test_bad_output_is_one_line(text, why):
    with pytest.raises(nvidia_smi.ParseError) as err:
        nvidia_smi.parse(text)
    assert why in str(err.value) and "\n" not in str(err.value)


def test_undecodable_bytes_still_parse():
    raw = read(H100).encode().replace(b"NVIDIA H100 80GB HBM3", b"NVIDIA H100 \xff", 1)
    assert nvidia_smi.parse(raw)[0]["product_name"] == u"NVIDIA H100 \ufffd"


def test_bus_key_forms():
    assert nvidia_smi.bus_key("00000000:8B:00.0") == "0000:8b:00"
    assert nvidia_smi.bus_key("0000:8b:00.0") == "0000:8b:00"
    assert nvidia_smi.bus_key("PCI:0000:8b:00") == "0000:8b:00"
    assert nvidia_smi.bus_key("garbage") is None


def test_nvlink_status():
    text = ("GPU 0: NVIDIA H100 80GB HBM3 (UUID: GPU-a)\n\t Link 0: 26.562 GB/s\n\t Link 1: <inactive>\n"
            "GPU 1: NVIDIA H100 80GB HBM3 (UUID: GPU-b)\n\t Link 0: 26.562 GB/s\n\t Link 1: 26.562 GB/s\n")
    assert nvidia_smi.parse_nvlink_status(text) == {0: {"links": 2, "inactive": [1]}, 1: {"links": 2, "inactive": []}}
    # the real single-GPU H100 without NVLink prints nothing
    assert nvidia_smi.parse_nvlink_status("") == {}


RTX = os.path.join(FIXTURES, "public", "rtx-a5000-x2-590.44.01-event-reasons-fabric-v13.xml")


def test_real_capture_lists_each_gpus_compute_processes():
    gpus = nvidia_smi.parse(read(RTX))
    assert [g["processes"] for g in gpus] == [
        [{"pid": 100477, "type": "C", "process_name": "/root/src/llama.cpp/build/bin/llama-server",
          "used_memory_mib": 22430}],
        [{"pid": 100477, "type": "C", "process_name": "/root/src/llama.cpp/build/bin/llama-server",
          "used_memory_mib": 17246}],
    ]


def test_real_h100_capture_with_an_empty_process_list_has_none():
    assert nvidia_smi.parse(read(H100))[0]["processes"] == []


def test_a_gpu_without_a_process_block_has_an_unknown_list_not_an_empty_one():
    text = read(H100)
    start, end = text.index("<processes>"), text.index("</processes>") + len("</processes>")
    assert nvidia_smi.parse(text[:start] + text[end:])[0]["processes"] is None


def test_process_fields_the_driver_cannot_give_are_none():
    text = read(H100).replace("<processes>", "<processes><process_info><pid>N/A</pid><type>G</type>"
                              "<process_name></process_name><used_memory>N/A</used_memory></process_info>", 1)
    assert nvidia_smi.parse(text)[0]["processes"] == [
        {"pid": None, "type": "G", "process_name": None, "used_memory_mib": None}]
