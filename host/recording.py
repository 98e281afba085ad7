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
    """The recorder's test pattern (cores/recorder/frontend/pattern.py ``pattern_word_py``), vectorized:
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

def unknown_output_offset(e, gaps, gap_list):
    """Output byte offset from which the input-stream place of the file's bytes is unknown (the
    drop log overflowed: the unlogged drops came somewhere from ``placed_end`` on), or None when
    every byte of the file is placed."""
    placed = placed_end(e)
    if placed is None:
        return None
    start, end = e.valid_range
    if placed < start:
        return 0
    out = placed - start
    if gaps == "zero":
        out += sum(n for o, n, d in gap_list if d <= placed)
    return out if out < output_length(e, gaps) else None

def output_runs(e, gaps, gap_list):
    """The extracted file as runs of bytes contiguous in the input stream: [(output offset, input
    offset, exact)] in output order. A run starts at the file's start, after each gap kept out
    (``gaps`` skip; zero-filled gaps keep the file contiguous) and where the input-stream place
    becomes unknown (``unknown_output_offset``). An inexact run's input offset is the smallest
    it can be: the logged drops counted, the unlogged ones (somewhere before) not."""
    start, end = e.valid_range
    total = output_length(e, gaps)
    at = input_offset_map(e)
    first = start + sum(d.nbytes for d in e.drops if d.data_offset < start or
        (gaps == "skip" and d.data_offset == start))
    runs = [[0, first]]
    if gaps == "skip":
        runs += [[o, at(d)] for o, n, d in gap_list if 0 < o < total]
    unknown = unknown_output_offset(e, gaps, gap_list)
    if unknown is not None and all(o != unknown for o, _ in runs):
        o, i = [r for r in runs if r[0] < unknown][-1]
        runs.append([unknown, i + unknown - o])
        runs.sort()
    return [(o, i, unknown is None or o < unknown) for o, i in runs]

def input_time(e, ss, input_offset):
    """ISO 8601 time of input-stream byte ``input_offset`` (the recording's start plus the bytes
    before it at the sample rate, ``ss`` bytes a sample), or None when it is not known (no start
    time; no sample rate for a byte after the first; an invalid time)."""
    if not e.start_unix_us or (input_offset and not e.sample_rate):
        return None
    if not input_offset:
        return iso_utc(e.start_unix_us)
    unit = ss*e.sample_rate_mhz                # bytes x millihertz: offset*1e9/unit microseconds
    return iso_utc(e.start_unix_us + (input_offset*10**9*2 + unit)//(2*unit))

class SigMFOutOfFrame(Exception):
    """A file whose samples after a gap kept out would not be whole samples of the input."""

# The `literec` SigMF extension namespace (doc/literec.sigmf-ext.md).
SIGMF_EXTENSION = {"name": "literec", "version": "1.0.0", "optional": True}

def sigmf_meta(dset, e, gaps, gap_list, notes=None):
    """The SigMF metadata of the extracted recording (``gap_list`` as ``gap_list`` gives it),
    without the data file's hash: datatype, sample rate, a capture segment per run of samples
    contiguous in the input stream (``output_runs``: the start, each gap kept out, the place from
    which the time is unknown) with its global index, time and frequency; the drops, the ring
    trigger and the unknown time as annotations; the drop counts in the ``literec`` extension
    namespace. Checked against the SigMF schema (SigMFInvalid) before anything is written. What it
    leaves out, and why, is appended to ``notes``."""
    import jsonschema
    from sigmf import SigMFFile
    from sigmf.error import SigMFError
    notes = [] if notes is None else notes
    datatype = e.datatype or SIGMF_DEFAULT_DATATYPE
    ss = sample_size(datatype)
    total = output_length(e, gaps)
    nsamples = total//ss
    unplaced = max(e.bytes_dropped - e.logged_drop_bytes, 0)
    info = {
        "core:datatype": datatype,
        "core:recorder": "LiteRecorder",
        "core:description": e.text or f"LiteRecorder recording {e.id}" + (f" ({e.name})" if e.name else ""),
        "core:hw": ", ".join(f"{m.serial}" for m in dset.header.members),
        "core:extensions": [dict(SIGMF_EXTENSION)],
        "literec:recording_id": e.id,
        "literec:gaps": gaps,
        "literec:dropped_bytes": e.bytes_dropped,
        "literec:drop_events": e.drops_total,
        "literec:drop_events_logged": len(e.drops),
        "literec:unplaced_dropped_bytes": unplaced,
    }
    if e.sample_rate:
        info["core:sample_rate"] = e.sample_rate
    runs = output_runs(e, gaps, gap_list)
    for o, i, exact in runs:
        if gaps == "skip" and o % ss:
            raise SigMFOutOfFrame(f"the drop before output offset {o} leaves the samples after it out of "
                f"frame ({o} is not a multiple of the {ss}-byte {datatype} sample)")
    unknown = next((o//ss for o, i, exact in runs if not exact), None)
    if unknown is not None:
        info["literec:time_unknown_from"] = unknown
    meta = SigMFFile(global_info=info)
    segments = {}
    for o, i, exact in runs:
        first = o//ss                           # a run starting inside a sample: from that sample
        segments[first] = (i - (o - first*ss), exact)
    for k, (first, (i, exact)) in enumerate(sorted(segments.items())):
        capture = {}
        if i % ss == 0:
            capture["core:global_index"] = i//ss
        elif k == 0:
            notes.append(f"no core:global_index: sample 0 is input-stream byte {i}, not a multiple of the "
                f"{ss}-byte sample")
        t = input_time(e, ss, i) if exact else None
        if t:
            capture["core:datetime"] = t
        if not exact:
            capture["literec:time_unknown"] = True
        if k == 0 and e.start_unix_us and not t:
            start = iso_utc(e.start_unix_us) or f"invalid time ({e.start_unix_us} us since 1970-01-01)"
            if not exact:
                notes.append(f"no core:datetime: the drop log overflowed ({e.drops_total} drops, {len(e.drops)} "
                    f"logged) before the first byte of the file: its place in the input stream is unknown")
            elif i and not e.sample_rate:
                notes.append(f"no core:datetime: sample 0 is input-stream byte {i} and the recording has "
                    f"no sample rate (its start, {start}, is the time of byte 0)")
            else:
                notes.append(f"no core:datetime: the recording's start is an invalid time ({e.start_unix_us} "
                    "us since 1970-01-01)")
        if e.frequency:
            capture["core:frequency"] = e.frequency
        meta.add_capture(first, metadata=capture)
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
    if unknown is not None:
        meta.add_annotation(unknown, nsamples - unknown, metadata={"core:label": "time unknown",
            "core:comment": f"the drop log overflowed ({e.drops_total} drop events, {len(e.drops)} logged): "
                f"{unplaced} dropped bytes are not in it and were dropped somewhere from here on; the place "
                "in the input stream, and so the time, of the samples from here to the end is unknown (the "
                "core:global_index of the capture segment here is the smallest it can be)"})
    try:
        meta.validate()
    except jsonschema.ValidationError as err:
        where = " ".join(str(k) for k in err.absolute_path)
        raise SigMFInvalid((f"{where}: " if where else "") + err.message) from None
    except SigMFError as err:
        raise SigMFInvalid(str(err)) from None
    return meta
