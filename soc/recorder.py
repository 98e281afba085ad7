#
# This file is part of LiteRecorder.
#
# SPDX-License-Identifier: BSD-2-Clause

"""Recorder configuration shared by the simulation SoC and the board targets."""

# Recorder Configuration ---------------------------------------------------------------------------

class RecorderConfig:
    """Build-time configuration of the recorder, exported to the BIOS as ``LITEREC_*`` constants.

    Parameters
    ----------
    sys_clk_freq : int
        Modeled system clock (Hz); every time the BIOS measures is in cycles of this clock.
    n_ssds : int
        Number of SSD ports (one PCIe root port and one NVMe queue engine each), 1-8.
    pcie_data_width : int
        Width of the TLP datapath on the core side of the PHY (64, 128, 256 or 512 bits).
    chunk_size : int
        Recorder chunk (bytes): the unit of the DRAM ring and of one NVMe command stream,
        a power of two of at least 128 KiB.
    """
    def __init__(self, sys_clk_freq, n_ssds=1, pcie_data_width=256, chunk_size=128*1024):
        if not (1 <= n_ssds <= 8):
            raise ValueError(f"n_ssds={n_ssds}: between 1 and 8 SSD ports are supported")
        if pcie_data_width not in (64, 128, 256, 512):
            raise ValueError(f"pcie_data_width={pcie_data_width}: allowed are 64, 128, 256, 512")
        if chunk_size < 128*1024 or (chunk_size & (chunk_size - 1)):
            raise ValueError(f"chunk_size={chunk_size}: must be a power of two >= 131072 (128 KiB)")
        self.sys_clk_freq    = int(sys_clk_freq)
        self.n_ssds          = n_ssds
        self.pcie_data_width = pcie_data_width
        self.chunk_size      = chunk_size

    def export(self, soc):
        soc.add_constant("LITEREC_SSD_PORTS",       self.n_ssds)
        soc.add_constant("LITEREC_CHUNK_SIZE",      self.chunk_size)
        soc.add_constant("LITEREC_PCIE_DATA_WIDTH", self.pcie_data_width)
