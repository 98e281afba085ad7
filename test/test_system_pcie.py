#
# This file is part of LiteRecorder.
#
# SPDX-License-Identifier: BSD-2-Clause

"""Root complex in the full-system simulation (VexRiscv + BIOS + RTL + simulated SSD): enumeration,
link status, configuration/memory requests, error reporting, DMA protection."""

import re

import pytest

from conftest import parse_results, result, ssd_ctl as ctl
from literecorder.sim.ssd import send_control
from literecorder.soc.recorder_soc import link_payload_rate

pytestmark = [pytest.mark.system, pytest.mark.xdist_group("pcie")]

@pytest.fixture(scope="module")
def sim(module_sim):
    return module_sim

def test_boot_enumerates_the_ssd(sim):
    boot = sim.console()
    assert re.search(r"pcie0: link Gen3 x4, 01:00\.0 \[1ee7:5100\] class 010802, BAR0 0xc0000000, MPS 256", boot)

def test_pcie_scan_and_link(sim):
    out = sim.cmd("pcie_scan")
    assert "01:00.0 [1ee7:5100] class 010802 (NVM Express controller)" in out
    assert "BAR0: 64-bit, 16 KiB, assigned 0xc0000000" in out
    assert re.search(r"capabilities: \[40\] Power Management \[48\] MSI-X \[54\] PCI Express", out)
    # CAP/VS read through BAR0 with memory requests.
    m = re.search(r"NVMe CAP 0x([0-9a-f]{16}) \(MQES (\d+), DSTRD (\d+), TO (\d+) ms, MPSMIN (\d+) KiB\), VS 1\.4\.0", out)
    assert m, out
    cap = int(m.group(1), 16)
    assert (cap & 0xffff) + 1 == int(m.group(2)) == 1024
    assert (cap >> 24) & 0xff == 20 and int(m.group(4)) == 10000
    assert result(out, "pcie_scan")["devices"] == "1"
    out = sim.cmd("pcie_link")
    r = result(out, "pcie_link")
    assert (r["up"], r["gen"], r["width"], r["mps"], r["mrrs"]) == ("1", "3", "4", "256", "512")
    assert "LTSSM 0x10 (L0)" in out
    assert "root port MPS supported 512 B, device 256 B -> MPS 256 B" in out

def test_config_and_memory_requests(sim):
    out = sim.cmd("pcie_cfg_rd 0x0")
    assert "cfg[0x000] = 0x51001ee7" in out
    out = sim.cmd("pcie_cfg_rd 0x8")
    assert re.search(r"cfg\[0x008\] = 0x010802[0-9a-f]{2}", out)
    # BAR0 read back as assigned (64-bit memory BAR).
    assert re.search(r"cfg\[0x010\] = 0xc000000[4c]", sim.cmd("pcie_cfg_rd 0x10"))
    # A read/write register: AQA (0x24) round trip through memory requests.
    sim.cmd("pcie_mem_wr bar0+0x24 0x00070003")
    assert "mem[0xc0000024] = 0x00070003" in sim.cmd("pcie_mem_rd bar0+0x24")
    # VS through an absolute address.
    assert "mem[0xc0000008] = 0x00010400" in sim.cmd("pcie_mem_rd 0xc0000008")

def test_bad_arguments(sim):
    assert "Error: invalid offset '0x3': a dword-aligned offset 0x000..0xffc" in sim.cmd("pcie_cfg_rd 0x3")
    assert "Error: invalid offset '0x1000'" in sim.cmd("pcie_cfg_rd 0x1000")
    assert "Error: invalid port '7': allowed 0..0" in sim.cmd("pcie_cfg_rd 0x0 7")
    bad_offset = "Error: invalid offset in '{}': bar0+OFFSET with OFFSET 0..0x3fff (BAR0 is 16384 bytes)"
    for off in ("zz", "-4", "0x4000", "0x10000000000000000"):
        assert bad_offset.format("bar0+" + off) in sim.cmd(f"pcie_mem_rd bar0+{off}")
    assert "mem[0xc0003ffc]" in sim.cmd("pcie_mem_rd bar0+0x3ffc")    # the BAR's last dword
    bad_address = "Error: invalid address '{}' (expected a 64-bit ADDR or bar0+OFFSET)"
    for adr in ("-4", "0x10000000000000000"):
        assert bad_address.format(adr) in sim.cmd(f"pcie_mem_rd {adr}")
    assert "not dword aligned" in sim.cmd("pcie_mem_rd bar0+0x2")
    assert "Error: invalid value '0x1ffffffff': a 32-bit number" in sim.cmd("pcie_mem_wr bar0+0x24 0x1ffffffff")
    assert "pcie_cfg_rd <offset> [port]" in sim.cmd("pcie_cfg_rd")

def test_ur_ca_and_completion_timeout_are_reported(sim):
    ctl(sim, "fault add bar-ur:reg=0x1c")
    assert "Error: memory read 0xc000001c: Unsupported Request completion" in sim.cmd("pcie_mem_rd bar0+0x1c")
    ctl(sim, "fault add bar-ca:reg=0x1c")
    assert "Error: memory read 0xc000001c: Completer Abort completion" in sim.cmd("pcie_mem_rd bar0+0x1c")
    ctl(sim, "fault add bar-poison:reg=0x1c")
    assert "Error: memory read 0xc000001c: poisoned completion" in sim.cmd("pcie_mem_rd bar0+0x1c")
    before = int(result(sim.cmd("pcie_stats"), "pcie_stats")["timeouts"])
    ctl(sim, "fault add bar-drop:reg=0x1c")
    out = sim.cmd("pcie_mem_rd bar0+0x1c")
    assert "Error: memory read 0xc000001c: completion timeout (no answer from the device)" in out
    assert int(result(sim.cmd("pcie_stats"), "pcie_stats")["timeouts"]) == before + 1
    # Faults consumed (count=1): the register reads fine again, the late completion never matches.
    assert re.search(r"mem\[0xc000001c\] = 0x0000000[01]", sim.cmd("pcie_mem_rd bar0+0x1c"))

def test_rogue_dma_is_refused_and_counted(sim):
    """The SSD writes outside the buffers it was given (into the CPU's DRAM area and the CSRs):
    nothing is written, the attempts are counted with their address."""
    assert result(sim.cmd("nvme_init"), "nvme_init")["ok"] == "1"
    sim.cmd("mem_write 0x40100000 0x5a5a5a5a 16")
    before = result(sim.cmd("pcie_stats"), "pcie_stats")
    ctl(sim, "fault add rogue:dir=write,addr=0x40100000")
    sim.cmd("nvme_read 0 8")
    after = result(sim.cmd("pcie_stats"), "pcie_stats")
    assert int(after["wr_refused"]) == int(before["wr_refused"]) + 1
    assert after["refused_adr"] == "0x40100000"
    dump = sim.cmd("mem_read 0x40100000 64")
    assert dump.count("5a 5a 5a 5a") == 16, dump
    # A rogue read of the CSR space gets Unsupported Request.
    ctl(sim, "fault add rogue:dir=read,addr=0xf0000000")
    sim.cmd("rec_fill 0x60000000 4096 3")
    sim.cmd("nvme_write 16 8")
    after2 = result(sim.cmd("pcie_stats"), "pcie_stats")
    assert int(after2["rd_refused"]) == int(after["rd_refused"]) + 1
    assert after2["refused_adr"] == "0xf0000000"

def test_poisoned_and_malformed_tlps_are_dropped(sim):
    assert result(sim.cmd("nvme_init"), "nvme_init")["ok"] == "1"
    sim.cmd("rec_fill 0x60000000 4096 5")
    assert result(sim.cmd("nvme_write 100 8"), "nvme_write")["ok"] == "1"
    before = result(sim.cmd("pcie_stats"), "pcie_stats")
    sim.cmd("rec_fill 0x60010000 4096 6")
    ctl(sim, "fault add poison:op=read")
    sim.cmd("nvme_read 100 8 0x60010000")
    after = result(sim.cmd("pcie_stats"), "pcie_stats")
    assert int(after["poisoned"]) == int(before["poisoned"]) + 1
    # The poisoned TLP's 256 bytes did not reach memory: the first words are still the old pattern.
    out = sim.cmd("rec_check 0x60010000 256 6")
    assert result(out, "rec_check")["errors"] == "0"
    ctl(sim, "fault add malformed:kind=len,op=read")
    sim.cmd("nvme_read 100 8 0x60010000")
    after2 = result(sim.cmd("pcie_stats"), "pcie_stats")
    assert int(after2["malformed"]) == int(after["malformed"]) + 1

def test_link_down_is_reported_and_recovered(sim):
    ctl(sim, "link down 20000")
    out = sim.cmd("pcie_mem_rd bar0+0x8")
    assert "Error: memory read 0xc0000008: link down" in out
    assert result(sim.cmd("pcie_link"), "pcie_link")["up"] == "0"
    # pcie_scan waits for the link (retraining after the down time) and enumerates again.
    out = sim.cmd("pcie_scan", timeout=600)
    assert result(out, "pcie_scan")["devices"] == "1"
    assert result(sim.cmd("nvme_init"), "nvme_init")["ok"] == "1"

def test_other_link_width_and_mps(start_sim):
    s = start_sim(ssd=["--ssd-profile", "ideal", "--ns-size", "64MiB", "--link", "gen2x2", "--mps", "128"])
    out = s.cmd("pcie_scan")
    assert "MPS 128 B (device supports 128, root 512), MRRS 512 B, link Gen2 x2 (max Gen2 x2)" in out
    r = result(s.cmd("pcie_link"), "pcie_link")
    assert (r["gen"], r["width"], r["mps"]) == ("2", "2", "128")
    # rec_info's budget is the link as trained with its MPS (the build assumed Gen3 x4, MPS 256).
    info = s.cmd("rec_info")
    r = result(info, "rec_info")
    want = int(link_payload_rate(2, 2, 128)//1e6)
    assert want == 864 and (r["link_mbps"], r["links_mbps"], r["links_trained"]) == (str(want), str(want), "1")
    assert "SSD link 0     : Gen2 x2 as trained, 864 MB/s of completion payload (MPS 128)" in info
    # Data still moves correctly with 128-byte payloads.
    assert result(s.cmd("nvme_init"), "nvme_init")["ok"] == "1"
    s.cmd("rec_fill 0x60000000 65536 11")
    assert result(s.cmd("nvme_write 7 128"), "nvme_write")["ok"] == "1"
    s.cmd("rec_fill 0x60000000 65536 12")
    assert result(s.cmd("nvme_read 7 128"), "nvme_read")["ok"] == "1"
    assert result(s.cmd("rec_check 0x60000000 65536 11"), "rec_check")["errors"] == "0"
