// This file is part of LiteRecorder.
// SPDX-License-Identifier: BSD-2-Clause

#include <stdlib.h>
#include <errno.h>

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
