/*
 * libFuzzer: base32 decoder. What decodes must re-encode to the input
 * modulo case and padding.
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "encoding.h"

int	LLVMFuzzerTestOneInput(const uint8_t *, size_t);

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	const char	*in = (const char *)data;
	uint8_t		*dec;
	char		*enc;
	size_t		 max = BASE32_DECODED_MAX(size) + 1, unpadded;
	int		 n, m;

	if ((dec = malloc(max)) == NULL)
		abort();
	n = base32_decode(in, size, dec, max);
	if (n >= 0) {
		unpadded = size;
		while (unpadded > 0 && in[unpadded - 1] == '=')
			unpadded--;
		if ((enc = malloc(size + 1)) == NULL)
			abort();
		m = base32_encode(dec, (size_t)n, enc, size + 1);
		if (m < 0 || (size_t)m != unpadded ||
		    strncasecmp(enc, in, unpadded) != 0)
			abort();
		free(enc);
		if (n > 0 && base32_decode(in, size, dec, (size_t)n - 1) != -1)
			abort();
	}
	free(dec);
	return (0);
}
