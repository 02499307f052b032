/*
 * Money as integers of minor units (cents), never floating point, and
 * the exact decimal text the API carries ("1234.50").
 */
#ifndef PSD2_MONEY_H
#define PSD2_MONEY_H

#include <stddef.h>
#include <stdint.h>

#define MONEY_EXPONENT_MAX	18
/* Longest text: "-9223372036854775808" with a point, plus NUL. */
#define MONEY_TEXT_MAX		(1 + 19 + 1 + MONEY_EXPONENT_MAX + 1 + 1)

/*
 * Writes minor_units as a decimal with exactly exponent (0..18) digits
 * after the point (none and no point for 0): 123450, 2 -> "1234.50";
 * -5, 2 -> "-0.05". Returns the length, or -1 (bad exponent, buffer too
 * small).
 */
int	money_format(int64_t minor_units, int exponent, char *out,
	    size_t outlen);

/*
 * Parses -?[0-9]+(\.[0-9]{1,exponent})? into minor units: "1234.5" with
 * exponent 2 is 123450. Rejects more decimals than exponent, a leading
 * '+', exponents, spaces, empty text, a leading or trailing '.', and
 * values outside int64. Returns 0, or -1 (*minor_units untouched).
 */
int	money_parse(const char *text, int exponent, int64_t *minor_units);

/*
 * The ISO 4217 minor-unit exponent of a currency code: 2 for EUR, 0 for
 * JPY, 3 for KWD... -1 for anything not three upper-case letters or not
 * in the table.
 */
int	money_currency_exponent(const char *iso4217);

/* An authenticator displays the currency (devcur.h). */
#define MONEY_CURRENCY_DEVICE	0x01

/* The exponent as above; *flags (unless NULL) gets its MONEY_CURRENCY_. */
int	money_currency(const char *iso4217, int *flags);

#endif
