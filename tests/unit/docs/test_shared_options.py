# -*- coding: utf-8 -*-
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""An option of the node check that another module takes too is documented once, in the doc fragment named
for its part (plugins/doc_fragments/<part>.py), which both modules extend.

The node check's parts are node_health.PARTS (and the settings beside its nics part, NIC_SETTINGS);
node_health_info documents each part as an option, with the part's settings as its suboptions. Another
module's option of the same name, type, elements and choices is the same setting: its text must be the
fragment's, not a copy that drifts. An option of that name that is another thing is in ALLOWED, with why;
one whose type or choices differ is another thing on its face.
"""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import os

from ansible_collections.gpudirect.gcp.plugins.module_utils.health import node_health
from ansible_collections.gpudirect.gcp.tests.unit.docs import _module_docs as docs

PREFIX = docs.PREFIX
NODE_CHECK = "node_health_info"
ALLOWED = {
    ("container_engine_info", "engine"): "picks the engine for any container, not the one that runs RxDM",
    ("container_registry_auth", "path"): "the container engine's auth file, not the NCCL env file",
    ("nccl_env_check", "path"): "read instead of an inline env, so its text says how the two combine",
    ("nccl_ld_so_conf", "path"): "the dynamic linker's entry file, not the NCCL env file",
    ("nccl_plugin_profile_info", "path"): "the NCCL plugin's own profile, not the NCCL env file",
    ("gce_topology_info", "metadata_url"): "also says which topology attributes it reads and that no proxy is used",
    ("gpu_nic_facts", "metadata_url"): "the recursive network-interfaces URL, not the computeMetadata/v1 root",
    ("gpu_nic_ready", "nics"): "its own NIC items (name, mac, mtu), not the NIC map's records",
    ("gpu_nic_ready", "peers"): "keyed by interface name, NIC name or MAC, not by the NIC's API name only",
}


def _signature(option):
    return (option.get("type", "str"), option.get("elements"), tuple(option.get("choices") or ()))


def part_options(check_doc, parts=None, settings=None):
    """[(part, path, option)] of the node check as its module documents them: each part's suboptions (path
    ("gpu", "sys_dir")), or the part itself where it has none, and the settings beside the nics part."""
    parts = node_health.PARTS if parts is None else parts
    settings = node_health.NIC_SETTINGS if settings is None else settings
    options = check_doc.get("options") or {}
    out = []
    for part in parts:
        key = part["key"]
        assert key in options, "%s documents no option for the part %s" % (NODE_CHECK, key)
        subs = options[key].get("suboptions")
        if subs:
            out.extend((key, (key, name), opt) for name, opt in sorted(subs.items()))
        else:
            out.append((key, (key,), options[key]))
    out.extend(("nics", (name,), options[name]) for name in sorted(settings))
    return out


def _written_out(doc, path):
    """Whether a module's own DOCUMENTATION writes the option at path out, with a description."""
    options = doc.get("options") or {}
    for key in path[:-1]:
        options = (options.get(key) or {}).get("suboptions") or {}
    return "description" in (options.get(path[-1]) or {})


def shared_option_problems(all_docs, parts=None, settings=None, allowed=None):
    """One line per option of the node check that another module documents apart from it, per allowance no
    longer needed, and per part shared without a fragment file named for it."""
    allowed = ALLOWED if allowed is None else allowed
    check = all_docs[NODE_CHECK]
    problems, used = [], set()
    for part, path, option in part_options(check["merged"], parts, settings):
        name = path[-1]
        for module in sorted(all_docs):
            theirs = (all_docs[module]["merged"].get("options") or {}).get(name)
            if module == NODE_CHECK or theirs is None or _signature(theirs) != _signature(option):
                continue
            if (module, name) in allowed:
                used.add((module, name))
                continue
            where = "%s's %s and %s's %s" % (module, name, NODE_CHECK, ".".join(path))
            fragment = "plugins/doc_fragments/%s.py" % part
            if docs.text(theirs) != docs.text(option):
                problems.append("%s differ: document both once, in %s" % (where, fragment))
            elif _written_out(all_docs[module]["own"], (name,)) or _written_out(check["own"], path):
                problems.append("%s are the same text written twice: take it from %s" % (where, fragment))
            elif not os.path.exists(os.path.join(docs.ROOT, fragment)):
                problems.append("%s share a text, but not from %s" % (where, fragment))
    problems.extend("ALLOWED[%r] is not needed any more" % (key,) for key in sorted(set(allowed) - used))
    return problems


def test_the_node_checks_options_are_documented_once():
    assert shared_option_problems(docs.all_docs()) == []


def test_the_modules_that_share_a_part_extend_its_fragment():
    found = docs.all_docs()
    extends = dict((name, (doc["own"].get("extends_documentation_fragment") or [])) for name, doc in found.items())
    for part in ("gpu", "rxdm", "plugin", "profile", "maintenance"):
        assert "gpudirect.gcp.%s.part" % part in extends[NODE_CHECK], part
    assert "gpudirect.gcp.nics" in extends[NODE_CHECK]
    for module, part in (("gpu_health_info", "gpu"), ("rxdm_readiness", "rxdm"), ("nccl_plugin_info", "plugin"),
                         ("nccl_env_check", "profile"), ("gce_maintenance_info", "maintenance"),
                         ("gpu_nic_ready", "nics"), ("gpu_versions_info", "gpu.sys_dir")):
        assert PREFIX + part in extends[module], module


def test_a_copy_that_drifts_or_is_written_twice_is_named():
    found = docs.all_docs()
    drifted = found["gpu_health_info"]["merged"]["options"]["dcgm_timeout_s"]
    drifted["description"] = "Seconds DCGM may take."
    found["rxdm_readiness"]["own"]["options"]["unit"] = dict(found[NODE_CHECK]["merged"]["options"]["rxdm"]
                                                             ["suboptions"]["unit"])
    allowed = dict(ALLOWED)
    allowed[("gpu_busy_info", "interval_s")] = "a stale allowance"
    assert shared_option_problems(found, allowed=allowed) == [
        "gpu_health_info's dcgm_timeout_s and node_health_info's gpu.dcgm_timeout_s differ: document both once, "
        "in plugins/doc_fragments/gpu.py",
        "rxdm_readiness's unit and node_health_info's rxdm.unit are the same text written twice: take it from "
        "plugins/doc_fragments/rxdm.py",
        "ALLOWED[('gpu_busy_info', 'interval_s')] is not needed any more",
    ]


def test_a_new_parts_option_is_compared_with_every_module(monkeypatch):
    """A throwaway part whose setting another module takes too (rxdm_readiness's interval_s): the check finds
    the copy without a line of its own for the part, and names the fragment it wants."""
    part = {"key": "straggler", "component": "straggler", "needs": (), "empty_runs": False,
            "tag": "diagnose_straggler", "spec": dict(type="dict", options=dict(interval_s=dict(type="float")))}
    monkeypatch.setattr(node_health, "PARTS", node_health.PARTS + (part,))
    found = docs.all_docs()
    found[NODE_CHECK]["merged"]["options"]["straggler"] = {
        "description": "Compare the node's busbw with its peers'.", "type": "dict",
        "suboptions": {"interval_s": {"description": "Seconds between polls.", "type": "float"}}}
    problems = shared_option_problems(found)
    assert "rxdm_readiness's interval_s and node_health_info's straggler.interval_s are the same text written " \
           "twice: take it from plugins/doc_fragments/straggler.py" in problems
    assert "gpu_busy_info's interval_s and node_health_info's straggler.interval_s differ: document both once, " \
           "in plugins/doc_fragments/straggler.py" in problems


# Modules of one subject that take the same settings: an option two of them document alike is written in a
# fragment both extend. ALLOWED_WITHIN holds the options each writes itself, with why.
SUBJECTS = {"job": ("nccl_job_status", "nccl_job_evidence")}
ALLOWED_WITHIN = {
    ("job", "timeout_s"): "a status read once waits longer than the evidence pass, which reads every part",
    ("job", "watch_s"): "the status module reads once by default, the evidence pass watches for 10 s",
}


def subject_problems(subjects=None, allowed=None):
    """One line per option that two modules of a subject both write themselves."""
    subjects = SUBJECTS if subjects is None else subjects
    allowed = ALLOWED_WITHIN if allowed is None else allowed
    problems = []
    for subject, modules in sorted(subjects.items()):
        own = dict((m, docs.own_doc(m).get("options") or {}) for m in modules)
        for i, first in enumerate(modules):
            for second in modules[i + 1:]:
                for name in sorted(set(own[first]) & set(own[second])):
                    if (subject, name) in allowed:
                        continue
                    if _signature(own[first][name]) == _signature(own[second][name]):
                        problems.append("%s and %s both write option %s: put it in a fragment both extend"
                                        % (first, second, name))
        problems.extend("ALLOWED_WITHIN holds %s of %s, which its modules no longer both write" % (name, subject)
                        for (subj, name) in sorted(allowed) if subj == subject
                        and not all(name in own[m] for m in modules))
    return problems


def test_the_job_modules_write_their_shared_options_once():
    assert subject_problems() == []
    status, evidence = (docs.merged(docs.own_doc(m))["options"] for m in SUBJECTS["job"])
    for name in ("inspector_dir", "inspector_stale_s", "names", "interval_s"):
        assert docs.text(status[name]) == docs.text(evidence[name]), name


def test_an_option_two_job_modules_write_themselves_is_named():
    assert subject_problems(allowed={}) == [
        "nccl_job_status and nccl_job_evidence both write option timeout_s: put it in a fragment both extend",
        "nccl_job_status and nccl_job_evidence both write option watch_s: put it in a fragment both extend"]
    # a throwaway subject whose two modules share nothing is clean; an allowance left behind is named
    assert subject_problems({"x": ("gpu_busy_info", "link_mtu")}, {("x", "gone"): "why"}) == [
        "ALLOWED_WITHIN holds gone of x, which its modules no longer both write"]
