// This file is part of LiteRecorder.
// SPDX-License-Identifier: BSD-2-Clause

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <errno.h>

#include <bios/readline.h>

#include <generated/csr.h>

#include "literec.h"

int literec_parse_u64(const char *s, unsigned long long *v)
{
	char *end;
	if (!s || !*s || *s == '-' || *s == '+')
		return -1;
	errno = 0;
	*v = strtoull(s, &end, 0);
	return (*end || errno == ERANGE) ? -1 : 0;
}

int literec_parse_ulong(const char *s, unsigned long *v)
{
	unsigned long long w;
	if (literec_parse_u64(s, &w) || w > (unsigned long long)(unsigned long)-1)
		return -1;   /* not a number, or it does not fit */
	*v = (unsigned long)w;
	return 0;
}


uint64_t literec_csr_read64(unsigned long addr)
{
	uint32_t hi, lo;
	do {
		hi = csr_read_simple(addr);
		lo = csr_read_simple(addr + 4);
	} while (hi != csr_read_simple(addr));
	return ((uint64_t)hi << 32) | lo;
}

void literec_csr_write64(unsigned long addr, uint64_t v)
{
	csr_write_simple((uint32_t)(v >> 32), addr);
	csr_write_simple((uint32_t)v, addr + 4);
}

/* LiteX's readline keeps CMD_LINE_BUFFER_SIZE - 1 characters of a line and drops the rest (a bell
 * each); the BIOS then runs what is left. get_param() split the line in place: the command at the
 * buffer's start, a NUL for the first space after it, the other spaces before the first parameter
 * kept. A line whose last parameter ends at the buffer's end may have been cut: refused. */
int literec_line_cut(const char *name, int nb_params, char **params)
{
	const char *start, *end;
	if (nb_params <= 0)
		return 0;
	end = params[nb_params - 1] + strlen(params[nb_params - 1]);
	start = params[0];
	while (start[-1] == ' ')
		start--;
	start -= strlen(name) + 1;
	if (end - start < CMD_LINE_BUFFER_SIZE - 1)
		return 0;
	printf("Error: the line filled the console's %d characters and may have been cut: %s was not run. "
		"Shorten it (rec_set key=value sets options ahead)\n", CMD_LINE_BUFFER_SIZE - 1, name);
	return 1;
}
