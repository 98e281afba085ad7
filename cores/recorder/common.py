#
# This file is part of LiteRecorder.
#
# SPDX-License-Identifier: BSD-2-Clause

"""Recorder definitions shared by its layers, the SoC integration and the BIOS (exported constants).

Widths of the counters (all provably wide enough for 8 drives of 32 TB and a week at 100 GB/s):
bytes and cycles are 64-bit; chunk counters are 48-bit (a week at 100 GB/s in the smallest chunk,
4 KiB, is 1.5e13 chunks < 2**48 = 2.8e14); row counters are 48-bit for the same reason.
"""

from migen import *

# Counter widths -----------------------------------------------------------------------------------

BYTE_BITS  = 64     # Byte counters and sizes.
TIME_BITS  = 64     # Cycle counters.
CHUNK_BITS = 48     # Chunk counters (>= 4 KiB each).
GAP_BITS   = 48     # Bytes dropped in front of one ring word (a drop event).
ID_BITS    = 16     # Request id: DRAM slot and lap parity (a DRAM ring holds < 2**14 slots) ...
ONCHIP_ID  = 1 << 14  # ... or this bit and an on-chip slot's global id.
TRIM_BITS  = 16     # Trim-ahead distance in rows (the BIOS refuses more).

# Record modes, directions, statuses (exported to the BIOS as REC_*) -------------------------------

DIR_RECORD = 0
DIR_REPLAY = 1

MODE_FIXED      = 0     # Record `chunks` chunks, then end (COMPLETE).
MODE_UNTIL_STOP = 1     # Record until stopped, or the region is full (CAPACITY).
MODE_RING       = 2     # Record in the region as a ring (oldest data overwritten) until a trigger
                        # and `post` bytes after it (TRIGGERED), or stopped.

STATUS_NONE         = 0     # Never started / running.
STATUS_COMPLETE     = 1     # Fixed size reached (record) / everything replayed.
STATUS_STOPPED      = 2     # Ended by stop (the partly filled chunk padded with zeros).
STATUS_ABORTED      = 3     # Ended by abort (the partly filled chunk dropped).
STATUS_CAPACITY     = 4     # Until-stop: the region is full.
STATUS_TRIGGERED    = 5     # Ring: `post` bytes recorded after the trigger.
STATUS_INPUT_END    = 6     # The input's `last` ended the recording (exact byte count).
STATUS_ERR_RANGE    = 8     # Refused: the region exceeds the namespace, or the size the region.
STATUS_ERR_ORDER    = 9     # Refused: first address > last address.
STATUS_ERR_ALIGN    = 10    # Refused: an address is not a multiple of the chunk.
STATUS_ERR_CONFIG   = 11    # Refused: no port, chunk not a power of two, ring of < 2 slots ...
STATUS_ERR_DEVICE   = 12    # Stopped: a command failed (NVMe status in err_status).
STATUS_ERR_TIMEOUT  = 13    # Stopped: a command timed out (the queue engine's timeout scan).
STATUS_ERR_ENGINE   = 14    # Refused: a port's queue engine does not serve the recorder (CPU's).

# rec_wait without a timeout returns when nothing moved (input, commands, the arm) for this long
# (modeled ms): a recording waiting for a hardware start or an idle input cannot hang the console.
REC_WAIT_IDLE_MS = 1000

STATUS_NAMES = {
    STATUS_NONE:        "none",
    STATUS_COMPLETE:    "complete",
    STATUS_STOPPED:     "stopped",
    STATUS_ABORTED:     "aborted",
    STATUS_CAPACITY:    "capacity reached",
    STATUS_TRIGGERED:   "triggered",
    STATUS_INPUT_END:   "input ended",
    STATUS_ERR_RANGE:   "range beyond the region or the namespace",
    STATUS_ERR_ORDER:   "first address greater than last address",
    STATUS_ERR_ALIGN:   "address not aligned on the chunk",
    STATUS_ERR_CONFIG:  "invalid configuration",
    STATUS_ERR_DEVICE:  "device error",
    STATUS_ERR_TIMEOUT: "command timeout",
    STATUS_ERR_ENGINE:  "queue engine not given to the recorder",
}

def export_constants(soc):
    """The recorder's modes and status codes as BIOS constants (REC_MODE_*, REC_STATUS_*)."""
    for name, value in [
        ("REC_DIR_RECORD", DIR_RECORD), ("REC_DIR_REPLAY", DIR_REPLAY),
        ("REC_MODE_FIXED", MODE_FIXED), ("REC_MODE_UNTIL_STOP", MODE_UNTIL_STOP),
        ("REC_MODE_RING", MODE_RING),
        ("REC_STATUS_NONE", STATUS_NONE), ("REC_STATUS_COMPLETE", STATUS_COMPLETE),
        ("REC_STATUS_STOPPED", STATUS_STOPPED), ("REC_STATUS_ABORTED", STATUS_ABORTED),
        ("REC_STATUS_CAPACITY", STATUS_CAPACITY), ("REC_STATUS_TRIGGERED", STATUS_TRIGGERED),
        ("REC_STATUS_INPUT_END", STATUS_INPUT_END), ("REC_STATUS_ERR_RANGE", STATUS_ERR_RANGE),
        ("REC_STATUS_ERR_ORDER", STATUS_ERR_ORDER), ("REC_STATUS_ERR_ALIGN", STATUS_ERR_ALIGN),
        ("REC_STATUS_ERR_CONFIG", STATUS_ERR_CONFIG), ("REC_STATUS_ERR_DEVICE", STATUS_ERR_DEVICE),
        ("REC_STATUS_ERR_TIMEOUT", STATUS_ERR_TIMEOUT), ("REC_STATUS_ERR_ENGINE", STATUS_ERR_ENGINE),
        ("REC_ID_BITS", ID_BITS), ("REC_WAIT_IDLE_MS", REC_WAIT_IDLE_MS),
    ]:
        soc.add_constant(name, value)

# Layouts ------------------------------------------------------------------------------------------

def user_layout(data_width):
    """A user stream (record input / replay output): ``data`` and ``keep`` (one bit per byte;
    honoured on the final beat of a recording, whose ``last`` ends it at an exact byte count)."""
    return [("data", data_width), ("keep", max(data_width//8, 1))]

def word_layout(data_width):
    """A ring word (the LiteDRAM port width) between a stream port and the ring.

    ``bytes``: valid bytes (from bit 0; a full word has data_width/8, a final word fewer, a marker
    word 0); ``gap``: bytes the port dropped in front of this word (a drop event); ``keep_err``: a
    beat of the word had a ``keep`` that is not allowed (partial before the final beat, or not
    contiguous from byte 0). ``last``: the input ended with this word."""
    return [
        ("data",     data_width),
        ("bytes",    bits_for(data_width//8)),
        ("gap",      GAP_BITS),
        ("keep_err", 1),
    ]

# Helpers ------------------------------------------------------------------------------------------

def bit(sig, index):
    """Bit ``index`` (a signal) of ``sig``: a multiplexer of its bits."""
    return Array(sig[i] for i in range(len(sig)))[index]

def check_stream_width(name, width, ring_width):
    """A stream width must be a power of two from 8 bits to the ring word."""
    if not isinstance(width, int) or width < 8 or width & (width - 1) or width > ring_width:
        raise ValueError(f"{name}: data width {width} is not allowed: a power of two from 8 to "
            f"{ring_width} bits (the ring word, the LiteDRAM port width)")
