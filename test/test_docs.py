#
# This file is part of LiteRecorder.
#
# SPDX-License-Identifier: BSD-2-Clause

"""The documentation: the generated BIOS command reference is current and names exactly the
library's commands; the README stays one screen and shows only commands, make targets and scripts
that exist; every relative link of the README and of doc/*.md leads to a file (and heading); the
guide's index reaches every page."""

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

# README and links ---------------------------------------------------------------------------------

README_MAX_LINES = 210    # the README is a front door of about one screen; details live in doc/

def doc_files():
    return ["README.md"] + sorted(os.path.join("doc", f) for f in os.listdir(DOC) if f.endswith(".md"))

def _without_code(text):
    """The text without fenced code blocks and inline code (links there are not links)."""
    text = re.sub(r"^```.*?^```", "", text, flags=re.M | re.S)
    return re.sub(r"`[^`]*`", "", text)

def links(text):
    """Relative targets of the Markdown links and images of a text (``[t](x)``, ``![a](x)``)."""
    targets = re.findall(r"!?\[[^\]]*\]\(\s*<?([^)\s>]+)>?(?:\s+\"[^\"]*\")?\s*\)", _without_code(text))
    return [t for t in targets if not re.match(r"[a-z][a-z0-9+.-]*:", t, re.I)]

def slug(heading):
    """GitHub's anchor of a heading: lower case, punctuation dropped, spaces to hyphens."""
    s = re.sub(r"[^\w\- ]", "", heading.strip().lower())
    return s.replace(" ", "-")

def anchors(text):
    seen, out = {}, set()
    for h in re.findall(r"^#{1,6}\s+(.*?)\s*#*\s*$", re.sub(r"^```.*?^```", "", text, flags=re.M | re.S), re.M):
        a = slug(h)
        n = seen.get(a, 0)
        seen[a] = n + 1
        out.add(a if n == 0 else f"{a}-{n}")
    return out

def test_readme_is_one_screen():
    n = len(read("README.md").splitlines())
    assert n <= README_MAX_LINES, f"README.md has {n} lines (at most {README_MAX_LINES}): move details to doc/"

def broken_links(path):
    """The relative links of a Markdown file that lead nowhere (file, or heading for '#...')."""
    text = open(path).read()
    broken = []
    for target in links(text):
        file, _, anchor = target.partition("#")
        full = os.path.normpath(os.path.join(os.path.dirname(path), file)) if file else path
        if not os.path.exists(full):
            broken.append(f"{target}: no file {os.path.relpath(full, ROOT)}")
        elif anchor and full.endswith(".md") and anchor not in anchors(open(full).read()):
            broken.append(f"{target}: no heading '#{anchor}' in {os.path.relpath(full, ROOT)}")
    return broken

@pytest.mark.parametrize("path", doc_files())
def test_relative_links_resolve(path):
    assert broken_links(os.path.join(ROOT, path)) == []

def test_link_checker_sees_links_images_anchors():
    text = "[a](doc/x.md) ![c](bench/p.png) [w](https://x.org) `[n](not.md)`\n```\n[m](no.md)\n```\n"
    assert links(text) == ["doc/x.md", "bench/p.png"]
    assert anchors("# A\n## Simulation speed (`make simspeed`)\n## A\n") == \
        {"a", "simulation-speed-make-simspeed", "a-1"}

def test_link_checker_reports_broken_links(tmp_path):
    (tmp_path / "b.md").write_text("# Here\n")
    (tmp_path / "a.md").write_text("[ok](b.md#here) [self](#top) [gone](c.md) ![img](p.png) [bad](b.md#there)\n# Top\n")
    assert broken_links(str(tmp_path / "a.md")) == [
        f"c.md: no file {os.path.relpath(str(tmp_path / 'c.md'), ROOT)}",
        f"p.png: no file {os.path.relpath(str(tmp_path / 'p.png'), ROOT)}",
        f"b.md#there: no heading '#there' in {os.path.relpath(str(tmp_path / 'b.md'), ROOT)}"]

def test_index_reaches_every_doc_page():
    reached = {os.path.normpath(t.partition("#")[0]) for t in links(read("doc/index.md"))}
    pages = {f for f in os.listdir(DOC) if f.endswith(".md") and f != "index.md"}
    assert pages - reached == set()

def _code(text):
    """Fenced code block lines and inline code spans of a text."""
    blocks = re.findall(r"^```[^\n]*\n(.*?)^```", text, re.M | re.S)
    spans  = re.findall(r"`([^`\n]+(?:\n[^`\n]+)?)`", re.sub(r"^```.*?^```", "", text, flags=re.M | re.S))
    return [l for b in blocks for l in b.splitlines()], [" ".join(s.split()) for s in spans]

COMMAND = re.compile(r"(?:rec|play|nvme|pcie|sim)_[a-z][a-z_]*")

def readme_commands(text):
    """BIOS commands the README shows: the prompt lines (``litex> cmd``) and ``--run "..."`` lists of
    its code blocks, and inline code that starts with a command's name."""
    lines, spans = _code(text)
    names = set()
    for l in lines:
        m = re.match(r"\s*litex>\s*(\w+)", l)
        if m:
            names.add(m.group(1))
    for run in re.findall(r"--run \"([^\"]*)\"", "\n".join(lines + spans)):
        names |= {c.split()[0] for c in run.split(";") if c.strip()}
    for s in spans:
        m = COMMAND.match(s)
        if m and (len(s) == m.end() or not re.match(r"[\w.]", s[m.end()])):
            names.add(m.group(0))
    return names

def test_readme_shows_only_library_commands():
    shown = readme_commands(read("README.md"))
    assert {"nvme_init", "rec_record", "rec_replay", "rec_start"} <= shown
    assert shown - bc.library_commands() == set()

# The guide's pages by task name BIOS commands the same way (the architecture pages also name C
# functions with the same prefixes, so they are not checked).
TASK_PAGES = ["doc/index.md", "doc/console.md", "doc/recording.md", "doc/retrieving.md",
    "doc/performance.md", "doc/benchmarks.md", "doc/developing.md"]

@pytest.mark.parametrize("path", TASK_PAGES)
def test_task_pages_show_only_library_commands(path):
    assert readme_commands(read(path)) - bc.library_commands() == set()

def test_readme_make_targets_exist():
    makefile = read("Makefile")
    targets = set(re.findall(r"^([\w-]+)\s*:(?!=)", makefile, re.M))
    lines, spans = _code(read("README.md"))
    shown = set(re.findall(r"\bmake ([a-z][\w-]*)", "\n".join(lines + spans)))
    assert {"sim", "test"} <= shown
    assert shown - targets == set()

def test_readme_scripts_exist():
    import glob
    lines, spans = _code(read("README.md"))
    paths = set(re.findall(r"(?:\./|\b)((?:targets|scripts|test)/[\w*./-]+\.py)\b", "\n".join(lines + spans)))
    assert "targets/sim.py" in paths
    missing = [p for p in paths if not glob.glob(os.path.join(ROOT, p))]
    assert missing == []

def test_readme_checkers_catch_what_is_wrong():
    text = ("```\nlitex> rec_nothing 1\n$ ./targets/sim.py --run \"nvme_init; rec_bogus 1\"\n```\n"
        "Type `nvme_frob 3` or `make nothing`; `pcie_7x` is an IP, `rec_fill`/`rec_check` commands.\n")
    assert readme_commands(text) == {"rec_nothing", "nvme_init", "rec_bogus", "nvme_frob", "rec_fill", "rec_check"}
    lines, spans = _code(text)
    assert "make nothing" in spans
