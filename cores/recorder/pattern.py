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

from litedram.frontend.dma import LiteDRAMDMAReader, LiteDRAMDMAWriter

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
    ``index*n .. index*n + n-1`` (n = data_width/32, word l in bits 32l..32l+31)."""
    nw    = data_width//32
    data  = Signal(data_width)
    stmts = []
    for l in range(nw):
        widx = Cat(Constant(l, log2_int(nw)), index) if nw > 1 else index
        w, s = pattern_word(seed, widx)
        stmts += s
        stmts.append(data[32*l:32*(l+1)].eq(w))
    return data, stmts

def pattern_word_py(seed, i):
    def xs(x):
        x ^= (x << 13) & 0xffffffff
        x ^= x >> 17
        x ^= (x << 5) & 0xffffffff
        return x
    return xs(xs((seed + i) & 0xffffffff))

# DRAM Pattern Engine ------------------------------------------------------------------------------

class DRAMPatternEngine(LiteXModule):
    """Fills or checks ``length`` bytes of DRAM at ``base`` (both multiples of the port width) with
    the pattern, one port word per cycle (LiteDRAM permitting).

    Parameters
    ----------
    wr_port, rd_port : LiteDRAMNativePort
        Write and read ports (``crossbar.get_port(mode="write")`` / ``mode="read"``).
    """
    def __init__(self, wr_port, rd_port, fifo_depth=32):
        if wr_port.data_width != rd_port.data_width:
            raise ValueError("DRAMPatternEngine: the write and read ports must have the same width")
        dw    = wr_port.data_width
        nw    = dw//32
        wbyte = dw//8
        self.start  = Signal()
        self.check  = Signal()          # 0: fill, 1: check.
        self.base   = Signal(32)        # Byte address in the port's address space.
        self.length = Signal(32)        # Bytes.
        self.seed   = Signal(32)
        self.busy   = Signal()
        self.errors = Signal(32)        # Words that differ.
        self.first_error = Signal(32)   # Byte offset of the first differing word.

        # # #

        self.writer = writer = LiteDRAMDMAWriter(wr_port, fifo_depth=fifo_depth)
        self.reader = reader = LiteDRAMDMAReader(rd_port, fifo_depth=fifo_depth, fifo_buffered=True)

        words      = Signal(32 - log2_int(wbyte))   # Port words in the region.
        issue_idx  = Signal(32 - log2_int(wbyte))   # Next word to write / read.
        check_idx  = Signal(32 - log2_int(wbyte))   # Next word to compare.
        self.comb += words.eq(self.length[log2_int(wbyte):])

        # Pattern of a port word (index = word * nw + lane).
        fill_data, s = pattern_beat(self.seed, issue_idx, dw)
        self.comb += s
        exp_data, s = pattern_beat(self.seed, check_idx, dw)
        self.comb += s

        running = Signal()
        self.comb += self.busy.eq(running)
        self.sync += If(self.start,
            running.eq(self.length[log2_int(wbyte):] != 0),
            issue_idx.eq(0),
            check_idx.eq(0),
            self.errors.eq(0),
            self.first_error.eq(0),
        )

        base_word = Signal(32 - log2_int(wbyte))
        self.comb += base_word.eq(self.base[log2_int(wbyte):])
        # Fill: write words, done when the writer's FIFO has drained.
        self.comb += [
            writer.sink.valid.eq(running & ~self.check & (issue_idx != words)),
            writer.sink.address.eq(base_word + issue_idx),
            writer.sink.data.eq(fill_data),
            reader.sink.valid.eq(running & self.check & (issue_idx != words)),
            reader.sink.address.eq(base_word + issue_idx),
            reader.source.ready.eq(1),
        ]
        self.sync += [
            If((writer.sink.valid & writer.sink.ready) | (reader.sink.valid & reader.sink.ready),
                issue_idx.eq(issue_idx + 1)),
            If(running & ~self.check & (issue_idx == words) & ~writer.fifo.source.valid,
                running.eq(0)),
        ]
        # Check: compare the returned words in order.
        diff  = Signal(nw)
        self.comb += [diff[l].eq(reader.source.data[32*l:32*(l+1)] != exp_data[32*l:32*(l+1)])
            for l in range(nw)]
        ndiff = Signal(max=nw + 1)
        self.comb += ndiff.eq(sum(diff[l] for l in range(nw)))
        first_lane = Signal(max=max(nw, 2))
        for l in reversed(range(nw)):
            self.comb += If(diff[l], first_lane.eq(l))
        self.sync += If(reader.source.valid,
            check_idx.eq(check_idx + 1),
            If(diff != 0,
                If(self.errors == 0,
                    self.first_error.eq(Cat(Constant(0, 2), first_lane, check_idx))),
                self.errors.eq(self.errors + ndiff),
            ),
            If(check_idx + 1 == words, running.eq(0)),
        )

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
