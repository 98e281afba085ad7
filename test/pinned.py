#
# This file is part of LiteRecorder.
#
# SPDX-License-Identifier: BSD-2-Clause

"""Pinned figures: the modeled cycles, rates, IOPS and latencies of the benchmark-style tests,
recorded once in test/data/pinned.json and checked against it.

The simulation's time is modeled (the SSD model and the Verilator SoC count cycles, not wall
seconds): the same build and the same command give nearly the same figures. (Not to the cycle: the
full-system figures move by up to about 0.6 % between sessions, with what ran before on the shared
simulation; the default tolerance of 2 % covers that. The unit-level models are exact: ``rel=0``.)
A test that only restates a printed rate from its own cycles, or checks ``> 0``, passes a five-fold
slowdown; ``pinned()`` does not.

    pinned("system.bench.peak.8.write_mibps", float(p["write_mibps"]))          # within 2 %
    pinned("unit.ssd_perf.spikes", len(spikes), rel=0)                            # exactly

Regenerate after an intended change of the models or the datapath with ``make pins`` (it runs the
tests that call ``pinned()`` with ``LITEREC_PINS=update``: values are recorded instead of checked,
per xdist worker, and merged into test/data/pinned.json at the end of the session by conftest.py).
Review the diff of pinned.json like any other change of behaviour."""

import os
import json

ROOT      = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
PINS_FILE = os.path.join(ROOT, "test", "data", "pinned.json")
ENV_MODE  = "LITEREC_PINS"          # "update": record the figures instead of checking them.
ENV_DIR   = "LITEREC_PINS_DIR"      # Where the workers of an update session write what they saw.

_reference = None
_recorded  = {}

def updating():
    """True in a ``make pins`` session (``LITEREC_PINS=update``)."""
    return os.environ.get(ENV_MODE, "") == "update"

def reference():
    """The recorded figures, ``{key: value}`` (empty when the file does not exist yet)."""
    global _reference
    if _reference is None:
        _reference = {}
        if os.path.exists(PINS_FILE):
            with open(PINS_FILE) as f:
                _reference = json.load(f)
    return _reference

def _record(key, value):
    if key in _recorded and _recorded[key] != value:
        raise AssertionError(f"pinned figure {key!r} seen twice with different values in one session: "
            f"{_recorded[key]!r} and {value!r} (is it deterministic? is the key unique?)")
    _recorded[key] = value
    d = os.environ.get(ENV_DIR) or os.path.join(ROOT, "build", "pins")
    os.makedirs(d, exist_ok=True)
    worker = os.environ.get("PYTEST_XDIST_WORKER", "main")
    path = os.path.join(d, f"{worker}.json")
    with open(path + ".tmp", "w") as f:
        json.dump(_recorded, f, indent=1, sort_keys=True)
    os.replace(path + ".tmp", path)

def pinned(key, value, rel=0.02, tol=0):
    """Asserts that ``value`` is within ``rel`` (relative) + ``tol`` (absolute) of the figure recorded
    under ``key``;
    records it instead in a ``make pins`` session. ``rel=0``: exactly the recorded value."""
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        raise TypeError(f"pinned({key!r}): a number, not {type(value).__name__}")
    if updating():
        _record(key, value)
        return value
    ref = reference()
    assert key in ref, f"no pinned figure {key!r} in {os.path.relpath(PINS_FILE, ROOT)}: run `make pins`"
    want = ref[key]
    margin = rel*abs(want) + tol
    assert want - margin <= value <= want + margin, \
        (f"{key} = {value}, pinned {want} (tolerance {rel:.1%}" + (f" + {tol}" if tol else "") +
         f"): a change of the modeled figure; if it is intended, run `make pins` and review the diff")
    return value

def merge(directory, path=PINS_FILE):
    """Merges the per-worker files of an update session into ``path`` (keys not seen are kept:
    a ``make pins`` of some files updates their figures only). Returns the number of keys written."""
    new = {}
    if os.path.isdir(directory):
        for name in sorted(os.listdir(directory)):
            if name.endswith(".json"):
                with open(os.path.join(directory, name)) as f:
                    for k, v in json.load(f).items():
                        if k in new and new[k] != v:
                            raise RuntimeError(f"pinned figure {k!r}: {new[k]!r} and {v!r} in one session")
                        new[k] = v
    if not new:
        return 0
    old = {}
    if os.path.exists(path):
        with open(path) as f:
            old = json.load(f)
    old.update(new)
    with open(path + ".tmp", "w") as f:
        json.dump(old, f, indent=1, sort_keys=True)
        f.write("\n")
    os.replace(path + ".tmp", path)
    return len(new)
