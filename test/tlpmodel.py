#
# This file is part of LiteRecorder.
#
# SPDX-License-Identifier: BSD-2-Clause

"""Reference model of TLPs for the unit tests, written from the PCIe Base Specification (header
layouts of memory, configuration and completion TLPs), independent of the RTL."""

import random

FMT_TYPE = {
    "mrd32": 0x00, "mrd64": 0x20, "mwr32": 0x40, "mwr64": 0x60,
    "cfgrd0": 0x04, "cfgwr0": 0x44, "cpl": 0x0a, "cpld": 0x4a, "msg": 0x30,
}

class TLP:
    def __init__(self, kind, length=0, payload=None, **fields):
        self.kind    = kind
        self.length  = length                 # Dwords (payload for writes/CplD, requested for reads).
        self.payload = list(payload or [])    # List of 32-bit payload dwords (little-endian bytes).
        self.f       = dict(fields)

    @property
    def fmt_type(self):
        return FMT_TYPE[self.kind]

    @property
    def h4(self):
        return bool(self.fmt_type & 0x20)

    def header(self):
        """Header dwords as values."""
        f  = self.f
        ln = self.length & 0x3ff
        dw0 = (self.fmt_type << 24) | (f.get("ep", 0) << 14) | ln
        if self.kind in ("mrd32", "mrd64", "mwr32", "mwr64", "cfgrd0", "cfgwr0"):
            last_be = f.get("last_be", 0xf if self.length > 1 else 0)
            dw1 = (f.get("req_id", 0) << 16) | (f.get("tag", 0) << 8) | (last_be << 4) | f.get("first_be", 0xf)
            if self.kind.startswith("cfg"):
                dw2 = (f["bus"] << 24) | (f["dev"] << 19) | (f["fn"] << 16) | (f["reg"] << 2)
                return [dw0, dw1, dw2]
            adr = f["adr"]
            if self.h4:
                return [dw0, dw1, (adr >> 32) & 0xffffffff, adr & 0xfffffffc]
            return [dw0, dw1, adr & 0xfffffffc]
        if self.kind in ("cpl", "cpld"):
            dw1 = (f.get("cmp_id", 0) << 16) | (f.get("status", 0) << 13) | (f.get("byte_count", 0) & 0xfff)
            dw2 = (f.get("req_id", 0) << 16) | (f.get("tag", 0) << 8) | (f.get("lower_adr", 0) & 0x7f)
            return [dw0, dw1, dw2]
        if self.kind == "msg":
            return [dw0, 0, 0, 0]
        raise ValueError(self.kind)

    def dwords(self):
        return self.header() + self.payload

def parse_header(dws):
    """Decode header dwords (values) into a dict."""
    dw0 = dws[0]
    d = dict(fmt_type=(dw0 >> 24) & 0x7f, ep=(dw0 >> 14) & 1, length=(dw0 & 0x3ff) or 1024)
    ft = d["fmt_type"]
    if ft & 0x1f == 0x0a:
        d.update(cmp_id=dws[1] >> 16, status=(dws[1] >> 13) & 7, byte_count=dws[1] & 0xfff,
            req_id=dws[2] >> 16, tag=(dws[2] >> 8) & 0xff, lower_adr=dws[2] & 0x7f)
    else:
        d.update(req_id=dws[1] >> 16, tag=(dws[1] >> 8) & 0xff, last_be=(dws[1] >> 4) & 0xf,
            first_be=dws[1] & 0xf)
        if ft & 0x1f == 0x04:
            d.update(bus=dws[2] >> 24, dev=(dws[2] >> 19) & 0x1f, fn=(dws[2] >> 16) & 7,
                reg=(dws[2] >> 2) & 0x3ff)
        elif ft & 0x20:
            d.update(adr=(dws[2] << 32) | (dws[3] & 0xfffffffc))
        else:
            d.update(adr=dws[2] & 0xfffffffc)
    return d

def to_beats(dws, ndw):
    """Dword list -> list of (dat, be) beats (LitePCIe little-endian phy_layout)."""
    beats = []
    for i in range(0, len(dws), ndw):
        chunk = dws[i:i+ndw]
        dat = 0
        for j, v in enumerate(chunk):
            dat |= (v & 0xffffffff) << (32*j)
        be = (1 << (4*len(chunk))) - 1
        beats.append((dat, be))
    return beats

def from_beats(beats, ndw):
    """(dat, be) beats -> dwords (only the lanes with be set)."""
    dws = []
    for dat, be in beats:
        for j in range(ndw):
            if (be >> (4*j)) & 0xf:
                dws.append((dat >> (32*j)) & 0xffffffff)
    return dws

def random_payload(rng, n):
    return [rng.getrandbits(32) for _ in range(n)]
