# -*- coding: utf-8 -*-
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""diagnose's GPU check with DCGM's long levels, run by ansible-playbook on the local host: nvidia-smi prints
a real capture (a job's process on the GPUs, or none), dcgmi is a stand-in that logs the level it is asked
for. Levels 3 and 4 never run on a node that runs a job or cannot be shown idle: the run names the node and
the job in one line and runs diagnose_dcgm_busy_level there; an idle node gets the long level; levels 1 and
2 run whatever the node runs."""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import pytest

from ansible_collections.gpudirect.gcp.tests.unit.roles import _job_stand_ins as stand_ins

PLAY = """
- name: Diagnose the GPUs
  hosts: n0
  gather_facts: false
  roles:
    - role: gpudirect.gcp.diagnose
"""


def run(tmp_path, capture, **evars):
    bins = stand_ins.bin_dir(tmp_path)
    stand_ins.gpus(tmp_path, capture)
    stand_ins.script(bins / "dcgmi", '#!/bin/sh\necho "$@" >> "%s"\necho "{}"\n' % (tmp_path / "dcgmi.log"))
    # a loaded driver, which DCGM's diagnostic needs
    (tmp_path / "sys" / "module" / "nvidia").mkdir(parents=True)
    (tmp_path / "sys" / "module" / "nvidia" / "version").write_text("580.159.04\n")
    evars = dict({"gpu_family": "a3-mega", "gpudirect_gpu_sys_dir": str(tmp_path / "sys")}, **evars)
    rc, out = stand_ins.run(tmp_path, PLAY, extra_vars=evars,
                            args=["--tags", "diagnose_gpu"])
    log = tmp_path / "dcgmi.log"
    levels = [ln.split("-r ")[1].split()[0] for ln in log.read_text().splitlines()] if log.exists() else []
    return rc, out, levels


@pytest.mark.parametrize("level", [3, 4])
def test_a_long_level_is_not_run_on_a_busy_node_and_the_job_is_named(tmp_path, level):
    rc, out, levels = run(tmp_path, stand_ins.BUSY, diagnose_dcgm_level=level)
    assert rc == 0, out
    assert levels == ["1"], out
    (line,) = [ln for ln in out.splitlines() if "diagnose: n0: DCGM diagnostic level %d" % level in ln]
    assert ("long" if level == 3 else "extended") in line
    assert "not run - runs a job (busy: %s" % stand_ins.JOB in line and "level 1 instead" in line


def test_a_node_that_cannot_be_read_gets_no_long_level_either(tmp_path):
    rc, out, levels = run(tmp_path, str(tmp_path / "no-such-capture.xml"), diagnose_dcgm_level=3,
                          diagnose_dcgm_busy_level=0)
    assert levels == [], out
    assert "not run - not known to be idle (unknown: could not read the GPU processes" in out
    assert "no DCGM diagnostic there" in out


def test_an_idle_node_gets_the_long_level(tmp_path):
    rc, out, levels = run(tmp_path, stand_ins.IDLE, diagnose_dcgm_level=3)
    assert rc == 0, out
    assert levels == ["3"], out
    assert "diagnose: n0: DCGM diagnostic level" not in out


@pytest.mark.parametrize("level", [1, 2])
def test_short_levels_run_on_a_busy_node(tmp_path, level):
    rc, out, levels = run(tmp_path, stand_ins.BUSY, diagnose_dcgm_level=level)
    assert rc == 0, out
    assert levels == [str(level)], out
    assert "diagnose: n0: DCGM diagnostic level" not in out
