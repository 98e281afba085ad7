#
# This file is part of LiteRecorder.
#
# SPDX-License-Identifier: BSD-2-Clause

"""literec extract DEV... --id N -o FILE [--sigmf] [--gaps zero|skip]: de-stripes a recording into
one file of its exact length (a ring recording in time order from its oldest valid byte), or to
standard output (-o -). The output is written in full or not at all (a temporary file renamed at
the end): a failed extract leaves an existing file as it was. Messages go to stderr."""

import os
import sys
import stat
import errno
import hashlib
import tempfile

from literecorder.host import common, recording as rd, catalog as cat
from literecorder.host.drives import SetError
from literecorder.host.cli import EXIT_OK, EXIT_USAGE

NAME = "extract"
HELP = "de-stripe a recording into a file (optionally SigMF)"

def add_arguments(p):
    common.add_drive_arguments(p)
    common.add_id_argument(p)
    p.add_argument("-o", "--output", required=True, metavar="FILE",
        help="output file, - for standard output; with --sigmf the base name of FILE.sigmf-data and "
             "FILE.sigmf-meta (a .sigmf-data or .sigmf-meta suffix of FILE is taken off)")
    p.add_argument("--sigmf", action="store_true", help="write a SigMF recording (data + metadata)")
    p.add_argument("--gaps", choices=["zero", "skip"], default="zero",
        help="bytes dropped by the recorder: zero-filled at their place (default) or kept out")
    p.add_argument("--partial", action="store_true",
        help="accept a set with drives missing as long as the recording's own drives are given")
    g = p.add_mutually_exclusive_group()
    g.add_argument("--progress", dest="progress", action="store_true", default=None, help="always show the progress bar")
    g.add_argument("--no-progress", dest="progress", action="store_false", help="never show the progress bar")

SIGMF_NOT_A_PAIR = ((".sigmf-collection", "a SigMF collection"), (".sigmf", "a SigMF archive"))

def output_paths(args):
    """(data path, metadata path or None): what extract writes, exactly. Raises SetError for an
    output --sigmf cannot write (standard output, a collection or archive name)."""
    if not args.sigmf:
        return args.output, None
    if args.output == "-":
        raise SetError("-o -: --sigmf writes two files (FILE.sigmf-data and FILE.sigmf-meta), not "
            "standard output: give a base name")
    base = args.output
    for ext, kind in SIGMF_NOT_A_PAIR:
        if base.endswith(ext):
            raise SetError(f"-o {base}: --sigmf writes FILE.sigmf-data and FILE.sigmf-meta, not {kind}: "
                f"give the base name {base[:-len(ext)]}")
    for ext in (".sigmf-data", ".sigmf-meta"):
        if base.endswith(ext):
            base = base[:-len(ext)]
    return base + ".sigmf-data", base + ".sigmf-meta"

def check_outputs(dset, paths):
    """Refuses an output that is one of the drives being read, or any block device: extract writes
    recordings to files, never to a drive."""
    for path in paths:
        try:
            st = os.fstat(sys.stdout.fileno()) if path == "-" else os.stat(path)
        except FileNotFoundError:
            continue
        except (OSError, ValueError, AttributeError):
            if path == "-":         # standard output that is no file (captured)
                continue
            raise
        path = "- (standard output)" if path == "-" else path
        if stat.S_ISBLK(st.st_mode):
            raise SetError(f"output {path} is a block device: extract writes a recording to a file, "
                "never to a drive")
        if stat.S_ISDIR(st.st_mode):
            raise SetError(f"output {path} is a directory: give a file name")
        for p in dset.present:
            d  = dset.drives[p]
            ds = os.fstat(d.fd)
            if (st.st_dev, st.st_ino) == (ds.st_dev, ds.st_ino):
                raise SetError(f"output {path} is {d.path}, a drive of the set being read: give "
                    "another file")

def is_stdout(path):
    """True for - and for a path that is the file standard output writes to (-o /dev/stdout)."""
    if path == "-":
        return True
    try:
        so = os.fstat(sys.stdout.fileno())
        st = os.stat(path)
    except (OSError, ValueError, AttributeError):
        return False
    return (st.st_dev, st.st_ino) == (so.st_dev, so.st_ino)

class Output:
    """A file written in full or not at all: a regular file (new or existing) is written to a
    temporary file beside it and renamed over it by ``commit``; ``discard`` removes the temporary
    (an existing file stays as it was). Standard output, a pipe or a character device is written
    directly."""
    def __init__(self, path):
        self.path, self.tmp = path, None
        if is_stdout(path):
            sys.stdout.flush()
            self.f, self.own = sys.stdout.buffer, False
            return
        self.own = True
        try:
            st = os.stat(path)
        except FileNotFoundError:
            st = None
        if st is not None and not stat.S_ISREG(st.st_mode):
            self.f = open(path, "wb")
            return
        if st is not None and not os.access(path, os.W_OK):     # as open() would refuse it
            raise OSError(errno.EACCES, f"cannot write {path} ({os.strerror(errno.EACCES)})")
        target = os.path.realpath(path)     # a symbolic link: its target is replaced, as open() would write it
        if st is not None:
            mode = stat.S_IMODE(st.st_mode)
        else:
            umask = os.umask(0)
            os.umask(umask)
            mode = 0o666 & ~umask
        try:
            fd, self.tmp = tempfile.mkstemp(dir=os.path.dirname(target), prefix="." + os.path.basename(target) + ".",
                suffix=".part")
        except OSError as e:
            raise OSError(e.errno, f"cannot create {path} ({e.strerror})") from None
        self.target = target
        os.fchmod(fd, mode)
        self.f = os.fdopen(fd, "wb")

    def write(self, data):
        self.f.write(data)

    def close(self):
        if self.own:
            self.f.close()
        else:
            self.f.flush()

    def commit(self):
        self.close()
        if self.tmp:
            os.replace(self.tmp, self.target)
            self.tmp = None

    def discard(self):
        try:
            self.close()
        except OSError:
            pass
        if self.tmp:
            try:
                os.unlink(self.tmp)
            except OSError:
                pass
            self.tmp = None

GAPS_SHOWN = 3

def gap_summary(gap_list, gaps, shown=GAPS_SHOWN):
    """The lines that report the gaps of ``gap_list`` (``rd.gap_list``): their count and bytes,
    the first ``shown`` of them, and how many more."""
    if not gap_list:
        return []
    total = sum(n for o, n, d in gap_list)
    how = "zero-filled at their place" if gaps == "zero" else "kept out of the file"
    lines = [f"gaps: {len(gap_list)}, {total} bytes dropped by the recorder, {how}" +
        (f"; the first {shown}:" if len(gap_list) > shown else ":")]
    for o, n, d in gap_list[:shown]:
        lines.append(f"  {n} bytes before data offset {d}, at output offset {o}")
    if len(gap_list) > shown:
        lines.append(f"  ... {len(gap_list) - shown} more")
    return lines

def run(args):
    data_path, meta_path = output_paths(args)
    dset = common.open_set(args, partial=args.partial)
    common.warn(dset)
    e = dset.find(args.id)
    dset.require_members(e)
    total = rd.output_length(e, args.gaps)
    gap_list = rd.gap_list(e, args.gaps)
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
        notes = []
        try:
            meta = rd.sigmf_meta(dset, e, args.gaps, gap_list, notes)
        except rd.SigMFInvalid as err:
            print(f"literec extract: error: recording {e.id}: its metadata is not valid SigMF ({err}): "
                "extract it without --sigmf", file=sys.stderr)
            return EXIT_USAGE
        except rd.SigMFOutOfFrame as err:
            print(f"literec extract: error: recording {e.id}: with --gaps skip {err}: extract it with "
                "--gaps zero (the dropped bytes zero-filled keep every sample in frame)", file=sys.stderr)
            return EXIT_USAGE
        for n in notes:
            print(f"note: {n}", file=sys.stderr)
    if e.state == cat.STATE_RECORDING:
        print(f"warning: recording {e.id} did not end (state interrupted: cut by a power loss or a reset): "
            f"extracting its last checkpoint, {e.length} bytes (rec_close {e.id} ends it there)", file=sys.stderr)
    check_outputs(dset, [data_path] + ([meta_path] if args.sigmf else []))
    for line in gap_summary(gap_list, args.gaps):
        print(line, file=sys.stderr)
    prog = rd.Progress(total, f"recording {e.id}", enabled=args.progress)
    digest = hashlib.sha512()
    written, ngaps = 0, 0
    outs = []
    try:
        out = Output(data_path)
        outs.append(out)
        for kind, d, item in rd.pieces(dset, e, args.gaps):
            if kind == "gap":
                ngaps += 1
                if args.gaps == "zero":
                    left = item
                    while left:
                        n = min(left, 1 << 20)
                        out.write(bytes(n))
                        digest.update(bytes(n))
                        left -= n
                    written += item
                    prog.update(item)
                continue
            out.write(item)
            digest.update(item)
            written += len(item)
            prog.update(len(item))
        prog.close()
        if args.sigmf:
            meta.set_global_field("core:sha512", digest.hexdigest())
            mout = Output(meta_path)
            outs.append(mout)
            mout.write((meta.dumps(pretty=True) + "\n").encode())
        for o in outs:
            o.commit()
    except BaseException:
        for o in outs:
            o.discard()
        raise
    unlogged = e.bytes_dropped - e.logged_drop_bytes
    if unlogged > 0:
        print(f"note: {unlogged} dropped bytes of the input are not in the drop log (positions unknown)",
            file=sys.stderr)
    shown = "standard output" if data_path == "-" else data_path
    print(f"recording {e.id}: {written} bytes ({e.length} recorded, {ngaps} gap(s)) -> {shown}"
        + (f" + {meta_path}" if args.sigmf else ""), file=sys.stderr)
    return EXIT_OK
