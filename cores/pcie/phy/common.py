#
# This file is part of LiteRecorder.
#
# SPDX-License-Identifier: BSD-2-Clause

"""Pieces shared by the root-port PHY wrappers: parameter checks, the configuration-management
master, the root port's own configuration (Type-1 header) and the PHY base class with its
core-facing interface and CSRs."""

from migen import *
from migen.genlib.cdc import MultiReg

from litex.gen import *

from litex.soc.interconnect import stream
from litex.soc.interconnect.csr import *

from litepcie.common import phy_layout

# Constants ----------------------------------------------------------------------------------------

MiB = 1024*1024

PCIE_CAPABILITY_ID = 0x10

# Type-1 header dwords (PCI-to-PCI bridge).
CFG_COMMAND_STATUS    = 0x04 >> 2 # Command [15:0], Status [31:16] (RW1C: never written).
CFG_BUS_NUMBERS       = 0x18 >> 2 # Primary, Secondary, Subordinate bus, secondary latency timer.
CFG_IO_BASE_LIMIT     = 0x1c >> 2 # I/O base [7:0], I/O limit [15:8], secondary status [31:16].
CFG_MEM_BASE_LIMIT    = 0x20 >> 2 # Memory base [15:4] = A[31:20], memory limit [31:20] = A[31:20].
CFG_PREF_BASE_LIMIT   = 0x24 >> 2 # Prefetchable memory base/limit.
CFG_PREF_BASE_UPPER   = 0x28 >> 2
CFG_PREF_LIMIT_UPPER  = 0x2c >> 2
CFG_CAPABILITIES_PTR  = 0x34 >> 2

COMMAND_MEMORY_SPACE = 1 << 1
COMMAND_BUS_MASTER   = 1 << 2

PAYLOAD_SIZES = [128, 256, 512, 1024, 2048, 4096] # DevCap/DevCtl encodings 0..5.

# Parameter checks ---------------------------------------------------------------------------------

def check_choice(name, value, allowed):
    if value not in allowed:
        raise ValueError(f"{name} must be one of {allowed}, not {value!r}.")

def check_memory_window(mem_window):
    """The window of the SSD's BAR (non-prefetchable memory base/limit of the root port)."""
    try:
        base, size = mem_window
    except (TypeError, ValueError):
        raise ValueError(f"mem_window must be a (base, size) tuple, not {mem_window!r}.")
    if (size <= 0) or (size % MiB):
        raise ValueError(f"mem_window size must be a non-zero multiple of 1 MiB (memory base/limit "
            f"granularity), not {size:#x}.")
    if base % MiB:
        raise ValueError(f"mem_window base must be 1 MiB aligned, not {base:#x}.")
    if (base < 0) or (base + size > 2**32):
        raise ValueError(f"mem_window [{base:#x}, {base + size:#x}) must lie below 4 GiB: the "
            f"non-prefetchable window of a bridge is 32-bit.")
    return base, size

def check_payload_sizes(max_payload_size, max_read_request_size, root_mps_cap):
    check_choice("max_payload_size", max_payload_size, [s for s in PAYLOAD_SIZES if s <= root_mps_cap])
    check_choice("max_read_request_size", max_read_request_size, PAYLOAD_SIZES)

# IP TCL -------------------------------------------------------------------------------------------

def ip_tcl(ip, module_name, config):
    """Vivado TCL creating the integrated block's IP (as LitePCIe PHYs add theirs to the platform's
    ``pre_synthesis_commands``, whose entries LiteX passes through ``str.format``).

    The IP is created at the version whose complete parameter list every CONFIG name was checked
    against (``xilinx_ip_params``); a comment above the property list names any name added by the
    user that is not in that list. Entries whose value is None are left out (the IP's default):
    ``phy.update_config({name: None})`` removes one. A ``SiteValue`` is written in the form of the
    IP's own default (``literec_site_value``, ``soc/vivado.py``)."""
    from literecorder.cores.pcie.phy.xilinx_ip_params import confirmed_name, IP_VERSIONS, SiteValue
    config  = {k: v for k, v in config.items() if v is not None}
    unknown = [k for k in config if confirmed_name(ip, k) is None]
    tcl = [f"# {module_name}: {ip} {IP_VERSIONS[ip]} in root-port mode (LiteRecorder root-port PHY)."]
    if unknown:
        tcl.append("# CONFIG names added by the user, not in LiteRecorder's confirmed list: "
            + ", ".join(unknown) + ".")
    tcl.append(f"create_ip -vendor xilinx.com -library ip -name {ip} -version {IP_VERSIONS[ip]} "
        f"-module_name {module_name}")
    tcl.append(f"set obj [get_ips {module_name}]")
    sites = {}
    for name, value in config.items():
        if isinstance(value, SiteValue):
            sites[name] = f"literec_{name.lower()}"
            tcl.append(f"set {sites[name]} [literec_site_value $obj {name} {value}]")
    tcl.append("set_property -dict [list \\")
    for name, value in config.items():
        if name in sites:
            tcl.append(f"CONFIG.{name} ${sites[name]} \\")
        else:
            tcl.append(f"CONFIG.{name} {{{{{value}}}}} \\") # Braces doubled: commands are format()ed.
    tcl.append("] $obj")
    tcl.append("synth_ip $obj")
    return tcl

def cells_filter(ip_name, ref_name, name_regexp=".*"):
    """``get_cells -regexp -filter`` expression of the IP instance ``ip_name``'s leaf cells of
    primitive ``ref_name`` whose name matches ``ip_name/<name_regexp>``.

    The primitive is selected by its library name (``REF_NAME``): the group part of PRIMITIVE_TYPE
    differs in case between the families (7 series ``IO.gt.GTXE2_CHANNEL`` in Xilinx's pcie_7x XDC and
    Ettus's X300 XDC, UltraScale ``ADVANCED.GT.GTHE3_CHANNEL`` in Opsero's), and a ``-regexp`` match is
    case-sensitive."""
    return f"REF_NAME == {ref_name} && NAME =~ \"{ip_name}/{name_regexp}\""

def placement_commands(ip_name, gt_ref, lane_regexp, gt_channels, block_ref, block_site,
    release=()):
    """Vivado pre-placement TCL that puts lane ``i``'s transceiver channel on ``gt_channels[i]`` and
    the integrated block on ``block_site``, and releases the IP's LOCs of ``release`` cells
    ((what, ref_name, name_regexp, count or None for "at least one")).

    LiteX reads its XDC with PROCESSING_ORDER EARLY; the IP's own XDC comes after it and LOCs the
    lanes on the IP's default sites (last physical constraint wins), so LOCs in LiteX's XDC would be
    overridden. Commands run before ``place_design`` (``pre_placement_commands``) come after every
    XDC: they first reset the IP's LOCs, then set ours (as LitePCIe's ``add_gt_loc_constraints``).
    Every filter is checked: the script stops, naming the filter, unless it finds the expected number
    of cells (``soc/vivado.py``, ``literec_cells``)."""
    from literecorder.soc.vivado import cells
    n = len(gt_channels)
    cmds = [f"# {ip_name}: lanes and integrated block on the FPGA Drive FMC's sites."]
    cmds.append("reset_property LOC " + cells(f"{ip_name} transceiver channels",
        cells_filter(ip_name, gt_ref), count=n))
    for lane, site in enumerate(gt_channels):
        cmds.append(f"set_property LOC {site} " + cells(f"{ip_name} lane {lane}",
            cells_filter(ip_name, gt_ref, lane_regexp.format(lane)), count=1))
    if block_site is not None:
        block = cells(f"{ip_name} integrated block", cells_filter(ip_name, block_ref), count=1)
        cmds.append(f"reset_property LOC {block}")
        cmds.append(f"set_property LOC {block_site} {block}")
    for what, ref, regexp, count in release:
        cmds.append("reset_property LOC " + cells(f"{ip_name} {what}", cells_filter(ip_name, ref, regexp),
            **(dict(count=count) if count is not None else dict(at_least=1))))
    return cmds

# Layouts ------------------------------------------------------------------------------------------

def mgmt_request_layout():
    return [
        ("we",   1), # 1: write, 0: read.
        ("adr", 10), # Dword address in the root port's configuration space.
        ("dat", 32), # Write data.
        ("be",   4), # Byte enables of the write.
    ]

def mgmt_response_layout():
    return [
        ("dat", 32), # Read data.
        ("err",  1), # The access was not acknowledged by the integrated block (timeout).
    ]

# Configuration Management Master ------------------------------------------------------------------

class ConfigurationManagementMaster(LiteXModule):
    """One access of the integrated block's configuration-management port per request.

    ``read``/``write`` stay asserted with a stable address until ``done`` (PG054/PG156/PG213), and
    drop for at least one cycle between accesses. An access that is not acknowledged within
    ``timeout`` cycles completes with ``err``. The request is acknowledged with its response.
    """
    def __init__(self, timeout=1024):
        self.sink   = sink   = stream.Endpoint(mgmt_request_layout())
        self.source = source = stream.Endpoint(mgmt_response_layout())
        self.idle   = Signal()

        # Integrated block side.
        self.adr       = Signal(10)
        self.wdata     = Signal(32)
        self.be        = Signal(4)
        self.write     = Signal()
        self.read      = Signal()
        self.read_data = Signal(32)
        self.done      = Signal()

        # # #

        count = Signal(max=timeout + 1)
        self.comb += [
            self.adr.eq(sink.adr),
            self.wdata.eq(sink.dat),
            self.be.eq(Mux(sink.we, sink.be, 0)),
        ]
        self.fsm = fsm = FSM(reset_state="IDLE")
        fsm.act("IDLE",
            self.idle.eq(1),
            NextValue(count, 0),
            If(sink.valid,
                NextState("ACCESS")
            )
        )
        fsm.act("ACCESS",
            self.write.eq(sink.we),
            self.read.eq(~sink.we),
            NextValue(count, count + 1),
            If(self.done | (count == timeout),
                NextValue(source.dat, self.read_data),
                NextValue(source.err, ~self.done),
                NextState("RESPOND")
            )
        )
        fsm.act("RESPOND",
            source.valid.eq(1),
            If(source.ready,
                sink.ready.eq(1),
                NextState("IDLE")
            )
        )

# Root Port Configuration --------------------------------------------------------------------------

class RootPortConfiguration(LiteXModule):
    """Programs the root port's own Type-1 header after each link-up.

    ::

        link up --> bus numbers 0/1/1 --> I/O window off --> memory window (SSD BAR) -->
        prefetchable window off --> find the PCIe capability --> DevCtl MPS/MRRS -->
        Command MEM+BME --> ready (until the link goes down, then again)

    Without the memory window the root port answers downstream MRd/MWr to the SSD's BAR with
    Unsupported Request; without Bus Master Enable it master-aborts the SSD's DMA. The prefetchable
    and I/O windows are closed (base > limit) so that no host-memory address is claimed by the
    bridge. DevCtl MPS is min(max_payload_size, the root port's DevCap). The user port
    (``user_sink``/``user_source``) is served when the sequence is not running.
    """
    def __init__(self, mem_window, max_payload_size=256, max_read_request_size=512,
        extended_tags=True, timeout=1024):
        mem_base, mem_size = check_memory_window(mem_window)
        check_payload_sizes(max_payload_size, max_read_request_size, root_mps_cap=4096)
        self.max_payload_size = max_payload_size
        self.link_up     = Signal() # In: data link layer up.
        self.ready       = Signal() # Out: programmed since the last link-up.
        self.error       = Signal() # Out: an access failed or no PCIe capability was found.
        self.user_sink   = stream.Endpoint(mgmt_request_layout())
        self.user_source = stream.Endpoint(mgmt_response_layout())
        self.master      = master = ConfigurationManagementMaster(timeout)

        # # #

        mem_last = mem_base + mem_size - 1
        header = [ # (dword, value, byte enables)
            (CFG_BUS_NUMBERS,      0x00010100,                                          0b0111),
            (CFG_IO_BASE_LIMIT,    0x000000f0,                                          0b0011),
            (CFG_MEM_BASE_LIMIT,   ((mem_base >> 16) & 0xfff0) | ((mem_last & 0xfff00000)), 0b1111),
            (CFG_PREF_BASE_LIMIT,  0x0000fff0,                                          0b1111),
            (CFG_PREF_BASE_UPPER,  0x00000000,                                          0b1111),
            (CFG_PREF_LIMIT_UPPER, 0x00000000,                                          0b1111),
        ]
        self.header = header
        mps_code  = PAYLOAD_SIZES.index(max_payload_size)
        mrrs_code = PAYLOAD_SIZES.index(max_read_request_size)

        req = stream.Endpoint(mgmt_request_layout())
        rsp = stream.Endpoint(mgmt_response_layout())
        own = Signal() # The sequence owns the master.
        self.comb += [
            If(own,
                req.connect(master.sink),
                master.source.connect(rsp),
            ).Else(
                self.user_sink.connect(master.sink),
                master.source.connect(self.user_source),
            ),
            rsp.ready.eq(1),
        ]

        step      = Signal(max=len(header))
        pointer   = Signal(6) # Dword index of the capability being read.
        hops      = Signal(4)
        cap       = Signal(6) # Dword index of the PCIe capability.
        dev_mps   = Signal(3)
        devctl    = Signal(16)
        new_mps   = Signal(3)
        new_devctl = Signal(16)
        self.comb += [
            new_mps.eq(Mux(dev_mps < mps_code, dev_mps, mps_code)),
            new_devctl.eq(Cat(devctl[0:5], new_mps, devctl[8] | int(extended_tags), devctl[9:12],
                C(mrrs_code, 3), devctl[15])),
        ]
        rom_adr = Array(C(a, 10) for a, _, _ in header)
        rom_dat = Array(C(d, 32) for _, d, _ in header)
        rom_be  = Array(C(b,  4) for _, _, b in header)

        def access(we, adr, dat=0, be=0b1111):
            return [req.valid.eq(1), req.we.eq(we), req.adr.eq(adr), req.dat.eq(dat), req.be.eq(be)]

        self.fsm = fsm = FSM(reset_state="WAIT-LINK-UP")
        fsm.act("WAIT-LINK-UP",
            If(self.link_up & master.idle & ~self.user_sink.valid,
                NextValue(step, 0),
                NextState("WRITE-HEADER")
            )
        )
        fsm.act("WRITE-HEADER",
            own.eq(1),
            access(1, rom_adr[step], rom_dat[step], rom_be[step]),
            If(rsp.valid,
                NextValue(step, step + 1),
                If(rsp.err,
                    NextState("FAILED")
                ).Elif(step == (len(header) - 1),
                    NextState("READ-CAPABILITIES-POINTER")
                )
            )
        )
        fsm.act("READ-CAPABILITIES-POINTER",
            own.eq(1),
            access(0, CFG_CAPABILITIES_PTR),
            If(rsp.valid,
                NextValue(pointer, rsp.dat[2:8]),
                NextValue(hops, 0),
                If(rsp.err,
                    NextState("FAILED")
                ).Else(
                    NextState("READ-CAPABILITY")
                )
            )
        )
        fsm.act("READ-CAPABILITY",
            own.eq(1),
            If((pointer == 0) | (hops == (2**len(hops) - 1)),
                NextState("FAILED")
            ).Else(
                access(0, pointer),
                If(rsp.valid,
                    NextValue(pointer, rsp.dat[10:16]),
                    NextValue(hops, hops + 1),
                    If(rsp.err,
                        NextState("FAILED")
                    ).Elif(rsp.dat[0:8] == PCIE_CAPABILITY_ID,
                        NextValue(cap, pointer),
                        NextState("READ-DEVCAP")
                    )
                )
            )
        )
        fsm.act("READ-DEVCAP",
            own.eq(1),
            access(0, cap + 1),
            If(rsp.valid,
                NextValue(dev_mps, rsp.dat[0:3]),
                If(rsp.err,
                    NextState("FAILED")
                ).Else(
                    NextState("READ-DEVCTL")
                )
            )
        )
        fsm.act("READ-DEVCTL",
            own.eq(1),
            access(0, cap + 2),
            If(rsp.valid,
                NextValue(devctl, rsp.dat[0:16]),
                If(rsp.err,
                    NextState("FAILED")
                ).Else(
                    NextState("WRITE-DEVCTL")
                )
            )
        )
        fsm.act("WRITE-DEVCTL",
            own.eq(1),
            access(1, cap + 2, new_devctl, 0b0011), # DevStatus (RW1C) untouched.
            If(rsp.valid,
                If(rsp.err,
                    NextState("FAILED")
                ).Else(
                    NextState("WRITE-COMMAND")
                )
            )
        )
        fsm.act("WRITE-COMMAND",
            own.eq(1),
            access(1, CFG_COMMAND_STATUS, COMMAND_MEMORY_SPACE | COMMAND_BUS_MASTER, 0b0011),
            If(rsp.valid,
                If(rsp.err,
                    NextState("FAILED")
                ).Else(
                    NextState("READY")
                )
            )
        )
        fsm.act("READY",
            self.ready.eq(1),
            If(~self.link_up,
                NextState("WAIT-LINK-UP")
            )
        )
        fsm.act("FAILED",
            self.error.eq(1),
            If(~self.link_up,
                NextState("WAIT-LINK-UP")
            )
        )

# PERST# Sequencer ---------------------------------------------------------------------------------

PERST_MIN_TIME = 100e-3 # T_PVPERL (PCIe CEM): PERST# asserted >= 100 ms after power/refclk are stable.

class PERSTSequencer(LiteXModule):
    """PERST# timing of a root port.

    ::

        request (CSR) --+--> [ assert at once ] --> perst (pad, integrated block reset)
                        +--> [ release only after min_time of assertion ]

    PERST# is asserted at reset (FPGA configuration) and whenever ``request`` is set; it is released
    only when ``request`` is clear *and* it has been asserted for at least ``min_time`` without
    interruption (``PERST_MIN_TIME``, T_PVPERL of the PCIe CEM specification: 100 ms after power
    and the reference clock are stable). Software can thus release PERST# right after boot, or
    pulse it, and the SSD still sees a compliant fundamental reset. ``holding`` is 1 while the
    minimum time runs.

    Parameters
    ----------
    sys_clk_freq : int
        Frequency of the clock domain of this module (Hz).
    min_time : float
        Minimum assertion time (s), positive.
    """
    def __init__(self, sys_clk_freq, min_time=PERST_MIN_TIME):
        if not (min_time > 0):
            raise ValueError(f"min_time must be positive (seconds), not {min_time!r}.")
        if not (sys_clk_freq > 0):
            raise ValueError(f"sys_clk_freq must be positive (Hz), not {sys_clk_freq!r}.")
        self.cycles  = cycles = max(1, int(-(-min_time*sys_clk_freq//1)))
        self.request = Signal(reset=1) # In: 1 = assert PERST#.
        self.perst   = Signal(reset=1) # Out: 1 = PERST# asserted.
        self.holding = Signal()        # Out: minimum assertion time not elapsed.

        # # #

        count = Signal(max=cycles + 1, reset=cycles)
        self.comb += self.holding.eq(self.perst & (count != 0))
        self.sync += [
            If(self.perst,
                If(count != 0,
                    count.eq(count - 1)
                ).Elif(~self.request,
                    self.perst.eq(0)
                )
            ).Elif(self.request,
                self.perst.eq(1),
                count.eq(cycles)
            )
        ]

# Root Port PHY ------------------------------------------------------------------------------------

class RootPortPHY(LiteXModule):
    """Base of the root-port PHY wrappers: core-facing interface, management, status, CSRs.

    Core-facing interface (sys clock domain)::

        sink   (phy_layout)  TLPs to the device     mgmt_sink   (we, adr, dat, be) accesses to the
        source (phy_layout)  TLPs from the device   mgmt_source (dat, err)         root port's config
        link_up, link_gen, link_width, ltssm        perst (in: 1 = PERST# asserted)

    ``link_up`` is 1 when the data link layer is up *and* the root port's own configuration has
    been programmed (``RootPortConfiguration``): downstream memory requests and upstream DMA work
    from then on.
    """
    endianness = "little"

    def _add_interface(self, data_width):
        self.sink        = stream.Endpoint(phy_layout(data_width))
        self.source      = stream.Endpoint(phy_layout(data_width))
        self.mgmt_sink   = stream.Endpoint(mgmt_request_layout())
        self.mgmt_source = stream.Endpoint(mgmt_response_layout())
        self.link_up     = Signal()
        self.link_gen    = Signal(3)
        self.link_width  = Signal(4)
        self.ltssm       = Signal(6)
        self.dl_up       = Signal() # Data link layer up (before the root port is programmed).
        self.configured  = Signal() # Root port programmed since the last link-up.
        self.config_error = Signal()
        self.dropped     = Signal() # Pulses for each TLP the PHY could not carry (see wrappers).
        self.discontinued = Signal(32) # Received TLPs the block marked discontinue, discarded.
        self.perst       = Signal()

    # Resync Helper --------------------------------------------------------------------------------
    def add_resync(self, sig, clk="sys"):
        _sig = Signal.like(sig)
        self.specials += MultiReg(_sig, sig, clk)
        return _sig

    # Reset / PERST# -------------------------------------------------------------------------------
    def _add_reset(self, pads, sys_clk_freq=None, perst_min_time=PERST_MIN_TIME, perst_active_high=False):
        """PERST# to the SSD follows ``perst`` through a ``PERSTSequencer`` (when ``sys_clk_freq`` is
        known: minimum assertion time); the integrated block is held in reset with it.

        The pad: ``rst_n``/``perst_n`` driven low to assert PERST# (the SSD's own pin, or a carrier
        that passes it through), or ``perst`` driven high to assert it (``perst_active_high``: an
        adapter that inverts the pin before the SSD, as the FPGA Drive FMC does,
        ``soc/fpga_drive_fmc.py``). A pad name that contradicts the polarity is refused."""
        self.ip_rst_n = ip_rst_n = Signal()
        if sys_clk_freq is None:
            perst = self.perst
        else:
            self.perst_sequencer = sequencer = PERSTSequencer(sys_clk_freq, perst_min_time)
            self.comb += sequencer.request.eq(self.perst)
            perst = sequencer.perst
        perst_pin = Signal(reset=int(bool(perst_active_high))) # The pad's level (asserted at reset).
        self.sync += [
            perst_pin.eq(perst if perst_active_high else ~perst),
            ip_rst_n.eq(~perst),
        ]
        names = [n for n in ("rst_n", "perst_n", "perst") if hasattr(pads, n)]
        if len(names) > 1:
            raise ValueError(f"PERST# pads: one of rst_n, perst_n (active low) or perst (active high), "
                f"not {', '.join(names)}.")
        self.perst_pad = getattr(pads, names[0]) if names else None
        self.perst_active_high = perst_active_high
        if names:
            if (names[0] == "perst") != bool(perst_active_high):
                raise ValueError(f"PERST# pad {names[0]!r} is active "
                    f"{'low' if names[0].endswith('_n') else 'high'}, but perst_active_high="
                    f"{perst_active_high!r}: name the pad 'perst' for a pin driven high to assert PERST#, "
                    "'rst_n' for one driven low.")
            self.comb += self.perst_pad.eq(perst_pin)

    # Timing constraints ---------------------------------------------------------------------------
    def add_timing_constraints(self, platform, sys_clk, sys_clk_freq):
        """Constraints of the sys <-> pcie (user clock) crossings of this PHY.

        Every signal crossing between the two clocks goes through a synchronizer: LiteX's
        ``MultiReg`` (status, link up, pointer bits of the asynchronous FIFOs: false-pathed by LiteX's
        ``mr_ff`` rule) or the data path of an ``AsyncFIFO`` (TX/RX datapaths, management port),
        whose RAM output is read only after its write pointer has crossed through a ``MultiReg``.
        The latter gets a ``set_max_delay -datapath_only`` of one period of the destination clock
        (not a false path: the data must arrive before the synchronized pointer does), in the build
        script's LATE XDC (``soc/vivado.py``): the pcie clock exists only once the IP's constraints
        (pcie_7x: its TXOUTCLK clock) or the reference clock's ``create_clock`` were read. PERST# to
        the SSD is asynchronous at the SSD (its input has no clock): a false path to the pad.
        """
        from literecorder.soc.vivado import add_clock_crossing
        add_clock_crossing(platform, sys_clk, sys_clk_freq, self.cd_pcie.clk, self.user_clk_freq)
        if self.perst_pad is not None:
            platform.add_platform_command("set_false_path -to [get_ports {{{perst}}}]",
                perst=self.perst_pad)

    # Root Port Configuration ----------------------------------------------------------------------
    def _add_configuration(self, mem_window, max_payload_size, max_read_request_size, dl_up_pcie):
        self.configuration = configuration = ClockDomainsRenamer("pcie")(RootPortConfiguration(
            mem_window            = mem_window,
            max_payload_size      = max_payload_size,
            max_read_request_size = max_read_request_size,
        ))
        self.comb += configuration.link_up.eq(dl_up_pcie)
        self.mgmt_request_cdc = stream.ClockDomainCrossing(mgmt_request_layout(),
            cd_from="sys", cd_to="pcie", with_common_rst=True, depth=4)
        self.mgmt_response_cdc = stream.ClockDomainCrossing(mgmt_response_layout(),
            cd_from="pcie", cd_to="sys", with_common_rst=True, depth=4)
        self.comb += [
            self.mgmt_sink.connect(self.mgmt_request_cdc.sink),
            self.mgmt_request_cdc.source.connect(configuration.user_sink),
            configuration.user_source.connect(self.mgmt_response_cdc.sink),
            self.mgmt_response_cdc.source.connect(self.mgmt_source),
        ]
        self.specials += [
            MultiReg(dl_up_pcie,                self.dl_up,        "sys"),
            MultiReg(configuration.ready,       self.configured,   "sys"),
            MultiReg(configuration.error,       self.config_error, "sys"),
        ]
        self.comb += self.link_up.eq(self.dl_up & self.configured)
        return configuration.master

    # CSRs -----------------------------------------------------------------------------------------
    def add_csr(self, default_perst=0):
        """Link status, PERST# control and the configuration-management access port as CSRs."""
        self._link_status = CSRStatus(fields=[
            CSRField("link_up", size=1, offset=0, description="Link usable.", values=[
                ("``0b0``", "Link down, or root port not programmed yet."),
                ("``0b1``", "Data link layer up and root port programmed."),
            ]),
            CSRField("dl_up", size=1, offset=1, description="Data link layer up (integrated block)."),
            CSRField("configured", size=1, offset=2,
                description="Root port Type-1 header programmed since the last link-up."),
            CSRField("config_error", size=1, offset=3, description="Root port programming failed "
                "(management access timeout or no PCIe capability); retried at the next link-up."),
            CSRField("gen", size=3, offset=4, description="Trained generation, 0 when down.",
                values=[("``1``", "2.5 GT/s."), ("``2``", "5.0 GT/s."), ("``3``", "8.0 GT/s."),
                    ("``4``", "16.0 GT/s.")]),
            CSRField("width", size=4, offset=8, description="Trained width in lanes, 0 when down.",
                values=[("``1``", "x1."), ("``2``", "x2."), ("``4``", "x4."), ("``8``", "x8.")]),
            CSRField("ltssm", size=6, offset=16,
                description="Raw LTSSM state of the integrated block (family-specific encoding)."),
        ])
        self._perst = CSRStorage(fields=[
            CSRField("active", size=1, reset=default_perst, description="PERST# to the SSD.",
                values=[
                    ("``0b0``", "PERST# deasserted: the link may train."),
                    ("``0b1``", "PERST# asserted: SSD and root port held in reset (hold >= 100 ms)."),
                ]),
        ])
        self._cfg_adr   = CSRStorage(10, description="Dword address in the root port's "
            "configuration space (byte offset / 4).")
        self._cfg_wdata = CSRStorage(32, description="Write data of the next configuration write.")
        self._cfg_ctrl  = CSRStorage(fields=[
            CSRField("be", size=4, offset=0, reset=0b1111,
                description="Byte enables of the next write."),
            CSRField("write", size=1, offset=8, pulse=True,
                description="Write ``1`` to write ``cfg_wdata`` at ``cfg_adr``."),
            CSRField("read", size=1, offset=9, pulse=True,
                description="Write ``1`` to read ``cfg_adr`` into ``cfg_rdata``."),
        ])
        self._cfg_status = CSRStatus(fields=[
            CSRField("done",  size=1, offset=0, description="Last access completed."),
            CSRField("error", size=1, offset=1, description="Last access timed out."),
            CSRField("busy",  size=1, offset=2, description="An access is in progress."),
        ])
        self._cfg_rdata = CSRStatus(32, description="Read data of the last configuration read.")
        self._discontinued = CSRStatus(fields=[
            CSRField("count", size=32, description="Received TLPs discarded because the integrated "
                "block marked them ``discontinue`` (UltraScale(+) RC/CQ: an uncorrectable error "
                "reading the TLP back from its memories, PG156/PG213; a fatal error of the block). "
                "A discarded completion ends its request by the requester's timeout; a discarded "
                "write of the device is lost. Counted since the FPGA was configured; always 0 on the 7 "
                "series (no such mark)."),
        ])

        # # #

        self.comb += [
            self._link_status.fields.link_up.eq(self.link_up),
            self._link_status.fields.dl_up.eq(self.dl_up),
            self._link_status.fields.configured.eq(self.configured),
            self._link_status.fields.config_error.eq(self.config_error),
            self._link_status.fields.gen.eq(self.link_gen),
            self._link_status.fields.width.eq(self.link_width),
            self._link_status.fields.ltssm.eq(self.ltssm),
            self._discontinued.fields.count.eq(self.discontinued),
            self.perst.eq(self._perst.fields.active),
        ]
        pending = Signal()
        ctrl    = self._cfg_ctrl.fields
        status  = self._cfg_status.fields
        self.sync += [
            If(ctrl.write | ctrl.read,
                pending.eq(1),
                self.mgmt_sink.we.eq(ctrl.write),
                self.mgmt_sink.adr.eq(self._cfg_adr.storage),
                self.mgmt_sink.dat.eq(self._cfg_wdata.storage),
                self.mgmt_sink.be.eq(ctrl.be),
                status.busy.eq(1),
                status.done.eq(0),
            ).Elif(self.mgmt_sink.ready,
                pending.eq(0),
            ),
            If(self.mgmt_source.valid,
                self._cfg_rdata.status.eq(self.mgmt_source.dat),
                status.error.eq(self.mgmt_source.err),
                status.done.eq(1),
                status.busy.eq(0),
            ),
        ]
        self.comb += [
            self.mgmt_sink.valid.eq(pending),
            self.mgmt_source.ready.eq(1),
        ]
