#
# This file is part of LiteRecorder.
#
# SPDX-License-Identifier: BSD-2-Clause

"""PCIe root-complex definitions: TLP header fields, layouts and helpers on top of LitePCIe."""

from migen import *

from litex.soc.interconnect import stream
from litex.soc.interconnect.packet import Header, HeaderField

from litepcie.common import phy_layout
from litepcie.tlp.common import tlp_raw_layout, fmt_type_dict, cpl_dict, dword_endianness_swap

# Constants ----------------------------------------------------------------------------------------

# Fmt/Type (7 bits, Fmt in 6:5) of the TLPs the root complex sends and receives.
FMT_TYPE = {
    "mrd32" : 0b00_00000,
    "mrd64" : 0b01_00000,
    "mwr32" : 0b10_00000,
    "mwr64" : 0b11_00000,
    "cfgrd0": 0b00_00100,
    "cfgwr0": 0b10_00100,
    "cfgrd1": 0b00_00101,
    "cfgwr1": 0b10_00101,
    "cpl"   : 0b00_01010,
    "cpld"  : 0b10_01010,
}

# Completion status.
CPL_SC  = 0b000
CPL_UR  = 0b001
CPL_CRS = 0b010
CPL_CA  = 0b011

# Requester/completer ID of the root port (bus 0, device 0, function 0) and of the SSD (bus 1).
ROOT_ID   = 0x0000
DEVICE_ID = 0x0100

# Header fields (dword values, as in the PCIe specification) ---------------------------------------

def hdr_dw0(fmt_type, length, ep=0):
    """Dword 0 of a TLP header: Fmt/Type, EP, Length (1024 dwords encoded as 0)."""
    return Cat(length[:10], Constant(0, 4), ep, Constant(0, 9), fmt_type[:5], fmt_type[5:7], Constant(0, 1))

def request_dw1(requester_id, tag, last_be, first_be):
    return Cat(first_be[:4], last_be[:4], tag[:8], requester_id[:16])

def completion_dw1(completer_id, status, byte_count):
    return Cat(byte_count[:12], Constant(0, 1), status[:3], completer_id[:16])

def completion_dw2(requester_id, tag, lower_address):
    return Cat(lower_address[:7], Constant(0, 1), tag[:8], requester_id[:16])

def config_dw2(bus, device, function, register):
    """Dword 2 of a configuration request; ``register`` is the dword number (10 bits incl. ext)."""
    return Cat(Constant(0, 2), register[:6], register[6:10], Constant(0, 4), function[:3], device[:5], bus[:8])

# Layouts ------------------------------------------------------------------------------------------

def rx_request_layout(data_width):
    """Memory request received from the device (its DMA), header decoded."""
    return [
        ("we",        1),   # 1: MWr, 0: MRd.
        ("addr64",    1),   # 4-dword header (64-bit address format).
        ("ep",        1),   # Poisoned.
        ("adr",      64),   # Byte address (bits 1:0 are 0).
        ("len",      11),   # Dwords (1..1024).
        ("first_be",  4),
        ("last_be",   4),
        ("tag",       8),
        ("req_id",   16),
        ("dat",      data_width),
        ("be",       data_width//8),
    ]

def rx_completion_layout(data_width):
    """Completion received from the device, header decoded."""
    return [
        ("with_data",   1),
        ("ep",          1),
        ("status",      3),
        ("byte_count", 12),
        ("lower_adr",   7),
        ("len",        11),
        ("tag",         8),
        ("cmp_id",     16),
        ("req_id",     16),
        ("dat",        data_width),
        ("be",         data_width//8),
    ]

# Helpers ------------------------------------------------------------------------------------------

def dw_mask(n, ndw):
    """Byte-enable vector (4 bits per dword) with the low ``n`` dwords set, ``n`` a signal."""
    cases = {i: Constant((1 << (4*i)) - 1, 4*ndw) for i in range(ndw + 1)}
    return cases

def log2_ceil(n):
    return (n - 1).bit_length()

def check_data_width(data_width):
    if data_width not in (64, 128, 256, 512):
        raise ValueError(f"data_width={data_width}: allowed are 64, 128, 256 and 512 bits")
