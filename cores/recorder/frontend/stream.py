#
# This file is part of LiteRecorder.
#
# SPDX-License-Identifier: BSD-2-Clause

"""Stream ports of the recorder: a user's record stream in, a replay stream out, each in its own
clock domain and width, as LiteX streams or AXI4-Stream.

::

    record:  sink (W bits, clock domain cd) --> packer (cd) --> FIFO (cd -> sys) --> ring words
    replay:  ring words --> FIFO (sys -> cd) --> unpacker (cd) --> source (W bits, cd)

The packer assembles ``ring_width/W`` beats into one ring word (the LiteDRAM port width). ``keep``
is honoured on the beat with ``last`` (it ends the recording at an exact byte count); ``keep`` must
be contiguous from byte 0 there and all ones on other beats, else the word is flagged (``keep_err``)
and counted by the recorder.

Overflow policy (``drop``, static while recording, from the sys domain):

- lossless (0): the port back-pressures the source (``ready`` low) while the ring has no room;
- drop (1): for a source that cannot wait (an ADC). The decision is taken once per ring word, at
  its first beat: if the FIFO has no room for a word, the beats of that whole word are refused
  (``ready`` low: the source loses them, and knows it). The bytes refused are carried with the next
  word that is kept (``gap``), so the recorder counts every dropped byte and logs where it was, in
  the sys domain, exactly. A ``last`` beat that is refused leaves a marker word (0 bytes, ``last``)
  so that the end of the input is never lost; beats offered until it is pushed are refused and
  counted with it.

``clear`` (sys domain: a recording starts whose input was discarded before it, drop policy or
flush_surplus) makes the port forget its drop state from before: the word being refused (its beats
were refused, none stored), the gap, a pending marker. A word being assembled is kept: the pulse
reaches a port in another clock domain a few of its cycles after the start, when words completed
since may already be recorded, so forgetting it would leave an uncounted hole in the recording.
A source that restarts with a recording ends its previous stream on a word boundary (or with
`last`), else its last beats begin the next recording. Under the lossless policy without
flush_surplus the input waits outside a recording: what the port holds begins the next one (no
``clear``).
"""

from migen import *
from migen.genlib.cdc import MultiReg, PulseSynchronizer

from litex.gen import *

from litex.soc.interconnect import stream
from litex.soc.interconnect.axi import AXIStreamInterface

from literecorder.cores.recorder.common import user_layout, word_layout, check_stream_width, GAP_BITS

# Packer (record port, in the port's clock domain) ---------------------------------------------------

class _Packer(LiteXModule):
    def __init__(self, data_width, ring_width):
        self.sink   = sink   = stream.Endpoint(user_layout(data_width))
        self.source = source = stream.Endpoint(word_layout(ring_width))
        self.drop   = Signal()      # Drop policy (static while recording).
        self.clear  = Signal()      # Forget everything from before (start of a recording).

        # # #

        lanes  = ring_width//data_width
        nbytes = max(data_width//8, 1)
        lbits  = log2_int(nbytes, need_pow2=False) if nbytes > 1 else 0

        beat     = Signal(max=max(lanes, 2))         # Beat of the current word.
        stored   = Array(Signal(data_width, name=f"lane{i}") for i in range(max(lanes - 1, 1)))
        dropping = Signal()                          # The current word is being dropped.
        gap      = Signal(GAP_BITS)                  # Bytes dropped since the last pushed word.
        marker   = Signal()                          # A dropped word held `last`: push a marker.
        first    = Signal()
        final    = Signal()                          # The beat completes its word.
        self.comb += [
            first.eq(beat == 0),
            final.eq((beat == lanes - 1) | sink.last),
        ]

        # Bytes of the beat (all on beats before `last`; `keep` counts on the final one).
        beat_bytes = Signal(max=nbytes + 1)
        keep_bad   = Signal()
        if nbytes == 1:
            self.comb += beat_bytes.eq(Mux(sink.last, sink.keep[0], 1))
        else:
            for i in range(nbytes):
                self.comb += If(sink.keep[i], beat_bytes.eq(i + 1))
            # Contiguous from byte 0: no set bit above a clear one.
            self.comb += keep_bad.eq(reduce(or_, [sink.keep[i + 1] & ~sink.keep[i]
                for i in range(nbytes - 1)]))
            self.comb += If(~sink.last, beat_bytes.eq(nbytes))
        self.comb += If(~sink.last & (sink.keep != (2**nbytes - 1)), keep_bad.eq(1))
        keep_err = Signal()      # A beat of the current word had a bad keep.

        # The word: stored lanes below `beat`, the current beat (bytes beyond `keep` cleared), zeros.
        keep_mask = Signal(data_width)
        self.comb += keep_mask.eq(Cat(*[Replicate(beat_bytes > i, 8) for i in range(nbytes)])
            if nbytes > 1 else Replicate(beat_bytes != 0, data_width))
        lanes_out = []
        for i in range(lanes):
            here = sink.data & keep_mask
            if i < lanes - 1:
                lanes_out.append(Mux(beat == i, here, Mux(beat > i, stored[i], 0)))
            else:
                lanes_out.append(Mux(beat == i, here, 0))
        word_bytes = Signal(max=ring_width//8 + 1)
        self.comb += word_bytes.eq((beat << lbits) + beat_bytes)

        # Take (store or push) or refuse the beat.
        refuse = Signal()
        take   = Signal()
        self.comb += [
            refuse.eq(self.drop & Mux(first, ~source.ready, dropping)),
            sink.ready.eq(~marker & ~refuse & (~final | source.ready)),
            take.eq(sink.valid & sink.ready),
        ]
        self.comb += If(marker,
            source.valid.eq(1),
            source.bytes.eq(0),
            source.last.eq(1),
        ).Else(
            source.valid.eq(sink.valid & ~refuse & final & ~marker),
            source.data.eq(Cat(*lanes_out)),
            source.bytes.eq(word_bytes),
            source.last.eq(sink.last),
            source.keep_err.eq(keep_err | keep_bad),
        )
        self.comb += source.gap.eq(gap)

        self.sync += [
            If(source.valid & source.ready,
                gap.eq(0),
                marker.eq(0),
                keep_err.eq(0),
            ),
            # Drop policy: every valid beat counts (the source does not wait); the decision of the
            # first beat holds for the whole word.
            If(sink.valid & ~marker & (take | self.drop),
                If(final,
                    beat.eq(0),
                    dropping.eq(0),
                ).Else(
                    beat.eq(beat + 1),
                    dropping.eq(refuse),
                ),
                If(refuse,
                    gap.eq(gap + beat_bytes),
                    If(sink.last, marker.eq(1)),
                ).Elif(~final,
                    If(keep_bad, keep_err.eq(1)),
                    *([stored[beat].eq(sink.data)] if lanes > 1 else []),
                ),
            ),
            # Drop policy: a beat offered while the marker waits is refused too; its bytes are
            # dropped with the marker's (one run of refused bytes), or in front of the next word if
            # the marker goes this cycle.
            If(sink.valid & marker,
                gap.eq(Mux(source.ready, 0, gap) + beat_bytes),
                # A `last` refused as the marker goes: a new marker carries it.
                If(sink.last & source.ready, marker.eq(1)),
            ),
            # A start forgets the drop state (the word being refused: the next beat begins a word,
            # the gap, the marker); the drop state goes as well when the policy is lossless (after
            # a recording under the drop policy). A word being assembled is kept (see above).
            If(self.clear | ~self.drop,
                dropping.eq(0),
                gap.eq(0),
                marker.eq(0),
            ),
            If(self.clear & (dropping | refuse),
                beat.eq(0),
                keep_err.eq(0),
            ),
        ]

# Unpacker (replay port, in the port's clock domain) -------------------------------------------------

class _Unpacker(LiteXModule):
    def __init__(self, data_width, ring_width):
        self.sink   = sink   = stream.Endpoint(word_layout(ring_width))
        self.source = source = stream.Endpoint(user_layout(data_width))

        # # #

        lanes  = ring_width//data_width
        nbytes = max(data_width//8, 1)
        lbits  = log2_int(nbytes) if nbytes > 1 else 0

        beat  = Signal(max=max(lanes, 2))
        final = Signal()                 # The beat is the last one of its word.
        rest  = Signal(max=ring_width//8 + 1)
        self.comb += rest.eq(sink.bytes - (beat << lbits))
        self.comb += final.eq((beat == lanes - 1) | (rest <= nbytes))
        self.comb += [
            source.valid.eq(sink.valid),
            source.data.eq(Array(sink.data[i*data_width:(i + 1)*data_width] for i in range(lanes))[beat]
                if lanes > 1 else sink.data),
            source.last.eq(sink.last & final),
            sink.ready.eq(source.ready & final),
        ]
        if nbytes == 1:
            self.comb += source.keep.eq(1)
        else:
            self.comb += source.keep.eq(Mux(sink.last & final & (rest < nbytes),
                Cat(*[rest > i for i in range(nbytes)]), 2**nbytes - 1))
        self.sync += If(source.valid & source.ready,
            If(final, beat.eq(0)).Else(beat.eq(beat + 1)))

# Clock-domain crossing -----------------------------------------------------------------------------

class _Crossing(LiteXModule):
    """``stream.ClockDomainCrossing`` whose two sides are reset together, by the reset of either clock
    domain (``with_common_rst``: asserted at once, released in each side's clock; both domains need
    a reset signal). A side in reset hands over nothing: the FIFO's pointers are reset in two clock
    domains and each side's copy of the other's pointer is a few cycles late (stale words would
    come out, words going in would vanish)."""
    def __init__(self, layout, cd_from, cd_to, depth):
        self.sink   = sink   = stream.Endpoint(layout)
        self.source = source = stream.Endpoint(layout)

        # # #

        self.cdc = cdc = stream.ClockDomainCrossing(layout, cd_from=cd_from, cd_to=cd_to, depth=depth,
            with_common_rst=True)
        # Its sides' clock domains (LiteX 2024.12 names them from<duid>, to<duid>): checked here, so a
        # LiteX that names them otherwise fails with this message, not in the Verilog generation.
        sides = {cd.name: cd for cd in cdc._fragment.clock_domains}
        names = (f"from{cdc.duid}", f"to{cdc.duid}")
        if not all(n in sides for n in names):
            raise RuntimeError(f"_Crossing: LiteX's ClockDomainCrossing(with_common_rst=True) has clock domains "
                f"{sorted(sides)}, expected {list(names)} (LiteX 2024.12): the reset gating needs them")
        wr_rst, rd_rst = (sides[n].rst for n in names)
        self.comb += [
            sink.connect(cdc.sink, omit={"valid", "ready"}),
            cdc.sink.valid.eq(sink.valid & ~wr_rst),
            sink.ready.eq(cdc.sink.ready & ~wr_rst),
            cdc.source.connect(source, omit={"valid", "ready"}),
            source.valid.eq(cdc.source.valid & ~rd_rst),
            cdc.source.ready.eq(source.ready & ~rd_rst),
        ]

# Record port ----------------------------------------------------------------------------------------

class RecordPort(LiteXModule):
    """A record input: ``sink`` (``data_width`` bits in ``clock_domain``) -> ring words (sys).

    Parameters
    ----------
    data_width : int
        Width of the user's stream: a power of two from 8 bits to ``ring_width``.
    ring_width : int
        The ring word (LiteDRAM port width).
    clock_domain : str
        Clock domain of ``sink`` ("sys" or the user's; it needs a reset signal).
    depth : int
        Ring words the port buffers (its FIFO; the clock-domain crossing when the domains differ:
        a reset of either domain resets both of its sides, its words are lost, never duplicated).
    """
    def __init__(self, data_width, ring_width, clock_domain="sys", depth=16):
        check_stream_width("RecordPort", data_width, ring_width)
        self.data_width   = data_width
        self.clock_domain = clock_domain
        self.sink   = stream.Endpoint(user_layout(data_width))   # In clock_domain.
        self.source = stream.Endpoint(word_layout(ring_width))   # In sys.
        self.drop   = Signal()                                   # sys: drop policy.
        self.clear  = Signal()                                   # sys: pulse, forget what is held.

        # # #

        self.packer = packer = ClockDomainsRenamer(clock_domain)(_Packer(data_width, ring_width))
        if clock_domain == "sys":
            # Its last word in a register (``depth - 1`` words in the FIFO, one in ``out``): the
            # recorder decides on each word (an end marker? room in the ring?) within the cycle, not
            # behind the read of the FIFO's LUT memory.
            self.fifo = fifo = stream.SyncFIFO(word_layout(ring_width), depth - 1)
            self.out  = out  = stream.PipeValid(word_layout(ring_width))
            self.comb += [packer.drop.eq(self.drop), packer.clear.eq(self.clear)]
        else:
            self.fifo = fifo = _Crossing(word_layout(ring_width), clock_domain, "sys", depth)
            self.specials += MultiReg(self.drop, packer.drop, odomain=clock_domain)
            self.clear_ps = ClockDomainsRenamer({"from": "sys", "to": clock_domain})(
                PulseSynchronizer("from", "to"))
            self.comb += [self.clear_ps.i.eq(self.clear), packer.clear.eq(self.clear_ps.o)]
        if clock_domain == "sys":
            self.comb += [fifo.source.connect(out.sink), out.source.connect(self.source)]
        else:
            self.comb += fifo.source.connect(self.source)
        self.comb += [
            self.sink.connect(packer.sink),
            packer.source.connect(fifo.sink),
        ]

# Replay port ----------------------------------------------------------------------------------------

class ReplayPort(LiteXModule):
    """A replay output: ring words (sys) -> ``source`` (``data_width`` bits in ``clock_domain``, with a
    reset signal; a reset of either domain resets both sides of the crossing)."""
    def __init__(self, data_width, ring_width, clock_domain="sys", depth=16):
        check_stream_width("ReplayPort", data_width, ring_width)
        self.data_width   = data_width
        self.clock_domain = clock_domain
        self.sink   = stream.Endpoint(word_layout(ring_width))   # In sys.
        self.source = stream.Endpoint(user_layout(data_width))   # In clock_domain.

        # # #

        self.unpacker = unpacker = ClockDomainsRenamer(clock_domain)(_Unpacker(data_width, ring_width))
        if clock_domain == "sys":
            self.fifo = fifo = stream.SyncFIFO(word_layout(ring_width), 4)
        else:
            self.fifo = fifo = _Crossing(word_layout(ring_width), "sys", clock_domain, depth)
        self.comb += [
            self.sink.connect(fifo.sink),
            fifo.source.connect(unpacker.sink),
            unpacker.source.connect(self.source),
        ]

# User streams (LiteX or AXI4-Stream) ---------------------------------------------------------------

def user_keep(ep):
    """The byte enables of a user stream ``ep`` (``stream.Endpoint`` or ``AXIStreamInterface``):
    its ``keep`` if it has one bit per byte of ``data`` (one bit for 8-bit data), None if it has none
    (all bytes valid, as AXI4-Stream defines an absent TKEEP): no ``keep`` field, an
    ``AXIStreamInterface`` built with ``keep_width=0`` (its 1-bit ``keep`` is a placeholder, never
    driven) or a 1-bit ``keep`` on wider data. Any other width raises ValueError."""
    names = [f[0] for f in ep.description.payload_layout]
    if "keep" not in names or getattr(ep, "keep_width", None) == 0:
        return None
    nbytes = max(len(ep.data)//8, 1)
    if len(ep.keep) == nbytes:
        return ep.keep
    if len(ep.keep) == 1:
        return None
    raise ValueError(f"a {len(ep.keep)}-bit keep on {len(ep.data)}-bit data: keep has one "
        f"bit per byte ({nbytes} bits), or is absent (AXIStreamInterface(keep_width=0), 1 bit: all bytes valid)")

def axis_to_user(axis, sink):
    """Connects a user stream source (``AXIStreamInterface`` or ``stream.Endpoint``: data, keep,
    last, valid, ready) to a ``RecordPort.sink`` of the same width. Returns the statements."""
    keep = user_keep(axis)
    return [
        sink.valid.eq(axis.valid),
        axis.ready.eq(sink.ready),
        sink.last.eq(axis.last),
        sink.data.eq(axis.data),
        sink.keep.eq(keep if keep is not None else 2**len(sink.keep) - 1),
    ]

def user_to_axis(source, axis):
    """Connects a ``ReplayPort.source`` to a user stream sink (``AXIStreamInterface`` or
    ``stream.Endpoint``; its ``keep`` if it has one). Returns the statements."""
    keep = user_keep(axis)
    return [
        axis.valid.eq(source.valid),
        source.ready.eq(axis.ready),
        axis.last.eq(source.last),
        axis.data.eq(source.data),
    ] + ([keep.eq(source.keep)] if keep is not None else [])

# Hardware control -----------------------------------------------------------------------------------

class ControlPort(LiteXModule):
    """The recorder's hardware control, in the user's clock domain: ``start``, ``stop``, ``abort``,
    ``trigger`` (pulses in), ``busy``, ``running``, ``recording``, ``replaying``, ``armed``,
    ``refused``, ``overflow``, ``error`` (levels out).

    ``start`` starts one run with the configuration the CPU left in the registers when the CPU armed
    the recorder (``rec_start ... arm=1``): ``armed`` is high until a start is taken, the run ends or
    the CPU disarms; a ``start`` while not armed is ignored. ``running`` is high while a recording or
    a replay runs (after the configuration check), ``recording``/``replaying`` say which;
    ``refused``: the last start was refused by the configuration check (e.g. a port's queue engine
    was not given to the recorder; the status code in the CSRs says why), until the next start.
    The ``sys_*`` signals are the same in the sys domain (the core's side): a pulse in is one event
    per rising edge, however long it is held (a sys pulse of one cycle); from another clock domain
    two rising edges must be at least two sys clock periods apart (a toggle crosses: two within one
    sys period are lost together). The ``sys_*`` levels must be flip-flop outputs (they cross
    through a MultiReg)."""
    PULSES = ("start", "stop", "abort", "trigger")
    LEVELS = ("busy", "running", "recording", "replaying", "armed", "refused", "overflow", "error")
    def __init__(self, clock_domain="sys"):
        for name in self.PULSES + self.LEVELS:
            setattr(self, name, Signal(name=name))
            setattr(self, "sys_" + name, Signal(name="sys_" + name))

        # # #

        sync = getattr(self.sync, clock_domain)
        for name in self.PULSES:
            i, o = getattr(self, name), getattr(self, "sys_" + name)
            # One event per rising edge (in the input's domain, before the crossing).
            i_q  = Signal(name=name + "_q")
            rise = Signal(name=name + "_rise")
            sync += i_q.eq(i)
            self.comb += rise.eq(i & ~i_q)
            if clock_domain == "sys":
                self.comb += o.eq(rise)
            else:
                ps = ClockDomainsRenamer({"from": clock_domain, "to": "sys"})(PulseSynchronizer("from", "to"))
                self.submodules += ps
                self.comb += [ps.i.eq(rise), o.eq(ps.o)]
        for name in self.LEVELS:
            i, o = getattr(self, "sys_" + name), getattr(self, name)
            if clock_domain == "sys":
                self.comb += o.eq(i)
            else:
                self.specials += MultiReg(i, o, odomain=clock_domain)
