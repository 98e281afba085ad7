#
# This file is part of LiteRecorder.
#
# SPDX-License-Identifier: BSD-2-Clause

"""Root-port PHYs for the Xilinx UltraScale (pcie3_ultrascale, PG156) and UltraScale+
(pcie4_uscale_plus, PG213) PCIe integrated blocks.

::

             sys                    |                    pcie (user_clk)
    sink ---> PHYTXDatapath (CDC) --+--> TLPDescriptorBridge --> s_axis_rq (requests)
                                    |    (xilinx_us_descriptors,  -> s_axis_cc (completions)
    source <- PHYRXDatapath (CDC) <-+--- whole packets only)   <-- m_axis_rc (completions)
                                    |                          <-- m_axis_cq (requests)
    mgmt_sink/source <---- CDC ---->+-- RootPortConfiguration <---------------> cfg_mgmt_*
    perst --> PERST# pad, IP reset         link status <------------------------ cfg_*

Both families share the descriptor formats (``xilinx_us_descriptors``); they differ in tuser
widths, the configuration-management address port, the link-status encodings and the IP name.
TLPs on ``sink``/``source`` are in LitePCIe "little" endianness.
"""

import os

from migen import *
from migen.genlib.cdc import MultiReg, PulseSynchronizer, BusSynchronizer

from litex.gen import *

from litex.soc.interconnect import stream

from litepcie.common import phy_layout
from litepcie.phy.common import PHYTXDatapath, PHYRXDatapath

from literecorder.cores.pcie.requester import SHORT_TLP_DWORDS
from literecorder.cores.pcie.phy.common import *
from literecorder.cores.pcie.phy.xilinx_ip_params import SiteValue, GEN_SITES
from literecorder.cores.pcie.phy.xilinx_us_descriptors import *

# Family parameters --------------------------------------------------------------------------------

_FAMILIES = {
    "us" : dict(
        ip          = "pcie3_ultrascale",
        ip_name     = "pcie_us_rp",
        refclk_buf  = "IBUFDS_GTE3",
        speeds      = ["gen1", "gen2", "gen3"],
        plltype     = "QPLL1",
        device_id   = 0x8130,
    ),
    "usp" : dict(
        ip          = "pcie4_uscale_plus",
        ip_name     = "pcie_usp_rp",
        refclk_buf  = "IBUFDS_GTE4",
        speeds      = ["gen1", "gen2", "gen3"],
        plltype     = "QPLL1",      # PG239: the UltraScale+ PCIe GT default at Gen3 (QPLL0: Gen4).
        device_id   = 0x9130,
    ),
}

_LANE_RATE = {"gen1": 2e9, "gen2": 4e9, "gen3": 7.877e9} # Payload bits/s per lane.
_LINK_SPEED = {"gen1": "2.5_GT/s", "gen2": "5.0_GT/s", "gen3": "8.0_GT/s"}
_AXI_FREQ = 250e6
_USER_CLK_FREQS = [62.5e6, 125e6, 250e6] # Selectable user clock frequencies (PG156/PG213).

# Largest payload of the root complex's own requests (RCRequester: 1 or 2 dwords) and thus of the
# completions it receives: the size of the RQ and RC packet FIFOs.
SHORT_PAYLOAD = 4*(SHORT_TLP_DWORDS - 4)

# USRootPortDatapath -------------------------------------------------------------------------------

class USRootPortDatapath(LiteXModule):
    """TLP datapath of the UltraScale(+) root ports, between ``sys`` and the block's user clock.

    ::

                 sys                      |                  pcie (user_clk)
        sink ---> PHYTXDatapath (CDC) ----+--> TLPDescriptorBridge --> s_axis_rq, s_axis_cc
        source <- PHYRXDatapath (CDC) <---+--- (packet FIFOs)      <-- m_axis_rc, m_axis_cq
        dropped <- PulseSynchronizer <----+--- dropped
        discontinued <- BusSynchronizer <-+--- count of RC/CQ packets marked discontinue

    The clock crossing passes the TLP stream on with bubbles (the user clock a little faster than
    sys, completion data arriving late, a 250 MHz user clock against 125 MHz); the bridge's packet
    FIFOs hand each RQ/CC packet to the block only once it is whole, so ``tvalid`` stays asserted
    from its first to its last beat as PG156/PG213 require.

    Parameters
    ----------
    data_width : int
        Width of the TLP stream and of the block's interfaces, 128 or 256.
    family : str
        ``"us"`` or ``"usp"``.
    mps : int
        Largest payload (bytes) of a completion sent and of a write received: the Max Payload Size
        the BIOS may program in the device (the root port's ``root_mps_cap``).
    store_and_forward : bool
        See ``TLPDescriptorBridge`` (False only for measurements and tests).
    """
    def __init__(self, data_width, family, mps, store_and_forward=True):
        self.sink      = stream.Endpoint(phy_layout(data_width))
        self.source    = stream.Endpoint(phy_layout(data_width))
        self.dropped   = Signal()   # sys: pulses for each TLP the bridge could not carry.
        self.discontinued = Signal(32) # sys: RC/CQ packets marked discontinue, discarded.

        # # #

        # TX (Root Complex -> SSD): requests to RQ, completions to CC.
        self.tx_datapath = PHYTXDatapath(
            core_data_width = data_width,
            pcie_data_width = data_width,
            clock_domain    = "sys")
        self.bridge = bridge = ClockDomainsRenamer("pcie")(TLPDescriptorBridge(data_width, family,
            mps=mps, short_payload=SHORT_PAYLOAD, store_and_forward=store_and_forward))
        self.comb += [
            self.sink.connect(self.tx_datapath.sink),
            self.tx_datapath.source.connect(bridge.sink),
        ]
        self.s_axis_rq = bridge.s_axis_rq
        self.s_axis_cc = bridge.s_axis_cc

        # RX (SSD -> Root Complex): completions from RC, requests from CQ.
        self.rx_datapath = PHYRXDatapath(
            core_data_width = data_width,
            pcie_data_width = data_width,
            clock_domain    = "sys")
        self.comb += [
            bridge.source.connect(self.rx_datapath.sink),
            self.rx_datapath.source.connect(self.source),
        ]
        self.m_axis_rc = bridge.m_axis_rc
        self.m_axis_cq = bridge.m_axis_cq

        # Dropped TLPs (pcie domain pulses -> sys domain pulses).
        self.dropped_sync = ps = PulseSynchronizer("pcie", "sys")
        self.comb += [
            ps.i.eq(bridge.dropped),
            self.dropped.eq(ps.o),
        ]

        # Discarded packets marked discontinue: counted in pcie since configuration (not cleared by
        # the block's user_reset, e.g. at a link down), the count resynchronized (exact).
        count = Signal(32, reset_less=True)
        self.sync.pcie += count.eq(count + bridge.rc_discontinued + bridge.cq_discontinued)
        self.discontinued_sync = bs = BusSynchronizer(32, "pcie", "sys")
        self.comb += [
            bs.i.eq(count),
            self.discontinued.eq(bs.o),
        ]

# _USRootPortPHY -----------------------------------------------------------------------------------

class _USRootPortPHY(RootPortPHY):
    """Root port on an UltraScale(+) PCIe integrated block (see the module docstring).

    Parameters
    ----------
    platform : Platform
        Receives the IP TCL (``pre_synthesis_commands``) and the refclk constraint.
    pads : Record
        ``clk_p/clk_n`` (100 MHz refclk), ``tx_p/tx_n/rx_p/rx_n`` (1, 2, 4 or 8 lanes), optional
        ``rst_n`` (PERST# to the SSD, driven as an output).
    data_width : int
        AXI4-Stream width, 128 or 256; also the width of ``sink``/``source``. The user clock
        follows (Gen3 x4: 250 MHz at 128 bits, 125 MHz at 256 bits).
    speed : str
        Maximum link speed, ``"gen1"``, ``"gen2"`` or ``"gen3"``.
    mem_window : (int, int)
        Base and size of the non-prefetchable window holding the SSD's BAR0.
    max_payload_size, max_read_request_size : int
        DevCtl MPS (capped by the root port's DevCap) and MRRS of the root port. MPS defaults to
        ``root_mps_cap``: the root port must accept every TLP the SSD may send, and the BIOS programs
        the SSD's MPS as min(device, this) (``ROOT_CAPS``), never above the root port's.
    root_mps_cap : int
        Max Payload Size the root port supports (``pf0_dev_cap_max_payload``), 128 to 1024.
    sys_clk_freq : int
        Frequency of the sys clock domain (Hz). When given, PERST# goes through a
        ``PERSTSequencer`` (minimum assertion time ``perst_min_time``, 100 ms by default).
    perst_active_high : bool
        The PERST# pad (``perst``) is driven high to assert PERST# (an adapter that inverts it, as
        the FPGA Drive FMC); False: ``rst_n`` driven low.
    pcie_blk_locn : str
        Integrated block used (IP ``pcie_blk_locn``), e.g. ``"X0Y2"``; None: the IP's default.
    gt_quad : int
        Transceiver quad of the lanes. UltraScale+ (``pcie4_uscale_plus``): IP ``select_quad`` =
        ``GTH_Quad_<gt_quad>``. UltraScale (``pcie3_ultrascale``): not given to the IP (PG156 offers
        each block only its adjacent quads, e.g. 227 for X0Y2 at x4); the lanes' LOC constraints
        place them, as Opsero's KCU105 designs do. None: the IP's default.
    channel_loss : (str, int)
        The lanes' channel: IP ``ins_loss_profile`` (``"Chip-to-Chip"``, ``"Add-in_Card"``,
        ``"Backplane"``) and ``INS_LOSS_NYQ`` (insertion loss at Nyquist, dB), which set the
        transceivers' receiver equalization. None: the IP's defaults.
    ip_name : str
        Module name of the generated IP and of its instance (one per root port).
    """
    endianness = "little"
    family     = None

    def __init__(self, platform, pads, data_width=256, speed="gen3",
        mem_window=(0xe0000000, 0x100000), max_payload_size=None, max_read_request_size=512,
        root_mps_cap=512, ip_name=None, sys_clk_freq=None, perst_min_time=PERST_MIN_TIME,
        perst_active_high=False, pcie_blk_locn=None, gt_quad=None, channel_loss=None):
        family = self.family
        f      = _FAMILIES[family]
        nlanes = len(pads.tx_p)
        check_choice("nlanes (len(pads.tx_p))", nlanes, [1, 2, 4, 8])
        check_choice("data_width", data_width, [128, 256])
        check_choice("speed", speed, f["speeds"])
        if nlanes*_LANE_RATE[speed] > data_width*_AXI_FREQ:
            raise ValueError(f"{speed} x{nlanes} needs more than {data_width} bits at 250 MHz: "
                f"use data_width=256 or fewer lanes.")
        check_choice("root_mps_cap", root_mps_cap, [128, 256, 512, 1024])
        if max_payload_size is None:
            max_payload_size = root_mps_cap
        check_payload_sizes(max_payload_size, max_read_request_size, root_mps_cap)
        check_memory_window(mem_window)
        if channel_loss is not None:
            profile, loss = channel_loss
            check_choice("channel_loss profile", profile, ["Chip-to-Chip", "Add-in_Card", "Backplane"])
            if not (isinstance(loss, int) and 0 < loss <= 30):
                raise ValueError(f"channel_loss: insertion loss at Nyquist in whole dB (1 to 30), "
                    f"not {loss!r}.")
        self.platform         = platform
        self.data_width       = data_width
        self.nlanes           = nlanes
        self.speed            = speed
        self.root_mps_cap     = root_mps_cap
        self.max_payload_size = max_payload_size  # DevCtl MPS of the root port: the largest TLP it accepts.
        self.root_link_cap    = (int(speed[3:]), nlanes)   # (generation, lanes) the root port can train.
        self.ip               = f["ip"]
        self.ip_name          = ip_name or f["ip_name"]
        self.pcie_blk_locn    = pcie_blk_locn
        self.gt_quad          = gt_quad
        self.channel_loss     = channel_loss
        # User clock: the lowest of the block's frequencies that carries the link at this width
        # (PG156/PG213 "Supported clock frequencies and interface widths", e.g. Gen3 x4: 128 bits at
        # 250 MHz or 256 bits at 125 MHz).
        self.user_clk_freq    = min(f for f in _USER_CLK_FREQS if data_width*f >= nlanes*_LANE_RATE[speed])
        self.config           = {}
        self.external_hard_ip = False
        self._add_interface(data_width)

        # # #

        # Reset / PERST# ---------------------------------------------------------------------------
        self._add_reset(pads, sys_clk_freq, perst_min_time, perst_active_high)

        # Clocking ---------------------------------------------------------------------------------
        refclk    = Signal()
        refclk_gt = Signal()
        self.specials += Instance(f["refclk_buf"],
            p_REFCLK_HROW_CK_SEL = 0,
            i_CEB   = 0,
            i_I     = pads.clk_p,
            i_IB    = pads.clk_n,
            o_O     = refclk_gt,
            o_ODIV2 = refclk,
        )
        platform.add_period_constraint(pads.clk_p, 1e9/100e6)
        self.cd_pcie = ClockDomain()

        # TLP datapath (sys <-> pcie, RQ/CC/RC/CQ) -------------------------------------------------
        self.datapath = datapath = USRootPortDatapath(data_width, family, mps=root_mps_cap)
        self.comb += [
            self.sink.connect(datapath.sink),
            datapath.source.connect(self.source),
            self.dropped.eq(datapath.dropped),
            self.discontinued.eq(datapath.discontinued),
        ]
        s_axis_rq = datapath.s_axis_rq
        s_axis_cc = datapath.s_axis_cc
        m_axis_rc = datapath.m_axis_rc
        m_axis_cq = datapath.m_axis_cq

        # Root Port Configuration ------------------------------------------------------------------
        dl_up_pcie = Signal()
        mgmt = self._add_configuration(mem_window, max_payload_size, max_read_request_size,
            dl_up_pcie)

        # Link Status ------------------------------------------------------------------------------
        speed_width = {"us": 3, "usp": 2}[family]
        width_width = {"us": 4, "usp": 3}[family]
        current_speed      = Signal(speed_width)
        negotiated_width   = Signal(width_width)
        ltssm              = Signal(6)
        current_speed_sys  = Signal(speed_width)
        negotiated_width_sys = Signal(width_width)
        self.specials += [
            MultiReg(current_speed,    current_speed_sys,    "sys"),
            MultiReg(negotiated_width, negotiated_width_sys, "sys"),
            MultiReg(ltssm,            self.ltssm,           "sys"),
        ]
        if family == "us":
            # cfg_current_speed one-hot (001: 2.5, 010: 5.0, 100: 8.0 GT/s), cfg_negotiated_width
            # one-hot (0001: x1 ... 1000: x8), i.e. the lane count itself.
            self.comb += If(self.dl_up,
                Case(current_speed_sys, {1: self.link_gen.eq(1), 2: self.link_gen.eq(2),
                    4: self.link_gen.eq(3)}),
                self.link_width.eq(negotiated_width_sys),
            )
        else:
            # cfg_current_speed 00: 2.5 ... 11: 16 GT/s, cfg_negotiated_width 000: x1 ... 011: x8.
            self.comb += If(self.dl_up,
                self.link_gen.eq(current_speed_sys + 1),
                Case(negotiated_width_sys, {n: self.link_width.eq(1 << n) for n in range(4)}),
            )

        # Hard IP ----------------------------------------------------------------------------------
        rq_tready = Signal(4)
        cc_tready = Signal(4)
        self.comb += [
            s_axis_rq.ready.eq(rq_tready[0]),
            s_axis_cc.ready.eq(cc_tready[0]),
        ]
        m_axis_rc_tuser = Signal(RC_TUSER_WIDTH[family])
        m_axis_cq_tuser = Signal(CQ_TUSER_WIDTH[family])
        self.comb += [
            m_axis_rc.user.eq(m_axis_rc_tuser),
            m_axis_cq.user.eq(m_axis_cq_tuser),
        ]
        self.ip_params = dict(
            # Clock / Reset / Lanes.
            i_sys_clk                        = refclk,
            i_sys_clk_gt                     = refclk_gt,
            i_sys_reset                      = self.ip_rst_n, # Active low (default polarity).
            o_pci_exp_txp                    = pads.tx_p,
            o_pci_exp_txn                    = pads.tx_n,
            i_pci_exp_rxp                    = pads.rx_p,
            i_pci_exp_rxn                    = pads.rx_n,

            # Common.
            o_user_clk                       = ClockSignal("pcie"),
            o_user_reset                     = ResetSignal("pcie"),
            o_user_lnk_up                    = dl_up_pcie,
            o_phy_rdy_out                    = Open(),

            # Requester Request.
            i_s_axis_rq_tvalid               = s_axis_rq.valid,
            i_s_axis_rq_tlast                = s_axis_rq.last,
            o_s_axis_rq_tready               = rq_tready,
            i_s_axis_rq_tdata                = s_axis_rq.dat,
            i_s_axis_rq_tkeep                = s_axis_rq.keep,
            i_s_axis_rq_tuser                = s_axis_rq.user,

            # Requester Completion.
            o_m_axis_rc_tvalid               = m_axis_rc.valid,
            o_m_axis_rc_tlast                = m_axis_rc.last,
            i_m_axis_rc_tready               = m_axis_rc.ready,
            o_m_axis_rc_tdata                = m_axis_rc.dat,
            o_m_axis_rc_tkeep                = m_axis_rc.keep,
            o_m_axis_rc_tuser                = m_axis_rc_tuser,

            # Completer Request.
            o_m_axis_cq_tvalid               = m_axis_cq.valid,
            o_m_axis_cq_tlast                = m_axis_cq.last,
            i_m_axis_cq_tready               = m_axis_cq.ready,
            o_m_axis_cq_tdata                = m_axis_cq.dat,
            o_m_axis_cq_tkeep                = m_axis_cq.keep,
            o_m_axis_cq_tuser                = m_axis_cq_tuser,
            i_pcie_cq_np_req                 = Constant(1, {"us": 1, "usp": 2}[family]),

            # Completer Completion.
            i_s_axis_cc_tvalid               = s_axis_cc.valid,
            i_s_axis_cc_tlast                = s_axis_cc.last,
            o_s_axis_cc_tready               = cc_tready,
            i_s_axis_cc_tdata                = s_axis_cc.dat,
            i_s_axis_cc_tkeep                = s_axis_cc.keep,
            i_s_axis_cc_tuser                = s_axis_cc.user,

            # Status.
            o_cfg_current_speed              = current_speed,
            o_cfg_negotiated_width           = negotiated_width,
            o_cfg_ltssm_state                = ltssm,

            # Configuration management (the root port's own configuration space).
            i_cfg_mgmt_write                 = mgmt.write,
            i_cfg_mgmt_write_data            = mgmt.wdata,
            i_cfg_mgmt_byte_enable           = mgmt.be,
            i_cfg_mgmt_read                  = mgmt.read,
            o_cfg_mgmt_read_data             = mgmt.read_data,
            o_cfg_mgmt_read_write_done       = mgmt.done,

            # Configuration control.
            i_cfg_link_training_enable       = 1,
            i_cfg_config_space_enable        = 1,
            i_cfg_hot_reset_in               = 0,
            i_cfg_err_cor_in                 = 0,
            i_cfg_err_uncor_in               = 0,
            i_cfg_req_pm_transition_l23_ready = 0,
            i_cfg_power_state_change_ack     = 0,
            i_cfg_dsn                        = Constant(0, 64),
            i_cfg_ds_port_number             = Constant(0, 8),
            i_cfg_ds_bus_number              = Constant(0, 8),
            i_cfg_ds_device_number           = Constant(0, 5),
            i_cfg_fc_sel                     = Constant(0, 3),
            i_cfg_msg_transmit               = 0,
            i_cfg_msg_transmit_type          = Constant(0, 3),
            i_cfg_msg_transmit_data          = Constant(0, 32),
            i_cfg_interrupt_int              = Constant(0, 4),
        )
        if family == "us":
            self.ip_params.update(
                i_cfg_mgmt_addr                  = Cat(mgmt.adr, Constant(0, 9)), # Function 0.
                i_cfg_mgmt_type1_cfg_reg_access  = 0,
                i_cfg_ds_function_number         = Constant(0, 3),
                i_cfg_interrupt_pending          = Constant(0, 2),
            )
        else:
            self.ip_params.update(
                i_cfg_mgmt_addr                  = mgmt.adr,
                i_cfg_mgmt_function_number       = Constant(0, 8),
                i_cfg_mgmt_debug_access          = 0,
                i_cfg_interrupt_pending          = Constant(0, 4),
                i_cfg_pm_aspm_l1_entry_reject    = 0,
                i_cfg_pm_aspm_tx_l0s_entry_disable = 0,
            )

    # Hard IP sources ------------------------------------------------------------------------------
    def update_config(self, config):
        self.config.update(config)

    def get_ip_config(self):
        f = _FAMILIES[self.family]
        # Sources of each name and value: xilinx_ip_params.IP_PARAMS[self.ip].
        config = {
            "Component_Name"                : self.ip_name,
            "mode_selection"                : "Advanced",
            "device_port_type"              : "Root_Port_of_PCI_Express_Root_Complex",
            "PL_LINK_CAP_MAX_LINK_WIDTH"    : f"X{self.nlanes}",
            "PL_LINK_CAP_MAX_LINK_SPEED"    : _LINK_SPEED[self.speed],
            "axisten_if_width"              : f"{self.data_width}_bit",
            "axisten_freq"                  : f"{self.user_clk_freq/1e6:g}",
            "AXISTEN_IF_RC_STRADDLE"        : "false",
            "axisten_if_enable_client_tag"  : "true",
            "extended_tag_field"            : "true",
            "PF0_DEVICE_ID"                 : f"{f['device_id'] + self.nlanes:04X}",
            # Class code 060400 (PCI-to-PCI bridge) entered directly, the lookup menus unused.
            "PF0_Use_Class_Code_Lookup_Assistant" : "false",
            "PF0_CLASS_CODE"                : "060400",
            "pf0_bar0_enabled"              : "false", # The root port claims no BAR.
            "pf0_dev_cap_max_payload"       : f"{self.root_mps_cap}_bytes",
            "PF0_INTERRUPT_PIN"             : "NONE",
            "aspm_support"                  : "No_ASPM",
            # PG213/PG156: core clock 250 MHz up to x4 (500 only from Gen3 x8).
            "coreclk_freq"                  : 500 if self.speed == "gen3" and self.nlanes >= 8 else 250,
            "plltype"                       : f["plltype"],
            "REF_CLK_FREQ"                  : "100_MHz",
        }
        if self.family == "usp":
            # The Type 1 memory base/limit registers (pcie4_uscale_plus only: pcie3_ultrascale 4.4 has
            # no such parameter, xilinx_ip_params.NOT_ON_BLOCK).
            config["type1_membase_memlimit_enable"] = "Enabled"
        if self.channel_loss is not None:
            # Insertion-loss profile of the lanes' channel and its loss at Nyquist (dB): they set
            # the transceivers' receiver equalization.
            config["ins_loss_profile"], config["INS_LOSS_NYQ"] = self.channel_loss
        if self.pcie_blk_locn is not None:
            config["pcie_blk_locn"] = SiteValue(self.pcie_blk_locn)
            # The block's generation flag true, every other one false (as the published complete
            # parameter lists show them with the block; litex-boards sets them with pcie_blk_locn).
            for site in GEN_SITES[self.ip]:
                config[f"gen_{site}"] = "true" if site == self.pcie_blk_locn.lower() else "false"
        if self.gt_quad is not None and self.family == "usp":
            config["en_gt_selection"] = "true"
            config["select_quad"]     = f"GTH_Quad_{self.gt_quad}"
        config.update(self.config)
        return config

    def add_sources(self, platform):
        tcl = ip_tcl(self.ip, self.ip_name, self.get_ip_config())
        platform.toolchain.pre_synthesis_commands += tcl
        self.ip_tcl = tcl

    def use_external_hard_ip(self, hard_ip_path, hard_ip_filename):
        self.external_hard_ip = True
        self.platform.add_ip(os.path.join(hard_ip_path, hard_ip_filename))

    # Placement ------------------------------------------------------------------------------------
    def add_placement(self, gt_channels, pcie_site=None):
        """Places the lanes' transceivers (``gt_channels[i]``: GTHE3/GTHE4_CHANNEL site of lane ``i``,
        e.g. ``"GTHE3_CHANNEL_X0Y16"``) and the integrated block (``pcie_site``, e.g.
        ``"PCIE_3_1_X0Y2"``). Boards route lanes to quads in their own order (an FMC's DP pairs are
        not always channels 0..3 of one quad in order): the pins decide, these LOCs follow them.

        Vivado pre-placement commands (``placement_commands``), which come after the IP's own XDC;
        the lane cells are found as in Opsero's FPGA Drive FMC constraints (``channel_inst[i]``)."""
        if len(gt_channels) != self.nlanes:
            raise ValueError(f"{self.nlanes} lanes need {self.nlanes} GT channel sites, "
                f"not {len(gt_channels)}.")
        gt = {"us": "GTHE3_CHANNEL", "usp": "GTHE4_CHANNEL"}[self.family]
        for lane, site in enumerate(gt_channels):
            if not site.startswith(gt + "_"):
                raise ValueError(f"lane {lane}: {site} is not a {gt} site.")
        self.placement = (list(gt_channels), pcie_site)
        # UltraScale: the IP is not told the lanes' quad (pcie3_ultrascale's quads per block, PG156),
        # so its XDC LOCs its GTHE3_COMMON (QPLL, one per quad) on its default quad: released like the
        # channels, the placer puts it in the quad of the channels it clocks. UltraScale+: the IP's
        # select_quad places it.
        release = []
        if self.family == "us":
            release.append(("GTHE3_COMMON", "GTHE3_COMMON", ".*", (self.nlanes + 3)//4))
        self.platform.toolchain.pre_placement_commands += placement_commands(self.ip_name,
            gt_ref      = gt,
            lane_regexp = ".*channel_inst\\[{}\\].*",
            gt_channels = gt_channels,
            block_ref   = {"us": "PCIE_3_1", "usp": "PCIE40E4"}[self.family],
            block_site  = pcie_site,
            release     = release)

    # Finalize -------------------------------------------------------------------------------------
    def do_finalize(self):
        if not self.external_hard_ip:
            self.add_sources(self.platform)
        self.specials += Instance(self.ip_name, name=self.ip_name, **self.ip_params)

# USRootPortPHY ------------------------------------------------------------------------------------

class USRootPortPHY(_USRootPortPHY):
    """Root port on the UltraScale PCIe Gen3 integrated block (pcie3_ultrascale)."""
    family = "us"

# USPRootPortPHY -----------------------------------------------------------------------------------

class USPRootPortPHY(_USRootPortPHY):
    """Root port on the UltraScale+ PCIe integrated block (pcie4_uscale_plus)."""
    family = "usp"
