#
# This file is part of LiteRecorder.
#
# SPDX-License-Identifier: BSD-2-Clause

"""Imported first by the board target scripts: makes the checkout importable as ``literecorder``
(also when the package is not installed)."""

import os
import sys
import importlib.util

def bootstrap():
    root = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
    try:
        import literecorder
        if os.path.realpath(literecorder.ROOT) == os.path.realpath(root):
            return
    except ImportError:
        pass
    spec = importlib.util.spec_from_file_location("literecorder", os.path.join(root, "__init__.py"),
        submodule_search_locations=[root])
    module = importlib.util.module_from_spec(spec)
    sys.modules["literecorder"] = module
    spec.loader.exec_module(module)

bootstrap()
