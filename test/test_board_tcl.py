#
# This file is part of LiteRecorder.
#
# SPDX-License-Identifier: BSD-2-Clause

"""The generated Vivado build script run, not read: each board's TCL and XDC executed by tclsh
against a model of the Vivado commands they use (``test/vivado_stub.tcl``), the XDC files and the
IP's own constraints applied in Vivado's processing order (EARLY XDC, the IP's XDC, NORMAL, LATE,
then the pre-placement commands). Checked: the script runs to its end (bitstream), every root-port
IP parameter has a confirmed name (``xilinx_ip_params``) and ends with the value the PHY intends,
every GT channel and PCIe block ends on the FPGA Drive FMC's site for its lane (``fpga_drive_fmc``
carrier links), the 7-series IP's GTXE2_COMMON and block RAM LOCs are released.

What is modeled and not Vivado's: the IP's leaf-cell names (the patterns Opsero's FPGA Drive FMC
constraints and LitePCIe's S7PCIEPHY select) and the IP's default sites (another quad than the
FMC's, so that a LOC that loses shows). Negative tests: a LOC applied too early (in LiteX's EARLY
XDC, overridden by the IP's own constraints), a misspelt IP parameter, a lane on a wrong quad, a
cell filter that matches nothing.
"""

import os
import re
import sys
import shutil
import subprocess

import pytest

TEST_DIR = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, TEST_DIR)

from test_boards import generated, CONFIGS, FAMILY

from literecorder.soc import fpga_drive_fmc
from literecorder.cores.pcie.phy.xilinx_ip_params import IP_PARAMS

STUB = os.path.join(TEST_DIR, "vivado_stub.tcl")

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

def released_cells(phy):
    """7-series cells whose IP LOCs must be released (LitePCIe S7PCIEPHY): GTXE2_COMMON, BRAMs."""
    if ip_of(phy) != "pcie_7x":
        return []
    m = phy.ip_name
    brams = [f"{m}/inst/inst/pcie_top_i/pcie_7x_i/pcie_bram_top/pcie_brams_{d}/brams[{k}].ram/"
        "use_tdp.ramb36/genblk3_0.bram36_tdp_bl.bram36_tdp_bl" for d in ("rx", "tx") for k in (0, 1)]
    return [(f"{m}/inst/inst/gt_top_i/pipe_wrapper_i/pipe_lane[0].gt_common_enabled.gt_common_int."
        "gt_common_i/qpll_wrapper_i/gtx_common.gtxe2_common_i", "IO.GT.GTXE2_COMMON", "GTXE2_COMMON",
        "GTXE2_COMMON_X0Y1")] + [(b, "BLOCKRAM.BRAM.RAMB36E1", "RAMB36E1", f"RAMB36_X4Y{30 + i}")
        for i, b in enumerate(brams)]

def ip_model(board, phy):
    """(cells, the IP's own LOCs) of ``phy``'s IP: [(cell, PRIMITIVE_TYPE, REF_NAME)], [(cell, site)].

    Default lane sites (modeled): pcie_7x, the 4 channels below the FMC's quad in reverse order
    (its lanes for an edge connector); pcie3_ultrascale, the quad PG156 pairs with the block (X0Y2:
    227, X0Y1: 226 at x4), in order; pcie4_uscale_plus, the selected quad (select_quad), in order."""
    ip = ip_of(phy)
    gt = {"pcie_7x": ("IO.GT.GTXE2_CHANNEL", "GTXE2_CHANNEL"),
        "pcie3_ultrascale": ("ADVANCED.GT.GTHE3_CHANNEL", "GTHE3_CHANNEL"),
        "pcie4_uscale_plus": ("ADVANCED.GT.GTHE4_CHANNEL", "GTHE4_CHANNEL")}[ip]
    blk = {"pcie_7x": ("HARD_IP.pcie.PCIE_2_1", "PCIE_2_1", "PCIE_"),
        "pcie3_ultrascale": ("ADVANCED.PCIE.PCIE_3_1", "PCIE_3_1", "PCIE_3_1_"),
        "pcie4_uscale_plus": ("ADVANCED.PCIE.PCIE40E4", "PCIE40E4", "PCIE40E4_")}[ip]
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
    for name, ptype, ref, site in released_cells(phy):
        cells.append((name, ptype, ref))
        locs.append((name, site))
    return cells, locs

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
            elif f[0] == "WARNING":
                self.warnings.append(f[1])
            elif f[0] == "END":
                self.ended = True

def run_tcl(gen, workdir=None, tcl=None, xdc=None):
    """Runs ``gen``'s build script (or the given ``tcl``/``xdc`` texts, written to ``workdir``) in
    tclsh with the Vivado stub."""
    tclsh = shutil.which("tclsh")
    assert tclsh is not None, "tclsh is required (Debian package 'tcl', scripts/install.sh)"
    rundir = os.path.dirname(gen.tcl)
    if tcl is not None or xdc is not None:
        os.makedirs(workdir, exist_ok=True)
        for path, text in ((gen.tcl, tcl), (gen.xdc, xdc)):
            with open(os.path.join(workdir, os.path.basename(path)), "w") as f:
                f.write(gen.read("tcl" if path == gen.tcl else "xdc") if text is None else text)
        rundir = workdir
    lines = [f"source {{{STUB}}}"]
    for ip, names in IP_PARAMS.items():
        lines.append(f"set ::vs::valid({ip}) {{{' '.join(n.lower() for n in names)}}}")
    for i in range(gen.ssds):
        phy = getattr(gen.soc, f"pcie{i}_phy")
        cells, locs = ip_model(gen.board, phy)
        lines.append(f"set ::vs::netlist({phy.ip_name}) {_tcl_list(cells)}")
        lines.append(f"set ::vs::ip_locs({phy.ip_name}) {_tcl_list(locs)}")
    lines.append(f"cd {{{rundir}}}")
    lines.append(f"source {{{os.path.basename(gen.tcl)}}}")
    lines.append('error "the build script ended without quit"')
    main = os.path.join(rundir, "vivado_stub_run.tcl")
    with open(main, "w") as f:
        f.write("\n".join(lines) + "\n")
    r = subprocess.run([tclsh, main], capture_output=True, text=True, timeout=60)
    return TCLRun(r.returncode, r.stdout, r.stderr)

def check_run(gen, r):
    """Problems of a stub run: [] when the script ran to its end with every IP parameter as
    intended and every lane and block on the FMC's sites."""
    if r.returncode != 0 or not r.ended:
        err = (r.stderr.strip().splitlines() or ["no message"])[0]
        return [f"the build script stopped before its end: {err}"]
    p = []
    if r.stage != "bitstream":
        p.append(f"the script ended at stage {r.stage!r}, not after write_bitstream")
    p += [f"Vivado would warn: {w}" for w in r.warnings]
    links = fpga_drive_fmc.carrier(gen.board)["links"]
    for i in range(gen.ssds):
        phy  = getattr(gen.soc, f"pcie{i}_phy")
        m, link = phy.ip_name, links[i]
        # IP: created, every parameter set to the intended value (names checked by the stub).
        if r.ips.get(m) != ip_of(phy):
            p.append(f"{m}: IP {r.ips.get(m)!r}, not {ip_of(phy)}")
            continue
        want = {k: str(v) for k, v in phy.get_ip_config().items() if v is not None}
        got  = r.config[m]
        p += [f"{m}: CONFIG.{k} = {got.get(k)!r}, intended {v!r}" for k, v in want.items()
            if got.get(k) != v]
        p += [f"{m}: CONFIG.{k} set but not intended" for k in got if k not in want]
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
        for name, _, _, _ in released_cells(phy):
            if r.placed.get(name):
                p.append(f"{m}: {name.split('/')[-1]} still on the IP's {r.placed[name]}")
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

def _moved_to_xdc(gen):
    """The build script with its placement commands moved into LiteX's (EARLY) XDC, where the LOCs
    were before: the IP's own constraints come after and win."""
    tcl, moved = [], []
    for line in gen.read("tcl").splitlines():
        (moved if re.match(r"(set|reset)_property LOC \S* ?\[get_cells", line) else tcl).append(line)
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
    links = fpga_drive_fmc.carrier(board)["links"]
    # Every link has a lane left on the IP's default site (KC705, KCU105: all four).
    for i in range(ssds):
        m = getattr(gen.soc, f"pcie{i}_phy").ip_name
        assert any(e.startswith(f"{m} lane ") for e in p), (m, p)
    if board != "zcu106":
        assert sum(" lane " in e for e in p) == 4*ssds, p
    if board == "kcu105":
        assert ("pcie_us_rp0 lane 0 placed on GTHE3_CHANNEL_X0Y12 (quad 227); the FMC's DP0 is "
            "GTHE3_CHANNEL_X0Y16 (quad 228)") in p
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
    """A LOC whose cell filter matches no cell does nothing (LiteX downgrades Vivado's 'expects at
    least one object' to a warning): the lane stays where the reset left it, the warning shows."""
    gen = generated("kcu105", 1)
    tcl = gen.read("tcl").replace(r'NAME =~ "pcie_us_rp0/.*channel_inst\[2\].*"',
        r'NAME =~ "pcie_us_rp0/.*chanel_inst\[2\].*"')
    p = check_run(gen, run_tcl(gen, tmp_path, tcl=tcl))
    assert len(p) == 2, p
    assert "Common 17-55" in p[0] and "set_property" in p[0]
    assert p[1] == "pcie_us_rp0 lane 2 placed on no site; the FMC's DP2 is GTHE3_CHANNEL_X0Y18 (quad 228)"

# IP TCL options -----------------------------------------------------------------------------------

@pytest.mark.unit
def test_ip_tcl_leaves_out_none_and_names_unconfirmed_parameters():
    from literecorder.cores.pcie.phy.common import ip_tcl
    tcl = ip_tcl("pcie4_uscale_plus", "rp", {"PL_LINK_CAP_MAX_LINK_WIDTH": "X4",
        "pf0_bar0_enabled": None, "INS_LOSS_NYQ": 5, "my_param": 1})
    assert "CONFIG.PL_LINK_CAP_MAX_LINK_WIDTH {{X4}} \\" in tcl
    assert not any("pf0_bar0_enabled" in l for l in tcl)
    assert ("# CONFIG names published only on the Xilinx IP that embeds this one (doc/boards.md): "
        "INS_LOSS_NYQ.") in tcl
    assert "# CONFIG names added by the user, not in LiteRecorder's confirmed list: my_param." in tcl

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
