#
# This file is part of LiteRecorder.
#
# SPDX-License-Identifier: BSD-2-Clause

"""Seed-style charts of ``literec bench`` CSVs (matplotlib, Agg backend: no display needed).

    peak     write and read MiB/s vs chunks per point (log2 x)            (seed 000's peak table)
    sizes    MB/s vs bytes per command (log2 x), read and write            (seed 003's sweep)
    full     MB/s and temperature over modeled time, write then read      (seed 000's full-disk runs)
    iops     IOPS per interval over modeled time (log y)                   (seed 004's consistency log)
    scaling  recording MB/s vs number of SSDs, with the ideal linear line

``render(kind, rows, png)`` returns the matplotlib Figure (tests read the plotted data from it).
Every line carries a label: ``write``, ``read``, ``temperature``, ``iops``, ``measured``, ``ideal``
(the peak chart's say what measured them: ``write, simulated SSD (seed-ssd1 profile)``, ``read,
seed 000 SSD 1 (hardware measurement)``, ``PCIe link limit, ...``).
"""

import matplotlib
matplotlib.use("Agg")
import matplotlib.pyplot as plt
from matplotlib.ticker import FuncFormatter

from literecorder.host.benchdata import column, num

WRITE_COLOR, READ_COLOR, TEMP_COLOR = "#c0392b", "#2471a3", "#7d7d7d"

# Seed 000 (MLE NVMe Streamer, self-test #09, "Performance Summary" of SSD 1): chunks of 128 KiB ->
# (write MiB/s, read MiB/s), as printed in the seed. Drawn beside runs of the `seed-ssd1` profile.
SEED000_SSD1_PEAK = {
    1: (21, 495), 2: (1839, 724), 4: (2146, 835), 8: (2346, 1367), 16: (2453, 1411), 32: (2522, 1435),
    64: (2551, 1446), 128: (944, 1452), 256: (1033, 1473), 512: (1144, 1484), 1024: (1096, 1489),
    2048: (1117, 1478), 4096: (1025, 1494), 8192: (1055, 1491), 16384: (1041, 1493), 32768: (678, 1492),
}

def describe(rows):
    """'profile, N SSD(s), DRAM d, transport' of the first row's configuration."""
    r = rows[0] if rows else {}
    ssds = str(r.get("ssds", "?"))
    plural = "" if ssds == "1" else "s"
    parts = [r.get("profile", "?"), f"{ssds} SSD{plural}", f"DRAM {r.get('dram', '?')}"]
    transport = r.get("transport", "")
    if transport:
        parts.append(transport)
    return ", ".join(parts)

def _pow2_axis(ax):
    ax.set_xscale("log", base=2)
    ax.xaxis.set_major_formatter(FuncFormatter(lambda v, _: f"{v:g}"))

def _bytes_label(v, _):
    v = int(v)
    return f"{v >> 10}K" if v >= 1024 else f"{v}"

def _time_axis(t_ms):
    """Modeled times in ms -> (values, axis label): seconds once a run spans 10 s or more."""
    if t_ms and max(t_ms) >= 10000:
        return [v/1000 for v in t_ms], "s"
    return list(t_ms), "ms"

LINK_COLOR = "#27ae60"

def measured_what(rows):
    """What the run's curves measured: the simulated SSD of a profile, or a board's SSD."""
    r = rows[0] if rows else {}
    if r.get("transport") == "sim":
        return f"simulated SSD ({r.get('profile', '?')} profile)"
    return f"board SSD ({r.get('profile', '?')})"

def _peak(fig, rows, summary):
    ax = fig.add_subplot()
    chunks = column(rows, "chunks")
    what = measured_what(rows)
    ax.plot(chunks, column(rows, "write_mibps"), "o-", color=WRITE_COLOR, label=f"write, {what}")
    ax.plot(chunks, column(rows, "read_mibps"), "s-", color=READ_COLOR, label=f"read, {what}")
    seed = [c for c in chunks if c in SEED000_SSD1_PEAK]
    with_seed = rows[0].get("profile") == "seed-ssd1" and rows[0].get("chunk_kib") == "128" and seed
    if with_seed:
        ax.plot(seed, [SEED000_SSD1_PEAK[c][0] for c in seed], "o:", color=WRITE_COLOR, alpha=0.45,
            mfc="none", label="write, seed 000 SSD 1 (hardware measurement)")
        ax.plot(seed, [SEED000_SSD1_PEAK[c][1] for c in seed], "s:", color=READ_COLOR, alpha=0.45,
            mfc="none", label="read, seed 000 SSD 1 (hardware measurement)")
    limit = rows[0].get("link_limit_mibps")
    if limit:
        ax.axhline(float(limit), linestyle="--", color=LINK_COLOR,
            label=f"PCIe link limit, {rows[0].get('link', '?')} MPS {rows[0].get('link_mps', '?')} ({float(limit):.0f} MiB/s)")
    _pow2_axis(ax)
    ax.set_xlabel(f"chunks per point ({rows[0].get('chunk_kib', '?')} KiB each)")
    ax.set_ylabel("MiB/s")
    ax.set_ylim(bottom=0)
    if limit:                                   # room above the highest point and the limit line
        ax.set_ylim(top=max([float(limit)] + [max(l.get_ydata()) for l in ax.get_lines()[:-1]])*1.1)
    ax.set_title(f"Peak sweep: {describe(rows)}\n" + (f"{what} vs the seed's SSD 1 measured on hardware"
        if with_seed else what) + ("" if limit else "; link limit not recorded"), fontsize=11)
    ax.legend(fontsize=8)
    return ax

def _sizes(fig, rows, summary):
    ax = fig.add_subplot()
    for op, color, mark in (("write", WRITE_COLOR, "o-"), ("read", READ_COLOR, "s-")):
        ax.plot(column(rows, "bytes_per_cmd", op=op), column(rows, "mbps", op=op), mark,
            color=color, label=op)
    _pow2_axis(ax)
    ax.xaxis.set_major_formatter(FuncFormatter(_bytes_label))
    ax.set_xlabel("bytes per command")
    ax.set_ylabel("MB/s")
    ax.set_ylim(bottom=0)
    qd = rows[0].get("qd", "?")
    ax.set_title(f"Transfer-size sweep at QD {qd}: {describe(rows)}")
    ax.legend()
    return ax

def _full(fig, rows, summary):
    axes = fig.subplots(2, 1, sharex=False)
    done = (summary or {})
    for ax, phase, color in ((axes[0], "write", WRITE_COLOR), (axes[1], "read", READ_COLOR)):
        t, unit = _time_axis(column(rows, "t_ms", phase=phase))
        ax.plot(t, column(rows, "mbps", phase=phase), "-", color=color, label=phase)
        ax.set_ylabel(f"{phase} MB/s")
        ax.set_ylim(bottom=0)
        tx = ax.twinx()
        tx.plot(t, column(rows, "temp_c", phase=phase), "--", color=TEMP_COLOR, label="temperature")
        tx.set_ylabel("temperature (C)")
        mean = done.get(f"{phase}_mbps")
        ax.set_title(f"{phase}" + (f": {mean} MB/s over the region" if mean else ""), fontsize=10)
        lines = ax.get_lines() + tx.get_lines()
        ax.legend(lines, [l.get_label() for l in lines], loc="lower left")
        ax.set_xlabel(f"modeled time since the phase started ({unit})")
    mib = done.get("mib") or (f"{num(rows[-1], 'bytes') >> 20}" if rows else "?")
    fig.suptitle(f"Full-region write + read of {mib} MiB: {describe(rows)}")
    return axes

def _iops(fig, rows, summary):
    ax = fig.add_subplot()
    t, unit = _time_axis(column(rows, "t_ms"))
    ax.plot(t, column(rows, "iops"), ".-", color=WRITE_COLOR, label="iops")
    ax.set_yscale("log")
    ax.set_xlabel(f"modeled time since the random writes started ({unit})")
    ax.set_ylabel("4 KiB random-write IOPS per interval")
    extra = ""
    if summary and summary.get("span_mib"):
        extra = f", span {summary['span_mib']} MiB"
    ax.set_title(f"IOPS consistency (QD 32 after a fill{extra}): {describe(rows)}")
    ax.legend()
    return ax

def _scaling(fig, rows, summary):
    ax = fig.add_subplot()
    n = column(rows, "ports")
    mbps = column(rows, "mbps")
    ax.plot(n, mbps, "o-", color=WRITE_COLOR, label="measured")
    base = [m for k, m in zip(n, mbps) if k == 1]
    if base:
        ax.plot(n, [k*base[0] for k in n], ":", color=TEMP_COLOR, label="ideal")
    ceiling = [r.get("dram_ceiling_mbps", "") for r in rows]
    if all(ceiling):
        ax.plot(n, [float(c) for c in ceiling], "--", color="#27ae60", label="DRAM ceiling")
    ax.set_xticks(n)
    ax.set_xlabel("SSDs striped")
    ax.set_ylabel("recording MB/s")
    ax.set_ylim(bottom=0)
    r = rows[0] if rows else {}
    ax.set_title(f"Multi-SSD recording: {r.get('profile', '?')}, DRAM {r.get('dram', '?')}, "
        f"{r.get('transport', '')}")
    ax.legend()
    return ax

RENDER = dict(peak=_peak, sizes=_sizes, full=_full, iops=_iops, scaling=_scaling)

def render(kind, rows, png=None, summary=None):
    """Chart of ``kind`` from CSV rows (``summary``: the run's end line, as a dict, for titles);
    writes ``png`` when given; returns the Figure (closed from pyplot's registry)."""
    if kind not in RENDER:
        raise ValueError(f"chart kind {kind!r}: one of {', '.join(RENDER)}")
    if not rows:
        raise ValueError(f"no {kind} points to chart")
    fig = plt.figure(figsize=(9, 7 if kind == "full" else 5.5))
    try:
        RENDER[kind](fig, rows, summary)
        fig.tight_layout()
        if png:
            fig.savefig(png, dpi=100)
    finally:
        plt.close(fig)
    return fig
