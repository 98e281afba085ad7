#
# This file is part of LiteRecorder.
#
# SPDX-License-Identifier: BSD-2-Clause

"""Reading a recording back from its drives: de-striping in time order (ring recordings from the
oldest valid byte), gaps from drops zero-filled or kept out, the test pattern to verify against,
and the SigMF metadata of an extracted file."""

import sys
import time
import datetime

import numpy as np

from literecorder.host import catalog as cat

# Pieces in time order -----------------------------------------------------------------------------

def pieces(dset, e, gaps="zero", max_piece=1 << 20):
    """Yields the recording as ("data", data offset, bytes) and ("gap", data offset, length)
    items in time order: the valid data from ``e.oldest`` to ``e.bytes_recorded`` with each logged
    drop (inside that range) as a gap before the data offset it precedes."""
    start, end = e.valid_range
    drops = sorted((d for d in e.drops if start <= d.data_offset <= end), key=lambda d: d.data_offset)
    di = 0
    d = start
    while d < end or (di < len(drops) and drops[di].data_offset == d):
        while di < len(drops) and drops[di].data_offset == d:
            yield "gap", d, drops[di].nbytes
            di += 1
        if d >= end:
            break
        stop = min(end, d + max_piece)
        if di < len(drops):
            stop = min(stop, drops[di].data_offset)
        buf = bytearray()
        for pos, off, _, n in cat.segments(e, d, stop):
            buf += dset.drive(pos).read(off, n)
        yield "data", d, bytes(buf)
        d = stop

def output_length(e, gaps):
    start, end = e.valid_range
    n = end - start
    if gaps == "zero":
        n += sum(d.nbytes for d in e.drops if start <= d.data_offset <= end)
    return n

# Progress -----------------------------------------------------------------------------------------

class Progress:
    """A one-line progress bar on stderr (only when it is a terminal, unless forced)."""
    def __init__(self, total, label, enabled=None, stream=None):
        self.total   = max(total, 1)
        self.label   = label
        self.stream  = stream or sys.stderr
        self.enabled = self.stream.isatty() if enabled is None else enabled
        self.done    = 0
        self.t0      = time.time()
        self.last    = 0.0

    def update(self, n):
        self.done += n
        now = time.time()
        if self.enabled and (now - self.last > 0.2 or self.done >= self.total):
            self.last = now
            frac = min(self.done/self.total, 1.0)
            bar  = "#"*int(frac*30)
            rate = self.done/max(now - self.t0, 1e-6)/1e6
            self.stream.write(f"\r{self.label} [{bar:<30}] {frac*100:5.1f}% {self.done/1e6:.1f} MB {rate:.0f} MB/s")
            self.stream.flush()

    def close(self):
        if self.enabled:
            self.stream.write("\n")
            self.stream.flush()

# Test pattern -------------------------------------------------------------------------------------

def pattern_words(seed, first_word, count):
    """The recorder's test pattern (cores/recorder/pattern.py ``pattern_word_py``), vectorized:
    32-bit word i = xs(xs(seed + i)), xs the xorshift32 step."""
    x = (np.arange(first_word, first_word + count, dtype=np.uint64) + seed) & 0xffffffff
    x = x.astype(np.uint32)
    for _ in range(2):
        x ^= x << np.uint32(13)
        x ^= x >> np.uint32(17)
        x ^= x << np.uint32(5)
    return x

def input_offset_map(e):
    """Function data offset -> input-stream offset (the drops logged before it added). Exact only
    below ``placed_end(e)``."""
    drops = sorted(e.drops, key=lambda d: d.data_offset)
    def f(d):
        return d + sum(x.nbytes for x in drops if x.data_offset <= d)
    return f

def placed_end(e):
    """The data offset from which the input-stream offsets of ``input_offset_map`` are unknown, or
    None when they are all exact (every drop event is in the log). The log holds the first events:
    once it overflowed (``drops_total`` above the events logged), the unlogged ones came at or after
    the last logged one, anywhere from its data offset on (from 0 when none is logged)."""
    if e.drops_total <= len(e.drops):
        return None
    return max((d.data_offset for d in e.drops), default=0)

# SigMF --------------------------------------------------------------------------------------------

SIGMF_DEFAULT_DATATYPE = "ru8"       # A recording without a datatype: bytes.

def sample_size(datatype):
    from sigmf.sigmffile import dtype_info
    return dtype_info(datatype)["sample_size"]

EPOCH = datetime.datetime(1970, 1, 1, tzinfo=datetime.timezone.utc)

def iso_utc(unix_us):
    """ISO 8601 UTC time of ``unix_us`` microseconds since 1970 (exact, no float), or None when it
    is not a time of years 1970-9999 (a corrupt or unset clock)."""
    try:
        t = EPOCH + datetime.timedelta(microseconds=unix_us)
    except OverflowError:
        return None
    return t.strftime("%Y-%m-%dT%H:%M:%S.%fZ")

class SigMFInvalid(Exception):
    """Metadata the SigMF schema refuses (the message says where and why)."""

def gap_list(e, gaps):
    """The gaps of ``pieces`` as extract writes them: [(output byte offset, bytes, data offset)]."""
    start, end = e.valid_range
    out, prev, res = 0, start, []
    for d in sorted((d for d in e.drops if start <= d.data_offset <= end), key=lambda d: d.data_offset):
        out += d.data_offset - prev
        prev = d.data_offset
        res.append((out, d.nbytes, d.data_offset))
        if gaps == "zero":
            out += d.nbytes
    return res

def output_start_input_offset(e, gaps):
    """Input-stream offset of the extracted file's first byte, or None when the drop log does not
    give it (it overflowed before). With ``gaps`` zero a drop at the oldest byte is zero-filled
    at the start of the file: the file starts where that drop starts."""
    start = e.oldest
    before = sum(d.nbytes for d in e.drops if d.data_offset < start or
        (gaps == "skip" and d.data_offset == start))
    placed = placed_end(e)
    if placed is not None and (start > placed or (gaps == "skip" and start == placed)):
        return None
    return start + before

def sigmf_meta(dset, e, gaps, gap_list, notes=None):
    """The SigMF metadata of the extracted recording (``gap_list`` as ``gap_list`` gives it),
    without the data file's hash: datatype, sample rate, capture start time and frequency, the
    drops and the ring trigger as annotations. Checked against the SigMF schema (SigMFInvalid)
    before anything is written. What it leaves out, and why, is appended to ``notes``."""
    import jsonschema
    from sigmf import SigMFFile
    from sigmf.error import SigMFError
    notes = [] if notes is None else notes
    datatype = e.datatype or SIGMF_DEFAULT_DATATYPE
    ss = sample_size(datatype)
    nsamples = output_length(e, gaps)//ss
    info = {
        "core:datatype": datatype,
        "core:recorder": "LiteRecorder",
        "core:description": e.text or f"LiteRecorder recording {e.id}" + (f" ({e.name})" if e.name else ""),
        "core:hw": ", ".join(f"{m.serial}" for m in dset.header.members),
    }
    if e.sample_rate:
        info["core:sample_rate"] = e.sample_rate
    meta = SigMFFile(global_info=info)
    capture = {}
    if e.start_unix_us:
        # core:datetime is the time of sample 0: the recording's start (the time of input-stream
        # byte 0) plus the input bytes before sample 0 (a ring's older laps, the drops before it)
        # at the sample rate.
        first = output_start_input_offset(e, gaps)
        start = iso_utc(e.start_unix_us) or f"invalid time ({e.start_unix_us} us since 1970-01-01)"
        if first is None:
            notes.append(f"no core:datetime: the drop log overflowed ({e.drops_total} drops, {len(e.drops)} "
                f"logged) before the first byte of the file: its place in the input stream is unknown")
        elif first and not e.sample_rate:
            notes.append(f"no core:datetime: sample 0 is input-stream byte {first} and the recording has "
                f"no sample rate (its start, {start}, is the time of byte 0)")
        else:
            unit = ss*e.sample_rate_mhz            # bytes x millihertz: first*1e9/unit microseconds
            t = iso_utc(e.start_unix_us + (first*10**9*2 + unit)//(2*unit)) if first else iso_utc(e.start_unix_us)
            if t:
                capture["core:datetime"] = t
            else:
                notes.append(f"no core:datetime: the recording's start is an invalid time ({e.start_unix_us} "
                    "us since 1970-01-01)")
    if e.frequency:
        capture["core:frequency"] = e.frequency
    meta.add_capture(0, metadata=capture)
    def annotate(out_off, count, label, comment, at_end):
        # Annotations stay inside the file: one that would start after the last sample (a drop
        # kept out or a trigger at the very end) is put on the last sample and says so.
        first = out_off//ss
        if first >= nsamples:
            first, count, comment = nsamples - 1, 1, at_end
        meta.add_annotation(first, count, metadata={"core:label": label, "core:comment": comment})
    for out_off, nbytes, data_off in gap_list:
        if gaps == "zero":
            annotate(out_off, max(-(-(out_off + nbytes)//ss) - out_off//ss, 1), "drop",
                f"{nbytes} bytes dropped by the recorder (zero-filled here), before data offset {data_off}", None)
        else:
            annotate(out_off, 1, "drop",
                f"{nbytes} bytes dropped by the recorder before this sample (not in the file)",
                f"{nbytes} bytes dropped by the recorder after this sample, the last one (at the end of the "
                "recording; not in the file)")
    if e.mode == cat.MODE_RING and e.trigger != cat.NO_TRIGGER and e.oldest <= e.trigger <= e.bytes_recorded:
        out = e.trigger - e.oldest
        if gaps == "zero":
            out += sum(n for o, n, d in gap_list if d <= e.trigger)
        annotate(out, 1, "trigger", f"ring trigger at data offset {e.trigger}",
            f"ring trigger at data offset {e.trigger}, after this sample, the last one (the end of the recording)")
    try:
        meta.validate()
    except jsonschema.ValidationError as err:
        where = " ".join(str(k) for k in err.absolute_path)
        raise SigMFInvalid((f"{where}: " if where else "") + err.message) from None
    except SigMFError as err:
        raise SigMFInvalid(str(err)) from None
    return meta
