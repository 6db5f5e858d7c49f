#!/usr/bin/python
# -*- coding: utf-8 -*-
# Copyright: (c) 2026, gpudirect.gcp contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)

from __future__ import absolute_import, division, print_function

__metaclass__ = type

DOCUMENTATION = r"""
module: nccl_tests_report
short_description: Write the JSON, JUnit XML and HTML reports of an nccl_tests run
version_added: 1.0.0
author:
  - gpudirect.gcp contributors (@gpudirect)
description:
  - Takes the result of M(gpudirect.gcp.nccl_tests) and writes, under O(dest)/O(run_id)/,
    C(report.json) (schema C(gpudirect.gcp/nccl-report/v1), see docs/validation.md),
    C(junit.xml) (one testcase per collective, per node pair and per single-node run) and
    C(report.html) (a busbw-vs-message-size SVG chart per collective with the baseline line, in pairwise mode a
    pair busbw matrix per collective in topological order with the slow pairs under it, and a per-node table).
  - "Meant to run on the controller (C(delegate_to: localhost))."
  - For a diagnosis (O(diagnosis) given) the reports also carry the findings. C(report.json) gets a top-level
    C(findings) list (C(host), C(component), C(subject), C(severity), C(cause), C(repair), C(place), where the
    node sits) and C(diagnosis) (counts and verdict). C(junit.xml) gets a testcase per host and component, a
    node's place as its properties C(place.<part>). C(report.html) opens with the findings grouped by host, each
    with its repair command and place, above the busbw charts. This works also when the NCCL
    tests did not run (empty O(result)).
  - Where the diagnosis blames a place (its C(place_blame) - failing nodes that cluster in one sub-block or block),
    C(report.json) has it as C(place_blame), C(junit.xml) as a C(place_blame) property of the C(diagnose) suite and
    C(report.html) as a line above the findings.
  - In pairwise mode the reports give what isolation took against ceil(log2(N)) - C(pairwise.isolation) in
    C(report.json), C(isolation.*) properties of the C(nccl_tests.pairs) suite, a line in C(report.html).
  - Returns a small summary for C(ansible.builtin.set_stats).
options:
  result:
    description: The registered result of M(gpudirect.gcp.nccl_tests); empty when the tests did not run.
    type: dict
    default: {}
  findings:
    description: The diagnosis' findings (as the diagnose role makes them).
    type: list
    elements: dict
    default: []
  hosts:
    description: Every node the diagnosis covered.
    type: list
    elements: str
    default: []
  diagnosis:
    description: The diagnosis summary (as the diagnose role makes it); makes this a diagnosis report.
    type: dict
  standins:
    description:
      - Some evidence came from stand-ins (the sandbox's nodes set C(gpudirect_standins)). Runs of the stand-in
        nccl-tests programs are recognised without it. The report then says so in C(from_standins), in a banner at
        the top of the HTML page and in every JUnit suite's properties.
    type: bool
    default: false
  dest:
    description: Directory that holds one sub-directory per run.
    type: path
    required: true
  run_id:
    description: Name of this run's directory.
    type: str
    required: true
  formats:
    description:
      - Which reports to write. V(prometheus) writes C(metrics.prom) - the verdict, peak busbw per collective against
        its bar, busbw per tested node pair and the bad nodes, in the Prometheus text format.
    type: list
    elements: str
    choices: [json, junit, html, prometheus]
    default: [json, junit, html]
  textfile_dir:
    description:
      - Also write those metrics to C(gpudirect_nccl_tests.prom) in this directory (node_exporter's textfile directory
        on the controller), through a temporary file and a rename; each run replaces the last.
    type: path
    version_added: 1.0.0
attributes:
  check_mode:
    support: full
    description: Writes nothing; returns the summary and the paths it would write.
  diff_mode:
    support: none
    description: Nothing to diff.
"""

EXAMPLES = r"""
- name: Write the reports on the controller
  gpudirect.gcp.nccl_tests_report:
    result: "{{ nccl }}"
    dest: "{{ playbook_dir }}/nccl-reports"
    run_id: "{{ now(utc=true, fmt='%Y%m%dT%H%M%SZ') }}"
  delegate_to: localhost
  run_once: true
  register: report
"""

RETURN = r"""
run_dir:
  description: Directory of this run's reports.
  returned: always
  type: str
files:
  description: Paths of the written (or, in check mode, planned) reports by format (C(textfile) for O(textfile_dir)).
  returned: always
  type: dict
summary:
  description:
    - Verdict, family, mode, node count, peak busbw per collective, bad nodes and, in pairwise mode, C(isolation)
      (null otherwise); for a diagnosis also C(diagnosis).
  returned: always
  type: dict
"""

import os
import time

from ansible_collections.gpudirect.gcp.plugins.module_utils.nccl_tests import nccl_metrics, nccl_report
from ansible_collections.gpudirect.gcp.plugins.module_utils._module import GpuModule
from ansible_collections.gpudirect.gcp.plugins.module_utils.common.files import write_atomic

_FILES = {"json": ("report.json", nccl_report.to_json), "junit": ("junit.xml", nccl_report.to_junit),
          "html": ("report.html", nccl_report.to_html),
          "prometheus": ("metrics.prom", lambda report: nccl_metrics.render(report, time.time()))}
# the latest run's metrics in node_exporter's textfile directory (option textfile_dir)
TEXTFILE = "gpudirect_nccl_tests.prom"


def main():
    gm = GpuModule(
        dict(
            result=dict(type="dict", default={}),
            findings=dict(type="list", elements="dict", default=[]),
            hosts=dict(type="list", elements="str", default=[]),
            diagnosis=dict(type="dict"),
            standins=dict(type="bool", default=False),
            dest=dict(type="path", required=True),
            run_id=dict(type="str", required=True),
            formats=dict(type="list", elements="str", choices=["json", "junit", "html", "prometheus"],
                         default=["json", "junit", "html"]),
            textfile_dir=dict(type="path"),
        ),
    )
    p = gm.params
    if not p["run_id"] or os.sep in p["run_id"] or p["run_id"] in (".", ".."):
        gm.fail("run_id: %r is not a plain directory name" % p["run_id"])
    run_dir = os.path.join(p["dest"], p["run_id"])
    report = nccl_report.build_report(p["result"], p["run_id"], findings=p["findings"], hosts=p["hosts"],
                                      diagnosis=p["diagnosis"], standins=p["standins"])
    files = dict((fmt, os.path.join(run_dir, _FILES[fmt][0])) for fmt in p["formats"])
    if p["textfile_dir"]:
        files["textfile"] = os.path.join(p["textfile_dir"], TEXTFILE)
    changed = False
    if not gm.check_mode:
        try:
            if not os.path.isdir(run_dir):
                os.makedirs(run_dir)
            for fmt, path in files.items():
                text = _FILES["prometheus" if fmt == "textfile" else fmt][1](report)
                old = None
                if os.path.exists(path):
                    with open(path) as f:
                        old = f.read()
                if old != text:
                    write_atomic(path, text, 0o644)
                    changed = True
        except (IOError, OSError) as exc:
            gm.fail("cannot write the reports under %s: %s" % (run_dir, exc))
    else:
        changed = any(not os.path.exists(path) for path in files.values())
    gm.exit(changed=changed, run_dir=run_dir, files=files, summary=report["summary"])


if __name__ == "__main__":
    main()
