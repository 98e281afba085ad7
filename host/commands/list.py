#
# This file is part of LiteRecorder.
#
# SPDX-License-Identifier: BSD-2-Clause

"""literec list DEV...: the catalog of a set of drives as a table (or JSON)."""

import json

from literecorder.host import common
from literecorder.host.cli import EXIT_OK, EXIT_USAGE

NAME = "list"
HELP = "list the recordings of a set of drives"

def add_arguments(p):
    common.add_drive_arguments(p)
    p.add_argument("--partial", action="store_true", help="list even when drives of the set are missing")
    p.add_argument("--deleted", action="store_true", help="also show deleted recordings")
    p.add_argument("--json", action="store_true", help="machine-readable output")

def entry_dict(dset, e):
    return {
        "id": e.id, "slot": e.slot, "name": e.name, "state": e.state_name, "mode": e.mode_name,
        "source": e.source_name, "seed": e.seed, "bytes": e.length, "bytes_recorded": e.bytes_recorded,
        "oldest": e.oldest, "bytes_dropped": e.bytes_dropped, "drops": e.drops_total,
        "drops_logged": len(e.drops), "width": e.width, "order": e.order, "chunk_bytes": e.chunk_bytes,
        "start_lba": {p: e.start_lba[p] for p in e.order},
        "region_blocks": {p: e.region_blocks[p] for p in e.order},
        "ring_bytes": e.ring_bytes, "trigger": None if e.trigger == 0xFFFFFFFFFFFFFFFF else e.trigger,
        "start_cycles": e.start_cycles, "stop_cycles": e.stop_cycles, "update_cycles": e.update_cycles,
        "start_unix_us": e.start_unix_us, "stop_unix_us": e.stop_unix_us, "sys_clk_hz": e.sys_clk_hz,
        "datatype": e.datatype, "sample_rate": e.sample_rate, "frequency": e.frequency, "text": e.text,
        "error_status": e.error_status, "error_position": e.error_position, "error_lba": e.error_lba,
        "seq": e.seq, "inconsistent": dset.problem(e),
    }

def run(args):
    dset = common.open_set(args, partial=args.partial)
    recs = dset.recordings(deleted=args.deleted)
    if args.json:
        print(json.dumps({"set": dset.header.set_name, "set_id": dset.header.set_hex, "drives": dset.size,
            "present": dset.present, "recordings": [entry_dict(dset, e) for e in recs],
            "warnings": dset.warnings, "errors": dset.errors}, indent=1))
    else:
        h = dset.header
        print(f"set {h.set_name}: {dset.size} drive(s), " + ", ".join(
            f"{dset.drive(p).path if dset.drive(p) else '(missing)'} = {dset.member_name(p)}"
            for p in range(dset.size)))
        rows = [("ID", "NAME", "STATE", "MODE", "LENGTH", "BYTES", "DROPPED", "DRIVES", "START", "DURATION", "FORMAT",
            "FREQUENCY")]
        for e in recs:
            end = e.stop_cycles or e.update_cycles
            dur = f"{e.seconds(end - e.start_cycles):.6f} s" if end >= e.start_cycles and e.sys_clk_hz else "-"
            fmt = (e.datatype or "bytes") + (f" @ {common.hertz(e.sample_rate_mhz)}" if e.sample_rate_mhz else "")
            rows.append((str(e.id), e.name or "-", "inconsistent" if dset.problem(e) else e.state_name, e.mode_name, common.human(e.length),
                str(e.length), str(e.bytes_dropped), "+".join(str(p) for p in e.order),
                common.when(e.sys_clk_hz, e.start_cycles, e.start_unix_us), dur, fmt, common.hertz(e.frequency_mhz)))
        widths = [max(len(r[i]) for r in rows) for i in range(len(rows[0]))]
        for r in rows:
            print("  ".join(c.ljust(w) for c, w in zip(r, widths)).rstrip())
        if not recs:
            print("(no recordings)")
    common.warn(dset)
    return EXIT_USAGE if dset.errors else EXIT_OK
