#
# This file is part of LiteRecorder.
#
# SPDX-License-Identifier: BSD-2-Clause

"""QEMU NVMe bridge: command-line options, module arguments of the LiteX sim module `qemu_nvme`,
validation, a helper to read QEMU's disk image, and a ctypes harness (bridge + QEMU + the common
root-complex/host-memory model, no RTL) for tests.

    parser = argparse.ArgumentParser(); add_qemu_arguments(parser)
    args = parser.parse_args()
    devices = [("qemu_nvme", qemu_module_args(args, i, run_dir, 100e6, 256)) for i in range(n)]

See doc/qemu_bridge.md.
"""

import os
import shutil
import ctypes
import struct

from .ssd import parse_size, parse_number, parse_link, SimSSD, SSDError, US
from .harness import make_harness, load_library, PCIE_HOST_STATS, P, U64, I

ROOT         = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
MODULE_DIR   = os.path.join(ROOT, "sim", "modules", "qemu_nvme")
HARNESS_DIR  = os.path.join(ROOT, "build", "qemu_harness")

QEMU_BIN         = "qemu-system-x86_64"
QEMU_PACKAGE     = "qemu-system-x86"
DEFAULT_SIZE     = 64 << 20
DEFAULT_TIMEOUT  = 10.0          # seconds (wall clock) for QEMU to answer / complete a command
MISSING_MESSAGE  = f"{QEMU_BIN} not found: install the Debian package {QEMU_PACKAGE}"

class QemuError(Exception):
    pass

# Binary ----------------------------------------------------------------------------------------------

def find_qemu(qemu_bin=None):
    """Path of the QEMU binary (a path, or a name looked up in PATH); raises ValueError with the
    package to install when it is missing."""
    name = qemu_bin or QEMU_BIN
    if os.sep in name:
        if os.path.isfile(name) and os.access(name, os.X_OK):
            return os.path.abspath(name)
        raise ValueError(f"{name} not found (or not executable): install the Debian package "
            f"{QEMU_PACKAGE} or give the path of {QEMU_BIN}")
    path = shutil.which(name)
    if not path:
        raise ValueError(f"{name} not found: install the Debian package {QEMU_PACKAGE}")
    return path

def qemu_available(qemu_bin=None):
    try:
        find_qemu(qemu_bin)
        return True
    except ValueError:
        return False

# argparse ------------------------------------------------------------------------------------------

def add_qemu_arguments(parser):
    """Options of the QEMU NVMe bridge (every value is checked by qemu_module_args)."""
    g = parser.add_argument_group("QEMU NVMe bridge (doc/qemu_bridge.md)")
    g.add_argument("--qemu-image", default=None, metavar="PATH",
        help="Raw disk image of QEMU's namespace (default: <run dir>/qemuN.img; with several SSDs "
             "'{i}' in PATH is replaced by the index, else '.N' is appended). Created sparse if missing.")
    g.add_argument("--qemu-size", default=None, metavar="SIZE",
        help="Size of a new image (e.g. 64MiB, 1GiB; default 64 MiB). An existing image keeps its "
             "size; giving another size for it is an error.")
    g.add_argument("--qemu-lba-size", default=512, type=int, metavar="512|4096",
        help="Logical block size of QEMU's namespace (default: %(default)s).")
    g.add_argument("--qemu-bin", default=QEMU_BIN, metavar="PATH",
        help=f"QEMU binary (default: {QEMU_BIN} from PATH, Debian package {QEMU_PACKAGE}).")
    g.add_argument("--qemu-timeout", default=DEFAULT_TIMEOUT, type=float, metavar="SECONDS",
        help="Wall-clock bound for QEMU to start, to answer a request and to complete a command "
             "(default: %(default)s).")
    g.add_argument("--qemu-mdts", default=7, type=int, metavar="N",
        help="MDTS of QEMU's controller, 2^N x 4 KiB (0 = no limit; default: %(default)s = 512 KiB).")
    g.add_argument("--qemu-queues", default=64, type=int, metavar="N",
        help="I/O queue pairs of QEMU's controller (max_ioqpairs, default: %(default)s).")
    return parser

def _image_path(args, index, run_dir):
    img = getattr(args, "qemu_image", None)
    if img is None:
        return os.path.join(run_dir, f"qemu{index}.img")
    if getattr(args, "ssds", 1) > 1:
        img = img.replace("{i}", str(index)) if "{i}" in img else f"{img}.{index}"
    return img

def qemu_module_args(args, index, run_dir, sys_clk_freq=100e6, data_width=256):
    """JSON args of the `qemu_nvme` module instance of port `index` (raises ValueError)."""
    bin_path = find_qemu(getattr(args, "qemu_bin", None))
    if not (0 <= index <= 7):
        raise ValueError(f"SSD index {index}: allowed 0..7")
    if data_width not in (64, 128, 256, 512):
        raise ValueError(f"data_width {data_width}: allowed 64, 128, 256, 512")
    lba = int(getattr(args, "qemu_lba_size", 512))
    if lba not in (512, 4096):
        raise ValueError(f"--qemu-lba-size {lba}: allowed 512 or 4096")
    image = os.path.abspath(_image_path(args, index, run_dir))
    if "," in image:
        raise ValueError(f"--qemu-image {image}: QEMU does not accept ',' in an image path")
    size_arg = getattr(args, "qemu_size", None)
    if os.path.exists(image):
        if not os.path.isfile(image):
            raise ValueError(f"--qemu-image {image}: not a regular file")
        have = os.path.getsize(image)
        if size_arg is not None and parse_size(size_arg, "--qemu-size") != have:
            raise ValueError(f"--qemu-image {image} exists with {have} bytes, not --qemu-size "
                f"{size_arg} (remove it or give its size)")
        if have == 0 or have % lba:
            raise ValueError(f"--qemu-image {image}: {have} bytes is not a positive multiple of "
                f"the LBA size {lba}")
        size = have                                # the file as it is
    else:
        size = parse_size(size_arg, "--qemu-size") if size_arg is not None else DEFAULT_SIZE
        if size <= 0 or size % lba:
            raise ValueError(f"--qemu-size {size_arg}: {size} bytes is not a positive multiple of "
                f"the LBA size {lba}")
    timeout = float(getattr(args, "qemu_timeout", DEFAULT_TIMEOUT))
    if not (0 < timeout <= 3600):
        raise ValueError(f"--qemu-timeout {timeout}: allowed 0 < SECONDS <= 3600")
    mdts = int(getattr(args, "qemu_mdts", 7))
    if not (0 <= mdts <= 15):
        raise ValueError(f"--qemu-mdts {mdts}: allowed 0..15")
    queues = int(getattr(args, "qemu_queues", 64))
    if not (1 <= queues <= 1024):
        raise ValueError(f"--qemu-queues {queues}: allowed 1..1024")
    gen, width = parse_link(getattr(args, "link", "gen3x4"))
    return dict(
        index            = index,
        sys_clk_hz       = int(sys_clk_freq),
        data_width       = int(data_width),
        qemu_bin         = bin_path,
        image            = image,
        image_size       = size,
        lba_size         = lba,
        log              = os.path.abspath(os.path.join(run_dir, f"qemu{index}.log")),
        serial           = f"LRQEMU{index}",
        mdts             = mdts,
        max_ioqpairs     = queues,
        link             = f"gen{gen}x{width}",
        start_timeout_ms = int(timeout * 1000),
        io_timeout_ms    = int(timeout * 1000),
        cmd_timeout_ms   = int(timeout * 1000),
    )

def read_image(path, offset, length):
    """Bytes of QEMU's raw disk image (ordinary file I/O; holes read as zeroes)."""
    with open(path, "rb") as f:
        f.seek(offset)
        data = f.read(length)
    return data + bytes(length - len(data))

def read_lbas(path, lba, count, lba_size=512):
    return read_image(path, lba * lba_size, count * lba_size)

# Harness ------------------------------------------------------------------------------------------

def build_harness(out_dir=HARNESS_DIR):
    """Build libqemubridge.so (see ``sim.harness.make_harness``); returns its path."""
    return make_harness(MODULE_DIR, out_dir, "libqemubridge.so", "QEMU bridge")

QEMU_STATS = PCIE_HOST_STATS + ["fatal", "active_cmds", "tlps_in_use",
    "cfg_reads", "cfg_writes", "bar_reads", "bar_writes", "doorbells", "cmds", "cqes",
    "fetch_bytes", "fetch_jobs", "wb_bytes", "sqe_bytes", "list_bytes", "dma_failures",
    "neutered", "unknown_cqes", "timeouts", "qemu_requests", "zeroed_bytes", "intx_events",
    "cfs_events", "flr", "resets", "no_mirror", "jobs", "ops"]

_lib = None

def load_harness():
    global _lib
    if _lib is None:
        _lib = load_library(build_harness(), {
            "qbh_create": (P, [ctypes.c_char_p, ctypes.c_char_p, I]),
            "qbh_destroy": (None, [P]),
            "qbh_busy": (I, [P]),
            "qbh_qemu_pid": (I, [P]),
            "qbh_kill_qemu": (I, [P, I]),
            "qbh_fatal": (I, [P, ctypes.c_char_p, I]),
            "qbh_config": (None, [P, ctypes.c_char_p, I]),
            "qbh_shm_read": (I, [P, U64, P, U64]),
            "qbh_stats": (I, [P, ctypes.POINTER(U64), I]),
        })
    return _lib

class QemuNVMe(SimSSD):
    """QEMU's NVMe controller behind the bridge + the root-complex/host-memory model, driven with
    TLPs through the same helpers as SimSSD (enumerate, init_controller, admin, io, ...).

    Host memory: one window at host_base (size host_mem), below 4 GiB (QEMU's mirrored range).
    While QEMU works, modeled time advances by `poll_ns` for every `block_us` of wall time (the
    bridge waits for QEMU), so the modeled timeouts of the helpers are not eaten by QEMU's latency;
    the bridge's own wall-clock bound (`timeout_s`) applies."""
    HOST_BASE = 0x9000_0000

    def __init__(self, image=None, image_size=DEFAULT_SIZE, lba_size=512, host_mem=16 << 20,
                 host_base=None, tmpdir=None, index=0, link="gen3x4", mdts=7, queues=64,
                 timeout_s=DEFAULT_TIMEOUT, qemu_bin=None, log=None, data_width=256, train=True,
                 block_us=2000, poll_ns=1000, extra=None):
        self.lib = load_harness()
        self._tmp = None
        if image is None:
            import tempfile
            self._tmp = tempfile.TemporaryDirectory(dir=tmpdir)
            image = os.path.join(self._tmp.name, "qemu.img")
        bin_path = find_qemu(qemu_bin)
        log = log or image + ".log"
        args = dict(index=index, qemu_bin=bin_path, image=os.path.abspath(image),
            image_size=0 if os.path.exists(image) else image_size, lba_size=lba_size, log=log,
            link=link, mdts=mdts, max_ioqpairs=queues, data_width=data_width,
            start_timeout_ms=int(timeout_s * 1000), io_timeout_ms=int(timeout_s * 1000),
            cmd_timeout_ms=int(timeout_s * 1000), block_us=block_us, poll_ns=poll_ns)
        args.update(extra or {})
        self.image, self.log = args["image"], log
        # The image exists once the bridge is created (it makes it).
        self._attach(self.lib.qbh_create, self.lib.qbh_destroy, args, 2048, QemuError, host_base,
            host_mem, lba_size, lambda: os.path.getsize(args["image"]), train)

    @property
    def qemu_pid(self):
        return self.lib.qbh_qemu_pid(self.h)

    def kill_qemu(self, sig=9):
        return self.lib.qbh_kill_qemu(self.h, sig)

    def fatal(self):
        buf = ctypes.create_string_buffer(512)
        f = self.lib.qbh_fatal(self.h, buf, 512)
        return bool(f), buf.value.decode()

    def config(self):
        buf = ctypes.create_string_buffer(2048)
        self.lib.qbh_config(self.h, buf, 2048)
        return dict(kv.split("=", 1) for kv in buf.value.decode().split())

    def shm_read(self, addr, n):
        """QEMU's view of host memory at addr (the bridge's shared memory)."""
        buf = ctypes.create_string_buffer(n)
        if self.lib.qbh_shm_read(self.h, addr, buf, n):
            raise QemuError(f"shared memory read outside the mirrored range: 0x{addr:x}")
        return buf.raw

    def stats(self):
        arr = (ctypes.c_uint64 * 128)()
        n = self.lib.qbh_stats(self.h, arr, 128)
        return dict(zip(QEMU_STATS, arr[:n]))

    def model(self):
        raise QemuError("QEMU has no performance model")

    def control(self, cmd):
        raise QemuError("QEMU has no control channel")

    def image_read(self, offset, length):
        return read_image(self.image, offset, length)

    def settle(self, timeout_us=1000):
        """Run until the bridge has nothing pending (writes back done)."""
        t_end = self.now + int(timeout_us * US)
        while self.lib.qbh_busy(self.h) and self.now < t_end:
            self.run_us(1)
