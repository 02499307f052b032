/*
 * libFuzzer: base64 and base64url decoders. Whatever decodes must
 * encode back to exactly the input (strict decoders accept only the
 * canonical form).
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "encoding.h"

int	LLVMFuzzerTestOneInput(const uint8_t *, size_t);

static void
check(const char *in, size_t len, int url)
{
	uint8_t		*dec;
	char		*enc;
	size_t		 max = BASE64_DECODED_MAX(len);
	int		 n, m;

	if ((dec = malloc(max)) == NULL)
		abort();
	n = url ? base64url_decode(in, len, dec, max) :
	    base64_decode(in, len, dec, max);
	if (n >= 0) {
		if ((size_t)n > max || (enc = malloc(len + 1)) == NULL)
			abort();
		m = url ? base64url_encode(dec, (size_t)n, enc, len + 1) :
		    base64_encode(dec, (size_t)n, enc, len + 1);
		if (m < 0 || (size_t)m != len || memcmp(enc, in, len) != 0)
			abort();
		free(enc);
		/* One byte less of room must be refused, not overrun. */
		if (n > 0 && (url ? base64url_decode(in, len, dec, n - 1) :
		    base64_decode(in, len, dec, n - 1)) != -1)
			abort();
	}
	free(dec);
}

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	check((const char *)data, size, 0);
	check((const char *)data, size, 1);
	return (0);
}
