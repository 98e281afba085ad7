// This file is part of LiteRecorder.
// SPDX-License-Identifier: BSD-2-Clause

#include <stdlib.h>

#include "literec.h"

int literec_parse_ulong(const char *s, unsigned long *v)
{
	char *end;
	if (!s || !*s || *s == '-')
		return -1;
	*v = strtoul(s, &end, 0);
	return *end ? -1 : 0;
}

int literec_parse_u64(const char *s, unsigned long long *v)
{
	char *end;
	if (!s || !*s || *s == '-')
		return -1;
	*v = strtoull(s, &end, 0);
	return *end ? -1 : 0;
}
