#
# This file is part of LiteRecorder.
#
# SPDX-License-Identifier: BSD-2-Clause

"""Interoperability: the same BIOS commands (PCIe enumeration, NVMe admin driver, hardware queue
engine) against QEMU's NVMe controller (an independent implementation, through the QEMU bridge)
and against the project's simulated SSD. Data written through the host is read back from the
device's backing file (QEMU's raw disk image / the model's namespace file) with ordinary file I/O."""

import re
import zlib

import pytest

from conftest import parse_results, result
from patterns import pattern_bytes
from literecorder.sim.qemu import qemu_available

pytestmark = [pytest.mark.system]

LBAS = 131072               # 64 MiB of 512-byte blocks on both devices
WIN  = 0x60000000

DEVICES = {
    "qemu":  dict(ssd=["--ssd", "qemu", "--qemu-size", "64MiB"], ids="1b36:0010",
                  model="QEMU NVMe Ctrl", image_key="image"),
    "model": dict(ssd=["--ssd-profile", "ideal", "--ns-size", "64MiB"], ids="1ee7:5100",
                  model="LiteRecorder SimSSD ideal", image_key="ns_file"),
}

@pytest.fixture(scope="module", params=["qemu", "model"])
def dev(request):
    from conftest import get_build, ssd_devices, SimSession, _run_name
    kind = request.param
    if kind == "qemu" and not qemu_available():
        pytest.fail("qemu-system-x86_64 not found: install the Debian package qemu-system-x86 (make install does)")
    d = DEVICES[kind]
    build = get_build()
    s = SimSession(build, name=_run_name(request) + "-" + kind,
        devices=ssd_devices(list(d["ssd"]), 1, build.sys_clk_freq))
    s.kind = kind
    s.info = d
    s.image = s.devices[0][1][d["image_key"]]
    yield s
    s.close()

def image_lbas(dev, lba, blocks):
    with open(dev.image, "rb") as f:
        f.seek(lba*512)
        return f.read(blocks*512)

@pytest.mark.xdist_group("interop")
def test_scan_init_identify_smart(dev):
    out = dev.cmd("pcie_scan")
    assert f"01:00.0 [{dev.info['ids']}] class 010802 (NVM Express controller)" in out
    assert "BAR0: 64-bit" in out and "assigned 0xc0000000" in out
    assert re.search(r"NVMe CAP 0x[0-9a-f]{16} .* VS 1\.4\.0", out)
    r = result(dev.cmd("nvme_init"), "nvme_init")
    assert (r["ok"], r["nsze"], r["lba_size"]) == ("1", str(LBAS), "512")
    out = dev.cmd("nvme_id")
    assert f'model="{dev.info["model"]}"' in out
    assert f"  model         : {dev.info['model']}" in out
    s0 = result(dev.cmd("nvme_smart"), "nvme_smart")
    dev.cmd(f"rec_fill {WIN:#x} 4096 1")
    assert result(dev.cmd("nvme_write 2000 8"), "nvme_write")["ok"] == "1"
    s1 = result(dev.cmd("nvme_smart"), "nvme_smart")
    assert int(s1["host_writes"]) == int(s0["host_writes"]) + 1

@pytest.mark.xdist_group("interop")
@pytest.mark.parametrize("case, lba, blocks", [
    ("single-block",  100,        1),
    ("prp1-prp2",     4096,       16),      # two pages
    ("prp-list",      10007,      72),      # 9 pages: a PRP list
    ("max-transfer",  20000,      1024),    # 512 KiB = QEMU's MDTS: one command, 128-entry list
    ("mdts-split",    30000,      1536),    # 768 KiB: split in two commands against QEMU
    ("last-lba",      LBAS - 8,   8),
])
def test_write_read_back_and_image(dev, case, lba, blocks):
    seed = zlib.crc32(case.encode()) & 0xffff
    nbytes = blocks*512
    assert result(dev.cmd("nvme_init"), "nvme_init")["ok"] == "1"
    dev.cmd(f"rec_fill {WIN:#x} {nbytes} {seed}")
    assert result(dev.cmd(f"nvme_write {lba} {blocks}"), "nvme_write")["ok"] == "1"
    dev.cmd(f"rec_fill {WIN:#x} {nbytes} 0")
    assert result(dev.cmd(f"nvme_read {lba} {blocks}"), "nvme_read")["ok"] == "1"
    assert result(dev.cmd(f"rec_check {WIN:#x} {nbytes} {seed}"), "rec_check")["errors"] == "0"
    assert result(dev.cmd("nvme_flush"), "nvme_flush")["ok"] == "1"
    # The device's backing file holds the data at LBA x 512.
    assert image_lbas(dev, lba, blocks) == pattern_bytes(seed, nbytes)

@pytest.mark.xdist_group("interop")
def test_flush_deallocate_zeroes(dev):
    assert result(dev.cmd("nvme_init"), "nvme_init")["ok"] == "1"
    dev.cmd(f"rec_fill {WIN:#x} 32768 9")
    assert result(dev.cmd("nvme_write 5000 64"), "nvme_write")["ok"] == "1"
    assert result(dev.cmd("nvme_flush"), "nvme_flush")["ok"] == "1"
    assert result(dev.cmd("nvme_trim 5000 32"), "nvme_trim")["ok"] == "1"
    assert result(dev.cmd("nvme_zero 5032 16"), "nvme_zero")["ok"] == "1"
    dev.cmd(f"rec_fill {WIN:#x} 32768 3")
    assert result(dev.cmd("nvme_read 5000 64"), "nvme_read")["ok"] == "1"
    # Write Zeroes reads back zeroes on both; the 16 blocks after it are untouched.
    assert result(dev.cmd(f"rec_check {WIN + 32*512:#x} {16*512} zero"), "rec_check")["errors"] == "0"
    assert image_lbas(dev, 5048, 16) == pattern_bytes(9, 32768)[48*512:]

@pytest.mark.xdist_group("interop")
def test_invalid_lba_is_rejected_by_the_controller(dev):
    assert result(dev.cmd("nvme_init"), "nvme_init")["ok"] == "1"
    # The host refuses it itself...
    assert f"LBA range {LBAS}..{LBAS + 7} is outside the namespace" in dev.cmd(f"nvme_read {LBAS} 8")
    # ...and without that check the controller rejects it, with the status the host reports.
    out = dev.cmd(f"nvme_raw read {LBAS} 8")
    assert re.search(rf"read command \(CID \d+\) at LBA {LBAS}: LBA Out of Range \(SCT 0, SC 0x80", out), out
    assert result(dev.cmd("nvme_status"), "nvme_status")["err_status"] in ("0x4080", "0x0080")
    assert result(dev.cmd("nvme_init"), "nvme_init")["ok"] == "1"

@pytest.mark.xdist_group("interop")
def test_shutdown_and_reinit(dev):
    assert result(dev.cmd("nvme_init"), "nvme_init")["ok"] == "1"
    assert result(dev.cmd("nvme_shutdown"), "nvme_shutdown")["ok"] == "1"
    assert "SHST 2" in dev.cmd("nvme_status")
    assert result(dev.cmd("nvme_init"), "nvme_init")["ok"] == "1"
    dev.cmd(f"rec_fill {WIN:#x} 4096 13")
    assert result(dev.cmd("nvme_write 777 8"), "nvme_write")["ok"] == "1"
    assert image_lbas(dev, 777, 8) == pattern_bytes(13, 4096)

@pytest.mark.xdist_group("interop")
def test_recorder_record_replay_and_image(dev):
    """The recorder datapath (ring in LiteDRAM, chunks of 128 KiB, many commands in flight)
    against the device: the stream lands byte for byte in its backing file."""
    assert result(dev.cmd("nvme_init"), "nvme_init")["ok"] == "1"
    lba, mib, seed = 40960, 8, 0x77
    r = result(dev.cmd(f"rec_record {lba} {mib} seed={seed}", timeout=600), "rec_record")
    assert (r["ok"], r["bytes"], r["lost_beats"]) == ("1", str(mib << 20), "0")
    assert image_lbas(dev, lba, (mib << 20)//512) == pattern_bytes(seed, mib << 20)
    r = result(dev.cmd(f"rec_replay {lba} {mib} seed={seed}", timeout=600), "rec_replay")
    assert (r["ok"], r["errors"], r["extra_beats"]) == ("1", "0", "0")
    r = result(dev.cmd(f"rec_replay {lba} {mib} seed={seed + 1}", timeout=600), "rec_replay")
    assert r["errors"] == str((mib << 20)//4)
