/*
 * Input helpers of the AIS endpoints: dates and resource ids (the body
 * and the PSU's IP address: src/api/request.c). Values are checked here
 * precisely; the Kore validators only bound sizes.
 */
#include <ctype.h>
#include <string.h>

#include "ais/ais.h"

static int
ais_digits(const char *s, size_t n)
{
	size_t	i;

	for (i = 0; i < n; i++) {
		if (!isdigit((unsigned char)s[i]))
			return (0);
	}
	return (1);
}

int
ais_date_valid(const char *s)
{
	static const int	mdays[] = { 31, 29, 31, 30, 31, 30, 31, 31, 30,
				    31, 30, 31 };
	int			y, m, d;

	if (strlen(s) != 10 || s[4] != '-' || s[7] != '-' ||
	    !ais_digits(s, 4) || !ais_digits(s + 5, 2) || !ais_digits(s + 8, 2))
		return (0);
	y = (s[0] - '0') * 1000 + (s[1] - '0') * 100 + (s[2] - '0') * 10 +
	    (s[3] - '0');
	m = (s[5] - '0') * 10 + (s[6] - '0');
	d = (s[8] - '0') * 10 + (s[9] - '0');
	if (y < 1000 || m < 1 || m > 12 || d < 1 || d > mdays[m - 1])
		return (0);
	if (m == 2 && d == 29 && !((y % 4 == 0 && y % 100 != 0) ||
	    y % 400 == 0))
		return (0);
	return (1);
}

int
ais_resource_id_valid(const char *s)
{
	size_t	i, len;

	len = strlen(s);
	if (len == 0 || len > 64)
		return (0);
	for (i = 0; i < len; i++) {
		if (!isalnum((unsigned char)s[i]) && s[i] != '-' &&
		    s[i] != '_' && s[i] != '.')
			return (0);
	}
	return (1);
}
