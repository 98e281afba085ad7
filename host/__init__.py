#
# This file is part of LiteRecorder.
#
# SPDX-License-Identifier: BSD-2-Clause

"""Host side of LiteRecorder: the on-disk catalog (``catalog``), drives and sets of them
(``drives``), reading recordings back (``recording``) and the ``literec`` command-line tool
(``cli``, one module per subcommand in ``commands``)."""
