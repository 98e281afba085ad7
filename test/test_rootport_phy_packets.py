#
# This file is part of LiteRecorder.
#
# SPDX-License-Identifier: BSD-2-Clause

"""Whole packets to the hard IP: the root-port PHYs' TLP datapaths in Migen simulation with two
clocks (``sys`` and the block's user clock at another period; harness in phy_packets.py).

- UltraScale(+) RQ/CC (PG156/PG213: ``tvalid`` asserted from the first to the last beat of a packet,
  or the block nullifies the TLP): no gap inside a packet at the block, with the user clock 2 %
  faster and 3 % slower than sys and 250 MHz against 125 MHz at 128 bits, with and without random
  back-pressure on ``tready`` and completion data arriving late (every 7th beat one cycle late), at
  both widths and both families; every packet byte-exact and in order (decoded with the descriptor
  models of test_rootport_phy_descriptors.py); the same checker finds the gaps without the
  store-and-forward stage; back-to-back largest completions at full rate.
- UltraScale(+) RC/CQ ``discontinue``: the marked TLP discarded, the count exact, the next TLP intact.
- 7 series (PG054): the TX interface is not streamed (tx_str = 0), gaps are allowed there; packets
  byte-exact and in order through its TX path.
- PacketFIFO alone: whole packets only, packets longer than the FIFO dropped, discard, sizing.
"""

import random

import pytest

from migen import *
from migen.sim import run_simulation, passive

from litex.soc.interconnect import stream

from literecorder.cores.pcie.phy.packet_fifo import PacketFIFO, packet_beats, packet_fifo_depth
from literecorder.cores.pcie.phy.xilinx_us_descriptors import TLPDescriptorBridge
from literecorder.cores.pcie.phy.usrootport import USRootPortDatapath, SHORT_PAYLOAD

import phy_packets as pp
from phy_packets import (CLOCKS, mixed_traffic, max_cpld, short_request, is_completion,
    run_us_outbound, check_us_outbound, run_s7_outbound, run_us_inbound)
from literecorder.cores.pcie.phy.xilinx_us_descriptors import RC_TUSER_DISCONTINUE, CQ_TUSER_DISCONTINUE
from test_rootport_phy_descriptors import rc_desc, cq_desc, model_rc_to_tlp, model_cq_to_tlp

pytestmark = pytest.mark.unit

MPS = 512 # The wrappers' default root_mps_cap: the largest CplD the completer sends.

# Scenarios: (family, data width, clocks) as the wrappers accept them (128/256 bits on UltraScale(+));
# 250 MHz against 125 MHz is the 128-bit Gen3 x4 case.
US_CASES = [(f, dw, c) for f in ["us", "usp"] for dw in [128, 256] for c in CLOCKS
    if c != "250-vs-125MHz" or dw == 128]

# UltraScale(+) RQ/CC: no gap inside a packet ------------------------------------------------------

@pytest.mark.parametrize("condition", ["steady", "late-data+backpressure"])
@pytest.mark.parametrize("family, data_width, clocks", US_CASES)
def test_us_outbound_packets_have_no_gap(family, data_width, clocks, condition):
    seed = sum(map(ord, f"{family}{data_width}{clocks}{condition}"))
    tlps = mixed_traffic(random.Random(seed), 10, MPS)
    kwargs = dict(late_every=7, ready=0.75) if condition != "steady" else {}
    rq, cc = run_us_outbound(data_width, family, tlps, CLOCKS[clocks], seed, mps=MPS, **kwargs)
    check_us_outbound(tlps, rq, cc)
    assert sum(1 for t in tlps if is_completion(t) and len(t) > data_width//32) >= 3 # Multi-beat.
    assert (rq.gaps, cc.gaps) == (0, 0), f"tvalid gaps inside packets: RQ {rq.gaps}, CC {cc.gaps}"
    assert (rq.unstable, cc.unstable) == (0, 0)

@pytest.mark.parametrize("data_width, clocks, kwargs", [
    (256, "pcie-2%-faster", {}),
    (256, "pcie-3%-slower", dict(late_every=7)),
    (128, "250-vs-125MHz",  {}),
])
def test_checker_finds_gaps_without_the_stage(data_width, clocks, kwargs):
    """The former path (clock crossing, converters, one register slice) leaves gaps in packets, and
    the block model counts them: the check above can fail."""
    rng  = random.Random(7)
    tlps = [max_cpld(rng, MPS, i) for i in range(8)] + [short_request(rng, 8 + i) for i in range(4)]
    rng.shuffle(tlps)
    rq, cc = run_us_outbound(data_width, "usp", tlps, CLOCKS[clocks], 7, mps=MPS,
        store_and_forward=False, **kwargs)
    check_us_outbound(tlps, rq, cc) # The data is right; the timing the block needs is not.
    assert cc.gaps > 0 and cc.gap_packets
    if clocks == "250-vs-125MHz":
        # The user clock drains twice as fast as sys fills: every multi-beat packet is broken.
        multi = [i for i, p in enumerate(cc.packets) if len(p["dwords"]) > data_width//32]
        assert sorted(cc.gap_packets) == multi
    # The same traffic through the store-and-forward stage: no gap.
    rq, cc = run_us_outbound(data_width, "usp", tlps, CLOCKS[clocks], 7, mps=MPS, **kwargs)
    check_us_outbound(tlps, rq, cc)
    assert (rq.gaps, cc.gaps) == (0, 0)

@pytest.mark.parametrize("data_width", [128, 256])
def test_back_to_back_largest_completions_at_full_rate(data_width):
    """The user clock 3 % slower than sys (the block's side is the bottleneck): after the first
    packet, the largest CplDs leave back to back, one beat in every user-clock cycle."""
    rng  = random.Random(11)
    tlps = [max_cpld(rng, MPS, i) for i in range(5)]
    rq, cc = run_us_outbound(data_width, "usp", tlps, CLOCKS["pcie-3%-slower"], 11, mps=MPS)
    check_us_outbound(tlps, rq, cc)
    beats = packet_beats(MPS, 12, data_width)
    assert cc.beats == 5*beats
    assert cc.rate() == 1.0, f"{cc.beats} beats in {cc.last_cycle - cc.first_cycle + 1} cycles"

def test_fast_simulator_matches_migen():
    """The harness's FastSimulator (dependency-ordered combinational passes) gives the results of
    Migen's own simulator, cycle for cycle, on a run with gaps, late data and back-pressure."""
    rng  = random.Random(3)
    tlps = [max_cpld(rng, 128, 0), short_request(rng, 1), max_cpld(rng, 128, 2)]
    results = []
    for fast in [True, False]:
        run = pp.run_two_clocks
        pp.run_two_clocks = lambda *a, **k: run(*a, fast=fast)
        try:
            rq, cc = run_us_outbound(128, "us", tlps, CLOCKS["250-vs-125MHz"], 3, mps=128,
                late_every=7, ready=0.9, store_and_forward=False)
        finally:
            pp.run_two_clocks = run
        results.append([(m.packets, m.gaps, m.beats, m.first_cycle, m.last_cycle, m.cycle)
            for m in (rq, cc)])
    assert results[0] == results[1]
    assert results[0][1][1] > 0 # The run had gaps to reproduce.

# 7 series: the TX interface takes gaps (not streamed) ---------------------------------------------

def test_s7_tx_is_not_streamed():
    """PG054: s_axis_tx_tuser[2] (tx_str) asks for cut-through, in which the TLP must come on
    consecutive cycles; with it 0 the block takes the whole TLP before sending it, and the user may
    throttle with tvalid ("Source Throttling on the Transmit Datapath"). The wrapper drives tuser 0
    (no streaming, no discontinue), as LitePCIe's hardware-proven S7PCIEPHY does."""
    from litex_boards.platforms import xilinx_kc705
    from literecorder.cores.pcie.phy import S7RootPortPHY
    platform = xilinx_kc705.Platform()
    phy = S7RootPortPHY(platform, platform.request("pcie_x4"))
    tuser = phy.ip_params["i_s_axis_tx_tuser"]
    assert isinstance(tuser, Constant) and tuser.value == 0 and len(tuser) == 4

@pytest.mark.parametrize("data_width, clocks", [(64, "pcie-2%-faster"), (64, "pcie-3%-slower"),
    (128, "pcie-2%-faster"), (128, "pcie-3%-slower")])
def test_s7_outbound_packets_exact(data_width, clocks):
    rng  = random.Random(data_width)
    tlps = [max_cpld(rng, 256, i) if i % 2 else short_request(rng, i) for i in range(8)]
    tx = run_s7_outbound(data_width, tlps, CLOCKS[clocks], 5, late_every=7, ready=0.8)
    assert tx.unstable == 0

# UltraScale(+) RC/CQ: discontinue -----------------------------------------------------------------

def inbound_traffic(rng, mps):
    """RC completions (to the requester's 1-2 dword reads) and CQ requests (the SSD's MRd and MWr up
    to MPS); some marked discontinue in their last beat, each followed at once by a good one."""
    rcs, cqs = [], []
    for i in range(10):
        n = rng.choice([1, 2])
        rcs.append((rc_desc(0, 0, 4*n, n, 0, 0x0000, i, 0x0100, completed=1) +
            [rng.getrandbits(32) for _ in range(n)], 0, 0))
    for i in range(10):
        write = i % 3 != 2
        n = rng.choice([mps//4, rng.randrange(1, mps//4 + 1)]) if write else rng.randrange(1, 64)
        desc = cq_desc(0x8000_0000 + 0x1000*i, n, int(write), 0x0100, i)
        cqs.append((desc + ([rng.getrandbits(32) for _ in range(n)] if write else []),
            (0xf << 4) | 0xf if n > 1 else 0xf, 0))
    for k in [0, 4, 9]:  # RC: the first, one in the middle, the last.
        d, uf, _ = rcs[k]
        rcs[k] = (d, uf, 1 << RC_TUSER_DISCONTINUE)
    for k in [1, 3, 5]:  # CQ: writes of the largest size and a read.
        d, uf, _ = cqs[k]
        cqs[k] = (d, uf, 1 << CQ_TUSER_DISCONTINUE)
    return rcs, cqs

@pytest.mark.parametrize("family, data_width, clocks", [("us", 256, "pcie-2%-faster"),
    ("usp", 256, "pcie-3%-slower"), ("usp", 128, "250-vs-125MHz"), ("us", 128, "pcie-2%-faster")])
def test_discontinue_discards_the_tlp(family, data_width, clocks):
    rng = random.Random(data_width + len(family))
    rcs, cqs = inbound_traffic(rng, MPS)
    out, count = run_us_inbound(data_width, family, rcs, cqs, CLOCKS[clocks], 21, mps=MPS)
    good_rc = [model_rc_to_tlp(d) for d, uf, ul in rcs if not ul]
    good_cq = [model_cq_to_tlp(d, uf & 0xf, uf >> 4) for d, uf, ul in cqs if not ul]
    assert [t for t in out if is_completion(t)] == good_rc
    assert [t for t in out if not is_completion(t)] == good_cq
    assert count == 6

# PacketFIFO alone ---------------------------------------------------------------------------------

def fifo_run(depth, packets, seed, ready=0.7, idle=0.3, discard=()):
    """Packets (lists of words) through a PacketFIFO; every beat on its source checked to belong to
    a packet whose last beat had been written before its first one was presented."""
    dut = PacketFIFO(stream.EndpointDescription([("data", 16)]), depth)
    rng, out, log = random.Random(seed), [], dict(stored=0, overflowed=0, discarded=0)
    def send():
        for i, p in enumerate(packets):
            for j, w in enumerate(p):
                while rng.random() < idle:
                    yield dut.sink.valid.eq(0)
                    yield
                yield dut.sink.valid.eq(1)
                yield dut.sink.data.eq(w)
                yield dut.sink.last.eq(j == len(p) - 1)
                yield dut.discard.eq(i in discard and j == len(p) - 1)
                yield
                while not (yield dut.sink.ready):
                    yield
                if j == len(p) - 1 and i not in discard and len(p) <= depth:
                    log["stored"] += 1 # Its last beat was taken at the edge just passed.
        yield dut.sink.valid.eq(0)
        for _ in range(4*depth + 20):
            yield
    @passive
    def receive():
        rrng, cur, ready_now = random.Random(seed + 1), None, 0
        while True:
            yield
            v = yield dut.source.valid
            if cur is not None:
                assert v, "tvalid dropped inside a packet"
            if v and ready_now:
                w, last, first = (yield dut.source.data), (yield dut.source.last), (yield dut.source.first)
                assert first == (cur is None)
                if cur is None:
                    assert log["stored"] > len(out), "a packet presented before its last beat came"
                    cur = []
                cur.append(w)
                if last:
                    out.append(cur)
                    cur = None
            ready_now = int(rrng.random() < ready)
            yield dut.source.ready.eq(ready_now)
    @passive
    def count():
        while True:
            yield
            log["overflowed"] += (yield dut.overflowed)
            log["discarded"]  += (yield dut.discarded)
    run_simulation(dut, [send(), receive(), count()])
    return out, log

def test_packet_fifo_whole_packets_and_discard():
    rng = random.Random(1)
    packets = [[rng.getrandbits(16) for _ in range(rng.randrange(1, 9))] for _ in range(40)]
    out, log = fifo_run(16, packets, 2, discard={3, 4, 17, 39})
    assert out == [p for i, p in enumerate(packets) if i not in {3, 4, 17, 39}]
    assert (log["discarded"], log["overflowed"]) == (4, 0)

def test_packet_fifo_drops_packets_longer_than_itself():
    """A packet of depth + 1 beats can never be whole: dropped and counted, the FIFO does not wait
    for it forever; a packet of exactly ``depth`` beats passes."""
    rng = random.Random(3)
    packets = [[rng.getrandbits(16) for _ in range(n)] for n in [3, 9, 8, 1, 20, 2, 8]]
    out, log = fifo_run(8, packets, 4, ready=0.9)
    assert out == [p for p in packets if len(p) <= 8]
    assert (log["overflowed"], log["discarded"]) == (2, 0)

def test_packet_fifo_parameters():
    with pytest.raises(ValueError, match="PacketFIFO depth must be a power of two, at least 2, not 24"):
        PacketFIFO(stream.EndpointDescription([("data", 8)]), 24)
    with pytest.raises(ValueError, match="not 1"):
        PacketFIFO(stream.EndpointDescription([("data", 8)]), 1)

@pytest.mark.parametrize("data_width, depths", [
    # (RQ, CC, RC, CQ): two packets of the largest each carries, rounded up to a power of two.
    (128, (4, 128, 4, 128)),   # RQ 16 + 8 B = 2 beats; CC 12 + 512 B = 33; RC 12 + 8 = 2; CQ 16 + 512 = 33.
    (256, (2, 64, 2, 64)),     # RQ 1 beat; CC 17; RC 1; CQ 17.
])
def test_packet_fifo_sizing(data_width, depths):
    assert SHORT_PAYLOAD == 8 # RCRequester: reads and writes of 1 or 2 dwords.
    dp = USRootPortDatapath(data_width, "usp", mps=MPS)
    b  = dp.bridge
    assert (b.rq_buffer.depth, b.cc_buffer.depth, b.rc_buffer.depth, b.cq_buffer.depth) == depths
    assert packet_beats(MPS, 12, data_width) == {128: 33, 256: 17}[data_width]
    for buf, payload, desc in [(b.rq_buffer, SHORT_PAYLOAD, 16), (b.cc_buffer, MPS, 12),
        (b.rc_buffer, SHORT_PAYLOAD, 12), (b.cq_buffer, MPS, 16)]:
        assert buf.depth >= 2*packet_beats(payload, desc, data_width)

def test_bridge_parameters():
    with pytest.raises(ValueError, match="mps must be a payload size in bytes, a multiple of 4 from 4 "
        "to 4096, not 8192"):
        TLPDescriptorBridge(256, "usp", mps=8192)
    with pytest.raises(ValueError, match="short_payload must be a payload size in bytes"):
        TLPDescriptorBridge(256, "usp", short_payload=6)
