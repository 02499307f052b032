/* The redirect SCA authentication code (see sca_code.h). */
#include <sys/types.h>

#include <string.h>

#include <openssl/crypto.h>
#include <openssl/evp.h>
#include <openssl/hmac.h>

#include "pis/sca_code.h"

static const char sca_code_label[] = "psd2gate sca-code v1";

static int
sca_code_field(EVP_MAC_CTX *mc, const char *s)
{
	uint8_t	len[4];
	size_t	n;

	if (s == NULL || (n = strlen(s)) > 0xffff)
		return (-1);
	len[0] = 0;
	len[1] = 0;
	len[2] = (uint8_t)(n >> 8);
	len[3] = (uint8_t)n;
	if (!EVP_MAC_update(mc, len, sizeof(len)) ||
	    !EVP_MAC_update(mc, (const uint8_t *)s, n))
		return (-1);
	return (0);
}

static int
sca_code_compute(const struct keyring_key *k, const struct sca_code_input *in,
    uint8_t out[SCA_CODE_LEN])
{
	EVP_MAC		*mac;
	EVP_MAC_CTX	*mc = NULL;
	OSSL_PARAM	 params[2];
	size_t		 outlen = 0;
	int		 rc = -1;

	if ((mac = EVP_MAC_fetch(NULL, "HMAC", NULL)) == NULL)
		return (-1);
	params[0] = OSSL_PARAM_construct_utf8_string("digest", "SHA256", 0);
	params[1] = OSSL_PARAM_construct_end();
	if ((mc = EVP_MAC_CTX_new(mac)) == NULL ||
	    !EVP_MAC_init(mc, k->key, sizeof(k->key), params) ||
	    !EVP_MAC_update(mc, (const uint8_t *)sca_code_label,
	    sizeof(sca_code_label)) ||
	    sca_code_field(mc, in->payment_id) == -1 ||
	    sca_code_field(mc, in->amount_minor) == -1 ||
	    sca_code_field(mc, in->currency) == -1 ||
	    sca_code_field(mc, in->creditor_iban) == -1 ||
	    sca_code_field(mc, in->creditor_name) == -1 ||
	    !EVP_MAC_final(mc, out, &outlen, SCA_CODE_LEN) ||
	    outlen != SCA_CODE_LEN)
		goto out;
	rc = 0;
out:
	EVP_MAC_CTX_free(mc);
	EVP_MAC_free(mac);
	return (rc);
}

int
sca_code_make(const struct keyring *kr, const struct sca_code_input *in,
    uint8_t out[SCA_CODE_LEN], char kid[KEYRING_ID_MAX + 1])
{
	const struct keyring_key	*k;

	if ((k = keyring_current(kr)) == NULL ||
	    sca_code_compute(k, in, out) == -1)
		return (-1);
	memcpy(kid, k->id, sizeof(k->id));
	return (0);
}

int
sca_code_verify(const struct keyring *kr, const struct sca_code_input *in,
    const char *kid, const uint8_t *mac, size_t len)
{
	const struct keyring_key	*k;
	uint8_t				 expect[SCA_CODE_LEN];
	int				 ok;

	if (kid == NULL || mac == NULL || len != SCA_CODE_LEN ||
	    (k = keyring_find(kr, kid, strlen(kid))) == NULL ||
	    sca_code_compute(k, in, expect) == -1)
		return (0);
	ok = CRYPTO_memcmp(expect, mac, SCA_CODE_LEN) == 0;
	OPENSSL_cleanse(expect, sizeof(expect));
	return (ok);
}
