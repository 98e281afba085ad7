#!/usr/bin/env python3
#
# This file is part of LiteRecorder.
#
# SPDX-License-Identifier: BSD-2-Clause

"""Benchmark of the whole recorder SoC in the full-system simulation: the BIOS runs `nvme_bench`
against the `ideal` simulated SSD (only the PCIe link limits it), through the real RTL (root
complex, completer, LiteDRAM, NVMe queue engine).

    .venv/bin/python test/bench_system.py [--link gen3x4] [--mps 256] [--mib 64]

Each measurement prints the BIOS's own `RESULT name=nvme_bench ...` line, then one summary line

    RESULT name=<goal> measured=<x> limit=<y> ratio=<x/y> goal=<g> met=<0|1>

Times are modeled hardware time (cycles of the declared system clock, counted by the engine),
never wall-clock time of the simulation. Goals (issues 4 and 5):
  completer_dram_reads  NVMe Write 128 KiB QD 32: the SSD reads LiteDRAM through our completer,
                        >= 97 % of the link's completion payload limit
  seq_write / seq_read  128 KiB commands >= 97 % of the link payload limit
  rand_read/rand_write  4 KiB QD 32 >= 90 % of the link-limited IOPS
  cpu_per_cmd           CPU requests per command in steady state: 0 (the generator feeds the engine)
Then the recorder datapath (rec_record / rec_replay of the test stream through the LiteDRAM ring),
reported against the same link limit.
The exit code is non-zero if the simulation fails or a goal is missed."""

import os
import re
import sys
import argparse
import subprocess

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))

def parse(line):
    return dict(re.findall(r'(\w+)=("[^"]*"|\S+)', line))

def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--link", default="gen3x4", help="PCIe link of the SSD (default: gen3x4)")
    ap.add_argument("--mps", default="256", help="MPS of the SSD in bytes (default: 256)")
    ap.add_argument("--mib", type=int, default=64, help="MiB per sequential run (default: 64)")
    ap.add_argument("--rand-mib", type=int, default=16, help="MiB per random run (default: 16)")
    ap.add_argument("--qd", type=int, default=32, help="queue depth (default: 32)")
    ap.add_argument("--ssds", type=int, default=1, help="simulated SSDs; the recorder stripes over all (default: 1)")
    ap.add_argument("--output-dir", default=None,
        help="simulation build directory (default: the configuration's own under build/sim/)")
    a = ap.parse_args()

    benches = [
        ("seq_write",  f"nvme_bench seq write 128 {a.qd} {a.mib}",     "ratio",      0.97),
        ("seq_read",   f"nvme_bench seq read 128 {a.qd} {a.mib}",      "ratio",      0.97),
        ("rand_read",  f"nvme_bench rand read 4 {a.qd} {a.rand_mib}",  "iops_ratio", 0.90),
        ("rand_write", f"nvme_bench rand write 4 {a.qd} {a.rand_mib}", "iops_ratio", 0.90),
    ]
    # The recorder stripes over every SSD: a share of a.mib per drive.
    ports = "all" if a.ssds > 1 else "0"
    recs = [
        ("record", f"rec_record 0 {a.mib*a.ssds} ports={ports}"),
        ("replay", f"rec_replay 0 {a.mib*a.ssds} ports={ports}"),
    ]
    cmds = ["rec_info"] + [f"nvme_init {i}" for i in range(a.ssds)] + [b[1] for b in benches] + \
        [r[1] for r in recs] + ["pcie_stats"]
    # New sparse namespace files each time (an existing one keeps its size and content).
    bench_dir = os.path.join(ROOT, "build", "bench")
    os.makedirs(bench_dir, exist_ok=True)
    for i in range(8):
        f = os.path.join(bench_dir, f"ssd{i}.img")
        if os.path.exists(f):
            os.unlink(f)
    ns_file = os.path.join(bench_dir, "ssd{i}.img")
    argv = [sys.executable, os.path.join(ROOT, "targets", "sim.py"), "--ssds", str(a.ssds),
        "--ssd-profile", "ideal", "--ns-size", "8GiB", "--ns-file", ns_file, "--link", a.link, "--mps", a.mps,
        "--timeout", "1800", "--run", "; ".join(cmds)]
    out_dir = a.output_dir          # None: the configuration's own build directory (build/sim/...)
    if out_dir:
        argv += ["--output-dir", out_dir]
    print("$ " + " ".join(argv[1:]), flush=True)
    p = subprocess.run(argv, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
    results = [parse(l) for l in p.stdout.splitlines() if l.startswith("RESULT ")]
    for l in p.stdout.splitlines():
        if l.startswith("RESULT ") or l.startswith("nvme0:") or l.startswith("rec_") or "Error" in l:
            print(l)
    if p.returncode != 0:
        print(p.stdout[-4000:])
        print(f"bench_system: the simulation failed (exit code {p.returncode})", file=sys.stderr)
        return 1

    bench = [r for r in results if r.get("name") == "nvme_bench"]
    inits = [r for r in results if r.get("name") == "nvme_init"]
    if len(inits) != a.ssds or any(r.get("ok") != "1" for r in inits):
        print(f"bench_system: nvme_init failed: {inits}", file=sys.stderr)
        return 1
    if len(bench) != len(benches) or any(r.get("ok") == "0" for r in bench):
        print(f"bench_system: expected {len(benches)} successful nvme_bench results, got {bench}", file=sys.stderr)
        return 1
    missed = 0
    def summary(name, measured, limit, goal, ratio=None, unit=""):
        nonlocal missed
        ratio = measured / limit if ratio is None else ratio
        met = ratio >= goal
        missed += not met
        print(f"RESULT name={name} measured={measured:.1f} limit={limit:.1f} ratio={ratio:.4f} "
              f"unit={unit} goal={goal} met={int(met)}")
    print()
    for (name, _, key, goal), r in zip(benches, bench):
        if key == "ratio":
            summary(name, float(r["mbps"]), float(r["link_limit_mbps"]), goal, unit="MBps")
            if name == "seq_write":
                summary("completer_dram_reads", float(r["mbps"]), float(r["link_limit_mbps"]), goal, unit="MBps")
        else:
            summary(name, float(r["iops"]), float(r["link_limit_iops"]), goal, unit="IOPS")
    # Recorder datapath (stream -> LiteDRAM ring -> SSD and back): reported against the same link
    # limit, no goal of the issues yet.
    limit = float(bench[0]["link_limit_mbps"])*a.ssds
    for name, _ in recs:
        r = [x for x in results if x.get("name") == f"rec_{name}"]
        if len(r) != 1 or r[0].get("ok") != "1":
            print(f"bench_system: rec_{name} failed: {r}", file=sys.stderr)
            missed += 1
            continue
        mbps = float(r[0]["mbps"])
        extra = f" errors={r[0]['errors']}" if name == "replay" else f" lost_beats={r[0]['lost_beats']}"
        print(f"RESULT name=recorder_{name} ssds={a.ssds} measured={mbps:.1f} limit={limit:.1f} "
              f"ratio={mbps/limit:.4f} unit=MBps{extra}")
        if name == "replay" and r[0]["errors"] != "0":
            missed += 1
    cpu = max(float(r["cpu_requests_per_cmd"]) for r in bench)
    ok = cpu == 0
    missed += not ok
    print(f"RESULT name=cpu_per_cmd measured={cpu:.3f} limit=0 unit=requests goal=0 met={int(ok)}")
    return 1 if missed else 0

if __name__ == "__main__":
    sys.exit(main())
