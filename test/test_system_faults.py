#
# This file is part of LiteRecorder.
#
# SPDX-License-Identifier: BSD-2-Clause

"""Every injected fault of the simulated SSD gives a clear BIOS error (NVMe status in words) and
nvme_init recovers. Faults are added while the simulation runs (control socket)."""

import re

import pytest

from conftest import parse_results, result, ssd_ctl as ctl
from literecorder.sim.ssd import send_control

pytestmark = [pytest.mark.system, pytest.mark.xdist_group("faults")]

@pytest.fixture(scope="module")
def sim(request):
    from conftest import get_build, ssd_devices, SimSession, _run_name
    build = get_build()
    s = SimSession(build, name=_run_name(request) + "-faults",
        devices=ssd_devices(["--ssd-profile", "ideal", "--ns-size", "64MiB"], 1, build.sys_clk_freq))
    # Short timeouts (modeled time): 2 ms of simulated time is about a second of wall clock.
    s.cmd("nvme_timeout 2")
    assert result(s.cmd("nvme_init"), "nvme_init")["ok"] == "1"
    yield s
    s.close()

@pytest.fixture(autouse=True)
def clean_state(sim):
    """Every test starts with no fault and an initialized controller (also after a failed test)."""
    ctl(sim, "fault clear all")
    if result(sim.cmd("nvme_status"), "nvme_status")["initialized"] != "1" or \
       result(sim.cmd("nvme_status"), "nvme_status")["error"] != "0":
        assert result(sim.cmd("nvme_init"), "nvme_init")["ok"] == "1"

def recovers(sim):
    ctl(sim, "fault clear all")
    assert result(sim.cmd("nvme_init"), "nvme_init")["ok"] == "1"
    sim.cmd("rec_fill 0x60000000 4096 42")
    assert result(sim.cmd("nvme_write 300 8"), "nvme_write")["ok"] == "1"
    sim.cmd("rec_fill 0x60000000 4096 1")
    assert result(sim.cmd("nvme_read 300 8"), "nvme_read")["ok"] == "1"
    assert result(sim.cmd("rec_check 0x60000000 4096 42"), "rec_check")["errors"] == "0"

@pytest.mark.parametrize("fault, cmd, message", [
    ("write-fault:lba=1000-1007",           "nvme_write 1000 8",
        r"write command \(CID \d+\) at LBA 1000: Write Fault \(SCT 2, SC 0x80"),
    ("read-error:lba=2000",                 "nvme_read 1996 8",
        r"read command \(CID \d+\) at LBA 1996: Unrecovered Read Error \(SCT 2, SC 0x81"),
    ("internal-error:op=flush",             "nvme_flush",
        r"flush command \(CID \d+\) at LBA 0: Internal Error \(SCT 0, SC 0x06"),
    ("status:op=write,sct=1,sc=0x82",       "nvme_write 8 8",
        r"Attempted Write to Read Only Range \(SCT 1, SC 0x82"),
    ("ns-not-ready:for_us=100000",          "nvme_read 0 8",
        r"Namespace Not Ready \(SCT 0, SC 0x82\)"),
    ("drop-cqe:op=read",                    "nvme_read 0 8",
        r"read command \(CID \d+\) at LBA 0: command timeout \(no completion from the controller\)"),
])
def test_io_error_status(sim, fault, cmd, message):
    ctl(sim, f"fault add {fault}")
    out = sim.cmd(cmd, timeout=600)
    assert re.search(message, out), out
    assert "engine stopped" in out
    r = result(sim.cmd("nvme_status"), "nvme_status")
    assert r["error"] == "1"
    # Nothing more is sent while stopped.
    submitted = result(sim.cmd("nvme_status"), "nvme_status")["submitted"]
    out = sim.cmd("nvme_read 0 8")
    assert "nvme_read not sent: queue engine stopped by an earlier error: run nvme_init" in out
    assert result(sim.cmd("nvme_status"), "nvme_status")["submitted"] == submitted
    recovers(sim)

def test_write_fault_leaves_the_data(sim):
    sim.cmd("rec_fill 0x60000000 4096 9")
    assert result(sim.cmd("nvme_write 4000 8"), "nvme_write")["ok"] == "1"
    ctl(sim, "fault add write-fault:lba=4000")
    sim.cmd("rec_fill 0x60000000 4096 10")
    assert "Write Fault" in sim.cmd("nvme_write 4000 8")
    recovers(sim)
    assert result(sim.cmd("nvme_read 4000 8"), "nvme_read")["ok"] == "1"
    assert result(sim.cmd("rec_check 0x60000000 4096 9"), "rec_check")["errors"] == "0"

def test_admin_command_timeout(sim):
    ctl(sim, "fault add drop-cqe:op=admin:2")
    out = sim.cmd("nvme_smart", timeout=600)
    assert "Error: nvme0: Get Log Page (SMART / Health Information): command timeout" in out
    # The admin queue may be out of step (a completion could still come): nvme_init is needed.
    assert "controller not initialized: run nvme_init" in sim.cmd("nvme_id")
    recovers(sim)

def test_controller_fatal_status(sim):
    """A controller in fatal status posts no completion: the engine's timeout stops the read, and
    nvme_status shows CSTS.CFS."""
    ctl(sim, "fault add cfs")
    out = sim.cmd("nvme_read 0 8", timeout=600)
    assert re.fullmatch(r"Error: nvme0: read command \(CID \d+\) at LBA 0: command timeout \(no completion "
        r"from the controller\)\n  engine stopped: (\d+) submitted, \1 completed, 0 outstanding; nvme_init to "
        r"recover\nRESULT name=nvme_read port=0 ok=0 error=-7\n", out), out
    st = sim.cmd("nvme_status")
    assert "  CSTS 0x00000003: RDY 1, CFS 1, SHST 0\n" in st, st
    assert result(st, "nvme_status")["error"] == "1"
    recovers(sim)

def _init_us(sim):
    """nvme_init's modeled time (microseconds of the uptime counter around it) and its output."""
    t0 = int(result(sim.cmd("rec_uptime"), "uptime")["us"])
    out = sim.cmd("nvme_init", timeout=600)
    t1 = int(result(sim.cmd("rec_uptime"), "uptime")["us"])
    return t1 - t0, out

def test_slow_and_failing_ready(sim):
    normal, out = _init_us(sim)
    assert result(out, "nvme_init")["ok"] == "1"
    ctl(sim, "fault add rdy-slow:us=500")
    slow, out = _init_us(sim)
    assert result(out, "nvme_init")["ok"] == "1"
    # The driver waited for the 500 us slower ready (not a fixed delay that happens to cover it):
    # 500 us more than a normal init, less what the normal one already waits, plus a poll or two.
    assert 450 <= slow - normal <= 520, (normal, slow)
    ctl(sim, "fault clear all")
    ctl(sim, "fault add rdy-fail")
    out = sim.cmd("nvme_init", timeout=600)
    assert "controller not ready (CSTS.RDY did not follow CC.EN in time)" in out
    assert result(out, "nvme_init")["ok"] == "0"
    recovers(sim)

def test_bitflip_is_caught_by_the_checker(sim):
    sim.cmd("rec_fill 0x60000000 4096 21")
    assert result(sim.cmd("nvme_write 500 8"), "nvme_write")["ok"] == "1"
    ctl(sim, "fault add bitflip:op=read,bit=1000")
    sim.cmd("rec_fill 0x60000000 4096 1")
    assert result(sim.cmd("nvme_read 500 8"), "nvme_read")["ok"] == "1"
    r = result(sim.cmd("rec_check 0x60000000 4096 21"), "rec_check")
    assert (r["errors"], r["first_error_offset"]) == ("1", str((1000//32)*4))

def test_shutdown_then_init(sim):
    out = sim.cmd("nvme_shutdown")
    assert result(out, "nvme_shutdown")["ok"] == "1"
    st = sim.cmd("nvme_status")
    assert re.search(r"SHST 2", st) and "not initialized" in st
    assert "controller not initialized: run nvme_init" in sim.cmd("nvme_read 0 8")
    recovers(sim)
