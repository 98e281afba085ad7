#
# This file is part of LiteRecorder.
#
# SPDX-License-Identifier: BSD-2-Clause

"""Benchmark results of ``literec bench``: which RESULT lines each kind produces, the CSV files
(one row per point: the RESULT keys, then the run's configuration), and their reading back.

    <kind>.csv           one row per point line (bench_peak, bench_sizes, bench_full, bench_iops,
                         rec_record for scaling)
    <kind>_summary.csv   the other RESULT lines of the run (bench_*_done, bench_iops_fill)
"""

import os
import csv
import subprocess

# name of the point lines, of the line that ends a run, other lines kept in the summary.
KINDS = {
    "peak":    dict(point="bench_peak",  done="bench_peak_done",  other=()),
    "sizes":   dict(point="bench_sizes", done="bench_sizes_done", other=()),
    "full":    dict(point="bench_full",  done="bench_full_done",  other=()),
    "iops":    dict(point="bench_iops",  done="bench_iops_done",  other=("bench_iops_fill",)),
    "scaling": dict(point="rec_record",  done=None,               other=()),
}

# Configuration columns appended to every row (after the RESULT keys).
CONFIG_KEYS = ["transport", "profile", "ssds", "dram", "date", "git_rev"]

# Payload rate of one PCIe lane in kB/s, by generation (the BIOS's `link_limit_kbps`, cmd_bench.c).
LANE_KBPS = {1: 250000, 2: 500000, 3: 984615, 4: 1969231}

def link_limit_mibps(gen, width, mps, overhead=20):
    """Payload limit of one direction of a Gen ``gen`` x ``width`` link in MiB/s, as the BIOS
    computes it for ``nvme_bench`` (``link_limit_mbps``): lanes x lane rate x MPS / (MPS +
    ``overhead``), 20 bytes per 3-dword TLP (the completions that carry an NVMe Write's data, the
    SSD's writes below 4 GiB that carry a Read's), before the DLLP/SKP share. None for an unknown
    generation."""
    if gen not in LANE_KBPS or width < 1 or mps < 1:
        return None
    return LANE_KBPS[gen]*width*mps//(mps + overhead)*1000/(1 << 20)

def kind_of(rows):
    """The benchmark kind of CSV rows (from their ``name`` column); None if unknown."""
    names = {r.get("name") for r in rows}
    for kind, spec in KINDS.items():
        if spec["point"] in names:
            return kind
    return None

def merge_config(results, config, row_configs=None):
    """RESULT dicts + the run's configuration -> (columns, rows).

    ``row_configs``: optional per-row overrides of configuration values (scaling: each point's
    SSD count), one dict per result.

    Columns: the RESULT keys in order of first appearance, then the configuration's keys; a
    configuration key that a RESULT line also has is written as ``cfg_<key>`` (the drive's own
    figure is never overwritten)."""
    columns = []
    for r in results:
        for k in r:
            if k not in columns:
                columns.append(k)
    cfg = {}
    for k, v in config.items():
        cfg["cfg_" + k if k in columns else k] = v
    columns += [k for k in cfg if k not in columns]
    for rc in row_configs or []:
        columns += [k for k in rc if k not in columns and "cfg_" + k not in columns]
    rows = []
    for i, r in enumerate(results):
        row = dict(cfg)
        for k, v in (row_configs[i] if row_configs else {}).items():
            row["cfg_" + k if k in columns and "cfg_" + k in cfg else k] = v
        row.update(r)
        rows.append({c: row.get(c, "") for c in columns})
    return columns, rows

def write_csv(path, results, config, row_configs=None):
    """Writes RESULT dicts + configuration as CSV; returns the rows written."""
    columns, rows = merge_config(results, config, row_configs)
    with open(path, "w", newline="") as f:
        w = csv.DictWriter(f, fieldnames=columns, lineterminator="\n")
        w.writeheader()
        for r in rows:
            w.writerow(r)
    return rows

def read_csv(path):
    """Rows of a CSV written by ``write_csv`` (dicts of strings)."""
    with open(path, newline="") as f:
        return list(csv.DictReader(f))

def num(row, key):
    """A row's value as a number (int when it is one)."""
    v = row[key]
    try:
        return int(v)
    except ValueError:
        return float(v)

def column(rows, key, **match):
    """Numbers of column ``key`` of the rows whose columns equal ``match``."""
    return [num(r, key) for r in rows if all(r.get(k) == v for k, v in match.items())]

def git_revision(root):
    """``git describe --always --dirty`` of the checkout (``unknown`` outside git)."""
    try:
        r = subprocess.run(["git", "-C", root, "describe", "--always", "--dirty", "--abbrev=10"],
            stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, timeout=20)
        rev = r.stdout.decode().strip()
        return rev if r.returncode == 0 and rev else "unknown"
    except (OSError, subprocess.TimeoutExpired):
        return "unknown"

def failures(out, kind, results):
    """What went wrong in a bench command's output: ``Error:`` lines, RESULT lines with ok=0,
    a missing end line, data errors of the full-disk comparison. Empty list: success."""
    spec = KINDS[kind]
    errs = [l.strip() for l in out.splitlines() if l.strip().startswith("Error:")]
    if any(l.strip() == "Command not found" for l in out.splitlines()):
        errs.append("the BIOS answered `Command not found`: a firmware without `nvme_bench " + kind + "`")
    errs += ["RESULT " + " ".join(f"{k}={v}" for k, v in r.items()) for r in results
        if r.get("ok") not in (None, "1")]
    if spec["done"]:
        done = [r for r in results if r.get("name") == spec["done"]]
        if not done:
            errs.append(f"no `RESULT name={spec['done']}` line: the benchmark did not finish")
        elif kind == "full" and done[-1].get("errors", "0") != "0":
            errs.append(f"read-back comparison: {done[-1]['errors']} errors")
    if not [r for r in results if r.get("name") == spec["point"]]:
        errs.append(f"no `RESULT name={spec['point']}` point line")
    return errs
