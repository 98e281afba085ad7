#!/usr/bin/env python3
#
# This file is part of LiteRecorder.
#
# SPDX-License-Identifier: BSD-2-Clause

"""The CPU-less recorder (soc/coreless_soc.py) in the full-system Verilator simulation, driven by
its registers only.

    ./targets/coreless_sim.py --build-only
    ./targets/coreless_sim.py --ssds 2 --record 16MiB        # bring-up, record, replay, check

There is no CPU and no console: the registers are reached through LiteX's UARTBone protocol
(``Stream2Wishbone`` on the simulated serial port, the simulation's ``serial2tcp`` module on a
local TCP port) with LiteX's own client, ``litex.tools.remote.comm_uart.CommUART``, and the CSR
map the build wrote (csr.csv, generated/csr.h). The same build machinery as targets/sim.py
(``SimBuild``: one Verilator build per configuration, the simulated SSDs as run-time arguments).
"""

import os
import re
import sys
import time
import socket
import signal
import argparse
import subprocess

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import _bootstrap # noqa: F401 -- makes the checkout importable as `literecorder` (installed or not).

from literecorder.targets.sim import SimBuild, SimError, ssd_devices, ssd_parser
from literecorder.soc.recorder_soc import parse_size

# Build --------------------------------------------------------------------------------------------

class CorelessSimBuild(SimBuild):
    """``SimBuild`` of ``LiteRecorderCorelessSimSoC``: no BIOS (no profile-guided build, whose
    training run boots one), the serial port on ``serial2tcp`` instead of the console."""
    def __init__(self, output_dir=None, sys_clk_freq=None, n_ssds=1, pcie_data_width=256, dram="sim",
        jobs=None, verbose=False, trace=False):
        from literecorder.soc.coreless_soc import LiteRecorderCorelessSimSoC
        SimBuild.__init__(self, output_dir="/nonexistent", sys_clk_freq=sys_clk_freq, n_ssds=n_ssds,
            pcie_data_width=pcie_data_width, dram=dram, jobs=jobs, verbose=verbose, trace=trace, pgo=False)
        self.soc_cls    = LiteRecorderCorelessSimSoC
        self.output_dir = os.path.abspath(output_dir or self.default_output_dir())
        self.gateware   = os.path.join(self.output_dir, "gateware")
        self.vsim       = os.path.join(self.gateware, "obj_dir", "Vsim")
        self.bridge_port = None

    def _make(self, make, env):
        # LiteX's serial2tcp module carries the register bridge (sim/verilator/sim.mk builds it).
        SimBuild._make(self, make + ["LITEX_MODULES=serial2tcp clocker"], env)

    def sim_config(self, devices=None, simio=None, layout=None):
        from litex.build.sim.config import SimConfig
        cfg = SimConfig()
        cfg.add_clocker("sys_clk", freq_hz=self.sys_clk_freq)
        cfg.add_module("serial2tcp", "serial", args={"port": self.bridge_port or 1})
        for i, (module, args) in enumerate(devices or []):
            if module is not None:              # (None, {}): nothing on that port (no drive).
                cfg.add_module(module, ("pcie", i), args=args)
        return cfg

    def csr_fields(self):
        """{register: {field: (offset, size)}} from the build's generated/csr.h."""
        path = os.path.join(self.output_dir, "software", "include", "generated", "csr.h")
        fields = {}
        # Register names are known from csr.csv: split the define on the longest register prefix.
        regs = sorted(self.csr_registers(), key=len, reverse=True)
        for name, kind, value in re.findall(r"#define CSR_(\w+)_(OFFSET|SIZE) (\d+)", open(path).read()):
            name = name.lower()
            reg = next((r for r in regs if name.startswith(r + "_")), None)
            if reg is None:
                continue
            f = fields.setdefault(reg, {}).setdefault(name[len(reg) + 1:], [0, 0])
            f[0 if kind == "OFFSET" else 1] = int(value)
        return {r: {f: tuple(v) for f, v in fs.items()} for r, fs in fields.items()}

    def csr_registers(self):
        regs = []
        for line in open(os.path.join(self.output_dir, "csr.csv")):
            parts = line.strip().split(",")
            if parts[0] == "csr_register":
                regs.append(parts[1])
        return regs

# Register access ----------------------------------------------------------------------------------

def _free_port():
    s = socket.socket()
    s.bind(("127.0.0.1", 0))
    port = s.getsockname()[1]
    s.close()
    return port

class CorelessSession:
    """A running CPU-less simulation and its registers (``reg(name)``, ``write(name, value)``,
    ``field(register, field)``), through LiteX's ``CommUART`` over the simulation's TCP port. The
    simulation runs freely meanwhile (its modeled time does not wait for the client). The process is
    always killed on close."""
    def __init__(self, build, name="run", devices=None, fresh=True, connect_timeout=120, io_timeout=60):
        from litex.tools.remote.comm_uart import CommUART
        self.build = build
        build.bridge_port = _free_port()
        self.run_dir = build.prepare_run(name, devices, None, fresh)
        self.devices = build.devices
        self.log     = open(os.path.join(self.run_dir, "sim.log"), "wb", buffering=0)
        self.proc    = subprocess.Popen([build.vsim], cwd=self.run_dir, stdin=subprocess.PIPE,
            stdout=self.log, stderr=subprocess.STDOUT, start_new_session=True)
        self.fields  = build.csr_fields()
        self.io_timeout = io_timeout
        deadline = time.time() + connect_timeout
        session = self
        class _Comm(CommUART):
            def _read(self, length):
                # CommUART waits forever; a stopped simulation must end the test instead.
                r, t0 = b"", time.time()
                while len(r) < length:
                    r += self.port.read(length - len(r))
                    if len(r) < length and (time.time() - t0 > session.io_timeout or session.proc.poll() is not None):
                        raise SimError(f"no answer from the simulation's register bridge ({session.tail()})")
                return r
        while True:
            try:
                self.comm = _Comm(f"socket://127.0.0.1:{build.bridge_port}",
                    csr_csv=os.path.join(build.output_dir, "csr.csv"))
                self.comm.port.timeout = 0.5
                break
            except Exception as e:
                if self.proc.poll() is not None or time.time() > deadline:
                    self.close()
                    raise SimError(f"cannot reach the simulation's register bridge on port {build.bridge_port}: "
                        f"{e} ({self.tail()})")
                time.sleep(0.2)

    def tail(self, n=5):
        try:
            return " | ".join(open(os.path.join(self.run_dir, "sim.log"), errors="replace").read().splitlines()[-n:])
        except OSError:
            return "no log"

    def reg(self, name):
        return getattr(self.comm.regs, name).read()

    def write(self, name, value):
        getattr(self.comm.regs, name).write(value)

    def field(self, register, field, value=None):
        """Field ``field`` of ``value`` (default: the register read now)."""
        off, size = self.fields[register][field]
        v = self.reg(register) if value is None else value
        return (v >> off) & ((1 << size) - 1)

    def pack(self, register, **values):
        """A register value with the given fields (others 0)."""
        v = 0
        for f, x in values.items():
            off, size = self.fields[register][f]
            if not 0 <= x < (1 << size):
                raise ValueError(f"{register}.{f} = {x}: {size} bits")
            v |= x << off
        return v

    def wait(self, cond, timeout=300, interval=0.05, what="the condition"):
        """Polls ``cond()`` (wall-clock ``timeout``); returns its last true value."""
        t0 = time.time()
        while True:
            v = cond()
            if v:
                return v
            if time.time() - t0 > timeout:
                raise SimError(f"timeout waiting for {what}")
            if self.proc.poll() is not None:
                raise SimError(f"the simulation exited ({self.tail()})")
            time.sleep(interval)

    def close(self):
        try:
            if getattr(self, "comm", None):
                self.comm.close()
        except Exception:
            pass
        if self.proc.poll() is None:
            try:
                os.killpg(self.proc.pid, signal.SIGKILL)
            except ProcessLookupError:
                pass
            self.proc.wait(timeout=10)
        self.log.close()

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.close()

    # The core's procedures ------------------------------------------------------------------------

    def bringup(self, port):
        """{ready, failed, busy, link_up, refused, step, code, detail} of port ``port``."""
        st = self.reg(f"bringup{port}_status")
        r = {f: self.field(f"bringup{port}_status", f, st) for f in self.fields[f"bringup{port}_status"]}
        r["detail"] = self.reg(f"bringup{port}_detail")
        return r

    def wait_bringup(self, ports, timeout=300):
        """Waits until every port in ``ports`` is ready or failed; returns their states."""
        def done():
            s = [self.bringup(p) for p in ports]
            return s if all(x["ready"] or x["failed"] for x in s) else None
        return self.wait(done, timeout, what="the bring-up")

    def start_job(self, replay, first_lba, nbytes, chunk_log2, mask, seed=1, qd=32, pattern=True):
        """Writes a job (the test pattern source or the checker) and starts it; returns the verdict
        code (``job_status.code``) once it was checked."""
        word = self.build_word()
        if pattern and not replay:
            # The pattern source stops (its earlier surplus is flushed), then starts with the run.
            self.write("recstream_ctrl", self.pack("recstream_ctrl", gen_stop=1))
            self.write("recstream_gen_seed", seed)
            self.write("recstream_gen_beats", nbytes//word)
            self.write("recstream_gen_rate", 0)
            self.write("recstream_gen_packet", 0)
            self.write("recstream_ctrl", self.pack("recstream_ctrl", gen_on_run=1))
        if pattern and replay:
            self.write("recstream_check_seed", seed)
            self.write("recstream_check_beats", nbytes//word)
            self.write("recstream_ctrl", self.pack("recstream_ctrl", check_start=1))
        self.write("job_config", self.pack("job_config", direction=int(replay), flush_surplus=int(not replay)))
        self.write("job_first_lba", first_lba)
        self.write("job_bytes", nbytes)
        self.write("job_chunk_log2", chunk_log2)
        self.write("job_port_mask", mask)
        self.write("job_qd", qd)
        self.write("job_control", self.pack("job_control", start=1))
        st = self.wait(lambda: (lambda v: [v] if not self.field("job_status", "checking", v) else None)(
            self.reg("job_status")), 60, 0.01, "the job's check")
        return self.field("job_status", "code", st[0])

    def build_word(self):
        return int(self.comm.constants.recorder_word_bytes)

    def recorder(self):
        """The recorder's status word fields and counters."""
        self.write("recorder_control", self.pack("recorder_control", snapshot=1))
        st = self.reg("recorder_status")
        r = {f: self.field("recorder_status", f, st) for f in self.fields["recorder_status"]}
        for name in ("snap_cycles", "snap_kept", "snap_committed", "released", "bytes_out", "err_status",
                "err_port", "err_lba"):
            r[name] = self.reg(f"recorder_{name}")
        return r

    def wait_job(self, timeout=600):
        return self.wait(lambda: (lambda r: r if not r["busy"] else None)(self.recorder()), timeout, 0.2,
            "the end of the job")

# Command line -------------------------------------------------------------------------------------

def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--ssds", type=int, default=1, help="Simulated SSDs (1-8, default: %(default)s).")
    parser.add_argument("--pcie-data-width", type=int, default=256, choices=[128, 256, 512])
    parser.add_argument("--build-only", action="store_true", help="Build and exit.")
    parser.add_argument("--record", type=parse_size, default=16 << 20, metavar="SIZE",
        help="Bytes to record and replay with the test pattern (default: 16MiB).")
    parser.add_argument("--chunk-log2", type=int, default=17, help="Chunk, log2 bytes (default: %(default)s).")
    parser.add_argument("--verbose", action="store_true")
    ssd_parser(parser)
    args = parser.parse_args(argv)
    try:
        build = CorelessSimBuild(n_ssds=args.ssds, pcie_data_width=args.pcie_data_width, verbose=args.verbose)
        devices = ssd_devices(args, args.ssds, build.sys_clk_freq, build.pcie_data_width)
    except ValueError as e:
        parser.error(str(e))
    build.build()
    if args.build_only:
        return 0
    mask = (1 << args.ssds) - 1
    with CorelessSession(build, "cli", devices) as s:
        for p, st in enumerate(s.wait_bringup(range(args.ssds))):
            print(f"bringup{p}: {st}")
        for replay in (0, 1):
            code = s.start_job(replay, 0, args.record, args.chunk_log2, mask)
            r = s.wait_job()
            mbps = (args.record if replay else r["snap_committed"] << args.chunk_log2)*build.sys_clk_freq/r["snap_cycles"]/1e6
            print(f"{'replay' if replay else 'record'}: job code {code}, recorder {r}, {mbps:.1f} MB/s")
        print(f"checker: errors {s.reg('recstream_check_errors')} checked {s.reg('recstream_check_checked')} beats")
    return 0

if __name__ == "__main__":
    sys.exit(main())
