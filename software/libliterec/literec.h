// This file is part of LiteRecorder.
// SPDX-License-Identifier: BSD-2-Clause

#ifndef __LITEREC_H
#define __LITEREC_H

/* BIOS `help` group of the recorder commands (groups 0-8 are listed; 8 is unused here: no SATA). */
#define LITEREC_CMDS 8

/* Parse a number (decimal, 0x hex, 0 octal): 0 on success, -1 if the whole string is not a number. */
int literec_parse_ulong(const char *s, unsigned long *v);
int literec_parse_u64(const char *s, unsigned long long *v);

/* 64-bit CSRs (two 32-bit words, the most significant one first): read consistently (the high word
 * again until it did not change), written high word first. */
#include <stdint.h>
uint64_t literec_csr_read64(unsigned long addr);
void literec_csr_write64(unsigned long addr, uint64_t v);

/* A command of the library: define_command() whose handler runs only when the console line was not
 * cut (LiteX's readline drops what does not fit its buffer and the BIOS runs the rest: a shortened
 * rec_delete or rec_format must never run). */
int literec_line_cut(const char *name, int nb_params, char **params);
#define define_literec_command(cmd_name, handler, help_txt)                         \
	static void cmd_name##_checked(int nb_params, char **params)                 \
	{                                                                             \
		if (!literec_line_cut(#cmd_name, nb_params, params))                 \
			handler(nb_params, params);                                       \
	}                                                                             \
	define_command(cmd_name, cmd_name##_checked, help_txt, LITEREC_CMDS)

#endif
