/*
 * Signing string and signature verification with EVP_DigestVerify.
 */
#include <stdio.h>
#include <string.h>
#include <strings.h>

#include <openssl/bn.h>
#include <openssl/core_names.h>
#include <openssl/ec.h>
#include <openssl/ecdsa.h>
#include <openssl/evp.h>
#include <openssl/rsa.h>

#include "tpp/signature.h"

/*
 * Headers that must be signed whenever they are sent (BG 1.2, 12.2), and
 * a DPoP proof (RFC 9449), so that the signed request and the proof of
 * the token's key go together.
 */
static const char *const sig_if_sent[] = {
	"psu-id", "psu-corporate-id", "tpp-redirect-uri", "dpop"
};

enum tpp_sig_alg
tpp_sig_alg_cavage(const char *name, EVP_PKEY *key)
{
	if (name == NULL) {
		/* The draft derives the algorithm from the key. */
		if (EVP_PKEY_is_a(key, "RSA"))
			return (TPP_SIG_RSA_SHA256);
		if (EVP_PKEY_is_a(key, "EC"))
			return (TPP_SIG_ECDSA_SHA256);
		return (TPP_SIG_NONE);
	}
	if (strcasecmp(name, "rsa-sha256") == 0)
		return (TPP_SIG_RSA_SHA256);
	if (strcasecmp(name, "rsa-sha512") == 0)
		return (TPP_SIG_RSA_SHA512);
	if (strcasecmp(name, "ecdsa-sha256") == 0)
		return (TPP_SIG_ECDSA_SHA256);
	return (TPP_SIG_NONE);
}

enum tpp_sig_alg
tpp_sig_alg_jws(const char *name)
{
	if (strcmp(name, "RS256") == 0)
		return (TPP_SIG_RSA_SHA256);
	if (strcmp(name, "PS256") == 0)
		return (TPP_SIG_PSS_SHA256);
	if (strcmp(name, "ES256") == 0)
		return (TPP_SIG_ECDSA_SHA256);
	return (TPP_SIG_NONE);
}

static int
sig_listed(const char *const *names, size_t n, const char *name)
{
	size_t	i;

	for (i = 0; i < n; i++)
		if (strcmp(names[i], name) == 0)
			return (1);
	return (0);
}

int
tpp_sig_rules(const char *const *names, size_t n, int need_date,
    tpp_header_fn get, void *arg, char *err, size_t errlen)
{
	size_t	i, j;
	int	count;

	for (i = 0; i < n; i++) {
		for (j = i + 1; j < n; j++) {
			if (strcmp(names[i], names[j]) == 0) {
				snprintf(err, errlen, "header %s is signed "
				    "twice", names[i]);
				return (-1);
			}
		}
	}
	if (!sig_listed(names, n, "digest") ||
	    !sig_listed(names, n, "x-request-id")) {
		snprintf(err, errlen, "the signed headers must include digest "
		    "and x-request-id");
		return (-1);
	}
	if (need_date && !sig_listed(names, n, "date")) {
		snprintf(err, errlen, "the signed headers must include date, "
		    "so that a signature cannot be replayed later");
		return (-1);
	}
	for (i = 0; i < sizeof(sig_if_sent) / sizeof(sig_if_sent[0]); i++) {
		if (get(arg, sig_if_sent[i], &count) != NULL &&
		    !sig_listed(names, n, sig_if_sent[i])) {
			snprintf(err, errlen, "header %s is sent, so it must "
			    "be signed", sig_if_sent[i]);
			return (-1);
		}
	}
	return (0);
}

int
tpp_sig_string(const char *const *names, size_t n, tpp_header_fn get,
    void *arg, const char *method, const char *target, char *out,
    size_t outlen, char *err, size_t errlen)
{
	const char	*value;
	size_t		 i, off, k;
	int		 count, len;

	off = 0;
	for (i = 0; i < n; i++) {
		if (strcmp(names[i], "(request-target)") == 0) {
			len = snprintf(out + off, outlen - off, "%s%s: ",
			    i ? "\n" : "", names[i]);
			if (len < 0 || (size_t)len >= outlen - off)
				goto toolong;
			off += len;
			for (k = 0; method[k] != '\0' && off < outlen; k++)
				out[off++] = method[k] >= 'A' &&
				    method[k] <= 'Z' ? method[k] + 32 :
				    method[k];
			len = snprintf(out + off, outlen - off, " %s", target);
		} else {
			if ((value = get(arg, names[i], &count)) == NULL) {
				snprintf(err, errlen, "header %s is signed but "
				    "not sent", names[i]);
				return (-1);
			}
			if (count > 1) {
				snprintf(err, errlen, "signed header %s is sent "
				    "more than once", names[i]);
				return (-1);
			}
			len = snprintf(out + off, outlen - off, "%s%s: %s",
			    i ? "\n" : "", names[i], value);
		}
		if (len < 0 || (size_t)len >= outlen - off)
			goto toolong;
		off += len;
	}
	return ((int)off);
toolong:
	snprintf(err, errlen, "the signed headers are too long");
	return (-1);
}

const char *
tpp_sig_key_misfit(EVP_PKEY *key, enum tpp_sig_alg alg)
{
	char	group[32];
	size_t	glen;

	switch (alg) {
	case TPP_SIG_RSA_SHA256:
	case TPP_SIG_RSA_SHA512:
	case TPP_SIG_PSS_SHA256:
		if (!EVP_PKEY_is_a(key, "RSA"))
			return ("an RSA algorithm needs an RSA key");
		return (NULL);
	case TPP_SIG_ECDSA_SHA256:
		if (!EVP_PKEY_is_a(key, "EC") ||
		    EVP_PKEY_get_utf8_string_param(key,
		    OSSL_PKEY_PARAM_GROUP_NAME, group, sizeof(group),
		    &glen) != 1 || strcmp(group, "prime256v1") != 0)
			return ("ECDSA needs a P-256 key");
		return (NULL);
	default:
		return ("unsupported algorithm");
	}
}

/* JWS ES256 r || s (32 + 32 bytes) to the DER that OpenSSL verifies. */
static int
sig_ecdsa_der(const uint8_t *rs, size_t len, uint8_t *der, size_t derlen)
{
	ECDSA_SIG	*es;
	BIGNUM		*r, *s;
	unsigned char	*p;
	int		 n;

	if (len != 64 || (es = ECDSA_SIG_new()) == NULL)
		return (-1);
	r = BN_bin2bn(rs, 32, NULL);
	s = BN_bin2bn(rs + 32, 32, NULL);
	if (r == NULL || s == NULL || ECDSA_SIG_set0(es, r, s) != 1) {
		BN_free(r);
		BN_free(s);
		ECDSA_SIG_free(es);
		return (-1);
	}
	n = i2d_ECDSA_SIG(es, NULL);
	if (n <= 0 || (size_t)n > derlen) {
		ECDSA_SIG_free(es);
		return (-1);
	}
	p = der;
	n = i2d_ECDSA_SIG(es, &p);
	ECDSA_SIG_free(es);
	return (n);
}

static int
sig_evp(EVP_PKEY *key, enum tpp_sig_alg alg, const void *data, size_t len,
    const uint8_t *sig, size_t siglen)
{
	EVP_MD_CTX	*ctx;
	EVP_PKEY_CTX	*pctx;
	const EVP_MD	*md;
	int		 ok;

	md = alg == TPP_SIG_RSA_SHA512 ? EVP_sha512() : EVP_sha256();
	if ((ctx = EVP_MD_CTX_new()) == NULL)
		return (0);
	ok = EVP_DigestVerifyInit(ctx, &pctx, md, NULL, key) == 1;
	if (ok && alg == TPP_SIG_PSS_SHA256) {
		/* RFC 7518 3.5: salt as long as the hash. */
		ok = EVP_PKEY_CTX_set_rsa_padding(pctx,
		    RSA_PKCS1_PSS_PADDING) == 1 &&
		    EVP_PKEY_CTX_set_rsa_pss_saltlen(pctx, 32) == 1 &&
		    EVP_PKEY_CTX_set_rsa_mgf1_md(pctx, EVP_sha256()) == 1;
	} else if (ok && alg != TPP_SIG_ECDSA_SHA256) {
		ok = EVP_PKEY_CTX_set_rsa_padding(pctx,
		    RSA_PKCS1_PADDING) == 1;
	}
	ok = ok && EVP_DigestVerify(ctx, sig, siglen, data, len) == 1;
	EVP_MD_CTX_free(ctx);
	return (ok);
}

int
tpp_sig_verify(EVP_PKEY *key, enum tpp_sig_alg alg, int jws,
    const void *data, size_t len, const uint8_t *sig, size_t siglen)
{
	uint8_t		der[80];
	int		n;

	if (tpp_sig_key_misfit(key, alg) != NULL || siglen == 0)
		return (0);
	if (alg == TPP_SIG_ECDSA_SHA256 && jws) {
		if ((n = sig_ecdsa_der(sig, siglen, der, sizeof(der))) < 0)
			return (0);
		return (sig_evp(key, alg, data, len, der, n));
	}
	if (sig_evp(key, alg, data, len, sig, siglen))
		return (1);
	/* Some draft-cavage ECDSA signers send r || s as JWS does. */
	if (alg == TPP_SIG_ECDSA_SHA256 && siglen == 64 &&
	    (n = sig_ecdsa_der(sig, siglen, der, sizeof(der))) > 0)
		return (sig_evp(key, alg, data, len, der, n));
	return (0);
}
