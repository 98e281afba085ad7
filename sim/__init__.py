#
# This file is part of LiteRecorder.
#
# SPDX-License-Identifier: BSD-2-Clause

"""Simulated devices of the full-system simulation: C modules of the LiteX Verilator simulation
(sim/modules) and their Python side (sim/ssd.py: options, module arguments, standalone harness)."""
