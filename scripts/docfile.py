#
# This file is part of LiteRecorder.
#
# SPDX-License-Identifier: BSD-2-Clause

"""The write-or-check step of the generated documents (scripts/regdoc.py, scripts/cmddoc.py)."""

import os
import sys

def write_or_check(path, text, script, check):
    """Writes ``text`` to ``path``, or with ``check`` only compares them: exit status 1 (and what to
    run, ``script``) when the file is stale."""
    if check:
        current = open(path).read() if os.path.exists(path) else ""
        if current != text:
            print(f"{path} is stale: run {script}", file=sys.stderr)
            return 1
        return 0
    with open(path, "w") as f:
        f.write(text)
    print(f"wrote {path}")
    return 0
