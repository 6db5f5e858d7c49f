# -*- coding: utf-8 -*-
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""What the job-guard tests share: a play run by the real ansible-playbook on local hosts, with stand-in
programs first on PATH (nvidia-smi printing a real capture, systemctl, scontrol...), and the output read
the same on every supported ansible-core."""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import json
import os
import re
import stat
import subprocess
import sys

import yaml

from ansible_collections.gpudirect.gcp.tests.unit.playbooks import _ansible_output as ansible_output

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__)))))
FIXTURES = os.path.join(ROOT, "tests", "fixtures", "gpu")
# a job's process on both GPUs (pid 100477, llama-server); an H100 node whose GPUs run nothing
BUSY = os.path.join(FIXTURES, "public", "rtx-a5000-x2-590.44.01-event-reasons-fabric-v13.xml")
IDLE = os.path.join(FIXTURES, "h100-580.159.04", "nvidia-smi-q-x.xml")
JOB = "GPU 0: pid 100477 /root/src/llama.cpp/build/bin/llama-server"


def script(path, text):
    path.write_text(text)
    path.chmod(path.stat().st_mode | stat.S_IXUSR | stat.S_IXGRP | stat.S_IXOTH)
    return str(path)


def bin_dir(tmp_path):
    """A directory for stand-in programs, with nvidia-smi printing the capture named in the file
    smi/<host> (the host from $STANDIN_HOST, which the plays set per host), else smi/default."""
    path = tmp_path / "bin"
    path.mkdir(exist_ok=True)
    (tmp_path / "smi").mkdir(exist_ok=True)
    script(path / "nvidia-smi", '#!/bin/sh\nd="%s"\nf="$d/${STANDIN_HOST:-default}"\n[ -f "$f" ] || f="$d/default"\n'
           'cat "$(cat "$f")"\n' % (tmp_path / "smi"))
    return path


def gpus(tmp_path, capture, host="default"):
    """What nvidia-smi prints on host from now on."""
    (tmp_path / "smi").mkdir(exist_ok=True)
    (tmp_path / "smi" / host).write_text(capture)


def run(tmp_path, play, hosts=("n0",), extra_vars=None, args=(), env=None, prefix=()):
    """(rc, output) of `play` (YAML text) on local hosts, the stand-ins in tmp_path/bin first on PATH."""
    host = {"ansible_connection": "local", "ansible_python_interpreter": sys.executable}
    inv = {"all": {"children": {"gpu_nodes": {"hosts": dict((h, dict(host)) for h in hosts)}}}}
    (tmp_path / "inventory.yml").write_text(yaml.safe_dump(inv))
    (tmp_path / "play.yml").write_text(play)
    argv = list(prefix) + [os.path.join(os.path.dirname(sys.executable), "ansible-playbook"),
                           "-i", str(tmp_path / "inventory.yml"), str(tmp_path / "play.yml"),
                           "-e", json.dumps(extra_vars or {})] + list(args)
    path = str(tmp_path / "bin") + os.pathsep + os.environ.get("PATH", "")
    full_env = dict(os.environ, ANSIBLE_CONFIG=os.path.join(ROOT, "ansible.cfg"), ANSIBLE_NOCOLOR="1",
                    ANSIBLE_INVENTORY_ENABLED="ansible.builtin.yaml", PATH=path, **(env or {}))
    proc = subprocess.run(argv, cwd=ROOT, env=full_env, capture_output=True, text=True, check=False, timeout=600)
    return proc.returncode, ansible_output.text(proc.stdout + proc.stderr)


def task_results(out, name):
    """The result lines (ok:, changed:, skipping:, fatal:) of every task whose name ends with `name`."""
    found = []
    for block in re.split(r"^TASK \[", out, flags=re.M)[1:]:
        header, _sep, body = block.partition("\n")
        if header.split("]")[0].endswith(name):
            found += [ln for ln in body.splitlines() if re.match(r"(ok|changed|skipping|fatal|failed): ", ln)]
    return found


def recap(out, host="n0"):
    match = re.search(r"^%s\s+: ok=(\d+)\s+changed=(\d+)\s+unreachable=0\s+failed=(\d+)" % host, out, re.M)
    assert match, out
    return {"ok": int(match.group(1)), "changed": int(match.group(2)), "failed": int(match.group(3))}
