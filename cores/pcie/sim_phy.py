#
# This file is part of LiteRecorder.
#
# SPDX-License-Identifier: BSD-2-Clause

"""Root-port PHY of the Verilator simulation: the TLP boundary on pads, to a simulated device.

Same core-facing interface as the Xilinx root-port wrappers (``sink``/``source`` TLP beats, link
status, PERST#); the device behind the pads is a C module of the simulation (doc/sim_pcie_port.md).
"""

from migen import *

from litex.gen import *

from litex.soc.interconnect import stream

from litepcie.common import phy_layout

from literecorder.cores.pcie.common import check_data_width

# Simulation Root-Port PHY -------------------------------------------------------------------------

class SimRootPortPHY(LiteXModule):
    endianness = "little"

    def __init__(self, pads, data_width=256, root_mps_cap=512):
        check_data_width(data_width)
        self.data_width   = data_width
        self.root_mps_cap = root_mps_cap
        self.max_payload_size = root_mps_cap   # The largest TLP the root port accepts.
        self.root_link_cap = (4, 8)   # (generation, lanes): the simulated link trains to the SSD's.
        self.sink         = sink   = stream.Endpoint(phy_layout(data_width))
        self.source       = source = stream.Endpoint(phy_layout(data_width))
        self.link_up      = Signal()
        self.link_gen     = Signal(3)
        self.link_width   = Signal(4)
        self.ltssm        = Signal(6)
        self.perst        = Signal(reset=1)   # 1: PERST# asserted.

        # # #

        self.comb += [
            pads.tx_valid.eq(sink.valid),
            pads.tx_first.eq(sink.first),
            pads.tx_last.eq(sink.last),
            pads.tx_dat.eq(sink.dat),
            pads.tx_be.eq(sink.be),
            sink.ready.eq(pads.tx_ready),

            source.valid.eq(pads.rx_valid),
            source.first.eq(pads.rx_first),
            source.last.eq(pads.rx_last),
            source.dat.eq(pads.rx_dat),
            source.be.eq(pads.rx_be),
            pads.rx_ready.eq(source.ready),

            pads.perst_n.eq(~self.perst),
            self.link_up.eq(pads.link_up),
            self.link_gen.eq(pads.link_gen),
            self.link_width.eq(pads.link_width),
            self.ltssm.eq(pads.ltssm),
        ]
