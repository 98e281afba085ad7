#
# This file is part of LiteRecorder.
#
# SPDX-License-Identifier: BSD-2-Clause

"""Windows of the completer (Migen simulation): the LiteDRAM window against a model of a LiteDRAM
native port (random command acceptance, write-data requests after the command, read data with
random latency and in bursts that cannot be stalled), writes at any beat alignment and byte
enables, reads of any length interleaved with them, random back-pressure on the read data."""

import random

import pytest

from migen import *

from litedram.common import LiteDRAMNativePort

from literecorder.cores.pcie.windows import CompleterWindow, DRAMWindow

pytestmark = pytest.mark.unit

BASE, SIZE = 0x60000000, 0x8000     # 32 KiB window at DRAM offset 0x8000.
DRAM_OFFSET = 0x8000

class Harness(Module):
    def __init__(self, dw, pdw=512, read_depth=8, write_depth=4):
        self.port = LiteDRAMNativePort("both", address_width=10, data_width=pdw)
        self.w    = CompleterWindow("dram", BASE, SIZE, dw)
        self.submodules.dram = DRAMWindow(self.w, self.port, dram_offset=DRAM_OFFSET,
            read_depth=read_depth, write_depth=write_depth, read_requests=4)

def port_model(h, mem, rng, stats):
    """LiteDRAM native port: commands accepted at random; the data of a write is taken (wdata.ready)
    some cycles after its command, without looking at wdata.valid; reads return in order after a
    random latency, up to one word per cycle, never stalled."""
    port  = h.port
    wbytes = port.data_width//8
    writes, reads = [], []
    @passive
    def gen():
        cycle = 0
        while True:
            if (yield port.cmd.valid) and (yield port.cmd.ready):
                adr, we = (yield port.cmd.addr), (yield port.cmd.we)
                if we:
                    writes.append((cycle + rng.randint(1, 6), adr))
                else:
                    reads.append((max([cycle + rng.randint(3, 12)] + [t + 1 for t, _ in reads[-1:]]), adr))
            if (yield port.wdata.ready):
                _, adr = writes.pop(0)
                assert (yield port.wdata.valid), "write data taken before it was valid"
                dat, we = (yield port.wdata.data), (yield port.wdata.we)
                for b in range(wbytes):
                    if we >> b & 1:
                        mem[adr*wbytes + b] = (dat >> (8*b)) & 0xff
                stats["writes"] += 1
            # Outputs of the next cycle.
            yield port.cmd.ready.eq(rng.random() < 0.6)
            yield port.wdata.ready.eq(bool(writes) and writes[0][0] <= cycle)
            if reads and reads[0][0] <= cycle:
                _, adr = reads.pop(0)
                yield port.rdata.valid.eq(1)
                yield port.rdata.data.eq(int.from_bytes(mem[adr*wbytes:(adr + 1)*wbytes], "little"))
                stats["reads"] += 1
            else:
                yield port.rdata.valid.eq(0)
            yield
            cycle += 1
    return gen()

@pytest.mark.parametrize("dw, seed", [(256, 1), (128, 2), (512, 3)])
def test_dram_window_writes_and_reads_in_order(dw, seed):
    rng   = random.Random(seed)
    bb    = dw//8
    h     = Harness(dw)
    w     = h.w
    mem   = bytearray(rng.getrandbits(8) for _ in range(DRAM_OFFSET + SIZE + 4096))
    ref   = bytearray(mem[DRAM_OFFSET:DRAM_OFFSET + SIZE])
    stats = {"writes": 0, "reads": 0}
    ops, expect = [], []
    for _ in range(40):
        beat  = rng.randrange(SIZE//bb - 40)
        n     = rng.choice([1, 2, 3, rng.randint(1, 36)])
        if rng.random() < 0.5:
            beats = []
            for k in range(n):
                dat = rng.getrandbits(dw)
                be  = rng.getrandbits(bb) if rng.random() < 0.3 else (1 << bb) - 1
                beats.append((beat + k, dat, be))
                for b in range(bb):
                    if be >> b & 1:
                        ref[(beat + k)*bb + b] = (dat >> (8*b)) & 0xff
            ops.append(("w", beats))
        else:
            ops.append(("r", beat, n))
            expect.append([int.from_bytes(ref[(beat + k)*bb:(beat + k + 1)*bb], "little") for k in range(n)])
    got = []

    def driver():
        for op in ops:
            if op[0] == "w":
                for k, (adr, dat, be) in enumerate(op[1]):
                    yield w.wr.valid.eq(1)
                    yield w.wr.adr.eq(adr)
                    yield w.wr.dat.eq(dat)
                    yield w.wr.be.eq(be)
                    yield w.wr.last.eq(k == len(op[1]) - 1)
                    yield
                    while not (yield w.wr.ready):
                        yield
                    yield w.wr.valid.eq(0)
            else:
                yield w.rd_cmd.valid.eq(1)
                yield w.rd_cmd.adr.eq(op[1])
                yield w.rd_cmd.beats.eq(op[2])
                yield
                while not (yield w.rd_cmd.ready):
                    yield
                yield w.rd_cmd.valid.eq(0)
            while rng.random() < 0.3:
                yield

    def reader():
        cycles = 0
        for n in [len(e) for e in expect]:
            beats = []
            while len(beats) < n:
                cycles += 1
                assert cycles < 20000, f"no progress: {len(got)} reads done, {len(beats)}/{n} beats"
                ready = rng.random() < 0.6
                yield w.rd_data.ready.eq(ready)
                yield
                if ready and (yield w.rd_data.valid):
                    beats.append((yield w.rd_data.dat))
            got.append(beats)
        yield w.rd_data.ready.eq(0)
        for _ in range(200):   # Let the last writes reach the model.
            yield

    run_simulation(h, [driver(), reader(), port_model(h, mem, rng, stats)])
    assert len(got) == len(expect)
    for i, (g, e) in enumerate(zip(got, expect)):
        assert g == e, f"read {i}"
    assert mem[DRAM_OFFSET:DRAM_OFFSET + SIZE] == ref
    # The beats of one TLP that share a DRAM word are written to it at once: one masked word write
    # per word a TLP touches.
    words = sum(len({(adr*bb)//64 for adr, _, _ in op[1]}) for op in ops if op[0] == "w")
    assert stats["writes"] == words

def test_dram_window_checks_its_parameters():
    w = CompleterWindow("dram", BASE, SIZE, 256)
    with pytest.raises(ValueError, match="dram_offset 0x1000 must be aligned on its size"):
        DRAMWindow(w, LiteDRAMNativePort("both", address_width=10, data_width=512), dram_offset=0x1000)
    with pytest.raises(ValueError, match="is not a multiple of the beat width"):
        DRAMWindow(w, LiteDRAMNativePort("both", address_width=10, data_width=128))
    with pytest.raises(ValueError, match="serves off-chip windows"):
        DRAMWindow(CompleterWindow("x", BASE, SIZE, 256, on_chip=True),
            LiteDRAMNativePort("both", address_width=10, data_width=512))
    with pytest.raises(ValueError, match="must be a power of two >= 4096"):
        CompleterWindow("x", BASE, 0x3000, 256)
    with pytest.raises(ValueError, match="must be aligned on its size"):
        CompleterWindow("x", BASE + 0x1000, 0x2000, 256)
