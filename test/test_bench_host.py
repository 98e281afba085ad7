#
# This file is part of LiteRecorder.
#
# SPDX-License-Identifier: BSD-2-Clause

"""`literec bench` (host/commands/bench.py), its console driver (host/console.py), CSVs
(host/benchdata.py) and charts (host/charts.py).

Unit tests drive a stand-in BIOS on a pseudo-terminal (echo, ANSI prompt, stored transcripts);
system tests run the bench on the simulation through its pipes and, through a pty bridged to the
simulation's pipes, over the serial transport."""

import os
import csv
import pty
import tty
import time
import select
import threading

import pytest

from literecorder.host import benchdata, charts, console as con
from literecorder.host.cli import main as literec
from pinned import pinned

DATA = os.path.join(os.path.dirname(os.path.abspath(__file__)), "data", "bench")
PROMPT = b"\x1b[92;1mlitex\x1b[0m> "

def transcript(name):
    with open(os.path.join(DATA, name)) as f:
        return f.read()

def png_ok(path):
    with open(path, "rb") as f:
        return f.read(8) == b"\x89PNG\r\n\x1a\n"

# A stand-in BIOS on a pty ------------------------------------------------------------------------

class FakeBios(threading.Thread):
    """Answers on the master side of a pty as the LiteX BIOS does: echoes every typed character,
    prints the command's output (``answers``: {command prefix: text}, first match) and a colored
    prompt. Records the commands typed."""
    def __init__(self, answers, prompt_first=False):
        super().__init__(daemon=True)
        self.master, slave = pty.openpty()
        tty.setraw(slave)
        self.slave_path = os.ttyname(slave)
        self.slave      = slave
        self.answers    = answers
        self.commands   = []
        self.stop       = False
        if prompt_first:
            os.write(self.master, b"\n" + PROMPT)

    def run(self):
        line = b""
        while not self.stop:
            r, _, _ = select.select([self.master], [], [], 0.1)
            if not r:
                continue
            try:
                data = os.read(self.master, 1024)
            except OSError:
                return
            for ch in data:
                c = bytes([ch])
                if c == b"\r":
                    cmd = line.decode()
                    line = b""
                    self.commands.append(cmd)
                    out = "\n"
                    for prefix, text in self.answers.items():
                        if cmd and cmd.startswith(prefix):
                            out += text if text.endswith("\n") else text + "\n"
                            break
                    else:
                        if cmd:
                            out += f"Command not found\n"
                    # Output in pieces, the way a UART delivers it.
                    payload = out.replace("\n", "\r\n").encode() + PROMPT
                    for i in range(0, len(payload), 97):
                        os.write(self.master, payload[i:i+97])
                else:
                    line += c
                    os.write(self.master, c)           # The BIOS echoes what is typed.

    def close(self):
        self.stop = True
        if self.is_alive():
            self.join(timeout=2)
        for fd in (self.master, self.slave):
            try:
                os.close(fd)
            except OSError:
                pass

ANSWERS = {
    "rec_info":   "RESULT name=rec_info sys_clk_hz=125000000 dram_bytes=1073741824 ssd_ports=2 "
                  "chunk_bytes=131072 pcie_data_width=256",
    "nvme_init":  "nvme0: Fake SSD\nRESULT name=nvme_init port=0 ok=1 nsze=2097152 lba_size=512 "
                  "qsize=512 max_xfer=2097152",
}

@pytest.fixture
def fake_bios():
    made = []
    def make(**answers):
        b = FakeBios(dict(ANSWERS, **answers))
        b.start()
        made.append(b)
        return b
    yield make
    for b in made:
        b.close()

# Console driver -----------------------------------------------------------------------------------

@pytest.mark.unit
def test_console_strips_echo_ansi_and_prompt_and_streams_lines(fake_bios):
    bios = fake_bios(**{"nvme_bench peak": transcript("peak_transcript.txt")})
    s = con.SerialSession(bios.slave_path, 115200, sync_timeout=5)
    try:
        lines = []
        out = s.cmd("nvme_bench peak 8", timeout=10, on_line=lines.append)
        assert out == transcript("peak_transcript.txt")
        assert lines == transcript("peak_transcript.txt").rstrip("\n").split("\n")
        r = con.parse_results(out)
        assert [d["chunks"] for d in r if d["name"] == "bench_peak"] == ["1", "2", "4", "8", "16", "32", "64"]
        assert r[-1] == dict(name="bench_peak_done", port="0", points="7", ok="1")
        assert out.startswith("nvme0: peak sweep, 1..64 chunks of 128 KiB")       # The echo is gone.
        assert s.cmd("bogus", timeout=5) == "Command not found\n"
        assert bios.commands == ["", "nvme_bench peak 8", "bogus"]      # "" is the sync's Enter
        with pytest.raises(con.ConsoleError, match="BIOS command line holds 63"):
            s.cmd("x" * 64)
    finally:
        s.close()

@pytest.mark.unit
def test_console_timeout_and_no_prompt(tmp_path):
    bios = FakeBios({"slow": "x"})          # Never started: nothing answers.
    try:
        t0 = time.time()
        with pytest.raises(con.ConsoleError, match="no `litex>` prompt within 1 s"):
            con.SerialSession(bios.slave_path, sync_timeout=1)
        assert time.time() - t0 < 5
        with pytest.raises(con.ConsoleError, match="cannot open /nonexistent/tty"):
            con.SerialSession("/nonexistent/tty")
    finally:
        bios.close()

class VirtualClock:
    """The console's clock in the timeout tests (``time`` of host/console.py): time passes only when
    the transport waits, so the bounds are checked exactly and not against a loaded machine's wall clock."""
    def __init__(self):
        self.t = 1000.0

    def time(self):
        return self.t

    def sleep(self, dt):
        self.t += max(dt, 0)

class LiveLineTransport:
    """A BIOS command that keeps a live line: after the command is typed, its echo, then a
    ``\\r``-updated progress line every ``every`` s for ``lines`` updates, then the result and the
    prompt (times from the moment the command was typed, on ``clock``)."""
    def __init__(self, every, lines, clock=time):
        self.script = []
        self.every, self.lines = every, lines
        self.clock = clock

    def write(self, data):
        t = self.clock.time()
        cmd = data.decode().rstrip("\r")
        self.script = [(t, cmd.encode() + b"\r\n")]
        self.script += [(t + (i + 1)*self.every, f"\rrec: {i + 1} MiB written".encode())
            for i in range(self.lines)]
        self.script += [(t + (self.lines + 1)*self.every, b"\r\nRESULT name=rec_status state=done\r\n" + PROMPT)]

    def read(self, timeout):
        if not self.script:
            self.clock.sleep(timeout)
            return b""
        wait = self.script[0][0] - self.clock.time()
        if wait > timeout:
            self.clock.sleep(timeout)
            return b""
        self.clock.sleep(max(wait, 0))
        return self.script.pop(0)[1]

    def close(self):
        pass

@pytest.mark.unit
@pytest.mark.parametrize("kind", ["peak", "scaling"])
def test_bench_to_a_missing_port_fails_clearly_and_leaves_no_log(tmp_path, capsys, kind):
    port = str(tmp_path / "ttyMISSING")
    out = tmp_path / "out"
    rc = literec(["bench", kind, "--serial", port, "--no-progress", "-o", str(out)])
    err = capsys.readouterr().err
    assert rc == 3
    assert err.splitlines() == [f"literec bench {kind}: error: cannot open {port}: No such file or directory"]
    assert os.listdir(out) == []

@pytest.mark.unit
def test_console_idle_timeout_lets_a_live_line_run_and_stops_a_silent_command(monkeypatch):
    clock = VirtualClock()
    monkeypatch.setattr(con, "time", clock)
    # 8 progress updates 0.25 s apart (2.25 s in all): longer than the 1 s timeout.
    c = con.Console(LiveLineTransport(every=0.25, lines=8, clock=clock))
    t0 = clock.time()
    out = c.cmd("rec_wait", timeout=1, idle=True)
    assert out.rstrip("\n").split("\n")[-1] == "RESULT name=rec_status state=done"
    assert "rec: 8 MiB written" in out
    assert clock.time() - t0 == 2.25
    # The whole-command bound gives up after 1 s of the same command: at 1 s, not at the end.
    c = con.Console(LiveLineTransport(every=0.25, lines=8, clock=clock))
    t0 = clock.time()
    with pytest.raises(con.ConsoleError, match="no prompt after 1 s waiting for 'rec_wait'"):
        c.cmd("rec_wait", timeout=1)
    assert clock.time() - t0 == pytest.approx(1.0)
    # Without output for longer than the timeout, the idle bound gives up too: 0.4 s after the echo.
    c = con.Console(LiveLineTransport(every=0.6, lines=3, clock=clock))
    t0 = clock.time()
    with pytest.raises(con.ConsoleError, match="no console output for 0.4 s waiting for 'rec_wait'"):
        c.cmd("rec_wait", timeout=0.4, idle=True)
    assert clock.time() - t0 == pytest.approx(0.4)

# CSV ----------------------------------------------------------------------------------------------

CONFIG = dict(transport="sim", profile="seed-ssd1", ssds=1, dram="sim", date="2026-11-25T06:00:00+00:00",
    git_rev="abc1234")

@pytest.mark.unit
def test_csv_merges_configuration_after_result_keys(tmp_path):
    res = con.parse_results(transcript("sizes_transcript.txt"))
    points = [r for r in res if r["name"] == "bench_sizes"]
    path = str(tmp_path / "sizes.csv")
    benchdata.write_csv(path, points, CONFIG)
    with open(path) as f:
        header = next(csv.reader(f))
    assert header == ["name", "port", "op", "bytes_per_cmd", "qd", "commands", "bytes", "cycles", "mbps",
        "iops"] + benchdata.CONFIG_KEYS
    rows = benchdata.read_csv(path)
    assert len(rows) == 18
    assert rows[2] == dict(name="bench_sizes", port="0", op="write", bytes_per_cmd="1024", qd="256",
        commands="256", bytes="262144", cycles="20347", mbps="2576.733", iops="2516341", transport="sim",
        profile="seed-ssd1", ssds="1", dram="sim", date="2026-11-25T06:00:00+00:00", git_rev="abc1234")
    assert benchdata.column(rows, "bytes_per_cmd", op="read") == [512 << i for i in range(9)]
    assert benchdata.column(rows, "mbps", op="read")[0] == 632.312
    assert benchdata.kind_of(rows) == "sizes"
    # A configuration key the RESULT line has too: the drive's value stays, the run's is cfg_<key>.
    cols, rows = benchdata.merge_config([dict(name="rec_record", ports="2", dram="x")], dict(CONFIG),
        [dict(ssds=2)])
    assert cols == ["name", "ports", "dram", "transport", "profile", "ssds", "cfg_dram", "date", "git_rev"]
    assert rows[0]["dram"] == "x" and rows[0]["cfg_dram"] == "sim" and rows[0]["ssds"] == 2

@pytest.mark.unit
@pytest.mark.parametrize("name, kind, expect", [
    ("peak_transcript.txt",       "peak",  []),
    ("full_transcript.txt",       "full",  []),
    ("iops_transcript.txt",       "iops",  []),
    ("peak_error_transcript.txt", "peak",  ["Error: nvme0: write at LBA 512: LBA Out of Range (SCT 0, SC 0x80)",
                                            "RESULT name=bench_peak_done port=0 points=1 ok=0"]),
])
def test_failures_of_a_run(name, kind, expect):
    out = transcript(name)
    spec = benchdata.KINDS[kind]
    res = [r for r in con.parse_results(out) if r["name"].startswith(spec["point"])]
    assert benchdata.failures(out, kind, res) == expect

@pytest.mark.unit
def test_failures_missing_end_and_data_errors():
    assert benchdata.failures("Command not found\n", "sizes", []) == [
        "the BIOS answered `Command not found`: a firmware without `nvme_bench sizes`",
        "no `RESULT name=bench_sizes_done` line: the benchmark did not finish",
        "no `RESULT name=bench_sizes` point line"]
    out = transcript("full_transcript.txt")
    cut = out[:out.index("RESULT name=bench_full_done")]
    assert benchdata.failures(cut, "full", con.parse_results(cut)) == \
        ["no `RESULT name=bench_full_done` line: the benchmark did not finish"]
    bad = out.replace("errors=0", "errors=17")
    assert benchdata.failures(bad, "full", con.parse_results(bad)) == ["read-back comparison: 17 errors"]

# Charts -------------------------------------------------------------------------------------------

def _rows(name, kind):
    out = transcript(name)
    return benchdata.merge_config([r for r in con.parse_results(out)
        if r["name"] == benchdata.KINDS[kind]["point"]], CONFIG)[1]

def _line(ax, label):
    found = [l for l in ax.get_lines() if l.get_label() == label]
    assert len(found) == 1, [l.get_label() for l in ax.get_lines()]
    return [float(v) for v in found[0].get_xdata()], [float(v) for v in found[0].get_ydata()]

def stored(kind):
    """Rows and summary of a stored CSV (test/data/bench: written by `literec bench` on the simulation)."""
    rows = benchdata.read_csv(os.path.join(DATA, f"{kind}.csv"))
    summary = benchdata.read_csv(os.path.join(DATA, f"{kind}_summary.csv"))
    return rows, summary

@pytest.mark.unit
def test_peak_chart_plots_the_csv_points(tmp_path):
    rows, _ = stored("peak")
    fig = charts.render("peak", rows, str(tmp_path / "peak.png"))
    assert png_ok(tmp_path / "peak.png")
    ax = fig.axes[0]
    chunks = [1, 2, 4, 8, 16, 32, 64]
    assert benchdata.column(rows, "chunks") == chunks
    sim = "simulated SSD (seed-ssd1 profile)"
    assert _line(ax, f"write, {sim}") == (chunks, benchdata.column(rows, "write_mibps"))
    assert _line(ax, f"read, {sim}") == (chunks, benchdata.column(rows, "read_mibps"))
    assert _line(ax, f"write, {sim}")[1][0] == 2103.668 and _line(ax, f"read, {sim}")[1][-1] == 1726.28
    assert ax.get_xscale() == "log" and ax.xaxis.get_transform().base == 2
    # The title says which curves are the simulated SSD and which the seed's hardware measurement.
    assert ax.get_title() == ("Peak sweep: seed-ssd1, 1 SSD, DRAM sim, sim\nsimulated SSD (seed-ssd1 profile) vs "
        "the seed's SSD 1 measured on hardware; link limit not recorded")
    # The seed's own SSD 1 figures beside a seed-ssd1 run (and only then).
    assert _line(ax, "write, seed 000 SSD 1 (hardware measurement)") == (chunks, [21, 1839, 2146, 2346, 2453, 2522, 2551])
    assert _line(ax, "read, seed 000 SSD 1 (hardware measurement)") == (chunks, [495, 724, 835, 1367, 1411, 1435, 1446])
    assert [t.get_text() for t in ax.get_legend().get_texts()] == [l.get_label() for l in ax.get_lines()]
    other = charts.render("peak", [dict(r, profile="budget") for r in rows]).axes[0]
    assert [l.get_label() for l in other.get_lines()] == ["write, simulated SSD (budget profile)",
        "read, simulated SSD (budget profile)"]
    board = charts.render("peak", [dict(r, profile="kc705", transport="/dev/ttyUSB1") for r in rows]).axes[0]
    assert [l.get_label() for l in board.get_lines()] == ["write, board SSD (kc705)", "read, board SSD (kc705)"]

@pytest.mark.unit
def test_peak_chart_draws_the_link_limit(tmp_path):
    # Synthetic points of a run that recorded its link: a horizontal line at the limit.
    limit = benchdata.link_limit_mibps(3, 4, 256)
    assert limit == 3653064 * 1000 / (1 << 20)              # the BIOS's 3653.064 MB/s
    assert benchdata.link_limit_mibps(2, 4, 128) == 1729729 * 1000 / (1 << 20)
    assert benchdata.link_limit_mibps(5, 4, 256) is None
    rows = [dict(name="bench_peak", chunks=str(c), chunk_kib="128", write_mibps=str(w), read_mibps=str(r),
        transport="sim", profile="budget", ssds="1", dram="sim", link="gen3x4", link_mps="256",
        link_limit_mibps=f"{limit:.3f}") for c, w, r in ((1, 900, 400), (2, 1700, 800), (4, 2600, 1500), (8, 3100, 2900))]
    fig = charts.render("peak", rows, str(tmp_path / "peak.png"))
    assert png_ok(tmp_path / "peak.png")
    ax = fig.axes[0]
    (x0, x1), (y0, y1) = _line(ax, "PCIe link limit, gen3x4 MPS 256 (3484 MiB/s)")
    assert (y0, y1) == (3483.833, 3483.833) and (x0, x1) == (0.0, 1.0)      # axis-wide
    assert ax.get_ylim()[1] == pytest.approx(3483.833 * 1.1)              # room above it
    assert ax.get_title() == "Peak sweep: budget, 1 SSD, DRAM sim, sim\nsimulated SSD (budget profile)"

@pytest.mark.unit
def test_sizes_full_iops_scaling_charts(tmp_path):
    rows, _ = stored("sizes")
    fig = charts.render("sizes", rows, str(tmp_path / "s.png"))
    ax = fig.axes[0]
    sizes = [512 << i for i in range(9)]
    for op in ("write", "read"):
        assert _line(ax, op) == (sizes, benchdata.column(rows, "mbps", op=op))
    assert ax.get_xscale() == "log" and "QD 256" in ax.get_title()

    rows, summary = stored("full")
    fig = charts.render("full", rows, str(tmp_path / "f.png"), summary[-1])
    write_ax, read_ax = fig.axes[0], fig.axes[1]
    temp_w = [a for a in fig.axes[2:] if a.bbox.bounds == write_ax.bbox.bounds][0]
    temp_r = [a for a in fig.axes[2:] if a.bbox.bounds == read_ax.bbox.bounds][0]
    for ax, tx, phase in ((write_ax, temp_w, "write"), (read_ax, temp_r, "read")):
        t = benchdata.column(rows, "t_ms", phase=phase)
        assert len(t) >= 2
        assert _line(ax, phase) == (t, benchdata.column(rows, "mbps", phase=phase))
        assert _line(tx, "temperature") == (t, benchdata.column(rows, "temp_c", phase=phase))
        assert f"{summary[-1][phase + '_mbps']} MB/s" in ax.get_title()
    assert "8 MiB" in fig._suptitle.get_text()

    rows, summary = stored("iops")
    fig = charts.render("iops", rows, str(tmp_path / "i.png"), summary[-1])
    ax = fig.axes[0]
    assert _line(ax, "iops") == ([1, 2, 3, 4, 5, 6, 7, 8, 9, 10], benchdata.column(rows, "iops"))
    assert ax.get_yscale() == "log" and ax.get_xlabel().endswith("(ms)")
    assert f"span {summary[-1]['span_mib']} MiB" in ax.get_title()
    long = [dict(r, t_ms=f"{float(r['t_ms'])*10000:.3f}") for r in rows]
    ax = charts.render("iops", long).axes[0]
    assert _line(ax, "iops")[0] == [10 * i for i in range(1, 11)] and ax.get_xlabel().endswith("(s)")

    recs = [dict(name="rec_record", ok="1", ports=str(n), mbps=m) for n, m in
        ((1, "2500.000"), (2, "4800.500"), (4, "6100.250"))]
    fig = charts.render("scaling", benchdata.merge_config(recs, CONFIG)[1], str(tmp_path / "sc.png"))
    ax = fig.axes[0]
    assert _line(ax, "measured") == ([1, 2, 4], [2500.0, 4800.5, 6100.25])
    assert _line(ax, "ideal") == ([1, 2, 4], [2500.0, 5000.0, 10000.0])
    assert [l.get_label() for l in ax.get_lines()] == ["measured", "ideal"]
    rows = benchdata.merge_config(recs, CONFIG, [dict(dram_ceiling_mbps="4000")]*3)[1]
    assert _line(charts.render("scaling", rows).axes[0], "DRAM ceiling") == ([1, 2, 4], [4000, 4000, 4000])
    for p in ("s.png", "f.png", "i.png", "sc.png"):
        assert png_ok(tmp_path / p)
    with pytest.raises(ValueError, match="no peak points"):
        charts.render("peak", [])

@pytest.mark.unit
def test_chart_kind_rerenders_stored_csvs(tmp_path, capsys):
    stored = sorted(f for f in os.listdir(DATA) if f.endswith(".csv") and "_summary" not in f)
    assert stored, "no stored CSVs in test/data/bench"
    for f in stored:
        with open(os.path.join(DATA, f)) as src, open(tmp_path / f, "w") as dst:
            dst.write(src.read())
    assert literec(["bench", "chart", "-o", str(tmp_path)]) == 0
    out = capsys.readouterr().out
    for f in stored:
        rows = benchdata.read_csv(os.path.join(DATA, f))
        png = tmp_path / (f[:-4] + ".png")
        assert f"{png}: {benchdata.kind_of(rows)} chart of {len(rows)} points" in out
        assert png_ok(png)
    # An explicit CSV that holds no benchmark points.
    (tmp_path / "other.csv").write_text("name,x\nfoo,1\n")
    assert literec(["bench", "chart", "-o", str(tmp_path), "--csv", str(tmp_path / "other.csv")]) == 2
    assert "no benchmark points" in capsys.readouterr().err

# Bad arguments ------------------------------------------------------------------------------------

@pytest.mark.unit
@pytest.mark.parametrize("argv, message", [
    (["peak", "-o", "x"],                                   "give one transport: --sim, --serial DEV or --url URL"),
    (["peak", "--sim", "--serial", "/dev/null", "-o", "x"], "(got --sim, --serial)"),
    (["peak", "--sim", "--max-chunks", "12", "-o", "x"],    "12: chunks of the last peak point, a power of two 1..1048576"),
    (["peak", "--sim", "--max-chunks", "2097152", "-o", "x"], "2097152: chunks of the last peak point, allowed 1..1048576"),
    (["peak", "--sim", "--chunk-kib", "4096", "-o", "x"],   "4096: KiB per command, allowed 4..2048"),
    (["sizes", "--sim", "--qd", "0", "-o", "x"],            "0: commands in flight, allowed 1..65535"),
    (["full", "--sim", "--interval-ms", "0", "-o", "x"],    "0: modeled ms per interval, allowed 1..3600000"),
    (["full", "--sim", "--interval-ms", "5", "-o", "x"],    "full: --interval-ms needs --mib"),
    (["iops", "--sim", "--seconds", "0.1", "-o", "x"],      "iops: --seconds needs --mib"),
    (["sizes", "--sim", "--kib", "64", "-o", "x"],          "64: KiB per point, allowed 128..1073741824"),
    (["sizes", "--sim", "--kib", "256", "--mib", "1", "-o", "x"], "--kib: KiB per point of `sizes`, instead of --mib (not both)"),
    (["peak", "--sim", "--kib", "256", "-o", "x"],          "--kib: KiB per point of `sizes`, instead of --mib (not both)"),
    (["iops", "--sim", "--seconds", "0.0000001", "-o", "x"], "'0.0000001': modeled seconds above 0 with up to 6 decimals"),
    (["iops", "--sim", "--op-pct", "91", "-o", "x"],        "91: over-provisioning, percent of the region the random writes leave alone, allowed 0..90"),
    (["iops", "--sim", "--port", "1", "-o", "x"],           "--port 1: the simulation has 1 SSD(s), ports 0..0"),
    (["scaling", "--sim", "--scaling-ssds", "1,9", "-o", "x"], "'1,9': SSD counts separated by commas, each 1..8"),
    (["peak", "--serial", "/dev/null", "--ssd-profile", "budget", "-o", "x"], "--ssd-profile: simulation options, they need --sim"),
    (["chart", "--sim", "-o", "x"],                         "chart re-renders PNGs from CSVs: no --sim/--serial/--url"),
    (["peak", "--sim", "--csv", "a.csv", "-o", "x"],        "--csv a.csv: CSV files are for `chart` only"),
    (["flat", "--sim", "-o", "x"],                          "invalid choice: 'flat'"),
    (["peak", "--sim"],                                     "the following arguments are required: -o/--out"),
    (["scaling", "--sim", "--force", "-o", "x"],            "--force: scaling records with rec_record from LBA 0, which never overwrites a catalog"),
])
def test_bad_arguments(capsys, argv, message):
    with pytest.raises(SystemExit) as e:
        literec(["bench"] + argv)
    assert e.value.code == 2
    assert message in capsys.readouterr().err

# The bench over the serial transport (stand-in BIOS) ------------------------------------------------

@pytest.mark.unit
def test_bench_peak_over_a_serial_port(fake_bios, tmp_path, capsys):
    bios = fake_bios(**{"nvme_bench peak": transcript("peak_transcript.txt"),
        "pcie_link": "pcie0: link up, LTSSM 0x11 (L0), Gen3 x4\nRESULT name=pcie_link port=0 up=1 gen=3 width=4 "
                     "mps=256 mrrs=512"})
    out = tmp_path / "out"
    rc = literec(["bench", "peak", "--serial", bios.slave_path, "--max-chunks", "8", "--label", "fake",
        "--no-progress", "-o", str(out)])
    assert rc == 0, capsys.readouterr()
    assert bios.commands == ["", "rec_info", "nvme_init 0", "pcie_link 0", "nvme_bench peak 8"]
    # The link goes into the configuration columns: the chart draws its limit.
    assert {(r["link"], r["link_mps"], r["link_limit_mibps"]) for r in benchdata.read_csv(out / "peak.csv")} == \
        {("gen3x4", "256", "3483.833")}
    rows = benchdata.read_csv(out / "peak.csv")
    assert [r["chunks"] for r in rows] == ["1", "2", "4", "8", "16", "32", "64"]
    assert [r["write_mibps"] for r in rows] == [d["write_mibps"] for d in
        con.parse_results(transcript("peak_transcript.txt")) if d["name"] == "bench_peak"]
    assert {(r["transport"], r["profile"], r["ssds"], r["dram"]) for r in rows} == \
        {(bios.slave_path, "fake", "2", "board")}
    assert benchdata.read_csv(out / "peak_summary.csv")[0]["points"] == "7"
    assert png_ok(out / "peak.png")
    assert "nvme_bench peak 8" in open(out / "peak_console.log", errors="replace").read()

@pytest.mark.unit
def test_bench_says_it_writes_the_drive_and_forces_only_when_asked(fake_bios, tmp_path, capsys):
    refusal = ("Error: nvme_bench would write LBAs 0..2047 of nvme0: the catalog (LBAs 0..2047) would be lost; "
        "nothing was written (force=1 overwrites them; rec_format yes writes a new catalog afterwards)")
    bios = fake_bios(**{"nvme_bench sizes 256 kib=1024 force=1": transcript("sizes_transcript.txt"),
        "nvme_bench sizes": refusal})
    base = ["--serial", bios.slave_path, "--no-progress", "-o", str(tmp_path), "--kib", "1024"]
    assert literec(["bench", "sizes"] + base) == 1
    out, err = capsys.readouterr()
    assert out.splitlines()[0] == ("literec bench sizes: the sweeps write nvme0; the BIOS refuses a drive whose "
        "catalog or recordings they would overwrite (--force overrides)")
    assert f"literec bench sizes: failed: {refusal}" in err
    assert literec(["bench", "sizes", "--force"] + base) == 0
    out, err = capsys.readouterr()
    assert out.splitlines()[0] == ("literec bench sizes: the sweeps write nvme0 and --force lets them overwrite "
        "its catalog and recordings (force=1)")
    assert [c for c in bios.commands if c.startswith("nvme_bench")] == \
        ["nvme_bench sizes 256 kib=1024", "nvme_bench sizes 256 kib=1024 force=1"]

@pytest.mark.unit
def test_bench_reports_a_failed_point(fake_bios, tmp_path, capsys):
    bios = fake_bios(**{"nvme_bench peak": transcript("peak_error_transcript.txt")})
    rc = literec(["bench", "peak", "--serial", bios.slave_path, "--max-chunks", "2", "--port", "1",
        "--chunk-kib", "64", "--no-progress", "-o", str(tmp_path)])
    err = capsys.readouterr().err
    assert rc == 1
    assert bios.commands[-3:] == ["nvme_init 1", "pcie_link 1", "nvme_bench peak 2 chunk=64 port=1"]
    assert "failed: Error: nvme0: write at LBA 512: LBA Out of Range (SCT 0, SC 0x80)" in err
    assert "failed: RESULT name=bench_peak_done port=0 points=1 ok=0" in err
    assert [r["chunks"] for r in benchdata.read_csv(tmp_path / "peak.csv")] == ["1"]

@pytest.mark.unit
def test_bench_stops_when_nvme_init_fails(fake_bios, tmp_path, capsys):
    bios = fake_bios(nvme_init="Error: nvme0: controller not ready\nRESULT name=nvme_init port=0 ok=0 error=-5")
    rc = literec(["bench", "sizes", "--serial", bios.slave_path, "--no-progress", "-o", str(tmp_path)])
    assert rc == 3
    assert "nvme_init 0 failed:" in capsys.readouterr().err
    assert bios.commands[-1] == "nvme_init 0" and not (tmp_path / "sizes.csv").exists()

@pytest.mark.unit
def test_bench_commands_of_each_kind(fake_bios, tmp_path, capsys):
    bios = fake_bios(**{"nvme_bench full": transcript("full_transcript.txt"),
        "nvme_bench iops": transcript("iops_transcript.txt"),
        "nvme_bench sizes": transcript("sizes_transcript.txt")})
    base = ["--serial", bios.slave_path, "--no-progress", "-o", str(tmp_path)]
    assert literec(["bench", "full", "--mib", "8", "--interval-ms", "1"] + base) == 0
    assert literec(["bench", "iops", "--mib", "8", "--seconds", "0.004", "--op-pct", "25",
        "--interval-ms", "1"] + base) == 0
    assert literec(["bench", "sizes", "--qd", "64", "--mib", "1"] + base) == 0
    assert literec(["bench", "sizes", "--kib", "256", "--port", "1"] + base) == 0
    typed = [c for c in bios.commands if c.startswith("nvme_bench")]
    assert typed == ["nvme_bench full 8 1", "nvme_bench iops 8 0.004 op=25 interval=1",
        "nvme_bench sizes 64 mib=1", "nvme_bench sizes 256 kib=256 port=1"]
    assert [(r["phase"], r["t_ms"]) for r in benchdata.read_csv(tmp_path / "full.csv")] == \
        [("write", "1.010"), ("write", "2.176"), ("write", "2.385"), ("read", "1.010"), ("read", "2.164"),
         ("read", "3.316"), ("read", "4.469"), ("read", "4.645")]
    assert [r["iops"] for r in benchdata.read_csv(tmp_path / "iops.csv")][:3] == ["682460", "198980", "200036"]
    assert [r["name"] for r in benchdata.read_csv(tmp_path / "iops_summary.csv")] == \
        ["bench_iops_fill", "bench_iops_done"]
    for k in ("full", "iops", "sizes"):
        assert png_ok(tmp_path / f"{k}.png")

# On the simulation ---------------------------------------------------------------------------------

class PipeBridge(threading.Thread):
    """Bridges a running simulation's console pipes to the master side of a pty: the slave is then a
    serial port with the simulated BIOS behind it."""
    def __init__(self, sim):
        super().__init__(daemon=True)
        self.sim = sim
        self.master, self.slave = pty.openpty()
        tty.setraw(self.slave)
        self.slave_path = os.ttyname(self.slave)
        self.stop = False

    def run(self):
        out, inp = self.sim.proc.stdout.fileno(), self.sim.proc.stdin
        while not self.stop:
            r, _, _ = select.select([out, self.master], [], [], 0.1)
            if out in r:
                data = os.read(out, 65536)
                if not data:
                    return
                os.write(self.master, data)
            if self.master in r:
                try:
                    data = os.read(self.master, 65536)
                except OSError:
                    return
                inp.write(data)
                inp.flush()

    def close(self):
        self.stop = True
        if self.is_alive():
            self.join(timeout=2)
        for fd in (self.master, self.slave):
            os.close(fd)

@pytest.mark.system
@pytest.mark.xdist_group("bench-host")
def test_serial_transport_against_the_simulation(start_sim, tmp_path, capsys):
    sim = start_sim(ssd=["--ssd-profile", "seed-ssd1", "--ns-size", "1GiB"])
    bridge = PipeBridge(sim)
    bridge.start()
    try:
        rc = literec(["bench", "scaling", "--serial", bridge.slave_path, "--mib", "4", "--label", "sim-pty",
            "--no-progress", "-o", str(tmp_path)])
        out, err = capsys.readouterr()
        assert rc == 0, out + err
    finally:
        bridge.close()
    rows = benchdata.read_csv(tmp_path / "scaling.csv")
    assert len(rows) == 1                       # A board of one SSD: only N = 1.
    r = rows[0]
    assert r["dram_ceiling_mbps"] == str(int(r["dram_ceiling_mbps"]))
    pinned("system.bench_host.scaling_serial.dram_ceiling_mbps", int(r["dram_ceiling_mbps"]))
    assert (r["ok"], r["ports"], r["bytes"], r["lost_beats"]) == ("1", "1", str(4 << 20), "0")
    pinned("system.bench_host.scaling_serial.mbps", float(r["mbps"]))
    assert (r["transport"], r["profile"], r["ssds"], r["dram"]) == (bridge.slave_path, "sim-pty", "1", "board")
    assert png_ok(tmp_path / "scaling.png")
    log = open(tmp_path / "scaling_console.log", errors="replace").read()
    assert "rec_record 0 4 ports=0" in log and "RESULT name=nvme_init port=0 ok=1" in log

@pytest.mark.system
@pytest.mark.xdist_group("bench-host")
def test_bench_peak_on_the_simulation(tmp_path, capsys):
    from conftest import get_build
    build = get_build()              # The system tests' default build: no extra Verilator build.
    out = tmp_path / "out"
    rc = literec(["bench", "peak", "--sim", "--build-dir", build.output_dir, "--ssd-profile", "seed-ssd1",
        "--ns-size", "1GiB", "--max-chunks", "8", "--no-progress", "-o", str(out)])
    stdout, err = capsys.readouterr()
    assert rc == 0, stdout + err
    rows = benchdata.read_csv(out / "peak.csv")
    assert [int(r["chunks"]) for r in rows] == [1, 2, 4, 8]
    assert [int(r["bytes"]) for r in rows] == [n * 128 * 1024 for n in (1, 2, 4, 8)]
    assert len({r["lba"] for r in rows}) == 4                   # Each point at its own LBA.
    for r in rows:
        pinned(f"system.bench_host.peak_sim.{r['chunks']}.write_mibps", float(r["write_mibps"]))
        pinned(f"system.bench_host.peak_sim.{r['chunks']}.read_mibps", float(r["read_mibps"]))
    assert {(r["transport"], r["profile"], r["ssds"], r["dram"]) for r in rows} == {("sim", "seed-ssd1", "1", "sim")}
    assert benchdata.read_csv(out / "peak_summary.csv")[-1]["ok"] == "1"
    assert png_ok(out / "peak.png")
    assert "nvme_bench peak 8" in open(out / "peak_console.log", errors="replace").read()
