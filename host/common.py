#
# This file is part of LiteRecorder.
#
# SPDX-License-Identifier: BSD-2-Clause

"""Arguments and helpers shared by the ``literec`` subcommands."""

import sys
import argparse

from literecorder.host import drives as drv

def int_range(lo, hi, what):
    """An argparse type: an integer ``lo``..``hi`` (``hi`` None: no upper bound), decimal or 0x hex,
    refused with ``what`` it is and what is allowed."""
    allowed = f"{lo}..{hi}" if hi is not None else f"{lo} or more"
    def parse(text):
        try:
            v = int(text, 0)
        except ValueError:
            raise argparse.ArgumentTypeError(f"{text!r}: {what}, an integer {allowed} (decimal, or hex with 0x)")
        if v < lo or (hi is not None and v > hi):
            raise argparse.ArgumentTypeError(f"{v}: {what}, allowed {allowed}")
        return v
    return parse

def add_drive_arguments(parser, single=False):
    if single:
        parser.add_argument("drive", metavar="DEV", help="raw drive (/dev/nvme0n1), drive image or namespace file")
        return
    parser.add_argument("drives", metavar="DEV", nargs="+",
        help="the drives of the set in set order: raw drives (/dev/nvme0n1), drive images or namespace files")
    parser.add_argument("--any-order", action="store_true",
        help="accept the drives in any order (each drive knows its position in the set)")

def add_id_argument(parser):
    parser.add_argument("--id", type=int, required=True, metavar="N", help="recording id (see `literec list`)")

def open_set(args, partial=False):
    s = drv.assemble(args.drives, any_order=getattr(args, "any_order", False), partial=partial)
    s.load_catalog()
    return s

def warn(dset):
    for w in dset.warnings:
        print(f"warning: {w}", file=sys.stderr)
    for e in dset.errors:
        print(f"error: {e}", file=sys.stderr)

def human(n):
    for unit, f in (("GiB", 1 << 30), ("MiB", 1 << 20), ("KiB", 1 << 10)):
        if n >= f:
            return f"{n/f:.1f} {unit}"
    return f"{n} B"

def hertz(millihertz):
    """A rate or frequency given in millihertz (the catalog's unit), exact and readable:
    ``100 MHz``, ``30.72 MHz``, ``2.4 GHz``, ``1.5 Hz``; ``-`` for 0 (not set)."""
    if not millihertz:
        return "-"
    for unit, exp in (("GHz", 12), ("MHz", 9), ("kHz", 6), ("Hz", 3)):
        if millihertz >= 10**exp or unit == "Hz":
            whole, frac = divmod(millihertz, 10**exp)
            digits = f"{frac:0{exp}d}".rstrip("0")
            return f"{whole}" + (f".{digits}" if digits else "") + f" {unit}"

def when(sys_clk_hz, cycles, unix_us):
    """Wall-clock time when it was set, else the time since power-up of the recorder."""
    from literecorder.host.recording import iso_utc
    if unix_us:
        return iso_utc(unix_us) or f"invalid time ({unix_us} us since 1970-01-01)"
    if cycles and sys_clk_hz:
        return f"t+{cycles/sys_clk_hz:.6f} s"
    return "-"
