#
# This file is part of LiteRecorder.
#
# SPDX-License-Identifier: BSD-2-Clause

"""Requester of the root complex: configuration and memory requests to the device.

Two users:

- the CPU (through CSRs): Type-0 configuration reads/writes, memory reads/writes of 1 or 2 dwords
  with byte enables to the device's BARs (32/64-bit addresses), one request at a time, completion
  status decoded (SC, UR, CRS, CA), poisoned/malformed completions and completion timeout reported
  as errors (never a hang);
- hardware masters (the NVMe queue engine's doorbells): posted 1-dword memory writes to 32-bit
  addresses (the SSD's BAR0 is assigned below 4 GiB).

Both are short TLPs (a 3- or 4-dword header and at most 2 payload dwords) laid out directly as PHY
beats: header dwords, then the payload from dword 3 or 4 (one beat from 256 bits, two at 128).
"""

from migen import *

from litex.gen import *

from litex.soc.interconnect import stream


from literecorder.cores.common import doorbell_layout
from literecorder.cores.pcie.common import *

# Status codes (CSR ``status`` field) ---------------------------------------------------------------

REQ_OK        = 0
REQ_UR        = 1
REQ_CRS       = 2
REQ_CA        = 3
REQ_TIMEOUT   = 4
REQ_POISONED  = 5
REQ_MALFORMED = 6

REQ_MRD, REQ_MWR, REQ_CFGRD, REQ_CFGWR = range(4)

SHORT_TLP_DWORDS = 6   # 4-dword header + 2 payload dwords.

# Requester ----------------------------------------------------------------------------------------

class RCRequester(LiteXModule):
    """CPU requests (one at a time) and hardware doorbell writes.

    Parameters
    ----------
    source : stream.Endpoint
        ``phy_layout`` port of ``RCTLPTX`` (the requests, as PHY beats).
    cpl : stream.Endpoint
        Completions from ``RCTLPRX``.
    """
    def __init__(self, source, cpl, data_width, endianness="little"):
        check_data_width(data_width, minimum=128)
        ndw = data_width//32
        # CPU request (set, then pulse ``start``).
        self.kind      = Signal(2)        # REQ_MRD / REQ_MWR / REQ_CFGRD / REQ_CFGWR.
        self.adr       = Signal(64)       # Memory: byte address. Config: ECAM layout bus/dev/fn/reg.
        self.length    = Signal(2)        # Dwords (1 or 2; config: 1).
        self.first_be  = Signal(4, reset=0xf)
        self.last_be   = Signal(4)
        self.wdata     = Signal(64)
        self.start     = Signal()
        self.timeout   = Signal(32, reset=REQ_TIMEOUT_RESET)
        self.busy      = Signal()
        self.status    = Signal(3)
        self.rdata     = Signal(64)
        self.requester_id = Signal(16, reset=ROOT_ID)
        # Counters.
        self.unexpected = Signal(32)      # Completions matching no outstanding request.
        self.timeouts   = Signal(32)
        self.doorbells  = Signal(32)
        # Hardware doorbell writes.
        self.doorbell   = db = stream.Endpoint(doorbell_layout())

        # # #

        # CPU request decode.
        tag      = Signal(8)
        is_cfg   = Signal()
        is_write = Signal()
        length   = Signal(2)
        self.comb += [
            is_cfg.eq(self.kind[1]),
            is_write.eq(self.kind[0]),
            length.eq(Mux(is_cfg | (self.length == 1), 1, 2)),
        ]

        # CPU request TLP: 3- or 4-dword header, up to 2 payload dwords -------------------------
        h4  = Signal()
        hdr = Signal(128)     # The request's header (3 or 4 dwords).
        pay = dword_swap(self.wdata, 2, endianness)
        # (A register: the address and the kind are written some cycles before `start`.)
        self.sync += h4.eq(~is_cfg & (self.adr[32:] != 0))
        self.comb += [
            tlp_set(hdr, REQUEST_HEADER,
                length       = length,
                type         = Mux(is_cfg, TYPE_CFG0, FMT_TYPE_MEM),
                fmt          = Cat(h4, is_write),
                first_be     = self.first_be,
                last_be      = Mux(length == 2, self.last_be, 0),
                tag          = tag,
                requester_id = self.requester_id),
            If(is_cfg,
                # ECAM layout: bus 27:20, device 19:15, function 14:12, register 11:2.
                tlp_set(hdr, CONFIG_HEADER, register=self.adr[2:12], function=self.adr[12:15],
                    device=self.adr[15:20], bus=self.adr[20:28]),
            ).Elif(h4,
                tlp_set(hdr, REQUEST_HEADER, adr_hi=self.adr[32:], adr_lo=self.adr[2:32]),
            ).Else(
                tlp_set(hdr, REQUEST_HEADER, adr_3dw=self.adr[2:32]),
            ),
        ]
        cpu_image = Cat(
            hdr[:96],
            Mux(h4, hdr[96:], pay[:32]),
            Mux(h4, pay[:32], pay[32:]),
            pay[32:],
        )
        cpu_total = Signal(3)
        self.comb += cpu_total.eq(3 + h4 + Mux(is_write, length, 0))
        # Doorbell TLP: MWr, 3-dword header, 1 payload dword.
        db_image = Cat(
            tlp_image(REQUEST_HEADER, 3, fmt=0b010, type=FMT_TYPE_MEM, length=1, first_be=0xf,
                requester_id=self.requester_id, adr_3dw=db.adr[2:32]),
            dword_swap(db.dat, 1, endianness),
        )

        sel_cpu = Signal()   # 1: the CPU request, 0: the doorbell.
        image   = Signal(32*SHORT_TLP_DWORDS)
        self.comb += image.eq(Mux(sel_cpu, cpu_image, db_image))
        total = Signal(3)     # Dwords of the TLP.
        self.comb += total.eq(Mux(sel_cpu, cpu_total, 4))
        beat  = Signal()      # Beat of a 2-beat TLP (128-bit datapath).
        def more_than(i):     # The TLP has more than i dwords (constant 0 beyond total's range).
            return total > i if i < 2**len(total) - 1 else Constant(0, 1)
        if ndw >= SHORT_TLP_DWORDS:
            self.comb += [
                source.dat.eq(image),
                source.be.eq(be_of_dwords(Cat(*[more_than(i) for i in range(ndw)]))),
                source.first.eq(1),
                source.last.eq(1),
            ]
        else:
            self.comb += [
                source.dat.eq(Mux(beat, image[32*ndw:], image[:32*ndw])),
                source.be.eq(be_of_dwords(Cat(*[Mux(beat, more_than(ndw + i), more_than(i)) for i in range(ndw)]))),
                source.first.eq(~beat),
                source.last.eq(beat | (total <= ndw)),
            ]
            self.sync += If(source.valid & source.ready, beat.eq(~source.last))

        # Doorbells: posted 1-dword writes; the CPU request takes over between packets ----------
        want_cpu = Signal()
        owner    = Signal()
        self.comb += [
            sel_cpu.eq(Mux(beat, owner, want_cpu)),
            If(sel_cpu,
                source.valid.eq(1),
            ).Else(
                source.valid.eq(db.valid),
                db.ready.eq(source.ready & source.last),
            ),
        ]
        self.sync += [
            owner.eq(sel_cpu),
            If(db.valid & db.ready, self.doorbells.eq(self.doorbells + 1)),
        ]

        # CPU requests and their completion --------------------------------------------------------
        match   = Signal()
        waiting = Signal()
        count   = Signal(32)
        self.comb += [
            match.eq(waiting & (cpl.tag == tag) & (cpl.req_id == self.requester_id)),
            cpl.ready.eq(1),
        ]
        self.sync += If(cpl.valid & cpl.first & ~match, self.unexpected.eq(self.unexpected + 1))

        # Verdict of a completion from its first beat; its framing is known at its last beat.
        verdict = Signal(3)
        self.comb += verdict.eq(
            Mux(cpl.ep, REQ_POISONED,
            Mux(cpl.status == CPL_UR, REQ_UR,
            Mux(cpl.status == CPL_CRS, REQ_CRS,
            Mux(cpl.status != CPL_SC, REQ_CA,
            Mux(~is_write & (~cpl.with_data | (cpl.len != length)), REQ_MALFORMED, REQ_OK))))))
        # Payload dwords 0/1 are wire dwords 3 and 4: beat 0, or dword 1 in beat 1 at 128 bits
        # (dword 1 is meaningful for 2-dword reads only).
        rdata_lo = Signal(32)
        rdata_hi = Signal(32)
        self.comb += self.rdata.eq(Cat(rdata_lo, rdata_hi))

        self.fsm = fsm = FSM(reset_state="IDLE")
        fsm.act("IDLE",
            If(self.start,
                NextValue(self.status, REQ_OK),
                NextValue(count, 0),
                NextState("SEND")
            )
        )
        fsm.act("SEND",
            self.busy.eq(1),
            want_cpu.eq(1),
            If(sel_cpu & source.ready & source.last,
                # Memory writes are posted: done once sent.
                If(self.kind == REQ_MWR,
                    NextValue(tag, tag + 1),
                    NextState("IDLE")
                ).Else(
                    NextState("WAIT")
                )
            )
        )
        fsm.act("WAIT",
            self.busy.eq(1),
            waiting.eq(1),
            NextValue(count, count + 1),
            If(cpl.valid & cpl.first & match,
                NextValue(self.status, Mux(cpl.last & cpl.malformed, REQ_MALFORMED, verdict)),
                NextValue(rdata_lo, cpl.dat[96:128]),
                NextValue(tag, tag + 1),
                If(cpl.last,
                    NextState("IDLE")
                ).Else(
                    NextState("SECOND" if ndw < 5 else "SKIP")
                ),
                *([] if ndw < 5 else [NextValue(rdata_hi, cpl.dat[128:160])])
            ).Elif(count >= self.timeout,
                NextValue(self.status, REQ_TIMEOUT),
                NextValue(tag, tag + 1),   # A late completion will not match.
                NextState("IDLE")
            )
        )
        # 128 bits: the second payload dword is in the second beat.
        fsm.act("SECOND",
            self.busy.eq(1),
            If(cpl.valid,
                NextValue(rdata_hi, cpl.dat[:32]),
                If(cpl.last,
                    If(cpl.malformed, NextValue(self.status, REQ_MALFORMED)),
                    NextState("IDLE")
                ).Else(
                    NextState("SKIP")
                )
            )
        )
        fsm.act("SKIP",
            self.busy.eq(1),
            If(cpl.valid & cpl.last,
                If(cpl.malformed, NextValue(self.status, REQ_MALFORMED)),
                NextState("IDLE")
            )
        )
        self.sync += If(fsm.ongoing("WAIT") & (count >= self.timeout) & ~(cpl.valid & match),
            self.timeouts.eq(self.timeouts + 1))
