#
# This file is part of LiteRecorder.
#
# SPDX-License-Identifier: BSD-2-Clause

"""literec info DEV: one drive's identity, its position in its set, and its free space."""

from literecorder.host import common, drives as drv, catalog as cat
from literecorder.host.cli import EXIT_OK, EXIT_USAGE

NAME = "info"
HELP = "drive identity, position in its set, free space"

def add_arguments(p):
    common.add_drive_arguments(p, single=True)

def run(args):
    d = drv.open_drive(args.drive)
    if d.header is None:
        raise drv.SetError(str(d.header_error))
    h = d.header
    dset = drv.DriveSet([d if p == h.position else None for p in range(h.set_size)], h)
    dset.warnings += d.header_warnings
    dset.load_catalog()
    live = dset.recordings()
    used_end = h.data_start_lba
    for e in live:
        if h.position in e.order:
            used_end = max(used_end, e.start_lba[h.position] + e.region_blocks[h.position])
    used = sum(e.region_blocks[h.position] for e in live if h.position in e.order)
    print(f"{d.path}: {'device' if d.is_device else 'file'} of {d.size} bytes")
    print(f"  drive         : model {h.model or '?'}, serial {h.serial or '?'}")
    print(f"  set           : {h.set_name} (drive {h.position} of {h.set_size})")
    for p, m in enumerate(h.members):
        print(f"    drive {p}     : serial {m.serial or '?'}, {m.nsze} LBAs{'  <- this drive' if p == h.position else ''}")
    print(f"  format        : version {cat.VERSION}, {h.nsze} x {h.lba_size} B LBAs, catalog area "
        f"{h.area_bytes} bytes (data from LBA {h.data_start_lba}), {h.entry_slots} entry slots, "
        f"formatted {common.when(h.sys_clk_hz, h.format_cycles, h.format_unix_us)}")
    print(f"  recordings    : {len(live)} ({len([e for e in live if h.position in e.order])} on this drive, "
        f"{len(dset.entries) - len(live)} deleted slot(s)), {len(dset.entries)} of {h.entry_slots} slots used")
    for e in live:
        if e.state == cat.STATE_RECORDING:
            name = f' "{e.name}"' if e.name else ""
            print(f"  interrupted   : recording {e.id}{name} did not end (a power "
                f"loss or a reset): {e.length} bytes at its last checkpoint, its region still reserved "
                f"(rec_close {e.id} ends it there)")
    free = max(h.nsze - used_end, 0)
    print(f"  space         : {used*h.lba_size} bytes in recordings on this drive; {free*h.lba_size} bytes "
        f"free after the last one (from LBA {used_end})")
    print(f"RESULT name=info set={h.set_name} position={h.position} set_size={h.set_size} serial={h.serial} "
        f"recordings={len(live)} interrupted={len([e for e in live if e.state == cat.STATE_RECORDING])} "
        f"free_bytes={free*h.lba_size} next_lba={used_end}")
    common.warn(dset)
    return EXIT_USAGE if dset.errors else EXIT_OK
