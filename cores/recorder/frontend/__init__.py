#
# This file is part of LiteRecorder.
#
# SPDX-License-Identifier: BSD-2-Clause

"""Frontends of the recorder: what users attach to the recorder: stream ports (user record/replay
streams, AXI4-Stream), and the test streams."""
