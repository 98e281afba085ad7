#
# This file is part of LiteRecorder.
#
# SPDX-License-Identifier: BSD-2-Clause

"""Drives, drive images and namespace files, read-only, and sets of them: the catalog of a set
(every drive carries a copy; the newest valid copy of each slot wins) and the checks that the
drives given are one complete set in its order."""

import os
import stat

from literecorder.host import catalog as cat
from literecorder.host import exfat

class SetError(Exception):
    """The drives given are not usable together (missing, extra, swapped, mixed, no catalog)."""

# Drive --------------------------------------------------------------------------------------------

class Drive:
    """A raw device, drive image or namespace file, opened read-only (``writable`` to change it).

    A read beyond the end of the device or file is an error (SetError): an image shorter than the
    drive is a truncated copy, and the bytes it lacks are not known to be zeros. (A sparse
    namespace file has the drive's full size: its unwritten LBAs read as zeros.)"""
    def __init__(self, path, writable=False):
        self.path = path
        try:
            self.fd = os.open(path, os.O_RDWR if writable else os.O_RDONLY)
        except OSError as e:
            raise SetError(f"{path}: cannot open: {e.strerror}") from None
        st = os.fstat(self.fd)
        self.is_device = stat.S_ISBLK(st.st_mode) or stat.S_ISCHR(st.st_mode)
        if not (self.is_device or stat.S_ISREG(st.st_mode)):
            raise SetError(f"{path}: not a block device, drive image or namespace file")
        self.size = os.lseek(self.fd, 0, os.SEEK_END) if self.is_device else st.st_size
        self.header = None
        self.header_warnings = []
        self.header_error = None
        self.base = 0               # byte offset of the catalog: its file's in an exFAT volume
        self.volume = None          # the exFAT volume (host/exfat.py), when the drive holds one

    def close(self):
        if self.fd is not None:
            os.close(self.fd)
            self.fd = None

    def read(self, offset, n):
        data = bytearray()
        kind = "device" if self.is_device else "file"
        while len(data) < n:
            try:
                chunk = os.pread(self.fd, n - len(data), offset + len(data))
            except OverflowError:       # An offset beyond 2^63: no drive is that large.
                raise SetError(f"{self.path}: bytes {offset}..{offset + n - 1} are beyond the end of "
                    f"the {kind} ({self.size} bytes)") from None
            if not chunk:
                raise SetError(f"{self.path}: the {kind} ends at byte {self.size}, bytes {offset}.."
                    f"{offset + n - 1} are needed" + ("" if self.is_device else
                    ": a truncated image (a copy shorter than the drive)?"))
            data += chunk
        return bytes(data)

    def write(self, offset, data):
        os.pwrite(self.fd, data, offset)

    def read_block(self, index):
        return self.read(self.base + index*cat.BLOCK, cat.BLOCK)

    def load_header(self):
        """Reads the drive header (copy A, else copy B). Sets ``header`` or ``header_error``
        (the exception saying why there is no usable header)."""
        errors = []
        first = self.read(0, 4096) if self.size >= 4096 else b""
        if first[:8] != cat.HEADER_MAGIC and exfat.is_exfat(first):
            try:
                self.base, self.volume = exfat.catalog_offset(self.read, self.path)
            except exfat.ExfatError as e:
                self.header_error = cat.NoCatalog(str(e) + ": no LiteRecorder catalog")
                return None
        for copy in (0, 1):
            try:
                self.header = cat.parse_header(self.read_block(cat.header_block(copy)),
                    f"{self.path}: drive header copy {'AB'[copy]}")
                break
            except cat.CatalogError as e:
                errors.append(e)
        if self.header is None:
            if any(isinstance(e, cat.BadVersion) for e in errors):
                self.header_error = next(e for e in errors if isinstance(e, cat.BadVersion))
            elif all(isinstance(e, cat.NoCatalog) for e in errors):
                self.header_error = cat.NoCatalog(f"{self.path}: no LiteRecorder catalog (not formatted with "
                    "rec_format, or not a LiteRecorder drive)")
            else:
                bad = [e for e in errors if not isinstance(e, cat.NoCatalog)]
                self.header_error = cat.BadCRC(f"{self.path}: corrupt catalog header: "
                    + "; ".join(str(e).split(": ", 1)[-1] for e in bad))
        elif errors:
            self.header_warnings.append(f"{errors[0]} (copy B used)")
        if self.header is not None and self.base and (not self.header.exfat or
                self.header.catalog_lba*self.header.lba_size != self.base):
            self.header_warnings.append(f"{self.path}: the catalog file is at byte {self.base}, its header says "
                f"LBA {self.header.catalog_lba} (flags {self.header.flags:#x})")
        if self.header is not None and not self.is_device:
            drive_bytes = self.header.nsze*self.header.lba_size
            if self.size < drive_bytes:
                self.header_warnings.append(f"{self.path}: the image is {self.size} bytes, the drive "
                    f"{drive_bytes}: a truncated copy? (what lies beyond its end cannot be read)")
        return self.header

    def describe(self):
        h = self.header
        return f"{self.path} (drive {h.position} of {h.set_size}, serial {h.serial or '?'})"

def open_drive(path, writable=False):
    d = Drive(path, writable)
    d.load_header()
    return d

# Set ----------------------------------------------------------------------------------------------

class DriveSet:
    """The drives of one set, indexed by set position (``drives[p]``, None when missing)."""
    def __init__(self, drives, header):
        self.drives  = drives
        self.header  = header
        self.size    = header.set_size
        self.warnings = []
        self.errors   = []
        self.entries  = {}         # slot -> newest valid Entry
        self.sources  = {}         # slot -> path of the drive the entry was read from
        self.problems = {}         # slot -> why its entry does not fit its region (cat.region_problem)

    @property
    def present(self):
        return [p for p in range(self.size) if self.drives[p] is not None]

    def drive(self, p):
        return self.drives[p]

    def member_name(self, p):
        m = self.header.members[p] if p < len(self.header.members) else None
        return f"drive {p} (serial {m.serial})" if m and m.serial else f"drive {p}"

    def load_catalog(self):
        """Reads every slot on every drive: per slot the valid copy with the highest seq. A slot
        whose copies are all corrupt on every drive is an error; a corrupt copy next to a good one
        is a warning."""
        for slot in range(self.header.entry_slots):
            best, best_path, bad = None, None, []
            for p in self.present:
                d = self.drives[p]
                for copy in (0, 1):
                    where = f"{d.path}: entry slot {slot} copy {'AB'[copy]}"
                    try:
                        e = cat.parse_entry(d.read_block(cat.entry_block(slot, copy)), where)
                    except cat.NoCatalog:
                        continue
                    except cat.CatalogError as err:
                        bad.append(err)
                        continue
                    if e.set_id != self.header.set_id or e.slot != slot:
                        continue       # left over from an earlier format
                    outside = sorted(set(q for q in e.order if q >= self.size))
                    if outside:        # CRC-valid but not of this set's geometry.
                        bad.append(cat.CatalogError(f"{where}: recording {e.id} is striped over drive "
                            f"position(s) {outside}, the set has {self.size} drive(s) (0-{self.size - 1})"))
                        continue
                    if best is None or e.seq > best.seq:
                        best, best_path = e, d.path
            if best is not None:
                self.entries[slot] = best
                self.sources[slot] = best_path
                problem = cat.region_problem(best, self.header)
                if problem:
                    self.problems[slot] = problem
                    self.errors.append(f"{best_path}: entry slot {slot}: recording {best.id}: inconsistent "
                        f"catalog entry: {problem}: it cannot be read")
                # A corrupt copy newer than nothing we know is only a warning: the other copy holds
                # the previous state of the slot.
                self.warnings += [f"{err} (an older copy of the slot was used)" for err in bad]
            elif bad:
                self.errors += [str(err) for err in bad]
        return self

    def recordings(self, deleted=False):
        rs = [e for e in self.entries.values() if deleted or e.state != cat.STATE_DELETED]
        return sorted(rs, key=lambda e: e.id)

    def problem(self, e):
        """Why entry ``e`` cannot be read (None when it can)."""
        return self.problems.get(e.slot) if self.entries.get(e.slot) is e else None

    def find(self, rec_id):
        for e in self.entries.values():
            if e.id == rec_id and e.state != cat.STATE_DELETED:
                if self.problem(e):
                    raise SetError(f"recording {e.id}: inconsistent catalog entry: {self.problem(e)}: "
                        "refused (nothing is read for an entry that does not fit its region and its drives)")
                return e
        raise SetError(f"no recording with id {rec_id} in the catalog (ids: "
            + (", ".join(str(e.id) for e in self.recordings()) or "none") + ")")

    def require_members(self, e):
        missing = [p for p in e.order if self.drives[p] is None]
        if missing:
            raise SetError(f"recording {e.id} is striped over drives {sorted(e.order)} of the set: "
                + ", ".join(self.member_name(p) for p in missing) + " not given")

def assemble(paths, any_order=False, partial=False, writable=False):
    """Opens ``paths`` and checks that they are one set: every drive has a catalog, one set
    identity, no position twice, every position present (unless ``partial``), given in set order
    (unless ``any_order``). Raises SetError with what is wrong and what to do."""
    if not paths:
        raise SetError("no drive given")
    drives = []
    try:
        for path in paths:
            drives.append(open_drive(path, writable))
        for d in drives:
            if d.header is None:
                raise SetError(str(d.header_error))
        first = drives[0]
        for d in drives[1:]:
            if d.header.set_id != first.header.set_id:
                raise SetError(f"mixed set: {d.path} belongs to set {d.header.set_name} "
                    f"(drive {d.header.position} of {d.header.set_size}), {first.path} to set "
                    f"{first.header.set_name}: drives of different sets cannot be combined")
        size = first.header.set_size
        seen = {}
        for d in drives:
            p = d.header.position
            if p in seen:
                raise SetError(f"extra drive: {seen[p].path} and {d.path} are both drive {p} of set "
                    f"{first.header.set_name} (the same drive given twice, or a copy of it)")
            seen[p] = d
        by_pos = [seen.get(p) for p in range(size)]
        missing = [p for p in range(size) if by_pos[p] is None]
        s = DriveSet(by_pos, first.header)
        if missing and not partial:
            raise SetError(f"missing drive: set {first.header.set_name} has {size} drives, "
                + ", ".join(s.member_name(p) for p in missing) + " not given")
        given = [d.header.position for d in drives]
        if not any_order and given != sorted(given):
            right = " ".join(seen[p].path for p in sorted(given))
            raise SetError("swapped order: " + ", ".join(f"{d.path} is drive {d.header.position}"
                for d in drives) + f" of the set: give them in set order ({right}) or add --any-order")
        for d in drives:
            s.warnings += d.header_warnings
            if d.header.lba_size != first.header.lba_size:
                raise SetError(f"{d.path}: {d.header.lba_size}-byte LBAs, {first.path} "
                    f"{first.header.lba_size}: not one set")
        return s
    except Exception:
        for d in drives:
            d.close()
        raise
