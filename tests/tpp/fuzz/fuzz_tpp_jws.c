/* libFuzzer: detached compact JWS (protected header JSON) and sigT. */
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "common/encoding.h"
#include "tpp/jws.h"

int	LLVMFuzzerTestOneInput(const uint8_t *, size_t);

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t len)
{
	static struct tpp_jws	 j;
	char			*s, *h, err[160];
	int64_t			 t;
	int			 n;

	if ((s = malloc(len + 1)) == NULL)
		return (0);
	memcpy(s, data, len);
	s[len] = '\0';
	(void)tpp_jws_parse(s, &j, err, sizeof(err));
	(void)tpp_jws_time(s, &t);
	/* Also as the JSON of a protected header, to reach the members. */
	if (len < 3000 && (h = malloc(len * 2 + 32)) != NULL) {
		n = base64url_encode(data, len, h, len * 2 + 16);
		if (n >= 0) {
			memcpy(h + n, "..c2ln", 7);
			(void)tpp_jws_parse(h, &j, err, sizeof(err));
		}
		free(h);
	}
	free(s);
	return (0);
}
