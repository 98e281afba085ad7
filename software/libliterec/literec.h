// This file is part of LiteRecorder.
// SPDX-License-Identifier: BSD-2-Clause

#ifndef __LITEREC_H
#define __LITEREC_H

/* BIOS `help` group of the recorder commands (groups 0-8 are listed; 8 is unused here: no SATA). */
#define LITEREC_CMDS 8

#endif
