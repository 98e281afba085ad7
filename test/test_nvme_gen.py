#
# This file is part of LiteRecorder.
#
# SPDX-License-Identifier: BSD-2-Clause

"""The queue engine's request generator and statistics in Migen's simulator: random LBAs in a span
that is not a power of two (draws beyond it skipped), exact request counts under back-pressure, and
the 64-bit elapsed time of the statistics."""

import random

import pytest

from migen import *

from literecorder.cores.nvme.bench import NVMeRequestGenerator, NVMeStatistics

pytestmark = pytest.mark.unit

def model_generator(random_lbas, span, count, blocks=8, base=1000, mask=None, seed=0x1234567,
        adr_base=0x40000000, adr_mask=2**20 - 1, lba_shift=9):
    """The requests the generator gives, in Python: a Galois LFSR (x^32 + x^22 + x^2 + x + 1) that
    steps once per accepted request and once per draw beyond ``span`` (skipped); the back-pressure
    does not change the sequence."""
    if mask is None:
        mask = (1 << max(span - 1, 0).bit_length()) - 1
    lfsr = seed or 1
    out, seq, offset = [], 0, 0
    while len(out) < count:
        rnd = ((lfsr ^ 0x5bd1e995) << 32 | lfsr) & mask & ~(blocks - 1)
        if not random_lbas or span == 0 or rnd < span:
            out.append((base + (rnd if random_lbas else seq), blocks, adr_base + (offset & adr_mask)))
            seq += blocks
            offset += blocks << lba_shift
        lfsr = (lfsr >> 1) ^ 0x80200003 if lfsr & 1 else lfsr >> 1
    return out

def run_generator(random_lbas, span, count, blocks=8, base=1000, mask=None, seed=0x1234567, ready_seed=5):
    dut = NVMeRequestGenerator()
    got = []
    rng = random.Random(ready_seed)
    if mask is None:
        mask = 1
        while mask < max(span, 1):
            mask *= 2
        mask -= 1
    def gen():
        yield dut.random.eq(random_lbas)
        yield dut.lba_base.eq(base)
        yield dut.lba_mask.eq(mask)
        yield dut.lba_limit.eq(span)
        yield dut.blocks.eq(blocks)
        yield dut.count.eq(count)
        yield dut.lba_shift.eq(9)
        yield dut.seed.eq(seed)
        yield dut.adr_base.eq(0x40000000)
        yield dut.adr_mask.eq(2**20 - 1)
        yield dut.start.eq(1)
        yield
        yield dut.start.eq(0)
        for _ in range(40*count + 100):
            ready = rng.random() < 0.6                 # back-pressure from the engine
            yield dut.source.ready.eq(ready)
            yield
            if ready and (yield dut.source.valid):
                got.append(((yield dut.source.lba), (yield dut.source.blocks), (yield dut.source.adr)))
        assert (yield dut.busy) == 0
        assert (yield dut.issued) == count
    run_simulation(dut, gen())
    return got

def test_random_lbas_stay_in_a_span_that_is_not_a_power_of_two():
    span = 3*1024                                      # 75% of a 4096-block region: mask 4095
    got = run_generator(1, span, 300)
    # Exactly the seeded sequence of the model (draws beyond the span skipped), whatever the
    # back-pressure.
    assert got == model_generator(1, span, 300)
    assert got == run_generator(1, span, 300, ready_seed=6)
    offsets = [lba - 1000 for lba, _, _ in got]
    assert all(0 <= o < span and o % 8 == 0 for o in offsets)
    # The draws cover the span, not only its power-of-two part.
    assert max(offsets) >= 2048 and min(offsets) < 1024
    assert len(set(offsets)) > 200
    # Buffers cycle through the ring one request after the other.
    assert [adr for _, _, adr in got[:4]] == [0x40000000 + i*8*512 for i in range(4)]

def test_without_a_limit_the_mask_alone_bounds_the_lbas():
    got = run_generator(1, 0, 200, mask=4095)
    assert got == model_generator(1, 0, 200, mask=4095)
    offsets = [lba - 1000 for lba, _, _ in got]
    assert len(got) == 200 and all(0 <= o < 4096 for o in offsets) and max(offsets) >= 3072

def test_sequential_requests_ignore_the_limit():
    got = run_generator(0, 16, 50, blocks=256)
    assert got == model_generator(0, 16, 50, blocks=256)
    assert [lba for lba, _, _ in got] == [1000 + 256*i for i in range(50)]
    assert all(b == 256 for _, b, _ in got)

def test_statistics_elapsed_time_crosses_2_to_the_32():
    dut = NVMeStatistics()
    def gen():
        yield dut.clear.eq(1)
        yield
        yield dut.clear.eq(0)
        yield dut.cycles.eq(2**32 - 2)                # preset: 21.5 s at 200 MHz have passed
        yield
        for _ in range(5):
            yield
        yield dut.sink.valid.eq(1)
        yield dut.sink.op.eq(1)
        yield dut.sink.blocks.eq(8)
        yield dut.lba_shift.eq(9)
        yield dut.source.ready.eq(1)
        yield
        yield dut.sink.valid.eq(0)
        yield
        assert (yield dut.commands) == 1
        assert (yield dut.t_last) == 2**32 - 2 + 6     # past 2**32, not wrapped
        assert (yield dut.cycles) == 2**32 - 2 + 7     # it kept counting after the completion
        yield dut.clear.eq(1)
        yield
        yield dut.clear.eq(0)
        yield
        assert (yield dut.t_last) == 0 and (yield dut.commands) == 0
    run_simulation(dut, gen())
