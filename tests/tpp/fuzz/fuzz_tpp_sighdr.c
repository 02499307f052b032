/* libFuzzer: the draft-cavage Signature header and its keyId. */
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "tpp/keyid.h"
#include "tpp/sighdr.h"

int	LLVMFuzzerTestOneInput(const uint8_t *, size_t);

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t len)
{
	static struct tpp_sighdr	sh;
	static struct tpp_keyid		k;
	char				*s, err[160];

	if ((s = malloc(len + 1)) == NULL)
		return (0);
	memcpy(s, data, len);
	s[len] = '\0';
	(void)tpp_sighdr_is_jws(s);
	if (tpp_sighdr_parse(s, &sh, err, sizeof(err)) == 0)
		(void)tpp_keyid_parse(sh.key_id, &k, err, sizeof(err));
	free(s);
	return (0);
}
