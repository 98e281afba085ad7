#
# This file is part of LiteRecorder.
#
# SPDX-License-Identifier: BSD-2-Clause

"""Checks of the board targets that need no Vivado: generation of a target in-process, parsing of
the generated Vivado TCL and XDC, lint stubs of the Xilinx primitives, Verilator lint of a whole
generated design.

Primitive stubs are made at run time from the port and parameter lists of Yosys's Xilinx cell
library (``share/yosys/xilinx/cells_xtra.v``, ``cells_sim.v``, derived from the vendor's
libraries): ports and parameters only, no behaviour. The PCIe integrated blocks (hard IP) are
black boxes from ``cores/pcie/phy/verilog/stubs`` (port lists of the IP's synthesis stubs).
"""

import os
import re
import sys
import shutil
import logging
import subprocess
import importlib.util
from contextlib import contextmanager

ROOT  = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
STUBS = os.path.join(ROOT, "cores", "pcie", "phy", "verilog", "stubs")

BOARDS = ["kc705", "kcu105", "zcu106"]

# Hard IP stub (file, module name in it) per family module-name prefix.
IP_STUBS = {
    "pcie_s7_rp":  "pcie_s7_rp.v",
    "pcie_us_rp":  "pcie_us_rp.v",
    "pcie_usp_rp": "pcie_usp_rp.v",
}

# Targets ------------------------------------------------------------------------------------------

def target_module(board):
    """The target script ``targets/xilinx_<board>.py`` as a module."""
    name = f"_literec_target_{board}"
    if name not in sys.modules:
        path = os.path.join(ROOT, "targets", f"xilinx_{board}.py")
        spec = importlib.util.spec_from_file_location(name, path)
        mod  = importlib.util.module_from_spec(spec)
        spec.loader.exec_module(mod)
        sys.modules[name] = mod
    return sys.modules[name]

@contextmanager
def _quiet():
    logging.disable(logging.WARNING)
    try:
        yield
    finally:
        logging.disable(logging.NOTSET)

class Generated:
    """Files of one generated board design."""
    def __init__(self, board, ssds, output_dir, soc, builder):
        self.board      = board
        self.ssds       = ssds
        self.output_dir = output_dir
        self.soc        = soc
        gw   = builder.gateware_dir
        name = soc.platform.name
        self.top     = name
        self.verilog = os.path.join(gw, name + ".v")
        self.tcl     = os.path.join(gw, name + ".tcl")
        self.xdc     = os.path.join(gw, name + ".xdc")
        self.csr_csv = os.path.join(output_dir, "csr.csv")
        self.bios    = os.path.join(builder.software_dir, "bios", "bios.elf")

    def read(self, what):
        with open(getattr(self, what)) as f:
            return f.read()

def generate(board, ssds, output_dir, compile_software=False, soc_cls=None, **kwargs):
    """Generates the target's design (Verilog, Vivado TCL, XDC; the BIOS if ``compile_software``)
    with Vivado not run, in-process; ``soc_cls``: a subclass of the target's ``BaseSoC``. Returns a
    ``Generated``."""
    from literecorder.soc.recorder_soc import LiteRecorderBuilder
    mod = target_module(board)
    with _quiet():
        soc = (soc_cls or mod.BaseSoC)(ssds=ssds, **kwargs)
        builder = LiteRecorderBuilder(soc, output_dir=output_dir, compile_software=compile_software,
            compile_gateware=False, csr_csv=os.path.join(output_dir, "csr.csv"))
        vns = builder.build(run=False)
    gen = Generated(board, ssds, output_dir, soc, builder)
    gen.vns = vns
    return gen

# BIOS command tables ------------------------------------------------------------------------------

#: Commands of the library that only the simulation has the hardware for (the simulated ADC/DAC).
SIM_ONLY_COMMANDS = {"sim_io"}

def library_commands():
    """The commands the project's BIOS library defines (``define_literec_command`` in software/libliterec,
    read by scripts/cmddoc.py, the command reference's generator)."""
    sys.path.insert(0, os.path.join(ROOT, "scripts"))
    try:
        import cmddoc
    finally:
        sys.path.pop(0)
    return {c.name for c in cmddoc.library_commands(ROOT)}

def bios_commands(elf):
    """The command table linked into a BIOS (``bios.elf``): LiteX puts a ``__bios_cmd_<name>``
    pointer per command into its ``.bios_cmds`` section."""
    nm = shutil.which("riscv64-unknown-elf-nm") or "nm"
    out = subprocess.run([nm, elf], capture_output=True, text=True, check=True).stdout
    # (__bios_cmd_start/__bios_cmd_end: the section's bounds, from the linker script.)
    return set(re.findall(r"\s__bios_cmd_(\w+)$", out, re.M)) - {"start", "end"}

# TCL / XDC ----------------------------------------------------------------------------------------

def tcl_ips(tcl):
    """{module_name: (ip, {CONFIG name: value})} of every ``create_ip`` of a Vivado TCL script (a
    value the script derives, ``[literec_site_value $obj <name> <site>]``, as its site)."""
    ips = {}
    for m in re.finditer(r"^create_ip -vendor xilinx\.com -library ip -name (\S+) -version \S+ "
        r"-module_name (\S+)\nset obj \[get_ips \2\]\n((?:set \w+ \[literec_site_value [^\n]*\n)*)"
        r"set_property -dict \[list \\\n(.*?)\] \$obj$", tcl, re.M | re.S):
        ip, name, derived, body = m.groups()
        sites = dict(re.findall(r"^set (\w+) \[literec_site_value \$obj \w+ (\S+)\]$", derived, re.M))
        config = {}
        for line in body.splitlines():
            c = (re.fullmatch(r"CONFIG\.(\w+) \{(.*)\} \\", line.strip()) or
                 re.fullmatch(r"CONFIG\.(\w+) \$(\w+) \\", line.strip()))
            assert c, f"unparsed IP property line: {line!r}"
            config[c.group(1)] = sites.get(c.group(2), c.group(2)) if line.strip().split()[1][0] == "$" \
                else c.group(2)
        ips[name] = (ip, config)
    return ips

def tcl_sources(tcl):
    return re.findall(r"^read_verilog \{(.+)\}$", tcl, re.M)

def xdc_locs(xdc):
    """{port name: package pin} of the XDC."""
    return {(m.group(2) or m.group(3)): m.group(1) for m in
        re.finditer(r"^set_property LOC (\S+) \[get_ports (?:\{([^}]+)\}|([^\s\]]+))\]$", xdc, re.M)}

def xdc_iostandards(xdc):
    return {(m.group(2) or m.group(3)): m.group(1) for m in
        re.finditer(r"^set_property IOSTANDARD (\S+) \[get_ports (?:\{([^}]+)\}|([^\s\]]+))\]$", xdc,
        re.M)}

# Verilog ------------------------------------------------------------------------------------------

def verilog_modules(text):
    return set(re.findall(r"^\s*module\s+(\w+)", text, re.M))

def verilog_instances(text):
    """Names of the modules a (LiteX-generated) Verilog file instantiates."""
    names = set()
    for m in re.finditer(r"^([A-Za-z_]\w*)\s+(?:#\s*\(|[A-Za-z_]\w*\s*\()", text, re.M):
        if m.group(1) not in ("module", "assign", "always", "reg", "wire", "input", "output",
            "inout", "initial", "end", "else", "if", "case", "function"):
            names.add(m.group(1))
    return names

# Primitive stubs ----------------------------------------------------------------------------------

def _yosys_share():
    yosys = shutil.which("yosys")
    if yosys is None:
        raise RuntimeError("yosys is required for the primitive stubs (Debian package yosys)")
    share = os.path.join(os.path.dirname(os.path.dirname(os.path.realpath(yosys))), "share", "yosys",
        "xilinx")
    return share

_DECL = re.compile(r"\b(input|output|inout)\b\s*(?:wire|reg)?\s*(?:signed\s*)?(\[[^\]]+\])?\s*"
    r"([A-Za-z_]\w*(?:\s*,\s*(?!input|output|inout)[A-Za-z_]\w*)*)")
_PARAM = re.compile(r"^\s*parameter\s+((?:real|integer|\[[^\]]+\])?\s*)([A-Za-z_]\w*)\s*=\s*([^;]+);",
    re.M)

def _module_source(libs, name):
    for text in libs:
        m = re.search(rf"^module\s+{name}\b(.*?)^endmodule", text, re.M | re.S)
        if m:
            return m.group(1)
    return None

def primitive_stub(libs, name):
    """A lint stub of primitive ``name``: its parameters and ports, nothing else."""
    src = _module_source(libs, name)
    if src is None:
        return None
    src    = re.sub(r"\(\*.*?\*\)", "", src, flags=re.S)     # Attributes.
    src    = re.sub(r"//[^\n]*", "", src)
    src    = re.sub(r"\bspecify\b.*?\bendspecify\b", "", src, flags=re.S)
    params = [(t.strip(), n, v.strip()) for t, n, v in _PARAM.findall(src)]
    ports, seen = [], set()
    for d, width, names in _DECL.findall(src):
        for n in re.split(r"\s*,\s*", names.strip()):
            if n and n not in seen:
                seen.add(n)
                ports.append((d, width or "", n))
    lines = [f"module {name}"]
    if params:
        lines.append("  #(" + ",\n    ".join(f"parameter {t + ' ' if t else ''}{n} = {v}"
            for t, n, v in params) + ")")
    lines.append("  (" + ",\n   ".join(f"{d} {w + ' ' if w else ''}{n}" for d, w, n in ports) + ");")
    lines.append("endmodule")
    return "\n".join(lines)

def primitive_stubs(names):
    """Stub file text for the primitives ``names``; raises if one is unknown to the library."""
    share = _yosys_share()
    libs  = [open(os.path.join(share, f)).read() for f in ("cells_xtra.v", "cells_sim.v")]
    out   = ["// Lint stubs of Xilinx primitives: ports and parameters from Yosys's Xilinx cell library.",
        "`timescale 1ns / 1ps",
        "/* verilator lint_off UNDRIVEN */", "/* verilator lint_off UNUSEDSIGNAL */",
        "/* verilator lint_off UNUSEDPARAM */", "/* verilator lint_off DECLFILENAME */",
        "/* verilator lint_off MULTITOP */"]
    missing = []
    for n in sorted(names):
        stub = primitive_stub(libs, n)
        if stub is None:
            missing.append(n)
        else:
            out.append(stub)
    if missing:
        raise RuntimeError(f"no primitive stub for: {', '.join(missing)}")
    return "\n".join(out) + "\n"

def ip_stub(module, data_width, nlanes=4):
    """The hard IP stub renamed to ``module`` (e.g. pcie_us_rp1) with its widths defined."""
    family = re.sub(r"\d+$", "", module)
    with open(os.path.join(STUBS, IP_STUBS[family])) as f:
        text = f.read()
    text = re.sub(rf"\bmodule\s+{family}\b", f"module {module}", text)
    return f"`define RP_DATA_WIDTH {data_width}\n`define RP_NLANES {nlanes}\n" + text

# Lint ---------------------------------------------------------------------------------------------

# Warning classes Migen's Verilog emitter produces in any LiteX design (unsized constants, "<=" in
# combinational processes, Case without default); everything else must be clean.
MIGEN_WARNINGS = {"WIDTH", "COMBDLY", "CASEINCOMPLETE"}

class LintResult:
    def __init__(self, returncode, messages, cmd):
        self.returncode = returncode
        self.cmd      = cmd
        self.messages = messages
        self.errors   = [l for l in messages if l.startswith("%Error")]
        self.warnings = [l for l in messages if l.startswith("%Warning")]
        self.classes  = {re.match(r"%Warning-([A-Z]+)", w).group(1) for w in self.warnings}
        # Port connections of the wrong width (primitive/IP port lists that disagree).
        self.pins     = [w for w in self.warnings if "port connection" in w]

def lint(gen, workdir, ip_stub_text=None):
    """``verilator --lint-only`` of the generated top with the CPU's source, the hard IP stubs and
    the primitive stubs. ``ip_stub_text``: {module: stub text} overriding the default stubs."""
    verilator = shutil.which("verilator")
    if verilator is None:
        raise RuntimeError("verilator is required (Debian package verilator)")
    os.makedirs(workdir, exist_ok=True)
    tcl     = gen.read("tcl")
    sources = tcl_sources(tcl)
    defined = set()
    for s in sources:
        with open(s) as f:
            defined |= verilog_modules(f.read())
    with open(gen.verilog) as f:
        needed = verilog_instances(f.read()) - defined
    ips   = {n for n in needed if re.sub(r"\d+$", "", n) in IP_STUBS}
    prims = needed - ips
    files = []
    path = os.path.join(workdir, "primitives.v")
    with open(path, "w") as f:
        f.write(primitive_stubs(prims))
    files.append(path)
    width = gen.soc.recorder_config.pcie_data_width
    for ip in sorted(ips):
        path = os.path.join(workdir, ip + ".v")
        with open(path, "w") as f:
            f.write((ip_stub_text or {}).get(ip) or ip_stub(ip, width))
        files.append(path)
    # The CPU's source is not ours: its warnings are waived (not its errors).
    vlt = os.path.join(workdir, "waivers.vlt")
    with open(vlt, "w") as f:
        f.write("`verilator_config\n")
        for s in sources:
            if os.path.abspath(s) != os.path.abspath(gen.verilog):
                f.write(f'lint_off -file "{s}"\n')
    # PINMISSING waived: unconnected IP/primitive pins are intended.
    cmd = [verilator, "--lint-only", "-Wno-fatal", "-Wno-PINMISSING",
        vlt, *files, *sources, "--top-module", gen.top]
    r = subprocess.run(cmd, capture_output=True, text=True, timeout=900, cwd=workdir)
    messages = [l for l in r.stderr.splitlines() if l.startswith("%")]
    return LintResult(r.returncode, messages, cmd)

# Pins ---------------------------------------------------------------------------------------------

_GT = re.compile(r"MGT[XH]?(TX|RX)(P|N)(\d)_(\d+)")
_REFCLK = re.compile(r"MGTREFCLK([01])(P|N)_(\d+)")

def _resources(io):
    """[(resource name, index, subsignal or None, pins, iostandard)] of an IO list."""
    from litex.build.generic_platform import Pins, Subsignal, IOStandard
    out = []
    for r in io:
        name, index, items = r[0], r[1], r[2:]
        std = next((i.name for i in items if isinstance(i, IOStandard)), None)
        for i in items:
            if isinstance(i, Pins):
                out.append((name, index, None, i.identifiers, std))
            if isinstance(i, Subsignal):
                s_std = next((c.name for c in i.constraints if isinstance(c, IOStandard)), std)
                for c in i.constraints:
                    if isinstance(c, Pins):
                        out.append((name, index, i.name, c.identifiers, s_std))
    return out

def check_extension(board, ssds, io=None, platform_io=None, connectors=None):
    """Problems (list of strings, empty when none) of the FPGA Drive FMC extension of ``board`` with
    ``ssds`` SSDs against the package-pin facts (``board_pin_facts``), the bank voltages and the
    platform's own IOs and connector map."""
    from literecorder.soc import fpga_drive_fmc
    from board_pin_facts import FACTS, IOSTANDARD_VCCO
    facts = FACTS[board]
    c     = fpga_drive_fmc.carrier(board)
    io    = fpga_drive_fmc.io(board, ssds) if io is None else io
    if platform_io is None or connectors is None:
        from importlib import import_module
        pmod = import_module(f"litex_boards.platforms.xilinx_{board}")
        platform_io = pmod._io if platform_io is None else platform_io
        connectors  = getattr(pmod, "_connectors", []) if connectors is None else connectors
    problems = []
    used = {}
    for name, index, sub, pins, std in _resources(io):
        what = f"{name}:{index}" + (f".{sub}" if sub else "")
        for lane, pin in enumerate(pins):
            if pin in used:
                problems.append(f"{what}: pin {pin} already used by {used[pin]}")
            used[pin] = what
            if pin not in facts["pins"]:
                problems.append(f"{what}: {pin} is not a known pin of the {facts['part']} "
                    f"(package facts of the banks/quads the adapter uses)")
                continue
            bank, func = facts["pins"][pin]
            if sub in ("tx_p", "tx_n", "rx_p", "rx_n"):
                m = _GT.fullmatch(func)
                want = (sub[:2].upper(), sub[-1].upper())
                if m is None or (m.group(1), m.group(2)) != want:
                    problems.append(f"{what}[{lane}]: {pin} is {func}, not a transceiver "
                        f"{want[0]}{want[1]} pin")
                    continue
                link = c["links"][index]
                if int(m.group(4)) != link["quad"]:
                    problems.append(f"{what}[{lane}]: {pin} is in quad {m.group(4)}, the link's "
                        f"quad is {link['quad']}")
                site = facts["gt_sites"].get(pin)
                if site != link["gt_channels"][lane]:
                    problems.append(f"{what}[{lane}]: {pin} belongs to {site}, lane {lane} is "
                        f"placed on {link['gt_channels'][lane]}")
            elif sub in ("clk_p", "clk_n"):
                m = _REFCLK.fullmatch(func)
                if m is None or m.group(2) != sub[-1].upper():
                    problems.append(f"{what}: {pin} is {func}, not a reference clock "
                        f"{sub[-1].upper()} input")
                    continue
                quad = c["links"][index]["quad"]
                if abs(int(m.group(3)) - quad) > 1:
                    problems.append(f"{what}: {pin} is quad {m.group(3)}'s reference clock, more "
                        f"than one quad from the lanes' quad {quad}")
            else:
                if not func.startswith("IO_"):
                    problems.append(f"{what}: {pin} is {func}, not a user IO pin")
                    continue
                if bank not in facts["vcco"]:
                    problems.append(f"{what}: {pin} is in bank {bank}, whose VCCO is not known")
                    continue
                rail, volts = facts["vcco"][bank]
                need = IOSTANDARD_VCCO.get(std)
                if need is None:
                    problems.append(f"{what}: IO standard {std!r} unknown (bank {bank}: {rail})")
                elif need != volts:
                    problems.append(f"{what}: {std} needs VCCO {need} V, bank {bank} is {rail} "
                        f"at {volts} V")
    # The platform's own IOs in the banks the adapter uses: same voltage.
    ext_banks = {facts["pins"][p][0] for p in used if p in facts["pins"]} & set(facts["vcco"])
    for name, index, sub, pins, std in _resources(platform_io):
        for pin in pins:
            if pin in facts["pins"] and facts["pins"][pin][0] in ext_banks:
                bank = facts["pins"][pin][0]
                rail, volts = facts["vcco"][bank]
                need = IOSTANDARD_VCCO.get(std)
                if need is not None and need != volts:
                    problems.append(f"platform {name}:{index}{'.' + sub if sub else ''} ({pin}, "
                        f"{std}) disagrees with bank {bank} at {volts} V")
    # The carrier's FMC map (where the platform has one) gives the same pins.
    for cname, cmap in connectors:
        if cname == c["connector"] and isinstance(cmap, dict):
            for signal, pin in c["fmc"].items():
                if signal in cmap and cmap[signal] != pin:
                    problems.append(f"{signal}: {pin} here, {cmap[signal]} in the platform's "
                        f"{cname} connector map")
    return problems
