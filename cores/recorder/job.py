#
# This file is part of LiteRecorder.
#
# SPDX-License-Identifier: BSD-2-Clause

"""Recording and replay by registers, without a CPU: the job of the CPU-less core (doc/core.md).

::

    job registers          +------------------ RecorderJob ------------------+
    (direction, first LBA, | start: refused while the recorder runs (BUSY),  |      RecorderCore
     bytes, chunk, ports,  |   the ports checked (up, one LBA size, chunk    |--> configuration
     flags, QD per port)   |   <= MDTS), then derived, held during the run:  |    (held), start,
    ---------------------->|   chunks, rows, last LBA, chunk blocks, the     |    stop, abort
    start / stop / abort   |   smallest namespace, ring and on-chip slots,   |
                           |   commands in flight                            |
    ports' bring-up ------>| (ready, namespace size, LBA size, MDTS)         |
                           +-------------------------------------------------+

What the BIOS's ``rec_job_check``/``configure`` (software/libliterec/record.c) compute from a
recording's few parameters is computed here in hardware, sequentially (a shifter, a divider by the
number of ports, an adder: about 130 cycles), from the parameters the user wrote and the bring-up of
each port (``NVMeBringUp``). The configuration the recorder runs with lives in this block's
registers, loaded only by an accepted start: writing the job registers during a run changes
nothing until the next start. The recorder checks the region against the namespace itself (its
status codes, ``REC_STATUS_*``).

Fixed-size recordings and replays (the recorder's ``MODE_FIXED``); the other modes (until stop,
ring with trigger, trim ahead) are the BIOS's.
"""

from functools import reduce
from operator import or_, add

from migen import *

from litex.gen import *

from litex.soc.interconnect.csr import *

from literecorder.cores.recorder.common import CHUNK_BITS, DIR_REPLAY, MODE_FIXED

# Verdicts of a start (``code``) -------------------------------------------------------------------

JOB_CODES = [
    ("OK",        "accepted: the recorder checks the region and runs (its ``status``)"),
    ("BUSY",      "refused: a recording or replay runs (or a start is being checked); nothing was changed"),
    ("PORTS",     "refused: no port selected"),
    ("NOT-READY", "refused: a selected port is not up (its bring-up: ``bringup<N>``)"),
    ("LBA-SIZE",  "refused: the selected ports have different LBA sizes (striping needs one)"),
    ("CHUNK",     "refused: the chunk is not 4 KiB .. 16 MiB, or above a selected port's largest transfer (MDTS)"),
    ("SIZE",      "refused: 0 bytes, or a recording that is not a whole number of chunks"),
]
JOB = {name: i for i, (name, _) in enumerate(JOB_CODES)}

CHUNK_LOG2_MIN = 12             # 4 KiB .. 16 MiB chunks (as the BIOS allows).
CHUNK_LOG2_MAX = 24
QD_PER_PORT_RESET = 32          # Chunk commands in flight per SSD (the BIOS's default).

# Recorder Job -------------------------------------------------------------------------------------

class RecorderJob(LiteXModule):
    """Register-driven jobs of a ``RecorderCore`` (see the module docstring).

    Parameters
    ----------
    rec : RecorderCore
        The recorder, whose registers are added with ``add_csr(control=False)``: this block drives
        its configuration and pulses (the hardware control port's ``hw_*`` inputs are ORed in, as
        ``add_csr`` does).
    ports : list
        One bring-up per NVMe port of the recorder (``NVMeBringUp``: ``ready``, ``nsze``,
        ``lba_shift``, ``xfer_log2``).
    dram_slots : int
        Chunks of the DRAM ring at most (``RecorderCore(slots=...)``).
    window_bytes : int
        The DRAM window the ring lives in (bytes): ring slots <= window / chunk.
    buffer_bytes : int
        The ring a job uses (bytes, the BIOS's ``RECORDER_BUFFER_DEFAULT``): ring slots =
        buffer / chunk, at least 2.
    staging_bytes, staging_slots : int
        On-chip slots per port (``add_recorder(staging=...)``): min(staging / chunk, staging_slots)
        are used; 0: none.
    """
    def __init__(self, rec, ports, dram_slots, window_bytes, buffer_bytes, staging_bytes=0, staging_slots=0):
        n = len(ports)
        if n != rec.n_ports:
            raise ValueError(f"RecorderJob: {n} port bring-ups for a recorder of {rec.n_ports} ports")
        if not (2 <= dram_slots and buffer_bytes >= 2 << CHUNK_LOG2_MIN):
            raise ValueError(f"RecorderJob: dram_slots={dram_slots}, buffer_bytes={buffer_bytes}: a ring of 2 "
                "chunks at least")
        # Job (set by registers).
        self.direction     = Signal()
        self.first_lba     = Signal(64)
        self.bytes         = Signal(64)
        self.chunk_log2    = Signal(5, reset=17)
        self.port_mask     = Signal(n, reset=1)
        self.qd            = Signal(16, reset=QD_PER_PORT_RESET)   # Per port.
        self.input_sel     = Signal(len(rec.input_sel))
        self.output_sel    = Signal(len(rec.output_sel))
        self.end_on_last   = Signal()
        self.drop          = Signal()
        self.flush_after   = Signal()
        self.flush_surplus = Signal()
        self.spill         = Signal()
        # Pulses.
        self.start = Signal()
        self.stop  = Signal()
        self.abort = Signal()
        # Verdict of the last start, refusals.
        self.checking = Signal()
        self.code     = Signal(max=len(JOB_CODES))
        self.refused  = Signal(32)
        self.accepted = Signal(32)

        # # #

        # The configuration the recorder runs with (loaded by an accepted start).
        direction, first_lba, mask = Signal(), Signal(64), Signal(n)
        chunk_log2, cb_log2 = Signal(5), Signal(5)
        flags = Signal(6)
        insel, outsel = Signal(len(self.input_sel)), Signal(len(self.output_sel))
        nsze, last_lba = Signal(64), Signal(64)
        chunks, rows = Signal(CHUNK_BITS), Signal(CHUNK_BITS)
        replay_bytes = Signal(64)
        inflight = Signal(16)
        qd = Signal(16)
        bytes_ = Signal(64)

        # The ports (combinational, small: n <= 8).
        ready   = Cat(*[p.ready for p in ports])
        shifts  = Array(p.lba_shift for p in ports)
        nszes   = Array(p.nsze for p in ports)
        first   = _lowest(self, self.port_mask, n)      # Lowest selected port.
        count   = Signal(4)                             # Selected ports.
        self.comb += count.eq(reduce(add, [self.port_mask[i] for i in range(n)]))
        shift0 = Signal(4)
        self.comb += shift0.eq(shifts[first])
        mismatch = Signal()
        too_big  = Signal()
        self.comb += [
            mismatch.eq(reduce(or_, [self.port_mask[i] & (ports[i].lba_shift != shift0) for i in range(n)])),
            too_big.eq(reduce(or_, [self.port_mask[i] & (self.chunk_log2 > ports[i].xfer_log2) for i in range(n)])),
        ]

        # Ring and on-chip slots of a chunk size: tables of the build's constants.
        ring_slots   = Signal(16)
        onchip_slots = Signal(5)
        def ring_of(k):
            return max(2, min(dram_slots, window_bytes >> k, buffer_bytes >> k))
        def onchip_of(k):
            return min(staging_slots, staging_bytes >> k) if staging_bytes else 0
        self.comb += Case(chunk_log2, {k: [ring_slots.eq(ring_of(k)), onchip_slots.eq(onchip_of(k))]
            for k in range(CHUNK_LOG2_MIN, CHUNK_LOG2_MAX + 1)})

        # Sequential arithmetic: bytes -> chunks (ceil), chunks -> rows (ceil, / ports), the last row.
        acc    = Signal(64)
        sticky = Signal()
        steps  = Signal(6)
        rem    = Signal(5)
        quo    = Signal(CHUNK_BITS)
        ports_n = Signal(4)

        # FSM --------------------------------------------------------------------------------------
        self.fsm = fsm = FSM(reset_state="IDLE")
        self.comb += self.checking.eq(~fsm.ongoing("IDLE"))
        def refuse(code):
            return [NextValue(self.code, JOB[code]), NextValue(self.refused, self.refused + 1), NextState("IDLE")]
        fsm.act("IDLE",
            If(self.start,
                If(rec.busy,
                    *refuse("BUSY")
                ).Else(
                    NextValue(direction, self.direction), NextValue(first_lba, self.first_lba),
                    NextValue(mask, self.port_mask), NextValue(chunk_log2, self.chunk_log2),
                    NextValue(cb_log2, self.chunk_log2 - shift0),
                    NextValue(flags, Cat(self.end_on_last, self.drop, self.flush_after, self.flush_surplus,
                        self.spill)),
                    NextValue(insel, self.input_sel), NextValue(outsel, self.output_sel),
                    NextValue(bytes_, self.bytes), NextValue(qd, self.qd), NextValue(ports_n, count),
                    If(self.port_mask == 0,
                        *refuse("PORTS")
                    ).Elif((self.port_mask & ~ready) != 0,
                        *refuse("NOT-READY")
                    ).Elif(mismatch,
                        *refuse("LBA-SIZE")
                    ).Elif((self.chunk_log2 < CHUNK_LOG2_MIN) | (self.chunk_log2 > CHUNK_LOG2_MAX) | too_big,
                        *refuse("CHUNK")
                    ).Elif(self.bytes == 0,
                        *refuse("SIZE")
                    ).Else(
                        NextValue(acc, self.bytes), NextValue(sticky, 0), NextValue(steps, self.chunk_log2),
                        NextValue(nsze, nszes[first]), NextValue(quo, 0),
                        NextState("CHUNKS")
                    )
                )
            )
        )
        # chunks = ceil(bytes / chunk): bytes shifted right chunk_log2 times, the bits out kept.
        fsm.act("CHUNKS",
            If(steps != 0,
                NextValue(acc, acc[1:]), NextValue(sticky, sticky | acc[0]), NextValue(steps, steps - 1)
            ).Elif(~direction & sticky,
                *refuse("SIZE")
            ).Else(
                NextValue(chunks, acc + sticky),
                NextValue(acc, acc + sticky),
                NextValue(rem, 0), NextValue(steps, CHUNK_BITS),
                NextState("ROWS")
            )
        )
        # rows = ceil(chunks / ports): restoring division, one quotient bit per cycle.
        trial = Signal(6)
        self.comb += trial.eq(Cat(acc[CHUNK_BITS - 1], rem) - ports_n)
        fsm.act("ROWS",
            If(steps != 0,
                NextValue(acc, acc[:CHUNK_BITS] << 1),
                If(trial[-1],                              # Borrow: the bit is 0.
                    NextValue(rem, Cat(acc[CHUNK_BITS - 1], rem)),
                    NextValue(quo, quo << 1),
                ).Else(
                    NextValue(rem, trial),
                    NextValue(quo, Cat(1, quo)),
                ),
                NextValue(steps, steps - 1),
            ).Else(
                NextValue(rows, quo + (rem != 0)),
                NextValue(acc, quo + (rem != 0) - 1),
                NextValue(steps, cb_log2),
                NextState("LAST-ROW")
            )
        )
        # last_lba = first_lba + (rows - 1) x chunk blocks; the smallest namespace of the ports.
        nsze_i = Signal(max=max(n, 2))
        fsm.act("LAST-ROW",
            If(steps != 0,
                NextValue(acc, acc << 1), NextValue(steps, steps - 1)
            ).Else(
                NextValue(last_lba, first_lba + acc),
                NextValue(nsze_i, 0),
                NextState("NAMESPACE")
            )
        )
        fsm.act("NAMESPACE",
            If(Array(mask[i] for i in range(n))[nsze_i],
                If(nszes[nsze_i] < nsze, NextValue(nsze, nszes[nsze_i]))
            ),
            NextValue(nsze_i, nsze_i + 1),
            If(nsze_i == n - 1,
                NextValue(replay_bytes, Mux(direction, bytes_, 0)),
                NextValue(inflight, qd*ports_n),
                NextState("START")
            )
        )
        rec_start = Signal()
        fsm.act("START",
            rec_start.eq(1),
            NextValue(self.code, JOB["OK"]),
            NextValue(self.accepted, self.accepted + 1),
            NextState("IDLE")
        )
        # A start while a start is being checked is refused too (the verdict stays that of the first).
        self.sync += If(self.start & ~fsm.ongoing("IDLE"), self.refused.eq(self.refused + 1))

        # The recorder -----------------------------------------------------------------------------
        self.comb += [
            rec.direction.eq(direction), rec.mode.eq(MODE_FIXED),
            rec.end_on_last.eq(flags[0]), rec.drop.eq(flags[1]), rec.flush_after.eq(flags[2]),
            rec.flush_surplus.eq(flags[3]), rec.spill.eq(flags[4]), rec.check_last.eq(0),
            rec.input_sel.eq(insel), rec.output_sel.eq(outsel),
            rec.ring_slots.eq(ring_slots), rec.onchip_slots.eq(onchip_slots),
            rec.chunk_log2.eq(chunk_log2), rec.chunk_blocks.eq(1 << cb_log2),
            rec.first_lba.eq(first_lba), rec.last_lba.eq(last_lba), rec.start_lba.eq(first_lba),
            rec.start_port.eq(_lowest(self, mask, n)),
            rec.nsze.eq(nsze), rec.chunks.eq(chunks), rec.replay_bytes.eq(replay_bytes),
            rec.post_bytes.eq(0), rec.trim_rows.eq(0), rec.port_mask.eq(mask), rec.max_inflight.eq(inflight),
            # Pulses, and the hardware control port's (as RecorderCore.add_csr ORs them).
            rec.start.eq(rec_start | (rec.hw_start & rec.armed)),
            rec.stop.eq(self.stop | rec.hw_stop),
            rec.abort.eq(self.abort | rec.hw_abort),
            rec.trigger.eq(rec.hw_trigger),
            rec.arm.eq(0), rec.disarm.eq(0),
        ]

    def add_csr(self):
        """Registers of the job (``job``): its parameters, the start/stop/abort pulses, the verdict."""
        self._config = CSRStorage(description="Job flags (read at ``start``).", fields=[
            CSRField("direction",     size=1, offset=0, values=[("0", "record"), ("1", "replay")], description="Direction."),
            CSRField("input_sel",     size=2, offset=4, description="Record input (as ``recorder`` ``input_sel``)."),
            CSRField("output_sel",    size=2, offset=6, description="Replay output."),
            CSRField("end_on_last",   size=1, offset=8, description="The input's ``last`` ends the recording (exact bytes)."),
            CSRField("drop",          size=1, offset=9, values=[("0", "lossless: back-pressure the input"),
                ("1", "drop whole ring words when full (counted, logged)")], description="Overflow policy."),
            CSRField("flush_after",   size=1, offset=10, description="NVMe Flush on every port after a recording."),
            CSRField("flush_surplus", size=1, offset=11, description="Discard (and count) input that arrives outside a recording."),
            CSRField("spill",         size=1, offset=12, description="Record: a chunk takes a DRAM slot when no on-chip slot is free."),
        ])
        f = self._config.fields
        self.comb += [
            self.direction.eq(f.direction), self.input_sel.eq(f.input_sel), self.output_sel.eq(f.output_sel),
            self.end_on_last.eq(f.end_on_last), self.drop.eq(f.drop), self.flush_after.eq(f.flush_after),
            self.flush_surplus.eq(f.flush_surplus), self.spill.eq(f.spill),
        ]
        for name, sig, desc in [
            ("first_lba",  self.first_lba,  "First LBA of the region on every port (a multiple of the chunk's LBAs)."),
            ("bytes",      self.bytes,      "Bytes to record (a whole number of chunks) or to replay."),
            ("chunk_log2", self.chunk_log2, f"Chunk: 2**chunk_log2 bytes, one NVMe command ({CHUNK_LOG2_MIN}..{CHUNK_LOG2_MAX}, at most a port's largest transfer)."),
            ("port_mask",  self.port_mask,  "NVMe ports of the stripe set (chunks in turn from the lowest)."),
            ("qd",         self.qd,         "Chunk commands in flight per port."),
        ]:
            csr = CSRStorage(len(sig), name=name, reset=sig.reset.value, description=desc)
            setattr(self, "_" + name, csr)
            self.comb += sig.eq(csr.storage)
        self._control = CSRStorage(description="Job commands.", fields=[
            CSRField("start", size=1, offset=0, pulse=True, description="Check the job and start it (refused while the recorder runs: ``code``)."),
            CSRField("stop",  size=1, offset=1, pulse=True, description="Record: close the input, pad the partly filled chunk, finish."),
            CSRField("abort", size=1, offset=2, pulse=True, description="Close the input, drop the partly filled chunk, finish."),
        ])
        self.comb += [
            self.start.eq(self._control.fields.start),
            self.stop.eq(self._control.fields.stop),
            self.abort.eq(self._control.fields.abort),
        ]
        self._status = CSRStatus(description="Verdict of the last ``start``.", fields=[
            CSRField("checking", size=1, offset=0, description="A start is being checked and derived (about 130 cycles)."),
            CSRField("code",     size=4, offset=8, description="Verdict.",
                values=[(f"``{i}``", f"{name}: {desc}") for i, (name, desc) in enumerate(JOB_CODES)]),
        ])
        self.comb += [self._status.fields.checking.eq(self.checking), self._status.fields.code.eq(self.code)]
        for name, sig, desc in [
            ("refused",  self.refused,  "Starts refused since reset."),
            ("accepted", self.accepted, "Starts accepted since reset."),
        ]:
            csr = CSRStatus(len(sig), name=name, description=desc)
            setattr(self, "_" + name, csr)
            self.comb += csr.status.eq(sig)

def _lowest(m, mask, n):
    """Index of the lowest bit set in ``mask`` (0 when none)."""
    idx = Signal(max=max(n, 2))
    m.comb += idx.eq(0)
    for i in reversed(range(n)):
        m.comb += If(mask[i], idx.eq(i))
    return idx
