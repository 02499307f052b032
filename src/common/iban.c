/*
 * IBAN check digits: ISO 7064 MOD 97-10 over the IBAN with its first four
 * characters moved to the end and letters as 10..35, computed piecewise
 * so that no big number is needed.
 */
#include "iban.h"

static int
is_upper(char c)
{
	return (c >= 'A' && c <= 'Z');
}

static int
is_digit(char c)
{
	return (c >= '0' && c <= '9');
}

static unsigned int
mod97_add(unsigned int rem, char c)
{
	if (is_digit(c))
		return ((rem * 10 + (unsigned int)(c - '0')) % 97);
	return ((rem * 100 + (unsigned int)(c - 'A' + 10)) % 97);
}

int
iban_valid(const char *s, size_t len)
{
	unsigned int	rem = 0, check;
	size_t		i;

	if (s == NULL || len < IBAN_MIN || len > IBAN_MAX)
		return (0);
	if (!is_upper(s[0]) || !is_upper(s[1]) || !is_digit(s[2]) ||
	    !is_digit(s[3]))
		return (0);
	for (i = 4; i < len; i++) {
		if (!is_upper(s[i]) && !is_digit(s[i]))
			return (0);
	}
	/*
	 * 00, 01 and 99 pass the remainder test whenever 97, 98 or 02 do:
	 * only 02..98 are ever computed, so one account has one IBAN.
	 */
	check = (unsigned int)(s[2] - '0') * 10 + (unsigned int)(s[3] - '0');
	if (check < 2 || check > 98)
		return (0);
	for (i = 4; i < len; i++)
		rem = mod97_add(rem, s[i]);
	for (i = 0; i < 4; i++)
		rem = mod97_add(rem, s[i]);
	return (rem == 1);
}
