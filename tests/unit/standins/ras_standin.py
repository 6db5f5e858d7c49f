# -*- coding: utf-8 -*-
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""The NCCL RAS stand-in as a real process on a free loopback port, for the tests that ask it."""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import json
import os
import subprocess
import sys

import pytest

ROOT = os.path.abspath(os.path.join(os.path.dirname(__file__), "..", "..", ".."))
STANDIN = os.path.join(ROOT, "tests", "sandbox", "standins", "nccl_ras", "gpudirect_standin_ras.py")
HOSTS = ["10.0.0.%d" % n for n in range(2, 6)]


class Ras(object):
    """start(**script) runs a stand-in with that job (4 nodes of 8 ranks, 50 collectives a second,
    unless the script says otherwise) and returns its port; stop() ends them all."""

    def __init__(self, directory):
        self.directory, self.procs = str(directory), []

    def start(self, **script):
        path = os.path.join(self.directory, "ras-script%d.json" % len(self.procs))
        with open(path, "w") as handle:
            json.dump(dict({"hosts": HOSTS, "ranks_per_host": 8, "rate": 50.0}, **script), handle)
        proc = subprocess.Popen([sys.executable, STANDIN, "--script", path, "--port", "0"],
                                stdout=subprocess.PIPE, universal_newlines=True)
        self.procs.append(proc)
        line = proc.stdout.readline()
        if not line.startswith("ready "):
            raise AssertionError("the RAS stand-in did not start: %r" % line)
        return int(line.split()[1])

    def stop(self):
        for proc in self.procs:
            proc.terminate()
            proc.wait(timeout=10)


@pytest.fixture
def ras(tmp_path):
    """ras(**script) runs a RAS stand-in on a free loopback port and returns the port; all stop after the test."""
    standins = Ras(tmp_path)
    yield standins.start
    standins.stop()
