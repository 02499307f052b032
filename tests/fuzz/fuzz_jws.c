/*
 * libFuzzer: jws_verify, jws_verify_dpop and jws_jwks_check. Byte 0
 * picks the mode: the input as a compact JWS against a fixed key set of
 * the three types; the input spliced into a genuine JWS (so the key
 * selection and the signature check, not just the parser, are reached);
 * the input as a key set; or spliced into a genuine DPoP proof. Nothing
 * but the genuine JWS or proof may ever verify.
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "jws.h"
#include "../unit/jws_vectors.h"

int	LLVMFuzzerTestOneInput(const uint8_t *, size_t);

static json_t	*set;

static const char *const genuine[] = {
	JWS_PS256, JWS_PS256_NOKID, JWS_ES256, JWS_EDDSA
};

static const char *const proofs[] = {
	JWS_DPOP_0, JWS_DPOP_1, JWS_DPOP_2, JWS_DPOP_0
};

static void
init(void)
{
	if (set == NULL && (set = json_loads(JWS_VECTOR_JWKS, 0, NULL)) == NULL)
		abort();
}

static int
is_one_of(const char *tok, const char *const *list)
{
	size_t	i;

	for (i = 0; i < 4; i++) {
		if (strcmp(tok, list[i]) == 0)
			return (1);
	}
	return (0);
}

static void
fuzz_key_set(const uint8_t *data, size_t size)
{
	json_t	*keys;
	char	 why[256];

	if ((keys = json_loadb((const char *)data, size, 0, NULL)) == NULL)
		return;
	(void)jws_jwks_check(keys, why, sizeof(why));
	json_decref(keys);
}

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	const char *const	*list;
	const char		*good;
	char			*tok, thumb[JWS_THUMBPRINT_LEN + 1];
	uint8_t			 payload[512];
	size_t			 goodlen, off, len, rest, plen;
	int			 mode, ok;

	init();
	mode = size > 0 ? data[0] % 4 : 0;
	if (mode == 2) {
		fuzz_key_set(data + 1, size - 1);
		return (0);
	}
	list = mode == 3 ? proofs : genuine;
	good = list[size > 1 ? data[1] % 4 : 0];
	goodlen = strlen(good);
	if ((tok = malloc(size + goodlen + 1)) == NULL)
		abort();
	if (mode == 1 || mode == 3) {
		off = size > 2 ? data[2] % (goodlen + 1) : 0;
		len = size > 3 ? size - 3 : 0;
		rest = goodlen - off;
		rest = len < rest ? rest - len : 0;
		memcpy(tok, good, off);
		memcpy(tok + off, data + (size > 3 ? 3 : size), len);
		memcpy(tok + off + len, good + goodlen - rest, rest);
		tok[off + len + rest] = '\0';
	} else {
		memcpy(tok, data, size);
		tok[size] = '\0';
	}
	if (mode == 3)
		ok = jws_verify_dpop(tok, payload, sizeof(payload), &plen,
		    thumb) == JWS_OK;
	else
		ok = jws_verify(tok, set, payload, sizeof(payload), &plen,
		    NULL) == JWS_OK;
	if (ok && !is_one_of(tok, list))
		abort();
	free(tok);
	return (0);
}
