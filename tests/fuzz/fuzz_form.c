/*
 * libFuzzer: form-urlencoded component decoder. A decoded value has no
 * NUL, and encoding then decoding it gives it back.
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "encoding.h"

int	LLVMFuzzerTestOneInput(const uint8_t *, size_t);

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	char		*dec, *enc, *back;
	size_t		 enclen;
	int		 n, m;

	if ((dec = malloc(size + 1)) == NULL)
		abort();
	n = form_decode((const char *)data, size, dec, size + 1);
	if (n >= 0) {
		if (strlen(dec) != (size_t)n)
			abort();
		enclen = FORM_ENCODED_MAX((size_t)n) + 1;
		if ((enc = malloc(enclen)) == NULL ||
		    (back = malloc((size_t)n + 1)) == NULL)
			abort();
		m = form_encode(dec, (size_t)n, enc, enclen);
		if (m < 0 || form_decode(enc, (size_t)m, back,
		    (size_t)n + 1) != n || memcmp(back, dec, (size_t)n) != 0)
			abort();
		free(enc);
		free(back);
	}
	free(dec);
	return (0);
}
