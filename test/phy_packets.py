#
# This file is part of LiteRecorder.
#
# SPDX-License-Identifier: BSD-2-Clause

"""Harness of the root-port PHYs' TLP datapaths in Migen run_simulation with two clocks (``sys`` and
the block's user clock ``pcie`` at another period), shared by test_rootport_phy_packets.py and
bench_phy_packets.py.

The model of the block's AXI4-Stream interfaces checks the rule every Xilinx AXI4-Stream packet
interface has (PG156/PG213 RQ and CC): once the first beat of a packet is taken, ``tvalid`` stays
asserted in every cycle up to its last beat (a cycle without it is a *gap*); and the AXI4-Stream
handshake rule: a beat offered while ``tready`` is low stays, unchanged, until taken. Packets are
decoded back with the descriptor models of test_rootport_phy_descriptors.py (written from
PG156/PG213, independent of the RTL)."""

import random

from migen import *
from migen.fhdl.structure import _Assign, _Slice, _Part, _Value
from migen.fhdl.tools import list_targets, list_inputs, list_signals
from migen.sim import run_simulation, passive
from migen.sim.core import Simulator, Evaluator

from litex.gen import *

from literecorder.cores.pcie.phy.usrootport import USRootPortDatapath
from literecorder.cores.pcie.phy.xilinx_us_descriptors import RC_TUSER_DISCONTINUE, CQ_TUSER_DISCONTINUE
from litepcie.phy.common import PHYTXDatapath

from test_rootport_phy_descriptors import (M32, tlp_mem, tlp_cfg, tlp_cpl, to_beats,
    model_tlp_to_rq, model_tlp_to_cc, model_rc_to_tlp, model_cq_to_tlp, rc_desc, cq_desc)

# Clock scenarios: (sys period, pcie period), integer simulation time units ------------------------

CLOCKS = {
    "pcie-2%-faster": (1000, 980),  # An oscillator offset: the user clock drains faster than sys fills.
    "pcie-3%-slower": (1000, 1030),
    "250-vs-125MHz":  (800, 400),   # 128-bit UltraScale Gen3 x4: 250 MHz user clock, 125 MHz sys.
}

# Two-clock simulation -----------------------------------------------------------------------------

class DatapathTop(LiteXModule):
    """The block under test with the ``sys`` and ``pcie`` clock domains."""
    def __init__(self, dut):
        self.cd_sys  = ClockDomain()
        self.cd_pcie = ClockDomain()
        self.dut     = dut

def sim_clocks(fragment, periods):
    """Clocks of every domain of ``fragment``: ``periods`` gives sys and pcie; the domains LiteX's
    ``ClockDomainCrossing`` (with a common reset) derives from them by ``clk.eq(ClockSignal(...))``
    get the period (and phase) of their source."""
    clocks = dict(periods)
    names  = {id(cd.clk): cd.name for cd in fragment.clock_domains}
    for st in fragment.comb:
        if isinstance(st, _Assign) and isinstance(st.r, ClockSignal) and id(st.l) in names:
            clocks[names[id(st.l)]] = periods[st.r.cd]
    missing = {cd.name for cd in fragment.clock_domains} - set(clocks)
    assert not missing, f"no clock for {missing}"
    return clocks

class _OrderedEvaluator(Evaluator):
    """Migen's evaluator; while ``ordered`` is set, a signal read is the value written earlier in
    the same pass if any (else the committed one), and a slice written first in a pass starts from
    the signal's reset value (Migen's comb default)."""
    ordered = False

    def eval(self, node, postcommit=False):
        return Evaluator.eval(self, node, postcommit or self.ordered)

    def assign(self, node, value):
        if self.ordered and type(node) in (_Slice, _Part):
            root = node.value
            while type(root) in (_Slice, _Part):
                root = root.value
            if type(root) is Signal and root.duid not in self.modifications:
                self.modifications[root.duid] = root.reset.value
        Evaluator.assign(self, node, value)

class FastSimulator(Simulator):
    """Migen's simulator, the same results in fewer combinational passes.

    Migen evaluates every combinational statement in each pass from the values committed by the
    previous pass, so a chain of N statements takes N passes (about 19 per clock edge in this
    datapath), and propagates again at every falling edge. Here the statements run in dependency
    order (writers of a signal, in their original order, before its readers; strongly connected
    groups in their original order), each reading what the pass already wrote, passes repeated until
    nothing changes, as Migen does; a signal no statement wrote in a pass takes its reset value, as
    Migen's prepended defaults give it. Clock signals are not driven: nothing in the simulated logic
    reads them (checked) once the ``clk.eq(ClockSignal(...))`` statements of the derived domains are
    left out (their domains are clocked by the time manager). ``test_fast_simulator_matches_migen``
    compares both on a run."""
    def __init__(self, fragment, generators, clocks):
        Simulator.__init__(self, fragment, generators, clocks)
        comb    = self.fragment.comb
        targets = list_targets(comb)
        stmts   = [s for s in comb[len(targets):] if not (isinstance(s, _Assign) and
            isinstance(s.r, ClockSignal))]
        clks = {id(cd.clk) for cd in self.fragment.clock_domains}
        for s in stmts + [s for sl in self.fragment.sync.values() for s in sl]:
            assert not any(id(x) in clks for x in list_signals(s)), "logic reads a clock signal"
        self.comb_order   = _dependency_order(stmts)
        self.comb_targets = [(t.duid, t.reset.value) for t in list_targets(stmts)]
        self.evaluator.__class__ = _OrderedEvaluator

    def _commit_and_comb_propagate(self):
        ev = self.evaluator
        modified = ev.commit_changed()
        while modified:
            ev.ordered = True
            ev.execute(self.comb_order)
            ev.ordered = False
            mods = ev.modifications
            for duid, reset in self.comb_targets:
                if duid not in mods:
                    mods[duid] = reset
            modified = ev.commit_changed()

    def run(self):
        # Expression widths are fixed once built: remembered while this simulation runs.
        value_len = _Value.__len__
        def cached_len(node):
            try:
                return node._sim_len
            except AttributeError:
                node._sim_len = value_len(node)
                return node._sim_len
        _Value.__len__ = cached_len
        try:
            self.evaluator.execute(self.fragment.comb)
            self._commit_and_comb_propagate()
            while True:
                dt, rising, falling = self.time.tick()
                for cd in rising:
                    if cd in self.fragment.sync:
                        self.evaluator.execute(self.fragment.sync[cd])
                    if cd in self.generators:
                        self._process_generators(cd)
                self._commit_and_comb_propagate()
                if not self._continue_simulation():
                    break
        finally:
            _Value.__len__ = value_len

def _dependency_order(stmts):
    """``stmts`` with the writers of each signal (in their original order) before its readers; the
    statements of a dependency cycle keep their original order."""
    n = len(stmts)
    writers, readers = {}, {}
    for i, s in enumerate(stmts):
        for t in list_targets(s):
            writers.setdefault(t, []).append(i)
        for r in list_inputs(s):
            readers.setdefault(r, []).append(i)
    succ = [set() for _ in range(n)]
    for sig, ws in writers.items():
        for a, b in zip(ws, ws[1:]):
            succ[a].add(b)
        for w in ws:
            succ[w].update(r for r in readers.get(sig, []) if r != w)
    # Strongly connected components (Tarjan, iterative), emitted in reverse topological order.
    index, low, on, stack, sccs, counter = {}, {}, set(), [], [], [0]
    for root in range(n):
        if root in index:
            continue
        work = [(root, iter(sorted(succ[root])))]
        index[root] = low[root] = counter[0]; counter[0] += 1
        stack.append(root); on.add(root)
        while work:
            v, it = work[-1]
            w = next(it, None)
            if w is None:
                work.pop()
                if work:
                    low[work[-1][0]] = min(low[work[-1][0]], low[v])
                if low[v] == index[v]:
                    scc = []
                    while True:
                        x = stack.pop(); on.discard(x); scc.append(x)
                        if x == v:
                            break
                    sccs.append(sorted(scc))
            elif w not in index:
                index[w] = low[w] = counter[0]; counter[0] += 1
                stack.append(w); on.add(w)
                work.append((w, iter(sorted(succ[w]))))
            elif w in on:
                low[v] = min(low[v], index[w])
    return [stmts[i] for scc in reversed(sccs) for i in scc]

def run_two_clocks(top, sys_gens, pcie_gens, periods, fast=True):
    frag = top.get_fragment()
    clocks = sim_clocks(frag, periods)
    gens = {"sys": sys_gens, "pcie": pcie_gens}
    if fast:
        with FastSimulator(frag, gens, clocks) as s:
            s.run()
    else:
        run_simulation(frag, gens, clocks=clocks)

# Traffic ------------------------------------------------------------------------------------------

def max_cpld(rng, mps, tag):
    """A completion with data of the largest size (``mps`` bytes), as the completer sends them."""
    n = mps//4
    return tlp_cpl(0x0000, 0x0100, tag, 0, (4*n) & 0xfff, 0, [rng.getrandbits(32) for _ in range(n)])

def short_request(rng, tag):
    """One of the requester's TLPs: MRd/MWr of 1-2 dwords (32/64-bit), CfgRd0/CfgWr0."""
    kind = rng.choice(["mrd", "mwr", "mwr64", "cfgrd", "cfgwr"])
    if kind.startswith("cfg"):
        return tlp_cfg(1, 0, 0, rng.randrange(1024), kind == "cfgwr", tag=tag, data=rng.getrandbits(32))
    addr = 0xe0000000 | (rng.getrandbits(18) << 2)
    if kind == "mwr64":
        addr |= rng.randrange(1, 16) << 32
    n = rng.choice([1, 2])
    return tlp_mem(addr, kind != "mrd", n, tag=tag, last_be=0xf if n == 2 else 0,
        payload=[rng.getrandbits(32) for _ in range(n)] if kind != "mrd" else None)

def mixed_traffic(rng, count, mps):
    """Completions of every size up to ``mps`` (half of them the largest), requests in between."""
    tlps = []
    for i in range(count):
        r = rng.random()
        if r < 0.45:
            tlps.append(max_cpld(rng, mps, i & 0xff))
        elif r < 0.7:
            n = rng.randrange(1, mps//4 + 1)
            tlps.append(tlp_cpl(0, 0x0100, i & 0xff, 0, 4*n, 0, [rng.getrandbits(32) for _ in range(n)]))
        else:
            tlps.append(short_request(rng, i & 0xff))
    return tlps

def is_completion(tlp):
    return (tlp[0] >> 25) & 0xf == 0b0101

# Source (sys side) --------------------------------------------------------------------------------

def send_tlps(ep, tlps, data_width, late_every=0, idle=0.0, rng=None, done=None):
    """TLPs as PHY beats on ``ep`` (phy_layout). ``late_every``: every n-th beat comes one cycle
    late (data read from DRAM arriving late); ``idle``: probability of an idle cycle between TLPs."""
    count = 0
    for tlp in tlps:
        if idle and rng.random() < idle:
            yield ep.valid.eq(0)
            yield
        for b in to_beats(tlp, data_width, False):
            count += 1
            if late_every and count % late_every == 0:
                yield ep.valid.eq(0)
                yield
            yield ep.valid.eq(1)
            yield ep.dat.eq(b["dat"])
            yield ep.be.eq(b["mask"])
            yield ep.first.eq(b["first"])
            yield ep.last.eq(b["last"])
            yield
            while not (yield ep.ready):
                yield
    yield ep.valid.eq(0)
    if done is not None:
        done.append(True)

# Block model (pcie side) --------------------------------------------------------------------------

class AXISMonitor:
    """One of the block's input interfaces (s_axis_rq, s_axis_cc, s_axis_tx): random ``tready``,
    every beat taken recorded, the packet rule and the handshake rule checked in every cycle."""
    def __init__(self, ep, data_width, rng, ready=1.0, keep_per_dword=True, has_user=True):
        self.ep, self.dw, self.rng, self.ready = ep, data_width, rng, ready
        self.keep_per_dword = keep_per_dword
        self.has_user  = has_user
        self.packets   = []     # dict(dwords, user)
        self.gaps      = 0      # Cycles without tvalid inside a packet.
        self.gap_packets = set() # Packets (index) with at least one gap.
        self.unstable  = 0      # Beats changed or withdrawn while tready was low.
        self.beats     = 0
        self.cycle     = 0
        self.first_cycle = None
        self.last_cycle  = None

    def _sample(self):
        ep = self.ep
        s = dict(valid=(yield ep.valid), last=(yield ep.last), dat=(yield ep.dat))
        s["mask"] = (yield ep.keep) if self.keep_per_dword else (yield ep.be)
        s["user"] = (yield ep.user) if self.has_user else 0
        return s

    @passive
    def run(self):
        n, cur, ready, held = self.dw//32, None, 0, None
        yield self.ep.ready.eq(0)
        while True:
            yield
            self.cycle += 1
            s = yield from self._sample()
            if held is not None and (not s["valid"] or s != held):
                self.unstable += 1
            if cur is not None and not s["valid"]:
                self.gaps += 1
                self.gap_packets.add(len(self.packets))
            held = s if (s["valid"] and not ready) else None
            if s["valid"] and ready:
                self.beats += 1
                if self.first_cycle is None:
                    self.first_cycle = self.cycle
                self.last_cycle = self.cycle
                step = 1 if self.keep_per_dword else 4
                full = (1 << step) - 1
                ndw  = sum(1 for k in range(n) if (s["mask"] >> (step*k)) & full == full)
                assert s["mask"] == (1 << (step*ndw)) - 1, f"non contiguous keep {s['mask']:#x}"
                if cur is None:
                    cur = dict(dwords=[], user=s["user"])
                else:
                    assert s["last"] or ndw == n, "partial beat before the last one"
                cur["dwords"] += [(s["dat"] >> (32*k)) & M32 for k in range(ndw)]
                if s["last"]:
                    self.packets.append(cur)
                    cur = None
            ready = int(self.rng.random() < self.ready)
            yield self.ep.ready.eq(ready)

    def rate(self):
        """Beats per user-clock cycle from the first beat taken to the last one."""
        return self.beats/(self.last_cycle - self.first_cycle + 1)

# Outbound runs ------------------------------------------------------------------------------------

def run_us_outbound(data_width, family, tlps, clocks, seed, late_every=0, idle=0.0, ready=1.0,
    mps=512, store_and_forward=True, timeout=40000):
    """TLPs through USRootPortDatapath to the RQ/CC block model -> (rq, cc) monitors."""
    dut = USRootPortDatapath(data_width, family, mps=mps, store_and_forward=store_and_forward)
    top = DatapathTop(dut)
    rng = random.Random(seed)
    rq  = AXISMonitor(dut.s_axis_rq, data_width, random.Random(seed + 1), ready)
    cc  = AXISMonitor(dut.s_axis_cc, data_width, random.Random(seed + 2), ready)
    requests = sum(1 for t in tlps if not is_completion(t))
    done = []
    def main():
        yield from send_tlps(dut.sink, tlps, data_width, late_every, idle, rng, done)
        for _ in range(timeout):
            if len(rq.packets) + len(cc.packets) >= len(tlps):
                break
            yield
        for _ in range(20):
            yield
    @passive
    def rx_ready():
        yield dut.source.ready.eq(1)
    run_two_clocks(top, [main(), rx_ready()], [rq.run(), cc.run()], dict(zip(("sys", "pcie"), clocks)))
    assert len(rq.packets) == requests and len(cc.packets) == len(tlps) - requests, \
        f"{len(rq.packets)}/{requests} requests, {len(cc.packets)}/{len(tlps) - requests} completions"
    return rq, cc

def check_us_outbound(tlps, rq, cc):
    """Every packet byte-exact and in order at the block, decoded with the descriptor models."""
    requests    = [t for t in tlps if not is_completion(t)]
    completions = [t for t in tlps if is_completion(t)]
    for got, tlp in zip(rq.packets, requests):
        dwords, first_be, last_be = model_tlp_to_rq(tlp)
        assert got["dwords"] == dwords
        assert got["user"] == (last_be << 4) | first_be
    assert [p["dwords"] for p in cc.packets] == [model_tlp_to_cc(t) for t in completions]
    assert all(p["user"] == 0 for p in cc.packets)

def run_s7_outbound(data_width, tlps, clocks, seed, late_every=0, ready=1.0, timeout=40000):
    """TLPs through the 7-series TX path (LitePCIe's PHYTXDatapath, as S7RootPortPHY wires it to
    s_axis_tx) -> monitor (tkeep per byte)."""
    dut = PHYTXDatapath(core_data_width=data_width, pcie_data_width=data_width, clock_domain="sys")
    top = DatapathTop(dut)
    tx  = AXISMonitor(dut.source, data_width, random.Random(seed + 1), ready, keep_per_dword=False,
        has_user=False)
    def main():
        yield from send_tlps(dut.sink, tlps, data_width, late_every)
        for _ in range(timeout):
            if len(tx.packets) >= len(tlps):
                break
            yield
    run_two_clocks(top, [main()], [tx.run()], dict(zip(("sys", "pcie"), clocks)))
    assert [p["dwords"] for p in tx.packets] == tlps
    return tx

# Inbound runs -------------------------------------------------------------------------------------

def send_axis(ep, packets, data_width, rng, idle=0.0):
    """Descriptor packets on the block's m_axis_rc/m_axis_cq (pcie side): (dwords, user of the first
    beat, user of the last beat)."""
    for dwords, user_first, user_last in packets:
        beats = to_beats(dwords, data_width, True)
        for i, b in enumerate(beats):
            while idle and rng.random() < idle:
                yield ep.valid.eq(0)
                yield
            yield ep.valid.eq(1)
            yield ep.dat.eq(b["dat"])
            yield ep.keep.eq(b["mask"])
            yield ep.last.eq(b["last"])
            yield ep.user.eq((user_first if i == 0 else 0) | (user_last if b["last"] else 0))
            yield
            while not (yield ep.ready):
                yield
    yield ep.valid.eq(0)

@passive
def receive_tlps(ep, data_width, out, rng, ready=0.8):
    """TLPs from the datapath's source (sys side, phy_layout)."""
    n, cur = data_width//32, None
    while True:
        r = int(rng.random() < ready)
        yield ep.ready.eq(r)
        yield
        if r and (yield ep.valid):
            dat, be, last = (yield ep.dat), (yield ep.be), (yield ep.last)
            ndw = sum(1 for k in range(n) if (be >> (4*k)) & 0xf == 0xf)
            cur = (cur or []) + [(dat >> (32*k)) & M32 for k in range(ndw)]
            if last:
                out.append(cur)
                cur = None

def run_us_inbound(data_width, family, rcs, cqs, clocks, seed, mps=512, idle=0.2, settle=600,
    timeout=20000):
    """RC and CQ packets (lists of (dwords, user_first, user_last)) through USRootPortDatapath ->
    (TLPs received on its source, discontinued count read on the sys side)."""
    dut = USRootPortDatapath(data_width, family, mps=mps)
    top = DatapathTop(dut)
    out, result = [], {}
    def main(expected):
        for _ in range(timeout):
            if len(out) >= expected:
                break
            yield
        for _ in range(settle): # The count crosses through a handshake: let it settle.
            yield
        result["discontinued"] = (yield dut.discontinued)
    rng = random.Random(seed)
    expected = sum(1 for d, _, u in rcs if not (u >> RC_TUSER_DISCONTINUE) & 1) + \
               sum(1 for d, _, u in cqs if not (u >> CQ_TUSER_DISCONTINUE) & 1)
    run_two_clocks(top, [main(expected), receive_tlps(dut.source, data_width, out, random.Random(seed + 1))],
        [send_axis(dut.m_axis_rc, rcs, data_width, random.Random(seed + 2), idle),
         send_axis(dut.m_axis_cq, cqs, data_width, random.Random(seed + 3), idle)],
        dict(zip(("sys", "pcie"), clocks)))
    return out, result["discontinued"]
