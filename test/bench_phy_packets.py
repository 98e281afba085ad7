#!/usr/bin/env python3
#
# This file is part of LiteRecorder.
#
# SPDX-License-Identifier: BSD-2-Clause

"""Throughput of the UltraScale(+) root port's outbound path at the block's interface, with and
without the store-and-forward stage (Migen simulation with two clocks, harness test/phy_packets.py).

    .venv/bin/python test/bench_phy_packets.py [--packets N]

Back-to-back TLPs of the largest size on each interface: CplD of the Max Payload Size on CC (the
completer's read data) and the requester's MWr (2 dwords, its largest) on RQ; the block always
ready. Prints per case ``RESULT name=phy_packets ... beats_per_cycle=... limit=... gaps=...``:
beats per user-clock cycle from the first beat taken to the last one, and the rate the sys side can
feed (``limit`` = min(1, f_sys/f_pcie) beats per user-clock cycle); ``gaps``: cycles without tvalid
inside packets (each one a TLP the block would nullify), ``broken``: packets with a gap.
Not a test: the full-system simulation (make bench) uses the simulation PHY, not these wrappers."""

import os
import sys
import random
import argparse

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

from phy_packets import CLOCKS, max_cpld, run_us_outbound, check_us_outbound
from test_rootport_phy_descriptors import tlp_mem

MPS = 512

def requester_mwr(rng, i):
    """The requester's largest write: 2 dwords (doorbells and CPU writes are 1 or 2)."""
    return tlp_mem(0xe0000000 + 8*i, True, 2, tag=i & 0xff, last_be=0xf,
        payload=[rng.getrandbits(32), rng.getrandbits(32)])

def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--packets", type=int, default=12, help="TLPs per case (default 12)")
    args = parser.parse_args()
    for data_width in [128, 256]:
        for clocks, (sys_period, pcie_period) in CLOCKS.items():
            if clocks == "250-vs-125MHz" and data_width != 128:
                continue
            limit = min(1.0, pcie_period/sys_period)
            for traffic in ["cpld_max", "mwr_max"]:
                for stage in [1, 0]:
                    rng  = random.Random(1)
                    make = (lambda i: max_cpld(rng, MPS, i)) if traffic == "cpld_max" else \
                           (lambda i: requester_mwr(rng, i))
                    tlps = [make(i) for i in range(args.packets)]
                    rq, cc = run_us_outbound(data_width, "usp", tlps, (sys_period, pcie_period), 1,
                        mps=MPS, store_and_forward=bool(stage))
                    check_us_outbound(tlps, rq, cc)
                    m = cc if traffic == "cpld_max" else rq
                    print(f"RESULT name=phy_packets family=usp data_width={data_width} "
                        f"clocks={clocks} traffic={traffic} stage={stage} packets={len(tlps)} "
                        f"beats={m.beats} beats_per_cycle={m.rate():.4f} limit={limit:.4f} "
                        f"gaps={m.gaps} broken={len(m.gap_packets)}", flush=True)

if __name__ == "__main__":
    main()
