/* Hex strings of the worked examples to bytes. */
#ifndef PSD2_DEV_EXBYTES_H
#define PSD2_DEV_EXBYTES_H

#include <stddef.h>
#include <stdint.h>
#include <string.h>

static inline size_t
ex_bytes(const char *hex, uint8_t *out, size_t max)
{
	size_t		n = strlen(hex) / 2, i;
	unsigned int	v;

	for (i = 0; i < n && i < max; i++) {
		v = 0;
		for (int k = 0; k < 2; k++) {
			char c = hex[2 * i + k];
			v = v * 16 + (unsigned int)(c <= '9' ? c - '0' :
			    c - 'a' + 10);
		}
		out[i] = (uint8_t)v;
	}
	return (i);
}

#endif
