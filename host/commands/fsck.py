#
# This file is part of LiteRecorder.
#
# SPDX-License-Identifier: BSD-2-Clause

"""literec fsck DEV...: whether the exFAT volumes of a set (`rec_format fs=exfat`) and its catalog
agree: every live recording is, on each of its drives, the contiguous file the catalog names, where
its region starts, of the length the catalog says, its clusters marked used, its .sigmf-meta beside
it once it ended; no deleted recording's file is left. Reads only (a host tool never writes a drive;
`fsck.exfat -n` checks the file system itself)."""

from literecorder.host import common, catalog as cat
from literecorder.host.cli import EXIT_OK, EXIT_USAGE

NAME = "fsck"
HELP = "check that the exFAT volumes of a set and its catalog agree"

def add_arguments(p):
    common.add_drive_arguments(p)
    p.add_argument("--partial", action="store_true", help="check the drives given even when others of the set are missing")

def base_name(e):
    return e.name or f"rec-{e.id}"

def file_name(e, k, meta=False):
    if meta:
        return base_name(e) + ".sigmf-meta"
    return base_name(e) + (".sigmf-data" if e.width == 1 else f".part{k + 1}of{e.width}")

def member_bytes(n, chunk, k, w):
    full, part = divmod(n, chunk)
    b = (full - k + w - 1)//w*chunk if full > k else 0
    return b + (part if part and full % w == k else 0)

def check(dset):
    """The disagreements, as sentences (empty: the volumes and the catalog agree)."""
    out = []
    h = dset.header
    if not h.exfat:
        return ["the set's catalog is not in an exFAT volume (rec_format without fs=exfat): nothing to compare"]
    files = {p: {f.name.upper(): f for f in dset.drives[p].volume.files()} for p in dset.present}
    for e in dset.recordings(deleted=True):
        ended = e.state not in (cat.STATE_RECORDING, cat.STATE_DELETED)
        n = min(e.bytes_recorded, e.ring_bytes) if e.mode == cat.MODE_RING else e.bytes_recorded
        for k, p in enumerate(e.order):
            if p not in files:
                continue
            d, fs = dset.drives[p], files[p]
            where = f"{d.path}: recording {e.id}"
            name = file_name(e, k)
            f = fs.get(name.upper())
            if e.state == cat.STATE_DELETED:
                if f is not None and f.offset == e.start_lba[p]*h.lba_size:
                    out.append(f"{where} is deleted in the catalog, its file \"{name}\" is still on the volume")
                continue
            if f is None:
                out.append(f"{where}: no file \"{name}\" on the volume (deleted or renamed on a PC?)")
                continue
            empty = f.length == 0 and f.first_cluster == 0     # no clusters (ended with 0 bytes): nowhere
            if not f.flags & 2 and not empty:
                out.append(f"{where}: \"{name}\" is not one contiguous run (NoFatChain): a PC rewrote it?")
            if f.offset != e.start_lba[p]*h.lba_size and not empty:
                out.append(f"{where}: \"{name}\" starts at byte {f.offset}, the recording at LBA {e.start_lba[p]} "
                    f"(byte {e.start_lba[p]*h.lba_size})")
            region = e.region_blocks[p]*h.lba_size
            mb = member_bytes(n, e.chunk_bytes, k, e.width)
            if e.mode == cat.MODE_RING or not ended:
                want_len, want_valid = region, mb
            else:
                want_len = want_valid = mb
            if f.length != want_len or (f.valid != want_valid if ended else f.valid > want_valid):
                out.append(f"{where}: \"{name}\" has DataLength {f.length} and ValidDataLength {f.valid}, the catalog "
                    f"says {want_len} and {'' if ended else 'at most '}{want_valid} ({e.state_name})")
            clusters = -(-f.length//d.volume.cluster)
            used = d.volume.bitmap_used(f.first_cluster, clusters) if f.first_cluster else 0
            if used != clusters:
                out.append(f"{where}: {clusters - used} of the {clusters} clusters of \"{name}\" are free in the "
                    "allocation bitmap")
            if ended and file_name(e, k, meta=True).upper() not in fs:
                out.append(f"{where}: no \"{file_name(e, k, meta=True)}\" beside its data")
    return out

def run(args):
    dset = common.open_set(args, partial=args.partial)
    problems = check(dset)
    for p in problems:
        print(p)
    live = dset.recordings()
    print(f"RESULT name=fsck recordings={len(live)} drives={len(dset.present)} problems={len(problems)} "
        f"agree={int(not problems)}")
    common.warn(dset)
    return EXIT_USAGE if problems or dset.errors else EXIT_OK
