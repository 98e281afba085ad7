#
# This file is part of LiteRecorder.
#
# SPDX-License-Identifier: BSD-2-Clause

"""Root port self-configuration (RootPortConfiguration) against a model of the integrated block's
configuration-management port (PG054/PG156/PG213: address/data held with read or write until a
one-cycle read_write_done, byte enables on writes) and of a root port's configuration space."""

import random

import pytest

from migen import *
from migen.sim import run_simulation, passive

from literecorder.cores.pcie.phy.common import RootPortConfiguration, RootPortPHY

# Model --------------------------------------------------------------------------------------------

def root_port_space(with_pcie_cap=True):
    return {
        0x00: 0x903410ee,
        0x01: 0x00100000,  # Status: capabilities list.
        0x06: 0x00000000,
        0x07: 0x22000000,  # Secondary status (RW1C): must not be written.
        0x09: 0x00010001,
        0x0d: 0x00000040,  # Capabilities pointer.
        0x10: 0x00034801,  # 0x40 PM, next 0x48.
        0x12: 0x00807005 if with_pcie_cap else 0x00800005, # 0x48 MSI, next 0x70 (or end).
        0x1c: 0x00420010,  # 0x70 PCIe capability (root port), next 0.
        0x1d: 0x00008001,  # DevCap: MPS supported 256 B.
        0x1e: 0x00102810,  # DevCtl: RO, NS, MRRS 512; DevStatus 0x0010 (RW1C).
    }

@passive
def mgmt_model(master, space, log, rng, answering):
    while True:
        yield master.done.eq(0)
        yield
        rd, wr = (yield master.read), (yield master.write)
        if not (rd or wr) or not answering[0]:
            continue
        assert not (rd and wr)
        adr, dat, be = (yield master.adr), (yield master.wdata), (yield master.be)
        for _ in range(rng.randrange(0, 5)):
            yield
            assert ((yield master.adr), (yield master.wdata), (yield master.be)) == (adr, dat, be)
            assert ((yield master.read), (yield master.write)) == (rd, wr)
        if wr:
            mask = sum(0xff << (8*i) for i in range(4) if (be >> i) & 1)
            space[adr] = (space.get(adr, 0) & ~mask) | (dat & mask)
            log.append(("w", adr, dat, be))
        else:
            yield master.read_data.eq(space.get(adr, 0))
            log.append(("r", adr))
        yield master.done.eq(1)
        yield
        yield master.done.eq(0)
        yield
        assert not ((yield master.read) or (yield master.write)), "no idle cycle between accesses"

def make_dut(**kwargs):
    params = dict(mem_window=(0xe0000000, 0x200000), max_payload_size=512,
        max_read_request_size=1024, timeout=64)
    params.update(kwargs)
    return RootPortConfiguration(**params)

def wait(sig, value, timeout=3000):
    for _ in range(timeout):
        if (yield sig) == value:
            return
        yield
    raise AssertionError(f"timeout waiting for {sig} == {value}")

def user_access(dut, we, adr, dat=0, be=0xf):
    yield dut.user_sink.valid.eq(1)
    yield dut.user_sink.we.eq(we)
    yield dut.user_sink.adr.eq(adr)
    yield dut.user_sink.dat.eq(dat)
    yield dut.user_sink.be.eq(be)
    yield dut.user_source.ready.eq(1)
    yield
    while not (yield dut.user_source.valid):
        yield
    rsp = ((yield dut.user_source.dat), (yield dut.user_source.err))
    yield dut.user_sink.valid.eq(0)
    yield
    return rsp

EXPECTED = {
    0x06: 0x00010100,  # Primary 0, secondary 1, subordinate 1.
    0x07: 0x220000f0,  # I/O window closed, secondary status untouched.
    0x08: 0xe010e000,  # Memory window 0xe0000000-0xe01fffff.
    0x09: 0x0000fff0,  # Prefetchable window closed.
    0x0a: 0x00000000,
    0x0b: 0x00000000,
    0x1e: 0x00103930,  # DevCtl: MPS 256 (DevCap), ext tags, NS/RO kept, MRRS 1024; status untouched.
    0x01: 0x00100006,  # Command: memory space + bus master; status untouched.
}

# Tests --------------------------------------------------------------------------------------------

@pytest.mark.unit
def test_root_port_programmed_after_link_up_and_again_after_retrain():
    dut, space, log, rng = make_dut(), root_port_space(), [], random.Random(1)
    def main():
        for _ in range(20):
            yield
        assert log == [] and (yield dut.ready) == 0            # Nothing before link-up.
        yield dut.link_up.eq(1)
        yield from wait(dut.ready, 1)
        for adr, value in EXPECTED.items():
            assert space[adr] == value, f"dword {adr:#x}: {space[adr]:#010x} != {value:#010x}"
        writes = [e for e in log if e[0] == "w"]
        assert writes[-1] == ("w", 0x01, 0x00000006, 0b0011)  # Command enabled last.
        assert ("w", 0x1e, 0x00003930, 0b0011) in writes
        assert ("r", 0x1d) in log and ("r", 0x1e) in log     # DevCap read before DevCtl written.
        assert (yield dut.error) == 0
        # User access once programmed.
        rsp = yield from user_access(dut, 0, 0x08)
        assert rsp == (0xe010e000, 0)
        rsp = yield from user_access(dut, 1, 0x0f, 0x12345678, 0b0001)
        assert rsp[1] == 0 and space[0x0f] == 0x00000078
        # Link down/up: programmed again.
        space[0x01] = 0x00100000
        yield dut.link_up.eq(0)
        yield from wait(dut.ready, 0)
        yield dut.link_up.eq(1)
        yield from wait(dut.ready, 1)
        assert space[0x01] == 0x00100006
    run_simulation(dut, [main(), mgmt_model(dut.master, space, log, rng, [True])])

@pytest.mark.unit
def test_user_access_waits_for_programming():
    dut, space, log, rng = make_dut(), root_port_space(), [], random.Random(2)
    def main():
        yield dut.link_up.eq(1)
        for _ in range(3):
            yield
        rsp = yield from user_access(dut, 0, 0x01)
        # The sequence ran first (Command already written when the user read is served).
        assert rsp == (0x00100006, 0)
    run_simulation(dut, [main(), mgmt_model(dut.master, space, log, rng, [True])])

@pytest.mark.unit
def test_management_timeout_reports_error():
    dut, space, log, rng = make_dut(), root_port_space(), [], random.Random(3)
    answering = [False]
    def main():
        yield dut.link_up.eq(1)
        yield from wait(dut.error, 1, timeout=500)
        assert (yield dut.ready) == 0
        rsp = yield from user_access(dut, 0, 0x00)
        assert rsp[1] == 1                                   # User access times out too.
        answering[0] = True
        yield dut.link_up.eq(0)
        yield from wait(dut.error, 0)
        yield dut.link_up.eq(1)
        yield from wait(dut.ready, 1)                        # Retried at the next link-up.
    run_simulation(dut, [main(), mgmt_model(dut.master, space, log, rng, answering)])

@pytest.mark.unit
def test_missing_pcie_capability_reports_error():
    dut, space, log, rng = make_dut(), root_port_space(with_pcie_cap=False), [], random.Random(4)
    def main():
        yield dut.link_up.eq(1)
        yield from wait(dut.error, 1)
        assert (yield dut.ready) == 0
        assert space[0x01] == 0x00100000                     # Command not enabled.
    run_simulation(dut, [main(), mgmt_model(dut.master, space, log, rng, [True])])

@pytest.mark.unit
@pytest.mark.parametrize("kwargs, message", [
    (dict(mem_window=(0xe0080000, 0x100000)), "mem_window base must be 1 MiB aligned, not 0xe0080000"),
    (dict(mem_window=(0xe0000000, 0x1000)),   "mem_window size must be a non-zero multiple of 1 MiB"),
    (dict(mem_window=(0xfff00000, 0x200000)), "must lie below 4 GiB"),
    (dict(mem_window=0xe0000000),             "mem_window must be a \\(base, size\\) tuple"),
    (dict(max_payload_size=100),              "max_payload_size must be one of"),
    (dict(max_read_request_size=8192),        "max_read_request_size must be one of"),
])
def test_configuration_parameters(kwargs, message):
    with pytest.raises(ValueError, match=message):
        make_dut(**kwargs)

# Core-facing management port and link_up (sys <-> pcie clock domains) ----------------------------

class _RootPortPHYCore(RootPortPHY):
    """The family-independent part of a root-port PHY: interface, configuration, CDCs."""
    def __init__(self):
        self.cd_sys  = ClockDomain()
        self.cd_pcie = ClockDomain()
        self._add_interface(128)
        self.dl_up_pcie = Signal()
        self.master = self._add_configuration((0xe0000000, 0x100000), 256, 512, self.dl_up_pcie)

@pytest.mark.unit
def test_link_up_waits_for_root_port_programming():
    """link_up (sys) = data link up and root port programmed (pcie), through the resynchronizers.
    (The management port's stream FIFOs use comb-derived clock domains that Migen's simulator does
    not clock; they are LiteX's ClockDomainCrossing, as in LitePCIe.)"""
    dut, space, log, rng = _RootPortPHYCore(), root_port_space(), [], random.Random(5)
    def main():
        for _ in range(30):
            yield
        assert (yield dut.link_up) == 0
        yield dut.dl_up_pcie.eq(1)
        for _ in range(8):
            yield
        assert (yield dut.dl_up) == 1 and (yield dut.link_up) == 0  # Programming in progress.
        for _ in range(600):
            if (yield dut.link_up):
                break
            yield
        assert (yield dut.link_up) == 1 and (yield dut.configured) == 1 and (yield dut.dl_up) == 1
        assert space[0x01] == 0x00100006 and space[0x08] == 0xe000e000
        # Link down: link_up falls.
        yield dut.dl_up_pcie.eq(0)
        for _ in range(10):
            yield
        assert (yield dut.link_up) == 0
    run_simulation(dut, {"sys": [main()], "pcie": [mgmt_model(dut.master, space, log, rng, [True])]},
        clocks={"sys": 10, "pcie": 7})

# CSRs ---------------------------------------------------------------------------------------------

class _RootPortPHYCSRs(RootPortPHY):
    def __init__(self):
        self._add_interface(128)
        self.add_csr()
        for csr in [self._perst, self._cfg_adr, self._cfg_wdata, self._cfg_ctrl, self._cfg_status,
            self._cfg_rdata, self._link_status]:
            csr.finalize(32, "big")  # What the SoC's CSR bank does.
            self.submodules += csr

def csr_write(csr, value):
    yield from csr.simple_csrs[0].write(value) # Bus write; storage, then re one cycle later.
    for _ in range(2):
        yield

@pytest.mark.unit
def test_csr_configuration_access_and_perst():
    dut = _RootPortPHYCSRs()
    def main():
        assert (yield dut.perst) == 0
        yield from csr_write(dut._perst, 1)
        assert (yield dut.perst) == 1
        # Write access: address, data, byte enables + write strobe -> one request on mgmt_sink.
        yield from csr_write(dut._cfg_adr, 0x08)
        yield from csr_write(dut._cfg_wdata, 0xe000e000)
        yield from csr_write(dut._cfg_ctrl, (1 << 8) | 0b0011)
        assert (yield dut._cfg_status.status) == 0b100                   # busy.
        assert (yield dut.mgmt_sink.valid) == 1
        assert [(yield dut.mgmt_sink.we), (yield dut.mgmt_sink.adr), (yield dut.mgmt_sink.dat),
            (yield dut.mgmt_sink.be)] == [1, 0x08, 0xe000e000, 0b0011]
        yield dut.mgmt_sink.ready.eq(1)
        yield
        yield dut.mgmt_sink.ready.eq(0)
        yield
        assert (yield dut.mgmt_sink.valid) == 0                          # Exactly one request.
        yield dut.mgmt_source.valid.eq(1)
        yield dut.mgmt_source.dat.eq(0)
        yield
        yield dut.mgmt_source.valid.eq(0)
        yield
        assert (yield dut._cfg_status.status) == 0b001                   # done.
        # Read access with an error response.
        yield from csr_write(dut._cfg_ctrl, (1 << 9) | 0b1111)
        assert [(yield dut.mgmt_sink.valid), (yield dut.mgmt_sink.we)] == [1, 0]
        yield dut.mgmt_sink.ready.eq(1)
        yield
        yield dut.mgmt_sink.ready.eq(0)
        yield dut.mgmt_source.valid.eq(1)
        yield dut.mgmt_source.dat.eq(0x12345678)
        yield dut.mgmt_source.err.eq(1)
        yield
        yield dut.mgmt_source.valid.eq(0)
        yield
        assert (yield dut._cfg_status.status) == 0b011                   # done + error.
        assert (yield dut._cfg_rdata.status) == 0x12345678
        # Link status fields.
        yield dut.link_gen.eq(3)
        yield dut.link_width.eq(4)
        yield dut.ltssm.eq(0x10)
        yield dut.link_up.eq(1)
        yield
        assert (yield dut._link_status.status) == (0x10 << 16) | (4 << 8) | (3 << 4) | 1
    run_simulation(dut, main())
