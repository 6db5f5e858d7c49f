# -*- coding: utf-8 -*-
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""One job per NVLink domain's IMEX channels (A4X, A4X Max): the domain file the slurm_hooks role writes,
squeue's answer about the domain's nodes, and the prolog's judgment."""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import json

import pytest

from ansible_collections.gpudirect.gcp.plugins.module_utils.health import node_health
from ansible_collections.gpudirect.gcp.plugins.module_utils.health import nvlink_domain_jobs as ndj

DOMAIN = {"domain": "b1/s2", "nodes": ["a4x-0", "a4x-1", "a4x-2"], "channel_per_job": False, "on_shared": "fail"}


class Squeue(object):
    """squeue answering with the given text and status; records its argument lists."""

    def __init__(self, out="", rc=0, err=""):
        self.out, self.rc, self.err, self.calls = out, rc, err, []

    def which(self, name):
        return {"squeue": "/usr/bin/squeue"}.get(name)

    def run(self, argv):
        self.calls.append(argv)
        return self.rc, self.out, self.err


def domain_file(tmp_path, **changes):
    path = tmp_path / "nvlink-domain.json"
    path.write_text(json.dumps(dict(DOMAIN, **changes)))
    return str(path)


def check(tmp_path, squeue, job="7", **changes):
    environ = {ndj.ENV_FILE: domain_file(tmp_path, **changes)}
    if job:
        environ["SLURM_JOB_ID"] = job
    return ndj.check(squeue.run, squeue.which, environ)


# --- the domain file ---

def test_load_reads_the_domain_its_nodes_and_the_judgment():
    assert ndj.load(json.dumps(DOMAIN)) == DOMAIN


@pytest.mark.parametrize("text, message", [
    ("{", "not JSON"),
    ("[]", "not a JSON object"),
    (json.dumps(dict(DOMAIN, domain="")), "domain: missing"),
    (json.dumps(dict(DOMAIN, nodes=[])), "nodes: must be a non-empty list of Slurm node names"),
    (json.dumps(dict(DOMAIN, nodes=["a4x-0", 3])), "nodes: must be a non-empty list of Slurm node names"),
    (json.dumps(dict(DOMAIN, nodes=["a4x-0,a4x-9"])), "nodes: 'a4x-0,a4x-9' is not one Slurm node name"),
    (json.dumps(dict(DOMAIN, channel_per_job="yes")), "channel_per_job: must be true or false"),
    (json.dumps(dict(DOMAIN, on_shared="drain")), "on_shared: must be fail, warn or ignore, got 'drain'"),
])
def test_load_names_the_key_at_fault(text, message):
    with pytest.raises(ndj.DomainFileError, match=message):
        ndj.load(text)


# --- squeue ---

def test_squeue_asks_for_the_jobs_that_hold_gpus_on_the_domains_nodes():
    argv = ndj.squeue_argv(["a4x-0", "a4x-1"])
    assert argv[0] == "squeue"
    assert "--nodelist=a4x-0,a4x-1" in argv and "--noheader" in argv
    # running, completing (memory not yet freed), configuring (a prolog under way) and suspended jobs
    assert "--states=R,CG,CF,S" in argv


def test_parse_squeue_keeps_every_good_record_and_names_the_bad_one():
    jobs, bad = ndj.parse_squeue("12|alice|a4x-[0-1]\n\nnot a record\n13|bob|a4x-2\n12|alice|a4x-[0-1]\n")
    assert jobs == [{"job": "12", "user": "alice", "nodes": "a4x-[0-1]"}, {"job": "13", "user": "bob", "nodes": "a4x-2"}]
    assert bad == ["not a record"]


# --- the judgment ---

def test_a_second_job_sharing_the_domains_channels_is_refused(tmp_path):
    squeue = Squeue("7|carol|a4x-1\n12|alice|a4x-[0-1]\n")
    (item,) = check(tmp_path, squeue)
    assert (item["component"], item["subject"], item["severity"]) == ("imex", "NVLink domain b1/s2", "fail")
    assert item["cause"].startswith("job 12 (alice on a4x-[0-1]) runs on the same IMEX channels")
    assert squeue.calls[0][0] == "/usr/bin/squeue"
    line = node_health.one_line([item])
    assert line.startswith("fail imex NVLink domain b1/s2: job 12 (alice on a4x-[0-1])") and "\n" not in line


def test_several_other_jobs_are_counted_in_one_line(tmp_path):
    (item,) = check(tmp_path, Squeue("12|alice|a4x-0\n13|bob|a4x-2\n14|dan|a4x-2\n"))
    assert item["cause"].startswith("job 12 (alice on a4x-0) and 2 more jobs run on the same IMEX channels")


def test_the_job_alone_in_its_domain_passes(tmp_path):
    # a job that holds the whole domain (or its only job) sees itself alone
    assert check(tmp_path, Squeue("7|carol|a4x-[0-2]\n")) == []
    assert check(tmp_path, Squeue("")) == []


def test_warn_names_it_and_lets_the_job_run(tmp_path):
    (item,) = check(tmp_path, Squeue("12|alice|a4x-0\n"), on_shared="warn")
    assert item["severity"] == "warn" and item["cause"].startswith("job 12 ")


@pytest.mark.parametrize("changes", [{"channel_per_job": True}, {"on_shared": "ignore"}])
def test_channels_per_job_or_ignore_ask_nothing(tmp_path, changes):
    squeue = Squeue("12|alice|a4x-0\n")
    assert check(tmp_path, squeue, **changes) == [] and squeue.calls == []


def test_no_domain_file_no_check():
    squeue = Squeue("12|alice|a4x-0\n")
    assert ndj.check(squeue.run, squeue.which, {"SLURM_JOB_ID": "7"}) == []
    assert squeue.calls == []


@pytest.mark.parametrize("squeue, job, cause", [
    (Squeue(rc=1, err="slurm_load_jobs error: Unable to contact slurm controller\nmore\n"), "7",
     "could not check the jobs of the domain: squeue failed (exit 1): slurm_load_jobs error: Unable to contact"),
    (Squeue("12|alice|a4x-0\n"), None, "could not check the jobs of the domain: SLURM_JOB_ID unset"),
])
def test_a_check_that_cannot_run_only_warns(tmp_path, squeue, job, cause):
    (item,) = check(tmp_path, squeue, job=job)
    assert item["severity"] == "warn" and item["cause"].startswith(cause), item


def test_no_squeue_only_warns(tmp_path):
    squeue = Squeue()
    squeue.which = lambda name: None
    (item,) = check(tmp_path, squeue)
    assert (item["severity"], item["cause"]) == ("warn", "could not check the jobs of the domain: squeue not found")


def test_a_bad_record_is_named_and_the_others_still_judged(tmp_path):
    items = check(tmp_path, Squeue("garbage\n12|alice|a4x-0\n"))
    assert [i["severity"] for i in items] == ["fail", "warn"]
    assert items[1]["cause"] == "squeue answered a line that is not job|user|nodes: 'garbage'"


def test_an_unusable_domain_file_warns_naming_it(tmp_path):
    path = tmp_path / "nvlink-domain.json"
    path.write_text(json.dumps(dict(DOMAIN, nodes=[])))
    (item,) = ndj.check(Squeue().run, Squeue().which, {ndj.ENV_FILE: str(path), "SLURM_JOB_ID": "7"})
    assert item["severity"] == "warn" and item["subject"] == str(path)
    assert "nodes: must be a non-empty list" in item["cause"]
    (item,) = ndj.check(Squeue().run, Squeue().which, {ndj.ENV_FILE: str(tmp_path / "none.json"),
                                                       "SLURM_JOB_ID": "7"})
    assert item["severity"] == "warn" and item["cause"].startswith("cannot read it: ")
