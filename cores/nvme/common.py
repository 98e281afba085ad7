#
# This file is part of LiteRecorder.
#
# SPDX-License-Identifier: BSD-2-Clause

"""NVMe definitions shared by the queue engine, its generators and the tests.

The constants below are defined once here and exported to the BIOS (``soc.recorder.add_nvme_port``
adds them as ``NVME_*`` constants of the generated headers).
"""

# Engine constants ---------------------------------------------------------------------------------

NVME_PAGE_SIZE       = 4096      # Memory page size (CC.MPS = 0) of the PRP entries.
NVME_SQE_BYTES       = 64
NVME_CQE_BYTES       = 16
# Windows of an engine's queues, from its base bus address (SQ, CQ, synthesized PRP lists).
NVME_SQ_OFFSET       = 0x000000
NVME_CQ_OFFSET       = 0x100000
NVME_PRP_OFFSET      = 0x200000
NVME_WINDOWS_SPAN    = 0x1000000 # Bus address space of one engine's windows.
# Largest data transfer of one command: one PRP list page (512 entries of 4 KiB pages).
NVME_MAX_TRANSFER    = (NVME_PAGE_SIZE//8)*NVME_PAGE_SIZE
# Blocks of one Dataset Management range / Write Zeroes command (16-bit 0's based NLB).
NVME_DSM_MAX_BLOCKS  = 65536
# SQ tail doorbell: rung when the submitter pauses, or after this many new entries.
NVME_SQ_DOORBELL_BATCH = 16
# ... but while the drive already holds at least NVME_SQ_DOORBELL_HOLD_MIN announced commands, a pause
# rings it only once NVME_SQ_DOORBELL_HOLD new entries wait (the drive fetches them in one read: one
# completion TLP, one doorbell write, instead of one each), or once the oldest of them waited
# NVME_SQ_DOORBELL_HOLD_CYCLES (the last entries of a burst).
NVME_SQ_DOORBELL_HOLD        = 4
NVME_SQ_DOORBELL_HOLD_MIN    = 16
NVME_SQ_DOORBELL_HOLD_CYCLES = 1024
# Status reported by the engine for a command without completion (not an NVMe status).
NVME_STATUS_TIMEOUT  = 0x7fff

# LBA sizes the engine supports: 512 B .. 4 KiB (log2 9..12).
NVME_LBA_SHIFT_MIN   = 9
NVME_LBA_SHIFT_MAX   = 12

def lba_bytes(m, blocks, lba_shift, width):
    """Signal of ``blocks << lba_shift`` for the supported LBA sizes (``lba_shift`` 9..12: one of
    four constant shifts, not a variable shift). Statements are added to ``m``'s comb."""
    from migen import Signal, Case
    r = Signal(width)
    m.comb += Case(lba_shift[:2], {(s & 3): r.eq(blocks << s)
        for s in range(NVME_LBA_SHIFT_MIN, NVME_LBA_SHIFT_MAX + 1)})
    return r

# Opcodes ------------------------------------------------------------------------------------------

NVM_FLUSH        = 0x00
NVM_WRITE        = 0x01
NVM_READ         = 0x02
NVM_WRITE_ZEROES = 0x08
NVM_DSM          = 0x09

# Block request operations (engine request stream ``op`` field).
OP_READ         = 0
OP_WRITE        = 1
OP_FLUSH        = 2
OP_DEALLOCATE   = 3
OP_WRITE_ZEROES = 4

OP_TO_OPCODE = {
    OP_READ:         NVM_READ,
    OP_WRITE:        NVM_WRITE,
    OP_FLUSH:        NVM_FLUSH,
    OP_DEALLOCATE:   NVM_DSM,
    OP_WRITE_ZEROES: NVM_WRITE_ZEROES,
}

# Layouts ------------------------------------------------------------------------------------------

def request_layout():
    """A block request: ``blocks`` logical blocks from ``lba``; data at bus address ``adr``
    (read/write). ``id`` is returned with the completions of its commands."""
    return [
        ("op",      3),
        ("lba",    64),
        ("blocks", 32),
        ("adr",    32),
        ("id",     16),
    ]

def completion_layout():
    """One completed NVMe command (a request larger than MDTS gives several)."""
    return [
        ("id",      16),
        ("cid",     16),
        ("op",       3),
        ("lba",     64),
        ("blocks",  17),
        ("status",  15),   # CQE status field: SCT 10:8, SC 7:0, DNR 14, M 13, CRD 12:11.
        ("latency", 32),   # sys_clk cycles from submission (SQE written) to CQE seen.
        ("final",    1),   # Last command of its request.
    ]
