#
# This file is part of LiteRecorder.
#
# SPDX-License-Identifier: BSD-2-Clause

"""The ring of chunk slots, in two tiers: on-chip slots first, LiteDRAM slots behind them.

::

    record:  ring words --> accept (a slot?) --> FIFO --+--> staging bank of the chunk's port (block RAM)
                                                       +--> LiteDRAM DMA writer (the DRAM ring)
    replay:  staging bank / LiteDRAM (slot of chunk k, once its NVMe Read completed) --> ring words

    on-chip tier: ``StagingBank`` per NVMe port (served to its SSD through an on-chip window of the
                  port's root complex), ``OnChipSlots`` (which slots are taken, which completed)
    DRAM tier:    slot ``j mod ring_slots`` for the j-th chunk that went to DRAM (``RingPointer``s,
                  ``slots.SlotTracker``)

Record: the first word of a chunk takes a free on-chip slot of the port the chunk is written to;
when there is none, a DRAM slot (``spill``: the drives fell behind), else the input waits. Every
word carries its destination through the FIFO. An on-chip slot is free again as soon as its NVMe
Write completed; DRAM slots are freed in their order (the slot tracker). A chunk counts as filled
once all its words reached their memory (``filled``: it may then be written to the SSDs), in chunk
order. When the input closes inside a chunk, the rest of the chunk is padded with zero words
(``pad``), or the partial chunk is dropped (``drop_partial``: abort; its on-chip slot is freed).

Replay: with on-chip slots (``onchip.count`` != 0) every chunk is read into an on-chip slot (reads
are issued as slots free), else into the DRAM ring. The reader hands the words of chunk ``rd`` out
in order once its command completed and frees the slot when its last word left (``freed``); words
beyond the replay's byte count are not handed out, the last word handed out carries ``last``.
"""

from migen import *

from litex.gen import *

from litex.soc.interconnect import stream

from litedram.frontend.dma import LiteDRAMDMAWriter

from literecorder.cores.recorder.common import word_layout, BYTE_BITS, CHUNK_BITS, ID_BITS, ONCHIP_ID
from literecorder.cores.common import RAMFIFO, ram_style_attr
from literecorder.cores.recorder.slots import RingPointer, SlotTracker

# Staging bank -------------------------------------------------------------------------------------

class StagingBank(LiteXModule):
    """On-chip chunk slots of one NVMe port: a block RAM of ring words, served to the SSD through an
    on-chip completer window (port B: the device's reads and its writes, byte enables) and to the
    recorder (port A: whole ring words; the writer in record, the reader in replay).

    Parameters
    ----------
    window : CompleterWindow
        An on-chip window of the port's root complex (``rc.add_window(..., on_chip=True)``).
    ring_dw : int
        Ring word (bits): the LiteDRAM port's width, a power-of-two multiple of the window's beat.
    ram_style : str
        Synthesis hint: "block" (block RAM) or "ultra" (UltraRAM, UltraScale+).
    """
    def __init__(self, window, ring_dw, ram_style="block"):
        if not window.on_chip:
            raise ValueError(f"StagingBank: window {window.name} must be on-chip (on_chip=True)")
        bw = window.data_width
        if ring_dw < bw or ring_dw % bw or (ring_dw//bw) & (ring_dw//bw - 1):
            raise ValueError(f"StagingBank: ring word {ring_dw} bits must be a power-of-two multiple of "
                f"the window's beat ({bw} bits)")
        if ram_style not in ("block", "ultra"):
            raise ValueError(f"StagingBank: ram_style={ram_style!r}: 'block' or 'ultra'")
        ratio = ring_dw//bw
        rbits = log2_int(ratio)
        self.window    = window
        self.words     = words = window.size//(ring_dw//8)
        self.adr_width = aw = log2_int(words)
        self.base      = window.base
        # Recorder side (port A): the writer's words (record), the reader's (replay).
        self.replay = Signal()
        self.adr    = Signal(aw)               # Write address (record).
        self.we     = Signal()
        self.dat_w  = Signal(ring_dw)
        self.rd_adr = Signal(aw)               # Read address (replay) ...
        self.dat_r  = Signal(ring_dw)          # ... its word, one cycle later.

        # # #

        self.mem = mem = Memory(ring_dw, words, name=f"{window.name}_mem")
        # (An attribute for the tests; not a CSR memory: LiteX would give the CPU a third port on it.)
        self.autocsr_exclude = {"mem"}
        ram_style_attr(mem, ram_style)
        # Reads of the old data (READ_FIRST): the recorder and the device never touch the same word in
        # the same cycle (a slot is filled, then served), no bypass logic around the block RAM.
        # (UltraRAM: Migen's default write-first ports; Yosys 0.23 maps no other mode to URAM288.)
        mode = READ_FIRST if ram_style == "block" else WRITE_FIRST
        pa = mem.get_port(write_capable=True, mode=mode)
        pb = mem.get_port(write_capable=True, we_granularity=8, mode=mode)
        self.specials += mem, pa, pb
        self.comb += [pa.adr.eq(Mux(self.replay, self.rd_adr, self.adr)), pa.dat_w.eq(self.dat_w),
            pa.we.eq(self.we & ~self.replay), self.dat_r.eq(pa.dat_r)]

        # Device side (port B): a write waits while the completer reads this window.
        w      = window
        lane   = Signal(max(rbits, 1))
        lane_r = Signal(max(rbits, 1))
        wr_now = Signal()
        self.comb += [
            w.wr.ready.eq(~w.rd_active),
            wr_now.eq(w.wr.valid & ~w.rd_active),
            lane.eq(w.wr.adr[:rbits] if rbits else 0),
            pb.adr.eq(Mux(wr_now, w.wr.adr[rbits:], w.rd_adr[rbits:])),
            pb.dat_w.eq(Replicate(w.wr.dat, ratio)),
            If(wr_now, Case(lane, {l: pb.we.eq(w.wr.be << (bw//8*l)) for l in range(ratio)})),
            Case(lane_r, {l: w.rd_dat.eq(pb.dat_r[bw*l:bw*(l + 1)]) for l in range(ratio)}),
        ]
        self.sync += lane_r.eq(w.rd_adr[:rbits] if rbits else 0)

# On-chip slots ------------------------------------------------------------------------------------

class OnChipSlots(LiteXModule):
    """Which on-chip slots are taken (``busy``: from their allocation to their release) and which
    completed their NVMe command (``done``), for ``n_ports`` banks of ``per_port`` slots. A slot's
    global id is ``bank << sbits | slot``; ``count`` slots of each bank are used (0: no on-chip
    tier). Allocation takes the lowest free slot of bank ``port``; releases come in any order.

    Parameters
    ----------
    n_ports : int
        Banks (one per NVMe port), 1 to 8.
    per_port : int
        Slots of each bank at most, 1 to 16.
    """
    def __init__(self, n_ports, per_port):
        if not (1 <= n_ports <= 8):
            raise ValueError(f"OnChipSlots: n_ports={n_ports}: 1 to 8 banks are allowed")
        if not (1 <= per_port <= 16):
            raise ValueError(f"OnChipSlots: per_port={per_port}: 1 to 16 slots per bank are allowed")
        self.n_ports  = n_ports
        self.per_port = per_port
        self.pbits = pbits = max(bits_for(n_ports - 1), 1)
        self.sbits = sbits = max(bits_for(per_port - 1), 1)
        self.gbits = gbits = pbits + sbits
        # Configuration.
        self.count   = Signal(sbits + 1)        # Slots used in each bank (0 .. per_port).
        # Control.
        self.restart = Signal()
        self.port    = Signal(pbits)            # Allocation: the bank asked ...
        self.free    = Signal()                 # ... has a free slot ...
        self.slot    = Signal(gbits)            # ... this one (global id) ...
        self.alloc   = Signal()                 # ... pulse: take it.
        self.mark     = Signal()                # Pulse: the command of slot ``mark_id`` completed.
        self.mark_id  = Signal(gbits)
        self.release  = [Signal(name=f"release{i}") for i in range(2)]          # Pulses: free ...
        self.release_id = [Signal(gbits, name=f"release_id{i}") for i in range(2)]  # ... these slots.
        self.query_id = Signal(gbits)           # Completed? (comb)
        self.query_done = Signal()
        # Status.
        self.used = Signal(gbits + 1)           # Slots taken, all banks.
        self.busy = [[Signal(name=f"busy_{p}_{s}") for s in range(per_port)] for p in range(n_ports)]
        self.done = [[Signal(name=f"done_{p}_{s}") for s in range(per_port)] for p in range(n_ports)]

        # # #

        def gid(p, s):
            return (p << sbits) | s

        # Slot state: an allocation clears ``done``; a release frees the slot (``busy_n``: the
        # next state).
        busy_n = [[Signal(name=f"busy_n_{p}_{s}") for s in range(per_port)] for p in range(n_ports)]
        for p in range(n_ports):
            for s in range(per_port):
                g = gid(p, s)
                self.comb += If(self.restart,
                    busy_n[p][s].eq(0),
                ).Else(
                    busy_n[p][s].eq(self.busy[p][s]),
                    If(self.alloc & (self.slot == g), busy_n[p][s].eq(1)),
                    *[If(r & (i == g), busy_n[p][s].eq(0)) for r, i in zip(self.release, self.release_id)],
                )
                self.sync += [
                    self.busy[p][s].eq(busy_n[p][s]),
                    If(self.restart,
                        self.done[p][s].eq(0),
                    ).Else(
                        If(self.alloc & (self.slot == g), self.done[p][s].eq(0)),
                        If(self.mark & (self.mark_id == g), self.done[p][s].eq(1)),
                        *[If(r & (i == g), self.done[p][s].eq(0)) for r, i in zip(self.release, self.release_id)],
                    ),
                ]
        # Allocation: the lowest free slot of the bank asked, chosen one cycle ahead from the next
        # state (registers: no priority encoder on the slot's path). Which slots are used is a
        # setting, also in registers.
        usable = [Signal(name=f"usable_{s}") for s in range(per_port)]
        self.sync += [u.eq(s < self.count) for s, u in enumerate(usable)]
        free_p = [Signal(name=f"free_{p}") for p in range(n_ports)]
        slot_p = [Signal(sbits, name=f"slot_{p}") for p in range(n_ports)]
        for p in range(n_ports):
            self.sync += free_p[p].eq(0)
            for s in reversed(range(per_port)):
                self.sync += If(~busy_n[p][s] & usable[s], free_p[p].eq(1), slot_p[p].eq(s))
        self.comb += Case(self.port, {p: [self.free.eq(free_p[p]), self.slot.eq(Cat(slot_p[p], C(p, pbits)))]
            for p in range(n_ports)})
        self.comb += Case(self.query_id, {gid(p, s): self.query_done.eq(self.done[p][s])
            for p in range(n_ports) for s in range(per_port)})
        self.sync += If(self.restart,
            self.used.eq(0)
        ).Else(
            self.used.eq(self.used + self.alloc - self.release[0] - self.release[1])
        )

def slot_offset(slot, per_chunk, n):
    """``slot`` x ``per_chunk`` for a slot number below ``n``: a multiplexer of the multiples of
    ``per_chunk`` (a setting), each kept in a register so that no adder is on the slot's path.
    -> (offset, comb statements, sync statements)."""
    off  = Signal(len(per_chunk) + bits_for(n))
    mult = [Signal(len(off), name=f"slot_mult{s}") for s in range(n)]
    return off, Case(slot, {s: off.eq(mult[s]) for s in range(n)}), [m.eq(per_chunk*s) for s, m in enumerate(mult)]

def check_ring_word(who, ring_word, aw):
    if not (isinstance(ring_word, int) and 0 <= ring_word < 2**aw):
        raise ValueError(f"{who}: ring_word={ring_word!r}: the DRAM ring's start, a word address on the "
            f"LiteDRAM port (0..{2**aw - 1})")

# Ring Writer --------------------------------------------------------------------------------------

class RingWriter(LiteXModule):
    """Words of the input into the slot of the chunk being filled (see the module's description).

    Parameters
    ----------
    port : LiteDRAMNativePort
        Write port of the DRAM ring.
    slots : int
        DRAM slots at most.
    ring_word : int
        Start of the DRAM ring: word address on ``port`` (fixed at build time).
    banks : list of StagingBank, optional
        The on-chip tier (one bank per NVMe port), with ``onchip`` (OnChipSlots) to allocate its slots.
    """
    def __init__(self, port, slots, fifo_depth=64, banks=None, onchip=None, ring_word=0):
        dw = port.data_width
        aw = port.address_width
        tiered = banks is not None
        if tiered and (onchip is None or len(banks) != onchip.n_ports):
            raise ValueError("RingWriter: the on-chip tier needs one bank per port and its OnChipSlots")
        check_ring_word("RingWriter", ring_word, aw)
        self.sink = sink = stream.Endpoint(word_layout(dw))
        # Configuration.
        self.ring_word   = Constant(ring_word, aw)   # DRAM ring start (DRAM port word address).
        self.ring_slots  = Signal(bits_for(slots))
        self.chunk_words = Signal(32)
        self.spill       = Signal(reset=1)     # A chunk may go to DRAM when no on-chip slot is free.
        self.fill_port   = Signal(max(bits_for(len(banks) - 1), 1) if tiered else 1)  # Port of the filling chunk.
        # Control.
        self.restart     = Signal()
        self.open        = Signal()            # The input is accepted.
        self.pad         = Signal()            # Input closed: pad the partial chunk with zeros.
        self.drop_partial = Signal()           # Pulse (input closed): drop the partial chunk.
        self.freed       = Signal(CHUNK_BITS)  # DRAM chunks whose slot is free again (in order).
        # Status.
        self.accept      = Signal()            # A word was accepted this cycle.
        self.filling     = Signal(CHUNK_BITS)  # Chunk the input fills.
        self.partial     = Signal()            # The filling chunk holds words.
        self.word_last   = Signal()            # The next word completes the filling chunk.
        self.filled      = Signal(CHUNK_BITS)  # Chunks entirely in their memory.
        self.padding     = Signal()
        self.idle        = Signal()            # No word on its way to a memory.
        self.room        = Signal()            # The filling chunk has (or may take) a slot.
        self.to_dram     = Signal()            # The word written now goes to a DRAM slot.
        self.partial_dram = Signal()           # The partial chunk is in a DRAM slot.
        self.dram_filling = Signal(CHUNK_BITS) # Chunks filled into DRAM slots (input side).
        # Placement of each chunk, written when its input completes: (on-chip, global slot id).
        self.place_we    = Signal()
        self.place_adr   = Signal(CHUNK_BITS)
        self.place_oc    = Signal()
        self.place_id    = Signal(onchip.gbits if tiered else 1)
        self.oc_alloc    = Signal()            # Pulse: the chunk begun takes the on-chip slot ``onchip.slot``.

        # # #

        gbits = onchip.gbits if tiered else 1
        bbits = max(bits_for(len(banks) - 1), 1) if tiered else 1
        baw   = max([b.adr_width for b in banks]) if tiered else 1
        adw   = max(aw, baw)

        # Input side: words into the FIFO (block RAM, no output register), in chunk order, each with
        # its destination: a DRAM word address, or a bank and a word address in it.
        self.fifo = fifo = RAMFIFO([("data", dw), ("oc", 1), ("bank", bbits), ("adr", adw)], fifo_depth)
        self.inp = inp = RingPointer(slots)    # DRAM slot of the next chunk that goes to DRAM.
        in_word = Signal(32)
        first   = Signal()
        dram_ok = Signal()
        use_oc  = Signal()
        use_dr  = Signal()
        cur_oc  = Signal()
        cur_id  = Signal(gbits)
        cur_off = Signal(32)
        w_oc    = Signal()
        w_id    = Signal(gbits)
        w_off   = Signal(32)
        push    = Signal()
        self.comb += [
            inp.ring_slots.eq(self.ring_slots),
            inp.chunk_words.eq(self.chunk_words),
            inp.restart.eq(self.restart),
            first.eq(in_word == 0),
            self.partial.eq(~first),
            self.word_last.eq(in_word + 1 == self.chunk_words),
        ]
        # A DRAM slot is free for the next chunk: ``inp.count - freed < ring_slots``, from registers
        # (the slot tracker's count is far from here): ``ok_spare`` with one more slot, ``ok_now`` as is
        # but void when the pointer advanced in that cycle. A release is seen one cycle late (never
        # too early); after a restart, one cycle without a DRAM slot.
        ok_spare = Signal()
        ok_now   = Signal()
        advanced = Signal()
        self.sync += If(self.restart,
            ok_spare.eq(0), ok_now.eq(0), advanced.eq(0),
        ).Else(
            ok_spare.eq((inp.count - self.freed + 1) < self.ring_slots),
            ok_now.eq((inp.count - self.freed) < self.ring_slots),
            advanced.eq(inp.advance),
        )
        self.comb += dram_ok.eq(ok_spare | (ok_now & ~advanced))
        if tiered:
            off_now, off_case, off_mult = slot_offset(onchip.slot[:onchip.sbits], self.chunk_words, onchip.per_port)
            self.sync += off_mult
            self.comb += [
                off_case,
                onchip.port.eq(self.fill_port),
                use_oc.eq((onchip.count != 0) & onchip.free),
                use_dr.eq(~use_oc & dram_ok & (self.spill | (onchip.count == 0))),
                w_oc.eq(Mux(first, use_oc, cur_oc)),
                w_id.eq(Mux(first, onchip.slot, cur_id)),
                w_off.eq(Mux(first, off_now, cur_off)),
                self.oc_alloc.eq(self.accept & first & use_oc),
                # An abort frees the on-chip slot of the partial chunk.
                onchip.release[1].eq(self.drop_partial & ~first & cur_oc),
                onchip.release_id[1].eq(cur_id),
            ]
            self.sync += If(self.accept & first,
                cur_oc.eq(use_oc), cur_id.eq(onchip.slot), cur_off.eq(off_now),
            )
        else:
            self.comb += use_dr.eq(dram_ok)
        self.comb += [
            self.room.eq(~first | use_oc | use_dr),
            self.padding.eq(self.pad & ~first),
            self.accept.eq(sink.valid & sink.ready),
            sink.ready.eq(self.open & self.room & fifo.sink.ready),
            push.eq(self.accept | (self.padding & fifo.sink.ready)),
            fifo.sink.valid.eq(push),
            fifo.sink.data.eq(Mux(self.padding, 0, sink.data)),
            fifo.sink.oc.eq(w_oc),
            fifo.sink.bank.eq(w_id[onchip.sbits:] if tiered else 0),
            fifo.sink.adr.eq(Mux(w_oc, w_off + in_word, self.ring_word + inp.word + in_word)),
            self.to_dram.eq(~w_oc),
            self.partial_dram.eq(~first & ~cur_oc),
            self.dram_filling.eq(inp.count),
            inp.advance.eq(push & self.word_last & ~w_oc),
            self.place_we.eq(push & self.word_last),
            self.place_adr.eq(self.filling),
            self.place_oc.eq(w_oc),
            self.place_id.eq(w_id),
        ]
        self.sync += If(self.restart,
            in_word.eq(0),
            self.filling.eq(0),
        ).Elif(self.drop_partial,
            in_word.eq(0),
        ).Elif(push,
            If(self.word_last,
                in_word.eq(0),
                self.filling.eq(self.filling + 1),
            ).Else(
                in_word.eq(in_word + 1)
            )
        )

        # Output side: FIFO -> DMA writer (DRAM words) or the chunk's staging bank (on-chip words: once
        # every DRAM word before them was taken by LiteDRAM, so that chunks are filled in order).
        self.dma = dma = LiteDRAMDMAWriter(port, fifo_depth=16)
        src = fifo.source
        dram_pending = Signal(max=64)          # Words given to the DMA writer, not yet taken (wdata).
        bank_we  = Signal()
        com_word = Signal(32)
        wtake    = Signal()
        self.comb += [
            dma.sink.valid.eq(src.valid & ~src.oc),
            dma.sink.address.eq(src.adr),
            dma.sink.data.eq(src.data),
            bank_we.eq(src.valid & src.oc & (dram_pending == 0)),
            src.ready.eq(Mux(src.oc, dram_pending == 0, dma.sink.ready)),
            wtake.eq((port.wdata.valid & port.wdata.ready) | bank_we),
            self.idle.eq((fifo.level == 0) & (dram_pending == 0)),
        ]
        if tiered:
            for i, b in enumerate(banks):
                self.comb += [
                    b.adr.eq(src.adr),
                    b.dat_w.eq(src.data),
                    b.we.eq(bank_we & (src.bank == i)),
                ]
        self.sync += [
            dram_pending.eq(dram_pending + (dma.sink.valid & dma.sink.ready) - (port.wdata.valid & port.wdata.ready)),
            If(self.restart,
                com_word.eq(0),
                self.filled.eq(0),
            ).Elif(wtake,
                If(com_word + 1 == self.chunk_words,
                    com_word.eq(0),
                    self.filled.eq(self.filled + 1),
                ).Else(
                    com_word.eq(com_word + 1)
                )
            ),
        ]

# DRAM Word Reader ---------------------------------------------------------------------------------

class DRAMWordReader(LiteXModule):
    """Reads words of a LiteDRAM native port, in order, into a block-RAM FIFO without an output
    register: a read is issued only with room reserved for its word (``depth`` words in flight or
    waiting). ``sink``: word addresses; ``source``: the words.

    The commands go through a two-entry skid buffer (ready, then valid/address registered): the
    port's command address comes from a register (LiteDRAM's crossbar decodes it into its bank
    arbitration and ``cmd.ready``) and ``sink.ready`` is a register (the owner's walk does not
    depend on LiteDRAM's ``cmd.ready``); one word per cycle still."""
    def __init__(self, port, depth):
        self.sink   = sink   = stream.Endpoint([("address", port.address_width)])
        self.source = source = stream.Endpoint([("data", port.data_width)])

        # # #

        self.fifo = fifo = RAMFIFO([("data", port.data_width)], depth)
        self.skid = skid = stream.PipeReady([("address", port.address_width)])
        self.pipe = pipe = stream.PipeValid([("address", port.address_width)])
        cmd = pipe.source
        reserved = Signal(max=depth + 1)
        room     = Signal()
        issue    = Signal()
        self.comb += [
            sink.connect(skid.sink),
            skid.source.connect(pipe.sink),
            room.eq(reserved != depth),
            port.cmd.valid.eq(cmd.valid & room),
            port.cmd.we.eq(0),
            port.cmd.addr.eq(cmd.address),
            port.cmd.last.eq(1),
            cmd.ready.eq(port.cmd.ready & room),
            issue.eq(port.cmd.valid & port.cmd.ready),
            fifo.sink.valid.eq(port.rdata.valid),
            fifo.sink.data.eq(port.rdata.data),
            port.rdata.ready.eq(1),
            fifo.source.connect(source),
        ]
        self.sync += reserved.eq(reserved + issue - (source.valid & source.ready))

# Staging Word Reader ------------------------------------------------------------------------------

class StagingWordReader(LiteXModule):
    """Reads words of the staging banks (port A, one cycle), in order, into a block-RAM FIFO: a read
    is issued only with room reserved for its word. ``sink``: bank and word address; ``source``: the
    words."""
    def __init__(self, banks, depth):
        dw  = len(banks[0].dat_w)
        aw  = max(b.adr_width for b in banks)
        bbits = max(bits_for(len(banks) - 1), 1)
        self.sink   = sink   = stream.Endpoint([("bank", bbits), ("address", aw)])
        self.source = source = stream.Endpoint([("data", dw)])

        # # #

        self.fifo = fifo = RAMFIFO([("data", dw)], depth)
        reserved = Signal(max=depth + 1)
        issue    = Signal()
        came     = Signal()
        bank_r   = Signal(bbits)
        self.comb += [
            sink.ready.eq(reserved != depth),
            issue.eq(sink.valid & sink.ready),
            fifo.sink.valid.eq(came),
            fifo.sink.data.eq(Array(b.dat_r for b in banks)[bank_r]),
            fifo.source.connect(source),
        ]
        for b in banks:
            self.comb += b.rd_adr.eq(sink.address)
        self.sync += [
            came.eq(issue),
            bank_r.eq(sink.bank),
            reserved.eq(reserved + issue - (source.valid & source.ready)),
        ]

# Ring Reader --------------------------------------------------------------------------------------

class RingReader(LiteXModule):
    """Completed chunks out of their slots, in chunk order (see the module's description); with
    ``banks``, from the staging banks when ``staged`` is set, else from the DRAM ring (from word
    ``ring_word`` of ``port``, fixed at build time)."""
    def __init__(self, port, slots, fifo_depth=64, banks=None, onchip=None, ring_word=0):
        dw = port.data_width
        aw = port.address_width
        wbytes = dw//8
        tiered = banks is not None
        check_ring_word("RingReader", ring_word, aw)
        self.source = source = stream.Endpoint(word_layout(dw))
        # Configuration.
        self.ring_word   = Constant(ring_word, aw)   # DRAM ring start (DRAM port word address).
        self.chunk_words = Signal(32)
        self.total_bytes = Signal(BYTE_BITS)   # Bytes handed out in all (the rest is padding).
        self.staged      = Signal()            # Chunks are in on-chip slots (else the DRAM ring).
        # Control.
        self.restart     = Signal()
        self.enable      = Signal()
        self.flush       = Signal()            # Discard the words coming out (after an error).
        self.done        = Signal()            # The chunk being read completed (its slot's data is there).
        self.slot_word   = Signal(32)          # Its slot's offset (words: the DRAM ring's, or its bank's).
        self.oc_id       = Signal(onchip.gbits if tiered else 1)   # Staged: its on-chip slot.
        # Status.
        self.advance     = Signal()            # Pulse: the next chunk (the tracker's walk moves).
        self.freed       = Signal(CHUNK_BITS)  # Chunks entirely handed out (slots free).
        self.bytes_out   = Signal(BYTE_BITS)
        self.idle        = Signal()
        self.oc_free     = Signal()            # Staged: pulse, the on-chip slot ``oc_free_id`` is free.
        self.oc_free_id  = Signal(onchip.gbits if tiered else 1)

        # # #

        self.dma = dma = DRAMWordReader(port, fifo_depth)
        rd_word  = Signal(32)
        out_word = Signal(32)
        pending  = Signal(max=fifo_depth + 2)   # Reads issued whose words are not out yet.
        issue    = Signal()
        take     = Signal()
        s_valid  = Signal()
        s_data   = Signal(dw)
        s_ready  = Signal()
        chunk_end = Signal()
        over     = Signal()
        if tiered:
            self.sdma = sdma = StagingWordReader(banks, fifo_depth)
            # On-chip slots of the chunks being read or handed out, freed when their last word left.
            self.ids = ids = stream.SyncFIFO([("id", onchip.gbits)], 4)
            self.comb += [
                dma.sink.valid.eq(self.enable & self.done & ~self.staged),
                sdma.sink.valid.eq(self.enable & self.done & self.staged & ids.sink.ready),
                sdma.sink.bank.eq(self.oc_id[onchip.sbits:]),
                sdma.sink.address.eq(self.slot_word + rd_word),
                issue.eq(Mux(self.staged, sdma.sink.valid & sdma.sink.ready, dma.sink.valid & dma.sink.ready)),
                ids.sink.valid.eq(self.staged & issue & (rd_word + 1 == self.chunk_words)),
                ids.sink.id.eq(self.oc_id),
                s_valid.eq(Mux(self.staged, sdma.source.valid, dma.source.valid)),
                s_data.eq(Mux(self.staged, sdma.source.data, dma.source.data)),
                sdma.source.ready.eq(self.staged & s_ready),
                dma.source.ready.eq(~self.staged & s_ready),
                ids.source.ready.eq(self.staged & take & chunk_end),
                self.oc_free.eq(ids.source.valid & ids.source.ready),
                self.oc_free_id.eq(ids.source.id),
            ]
        else:
            self.comb += [
                dma.sink.valid.eq(self.enable & self.done),
                issue.eq(dma.sink.valid & dma.sink.ready),
                s_valid.eq(dma.source.valid),
                s_data.eq(dma.source.data),
                dma.source.ready.eq(s_ready),
            ]
        self.comb += [
            dma.sink.address.eq(self.ring_word + self.slot_word + rd_word),
            self.advance.eq(issue & (rd_word + 1 == self.chunk_words)),
            take.eq(s_valid & (source.ready | self.flush | over)),
            s_ready.eq(take),
            chunk_end.eq(out_word + 1 == self.chunk_words),
            self.idle.eq(pending == 0),
        ]
        # Words out, the last one carries `last` and the bytes left; padding words are discarded.
        # ``over`` = bytes_out >= total_bytes, from registers: set by the word that carries ``last``
        # (bytes_out + its bytes = total_bytes), or a replay of no bytes.
        rest    = Signal(BYTE_BITS)
        ended   = Signal()
        none    = Signal()
        self.sync += [
            none.eq(self.total_bytes == 0),
            If(self.restart, ended.eq(0)).Elif(take & source.valid & source.last, ended.eq(1)),
        ]
        self.comb += [
            over.eq(ended | none),
            rest.eq(self.total_bytes - self.bytes_out),
            source.valid.eq(s_valid & ~self.flush & ~over),
            source.data.eq(s_data),
            source.bytes.eq(Mux(rest < wbytes, rest, wbytes)),
            source.last.eq(rest <= wbytes),
        ]
        self.sync += [
            If(self.restart,
                rd_word.eq(0), out_word.eq(0), pending.eq(0), self.freed.eq(0), self.bytes_out.eq(0),
            ).Else(
                If(issue,
                    If(rd_word + 1 == self.chunk_words, rd_word.eq(0)).Else(rd_word.eq(rd_word + 1))
                ),
                If(issue & ~take, pending.eq(pending + 1)).Elif(~issue & take, pending.eq(pending - 1)),
                If(take,
                    If(source.valid, self.bytes_out.eq(self.bytes_out + source.bytes)),
                    If(chunk_end,
                        out_word.eq(0),
                        self.freed.eq(self.freed + 1),
                    ).Else(
                        out_word.eq(out_word + 1)
                    )
                ),
            ),
        ]

# Ring ---------------------------------------------------------------------------------------------

class Ring(LiteXModule):
    """The recorder's ring in one module: the slots of both tiers, their pointers and bookkeeping.

    ::

        record:  words --> writer --+--> on-chip slot (staging bank of the chunk's port) --> NVMe Write
                                    +--> DRAM slot (from ring_word / ring_bus)           --> NVMe Write
        replay:  NVMe Read --> on-chip slot / DRAM slot --> reader --> words

        on-chip tier: OnChipSlots (taken, completed), a placement memory (chunk -> tier, slot id)
        DRAM tier:    RingPointers (the writer's, the tracker's), SlotTracker (in-order release)

    The DRAM ring's start is fixed in the build (``ring_word`` here, the bus address in the
    striper); a run sets how many DRAM slots it uses (``ring_slots``), the chunk (``chunk_log2``)
    and the on-chip slots per port (``onchip_slots``). The striper requests the chunks' commands
    (``requested``, ``req_*``) and reports their completions (``mark``).

    Parameters
    ----------
    wr_port, rd_port : LiteDRAMNativePort
        LiteDRAM ports (write/read) of the DRAM tier; their width is the ring word.
    n_ports : int
        NVMe ports (one staging bank each with ``banks``).
    slots : int
        DRAM slots at most (the slot tracker's memory).
    banks : list of StagingBank, optional
        The on-chip tier: one bank per NVMe port of ``staging_slots`` slots at most.
    ring_word : int
        Start of the DRAM ring: word address on the LiteDRAM ports.
    """
    def __init__(self, wr_port, rd_port, n_ports, slots, banks=None, staging_slots=0, ring_word=0):
        dw     = wr_port.data_width
        pbits  = max(bits_for(n_ports - 1), 1)
        tiered = banks is not None
        # Chunks between the first one not yet written and the last one filled, at most: the slots
        # of both tiers and as many written ahead (the on-chip walk's lead, see striping.py).
        # (At least two rows of lead for the walks, whatever the ports and the slots.)
        held = slots + n_ports*staging_slots
        self.chunk_window = 2**bits_for(max(2*held + 2, held + 2 + 2*n_ports))
        self.lead_chunks  = self.chunk_window - held - 2
        assert self.lead_chunks//n_ports >= 2
        # Configuration (static during a run).
        self.replay       = Signal()
        self.ring_slots   = Signal(16)              # DRAM slots used (2 .. slots).
        self.chunk_log2   = Signal(5)               # Chunk: 2**chunk_log2 bytes ...
        self.chunk_bytes  = Signal(32)              # ... in bytes ...
        self.chunk_words  = Signal(32)              # ... and in ring words (derived, registered).
        self.onchip_slots = Signal(5)               # On-chip slots used per port (0: the DRAM tier only).
        # Control.
        self.restart      = Signal()                # Pulse: a run begins.
        self.run          = Signal()                # The run is on: DRAM slots may be released.
        self.clear        = Signal()                # Pulse: clear the slot tracker (before a run) ...
        self.clearing     = Signal()                # ... takes ring_slots cycles (or the rest of the
                                                    # chunk tracker's clear, see ``ended``).
        self.ended        = Signal()                # Pulse: a run ended (the chunk tracker is cleared).
        # The striper's side.
        self.requested    = Signal(CHUNK_BITS)      # Data commands requested (chunk order) ...
        self.requested_dram = Signal(CHUNK_BITS)    # ... those of DRAM slots (the striper's pointer).
        self.req_fire     = Signal()                # Pulse: a data command was taken ...
        self.req_port     = Signal(pbits)           # ... the port of the next one.
        self.fill_port    = Signal(pbits)           # Record: port of the chunk being filled.
        self.req_oc       = Signal()                # The next request's chunk is in an on-chip slot ...
        self.req_id       = Signal(ID_BITS - 2)     # ... this one (global id) ...
        self.req_adr      = Signal(32)              # ... at this bus address.
        self.mark         = Signal()                # Pulse: the command ``mark_id`` completed.
        self.mark_id      = Signal(ID_BITS)
        self.data_fire    = Signal()                # Record: a data command was taken ...
        self.data_id      = Signal(ID_BITS)         # ... its id ...
        self.data_chunk   = Signal(CHUNK_BITS)      # ... and chunk.
        # Record: the striper's two walks (see striping.py), the tiers of their chunks.
        self.walk_chunk   = Signal(CHUNK_BITS)      # Chunk of the walk ...
        self.walk_move    = Signal()                # ... moves on (pulse).
        self.walk_known   = Signal()                # Its tier is known ...
        self.walk_oc      = Signal()                # ... on-chip.
        self.oc_chunk_n   = Signal(CHUNK_BITS)      # Chunk of the on-chip walk ...
        self.oc_move      = Signal()                # ... moves on (pulse).
        self.oc_known     = Signal()                # Its tier is known ...
        self.oc_placed    = Signal()                # ... on-chip ...
        self.oc_req_id    = Signal(ID_BITS - 2)     # ... in this slot.
        # Status.
        self.staged       = Signal()                # Replay through on-chip slots.
        self.read_room    = Signal()                # Replay: a slot is free to read the next chunk into.
        self.released     = Signal(CHUNK_BITS)      # Record: chunks released (both tiers); replay: freed.
        self.released_now = Signal()                # Record: a slot is released this cycle.
        self.level_onchip = Signal(CHUNK_BITS)      # Chunks in on-chip slots ...
        self.level_dram   = Signal(CHUNK_BITS)      # ... and in DRAM slots (filling included).
        self.committed    = Signal(CHUNK_BITS)      # Record: chunks written, in order (no gap before them) ...
        self.commit_now   = Signal()                # ... one more this cycle.

        # # #

        # The chunk in bytes and in ring words, from chunk_log2 (registered: no decoder in front of
        # the adders that use them; the configuration is static long before a run begins).
        self.sync += Case(self.chunk_log2, {i: [self.chunk_bytes.eq(2**i), self.chunk_words.eq(2**i//(dw//8))]
            for i in range(32)})

        onchip = None
        if tiered:
            self.onchip = onchip = OnChipSlots(n_ports, staging_slots)
        self.tracker = tracker = SlotTracker(slots)
        self.writer  = writer  = RingWriter(wr_port, slots, banks=banks, onchip=onchip, ring_word=ring_word)
        self.reader  = reader  = RingReader(rd_port, slots, banks=banks, onchip=onchip, ring_word=ring_word)
        replay  = self.replay
        restart = self.restart
        self.comb += [
            tracker.ring_slots.eq(self.ring_slots),
            tracker.ptr.chunk_words.eq(self.chunk_words),
            tracker.ptr.chunk_bytes.eq(self.chunk_bytes),
            writer.ring_slots.eq(self.ring_slots), writer.chunk_words.eq(self.chunk_words),
            reader.chunk_words.eq(self.chunk_words),
            tracker.clear.eq(self.clear),
            tracker.ptr.restart.eq(restart),
            writer.restart.eq(restart),
            reader.restart.eq(restart),
        ]

        # Record: the writer places each chunk in an on-chip slot or a DRAM slot; the striper writes
        # it from there once filled; an on-chip slot is free once its write completed, DRAM slots
        # are released in their order (the slot tracker). Replay: with on-chip slots (``staged``)
        # every chunk is read into one (requested while its port's bank has a free slot), else into
        # the DRAM ring.
        release   = Signal()      # A DRAM slot is released (record, in order).
        oc_rel    = Signal()      # An on-chip slot is released (record: its write completed).
        rel_count = Signal(CHUNK_BITS)   # Record: slots released, both tiers (a counter, not a sum).
        staged    = self.staged
        mark_oc   = Signal()
        self.comb += [
            mark_oc.eq(self.mark & self.mark_id[log2_int(ONCHIP_ID)]),
            tracker.mark.eq(self.mark & ~mark_oc), tracker.mark_id.eq(self.mark_id),
        ]
        if tiered:
            sb, gb = onchip.sbits, onchip.gbits
            # Placement of every chunk in the window (on-chip?, slot id), by chunk number: written by
            # the writer (record) or at the request (replay), read by the striper's walks (record) or
            # by the reader (replay).
            pdepth = self.chunk_window
            pmem = Memory(1 + gb, pdepth)
            pwr  = pmem.get_port(write_capable=True)
            prd  = pmem.get_port(mode=READ_FIRST)   # (A placement is read cycles after it was written.)
            prd2 = pmem.get_port(mode=READ_FIRST)   # Record: the on-chip walk's chunk.
            self.specials += pmem, pwr, prd, prd2
            rd_chunk = Signal(CHUNK_BITS)       # Replay: chunk the reader reads (staged).
            # (A flip-flop: configuration, static from the start's check to the end of the run.)
            self.sync += staged.eq(replay & (self.onchip_slots != 0))
            p_oc, p_id = Signal(), Signal(gb)
            self.comb += [
                onchip.count.eq(self.onchip_slots), onchip.restart.eq(restart),
                writer.fill_port.eq(Mux(replay, self.req_port, self.fill_port)),
                onchip.alloc.eq(Mux(replay, staged & self.req_fire, writer.oc_alloc)),
                If(replay,
                    pwr.we.eq(staged & self.req_fire), pwr.adr.eq(self.requested),
                    pwr.dat_w.eq(Cat(C(1, 1), onchip.slot)),
                    prd.adr.eq(rd_chunk),
                ).Else(
                    pwr.we.eq(writer.place_we), pwr.adr.eq(writer.place_adr),
                    pwr.dat_w.eq(Cat(writer.place_oc, writer.place_id)),
                    prd.adr.eq(self.walk_chunk),
                ),
                Cat(p_oc, p_id).eq(prd.dat_r),
                prd2.adr.eq(self.oc_chunk_n),
                Cat(self.oc_placed, self.oc_req_id).eq(prd2.dat_r),
                # Completions of on-chip slots: record, the slot is free; replay, its data is there.
                oc_rel.eq(~replay & mark_oc),
                onchip.mark.eq(replay & mark_oc), onchip.mark_id.eq(self.mark_id[:gb]),
                onchip.release[0].eq(Mux(replay, reader.oc_free, oc_rel)),
                onchip.release_id[0].eq(Mux(replay, reader.oc_free_id, self.mark_id[:gb])),
            ]
            # Requests: the chunk's on-chip slot (its bank is the chunk's port: replay, the slot taken
            # now; record, the on-chip walk's) or the DRAM ring (record: the walk's chunks).
            req_id = Signal(gb)
            off_b, off_b_case, off_b_mult = slot_offset(req_id[:sb], self.chunk_bytes, staging_slots)
            self.sync += off_b_mult
            # The walks' placements are read one cycle after their chunk changed.
            fresh_w, fresh_oc = Signal(), Signal()
            self.sync += [fresh_w.eq(~(restart | self.walk_move)), fresh_oc.eq(~(restart | self.oc_move))]
            self.comb += [
                self.walk_known.eq(fresh_w), self.walk_oc.eq(p_oc),
                self.oc_known.eq(fresh_oc),
                self.req_oc.eq(staged),
                req_id.eq(Mux(replay, onchip.slot, self.oc_req_id)),
                self.req_id.eq(req_id),
                off_b_case,
                self.req_adr.eq(Array(C(b.base, 32) for b in banks)[req_id[sb:]] + off_b),
            ]
            # Replay from on-chip slots: the chunk's placement is read one cycle after its number
            # changed, and only once its request was written two cycles before (``req_d``).
            fresh = Signal()
            req_d = [Signal(CHUNK_BITS) for _ in range(2)]
            off_w, off_w_case, off_w_mult = slot_offset(p_id[:sb], self.chunk_words, staging_slots)
            self.sync += off_w_mult
            self.comb += [
                off_w_case,
                onchip.query_id.eq(p_id),
                reader.staged.eq(staged),
                reader.oc_id.eq(p_id),
                reader.done.eq(Mux(staged, fresh & (rd_chunk != req_d[1]) & onchip.query_done, tracker.done)),
                reader.slot_word.eq(Mux(staged, off_w, tracker.ptr.word)),
            ]
            self.sync += [
                fresh.eq(~(restart | reader.advance)),
                req_d[0].eq(self.requested), req_d[1].eq(req_d[0]),
                If(restart, rd_chunk.eq(0)).Elif(reader.advance, rd_chunk.eq(rd_chunk + 1)),
            ]
            for b in banks:
                self.comb += b.replay.eq(replay)
            room_oc = onchip.free
        else:
            self.comb += [reader.done.eq(tracker.done), reader.slot_word.eq(tracker.ptr.word),
                self.walk_known.eq(1)]
            room_oc = 0
        self.comb += [
            # Replay: a free slot may be read into.
            self.read_room.eq(Mux(staged, room_oc, (self.requested - reader.freed) < self.ring_slots)),
            # Record: DRAM slots are released in their order once their write completed (not in
            # the cycle an on-chip slot is: one release per cycle).
            release.eq(~replay & self.run & tracker.done & (tracker.ptr.count != self.requested_dram) & ~oc_rel),
            tracker.ptr.advance.eq(Mux(replay, reader.advance & ~staged, release)),
            writer.freed.eq(tracker.ptr.count),
            self.released.eq(Mux(replay, reader.freed, rel_count)),
            self.released_now.eq(release | oc_rel),
            # Per tier: chunks in slots.
            self.level_onchip.eq(onchip.used if tiered else 0),
            If(replay,
                self.level_dram.eq(Mux(staged, 0, self.requested - reader.freed)),
            ).Else(
                self.level_dram.eq(writer.dram_filling + writer.partial_dram - tracker.ptr.count),
            ),
        ]
        # Releases of both tiers (one per cycle at most): the DRAM tier's count plus the on-chip one's.
        self.sync += If(restart, rel_count.eq(0)).Elif(release | oc_rel, rel_count.eq(rel_count + 1))

        # Record: chunks written in order (the catalog's length, WRITE_ADDR_LAST), while the on-chip
        # walk writes ahead of the DRAM backlog. Every data command's chunk is kept by its slot (a tag:
        # the chunk's number modulo 2 x ``chunk_window``); a completion marks its chunk in a chunk
        # tracker (``commit``: chunk number modulo ``chunk_window``, lap parity), walked in order. The
        # striper keeps its walks within ``chunk_window`` chunks of the walk (``lead_rows``).
        cw   = self.chunk_window
        tbits = log2_int(cw) + 1
        dbits = bits_for(slots - 1)
        self.commit = commit = SlotTracker(cw, id_bits=tbits)
        n_tags = slots + (n_ports << onchip.sbits if tiered else 0)
        tmem = Memory(tbits, n_tags)
        twr  = tmem.get_port(write_capable=True)
        trd  = tmem.get_port(mode=READ_FIRST)   # (A tag is read long after it was written.)
        self.specials += tmem, twr, trd
        def tag_index(i):
            if not tiered:
                return i[:dbits]
            return Mux(i[log2_int(ONCHIP_ID)], slots + i[:onchip.gbits], i[:dbits])
        # The tag is written one cycle after the request (registers: no path from the slot allocation
        # into the memory), a completion looks it up one cycle after it came (a completion may come
        # in the cycle after its request), its chunk is marked the cycle after.
        tag_we, tag_id, tag_chunk = Signal(), Signal(ID_BITS), Signal(tbits)
        mark_d, mark_id_d, mark_q = Signal(), Signal(ID_BITS), Signal()
        self.sync += [
            tag_we.eq(~replay & self.data_fire), tag_id.eq(self.data_id), tag_chunk.eq(self.data_chunk[:tbits]),
            mark_d.eq(~replay & self.mark), mark_id_d.eq(self.mark_id),
            mark_q.eq(mark_d),
        ]
        self.comb += [
            twr.we.eq(tag_we), twr.adr.eq(tag_index(tag_id)), twr.dat_w.eq(tag_chunk),
            trd.adr.eq(tag_index(mark_id_d)),
            commit.ring_slots.eq(cw),
            # Cleared after every run (chunk_window cycles, while the recorder is idle; the memory is
            # clear at configuration): a start does not wait for it.
            commit.clear.eq(self.ended),
            commit.mark.eq(mark_q), commit.mark_id.eq(trd.dat_r),
            commit.ptr.restart.eq(restart),
            commit.ptr.advance.eq(~replay & commit.done),
            self.committed.eq(commit.ptr.count),
            self.commit_now.eq(commit.ptr.advance),
        ]
        # (A replay does not use the chunk tracker: it does not wait for its clear.)
        self.comb += self.clearing.eq(tracker.clearing | (commit.clearing & ~replay))
