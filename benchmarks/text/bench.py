# Copyright: (c) 2026, gpudirect.gcp contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""Text benchmark: 1 MB of hostile text through every writer of the collection's outputs.

A tool on a node (nvidia-smi, dmesg, mpirun, a container runtime) can print anything, and what it
prints reaches a finding's cause, an NCCL run's output tail, a metric label or a drain reason.  Each
writer must take any text in time linear in its length.  The shapes are those that make a
backtracking pattern quadratic: one unbroken token, a token of repeated prefixes ("eyJ", "x-"),
control characters and undecodable bytes, a forged line per 80 characters.

Prints the seconds each writer took on each shape, the slowest, and whether every one stayed
under the target (exit 1 when one did not).
    make bench-text          (or: python benchmarks/text/bench.py [--mb 1])
"""

from __future__ import absolute_import, division, print_function

import argparse
import os
import sys
import time
from xml.etree import ElementTree as ET

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
sys.path.insert(0, os.path.join(ROOT, "build", "collections"))

# pylint: disable=wrong-import-position
from ansible_collections.gpudirect.gcp.plugins.module_utils.common import prom_text, safe_text  # noqa: E402
from ansible_collections.gpudirect.gcp.plugins.module_utils.findings import findings_report  # noqa: E402
from ansible_collections.gpudirect.gcp.plugins.module_utils.health import health_metrics, node_health  # noqa: E402
from ansible_collections.gpudirect.gcp.plugins.module_utils.nccl_tests import nccl_parse, nccl_report  # noqa: E402
from ansible_collections.gpudirect.gcp.plugins.plugin_utils.diagnose import diagnose  # noqa: E402

TARGET_S = 1.0


def shapes(size):
    """{name: text of about size characters}."""
    def fill(unit):
        return (unit * (size // len(unit) + 1))[:size]
    return {
        "one token": fill("a"),
        "eyJ repeated": fill("eyJ"),
        "x- repeated": fill("x-"),
        "NAME=value pairs": fill("A_TOKEN=v "),
        "controls and bad bytes": fill(u"\x1b[31m\x00\udcff\u2028"),
        "forged lines": fill("ok\nFAIL node9 nic eth1: forged " + "z" * 50 + "\n"),
        "nccl-tests rows": fill("  8388608  2097152  float  sum  -1  100.0  83.89  146.81  0  99.0  84.7  148.3  0\n"),
    }


def writers():
    """{name: function of one text}: every path by which outside text reaches an output."""
    # the text is the one field a tool's output fills (a cause, an output tail); the rest is ordinary
    def finding(text):
        return {"host": "n0", "component": "gpu", "subject": "GPU 3", "severity": "fail", "cause": text,
                "repair": "ansible n0 -m ansible.builtin.reboot"}

    def findings(text):
        clean = findings_report.clean([finding(text)])
        return (findings_report.junit_suite(ET.Element("testsuites"), clean, ["n0"]),
                findings_report.html_section(clean, ["n0"]))

    def report(text):
        result = {"family": "a3-mega", "mode": "cluster", "verdict": "fail", "nodes": ["n0", "n1"],
                  "env": {"NCCL_DEBUG": "WARN"},
                  "collectives": [{"collective": "all_gather", "status": "fail", "reasons": ["busbw low"],
                                   "hosts": ["n0"]}],
                  "runs": [{"collective": "all_gather", "command": ["mpirun", "all_gather_perf"],
                            "output_tail": text}]}
        return nccl_report.build_report(result, "bench", hosts=["n0", "n1"],
                                        diagnosis={"verdict": "fail", "passed": 1, "failed": 1})

    return {
        "safe_text.mask_text": safe_text.mask_text,
        "safe_text.one_line": safe_text.one_line,
        "safe_text.html": safe_text.html,
        "findings report (clean, JUnit, HTML)": findings,
        "NCCL report (build and JSON)": lambda text: nccl_report.to_json(report(text)),
        "NCCL report (build and JUnit)": lambda text: nccl_report.to_junit(report(text)),
        "NCCL report (build and HTML)": lambda text: nccl_report.to_html(report(text)),
        "nccl-tests parser": nccl_parse.parse,
        "metrics (Prometheus text)": lambda text: health_metrics.render(
            {"family": "a3-mega", "findings": [node_health.finding("gpu", "GPU 3", "fail", text)]}, now=0.0),
        "metric label": lambda text: prom_text.labels([("subject", text)]),
        "drain reason and journal line": lambda text: node_health.one_line(
            [node_health.finding("gpu", "GPU 3", "fail", text)]),
        "diagnose play line": lambda text: diagnose.line(finding(text)),
    }


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--mb", type=float, default=1.0, help="size of each text in MB (default 1)")
    args = parser.parse_args()
    size = int(args.mb * 1000 * 1000)
    texts = shapes(size)
    worst = (0.0, None, None)
    print("%-38s %-24s %8s" % ("writer", "text (%.1f MB)" % args.mb, "seconds"))
    for wname, write in writers().items():
        for sname, text in texts.items():
            start = time.perf_counter()
            write(text)
            took = time.perf_counter() - start
            worst = max(worst, (took, wname, sname))
            print("%-38s %-24s %8.3f" % (wname, sname, took))
    print("slowest: %s on %s, %.3f s (target under %.1f s for %.1f MB: %s)"
          % (worst[1], worst[2], worst[0], TARGET_S, args.mb, "met" if worst[0] < TARGET_S else "NOT met"))
    return 0 if worst[0] < TARGET_S else 1


if __name__ == "__main__":
    sys.exit(main())
