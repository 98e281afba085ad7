#
# This file is part of LiteRecorder.
#
# SPDX-License-Identifier: BSD-2-Clause

"""literec verify DEV... --id N: checks a test-pattern recording word by word against the
recorder's pattern (its seed is in the catalog) and reports the errors by data offset. Data whose
place in the input stream the drop log does not give (the log overflowed) are not checked: said,
exit status 4 when the rest has no error."""

import sys

import numpy as np

from literecorder.host import common, recording as rd, catalog as cat
from literecorder.host.cli import EXIT_OK, EXIT_DATA, EXIT_USAGE, EXIT_UNCHECKED

NAME = "verify"
HELP = "check a test-pattern recording, errors by offset"

def add_arguments(p):
    common.add_drive_arguments(p)
    common.add_id_argument(p)
    p.add_argument("--seed", type=common.int_range(0, 0xffffffff, "pattern seed"), default=None,
        help="pattern seed, 0..4294967295 (default: the one in the catalog)")
    p.add_argument("--max-report", type=common.int_range(0, None, "error ranges to print"), default=10,
        metavar="N", help="error ranges to print, 0 or more (default 10)")
    p.add_argument("--partial", action="store_true",
        help="accept a set with drives missing as long as the recording's own drives are given")
    g = p.add_mutually_exclusive_group()
    g.add_argument("--progress", dest="progress", action="store_true", default=None)
    g.add_argument("--no-progress", dest="progress", action="store_false")

def run(args):
    dset = common.open_set(args, partial=args.partial)
    common.warn(dset)
    e = dset.find(args.id)
    dset.require_members(e)
    if e.source != 0:
        print(f"literec verify: error: recording {e.id} is a {e.source_name} stream: only test-pattern "
            "recordings (source pattern) can be verified", file=sys.stderr)
        return EXIT_USAGE
    seed = e.seed if args.seed is None else args.seed
    to_input = rd.input_offset_map(e)
    # Data whose place in the input stream is unknown (drop log overflowed) cannot be checked.
    start, end = e.valid_range
    placed = rd.placed_end(e)
    check_end = end if placed is None else max(start, min(end, placed))
    check_end -= (check_end - start) % 4
    prog = rd.Progress(check_end - start, f"recording {e.id}", enabled=args.progress)
    errors, words, first, ranges = 0, 0, None, []
    for kind, d, item in rd.pieces(dset, e, "skip"):
        if kind == "gap":
            continue
        if d >= check_end:
            break
        item = item[:check_end - d]
        if d % 4 or len(item) % 4:
            print(f"literec verify: error: data at offset {d} ({len(item)} bytes) is not in whole 32-bit words",
                file=sys.stderr)
            return EXIT_USAGE
        got  = np.frombuffer(item, dtype="<u4")
        want = rd.pattern_words(seed, to_input(d)//4, len(got))
        bad  = np.flatnonzero(got != want)
        words += len(got)
        if len(bad):
            errors += len(bad)
            if first is None:
                first = d + 4*int(bad[0])
            # Ranges of consecutive bad words.
            splits = np.flatnonzero(np.diff(bad) != 1) + 1
            for run in np.split(bad, splits):
                if ranges and ranges[-1][1] == d + 4*int(run[0]):
                    ranges[-1][1] = d + 4*int(run[-1]) + 4
                    ranges[-1][2] += len(run)
                else:
                    ranges.append([d + 4*int(run[0]), d + 4*int(run[-1]) + 4, len(run)])
        prog.update(len(item))
    prog.close()
    unchecked = end - check_end
    print(f"recording {e.id}: " + (f"{check_end - start} of " if unchecked else "") + f"{e.length} bytes "
        f"checked against the test pattern (seed {seed}): {errors} word error(s)"
        + (f", first at data offset {first}" if errors else ""))
    for lo, hi, n in ranges[:args.max_report]:
        print(f"  data offset {lo}..{hi - 1}: {n} word(s) differ")
    if len(ranges) > args.max_report:
        print(f"  ... {len(ranges) - args.max_report} more range(s)")
    if unchecked:
        print(f"  data offsets {check_end}..{end - 1} ({unchecked} bytes) not checked: the drop log "
            f"overflowed ({e.drops_total} drops, {len(e.drops)} logged), the input-stream place of the "
            f"data from the last logged drop (data offset {placed}) on is unknown")
    print(f"RESULT name=verify id={e.id} bytes={e.length} words={words} errors={errors} "
        f"first_error={first if errors else -1} seed={seed} unchecked={unchecked}")
    return EXIT_DATA if errors else EXIT_UNCHECKED if unchecked else EXIT_OK
