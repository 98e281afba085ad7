#
# This file is part of LiteRecorder.
#
# SPDX-License-Identifier: BSD-2-Clause

"""Simulated NVMe SSD: command-line options, module arguments for the LiteX sim module `nvme_ssd`,
validation, and a ctypes harness for the standalone model library (tests and benchmarks).

    parser = argparse.ArgumentParser(); add_ssd_arguments(parser)
    args = parser.parse_args()
    devices = [("nvme_ssd", ssd_module_args(args, i, run_dir, 200e6, 256)) for i in range(args.ssds)]

See doc/ssd_model.md.
"""

import os
import re
import json
import ctypes
import struct

from .harness import make_harness, load_library, TraceRec, PCIE_HOST_STATS, P, U64, I

ROOT         = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
MODULE_DIR   = os.path.join(ROOT, "sim", "modules", "nvme_ssd")
HARNESS_DIR  = os.path.join(ROOT, "build", "ssd_harness")

PROFILES = ["ideal", "tlc-slc", "mlc", "enterprise-tlc", "optane", "budget", "seed-ssd1"]

# Parameter names accepted by --ssd-opt (must match ssd_param_descs in ssd_params.c; a test checks).
PARAMS = [
    "write_rate", "cache_size", "cache_rate", "cache2_size", "cache2_rate", "cache_flush_rate",
    "cache_idle_us", "read_rate", "read_lat_us", "write_lat_us", "flush_lat_us", "cmd_cost_us",
    "lat_jitter_pct", "spike_prob", "spike_us", "dip_rate", "dip_period_us", "dip_len_us",
    "write_buf", "op_pct", "gc_rate", "gc_mode", "gc_batch", "gc_free_pct", "bg_gc_rate",
    "temp_ambient", "temp_per_gbps", "temp_read_per_gbps", "temp_tau_us", "tmt1", "tmt2",
    "throttle1_rate", "throttle2_rate", "temp_hyst", "wctemp", "cctemp", "endurance_tbw",
    "mdts", "mqes", "dstrd", "cap_to", "rdy_us", "shn_us", "max_queues", "max_tags",
    "cpl_timeout_us", "crs_us", "train_us", "link_latency_ns", "dllp_pct", "msix_vectors",
    "up_credits", "dn_credits", "dn_backlog_ns", "tx_backlog_ns", "fetch_max", "sample_us",
    "ctl_poll_cycles",
]

FAULT_KINDS = ["write-fault", "read-error", "internal-error", "status", "drop-cqe", "cfs",
    "rdy-slow", "rdy-fail", "link-down", "retrain", "bar-ur", "bar-ca", "bar-poison", "bar-drop",
    "poison", "malformed", "rogue", "bitflip", "ns-not-ready", "busy"]
FAULT_KEYS = ["op", "lba", "qid", "count", "skip", "sct", "sc", "dnr", "at_us", "for_us", "us",
    "addr", "off", "dir", "kind", "bit", "reg"]

DEFAULT_NS_SIZE = 1000204886016   # 1 TB drive: 1953525168 x 512 B

_SIZE_RE = re.compile(r"^\s*(0x[0-9a-fA-F]+|[0-9]*\.?[0-9]+(?:[eE][+-]?[0-9]+)?)\s*([kKmMgGtT]i?)?[bB]?\s*$")
_MULT = {"": 1, "k": 1e3, "m": 1e6, "g": 1e9, "t": 1e12,
         "ki": 1024, "mi": 1024**2, "gi": 1024**3, "ti": 1024**4}

# Parsing / validation ----------------------------------------------------------------------------

def parse_number(text, what="value"):
    """'42', '2.75G', '8MiB', '0x1000', '1e9' -> float. Raises ValueError naming `what`."""
    m = _SIZE_RE.match(str(text))
    if not m:
        raise ValueError(f"{what}: '{text}' is not a number (e.g. 42, 2.75G, 8MiB, 1TB, 0x1000)")
    num, suf = m.group(1), (m.group(2) or "").lower()
    v = float(int(num, 16)) if num.lower().startswith("0x") else float(num)
    return v * _MULT[suf]

def parse_size(text, what="size"):
    v = parse_number(text, what)
    if v != int(v):
        raise ValueError(f"{what}: '{text}' is not a whole number of bytes")
    return int(v)

def parse_link(text):
    """'gen3x4' -> (3, 4)."""
    m = re.fullmatch(r"gen([0-9]+)x([0-9]+)", str(text).strip().lower())
    if not m or int(m.group(1)) not in (1, 2, 3, 4) or int(m.group(2)) not in (1, 2, 4, 8):
        raise ValueError(f"--link '{text}': expected genGxL with G in 1-4 and L in 1, 2, 4, 8 "
            "(e.g. gen3x4)")
    return int(m.group(1)), int(m.group(2))

def validate_fault(spec):
    """Check a fault spec (KIND[:key=value,...]); raises ValueError with what is allowed."""
    if not spec or not isinstance(spec, str):
        raise ValueError("--fault: empty fault spec")
    kind, _, opts = spec.partition(":")
    if kind not in FAULT_KINDS:
        raise ValueError(f"--fault '{spec}': unknown kind '{kind}' (allowed: {', '.join(FAULT_KINDS)})")
    if not opts:
        return spec
    for kv in opts.split(","):
        key, eq, val = kv.partition("=")
        if not eq or not val:
            raise ValueError(f"--fault '{spec}': option '{kv}' is not key=value")
        if key not in FAULT_KEYS:
            raise ValueError(f"--fault '{spec}': unknown option '{key}' (allowed: {', '.join(FAULT_KEYS)})")
        if key == "op":
            if val not in ("any", "read", "write", "flush", "dsm", "wz", "write-zeroes") and \
               not re.fullmatch(r"(admin:)?(0x[0-9a-fA-F]+|[0-9]+)", val):
                raise ValueError(f"--fault '{spec}': op '{val}' (allowed: any, read, write, flush, dsm, "
                    "wz, an opcode number, admin:OPCODE)")
        elif key == "lba":
            parts = val.split("-")
            if len(parts) > 2:
                raise ValueError(f"--fault '{spec}': lba '{val}' must be N or A-B")
            nums = [parse_size(p, f"--fault '{spec}' lba") for p in parts]
            if len(nums) == 2 and nums[1] < nums[0]:
                raise ValueError(f"--fault '{spec}': lba range '{val}' ends before it starts")
        elif key == "dir":
            if val not in ("read", "write"):
                raise ValueError(f"--fault '{spec}': dir must be read or write")
        elif key == "kind":
            if val not in ("len", "mps", "4k"):
                raise ValueError(f"--fault '{spec}': kind must be len, mps or 4k")
        elif key == "count" and val == "inf":
            pass
        else:
            v = parse_number(val, f"--fault '{spec}' {key}")
            if v < 0:
                raise ValueError(f"--fault '{spec}': {key} must not be negative")
            if key == "count" and v == 0:
                raise ValueError(f"--fault '{spec}': count must be at least 1 (or inf)")
            if key == "sct" and v > 7 or key == "sc" and v > 255 or key == "dnr" and v > 1:
                raise ValueError(f"--fault '{spec}': {key}={val} out of range")
    return spec

def parse_opts(items):
    """['cache_size=64MiB', ...] -> {'cache_size': '64MiB'}; raises ValueError on unknown keys."""
    opts = {}
    for item in items or []:
        for kv in str(item).split():
            key, eq, val = kv.partition("=")
            if not eq or not val:
                raise ValueError(f"--ssd-opt '{kv}': expected KEY=VALUE")
            if key not in PARAMS:
                raise ValueError(f"--ssd-opt '{kv}': unknown parameter '{key}' "
                    f"(allowed: {', '.join(PARAMS)})")
            parse_number(val, f"--ssd-opt {key}")
            opts[key] = val
    return opts

# argparse ------------------------------------------------------------------------------------------

def add_ssd_arguments(parser):
    """Options of the simulated SSDs (every value is checked by ssd_module_args)."""
    g = parser.add_argument_group("simulated SSD (doc/ssd_model.md)")
    g.add_argument("--ssd-profile", default="tlc-slc", metavar="NAME",
        help=f"Performance profile: {', '.join(PROFILES)} (default: %(default)s).")
    g.add_argument("--link", default="gen3x4", metavar="genGxL",
        help="PCIe link of every SSD: generation 1-4, width 1/2/4/8 (default: %(default)s).")
    g.add_argument("--mps", default=256, type=int, metavar="BYTES",
        help="Max payload size the SSD supports (DevCap): 128-4096, power of two (default: %(default)s).")
    g.add_argument("--ns-size", default=str(DEFAULT_NS_SIZE), metavar="SIZE",
        help="Namespace capacity (e.g. 1TB, 64GiB, 512MiB; default: 1 TB). Only what is written uses disk.")
    g.add_argument("--ns-file", default=None, metavar="PATH",
        help="Sparse file holding the namespace (default: <run dir>/ssdN.img; with several SSDs, "
             "'{i}' in PATH is replaced by the SSD index, else '.N' is appended).")
    g.add_argument("--lba-size", default=512, type=int, choices=None, metavar="512|4096",
        help="LBA size in bytes (default: %(default)s).")
    g.add_argument("--fault", action="append", default=[], metavar="SPEC",
        help="Inject a fault (repeatable), e.g. read-error:lba=100-107 or drop-cqe:op=write,count=1.")
    g.add_argument("--ssd-opt", action="append", default=[], metavar="KEY=VALUE",
        help="Override a profile/controller parameter (repeatable), e.g. cache_size=64MiB.")
    g.add_argument("--ssd-log", default=None, metavar="DIR",
        help="Write per-command and per-interval logs (ssdN_cmds.csv, ssdN_samples.csv) to DIR.")
    g.add_argument("--ssd-seed", default=1, type=int, metavar="N",
        help="Seed of the model's random numbers and serial numbers (default: %(default)s).")
    return parser

def ssd_module_args(args, index, run_dir, sys_clk_freq=200e6, data_width=256):
    """JSON args of the `nvme_ssd` module instance of port `index` (raises ValueError)."""
    profile = args.ssd_profile
    if profile not in PROFILES:
        raise ValueError(f"--ssd-profile '{profile}': unknown profile (allowed: {', '.join(PROFILES)})")
    gen, width = parse_link(args.link)
    mps = int(args.mps)
    if mps < 128 or mps > 4096 or mps & (mps - 1):
        raise ValueError(f"--mps {args.mps}: allowed 128, 256, 512, 1024, 2048, 4096")
    lba = int(args.lba_size)
    if lba not in (512, 4096):
        raise ValueError(f"--lba-size {args.lba_size}: allowed 512 or 4096")
    ns_size = parse_size(args.ns_size, "--ns-size")
    if ns_size <= 0:
        raise ValueError(f"--ns-size {args.ns_size}: the namespace capacity must be positive")
    if ns_size % lba:
        raise ValueError(f"--ns-size {args.ns_size}: {ns_size} bytes is not a multiple of the "
            f"LBA size {lba}")
    if data_width not in (64, 128, 256, 512):
        raise ValueError(f"data_width {data_width}: allowed 64, 128, 256, 512")
    if not (0 <= index <= 7):
        raise ValueError(f"SSD index {index}: allowed 0..7")
    faults = [validate_fault(f) for f in (args.fault or [])]
    opts = parse_opts(getattr(args, "ssd_opt", []))
    ns_file = args.ns_file
    if ns_file is None:
        ns_file = os.path.join(run_dir, f"ssd{index}.img")
    elif "{i}" in ns_file:
        ns_file = ns_file.replace("{i}", str(index))
    elif getattr(args, "ssds", 1) > 1:
        ns_file = f"{ns_file}.{index}"
    d = dict(
        index      = index,
        sys_clk_hz = int(sys_clk_freq),
        data_width = int(data_width),
        profile    = profile,
        link       = f"gen{gen}x{width}",
        mps        = mps,
        lba_size   = lba,
        ns_size    = ns_size,
        ns_file    = os.path.abspath(ns_file),
        faults     = faults,
        opts       = opts,
        seed       = int(getattr(args, "ssd_seed", 1)),
        ctl_path   = os.path.join(run_dir, f"ssd{index}.ctl"),
    )
    if getattr(args, "ssd_log", None):
        os.makedirs(args.ssd_log, exist_ok=True)
        d["cmd_log"]    = os.path.abspath(os.path.join(args.ssd_log, f"ssd{index}_cmds.csv"))
        d["sample_log"] = os.path.abspath(os.path.join(args.ssd_log, f"ssd{index}_samples.csv"))
    if len(d["ctl_path"]) > 100:   # sockaddr_un limit: a short path, unique per run directory
        import hashlib
        key = hashlib.sha1(os.path.abspath(run_dir).encode()).hexdigest()[:16]
        d["ctl_path"] = f"/tmp/literec-ssd-{key}-{index}.ctl"
    return d

def send_control(ctl_path, command, timeout=5.0):
    """Send a control command to a running simulated SSD; returns its reply text."""
    import socket, tempfile
    s = socket.socket(socket.AF_UNIX, socket.SOCK_DGRAM)
    me = tempfile.mktemp(prefix="ssdctl-", suffix=".sock")
    try:
        s.bind(me)
        s.settimeout(timeout)
        s.sendto(command.encode(), ctl_path)
        return s.recv(65536).decode()
    finally:
        s.close()
        if os.path.exists(me):
            os.unlink(me)

# Standalone harness ----------------------------------------------------------------------------------

def build_harness(out_dir=HARNESS_DIR):
    """Build libsimssd.so (once per call site, see ``make_harness``); returns its path."""
    return make_harness(MODULE_DIR, out_dir, "libsimssd.so", "SSD")

class StreamArgs(ctypes.Structure):
    _fields_ = [(n, ctypes.c_uint64) for n in ("sq_base", "cq_base", "bar0")] + \
        [(n, ctypes.c_uint32) for n in ("sqid", "cqid", "sq_size", "cq_size", "dstrd", "sq_tail",
            "cq_head", "phase", "opcode", "nlb", "lba_size", "qd", "random", "cid_base")] + \
        [(n, ctypes.c_uint64) for n in ("slba", "lba_range", "ncmds", "seed", "buf_base", "buf_slot",
            "prp_base", "timeout_ps", "done", "errors", "first_status", "t_start", "t_end")] + \
        [("t_complete", ctypes.POINTER(ctypes.c_uint64))]

# The host/link/endpoint counters (sim/harness.py), then this model's own (ssdh_stats).
HOST_STATS = PCIE_HOST_STATS + ["csts", "fatal", "active_cmds", "tlps_in_use"]
MODEL_STATE = ["temp", "throttle", "cache_used", "cache2_used", "valid_units", "stale_units",
    "erased_units", "phys_units", "tmt1_count", "tmt2_count", "tmt1_time", "tmt2_time",
    "bytes_written", "bytes_read", "media_free_ps", "err_count", "gc_phase"]

_lib = None

def load_harness():
    global _lib
    if _lib is None:
        _lib = load_library(build_harness(), {
            "ssdh_create": (P, [ctypes.c_char_p, ctypes.c_char_p, I]),
            "ssdh_destroy": (None, [P]),
            "ssdh_control": (I, [P, ctypes.c_char_p, ctypes.c_char_p, I]),
            "ssdh_poll_control": (None, [P]),
            "ssdh_stats": (I, [P, ctypes.POINTER(U64), I]),
            "ssdh_model": (I, [P, ctypes.POINTER(ctypes.c_double), I]),
            "ssdh_stream": (I, [P, ctypes.POINTER(StreamArgs)]),
        })
    return _lib

US = 1_000_000   # ps
MS = 1_000_000_000

class SSDError(Exception):
    pass

class SimSSD:
    """One simulated SSD + a root-complex/host-memory model, driven directly with TLPs.

    Host memory: one window at HOST_BASE (size host_mem). BAR0 is assigned at BAR0_ADDR by
    `enumerate()`. `init_controller()` brings up the admin queue (ASQ/ACQ in host memory).
    """
    HOST_BASE = 0x1_0000_0000 - 0x0100_0000   # 16 MiB below 4 GiB (3-DW addresses)
    BAR0_ADDR = 0xe000_0000

    def __init__(self, profile="ideal", host_mem=16 << 20, ns_size=64 << 20, lba_size=512,
                 link="gen3x4", mps=256, faults=(), opts=None, ns_file=None, tmpdir=None, index=0,
                 data_width=256, seed=1, cmd_log=None, sample_log=None, sample_us=None, ctl_path=None,
                 host_base=None, train=True):
        self.lib = load_harness()
        if ns_file is None:
            import tempfile
            self._tmp = tempfile.TemporaryDirectory(dir=tmpdir)
            ns_file = os.path.join(self._tmp.name, "ns.img")
        args = dict(index=index, profile=profile, link=link, mps=mps, lba_size=lba_size,
            ns_size=ns_size, ns_file=ns_file, faults=list(faults), opts=dict(opts or {}),
            data_width=data_width, seed=seed)
        if cmd_log: args["cmd_log"] = cmd_log
        if sample_log: args["sample_log"] = sample_log
        if sample_us: args["sample_us"] = sample_us
        if ctl_path: args["ctl_path"] = ctl_path
        self._attach(self.lib.ssdh_create, self.lib.ssdh_destroy, args, 1024, SSDError, host_base,
            host_mem, lba_size, ns_size, train)

    def _attach(self, create, destroy, args, err_size, error, host_base, host_mem, lba_size, ns_size,
                train):
        """Create the device with its harness' create call (JSON args; `error` on failure), map the
        host memory and train the link: the common part of the constructors (SimSSD, QemuNVMe).
        ns_size may be a callable, asked once the device exists."""
        self.args = args
        self._destroy = destroy
        err = ctypes.create_string_buffer(err_size)
        self.h = create(json.dumps(args).encode(), err, err_size)
        if not self.h:
            raise error(err.value.decode())
        self.host_base = host_base if host_base is not None else self.HOST_BASE
        if self.lib.pch_map(self.h, self.host_base, host_mem):
            raise error("host memory map failed")
        self.host_mem = host_mem
        self.lba_size = lba_size
        self.ns_size = ns_size() if callable(ns_size) else ns_size
        self.dstrd = 0
        self.bar0 = None
        self.queues = {}
        self._cid = 0
        self._alloc = self.host_base
        if train:
            self.perst(False)
            self.run_us(1000)

    # life cycle
    def close(self):
        if getattr(self, "h", None):
            self._destroy(self.h)
            self.h = None
        if getattr(self, "_tmp", None):
            self._tmp.cleanup()
            self._tmp = None

    def __enter__(self): return self
    def __exit__(self, *a): self.close()
    def __del__(self):
        try: self.close()
        except Exception: pass

    # time
    @property
    def now(self): return self.lib.pch_now(self.h)
    def run(self, ps): self.lib.pch_run(self.h, int(ps))
    def run_us(self, us): self.run(int(us * US))
    def perst(self, asserted): self.lib.pch_perst(self.h, 1 if asserted else 0)

    # host memory
    def alloc(self, size, align=4096):
        a = (self._alloc + align - 1) & ~(align - 1)
        if a + size > self.host_base + self.host_mem:
            raise SSDError("host memory exhausted")
        self._alloc = a + size
        return a

    def write_mem(self, addr, data):
        data = bytes(data)
        if self.lib.pch_mem_write(self.h, addr, data, len(data)):
            raise SSDError(f"host write outside memory: 0x{addr:x}")

    def read_mem(self, addr, n):
        buf = ctypes.create_string_buffer(n)
        if self.lib.pch_mem_read(self.h, addr, buf, n):
            raise SSDError(f"host read outside memory: 0x{addr:x}")
        return buf.raw

    def r32(self, addr): return struct.unpack("<I", self.read_mem(addr, 4))[0]

    # configuration / MMIO
    def cfg_read(self, reg, timeout_us=100):
        v = ctypes.c_uint32()
        st = self.lib.pch_cfg_read(self.h, reg, ctypes.byref(v), int(timeout_us * US))
        return st, v.value

    def cfg_write(self, reg, val, be=0xf, timeout_us=100):
        return self.lib.pch_cfg_write(self.h, reg, val & 0xffffffff, be, int(timeout_us * US))

    def cfg32(self, reg):
        st, v = self.cfg_read(reg)
        if st != 0:
            raise SSDError(f"config read 0x{reg:x}: completion status {st}")
        return v

    def mmio_read(self, off, n=4, timeout_us=100):
        buf = ctypes.create_string_buffer(max(n, 4))
        st = self.lib.pch_mmio_read(self.h, self.bar0 + off, buf, n, int(timeout_us * US))
        return st, buf.raw[:n]

    def rd32(self, off):
        st, b = self.mmio_read(off, 4)
        if st != 0:
            raise SSDError(f"MMIO read 0x{off:x}: completion status {st}")
        return struct.unpack("<I", b)[0]

    def rd64(self, off):
        st, b = self.mmio_read(off, 8)
        if st != 0:
            raise SSDError(f"MMIO read 0x{off:x}: completion status {st}")
        return struct.unpack("<Q", b)[0]

    def wr32(self, off, v):
        self.lib.pch_mmio_write(self.h, self.bar0 + off, struct.pack("<I", v & 0xffffffff), 4)
        self.run_us(2)

    def wr64(self, off, v):
        self.lib.pch_mmio_write(self.h, self.bar0 + off, struct.pack("<Q", v), 8)
        self.run_us(2)

    def send_raw(self, hdr, payload=b"", malformed=False):
        arr = (ctypes.c_uint32 * 4)(*(list(hdr) + [0] * (4 - len(hdr))))
        self.lib.pch_send_raw(self.h, arr, len(hdr), bytes(payload), len(payload), int(malformed))

    def control(self, cmd):
        out = ctypes.create_string_buffer(8192)
        rc = self.lib.ssdh_control(self.h, cmd.encode(), out, 8192)
        return rc, out.value.decode()

    def host_cfg(self, rcb=64, mps=256, cpl_latency_ns=200):
        self.lib.pch_host_cfg(self.h, rcb, mps, int(cpl_latency_ns * 1000))

    def host_fail(self, lo, hi, status=0, count=-1, poison=False, drop=False):
        self.lib.pch_host_fail(self.h, lo, hi, status, count, int(poison), int(drop))

    def host_fail_clear(self): self.lib.pch_host_fail_clear(self.h)

    def stats(self):
        arr = (ctypes.c_uint64 * 64)()
        n = self.lib.ssdh_stats(self.h, arr, 64)
        return dict(zip(HOST_STATS, arr[:n]))

    def model(self):
        arr = (ctypes.c_double * 64)()
        n = self.lib.ssdh_model(self.h, arr, 64)
        return dict(zip(MODEL_STATE, arr[:n]))

    def trace(self, on=True, clear=True):
        if clear: self.lib.pch_trace_clear(self.h)
        self.lib.pch_trace(self.h, int(on))

    def traced(self):
        n = self.lib.pch_trace_count(self.h)
        out = []
        for i in range(n):
            r = TraceRec()
            self.lib.pch_trace_get(self.h, i, ctypes.byref(r))
            out.append(r)
        return out

    # enumeration
    def enumerate(self, mps=256, mrrs=512, cmd=0x0006):
        """Assign BAR0, set DevCtl MPS/MRRS and the Command register (MEM|BME by default)."""
        self.cfg_write(0x10, 0xffffffff); self.cfg_write(0x14, 0xffffffff)
        self.cfg_write(0x10, self.BAR0_ADDR); self.cfg_write(0x14, 0)
        self.bar0 = self.BAR0_ADDR
        pcie = self.find_cap(0x10)
        enc = lambda b: (b // 128).bit_length() - 1
        ctl = self.cfg32(pcie + 8) & 0xffff
        ctl = (ctl & ~(0x7 << 5) & ~(0x7 << 12)) | (enc(mps) << 5) | (enc(mrrs) << 12)
        self.cfg_write(pcie + 8, ctl, be=0x3)
        self.cfg_write(0x04, cmd, be=0x3)
        self.host_cfg(mps=mps)
        return self

    def find_cap(self, cap_id):
        p = self.cfg32(0x34) & 0xff
        while p:
            v = self.cfg32(p)
            if v & 0xff == cap_id:
                return p
            p = (v >> 8) & 0xff
        return None

    # NVMe
    def init_controller(self, aq_size=32, timeout_us=100000, iosqes=6, iocqes=4, mps=0):
        cap = self.rd64(0x00)
        self.dstrd = (cap >> 32) & 0xf
        self.wr32(0x14, 0)
        self.wait_reg(0x1c, 1, 0, timeout_us)
        self.asq = self.alloc(aq_size * 64); self.acq = self.alloc(aq_size * 16)
        self.write_mem(self.asq, bytes(aq_size * 64)); self.write_mem(self.acq, bytes(aq_size * 16))
        self.wr32(0x24, ((aq_size - 1) << 16) | (aq_size - 1))
        self.wr64(0x28, self.asq); self.wr64(0x30, self.acq)
        self.wr32(0x14, 1 | (mps << 7) | (iosqes << 16) | (iocqes << 20))
        if not self.wait_reg(0x1c, 1, 1, timeout_us):
            raise SSDError(f"CSTS.RDY did not become 1 (CSTS=0x{self.rd32(0x1c):x})")
        self.queues = {0: dict(sq=self.asq, cq=self.acq, size=aq_size, cq_size=aq_size, tail=0,
            head=0, phase=1, cqid=0)}
        return self

    def wait_reg(self, off, mask, value, timeout_us, step_us=5):
        t_end = self.now + int(timeout_us * US)
        while self.now < t_end:
            if self.rd32(off) & mask == value:
                return True
            self.run_us(step_us)
        return self.rd32(off) & mask == value

    def db(self, qid, cq=False):
        return 0x1000 + (2 * qid + (1 if cq else 0)) * (4 << self.dstrd)

    def next_cid(self):
        self._cid = (self._cid + 1) & 0xffff
        return self._cid

    def submit(self, qid, sqe, ring=True):
        """Write a 64-byte SQE (list of 16 dwords) at the SQ tail; returns its CID."""
        q = self.queues[qid]
        sqe = list(sqe) + [0] * (16 - len(sqe))
        self.write_mem(q["sq"] + q["tail"] * 64, struct.pack("<16I", *[x & 0xffffffff for x in sqe]))
        q["tail"] = (q["tail"] + 1) % q["size"]
        if ring:
            self.ring(qid)
        return sqe[0] >> 16

    def ring(self, qid):
        self.lib.pch_mmio_write(self.h, self.bar0 + self.db(qid), struct.pack("<I", self.queues[qid]["tail"]), 4)

    def poll_cqe(self, qid, timeout_us=20000, ack=True):
        """Wait for the next CQE of queue qid's CQ; returns dict(dw0, sqhd, sqid, cid, phase, sct, sc, dnr, more)."""
        q = self.queues[qid]
        cq = self.queues[q["cqid"]] if q["cqid"] != qid else q
        addr = cq["cq"] + cq["head"] * 16
        if not self.lib.pch_wait_mem(self.h, addr + 12, 1 << 16, cq["phase"] << 16, int(timeout_us * US)):
            return None
        dw = struct.unpack("<4I", self.read_mem(addr, 16))
        cqe = dict(dw0=dw[0], dw1=dw[1], sqhd=dw[2] & 0xffff, sqid=dw[2] >> 16, cid=dw[3] & 0xffff,
            phase=(dw[3] >> 16) & 1, sc=(dw[3] >> 17) & 0xff, sct=(dw[3] >> 25) & 7,
            more=(dw[3] >> 30) & 1, dnr=(dw[3] >> 31) & 1, t=self.now)
        cq["head"] += 1
        if cq["head"] == cq["cq_size"]:
            cq["head"] = 0
            cq["phase"] ^= 1
        if ack:
            self.lib.pch_mmio_write(self.h, self.bar0 + self.db(q["cqid"], cq=True), struct.pack("<I", cq["head"]), 4)
        return cqe

    def cmd(self, qid, opc, nsid=0, cdw=None, prp1=0, prp2=0, timeout_us=50000, fuse=0, psdt=0):
        """Submit one command, wait for its CQE (returned)."""
        cid = self.next_cid()
        sqe = [0] * 16
        sqe[0] = opc | (fuse << 8) | (psdt << 14) | (cid << 16)
        sqe[1] = nsid
        sqe[6], sqe[7] = prp1 & 0xffffffff, prp1 >> 32
        sqe[8], sqe[9] = prp2 & 0xffffffff, prp2 >> 32
        for k, v in (cdw or {}).items():
            sqe[k] = v & 0xffffffff
        self.submit(qid, sqe)
        cqe = self.poll_cqe(qid, timeout_us)
        if cqe is None:
            raise SSDError(f"no CQE for opcode 0x{opc:02x} cid {cid} within {timeout_us} us")
        return cqe

    def admin(self, opc, **kw):
        return self.cmd(0, opc, **kw)

    def create_io_queue(self, qid, size=64, cq_size=None, ien=False, iv=0):
        cq_size = cq_size or size
        cq = self.alloc(cq_size * 16); sq = self.alloc(size * 64)
        self.write_mem(cq, bytes(cq_size * 16))
        c = self.admin(0x05, prp1=cq, cdw={10: ((cq_size - 1) << 16) | qid, 11: (iv << 16) | (2 if ien else 0) | 1})
        if c["sct"] or c["sc"]:
            raise SSDError(f"Create I/O CQ failed: {c}")
        c = self.admin(0x01, prp1=sq, cdw={10: ((size - 1) << 16) | qid, 11: (qid << 16) | 1})
        if c["sct"] or c["sc"]:
            raise SSDError(f"Create I/O SQ failed: {c}")
        self.queues[qid] = dict(sq=sq, cq=cq, size=size, cq_size=cq_size, tail=0, head=0, phase=1, cqid=qid)
        return self.queues[qid]

    def prps_for(self, buf, nbytes, list_addr=None):
        """PRP1/PRP2 for a contiguous host buffer (builds a PRP list when needed)."""
        page = 4096
        first = page - (buf % page)
        if nbytes <= first:
            return buf, 0
        rem = nbytes - first
        if rem <= page:
            return buf, buf + first
        pages = [buf + first + i * page for i in range((rem + page - 1) // page)]
        la = list_addr or self.alloc(len(pages) * 8 + 8, align=8)
        self.write_mem(la, struct.pack(f"<{len(pages)}Q", *pages))
        return buf, la

    def io(self, opc, slba, nlb, buf=0, qid=1, prp1=None, prp2=None, extra=None, timeout_us=100000, nsid=1):
        """Read (2) / write (1) nlb blocks (1-based count) at slba using buf (contiguous)."""
        if prp1 is None:
            prp1, prp2 = self.prps_for(buf, nlb * self.lba_size) if buf else (0, 0)
        cdw = {10: slba & 0xffffffff, 11: slba >> 32, 12: (nlb - 1) & 0xffff}
        cdw.update(extra or {})
        return self.cmd(qid, opc, nsid=nsid, cdw=cdw, prp1=prp1, prp2=prp2 or 0, timeout_us=timeout_us)

    def stream(self, opcode, slba, nlb, ncmds, qd=32, qid=1, random=False, lba_range=None,
               buf_base=None, timeout_us=1_000_000, times=False, seed=1):
        """Keep qd commands of nlb blocks in flight (C loop); returns a dict of results."""
        q = self.queues[qid]
        nbytes = nlb * self.lba_size
        if not hasattr(self, "_stream_bufs") or self._stream_bufs[0] < qd * ((nbytes + 4095) & ~4095):
            slot = (nbytes + 4095) & ~4095
            self._stream_bufs = (qd * slot, self.alloc(qd * slot), self.alloc(qd * 4096), slot)
        _, bufs, prps, slot = self._stream_bufs
        a = StreamArgs(sq_base=q["sq"], cq_base=q["cq"], bar0=self.bar0, sqid=qid, cqid=q["cqid"],
            sq_size=q["size"], cq_size=q["cq_size"], dstrd=self.dstrd, sq_tail=q["tail"],
            cq_head=q["head"], phase=q["phase"], opcode=opcode, nlb=nlb - 1, lba_size=self.lba_size,
            qd=qd, random=int(random), cid_base=0x8000, slba=slba,
            lba_range=lba_range or (self.ns_size // self.lba_size - slba), ncmds=ncmds, seed=seed,
            buf_base=buf_base or bufs, buf_slot=slot, prp_base=prps, timeout_ps=int(timeout_us * US))
        tarr = None
        if times:
            tarr = (ctypes.c_uint64 * ncmds)()
            a.t_complete = tarr
        rc = self.lib.ssdh_stream(self.h, ctypes.byref(a))
        q["tail"], q["head"], q["phase"] = a.sq_tail, a.cq_head, a.phase
        res = dict(rc=rc, done=a.done, errors=a.errors, first_status=a.first_status,
            t_start=a.t_start, t_end=a.t_end, bytes=a.done * nbytes)
        res["seconds"] = (a.t_end - a.t_start) / 1e12
        res["Bps"] = res["bytes"] / res["seconds"] if res["seconds"] > 0 else 0
        if times:
            res["times"] = list(tarr)
        return res

    def bring_up(self, mps=256, mrrs=512, qid=1, qsize=256, **kw):
        """enumerate + init_controller + one I/O queue pair: the common test preamble."""
        self.enumerate(mps=mps, mrrs=mrrs)
        self.init_controller(**kw)
        if qid:
            self.create_io_queue(qid, size=qsize)
        return self

# Measurements shared by the tests and test/bench_ssd_model.py ------------------------------------------

def lane_rate(gen):
    return {1: 2.5e9 * 8 / 10 / 8, 2: 5e9 * 8 / 10 / 8, 3: 8e9 * 128 / 130 / 8, 4: 16e9 * 128 / 130 / 8}[gen]

def link_limit(link, mps, direction, dllp_pct=2.0):
    """Payload limit (B/s) of a saturated direction: 'cpld' (host -> device, 3-DW completions,
    20 B overhead) or 'mwr' (device -> host, 4-DW writes, 24 B overhead), with the DLLP share."""
    gen, width = parse_link(link)
    over = 20 if direction == "cpld" else 24
    return lane_rate(gen) * width * mps / (mps + over) / (1 + dllp_pct / 100)

def measure_link(link="gen3x4", mps=256, direction="cpld", ncmds=400, nlb=256, qd=32, tmpdir=None):
    """Saturate one direction with the `ideal` profile; returns (measured B/s, limit B/s).
    Host memory above 4 GiB so that the device's writes use 4-DW headers."""
    with SimSSD(profile="ideal", link=link, mps=4096, ns_size=256 << 20,
                host_mem=64 << 20, host_base=0x1_0000_0000, tmpdir=tmpdir,
                opts={"max_tags": 64}) as d:
        d.bring_up(mps=mps, mrrs=4096)
        d.host_cfg(rcb=64, mps=mps)
        op = 1 if direction == "cpld" else 2
        r = d.stream(op, 0, nlb, ncmds, qd=qd, times=True)
        assert r["errors"] == 0, r
        t = r["times"]
        k = ncmds // 5                                   # skip the ramp-up
        rate = (ncmds - 1 - k) * nlb * 512 / ((t[-1] - t[k]) / 1e12)
        return rate, link_limit(link, mps, direction)

def rate_bins(times, t0, bytes_per_cmd, bin_cmds):
    """[(bytes written at the end of the bin, B/s in the bin)] from completion times (ps)."""
    out, prev_t, prev_i = [], t0, 0
    for i in range(bin_cmds - 1, len(times), bin_cmds):
        dt = (times[i] - prev_t) / 1e12
        out.append(((i + 1) * bytes_per_cmd, (i + 1 - prev_i) * bytes_per_cmd / dt))
        prev_t, prev_i = times[i], i + 1
    return out
