#
# This file is part of LiteRecorder.
#
# SPDX-License-Identifier: BSD-2-Clause

"""What the board targets and the simulation share about each board: system clock, DRAM (module,
width, size), PCIe link of the adapter and the datapath widths its root-port PHY allows.

The DRAM figures are those of the litex-boards 2023.12 targets for these boards (module and PHY
rate at the default system clock): 64-bit DDR3/DDR4 through a 1:4 PHY at 125 MHz, i.e. 1000 MT/s
and a peak of 8 GB/s on the LiteDRAM side.
"""

BOARDS = {
    "kc705": dict(
        name            = "KC705",
        fpga            = "Kintex-7 XC7K325T",
        sys_clk_freq    = 125e6,
        dram            = dict(memtype="DDR3", module="MT8JTF12864", data_width=64, size=None,
                               desc="DDR3 SODIMM 1 GB (MT8JTF12864), 64-bit, 1000 MT/s"),
        link            = (2, 4),          # Gen2 x4 (pcie_7x).
        pcie_data_width = [128],           # 7-series: 128-bit at Gen2 x4 (64-bit is below the engine's 128).
        ssds            = 1,
        # On-chip slots per SSD port: 256 KiB = 64 RAMB36 (of 445, 14 %).
        staging         = 256*1024,
        staging_ram     = "block",
    ),
    "kcu105": dict(
        name            = "KCU105",
        fpga            = "Kintex UltraScale XCKU040",
        sys_clk_freq    = 125e6,
        dram            = dict(memtype="DDR4", module="EDY4016A", data_width=64, size=0x40000000,
                               desc="DDR4 components 4 x EDY4016A, 64-bit, 1000 MT/s (1 GB mapped)"),
        link            = (3, 4),          # Gen3 x4 (pcie3_ultrascale).
        pcie_data_width = [256, 128],
        ssds            = 2,
        # On-chip slots per SSD port: 512 KiB = 128 RAMB36 (of 600, 21 %; 2 SSDs: 43 %).
        staging         = 512*1024,
        staging_ram     = "block",
    ),
    "zcu106": dict(
        name            = "ZCU106",
        fpga            = "Zynq UltraScale+ XCZU7EV (PL only)",
        sys_clk_freq    = 125e6,
        dram            = dict(memtype="DDR4", module="MT40A256M16", data_width=64, size=0x20000000,
                               desc="PL DDR4 components 4 x MT40A256M16, 64-bit, 1000 MT/s (512 MB mapped)"),
        link            = (3, 4),          # Gen3 x4 (pcie4_uscale_plus).
        pcie_data_width = [256, 128],
        ssds            = 2,
        # On-chip slots per SSD port: 512 KiB = 16 UltraRAM (of 96, 17 %; 2 SSDs: 33 %).
        staging         = 512*1024,
        staging_ram     = "ultra",
    ),
}

def board(name):
    try:
        return BOARDS[name]
    except KeyError:
        raise ValueError(f"unknown board {name!r}: allowed are {', '.join(sorted(BOARDS))}") from None

def check_pcie_data_width(name, width):
    b = board(name)
    if width not in b["pcie_data_width"]:
        raise ValueError(f"--pcie-data-width {width}: the {b['name']} root port allows "
            f"{' or '.join(str(w) for w in b['pcie_data_width'])} bits")
