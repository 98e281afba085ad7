#
# This file is part of LiteRecorder.
#
# SPDX-License-Identifier: BSD-2-Clause

"""Package-pin facts of the three boards' FPGAs, for the check of the FPGA Drive FMC extension: the
pins of the IO bank the adapter's LA signals use (all of that bank's pins, so that the platform's
own IOs in it are found too), the transceiver pins of the quads its lanes use, and the VCCO of that
bank on each board. Written for this project from public documents:

- xc7k325t-ffg900 (KC705): prjxray-db package pin table (github.com/openXC7/prjxray-db,
  ``kintex7/xc7k325tffg900-2/package_pins.csv``: pin, bank, pin function); bank 16 VCCO is
  VADJ_FPGA (KC705 board XDC comments "Bank 16 VCCO - VADJ_FPGA"), 2.5 V as the board ships.
  GT channel sites: the part's 16 GTX channels are quads 115-118, X0Y0-X0Y15 in quad order.
- xcku040-ffva1156 (KCU105): Xilinx "KCU105 RevD XDC" ("# Bank 66 VCCO - VADJ_1V8_FPGA_10A -
  IO_..._66" above each pin); transceiver pins and channel sites from the fpganinja KCU105 XDC
  ("MGTHTXP0_228 GTHE3_CHANNEL_X0Y16 / GTHE3_COMMON_X0Y4 from J22.C2 DP0_C2M_P").
- xczu7ev-ffvc1156 (ZCU106): Xilinx ZCU106 board XDC ("Bank 67 VCCO - VADJ_FMC - IO_..._67"; the
  board's DIP switches in the same bank are LVCMOS18: VADJ_FMC 1.8 V); transceivers from the
  fpganinja ZCU106 XDC (J5 = FMC HPC0).

``pins``: package pin -> (bank, pin function); ``gt_sites``: transceiver data pin -> channel site.
"""

def _io_bank(bank, spec):
    """'PIN:function-without-bank ...' -> {pin: (bank, function)}."""
    r = {}
    for item in spec.split():
        pin, func = item.split(":")
        r[pin] = (bank, f"{func}_{bank}")
    return r

def _gt_quad(quad, prefix, spec, site=None):
    """'PIN:TXP0 ...' -> ({pin: (quad, 'MGT<prefix>TXP0_<quad>')}, {pin: site of its channel})."""
    pins, sites = {}, {}
    for item in spec.split():
        pin, func = item.split(":")
        pins[pin] = (quad, f"MGT{prefix if not func.startswith('REFCLK') else ''}{func}_{quad}")
        if site is not None and not func.startswith("REFCLK"):
            sites[pin] = site(quad, int(func[-1]))
    return pins, sites

# KC705: xc7k325t-ffg900 ---------------------------------------------------------------------------

_kc705_pins = _io_bank(16,
    "F23:IO_0 B23:IO_L1P_T0 A23:IO_L1N_T0 E23:IO_L2P_T0 D23:IO_L2N_T0 F25:IO_L3P_T0_DQS "
    "E25:IO_L3N_T0_DQS E24:IO_L4P_T0 D24:IO_L4N_T0 F26:IO_L5P_T0 E26:IO_L5N_T0 G23:IO_L6P_T0 "
    "G24:IO_L6N_T0_VREF B27:IO_L7P_T1 A27:IO_L7N_T1 C24:IO_L8P_T1 B24:IO_L8N_T1 B28:IO_L9P_T1_DQS "
    "A28:IO_L9N_T1_DQS A25:IO_L10P_T1 A26:IO_L10N_T1 D26:IO_L11P_T1_SRCC C26:IO_L11N_T1_SRCC "
    "C25:IO_L12P_T1_MRCC B25:IO_L12N_T1_MRCC D27:IO_L13P_T2_MRCC C27:IO_L13N_T2_MRCC "
    "E28:IO_L14P_T2_SRCC D28:IO_L14N_T2_SRCC C29:IO_L15P_T2_DQS B29:IO_L15N_T2_DQS D29:IO_L16P_T2 "
    "C30:IO_L16N_T2 B30:IO_L17P_T2 A30:IO_L17N_T2 E29:IO_L18P_T2 E30:IO_L18N_T2 H24:IO_L19P_T3 "
    "H25:IO_L19N_T3_VREF G28:IO_L20P_T3 F28:IO_L20N_T3 G27:IO_L21P_T3_DQS F27:IO_L21N_T3_DQS "
    "G29:IO_L22P_T3 F30:IO_L22N_T3 H26:IO_L23P_T3 H27:IO_L23N_T3 H30:IO_L24P_T3 G30:IO_L24N_T3 "
    "G25:IO_25")
_p, _kc705_sites = _gt_quad(118, "X",
    "D2:TXP0 D1:TXN0 E4:RXP0 E3:RXN0 C4:TXP1 C3:TXN1 D6:RXP1 D5:RXN1 B2:TXP2 B1:TXN2 B6:RXP2 "
    "B5:RXN2 A4:TXP3 A3:TXN3 A8:RXP3 A7:RXN3 C8:REFCLK0P C7:REFCLK0N E8:REFCLK1P E7:REFCLK1N",
    site=lambda quad, ch: f"GTXE2_CHANNEL_X0Y{4*(quad - 115) + ch}")
_kc705_pins.update(_p)

# KCU105: xcku040-ffva1156 -------------------------------------------------------------------------

_kcu105_pins = _io_bank(66,
    "D13:IO_L24P_T3U_N10 C13:IO_L24N_T3U_N11 E12:IO_T3U_N12 A13:IO_L23P_T3U_N8 A12:IO_L23N_T3U_N9 "
    "F13:IO_L22P_T3U_N6_DBC_AD0P E13:IO_L22N_T3U_N7_DBC_AD0N C11:IO_L21P_T3L_N4_AD8P "
    "B11:IO_L21N_T3L_N5_AD8N C12:IO_L20P_T3L_N2_AD1P B12:IO_L20N_T3L_N3_AD1N "
    "E11:IO_L19P_T3L_N0_DBC_AD9P D11:IO_L19N_T3L_N1_DBC_AD9N J13:IO_L18P_T2U_N10_AD2P "
    "H13:IO_L18N_T2U_N11_AD2N L12:IO_L17P_T2U_N8_AD10P K12:IO_L17N_T2U_N9_AD10N "
    "L13:IO_L16P_T2U_N6_QBC_AD3P K13:IO_L16N_T2U_N7_QBC_AD3N K11:IO_L15P_T2L_N4_AD11P "
    "J11:IO_L15N_T2L_N5_AD11N H12:IO_L14P_T2L_N2_GC G12:IO_L14N_T2L_N3_GC F12:IO_T2U_N12 "
    "H11:IO_L13P_T2L_N0_GC_QBC G11:IO_L13N_T2L_N1_GC_QBC G10:IO_L12P_T1U_N10_GC "
    "F10:IO_L12N_T1U_N11_GC L9:IO_T1U_N12_VRP G9:IO_L11P_T1U_N8_GC F9:IO_L11N_T1U_N9_GC "
    "K10:IO_L10P_T1U_N6_QBC_AD4P J10:IO_L10N_T1U_N7_QBC_AD4N J8:IO_L9P_T1L_N4_AD12P "
    "H8:IO_L9N_T1L_N5_AD12N J9:IO_L8P_T1L_N2_AD5P H9:IO_L8N_T1L_N3_AD5N "
    "L8:IO_L7P_T1L_N0_QBC_AD13P K8:IO_L7N_T1L_N1_QBC_AD13N E10:IO_L6P_T0U_N10_AD6P "
    "D10:IO_L6N_T0U_N11_AD6N D9:IO_L5P_T0U_N8_AD14P C9:IO_L5N_T0U_N9_AD14N "
    "B10:IO_L4P_T0U_N6_DBC_AD7P A10:IO_L4N_T0U_N7_DBC_AD7N D8:IO_L3P_T0L_N4_AD15P "
    "C8:IO_L3N_T0L_N5_AD15N B9:IO_L2P_T0L_N2 A9:IO_L2N_T0L_N3 A8:IO_T0U_N12 "
    "F8:IO_L1P_T0L_N0_DBC E8:IO_L1N_T0L_N1_DBC")
_kcu105_sites = {}
for _quad, _spec in [
    (228, "F6:TXP0 F5:TXN0 E4:RXP0 E3:RXN0 D6:TXP1 D5:TXN1 D2:RXP1 D1:RXN1 C4:TXP2 C3:TXN2 "
          "B2:RXP2 B1:RXN2 B6:TXP3 B5:TXN3 A4:RXP3 A3:RXN3 K6:REFCLK0P K5:REFCLK0N H6:REFCLK1P "
          "H5:REFCLK1N"),
    (227, "N4:TXP0 N3:TXN0 M2:RXP0 M1:RXN0 L4:TXP1 L3:TXN1 K2:RXP1 K1:RXN1 J4:TXP2 J3:TXN2 "
          "H2:RXP2 H1:RXN2 G4:TXP3 G3:TXN3 F2:RXP3 F1:RXN3")]:
    _p, _s = _gt_quad(_quad, "H", _spec, site=lambda quad, ch: f"GTHE3_CHANNEL_X0Y{4*(quad - 224) + ch}")
    _kcu105_pins.update(_p)
    _kcu105_sites.update(_s)

# ZCU106: xczu7ev-ffvc1156 -------------------------------------------------------------------------

_zcu106_pins = _io_bank(67,
    "L16:IO_L24N_T3U_N11 L17:IO_L24P_T3U_N10 K18:IO_L23N_T3U_N9 K19:IO_L23P_T3U_N8 "
    "K15:IO_L22N_T3U_N7_DBC_AD0N L15:IO_L22P_T3U_N6_DBC_AD0P J17:IO_L21N_T3L_N5_AD8N "
    "K17:IO_L21P_T3L_N4_AD8P J15:IO_L20N_T3L_N3_AD1N J16:IO_L20P_T3L_N2_AD1P "
    "K20:IO_L19N_T3L_N1_DBC_AD9N L20:IO_L19P_T3L_N0_DBC_AD9P J20:IO_T3U_N12 J19:IO_T2U_N12 "
    "G16:IO_L18N_T2U_N11_AD2N H16:IO_L18P_T2U_N10_AD2P F18:IO_L17N_T2U_N9_AD10N "
    "G18:IO_L17P_T2U_N8_AD10P H17:IO_L16N_T2U_N7_QBC_AD3N H18:IO_L16P_T2U_N6_QBC_AD3P "
    "G19:IO_L15N_T2L_N5_AD11N H19:IO_L15P_T2L_N4_AD11P F15:IO_L14N_T2L_N3_GC G15:IO_L14P_T2L_N2_GC "
    "F16:IO_L13N_T2L_N1_GC_QBC F17:IO_L13P_T2L_N0_GC_QBC E14:IO_L12N_T1U_N11_GC "
    "E15:IO_L12P_T1U_N10_GC D14:IO_L11N_T1U_N9_GC D15:IO_L11P_T1U_N8_GC "
    "F13:IO_L10N_T1U_N7_QBC_AD4N G14:IO_L10P_T1U_N6_QBC_AD4P E17:IO_L9N_T1L_N5_AD12N "
    "E18:IO_L9P_T1L_N4_AD12P C17:IO_L8N_T1L_N3_AD5N D17:IO_L8P_T1L_N2_AD5P "
    "C16:IO_L7N_T1L_N1_QBC_AD13N D16:IO_L7P_T1L_N0_QBC_AD13P E13:IO_T1U_N12 C14:IO_T0U_N12_VRP "
    "C12:IO_L6N_T0U_N11_AD6N C13:IO_L6P_T0U_N10_AD6P A12:IO_L5N_T0U_N9_AD14N "
    "A13:IO_L5P_T0U_N8_AD14P B13:IO_L4N_T0U_N7_DBC_AD7N B14:IO_L4P_T0U_N6_DBC_AD7P "
    "A14:IO_L3N_T0L_N5_AD15N A15:IO_L3P_T0L_N4_AD15P B15:IO_L2N_T0L_N3 B16:IO_L2P_T0L_N2 "
    "A16:IO_L1N_T0L_N1_DBC A17:IO_L1P_T0L_N0_DBC")
_zcu106_sites = {}
for _quad, _spec in [
    (226, "U6:TXP0 U5:TXN0 V4:RXP0 V3:RXN0 T4:TXP1 T3:TXN1 U2:RXP1 U1:RXN1 R6:TXP2 R5:TXN2 "
          "R2:RXP2 R1:RXN2 N6:TXP3 N5:TXN3 P4:RXP3 P3:RXN3 V8:REFCLK0P V7:REFCLK0N"),
    (227, "M4:TXP0 M3:TXN0 N2:RXP0 N1:RXN0 L6:TXP1 L5:TXN1 L2:RXP1 L1:RXN1 K4:TXP2 K3:TXN2 "
          "J2:RXP2 J1:RXN2 H4:TXP3 H3:TXN3 G2:RXP3 G1:RXN3 T8:REFCLK0P T7:REFCLK0N")]:
    _p, _s = _gt_quad(_quad, "H", _spec, site=lambda quad, ch: f"GTHE4_CHANNEL_X0Y{4*(quad - 223) + ch}")
    _zcu106_pins.update(_p)
    _zcu106_sites.update(_s)

# Facts --------------------------------------------------------------------------------------------

FACTS = {
    "kc705":  dict(part="xc7k325t-ffg900",  pins=_kc705_pins,  gt_sites=_kc705_sites,
                   vcco={16: ("VADJ_FPGA", 2.5)}),
    "kcu105": dict(part="xcku040-ffva1156", pins=_kcu105_pins, gt_sites=_kcu105_sites,
                   vcco={66: ("VADJ_1V8_FPGA_10A", 1.8)}),
    "zcu106": dict(part="xczu7ev-ffvc1156", pins=_zcu106_pins, gt_sites=_zcu106_sites,
                   vcco={67: ("VADJ_FMC", 1.8)}),
}

# VCCO (V) an IO standard needs on its bank; None: no VCCO requirement for inputs (e.g. LVDS inputs
# on HP banks are powered from VCCAUX), checked as outputs only.
IOSTANDARD_VCCO = {
    "LVCMOS12": 1.2, "LVCMOS15": 1.5, "LVCMOS18": 1.8, "LVCMOS25": 2.5, "LVCMOS33": 3.3,
    "SSTL15": 1.5, "DIFF_SSTL15": 1.5, "SSTL12": 1.2, "DIFF_SSTL12": 1.2, "POD12": 1.2,
    "LVDS_25": 2.5, "LVDS": 1.8,
}
