#
# This file is part of LiteRecorder.
#
# SPDX-License-Identifier: BSD-2-Clause

"""Opsero FPGA Drive FMC Gen4 (two M.2 M-key NVMe sockets, each a PCIe x4 link) on the HPC connector
of the KC705, KCU105 and ZCU106: IO lists for ``platform.add_extension`` and the placement of each
link (transceiver channels, integrated PCIe block).

Sources (facts only, the lists below are written for this project):

- [OPSERO-XDC] Opsero reference designs, github.com/fpgadeveloper/fpga-drive-aximm-pcie,
  ``Vivado/src/constraints/kc705_hpc.xdc``, ``kcu105_hpc.xdc``, ``zcu106_hpc0.xdc`` ("FPGA Drive
  FMC Gen4 ref design"; KC705 "using 1x SSD", KCU105/ZCU106 "using 2x SSDs"): PERST# of SSD1 on
  LA00_CC_P and of SSD2 on LA04_P, PE detect on LA00_CC_N/LA04_N, "disable signal for 3.3V power
  supply for SSD2" on LA07_P, SSD1 reference clock on GBTCLK0_M2C and SSD2 on GBTCLK1_M2C, the
  LOC of every lane's transceiver channel and of each SSD's PCIe block, the IO standard of the
  LA pins per carrier (LVCMOS25 on KC705, LVCMOS18 on KCU105 and ZCU106).
- [OPSERO-DOC] fpgadrive.com, FPGA Drive FMC Gen4 "Detailed Description": 2 x 100 MHz PCIe clock
  oscillators on the card; on each M.2 socket CLKREQ# (pin 52), PEWAKE# (pin 54), SUSCLK (pin 68)
  and SMBus are not connected, DAS/DSS# (pin 10) drives the card's SSD activity LED.
- [BOARD-XDC] the carriers' FMC package pins (DPn_C2M/M2C, GBTCLKn_M2C, LAnn) as listed by the
  litex-boards 2023.12 platforms (KC705 and KCU105 ``HPC`` connectors) and by the board XDCs of
  github.com/fpganinja (KCU105 J22, ZCU106 J5 = HPC0) which name the GT channel of each DP pair.

- [OPSERO-TCL] the same repository, ``Vivado/src/bd/bd_mb.tcl`` (KCU105, axi_pcie3) and
  ``bd_zynqmp.tcl`` (ZCU106, xdma): the root-port IPs of every UltraScale(+) design for this adapter
  select the transceivers' ``Chip-to-Chip`` insertion-loss profile with ``INS_LOSS_NYQ`` 5 (dB) for
  the adapter's short traces (``CHANNEL_LOSS``).
- [OPSERO-PERST] the same repository at commit f7bad85f3df5ba668bccb146ea073ca33dc1d5bd: every design
  drives the card's PERST pins (LA00_CC_P, LA04_P) from an active-HIGH reset: ``bd_mb.tcl``, KC705
  (axi_pcie) ``rst_pcie_axi_ctl_aclk_<i>/peripheral_reset`` and KCU105 (axi_pcie3)
  ``rst_pcie_axi_aclk_<i>/peripheral_reset`` -> ``perst_<i>``; ``bd_zynqmp.tcl``, ZCU106 (xdma)
  ``rst_pcie_<i>_axi_aclk/peripheral_reset`` -> ``perst_<i>``; ``bd_zynq.tcl``: "Active HIGH PERST
  output for FMC designs (FMC form factor)"; ``bd_versal.tcl`` ties ``perst_0``/``perst_1`` to a
  constant 0 and ``docs/source/supported_carriers.md`` runs those designs with VADJ = 0 V: a low (or
  unpowered) pin releases the SSD. The M.2 sockets' pin 50 is PERST# (active low, [OPSERO-DOC]):
  the card inverts the pin (``PERST_ACTIVE_HIGH``).

Lane order: SSD1's lanes 0-3 are the FMC's DP0-DP3, SSD2's are DP4-DP7 ([OPSERO-XDC] LOCs each
``channel_inst[i]`` on the channel that [BOARD-XDC] gives for DPi, resp. DP(4+i)). The channels are
not always in order within the quad (ZCU106: DP0..3 = X0Y14, X0Y13, X0Y15, X0Y12): the placement
below follows the pins.

Not on the FMC: CLKREQ# and PEWAKE# (not connected on the card, [OPSERO-DOC]; the root port never
needs them: the reference clock runs whenever the card is powered, and L1 PM substates/wake are not
used); the activity LED (driven by the SSD itself). The targets show link-up and activity of each
SSD on the carrier's user LEDs instead.
"""

from litex.build.generic_platform import Pins, Subsignal, IOStandard

# PERST# -------------------------------------------------------------------------------------------

#: The card's PERST pins (LA00_CC_P for SSD1, LA04_P for SSD2) are active HIGH: the FPGA drives 1 to
#: hold the SSD in reset (PERST# low at its M.2 pin 50), 0 to release it; the card inverts the pin
#: ([OPSERO-PERST], on every carrier: KC705, KCU105, ZCU106). The PHYs' reset follows this fact
#: (``perst_active_high``), the IO list names the pad ``perst`` (not ``rst_n``).
PERST_ACTIVE_HIGH = True

# Channel ------------------------------------------------------------------------------------------

# (ins_loss_profile, INS_LOSS_NYQ) of the UltraScale(+) root-port IPs ([OPSERO-TCL]). The 7-series
# pcie_7x has no such parameter.
CHANNEL_LOSS = ("Chip-to-Chip", 5)

# Carriers -----------------------------------------------------------------------------------------
#
# fmc:        the package pin of each FMC signal used ([BOARD-XDC]).
# iostandard: of the LA pins, set by the carrier's VADJ ([OPSERO-XDC]).
# links:      per SSD: FMC DP pairs of lanes 0-3, reference clock, PERST#, PE detect; transceiver
#             channel site of each lane, quad, integrated block ([OPSERO-XDC]).

CARRIERS = {
    "kc705": dict(
        connector  = "HPC",
        iostandard = "LVCMOS25",   # KC705 VADJ_FPGA 2.5 V (default).
        fmc = {
            "DP0_C2M_P": "D2",  "DP0_C2M_N": "D1",  "DP0_M2C_P": "E4",  "DP0_M2C_N": "E3",
            "DP1_C2M_P": "C4",  "DP1_C2M_N": "C3",  "DP1_M2C_P": "D6",  "DP1_M2C_N": "D5",
            "DP2_C2M_P": "B2",  "DP2_C2M_N": "B1",  "DP2_M2C_P": "B6",  "DP2_M2C_N": "B5",
            "DP3_C2M_P": "A4",  "DP3_C2M_N": "A3",  "DP3_M2C_P": "A8",  "DP3_M2C_N": "A7",
            "GBTCLK0_M2C_P": "C8", "GBTCLK0_M2C_N": "C7",
            "LA00_CC_P": "C25", "LA00_CC_N": "B25",
            "LA07_P": "E28",
        },
        # KC705's HPC carries DP0-DP3 only: one x4 link (SSD2's lanes DP4-DP7 are not wired).
        links = [
            dict(lanes=[0, 1, 2, 3], refclk=0, perst="LA00_CC_P", pedet="LA00_CC_N", quad=118,
                gt_channels=[f"GTXE2_CHANNEL_X0Y{y}" for y in (12, 13, 14, 15)],
                pcie_site="PCIE_X0Y0", pcie_blk_locn="X0Y0"),
        ],
        disable_ssd2_pwr = "LA07_P",
    ),
    "kcu105": dict(
        connector  = "HPC",
        iostandard = "LVCMOS18",   # KCU105 VADJ_1V8_FPGA.
        fmc = {
            "DP0_C2M_P": "F6",  "DP0_C2M_N": "F5",  "DP0_M2C_P": "E4",  "DP0_M2C_N": "E3",
            "DP1_C2M_P": "D6",  "DP1_C2M_N": "D5",  "DP1_M2C_P": "D2",  "DP1_M2C_N": "D1",
            "DP2_C2M_P": "C4",  "DP2_C2M_N": "C3",  "DP2_M2C_P": "B2",  "DP2_M2C_N": "B1",
            "DP3_C2M_P": "B6",  "DP3_C2M_N": "B5",  "DP3_M2C_P": "A4",  "DP3_M2C_N": "A3",
            "DP4_C2M_P": "N4",  "DP4_C2M_N": "N3",  "DP4_M2C_P": "M2",  "DP4_M2C_N": "M1",
            "DP5_C2M_P": "J4",  "DP5_C2M_N": "J3",  "DP5_M2C_P": "H2",  "DP5_M2C_N": "H1",
            "DP6_C2M_P": "L4",  "DP6_C2M_N": "L3",  "DP6_M2C_P": "K2",  "DP6_M2C_N": "K1",
            "DP7_C2M_P": "G4",  "DP7_C2M_N": "G3",  "DP7_M2C_P": "F2",  "DP7_M2C_N": "F1",
            "GBTCLK0_M2C_P": "K6", "GBTCLK0_M2C_N": "K5",
            "GBTCLK1_M2C_P": "H6", "GBTCLK1_M2C_N": "H5",
            "LA00_CC_P": "H11", "LA00_CC_N": "G11",
            "LA04_P": "L12",    "LA04_N": "K12",
            "LA07_P": "F8",
        },
        links = [
            dict(lanes=[0, 1, 2, 3], refclk=0, perst="LA00_CC_P", pedet="LA00_CC_N", quad=228,
                gt_channels=[f"GTHE3_CHANNEL_X0Y{y}" for y in (16, 17, 18, 19)],
                pcie_site="PCIE_3_1_X0Y2", pcie_blk_locn="X0Y2"),
            # SSD2: lanes in quad 227, reference clock on quad 228's REFCLK1 (GBTCLK1), one quad away.
            dict(lanes=[4, 5, 6, 7], refclk=1, perst="LA04_P", pedet="LA04_N", quad=227,
                gt_channels=[f"GTHE3_CHANNEL_X0Y{y}" for y in (12, 14, 13, 15)],
                pcie_site="PCIE_3_1_X0Y1", pcie_blk_locn="X0Y1"),
        ],
        disable_ssd2_pwr = "LA07_P",
    ),
    "zcu106": dict(
        connector  = "HPC0",
        iostandard = "LVCMOS18",   # ZCU106 VADJ_FMC 1.8 V.
        fmc = {
            "DP0_C2M_P": "R6",  "DP0_C2M_N": "R5",  "DP0_M2C_P": "R2",  "DP0_M2C_N": "R1",
            "DP1_C2M_P": "T4",  "DP1_C2M_N": "T3",  "DP1_M2C_P": "U2",  "DP1_M2C_N": "U1",
            "DP2_C2M_P": "N6",  "DP2_C2M_N": "N5",  "DP2_M2C_P": "P4",  "DP2_M2C_N": "P3",
            "DP3_C2M_P": "U6",  "DP3_C2M_N": "U5",  "DP3_M2C_P": "V4",  "DP3_M2C_N": "V3",
            "DP4_C2M_P": "H4",  "DP4_C2M_N": "H3",  "DP4_M2C_P": "G2",  "DP4_M2C_N": "G1",
            "DP5_C2M_P": "L6",  "DP5_C2M_N": "L5",  "DP5_M2C_P": "L2",  "DP5_M2C_N": "L1",
            "DP6_C2M_P": "M4",  "DP6_C2M_N": "M3",  "DP6_M2C_P": "N2",  "DP6_M2C_N": "N1",
            "DP7_C2M_P": "K4",  "DP7_C2M_N": "K3",  "DP7_M2C_P": "J2",  "DP7_M2C_N": "J1",
            "GBTCLK0_M2C_P": "V8", "GBTCLK0_M2C_N": "V7",
            "GBTCLK1_M2C_P": "T8", "GBTCLK1_M2C_N": "T7",
            "LA00_CC_P": "F17", "LA00_CC_N": "F16",
            "LA04_P": "L17",    "LA04_N": "L16",
            "LA07_P": "J16",
        },
        links = [
            dict(lanes=[0, 1, 2, 3], refclk=0, perst="LA00_CC_P", pedet="LA00_CC_N", quad=226,
                gt_channels=[f"GTHE4_CHANNEL_X0Y{y}" for y in (14, 13, 15, 12)],
                pcie_site="PCIE40E4_X0Y1", pcie_blk_locn="X0Y1"),
            dict(lanes=[4, 5, 6, 7], refclk=1, perst="LA04_P", pedet="LA04_N", quad=227,
                gt_channels=[f"GTHE4_CHANNEL_X0Y{y}" for y in (19, 17, 16, 18)],
                pcie_site="PCIE40E4_X0Y0", pcie_blk_locn="X0Y0"),
        ],
        disable_ssd2_pwr = "LA07_P",
    ),
}

def carrier(board):
    try:
        return CARRIERS[board]
    except KeyError:
        raise ValueError(f"FPGA Drive FMC: unknown carrier {board!r}; supported: "
            f"{', '.join(sorted(CARRIERS))}.") from None

def max_ssds(board):
    """SSDs the carrier's FMC connector can link (x4 each)."""
    return len(carrier(board)["links"])

def check_ssds(board, n_ssds):
    n = max_ssds(board)
    if not (1 <= n_ssds <= n):
        why = "its HPC connector carries one x4 link (DP0-DP3)" if n == 1 else \
            f"the FPGA Drive FMC Gen4 has {n} M.2 sockets"
        raise ValueError(f"--ssds {n_ssds}: the {board.upper()} takes 1"
            f"{'' if n == 1 else f' to {n}'} SSD{'s' if n > 1 else ''} ({why}).")

# IOs ----------------------------------------------------------------------------------------------

def _diff(fmc, name):
    return fmc[name + "_P"], fmc[name + "_N"]

def link_pins(board, index):
    """Package pins of SSD ``index``'s link: dict tx_p/tx_n/rx_p/rx_n (4 each), clk_p/clk_n, perst
    (the card's PERST pin, ``PERST_ACTIVE_HIGH``), pedet."""
    c    = carrier(board)
    fmc  = c["fmc"]
    link = c["links"][index]
    pins = {k: [] for k in ("tx_p", "tx_n", "rx_p", "rx_n")}
    for dp in link["lanes"]:
        for direction, sub in (("C2M", "tx"), ("M2C", "rx")):
            p, n = _diff(fmc, f"DP{dp}_{direction}")
            pins[sub + "_p"].append(p)
            pins[sub + "_n"].append(n)
    pins["clk_p"], pins["clk_n"] = _diff(fmc, f"GBTCLK{link['refclk']}_M2C")
    pins["perst"] = fmc[link["perst"]]
    pins["pedet"] = fmc[link["pedet"]]
    return pins

def perst_pad_name():
    """The name of the PERST# pad of a link: ``perst`` when driven high to assert PERST#."""
    return "perst" if PERST_ACTIVE_HIGH else "rst_n"

def io(board, n_ssds):
    """IO list of the adapter with ``n_ssds`` SSDs on ``board``'s FMC (``platform.add_extension``).

    - ``fpga_drive_fmc_pcie``, index i: SSD i+1's link (``tx_p/tx_n/rx_p/rx_n`` 4 lanes,
      ``clk_p/clk_n`` 100 MHz reference clock from the card, ``perst``: the card's PERST pin, output,
      1 = SSD held in reset (``PERST_ACTIVE_HIGH``; ``rst_n``, 0 = reset, were the card not to invert
      it));
    - ``fpga_drive_fmc_pedet``, index i: PE detect of M.2 socket i+1 (input);
    - ``fpga_drive_fmc_disable_ssd2_pwr``: 1 switches SSD2's 3.3 V supply off (output).
    """
    check_ssds(board, n_ssds)
    c   = carrier(board)
    std = c["iostandard"]
    r   = []
    for i in range(n_ssds):
        pins = link_pins(board, i)
        r.append(("fpga_drive_fmc_pcie", i,
            Subsignal(perst_pad_name(), Pins(pins["perst"]), IOStandard(std)),
            Subsignal("clk_p", Pins(pins["clk_p"])),
            Subsignal("clk_n", Pins(pins["clk_n"])),
            Subsignal("rx_p",  Pins(" ".join(pins["rx_p"]))),
            Subsignal("rx_n",  Pins(" ".join(pins["rx_n"]))),
            Subsignal("tx_p",  Pins(" ".join(pins["tx_p"]))),
            Subsignal("tx_n",  Pins(" ".join(pins["tx_n"]))),
        ))
        r.append(("fpga_drive_fmc_pedet", i, Pins(pins["pedet"]), IOStandard(std)))
    r.append(("fpga_drive_fmc_disable_ssd2_pwr", 0, Pins(c["fmc"][c["disable_ssd2_pwr"]]),
        IOStandard(std)))
    return r

def placement(board, index):
    """(gt_channels, pcie_site, pcie_blk_locn, quad) of SSD ``index``'s link."""
    link = carrier(board)["links"][index]
    return link["gt_channels"], link["pcie_site"], link["pcie_blk_locn"], link["quad"]
