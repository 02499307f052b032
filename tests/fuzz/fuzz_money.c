/*
 * libFuzzer: money_parse. Byte 0 picks the exponent; what parses must
 * format and parse back to the same value.
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "money.h"

int	LLVMFuzzerTestOneInput(const uint8_t *, size_t);

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	char		*text, out[MONEY_TEXT_MAX];
	int64_t		 v, back;
	int		 exponent;

	if (size == 0)
		return (0);
	exponent = data[0] % (MONEY_EXPONENT_MAX + 2);	/* 19 is invalid */
	if ((text = malloc(size)) == NULL)
		abort();
	memcpy(text, data + 1, size - 1);
	text[size - 1] = '\0';
	if (money_parse(text, exponent, &v) == 0) {
		if (exponent > MONEY_EXPONENT_MAX ||
		    money_format(v, exponent, out, sizeof(out)) < 0 ||
		    money_parse(out, exponent, &back) != 0 || back != v)
			abort();
	}
	free(text);
	return (0);
}
