/*
 * HTTP dates in the IMF-fixdate form of RFC 9110 section 5.6.7:
 *	Sun, 06 Nov 1994 08:49:37 GMT
 * Computed with integer calendar arithmetic: no locale, no time zone, no
 * time_t range limits.
 */
#ifndef PSD2_HTTPDATE_H
#define PSD2_HTTPDATE_H

#include <stdint.h>

#define HTTPDATE_LEN	29	/* without the NUL */

/*
 * Parses exactly one IMF-fixdate (nothing before or after; names case-
 * sensitive; the weekday must be the date's; seconds 00-59; years
 * 0000-9999, proleptic Gregorian). Returns 0 and sets *epoch (Unix
 * seconds), or -1.
 */
int	httpdate_parse(const char *s, int64_t *epoch);

/* Days since 1970-01-01 of a proleptic Gregorian date (m 1-12, d 1-31;
 * H. Hinnant's algorithm). Shared with the JWS sigT parser. */
int64_t	days_from_civil(int64_t y, int m, int d);

/* Formats epoch (years 0000-9999) into out. Returns 0, or -1. */
int	httpdate_format(int64_t epoch, char out[30]);

#endif
