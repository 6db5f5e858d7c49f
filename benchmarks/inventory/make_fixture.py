# Copyright: (c) 2026, gpudirect.gcp contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""The benchmark fleet: N projects x M instances, a tenth of them A3/A4 GPU VMs."""

from __future__ import absolute_import, division, print_function

import os
import sys

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "tests", "emulator"))
import compute_fleet as fx  # noqa: E402

FAMILIES = ["a3-high", "a3-mega", "a3-ultra", "a4"]
ZONES = ["us-central1-a", "us-central1-b", "us-east4-a", "europe-west4-b"]


def fleet(projects=4, instances=2500, gpu_share=0.1):
    data = {"projects": {}}
    every = int(round(1 / gpu_share))
    for p in range(projects):
        name = "bench-%d" % p
        insts, nets = [], {"default": {"mtu": 1460}}
        for fam in FAMILIES:
            nets.update(fx.networks_for(fam, fam))
        for i in range(instances):
            zone = ZONES[i % len(ZONES)]
            if i % every == 0:
                fam = FAMILIES[(i // every) % len(FAMILIES)]
                # index across the fleet keeps private IPs unique between projects
                insts.append(fx.gpu_instance("gpu-%d-%05d" % (p, i), fam, zone=zone, index=p * instances + i,
                                             prefix=fam,
                                             placement="compact-%d" % (i % 8),
                                             topology={"block": "b%d" % (i % 4), "subblock": "s%d" % (i % 16),
                                                       "host": "h%d" % i},
                                             labels={"team": "ml", "pool": "p%d" % (i % 3)}))
            else:
                insts.append(fx.plain_instance("vm-%d-%05d" % (p, i), zone=zone, index=p * instances + i))
        data["projects"][name] = {"instances": insts, "networks": nets}
    return data
