#
# This file is part of LiteRecorder.
#
# SPDX-License-Identifier: BSD-2-Clause

"""Stream ports of the recorder (cores/recorder/frontend/stream.py) in Migen's simulator: widths 8..512
bits, clock domains slower and faster than sys, `keep` on the final beat, random valid/ready, the
drop policy's whole-word refusals and their exact accounting (`gap`), the replay unpacker."""

import random

import pytest

from migen import *

from litex.soc.interconnect import stream
from litex.soc.interconnect.axi import AXIStreamInterface

from literecorder.cores.recorder.frontend.stream import (RecordPort, ReplayPort, ControlPort, axis_to_user, user_to_axis,
    user_keep)
from literecorder.cores.recorder.common import check_stream_width

pytestmark = pytest.mark.unit

def beats_of(data, width):
    """(data int, keep int, last) beats of a byte string for a `width`-bit stream."""
    nb = max(width//8, 1)
    out = []
    for i in range(0, len(data), nb):
        chunk = data[i:i + nb]
        out.append((int.from_bytes(chunk, "little"), (1 << len(chunk)) - 1, i + nb >= len(data)))
    return out

def run(dut, generators, cd_period):
    """Simulates ``dut`` in sys (10 ns) and, with ``cd_period``, a "user" domain: both with a reset
    (the ports' clock-domain crossings reset both sides on either reset, in two clock domains of
    their own driven by sys and user's clocks, which Migen's simulator must tick too)."""
    clocks = {"sys": 10}
    if cd_period:
        clocks["user"] = cd_period
        for name in clocks:
            if not hasattr(dut, "cd_" + name):
                setattr(dut.clock_domains, "cd_" + name, ClockDomain(name))
        dut = dut.get_fragment()
        clocks.update(derived_clocks(dut, clocks))
    run_simulation(dut, generators, clocks=clocks)

def derived_clocks(fragment, clocks):
    """{domain: period} of the domains whose clock is another domain's (``cd.clk.eq(ClockSignal(x))``,
    as ``ClockDomainCrossing(with_common_rst=True)`` makes them)."""
    from migen.fhdl.structure import _Assign
    by_clk = {cd.clk: cd.name for cd in fragment.clock_domains}
    out = {}
    for st in fragment.comb:
        if isinstance(st, _Assign) and isinstance(st.r, ClockSignal) and st.l in by_clk:
            out[by_clk[st.l]] = clocks[st.r.cd]
    return out

def _taken(source, words, *fields, started=None):
    """A passive process appending the tuple of ``fields`` of every word ``source`` hands over (once
    ``started`` is not empty, if given)."""
    @passive
    def monitor():
        while True:
            if (started is None or started) and (yield source.valid) and (yield source.ready):
                word = []
                for f in fields:
                    word.append((yield getattr(source, f)))
                words.append(tuple(word))
            yield
    return monitor()

# Record port: lossless ------------------------------------------------------------------------------

@pytest.mark.parametrize("width, ring, period", [
    (8,   128, None),     # 16 beats per word, sys domain
    (32,  512, 13),       # slower user clock
    (128, 512, 7),        # faster user clock
    (512, 512, 13),       # one beat per word
    (16,  64,  7),
])
def test_record_port_packs_every_byte_in_order_with_keep_on_the_final_beat(width, ring, period):
    rng  = random.Random(width*1000 + ring)
    nb   = max(width//8, 1)
    size = 5*ring//8 + nb//2 + 1 if nb > 1 else 5*ring//8 + 3   # not a whole number of words nor beats
    data = bytes(rng.randrange(256) for _ in range(size))
    cd   = "user" if period else "sys"
    dut  = RecordPort(width, ring, cd, depth=4)
    beats = beats_of(data, width)
    words = []

    def source():
        for d, k, last in beats:
            while rng.random() < 0.3:
                yield dut.sink.valid.eq(0)
                yield
            yield dut.sink.valid.eq(1)
            yield dut.sink.data.eq(d)
            yield dut.sink.keep.eq(k if last else (1 << nb) - 1)
            yield dut.sink.last.eq(last)
            yield
            while not (yield dut.sink.ready):
                yield
        yield dut.sink.valid.eq(0)

    def sink():
        while True:
            yield dut.source.ready.eq(rng.random() < 0.6)
            yield
            if (yield dut.source.valid) and (yield dut.source.ready):
                n = yield dut.source.bytes
                d = yield dut.source.data
                words.append((d.to_bytes(ring//8, "little")[:n], (yield dut.source.last),
                    (yield dut.source.gap), (yield dut.source.keep_err), d >> (8*n)))
                if words[-1][1]:
                    return

    run(dut, {cd: [source()], "sys": [sink()]} if cd != "sys" else {"sys": [source(), sink()]}, period)
    assert b"".join(w[0] for w in words) == data
    assert [w[1] for w in words] == [0]*(len(words) - 1) + [1]
    assert all(w[2] == 0 and w[3] == 0 for w in words)
    assert words[-1][4] == 0                      # bytes beyond `keep` are zero
    assert all(len(w[0]) == ring//8 for w in words[:-1])

def test_record_port_flags_a_partial_keep_before_the_final_beat():
    dut = RecordPort(32, 128, "sys", depth=4)
    got = []
    def gen():
        yield dut.source.ready.eq(1)
        for i, (keep, last) in enumerate([(0xf, 0), (0x3, 0), (0xf, 0), (0xf, 0), (0xf, 0), (0x5, 1)]):
            yield dut.sink.valid.eq(1)
            yield dut.sink.data.eq(0x11111111*(i + 1))
            yield dut.sink.keep.eq(keep)
            yield dut.sink.last.eq(last)
            yield
            if (yield dut.source.valid):
                got.append(((yield dut.source.keep_err), (yield dut.source.bytes)))
        yield dut.sink.valid.eq(0)
        for _ in range(8):
            yield
            if (yield dut.source.valid):
                got.append(((yield dut.source.keep_err), (yield dut.source.bytes)))
    run_simulation(dut, gen())
    # Word 0: beat 1 kept only 2 of 4 bytes (flagged, recorded whole). Word 1: the final keep 0b0101
    # is not contiguous (flagged); its bytes count up to the highest kept byte.
    assert got == [(1, 16), (1, 7)]

# Record port: drop policy ---------------------------------------------------------------------------

@pytest.mark.parametrize("width, period", [(32, None), (64, 7), (128, 13)])
def test_drop_policy_refuses_whole_words_and_reports_every_dropped_byte(width, period):
    """A source that cannot wait: a beat is offered once; the port takes it or refuses it (ready).
    The reader stalls for long stretches: the port refuses whole ring words, and the words it keeps
    carry exactly the bytes refused in front of them."""
    rng  = random.Random(width)
    ring = 128
    nb   = width//8
    lanes = ring//width
    n    = 40*lanes + 1                 # beats; the final one with last (a partial word)
    cd   = "user" if period else "sys"
    dut  = RecordPort(width, ring, cd, depth=4)
    taken = []                          # per beat: taken?
    words = []

    def source():
        yield dut.drop.eq(1) if cd == "sys" else None
        for i in range(n):
            yield dut.sink.valid.eq(1)
            yield dut.sink.data.eq(i + 1)
            yield dut.sink.keep.eq((1 << nb) - 1)
            yield dut.sink.last.eq(i == n - 1)
            yield
            taken.append((yield dut.sink.ready))
            # Never waits: every beat is offered for one cycle.
        yield dut.sink.valid.eq(0)

    def sink():
        yield dut.drop.eq(1)
        stall = 0
        while True:
            if stall == 0 and rng.random() < 0.05:
                stall = rng.randrange(10, 60)
            yield dut.source.ready.eq(stall == 0 and rng.random() < 0.8)
            stall = max(stall - 1, 0)
            yield
            if (yield dut.source.valid) and (yield dut.source.ready):
                words.append(((yield dut.source.data), (yield dut.source.bytes), (yield dut.source.gap),
                    (yield dut.source.last)))
                if words[-1][3]:
                    return

    gens = {cd: [source()], "sys": [sink()]} if cd != "sys" else {"sys": [source(), sink()]}
    run(dut, gens, period)
    assert len(taken) == n
    # Whole words: within each group of `lanes` beats, all taken or all refused (the final group may
    # be a partial word: its refusal is still one decision).
    for g in range(0, n, lanes):
        assert len(set(taken[g:g + lanes])) == 1, (g, taken[g:g + lanes])
    assert not all(taken) and any(taken)
    # The kept words hold the taken beats in order; gaps count the refused bytes before each word.
    pos, expect_gap, kept = 0, 0, []
    for w in words:
        d, nbytes, gap, last = w
        assert gap == sum(nb for i in range(pos, pos + gap//nb) if not taken[i]) == gap
        assert all(not taken[i] for i in range(pos, pos + gap//nb))
        pos += gap//nb
        if nbytes:
            for l in range((nbytes + nb - 1)//nb):
                assert taken[pos] and (d >> (width*l)) & ((1 << width) - 1) == pos + 1
                pos += 1
    assert pos == n                     # every beat accounted: kept or in a gap (or the marker's)
    assert sum(w[2] for w in words) == nb*sum(1 for t in taken if not t)

def test_drop_policy_keeps_the_end_when_the_final_beat_is_refused():
    dut = RecordPort(32, 64, "sys", depth=4)
    words = []
    def gen():
        yield dut.drop.eq(1)
        yield dut.source.ready.eq(0)
        for i in range(12):               # 6 words; the FIFO holds 4: the last 2 words are refused
            yield dut.sink.valid.eq(1)
            yield dut.sink.data.eq(i)
            yield dut.sink.keep.eq(0xf)
            yield dut.sink.last.eq(i == 11)
            yield
        yield dut.sink.valid.eq(0)
        yield dut.source.ready.eq(1)
        for _ in range(12):
            yield
            if (yield dut.source.valid):
                words.append(((yield dut.source.bytes), (yield dut.source.gap), (yield dut.source.last)))
    run_simulation(dut, gen())
    # 4 words kept, then a marker: no data, the 16 refused bytes, last.
    assert words == [(8, 0, 0)]*4 + [(0, 16, 1)]

def test_drop_policy_counts_the_beats_refused_while_a_marker_waits():
    """A packetized source that cannot wait (`last` every 3 beats), 32 into 64 bits, a FIFO of 4 words,
    the reader stalled until beat 20: a refused `last` leaves a marker; the beats offered until the
    marker is pushed are refused too and must be counted (52 of 120 bytes vanished uncounted)."""
    dut = RecordPort(32, 64, "sys", depth=4)
    n = 30
    taken, words = [], []
    def gen():
        yield dut.drop.eq(1)
        for i in range(n):
            yield dut.sink.valid.eq(1)
            yield dut.sink.data.eq(i + 1)
            yield dut.sink.keep.eq(0xf)
            yield dut.sink.last.eq(i % 3 == 2)
            yield dut.source.ready.eq(i >= 20)
            yield
            taken.append((yield dut.sink.ready))
        yield dut.sink.valid.eq(0)
        for _ in range(20):
            yield
    run_simulation(dut, [gen(), _taken(dut.source, words, "bytes", "gap", "data")])
    assert sum(b + g for b, g, _ in words) == 4*n, words
    # In order: each word's gap is the beats refused in front of it, then its own beats.
    pos = 0
    for nbytes, gap, data in words:
        assert not any(taken[pos:pos + gap//4]), (pos, gap)
        pos += gap//4
        for l in range(nbytes//4):
            assert taken[pos] and (data >> 32*l) & 0xffffffff == pos + 1
            pos += 1
    assert pos == n

def test_start_clears_a_pending_gap():
    dut = RecordPort(32, 64, "sys", depth=4)
    words = []
    def gen():
        yield dut.drop.eq(1)
        for i in range(12):
            yield dut.sink.valid.eq(1)
            yield dut.sink.data.eq(i)
            yield dut.sink.keep.eq(0xf)
            yield
        yield dut.sink.valid.eq(0)
        yield dut.clear.eq(1)
        yield
        yield dut.clear.eq(0)
        yield dut.source.ready.eq(1)
        for _ in range(6):
            yield
        for i in range(2):
            yield dut.sink.valid.eq(1)
            yield dut.sink.data.eq(100 + i)
            yield
        yield dut.sink.valid.eq(0)
        for _ in range(6):
            yield
            if (yield dut.source.valid):
                words.append(((yield dut.source.data) & 0xffffffff, (yield dut.source.gap)))
    run_simulation(dut, gen())
    assert words == [(100, 0)]

def _record_around_a_clear(before, drop=1, drop_after=None, clear=True, new=4, drain=True):
    """RecordPort(32, 128, sys, depth 1) with the drop policy ``drop``: the beats ``before`` (data,
    keep, last) are offered once each while the reader waits, the reader then drains the FIFO (or,
    ``drain`` False, from the start on); a start (``clear``) and the policy ``drop_after``; ``new``
    beats 0x11111111, 0x22222222 ... -> the words after the start (bytes, gap, keep_err, last, data)."""
    dut = RecordPort(32, 128, "sys", depth=1)
    words, started = [], []
    def gen():
        yield dut.drop.eq(drop)
        for d, k, l in before:
            yield dut.sink.valid.eq(1)
            yield dut.sink.data.eq(d)
            yield dut.sink.keep.eq(k)
            yield dut.sink.last.eq(l)
            yield
        yield dut.sink.valid.eq(0)
        yield dut.sink.last.eq(0)
        yield dut.source.ready.eq(drain)
        for _ in range(6):
            yield
        yield dut.drop.eq(drop if drop_after is None else drop_after)
        yield dut.clear.eq(clear)
        yield
        yield dut.clear.eq(0)
        yield dut.source.ready.eq(1)
        started.append(1)
        for i in range(new):
            yield dut.sink.valid.eq(1)
            yield dut.sink.data.eq(0x11111111*(i + 1))
            yield dut.sink.keep.eq(0xf)
            yield
        yield dut.sink.valid.eq(0)
        for _ in range(6):
            yield
    run_simulation(dut, [gen(), _taken(dut.source, words, "bytes", "gap", "keep_err", "last", "data",
        started=started)])
    return words

NEW_WORD = 0x44444444_33333333_22222222_11111111

def test_clear_keeps_a_partly_assembled_word_and_its_keep_error():
    """A word being assembled when the start arrives is kept, with its keep error: in another clock
    domain the start arrives after words completed since were recorded, forgetting it would leave a
    hole (test_a_late_clear_leaves_no_hole)."""
    words = _record_around_a_clear([(0x0bad0bad, 0x3, 0)], drop=0)
    assert words == [(16, 0, 1, 0, 0x33333333_22222222_11111111_0bad0bad)]

@pytest.mark.parametrize("period", [3, 7, 13, 23])
def test_a_late_clear_leaves_no_hole(period):
    """A free-running counter (drop policy) through a port in its own clock domain; the start (clear)
    reaches it a few of its cycles late: the words taken after the start are consecutive counts but
    for the bytes each word says were dropped before it (a forgotten half word was an unlogged hole)."""
    class T(Module):
        def __init__(self):
            self.clock_domains.cd_sys  = ClockDomain("sys")
            self.clock_domains.cd_user = ClockDomain("user")
            self.submodules.port = RecordPort(32, 128, "user", depth=8)
            self.count = Signal(32, reset=1)
            self.comb += [self.port.drop.eq(1), self.port.sink.valid.eq(1), self.port.sink.keep.eq(0xf),
                self.port.sink.data.eq(self.count)]
            self.sync.user += self.count.eq(self.count + 1)
    t = T()
    frag = t.get_fragment()
    clocks = {"sys": 10, "user": period}
    clocks.update(derived_clocks(frag, clocks))
    words, started = [], []
    def gen():
        yield t.port.source.ready.eq(1)
        for _ in range(30):
            yield
        yield t.port.clear.eq(1)
        yield
        yield t.port.clear.eq(0)
        started.append(1)
        for _ in range(40):
            yield
    @passive
    def monitor():
        while True:
            if started and (yield t.port.source.valid) and (yield t.port.source.ready):
                d = yield t.port.source.data
                words.append(([(d >> 32*i) & 0xffffffff for i in range(4)], (yield t.port.source.gap)))
            yield
    run_simulation(frag, {"sys": [gen(), monitor()]}, clocks=clocks)
    assert len(words) >= 4
    for (prev, _), (word, gap) in zip(words, words[1:]):
        assert word == list(range(word[0], word[0] + 4)) and word[0] == prev[-1] + 1 + gap//4, words

def test_a_last_refused_as_the_marker_goes_gets_its_own_marker():
    """Drop policy: a refused `last` leaves a marker; a second `last` refused in the cycle the marker
    is pushed gets a marker of its own (its bytes were counted but its end lost)."""
    dut = RecordPort(32, 64, "sys", depth=1)
    words = []
    def gen():
        yield dut.drop.eq(1)
        # Fill the FIFO (one word), then a refused word ending with `last`: a marker waits.
        for i, last in [(0, 0), (1, 0), (2, 0), (3, 1)]:
            yield dut.sink.valid.eq(1)
            yield dut.sink.data.eq(i)
            yield dut.sink.keep.eq(0xf)
            yield dut.sink.last.eq(last)
            yield
        # A `last` beat offered in the cycle the reader makes room (the marker goes).
        yield dut.sink.data.eq(4)
        yield dut.sink.last.eq(1)
        yield dut.source.ready.eq(1)
        yield
        yield dut.sink.valid.eq(0)
        yield dut.sink.last.eq(0)
        for _ in range(8):
            yield
    run_simulation(dut, [gen(), _taken(dut.source, words, "bytes", "gap", "last")])
    assert words[0] == (8, 0, 0)
    assert words[1:] == [(0, 8, 1), (0, 4, 1)], words

def test_clear_forgets_a_word_being_refused():
    """Drop policy: the FIFO (1 word) is full, a word is refused from its first beat; the start comes
    in the middle of that word: the recording's first word is kept whole, with no gap (it used to be
    refused as the rest of the old word and counted as a drop: a false overflow)."""
    words = _record_around_a_clear([(0xaaaa0000 + i, 0xf, 0) for i in range(6)], new=8)
    assert words == [(16, 0, 0, 0, NEW_WORD), (16, 0, 0, 0, 0x88888888_77777777_66666666_55555555)]

def test_clear_forgets_a_pending_marker_and_a_lossless_policy_forgets_the_drop_state():
    """Drop policy: a word in the FIFO, the next one refused with `last` (a marker pending, with its
    gap); the reader waits until the start of a recording under the drop policy (clear) or a
    lossless one (no clear): the word from before, then the new one, no marker word and no gap (a
    marker with `last` used to end the recording at once)."""
    before = [(0xaaaa0000 + i, 0xf, 0) for i in range(4)] + [(0xbbbb0000, 0xf, 1)]
    old = (16, 0, 0, 0, 0xaaaa0003_aaaa0002_aaaa0001_aaaa0000)
    for drop_after, clear in [(1, True), (0, False)]:
        words = _record_around_a_clear(before, drop_after=drop_after, clear=clear, drain=False)
        assert words == [old, (16, 0, 0, 0, NEW_WORD)], (drop_after, clear, words)

# Replay port ----------------------------------------------------------------------------------------

@pytest.mark.parametrize("width, ring, period", [(8, 64, 13), (32, 128, None), (128, 512, 7), (512, 512, 13)])
def test_replay_port_unpacks_words_with_an_exact_final_keep(width, ring, period):
    rng  = random.Random(width + ring)
    nb   = max(width//8, 1)
    size = 3*ring//8 + 5
    data = bytes(rng.randrange(256) for _ in range(size))
    cd   = "user" if period else "sys"
    dut  = ReplayPort(width, ring, cd, depth=4)
    words = [data[i:i + ring//8] for i in range(0, size, ring//8)]
    out = bytearray()
    lasts = []

    def source():
        for i, w in enumerate(words):
            while rng.random() < 0.3:
                yield dut.sink.valid.eq(0)
                yield
            yield dut.sink.valid.eq(1)
            yield dut.sink.data.eq(int.from_bytes(w, "little"))
            yield dut.sink.bytes.eq(len(w))
            yield dut.sink.last.eq(i == len(words) - 1)
            yield
            while not (yield dut.sink.ready):
                yield
        yield dut.sink.valid.eq(0)

    def sink():
        while True:
            yield dut.source.ready.eq(rng.random() < 0.7)
            yield
            if (yield dut.source.valid) and (yield dut.source.ready):
                keep = yield dut.source.keep
                k = bin(keep).count("1") if nb > 1 else 1
                assert keep == (1 << k) - 1
                out.extend(((yield dut.source.data)).to_bytes(nb, "little")[:k])
                lasts.append((yield dut.source.last))
                if lasts[-1]:
                    return

    run(dut, {"sys": [source()], cd: [sink()]} if cd != "sys" else {"sys": [source(), sink()]}, period)
    assert bytes(out) == data
    assert lasts == [0]*(len(lasts) - 1) + [1]

# User streams: LiteX or AXI4-Stream, with or without keep --------------------------------------------

def _record_user_stream(ep, keeps):
    """A user stream ``ep`` (source) wired to a RecordPort(width, 128) as add_recorder wires it
    (``axis_to_user``); one beat per entry of ``keeps`` (its keep, if ``ep`` has one), ``last`` on
    the final one. -> the words (bytes, keep_err, last) and the bytes recorded."""
    width = len(ep.data)
    nb = max(width//8, 1)
    dut = Module()
    dut.submodules.p = p = RecordPort(width, 128, "sys", depth=4)
    dut.comb += axis_to_user(ep, p.sink)
    words, data = [], bytearray()
    def gen():
        yield p.source.ready.eq(1)
        for i, keep in enumerate(keeps):
            yield ep.valid.eq(1)
            yield ep.data.eq(int.from_bytes(bytes([i + 1])*nb, "little"))
            if keep is not None:
                yield ep.keep.eq(keep)
            yield ep.last.eq(i == len(keeps) - 1)
            yield
        yield ep.valid.eq(0)
        for _ in range(8):
            yield
    @passive
    def monitor():
        while True:
            if (yield p.source.valid) and (yield p.source.ready):
                n = yield p.source.bytes
                words.append((n, (yield p.source.keep_err), (yield p.source.last)))
                data.extend(((yield p.source.data)).to_bytes(16, "little")[:n])
            yield
    run_simulation(dut, [gen(), monitor()])
    return words, bytes(data)

@pytest.mark.parametrize("ep, keep", [
    (AXIStreamInterface(32),                     0x3),    # TKEEP, 2 bytes on the final beat
    (AXIStreamInterface(32, keep_width=0),       None),   # no TKEEP: its 1-bit placeholder is 0
    (AXIStreamInterface(8, keep_width=0),        None),
    (AXIStreamInterface(8),                      0x1),
    (stream.Endpoint([("data", 32)]),            None),   # a LiteX stream without keep
    (stream.Endpoint([("data", 32), ("keep", 1)]), None), # a 1-bit keep on 32 bits: no byte enables
], ids=["axis32", "axis32-no-tkeep", "axis8-no-tkeep", "axis8", "endpoint32-no-keep", "endpoint32-keep1"])
def test_a_user_stream_without_keep_records_every_byte_and_with_keep_the_final_keep(ep, keep):
    """AXI4-Stream: an absent TKEEP means all bytes valid. LiteX's AXIStreamInterface always has a
    ``keep`` (1 bit, reset 0, with keep_width=0): it used to be taken as the byte enables, the final
    beat lost and every word flagged as a keep error."""
    width = len(ep.data)
    nb = max(width//8, 1)
    n = 6*4//nb                                          # 24 bytes
    words, data = _record_user_stream(ep, [None if keep is None else 2**nb - 1]*(n - 1) + [keep])
    final = nb if keep is None else bin(keep).count("1")
    assert data == b"".join(bytes([i + 1])*nb for i in range(n - 1)) + bytes([n])*final
    assert all(e == 0 for _, e, _ in words) and words[-1][2] == 1

def test_a_keep_that_is_not_one_bit_per_byte_is_refused():
    from literecorder.soc.recorder import _user_stream
    ep = stream.Endpoint([("data", 32), ("keep", 2)])
    with pytest.raises(ValueError, match=r"a 2-bit keep on 32-bit data: keep has one bit per byte \(4 bits\)"):
        user_keep(ep)
    with pytest.raises(ValueError, match="add_recorder: the record stream: a 2-bit keep"):
        _user_stream("record", ep)
    axis = AXIStreamInterface(64, keep_width=0)
    assert _user_stream("record", axis) == 64 and user_keep(axis) is None

@pytest.mark.parametrize("ep", [AXIStreamInterface(32), AXIStreamInterface(32, keep_width=0)],
    ids=["axis32", "axis32-no-tkeep"])
def test_replay_to_a_user_stream_drives_its_keep_only_if_it_has_one(ep):
    dut = Module()
    dut.submodules.q = q = ReplayPort(32, 128, "sys", depth=4)
    dut.comb += user_to_axis(q.source, ep)
    beats = []
    def gen():
        yield ep.ready.eq(1)
        yield q.sink.valid.eq(1)
        yield q.sink.data.eq(0x0c0b0a09_08070605_04030201)
        yield q.sink.bytes.eq(10)
        yield q.sink.last.eq(1)
        yield
        while not (yield q.sink.ready):
            yield
        yield q.sink.valid.eq(0)
        for _ in range(8):
            yield
            if (yield ep.valid):
                beats.append(((yield ep.data), (yield ep.keep), (yield ep.last)))
    run_simulation(dut, gen())
    keep = [0xf, 0xf, 0x3] if ep.keep_width else [0, 0, 0]     # keep_width=0: not driven
    assert beats == [(0x04030201, keep[0], 0), (0x08070605, keep[1], 0), (0x0c0b0a09, keep[2], 1)]

# Reset of one clock domain alone ---------------------------------------------------------------------

@pytest.mark.parametrize("reset", ["user", "sys"])
@pytest.mark.parametrize("direction", ["record", "replay"])
def test_a_reset_of_one_clock_domain_alone_leaves_no_phantom_word_in_the_crossing(direction, reset):
    """Six 16-byte words cross (record: user -> sys; replay: sys -> user) and are all taken; then one
    domain alone is reset (the user's PLL relocks, its own reset; or sys), the other side's reader
    goes on: nothing more crosses. The crossing's FIFO used to keep the other side's pointer: the
    difference came out as phantom words; with both sides reset, for a few cycles while the reset
    begins (each side's copy of the other's pointer is late)."""
    dut = (RecordPort if direction == "record" else ReplayPort)(128, 128, "user", depth=4)
    dut.clock_domains.cd_sys  = ClockDomain("sys")
    dut.clock_domains.cd_user = ClockDomain("user")
    into, out = dut.sink, dut.source
    cd_in, cd_out = ("user", "sys") if direction == "record" else ("sys", "user")
    got = []
    def writer():
        for i in range(6):
            yield into.valid.eq(1)
            yield into.data.eq(i + 1)
            if direction == "record":
                yield into.keep.eq(0xffff)
            else:
                yield into.bytes.eq(16)
            yield
            while not (yield into.ready):
                yield
        yield into.valid.eq(0)
    def reset_one():
        rst = getattr(dut, "cd_" + reset).rst
        for _ in range(40):
            yield
        yield rst.eq(1)                   # for a few cycles of both domains (Migen's simulator
        for _ in range(8):                # passes the reset through, without the synchronizer's
            yield                         # two cycles)
        yield rst.eq(0)
        for _ in range(40):
            yield
    @passive
    def reader():
        yield out.ready.eq(1)
        while True:
            yield
            if (yield out.valid) and (yield out.ready):
                got.append((yield out.data))
    gens = {cd_in: [writer()], cd_out: [reader()]}
    gens.setdefault(reset, []).append(reset_one())
    run(dut, gens, 13)
    assert got == [1, 2, 3, 4, 5, 6]

# Parameters ----------------------------------------------------------------------------------------

@pytest.mark.parametrize("width", [0, 4, 24, 1024, "x"])
def test_stream_widths_are_checked(width):
    with pytest.raises(ValueError, match="a power of two from 8 to 512 bits"):
        check_stream_width("RecordPort", width, 512)

def test_control_port_crosses_pulses_and_levels():
    dut = ControlPort("user")
    seen = []
    def user():
        for _ in range(3):
            yield
        yield dut.start.eq(1)
        yield
        yield dut.start.eq(0)
        for _ in range(20):
            yield
        seen.append(("busy", (yield dut.busy)))
    def sys():
        yield dut.sys_busy.eq(1)
        for _ in range(30):
            if (yield dut.sys_start):
                seen.append(("start", 1))
            yield
    run_simulation(dut, {"user": [user()], "sys": [sys()]}, clocks={"sys": 10, "user": 13})
    assert seen.count(("start", 1)) == 1 and ("busy", 1) in seen

def _control_events(user_period, edges, width, offset=0):
    """ControlPort("user") (sys: 10 ns): ``start`` high ``width`` user cycles at each of the user
    cycles ``edges`` (+ ``offset``). -> sys cycles with sys_start."""
    dut = ControlPort("user")
    events = []
    def user():
        for i in range(edges[-1] + width + offset + 40):
            yield dut.start.eq(any(e + offset <= i < e + offset + width for e in edges))
            yield
    @passive
    def sys():
        n = 0
        while True:
            if (yield dut.sys_start):
                events.append(n)
            n += 1
            yield
    run_simulation(dut, {"user": [user()], "sys": [sys()]}, clocks={"sys": 10, "user": user_period})
    return events

@pytest.mark.parametrize("user_period", [3, 4, 7, 13, 23])
def test_control_port_gives_one_event_per_rising_edge_whatever_its_length_and_the_clock_ratio(user_period):
    """A hardware start held 1 to 4 user cycles is one start in sys, from a faster or slower user
    clock and at any phase (a toggle per user cycle gave 0, 1 or N); rising edges two sys periods
    apart (the minimum doc/recording.md gives) are one event each."""
    for width in (1, 2, 3, 4):
        for offset in range(3):
            assert len(_control_events(user_period, [3], width, offset)) == 1, (width, offset)
    spacing = -(-20//user_period) + 1           # user cycles: >= 2 sys periods, low in between
    for width in (1, spacing - 1):
        edges = [3 + k*spacing for k in range(4)]
        assert len(_control_events(user_period, edges, width)) == 4, width

def test_control_port_in_sys_gives_one_event_per_rising_edge():
    dut = ControlPort("sys")
    events = []
    def gen():
        for i in range(20):
            yield dut.stop.eq(2 <= i < 6 or 8 <= i < 9)
            yield
            events.append((yield dut.sys_stop))
    run_simulation(dut, gen())
    assert sum(events) == 2

def test_a_crossing_whose_clock_domains_litex_names_otherwise_is_refused_by_name(monkeypatch):
    """The crossing gates each side with the reset of the domains LiteX's ClockDomainCrossing makes
    (from<duid>, to<duid>): a LiteX that names them otherwise is refused with what was found."""
    class Renamed(stream.ClockDomainCrossing):
        def __init__(self, *args, **kwargs):
            super().__init__(*args, **kwargs)
            for cd in self._fragment.clock_domains:
                cd.name = "x_" + cd.name
    RecordPort(32, 64, "user")          # as LiteX names them: built
    monkeypatch.setattr(stream, "ClockDomainCrossing", Renamed)
    with pytest.raises(RuntimeError, match=r"has clock domains \['x_from\d+', 'x_to\d+'\], expected \['from\d+', 'to\d+'\]"):
        RecordPort(32, 64, "user")
