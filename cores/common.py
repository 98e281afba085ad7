#
# This file is part of LiteRecorder.
#
# SPDX-License-Identifier: BSD-2-Clause

"""Primitives shared by the cores (the root complex, the NVMe queue engine, the recorder's ring):
RAM hints and FIFOs, the doorbell stream's layout, the CSR helpers of the cores' register shells."""

from migen import *
from migen.fhdl.specials import READ_FIRST

from litex.gen import *

from litex.soc.interconnect import stream
from litex.soc.interconnect.csr import CSRStorage, CSRStatus

# RAM ----------------------------------------------------------------------------------------------

def ram_style_attr(mem, style):
    """Synthesis hint on a Memory (``(* ram_style = ... *)``; e.g. "block" keeps a shallow but wide
    RAM in block RAM instead of LUTs)."""
    if style is not None:
        mem.attr = {("ram_style", style)}
    return mem

# RAM FIFO -----------------------------------------------------------------------------------------

class RAMFIFO(LiteXModule):
    """First-word-fall-through FIFO on a synchronous-read RAM (block RAM) without an output register:
    the output is the RAM's read latch, addressed one entry ahead when an entry is taken. An entry is
    visible two cycles after it was written. ``level``: entries stored (full at ``depth``).
    ``ram_style``: synthesis hint of the RAM ("block": block RAM, whatever the depth)."""
    def __init__(self, layout, depth, ram_style="block"):
        if depth < 2 or depth & (depth - 1):
            raise ValueError(f"RAMFIFO depth={depth}: a power of two >= 2")
        self.sink   = sink   = stream.Endpoint(layout)
        self.source = source = stream.Endpoint(layout)
        self.depth  = depth
        self.level  = level = Signal(max=depth + 1)

        # # #

        fields = [(name, len(getattr(sink, name))) for name, *_ in sink.description.payload_layout]
        fields += [(name, len(getattr(sink, name))) for name, *_ in sink.description.param_layout]
        fields += [("first", 1), ("last", 1)]
        width = sum(w for _, w in fields)
        mem = Memory(width, depth)
        ram_style_attr(mem, ram_style)
        wr  = mem.get_port(write_capable=True)
        rd  = mem.get_port(mode=READ_FIRST)
        self.specials += mem, wr, rd

        push    = Signal()
        pop     = Signal()
        push_d  = Signal()
        wp      = Signal(log2_int(depth))
        rp      = Signal(log2_int(depth))
        visible = Signal(max=depth + 1)
        self.comb += [
            sink.ready.eq(level != depth),
            push.eq(sink.valid & sink.ready),
            pop.eq(source.valid & source.ready),
            wr.adr.eq(wp),
            wr.dat_w.eq(Cat(*[getattr(sink, name) for name, _ in fields])),
            wr.we.eq(push),
            rd.adr.eq(rp + pop),
            Cat(*[getattr(source, name) for name, _ in fields]).eq(rd.dat_r),
            source.valid.eq(visible != 0),
        ]
        self.sync += [
            push_d.eq(push),
            wp.eq(wp + push),
            rp.eq(rp + pop),
            level.eq(level + push - pop),
            visible.eq(visible + push_d - pop),
        ]

# Streams ------------------------------------------------------------------------------------------

def doorbell_layout():
    """A doorbell write of the NVMe host: 32-bit bus address and value (the requester sends it)."""
    return [("adr", 32), ("dat", 32)]

# CSRs ---------------------------------------------------------------------------------------------

def csr_storage(module, name, sig, description, reset=0):
    """A ``CSRStorage`` ``module._<name>`` as wide as ``sig`` (a Signal, driven by it) or of ``sig``
    bits (an int: not connected). Returns the CSR."""
    csr = CSRStorage(sig if isinstance(sig, int) else len(sig), name=name, reset=reset,
        description=description)
    setattr(module, "_" + name, csr)
    if not isinstance(sig, int):
        module.comb += sig.eq(csr.storage)
    return csr

def csr_status(module, name, sig, description):
    """A ``CSRStatus`` ``module._<name>`` reading ``sig``. Returns the CSR."""
    csr = CSRStatus(len(sig), name=name, description=description)
    setattr(module, "_" + name, csr)
    module.comb += csr.status.eq(sig)
    return csr
