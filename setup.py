#!/usr/bin/env python3
#
# This file is part of LiteRecorder.
#
# SPDX-License-Identifier: BSD-2-Clause

from setuptools import setup

# The repository root is the `literecorder` package; its subpackages are the design card's folders.
packages = [
    "literecorder",
    "literecorder.cores",
    "literecorder.cores.pcie",
    "literecorder.cores.pcie.phy",
    "literecorder.cores.nvme",
    "literecorder.cores.recorder",
    "literecorder.cores.recorder.frontend",
    "literecorder.soc",
    "literecorder.targets",
    "literecorder.sim",
    "literecorder.host",
    "literecorder.host.commands",
]

setup(
    name             = "literecorder",
    version          = "0.1.0",
    description      = "NVMe data recorder for LiteX: PCIe root complex, NVMe queue engine, LiteDRAM ring",
    license          = "BSD-2-Clause",
    python_requires  = ">=3.9",
    packages         = packages,
    package_dir      = {"literecorder": "."},
    include_package_data = False,
    install_requires = ["migen", "litex", "litedram", "litepcie", "numpy", "sigmf"],
    # Host tool: `literec list|info|extract|verify ...` (literecorder/host/cli.py).
    entry_points     = {"console_scripts": ["literec = literecorder.host.cli:main"]},
)
