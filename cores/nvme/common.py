#
# This file is part of LiteRecorder.
#
# SPDX-License-Identifier: BSD-2-Clause

"""NVMe definitions shared by the queue engine, its generators and the tests."""

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
