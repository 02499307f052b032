/*
 * The display table of the authenticator protocol. Minor units are those
 * of ISO 4217; a code not listed here is not displayable, and a device
 * refuses it (ERROR CURRENCY) rather than guess where the point goes.
 */
#include <stdlib.h>
#include <string.h>

#include "devcur.h"

struct devcur {
	char	code[4];
	int	minor;
};

/* Sorted by code (bsearch). */
static const struct devcur devcur_table[] = {
	{ "AUD", 2 }, { "BGN", 2 }, { "BHD", 3 }, { "CAD", 2 },
	{ "CHF", 2 }, { "CZK", 2 }, { "DKK", 2 }, { "EUR", 2 },
	{ "GBP", 2 }, { "HUF", 2 }, { "ISK", 0 }, { "JOD", 3 },
	{ "JPY", 0 }, { "KRW", 0 }, { "KWD", 3 }, { "NOK", 2 },
	{ "NZD", 2 }, { "OMR", 3 }, { "PLN", 2 }, { "RON", 2 },
	{ "SEK", 2 }, { "TND", 3 }, { "USD", 2 },
};

static int
devcur_cmp(const void *key, const void *elem)
{
	return (strcmp(key, ((const struct devcur *)elem)->code));
}

int
devcur_minor_units(const char *code)
{
	const struct devcur	*c;

	if (code == NULL || strlen(code) != 3)
		return (-1);
	c = bsearch(code, devcur_table, sizeof(devcur_table) /
	    sizeof(devcur_table[0]), sizeof(devcur_table[0]), devcur_cmp);
	return (c == NULL ? -1 : c->minor);
}

int
devcur_displayable(const char *code)
{
	return (devcur_minor_units(code) >= 0);
}

size_t
devcur_format(uint64_t amount_minor, const char *code, char *out,
    size_t outlen)
{
	char	digits[24], rev[DEVCUR_FORMAT_MAX];
	int	minor, ndig, i, o = 0, intdigits;

	if ((minor = devcur_minor_units(code)) < 0)
		return (0);
	/* At least minor + 1 digits, so that 5 EUR cents read "0.05". */
	ndig = 0;
	do {
		digits[ndig++] = (char)('0' + amount_minor % 10);
		amount_minor /= 10;
	} while (amount_minor > 0 || ndig <= minor);
	/* Built backwards: code, space, fraction, point, grouped integer. */
	for (i = 2; i >= 0; i--)
		rev[o++] = code[i];
	rev[o++] = ' ';
	for (i = 0; i < minor; i++)
		rev[o++] = digits[i];
	if (minor > 0)
		rev[o++] = '.';
	intdigits = ndig - minor;
	for (i = 0; i < intdigits; i++) {
		if (i > 0 && i % 3 == 0)
			rev[o++] = ' ';
		rev[o++] = digits[minor + i];
	}
	if ((size_t)o + 1 > outlen)
		return (0);
	for (i = 0; i < o; i++)
		out[i] = rev[o - 1 - i];
	out[o] = '\0';
	return ((size_t)o);
}
