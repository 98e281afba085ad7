#
# This file is part of LiteRecorder.
#
# SPDX-License-Identifier: BSD-2-Clause

"""Root-port PHY wrappers for the Xilinx PCIe hard blocks.

One vendor-independent interface (see ``doc/rootport_phy.md``), three families:

- :class:`S7RootPortPHY`  Xilinx 7-series,          ``pcie_7x``           (AXI-S TLPs).
- :class:`USRootPortPHY`  Xilinx UltraScale,        ``pcie3_ultrascale``  (RQ/RC/CQ/CC descriptors).
- :class:`USPRootPortPHY` Xilinx UltraScale+,       ``pcie4_uscale_plus`` (RQ/RC/CQ/CC descriptors).
"""

from literecorder.cores.pcie.phy.s7rootport import S7RootPortPHY
from literecorder.cores.pcie.phy.usrootport import USRootPortPHY, USPRootPortPHY
