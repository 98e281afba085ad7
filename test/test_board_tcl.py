#
# This file is part of LiteRecorder.
#
# SPDX-License-Identifier: BSD-2-Clause

"""The generated Vivado build script run, not read: each board's TCL and XDC executed by tclsh
against a model of the Vivado commands they use (``test/vivado_stub.tcl``), the XDC files and the
IP's own constraints applied in Vivado's processing order (EARLY XDC, the IP's XDC, NORMAL, LATE,
then the pre-placement commands). Judged by data we did not write:

- the IP parameters: every CONFIG name must be in the IP's complete parameter list as Vivado wrote
  it into a published ``.xci`` (``test/data/xilinx_ip/<ip>.json``, with its origin and IP version),
  the IP is created at that version, and each value has the form of that list's value where it has
  digits (sites, widths, frequencies, IDs; not the instance name);
- the cells: the transceiver channels' PRIMITIVE_TYPE spelt as Xilinx's pcie_7x XDC and Ettus's X300
  XDC spell it on the 7 series (``IO.gt.*``), as Opsero's FPGA Drive FMC XDCs on UltraScale(+)
  (``ADVANCED.GT.*``), their REF_NAME the primitive's name; the lane cell names as Opsero's and
  LitePCIe's constraints select them;
- the sites: every GT channel and PCIe block on the FPGA Drive FMC's site for its lane
  (``fpga_drive_fmc`` carrier links, from Opsero's XDCs); the IPs' LOCs of the 7-series
  GTXE2_COMMON/block RAMs and of the UltraScale GTHE3_COMMON released;
- the clocks: a constraint that names a clock before it exists in Vivado's processing order (the
  board clock before its ``create_clock``, the pcie_7x's PCIe clock before the IP's XDC) is dropped
  with a critical warning, and a max delay between clocks that a clock group separates is void:
  either fails the check; each crossing (sys <-> every PCIe clock, sys <-> a user clock) must have
  its max delay both ways.

What is modeled and not Vivado's: the IP's leaf-cell names (the patterns Opsero's FPGA Drive FMC
constraints and LitePCIe's S7PCIEPHY select), the IP's default sites (another quad than the FMC's,
so that a LOC that loses shows), which clock each net derives from, the IP's defaults (the
published list's values). Negative tests: a LOC applied too early, a misspelt parameter, a parameter
absent from the published list, an IP version not in the catalog, another Vivado version, a lane on
a wrong quad, a filter that matches nothing, a lane filter in the wrong case, clock constraints
before their clocks, a clock group over a crossing.
"""

import os
import re
import sys
import json
import shutil
import subprocess

import pytest

TEST_DIR = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, TEST_DIR)

from test_boards import generated, CONFIGS, FAMILY

from literecorder.soc import fpga_drive_fmc
from literecorder.soc.vivado import VIVADO_VERSION

STUB = os.path.join(TEST_DIR, "vivado_stub.tcl")
PUBLISHED_DIR = os.path.join(TEST_DIR, "data", "xilinx_ip")

# Published IP parameter lists -------------------------------------------------------------------------

_published = {}

def published(ip):
    """The complete parameter list of ``ip`` (test/data/xilinx_ip/<ip>.json)."""
    if ip not in _published:
        with open(os.path.join(PUBLISHED_DIR, f"{ip}.json")) as f:
            _published[ip] = json.load(f)
    return _published[ip]

def value_form(value):
    """The form of a parameter value: digits -> 9, letters -> a (None for a value without digits:
    an enumeration or a boolean, whose form says nothing)."""
    v = str(value)
    if not re.search(r"\d", v):
        return None
    return re.sub(r"[A-Za-z]+", "a", re.sub(r"\d+", "9", v))

# Model of the root-port IPs' netlist ---------------------------------------------------------------

_IP = {"pcie_s7_rp": "pcie_7x", "pcie_us_rp": "pcie3_ultrascale", "pcie_usp_rp": "pcie4_uscale_plus"}

def ip_of(phy):
    return _IP[phy.ip_name.rstrip("0123456789")]

def quad_base(board, quad):
    """Y index of channel 0 of GT ``quad`` on ``board``'s part (4 channels per quad, from a quad of
    the carrier whose channels are known)."""
    ref = carrier_quads(board)
    q0  = min(ref)
    return min(ref[q0]) + 4*(quad - q0)

def carrier_quads(board):
    """{quad: [channel Y indexes]} of the carrier's FMC links."""
    return {l["quad"]: [int(re.search(r"Y(\d+)$", s).group(1)) for s in l["gt_channels"]]
        for l in fpga_drive_fmc.carrier(board)["links"]}

def site_quad(board, site):
    y = int(re.search(r"Y(\d+)$", site).group(1))
    q0 = min(carrier_quads(board))
    return q0 + (y - quad_base(board, q0))//4

def lane_cell(phy, lane):
    m = phy.ip_name
    return {
        "pcie_7x": f"{m}/inst/inst/gt_top_i/pipe_wrapper_i/pipe_lane[{lane}].gt_wrapper_i/"
            "gtx_channel.gtxe2_channel_i",
        "pcie3_ultrascale": f"{m}/inst/gt_top_i/gt_wizard.gtwizard_top_i/{m}_gt_i/inst/"
            "gen_gtwizard_gthe3_top.gen_gtwizard_gthe3.gen_channel_container[3].gen_enabled_channel."
            f"gthe3_channel_wrapper_inst/channel_inst/gthe3_channel_gen.gen_gthe3_channel_inst[{lane}]."
            "GTHE3_CHANNEL_PRIM_INST",
        "pcie4_uscale_plus": f"{m}/inst/gt_top_i/gt_wizard.gtwizard_top_i/{m}_gt_i/inst/"
            "gen_gtwizard_gthe4_top.gen_gtwizard_gthe4.gen_channel_container[3].gen_enabled_channel."
            f"gthe4_channel_wrapper_inst/channel_inst/gthe4_channel_gen.gen_gthe4_channel_inst[{lane}]."
            "GTHE4_CHANNEL_PRIM_INST",
    }[ip_of(phy)]

def block_cell(phy):
    m = phy.ip_name
    return {"pcie_7x": f"{m}/inst/inst/pcie_top_i/pcie_7x_i/pcie_block_i",
        "pcie3_ultrascale": f"{m}/inst/pcie3_uscale_top_inst/pcie3_uscale_wrapper_inst/PCIE_3_1_inst",
        "pcie4_uscale_plus": f"{m}/inst/pcie_4_0_pipe_inst/pcie_4_0_e4_inst"}[ip_of(phy)]

def released_cells(board, phy):
    """Cells whose IP LOCs must be released: 7 series (LitePCIe S7PCIEPHY) its GTXE2_COMMON and block
    RAMs, UltraScale its GTHE3_COMMON (the IP is not told the lanes' quad):
    [(cell, PRIMITIVE_TYPE, REF_NAME, the IP's site)]."""
    m = phy.ip_name
    if ip_of(phy) == "pcie_7x":
        brams = [f"{m}/inst/inst/pcie_top_i/pcie_7x_i/pcie_bram_top/pcie_brams_{d}/brams[{k}].ram/"
            "use_tdp.ramb36/genblk3_0.bram36_tdp_bl.bram36_tdp_bl" for d in ("rx", "tx") for k in (0, 1)]
        return [(f"{m}/inst/inst/gt_top_i/pipe_wrapper_i/pipe_lane[0].gt_common_enabled.gt_common_int."
            "gt_common_i/qpll_wrapper_i/gtx_common.gtxe2_common_i", "IO.gt.GTXE2_COMMON", "GTXE2_COMMON",
            "GTXE2_COMMON_X0Y1")] + [(b, "BLOCKRAM.BRAM.RAMB36E1", "RAMB36E1", f"RAMB36_X4Y{30 + i}")
            for i, b in enumerate(brams)]
    if ip_of(phy) == "pcie3_ultrascale":
        quad = {"X0Y2": 227, "X0Y1": 226}[phy.pcie_blk_locn]
        return [(f"{m}/inst/gt_top_i/gt_wizard.gtwizard_top_i/{m}_gt_i/inst/gen_gtwizard_gthe3_top."
            "gen_gtwizard_gthe3.gen_common.gen_common_container[3].gen_enabled_common."
            "gthe3_common_wrapper_inst/common_inst/gthe3_common_gen.GTHE3_COMMON_PRIM_INST",
            "ADVANCED.GT.GTHE3_COMMON", "GTHE3_COMMON", f"GTHE3_COMMON_X0Y{quad - 224}")]
    return []

# PRIMITIVE_TYPE of each family's cells, as published constraints spell them (7 series: Xilinx's
# pcie_7x XDC "IO.gt.*", Ettus's x300_10ge_port0.xdc "IO.gt.GTXE2_CHANNEL"/"IO.gt.GTXE2_COMMON";
# UltraScale(+): Opsero's -regexp filters "ADVANCED.GT.GTHE3_CHANNEL"/"GTHE4_CHANNEL", and
# "HARD_IP.pcie.*"/"ADVANCED.PCIE.*" for the blocks).
_TYPES = {
    "pcie_7x": (("IO.gt.GTXE2_CHANNEL", "GTXE2_CHANNEL"), ("HARD_IP.pcie.PCIE_2_1", "PCIE_2_1", "PCIE_")),
    "pcie3_ultrascale": (("ADVANCED.GT.GTHE3_CHANNEL", "GTHE3_CHANNEL"),
        ("ADVANCED.PCIE.PCIE_3_1", "PCIE_3_1", "PCIE_3_1_")),
    "pcie4_uscale_plus": (("ADVANCED.GT.GTHE4_CHANNEL", "GTHE4_CHANNEL"),
        ("ADVANCED.PCIE.PCIE40E4", "PCIE40E4", "PCIE40E4_")),
}

def ip_model(board, phy):
    """(cells, the IP's own LOCs) of ``phy``'s IP: [(cell, PRIMITIVE_TYPE, REF_NAME)], [(cell, site)].

    Default lane sites (modeled): pcie_7x, the 4 channels below the FMC's quad in reverse order
    (its lanes for an edge connector); pcie3_ultrascale, the quad PG156 pairs with the block (X0Y2:
    227, X0Y1: 226 at x4), in order; pcie4_uscale_plus, the selected quad (select_quad), in order."""
    ip = ip_of(phy)
    gt, blk = _TYPES[ip]
    if ip == "pcie_7x":
        base  = quad_base(board, min(carrier_quads(board))) - 1
        sites = [f"{gt[1]}_X0Y{base - i}" for i in range(phy.nlanes)]
    else:
        quad  = {"X0Y2": 227, "X0Y1": 226}[phy.pcie_blk_locn] if ip == "pcie3_ultrascale" else phy.gt_quad
        sites = [f"{gt[1]}_X0Y{quad_base(board, quad) + i}" for i in range(phy.nlanes)]
    cells = [(lane_cell(phy, i), gt[0], gt[1]) for i in range(phy.nlanes)]
    cells.append((block_cell(phy), blk[0], blk[1]))
    locs  = [(lane_cell(phy, i), s) for i, s in enumerate(sites)]
    locs.append((block_cell(phy), blk[2] + phy.pcie_blk_locn))
    for name, ptype, ref, site in released_cells(board, phy):
        cells.append((name, ptype, ref))
        locs.append((name, site))
    return cells, locs

# Model of the design's clocks ----------------------------------------------------------------------

def clock_roots(gen):
    """{net: the clock it derives from} of the nets the constraints name: "port:<board clock>" for
    the CRG's input and the MMCM outputs (sys, user clocks), for the UltraScale(+) PCIe user clock
    its reference clock's port (the GT derives it), for the 7-series PCIe clock "ip:<module>" (the
    pcie_7x's XDC creates the clock of its TXOUTCLK, which the PIPE MMCM divides)."""
    xdc   = gen.read("xdc")
    ports = re.findall(r"^create_clock -name \S+ -period \S+ \[get_ports (\w+)\]$", xdc, re.M)
    board = [p for p in ports if not p.startswith("fpga_drive_fmc")]
    assert len(board) == 1, ports
    name  = gen.vns.get_name
    soc   = gen.soc
    roots = {name(soc.crg.cd_sys.clk): f"port:{board[0]}", name(soc.crg.pll.clkin): f"port:{board[0]}"}
    for n in getattr(soc, "user_clocks", {}):
        roots[name(getattr(soc, f"cd_{n}").clk)] = f"port:{board[0]}"
    for i in range(gen.ssds):
        phy = getattr(soc, f"pcie{i}_phy")
        roots[name(phy.cd_pcie.clk)] = (f"ip:{phy.ip_name}" if ip_of(phy) == "pcie_7x" else
            f"port:fpga_drive_fmc_pcie{i}_clk_p")
    return roots

# Run ----------------------------------------------------------------------------------------------

def _tcl_list(items):
    return "{" + " ".join("{" + " ".join("{" + str(x) + "}" for x in item) + "}" for item in items) + "}"

class TCLRun:
    """Result of one stub run of a generated build script."""
    def __init__(self, returncode, stdout, stderr):
        self.returncode = returncode
        self.stderr     = stderr
        self.stage      = None
        self.ips        = {}
        self.config     = {}
        self.placed     = {}
        self.events     = []
        self.timing     = []
        self.warnings   = []
        self.ended      = False
        for line in stdout.splitlines():
            f = line.split("\t")
            if f[0] == "STAGE":
                self.stage = f[1]
            elif f[0] == "IP":
                self.ips[f[1]] = f[2]
                self.config[f[1]] = {}
            elif f[0] == "CONFIG":
                self.config[f[1]][f[2]] = f[3]
            elif f[0] == "PLACED":
                self.placed[f[1]] = f[2]
            elif f[0] == "EVENT":
                self.events.append(tuple(f[1:]))
            elif f[0] == "TIMING":
                self.timing.append(tuple(f[1:]))
            elif f[0] == "WARNING":
                self.warnings.append(f[1])
            elif f[0] == "END":
                self.ended = True

    def error(self):
        return (self.stderr.strip().splitlines() or ["no message"])[0]

def run_tcl(gen, workdir=None, tcl=None, xdc=None, vivado_version=VIVADO_VERSION, ip_defaults=None):
    """Runs ``gen``'s build script (or the given ``tcl``/``xdc`` texts, written to ``workdir``) in
    tclsh with the Vivado stub. ``ip_defaults``: {(ip, name): value} overriding the modeled defaults."""
    tclsh = shutil.which("tclsh")
    assert tclsh is not None, "tclsh is required (Debian package 'tcl', scripts/install.sh)"
    rundir = os.path.dirname(gen.tcl)
    if tcl is not None or xdc is not None:
        os.makedirs(workdir, exist_ok=True)
        for path, text in ((gen.tcl, tcl), (gen.xdc, xdc)):
            with open(os.path.join(workdir, os.path.basename(path)), "w") as f:
                f.write(gen.read("tcl" if path == gen.tcl else "xdc") if text is None else text)
        rundir = workdir
    lines = [f"source {{{STUB}}}", f"set ::vs::vivado_version {{{vivado_version}}}"]
    for ip in ("pcie_7x", "pcie3_ultrascale", "pcie4_uscale_plus"):
        data = published(ip)
        lines.append(f"set ::vs::valid({ip}) {{{' '.join(n.lower() for n in data['parameters'])}}}")
        lines.append(f"set ::vs::ip_version({ip}) {{{data['version']}}}")
        defaults = {n.lower(): v for n, v in data["parameters"].items()}
        defaults.update({n.lower(): v for (i, n), v in (ip_defaults or {}).items() if i == ip})
        for n, v in defaults.items():
            lines.append(f"set ::vs::ip_default({ip},{n}) {{{v}}}")
    for i in range(gen.ssds):
        phy = getattr(gen.soc, f"pcie{i}_phy")
        cells, locs = ip_model(gen.board, phy)
        lines.append(f"set ::vs::netlist({phy.ip_name}) {_tcl_list(cells)}")
        lines.append(f"set ::vs::ip_locs({phy.ip_name}) {_tcl_list(locs)}")
        if ip_of(phy) == "pcie_7x":
            lines.append(f"set ::vs::ip_clocks({phy.ip_name}) {{ip:{phy.ip_name}}}")
    for net, root in clock_roots(gen).items():
        lines.append(f"set ::vs::clock_root({net}) {{{root}}}")
    lines.append(f"cd {{{rundir}}}")
    lines.append(f"source {{{os.path.basename(gen.tcl)}}}")
    lines.append('error "the build script ended without quit"')
    main = os.path.join(rundir, "vivado_stub_run.tcl")
    with open(main, "w") as f:
        f.write("\n".join(lines) + "\n")
    r = subprocess.run([tclsh, main], capture_output=True, text=True, timeout=60)
    return TCLRun(r.returncode, r.stdout, r.stderr)

def crossings(gen):
    """[(clock net a, clock net b, period a, period b)] the design must constrain both ways: sys <->
    each PCIe clock, sys <-> each user clock."""
    name = gen.vns.get_name
    soc  = gen.soc
    sys_clk, sys_ns = name(soc.crg.cd_sys.clk), 1e9/soc.sys_clk_freq
    r = []
    for i in range(gen.ssds):
        phy = getattr(soc, f"pcie{i}_phy")
        r.append((sys_clk, name(phy.cd_pcie.clk), sys_ns, 1e9/phy.user_clk_freq))
    for n, c in getattr(soc, "user_clocks", {}).items():
        r.append((sys_clk, name(getattr(soc, f"cd_{n}").clk), sys_ns, 1e9/c["freq"]))
    return r

def check_run(gen, r, forms=True):
    """Problems of a stub run: [] when the script ran to its end with every IP parameter as
    intended (and in the published value form, ``forms``), every lane and block on the FMC's sites,
    the IPs' LOCs of the released cells released, every crossing constrained both ways."""
    if r.returncode != 0 or not r.ended:
        return [f"the build script stopped before its end: {r.error()}"]
    p = []
    if r.stage != "bitstream":
        p.append(f"the script ended at stage {r.stage!r}, not after write_bitstream")
    p += [f"Vivado would warn: {w}" for w in r.warnings]
    links = fpga_drive_fmc.carrier(gen.board)["links"]
    for i in range(gen.ssds):
        phy  = getattr(gen.soc, f"pcie{i}_phy")
        m, link = phy.ip_name, links[i]
        # IP: created, every parameter set to the intended value (names checked by the stub), in the
        # form of the published value.
        if r.ips.get(m) != ip_of(phy):
            p.append(f"{m}: IP {r.ips.get(m)!r}, not {ip_of(phy)}")
            continue
        want = {k: str(v) for k, v in phy.get_ip_config().items() if v is not None}
        got  = r.config[m]
        p += [f"{m}: CONFIG.{k} = {got.get(k)!r}, intended {v!r}" for k, v in want.items()
            if got.get(k) != v]
        p += [f"{m}: CONFIG.{k} set but not intended" for k in got if k not in want]
        pub = {n.lower(): v for n, v in published(ip_of(phy))["parameters"].items()}
        if forms:
            p += [f"{m}: CONFIG.{k} = {v!r} is not in the published form of {pub[k.lower()]!r}"
                for k, v in got.items() if k != "Component_Name" and
                value_form(pub.get(k.lower(), "")) not in (None, value_form(v))]
        p += [f"{m}: {e}" for e in FAMILY[gen.board][2](got, link)]
        # Placement: every lane on the FMC's channel for it, the block on the link's block.
        for lane, site in enumerate(link["gt_channels"]):
            placed = r.placed.get(lane_cell(phy, lane))
            if placed != site:
                dp = link["lanes"][lane]
                where = f"{placed} (quad {site_quad(gen.board, placed)})" if placed else "no site"
                p.append(f"{m} lane {lane} placed on {where}; the FMC's DP{dp} is "
                    f"{site} (quad {link['quad']})")
        placed = r.placed.get(block_cell(phy))
        if placed != link["pcie_site"]:
            p.append(f"{m}: integrated block placed on {placed}, not {link['pcie_site']}")
        for name, _, _, _ in released_cells(gen.board, phy):
            if r.placed.get(name):
                p.append(f"{m}: {name.split('/')[-1]} still on the IP's {r.placed[name]}")
    # Crossings: a max delay of one destination period each way, between the clocks of the nets.
    delays = {(f, t): v for src, cmd, f, t, v in r.timing if cmd == "set_max_delay"}
    for a, b, ns_a, ns_b in crossings(gen):
        for f, t, ns in ((a, b, ns_b), (b, a, ns_a)):
            v = delays.get((f"clock:net:{f}", f"clock:net:{t}"))
            if v is None:
                p.append(f"no max delay from {f} to {t}")
            elif abs(float(v) - ns) > 1e-3:
                p.append(f"max delay from {f} to {t}: {v} ns, not one period of {t} ({ns:.3f} ns)")
    return p

# Tests --------------------------------------------------------------------------------------------

@pytest.mark.unit
@pytest.mark.parametrize("board, ssds", [pytest.param(b, n, marks=pytest.mark.xdist_group(f"board-{b}"))
    for b, n in CONFIGS])
def test_build_script_runs_and_places_on_the_fmc_sites(board, ssds):
    gen = generated(board, ssds)
    r   = run_tcl(gen)
    assert check_run(gen, r) == [], check_run(gen, r)
    # The placement is decided after the IP's own constraints: the IP's LOC of each lane is
    # overridden by a pre-placement command (script), none comes from LiteX's XDC; on every link
    # at least one lane's site differs from the IP's (modeled) default.
    for i in range(ssds):
        phy   = getattr(gen.soc, f"pcie{i}_phy")
        moved = 0
        for lane in range(phy.nlanes):
            locs = [(src, v) for src, cmd, cell, v in r.events if cmd == "LOC" and
                cell == lane_cell(phy, lane)]
            assert [s.split(":")[0] for s, _ in locs] == ["ip-xdc", "script"], locs
            moved += locs[0][1] != locs[1][1]
        assert moved >= 1
    # Every constraint between clocks is in the LATE XDC, after every clock exists.
    between = [t for t in r.timing if t[1] == "set_clock_groups" or t[2].startswith("clock:") or
        t[3].startswith("clock:")]
    assert len(between) == 2*ssds + 1, between        # The crossings, sys -> the MMCM's input.
    assert all(t[0].endswith("_late.xdc:LATE") for t in between), between

@pytest.mark.unit
def test_every_parameter_the_phys_set_is_in_the_published_list_at_the_ip_version():
    """The names the PHYs (and their confirmed table) use, against the complete published lists:
    ``type1_membase_memlimit_enable`` is not a pcie3_ultrascale 4.4 parameter (only of the xdma /
    axi_pcie3 wrappers Opsero sets it on) and is not set there."""
    from literecorder.cores.pcie.phy.xilinx_ip_params import IP_PARAMS, IP_VERSIONS, NOT_ON_BLOCK
    for ip, names in IP_PARAMS.items():
        data = published(ip)
        assert data["complete"] and data["version"] == IP_VERSIONS[ip], (ip, data["version"])
        assert set(data["origin"]) == {"repository", "path", "commit"} and len(data["origin"]["commit"]) == 40
        have = {n.lower() for n in data["parameters"]}
        assert [n for n in names if n.lower() not in have] == [], ip
        assert [n for n in NOT_ON_BLOCK[ip] if n.lower() in have] == [], ip
    assert len(published("pcie_7x")["parameters"]) == 241
    assert len(published("pcie3_ultrascale")["parameters"]) == 351
    assert len(published("pcie4_uscale_plus")["parameters"]) == 646
    assert "type1_membase_memlimit_enable" not in {n.lower() for n in published("pcie3_ultrascale")["parameters"]}

def _moved_to_xdc(gen):
    """The build script with its placement commands moved into LiteX's (EARLY) XDC, where the LOCs
    were before: the IP's own constraints come after and win."""
    tcl, moved = [], []
    for line in gen.read("tcl").splitlines():
        (moved if re.match(r"(set|reset)_property LOC \S* ?\[literec_cells", line) else tcl).append(line)
    assert moved
    return "\n".join(tcl) + "\n", gen.read("xdc") + "\n" + "\n".join(moved) + "\n"

@pytest.mark.unit
@pytest.mark.parametrize("board, ssds", [
    pytest.param("kc705", 1, marks=pytest.mark.xdist_group("board-kc705")),
    pytest.param("kcu105", 2, marks=pytest.mark.xdist_group("board-kcu105")),
    pytest.param("zcu106", 2, marks=pytest.mark.xdist_group("board-zcu106"))])
def test_check_fails_on_a_loc_applied_too_early(board, ssds, tmp_path):
    gen = generated(board, ssds)
    tcl, xdc = _moved_to_xdc(gen)
    p = check_run(gen, run_tcl(gen, tmp_path, tcl=tcl, xdc=xdc))
    # Every link has a lane left on the IP's default site (KC705, KCU105: all four).
    for i in range(ssds):
        m = getattr(gen.soc, f"pcie{i}_phy").ip_name
        assert any(e.startswith(f"{m} lane ") for e in p), (m, p)
    if board != "zcu106":
        assert sum(" lane " in e for e in p) == 4*ssds, p
    if board == "kcu105":
        assert ("pcie_us_rp0 lane 0 placed on GTHE3_CHANNEL_X0Y12 (quad 227); the FMC's DP0 is "
            "GTHE3_CHANNEL_X0Y16 (quad 228)") in p
        assert any(e.startswith("pcie_us_rp0: ") and e.endswith("GTHE3_COMMON_PRIM_INST still on the IP's "
            "GTHE3_COMMON_X0Y3") for e in p), p
    if board == "kc705":
        assert any("gtxe2_common_i still on the IP's GTXE2_COMMON_X0Y1" in e for e in p), p

@pytest.mark.unit
@pytest.mark.parametrize("board, name, typo", [
    pytest.param("kc705",  "Bar0_Enabled",            "Bar0_Enable",
        marks=pytest.mark.xdist_group("board-kc705")),
    pytest.param("kcu105", "pf0_dev_cap_max_payload", "pf0_dev_cap_max_paylod",
        marks=pytest.mark.xdist_group("board-kcu105")),
    pytest.param("zcu106", "ins_loss_profile",        "ins_loss_profil",
        marks=pytest.mark.xdist_group("board-zcu106"))])
def test_check_fails_on_a_misspelt_ip_parameter(board, name, typo, tmp_path):
    gen = generated(board, 1)
    tcl = gen.read("tcl")
    assert f"CONFIG.{name} {{" in tcl
    p = check_run(gen, run_tcl(gen, tmp_path, tcl=tcl.replace(f"CONFIG.{name} {{", f"CONFIG.{typo} {{")))
    assert len(p) == 1 and "the build script stopped before its end" in p[0], p
    assert f"has no parameter CONFIG.{typo}" in p[0]

@pytest.mark.unit
@pytest.mark.xdist_group("board-kcu105")
def test_check_fails_on_a_parameter_absent_from_the_published_list(tmp_path):
    """``type1_membase_memlimit_enable`` (credited before to Opsero's KCU105 design, where it is set
    on the xdma/axi_pcie3 wrappers only) on pcie3_ultrascale 4.4: Vivado stops at set_property."""
    gen = generated("kcu105", 1)
    tcl = gen.read("tcl")
    assert "type1_membase_memlimit_enable" not in tcl
    tcl = tcl.replace("CONFIG.pf0_bar0_enabled {false} \\",
        "CONFIG.pf0_bar0_enabled {false} \\\nCONFIG.type1_membase_memlimit_enable {Enabled} \\", 1)
    p = check_run(gen, run_tcl(gen, tmp_path, tcl=tcl))
    assert p == ["the build script stopped before its end: set_property: pcie3_ultrascale has no "
        "parameter CONFIG.type1_membase_memlimit_enable (on pcie_us_rp0)"], p

@pytest.mark.unit
@pytest.mark.xdist_group("board-kcu105")
def test_check_fails_on_an_ip_version_not_in_the_catalog_and_on_another_vivado(tmp_path):
    gen = generated("kcu105", 1)
    tcl = gen.read("tcl")
    assert tcl.count("-name pcie3_ultrascale -version 4.4 ") == 1
    p = check_run(gen, run_tcl(gen, tmp_path / "ip", tcl=tcl.replace("-version 4.4 ", "-version 4.3 ")))
    assert p == ["the build script stopped before its end: ERROR: create_ip: no IP "
        "'xilinx.com:ip:pcie3_ultrascale:4.3' in the IP catalog (it has xilinx.com:ip:pcie3_ultrascale:4.4)"], p
    r = run_tcl(gen, tmp_path / "vivado", vivado_version="2024.1")
    assert r.error() == (f"LiteRecorder: this build script was checked against Vivado {VIVADO_VERSION} "
        "(its IP versions and parameters, doc/boards.md); this is Vivado 2024.1. Use Vivado "
        f"{VIVADO_VERSION}, or check the IPs against doc/boards.md for your version and build with "
        "--vivado-version <yours>."), r.stderr
    assert r.ips == {}                                       # Stopped before any IP.
    assert check_run(gen, run_tcl(gen, tmp_path / "update", vivado_version=f"{VIVADO_VERSION}.1")) == []

@pytest.mark.unit
@pytest.mark.xdist_group("board-zcu106")
def test_site_values_follow_the_form_of_the_ip_default(tmp_path):
    """pcie_blk_locn bare (X0Y1) as the published lists have it; should Vivado's default carry a
    prefix, the script writes ours with it (Opsero's bd_zynqmp.tcl derives it the same way)."""
    gen = generated("zcu106", 2)
    r = run_tcl(gen)
    assert (r.config["pcie_usp_rp0"]["pcie_blk_locn"], r.config["pcie_usp_rp1"]["pcie_blk_locn"]) == \
        ("X0Y1", "X0Y0")
    r = run_tcl(gen, tmp_path, tcl=gen.read("tcl"),
        ip_defaults={("pcie4_uscale_plus", "pcie_blk_locn"): "PCIE40E4_X0Y0"})
    assert (r.config["pcie_usp_rp0"]["pcie_blk_locn"], r.config["pcie_usp_rp1"]["pcie_blk_locn"]) == \
        ("PCIE40E4_X0Y1", "PCIE40E4_X0Y0")
    assert r.ended and r.stage == "bitstream"

@pytest.mark.unit
@pytest.mark.xdist_group("board-zcu106")
def test_check_fails_on_a_lane_on_a_wrong_quad(tmp_path):
    gen = generated("zcu106", 1)
    tcl = gen.read("tcl")
    assert tcl.count("set_property LOC GTHE4_CHANNEL_X0Y14 ") == 1
    tcl = tcl.replace("set_property LOC GTHE4_CHANNEL_X0Y14 ", "set_property LOC GTHE4_CHANNEL_X0Y10 ")
    p = check_run(gen, run_tcl(gen, tmp_path, tcl=tcl))
    assert p == ["pcie_usp_rp0 lane 0 placed on GTHE4_CHANNEL_X0Y10 (quad 225); the FMC's DP0 is "
        "GTHE4_CHANNEL_X0Y14 (quad 226)"], p

@pytest.mark.unit
@pytest.mark.xdist_group("board-kcu105")
def test_check_fails_on_a_cell_filter_that_matches_nothing(tmp_path):
    """A filter that matches no cell stops the script, naming the filter (Vivado itself would only
    warn, Common 17-55 downgraded by LiteX, and leave the lane where the reset left it)."""
    gen = generated("kcu105", 1)
    tcl = gen.read("tcl").replace(r'NAME =~ "pcie_us_rp0/.*channel_inst\[2\].*"',
        r'NAME =~ "pcie_us_rp0/.*chanel_inst\[2\].*"')
    p = check_run(gen, run_tcl(gen, tmp_path, tcl=tcl))
    assert p == ["the build script stopped before its end: LiteRecorder: pcie_us_rp0 lane 2: the cell "
        r'filter {REF_NAME == GTHE3_CHANNEL && NAME =~ "pcie_us_rp0/.*chanel_inst\[2\].*"} matched 0 '
        "cells, expected 1 (doc/boards.md, first light, step 1)."], p

@pytest.mark.unit
@pytest.mark.xdist_group("board-kc705")
def test_check_fails_on_a_lane_filter_in_the_wrong_case(tmp_path):
    """The KC705's former filter: a case-sensitive -regexp on IO.GT.GTXE2_CHANNEL, which Xilinx's
    own pcie_7x XDC spells IO.gt.*: no cell, the script stops. Spelt as Xilinx does, it runs."""
    gen = generated("kc705", 1)
    tcl = gen.read("tcl")
    assert tcl.count("REF_NAME == GTXE2_CHANNEL && ") == 5
    bad = tcl.replace("REF_NAME == GTXE2_CHANNEL && ", "PRIMITIVE_TYPE =~ IO.GT.GTXE2_CHANNEL && ")
    p = check_run(gen, run_tcl(gen, tmp_path / "upper", tcl=bad))
    assert p == ["the build script stopped before its end: LiteRecorder: pcie_s7_rp0 transceiver "
        "channels: the cell filter {PRIMITIVE_TYPE =~ IO.GT.GTXE2_CHANNEL && NAME =~ \"pcie_s7_rp0/.*\"} "
        "matched 0 cells, expected 4 (doc/boards.md, first light, step 1)."], p
    good = tcl.replace("REF_NAME == GTXE2_CHANNEL && ", "PRIMITIVE_TYPE =~ IO.gt.GTXE2_CHANNEL && ")
    assert check_run(gen, run_tcl(gen, tmp_path / "xilinx", tcl=good)) == []

def _late_to_early(gen):
    """The build script with the constraints of its LATE XDC written into LiteX's EARLY XDC ahead
    of its clock constraints, as LiteX 2024.12 writes platform commands."""
    tcl, moved = [], []
    for line in gen.read("tcl").splitlines():
        m = re.fullmatch(r"puts \$literec_xdc \{(.*)\}", line)
        if m:
            moved.append(m.group(1))
        else:
            tcl.append(line)
    assert moved
    xdc = gen.read("xdc").replace("# Clock constraints", "\n".join(moved) + "\n# Clock constraints", 1)
    return "\n".join(tcl) + "\n", xdc

@pytest.mark.unit
@pytest.mark.parametrize("board, ssds", [
    pytest.param("kc705", 1, marks=pytest.mark.xdist_group("board-kc705")),
    pytest.param("kcu105", 2, marks=pytest.mark.xdist_group("board-kcu105")),
    pytest.param("zcu106", 1, marks=pytest.mark.xdist_group("board-zcu106"))])
def test_check_fails_on_clock_constraints_before_their_clocks(board, ssds, tmp_path):
    """The crossings' constraints where LiteX 2024.12 puts platform commands (EARLY XDC, before its
    create_clock lines): every one is dropped (Vivado's critical warning), no crossing constrained."""
    gen = generated(board, ssds)
    tcl, xdc = _late_to_early(gen)
    p = check_run(gen, run_tcl(gen, tmp_path, tcl=tcl, xdc=xdc))
    dropped = [e for e in p if "no valid object(s) found for '-from'" in e]
    assert len(dropped) == 2*ssds + 1 and all(":EARLY)" in e for e in dropped), p
    assert sum(e.startswith("no max delay from ") for e in p) == 2*ssds, p
    assert len(p) == len(dropped) + 2*ssds, p

# IP TCL options -----------------------------------------------------------------------------------

@pytest.mark.unit
def test_ip_tcl_leaves_out_none_and_names_unconfirmed_parameters():
    from literecorder.cores.pcie.phy.common import ip_tcl
    from literecorder.cores.pcie.phy.xilinx_ip_params import SiteValue
    tcl = ip_tcl("pcie4_uscale_plus", "rp", {"PL_LINK_CAP_MAX_LINK_WIDTH": "X4",
        "pf0_bar0_enabled": None, "INS_LOSS_NYQ": 5, "my_param": 1, "pcie_blk_locn": SiteValue("X0Y1")})
    assert tcl[:3] == ["# rp: pcie4_uscale_plus 1.3 in root-port mode (LiteRecorder root-port PHY).",
        "# CONFIG names added by the user, not in LiteRecorder's confirmed list: my_param.",
        "create_ip -vendor xilinx.com -library ip -name pcie4_uscale_plus -version 1.3 -module_name rp"]
    assert "CONFIG.PL_LINK_CAP_MAX_LINK_WIDTH {{X4}} \\" in tcl
    assert "set literec_pcie_blk_locn [literec_site_value $obj pcie_blk_locn X0Y1]" in tcl
    assert "CONFIG.pcie_blk_locn $literec_pcie_blk_locn \\" in tcl
    assert not any("pf0_bar0_enabled" in l for l in tcl)

@pytest.mark.unit
@pytest.mark.parametrize("channel_loss, message", [
    (("Short", 5),          "channel_loss profile must be one of ['Chip-to-Chip', 'Add-in_Card', "
                            "'Backplane'], not 'Short'."),
    (("Chip-to-Chip", 0),   "channel_loss: insertion loss at Nyquist in whole dB (1 to 30), not 0."),
    (("Chip-to-Chip", 5.5), "channel_loss: insertion loss at Nyquist in whole dB (1 to 30), not 5.5."),
])
def test_channel_loss_is_checked(channel_loss, message):
    from litex_boards.platforms import xilinx_kcu105
    from literecorder.cores.pcie.phy import USRootPortPHY
    platform = xilinx_kcu105.Platform()
    with pytest.raises(ValueError) as e:
        USRootPortPHY(platform, platform.request("pcie_x4"), channel_loss=channel_loss)
    assert str(e.value) == message

# User clocks --------------------------------------------------------------------------------------

EXAMPLE = os.path.join(os.path.dirname(TEST_DIR), "examples", "counter")

def user_clock_soc(freq, tolerance=None):
    """The example's counter in clock domain "user" at ``freq`` on the KCU105 (add_user_clock)."""
    sys.path.insert(0, EXAMPLE)
    try:
        import counter_soc
    finally:
        sys.path.remove(EXAMPLE)
    from literecorder.targets import xilinx_kcu105
    class UserClockKCU105(xilinx_kcu105.BaseSoC):
        def __init__(self, **kwargs):
            counter_soc.add_counter(self, "user")
            xilinx_kcu105.BaseSoC.__init__(self, **kwargs)
            self.add_user_clock("user", freq, **({} if tolerance is None else dict(tolerance=tolerance)))
    return UserClockKCU105

_user_clock_designs = {}

def user_clock_design(freq):
    if freq not in _user_clock_designs:
        from board_checks import generate, ROOT
        out = os.path.join(ROOT, "build", "test", f"board-kcu105-user-{freq/1e6:g}")
        _user_clock_designs[freq] = generate("kcu105", 1, out, soc_cls=user_clock_soc(freq))
    return _user_clock_designs[freq]

@pytest.mark.unit
@pytest.mark.xdist_group("board-kcu105")
def test_a_61_44_mhz_user_clock_on_the_kcu105_has_its_own_mmcm_and_constraint():
    """61.44 MHz is no output of the SoC's MMCM beside its 500 and 200 MHz: the call gives the user
    clock an MMCM of its own from the board's 125 MHz input, at the nearest frequency the primitive
    makes (fractional multiplier and divider: 125 x 7.25 / 14.75 = 61.440678 MHz, 11.0 ppm, within
    the 100 ppm tolerance), and the user <-> sys crossing its max delays in the LATE XDC."""
    gen = user_clock_design(61.44e6)
    c = gen.soc.user_clocks["user"]
    assert c["source"] == "an MMCM of its own (ExactUSMMCM, from the board's 125 MHz input)"
    assert c["achieved"] == 125e6*7.25/14.75 and round(abs(c["achieved"] - 61.44e6)/61.44e6*1e6, 1) == 11.0
    v = gen.read("verilog")
    mmcms = re.findall(r"^MMCME2_ADV #\((.*?)\) MMCME2_ADV(_\d+)? \(", v, re.M | re.S)
    assert len(mmcms) == 2, len(mmcms)                     # The CRG's, the user clock's.
    own = [p for p, _ in mmcms if "7.25" in p]
    assert len(own) == 1 and re.search(r"\.CLKOUT0_DIVIDE_F\s*\(14\.75\)", own[0]) and \
        re.search(r"\.CLKFBOUT_MULT_F\s*\(7\.25\)", own[0]) and re.search(r"\.DIVCLK_DIVIDE\s*\(1'd1\)", own[0]), own
    name = gen.vns.get_name
    assert re.search(rf"^BUFG BUFG(_\d+)?\(\s*// Inputs\.\s*\.I\s*\({name(gen.soc.crg.pll.clkin)}\),", v, re.M)
    r = run_tcl(gen)
    assert check_run(gen, r) == [], check_run(gen, r)
    user = name(gen.soc.cd_user.clk)
    assert ("set_max_delay", f"clock:net:{user}", "clock:net:sys_clk", "8.000") in [t[1:] for t in r.timing]
    assert ("set_max_delay", "clock:net:sys_clk", f"clock:net:{user}", f"{1e9/61.44e6:.3f}") in \
        [t[1:] for t in r.timing]

@pytest.mark.unit
@pytest.mark.xdist_group("board-kcu105")
def test_check_fails_on_a_clock_group_over_the_user_crossing(tmp_path):
    """LiteX's add_false_path_constraints(sys, the board clock), which the CRGs used before: clock
    groups of every clock derived from the board clock, the user clock among them, void the
    crossing's max delays (clock groups take precedence)."""
    gen = user_clock_design(61.44e6)
    name = gen.vns.get_name
    group = ("set_clock_groups -group [get_clocks -include_generated_clocks -of [get_nets sys_clk]] "
        f"-group [get_clocks -include_generated_clocks -of [get_nets {name(gen.soc.crg.pll.clkin)}]] "
        "-asynchronous")
    tcl = gen.read("tcl").replace("close $literec_xdc", f"puts $literec_xdc {{{group}}}\nclose $literec_xdc", 1)
    p = check_run(gen, run_tcl(gen, tmp_path, tcl=tcl))
    user = name(gen.soc.cd_user.clk)
    assert sorted(p) == sorted(f"Vivado would warn: set_max_delay from clock:net:{a} to clock:net:{b} "
        f"(xdc:{os.path.basename(gen.top)}_late.xdc:LATE) is void: a set_clock_groups -asynchronous separates "
        "the two clocks." for a, b in [("sys_clk", user), (user, "sys_clk")]), p

@pytest.mark.unit
def test_a_user_clock_beyond_the_tolerance_is_refused_with_both_frequencies():
    with pytest.raises(ValueError) as e:
        with_quiet_logs(lambda: user_clock_soc(61.44e6, tolerance=1e-6)())
    assert str(e.value).startswith("add_user_clock('user', 61.44 MHz): the nearest frequency an MMCM of "
        "its own makes from the board's 125 MHz input is 61.440678 MHz (11 ppm off); the SoC's USMMCM "
        "beside its outputs of 500, 200 MHz: "), str(e.value)
    assert str(e.value).endswith("the tolerance is 1 ppm. Ask for a frequency the board can make, or pass "
        "a larger tolerance= if that deviation is acceptable."), str(e.value)
    for bad, msg in [(dict(freq=0), "freq must be a frequency in Hz, not 0"),
        (dict(freq=50e6, tolerance=0.5), "tolerance must be a relative deviation between 0 and 0.1")]:
        from literecorder.soc.board_soc import LiteRecorderBoardSoC
        with pytest.raises(ValueError, match=re.escape(msg)):
            LiteRecorderBoardSoC.add_user_clock(None, "user", **bad)

def with_quiet_logs(f):
    import logging
    logging.disable(logging.WARNING)
    try:
        return f()
    finally:
        logging.disable(logging.NOTSET)
