#
# This file is part of LiteRecorder.
#
# SPDX-License-Identifier: BSD-2-Clause

"""The recorder's test pattern (rec_fill / rec_check, DRAMPatternEngine) in Python, to check data
outside the SoC (namespace files, disk images)."""

import struct

from literecorder.cores.recorder.frontend.pattern import pattern_word_py as pattern_word

def pattern_bytes(seed, nbytes, first_word=0):
    """``nbytes`` (a multiple of 4) of the pattern from word ``first_word`` (vectorized)."""
    import numpy as np
    n = nbytes//4
    x = (np.arange(first_word, first_word + n, dtype=np.uint64) + seed).astype(np.uint32)
    for _ in range(2):
        x ^= x << np.uint32(13)
        x ^= x >> np.uint32(17)
        x ^= x << np.uint32(5)
    return x.astype("<u4").tobytes()

def pattern_slow(seed, nbytes, first_word=0):
    n = nbytes//4
    return struct.pack(f"<{n}I", *(pattern_word(seed, first_word + i) for i in range(n)))

def kept_stream(seed, total, drops):
    """The bytes a recording keeps of the pattern stream ``0 .. total-1`` when the byte ranges
    ``drops`` [(position, length), ...] (the drop log) were dropped."""
    out, pos = [], 0
    for p, n in sorted(drops):
        assert p >= pos and p % 4 == 0 and n % 4 == 0
        out.append(pattern_bytes(seed, p - pos, pos//4))
        pos = p + n
    out.append(pattern_bytes(seed, total - pos, pos//4))
    return b"".join(out)
