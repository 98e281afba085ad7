#
# This file is part of LiteRecorder.
#
# SPDX-License-Identifier: BSD-2-Clause

"""Register-driven jobs of the CPU-less core (cores/recorder/job.py, Migen simulation) on a stand-in
of the recorder's interface (checked against a real ``RecorderCore``) and of the ports' bring-ups.

The configuration handed to the recorder is compared with the BIOS's rules (record.c:
``rec_job_check``/``configure``), written out here: chunks = ceil(bytes / chunk), rows = ceil(chunks
/ ports), last LBA = first + (rows - 1) x chunk blocks, the smallest namespace of the selected
ports, the first selected port, 32 commands per port, the ring of min(buffer, window) / chunk
slots. Seeded random jobs, every refusal with its code, a start while the recorder runs (nothing
changes), a start while one is being checked."""

import random

import pytest

from migen import *

from litedram.common import LiteDRAMNativePort

from literecorder.cores.recorder.core import RecorderCore
from literecorder.cores.recorder.job import RecorderJob, JOB

pytestmark = pytest.mark.unit

N_PORTS  = 4
SLOTS    = 4096
WINDOW   = 512 << 20
BUFFER   = 64 << 20
STAGING  = 1 << 20
ST_SLOTS = 8

# The recorder's signals RecorderJob drives or reads.
CONFIG = ["direction", "mode", "drop", "input_sel", "output_sel", "end_on_last", "check_last", "flush_after",
    "flush_surplus", "ring_slots", "chunk_log2", "chunk_blocks", "first_lba", "last_lba", "start_lba",
    "start_port", "nsze", "chunks", "replay_bytes", "post_bytes", "trim_rows", "port_mask", "max_inflight",
    "onchip_slots", "spill", "start", "stop", "abort", "trigger", "arm", "disarm", "busy", "armed",
    "hw_start", "hw_stop", "hw_abort", "hw_trigger"]

def _real_recorder():
    port = lambda mode: LiteDRAMNativePort(mode, address_width=24, data_width=512)
    return RecorderCore(port("write"), port("read"), n_ports=N_PORTS, slots=SLOTS, n_inputs=2, n_outputs=2)

class RecorderStandIn:
    def __init__(self):
        real = _real_recorder()
        self.n_ports = real.n_ports
        for name in CONFIG:
            s = getattr(real, name)
            setattr(self, name, Signal(len(s), name=name, reset=s.reset.value))

class PortStandIn:
    def __init__(self, i):
        self.ready, self.nsze = Signal(name=f"ready{i}"), Signal(64, name=f"nsze{i}")
        self.lba_shift, self.xfer_log2 = Signal(4, name=f"shift{i}"), Signal(5, name=f"xfer{i}")

class DUT(Module):
    def __init__(self):
        self.rec   = RecorderStandIn()
        self.ports = [PortStandIn(i) for i in range(N_PORTS)]
        self.submodules.job = RecorderJob(self.rec, self.ports, SLOTS, WINDOW, BUFFER, STAGING, ST_SLOTS)

def expected(direction, first, nbytes, chunk_log2, mask, ports, qd=32):
    """The BIOS's configuration of a job (record.c), for comparison."""
    sel = [i for i in range(N_PORTS) if mask >> i & 1]
    shift = ports[sel[0]]["lba_shift"]
    chunk = 1 << chunk_log2
    cb = chunk >> shift
    chunks = (nbytes + chunk - 1)//chunk
    rows = (chunks + len(sel) - 1)//len(sel)
    return dict(direction=direction, first_lba=first, start_lba=first, last_lba=first + (rows - 1)*cb,
        chunk_log2=chunk_log2, chunk_blocks=cb, chunks=chunks, start_port=sel[0],
        nsze=min(ports[i]["nsze"] for i in sel), replay_bytes=nbytes if direction else 0, port_mask=mask,
        max_inflight=qd*len(sel), ring_slots=max(2, min(SLOTS, WINDOW//chunk, BUFFER//chunk)),
        onchip_slots=min(ST_SLOTS, STAGING//chunk), mode=0, post_bytes=0, trim_rows=0)

def set_ports(dut, ports):
    for p, d in zip(dut.ports, ports):
        for k, v in d.items():
            yield getattr(p, k).eq(v)

def submit(dut, direction, first, nbytes, chunk_log2, mask, qd=32, flags=0):
    """Writes the job and pulses start; returns (code, recorder starts seen, cycles)."""
    j = dut.job
    for sig, v in [(j.direction, direction), (j.first_lba, first), (j.bytes, nbytes),
            (j.chunk_log2, chunk_log2), (j.port_mask, mask), (j.qd, qd), (j.end_on_last, flags & 1),
            (j.flush_surplus, flags >> 1 & 1)]:
        yield sig.eq(v)
    yield
    yield j.start.eq(1)
    yield
    yield j.start.eq(0)
    starts, t = 0, 0
    while True:
        starts += yield dut.rec.start
        yield
        t += 1
        if not (yield j.checking) or t > 400:
            break
    starts += yield dut.rec.start
    return (yield j.code), starts, t

def config(dut):
    r = {}
    for name in expected(0, 0, 4096, 12, 1, [dict(lba_shift=9, nsze=1)]*N_PORTS):
        r[name] = yield getattr(dut.rec, name)
    return r

PORTS = [dict(ready=1, nsze=2_000_000, lba_shift=9, xfer_log2=21), dict(ready=1, nsze=1_500_000, lba_shift=9,
    xfer_log2=17), dict(ready=1, nsze=900_000, lba_shift=9, xfer_log2=21), dict(ready=1, nsze=3_000_000,
    lba_shift=9, xfer_log2=20)]

def test_job_standin_matches_recorder():
    real, ours = _real_recorder(), RecorderStandIn()
    for name in CONFIG:
        assert len(getattr(real, name)) == len(getattr(ours, name)), name

def test_job_derives_the_bios_configuration():
    rng = random.Random(41)
    dut = DUT()
    seen = []
    def gen():
        yield from set_ports(dut, PORTS)
        # Three ports (0, 1, 3: a division by 3), 10 chunks of 128 KiB; port 2's smaller namespace
        # is not selected.
        jobs = [(0, 1024, 10 << 17, 17, 0b1011), (1, 2048, (7 << 16) + 100, 16, 0b0101)]
        for _ in range(12):
            mask = rng.randrange(1, 16)
            k = rng.randrange(12, 18)
            if any(mask >> i & 1 and PORTS[i]["xfer_log2"] < k for i in range(N_PORTS)):
                k = 12
            d = rng.randrange(2)
            nbytes = rng.randrange(1, 5000) << k
            if d:
                nbytes -= rng.randrange(0, 1 << k)
            jobs.append((d, rng.randrange(0, 1 << 20) << (k - 9), nbytes, k, mask))
        for d, first, nbytes, k, mask in jobs:
            code, starts, t = yield from submit(dut, d, first, nbytes, k, mask, qd=rng.choice([32, 8, 100]))
            cfg = yield from config(dut)
            qd = yield dut.job.qd
            seen.append((code, starts, t, cfg, expected(d, first, nbytes, k, mask, PORTS, qd)))
    run_simulation(dut, gen())
    for code, starts, t, cfg, exp in seen:
        assert (code, starts) == (JOB["OK"], 1), (code, starts, exp)
        assert cfg == exp
        assert t <= 120
    assert seen[0][3]["last_lba"] == 1024 + 3*256 and seen[0][3]["nsze"] == 1_500_000

def test_job_refusals():
    dut = DUT()
    out = {}
    def gen():
        yield from set_ports(dut, PORTS)
        ok = lambda: submit(dut, 0, 0, 8 << 17, 17, 0b0001)
        out["ok"] = yield from ok()
        before = yield from config(dut)
        # The recorder runs: refused, its configuration unchanged.
        yield dut.rec.busy.eq(1)
        out["busy"] = yield from submit(dut, 1, 4096, 1 << 20, 16, 0b0110)
        out["busy_cfg"] = (yield from config(dut)) == before
        yield dut.rec.busy.eq(0)
        out["ports"]   = yield from submit(dut, 0, 0, 1 << 17, 17, 0)
        yield dut.ports[2].ready.eq(0)
        out["ready"]   = yield from submit(dut, 0, 0, 1 << 17, 17, 0b0101)
        yield dut.ports[2].ready.eq(1)
        yield dut.ports[3].lba_shift.eq(12)
        out["lba"]     = yield from submit(dut, 0, 0, 1 << 17, 17, 0b1001)
        yield dut.ports[3].lba_shift.eq(9)
        out["small"]   = yield from submit(dut, 0, 0, 1 << 11, 11, 0b0001)
        out["large"]   = yield from submit(dut, 0, 0, 1 << 25, 25, 0b0001)
        out["mdts"]    = yield from submit(dut, 0, 0, 1 << 18, 18, 0b0011)    # Port 1: 128 KiB at most.
        out["zero"]    = yield from submit(dut, 1, 0, 0, 17, 0b0001)
        out["partial"] = yield from submit(dut, 0, 0, (3 << 17) + 512, 17, 0b0001)
        out["cfg_after"] = (yield from config(dut)) == before
        out["refused"] = yield dut.job.refused
        out["accepted"] = yield dut.job.accepted
        # A second start while the first is being checked: refused (counted), the first goes on.
        j = dut.job
        yield j.bytes.eq(8 << 17)
        yield j.start.eq(1)
        yield
        yield
        yield j.start.eq(0)
        for _ in range(200):
            yield
        out["double"] = (yield j.code), (yield j.refused), (yield j.accepted)
    run_simulation(dut, gen())
    assert out["ok"][:2] == (JOB["OK"], 1)
    assert out["busy"][:2] == (JOB["BUSY"], 0) and out["busy_cfg"]
    for name, code in [("ports", "PORTS"), ("ready", "NOT-READY"), ("lba", "LBA-SIZE"), ("small", "CHUNK"),
            ("large", "CHUNK"), ("mdts", "CHUNK"), ("zero", "SIZE"), ("partial", "SIZE")]:
        assert out[name][:2] == (JOB[code], 0), (name, out[name])
    assert out["cfg_after"]
    assert (out["refused"], out["accepted"]) == (9, 1)
    assert out["double"] == (JOB["OK"], 10, 2)

def test_job_parameter_checks():
    rec = RecorderStandIn()
    with pytest.raises(ValueError, match="3 port bring-ups for a recorder of 4 ports"):
        RecorderJob(rec, [PortStandIn(i) for i in range(3)], SLOTS, WINDOW, BUFFER)
