#
# This file is part of LiteRecorder.
#
# SPDX-License-Identifier: BSD-2-Clause

"""The frequencies a Xilinx MMCM can make, searched exactly (not the first within a margin, as
LiteX's ``compute_config``), and an MMCM that uses the best one: the user clocks of the boards
(``LiteRecorderBoardSoC.add_user_clock``).

The ranges are LiteX's model of each MMCM (``litex.soc.cores.clock``: divider and multiplier ranges,
VCO range per speed grade); the exact MMCM adds the fractional steps the primitives have: feedback
multiplier ``CLKFBOUT_MULT_F`` 2.000 to 64.000 (MMCME2; 128.000 on MMCME4) and ``CLKOUT0_DIVIDE_F``
2.000 to 128.000 in steps of 0.125 (UG472 7 Series and UG572 UltraScale clocking, "MMCM attributes";
LiteX's USPMMCM models the same steps), and the phase-detector input range 10 to 450 MHz
(``F_PFDMIN``/``F_PFDMAX`` of the -1 speed grade in DS182, DS892, DS925).
"""

import bisect

from litex.soc.cores.clock.common import clkdiv_range
from litex.soc.cores.clock import S7MMCM, USMMCM, USPMMCM

PFD_RANGE = (10e6, 450e6)

def _is_usp(pll):
    return isinstance(pll, USPMMCM)

def _mults(pll, exact=False):
    if _is_usp(pll):
        return [x/8 for x in range(16, 1025)]
    if exact:
        return [x/8 for x in range(16, 64*8 + 1)]
    return list(range(*pll.clkfbout_mult_frange))

def _dividers(pll, n, exact=False):
    if _is_usp(pll) and n == 0:
        return [x/8 for x in range(16, 1025)]
    ds = set(clkdiv_range(*pll.clkout_divide_range))
    spec = getattr(pll, f"clkout{n}_divide_range", None)
    if spec is not None:
        ds |= set(clkdiv_range(*spec))
    if exact and n == 0:
        ds |= {x/8 for x in range(16, 1025)}
    return sorted(ds)

def _nearest(vco, freq, dividers):
    """(frequency, divider) nearest to ``freq`` among vco/d."""
    i = bisect.bisect_left(dividers, vco/freq)
    best = None
    for d in dividers[max(0, i - 1):i + 1]:
        f = vco/d
        if best is None or abs(f - freq) < abs(best[0] - freq):
            best = (f, d)
    return best

def best_config(pll, outputs, exact=False, pfd=False):
    """The configuration of ``pll`` (a LiteX Xilinx MMCM, its input frequency registered) whose
    outputs ``[(freq, margin)]`` (index = output) are all within their margins and whose last output
    is nearest to its frequency: a LiteX config dict, or None. ``exact``: the fractional steps of the
    primitive; ``pfd``: the phase-detector input range checked."""
    vco_lo, vco_hi = pll.vco_freq_range
    vco_lo, vco_hi = vco_lo*(1 + pll.vco_margin), vco_hi*(1 - pll.vco_margin)
    mults = _mults(pll, exact)
    divs  = [_dividers(pll, n, exact) for n in range(len(outputs))]
    best, best_err = None, None
    for d in range(*pll.divclk_divide_range):
        if pfd and not (PFD_RANGE[0] <= pll.clkin_freq/d <= PFD_RANGE[1]):
            continue
        for m in mults:
            vco = pll.clkin_freq*m/d
            if not (vco_lo <= vco <= vco_hi):
                continue
            config = {"divclk_divide": d, "clkfbout_mult": m, "vco": vco}
            ok = True
            for n, (freq, margin) in enumerate(outputs):
                f, div = _nearest(vco, freq, divs[n])
                if abs(f - freq) > freq*margin:
                    ok = False
                    break
                config.update({f"clkout{n}_freq": f, f"clkout{n}_divide": div, f"clkout{n}_phase": 0})
            if not ok:
                continue
            err = abs(config[f"clkout{len(outputs) - 1}_freq"] - outputs[-1][0])
            if best is None or err < best_err:
                best, best_err = config, err
    return best

def achievable(pll, freq, outputs=(), exact=False, pfd=False):
    """The frequency nearest to ``freq`` that ``pll`` can add to its ``outputs`` (kept within their
    margins): (frequency, config), or (None, None)."""
    config = best_config(pll, list(outputs) + [(freq, 1.0)], exact=exact, pfd=pfd)
    if config is None:
        return None, None
    return config[f"clkout{len(outputs)}_freq"], config

def speedgrade_of(pll):
    """The speed grade LiteX's model of ``pll`` was created with (its VCO range tells)."""
    for sg in (-1, -2, -3):
        if type(pll)(speedgrade=sg).vco_freq_range == pll.vco_freq_range:
            return sg
    raise ValueError(f"{type(pll).__name__}: speed grade of VCO range {pll.vco_freq_range} unknown")

def exact_mmcm(pll):
    """A new MMCM of ``pll``'s family and speed grade whose configuration is ``best_config`` with the
    primitive's fractional steps and phase-detector range."""
    family = type(pll)
    if family not in (S7MMCM, USMMCM, USPMMCM):
        raise ValueError(f"no exact MMCM model for {family.__name__}")
    class ExactMMCM(family):
        def compute_config(self):
            outputs = [(f, m) for _, (_, f, _, m) in sorted(self.clkouts.items())]
            config = best_config(self, outputs, exact=True, pfd=True)
            if config is None:
                raise ValueError("No PLL config found")
            return config
    ExactMMCM.__name__ = f"Exact{family.__name__}"
    return ExactMMCM(speedgrade=speedgrade_of(pll))
