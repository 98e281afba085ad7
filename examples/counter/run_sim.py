#!/usr/bin/env python3
#
# This file is part of LiteRecorder.
#
# SPDX-License-Identifier: BSD-2-Clause

"""Builds CounterSimSoC (counter_soc.py) in the full-system simulation, records the counter with a
hardware start from the user's logic, replays it into the user's checker and checks the namespace
file: the recording is the counter 0, 1, 2, ... byte for byte.

    ./examples/counter/run_sim.py [--words N] [--output-dir DIR]

Prints the BIOS session and a summary; exit status 0 when everything holds.
"""

import os
import re
import sys
import argparse

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
import counter_soc # noqa: E402 -- (makes the checkout importable as `literecorder` too)

from literecorder.targets.sim import SimBuild, SimSession, ssd_devices, parse_results

def csr_address(build, name):
    """Address of CSR ``name`` (csr.csv of the build): what `mem_read`/`mem_write` take."""
    with open(os.path.join(build.output_dir, "csr.csv")) as f:
        for line in f:
            if line.startswith("csr_register,"):
                _, csr, addr, *_ = line.strip().split(",")
                if csr == name:
                    return int(addr, 0)
    raise KeyError(name)

def read_csr(session, build, name):
    """A 32-bit CSR of the user's logic, read from the BIOS prompt with `mem_read`."""
    out = session.cmd(f"mem_read 0x{csr_address(build, name):08x} 4")
    m = re.search(r"^0x[0-9a-f]+\s+((?:[0-9a-f]{2} ){4})", out, re.M)
    return int.from_bytes(bytes.fromhex(m.group(1).replace(" ", "")), "little")

def build(output_dir=None):
    return SimBuild(soc_cls=counter_soc.CounterSimSoC, output_dir=output_dir, pgo=False).build()

def run(b, words=65536, name="counter", echo=None):
    """One session: record `words` counter words (armed, the user's logic starts it), replay them into
    the checker. Returns a dict of what was seen (the test suite checks it)."""
    r = {}
    devices = ssd_devices(["--ssd-profile", "ideal", "--ns-size", "256MiB"], b.n_ssds, b.sys_clk_freq,
        b.pcie_data_width)
    with SimSession(b, name=name, devices=devices, fresh=True, echo=echo) as s:
        r["ns_file"] = s.devices[0][1]["ns_file"]
        s.cmd("nvme_init")
        s.cmd("rec_format yes")
        s.cmd(f"mem_write 0x{csr_address(b, 'counter_words'):08x} {words}")
        r["start"] = s.cmd("rec_start auto until-stop input=user arm=1")
        r["wait"]  = s.cmd("rec_wait", timeout=600, idle=True)
        r["status"] = s.cmd("rec_status")
        r["produced"] = read_csr(s, b, "counter_produced")
        r["list"] = s.cmd("rec_list")
        # A second hardware start after the armed recording: the arm was used, nothing starts.
        s.cmd(f"mem_write 0x{csr_address(b, 'counter_kick'):08x} 1")
        r["after_kick"] = s.cmd("rec_status")
        # Replay into the user's checker.
        r["play"] = s.cmd("play_start id=1 output=user")
        r["play_wait"] = s.cmd("rec_wait", timeout=600, idle=True)
        r["checked"] = read_csr(s, b, "counter_checked")
        r["errors"]  = read_csr(s, b, "counter_errors")
        # Armed (the user's logic told not to start on it), then the queue engine taken back by the
        # CPU (its source register), then the user's start: refused by the recorder (status code
        # 14), never a run that cannot end.
        s.cmd(f"mem_write 0x{csr_address(b, 'counter_auto'):08x} 0")
        s.cmd("rec_start auto until-stop input=user arm=1")
        src = [l for l in open(os.path.join(b.output_dir, "csr.csv")) if l.startswith("csr_register,nvme0_ctrl,")]
        r["refused_wait"] = None
        if src:
            addr = int(src[0].split(",")[2], 0)
            s.cmd(f"mem_write 0x{addr:08x} 0x1")        # enable, source 0 (the CPU)
            s.cmd(f"mem_write 0x{csr_address(b, 'counter_kick'):08x} 1")
            r["refused_wait"] = s.cmd("rec_wait", timeout=300, idle=True)
            r["refused_status"] = s.cmd("rec_status")
    return r

def check_namespace(ns_file, lba_bytes, lba, words):
    """The recording's bytes in the namespace file are the counter 0 .. words-1 (64-bit, LE)."""
    import numpy as np
    with open(ns_file, "rb") as f:
        f.seek(lba*lba_bytes)
        data = np.frombuffer(f.read(words*8), dtype="<u8")
    bad = np.flatnonzero(data != np.arange(words, dtype=np.uint64))
    return len(data), len(bad), (int(bad[0]) if len(bad) else None)

def recording_lba(list_out):
    for d in parse_results(list_out):
        if d.get("name") == "rec_list_entry":
            return int(d["lba"]), int(d["bytes"])
    return None, None

def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--words", type=int, default=65536, help="counter words to record (default: %(default)s)")
    ap.add_argument("--output-dir", default=None, help="build directory (default: the configuration's own)")
    a = ap.parse_args()
    b = build(a.output_dir)
    r = run(b, a.words, echo=lambda t: (sys.stdout.write(t), sys.stdout.flush()))
    lba, nbytes = recording_lba(r["list"])
    n, bad, first = check_namespace(r["ns_file"], 512, lba, a.words)
    print(f"\n[counter] recorded {nbytes} bytes at LBA {lba}; produced {r['produced']} words; "
        f"namespace file: {n} words, {bad} not their index; replay: {r['checked']} checked, {r['errors']} errors")
    ok = nbytes == 8*a.words and r["produced"] == a.words and n == a.words and bad == 0 and \
        r["checked"] == a.words and r["errors"] == 0
    return 0 if ok else 1

if __name__ == "__main__":
    sys.exit(main())
