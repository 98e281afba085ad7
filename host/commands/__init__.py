#
# This file is part of LiteRecorder.
#
# SPDX-License-Identifier: BSD-2-Clause

"""Subcommands of `literec`, one module each (see literecorder.host.cli)."""
