#
# This file is part of LiteRecorder.
#
# SPDX-License-Identifier: BSD-2-Clause

"""The recorder's test pattern (rec_fill / rec_check, DRAMPatternEngine) in Python, to check data
outside the SoC (namespace files, disk images)."""

import struct

from literecorder.cores.recorder.pattern import pattern_word_py as pattern_word

def pattern_bytes(seed, nbytes, first_word=0):
    n = nbytes//4
    return struct.pack(f"<{n}I", *(pattern_word(seed, first_word + i) for i in range(n)))
