/*
 * The display table of the authenticator protocol: the codes of the one
 * currency table (money.c) marked MONEY_CURRENCY_DEVICE, with their ISO
 * 4217 minor units. A code outside it is not displayable, and a device
 * refuses it (ERROR CURRENCY) rather than guess where the point goes.
 */
#include "devcur.h"
#include "money.h"

int
devcur_minor_units(const char *code)
{
	int	minor, flags;

	if ((minor = money_currency(code, &flags)) < 0 ||
	    !(flags & MONEY_CURRENCY_DEVICE))
		return (-1);
	return (minor);
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
