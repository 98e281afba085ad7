#
# This file is part of LiteRecorder.
#
# SPDX-License-Identifier: BSD-2-Clause

"""Simulated user streams of the simulation SoC: an ADC that records, a DAC that replays.

::

    simio pads (run-time options of targets/sim.py, sim module `simio`)
        |
    SimADC (clock domain "adc") --AXI4-Stream--> recorder's user record port
    SimDAC (clock domain "adc") <--AXI4-Stream-- recorder's user replay port

The ADC is a source that cannot wait: a sample (beat) is due at the configured rate; if the
recorder does not take it in that cycle it is lost, and the ADC counts it itself (independently of
the recorder's accounting). Its samples are the test pattern stream (beat ``i`` carries pattern
words ``i*n .. i*n+n-1``), so every kept byte can be checked where it landed. It runs while the
recorder records (the control port's ``recording``) and ends with ``last`` after ``bytes`` (0: never).
The DAC takes every beat (or back-pressures pseudo-randomly) and checks it against the pattern.
Counters cross to the CSRs through ``BusSynchronizer``.
"""

from migen import *
from migen.genlib.cdc import MultiReg, BusSynchronizer, PulseSynchronizer

from litex.gen import *

from litex.soc.interconnect.csr import *
from litex.soc.interconnect.axi import AXIStreamInterface

from literecorder.cores.recorder.frontend.pattern import pattern_beat, RateTicker

# ADC ----------------------------------------------------------------------------------------------

class SimADC(LiteXModule):
    def __init__(self, data_width):
        if data_width < 32 or data_width % 32:
            raise ValueError(f"SimADC: data width {data_width}: a multiple of 32 bits")
        self.source  = AXIStreamInterface(data_width)
        self.enable  = Signal()
        self.rate    = Signal(16)        # Beats per cycle x 65536 (0: every cycle).
        self.beats   = Signal(64)        # Beats to produce (0: until stopped).
        self.seed    = Signal(32)
        self.run     = Signal()          # Level: the recorder runs.
        self.produced = Signal(64)       # Beats produced (taken + lost).
        self.lost    = Signal(64)        # Beats not taken when produced.

        # # #

        self.ticker = ticker = RateTicker()
        self.comb += ticker.rate.eq(self.rate)
        active = Signal()
        run_q  = Signal()
        final  = Signal()
        data, stmts = pattern_beat(self.seed, self.produced, data_width)
        self.comb += stmts + [
            final.eq((self.beats != 0) & (self.produced + 1 == self.beats)),
            self.source.valid.eq(active & ticker.tick),
            self.source.data.eq(data),
            self.source.keep.eq(2**(data_width//8) - 1),
            self.source.last.eq(final),
        ]
        self.sync += [
            run_q.eq(self.run),
            If(self.run & ~run_q & self.enable,
                active.eq(1), self.produced.eq(0), self.lost.eq(0),
            ).Elif(~self.run,
                active.eq(0),
            ).Elif(self.source.valid,
                self.produced.eq(self.produced + 1),
                If(~self.source.ready, self.lost.eq(self.lost + 1)),
                If(final, active.eq(0)),
            )
        ]

# DAC ----------------------------------------------------------------------------------------------

class SimDAC(LiteXModule):
    def __init__(self, data_width):
        self.sink    = AXIStreamInterface(data_width)
        self.seed    = Signal(32)
        self.clear   = Signal()
        self.backpressure = Signal()     # Pseudo-random ready (else always ready).
        self.beats   = Signal(64)
        self.bytes   = Signal(64)
        self.errors  = Signal(64)        # Beats with a byte that differs (within keep).
        self.lasts   = Signal(32)

        # # #

        nbytes = data_width//8
        exp, stmts = pattern_beat(self.seed, self.beats, data_width)
        self.comb += stmts
        lfsr = Signal(16, reset=0xace1)
        self.sync += lfsr.eq(Cat(lfsr[1:], lfsr[0] ^ lfsr[2] ^ lfsr[3] ^ lfsr[5]))
        self.comb += self.sink.ready.eq(~self.backpressure | lfsr[0] | lfsr[1])
        keep_bytes = Signal(max=nbytes + 1)
        for i in range(nbytes):
            self.comb += If(self.sink.keep[i], keep_bytes.eq(i + 1))
        mask = Signal(data_width)
        self.comb += mask.eq(Cat(*[Replicate(self.sink.keep[i], 8) for i in range(nbytes)]))
        self.sync += If(self.clear,
            self.beats.eq(0), self.bytes.eq(0), self.errors.eq(0), self.lasts.eq(0),
        ).Elif(self.sink.valid & self.sink.ready,
            self.beats.eq(self.beats + 1),
            self.bytes.eq(self.bytes + keep_bytes),
            If(((self.sink.data ^ exp) & mask) != 0, self.errors.eq(self.errors + 1)),
            If(self.sink.last, self.lasts.eq(self.lasts + 1)),
        )

# Fixture with CSRs --------------------------------------------------------------------------------

class SimStreamFixture(LiteXModule):
    """ADC + DAC in clock domain ``cd`` configured by the ``simio`` pads, counters as CSRs."""
    def __init__(self, pads, data_width, cd="adc"):
        self.data_width = data_width
        self.adc = adc = ClockDomainsRenamer(cd)(SimADC(data_width))
        self.dac = dac = ClockDomainsRenamer(cd)(SimDAC(data_width))
        self.run = Signal()               # In cd (the recorder's recording, from its control port).

        # Static configuration from the simulation's command line (pads set at time 0).
        self.comb += [
            adc.enable.eq(pads.adc_enable),
            adc.rate.eq(pads.adc_rate),
            adc.beats.eq(pads.adc_beats),
            adc.seed.eq(pads.adc_seed),
            adc.run.eq(self.run),
            dac.seed.eq(pads.adc_seed),
            dac.backpressure.eq(pads.dac_backpressure),
        ]
        self._ctrl = CSRStorage(fields=[
            CSRField("dac_clear", size=1, pulse=True, description="Clear the DAC's counters."),
        ])
        self.clear_ps = ClockDomainsRenamer({"from": "sys", "to": cd})(PulseSynchronizer("from", "to"))
        self.comb += [self.clear_ps.i.eq(self._ctrl.fields.dac_clear), dac.clear.eq(self.clear_ps.o)]
        def status(name, sig, desc):
            csr = CSRStatus(len(sig), name=name, description=desc)
            setattr(self, "_" + name, csr)
            bs = BusSynchronizer(len(sig), cd, "sys")
            setattr(self, name + "_sync", bs)
            self.comb += [bs.i.eq(sig), csr.status.eq(bs.o)]
        status("adc_produced", adc.produced, "ADC: beats produced (taken + lost).")
        status("adc_lost",     adc.lost,     "ADC: beats lost (not taken when produced).")
        status("dac_beats",    dac.beats,    "DAC: beats received.")
        status("dac_bytes",    dac.bytes,    "DAC: bytes received (keep).")
        status("dac_errors",   dac.errors,   "DAC: beats that differ from the pattern.")
        status("dac_lasts",    dac.lasts,    "DAC: beats with last.")
        self._config = CSRStatus(fields=[
            CSRField("adc_enable", size=1, offset=0),
            CSRField("dac_backpressure", size=1, offset=1),
            CSRField("adc_rate", size=16, offset=16),
        ])
        self._adc_seed  = CSRStatus(32, description="ADC pattern seed.")
        self._adc_beats = CSRStatus(64, description="ADC beats per run (0: until the recorder stops).")
        self.specials += [
            MultiReg(pads.adc_enable, self._config.fields.adc_enable),
            MultiReg(pads.dac_backpressure, self._config.fields.dac_backpressure),
            MultiReg(pads.adc_rate, self._config.fields.adc_rate),
            MultiReg(pads.adc_seed, self._adc_seed.status),
            MultiReg(pads.adc_beats, self._adc_beats.status),
        ]
