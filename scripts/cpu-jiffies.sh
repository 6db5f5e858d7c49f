#!/usr/bin/env bash
# Busy and total jiffies of all CPUs so far (the first line of /proc/stat), the
# one reading scripts/run-tests.sh and scripts/molecule-all.sh take the
# machine's CPU time from: the stages' processes, the sandbox nodes and podman
# alike.  Sourced, it defines cpu_jiffies; run, it prints "BUSY TOTAL".
cpu_jiffies() { awk '/^cpu /{print $2+$3+$4+$7+$8+$9, $2+$3+$4+$5+$6+$7+$8+$9; exit}' /proc/stat; }
if [ "${BASH_SOURCE[0]}" = "$0" ]; then
  cpu_jiffies
fi
