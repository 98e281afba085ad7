#
# This file is part of LiteRecorder.
#
# SPDX-License-Identifier: BSD-2-Clause

"""Root-port PHY for the Xilinx 7-series PCIe integrated block (pcie_7x, PG054).

::

             sys                    |                   pcie (user_clk)
    sink ---> PHYTXDatapath (CDC) --+-----------------------------------> s_axis_tx  (TLPs)
    source <- PHYRXDatapath (CDC) <-+- S7RXAligner128 (128-bit only) <--- m_axis_rx  (TLPs)
    mgmt_sink/source <---- CDC ---->+- RootPortConfiguration <----------> cfg_mgmt_*
    perst --> PERST# pad, IP reset        link status <------------------ user_lnk_up, pl_*

The 7-series block carries TLPs on its AXI4-Stream interface (configuration requests included), so
no descriptor conversion is needed; its RX interface at 128 bits may start a TLP in dword 2 of a
beat (straddling the end of the previous one), which ``S7RXAligner128`` realigns to dword 0. The
beats keep the block's native byte order: LitePCIe "big" endianness (header dwords as PCIe values,
payload bytes swapped within each dword), as LitePCIe's S7PCIEPHY.
"""

import os

from migen import *
from migen.genlib.cdc import MultiReg

from litex.gen import *

from litex.soc.interconnect import stream
from litex.soc.interconnect.packet import Status
from litex.soc.cores.clock import S7MMCM

from litepcie.common import phy_layout
from litepcie.phy.common import PHYTXDatapath, PHYRXDatapath

from literecorder.cores.pcie.phy.common import *
from literecorder.cores.pcie.phy.xilinx_ip_params import SiteValue

# S7RXAligner128 -----------------------------------------------------------------------------------

class S7RXAligner128(LiteXModule):
    """Realigns the 128-bit RX stream of pcie_7x so that every TLP starts in dword 0 of a beat.

    ``sof``/``eof`` are the block's rx_is_sof/rx_is_eof (m_axis_rx_tuser[14:10]/[21:17], PG054):
    sof[4] a TLP starts in this beat, sof[3] at dword 2 (else dword 0); eof[4] a TLP ends in this
    beat, eof[3:2] its last dword. A beat may end one TLP in dwords 0-1 and start the next one in
    dword 2; a TLP that starts in dword 2 spans at least two beats (3-DW minimum header).
    """
    def __init__(self):
        self.sink   = sink   = stream.Endpoint([("dat", 128), ("sof", 5), ("eof", 5)])
        self.source = source = stream.Endpoint(phy_layout(128))

        # # #

        sof_dw0  = Signal()
        sof_dw2  = Signal()
        eof      = Signal()
        eof_low  = Signal()
        eof_be   = Signal(16)
        self.comb += [
            sof_dw0.eq(sink.sof[4] & ~sink.sof[3]),
            sof_dw2.eq(sink.sof[4] &  sink.sof[3]),
            eof.eq(sink.eof[4]),
            eof_low.eq(sink.eof[4] & ~sink.eof[3]),
            Case(sink.eof[2:4], {n: eof_be.eq(2**(4*(n + 1)) - 1) for n in range(4)}),
        ]
        hold_dat   = Signal(64)
        hold_be    = Signal(8)
        hold_first = Signal()

        self.fsm = fsm = FSM(reset_state="ALIGNED")
        fsm.act("ALIGNED",
            If(sof_dw2 & ~eof,
                # A TLP starts in dword 2, nothing precedes it in this beat: keep its first half.
                sink.ready.eq(1),
                If(sink.valid,
                    NextValue(hold_dat,   sink.dat[64:]),
                    NextValue(hold_be,    0xff),
                    NextValue(hold_first, 1),
                    NextState("UNALIGNED")
                )
            ).Else(
                source.valid.eq(sink.valid),
                source.first.eq(sof_dw0),
                source.last.eq(eof),
                source.dat.eq(sink.dat),
                source.be.eq(Mux(eof, eof_be, 0xffff)),
                sink.ready.eq(source.ready),
                If(sink.valid & source.ready & sof_dw2,
                    # The TLP that ended in dwords 0-1 is out; the next one starts in dword 2.
                    NextValue(hold_dat,   sink.dat[64:]),
                    NextValue(hold_be,    0xff),
                    NextValue(hold_first, 1),
                    NextState("UNALIGNED")
                )
            )
        )
        fsm.act("UNALIGNED",
            source.valid.eq(sink.valid),
            source.first.eq(hold_first),
            source.last.eq(eof_low),
            source.dat.eq(Cat(hold_dat, sink.dat[:64])),
            source.be.eq(Cat(hold_be, Mux(eof_low, eof_be[:8], 0xff))),
            sink.ready.eq(source.ready),
            If(sink.valid & source.ready,
                NextValue(hold_dat,   sink.dat[64:]),
                NextValue(hold_be,    0xff),
                NextValue(hold_first, 0),
                If(eof_low,
                    If(sof_dw2,
                        NextValue(hold_first, 1)
                    ).Else(
                        NextState("ALIGNED")
                    )
                ).Elif(eof,
                    NextValue(hold_be, eof_be[8:]),
                    NextState("FLUSH")
                )
            )
        )
        fsm.act("FLUSH",
            source.valid.eq(1),
            source.last.eq(1),
            source.dat.eq(hold_dat),
            source.be.eq(hold_be),
            If(source.ready,
                NextState("ALIGNED")
            )
        )

# S7RootPortPHY ------------------------------------------------------------------------------------

class S7RootPortPHY(RootPortPHY):
    """Root port on the Xilinx 7-series PCIe integrated block (pcie_7x, Gen2 capable).

    Parameters
    ----------
    platform : Platform
        Receives the IP TCL (``pre_synthesis_commands``) and the refclk constraint.
    pads : Record
        ``clk_p/clk_n`` (100 MHz refclk), ``tx_p/tx_n/rx_p/rx_n`` (1, 2, 4 or 8 lanes), optional
        ``rst_n`` (PERST# to the SSD, driven as an output).
    data_width : int
        AXI4-Stream width, 64 (x1, x2, x4) or 128 (x4, x8); also the width of ``sink``/``source``.
    mem_window : (int, int)
        Base and size of the non-prefetchable window holding the SSD's BAR0 (1 MiB granularity,
        below 4 GiB).
    max_payload_size, max_read_request_size : int
        DevCtl MPS (capped by the root port's DevCap) and MRRS of the root port. MPS defaults to
        ``root_mps_cap``: the root port must accept every TLP the SSD may send, and the BIOS programs
        the SSD's MPS as min(device, this) (``ROOT_CAPS``), never above the root port's.
    root_mps_cap : int
        Max Payload Size the root port supports (IP Max_Payload_Size), 128 to 1024.
    sys_clk_freq : int
        Frequency of the sys clock domain (Hz). When given, PERST# goes through a
        ``PERSTSequencer`` (minimum assertion time ``perst_min_time``, 100 ms by default).
    perst_active_high : bool
        The PERST# pad (``perst``) is driven high to assert PERST# (an adapter that inverts it, as
        the FPGA Drive FMC); False: ``rst_n`` driven low.
    pcie_blk_locn : str
        Integrated block used (IP PCIe_Blk_Locn), ``"X0Y0"`` on parts with one block.
    ip_name : str
        Module name of the generated IP and of its instance (one per root port).
    """
    endianness = "big"
    ltssm_s7   = True       # `ltssm` in pcie_7x's pl_ltssm_state encoding (PG054).

    def __init__(self, platform, pads, data_width=128, mem_window=(0xe0000000, 0x100000),
        max_payload_size=None, max_read_request_size=512, root_mps_cap=512, refclk_freq=100e6,
        ip_name="pcie_s7_rp", sys_clk_freq=None, perst_min_time=PERST_MIN_TIME,
        perst_active_high=False, pcie_blk_locn="X0Y0"):
        nlanes = len(pads.tx_p)
        check_choice("nlanes (len(pads.tx_p))", nlanes, [1, 2, 4, 8])
        check_choice("data_width", data_width, [64, 128])
        allowed = {64: [1, 2, 4], 128: [4, 8]}[data_width]
        if nlanes not in allowed:
            raise ValueError(f"pcie_7x Gen2 x{nlanes} needs data_width "
                f"{'64' if nlanes < 4 else '128'}, not {data_width} (x{nlanes} with "
                f"{data_width}-bit is allowed for {allowed} lanes).")
        check_choice("refclk_freq", refclk_freq, [100e6, 125e6, 250e6])
        check_choice("root_mps_cap", root_mps_cap, [128, 256, 512, 1024])
        if max_payload_size is None:
            max_payload_size = root_mps_cap
        check_payload_sizes(max_payload_size, max_read_request_size, root_mps_cap)
        check_memory_window(mem_window)
        self.platform        = platform
        self.data_width      = data_width
        self.nlanes          = nlanes
        self.root_mps_cap    = root_mps_cap
        self.max_payload_size = max_payload_size  # DevCtl MPS of the root port: the largest TLP it accepts.
        self.refclk_freq     = refclk_freq
        self.ip_name         = ip_name
        self.speed           = "gen2"
        self.root_link_cap   = (2, nlanes)              # (generation, lanes) the root port can train.
        self.userclk1_freq   = {1: 125e6, 2: 125e6, 4: 250e6, 8: 500e6}[nlanes]
        self.userclk2_freq   = max(125e6, nlanes*4e9/data_width) # AXI clock: lanes x 4 Gb/s.
        self.user_clk_freq   = self.userclk2_freq # Clock of the pcie domain.
        self.pcie_blk_locn   = pcie_blk_locn
        self.config          = {}
        self.external_hard_ip = False
        self._add_interface(data_width)

        # # #

        # Reset / PERST# ---------------------------------------------------------------------------
        self._add_reset(pads, sys_clk_freq, perst_min_time, perst_active_high)

        # Clocking ---------------------------------------------------------------------------------
        refclk = Signal()
        self.specials += Instance("IBUFDS_GTE2",
            i_CEB = 0,
            i_I   = pads.clk_p,
            i_IB  = pads.clk_n,
            o_O   = refclk,
        )
        platform.add_period_constraint(pads.clk_p, 1e9/refclk_freq)
        self.cd_pcie = ClockDomain()

        # PIPE clock (the block's shared clocking is kept outside the IP, as in LitePCIe S7PCIEPHY):
        # an MMCM on TXOUTCLK makes 125/250 MHz PCLK (selected per rate), USERCLK1 and USERCLK2.
        txoutclk      = Signal()
        txoutclk_bufg = Signal()
        pipe_pclk_sel = Signal(nlanes)
        self.cd_pipe_clk125   = ClockDomain()
        self.cd_pipe_clk250   = ClockDomain()
        self.cd_pipe_userclk1 = ClockDomain()
        self.cd_pipe_userclk2 = ClockDomain()
        self.cd_pipe_pclk     = ClockDomain()
        self.specials += Instance("BUFG", i_I=txoutclk, o_O=txoutclk_bufg)
        self.mmcm = mmcm = S7MMCM(speedgrade=-2)
        mmcm.register_clkin(txoutclk_bufg, refclk_freq)
        mmcm.create_clkout(self.cd_pipe_clk125,   125e6,              margin=0)
        mmcm.create_clkout(self.cd_pipe_clk250,   250e6,              margin=0)
        mmcm.create_clkout(self.cd_pipe_userclk1, self.userclk1_freq, margin=0)
        mmcm.create_clkout(self.cd_pipe_userclk2, self.userclk2_freq, margin=0)
        pipe_pclk_sel_r = Signal(nlanes)
        pclk_sel        = Signal() # 1: PCLK from the 250 MHz clock (5.0 GT/s on every lane).
        self.specials += MultiReg(pipe_pclk_sel, pipe_pclk_sel_r, "pipe_pclk")
        self.sync.pipe_pclk += [
            If(pipe_pclk_sel_r == (2**nlanes - 1), pclk_sel.eq(1)),
            If(pipe_pclk_sel_r == 0,               pclk_sel.eq(0)),
        ]
        self.specials += Instance("BUFGCTRL",
            i_CE0 = 1,
            i_CE1 = 1,
            i_I0  = ClockSignal("pipe_clk125"),
            i_I1  = ClockSignal("pipe_clk250"),
            i_S0  = ~pclk_sel,
            i_S1  = pclk_sel,
            o_O   = ClockSignal("pipe_pclk"),
        )
        # The BUFGCTRL's select is not a timed path (the switch is glitch-free and only follows a
        # rate change): false path through it, as upstream LitePCIe's S7PCIEPHY (enjoy-digital/
        # litepcie 2026; not in the 2024.12 package): a kept net and `set_false_path -through
        # [get_nets ...pclk_sel]`, here with the net's own name rather than a wildcard.
        pclk_sel.attr.add("keep")
        platform.add_platform_command("set_false_path -through [get_nets {{{pclk_sel}}}]",
            pclk_sel=pclk_sel)
        self.pclk_sel = pclk_sel

        # TX (Root Complex -> SSD) -----------------------------------------------------------------
        self.tx_datapath = PHYTXDatapath(
            core_data_width = data_width,
            pcie_data_width = data_width,
            clock_domain    = "sys")
        self.comb += self.sink.connect(self.tx_datapath.sink)
        s_axis_tx = self.tx_datapath.source

        # RX (SSD -> Root Complex) -----------------------------------------------------------------
        self.rx_datapath = PHYRXDatapath(
            core_data_width = data_width,
            pcie_data_width = data_width,
            clock_domain    = "sys")
        self.comb += self.rx_datapath.source.connect(self.source)
        m_axis_rx_valid = Signal()
        m_axis_rx_ready = Signal()
        m_axis_rx_data  = Signal(data_width)
        m_axis_rx_keep  = Signal(data_width//8)
        m_axis_rx_last  = Signal()
        m_axis_rx_user  = Signal(22)
        if data_width == 128:
            self.rx_aligner = rx_aligner = ClockDomainsRenamer("pcie")(S7RXAligner128())
            self.comb += [
                rx_aligner.sink.valid.eq(m_axis_rx_valid),
                m_axis_rx_ready.eq(rx_aligner.sink.ready),
                rx_aligner.sink.dat.eq(m_axis_rx_data),
                rx_aligner.sink.sof.eq(m_axis_rx_user[10:15]),
                rx_aligner.sink.eof.eq(m_axis_rx_user[17:22]),
                rx_aligner.source.connect(self.rx_datapath.sink),
            ]
        else:
            rx = self.rx_datapath.sink
            self.rx_status = rx_status = ClockDomainsRenamer("pcie")(Status(rx))
            self.comb += [
                rx.valid.eq(m_axis_rx_valid),
                m_axis_rx_ready.eq(rx.ready),
                rx.first.eq(rx_status.first),
                rx.last.eq(m_axis_rx_last),
                rx.dat.eq(m_axis_rx_data),
                rx.be.eq(m_axis_rx_keep),
            ]

        # Root Port Configuration ------------------------------------------------------------------
        dl_up_pcie = Signal()
        mgmt = self._add_configuration(mem_window, max_payload_size, max_read_request_size,
            dl_up_pcie)

        # Link Status ------------------------------------------------------------------------------
        lnk_rate      = Signal()
        lnk_width     = Signal(2)
        ltssm         = Signal(6)
        lnk_rate_sys  = Signal()
        lnk_width_sys = Signal(2)
        self.specials += [
            MultiReg(lnk_rate,  lnk_rate_sys,  "sys"),
            MultiReg(lnk_width, lnk_width_sys, "sys"),
            MultiReg(ltssm,     self.ltssm,    "sys"),
        ]
        self.comb += If(self.dl_up,
            self.link_gen.eq(lnk_rate_sys + 1),                                   # 0: 2.5, 1: 5.0 GT/s.
            Case(lnk_width_sys, {n: self.link_width.eq(1 << n) for n in range(4)}), # x1/x2/x4/x8.
        )

        # Hard IP ----------------------------------------------------------------------------------
        self.ip_params = dict(
            # Clock / Reset / Lanes.
            i_sys_clk                    = refclk,
            i_sys_rst_n                  = self.ip_rst_n,
            o_pci_exp_txp                = pads.tx_p,
            o_pci_exp_txn                = pads.tx_n,
            i_pci_exp_rxp                = pads.rx_p,
            i_pci_exp_rxn                = pads.rx_n,

            # PIPE clocking.
            i_pipe_pclk_in               = ClockSignal("pipe_pclk"),
            o_pipe_txoutclk_out          = txoutclk,
            o_pipe_rxoutclk_out          = Open(nlanes),
            o_pipe_pclk_sel_out          = pipe_pclk_sel,
            o_pipe_gen3_out              = Open(),
            i_pipe_rxusrclk_in           = ClockSignal("pipe_pclk"),
            i_pipe_rxoutclk_in           = Constant(0, nlanes),
            i_pipe_dclk_in               = ClockSignal("pipe_clk125"),
            i_pipe_userclk1_in           = ClockSignal("pipe_userclk1"),
            i_pipe_userclk2_in           = ClockSignal("pipe_userclk2"),
            i_pipe_oobclk_in             = ClockSignal("pipe_pclk"),
            i_pipe_mmcm_lock_in          = mmcm.locked,
            i_pipe_mmcm_rst_n            = 1,

            # Common.
            o_user_clk_out               = ClockSignal("pcie"),
            o_user_reset_out             = ResetSignal("pcie"),
            o_user_lnk_up                = dl_up_pcie,
            o_user_app_rdy               = Open(),

            # TX.
            o_tx_buf_av                  = Open(6),
            o_tx_err_drop                = Open(),
            o_tx_cfg_req                 = Open(),
            i_tx_cfg_gnt                 = 1,
            i_s_axis_tx_tvalid           = s_axis_tx.valid,
            i_s_axis_tx_tlast            = s_axis_tx.last,
            o_s_axis_tx_tready           = s_axis_tx.ready,
            i_s_axis_tx_tdata            = s_axis_tx.dat,
            i_s_axis_tx_tkeep            = s_axis_tx.be,
            i_s_axis_tx_tuser            = Constant(0, 4),

            # RX.
            i_rx_np_ok                   = 1,
            i_rx_np_req                  = 1,
            o_m_axis_rx_tvalid           = m_axis_rx_valid,
            o_m_axis_rx_tlast            = m_axis_rx_last,
            i_m_axis_rx_tready           = m_axis_rx_ready,
            o_m_axis_rx_tdata            = m_axis_rx_data,
            o_m_axis_rx_tkeep            = m_axis_rx_keep,
            o_m_axis_rx_tuser            = m_axis_rx_user,

            # Configuration management (the root port's own configuration space).
            o_cfg_mgmt_do                = mgmt.read_data,
            o_cfg_mgmt_rd_wr_done        = mgmt.done,
            i_cfg_mgmt_di                = mgmt.wdata,
            i_cfg_mgmt_byte_en           = mgmt.be,
            i_cfg_mgmt_dwaddr            = mgmt.adr,
            i_cfg_mgmt_wr_en             = mgmt.write,
            i_cfg_mgmt_rd_en             = mgmt.read,
            i_cfg_mgmt_wr_readonly       = 0,
            i_cfg_mgmt_wr_rw1c_as_rw     = 0,

            # Flow control (status of the block's credits: unused), error reporting (a root port
            # reports nothing on behalf of the user logic), block DRP: inputs tied as LitePCIe 2024.12's
            # S7PCIEPHY ties them (the IP has these ports with its default interfaces).
            i_fc_sel                     = Constant(0, 3),
            i_cfg_err_ecrc               = 0,
            i_cfg_err_ur                 = 0,
            i_cfg_err_cpl_timeout        = 0,
            i_cfg_err_cpl_unexpect       = 0,
            i_cfg_err_cpl_abort          = 0,
            i_cfg_err_posted             = 0,
            i_cfg_err_cor                = 0,
            i_cfg_err_atomic_egress_blocked = 0,
            i_cfg_err_internal_cor       = 0,
            i_cfg_err_malformed          = 0,
            i_cfg_err_mc_blocked         = 0,
            i_cfg_err_poisoned           = 0,
            i_cfg_err_norecovery         = 0,
            i_cfg_err_tlp_cpl_header     = Constant(0, 48),
            i_cfg_err_locked             = 0,
            i_cfg_err_acs                = 0,
            i_cfg_err_internal_uncor     = 0,
            i_cfg_err_aer_headerlog      = Constant(0, 128),
            i_cfg_aer_interrupt_msgnum   = Constant(0, 5),
            i_pcie_drp_clk               = 1,
            i_pcie_drp_en                = 0,
            i_pcie_drp_we                = 0,
            i_pcie_drp_addr              = Constant(0, 9),
            i_pcie_drp_di                = Constant(0, 16),

            # Configuration control.
            i_cfg_trn_pending            = 0,
            i_cfg_pm_halt_aspm_l0s       = 0,
            i_cfg_pm_halt_aspm_l1        = 0,
            i_cfg_pm_force_state_en      = 0,
            i_cfg_pm_force_state         = Constant(0, 2),
            i_cfg_dsn                    = Constant(0, 64),
            i_cfg_turnoff_ok             = 0,
            i_cfg_pm_wake                = 0,
            i_cfg_pm_send_pme_to         = 0,
            i_cfg_ds_bus_number          = Constant(0, 8),
            i_cfg_ds_device_number       = Constant(0, 5),
            i_cfg_ds_function_number     = Constant(0, 3),

            # Interrupts (endpoint only: unused by a root port).
            i_cfg_interrupt              = 0,
            o_cfg_interrupt_rdy          = Open(),
            i_cfg_interrupt_assert       = 0,
            i_cfg_interrupt_di           = Constant(0, 8),
            i_cfg_interrupt_stat         = 0,
            i_cfg_pciecap_interrupt_msgnum = Constant(0, 5),

            # Physical layer.
            i_pl_directed_link_change    = Constant(0, 2),
            i_pl_directed_link_width     = Constant(0, 2),
            i_pl_directed_link_speed     = 0,
            i_pl_directed_link_auton     = 0,
            i_pl_upstream_prefer_deemph  = 1,
            o_pl_sel_lnk_rate            = lnk_rate,
            o_pl_sel_lnk_width           = lnk_width,
            o_pl_ltssm_state             = ltssm,
            i_pl_transmit_hot_rst        = 0,
            i_pl_downstream_deemph_source = 0,
        )

    # Hard IP sources ------------------------------------------------------------------------------
    def update_config(self, config):
        self.config.update(config)

    def get_ip_config(self):
        # Sources of each name and value: xilinx_ip_params.IP_PARAMS["pcie_7x"].
        config = {
            "Component_Name"                  : self.ip_name,
            "mode_selection"                  : "Advanced",
            "Device_Port_Type"                : "Root_Port_of_PCI_Express_Root_Complex",
            "Maximum_Link_Width"              : f"X{self.nlanes}",
            "Link_Speed"                      : "5.0_GT/s",
            "Trgt_Link_Speed"                 : "4'h2",
            "Interface_Width"                 : f"{self.data_width}_bit",
            "User_Clk_Freq"                   : int(self.userclk2_freq/1e6),
            "Ref_Clk_Freq"                    : f"{int(self.refclk_freq/1e6)}_MHz",
            "PCIe_Blk_Locn"                   : SiteValue(self.pcie_blk_locn),
            "Device_ID"                       : 7110 + self.nlanes,
            # Class code 060400 (PCI-to-PCI bridge) entered directly, the lookup menus unused.
            "Use_Class_Code_Lookup_Assistant" : "false",
            "Class_Code_Base"                 : "06",
            "Class_Code_Sub"                  : "04",
            "Class_Code_Interface"            : "00",
            "Bar0_Enabled"                    : "false", # The root port claims no BAR: DMA addresses pass.
            "Max_Payload_Size"                : f"{self.root_mps_cap}_bytes",
            "Legacy_Interrupt"                : "None",
            "IntX_Generation"                 : "false",
        }
        config.update(self.config)
        return config

    def add_sources(self, platform):
        tcl = ip_tcl("pcie_7x", self.ip_name, self.get_ip_config())
        platform.toolchain.pre_synthesis_commands += tcl
        self.ip_tcl = tcl

    def use_external_hard_ip(self, hard_ip_path, hard_ip_filename):
        self.external_hard_ip = True
        self.platform.add_ip(os.path.join(hard_ip_path, hard_ip_filename))

    # Placement ------------------------------------------------------------------------------------
    def add_placement(self, gt_channels, pcie_site=None):
        """Places the lanes' transceivers (``gt_channels[i]``: GTXE2_CHANNEL site of lane ``i``, e.g.
        ``"GTXE2_CHANNEL_X0Y12"``) and the integrated block (``pcie_site``, e.g. ``"PCIE_X0Y0"``):
        the IP places its lanes for the board's edge connector by default.

        Vivado pre-placement commands (``placement_commands``), which come after the IP's own XDC;
        like LitePCIe's S7PCIEPHY they also reset the IP's LOCs of its GTXE2_COMMON (one per quad)
        and, below x8, of its block RAMs (at least one), which its XDC ties to the default lane
        sites."""
        if len(gt_channels) != self.nlanes:
            raise ValueError(f"{self.nlanes} lanes need {self.nlanes} GT channel sites, "
                f"not {len(gt_channels)}.")
        for lane, site in enumerate(gt_channels):
            if not site.startswith("GTXE2_CHANNEL_"):
                raise ValueError(f"lane {lane}: {site} is not a GTXE2_CHANNEL site.")
        self.placement = (list(gt_channels), pcie_site)
        quads   = (self.nlanes + 3)//4
        release = [("GTXE2_COMMON", "GTXE2_COMMON", ".*gtx_common\\.gtxe2_common_i", quads)]
        if self.nlanes != 8:
            release.append(("block RAMs", "RAMB36E1", ".*genblk.*\\.bram36_tdp_bl\\.bram36_tdp_bl",
                None))
        self.platform.toolchain.pre_placement_commands += placement_commands(self.ip_name,
            gt_ref      = "GTXE2_CHANNEL",
            lane_regexp = ".*pipe_lane\\[{}\\].*",
            gt_channels = gt_channels,
            block_ref   = "PCIE_2_1",
            block_site  = pcie_site,
            release     = release)

    # Finalize -------------------------------------------------------------------------------------
    def do_finalize(self):
        if not self.external_hard_ip:
            self.add_sources(self.platform)
        self.specials += Instance(self.ip_name, name=self.ip_name, **self.ip_params)
