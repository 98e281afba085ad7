#
# This file is part of LiteRecorder.
#
# SPDX-License-Identifier: BSD-2-Clause

"""NVMe host in the full-system simulation: BIOS admin driver + hardware queue engine against the
simulated SSD. Data is checked in DRAM (BIOS) and in the SSD's namespace file (Python)."""

import os
import re
import random

import pytest

from conftest import parse_results, result, ssd_ctl as ctl
from patterns import pattern_bytes
from pinned import pinned
from literecorder.sim.ssd import send_control

pytestmark = [pytest.mark.system]

NS_SIZE   = 64 << 20          # 131072 LBAs of 512 B
LBAS      = NS_SIZE//512
DRAM_WIN  = 0x60000000

def ns_file(sim):
    return sim.devices[0][1]["ns_file"]

def read_ns(sim, lba, blocks, lba_size=512):
    with open(ns_file(sim), "rb") as f:
        f.seek(lba*lba_size)
        return f.read(blocks*lba_size)

@pytest.fixture(scope="module")
def sim(request):
    from conftest import get_build, ssd_devices, SimSession, _run_name
    build = get_build()
    s = SimSession(build, name=_run_name(request) + "-nvme",
        devices=ssd_devices(["--ssd-profile", "ideal", "--ns-size", str(NS_SIZE)], 1, build.sys_clk_freq))
    # A fresh namespace for every test session.
    assert result(s.cmd("nvme_init"), "nvme_init")["ok"] == "1"
    yield s
    s.close()

# Identity and health ------------------------------------------------------------------------------

@pytest.mark.xdist_group("nvme")
def test_init_identify(sim):
    out = sim.cmd("nvme_init")
    r = result(out, "nvme_init")
    assert (r["nsze"], r["lba_size"], r["qsize"], r["max_xfer"]) == (str(LBAS), "512", "512", str(2 << 20))
    out = sim.cmd("nvme_id")
    r = result(out, "nvme_id")
    assert r["vid"] == "0x1ee7" and r["nsze"] == str(LBAS) and r["mdts"] == "9"
    assert 'model="LiteRecorder SimSSD ideal"' in out and 'serial="LRSIM0000000001"' in out
    assert r["oncs"] == "0x000c" and r["vwc"] == "1"
    assert "ONCS          : 0x000c (Dataset Management yes, Write Zeroes yes)" in out

@pytest.mark.xdist_group("nvme")
def test_smart_counts_what_the_host_did(sim):
    s0 = result(sim.cmd("nvme_smart"), "nvme_smart")
    assert s0["critical_warning"] == "0" and s0["available_spare"] == "100"
    assert 0 < int(s0["temperature_c"]) < 80
    # 1000 blocks of 512 B written in one command = exactly one more data unit (1000 x 512 B),
    # then 1 block more rounds up to one more.
    assert result(sim.cmd("nvme_write 50000 1000"), "nvme_write")["ok"] == "1"
    s1 = result(sim.cmd("nvme_smart"), "nvme_smart")
    assert int(s1["host_writes"]) == int(s0["host_writes"]) + 1
    assert int(s1["data_units_written"]) - int(s0["data_units_written"]) in (1, 2)
    assert result(sim.cmd("nvme_read 50000 2000"), "nvme_read")["ok"] == "1"
    s2 = result(sim.cmd("nvme_smart"), "nvme_smart")
    assert int(s2["host_reads"]) == int(s1["host_reads"]) + 1
    assert int(s2["data_units_read"]) - int(s1["data_units_read"]) in (2, 3)

@pytest.mark.xdist_group("nvme")
def test_features(sim):
    # Number of queues: nvme_init asks for 2 SQs and 2 CQs (engine + CPU), the drive grants them.
    out = sim.cmd("nvme_feature 0x07")
    assert result(out, "nvme_feature")["value"] == "0x00010001" and "(2 I/O SQs, 2 I/O CQs allocated)" in out
    # `get` reads without a value, so that a port can be named.
    r = result(sim.cmd("nvme_feature 0x07 get 0"), "nvme_feature")
    assert (r["port"], r["value"]) == ("0", "0x00010001")
    # Temperature threshold: set then get.
    sim.cmd("nvme_feature 0x04 350")
    r = result(sim.cmd("nvme_feature 0x04"), "nvme_feature")
    assert int(r["value"], 16) & 0xffff == 350
    assert "Invalid Field in Command" in sim.cmd("nvme_feature 0xfe")
    # Refused before anything is sent: a reserved identifier, a feature with a data buffer.
    assert "invalid feature identifier '0': 0x01..0xff" in sim.cmd("nvme_feature 0")
    assert "feature 0x0e carries its value in a data buffer" in sim.cmd("nvme_feature 0x0e")
    assert "invalid value 'gte': a 32-bit number to set, or get" in sim.cmd("nvme_feature 0x04 gte 0")
    # The engine's timeout counts 32 bits of 200 MHz cycles: 21474 ms at most.
    assert "invalid timeout '21475': 1..21474 ms" in sim.cmd("nvme_timeout 21475")

# Data ---------------------------------------------------------------------------------------------

def _write_read_check(sim, lba, blocks, seed, offset=0):
    nbytes = blocks*512
    a = DRAM_WIN + 0x100000 + offset
    b = DRAM_WIN + 0x800000 + offset
    sim.cmd(f"rec_fill {a:#x} {nbytes} {seed}", timeout=600)
    assert result(sim.cmd(f"nvme_write {lba} {blocks} {a:#x}"), "nvme_write")["ok"] == "1"
    sim.cmd(f"rec_fill {b:#x} {nbytes} zero", timeout=600)
    assert result(sim.cmd(f"nvme_read {lba} {blocks} {b:#x}"), "nvme_read")["ok"] == "1"
    assert result(sim.cmd(f"rec_check {b:#x} {nbytes} {seed}", timeout=600), "rec_check")["errors"] == "0"
    # The data is in the namespace file at the right place.
    assert read_ns(sim, lba, blocks) == pattern_bytes(seed, nbytes)

@pytest.mark.xdist_group("nvme")
@pytest.mark.parametrize("case", ["single", "two-pages", "prp-list", "unaligned-buffer", "mdts-split", "last-lba"])
def test_write_read_back(sim, case):
    rng = random.Random(case)
    lba = rng.randrange(0, LBAS - 8192)
    blocks, offset = {
        "single":           (1, 0),
        "two-pages":        (16, 0),               # PRP1 + PRP2 (2 pages)
        "prp-list":         (rng.randrange(17, 512), 0),
        "unaligned-buffer": (24, 4*rng.randrange(1, 1024)),   # PRP1 with an offset
        "mdts-split":       (4096 + 64, 0),        # 2 MiB + 32 KiB: two commands
        "last-lba":         (8, 0),
    }[case]
    if case == "last-lba":
        lba = LBAS - blocks
    _write_read_check(sim, lba, blocks, rng.getrandbits(32), offset)

@pytest.mark.xdist_group("nvme")
def test_random_sizes_and_lbas(sim):
    rng = random.Random(20261121)
    for _ in range(4):
        blocks = rng.randrange(1, 300)
        lba = rng.randrange(0, LBAS - blocks)
        _write_read_check(sim, lba, blocks, rng.getrandbits(32), 4*rng.randrange(0, 2048))

@pytest.mark.xdist_group("nvme")
def test_flush_trim_write_zeroes(sim):
    _write_read_check(sim, 9000, 64, 77)
    assert result(sim.cmd("nvme_flush"), "nvme_flush")["ok"] == "1"
    assert result(sim.cmd("nvme_trim 9000 32"), "nvme_trim")["ok"] == "1"
    assert result(sim.cmd("nvme_zero 9032 16"), "nvme_zero")["ok"] == "1"
    b = DRAM_WIN + 0x800000
    sim.cmd(f"rec_fill {b:#x} {64*512} 1")
    assert result(sim.cmd(f"nvme_read 9000 64 {b:#x}"), "nvme_read")["ok"] == "1"
    assert result(sim.cmd(f"rec_check {b:#x} {48*512} zero"), "rec_check")["errors"] == "0"
    # The last 16 blocks are untouched.
    assert read_ns(sim, 9048, 16) == pattern_bytes(77, 64*512)[48*512:]

# Arguments ----------------------------------------------------------------------------------------

@pytest.mark.xdist_group("nvme")
@pytest.mark.parametrize("cmd, message", [
    (f"nvme_read {LBAS} 1",              f"LBA range {LBAS}..{LBAS} is outside the namespace (LBAs 0..{LBAS - 1})"),
    (f"nvme_write {LBAS - 4} 8",         f"LBA range {LBAS - 4}..{LBAS + 3} is outside the namespace"),
    ("nvme_read 0 0",                    "0 blocks: at least 1 block"),
    ("nvme_read 0 8 0x60000002",         "buffer address 0x60000002 is not dword aligned"),
    ("nvme_read 0 8 0x40000000",         "buffer 0x40000000..0x40000fff is outside the DMA window 0x60000000..0x7fffffff"),
    ("nvme_write 0 16 0x7ffff000",       "buffer 0x7ffff000..0x80000fff is outside the DMA window"),
    ("nvme_read x 8",                    "invalid LBA 'x'"),
    ("nvme_trim 0 -1",                   "invalid LBA or block count"),
    # lba + blocks beyond 2**64: refused and said as a start and a count, not a wrapped end.
    (f"nvme_read {2**64 - 256} 512",     f"LBA range {2**64 - 256} + 512 blocks is outside the namespace"),
    ("nvme_bench seq write 3 8 1",       "command size '3' KiB: a power of two"),
    ("nvme_bench seq write 4 600 1",     "queue depth '600': 1..511"),
    ("nvme_bench seq foo 4 8 1",         "operation 'foo': allowed read or write"),
    ("nvme_bench seq write 128 8 1024",  "do not fit in the namespace"),
])
def test_out_of_range_arguments_are_refused_before_sending(sim, cmd, message):
    before = result(sim.cmd("nvme_status"), "nvme_status")
    db0 = result(sim.cmd("pcie_stats"), "pcie_stats")["doorbells"]
    out = sim.cmd(cmd)
    assert message in out
    after = result(sim.cmd("nvme_status"), "nvme_status")
    assert after["submitted"] == before["submitted"]
    assert result(sim.cmd("pcie_stats"), "pcie_stats")["doorbells"] == db0

# Queue depth --------------------------------------------------------------------------------------

@pytest.mark.xdist_group("nvme")
def test_qd_sweep(sim):
    iops = {}
    for qd in (1, 4, 16, 64):
        r = result(sim.cmd(f"nvme_bench rand read 4 {qd} 1", timeout=600), "nvme_bench")
        assert r["commands"] == "256" and r["bytes"] == str(1 << 20)
        assert r["cpu_requests"] == "0"
        iops[qd] = int(r["iops"])
    # Deeper queues hide the per-command latency (10 us reads in the ideal profile) until the
    # link is the limit.
    assert iops[1] < iops[4] < iops[16] <= iops[64] * 1.02
    for qd in iops:
        pinned(f"system.nvme.ideal.rand_read_4k.qd{qd}.iops", iops[qd])
