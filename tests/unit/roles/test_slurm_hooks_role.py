# -*- coding: utf-8 -*-
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""The slurm_hooks role run by ansible-playbook on the local host, writing into a temporary directory: the
slurm_mux links (check mode writes nothing, a second run changes nothing), the hooks' exit status for
each agent outcome, and the refusals, each one line naming what is at fault. (The plain layout's slurm.conf
edit and slurmd restart run for real in the Molecule scenario extensions/molecule/slurm.)"""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import json
import os
import re
import stat
import subprocess
import sys

import pytest
import yaml

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__)))))
PLAY = [{"name": "Slurm hooks", "hosts": "gpu_nodes", "gather_facts": False,
         "roles": [{"role": "gpudirect.gcp.slurm_hooks"}]}]
TEARDOWN = [{"name": "Teardown", "hosts": "gpu_nodes", "gather_facts": False, "tasks": [
    {"name": "Remove the hooks", "ansible.builtin.include_role": {"name": "gpudirect.gcp.slurm_hooks",
                                                                  "tasks_from": "teardown"}}]}]


def fake_agent(tmp_path):
    """Records its arguments and exits with the status in the file next to it."""
    path = tmp_path / "gpudirect-health"
    path.write_text('#!/bin/sh\necho "$@" > "%s/agent.args"\nexit "$(cat "%s/agent.rc")"\n' % (tmp_path, tmp_path))
    path.chmod(path.stat().st_mode | stat.S_IXUSR)
    (tmp_path / "agent.rc").write_text("0")
    return str(path)


def options(tmp_path, **more):
    out = {"gpu_family": "a3-mega", "slurm_hooks_mux_dir": str(tmp_path / "mux"),
           "slurm_hooks_dir": str(tmp_path / "hooks"), "slurm_hooks_partitions": ["a3mega"],
           "node_health_command": str(tmp_path / "gpudirect-health")}
    out.update(more)
    return out


def run(tmp_path, evars, *args, play=None):
    inv = {"gpu_nodes": {"hosts": {"n0": {"ansible_connection": "local",
                                          "ansible_python_interpreter": sys.executable}}}}
    (tmp_path / "inventory.yml").write_text(yaml.safe_dump(inv))
    (tmp_path / "play.yml").write_text(yaml.safe_dump(play or PLAY))
    argv = [os.path.join(os.path.dirname(sys.executable), "ansible-playbook"), "-i", str(tmp_path / "inventory.yml"),
            str(tmp_path / "play.yml"), "-e", json.dumps(evars)] + list(args)
    env = dict(os.environ, ANSIBLE_CONFIG=os.path.join(ROOT, "ansible.cfg"), ANSIBLE_NOCOLOR="1",
               ANSIBLE_INVENTORY_ENABLED="ansible.builtin.yaml")
    proc = subprocess.run(argv, cwd=ROOT, env=env, capture_output=True, text=True, check=False, timeout=300)
    return proc.returncode, proc.stdout + proc.stderr


def recap(out):
    match = re.search(r"^n0\s+: ok=(\d+)\s+changed=(\d+)\s+unreachable=0\s+failed=(\d+)", out, re.M)
    assert match, out
    return {"changed": int(match.group(2)), "failed": int(match.group(3))}


def hook(tmp_path, phase, agent_rc):
    (tmp_path / "agent.rc").write_text(str(agent_rc))
    proc = subprocess.run([str(tmp_path / "hooks" / ("gpudirect-" + phase))], capture_output=True, text=True,
                          timeout=60, check=False)
    return proc.returncode, (tmp_path / "agent.args").read_text().split()


def test_mux_links_per_partition_check_mode_first_then_once(tmp_path):
    fake_agent(tmp_path)
    rc, out = run(tmp_path, options(tmp_path), "--check", "--diff")
    assert rc == 0 and recap(out)["changed"] > 0, out
    assert not (tmp_path / "hooks").exists() and not (tmp_path / "mux").exists()

    rc, out = run(tmp_path, options(tmp_path))
    assert rc == 0, out
    for phase in ("prolog", "epilog"):
        link = tmp_path / "mux" / ("partition-a3mega-%s_slurmd.d" % phase) / ("gpudirect.%s_slurmd" % phase)
        assert os.readlink(str(link)) == str(tmp_path / "hooks" / ("gpudirect-" + phase))
    assert not (tmp_path / "mux" / "prolog_slurmd.d").exists()

    rc, out = run(tmp_path, options(tmp_path))
    assert rc == 0 and recap(out)["changed"] == 0, out

    rc, out = run(tmp_path, options(tmp_path), play=TEARDOWN)
    assert rc == 0 and recap(out)["changed"] > 0, out
    assert not (tmp_path / "hooks").exists()
    assert not os.path.lexists(str(tmp_path / "mux" / "partition-a3mega-prolog_slurmd.d" / "gpudirect.prolog_slurmd"))
    rc, out = run(tmp_path, options(tmp_path), play=TEARDOWN)
    assert rc == 0 and recap(out)["changed"] == 0, out


def test_only_a_failing_check_makes_a_hook_fail(tmp_path):
    fake_agent(tmp_path)
    evars = options(tmp_path, slurm_hooks_rxdm_per_job=True, rxdm_ready_timeout_s=100, slurm_hooks_partitions=[])
    rc, out = run(tmp_path, evars)
    assert rc == 0, out
    assert (tmp_path / "mux" / "prolog_slurmd.d" / "gpudirect.prolog_slurmd").is_symlink()
    status, args = hook(tmp_path, "prolog", 1)
    assert status == 1
    assert args == ["--slurm", "prolog", "--timeout", "180", "--rxdm-per-job", "--rxdm-wait", "100", "--drain-reason"]
    # a bad install, or timeout(1) killing a wedged agent, is no node fault
    for agent_rc in (0, 2, 124, 137):
        assert hook(tmp_path, "epilog", agent_rc)[0] == 0, agent_rc
    assert hook(tmp_path, "epilog", 0)[1][:2] == ["--slurm", "epilog"]


@pytest.mark.parametrize("evars, message", [
    ({"slurm_hooks_rxdm_per_job": True, "slurm_hooks_timeout_s": 100},
     "slurm_hooks_timeout_s (100) must be more than the 120 s RxDM may take to become ready"),
    ({"node_health_command": "/nonexistent/gpudirect-health"},
     "/nonexistent/gpudirect-health is not installed on n0: run the gpudirect.gcp.node_health role first"),
    ({"slurm_hooks_layout": "plain"}, "already sets Prolog=/etc/slurm/site-prolog: use slurm_hooks_layout mux"),
])
def test_refusals_are_one_line_naming_the_fault(tmp_path, evars, message):
    fake_agent(tmp_path)
    conf = tmp_path / "slurm.conf"
    conf.write_text("ClusterName=c\nProlog = /etc/slurm/site-prolog  # the site's\n")
    rc, out = run(tmp_path, options(tmp_path, slurm_hooks_slurm_conf=str(conf), **evars))
    assert rc != 0 and recap(out)["failed"] == 1
    assert message in out, out
    assert conf.read_text() == "ClusterName=c\nProlog = /etc/slurm/site-prolog  # the site's\n"


def test_a4x_hooks_get_the_nvlink_domain_file_and_other_families_none(tmp_path):
    agent = tmp_path / "gpudirect-health"
    agent.write_text('#!/bin/sh\necho "${GPUDIRECT_NVLINK_DOMAIN_FILE-unset}" > "%s/agent.env"\nexit 0\n' % tmp_path)
    agent.chmod(agent.stat().st_mode | stat.S_IXUSR)
    evars = options(tmp_path, gpu_family="a4x", gce_topology={"block": "b1", "subblock": "s2"},
                    slurm_hooks_partitions=[])
    rc, out = run(tmp_path, evars)
    assert rc == 0, out
    domain_file = tmp_path / "hooks" / "nvlink-domain.json"
    assert json.loads(domain_file.read_text()) == {"domain": "b1/s2", "nodes": ["n0"], "channel_per_job": False,
                                                   "on_shared": "fail"}
    subprocess.run([str(tmp_path / "hooks" / "gpudirect-prolog")], check=True, timeout=60)
    assert (tmp_path / "agent.env").read_text().strip() == str(domain_file)

    # a domain judged otherwise, then a family without NVLink domains: the file goes, the hooks name none
    rc, out = run(tmp_path, dict(evars, slurm_hooks_nvlink_domain_jobs="warn", slurm_hooks_imex_channel_per_job=True,
                                 slurm_hooks_nvlink_domain_nodes=["a4x-0", "a4x-1"]))
    assert rc == 0, out
    assert json.loads(domain_file.read_text()) == {"domain": "b1/s2", "nodes": ["a4x-0", "a4x-1"],
                                                   "channel_per_job": True, "on_shared": "warn"}
    rc, out = run(tmp_path, dict(evars, gpu_family="a3-mega"))
    assert rc == 0, out
    assert not domain_file.exists()
    subprocess.run([str(tmp_path / "hooks" / "gpudirect-prolog")], check=True, timeout=60)
    assert (tmp_path / "agent.env").read_text().strip() == "unset"


@pytest.mark.parametrize("nodes, message", [
    ([], "slurm_hooks_nvlink_domain_nodes lists no Slurm node of NVLink domain b1/s2 on n0"),
    (["a4x-0", "a4x-[1-2]"], "slurm_hooks_nvlink_domain_nodes on n0: not one Slurm node name each: a4x-[1-2]"),
])
def test_an_a4x_domain_squeue_cannot_ask_about_is_refused(tmp_path, nodes, message):
    fake_agent(tmp_path)
    evars = options(tmp_path, gpu_family="a4x", gce_topology={"block": "b1", "subblock": "s2"},
                    slurm_hooks_nvlink_domain_nodes=nodes, slurm_hooks_partitions=[])
    rc, out = run(tmp_path, evars)
    assert rc != 0 and recap(out)["failed"] == 1
    assert message in out, out
