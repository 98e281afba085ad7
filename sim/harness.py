#
# This file is part of LiteRecorder.
#
# SPDX-License-Identifier: BSD-2-Clause

"""What the standalone harness libraries of the simulated devices share on the Python side (the
SSD model's libsimssd.so, sim/ssd.py; the QEMU bridge's libqemubridge.so, sim/qemu.py): building
a library, loading it with the ctypes signatures of the common host-side calls (pch_*, in
sim/modules/common/pcie_harness.c) and of the device's own, the TLP trace record and the
host/link/endpoint counters.
"""

import os
import fcntl
import ctypes
import subprocess

def make_harness(module_dir, out_dir, lib_name, what):
    """Build a sim module's standalone harness library (its Makefile's ``harness`` target) into
    ``out_dir``, with a file lock for parallel test workers; returns the library's path."""
    os.makedirs(out_dir, exist_ok=True)
    lib = os.path.join(out_dir, lib_name)
    with open(os.path.join(out_dir, ".lock"), "w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        try:
            r = subprocess.run(["make", "-s", "-f", os.path.join(module_dir, "Makefile"), "harness",
                f"HARNESS_DIR={out_dir}"], capture_output=True, text=True)
            if r.returncode != 0:
                raise RuntimeError(f"building the {what} harness failed:\n" + r.stdout + r.stderr)
        finally:
            fcntl.flock(lock, fcntl.LOCK_UN)
    return lib

class TraceRec(ctypes.Structure):
    _fields_ = [("t_ps", ctypes.c_uint64), ("addr", ctypes.c_uint64), ("hdr0", ctypes.c_uint32),
        ("hdr1", ctypes.c_uint32), ("hdr2", ctypes.c_uint32), ("dir", ctypes.c_uint32),
        ("plen", ctypes.c_uint32)]

    @property
    def fmttype(self): return self.hdr0 >> 24
    @property
    def length(self):
        n = self.hdr0 & 0x3ff
        return (n or 1024) * 4
    @property
    def tag(self):
        return (self.hdr2 >> 8) & 0xff if (self.fmttype & 0xbe) == 0x0a else (self.hdr1 >> 8) & 0xff
    @property
    def is_mrd(self): return self.fmttype in (0x00, 0x20)
    @property
    def is_mwr(self): return self.fmttype in (0x40, 0x60)
    @property
    def is_cpl(self): return (self.fmttype & 0xbe) == 0x0a
    @property
    def ep(self): return (self.hdr0 >> 14) & 1
    @property
    def byte_count(self):
        return (self.hdr1 & 0xfff) or 4096
    @property
    def cpl_status(self): return (self.hdr1 >> 13) & 7
    @property
    def lower_addr(self): return self.hdr2 & 0x7f

# Counters of the harnesses' host, link and endpoint (pch_stats_with in sim/modules/common/
# pcie_harness.c, same order), then each model's own.
PCIE_HOST_STATS = ["rogue_writes", "rogue_reads", "rogue_first_addr", "mwr_bytes", "mrd_bytes",
    "mwr_tlps", "mrd_tlps", "poisoned_rx", "malformed_rx", "mps_violations", "mrrs_violations",
    "boundary_violations", "msgs_rx", "up_tlps", "up_payload", "up_wire", "dn_tlps", "dn_payload",
    "dn_wire", "dropped_tlps", "ur_sent", "ca_sent", "crs_sent", "dev_malformed_rx",
    "unexpected_cpl", "dma_refused", "cpl_timeouts", "mrd_sent", "mwr_sent", "cpld_rx",
    "max_mrd_len", "max_mwr_len", "link_up", "link_gen", "link_width", "ltssm", "link_downs",
    "retrains"]

P, U64, U32, I, UINT = ctypes.c_void_p, ctypes.c_uint64, ctypes.c_uint32, ctypes.c_int, ctypes.c_uint

# The common host-side calls (sim/modules/common/pcie_harness.h) on a device's harness handle.
PCH_SIGNATURES = {
    "pch_map": (I, [P, U64, U64]),
    "pch_now": (U64, [P]),
    "pch_run": (None, [P, U64]),
    "pch_run_until": (None, [P, U64]),
    "pch_perst": (None, [P, I]),
    "pch_mem_write": (I, [P, U64, ctypes.c_char_p, U64]),
    "pch_mem_read": (I, [P, U64, P, U64]),
    "pch_cfg_read": (I, [P, UINT, ctypes.POINTER(U32), U64]),
    "pch_cfg_write": (I, [P, UINT, U32, UINT, U64]),
    "pch_mmio_read": (I, [P, U64, P, UINT, U64]),
    "pch_mmio_write": (I, [P, U64, ctypes.c_char_p, UINT]),
    "pch_wait_mem": (I, [P, U64, U32, U32, U64]),
    "pch_host_cfg": (None, [P, UINT, UINT, U64]),
    "pch_host_fail": (I, [P, U64, U64, I, I, I, I]),
    "pch_host_fail_clear": (None, [P]),
    "pch_trace": (None, [P, I]),
    "pch_trace_clear": (None, [P]),
    "pch_trace_count": (U64, [P]),
    "pch_trace_get": (I, [P, U64, ctypes.POINTER(TraceRec)]),
    "pch_send_raw": (None, [P, ctypes.POINTER(U32), I, ctypes.c_char_p, UINT, I]),
}

def load_library(path, own):
    """Load a harness library and set the signatures of the common calls and of the device's own
    (``own``: name -> (restype, argtypes))."""
    lib = ctypes.CDLL(path)
    for name, (res, argt) in {**PCH_SIGNATURES, **own}.items():
        f = getattr(lib, name)
        f.restype, f.argtypes = res, argt
    return lib
