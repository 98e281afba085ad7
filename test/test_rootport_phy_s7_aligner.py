#
# This file is part of LiteRecorder.
#
# SPDX-License-Identifier: BSD-2-Clause

"""7-series 128-bit RX realignment (S7RXAligner128) against a model of the pcie_7x RX interface
(PG054: a TLP starts in dword 0 or dword 2 of a beat, rx_is_sof/rx_is_eof in m_axis_rx_tuser,
straddling only after a TLP that ends in dwords 0-1), with seeded random TLP lengths, start
positions and valid/ready back-pressure."""

import random

import pytest

from migen import *
from migen.sim import run_simulation, passive

from literecorder.cores.pcie.phy.s7rootport import S7RXAligner128

M32 = 0xffffffff

# Model of the pcie_7x 128-bit RX stream -----------------------------------------------------------

def pcie_7x_rx_beats(tlps, rng, straddle=0.6, start_dw2=0.2):
    """Pack TLPs (dword lists) into 4-dword beats the way the block may present them."""
    beats = [] # dict(dws=[4 slots], sof=None|0|2, eof=None|dw)
    for tlp in tlps:
        last = beats[-1] if beats else None
        fill = 4 - last["dws"].count(None) if last else 4
        if last is not None and last["eof"] is not None and last["eof"] <= 1 and fill <= 2 \
            and last["sof"] is None and rng.random() < straddle:
            beat, pos = last, 2                                   # Straddle after an early EOF.
        else:
            beat = dict(dws=[None]*4, sof=None, eof=None)
            beats.append(beat)
            pos = 2 if rng.random() < start_dw2 else 0
        beat["sof"] = pos
        for n, d in enumerate(tlp):
            if pos == 4:
                beat = dict(dws=[None]*4, sof=None, eof=None)
                beats.append(beat)
                pos = 0
            beat["dws"][pos] = d
            if n == len(tlp) - 1:
                beat["eof"] = pos
            pos += 1
    out = []
    for b in beats:
        dat = sum((d or 0) << (32*k) for k, d in enumerate(b["dws"]))
        sof = 0 if b["sof"] is None else (0b10000 | (0b1000 if b["sof"] == 2 else 0))
        eof = 0 if b["eof"] is None else (0b10000 | (b["eof"] << 2) | 0b11)
        out.append(dict(dat=dat, sof=sof, eof=eof))
    return out

# Harness ------------------------------------------------------------------------------------------

def run_aligner(tlps, seed, idle=0.3, ready=0.7):
    rng  = random.Random(seed)
    beats = pcie_7x_rx_beats(tlps, rng)
    dut  = S7RXAligner128()
    out, cur = [], [None]
    def send():
        for b in beats:
            while rng.random() < idle:
                yield dut.sink.valid.eq(0)
                yield
            yield dut.sink.valid.eq(1)
            yield dut.sink.dat.eq(b["dat"])
            yield dut.sink.sof.eq(b["sof"])
            yield dut.sink.eof.eq(b["eof"])
            yield
            while not (yield dut.sink.ready):
                yield
        yield dut.sink.valid.eq(0)
        for _ in range(5000):
            if len(out) == len(tlps):
                break
            yield
    @passive
    def receive():
        rrng = random.Random(seed + 1)
        while True:
            r = int(rrng.random() < ready)
            yield dut.source.ready.eq(r)
            yield
            if r and (yield dut.source.valid):
                dat, be = (yield dut.source.dat), (yield dut.source.be)
                first, last = (yield dut.source.first), (yield dut.source.last)
                ndw = [0x000f, 0x00ff, 0x0fff, 0xffff].index(be) + 1
                assert first == (cur[0] is None)
                if cur[0] is None:
                    cur[0] = []
                else:
                    assert last or ndw == 4
                cur[0] += [(dat >> (32*k)) & M32 for k in range(ndw)]
                if last:
                    out.append(cur[0])
                    cur[0] = None
    run_simulation(dut, [send(), receive()])
    return beats, out

# Tests --------------------------------------------------------------------------------------------

@pytest.mark.unit
@pytest.mark.parametrize("seed", [1, 2, 3])
def test_s7_rx_aligner_random(seed):
    rng  = random.Random(seed)
    tlps = [[rng.getrandbits(32) for _ in range(rng.choice([3, 4, 5, 6, 7, 8, 9, rng.randrange(3, 40)]))]
        for _ in range(80)]
    beats, out = run_aligner(tlps, seed)
    assert sum(1 for b in beats if b["sof"] & 0b1000) > 10    # Many TLPs started in dword 2,
    assert sum(1 for b in beats if b["sof"] and b["eof"] and b["eof"] >> 2 & 3 <= 1
        and b["sof"] & 0b1000) > 5                             # several of them straddled.
    assert out == tlps

@pytest.mark.unit
def test_s7_rx_aligner_straddle_cases():
    """3-DW completion ending in dword 1, next TLP in dword 2 ending in dwords 0..3 of later beats."""
    tlps = [[0x4a000001, 0x01000004, 0x00004200, 0x11111111],   # CplD, 4 dwords.
            [0x0a000000, 0x01004004, 0x00004300],               # Cpl CRS, 3 dwords.
            [0x40000001, 0x010000ff, 0x80000000, 0x22222222],
            [0x60000002, 0x010001ff, 0x00000001, 0x00000000, 0x33333333, 0x44444444]]
    for seed in range(4):
        _, out = run_aligner(tlps, seed)
        assert out == tlps
