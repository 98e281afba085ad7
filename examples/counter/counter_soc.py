#
# This file is part of LiteRecorder.
#
# SPDX-License-Identifier: BSD-2-Clause

"""A user's design around LiteRecorder: a 64-bit counter recorded from the user's own clock domain,
started by the user's logic, replayed into the user's checker.

::

    user clock domain ("user")                              sys (the recorder SoC)
    +------------------------------------+
    | CounterLogic                       |   AXI4-Stream   +----------------------+
    |   source: 0, 1, 2, ... (64-bit)    |---------------->| recorder (user port) |--> SSDs
    |   checker: replayed word == index  |<----------------|                      |<-- SSDs
    |   starter: armed -> start,         |   control port  |                      |
    |            `words` words -> last   |<--------------->| recorder_ctl         |
    +------------------------------------+                 +----------------------+
      CSRs (sys): counter_words, counter_auto, counter_kick, counter_produced, counter_checked,
      counter_errors

The BIOS arms the recorder (``rec_start auto until-stop input=user arm=1``); the user's logic sees
``armed`` and starts it (the hardware start), streams ``words`` words while ``recording`` and ends
the recording with ``last`` on the final word (an exact length). A replay
(``play_start id=<n> output=user``) feeds the checker while ``replaying``.

The same logic goes into the simulation (``CounterSimSoC``: ``targets/sim.py --soc
examples/counter/counter_soc.py:CounterSimSoC``) and a board (``CounterKCU105``:
``examples/counter/counter_soc.py kcu105``). See doc/integration.md.
"""

import os
import sys

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "targets"))
import _bootstrap # noqa: F401 -- the checkout as `literecorder` (a user has it installed instead).

from migen import *
from migen.genlib.cdc import MultiReg, BusSynchronizer, PulseSynchronizer

from litex.gen import *

from litex.soc.interconnect.csr import CSR, CSRStorage, CSRStatus
from litex.soc.interconnect.axi import AXIStreamInterface

# The user's logic ---------------------------------------------------------------------------------

class CounterLogic(LiteXModule):
    """Counter source, replay checker and the hardware start, in clock domain ``cd``."""
    def __init__(self, cd="user", width=64):
        self.source = AXIStreamInterface(width, keep_width=0)     # -> recorder (record)
        self.sink   = AXIStreamInterface(width, keep_width=0)     # <- recorder (replay)
        # Control port of the recorder (set by connect()).
        self.start, self.stop = Signal(), Signal()
        self.armed, self.recording, self.replaying = Signal(), Signal(), Signal()

        self._words    = CSRStorage(32, reset=4096, description="Counter words per recording.")
        self._auto     = CSRStorage(1, reset=1, description="Start the recorder when it is armed.")
        self._kick     = CSR()      # Write: a hardware start now, armed or not (the recorder's refusals).
        self._produced = CSRStatus(32, description="Words the source produced in the last recording.")
        self._checked  = CSRStatus(32, description="Words the checker received in the last replay.")
        self._errors   = CSRStatus(32, description="Of them, words that were not their index.")

        # # #

        sync = getattr(self.sync, cd)
        words = Signal(32)
        self.specials += MultiReg(self._words.storage, words, odomain=cd)   # (static while running)

        # The hardware start: the armed rising edge starts the recorder 16 cycles later (unless
        # `auto` is 0), or a kick at once.
        kick = PulseSynchronizer("sys", cd)
        self.submodules += kick
        self.comb += kick.i.eq(self._kick.re)
        armed_q = Signal()
        delay   = Signal(5)
        auto    = Signal()
        self.specials += MultiReg(self._auto.storage, auto, odomain=cd)
        sync += [
            armed_q.eq(self.armed),
            self.start.eq(kick.o),
            If(self.armed & ~armed_q & auto,
                delay.eq(16)
            ).Elif(delay != 0,
                delay.eq(delay - 1),
                self.start.eq(delay == 1),
            ),
        ]

        # Source: 0, 1, 2, ... while recording, `words` words, `last` on the final one.
        produced = Signal(32)
        rec_q    = Signal()
        sync += rec_q.eq(self.recording)
        self.comb += [
            # (From the recording's second cycle: its first one restarts the count.)
            self.source.valid.eq(self.recording & rec_q & (produced != words)),
            self.source.data.eq(produced),
            self.source.last.eq(produced == words - 1),
        ]
        sync += If(self.recording & ~rec_q,
            produced.eq(0)
        ).Elif(self.source.valid & self.source.ready,
            produced.eq(produced + 1)
        )

        # Checker: every replayed word equals its index.
        checked = Signal(32)
        errors  = Signal(32)
        play_q  = Signal()
        sync += play_q.eq(self.replaying)
        self.comb += self.sink.ready.eq(1)
        sync += If(self.replaying & ~play_q,
            checked.eq(self.sink.valid), errors.eq(self.sink.valid & (self.sink.data != 0))
        ).Elif(self.sink.valid,
            checked.eq(checked + 1),
            If(self.sink.data != checked, errors.eq(errors + 1)),
        )

        # Counters to the CSRs (sys).
        for sig, csr in [(produced, self._produced), (checked, self._checked), (errors, self._errors)]:
            bs = BusSynchronizer(32, cd, "sys")
            self.submodules += bs
            self.comb += [bs.i.eq(sig), csr.status.eq(bs.o)]

    def connect(self, ctl):
        """Wires the recorder's control port (same clock domain)."""
        return [
            ctl.start.eq(self.start), ctl.stop.eq(self.stop),
            self.armed.eq(ctl.armed), self.recording.eq(ctl.recording),
            self.replaying.eq(ctl.replaying),
        ]

def add_counter(soc, cd="user"):
    """The user's logic and its recorder stream: call before the recorder SoC's constructor."""
    soc.counter = CounterLogic(cd)
    ctl = soc.add_recorder_stream(
        record = soc.counter.source, record_cd = cd,
        replay = soc.counter.sink,   replay_cd = cd)
    soc.comb += soc.counter.connect(ctl)

# In the simulation --------------------------------------------------------------------------------

USER_CLK_FREQ = int(50e6)

from literecorder.soc.sim_soc import LiteRecorderSimSoC

class CounterSimSoC(LiteRecorderSimSoC):
    def __init__(self, **kwargs):
        add_counter(self, "user")
        LiteRecorderSimSoC.__init__(self, **kwargs)
        self.add_sim_clock("user", USER_CLK_FREQ)       # (a board's PLL output)

# On a board ---------------------------------------------------------------------------------------

from literecorder.targets import xilinx_kcu105

class CounterKCU105(xilinx_kcu105.BaseSoC):
    def __init__(self, **kwargs):
        add_counter(self, "user")
        xilinx_kcu105.BaseSoC.__init__(self, **kwargs)
        self.add_user_clock("user", USER_CLK_FREQ)      # The board's MMCM (or one of its own) makes it.

if __name__ == "__main__":
    # ./examples/counter/counter_soc.py kcu105 [target options]: the board's design with the counter.
    if len(sys.argv) < 2 or sys.argv[1] != "kcu105":
        sys.exit("usage: counter_soc.py kcu105 [--build] [target options] "
            "(the simulation: targets/sim.py --soc examples/counter/counter_soc.py:CounterSimSoC)")
    sys.exit(xilinx_kcu105.main(sys.argv[2:], soc_cls=CounterKCU105))
