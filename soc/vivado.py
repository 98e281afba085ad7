#
# This file is part of LiteRecorder.
#
# SPDX-License-Identifier: BSD-2-Clause

"""What the generated Vivado build script does beyond LiteX's own, in one place: the Vivado version
it was checked against, the checked cell filters of the placement commands, the site-parameter
values in the form of the IP's own default, and the timing constraints that name clocks which exist
only late in Vivado's constraint processing (an XDC processed LATE).

::

    create_project (LiteX)
    +-- version pin, Tcl procs (literec_cells, literec_site_value)   project commands
    read_xdc <build>.xdc, PROCESSING_ORDER EARLY (LiteX: pins, board clocks)
    +-- create_ip ... -version <v>, the root-port IPs                 pre-synthesis commands
    +-- <build>_late.xdc written and read, PROCESSING_ORDER LATE      pre-synthesis commands
    synth_design: EARLY XDC -> the IPs' XDC (their clocks) -> NORMAL -> LATE (every clock exists)
    +-- reset_property / set_property LOC [literec_cells ...]         pre-placement commands
    place_design, route_design, write_bitstream

Vivado's processing order of constraint files (UG903, "Constraints Sequence"): user files marked
EARLY, the IPs' files, user files NORMAL, the IPs' LATE files (clock-dependent), user files LATE.
LiteX 2024.12 writes the design's XDC with PROCESSING_ORDER EARLY and its clock-domain commands
ahead of its own ``create_clock`` lines: a ``get_clocks -of_objects`` there finds no clock (the board
clock is created further down the file, the KC705's PCIe clocks only by the pcie_7x IP's XDC), and
Vivado drops the constraint with a critical warning. Constraints between clocks therefore go to a
LATE XDC (``add_late_constraint``), processed after every other constraint file.
"""

# Vivado version -----------------------------------------------------------------------------------

#: The Vivado version the generated build scripts were checked against: the version Opsero's FPGA
#: Drive FMC reference designs require (github.com/fpgadeveloper/fpga-drive-aximm-pcie,
#: ``Vivado/scripts/build.tcl``, ``version_required``, commit f7bad85f3df5ba668bccb146ea073ca33dc1d5bd),
#: whose root-port settings and value forms the PHYs follow. The IPs are created at the versions of
#: the complete parameter lists they were checked against (``xilinx_ip_params.IP_VERSIONS``);
#: doc/boards.md says what is not confirmed for this Vivado version.
VIVADO_VERSION = "2025.2"

def check_vivado_version(version):
    import re
    if not re.fullmatch(r"\d{4}\.\d", str(version)):
        raise ValueError(f"vivado_version must be a Vivado release such as {VIVADO_VERSION!r}, "
            f"not {version!r}.")
    return str(version)

# Tcl procs of the build script --------------------------------------------------------------------
#
# Strings of LiteX's command lists go through str.format (braces doubled).

def _script_prologue(version):
    v = version.replace(".", "\\.")
    return [
        "",
        "# LiteRecorder ------------------------------------------------------------------------------",
        f"# This script was checked against Vivado {version} (doc/boards.md): another version stops here.",
        f"if {{{{![regexp {{{{^{v}(\\.[0-9]+)?$}}}} [version -short]]}}}} {{{{",
        f"    error \"LiteRecorder: this build script was checked against Vivado {version} (its IP versions "
        f"and parameters, doc/boards.md); this is Vivado [version -short]. Use Vivado {version}, or check "
        f"the IPs against doc/boards.md for your version and build with --vivado-version <yours>.\"",
        "}}",
        "",
        "# The cells a placement filter selects, or a stop naming the filter when it does not find the",
        "# number of cells it must (Vivado only warns when a filter matches nothing).",
        "proc literec_cells {{what min max filter}} {{",
        "    set cells [get_cells -quiet -hierarchical -regexp -filter $filter]",
        "    set n [llength $cells]",
        "    if {{$n < $min || ($max >= 0 && $n > $max)}} {{",
        "        set want [expr {{$min == $max ? $min : \"$min or more\"}}]",
        "        error \"LiteRecorder: $what: the cell filter {{$filter}} matched $n cells, expected $want\\",
        "(doc/boards.md, first light, step 1).\"",
        "    }}",
        "    return $cells",
        "}}",
        "",
        "# A site parameter's value (e.g. pcie_blk_locn X0Y1) in the form of the IP's own default: bare,",
        "# or with the default's prefix (as Opsero's FPGA Drive FMC scripts derive it).",
        "proc literec_site_value {{ip name site}} {{",
        "    set default [get_property CONFIG.$name $ip]",
        "    set i [string last \"_\" $default]",
        "    if {{$i < 0}} {{ return $site }}",
        "    return \"[string range $default 0 $i]$site\"",
        "}}",
    ]

def setup(platform, version=None):
    """Adds the version pin and the procs to ``platform``'s build script, once (later calls check
    that the version agrees). Returns the pinned version."""
    tc = platform.toolchain
    version = check_vivado_version(version or VIVADO_VERSION)
    pinned = getattr(tc, "_literec_vivado_version", None)
    if pinned is None:
        tc._literec_vivado_version = version
        tc.project_commands += _script_prologue(version)
    elif pinned != version:
        raise ValueError(f"the build script is pinned to Vivado {pinned}, not {version}.")
    return tc._literec_vivado_version

# Checked cell filters -----------------------------------------------------------------------------

def cells(what, filter, count=None, at_least=None):
    """TCL selecting the cells of ``filter`` (a ``get_cells -regexp -filter`` expression, braces
    doubled for ``str.format``) that stops the script unless it finds exactly ``count`` cells (or
    ``at_least`` cells)."""
    if (count is None) == (at_least is None):
        raise ValueError("cells(): give count or at_least.")
    lo, hi = (count, count) if count is not None else (at_least, -1)
    return f"[literec_cells {{{{{what}}}}} {lo} {hi} {{{{{filter}}}}}]"

# Late constraints ---------------------------------------------------------------------------------

class _LateXDC:
    """The LATE XDC of a build script: one entry of ``pre_synthesis_commands`` that LiteX resolves
    (signal names) when it writes the script, i.e. after every constraint was added. It writes the
    file, reads it and marks it LATE."""
    def __init__(self):
        self.constraints = [] # (template, {name: signal})

    def __iter__(self):
        # XilinxVivadoCommands.resolve() unpacks (template, signals) and formats the template with
        # the signals' names; LiteX then formats every command with build_name: literal braces are
        # written four times, the names' placeholders once, build_name's twice.
        signals, lines = {}, []
        for i, (template, sigs) in enumerate(self.constraints):
            marks = {k: f"\x00{k}_{i}\x01" for k in sigs}
            for k, s in sigs.items():
                signals[f"{k}_{i}"] = s
            line = template.format(**marks).replace("{", "{{{{").replace("}", "}}}}")
            line = line.replace("\x00", "{").replace("\x01", "}")
            lines.append("puts $literec_xdc {{{{" + line + "}}}}")
        head = ["",
            "# LiteRecorder: constraints between clocks, in an XDC processed LATE (after the IPs' own",
            "# constraints, when every clock exists; doc/boards.md, timing constraints).",
            "set literec_xdc [open {{build_name}}_late.xdc w]"]
        tail = ["close $literec_xdc",
            "read_xdc {{build_name}}_late.xdc",
            "set_property PROCESSING_ORDER LATE [get_files {{build_name}}_late.xdc]"]
        return iter(("\n".join(head + lines + tail), signals))

def late_xdc(platform):
    tc = platform.toolchain
    xdc = getattr(tc, "_literec_late_xdc", None)
    if xdc is None:
        xdc = tc._literec_late_xdc = _LateXDC()
        tc.pre_synthesis_commands.append(xdc)
    return xdc

def add_late_constraint(platform, template, **signals):
    """A timing constraint in the LATE XDC: ``template`` with ``{name}`` for each signal's net name
    and Tcl's own braces doubled, as LiteX's ``add_platform_command`` (e.g.
    ``set_false_path -to [get_ports {{{pad}}}]``)."""
    late_xdc(platform).constraints.append((template, signals))

def add_clock_crossing(platform, clk_a, freq_a, clk_b, freq_b):
    """The crossings between the clocks of nets ``clk_a`` and ``clk_b`` (every one through a
    synchronizer: ``MultiReg``, false-pathed by LiteX, or an ``AsyncFIFO``): the data paths get a
    ``set_max_delay -datapath_only`` of one destination period each way (not a false path: the data
    must arrive before the synchronized pointer does)."""
    cmd = ("set_max_delay -datapath_only -from [get_clocks -of_objects [get_nets {src}]] "
           "-to [get_clocks -of_objects [get_nets {dst}]] ")
    add_late_constraint(platform, cmd + f"{1e9/freq_b:.3f}", src=clk_a, dst=clk_b)
    add_late_constraint(platform, cmd + f"{1e9/freq_a:.3f}", src=clk_b, dst=clk_a)
