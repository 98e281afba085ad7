#
# This file is part of LiteRecorder.
#
# SPDX-License-Identifier: BSD-2-Clause

"""literec extract DEV... --id N -o FILE [--sigmf] [--gaps zero|skip]: de-stripes a recording into
one file of its exact length (a ring recording in time order from its oldest valid byte)."""

import os
import sys
import stat

from literecorder.host import common, recording as rd, catalog as cat
from literecorder.host.drives import SetError
from literecorder.host.cli import EXIT_OK, EXIT_USAGE

NAME = "extract"
HELP = "de-stripe a recording into a file (optionally SigMF)"

def add_arguments(p):
    common.add_drive_arguments(p)
    common.add_id_argument(p)
    p.add_argument("-o", "--output", required=True, metavar="FILE",
        help="output file; with --sigmf the base name of FILE.sigmf-data and FILE.sigmf-meta")
    p.add_argument("--sigmf", action="store_true", help="write a SigMF recording (data + metadata)")
    p.add_argument("--gaps", choices=["zero", "skip"], default="zero",
        help="bytes dropped by the recorder: zero-filled at their place (default) or kept out")
    p.add_argument("--partial", action="store_true",
        help="accept a set with drives missing as long as the recording's own drives are given")
    g = p.add_mutually_exclusive_group()
    g.add_argument("--progress", dest="progress", action="store_true", default=None, help="always show the progress bar")
    g.add_argument("--no-progress", dest="progress", action="store_false", help="never show the progress bar")

def output_paths(args):
    if not args.sigmf:
        return args.output, None
    base = args.output
    for ext in (".sigmf-data", ".sigmf-meta"):
        if base.endswith(ext):
            base = base[:-len(ext)]
    return base + ".sigmf-data", base

def check_outputs(dset, paths):
    """Refuses an output that is one of the drives being read, or any block device: extract writes
    recordings to files, never to a drive."""
    for path in paths:
        try:
            st = os.stat(path)
        except FileNotFoundError:
            continue
        if stat.S_ISBLK(st.st_mode):
            raise SetError(f"output {path} is a block device: extract writes a recording to a file, "
                "never to a drive")
        for p in dset.present:
            d  = dset.drives[p]
            ds = os.fstat(d.fd)
            if (st.st_dev, st.st_ino) == (ds.st_dev, ds.st_ino):
                raise SetError(f"output {path} is {d.path}, a drive of the set being read: give "
                    "another file")

def run(args):
    dset = common.open_set(args, partial=args.partial)
    common.warn(dset)
    e = dset.find(args.id)
    dset.require_members(e)
    total = rd.output_length(e, args.gaps)
    if args.sigmf:
        datatype = e.datatype or rd.SIGMF_DEFAULT_DATATYPE
        try:
            ss = rd.sample_size(datatype)
        except Exception as err:
            print(f"literec extract: error: recording {e.id}: datatype '{datatype}' is not a SigMF datatype ({err})",
                file=sys.stderr)
            return EXIT_USAGE
        if total == 0 or total % ss:
            print(f"literec extract: error: recording {e.id}: {total} bytes "
                + (f"(--gaps {args.gaps}) " if e.bytes_dropped else "")
                + f"are not a whole, non-zero number of {datatype} samples ({ss} bytes each): a SigMF "
                "recording needs that; extract it without --sigmf"
                + (", or with the other --gaps" if e.bytes_dropped else ""), file=sys.stderr)
            return EXIT_USAGE
    if e.state == cat.STATE_RECORDING:
        print(f"warning: recording {e.id} did not end (state recording: cut by a power loss or a reset): "
            f"extracting its last checkpoint, {e.length} bytes", file=sys.stderr)
    data_path, base = output_paths(args)
    check_outputs(dset, [data_path] + ([base + ".sigmf-meta"] if args.sigmf else []))
    prog = rd.Progress(total, f"recording {e.id}", enabled=args.progress)
    gap_list = []
    written = 0
    with open(data_path, "wb") as out:
        for kind, d, item in rd.pieces(dset, e, args.gaps):
            if kind == "gap":
                gap_list.append((written, item, d))
                print(f"gap: {item} bytes dropped before data offset {d}" + (
                    f", zero-filled at output offset {written}" if args.gaps == "zero" else
                    f", kept out (output offset {written})"), file=sys.stderr)
                if args.gaps == "zero":
                    left = item
                    while left:
                        n = min(left, 1 << 20)
                        out.write(bytes(n))
                        left -= n
                    written += item
                    prog.update(item)
                continue
            out.write(item)
            written += len(item)
            prog.update(len(item))
    prog.close()
    unlogged = e.bytes_dropped - e.logged_drop_bytes
    if unlogged > 0:
        print(f"note: {unlogged} dropped bytes of the input are not in the drop log (positions unknown)",
            file=sys.stderr)
    if args.sigmf:
        rd.write_sigmf(base, data_path, dset, e, args.gaps, gap_list)
    print(f"recording {e.id}: {written} bytes ({e.length} recorded, {len(gap_list)} gap(s)) -> {data_path}"
        + (f" + {base}.sigmf-meta" if args.sigmf else ""))
    return EXIT_OK
