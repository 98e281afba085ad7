#
# This file is part of LiteRecorder.
#
# SPDX-License-Identifier: BSD-2-Clause

"""The CPU-less core (soc/coreless_soc.py) in the full-system Verilator simulation, by registers only
(targets/coreless_sim.py: LiteX's CommUART over the simulation's serial2tcp, no CPU, no BIOS), with
the simulated SSDs. One build (2 SSD ports) serves every test; a port without a device is the "no
drive" case.

- Bring-up from reset of 2 SSDs (ideal profile) and of 1 SSD with 4 KiB LBAs (tlc-slc profile):
  what the registers report is the simulated drive's documented identity (doc/ssd_model.md: vendor
  1EE7h, device 5100h, MDTS 9, MQES 1023, the namespace and LBA size given to it).
- Record N MiB of the test pattern and replay it through the checker, byte-exact; the namespace
  files hold the pattern where the striping puts each chunk (test/patterns.py).
- Failures on the registers: no drive (LINK-DOWN at LINK), the link lost after the bring-up and
  while it retrains, an admin command failed by fault injection (ADMIN-STATUS at CREATE-CQ with the
  injected status field), CSTS.RDY that never comes (NOT-READY at ENABLE); a job on a port that is
  not up refused (NOT-READY).
- A record command while recording refused (BUSY; the recording goes on, byte-exact), a bring-up
  restart refused while the recorder runs.
- Throughput of record/replay by registers in the modeled clock: ``RESULT name=coreless_...`` lines
  against the link's payload rate (soc/recorder_soc.py ``link_payload_rate``, MPS 256 as programmed).
"""

import os

import pytest

from literecorder.targets.sim import ssd_devices
from literecorder.targets.coreless_sim import CorelessSimBuild, CorelessSession
from literecorder.soc.recorder_soc import link_payload_rate
from literecorder.sim.ssd import send_control
from literecorder.cores.nvme.bringup import STEP, ERR
from literecorder.cores.recorder.job import JOB
from literecorder.cores.recorder.common import STATUS_COMPLETE

from patterns import pattern_bytes

pytestmark = pytest.mark.system

N_PORTS = 2
CHUNK_LOG2 = 17
WORD = 64                            # The recorder's ring word (the DRAM port: 512 bits).

_build = None

def coreless_build():
    global _build
    if _build is None:
        _build = CorelessSimBuild(n_ssds=N_PORTS).build()
    return _build

def ports(*opts):
    """Devices of the 2 ports: simulated-SSD options per port (None: no device, ``(None, {})``)."""
    b = coreless_build()
    facs = [ssd_devices(list(o), N_PORTS, b.sys_clk_freq, b.pcie_data_width) if o is not None else None
        for o in opts]
    return lambda run_dir: [f(run_dir)[i] if f else (None, {}) for i, f in enumerate(facs)]

IDEAL = ["--ssd-profile", "ideal", "--ns-size", "1GiB"]

@pytest.fixture
def session(request):
    opened = []
    def start(devices):
        name = f"{os.environ.get('PYTEST_XDIST_WORKER', 'main')}-{request.node.name}"[:60]
        s = CorelessSession(coreless_build(), name, devices)
        opened.append(s)
        return s
    yield start
    for s in opened:
        s.close()

# Helpers ------------------------------------------------------------------------------------------

def check_identity(s, port, nsze, lba_shift, mdts=9, xfer_log2=21):
    assert s.reg(f"bringup{port}_vendor_device") == 0x51001EE7
    assert (s.reg(f"bringup{port}_nsid"), s.reg(f"bringup{port}_nsze"), s.reg(f"bringup{port}_lba_shift")) == \
        (1, nsze, lba_shift)
    # MDTS (9: 2 MiB), 512-entry engine (MQES 1023), MPS 256 B (the drive's; the root port allows 512).
    assert (s.reg(f"bringup{port}_mdts"), s.reg(f"bringup{port}_xfer_log2"), s.reg(f"bringup{port}_qsize"),
        s.reg(f"bringup{port}_mps_log2")) == (mdts, xfer_log2, 512, 8)

def record_replay(s, mask, nbytes, seed, first_lba=0):
    """Records ``nbytes`` of the pattern on the ports of ``mask``, replays them through the checker;
    returns (record, replay) recorder states."""
    assert s.start_job(0, first_lba, nbytes, CHUNK_LOG2, mask, seed=seed) == JOB["OK"]
    rec = s.wait_job()
    assert (rec["done"], rec["error"], rec["refused"], rec["code"]) == (1, 0, 0, STATUS_COMPLETE), rec
    assert rec["snap_kept"] == nbytes and rec["released"] == nbytes >> CHUNK_LOG2
    assert s.start_job(1, first_lba, nbytes, CHUNK_LOG2, mask, seed=seed) == JOB["OK"]
    play = s.wait_job()
    assert (play["done"], play["error"], play["code"]) == (1, 0, STATUS_COMPLETE), play
    assert play["bytes_out"] == nbytes
    assert (s.reg("recstream_check_errors"), s.reg("recstream_check_checked"), s.reg("recstream_check_extra")) == \
        (0, nbytes//WORD, 0)
    return rec, play

def check_drives(s, mask, nbytes, seed, lba_size, first_lba=0):
    """Chunk k of the recording is on the k-th selected port in turn, row k // ports (the striping)."""
    sel, chunk = [p for p in range(N_PORTS) if mask >> p & 1], 1 << CHUNK_LOG2
    for k in range(nbytes//chunk):
        port, row = sel[k % len(sel)], k//len(sel)
        with open(s.devices[port][1]["ns_file"], "rb") as f:
            f.seek(first_lba*lba_size + row*chunk)
            assert f.read(chunk) == pattern_bytes(seed, chunk, first_word=k*chunk//4), f"chunk {k}"

def result(name, s, mask, nbytes, state, out):
    n = bin(mask).count("1")
    mbps = nbytes*s.build.sys_clk_freq/state["snap_cycles"]/1e6
    link = n*link_payload_rate(3, 4, mps=256)/1e6
    print(f"RESULT name=coreless_{name} ssds={n} mib={nbytes >> 20} cycles={state['snap_cycles']} "
          f"mbps={mbps:.1f} link_mbps={link:.1f} ratio={mbps/link:.4f}")
    return mbps/link

# Tests --------------------------------------------------------------------------------------------

def test_coreless_two_ssds(session):
    """Bring-up of 2 SSDs from reset; 32 MiB striped over both, then 8 MiB on one, recorded and
    replayed byte-exact by registers; a record command and a bring-up restart refused while
    recording."""
    s = session(ports(IDEAL, IDEAL))
    states = s.wait_bringup([0, 1])
    for p, st in enumerate(states):
        assert (st["ready"], st["failed"], st["link_up"], st["step"], st["code"]) == (1, 0, 1, STEP["READY"], 0), st
        check_identity(s, p, (1 << 30)//512, 9)
        assert s.reg(f"bringup{p}_runs") == 1
    nbytes = 32 << 20
    rec, play = record_replay(s, 0b11, nbytes, seed=7)
    check_drives(s, 0b11, nbytes, 7, 512)
    r = result("record", s, 0b11, nbytes, rec, {}), result("replay", s, 0b11, nbytes, play, {})
    # The packaged core's goal: 0.96 of the links (the on-chip slots keep the DRAM out of the way).
    assert min(r) >= 0.96, r
    rec1, play1 = record_replay(s, 0b01, 8 << 20, seed=3, first_lba=1 << 16)
    check_drives(s, 0b01, 8 << 20, 3, 512, first_lba=1 << 16)
    r1 = result("record", s, 0b01, 8 << 20, rec1, {}), result("replay", s, 0b01, 8 << 20, play1, {})
    assert min(r1) >= 0.96, r1

    # A record command while recording: refused (BUSY), counted; the bring-up cannot restart either.
    refused = s.reg("job_refused")
    assert s.start_job(0, 0, 64 << 20, CHUNK_LOG2, 0b11, seed=11) == JOB["OK"]
    assert s.field("recorder_status", "busy") == 1
    s.write("job_first_lba", 1 << 20)
    s.write("job_control", s.pack("job_control", start=1))
    s.wait(lambda: not s.field("job_status", "checking"), 30, what="the refusal")
    assert (s.field("job_status", "code"), s.reg("job_refused")) == (JOB["BUSY"], refused + 1)
    s.write("bringup0_control", s.pack("bringup0_control", start=1))
    st = s.bringup(0)
    assert (st["refused"], st["ready"]) == (1, 1), st
    rec = s.wait_job()
    assert (rec["code"], rec["snap_kept"], rec["error"]) == (STATUS_COMPLETE, 64 << 20, 0), rec
    check_drives(s, 0b11, 64 << 20, 11, 512)
    assert s.reg("bringup0_runs") == 1 and s.reg("job_accepted") == 5

def test_coreless_no_drive_and_4k_lbas(session):
    """Port 0: a drive with 4 KiB LBAs and MDTS 5 (budget profile), brought up, recorded and
    replayed; port 1: no drive: LINK-DOWN at LINK once its link timeout passed; a job that includes
    it refused, a chunk above port 0's MDTS refused."""
    s = session(ports(["--ssd-profile", "budget", "--ns-size", "256MiB", "--lba-size", "4096"], None))
    st0 = s.wait_bringup([0])[0]
    assert (st0["ready"], st0["code"]) == (1, 0), st0
    check_identity(s, 0, (256 << 20)//4096, 12, mdts=5, xfer_log2=17)
    assert s.start_job(0, 0, 4 << 20, CHUNK_LOG2 + 1, 0b01) == JOB["CHUNK"]
    # Port 1: a short link timeout, run again (the run since reset waits 100 ms).
    s.write("bringup1_link_timeout_ms", 2)
    s.write("bringup1_control", s.pack("bringup1_control", start=1))
    st1 = s.wait_bringup([1])[0]
    assert (st1["failed"], st1["ready"], st1["link_up"], st1["code"], st1["step"]) == \
        (1, 0, 0, ERR["LINK-DOWN"], STEP["LINK"]), st1
    assert s.reg("bringup1_runs") == 2
    assert s.start_job(0, 0, 4 << 20, CHUNK_LOG2, 0b11) == JOB["NOT-READY"]
    record_replay(s, 0b01, 8 << 20, seed=5, first_lba=256)
    check_drives(s, 0b01, 8 << 20, 5, 4096, first_lba=256)

def test_coreless_link_lost(session):
    """The link goes down after the bring-up: LINK-DOWN at READY; run again while it is down:
    LINK-DOWN at LINK; once it retrained, run again: ready."""
    s = session(ports(IDEAL, None))
    assert s.wait_bringup([0])[0]["ready"] == 1
    reply = send_control(s.devices[0][1]["ctl_path"], "link down 5000")
    assert reply.startswith("ok"), reply
    st = s.wait(lambda: (lambda x: x if x["failed"] else None)(s.bringup(0)), 120, what="the link loss")
    assert (st["code"], st["step"], st["link_up"]) == (ERR["LINK-DOWN"], STEP["READY"], 0), st
    s.write("bringup0_link_timeout_ms", 1)
    s.write("bringup0_control", s.pack("bringup0_control", start=1))
    st = s.wait(lambda: (lambda x: x if x["failed"] and s.reg("bringup0_runs") == 2 else None)(s.bringup(0)),
        120, what="the second run")
    assert (st["code"], st["step"]) == (ERR["LINK-DOWN"], STEP["LINK"]), st
    s.write("bringup0_link_timeout_ms", 100)
    s.write("bringup0_control", s.pack("bringup0_control", start=1))
    st = s.wait(lambda: (lambda x: x if (x["ready"] or x["failed"]) and s.reg("bringup0_runs") == 3 else None)(
        s.bringup(0)), 300, what="the third run")
    assert (st["ready"], st["code"]) == (1, 0), st
    record_replay(s, 0b01, 4 << 20, seed=9)

def test_coreless_admin_failure_and_not_ready(session):
    """Port 0: Create I/O CQ fails with SCT 1 / SC 02h (Invalid Queue Size), DNR: ADMIN-STATUS at
    CREATE-CQ, detail = the status field; port 1: CSTS.RDY never comes: NOT-READY at ENABLE within
    timeout_ms (here 3 ms; CAP.TO is 10 s)."""
    s = session(ports(IDEAL + ["--fault", "status:op=admin:5,sct=1,sc=2,dnr=1"], IDEAL + ["--fault", "rdy-fail"]))
    st0 = s.wait_bringup([0])[0]
    assert (st0["failed"], st0["code"], st0["step"], st0["detail"]) == \
        (1, ERR["ADMIN-STATUS"], STEP["CREATE-CQ"], (1 << 14) | (1 << 8) | 0x02), st0
    s.write("bringup1_timeout_ms", 3)
    s.write("bringup1_control", s.pack("bringup1_control", start=1))
    st1 = s.wait(lambda: (lambda x: x if x["failed"] and s.reg("bringup1_runs") == 2 else None)(s.bringup(1)),
        120, what="the bring-up of port 1")
    assert (st1["code"], st1["step"], st1["detail"] & 1) == (ERR["NOT-READY"], STEP["ENABLE"], 0), st1
    assert s.start_job(1, 0, 1 << 20, CHUNK_LOG2, 0b01) == JOB["NOT-READY"]
