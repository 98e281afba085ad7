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
- hardware masters (the NVMe queue engine's doorbells): posted 1-dword memory writes.
"""

from migen import *

from litex.gen import *

from litex.soc.interconnect import stream

from litepcie.tlp.common import tlp_raw_layout

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

def doorbell_layout():
    return [("adr", 64), ("dat", 32)]

# Requester ----------------------------------------------------------------------------------------

class RCRequester(LiteXModule):
    """CPU requests (one at a time) and hardware doorbell writes.

    Parameters
    ----------
    tx_cpu, tx_hw : stream.Endpoint
        Raw-TLP ports of ``RCTLPTX`` for the CPU requests and the doorbell writes.
    cpl_source : stream.Endpoint
        Completions from ``RCTLPRX``.
    """
    def __init__(self, tx_cpu, tx_hw, cpl_source, data_width):
        # CPU request (set, then pulse ``start``).
        self.kind      = Signal(2)        # REQ_MRD / REQ_MWR / REQ_CFGRD / REQ_CFGWR.
        self.adr       = Signal(64)       # Memory: byte address. Config: ECAM layout bus/dev/fn/reg.
        self.length    = Signal(2)        # Dwords (1 or 2; config: 1).
        self.first_be  = Signal(4, reset=0xf)
        self.last_be   = Signal(4)
        self.wdata     = Signal(64)
        self.start     = Signal()
        self.timeout   = Signal(32, reset=2**20)
        self.busy      = Signal()
        self.status    = Signal(3)
        self.rdata     = Signal(64)
        self.requester_id = Signal(16, reset=ROOT_ID)
        # Counters.
        self.unexpected = Signal(32)      # Completions matching no outstanding request.
        self.timeouts   = Signal(32)
        self.doorbells  = Signal(32)
        # Hardware doorbell writes.
        self.doorbell   = stream.Endpoint(doorbell_layout())

        # # #

        # Doorbells: posted 1-dword writes, 3-dword header below 4 GiB, else 4-dword.
        db   = self.doorbell
        db64 = Signal()
        self.comb += [
            db64.eq(db.adr[32:] != 0),
            tx_hw.valid.eq(db.valid),
            db.ready.eq(tx_hw.ready),
            tx_hw.first.eq(1),
            tx_hw.last.eq(1),
            tx_hw.fmt.eq(Cat(db64, 1)),
            tx_hw.header[0:32].eq(Cat(Constant(1, 10), Constant(0, 14), Constant(0, 5), db64, Constant(1, 1), Constant(0, 1))),
            tx_hw.header[32:64].eq(Cat(Constant(0xf, 4), Constant(0, 4), Constant(0, 8), self.requester_id)),
            If(db64,
                tx_hw.header[64:96].eq(db.adr[32:]),
                tx_hw.header[96:128].eq(Cat(Constant(0, 2), db.adr[2:32])),
            ).Else(
                tx_hw.header[64:96].eq(Cat(Constant(0, 2), db.adr[2:32])),
            ),
            tx_hw.dat.eq(db.dat),
            tx_hw.be.eq(0xf),
        ]
        self.sync += If(db.valid & db.ready, self.doorbells.eq(self.doorbells + 1))

        # CPU requests.
        tag      = Signal(5)
        is_cfg   = Signal()
        is_write = Signal()
        adr64    = Signal()
        length   = Signal(2)
        self.comb += [
            is_cfg.eq(self.kind[1]),
            is_write.eq((self.kind == REQ_MWR) | (self.kind == REQ_CFGWR)),
            adr64.eq(~is_cfg & (self.adr[32:] != 0)),
            length.eq(Mux(is_cfg | (self.length == 1), 1, 2)),
        ]
        fmt  = Signal(2)
        typ  = Signal(5)
        self.comb += [
            fmt.eq(Cat(adr64, is_write)),
            typ.eq(Mux(is_cfg, 0b00100, 0b00000)),
        ]
        tx = tx_cpu
        self.comb += [
            tx.first.eq(1),
            tx.last.eq(1),
            tx.fmt.eq(fmt),
            tx.header[0:32].eq(Cat(length, Constant(0, 8), Constant(0, 14), typ, fmt, Constant(0, 1))),
            tx.header[32:64].eq(Cat(self.first_be, Mux(length == 2, self.last_be, 0), tag, Constant(0, 3),
                self.requester_id)),
            If(is_cfg,
                # ECAM layout: bus 27:20, device 19:15, function 14:12, register 11:2.
                tx.header[64:96].eq(Cat(Constant(0, 2), self.adr[2:12], Constant(0, 4),
                    self.adr[12:15], self.adr[15:20], self.adr[20:28])),
            ).Elif(adr64,
                tx.header[64:96].eq(self.adr[32:]),
                tx.header[96:128].eq(Cat(Constant(0, 2), self.adr[2:32])),
            ).Else(
                tx.header[64:96].eq(Cat(Constant(0, 2), self.adr[2:32])),
            ),
            tx.dat.eq(self.wdata),
            If(is_write, tx.be.eq(Mux(length == 2, 0xff, 0x0f))),
        ]

        # Completions: the one for the outstanding request (tag, requester ID) is consumed.
        cpl     = cpl_source
        match   = Signal()
        waiting = Signal()
        count   = Signal(32)
        self.comb += [
            match.eq(waiting & (cpl.tag == tag) & (cpl.req_id == self.requester_id)),
            cpl.ready.eq(1),
        ]
        self.sync += If(cpl.valid & cpl.first & ~match, self.unexpected.eq(self.unexpected + 1))

        self.fsm = fsm = FSM(reset_state="IDLE")
        fsm.act("IDLE",
            If(self.start,
                NextValue(self.status, REQ_OK),
                NextValue(self.rdata, 0),
                NextValue(count, 0),
                NextState("SEND")
            )
        )
        fsm.act("SEND",
            self.busy.eq(1),
            tx.valid.eq(1),
            If(tx.ready,
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
                If(cpl.malformed,
                    NextValue(self.status, REQ_MALFORMED)
                ).Elif(cpl.ep,
                    NextValue(self.status, REQ_POISONED)
                ).Elif(cpl.status == CPL_UR,
                    NextValue(self.status, REQ_UR)
                ).Elif(cpl.status == CPL_CRS,
                    NextValue(self.status, REQ_CRS)
                ).Elif(cpl.status != CPL_SC,
                    NextValue(self.status, REQ_CA)
                ).Elif(~is_write & (~cpl.with_data | (cpl.len != length)),
                    NextValue(self.status, REQ_MALFORMED)
                ).Else(
                    NextValue(self.rdata, Mux(length == 2, cpl.dat[:64], cpl.dat[:32]))
                ),
                NextValue(tag, tag + 1),
                If(cpl.last,
                    NextState("IDLE")
                ).Else(
                    NextState("SKIP")
                )
            ).Elif(count >= self.timeout,
                NextValue(self.status, REQ_TIMEOUT),
                NextValue(tag, tag + 1),   # A late completion will not match.
                NextState("IDLE")
            )
        )
        fsm.act("SKIP",
            self.busy.eq(1),
            If(cpl.valid & cpl.last, NextState("IDLE"))
        )
        self.sync += If(fsm.ongoing("WAIT") & (count >= self.timeout) & ~(cpl.valid & match),
            self.timeouts.eq(self.timeouts + 1))
