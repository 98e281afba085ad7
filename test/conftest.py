#
# This file is part of LiteRecorder.
#
# SPDX-License-Identifier: BSD-2-Clause

"""pytest harness for system tests: builds each simulation configuration once per test session
(shared between xdist workers with a file lock), starts simulations with pipes, types BIOS commands
and always kills the simulation at the end of the test."""

import os
import re
import sys
import json
import fcntl
import hashlib
import importlib.util
import subprocess

import pytest

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))

# Importing the target script makes the checkout importable as `literecorder` (installed or not).
_spec = importlib.util.spec_from_file_location("_literec_sim_target", os.path.join(ROOT, "targets", "sim.py"))
_sim_target = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(_sim_target)

from literecorder.targets.sim import SimBuild, SimError, parse_results, ssd_devices, simio_args
from literecorder.targets.sim import SimSession as _SimSession

# SSD options of the system tests unless a test gives its own (the fastest profile).
DEFAULT_SSD = ["--ssd-profile", "ideal", "--ns-size", "1GiB"]

# Pinned figures (test/pinned.py) -----------------------------------------------------------------

def pytest_configure(config):
    """In a ``make pins`` session, the controller gives its xdist workers (which inherit its
    environment) a fresh directory for the figures they record."""
    import pinned
    if pinned.updating() and not hasattr(config, "workerinput"):
        import tempfile
        os.environ[pinned.ENV_DIR] = tempfile.mkdtemp(prefix="literec-pins-")

def pytest_sessionfinish(session, exitstatus):
    """At the end of a ``make pins`` session, the controller merges the workers' figures into
    test/data/pinned.json (only when every test passed: a failed test's figures are not recorded)."""
    import shutil
    import pinned
    if pinned.updating() and not hasattr(session.config, "workerinput"):
        d = os.environ[pinned.ENV_DIR]
        if exitstatus == 0:
            n = pinned.merge(d)
            print(f"\n[pins] {n} figures recorded in {os.path.relpath(pinned.PINS_FILE, ROOT)}")
        else:
            print(f"\n[pins] not recorded: the session failed (exit status {exitstatus})")
        shutil.rmtree(d, ignore_errors=True)

# Builds -------------------------------------------------------------------------------------------

_builds = {}

def build_params(**params):
    """The parameters of a build, completed: profile-guided optimization (``pgo``) by default only
    for the default build, which carries the suite's long recordings; the other builds serve short
    tests, for which PGO's extra build time (an instrumented model and its training run, about 55 s)
    is more than the 1.2x it saves."""
    params.setdefault("pgo", not params)
    return params

def build_dir(**params):
    """The build directory of these parameters: the one targets/sim.py and ``literec bench --sim``
    use for the same configuration."""
    return SimBuild(**build_params(**params)).output_dir

def get_build(**params):
    """The simulation build for these parameters, built at most once per test session (SimBuild
    locks its directory: xdist workers wait for the one that builds)."""
    params = build_params(**params)
    key = json.dumps(params, sort_keys=True)
    if key not in _builds:
        _builds[key] = SimBuild(**params).build()
    return _builds[key]

# Sessions -----------------------------------------------------------------------------------------

class SimSession(_SimSession):
    """A test's session: always in a fresh run directory (no namespace file of an earlier run)."""
    def __init__(self, *args, **kwargs):
        kwargs.setdefault("fresh", True)
        super().__init__(*args, **kwargs)


def _run_name(request):
    worker = os.environ.get("PYTEST_XDIST_WORKER", "main")
    full = request.node.nodeid
    name = re.sub(r"[^A-Za-z0-9_.-]+", "_", request.node.name)[:40]
    return f"{worker}-{name}-{hashlib.sha1(full.encode()).hexdigest()[:8]}"

@pytest.fixture
def start_sim(request):
    """Factory: ``start_sim(ssd=[options], **build_params)`` -> a booted ``SimSession``.

    ``ssd``: command-line options of the simulated SSDs (as for targets/sim.py), or ``devices``:
    an explicit device list/factory; ``simio``: options of the simulated ADC/DAC (simio_args)."""
    sessions = []
    def start(ssd=None, devices=None, name=None, boot_timeout=180, simio=None, **params):
        build = get_build(**params)
        if devices is None:
            devices = ssd_devices(list(DEFAULT_SSD if ssd is None else ssd), build.n_ssds,
                build.sys_clk_freq, build.pcie_data_width)
        s = SimSession(build, name=name or _run_name(request) + f"-{len(sessions)}",
            devices=devices, boot_timeout=boot_timeout, simio=simio)
        sessions.append(s)
        return s
    yield start
    for s in sessions:
        s.close()

@pytest.fixture(scope="module")
def module_sim(request):
    """One booted simulation (default configuration) shared by the tests of a module."""
    build = get_build()
    s = SimSession(build, name=_run_name(request) + "-module",
        devices=ssd_devices(list(DEFAULT_SSD), build.n_ssds, build.sys_clk_freq))
    yield s
    s.close()

# Helpers of the system tests ----------------------------------------------------------------------

# This checkout's literec: the venv's `literec` script runs the checkout the venv was installed from,
# which may be another worktree of the project.
_LAUNCH = ("import sys, importlib.util as u; r = sys.argv.pop(1); "
    "s = u.spec_from_file_location('literecorder', r + '/__init__.py', submodule_search_locations=[r]); "
    "m = u.module_from_spec(s); sys.modules['literecorder'] = m; s.loader.exec_module(m); "
    "from literecorder.host.cli import main; sys.exit(main())")
LITEREC = [sys.executable, "-c", _LAUNCH, ROOT]

def literec(*args, rc=0):
    """Runs this checkout's ``literec`` with ``args``; asserts its exit status ``rc`` (None: any)."""
    r = subprocess.run([*LITEREC, *map(str, args)], capture_output=True, text=True, timeout=300)
    if rc is not None:
        assert r.returncode == rc, f"rc={r.returncode}\n{r.stdout}\n{r.stderr}"
    return r

def result(out, name):
    """The one ``RESULT name=<name>`` line of a command's output, as a dict (fails otherwise)."""
    r = [d for d in parse_results(out) if d.get("name") == name]
    assert len(r) == 1, out
    return r[0]

def ssd_ctl(sim, command, index=0):
    """Sends a control command to simulated SSD ``index`` (fault injection, stats); must succeed."""
    from literecorder.sim.ssd import send_control
    reply = send_control(sim.devices[index][1]["ctl_path"], command)
    assert reply.startswith("ok"), reply
    return reply
