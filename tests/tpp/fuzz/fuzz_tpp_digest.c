/* libFuzzer: the Digest header parser and comparison. */
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "tpp/digest.h"

int	LLVMFuzzerTestOneInput(const uint8_t *, size_t);

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t len)
{
	struct tpp_digest	 d;
	char			*s, err[160];

	if ((s = malloc(len + 1)) == NULL)
		return (0);
	memcpy(s, data, len);
	s[len] = '\0';
	if (tpp_digest_parse(s, &d, err, sizeof(err)) == 0)
		(void)tpp_digest_matches(&d, data, len);
	free(s);
	return (0);
}
