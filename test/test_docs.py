#
# This file is part of LiteRecorder.
#
# SPDX-License-Identifier: BSD-2-Clause

"""The documentation: the generated BIOS command reference is current and names exactly the
library's commands."""

import os
import re
import sys
import subprocess

import pytest

import board_checks as bc

pytestmark = pytest.mark.unit

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
DOC  = os.path.join(ROOT, "doc")

def read(path):
    with open(os.path.join(ROOT, path)) as f:
        return f.read()

# Command reference --------------------------------------------------------------------------------

def test_command_reference_is_current():
    # doc/commands.md is generated from the command table: a new or changed command must regenerate it.
    r = subprocess.run([sys.executable, os.path.join(ROOT, "scripts", "cmddoc.py"), "--check"],
        capture_output=True, text=True)
    assert r.returncode == 0, r.stderr

def test_command_reference_names_every_library_command():
    documented = set(re.findall(r"^\| `(\w+)` \|", read("doc/commands.md"), re.M))
    assert documented == bc.library_commands()

def test_command_reference_reads_help_over_several_literals(tmp_path):
    sys.path.insert(0, os.path.join(ROOT, "scripts"))
    try:
        import cmddoc
    finally:
        sys.path.pop(0)
    src = tmp_path / "software" / "libliterec"
    src.mkdir(parents=True)
    (src / "cmd_x.c").write_text(
        "#ifdef CSR_X_BASE\n"
        "define_literec_command(x_go, x_go_handler,\n"
        "\t\"Go: x_go <a|b> \"\n"
        "\t\"[say=\\\"hi\\\"]\");\n"
        "#else\n"
        "define_literec_command(x_stub, x_stub_handler, \"Stub\");\n"
        "#endif\n")
    go, stub = cmddoc.library_commands(str(tmp_path))
    assert (go.name, go.help, go.conditions) == ("x_go", 'Go: x_go <a|b> [say="hi"]', ["CSR_X_BASE"])
    assert (stub.name, stub.help, stub.conditions) == ("x_stub", "Stub", ["!(CSR_X_BASE)"])
    assert "| `x_go` | Go: x_go <a\\|b> [say=\"hi\"] |" in cmddoc.generate(str(tmp_path))
