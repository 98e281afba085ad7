#
# This file is part of LiteRecorder.
#
# SPDX-License-Identifier: BSD-2-Clause

"""Simulated SSD: command-line options, module arguments and start-up validation (Python side and
the C model's own checks of its JSON arguments)."""

import json
import argparse

import pytest

from literecorder.sim import ssd as ssdmod
from literecorder.sim.ssd import (add_ssd_arguments, ssd_module_args, SimSSD, SSDError, PROFILES,
    PARAMS, parse_link, parse_size, validate_fault)

pytestmark = pytest.mark.unit

def parse(*argv):
    p = argparse.ArgumentParser()
    p.add_argument("--ssds", type=int, default=1)
    add_ssd_arguments(p)
    return p.parse_args(list(argv))

def test_defaults_give_gen3x4_mps256_one_ssd(tmp_path):
    a = parse()
    d = ssd_module_args(a, 0, str(tmp_path), 200e6, 256)
    assert d["link"] == "gen3x4" and d["mps"] == 256 and d["profile"] == "tlc-slc"
    assert d["ns_size"] == 1000204886016 and d["lba_size"] == 512
    assert d["sys_clk_hz"] == 200_000_000 and d["data_width"] == 256 and d["index"] == 0
    assert d["ns_file"] == str(tmp_path / "ssd0.img")
    assert d["ctl_path"] == str(tmp_path / "ssd0.ctl")
    assert d["faults"] == [] and d["opts"] == {}
    json.dumps(d)   # must serialize for sim_config.js

def test_all_options_reach_the_module_args(tmp_path):
    a = parse("--ssd-profile", "budget", "--link", "gen4x8", "--mps", "512", "--ns-size", "64MiB",
        "--lba-size", "4096", "--fault", "read-error:lba=8-15", "--fault", "drop-cqe:op=write",
        "--ssd-opt", "cache_size=8MiB", "--ssd-opt", "tmt1=70 tmt2=75", "--ssd-log", str(tmp_path / "logs"),
        "--ssds", "2", "--ns-file", str(tmp_path / "d{i}.img"))
    d = ssd_module_args(a, 1, str(tmp_path), 100e6, 128)
    assert (d["profile"], d["link"], d["mps"], d["ns_size"], d["lba_size"]) == ("budget", "gen4x8", 512, 64 << 20, 4096)
    assert d["faults"] == ["read-error:lba=8-15", "drop-cqe:op=write"]
    assert d["opts"] == {"cache_size": "8MiB", "tmt1": "70", "tmt2": "75"}
    assert d["ns_file"] == str(tmp_path / "d1.img")
    assert d["cmd_log"].endswith("logs/ssd1_cmds.csv") and d["sample_log"].endswith("logs/ssd1_samples.csv")
    assert d["sys_clk_hz"] == 100_000_000 and d["data_width"] == 128

@pytest.mark.parametrize("argv, needle", [
    (["--ssd-profile", "fast"], "unknown profile"),
    (["--ns-size", "0"], "must be positive"),
    (["--ns-size", "-5"], "not a number"),
    (["--ns-size", "1000"], "not a multiple of the LBA size 512"),
    (["--ns-size", "12XB"], "not a number"),
    (["--link", "gen5x4"], "genGxL"),
    (["--link", "gen3x3"], "genGxL"),
    (["--link", "pcie3"], "genGxL"),
    (["--mps", "384"], "allowed 128, 256"),
    (["--mps", "8192"], "allowed 128, 256"),
    (["--lba-size", "1024"], "allowed 512 or 4096"),
    (["--fault", "explode"], "unknown kind 'explode'"),
    (["--fault", "read-error:lba"], "not key=value"),
    (["--fault", "read-error:color=red"], "unknown option 'color'"),
    (["--fault", "read-error:lba=9-3"], "ends before it starts"),
    (["--fault", "drop-cqe:count=0"], "count must be at least 1"),
    (["--fault", "status:sct=9"], "out of range"),
    (["--fault", "malformed:kind=huge"], "kind must be len, mps or 4k"),
    (["--ssd-opt", "warp=9"], "unknown parameter 'warp'"),
    (["--ssd-opt", "cache_size"], "expected KEY=VALUE"),
])
def test_bad_options_fail_with_a_clear_message(tmp_path, argv, needle):
    with pytest.raises(ValueError) as e:
        ssd_module_args(parse(*argv), 0, str(tmp_path))
    assert needle in str(e.value)

def test_unknown_profile_message_lists_the_allowed_ones(tmp_path):
    with pytest.raises(ValueError) as e:
        ssd_module_args(parse("--ssd-profile", "nope"), 0, str(tmp_path))
    for p in PROFILES:
        assert p in str(e.value)

def test_parsers():
    assert parse_link("gen2x8") == (2, 8)
    assert parse_size("1TB") == 10**12 and parse_size("8MiB") == 8 << 20 and parse_size("0x1000") == 4096
    assert validate_fault("bitflip:lba=0-7,bit=5") == "bitflip:lba=0-7,bit=5"

@pytest.mark.parametrize("args, needle", [
    (dict(profile="warp"), "unknown SSD profile 'warp' (allowed: ideal, tlc-slc"),
    (dict(ns_size=0), "must be positive"),
    (dict(ns_size=1000), "not a multiple of the LBA size 512"),
    (dict(lba_size=2048), "allowed 512 or 4096"),
    (dict(link="gen3x16"), "expected genGxL"),
    (dict(mps=300), "allowed 128, 256"),
    (dict(data_width=96), "data_width=96: allowed 64, 128, 256, 512"),
    (dict(faults=["explode"]), "unknown kind 'explode'"),
    (dict(faults=["read-error:lba=x"]), "bad value 'x' for 'lba'"),
    (dict(opts={"warp": 1}), "unknown SSD parameter 'warp'"),
    (dict(opts={"tmt1": "hot"}), "is not a number"),
    (dict(opts={"mqes": 0}), "out of range: allowed 1..65535"),
    (dict(opts={"max_queues": 40, "dstrd": 4}), "doorbells do not fit"),
    (dict(opts={"rdy_us": 2e6, "cap_to": 2}), "exceeds CAP.TO"),
])
def test_c_model_rejects_bad_args_at_start(tmp_path, args, needle):
    kw = dict(ns_file=str(tmp_path / "ns.img"))
    for k in ("profile", "ns_size", "lba_size", "link", "mps", "data_width", "faults", "opts"):
        if k in args:
            kw[k] = args[k]
    with pytest.raises(SSDError) as e:
        SimSSD(**kw)
    assert needle in str(e.value)

def test_c_model_rejects_a_namespace_file_of_another_size(tmp_path):
    f = tmp_path / "ns.img"
    SimSSD(ns_size=1 << 20, ns_file=str(f)).close()
    with pytest.raises(SSDError) as e:
        SimSSD(ns_size=2 << 20, ns_file=str(f))
    assert "holds 1048576 bytes but the namespace size is 2097152" in str(e.value)

def test_python_and_c_parameter_tables_agree(tmp_path):
    with SimSSD(ns_file=str(tmp_path / "ns.img")) as d:
        for name in PARAMS:
            rc, out = d.control(f"get {name}")
            assert rc == 0 and out.startswith(f"ok {name}="), out
        rc, out = d.control("get no_such_param")
        assert rc == -1 and "unknown parameter" in out

def test_profile_defaults_are_the_reference_figures(tmp_path):
    def get(d, k):
        return float(d.control(f"get {k}")[1].split("=")[1])
    expect = {
        "tlc-slc": dict(cache_rate=2.75e9, write_rate=1.6e9, cache_size=42e9, mdts=9),
        "mlc": dict(write_rate=2.2e9, cache_size=0),
        "enterprise-tlc": dict(write_rate=1.7e9, dip_rate=1.3e9),
        "optane": dict(write_rate=2.2e9, dip_rate=0),
        "budget": dict(gc_mode=1, cmd_cost_us=15.5),
        "seed-ssd1": dict(cache_size=8 << 20, cache_rate=2.5 * 2**30, cache2_size=2 << 30),
        "ideal": dict(write_rate=0, read_rate=0, cache_size=0),
    }
    for prof, kv in expect.items():
        with SimSSD(profile=prof, ns_file=str(tmp_path / f"{prof}.img")) as d:
            for k, v in kv.items():
                assert get(d, k) == pytest.approx(v), (prof, k)
