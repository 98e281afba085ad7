// This file is part of LiteRecorder.
// SPDX-License-Identifier: BSD-2-Clause

#include <stdlib.h>
#include <errno.h>

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

