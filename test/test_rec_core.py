#
# This file is part of LiteRecorder.
#
# SPDX-License-Identifier: BSD-2-Clause

"""Layers of the recorder core in Migen's simulator: accounting counters across 2**32 (preset),
the slot tracker (out-of-order completions, laps, clearing), the stripe walker (rows, ports, wrap),
the configuration check (every refusal status, the region's capacity)."""

import functools
import random

import pytest

from migen import *

from literecorder.cores.recorder.accounting import Accounting
from literecorder.cores.recorder.slots import SlotTracker
from literecorder.cores.recorder.striping import StripeWalker
from literecorder.cores.recorder.core import _RegionCheck
from literecorder.cores.recorder.common import *

pytestmark = pytest.mark.unit

# Accounting ----------------------------------------------------------------------------------------

def test_accounting_counters_cross_2_to_the_32_exactly_and_snapshot_together():
    dut = Accounting(log_depth=8)
    base = 2**32 - 100
    got = {}
    def gen():
        # Preset the counters just below 2**32 (a recording of 4 GiB so far).
        for sig in (dut.bytes_in, dut.kept):
            yield sig.eq(base)
        yield dut.cycles.eq(2**32 - 3)
        yield dut.running.eq(1)
        yield
        for i in range(6):                     # 6 words of 64 bytes, the 4th with 128 dropped before it
            yield dut.word.eq(1)
            yield dut.word_bytes.eq(64)
            yield dut.word_gap.eq(128 if i == 3 else 0)
            yield
        yield dut.word.eq(0)
        yield dut.word_gap.eq(0)
        yield dut.committed.eq(2**33 + 5)
        yield dut.snapshot.eq(1)
        yield
        yield dut.snapshot.eq(0)
        yield dut.log_index.eq(0)
        yield
        yield
        for name in ("s_bytes_in", "s_kept", "s_dropped", "s_committed", "s_cycles", "drops", "log_pos", "log_len"):
            got[name] = yield getattr(dut, name)
    run_simulation(dut, gen())
    assert got["s_bytes_in"] == base + 6*64 + 128 > 2**32
    assert got["s_kept"] == base + 6*64
    assert got["s_dropped"] == 128 and got["drops"] == 1
    assert got["s_committed"] == 2**33 + 5
    assert got["s_cycles"] == 2**32 + 4            # running during 7 cycles before the snapshot
    # The drop event sits at the input position before the 4th word: base + 3 words.
    assert (got["log_pos"], got["log_len"]) == (base + 3*64, 128)

def test_accounting_abort_moves_the_partial_chunk_from_kept_to_dropped():
    dut = Accounting(log_depth=4)
    got = {}
    def gen():
        yield dut.kept.eq(1000)
        yield dut.bytes_in.eq(1000)
        yield
        yield dut.discard.eq(1)
        yield dut.discard_bytes.eq(300)
        yield dut.discard_pos.eq(700)
        yield
        yield dut.discard.eq(0)
        yield
        yield
        for name in ("kept", "dropped", "bytes_in", "drops", "log_pos", "log_len", "log_abort"):
            got[name] = yield getattr(dut, name)
    run_simulation(dut, gen())
    assert got == dict(kept=700, dropped=300, bytes_in=1000, drops=1, log_pos=700, log_len=300, log_abort=1)

# Slot tracker --------------------------------------------------------------------------------------

def test_slot_tracker_releases_in_order_across_laps_with_completions_in_any_order():
    slots, used = 8, 5
    dut = SlotTracker(slots)
    rng = random.Random(3)
    order = []
    def gen():
        yield dut.ring_slots.eq(used)
        yield dut.clear.eq(1)
        yield
        yield dut.clear.eq(0)
        yield
        while (yield dut.clearing):
            yield
        yield dut.ptr.restart.eq(1)
        yield
        yield dut.ptr.restart.eq(0)
        k_next, pending, released = 0, [], 0
        for cycle in range(600):
            # Commands in flight: at most `used` chunks ahead of the release.
            if k_next - released < used and rng.random() < 0.5:
                pending.append(k_next)
                k_next += 1
            mark = None
            if pending and rng.random() < 0.4:
                mark = pending.pop(rng.randrange(len(pending)))
                yield dut.mark.eq(1)
                yield dut.mark_id.eq(((mark//used) & 1) << 15 | (mark % used))
            else:
                yield dut.mark.eq(0)
            adv = (yield dut.done)
            yield dut.ptr.advance.eq(adv)
            if adv:
                order.append((yield dut.ptr.count))
                released += 1
                yield                       # the advance is seen in the next cycle: one at a time
                yield dut.ptr.advance.eq(0)
                yield dut.mark.eq(0)
            yield
        yield dut.mark.eq(0)
        yield dut.ptr.advance.eq(0)
    run_simulation(dut, gen())
    assert len(order) > 50
    assert order == list(range(len(order)))

def test_slot_tracker_clear_forgets_completions_of_an_earlier_run():
    dut = SlotTracker(4)
    seen = []
    def gen():
        yield dut.ring_slots.eq(4)
        yield dut.mark.eq(1)
        yield dut.mark_id.eq(0)          # chunk 0 of an earlier run completed
        yield
        yield dut.mark.eq(0)
        yield dut.clear.eq(1)
        yield
        yield dut.clear.eq(0)
        yield
        while (yield dut.clearing):
            yield
        yield dut.ptr.restart.eq(1)
        yield
        yield dut.ptr.restart.eq(0)
        for _ in range(4):
            yield
            seen.append((yield dut.done))
    run_simulation(dut, gen())
    assert seen == [0, 0, 0, 0]

def test_slot_tracker_size_is_checked():
    with pytest.raises(ValueError, match="2 to 16383 are allowed"):
        SlotTracker(40000)

# Stripe walker -------------------------------------------------------------------------------------

def test_stripe_walker_round_robin_over_enabled_ports_with_rows_that_wrap():
    dut = StripeWalker(4)
    got = []
    def gen():
        yield dut.mask.eq(0b1011)
        yield dut.first_lba.eq(2**33)
        yield dut.last_lba.eq(2**33 + 2*256)       # three rows
        yield dut.start_lba.eq(2**33 + 256)        # start at the second row ...
        yield dut.start_port.eq(1)                 # ... on its second enabled port
        yield dut.chunk_blocks.eq(256)
        yield dut.restart.eq(1)
        yield
        yield dut.restart.eq(0)
        yield dut.advance.eq(1)
        for _ in range(8):
            yield
            got.append(((yield dut.port), (yield dut.lba) - 2**33, (yield dut.rows)))
    run_simulation(dut, gen())
    assert got == [(1, 256, 0), (3, 256, 0), (0, 512, 1), (1, 512, 1), (3, 512, 1), (0, 0, 2), (1, 0, 2),
        (3, 0, 2)]

# Configuration check -------------------------------------------------------------------------------

def check(**cfg):
    dut = _RegionCheck(4)
    out = {}
    def gen():
        defaults = dict(mask=1, first_lba=0, last_lba=0, start_lba=0, nsze=2**20, start_port=0,
            chunk_blocks=256, chunk_words=2048, ring_slots=64, chunks=1, sized=1)
        defaults.update(cfg)
        for k, v in defaults.items():
            yield getattr(dut, k).eq(v)
        yield dut.start.eq(1)
        yield
        yield dut.start.eq(0)
        yield
        while (yield dut.busy):
            yield
        out.update(status=(yield dut.status), rows=(yield dut.rows), capacity=(yield dut.capacity))
    run_simulation(dut, gen())
    return out

def test_region_check_computes_rows_and_capacity():
    r = check(mask=0b0111, first_lba=2**32, last_lba=2**32 + 99*256, start_lba=2**32, chunks=300, nsze=2**40)
    assert r == dict(status=STATUS_NONE, rows=100, capacity=300)

def test_region_check_accepts_a_region_that_ends_at_the_namespace_end():
    # The last row's last LBA is the namespace's last LBA; start on the last row.
    r = check(mask=0b1001, first_lba=2**40 - 2**30, last_lba=2**40 - 256, start_lba=2**40 - 256,
        start_port=3, chunks=2**23, nsze=2**40)
    assert r == dict(status=STATUS_NONE, rows=2**22, capacity=2**23)

@pytest.mark.parametrize("cfg, code", [
    (dict(last_lba=(2**20) - 128),                         STATUS_ERR_ALIGN),
    (dict(first_lba=512, last_lba=256, start_lba=512),     STATUS_ERR_ORDER),
    (dict(last_lba=2**20),                                 STATUS_ERR_RANGE),   # past the namespace
    (dict(last_lba=2**64 - 256, nsze=2**64 - 1),           STATUS_ERR_RANGE),   # wraps around 2**64
    (dict(last_lba=256, start_lba=512),                    STATUS_ERR_RANGE),   # start after the last row
    (dict(first_lba=256, last_lba=512, start_lba=0),       STATUS_ERR_RANGE),   # start before the first row
    (dict(first_lba=512, last_lba=128, start_lba=512),     STATUS_ERR_ORDER),   # ORDER before ALIGN
    (dict(last_lba=2**20 + 256, start_lba=128),            STATUS_ERR_ALIGN),   # ALIGN before RANGE
    (dict(last_lba=2**20 - 256, nsze=2**20 - 1),           STATUS_ERR_RANGE),   # one LBA short
    (dict(last_lba=2**21, nsze=2**20),                     STATUS_ERR_RANGE),   # last row past nsze
    (dict(last_lba=256, chunks=3),                         STATUS_ERR_RANGE),   # more than the region holds
    (dict(chunks=0),                                       STATUS_ERR_CONFIG),
    (dict(mask=0),                                         STATUS_ERR_CONFIG),
    (dict(chunk_blocks=384),                               STATUS_ERR_CONFIG),
    (dict(ring_slots=1),                                   STATUS_ERR_CONFIG),
    (dict(mask=0b10, start_port=0),                        STATUS_ERR_CONFIG),
    (dict(mask=0b0111, served=0b1011),                     STATUS_ERR_ENGINE),  # port 2's engine is the CPU's
    (dict(mask=0b0001, served=0b0000, chunks=0),           STATUS_ERR_ENGINE),  # ENGINE before CONFIG
    (dict(mask=0b0011, served=0b0011, chunks=0),           STATUS_ERR_CONFIG),
])
def test_region_check_refuses_with_the_status_of_the_fault(cfg, code):
    assert check(**cfg)["status"] == code

# The whole core: an abort in the cycle a word arrives ---------------------------------------------

class _CoreHarness(Module):
    """RecorderCore (32-bit ring words, 4 slots, chunks of 4 words) with a LiteDRAM write port that
    takes everything and one NVMe port that completes each request ``latency`` cycles later."""
    def __init__(self, latency=6, drop=0, flush_surplus=0, mode=MODE_UNTIL_STOP, post_bytes=0, csr=False):
        from litedram.common import LiteDRAMNativePort
        from literecorder.cores.recorder.core import RecorderCore
        wr = LiteDRAMNativePort("write", address_width=16, data_width=32)
        rd = LiteDRAMNativePort("read",  address_width=16, data_width=32)
        self.submodules.rec = rec = RecorderCore(wr, rd, n_ports=1, slots=4)
        self.wr = wr
        self.comb += [wr.cmd.ready.eq(1), wr.wdata.ready.eq(1)]
        # NVMe port: a request completes `latency` cycles after it was taken (one at a time).
        req, cpl = rec.req[0], rec.cpl[0]
        count = Signal(8)
        held  = Signal(16)
        op    = Signal(len(req.op))
        busy  = Signal()
        self.comb += [
            req.ready.eq(~busy),
            cpl.valid.eq(busy & (count == 0)),
            cpl.id.eq(held), cpl.op.eq(op), cpl.final.eq(1), cpl.status.eq(0),
        ]
        self.sync += [
            If(req.valid & req.ready, busy.eq(1), held.eq(req.id), op.eq(req.op), count.eq(latency)),
            If(busy & (count != 0), count.eq(count - 1)),
            If(cpl.valid & cpl.ready, busy.eq(0)),
        ]
        # Configuration: an until-stop (or ring) recording of at most 64 chunks from LBA 0, 1 LBA per chunk
        # (csr: in the recorder's CSRs instead, set by the test).
        if csr:
            rec.add_csr()
            return
        self.comb += [
            rec.direction.eq(DIR_RECORD), rec.mode.eq(mode), rec.post_bytes.eq(post_bytes), rec.drop.eq(drop),
            rec.flush_surplus.eq(flush_surplus),
            rec.end_on_last.eq(1), rec.ring_slots.eq(4), rec.chunk_log2.eq(4),
            rec.chunk_blocks.eq(1), rec.first_lba.eq(0), rec.last_lba.eq(63), rec.start_lba.eq(0),
            rec.nsze.eq(1 << 20), rec.port_mask.eq(1), rec.max_inflight.eq(4),
        ]

@pytest.mark.parametrize("at_word", [5, 8, 9, 13, 16])
def test_abort_in_the_cycle_a_word_arrives_counts_every_byte_the_source_gave(at_word):
    """The source offers a 4-byte word every cycle; the abort comes in the cycle the word
    ``at_word`` would be taken (a chunk holds 4 words: 8 and 16 start a chunk, 9 and 13 follow one).
    Every word the recorder took is counted; the partial chunk is dropped, nothing stays buffered."""
    dut  = _CoreHarness()
    rec  = dut.rec
    src  = rec.inputs[0]
    got  = {}
    def gen():
        yield rec.start.eq(1)
        yield
        yield rec.start.eq(0)
        while not (yield rec.running):
            yield
        yield src.valid.eq(1)
        yield src.bytes.eq(4)
        taken = 0
        for _ in range(400):
            yield src.data.eq(taken + 1)
            if taken == at_word:
                yield rec.abort.eq(1)
            yield
            if (yield rec.abort):
                yield rec.abort.eq(0)
                got["taken_in_abort_cycle"] = (yield src.ready)    # sampled after the edge: 0 ok
                break
            if (yield src.ready):
                taken += 1
        yield src.valid.eq(0)
        for _ in range(300):
            if (yield rec.done):
                break
            yield
        got["taken"] = taken
        for name in ("bytes_in", "kept", "dropped", "drops"):
            got[name] = yield getattr(rec.acct, name)
        got["committed"] = yield rec.acct.committed
        got["status"]    = yield rec.status
        got["done"]      = yield rec.done
    # Count the words the source handed over, cycle by cycle.
    handed = []
    @passive
    def monitor():
        while True:
            if (yield src.valid) and (yield src.ready):
                handed.append((yield src.data))
            yield
    run_simulation(dut, [gen(), monitor()])
    assert got["done"] == 1 and got["status"] == STATUS_ABORTED, got
    n = len(handed)
    assert handed == list(range(1, n + 1))                  # in order, none twice
    assert got["bytes_in"] == 4*n, (got, n)
    assert got["bytes_in"] == got["kept"] + got["dropped"], got
    chunks = n // 4
    assert got["committed"] == chunks and got["kept"] == 16*chunks, (got, n)   # nothing buffered
    assert got["dropped"] == 4*(n % 4) and got["drops"] == (1 if n % 4 else 0), (got, n)

def _prepared_run(name=None, at=None, cycles=60, **config):
    """_CoreHarness(**config): an until-stop recording started in cycle 0, the source offering words
    all along; ``name`` (stop/abort/trigger) pulsed in cycle ``at``. -> (per cycle: state name,
    restart, pulse), results."""
    dut = _CoreHarness(**config)
    rec = dut.rec
    src = rec.inputs[0]
    pulse = getattr(rec, name) if name else Signal()
    trace, got = [], {}
    def gen():
        names = {v: k for k, v in rec.fsm.encoding.items()}
        yield src.valid.eq(1)
        yield src.bytes.eq(4)
        for i in range(cycles):
            yield rec.start.eq(i == 0)
            yield pulse.eq(i == at)
            yield
            trace.append((names[(yield rec.fsm.state)], (yield rec.restart), (yield pulse)))
        for k in ("done", "status", "triggered", "trigger_pos"):
            got[k] = yield getattr(rec, k)
        for k in ("bytes_in", "kept", "dropped", "committed"):
            got[k] = yield getattr(rec.acct, k)
    run_simulation(dut, gen())
    return trace, got

@functools.lru_cache()
def _prepared_trace():
    return _prepared_run(cycles=30)[0]

@pytest.mark.parametrize("when", ["with_start", "check", "check_late", "clear", "restart"])
@pytest.mark.parametrize("name, code", [("stop", STATUS_STOPPED), ("abort", STATUS_ABORTED)])
def test_a_stop_or_abort_while_the_run_is_prepared_ends_it_when_it_begins(name, code, when):
    """An until-stop recording (64 chunks at most: about 530 cycles); a stop or abort comes after the
    start but before the run: in the start's own cycle, in the configuration check (its first cycle,
    later), in the slot clearing, in the cycle of the restart. The recording ends at once with that status, within 60
    cycles (it used to be ignored: the recording ran to its capacity)."""
    trace = _prepared_trace()
    states = [t[0] for t in trace]
    at = {
        "with_start": 0,
        "check":      states.index("CHECK"),
        "check_late": states.index("CHECK") + 5,
        "clear":      states.index("CLEAR"),
        "restart":    [t[1] for t in trace].index(1),
    }[when]
    trace, got = _prepared_run(name, at)
    assert trace[at][2] == 1 and trace[at][0] in (("IDLE",) if when == "with_start" else ("CHECK", "CLEAR")), trace[at]
    assert (trace[at][1] == 1) == (when == "restart")
    assert got["done"] == 1 and got["status"] == code, got
    assert got["bytes_in"] == got["kept"] + got["dropped"], got
    if name == "abort":
        assert got["kept"] == 0 and got["committed"] == 0, got
    else:   # the word of the run's first cycle at most (a stop takes the word of its cycle), padded
        assert got["kept"] <= 4 and got["committed"] == (1 if got["kept"] else 0), got

@pytest.mark.parametrize("when", ["with_start", "check", "clear", "restart"])
def test_a_ring_trigger_while_the_run_is_prepared_keeps_post_bytes_from_the_start(when):
    """A ring recording (post_bytes = 2 chunks) triggered after the start but before the run (the
    hardware trigger of an event that started it): the trigger is kept, at stream position 0, and the
    recording ends with post_bytes kept (it used to be lost: the ring ran until a second trigger)."""
    trace = _prepared_trace()
    states = [t[0] for t in trace]
    at = {
        "with_start": 0,
        "check":      states.index("CHECK"),
        "clear":      states.index("CLEAR"),
        "restart":    [t[1] for t in trace].index(1),
    }[when]
    trace, got = _prepared_run("trigger", at, cycles=120, mode=MODE_RING, post_bytes=32)
    assert trace[at][2] == 1 and trace[at][0] in (("IDLE",) if when == "with_start" else ("CHECK", "CLEAR")), trace[at]
    assert got["done"] == 1 and got["status"] == STATUS_TRIGGERED, got
    assert (got["triggered"], got["trigger_pos"]) == (1, 0), got
    assert got["kept"] == 32 and got["committed"] == 2 and got["bytes_in"] == 32, got

@pytest.mark.parametrize("drop, flush_surplus", [(0, 0), (1, 0), (0, 1)])
def test_input_before_the_run_waits_lossless_or_is_discarded_as_surplus(drop, flush_surplus):
    """The source offers words 1, 2, 3 ... from before the start; the recording is stopped after 40
    words were handed over. Lossless (the input waits outside a recording): the words the source
    handed over during the start (CHECK, CLEAR) are the recording's first ones, every word handed
    over is counted and recorded, in order (they used to be taken in CLEAR and discarded uncounted).
    Drop policy / flush_surplus: the input is discarded outside the run (surplus), the recording
    begins with the first word of the run."""
    dut = _CoreHarness(drop=drop, flush_surplus=flush_surplus)
    rec = dut.rec
    src = rec.inputs[0]
    handed, written, got = [], [], {}
    def source():
        yield src.valid.eq(1)
        yield src.bytes.eq(4)
        yield src.data.eq(1)
        while len(handed) < 40:
            yield
            if (yield src.valid) and (yield src.ready):
                yield src.data.eq((yield src.data) + 1)
        yield src.valid.eq(0)
    def gen():
        for _ in range(5):
            yield
        yield rec.start.eq(1)
        yield
        yield rec.start.eq(0)
        while len(handed) < 40:
            yield
        yield rec.stop.eq(1)
        yield
        yield rec.stop.eq(0)
        for _ in range(300):
            if (yield rec.done):
                break
            yield
        for k in ("bytes_in", "kept", "dropped", "committed"):
            got[k] = yield getattr(rec.acct, k)
        got["status"] = yield rec.status
    @passive
    def monitor():
        run = rec.fsm.encoding["RUN"]
        while True:
            if (yield src.valid) and (yield src.ready):
                handed.append(((yield src.data), (yield rec.fsm.state) == run))
            if (yield dut.wr.wdata.valid) and (yield dut.wr.wdata.ready):
                written.append((yield dut.wr.wdata.data))
            yield
    run_simulation(dut, [source(), gen(), monitor()])
    assert got["status"] == STATUS_STOPPED, got
    assert [d for d, _ in handed] == list(range(1, len(handed) + 1))
    if drop or flush_surplus:
        assert not handed[0][1] and handed[-1][1]     # words before the run were discarded
        kept = [d for d, in_run in handed if in_run]
    else:
        assert handed[0][1]                           # nothing taken before the run
        kept = [d for d, _ in handed]
    # The stop's cycle: its word is the last one recorded.
    assert got["bytes_in"] == got["kept"] == 4*len(kept) and got["dropped"] == 0, (got, len(kept))
    assert written[:len(kept)] == kept and not any(written[len(kept):])     # then padding
    assert got["committed"] == (len(kept) + 3)//4

@pytest.mark.parametrize("drop, flush_surplus", [(0, 0), (1, 0), (0, 1)])
def test_the_record_ports_forget_what_they_hold_only_if_the_input_was_discarded(drop, flush_surplus):
    """``input_clear`` (RecordPort.clear) comes with the restart under the drop policy or
    flush_surplus (the input was discarded before the run); lossless without flush_surplus the input
    waited: what the ports hold is the recording's beginning, they keep it."""
    dut = _CoreHarness(drop=drop, flush_surplus=flush_surplus)
    rec = dut.rec
    seen = []
    def gen():
        yield rec.start.eq(1)
        yield
        yield rec.start.eq(0)
        for _ in range(40):
            yield
            seen.append(((yield rec.restart), (yield rec.input_clear)))
    run_simulation(dut, gen())
    assert seen.count((1, 1 if drop or flush_surplus else 0)) == 1
    assert sum(c for _, c in seen) == (1 if drop or flush_surplus else 0)

def test_busy_and_running_are_flip_flops_equal_to_the_state_in_every_cycle():
    """busy and running cross to the user's clock domain (ControlPort, MultiReg): they must be
    flip-flops, not a decode of the binary-encoded FSM state (CHECK -> CLEAR passes through other
    codes: a glitch the user's domain may sample). They still equal the decode in every cycle: busy
    out of IDLE, running in RUN and FLUSH (a recording stopped, with a Flush after it)."""
    from migen.fhdl.structure import _Assign
    from migen.fhdl.tools import list_targets
    dut = _CoreHarness()
    rec = dut.rec
    frag = dut.get_fragment()
    comb, sync = list_targets(frag.comb), list_targets(frag.sync["sys"])
    def driver(sig):
        # Through wires (comb assignments of a whole signal) to what drives them.
        for st in frag.comb:
            if isinstance(st, _Assign) and st.l is sig and isinstance(st.r, Signal):
                return driver(st.r)
        return sig
    for sig in (rec.busy, rec.running):
        ff = driver(sig)
        assert ff in sync and ff not in comb, sig
    trace = []
    def gen():
        names = {v: k for k, v in rec.fsm.encoding.items()}
        src = rec.inputs[0]
        yield rec.flush_after.eq(1)
        yield src.valid.eq(1)
        yield src.bytes.eq(4)
        for i in range(150):
            yield rec.start.eq(i == 2)
            yield rec.stop.eq(i == 40)
            yield
            trace.append((names[(yield rec.fsm.state)], (yield rec.busy), (yield rec.running)))
    run_simulation(frag, gen())
    states = [t[0] for t in trace]
    assert {"IDLE", "CHECK", "CLEAR", "RUN", "FLUSH", "END"} <= set(states) and states[-1] == "IDLE"
    for state, busy, running in trace:
        assert (busy, running) == (state != "IDLE", state in ("RUN", "FLUSH")), trace

# The hardware start: one run per arm, refused without the queue engines ---------------------------

def _csr_write(csr, fields):
    """One CPU write of a CSRStorage with fields (pulse fields last the write's cycle)."""
    value = 0
    for f in csr.fields.fields:
        value |= fields.get(f.name, f.reset.value if hasattr(f.reset, "value") else f.reset) << f.offset
    (bus,) = csr.simple_csrs
    yield bus.r.eq(value)
    yield bus.re.eq(1)
    yield
    yield bus.re.eq(0)

def _cpu_write(rec, **fields):
    """The CPU's writes as the BIOS does them: the run configuration (``config``: an until-stop
    recording unless ``fields`` say otherwise), then the pulses of ``control``."""
    fields.setdefault("mode", MODE_UNTIL_STOP)
    yield from _csr_write(rec._config, fields)
    yield from _csr_write(rec._control, fields)

def _hw_control_run(served=1, steps=()):
    """_CoreHarness with the CSRs; ``steps``: ("write", fields) CPU writes of config and control, ("hw", name) a
    one-cycle pulse of hw_<name>, ("wait", n) n cycles, ("end",) until the run ended. -> the
    recorder's (armed, busy, recording, replaying, refused, done, status) after each step, and the
    number of runs that began (restart pulses)."""
    dut = _CoreHarness(csr=True)
    rec = dut.rec
    for csr in (rec._config, rec._control):
        csr.finalize(32, "big")     # (a SoC's CSR bank does this: its bus side, the pulse fields)
        dut.submodules += csr
    dut.comb += rec.served.eq(served)
    src = rec.inputs[0]
    snaps, restarts = [], []
    def gen():
        # The _CoreHarness configuration in the CSRs (until stop, at most 64 chunks of 1 LBA).
        for name, value in dict(ring_slots=4, chunk_log2=4, chunk_blocks=1, first_lba=0,
            last_lba=63, start_lba=0, nsze=1 << 20, port_mask=1, max_inflight=4).items():
            yield getattr(rec, "_" + name).storage.eq(value)
        yield src.valid.eq(1)
        yield src.bytes.eq(4)
        yield src.last.eq(0)
        for step in steps:
            if step[0] == "write":
                yield from _cpu_write(rec, **step[1])
            elif step[0] == "hw":
                yield getattr(rec, "hw_" + step[1]).eq(1)
                yield
                yield getattr(rec, "hw_" + step[1]).eq(0)
            elif step[0] == "wait":
                for _ in range(step[1]):
                    yield
            elif step[0] == "end":
                for _ in range(3000):
                    if not (yield rec.busy):
                        break
                    yield
            yield
            snap = []
            for n in ("armed", "busy", "recording", "replaying", "refused", "done", "status"):
                snap.append((yield getattr(rec, n)))
            snaps.append(tuple(snap))
    @passive
    def count():
        while True:
            if (yield rec.restart):
                restarts.append(1)
            yield
    run_simulation(dut, [gen(), count()])
    return snaps, len(restarts)

def test_an_arm_allows_one_hardware_start_and_a_second_start_is_ignored():
    """rec_start arm=1 then the user's start: one run. The user's second start after that run (the
    arm used) starts nothing: the core used to start again with the old configuration while the
    BIOS had taken the queue engines back (a run that never ended)."""
    snaps, runs = _hw_control_run(steps=[
        ("wait", 5),
        ("hw", "start"), ("wait", 20),                         # 1, 2: not armed, ignored
        ("write", dict(arm=1)), ("wait", 3),                   # 4: armed
        ("hw", "start"), ("wait", 40),                         # 6: one run, recording
        ("hw", "stop"), ("end",),                              # 8: stopped
        ("hw", "start"), ("wait", 40),                         # 10: the arm was used: ignored
        ("write", dict(arm=1)), ("wait", 3),                   # 12: armed again: done cleared
    ])
    A, B, REC, REP, REF, D, S = range(7)
    assert snaps[1][A] == 0 and snaps[2][B] == 0
    assert snaps[4][A] == 1 and snaps[4][B] == 0
    assert snaps[6][:4] == (0, 1, 1, 0)
    assert snaps[8][:2] == (0, 0) and snaps[8][D] == 1 and snaps[8][S] == STATUS_STOPPED
    assert snaps[10][B] == 0 and snaps[10][S] == STATUS_STOPPED and snaps[10][D] == 1
    assert snaps[12][A] == 1 and snaps[12][D] == 0 and snaps[12][B] == 0
    assert runs == 1

def test_disarm_and_a_cpu_start_forget_the_arm():
    snaps, runs = _hw_control_run(steps=[
        ("write", dict(arm=1)), ("wait", 3),                   # 1: armed
        ("write", dict(disarm=1)), ("wait", 3),                # 3: disarmed
        ("hw", "start"), ("wait", 20),                         # 5: nothing runs
        ("write", dict(arm=1)), ("wait", 3),                   # 7: armed
        ("write", dict(start=1)), ("wait", 30),                # 9: the CPU's start runs, the arm forgotten
        ("write", dict(stop=1)), ("end",),                     # 11
        ("hw", "start"), ("wait", 20),                         # 13: nothing runs
    ])
    assert snaps[1][0] == 1 and snaps[3][0] == 0 and snaps[5][1] == 0 and snaps[7][0] == 1
    assert snaps[9][:3] == (0, 1, 1) and snaps[11][1] == 0 and snaps[13][1] == 0
    assert runs == 1

def test_a_start_on_a_port_whose_engine_serves_the_cpu_is_refused():
    """The port mask names a port whose queue engine is not the recorder's: refused at once with
    STATUS_ERR_ENGINE (refused high until the next start), no run."""
    snaps, runs = _hw_control_run(served=0, steps=[
        ("write", dict(arm=1)), ("hw", "start"), ("wait", 20), ("end",),
    ])
    armed, busy, recording, replaying, refused, done, status = snaps[-1]
    assert (armed, busy, recording, refused, done, status) == (0, 0, 0, 1, 1, STATUS_ERR_ENGINE)
    assert runs == 0
    # The same start on a served port runs (and clears refused).
    snaps, runs = _hw_control_run(served=1, steps=[
        ("write", dict(arm=1)), ("hw", "start"), ("wait", 20),
    ])
    assert snaps[-1][1:5] == (1, 1, 0, 0) and runs == 1

def test_recording_and_replaying_say_the_direction_of_the_run():
    snaps, runs = _hw_control_run(steps=[
        ("write", dict(direction=1, start=1)), ("wait", 30),
    ])
    # A replay of 0 chunks is refused (chunks=0: CONFIG); its flags never rise.
    assert snaps[-1][2:4] == (0, 0)
    snaps, runs = _hw_control_run(steps=[("write", dict(start=1)), ("wait", 30)])
    assert snaps[-1][1:4] == (1, 1, 0)
