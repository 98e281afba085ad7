#
# This file is part of LiteRecorder.
#
# SPDX-License-Identifier: BSD-2-Clause

"""Bring-up of one SSD port in RTL, without a CPU: PCIe enumeration, NVMe controller
initialization, the I/O queue pair of the hardware queue engine. What the BIOS does with
``pcie_enumerate`` (software/libliterec/pcie.c) and ``nvme_init`` (nvme.c), step by step, for the
CPU-less core (doc/core.md).

::

     reset / start          +------------------------ NVMeBringUp ------------------------+
    ------------------>     | WAIT-LINK -> enumerate -> NVMe init -> admin commands ->     |
                            |   (PERST#)   (IDs, class,  (CAP, CC.EN=0, (Identify x3,      |
                            |               BAR0, MPS,    AQA/ASQ/ACQ,   Set Features,     |
                            |               MEM|BME)      CC.EN=1)       Create CQ/SQ)     |
                            |                                 |              |             |
                            |   _RequesterAccess -------------+--> requester |             |
                            |   (config/memory requests, CRS retried)       |             |
                            |   _AdminWindow <==(device reads the ASQ, writes the ACQ and  |
                            |   (no memory)        Identify data: sniffed into registers)  |
                            |                                                |             |
                            | -> queue engine configured and enabled -> READY (served)     |
                            |    or FAILED: error code + the step that failed (no hang)    |
                            +--------------------------------------------------------------+

- Configuration and memory requests go through the root complex's requester (``RCRootComplex.
  requester``: the port ``RCRootComplex.add_csr`` gives the CPU), one at a time; a configuration
  request answered with CRS is sent again for up to ``CRS_MS``.
- The admin queues live in an on-chip window of the root complex (``add_window``) that has no
  memory behind it: a read of the submission queue returns the one command in flight (the engine's
  PRP window does the same for PRP lists), and the completion entry and the few Identify fields the
  bring-up needs are taken from the device's writes as they pass (the rest of the data is dropped).
- Every wait is bounded: link training (``link_timeout_ms``), CSTS.RDY (CAP.TO and ``timeout_ms``),
  admin commands (``timeout_ms``), the requester's completion timeout. A failure ends in
  ``FAILED`` with a code (``ERR_*``) and the step (``STEP_*``) that failed; ``start`` runs the
  whole sequence again.
- The root port's own configuration (its Type-1 header, MPS, MEM|BME) is the PHY's
  (``cores/pcie/phy/common.py``: ``RootPortConfiguration``; its ``link_up`` is reported once that is
  done); the simulation PHY has none.
"""

from migen import *

from litex.gen import *

from litex.soc.interconnect.csr import *

from literecorder.cores.pcie.common import check_data_width
from literecorder.cores.pcie.requester import REQ_OK, REQ_CRS, REQ_MRD, REQ_MWR, REQ_CFGRD, REQ_CFGWR
from literecorder.cores.nvme.common import (NVME_SQE_BYTES, NVME_CQE_BYTES, NVME_PAGE_SIZE,
    NVME_MAX_TRANSFER, NVME_LBA_SHIFT_MIN, NVME_LBA_SHIFT_MAX)

# PCI / PCIe / NVMe facts (PCI Local Bus 3.0, PCIe Base 4.0 section 7.5, NVMe 1.4 sections 3.1 and 5)

PCI_VENDOR_ID        = 0x00     # Vendor ID (15:0), Device ID (31:16).
PCI_COMMAND          = 0x04     # Command (15:0), Status (31:16).
PCI_CLASS            = 0x08     # Revision (7:0), class code (31:8).
PCI_BAR0             = 0x10
PCI_BAR1             = 0x14
PCI_CAPABILITIES     = 0x34
PCI_COMMAND_MEMORY   = 1 << 1
PCI_COMMAND_MASTER   = 1 << 2
PCI_COMMAND_INTX_OFF = 1 << 10
PCI_CAP_ID_EXP       = 0x10     # PCI Express capability.
PCI_EXP_DEVCAP       = 0x04
PCI_EXP_DEVCTL       = 0x08     # MPS 7:5, MRRS 14:12 (128 << code bytes).
CLASS_NVME           = 0x010802 # Mass storage / non-volatile memory / NVM Express.

NVME_REG_CAP   = 0x00           # MQES 15:0, TO 31:24 (500 ms units), DSTRD 35:32, MPSMIN 51:48.
NVME_REG_CC    = 0x14           # EN 0, MPS 10:7, SHN 15:14, IOSQES 19:16, IOCQES 23:20.
NVME_REG_CSTS  = 0x1c           # RDY 0, CFS 1, SHST 3:2.
NVME_REG_AQA   = 0x24
NVME_REG_ASQ   = 0x28
NVME_REG_ACQ   = 0x30
NVME_DOORBELLS = 0x1000         # SQ y tail: + (2y)(4 << DSTRD), CQ y head: + (2y + 1)(4 << DSTRD).
NVME_CAP_TO_MS = 500
# CC of an enabled controller: IOCQES 16 B, IOSQES 64 B, MPS 4 KiB (0), NVM command set, round robin.
NVME_CC_ENABLE = (4 << 20) | (6 << 16) | 1
NVME_CC_SHN_NORMAL = 1 << 14
NVME_SHST_COMPLETE = 2

ADMIN_DELETE_SQ, ADMIN_CREATE_SQ, ADMIN_DELETE_CQ, ADMIN_CREATE_CQ = 0x00, 0x01, 0x04, 0x05
ADMIN_IDENTIFY, ADMIN_SET_FEATURES = 0x06, 0x09
CNS_NAMESPACE, CNS_CONTROLLER, CNS_ACTIVE_NAMESPACES = 0x00, 0x01, 0x02
FEATURE_NUMBER_OF_QUEUES = 0x07

# Identify data the bring-up takes (byte offsets).
ID_CTRL_MDTS  = 77              # Maximum Data Transfer Size: 2^MDTS minimum pages (0: no limit).
ID_CTRL_SQES  = 512             # Required (3:0) / maximum (7:4) SQ entry size, log2.
ID_CTRL_CQES  = 513
ID_NS_NSZE    = 0               # Namespace size (LBAs), 64-bit.
ID_NS_FLBAS   = 26              # Formatted LBA size: format index 3:0.
ID_NS_LBAF    = 128             # LBA formats, 4 bytes each: LBADS (log2 of the LBA size) in byte 2.
ID_NS_LBAFS   = 16
ID_NSLIST_NSID = 0              # Active namespace list: first NSID (32-bit).

# Bring-up constants -------------------------------------------------------------------------------

ADMIN_ENTRIES = 16              # Admin SQ/CQ entries (one command at a time).
ADMIN_ASQ     = 0x0000          # Admin window layout: the queues page aligned (ASQB/ACQB 11:0 are
ADMIN_ACQ     = 0x1000          # reserved), the Identify data page.
ADMIN_BUF     = 0x2000
ADMIN_WINDOW_SIZE = 0x4000
DEVCTL_MRRS   = 512             # Max Read Request Size programmed in the device (as the BIOS).
CRS_MS        = 1000            # Configuration requests answered with CRS are retried this long.

LINK_TIMEOUT_MS_RESET = 100     # Link training after PERST# release (PCIe CEM: 100 ms).
TIMEOUT_MS_RESET      = 1000    # Admin command timeout and bound of the CSTS waits (the BIOS's).

# Steps (``step``: where the sequence is, or where it failed).
STEPS = [
    ("IDLE",                "not started (or waiting for ``start``)"),
    ("LINK",                "release PERST#, wait for the link (``link_timeout_ms``)"),
    ("ID",                  "configuration read of Vendor/Device ID (CRS retried)"),
    ("CLASS",               "class code: must be NVM Express (01/08/02)"),
    ("BAR",                 "Command register decoding off, BAR0 sizing and assignment"),
    ("CAPS",                "PCI Express capability: MPS = min(device, root port), MRRS 512 B"),
    ("COMMAND",             "Command register: memory space, bus master, INTx off"),
    ("CAP",                 "NVMe CAP: MQES, TO, DSTRD, MPSMIN (4 KiB pages)"),
    ("DISABLE",             "CC.EN = 0 (after a normal shutdown when enabled), wait CSTS.RDY = 0"),
    ("ADMIN-QUEUES",        "AQA, ASQ, ACQ in the admin window"),
    ("ENABLE",              "CC.EN = 1, wait CSTS.RDY = 1"),
    ("IDENTIFY-CONTROLLER", "Identify Controller: MDTS, SQES/CQES"),
    ("IDENTIFY-NS-LIST",    "Identify Active Namespace list: the first namespace"),
    ("IDENTIFY-NAMESPACE",  "Identify Namespace: NSZE, LBA size"),
    ("SET-QUEUES",          "Set Features Number of Queues: one I/O queue pair"),
    ("CREATE-CQ",           "Create I/O Completion Queue 1 in the engine's CQ window"),
    ("CREATE-SQ",           "Create I/O Submission Queue 1 in the engine's SQ window"),
    ("ENGINE",              "queue engine configured and enabled, wait ready"),
    ("READY",               "the port is handed to the queue engine"),
    ("QUIESCE",             "restart: the engine's commands in flight complete, engine off"),
]
STEP = {name: i for i, (name, _) in enumerate(STEPS)}

# Error codes (``code``) and what ``detail`` holds with each.
ERRORS = [
    ("NONE",          "no error", "0"),
    ("LINK-DOWN",     "the link did not come up in time, or went down during the bring-up", "LTSSM state"),
    ("NO-DEVICE",     "no function answers at 01:00.0 (Vendor ID 0xffff, or the request failed)", "requester status"),
    ("NOT-NVME",      "the function is not an NVM Express controller", "class code 23:8"),
    ("PCIE",          "a configuration or memory request failed", "requester status (1 UR, 2 CRS, 3 CA, 4 timeout, 5 poisoned, 6 malformed), 0xffff: a register read all ones"),
    ("BAR",           "BAR0 is not a memory BAR of 16 B .. the port's window", "BAR0 as sized"),
    ("UNSUPPORTED",   "the controller cannot be used: CAP.MPSMIN > 4 KiB, SQES/CQES without 64/16-byte entries, no active namespace, LBA size outside 512 B .. 4 KiB, namespace size 0", "the offending field (CAP.MPSMIN, SQES, CQES; 0x10 | the LBA format index; 0)"),
    ("NOT-READY",     "CSTS.RDY did not follow CC.EN within min(CAP.TO, timeout_ms)", "CSTS"),
    ("FATAL",         "controller fatal status (CSTS.CFS)", "CSTS"),
    ("ADMIN-TIMEOUT", "an admin command got no completion within timeout_ms", "command opcode"),
    ("ADMIN-STATUS",  "an admin command completed with an error status", "CQE status field (SC 7:0, SCT 10:8, CRD 12:11, M 13, DNR 14)"),
    ("ENGINE",        "the queue engine did not become ready", "0"),
]
ERR = {name: i for i, (name, _, _) in enumerate(ERRORS)}

# Requester access ---------------------------------------------------------------------------------

class _RequesterAccess(LiteXModule):
    """One configuration or memory request at a time on the root complex's requester.

    Held ``valid`` with the request's fields; ``done`` pulses once with ``status`` (``REQ_*``) and
    ``rdata`` valid in that cycle. The fields are latched when the request is taken and reach the
    requester a cycle before its ``start`` (it registers the header format from the address). A
    configuration request answered with CRS is sent again until ``crs_ms`` milliseconds passed."""
    def __init__(self, requester, tick_ms, crs_ms=CRS_MS):
        self.valid    = Signal()
        self.kind     = Signal(2)
        self.adr      = Signal(64)
        self.wdata    = Signal(32)
        self.length   = Signal(2, reset=1)     # Dwords: 1 (2: a 64-bit memory read).
        self.first_be = Signal(4, reset=0xf)
        self.done     = Signal()
        self.status   = Signal(3)
        self.rdata    = Signal(64)
        self.idle     = Signal()

        # # #

        kind, adr, wdata = Signal(2), Signal(64), Signal(32)
        length, first_be = Signal(2), Signal(4)
        ms = Signal(max=crs_ms + 1)
        r = requester
        self.comb += [
            r.kind.eq(kind), r.adr.eq(adr), r.wdata.eq(wdata), r.length.eq(length),
            r.first_be.eq(first_be), r.last_be.eq(0xf),
            self.status.eq(r.status), self.rdata.eq(r.rdata),
        ]
        self.fsm = fsm = FSM(reset_state="IDLE")
        fsm.act("IDLE",
            If(self.valid,
                NextValue(kind, self.kind), NextValue(adr, self.adr), NextValue(wdata, self.wdata),
                NextValue(length, self.length), NextValue(first_be, self.first_be),
                NextState("SETUP")
            )
        )
        self.comb += self.idle.eq(fsm.ongoing("IDLE"))
        self.sync += If(self.idle, ms.eq(0)).Elif(tick_ms & (ms != crs_ms), ms.eq(ms + 1))
        fsm.act("SETUP", NextState("START"))
        fsm.act("START", r.start.eq(1), NextState("WAIT"))
        fsm.act("WAIT",
            If(~r.busy,
                If(kind[1] & (r.status == REQ_CRS) & (ms != crs_ms),
                    NextState("SETUP")
                ).Else(
                    self.done.eq(1),
                    NextState("IDLE")
                )
            )
        )

# Admin window -------------------------------------------------------------------------------------

class _AdminWindow(LiteXModule):
    """The admin queues and the Identify data page as an on-chip window with no memory behind it.

    Device reads of the window return the submission queue entry of the command in flight, whatever
    the slot: entry ``command`` of ``commands`` (opcode, NSID, PRP1, CDW10, CDW11: integers or
    signals; every other dword 0) with ``cid``. Device writes are watched: the completion entry at
    ``head`` with the expected phase and CID sets ``cqe`` (``cqe_status``); the Identify fields the
    bring-up uses are taken into registers as they pass (``clear`` empties them before a command).
    """
    def __init__(self, window, commands):
        dw  = window.data_width
        bb  = dw//8
        self.command    = Signal(max=max(len(commands), 2))
        self.opcode     = Signal(8)           # Of the command in flight.
        self.cid        = Signal(16)
        self.head       = Signal(max=ADMIN_ENTRIES)
        self.phase      = Signal()
        self.arm        = Signal()            # Pulse: a command is submitted (cqe cleared).
        self.cqe        = Signal()            # Its completion entry arrived.
        self.cqe_status = Signal(15)
        self.clear      = Signal()            # Pulse: forget the Identify fields.
        self.b0   = Signal(64)                # Identify bytes 0..7 (NSZE / the first NSID).
        self.mdts = Signal(8)
        self.sqes = Signal(8)
        self.cqes = Signal(8)
        self.flbas = Signal(8)
        # Per LBA format: its LBADS is 9..12 (``lbaf_ok``) and LBADS - 9 (``lbaf_shift``).
        self.lbaf_ok    = Signal(ID_NS_LBAFS)
        self.lbaf_shift = [Signal(2, name=f"lbaf_shift{i}") for i in range(ID_NS_LBAFS)]

        # # #

        # Submission queue entry of the command in flight, read beat by beat (sync read).
        nsid, prp1, cdw10, cdw11 = Signal(32), Signal(32), Signal(32), Signal(32)
        self.comb += Case(self.command, {i: [self.opcode.eq(op), nsid.eq(ns), prp1.eq(prp), cdw10.eq(c10),
            cdw11.eq(c11)] for i, (op, ns, prp, c10, c11) in enumerate(commands)})
        sqe = Cat(self.opcode, Constant(0, 8), self.cid,             # CDW0
            nsid, Constant(0, 32*4),                                 # NSID, CDW2-3, MPTR
            prp1, Constant(0, 32*3),                                 # PRP1, PRP2
            cdw10, cdw11, Constant(0, 32*4))                         # CDW10-15
        sqe_beats = max(1, NVME_SQE_BYTES//bb)
        if sqe_beats > 1:
            sel = Signal(log2_int(sqe_beats))
            self.sync += sel.eq(window.rd_adr[:log2_int(sqe_beats)])
            self.comb += Case(sel, {k: window.rd_dat.eq(sqe[k*dw:(k + 1)*dw]) for k in range(sqe_beats)})
        else:
            self.comb += window.rd_dat.eq(Replicate(sqe, dw//len(sqe)))

        # Device writes: taken at once (nothing to wait for).
        wr = window.wr
        self.comb += wr.ready.eq(1)

        def byte_at(offset, *assignments):
            """``assignments(byte)`` when a write carries the byte at window ``offset``."""
            beat, lane = divmod(offset, bb)
            b = wr.dat[8*lane:8*lane + 8]
            return If(wr.valid & (wr.adr == beat) & wr.be[lane], *[f(b) for f in assignments])

        def into(reg, lsb=0):
            return lambda b: reg[lsb:lsb + 8].eq(b)

        captures = [byte_at(ADMIN_BUF + ID_NS_NSZE + i, into(self.b0, 8*i)) for i in range(8)]
        captures += [
            byte_at(ADMIN_BUF + ID_CTRL_MDTS, into(self.mdts)),
            byte_at(ADMIN_BUF + ID_CTRL_SQES, into(self.sqes)),
            byte_at(ADMIN_BUF + ID_CTRL_CQES, into(self.cqes)),
            byte_at(ADMIN_BUF + ID_NS_FLBAS,  into(self.flbas)),
        ]
        captures += [byte_at(ADMIN_BUF + ID_NS_LBAF + 4*i + 2,
            lambda b, i=i: self.lbaf_ok[i].eq((b >= NVME_LBA_SHIFT_MIN) & (b <= NVME_LBA_SHIFT_MAX)),
            lambda b, i=i: self.lbaf_shift[i].eq(b - NVME_LBA_SHIFT_MIN)) for i in range(ID_NS_LBAFS)]
        self.sync += If(self.clear,
            *[r.eq(0) for r in [self.b0, self.mdts, self.sqes, self.cqes, self.flbas, self.lbaf_ok]]
        ).Else(*captures)

        # Completion entry at the head: DW3 (CID, phase, status).
        per_beat = bb//NVME_CQE_BYTES                   # Entries in a beat (1, 2 or 4).
        slot_bits = log2_int(per_beat) if per_beat > 1 else 0
        head_beat = Signal(max=max(ADMIN_ENTRIES//per_beat, 2))
        self.comb += head_beat.eq(self.head[slot_bits:] if slot_bits else self.head)
        slot = self.head[:slot_bits] if slot_bits else Constant(0, 1)
        hit  = Signal()
        dw3, be3 = Signal(32), Signal()
        self.comb += [
            hit.eq(wr.valid & (wr.adr == (ADMIN_ACQ//bb) + head_beat)),
            Case(slot, {s: [dw3.eq(wr.dat[128*s + 96:128*s + 128]), be3.eq(wr.be[16*s + 12])]
                for s in range(per_beat)}),
        ]
        self.sync += If(self.arm,
            self.cqe.eq(0)
        ).Elif(hit & be3 & (dw3[16] == self.phase) & (dw3[:16] == self.cid),
            self.cqe.eq(1),
            self.cqe_status.eq(dw3[17:32]),
        )

# NVMe Bring-Up ------------------------------------------------------------------------------------

class NVMeBringUp(LiteXModule):
    """Brings one SSD port up without a CPU and hands it to the queue engine (see the module
    docstring).

    Parameters
    ----------
    rc : RCRootComplex
        The port's root complex: its requester (driven here instead of ``add_csr``'s CPU port), its
        completer's ``enable``/``mps_log2``, its PHY's ``link_up``/``perst``/``max_payload_size``, and
        the admin window it hands out.
    engine : NVMeQueueEngine
        The port's queue engine: its configuration (``ENGINE_CONFIG``) and ``enable`` are driven
        here; its SQ/CQ windows are where the I/O queues are created.
    sys_clk_freq : int
        Clock (Hz) of the timeouts, counted in milliseconds.
    admin_base : int
        Bus address of the admin window (``ADMIN_WINDOW_SIZE``, aligned on it).
    bar_base : int
        Bus address assigned to BAR0 (below 4 GiB), the start of a window of ``bar_size`` bytes.
    bar_size : int
        Largest BAR0 accepted (bytes).
    engine_timeout_ms : int
        Command timeout of the queue engine (its ``timeout``).
    autostart : bool
        Run the sequence after reset (else wait for ``start``).

    ``start``: pulse, run the sequence again (refused with ``refused`` while ``hold``, e.g. a
    recording); ``ready``: the port is the queue engine's; ``failed`` with ``code``/``step``/
    ``detail``. Identify results: ``nsid``, ``nsze``, ``lba_shift``, ``mdts``, ``xfer_log2``
    (largest transfer of a command, log2 bytes), ``qsize``; ``vendor_device``, ``mps_log2``.
    """
    def __init__(self, rc, engine, sys_clk_freq, admin_base, bar_base, bar_size=1 << 20,
        engine_timeout_ms=TIMEOUT_MS_RESET, autostart=True):
        dw = rc.phy.data_width
        check_data_width(dw, minimum=128)
        if admin_base % ADMIN_WINDOW_SIZE or admin_base + ADMIN_WINDOW_SIZE > 2**32:
            raise ValueError(f"NVMeBringUp: admin_base=0x{admin_base:x}: aligned on 0x{ADMIN_WINDOW_SIZE:x}, "
                "below 4 GiB")
        if bar_size < 16 or bar_size & (bar_size - 1) or bar_base % bar_size or bar_base + bar_size > 2**32:
            raise ValueError(f"NVMeBringUp: BAR window 0x{bar_base:x} + 0x{bar_size:x}: a power of two of "
                "16 B at least, aligned on its size, below 4 GiB (the engine's doorbells are 32-bit)")
        cycles_per_ms = int(sys_clk_freq)//1000
        if cycles_per_ms < 1:
            raise ValueError(f"NVMeBringUp: sys_clk_freq={sys_clk_freq}: at least 1 kHz")
        engine_timeout = engine_timeout_ms*cycles_per_ms
        if not (0 < engine_timeout < 2**32):
            raise ValueError(f"NVMeBringUp: engine_timeout_ms={engine_timeout_ms}: 1 ms .. "
                f"{(2**32 - 1)//cycles_per_ms} ms at {sys_clk_freq/1e6:g} MHz (a 32-bit cycle count)")
        root_mps_code = log2_int(rc.phy.max_payload_size) - 7   # The MPS the root port accepts.
        entries = engine.entries
        qbits   = log2_int(entries) + 1

        # Control.
        self.start           = Signal()
        self.hold            = Signal()
        self.refused         = Signal()           # Pulse: a start refused (hold).
        self.link_timeout_ms = Signal(16, reset=LINK_TIMEOUT_MS_RESET)
        self.timeout_ms      = Signal(16, reset=TIMEOUT_MS_RESET)
        # Status.
        self.busy      = Signal()
        self.ready     = Signal()
        self.failed    = Signal()
        self.step      = Signal(max=len(STEPS))
        self.code      = Signal(max=len(ERRORS))
        self.detail    = Signal(32)
        self.link_up   = Signal()
        self.vendor_device = Signal(32)
        self.mps_log2  = Signal(4, reset=7)
        self.nsid      = Signal(32)
        self.nsze      = Signal(64)
        self.lba_shift = Signal(4)
        self.mdts      = Signal(8)
        self.xfer_log2 = Signal(5)
        self.qsize     = Signal(qbits)
        self.runs      = Signal(16)               # Sequences started since reset.

        # # #

        phy, cpl = rc.phy, rc.completer
        self.window = window = rc.add_window("admin", admin_base, ADMIN_WINDOW_SIZE, on_chip=True)

        # Time base: a millisecond tick, one counter of milliseconds for the wait in progress.
        tick_ms   = Signal()
        prescaler = Signal(max=cycles_per_ms)
        self.sync += If(prescaler == cycles_per_ms - 1,
            prescaler.eq(0), tick_ms.eq(1)
        ).Else(
            prescaler.eq(prescaler + 1), tick_ms.eq(0)
        )
        elapsed = Signal(18)                      # ms (CAP.TO reaches 127500 ms); saturates.
        timer_clear = Signal()                    # Pulse: a wait begins.
        self.sync += If(timer_clear, elapsed.eq(0)).Elif(tick_ms & ~elapsed[-1], elapsed.eq(elapsed + 1))

        self.acc  = acc  = _RequesterAccess(rc.requester, tick_ms)

        # The admin commands: (state, opcode, NSID, PRP1, CDW10, CDW11, the state after it).
        buf    = admin_base + ADMIN_BUF
        qcdw10 = Signal(32)
        self.comb += qcdw10.eq(Cat(Constant(1, 16), self.qsize - 1))   # QID 1, QSIZE (0's based).
        commands = [
            ("IDENTIFY-CONTROLLER", ADMIN_IDENTIFY, 0, buf, CNS_CONTROLLER, 0, "CHECK-CONTROLLER"),
            ("IDENTIFY-NS-LIST",    ADMIN_IDENTIFY, 0, buf, CNS_ACTIVE_NAMESPACES, 0, "CHECK-NS-LIST"),
            ("IDENTIFY-NAMESPACE",  ADMIN_IDENTIFY, self.nsid, buf, CNS_NAMESPACE, 0, "CHECK-NAMESPACE"),
            ("SET-QUEUES",          ADMIN_SET_FEATURES, 0, 0, FEATURE_NUMBER_OF_QUEUES, 0, "CREATE-CQ"),
            ("CREATE-CQ",           ADMIN_CREATE_CQ, 0, engine.cq_window.base, qcdw10, 1, "CREATE-SQ"),   # PC = 1, IEN = 0.
            ("CREATE-SQ",           ADMIN_CREATE_SQ, 0, engine.sq_window.base, qcdw10, (1 << 16) | 1,   # CQID 1, PC = 1.
                "START-ENGINE"),
        ]
        self.adm  = adm  = _AdminWindow(window, [c[1:6] for c in commands])
        self.comb += self.nsze.eq(adm.b0)       # (NSZE stays there once the namespace was identified.)

        # Port state.
        perst     = Signal(reset=1)
        dma       = Signal()
        engine_en = Signal()
        self.comb += [
            phy.perst.eq(perst),
            cpl.enable.eq(dma),
            cpl.mps_log2.eq(self.mps_log2),
            self.link_up.eq(phy.link_up),
        ]

        # What the sequence learns.
        cmd      = Signal(16)                     # Command register as read.
        bar_lo   = Signal(32)                     # BAR0 as read (type bits).
        size_lo  = Signal(32)
        bar64    = Signal()
        cap_ptr  = Signal(8)
        hops     = Signal(6)
        pcie_cap = Signal(8)
        devcap   = Signal(3)
        devctl   = Signal(16)
        cap      = Signal(64)
        dstrd    = Signal(4)
        rdy_ms   = Signal(17)                     # min(CAP.TO x 500, timeout_ms).
        cc       = Signal(32)
        csts     = Signal(32)
        sq_tail  = Signal(max=ADMIN_ENTRIES)
        tail_next = Signal(max=ADMIN_ENTRIES)
        self.comb += tail_next.eq(sq_tail + 1)
        blocks_log2 = Signal(5)                   # Blocks of the largest transfer, log2.
        self.comb += blocks_log2.eq(self.xfer_log2 - self.lba_shift)
        bar0     = bar_base

        # The queue engine's configuration (held while it runs).
        self.comb += [
            engine.enable.eq(engine_en),
            engine.qsize.eq(self.qsize),
            engine.qd.eq(self.qsize - 1),
            engine.nsid.eq(self.nsid),
            engine.lba_shift.eq(self.lba_shift),
            engine.max_blocks.eq(1 << blocks_log2),
            engine.sq_db.eq(bar0 + NVME_DOORBELLS + (8 << dstrd)),    # SQ 1 tail: (2*1)(4 << DSTRD).
            engine.cq_db.eq(bar0 + NVME_DOORBELLS + (12 << dstrd)),   # CQ 1 head: (2*1 + 1)(4 << DSTRD).
            engine.timeout.eq(engine_timeout),
        ]

        # FSM --------------------------------------------------------------------------------------
        self.fsm = fsm = FSM(reset_state="RESET")
        steps = {}                                # State -> step (``step`` follows the state).

        def goto(state):
            return NextState(state)

        def fail(code, detail=0):
            return [NextValue(self.code, ERR[code]), NextValue(self.detail, detail), NextState("FAILED")]

        def wait_from_now():
            return timer_clear.eq(1)

        def access(kind, adr, wdata=0, length=1, first_be=0xf):
            return [acc.valid.eq(1), acc.kind.eq(kind), acc.adr.eq(adr), acc.wdata.eq(wdata),
                acc.length.eq(length), acc.first_be.eq(first_be)]

        def ok_then(*body, error="PCIE"):
            """On the access's completion: ``body`` when successful, else the failure."""
            return If(acc.done,
                If(acc.status != REQ_OK,
                    *fail(error, acc.status)
                ).Else(*body)
            )

        def state(name, step, *body):
            steps[name] = step
            fsm.act(name, *body)

        cfg = lambda reg: (1 << 20) | reg        # ECAM address of 01:00.0 (the device on the link).
        reg = lambda off: bar0 + off
        lo  = acc.rdata[:32]


        fsm.act("RESET", goto("QUIESCE") if autostart else goto("IDLE"))
        state("IDLE", "IDLE")
        state("QUIESCE", "QUIESCE",
            # Commands of an earlier run complete first (bounded by the command timeout), and the
            # request of an interrupted step.
            If(((engine.outstanding == 0) | (elapsed >= self.timeout_ms)) & acc.idle,
                NextValue(engine_en, 0),
                NextValue(perst, 0),
                NextValue(self.code, 0), NextValue(self.detail, 0),
                NextValue(self.runs, self.runs + 1),
                wait_from_now(),
                goto("WAIT-LINK")
            )
        )
        state("WAIT-LINK", "LINK",
            If(phy.link_up,
                goto("READ-ID")
            ).Elif(elapsed >= self.link_timeout_ms,
                *fail("LINK-DOWN", phy.ltssm)
            )
        )

        # Enumeration (pcie_enumerate) -------------------------------------------------------------
        state("READ-ID", "ID",
            access(REQ_CFGRD, cfg(PCI_VENDOR_ID)),
            If(acc.done,
                If((acc.status != REQ_OK) | (lo[:16] == 0xffff) | (lo == 0),
                    *fail("NO-DEVICE", acc.status)
                ).Else(
                    NextValue(self.vendor_device, lo),
                    goto("READ-CLASS")
                )
            )
        )
        state("READ-CLASS", "CLASS",
            access(REQ_CFGRD, cfg(PCI_CLASS)),
            ok_then(
                If(lo[8:] != CLASS_NVME,
                    *fail("NOT-NVME", lo[8:])
                ).Else(
                    goto("READ-COMMAND")
                )
            )
        )
        # BAR0 sizing with decoding off (the Command register only: Status bits are write-1-to-clear).
        state("READ-COMMAND", "BAR",
            access(REQ_CFGRD, cfg(PCI_COMMAND)),
            ok_then(NextValue(cmd, lo[:16]), goto("DECODE-OFF"))
        )
        state("DECODE-OFF", "BAR",
            access(REQ_CFGWR, cfg(PCI_COMMAND), cmd & 0xfff8, first_be=0b0011),
            ok_then(goto("READ-BAR"))
        )
        state("READ-BAR", "BAR",
            access(REQ_CFGRD, cfg(PCI_BAR0)),
            ok_then(NextValue(bar_lo, lo), NextValue(bar64, lo[1:3] == 2), goto("SIZE-BAR"))
        )
        state("SIZE-BAR", "BAR",
            access(REQ_CFGWR, cfg(PCI_BAR0), 0xffffffff),
            ok_then(goto("READ-BAR-SIZE"))
        )
        state("READ-BAR-SIZE", "BAR",
            access(REQ_CFGRD, cfg(PCI_BAR0)),
            ok_then(NextValue(size_lo, lo), If(bar64, goto("SIZE-BAR-HI")).Else(goto("CHECK-BAR")))
        )
        state("SIZE-BAR-HI", "BAR",
            access(REQ_CFGWR, cfg(PCI_BAR1), 0xffffffff),
            ok_then(goto("READ-BAR-SIZE-HI"))
        )
        state("READ-BAR-SIZE-HI", "BAR",
            access(REQ_CFGRD, cfg(PCI_BAR1)),
            ok_then(If(lo != 0xffffffff, *fail("BAR", size_lo)).Else(goto("CHECK-BAR")))
        )
        # A memory BAR of 16 B .. bar_size: the size mask has every bit from log2(bar_size) up.
        state("CHECK-BAR", "BAR",
            If(bar_lo[0] | (size_lo[log2_int(bar_size):] != 2**(32 - log2_int(bar_size)) - 1) |
               (size_lo[4:] == 0),
                *fail("BAR", size_lo)
            ).Else(
                goto("ASSIGN-BAR")
            )
        )
        state("ASSIGN-BAR", "BAR",
            access(REQ_CFGWR, cfg(PCI_BAR0), bar0 | bar_lo[:4]),
            ok_then(If(bar64, goto("ASSIGN-BAR-HI")).Else(goto("READ-CAP-PTR")))
        )
        state("ASSIGN-BAR-HI", "BAR",
            access(REQ_CFGWR, cfg(PCI_BAR1), 0),
            ok_then(goto("READ-CAP-PTR"))
        )
        # PCI Express capability: DevCtl MPS = min(DevCap, root port), MRRS (no capability: 128 B).
        state("READ-CAP-PTR", "CAPS",
            access(REQ_CFGRD, cfg(PCI_CAPABILITIES)),
            ok_then(NextValue(cap_ptr, lo[2:8] << 2), NextValue(hops, 0), NextValue(self.mps_log2, 7),
                goto("READ-CAP"))
        )
        state("READ-CAP", "CAPS",
            If((cap_ptr == 0) | (hops == 48),
                goto("WRITE-COMMAND")
            ).Else(
                access(REQ_CFGRD, cfg(0) | cap_ptr),
                ok_then(
                    NextValue(hops, hops + 1),
                    If(lo[:8] == PCI_CAP_ID_EXP,
                        NextValue(pcie_cap, cap_ptr),
                        goto("READ-DEVCAP")
                    ).Else(
                        NextValue(cap_ptr, lo[10:16] << 2)
                    )
                )
            )
        )
        state("READ-DEVCAP", "CAPS",
            access(REQ_CFGRD, cfg(0) | (pcie_cap + PCI_EXP_DEVCAP)),
            ok_then(NextValue(devcap, Mux(lo[:3] < root_mps_code, lo[:3], root_mps_code)),
                goto("READ-DEVCTL"))
        )
        state("READ-DEVCTL", "CAPS",
            access(REQ_CFGRD, cfg(0) | (pcie_cap + PCI_EXP_DEVCTL)),
            ok_then(NextValue(devctl, lo[:16]), goto("WRITE-DEVCTL"))
        )
        state("WRITE-DEVCTL", "CAPS",
            access(REQ_CFGWR, cfg(0) | (pcie_cap + PCI_EXP_DEVCTL),
                Cat(devctl[:5], devcap, devctl[8:12], Constant(log2_int(DEVCTL_MRRS) - 7, 3), devctl[15]),
                first_be=0b0011),
            ok_then(NextValue(self.mps_log2, devcap + 7), goto("WRITE-COMMAND"))
        )
        # Memory space, bus master, INTx off; the completer serves the device's DMA.
        state("WRITE-COMMAND", "COMMAND",
            access(REQ_CFGWR, cfg(PCI_COMMAND), (cmd & (0xffff & ~(0x7 | PCI_COMMAND_INTX_OFF))) |
                PCI_COMMAND_MEMORY | PCI_COMMAND_MASTER | PCI_COMMAND_INTX_OFF, first_be=0b0011),
            ok_then(NextValue(dma, 1), goto("READ-NVME-CAP"))
        )

        # NVMe controller (nvme_init) --------------------------------------------------------------
        state("READ-NVME-CAP", "CAP",
            access(REQ_MRD, reg(NVME_REG_CAP), length=2),
            ok_then(NextValue(cap, acc.rdata), goto("CHECK-NVME-CAP"))
        )
        to_ms = Signal(17)
        self.comb += to_ms.eq((cap[24:32] << 9) - (cap[24:32] << 3) - (cap[24:32] << 2))  # x 500
        state("CHECK-NVME-CAP", "CAP",
            NextValue(dstrd, cap[32:36]),
            NextValue(rdy_ms, Mux(to_ms < self.timeout_ms, to_ms, self.timeout_ms)),
            NextValue(self.qsize, Mux(cap[:16] < entries - 1, cap[:16] + 1, entries)),
            If(cap[:32] == 0xffffffff,
                *fail("PCIE", 0xffff)
            ).Elif(cap[48:52] != 0,
                *fail("UNSUPPORTED", cap[48:52])
            ).Else(
                goto("READ-CC")
            )
        )
        # Disable: a normal shutdown first when enabled and not in fatal status (as the BIOS).
        state("READ-CC", "DISABLE",
            access(REQ_MRD, reg(NVME_REG_CC)),
            ok_then(NextValue(cc, lo), If(lo[0], goto("READ-CSTS-ENABLED")).Else(
                wait_from_now(), goto("WAIT-NOT-READY")))
        )
        state("READ-CSTS-ENABLED", "DISABLE",
            access(REQ_MRD, reg(NVME_REG_CSTS)),
            ok_then(If(lo[1], goto("WRITE-CC-DISABLE")).Else(goto("WRITE-CC-SHUTDOWN")))
        )
        state("WRITE-CC-SHUTDOWN", "DISABLE",
            access(REQ_MWR, reg(NVME_REG_CC), Cat(cc[:14], Constant(1, 2), cc[16:])),
            ok_then(wait_from_now(), goto("WAIT-SHUTDOWN"))
        )
        state("WAIT-SHUTDOWN", "DISABLE",
            access(REQ_MRD, reg(NVME_REG_CSTS)),
            ok_then(If((lo[2:4] == NVME_SHST_COMPLETE) | (elapsed >= rdy_ms), goto("WRITE-CC-DISABLE")))
        )
        state("WRITE-CC-DISABLE", "DISABLE",
            access(REQ_MWR, reg(NVME_REG_CC), Cat(Constant(0, 1), cc[1:14], Constant(0, 2), cc[16:])),
            ok_then(wait_from_now(), goto("WAIT-NOT-READY"))
        )
        state("WAIT-NOT-READY", "DISABLE",
            access(REQ_MRD, reg(NVME_REG_CSTS)),
            ok_then(
                NextValue(csts, lo),
                If(lo == 0xffffffff,
                    *fail("PCIE", 0xffff)
                ).Elif(~lo[0],
                    goto("WRITE-AQA")
                ).Elif(elapsed >= rdy_ms,
                    *fail("NOT-READY", lo)
                )
            )
        )
        # Admin queues in the admin window (64-bit registers as two dword writes, the lower first).
        admin_regs = [
            ("WRITE-AQA",    NVME_REG_AQA,     ((ADMIN_ENTRIES - 1) << 16) | (ADMIN_ENTRIES - 1)),
            ("WRITE-ASQ",    NVME_REG_ASQ,     admin_base + ADMIN_ASQ),
            ("WRITE-ASQ-HI", NVME_REG_ASQ + 4, 0),
            ("WRITE-ACQ",    NVME_REG_ACQ,     admin_base + ADMIN_ACQ),
            ("WRITE-ACQ-HI", NVME_REG_ACQ + 4, 0),
            ("WRITE-CC-ENABLE", NVME_REG_CC,   NVME_CC_ENABLE),
        ]
        for i, (name, off, value) in enumerate(admin_regs):
            last = i == len(admin_regs) - 1
            state(name, "ENABLE" if last else "ADMIN-QUEUES",
                access(REQ_MWR, reg(off), value),
                ok_then(*([wait_from_now(), goto("WAIT-READY")] if last else [goto(admin_regs[i + 1][0])]),
                    *([NextValue(sq_tail, 0), NextValue(adm.head, 0), NextValue(adm.phase, 1)] if i == 0 else []))
            )
        state("WAIT-READY", "ENABLE",
            access(REQ_MRD, reg(NVME_REG_CSTS)),
            ok_then(
                NextValue(csts, lo),
                If(lo == 0xffffffff,
                    *fail("PCIE", 0xffff)
                ).Elif(lo[1],
                    *fail("FATAL", lo)
                ).Elif(lo[0],
                    goto("IDENTIFY-CONTROLLER")
                ).Elif(elapsed >= rdy_ms,
                    *fail("NOT-READY", lo)
                )
            )
        )

        # Admin commands ---------------------------------------------------------------------------
        for i, (name, opcode, *_) in enumerate(commands):
            state(name, name,
                NextValue(adm.command, i),
                adm.clear.eq(opcode == ADMIN_IDENTIFY),
                NextState("ADMIN-SUBMIT")
            )
        state("CHECK-CONTROLLER", "IDENTIFY-CONTROLLER",
            NextValue(self.mdts, adm.mdts),
            # Commands up to MDTS and one PRP list page (NVME_MAX_TRANSFER).
            NextValue(self.xfer_log2, Mux((adm.mdts != 0) & (adm.mdts < log2_int(NVME_MAX_TRANSFER) - 12),
                adm.mdts + 12, log2_int(NVME_MAX_TRANSFER))),
            If((adm.sqes[:4] > 6) | (adm.sqes[4:] < 6),
                *fail("UNSUPPORTED", adm.sqes)
            ).Elif((adm.cqes[:4] > 4) | (adm.cqes[4:] < 4),
                *fail("UNSUPPORTED", adm.cqes)
            ).Else(
                goto("IDENTIFY-NS-LIST")
            )
        )
        state("CHECK-NS-LIST", "IDENTIFY-NS-LIST",
            NextValue(self.nsid, adm.b0[:32]),
            If(adm.b0[:32] == 0,
                *fail("UNSUPPORTED", 0)
            ).Else(
                goto("IDENTIFY-NAMESPACE")
            )
        )
        flbas = adm.flbas[:4]
        state("CHECK-NAMESPACE", "IDENTIFY-NAMESPACE",
            NextValue(self.lba_shift, NVME_LBA_SHIFT_MIN + Array(adm.lbaf_shift)[flbas]),
            If(~Array(adm.lbaf_ok[i] for i in range(ID_NS_LBAFS))[flbas],
                *fail("UNSUPPORTED", Cat(flbas, Constant(1, 1)))      # 0x10 | the LBA format.
            ).Elif(adm.b0 == 0,
                *fail("UNSUPPORTED", 0)
            ).Else(
                goto("SET-QUEUES")
            )
        )

        # One admin command: SQ tail doorbell, its completion (or the timeout), CQ head doorbell.
        fsm.act("ADMIN-SUBMIT",
            adm.arm.eq(1),
            access(REQ_MWR, reg(NVME_DOORBELLS), tail_next),
            ok_then(NextValue(sq_tail, tail_next), wait_from_now(), NextState("ADMIN-WAIT"))
        )
        fsm.act("ADMIN-WAIT",
            If(adm.cqe,
                NextValue(adm.head, adm.head + 1),
                If(adm.head == ADMIN_ENTRIES - 1, NextValue(adm.phase, ~adm.phase)),
                NextValue(adm.cid, adm.cid + 1),
                NextState("ADMIN-ACK")
            ).Elif(elapsed >= self.timeout_ms,
                *fail("ADMIN-TIMEOUT", adm.opcode)
            )
        )
        fsm.act("ADMIN-ACK",
            access(REQ_MWR, reg(NVME_DOORBELLS) + (4 << dstrd), adm.head),
            ok_then(
                If(adm.cqe_status != 0,
                    *fail("ADMIN-STATUS", adm.cqe_status)
                ).Else(
                    Case(adm.command, {i: goto(c[-1]) for i, c in enumerate(commands)})
                )
            )
        )

        # The queue engine -------------------------------------------------------------------------
        state("START-ENGINE", "ENGINE",
            NextValue(engine_en, 1),
            wait_from_now(),
            goto("WAIT-ENGINE")
        )
        state("WAIT-ENGINE", "ENGINE",
            If(engine.ready,
                goto("READY")
            ).Elif(elapsed >= self.timeout_ms,
                *fail("ENGINE")
            )
        )
        state("READY", "READY", self.ready.eq(1))
        fsm.act("FAILED", self.failed.eq(1))

        # The link must stay up from the first configuration request on (a link down resets the
        # device: its configuration is lost).
        for name in fsm.actions:
            if name not in ("RESET", "IDLE", "QUIESCE", "WAIT-LINK", "FAILED"):
                fsm.act(name, If(~phy.link_up, *fail("LINK-DOWN", phy.ltssm)))

        # Start (again): refused while held.
        self.comb += [
            self.busy.eq(~fsm.ongoing("IDLE") & ~fsm.ongoing("READY") & ~fsm.ongoing("FAILED")),
            self.refused.eq(self.start & self.hold),
        ]
        start_ok = Signal()
        self.comb += start_ok.eq(self.start & ~self.hold)
        for name in fsm.actions:
            fsm.act(name, If(start_ok, wait_from_now(), NextState("QUIESCE")))
        # The step of the state (the admin command states and FAILED keep the one before them).
        step_last = Signal(len(self.step))
        self.comb += [self.step.eq(step_last)] + [If(fsm.ongoing(name), self.step.eq(STEP[s]))
            for name, s in steps.items()]
        self.sync += step_last.eq(self.step)

    def add_csr(self):
        """Registers of the bring-up: control, status and what it learned (``bringup<port>``)."""
        self._control = CSRStorage(description="Bring-up control.", fields=[
            CSRField("start", size=1, pulse=True, description="Run the bring-up again (the port leaves the queue "
                "engine first: refused while a recording or replay runs, see ``status.refused``)."),
        ])
        self._link_timeout_ms = CSRStorage(16, reset=LINK_TIMEOUT_MS_RESET,
            description="Link training timeout after PERST# release (ms).")
        self._timeout_ms = CSRStorage(16, reset=TIMEOUT_MS_RESET,
            description="Admin command timeout and bound of the CSTS.RDY waits, besides CAP.TO (ms).")
        self._status = CSRStatus(description="Bring-up status.", fields=[
            CSRField("ready",   size=1, offset=0, description="The port is up and handed to the queue engine."),
            CSRField("busy",    size=1, offset=1, description="The sequence is running."),
            CSRField("failed",  size=1, offset=2, description="The sequence stopped on an error (``code``, ``step``)."),
            CSRField("link_up", size=1, offset=3, description="The PCIe link is up now."),
            CSRField("refused", size=1, offset=4, description="The last ``start`` was refused (a recording or replay runs)."),
            CSRField("step",    size=5, offset=8, description="Step in progress, or the step that failed.",
                values=[(f"``{i}``", f"{name}: {desc}") for i, (name, desc) in enumerate(STEPS)]),
            CSRField("code",    size=4, offset=16, description="Error code.",
                values=[(f"``{i}``", f"{name}: {desc}") for i, (name, desc, _) in enumerate(ERRORS)]),
        ])
        self._detail = CSRStatus(32, description="Error detail: " +
            "; ".join(f"{name}: {d}" for name, _, d in ERRORS[1:]) + ".")
        refused = Signal()
        self.sync += If(self.start & ~self.hold, refused.eq(0)).Elif(self.refused, refused.eq(1))
        f = self._status.fields
        self.comb += [
            self.start.eq(self._control.fields.start),
            self.link_timeout_ms.eq(self._link_timeout_ms.storage),
            self.timeout_ms.eq(self._timeout_ms.storage),
            f.ready.eq(self.ready), f.busy.eq(self.busy), f.failed.eq(self.failed),
            f.link_up.eq(self.link_up), f.refused.eq(refused), f.step.eq(self.step), f.code.eq(self.code),
            self._detail.status.eq(self.detail),
        ]
        for name, sig, desc in [
            ("vendor_device", self.vendor_device, "PCI Vendor ID (15:0) and Device ID (31:16)."),
            ("nsid",      self.nsid,      "Namespace of the queue engine (the first active one)."),
            ("nsze",      self.nsze,      "Namespace size (LBAs)."),
            ("lba_shift", self.lba_shift, "log2 of the LBA size (9: 512 B .. 12: 4 KiB)."),
            ("mdts",      self.mdts,      "Identify Controller MDTS (2^MDTS pages per command; 0: no limit)."),
            ("xfer_log2", self.xfer_log2, "Largest transfer of one command (log2 bytes): MDTS, at most one PRP list page."),
            ("qsize",     self.qsize,     "Entries of the I/O queue pair (min(CAP.MQES + 1, the engine's))."),
            ("mps_log2",  self.mps_log2,  "log2 of the Max Payload Size programmed in the device."),
            ("runs",      self.runs,      "Bring-up sequences started since reset."),
        ]:
            csr = CSRStatus(len(sig), name=name, description=desc)
            setattr(self, "_" + name, csr)
            self.comb += csr.status.eq(sig)
