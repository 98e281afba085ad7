#
# This file is part of LiteRecorder.
#
# SPDX-License-Identifier: BSD-2-Clause

"""LiteRecorder: an NVMe data recorder for LiteX (PCIe root complex, NVMe host, LiteDRAM ring).

The repository root is the ``literecorder`` package: ``literecorder.cores`` (Migen cores),
``literecorder.soc`` (SoC builders), ``literecorder.targets`` (board and simulation targets).
"""

import os

__version__ = "0.1.0"

#: Repository root (also the package directory).
ROOT = os.path.dirname(os.path.abspath(__file__))
