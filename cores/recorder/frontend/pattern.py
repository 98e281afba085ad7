#
# This file is part of LiteRecorder.
#
# SPDX-License-Identifier: BSD-2-Clause

"""Test pattern of the recorder and a DRAM engine that fills or checks a region with it.

Word ``i`` (32-bit, from the start of a region) of the pattern with seed ``s`` is
``xs(xs(s + i))`` with ``xs`` the xorshift32 step (x ^= x << 13; x ^= x >> 17; x ^= x << 5):
position dependent (misplaced data is caught), seed dependent (stale data is caught), and a few
XOR layers per word in logic. The BIOS and the tests compute the same function.
"""

from migen import *

from litex.gen import *

from litex.soc.interconnect import stream
from litex.soc.interconnect.csr import *


# Pattern ------------------------------------------------------------------------------------------

def xorshift32(x):
    """Migen expression of one xorshift32 step on a 32-bit value."""
    a = Signal(32)
    b = Signal(32)
    c = Signal(32)
    return a, b, c, [a.eq(x ^ (x << 13)), b.eq(a ^ (a >> 17)), c.eq(b ^ (b << 5))]

def pattern_word(seed, index):
    """(word signal, statements): the pattern word for ``index`` (both 32-bit expressions)."""
    x = Signal(32)
    stmts = [x.eq(seed + index)]
    _, _, y, s1 = xorshift32(x)
    _, _, z, s2 = xorshift32(y)
    return z, stmts + s1 + s2

def pattern_beat(seed, index, data_width):
    """(data, statements): beat ``index`` of ``data_width`` bits = pattern words
    ``index*n .. index*n + n-1`` (n = data_width/32, word l in bits 32l..32l+31).

    Built from the linearity of ``xs(xs(.))`` over GF(2) instead of n whole words: with
    ``k = log2(n)``, ``seed = sh*2^k + sl`` and ``H = sh + index`` (mod 2^(32-k)), word l is
    ``M((H + c)*2^k + L)`` with ``sl + l = c*2^k + L``; the two parts have no bit in common, so it
    is ``M(H*2^k) ^ M(L)`` or ``M((H+1)*2^k) ^ M(L)`` (``M = xs(xs(.))``). Two whole words per beat,
    then per lane and bit a function of ``sl`` and those two bits (one LUT6 up to 512 bits)."""
    nw = data_width//32
    if nw == 1:
        return pattern_word(seed, index)
    k     = log2_int(nw)
    data  = Signal(data_width)
    h     = Signal(32 - k)
    stmts = [h.eq(seed[k:] + index)]
    p0, s0 = pattern_word(0, Cat(Constant(0, k), h))        # M(H*2^k)
    p1, s1 = pattern_word(0, Cat(Constant(0, k), h + 1))    # M((H+1)*2^k)
    stmts += s0 + s1
    for l in range(nw):
        low = Signal(k + 1)                                  # sl + l = c*2^k + L
        ml, sm = pattern_word(0, low[:k])                    # M(L)
        stmts += sm + [
            low.eq(seed[:k] + l),
            data[32*l:32*(l+1)].eq(Mux(low[k], p1, p0) ^ ml),
        ]
    return data, stmts

def pattern_word_py(seed, i):
    def xs(x):
        x ^= (x << 13) & 0xffffffff
        x ^= x >> 17
        x ^= (x << 5) & 0xffffffff
        return x
    return xs(xs((seed + i) & 0xffffffff))

def pattern_bytes_py(seed, offset, length):
    """Bytes ``offset .. offset+length-1`` of the pattern stream with ``seed`` (little-endian words)."""
    import struct
    w0 = offset//4
    w1 = (offset + length + 3)//4
    data = b"".join(struct.pack("<I", pattern_word_py(seed, i)) for i in range(w0, w1))
    return data[offset - 4*w0:offset - 4*w0 + length]

# Rate limiter -------------------------------------------------------------------------------------

class RateTicker(LiteXModule):
    """``tick`` on average ``rate``/65536 times per cycle (``rate`` 0: every cycle)."""
    def __init__(self):
        self.rate = Signal(16)
        self.tick = Signal()
        acc = Signal(17)
        self.comb += self.tick.eq((self.rate == 0) | acc[16])
        self.sync += acc.eq(acc[:16] + self.rate)

# Pattern Source -----------------------------------------------------------------------------------

class PatternSource(LiteXModule):
    """``beats`` beats of the test pattern with ``seed`` (0: until ``stop``), ``last`` on the final
    beat (and every ``packet_beats`` beats when set), ``keep`` all ones.

    lossless (``strict`` = 0): a produced beat waits for ``ready`` (up to 16 beats of credit);
    strict: a beat is offered in the cycle it is produced and lost if not taken (``lost``), like an
    ADC. Counters are 64-bit."""
    def __init__(self, data_width):
        self.source   = source = stream.Endpoint([("data", data_width), ("keep", data_width//8)])
        self.start    = Signal()
        self.stop     = Signal()
        self.seed     = Signal(32)
        self.beats    = Signal(64)
        self.rate     = Signal(16)
        self.strict   = Signal()
        self.packet_beats = Signal(32)   # `last` every packet_beats beats (0: only at the end).
        self.busy     = Signal()
        self.produced = Signal(64)       # Beats produced (taken + lost).
        self.lost     = Signal(64)

        # # #

        self.ticker = ticker = RateTicker()
        self.comb += ticker.rate.eq(self.rate)
        credit = Signal(5)
        data, stmts = pattern_beat(self.seed, self.produced, data_width)
        self.comb += stmts + [source.data.eq(data), source.keep.eq(2**(data_width//8) - 1)]
        pkt  = Signal(32)
        last = Signal()
        self.comb += [
            last.eq((self.beats != 0) & (self.produced + 1 == self.beats)),
            source.last.eq(last | ((self.packet_beats != 0) & (pkt + 1 == self.packet_beats))),
        ]
        self.comb += If(self.busy,
            If(self.strict,
                source.valid.eq(ticker.tick)
            ).Else(
                source.valid.eq((credit != 0) | ticker.tick)
            )
        )
        produce = Signal()
        self.comb += produce.eq(source.valid & (source.ready | self.strict))
        self.sync += [
            If(self.start,
                self.busy.eq(1), self.produced.eq(0), self.lost.eq(0), credit.eq(0), pkt.eq(0),
            ).Elif(self.stop,
                self.busy.eq(0),
            ).Elif(self.busy,
                If(produce,
                    self.produced.eq(self.produced + 1),
                    If(~source.ready, self.lost.eq(self.lost + 1)),
                    If(source.last & ~last, pkt.eq(0)).Else(pkt.eq(pkt + 1)),
                    If(last, self.busy.eq(0)),
                ),
                # Credits of the lossless mode: ticks not yet turned into a taken beat.
                If(~self.strict,
                    If(ticker.tick & ~(source.valid & source.ready),
                        If(credit != 16, credit.eq(credit + 1))
                    ).Elif(~ticker.tick & source.valid & source.ready & (credit != 0),
                        credit.eq(credit - 1)
                    )
                ),
            )
        ]

# Pattern Checker ----------------------------------------------------------------------------------

class PatternChecker(LiteXModule):
    """Compares incoming beats with the test pattern (``seed``); ``beats`` expected (0: any).

    ``errors``: 32-bit words that differ; ``first_error``: beat index of the first differing beat;
    ``extra``: beats received beyond ``beats`` (length error); ``checked``: beats received;
    ``last_at``: beats received up to and including the first ``last`` (0: none). 64-bit."""
    def __init__(self, data_width):
        self.sink        = sink = stream.Endpoint([("data", data_width), ("keep", data_width//8)])
        self.start       = Signal()
        self.seed        = Signal(32)
        self.beats       = Signal(64)
        self.checked     = Signal(64)
        self.errors      = Signal(64)
        self.first_error = Signal(64)
        self.extra       = Signal(64)
        self.last_at     = Signal(64)

        # # #

        nw = data_width//32
        exp, stmts = pattern_beat(self.seed, self.checked, data_width)
        self.comb += stmts
        diff = Signal(nw)
        # Bytes beyond `keep` (the final beat of an exact-length replay) are not compared.
        self.comb += [diff[l].eq((sink.data[32*l:32*(l+1)] != exp[32*l:32*(l+1)]) & sink.keep[4*l])
            for l in range(nw)]
        ndiff = Signal(max=nw + 1)
        self.comb += ndiff.eq(sum(diff[l] for l in range(nw)))
        self.comb += sink.ready.eq(1)
        self.sync += [
            If(self.start,
                self.checked.eq(0), self.errors.eq(0), self.first_error.eq(0), self.extra.eq(0),
                self.last_at.eq(0),
            ).Elif(sink.valid,
                self.checked.eq(self.checked + 1),
                If(sink.last & (self.last_at == 0), self.last_at.eq(self.checked + 1)),
                If((self.beats != 0) & (self.checked >= self.beats),
                    self.extra.eq(self.extra + 1)
                ).Elif(diff != 0,
                    If(self.errors == 0, self.first_error.eq(self.checked)),
                    self.errors.eq(self.errors + ndiff),
                ),
            )
        ]

# Test streams with CSRs ---------------------------------------------------------------------------

class TestStreams(LiteXModule):
    """Pattern source (a record input) and checker (a replay output) with CSRs."""
    def __init__(self, data_width):
        self.gen    = gen   = PatternSource(data_width)
        self.check  = check = PatternChecker(data_width)
        self.source = gen.source
        self.sink   = check.sink
        self.run    = Signal()     # Pulse: a recording starts (starts the source if gen_on_run).

    def add_csr(self):
        gen, check = self.gen, self.check
        self._ctrl = CSRStorage(description="Test streams control.", fields=[
            CSRField("gen_start",   size=1, pulse=True, description="Start the pattern source."),
            CSRField("gen_stop",    size=1, pulse=True, description="Stop the pattern source."),
            CSRField("check_start", size=1, pulse=True, description="Reset the checker's counters."),
            CSRField("strict",      size=1, offset=4, description="Source: 1 = a beat not taken when produced is lost (like an ADC), 0 = it waits."),
            CSRField("gen_on_run",  size=1, offset=5, description="Start the source in the cycle the next recording starts."),
        ])
        self.comb += [
            gen.start.eq(self._ctrl.fields.gen_start | (self._ctrl.fields.gen_on_run & self.run)),
            gen.stop.eq(self._ctrl.fields.gen_stop),
            check.start.eq(self._ctrl.fields.check_start),
            gen.strict.eq(self._ctrl.fields.strict),
        ]
        self._gen_seed   = CSRStorage(32, description="Source pattern seed.")
        self._gen_beats  = CSRStorage(64, description="Source beats (0: until stopped); ``last`` on the final beat.")
        self._gen_rate   = CSRStorage(16, description="Source rate: beats per cycle x 65536 (0: every cycle).")
        self._gen_packet = CSRStorage(32, description="Source packet length in beats (``last`` on its final beat; 0: none).")
        self._check_seed  = CSRStorage(32, description="Checker pattern seed.")
        self._check_beats = CSRStorage(64, description="Checker: expected beats (0: any).")
        self._gen_busy     = CSRStatus(description="Source running.")
        self._gen_produced = CSRStatus(64, description="Beats produced (taken + lost).")
        self._gen_lost     = CSRStatus(64, description="Beats lost (strict mode).")
        self._check_checked = CSRStatus(64, description="Beats checked.")
        self._check_errors  = CSRStatus(64, description="32-bit words that differ from the pattern.")
        self._check_first   = CSRStatus(64, description="Beat index of the first differing beat.")
        self._check_extra   = CSRStatus(64, description="Beats received beyond the expected length.")
        self._check_last_at = CSRStatus(64, description="Beats received up to the first ``last`` (0: none yet).")
        self.comb += [
            gen.seed.eq(self._gen_seed.storage),
            gen.beats.eq(self._gen_beats.storage),
            gen.rate.eq(self._gen_rate.storage),
            gen.packet_beats.eq(self._gen_packet.storage),
            check.seed.eq(self._check_seed.storage),
            check.beats.eq(self._check_beats.storage),
            self._gen_busy.status.eq(gen.busy),
            self._gen_produced.status.eq(gen.produced),
            self._gen_lost.status.eq(gen.lost),
            self._check_checked.status.eq(check.checked),
            self._check_errors.status.eq(check.errors),
            self._check_first.status.eq(check.first_error),
            self._check_extra.status.eq(check.extra),
            self._check_last_at.status.eq(check.last_at),
        ]

# DRAM Pattern Engine ------------------------------------------------------------------------------

class DRAMPatternEngine(LiteXModule):
    """Fills or checks ``length`` bytes of DRAM at ``base`` (both multiples of the port width) with
    the pattern, one port word per cycle (LiteDRAM permitting), on one LiteDRAM native port.

    No FIFO: the pattern is a function of the word index, so a word is computed when LiteDRAM takes
    its write data (``wdata``, in command order) or returns its read data (``rdata``, in order,
    compared as it arrives: the engine never holds ``rdata`` back). One pattern generator serves
    both, indexed by the word being written (fill) or compared (check).

    Parameters
    ----------
    port : LiteDRAMNativePort
        A read-write port (``crossbar.get_port(mode="both")``).
    """
    def __init__(self, port):
        if port.mode != "both":
            raise ValueError(f"DRAMPatternEngine: a read-write ('both') port is needed, not {port.mode!r}")
        dw    = port.data_width
        nw    = dw//32
        wbyte = dw//8
        sh    = log2_int(wbyte)
        self.port   = port
        self.start  = Signal()
        self.check  = Signal()          # 0: fill, 1: check.
        self.base   = Signal(32)        # Byte address in the port's address space.
        self.length = Signal(32)        # Bytes.
        self.seed   = Signal(32)
        self.busy   = Signal()
        self.errors = Signal(32)        # Words that differ.
        self.first_error = Signal(32)   # Byte offset of the first differing word.

        # # #

        words    = Signal(32 - sh)      # Port words in the region.
        cmd_idx  = Signal(32 - sh)      # Next word to command (write or read).
        data_idx = Signal(32 - sh)      # Next word whose write data or read data is due.
        self.comb += words.eq(self.length[sh:])

        # Pattern of the word due (index = word * nw + lane).
        pat, s = pattern_beat(self.seed, data_idx, dw)
        self.comb += s

        running = Signal()
        self.comb += self.busy.eq(running)

        # Commands: one per word, writes (fill) or reads (check).
        self.comb += [
            port.cmd.valid.eq(running & (cmd_idx != words)),
            port.cmd.we.eq(~self.check),
            port.cmd.addr.eq(self.base[sh:] + cmd_idx),
            port.cmd.last.eq(1),
            port.wdata.valid.eq(running & ~self.check & (data_idx != cmd_idx)),
            port.wdata.data.eq(pat),
            port.wdata.we.eq(2**wbyte - 1),
            port.rdata.ready.eq(1),
        ]
        # Check: compare the returned words in order.
        diff  = Signal(nw)
        self.comb += [diff[l].eq(port.rdata.data[32*l:32*(l+1)] != pat[32*l:32*(l+1)])
            for l in range(nw)]
        ndiff = Signal(max=nw + 1)
        self.comb += ndiff.eq(sum(diff[l] for l in range(nw)))
        first_lane = Signal(max=max(nw, 2))
        for l in reversed(range(nw)):
            self.comb += If(diff[l], first_lane.eq(l))
        data_done = Signal()
        self.comb += data_done.eq(Mux(self.check, port.rdata.valid, port.wdata.valid & port.wdata.ready))
        self.sync += [
            If(self.start,
                running.eq(words != 0),
                cmd_idx.eq(0),
                data_idx.eq(0),
                self.errors.eq(0),
                self.first_error.eq(0),
            ).Elif(running,
                If(port.cmd.valid & port.cmd.ready, cmd_idx.eq(cmd_idx + 1)),
                If(data_done,
                    data_idx.eq(data_idx + 1),
                    If(data_idx + 1 == words, running.eq(0)),
                ),
                If(self.check & port.rdata.valid & (diff != 0),
                    If(self.errors == 0,
                        self.first_error.eq(Cat(Constant(0, 2), first_lane, data_idx))),
                    self.errors.eq(self.errors + ndiff),
                ),
            ),
        ]

    def add_csr(self):
        self._ctrl = CSRStorage(description="Fill or check a DRAM region with the test pattern.", fields=[
            CSRField("start", size=1, pulse=True, description="Start."),
            CSRField("check", size=1, description="0: fill, 1: check."),
        ])
        self._base   = CSRStorage(32, description="Region start: byte offset in the DRAM (multiple of the DRAM word).")
        self._length = CSRStorage(32, description="Region length in bytes (multiple of the DRAM word).")
        self._seed   = CSRStorage(32, description="Pattern seed.")
        self._busy   = CSRStatus(description="Fill/check in progress.")
        self._errors = CSRStatus(32, description="Words that differ from the pattern (check).")
        self._first_error = CSRStatus(32, description="Byte offset of the first differing word (check).")
        self.comb += [
            self.start.eq(self._ctrl.fields.start),
            self.check.eq(self._ctrl.fields.check),
            self.base.eq(self._base.storage),
            self.length.eq(self._length.storage),
            self.seed.eq(self._seed.storage),
            self._busy.status.eq(self.busy),
            self._errors.status.eq(self.errors),
            self._first_error.status.eq(self.first_error),
        ]
