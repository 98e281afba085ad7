#
# This file is part of LiteRecorder.
#
# SPDX-License-Identifier: BSD-2-Clause

"""Two SSDs side by side in the full-system simulation: each on its own root port with its own
queue engine, nothing shared. Data written through one port lands only on its drive; a fault on one
drive stops only its engine."""

import re

import pytest

from conftest import parse_results, result
from patterns import pattern_bytes
from literecorder.sim.ssd import send_control

pytestmark = [pytest.mark.system, pytest.mark.xdist_group("multi")]

NS_SIZE = 32 << 20
LBAS    = NS_SIZE//512

def read_ns(sim, port, lba, blocks):
    with open(sim.devices[port][1]["ns_file"], "rb") as f:
        f.seek(lba*512)
        return f.read(blocks*512)

@pytest.fixture(scope="module")
def sim(request):
    from conftest import get_build, ssd_devices, SimSession, _run_name
    build = get_build(n_ssds=2)
    s = SimSession(build, name=_run_name(request) + "-multi",
        devices=ssd_devices(["--ssd-profile", "ideal", "--ns-size", str(NS_SIZE)], 2, build.sys_clk_freq))
    yield s
    s.close()

def test_rec_info_and_scan_find_two_drives(sim):
    assert result(sim.cmd("rec_info"), "rec_info")["ssd_ports"] == "2"
    out = sim.cmd("pcie_scan")
    assert result(out, "pcie_scan")["devices"] == "2"
    assert re.search(r"pcie0: 01:00\.0 \[1ee7:5100\] class 010802", out), out
    assert re.search(r"pcie1: 01:00\.0 \[1ee7:5100\] class 010802", out), out
    bars = re.findall(r"BAR0: 64-bit, 16 KiB, assigned (0x[0-9a-f]+)", out)
    assert bars == ["0xc0000000", "0xc0100000"], out
    for port in (0, 1):
        assert result(sim.cmd(f"pcie_link {port}"), "pcie_link")["up"] == "1"

def test_each_port_has_its_own_drive(sim):
    serials = []
    for port in (0, 1):
        r = result(sim.cmd(f"nvme_init {port}"), "nvme_init")
        assert (r["port"], r["ok"], r["nsze"]) == (str(port), "1", str(LBAS))
        serials.append(result(sim.cmd(f"nvme_id {port}"), "nvme_id")["serial"])
    assert serials[0] != serials[1], serials
    # Features are per drive: a temperature threshold set on port 1 is read back there only.
    t0 = result(sim.cmd("nvme_feature 0x04 get 0"), "nvme_feature")["value"]
    assert result(sim.cmd("nvme_feature 0x04 340 1"), "nvme_feature")["port"] == "1"
    r = result(sim.cmd("nvme_feature 0x04 get 1"), "nvme_feature")
    assert (r["port"], int(r["value"], 16) & 0xffff) == ("1", 340)
    assert result(sim.cmd("nvme_feature 0x04 get 0"), "nvme_feature")["value"] == t0 != r["value"]

def test_data_goes_to_the_right_drive(sim):
    for port in (0, 1):
        assert result(sim.cmd(f"nvme_init {port}"), "nvme_init")["ok"] == "1"
    lba, blocks, n = 1000, 200, 200*512
    bufs = {0: 0x60000000, 1: 0x60100000}
    seeds = {0: 0x1111, 1: 0x2222}
    for port in (0, 1):
        sim.cmd(f"rec_fill {bufs[port]:#x} {n} {seeds[port]}")
        assert result(sim.cmd(f"nvme_write {lba} {blocks} {bufs[port]:#x} {port}"), "nvme_write")["ok"] == "1"
    for port in (0, 1):
        assert read_ns(sim, port, lba, blocks) == pattern_bytes(seeds[port], n), f"drive {port}"
    # Read each drive back into the other's buffer: crossed data must show up crossed.
    for port in (0, 1):
        assert result(sim.cmd(f"nvme_read {lba} {blocks} {bufs[1 - port]:#x} {port}"), "nvme_read")["ok"] == "1"
    for port in (0, 1):
        assert result(sim.cmd(f"rec_check {bufs[1 - port]:#x} {n} {seeds[port]}"), "rec_check")["errors"] == "0"

def test_benchmark_on_one_port_leaves_the_other_untouched(sim):
    for port in (0, 1):
        assert result(sim.cmd(f"nvme_init {port}"), "nvme_init")["ok"] == "1"
    before = result(sim.cmd("nvme_status 0"), "nvme_status")
    # SMART counts since power-up: the earlier tests moved them, so only their change is compared.
    w_before = [int(result(sim.cmd(f"nvme_smart {p}"), "nvme_smart")["host_writes"]) for p in (0, 1)]
    r = result(sim.cmd("nvme_bench seq write 128 16 8 1", timeout=600), "nvme_bench")
    assert (r["commands"], r["bytes"]) == ("64", str(8 << 20))
    after = result(sim.cmd("nvme_status 0"), "nvme_status")
    assert (after["submitted"], after["completed"]) == (before["submitted"], before["completed"])
    s1 = result(sim.cmd("nvme_status 1"), "nvme_status")
    assert (s1["error"], s1["outstanding"]) == ("0", "0")
    # Drive 1 counted the benchmark's 64 writes, drive 0 none of them.
    w_after = [int(result(sim.cmd(f"nvme_smart {p}"), "nvme_smart")["host_writes"]) for p in (0, 1)]
    assert [a - b for a, b in zip(w_after, w_before)] == [0, 64], (w_before, w_after)

def test_fault_on_one_drive_stops_only_its_engine(sim):
    for port in (0, 1):
        assert result(sim.cmd(f"nvme_init {port}"), "nvme_init")["ok"] == "1"
    reply = send_control(sim.devices[1][1]["ctl_path"], "fault add read-error:lba=500-507")
    assert reply.startswith("ok"), reply
    out = sim.cmd("nvme_read 500 8 0x60000000 1")
    assert result(out, "nvme_read")["ok"] == "0"
    assert "Unrecovered Read Error (SCT 2, SC 0x81" in out, out
    assert result(sim.cmd("nvme_status 1"), "nvme_status")["error"] == "1"
    # Port 0 is unaffected: same LBAs read fine.
    assert result(sim.cmd("nvme_read 500 8 0x60000000 0"), "nvme_read")["ok"] == "1"
    assert result(sim.cmd("nvme_status 0"), "nvme_status")["error"] == "0"
    assert send_control(sim.devices[1][1]["ctl_path"], "fault clear all").startswith("ok")
    assert result(sim.cmd("nvme_init 1"), "nvme_init")["ok"] == "1"
    assert result(sim.cmd("nvme_read 500 8 0x60000000 1"), "nvme_read")["ok"] == "1"

def test_recording_is_striped_over_both_drives(sim):
    for port in (0, 1):
        assert send_control(sim.devices[port][1]["ctl_path"], "fault clear all").startswith("ok")
        assert result(sim.cmd(f"nvme_init {port}"), "nvme_init")["ok"] == "1"
    seed, mib, chunk = 0xabc, 4, 128*1024
    out = sim.cmd(f"rec_record 2048 {mib} seed={seed} ports=all", timeout=600)
    r = result(out, "rec_record")
    assert (r["ok"], r["ports"], r["chunks"]) == ("1", "2", str(mib*8)), out
    assert "to nvme0+nvme1" in out
    # Chunk k of the stream is on drive k % 2, at LBA 2048 + (k // 2) * 256.
    for k in range(mib*8):
        data = read_ns(sim, k % 2, 2048 + (k//2)*256, 256)
        assert data == pattern_bytes(seed, chunk, first_word=k*chunk//4), f"chunk {k}"
    out = sim.cmd(f"rec_replay 2048 {mib} seed={seed} ports=all", timeout=600)
    r = result(out, "rec_replay")
    assert (r["ok"], r["errors"], r["bytes"]) == ("1", "0", str(mib << 20)), out
    # One drive alone holds only every other chunk: replaying it alone fails from its second chunk.
    r = result(sim.cmd(f"rec_replay 2048 {mib} seed={seed} ports=1", timeout=600), "rec_replay")
    assert r["ok"] == "1" and r["first_error"] == "0" and int(r["errors"]) > 0

def test_selftests_striped_over_both_drives(sim):
    """#07 (sessions start on stripe rows) and #09 (a range crossing the end of the media) across two
    drives: #09 failed ('accepted': two chunks from the last row are one row on two drives)."""
    for port in (0, 1):
        assert result(sim.cmd(f"nvme_init {port}"), "nvme_init")["ok"] == "1"
    for test in (7, 9):
        out = sim.cmd(f"rec_selftest ports=all region=8 test={test}", timeout=900)
        assert result(out, "rec_selftest") == dict(name="rec_selftest", test=str(test), **{"pass": "1"}), out
