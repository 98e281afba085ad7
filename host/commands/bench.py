#
# This file is part of LiteRecorder.
#
# SPDX-License-Identifier: BSD-2-Clause

"""literec bench KIND: run a benchmark campaign on the simulation or a board, write CSV + PNG.

    literec bench peak --sim --ssd-profile seed-ssd1 --max-chunks 256 -o out/
    literec bench sizes --serial /dev/ttyUSB1 --qd 256 -o out/
    literec bench chart -o out/                     # re-render every PNG from out/*.csv

The simulation (``--sim``) is built with targets/sim.py's SimBuild (one directory per configuration under build/sim/, shared with targets/sim.py and the tests) and
driven through its pipes; a board (``--serial DEV``, ``--url socket://host:port``) through its
UART. Both use the same console driver (literecorder.host.console).
"""

import os
import sys
import glob
import fcntl
import shutil
import argparse
import datetime

from literecorder import ROOT
from literecorder.host import benchdata, console as con
from literecorder.host.cli import EXIT_OK, EXIT_DATA, EXIT_USAGE, EXIT_IO

NAME = "bench"
HELP = "run benchmarks (simulation or board console): CSV + seed-style charts"
DESCRIPTION = __doc__.split("\n\n")[0].split(": ", 1)[1]

KIND_NAMES = ["peak", "sizes", "full", "iops", "scaling", "chart"]

# Arguments ----------------------------------------------------------------------------------------

def _int_range(lo, hi, what):
    def parse(text):
        try:
            v = int(text, 0)
        except ValueError:
            raise argparse.ArgumentTypeError(f"{text!r}: {what}, an integer {lo}..{hi}")
        if not lo <= v <= hi:
            raise argparse.ArgumentTypeError(f"{v}: {what}, allowed {lo}..{hi}")
        return v
    return parse

def _pow2(lo, hi, what):
    base = _int_range(lo, hi, what)
    def parse(text):
        v = base(text)
        if v & (v - 1):
            raise argparse.ArgumentTypeError(f"{v}: {what}, a power of two {lo}..{hi}")
        return v
    return parse

def _positive_number(what, hi=None):
    def parse(text):
        try:
            v = float(text)
        except ValueError:
            raise argparse.ArgumentTypeError(f"{text!r}: {what}, a number above 0")
        if not v > 0 or (hi is not None and v > hi):
            raise argparse.ArgumentTypeError(f"{text}: {what}, above 0" +
                (f" and at most {hi:g}" if hi is not None else ""))
        return v
    return parse

def _seconds(text):
    try:
        v = float(text)
    except ValueError:
        v = None
    frac = text.split(".", 1)[1] if "." in text else ""
    if v is None or not v > 0 or len(frac) > 6 or not frac.isdigit() and frac:
        raise argparse.ArgumentTypeError(f"{text!r}: modeled seconds above 0 with up to "
            "6 decimals (e.g. 30, 0.25)")
    return text

def _ssd_list(text):
    try:
        ns = [int(t) for t in text.split(",")]
    except ValueError:
        ns = None
    if not ns or any(not 1 <= n <= 8 for n in ns) or len(set(ns)) != len(ns):
        raise argparse.ArgumentTypeError(f"{text!r}: SSD counts separated by commas, each 1..8, "
            "no repeats (e.g. 1,2,4)")
    return sorted(ns)

def _fmt(v):
    """A number as the BIOS takes it (no trailing .0)."""
    return f"{v:g}" if isinstance(v, float) else str(v)

def add_arguments(p):
    from literecorder.targets.sim import ssd_parser
    p.formatter_class = argparse.RawDescriptionHelpFormatter
    p.add_argument("kind", choices=KIND_NAMES, metavar="KIND",
        help="peak (seed 000's chunk sweep), sizes (seed 003's transfer-size sweep), full (write "
             "and read back a region: MB/s and temperature over time), iops (seed 004's random-write "
             "consistency), scaling (recording over 1, 2, 4 SSDs), chart (re-render PNGs from CSVs).")
    p.add_argument("--csv", dest="csvs", action="append", default=[], metavar="FILE",
        help="chart only (repeatable): a CSV file to render into -o DIR (default: every <kind>.csv "
             "of -o DIR).")
    p.add_argument("-o", "--out", required=True, metavar="DIR",
        help="Output directory: <kind>.csv, <kind>_summary.csv, <kind>.png, <kind>_console.log.")
    t = p.add_argument_group("transport (one of)")
    t.add_argument("--sim", action="store_true",
        help="Run on the full-system simulation (built once per configuration under build/sim/, shared with targets/sim.py).")
    t.add_argument("--serial", metavar="DEV", help="A board's BIOS console on a serial device, e.g. /dev/ttyUSB1.")
    t.add_argument("--url", metavar="URL", help="A console through a pyserial URL, e.g. socket://host:port.")
    t.add_argument("--baud", type=_int_range(50, 12000000, "baud rate"), default=115200,
        help="Serial baud rate (default: %(default)s).")
    t.add_argument("--label", default=None,
        help="Drive/board description in the CSV's profile column and chart titles (default: the "
             "simulated profile, or `board`).")
    s = p.add_argument_group("simulation (with --sim; the SSD options are targets/sim.py's)")
    s.add_argument("--ssds", type=_int_range(1, 8, "number of simulated SSDs"), default=1,
        help="Simulated SSDs (1-8, default: %(default)s).")
    s.add_argument("--dram", default="sim", choices=["sim", "kc705", "kcu105", "zcu106"],
        help="DRAM model: sim (default) or a board's.")
    s.add_argument("--build-dir", default=None, metavar="DIR",
        help="Simulation build directory (default: the configuration's own under build/sim/; scaling: "
             "DIR/ssds-N).")
    s.add_argument("--boot-timeout", type=_positive_number("seconds"), default=300,
        help="Wall-clock seconds to reach the BIOS prompt (default: %(default)s).")
    ssd_parser(p)
    k = p.add_argument_group("benchmark")
    k.add_argument("--max-chunks", type=_pow2(1, 1 << 20, "chunks of the last peak point"),
        default=256, help="peak: sweep 1, 2, 4 .. N chunks (power of two up to 1048576; default: "
        "%(default)s; seed 000 goes to 32768).")
    k.add_argument("--chunk-kib", type=_pow2(4, 2048, "KiB per command"), default=None,
        help="peak: KiB per chunk command (power of two 4..2048; default: the build's chunk, 128).")
    k.add_argument("--qd", type=_int_range(1, 65535, "commands in flight"), default=256,
        help="sizes: queue depth (default: %(default)s, seed 003's).")
    k.add_argument("--mib", type=_int_range(1, 1 << 20, "MiB"), default=None,
        help="sizes: MiB per point (BIOS default 8); full: the region (BIOS default: the whole "
             "namespace); iops: the region filled (BIOS default 1024); scaling: the recording "
             "(default 256).")
    k.add_argument("--kib", type=_int_range(128, 1 << 30, "KiB per point"), default=None,
        help="sizes: KiB per point instead of --mib (128..1073741824), for short runs.")
    k.add_argument("--interval-ms", type=_int_range(1, 3600000, "modeled ms per "
        "interval"), default=None, help="full, iops: reporting interval in modeled ms (1..3600000, "
        "BIOS default 1000); full needs --mib with it.")
    k.add_argument("--seconds", type=_seconds, default=None,
        help="iops: modeled seconds of random writes (up to 6 decimals; BIOS default 30); needs --mib.")
    k.add_argument("--op-pct", type=_int_range(0, 90, "over-provisioning, percent of the "
        "region the random writes leave alone"), default=None, help="iops: over-provisioning, the "
        "random writes span the first (100 - N)%% of the region (0..90, BIOS default 25).")
    k.add_argument("--port", type=_int_range(0, 7, "SSD port"), default=0,
        help="SSD port (default: %(default)s).")
    k.add_argument("--scaling-ssds", type=_ssd_list, default=[1, 2, 4], metavar="N,N,..",
        help="scaling: SSD counts (default: 1,2,4; a board: 1 and all of its SSDs).")
    k.add_argument("--force", action="store_true",
        help="peak, sizes, full, iops: overwrite a drive that holds a catalog (the BIOS refuses to "
             "write over its catalog or recordings without force=1).")
    k.add_argument("--timeout", type=_positive_number("seconds"), default=7200,
        help="Wall-clock seconds allowed per BIOS command (default: %(default)s).")
    k.add_argument("--no-progress", action="store_true", help="No live progress line.")
    p.set_defaults(_parser=p)

# The BIOS command of a kind ------------------------------------------------------------------------

def bios_command(args):
    """The ``nvme_bench`` command line of a benchmark kind (not scaling/chart)."""
    port = ([f"port={args.port}"] if args.port else []) + (["force=1"] if args.force else [])
    if args.kind == "peak":
        c = ["nvme_bench", "peak", str(args.max_chunks)]
        if args.chunk_kib:
            c.append(f"chunk={args.chunk_kib}")
        return " ".join(c + port)
    if args.kind == "sizes":
        c = ["nvme_bench", "sizes", str(args.qd)]
        if args.mib:
            c.append(f"mib={args.mib}")
        if args.kib:
            c.append(f"kib={args.kib}")
        return " ".join(c + port)
    if args.kind == "full":
        c = ["nvme_bench", "full"] + [str(v) for v in (args.mib, args.interval_ms) if v is not None]
        return " ".join(c + port)
    if args.kind == "iops":
        c = ["nvme_bench", "iops"] + [str(v) for v in (args.mib, args.seconds) if v is not None]
        if args.op_pct is not None:
            c.append(f"op={args.op_pct}")
        if args.interval_ms:
            c.append(f"interval={args.interval_ms}")
        return " ".join(c + port)
    raise ValueError(args.kind)

# The simulation's own options (besides targets/sim.py's SSD options): a board run would ignore them.
SIM_ONLY = ("--ssds", "--dram", "--build-dir", "--boot-timeout")

def check_arguments(p, args):
    """Combinations argparse cannot check (exit 2 with the reason)."""
    transports = [t for t in ("sim", "serial", "url") if getattr(args, t)]
    if args.kind == "chart":
        if transports:
            p.error("chart re-renders PNGs from CSVs: no --sim/--serial/--url")
        return
    if args.csvs:
        p.error(f"--csv {' '.join(args.csvs)}: CSV files are for `chart` only")
    if len(transports) != 1:
        p.error("give one transport: --sim, --serial DEV or --url URL" +
            (f" (got {', '.join('--' + t for t in transports)})" if transports else ""))
    if not args.sim:
        given = [o for o in SIM_ONLY if getattr(args, o[2:].replace("-", "_")) != p.get_default(o[2:].replace("-", "_"))]
        # The simulated SSD's options (targets/sim.py's), against their parsed defaults.
        from literecorder.targets.sim import ssd_parser
        sp = ssd_parser()
        defaults = sp.parse_args([])
        given += [a.option_strings[0] for a in sp._actions if a.option_strings and a.dest != "help"
            and getattr(args, a.dest) != getattr(defaults, a.dest)]
        if given:
            p.error(f"{', '.join(given)}: simulation options, they need --sim")
    if args.sim and args.kind != "scaling" and args.port >= args.ssds:
        p.error(f"--port {args.port}: the simulation has {args.ssds} SSD(s), ports 0..{args.ssds - 1}")
    if args.kib and (args.kind != "sizes" or args.mib):
        p.error("--kib: KiB per point of `sizes`, instead of --mib (not both)")
    if args.kind == "full" and args.interval_ms and not args.mib:
        p.error("full: --interval-ms needs --mib (both are positional for the BIOS; its default "
            "region is the whole namespace)")
    if args.force and args.kind == "scaling":
        p.error("--force: scaling records with rec_record from LBA 0, which never overwrites a catalog "
            "(rec_format yes on a drive whose recordings may go, or a drive without a catalog)")
    if args.kind == "iops" and args.seconds and not args.mib:
        p.error("iops: --seconds needs --mib (both are positional for the BIOS; its default region is 1024 MiB)")

# Progress -----------------------------------------------------------------------------------------

PROGRESS = {
    "bench_peak":  "peak: {chunks} chunks of {chunk_kib} KiB: write {write_mibps} MiB/s, read {read_mibps} MiB/s",
    "bench_sizes": "sizes: {op} {bytes_per_cmd} B/cmd QD {qd}: {mbps} MB/s, {iops} IOPS",
    "bench_full":  "full: {phase} t={t_ms} ms {bytes} bytes: {mbps} MB/s, {temp_c} C",
    "bench_iops_fill": "iops: fill of {mib} MiB: {mbps} MB/s",
    "bench_iops":  "iops: t={t_ms} ms: {iops} IOPS",
    "rec_record":  "scaling: {ports} SSD(s): {mbps} MB/s",
    "nvme_init":   "nvme_init port {port}: ok={ok}",
}

class Progress:
    """One live line on a terminal (rewritten per RESULT line), else one printed line per point."""
    def __init__(self, stream=sys.stderr, enabled=True):
        self.stream  = stream
        self.enabled = enabled
        self.tty     = enabled and hasattr(stream, "isatty") and stream.isatty()
        self.points  = 0
        self.shown   = False

    def line(self, line):
        if not self.enabled:
            return
        if line.strip().startswith("Error:"):
            self.show(line.strip(), keep=True)
            return
        r = con.parse_result(line)
        if r is None:
            return
        fmt = PROGRESS.get(r.get("name"))
        if fmt is None:
            return
        try:
            msg = fmt.format(**r)
        except KeyError:
            msg = line.strip()
        if r.get("name") == "nvme_init":
            self.show(msg)
            return
        self.points += 1
        self.show(f"[{self.points}] {msg}")

    def show(self, msg, keep=False):
        if self.tty:
            self.stream.write("\r\x1b[K" + msg + ("\n" if keep else ""))
            self.shown = not keep
        else:
            self.stream.write(msg + "\n")
        self.stream.flush()

    def done(self):
        if self.tty and self.shown:
            self.stream.write("\n")
            self.stream.flush()
            self.shown = False

# Targets ------------------------------------------------------------------------------------------

class BenchError(Exception):
    """A benchmark that could not run (build, console); exit status 3."""

def _sim_session(args, n_ssds, name):
    from literecorder.targets.sim import SimBuild, SimSession, SimError, ssd_devices
    out = args.build_dir            # None: the configuration's own directory (SimBuild's default)
    if out is not None and args.kind == "scaling":
        out = os.path.join(out, f"ssds-{n_ssds}")
    try:
        build = SimBuild(output_dir=out, n_ssds=n_ssds, dram=args.dram)
        devices = ssd_devices(args, n_ssds, build.sys_clk_freq, build.pcie_data_width)
    except ValueError as e:
        raise BenchError(str(e))
    try:
        build.build()              # (locked: another process building it is waited for)
        return SimSession(build, name=f"{name}-{os.getpid()}", devices=devices,
            boot_timeout=args.boot_timeout, fresh=True)
    except SimError as e:
        raise BenchError(str(e))

def _close_sim(session, args):
    run_dir = session.run_dir
    session.close()
    if args.ns_file is None:            # The namespaces are sparse files of the run: free the disk.
        for img in glob.glob(os.path.join(run_dir, "ssd*.img")):
            os.remove(img)
    return os.path.join(run_dir, "console.log")

def _init(session, ports, progress, timeout):
    for port in ports:
        out = session.cmd(f"nvme_init {port}", timeout, progress.line)
        r = [d for d in con.parse_results(out) if d.get("name") == "nvme_init"]
        if not r or r[-1].get("ok") != "1":
            raise BenchError(f"nvme_init {port} failed:\n{out.strip()}")

def _link(session, port, timeout):
    """The link of ``port`` as configuration columns (``pcie_link``): {link: gen3x4, link_mps: 256,
    link_limit_mibps: the payload limit of a direction}; {} when the BIOS does not say (a link
    down, a device not enumerated, a BIOS without the command)."""
    out = session.cmd(f"pcie_link {port}", timeout)
    r = [d for d in con.parse_results(out) if d.get("name") == "pcie_link"]
    try:
        gen, width, mps = (int(r[-1][k]) for k in ("gen", "width", "mps"))
    except (IndexError, KeyError, ValueError):
        return {}
    limit = benchdata.link_limit_mibps(gen, width, mps)
    if limit is None:
        return {}
    return dict(link=f"gen{gen}x{width}", link_mps=str(mps), link_limit_mibps=f"{limit:.3f}")

# Runs ---------------------------------------------------------------------------------------------

def _config(args, transport, ssds, dram):
    return dict(transport=transport,
        profile=args.label or (args.ssd_profile if args.sim else "board"),
        ssds=ssds, dram=dram,
        date=datetime.datetime.now(datetime.timezone.utc).isoformat(timespec="seconds"),
        git_rev=benchdata.git_revision(ROOT))

def _run_kind(session, args, progress):
    """Runs one nvme_bench command; returns (points, other RESULT lines, failures, output)."""
    command = bios_command(args)
    print(f"literec bench: {command}", flush=True)
    out = session.cmd(command, args.timeout, progress.line)
    progress.done()
    spec = benchdata.KINDS[args.kind]
    results = [r for r in con.parse_results(out) if r.get("name", "").startswith(spec["point"])]
    points = [r for r in results if r.get("name") == spec["point"]]
    others = [r for r in results if r.get("name") != spec["point"]]
    return points, others, benchdata.failures(out, args.kind, results), out

def _rec_info(session, timeout):
    """The build's ``RESULT name=rec_info`` line (SSD ports, DRAM ceiling, ...)."""
    out = session.cmd("rec_info", timeout)
    r = [d for d in con.parse_results(out) if d.get("name") == "rec_info"]
    if not r or "ssd_ports" not in r[0]:
        raise BenchError(f"rec_info did not report the SSD ports:\n{out.strip()}")
    return r[0]

def _board_ports(session, timeout):
    return int(_rec_info(session, timeout)["ssd_ports"])

def _scaling_config(info, used):
    """Row configuration of a scaling point: SSDs striped and the build's recording ceiling."""
    return dict(ssds=used, dram_ceiling_mbps=info.get("dram_ceiling_mbps", ""))

def _scaling(args, progress, out_dir):
    """rec_record over N SSDs; returns (points, row configs, failures, console logs)."""
    mib = args.mib or 256
    points, rows, errs, logs = [], [], [], []
    if args.sim:
        plan = [(n, n) for n in args.scaling_ssds]              # (build's SSDs, SSDs recorded on)
    else:
        plan = None
    if plan is not None:
        for n, used in plan:
            session = _sim_session(args, n, f"bench-scaling-{n}")
            try:
                info = _rec_info(session, args.timeout)
                _init(session, range(n), progress, args.timeout)
                p, e = _record(session, mib, "all", args, progress)
            finally:
                logs.append((n, _close_sim(session, args)))
            points += p; errs += e; rows += [_scaling_config(info, n)]*len(p)
        return points, rows, errs, logs
    session = con.SerialSession(args.serial or args.url, args.baud,
        log=os.path.join(out_dir, "scaling_console.log"))
    try:
        info = _rec_info(session, args.timeout)
        n = int(info["ssd_ports"])
        _init(session, range(n), progress, args.timeout)
        for used, ports in ([(1, "0")] + ([(n, "all")] if n > 1 else [])):
            p, e = _record(session, mib, ports, args, progress)
            points += p; errs += e; rows += [_scaling_config(info, used)]*len(p)
    finally:
        session.close()
    return points, rows, errs, logs

def _record(session, mib, ports, args, progress):
    command = f"rec_record 0 {mib} ports={ports}"
    print(f"literec bench: {command}", flush=True)
    out = session.cmd(command, args.timeout, progress.line)
    progress.done()
    res = [r for r in con.parse_results(out) if r.get("name") == "rec_record"]
    errs = [l.strip() for l in out.splitlines() if l.strip().startswith("Error:")]
    errs += [f"{command}: RESULT ok={r.get('ok')}" for r in res if r.get("ok") != "1"]
    if not res:
        errs.append(f"{command}: no `RESULT name=rec_record` line")
    return [r for r in res if r.get("ok") == "1"], errs

def _chart(args, csv_path, png_path):
    from literecorder.host import charts
    rows = benchdata.read_csv(csv_path)
    kind = benchdata.kind_of(rows)
    if kind is None:
        raise ValueError(f"{csv_path}: no benchmark points (a `name` column of bench_peak, bench_sizes, "
            "bench_full, bench_iops or rec_record rows)")
    summary = None
    spath = csv_path[:-len(".csv")] + "_summary.csv"
    if os.path.exists(spath):
        done = [r for r in benchdata.read_csv(spath) if r.get("name") == benchdata.KINDS[kind]["done"]]
        summary = done[-1] if done else None
    charts.render(kind, rows, png_path, summary)
    return kind, len(rows)

def run_chart(args):
    csvs = args.csvs or sorted(p for p in glob.glob(os.path.join(args.out, "*.csv"))
        if os.path.basename(p)[:-4] in benchdata.KINDS)
    if not csvs:
        print(f"literec bench chart: error: no <kind>.csv in {args.out} (kinds: "
            f"{', '.join(benchdata.KINDS)}) and no CSV given", file=sys.stderr)
        return EXIT_USAGE
    os.makedirs(args.out, exist_ok=True)
    for path in csvs:
        png = os.path.join(args.out, os.path.basename(path)[:-4] + ".png") if path.endswith(".csv") \
            else os.path.join(args.out, os.path.basename(path) + ".png")
        try:
            kind, n = _chart(args, path, png)
        except (ValueError, KeyError) as e:
            print(f"literec bench chart: error: {path}: {e}", file=sys.stderr)
            return EXIT_USAGE
        print(f"{png}: {kind} chart of {n} points")
    return EXIT_OK

def write_notice(args):
    """What a benchmark does to the drive, said before it starts."""
    if args.kind == "scaling":
        return ("literec bench scaling: rec_record writes the drives from LBA 0; the BIOS refuses a drive "
            "that holds a catalog (its recordings stay)")
    if args.force:
        return (f"literec bench {args.kind}: the sweeps write nvme{args.port} and --force lets them "
            "overwrite its catalog and recordings (force=1)")
    return (f"literec bench {args.kind}: the sweeps write nvme{args.port}; the BIOS refuses a drive whose "
        "catalog or recordings they would overwrite (--force overrides)")

def run(args):
    p = args._parser
    check_arguments(p, args)
    if args.kind == "chart":
        return run_chart(args)
    print(write_notice(args), flush=True)
    try:
        os.makedirs(args.out, exist_ok=True)
    except OSError as e:
        p.error(f"-o {args.out}: cannot create the directory ({e.strerror})")
    progress = Progress(enabled=not args.no_progress)
    kind = args.kind
    csv_path = os.path.join(args.out, f"{kind}.csv")
    log_path = os.path.join(args.out, f"{kind}_console.log")
    try:
        if kind == "scaling":
            points, row_configs, errs, logs = _scaling(args, progress, args.out)
            for n, log in logs:
                shutil.copyfile(log, os.path.join(args.out, f"scaling_{n}ssd_console.log"))
            transport = "sim" if args.sim else (args.serial or args.url)
            config = _config(args, transport, ",".join(str(r["ssds"]) for r in row_configs), args.dram
                if args.sim else "board")
            others = []
        else:
            row_configs = None
            if args.sim:
                session = _sim_session(args, args.ssds, f"bench-{kind}")
                transport, ssds, dram = "sim", args.ssds, args.dram
            else:
                session = con.SerialSession(args.serial or args.url, args.baud, log=log_path)
                transport, dram = args.serial or args.url, "board"
            try:
                if not args.sim:
                    ssds = _board_ports(session, args.timeout)
                _init(session, [args.port], progress, args.timeout)
                link = _link(session, args.port, args.timeout) if kind == "peak" else {}
                points, others, errs, out = _run_kind(session, args, progress)
            finally:
                if args.sim:
                    shutil.copyfile(_close_sim(session, args), log_path)
                else:
                    session.close()
            config = dict(_config(args, transport, ssds, dram), **link)
    except (BenchError, con.ConsoleError) as e:
        progress.done()
        print(f"literec bench {kind}: error: {e}", file=sys.stderr)
        return EXIT_IO
    if points:
        rows = benchdata.write_csv(csv_path, points, config, row_configs)
        if others:
            benchdata.write_csv(os.path.join(args.out, f"{kind}_summary.csv"), others, config)
        png = os.path.join(args.out, f"{kind}.png")
        from literecorder.host import charts
        done = [r for r in others if r.get("name") == benchdata.KINDS[kind]["done"]]
        charts.render(kind, rows, png, done[-1] if done else None)
        print(f"literec bench {kind}: {len(rows)} points -> {csv_path}, {png}")
    for r in others:
        print("RESULT " + " ".join(f"{k}={v}" for k, v in r.items()))
    if errs:
        for e in errs:
            print(f"literec bench {kind}: failed: {e}", file=sys.stderr)
        return EXIT_DATA
    return EXIT_OK
