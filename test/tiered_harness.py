#
# This file is part of LiteRecorder.
#
# SPDX-License-Identifier: BSD-2-Clause

"""A RecorderCore with both tiers of its ring for Migen unit tests: 32-bit ring words, chunks of 4
words (16 bytes), ``onchip`` slots per port in staging banks, a DRAM ring of ``dram_slots``, LiteDRAM
ports backed by a Python dict, and NVMe ports that hold up to ``depth`` commands each and complete
them in a seeded random order (reading/writing the chunk's slot when they take the command)."""

import random

from migen import *
from migen.sim import passive

from literecorder.cores.recorder.common import *
from literecorder.cores.pcie.windows import CompleterWindow

CHUNK_WORDS = 4
DRAM_BUS    = 0x40000000
STAGING_BUS = 0xB0000000

class TieredHarness(Module):
    def __init__(self, n_ports=1, onchip=2, dram_slots=4, staging=True):
        from litedram.common import LiteDRAMNativePort
        from literecorder.cores.recorder.core import RecorderCore
        from literecorder.cores.recorder.ring import StagingBank
        self.wr = wr = LiteDRAMNativePort("write", address_width=16, data_width=32)
        self.rd = rd = LiteDRAMNativePort("read",  address_width=16, data_width=32)
        self.banks = None
        if staging:
            self.banks = [StagingBank(CompleterWindow(f"staging{i}", STAGING_BUS + i*0x1000000, 4096, 32,
                on_chip=True), 32) for i in range(n_ports)]
            self.submodules += self.banks
        self.submodules.rec = rec = RecorderCore(wr, rd, n_ports=n_ports, slots=max(dram_slots, 2),
            staging=self.banks, staging_slots=onchip if staging else 0, ring_word=0, ring_bus=DRAM_BUS)
        self.n_ports = n_ports
        self.comb += [
            rec.end_on_last.eq(1),
            rec.ring_slots.eq(dram_slots),
            rec.chunk_log2.eq(log2_int(4*CHUNK_WORDS)), rec.chunk_blocks.eq(1),
            rec.first_lba.eq(0), rec.start_lba.eq(0), rec.nsze.eq(1 << 20),
            rec.port_mask.eq(2**n_ports - 1), rec.max_inflight.eq(64),
        ]
        if staging:
            self.comb += rec.onchip_slots.eq(onchip)

def dram_model(h, store):
    """LiteDRAM ports: writes into ``store`` (word address -> data), reads from it (latency 2)."""
    @passive
    def writer():
        wr = h.wr
        adrs = []
        yield wr.cmd.ready.eq(1)
        yield wr.wdata.ready.eq(1)
        while True:
            if (yield wr.cmd.valid):
                adrs.append((yield wr.cmd.addr))
            if (yield wr.wdata.valid):
                store[adrs.pop(0)] = (yield wr.wdata.data)
            yield
    @passive
    def reader():
        rd = h.rd
        pend = []
        yield rd.cmd.ready.eq(1)
        while True:
            if (yield rd.cmd.valid):
                pend.append((yield rd.cmd.addr))
            if pend and len(pend) > 1:
                yield rd.rdata.valid.eq(1)
                yield rd.rdata.data.eq(store.get(pend.pop(0), 0))
            else:
                yield rd.rdata.valid.eq(0)
            yield
    return [writer(), reader()]

def nvme_model(h, port, seed, disk, log, depth=4, p_complete=0.2, stall=None):
    """NVMe port ``port``: takes up to ``depth`` commands, completes a random one with probability
    ``p_complete`` per cycle (none while ``stall(cycle)``). A Write copies its slot's words to
    ``disk[(port, lba)]`` when taken; a Read writes ``disk``'s words into its slot when it completes."""
    rng = random.Random(seed)
    rec = h.rec
    req, cpl = rec.req[port], rec.cpl[port]
    def slot_words(adr):
        if adr >= STAGING_BUS:
            b = (adr - STAGING_BUS) >> 24
            return ("oc", b, ((adr - STAGING_BUS) & 0xffffff)//4)
        return ("dram", None, (adr - DRAM_BUS)//4)
    @passive
    def gen():
        held = []
        cycle = 0
        out = None            # The completion being offered.
        while True:
            yield req.ready.eq(len(held) < depth)
            yield
            cycle += 1
            if out is not None and (yield cpl.ready):
                out = None    # Taken at this edge.
            if (yield req.valid) and (yield req.ready):
                op, lba, adr, cid = (yield req.op), (yield req.lba), (yield req.adr), (yield req.id)
                kind, b, w = slot_words(adr)
                if op == 1:   # Write: the data is in its slot now.
                    if kind == "oc":
                        words = []
                        for i in range(CHUNK_WORDS):
                            words.append((yield h.banks[b].mem[w + i]))
                    else:
                        words = [h.dram.get(w + i, 0) for i in range(CHUNK_WORDS)]
                    disk[(port, lba)] = words
                held.append((op, lba, kind, b, w, cid))
                log.append(("req", cycle, port, lba, kind))
            if out is None:
                yield cpl.valid.eq(0)
                if held and not (stall and stall(cycle)) and rng.random() < p_complete:
                    op, lba, kind, b, w, cid = out = held.pop(rng.randrange(len(held)))
                    if op == 0:   # Read: the data lands in its slot before the completion.
                        for i, v in enumerate(disk.get((port, lba), [0]*CHUNK_WORDS)):
                            if kind == "oc":
                                yield h.banks[b].mem[w + i].eq(v)
                            else:
                                h.dram[w + i] = v
                    yield cpl.valid.eq(1)
                    yield cpl.id.eq(cid)
                    yield cpl.op.eq(op)
                    yield cpl.lba.eq(lba)
                    yield cpl.final.eq(1)
                    yield cpl.status.eq(0)
                    log.append(("cpl", cycle, port, lba, kind))
    return gen()
