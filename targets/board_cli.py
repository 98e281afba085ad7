#
# This file is part of LiteRecorder.
#
# SPDX-License-Identifier: BSD-2-Clause

"""Command line shared by the board targets (``targets/xilinx_*.py``): LiteX's target arguments plus
the recorder's, generation without Vivado, ``--build`` with Vivado, ``--load``/``--flash`` with
openFPGALoader."""

import os
import sys
import shutil

from litex.build.parser import LiteXArgumentParser

from literecorder import ROOT
from literecorder.soc.recorder import RECORDER_SLOTS
from literecorder.soc.recorder_soc import parse_size, MB, LiteRecorderBuilder
from literecorder.soc.boards import board as board_info
from literecorder.soc import fpga_drive_fmc
from literecorder.soc.vivado import VIVADO_VERSION

class TargetError(Exception):
    """A request the target cannot honour here (missing tool, missing bitstream)."""

def check_vivado():
    if shutil.which("vivado") is None:
        raise TargetError("--build needs Vivado (`vivado` is not on PATH): install Vivado "
            "(AMD/Xilinx, not packaged for Debian) and source its settings64.sh; without --build the "
            "design is generated only (Verilog, Vivado TCL with the IP creation, XDC).")

def check_openfpgaloader():
    if shutil.which("openFPGALoader") is None:
        raise TargetError("--load/--flash need openFPGALoader (Debian package openfpgaloader): "
            "sudo apt-get install openfpgaloader")

def pll_error(soc):
    """LiteX's "No PLL config found" with what it does not say: each PLL/MMCM of the design, its
    input and outputs, and the outputs it cannot make even alone."""
    import copy
    lines = []
    def plls(m, path):
        for sub_name, sub in getattr(m, "_submodules", []):
            p = f"{path}.{sub_name}" if sub_name else f"{path}.?"
            if hasattr(sub, "clkouts") and hasattr(sub, "compute_config"):
                yield p, sub
            yield from plls(sub, p)
    for path, pll in plls(soc, "soc"):
        outs = []
        for n, (clk, freq, phase, margin) in sorted(pll.clkouts.items()):
            alone = copy.copy(pll)
            alone.clkouts = {0: (clk, freq, phase, margin)}
            alone.nclkouts = 1
            try:
                alone.compute_config()
                ok = ""
            except ValueError:
                ok = " <- impossible even alone"
            outs.append(f"output {n}: {freq/1e6:g} MHz (margin {margin*100:g} %){ok}")
        try:
            pll.compute_config()
            continue
        except ValueError:
            pass
        lines.append(f"{path} ({type(pll).__name__}, input {(pll.clkin_freq or 0)/1e6:g} MHz) cannot make "
            f"its outputs together: " + "; ".join(outs))
    return ("No PLL config found: " + " | ".join(lines) + ". Choose output frequencies that share a VCO "
        "frequency (integer ratios of one another), or widen their margins.") if lines else \
        "No PLL config found (LiteX's clock generator; no PLL of the design could be named)"

def board_parser(board, platform_cls):
    info   = board_info(board)
    parser = LiteXArgumentParser(platform=platform_cls)
    parser.prog        = f"xilinx_{board}.py"
    parser.description = (f"LiteRecorder on the {info['name']} ({info['fpga']}) with the Opsero FPGA "
        f"Drive FMC Gen4 on {fpga_drive_fmc.carrier(board)['connector']}.")
    n = fpga_drive_fmc.max_ssds(board)
    widths = info["pcie_data_width"]
    parser.add_target_argument("--sys-clk-freq",    default=info["sys_clk_freq"], type=float,
        help="System clock frequency in Hz (the DRAM runs at 4x).")
    parser.add_target_argument("--ssds",            default=1, type=int,
        help=f"SSDs on the FPGA Drive FMC ({'1' if n == 1 else f'1-{n}'}), one root port each.")
    parser.add_target_argument("--pcie-data-width", default=widths[0], type=int,
        help=f"TLP datapath width in bits ({' or '.join(map(str, widths))}).")
    parser.add_target_argument("--chunk-size",      default=128*1024, type=parse_size,
        help="Default recorder chunk in bytes, one NVMe command (power of two >= 128KiB; 128KiB, 1MiB accepted).")
    parser.add_target_argument("--ring-size",       default=RECORDER_SLOTS, type=int,
        help=f"Chunk slots of the recorder's ring in DRAM (power of two 2-{RECORDER_SLOTS}).")
    parser.add_target_argument("--flash",           action="store_true",
        help="Write the bitstream to the board's configuration flash (openFPGALoader).")
    parser.add_target_argument("--cable",           default=None,
        help="openFPGALoader cable (None: the board's).")
    parser.add_target_argument("--vivado-version",  default=VIVADO_VERSION,
        help=f"Vivado version the build script accepts (checked against {VIVADO_VERSION}: another one "
            "only after checking the IPs, doc/boards.md).")
    return parser

def board_main(board, platform_cls, soc_cls, programmer, flash=True, argv=None):
    """Parses ``argv``, generates the design (always), builds it (``--build``), loads/flashes it.

    ``programmer(cable)`` -> a LiteX ``OpenFPGALoader``; ``flash``: True, or a string saying why
    this board's flash cannot be written from here. Returns the exit code."""
    parser = board_parser(board, platform_cls)
    args   = parser.parse_args(argv)
    info   = board_info(board)
    if args.output_dir is None:
        args.output_dir = os.path.join(ROOT, "build", f"{board}-{args.ssds}ssd")
    try:
        if args.build:
            check_vivado()                          # At once, before anything is generated.
        if (args.load or args.flash):
            check_openfpgaloader()
        if args.flash and flash is not True:
            raise TargetError(f"--flash on the {info['name']}: {flash}")
    except TargetError as e:
        print(f"error: {e}", file=sys.stderr)
        return 2
    try:
        soc = soc_cls(
            sys_clk_freq    = args.sys_clk_freq,
            ssds            = args.ssds,
            pcie_data_width = args.pcie_data_width,
            chunk_size      = args.chunk_size,
            ring_size       = args.ring_size,
            vivado_version  = args.vivado_version,
            **parser.soc_argdict)
    except ValueError as e:
        parser.error(str(e))
    builder = LiteRecorderBuilder(soc, **parser.builder_argdict)
    try:
        builder.build(**parser.toolchain_argdict, run=args.build)
    except ValueError as e:
        if "No PLL config found" not in str(e):
            raise
        print(f"error: {pll_error(soc)}", file=sys.stderr)
        return 2

    gateware = builder.gateware_dir
    name     = soc.platform.name
    budget   = soc.dram_budget
    print(f"\n[{board}] LiteRecorder, {args.ssds} SSD(s), generated in {gateware}:")
    for ext, what in [(".v", "Verilog of the SoC"), (".tcl", "Vivado script (root-port IP creation, "
        "synthesis, implementation)"), (".xdc", "pins, clocks, clock-domain crossings, placement")]:
        print(f"  {os.path.join(gateware, name + ext)}: {what}")
    if builder.compile_software:
        print(f"  {os.path.join(builder.software_dir, 'bios', 'bios.bin')}: BIOS with the command library")
    print(f"  {budget.summary()}")
    if budget.dram_bound:
        print(f"  NOTE: {budget.bound_message(soc.staging)}")
    if not args.build:
        print("  not built: --build runs Vivado on these files.")

    if args.load or args.flash:
        bitstream = builder.get_bitstream_filename(mode="sram")
        if not os.path.exists(bitstream):
            print(f"error: no bitstream at {bitstream}: build it first (--build, needs Vivado).",
                file=sys.stderr)
            return 2
        prog = programmer(args.cable)
        if args.load:
            prog.load_bitstream(bitstream)
        if args.flash:
            prog.flash(0, bitstream)
    return 0
