/*
 * Exact decimal money. Arithmetic is on the unsigned magnitude, so
 * INT64_MIN needs no special case and overflow is checked per digit.
 */
#include <string.h>

#include "money.h"

#define INT64_MIN_MAGNITUDE	((uint64_t)INT64_MAX + 1)

int
money_format(int64_t minor_units, int exponent, char *out, size_t outlen)
{
	char		digits[24];
	uint64_t	mag;
	size_t		n = 0, len, i, o = 0;
	int		neg = minor_units < 0;

	if (exponent < 0 || exponent > MONEY_EXPONENT_MAX || out == NULL)
		return (-1);
	mag = neg ? (uint64_t)0 - (uint64_t)minor_units : (uint64_t)minor_units;

	/* Digits, least significant first, at least exponent + 1 of them. */
	do {
		digits[n++] = (char)('0' + mag % 10);
		mag /= 10;
	} while (mag > 0 || n < (size_t)exponent + 1);

	len = (size_t)neg + n + (exponent > 0 ? 1 : 0);
	if (len + 1 > outlen)
		return (-1);
	if (neg)
		out[o++] = '-';
	for (i = n; i > 0; i--) {
		if (exponent > 0 && i == (size_t)exponent)
			out[o++] = '.';
		out[o++] = digits[i - 1];
	}
	out[o] = '\0';
	return ((int)o);
}

/* mag = mag * 10 + digit, refusing to pass limit. */
static int
push_digit(uint64_t *mag, int digit, uint64_t limit)
{
	if (*mag > (limit - (uint64_t)digit) / 10)
		return (-1);
	*mag = *mag * 10 + (uint64_t)digit;
	return (0);
}

int
money_parse(const char *text, int exponent, int64_t *minor_units)
{
	const char	*p = text;
	uint64_t	 mag = 0, limit;
	int		 neg = 0, decimals = 0, intdigits = 0;

	if (text == NULL || minor_units == NULL || exponent < 0 ||
	    exponent > MONEY_EXPONENT_MAX)
		return (-1);
	if (*p == '-') {
		neg = 1;
		p++;
	}
	limit = neg ? INT64_MIN_MAGNITUDE : (uint64_t)INT64_MAX;

	for (; *p >= '0' && *p <= '9'; p++, intdigits++) {
		if (push_digit(&mag, *p - '0', limit) == -1)
			return (-1);
	}
	if (intdigits == 0)
		return (-1);
	if (*p == '.') {
		for (p++; *p >= '0' && *p <= '9'; p++, decimals++) {
			if (decimals == exponent ||
			    push_digit(&mag, *p - '0', limit) == -1)
				return (-1);
		}
		if (decimals == 0)
			return (-1);
	}
	if (*p != '\0')
		return (-1);
	for (; decimals < exponent; decimals++) {
		if (push_digit(&mag, 0, limit) == -1)
			return (-1);
	}

	if (neg)
		*minor_units = (int64_t)((uint64_t)0 - mag);
	else
		*minor_units = (int64_t)mag;
	return (0);
}

struct currency {
	char	code[4];
	int	exponent;
	int	flags;
};

#define D	MONEY_CURRENCY_DEVICE

/*
 * ISO 4217 minor units of the currencies a European bank meets, the one
 * table of the service and the authenticators: D marks the protocol's
 * display table (device/PROTOCOL.md 5.3.1), so a device can never show
 * an amount with other decimals than the service parsed it with.
 */
static const struct currency	currencies[] = {
	{ "AED", 2, 0 }, { "AUD", 2, D }, { "BGN", 2, D }, { "BHD", 3, D },
	{ "BRL", 2, 0 }, { "CAD", 2, D }, { "CHF", 2, D }, { "CLP", 0, 0 },
	{ "CNY", 2, 0 }, { "CZK", 2, D }, { "DKK", 2, D }, { "EUR", 2, D },
	{ "GBP", 2, D }, { "HKD", 2, 0 }, { "HUF", 2, D }, { "IDR", 2, 0 },
	{ "ILS", 2, 0 }, { "INR", 2, 0 }, { "IQD", 3, 0 }, { "ISK", 0, D },
	{ "JOD", 3, D }, { "JPY", 0, D }, { "KRW", 0, D }, { "KWD", 3, D },
	{ "LYD", 3, 0 }, { "MAD", 2, 0 }, { "MXN", 2, 0 }, { "NOK", 2, D },
	{ "NZD", 2, D }, { "OMR", 3, D }, { "PLN", 2, D }, { "RON", 2, D },
	{ "RSD", 2, 0 }, { "SAR", 2, 0 }, { "SEK", 2, D }, { "SGD", 2, 0 },
	{ "THB", 2, 0 }, { "TND", 3, D }, { "TRY", 2, 0 }, { "UAH", 2, 0 },
	{ "USD", 2, D }, { "VND", 0, 0 }, { "XAF", 0, 0 }, { "XOF", 0, 0 },
	{ "ZAR", 2, 0 },
};

#undef D

int
money_currency(const char *iso4217, int *flags)
{
	size_t		i;

	if (iso4217 == NULL)
		return (-1);
	for (i = 0; i < 3; i++) {
		if (iso4217[i] < 'A' || iso4217[i] > 'Z')
			return (-1);
	}
	if (iso4217[3] != '\0')
		return (-1);
	for (i = 0; i < sizeof(currencies) / sizeof(currencies[0]); i++) {
		if (memcmp(currencies[i].code, iso4217, 3) != 0)
			continue;
		if (flags != NULL)
			*flags = currencies[i].flags;
		return (currencies[i].exponent);
	}
	return (-1);
}

int
money_currency_exponent(const char *iso4217)
{
	return (money_currency(iso4217, NULL));
}
