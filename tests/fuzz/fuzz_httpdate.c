/*
 * libFuzzer: httpdate_parse. Byte 0 picks the mode: the input as it is,
 * or the input written over a valid date (so the field checks, not just
 * the length check, see mutations). A parsed date formats back to the
 * input.
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "httpdate.h"

int	LLVMFuzzerTestOneInput(const uint8_t *, size_t);

static const char	valid[] = "Sun, 06 Nov 1994 08:49:37 GMT";

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	char		*text, out[30];
	int64_t		 epoch;
	size_t		 off, len;

	if ((text = malloc(size + sizeof(valid))) == NULL)
		abort();
	if (size > 1 && data[0] & 1) {
		/* Overwrite part of a valid date, keeping its length. */
		memcpy(text, valid, sizeof(valid));
		off = data[1] % (sizeof(valid) - 1);
		len = size - 2;
		if (len > sizeof(valid) - 1 - off)
			len = sizeof(valid) - 1 - off;
		memcpy(text + off, data + 2, len);
	} else {
		memcpy(text, data, size);
		text[size] = '\0';
	}
	if (httpdate_parse(text, &epoch) == 0) {
		if (httpdate_format(epoch, out) != 0 || strcmp(out, text) != 0)
			abort();
	}
	free(text);
	return (0);
}
