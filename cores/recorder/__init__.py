#
# This file is part of LiteRecorder.
#
# SPDX-License-Identifier: BSD-2-Clause
