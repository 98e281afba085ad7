#
# This file is part of LiteRecorder.
#
# SPDX-License-Identifier: BSD-2-Clause

"""The test pattern in logic (cores/recorder/frontend/pattern.py) against its definition in Python, word for
word: ``pattern_beat`` (built from two whole words per beat, see its docstring) at every stream
width, on seeds whose low bits carry into the next word and on indices where the word count wraps;
the DRAM pattern engine (one generator for fill and check, no FIFO) on a LiteDRAM port model."""

import random

import pytest

from migen import *
from migen.sim import passive

from litex.gen import LiteXModule
from litedram.common import LiteDRAMNativePort

from literecorder.cores.recorder.frontend.pattern import pattern_beat, pattern_word_py, DRAMPatternEngine

pytestmark = pytest.mark.unit

class _Beat(LiteXModule):
    def __init__(self, data_width):
        self.seed  = Signal(32)
        self.index = Signal(64)
        data, stmts = pattern_beat(self.seed, self.index, data_width)
        self.data  = data
        self.comb += stmts

def expected_beat(seed, index, data_width):
    nw = data_width//32
    return sum(pattern_word_py(seed, index*nw + l) << (32*l) for l in range(nw))

@pytest.mark.parametrize("data_width", [32, 64, 128, 256, 512])
def test_pattern_beat_is_the_pattern_word_for_word(data_width):
    nw  = data_width//32
    k   = nw.bit_length() - 1
    rng = random.Random(data_width)
    vectors = [(0, 0), (1, 0), (2**32 - 1, 0), (2**32 - 1, 2**64 - 1),
        # Low seed bits that carry into the word above for some lanes (all of them but lane 0).
        ((rng.getrandbits(28) << 4) | 15, 5), ((rng.getrandbits(28) << 4) | 1, 7),
        # seed/2^k + index wraps at 2^(32-k) words: the word after it is word 0 of the seed.
        (rng.getrandbits(32), (2**(32 - k) - 1) - (rng.getrandbits(32) >> k)),
        (rng.getrandbits(32), 2**(32 - k)), (rng.getrandbits(32), 2**40 + 3)]
    vectors += [(rng.getrandbits(32), rng.getrandbits(rng.choice([8, 32, 64]))) for _ in range(40)]
    dut = _Beat(data_width)
    bad = []
    def gen():
        for seed, index in vectors:
            yield dut.seed.eq(seed)
            yield dut.index.eq(index)
            yield
            got, exp = (yield dut.data), expected_beat(seed, index, data_width)
            if got != exp:
                bad.append((seed, index, hex(got), hex(exp)))
    run_simulation(dut, gen())
    assert bad == []

# DRAM pattern engine ---------------------------------------------------------------------------------

class _DRAM:
    """A LiteDRAM read-write native port on a Python dict, as LiteDRAM drives it: commands taken at
    random (seeded), the write data of a write taken a few cycles after its command (``wdata.ready``,
    in command order; LiteDRAM does not wait for ``wdata.valid``), read data returned in order a few
    cycles after the command without waiting for ``rdata.ready``."""
    def __init__(self, port, seed):
        self.port = port
        self.mem  = {}
        self.rng  = random.Random(seed)
        self.late = []      # Protocol errors seen: (what, cycle).

    @passive
    def run(self):
        port, writes, reads, cycle = self.port, [], [], 0
        while True:
            ready = self.rng.random() < 0.7
            wtake = bool(writes) and writes[0][0] <= 0 and self.rng.random() < 0.8
            rgive = bool(reads) and reads[0][0] <= 0
            yield port.cmd.ready.eq(ready)
            yield port.wdata.ready.eq(wtake)
            yield port.rdata.valid.eq(rgive)
            if rgive:
                yield port.rdata.data.eq(self.mem.get(reads[0][1], 0))
            yield
            if wtake:
                if not (yield port.wdata.valid):
                    self.late.append(("wdata not valid when taken", cycle))
                self.mem[writes.pop(0)[1]] = yield port.wdata.data
            if rgive:
                if not (yield port.rdata.ready):
                    self.late.append(("rdata not ready", cycle))
                reads.pop(0)
            if ready and (yield port.cmd.valid):
                adr = yield port.cmd.addr
                (writes if (yield port.cmd.we) else reads).append([self.rng.randrange(1, 5), adr])
            for q in writes + reads:
                q[0] -= 1
            cycle += 1

@pytest.mark.parametrize("seed", [0, 13, 2**32 - 3])
def test_dram_engine_fills_the_pattern_and_checks_it_with_one_generator(seed):
    port = LiteDRAMNativePort("both", address_width=16, data_width=256)
    dut  = DRAMPatternEngine(port)
    dram = _DRAM(port, seed)
    base, words = 0x40*32, 24           # byte offset, 256-bit words
    out = {}
    def run_engine(check):
        yield dut.base.eq(base)
        yield dut.length.eq(words*32)
        yield dut.seed.eq(seed)
        yield dut.check.eq(check)
        yield dut.start.eq(1)
        yield
        yield dut.start.eq(0)
        yield
        for _ in range(3000):
            if not (yield dut.busy):
                break
            yield
        assert not (yield dut.busy)
        return (yield dut.errors), (yield dut.first_error)
    def control():
        yield from run_engine(0)
        out["mem"] = dict(dram.mem)
        out["clean"] = yield from run_engine(1)
        # Corrupt word 5, lane 3 (bytes 5*32 + 12): one error at that byte offset.
        dram.mem[base//32 + 5] ^= 0xff << 96
        out["corrupt"] = yield from run_engine(1)
    run_simulation(dut, [control(), dram.run()])
    assert dram.late == []
    assert sorted(out["mem"]) == list(range(base//32, base//32 + words))
    for w in range(words):
        assert out["mem"][base//32 + w] == expected_beat(seed, w, 256), w
    assert out["clean"] == (0, 0)
    assert out["corrupt"] == (1, 5*32 + 12)

def test_dram_engine_needs_a_read_write_port():
    with pytest.raises(ValueError, match="read-write .'both'. port is needed, not 'write'"):
        DRAMPatternEngine(LiteDRAMNativePort("write", address_width=16, data_width=256))
