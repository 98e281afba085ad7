#
# This file is part of LiteRecorder.
#
# SPDX-License-Identifier: BSD-2-Clause

"""Foundation: the simulated SoC boots the BIOS, the project's commands are linked in, the command
line of targets/sim.py behaves (exit codes, timeouts, argument errors)."""

import os
import re
import sys
import subprocess

import pytest

from conftest import ROOT, get_build, build_dir, parse_results, result

SIM_PY = os.path.join(ROOT, "targets", "sim.py")

def run_sim_py(*args, timeout=600):
    return subprocess.run([sys.executable, SIM_PY, *args], capture_output=True, text=True,
        timeout=timeout)

# BIOS ---------------------------------------------------------------------------------------------

@pytest.mark.system
@pytest.mark.xdist_group("foundation")
def test_rec_info_reports_the_build(module_sim):
    build = get_build()
    out   = module_sim.cmd("rec_info")
    r     = parse_results(out)
    assert len(r) == 1
    r = r[0]
    assert int(r["sys_clk_hz"]) == build.sys_clk_freq == 200_000_000
    # The DRAM size printed is the generated one (mem.h), not a constant of the C code.
    mem_h = open(os.path.join(build.output_dir, "software", "include", "generated", "mem.h")).read()
    main_ram_size = int(re.search(r"#define MAIN_RAM_SIZE 0x([0-9a-fA-F]+)", mem_h).group(1), 16)
    assert int(r["dram_bytes"]) == main_ram_size
    assert int(r["ssd_ports"]) == build.n_ssds == 1
    assert int(r["chunk_bytes"]) == 128*1024
    assert int(r["pcie_data_width"]) == 256

@pytest.mark.system
@pytest.mark.xdist_group("foundation")
def test_help_lists_project_commands(module_sim):
    """`help` lists exactly the commands of the BIOS's command table, and the table holds every
    command the library defines (the board targets' BIOS is checked against the same list)."""
    import board_checks as bc
    out    = module_sim.cmd("help")
    listed = set(re.findall(r"^(\w+)\s+- ", out, re.M))
    table  = bc.bios_commands(os.path.join(get_build().output_dir, "software", "bios", "bios.elf"))
    assert listed == table
    assert bc.library_commands() <= table
    assert bc.SIM_ONLY_COMMANDS <= table

@pytest.mark.system
@pytest.mark.xdist_group("foundation")
def test_a_line_longer_than_the_console_buffer_never_runs_cut(module_sim):
    """LiteX's readline keeps 63 characters and the BIOS runs what is left: a command of the library
    whose line filled the buffer refuses to run (a shortened rec_delete must never run)."""
    from literecorder.host.console import text, BIOS_LINE_MAX
    con  = module_sim.con
    line = "nvme_read 0 1 0x" + "0"*60           # 76 characters: cut to '... 0x00...' (63)
    start = len(con.buf)
    con.pos = start
    con.transport.write(line.encode() + b"\r")
    con.wait_prompt(60, "the prompt after a long line")
    out = text(con.buf[start:con.pos])
    assert ("Error: the line filled the console's 63 characters and may have been cut: nvme_read was "
        "not run. Shorten it (rec_set key=value sets options ahead)") in out, out
    assert "RESULT" not in out and "nvme0:" not in out, out
    assert BIOS_LINE_MAX == 63
    # A line one character short of the buffer runs.
    out = module_sim.cmd("rec_uptime " + "1"*(BIOS_LINE_MAX - len("rec_uptime ") - 1))
    assert "RESULT name=uptime" in out and "Error" not in out, out

@pytest.mark.system
@pytest.mark.xdist_group("foundation")
def test_unknown_command_gives_bios_error(module_sim):
    out = module_sim.cmd("no_such_command 1 2", timeout=30)
    assert "Command not found" in out
    # The console is still alive afterwards.
    assert "RESULT name=rec_info" in module_sim.cmd("rec_info")

@pytest.mark.system
@pytest.mark.xdist_group("foundation")
def test_bios_timer_counts_modeled_clock(module_sim):
    # `uptime` counts sys_clk cycles: two reads differ by at least the cycles of one command.
    a = int(re.search(r"Uptime: (\d+) sys_clk", module_sim.cmd("uptime")).group(1))
    b = int(re.search(r"Uptime: (\d+) sys_clk", module_sim.cmd("uptime")).group(1))
    assert b > a > 100_000          # (the boot alone takes more: BIOS, SDRAM init, memtest)

# Command line -------------------------------------------------------------------------------------

def _cli_output_dir():
    get_build()  # Built (or found up to date) under the session lock.
    return build_dir()

@pytest.mark.system
@pytest.mark.xdist_group("foundation")
def test_cli_run_help_exits_zero():
    r = run_sim_py("--output-dir", _cli_output_dir(), "--run", "help; rec_info")
    assert r.returncode == 0, r.stdout + r.stderr
    assert re.search(r"^rec_info\s+- ", r.stdout, re.M)
    assert "RESULT name=rec_info" in r.stdout
    # At exit: the modeled cycles since power-up against the wall time of the simulator.
    m = re.search(r"^RESULT name=sim_speed cycles=(\d+) wall_s=([\d.]+) cpu_s=([\d.]+) "
        r"cycles_per_s=(\d+)$", r.stdout, re.M)
    assert m, r.stdout
    cycles, wall, cpu, rate = int(m[1]), float(m[2]), float(m[3]), int(m[4])
    assert cycles > 1_000_000 and 0 < cpu <= wall + 1 and abs(rate - cycles/wall) <= 1 + rate*0.01

@pytest.mark.system
@pytest.mark.xdist_group("foundation")
def test_uptime_is_64_bit_and_counts_the_modeled_clock(module_sim):
    """The counter as the BIOS reads it; its crossing of 2**32 (21.5 s of modeled time, out of reach
    here) is checked by the unit tests below: the counter preset in Migen, the C conversions."""
    a = int(result(module_sim.cmd("rec_uptime"), "uptime")["cycles"])
    b = result(module_sim.cmd("rec_uptime"), "uptime")
    assert int(b["cycles"]) > a and int(b["us"]) == int(b["cycles"])//200

@pytest.mark.unit
def test_uptime_counter_crosses_2_to_the_32_without_wrapping():
    """The SoC's uptime counter (LiteX Timer, ``timer_uptime=True``) preset to 2**32 - 3 cycles (21.5 s
    at 200 MHz): latched through its CSR after 5 cycles, it reads 2**32 + 2, not 2."""
    from migen import run_simulation
    from litex.soc.cores.timer import Timer
    dut = Timer()
    dut.add_uptime()
    got = []
    def gen():
        yield dut.uptime_cycles.eq(2**32 - 3)
        yield
        for _ in range(4):
            yield
        yield dut._uptime_latch.re.eq(1)
        yield
        yield dut._uptime_latch.re.eq(0)
        yield
        got.append((yield dut._uptime_cycles.status))
    run_simulation(dut, gen())
    assert len(dut._uptime_cycles.status) == 64
    assert got == [2**32 + 2]

@pytest.mark.unit
@pytest.mark.parametrize("freq", [200000000, 156250000])
def test_cycle_and_microsecond_conversions_are_exact_over_64_bits(tmp_path, freq):
    """literec_cycles_to_us / literec_us_to_cycles (software/libliterec/pcie.c), compiled for the
    host: exact against Python's integers past 2**32 cycles and up to 2**64 - 1."""
    src = open(os.path.join(ROOT, "software", "libliterec", "pcie.c")).read()
    funcs = [re.search(r"^uint64_t %s\(uint64_t \w+\)\n\{.*?^\}" % name, src, re.M | re.S).group(0)
        for name in ("literec_cycles_to_us", "literec_us_to_cycles")]
    values = [0, 1, 199, 2**32 - 1, 2**32, 2**32 + 7, 10**12 + 3, 1.8e13, 2**63 + 5, 2**64 - 1]
    values = [int(v) for v in values]
    c = tmp_path / "conv.c"
    c.write_text("#include <stdio.h>\n#include <stdint.h>\n" + "\n".join(funcs) +
        "\nint main(void) {\n\tstatic const uint64_t v[] = {" + ", ".join(f"{v}ULL" for v in values) + "};\n"
        "\tfor (unsigned i = 0; i < sizeof(v)/sizeof(v[0]); i++)\n"
        "\t\tprintf(\"%llu %llu\\n\", (unsigned long long)literec_cycles_to_us(v[i]),"
        " (unsigned long long)literec_us_to_cycles(v[i]));\n\treturn 0;\n}\n")
    exe = tmp_path / "conv"
    subprocess.run(["cc", "-O1", "-Wall", "-Werror", f"-DCONFIG_CLOCK_FREQUENCY={freq}ULL", "-o", str(exe),
        str(c)], check=True)
    out = subprocess.run([str(exe)], capture_output=True, text=True, check=True).stdout.split("\n")
    got = [tuple(int(x) for x in l.split()) for l in out if l]
    # us -> cycles is modulo 2**64 (as uint64_t) beyond 2**64 / f microseconds.
    assert got == [(v*10**6//freq, (v*freq//10**6) % 2**64) for v in values]

@pytest.mark.system
@pytest.mark.xdist_group("foundation")
def test_cli_run_hanging_command_times_out():
    # A silent fill of 256 MiB (about 8 M modeled cycles) takes far longer than 5 s of wall clock in
    # simulation. (mem_test prints its progress every 128 KiB: --timeout bounds silence, it runs on.)
    r = run_sim_py("--output-dir", _cli_output_dir(), "--timeout", "5",
        "--run", "rec_fill 0x40000000 0x10000000")
    assert r.returncode == 1, r.stdout[-2000:] + r.stderr
    assert ("[sim] ERROR: timeout: no console output for 5 s waiting for 'rec_fill 0x40000000 0x10000000'"
        in r.stderr), r.stderr

@pytest.mark.system
@pytest.mark.xdist_group("foundation")
def test_cli_run_stops_at_a_command_that_reports_an_error():
    """--run: a command that prints an error ends the run with exit status 1, the commands after it
    are not run; --keep-going runs them (still exit status 1). The console carries no ANSI codes."""
    cmds = "rec_info; nvme_read 0 zz; rec_uptime"
    r = run_sim_py("--output-dir", _cli_output_dir(), "--run", cmds)
    assert r.returncode == 1, r.stdout + r.stderr
    assert "RESULT name=rec_info" in r.stdout and "RESULT name=uptime" not in r.stdout
    err = [l for l in r.stderr.splitlines() if l.startswith("[sim] ERROR")]
    assert len(err) == 1 and err[0].startswith("[sim] ERROR: 'nvme_read 0 zz' reported: Error: ") and \
        err[0].endswith("(the commands after it were not run; --keep-going runs them)"), r.stderr
    assert "[sim] 2 of 3 command(s) run" in r.stdout
    r = run_sim_py("--output-dir", _cli_output_dir(), "--keep-going", "--run", cmds)
    assert r.returncode == 1 and "RESULT name=uptime" in r.stdout and "[sim] 3 of 3 command(s) run" in r.stdout
    log = open(os.path.join(_cli_output_dir(), "runs", "cli", "console.log"), "rb").read()
    assert b"litex> " in log and b"\x1b[" not in log
    r = run_sim_py("--output-dir", _cli_output_dir(), "--run", "rec_info; rec_uptime")
    assert r.returncode == 0 and "[sim] 2 of 2 command(s) run" in r.stdout

@pytest.mark.system
@pytest.mark.xdist_group("foundation")
def test_cli_default_namespace_file_follows_the_namespace_size():
    """Two runs in a row with different --ns-size and no --ns-file: the run directory's scratch
    namespace file is made anew for the second (it used to stop the simulation), saying so."""
    ns = os.path.join(_cli_output_dir(), "runs", "cli", "ssd0.img")
    r = run_sim_py("--output-dir", _cli_output_dir(), "--ns-size", "64MiB", "--run", "nvme_init")
    assert r.returncode == 0 and os.path.getsize(ns) == 64 << 20, r.stdout[-2000:] + r.stderr
    r = run_sim_py("--output-dir", _cli_output_dir(), "--ns-size", "128MiB", "--run", "nvme_init")
    assert r.returncode == 0 and os.path.getsize(ns) == 128 << 20, r.stdout[-2000:] + r.stderr
    assert (f"[sim] {ns}: held a 67108864-byte namespace, this run's is 134217728 bytes: made anew "
        "(name a file with --ns-file to keep one)") in r.stdout

@pytest.mark.system
@pytest.mark.xdist_group("foundation")
def test_cli_default_build_directory_is_the_tests_one():
    """targets/sim.py without --output-dir uses the configuration's own directory: the one the
    tests (and literec bench --sim) use, so it is found up to date; another configuration has another."""
    get_build()
    r = run_sim_py("--build-only")
    assert r.returncode == 0 and f"[sim] {build_dir()}: up to date" in r.stdout, r.stdout + r.stderr
    from literecorder.targets.sim import SimBuild
    assert SimBuild(n_ssds=2).output_dir != build_dir()
    assert os.path.basename(SimBuild(n_ssds=2, dram="kcu105").output_dir).startswith("2ssd-kcu105-")

@pytest.mark.unit
@pytest.mark.parametrize("args, message", [
    (["--ssds", "9"],            "between 1 and 8"),
    (["--ssds", "x"],            "invalid int value"),
    (["--threads", "0"],         "1 to 8 threads"),
    (["--timeout", "0"],         "must be positive"),
    (["--run", " ; "],           "no command given"),
    (["--sys-clk-freq", "150e6"], "even clock period"),
    (["--no-such-option"],       "unrecognized arguments"),
])
def test_cli_bad_arguments(args, message):
    r = run_sim_py(*args, timeout=60)
    assert r.returncode == 2
    assert message in r.stderr
    assert "usage:" in r.stderr

@pytest.mark.unit
def test_missing_tool_names_its_debian_package(monkeypatch, tmp_path):
    from literecorder.targets.sim import check_tools, SimError
    check_tools()                                    # this machine has everything
    monkeypatch.setenv("PATH", str(tmp_path))        # now nothing is on PATH
    with pytest.raises(SimError) as e:
        check_tools()
    msg = str(e.value)
    assert "verilator (Debian package verilator)" in msg
    assert "riscv64-unknown-elf-gcc (Debian package gcc-riscv64-unknown-elf)" in msg
    assert "apt-get install" in msg and "ninja-build" in msg

@pytest.mark.unit
@pytest.mark.parametrize("width", [128, 256, 512])
def test_soc_converts_to_verilog_at_every_pcie_width(width):
    """The whole SoC (root complex, engine, recorder) converts to Verilog at each datapath width
    (a 128-bit TLP inserter once had zero-width slices that LiteX's Verilog writer rejects)."""
    import logging
    from literecorder.soc.sim_soc import LiteRecorderSimSoC
    logging.disable(logging.INFO)
    try:
        soc = LiteRecorderSimSoC(n_ssds=2, pcie_data_width=width)
        soc.finalize()
        v = str(soc.platform.get_verilog(soc))
    finally:
        logging.disable(logging.NOTSET)
    assert re.search(r"^module \w+ ?\(", v, re.M)
    assert "nvme1_" in v and "recorder_" in v and "endmodule" in v

def _memory_verilog(granularity):
    from migen import Module, Memory, ClockDomain
    from literecorder.soc.sim_platform import LiteRecorderSimPlatform
    class M(Module):
        def __init__(self):
            self.clock_domains.cd_sys = ClockDomain()
            mem = Memory(32, 16, name="m")
            self.wport = mem.get_port(write_capable=True, we_granularity=granularity)
            self.rport = mem.get_port(async_read=True)
            self.specials += mem, self.wport, self.rport
    m = M()
    ios = {m.wport.adr, m.wport.dat_w, m.wport.we, m.rport.adr, m.rport.dat_r}
    return str(LiteRecorderSimPlatform().get_verilog(m, ios=ios))

@pytest.mark.unit
def test_sim_platform_writes_byte_enable_memories_as_one_masked_word_write():
    """The simulation's Verilog writes a byte-enable port as one masked write (Verilator evaluates
    one statement instead of one per lane), a full-width port as LiteX does."""
    v = _memory_verilog(8)
    we = re.search(r"if \(\|(\w+)\)\n\t\tm\[(\w+)\] <= \(m\[\2\] & ~\{(.*)\}\) \| \((\w+) & \{(.*)\}\);", v)
    assert we, v
    lanes = ", ".join(f"{{8{{{we.group(1)}[{i}]}}}}" for i in (3, 2, 1, 0))
    assert we.group(3) == we.group(5) == lanes
    assert not re.search(r"m\[\w+\]\[\d+:\d+\] <=", v)      # no lane writes left
    full = _memory_verilog(0)
    assert re.search(r"if \((\w+)\)\n\t\tm\[\w+\] <= \w+;", full) and "if (|" not in full

@pytest.mark.unit
def test_sim_platform_refuses_memory_verilog_it_does_not_recognise(monkeypatch):
    import literecorder.soc.sim_platform as sp
    original = sp._litex_memory_verilog
    def lanes_swapped(*args):      # a LiteX that wrote the lanes in another order
        v = original(*args)
        return v.replace("[7:0] <=", "[15:8] <=", 1)
    monkeypatch.setattr(sp, "_litex_memory_verilog", lanes_swapped)
    with pytest.raises(ValueError, match="unexpected write lanes"):
        _memory_verilog(8)

@pytest.mark.unit
def test_soc_refuses_a_64_bit_datapath():
    from literecorder.soc.recorder import RecorderConfig
    with pytest.raises(ValueError, match="allowed are 128, 256, 512"):
        RecorderConfig(sys_clk_freq=100e6, pcie_data_width=64)

@pytest.mark.unit
def test_register_documentation_is_current():
    # doc/registers.md is generated from the SoC's CSRs: a register change must regenerate it.
    r = subprocess.run([sys.executable, os.path.join(ROOT, "scripts", "regdoc.py"), "--check"],
        capture_output=True, text=True)
    assert r.returncode == 0, r.stderr
