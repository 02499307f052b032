/*
 * Helpers shared by the TPP unit tests: a request made of header pairs,
 * the test PKI (TPP_PKI, minted by tests/pki/mint.sh) and signing.
 */
#ifndef TPPTEST_H
#define TPPTEST_H

#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <cmocka.h>

#include <openssl/evp.h>
#include <openssl/pem.h>
#include <openssl/rsa.h>
#include <openssl/bn.h>
#include <openssl/ecdsa.h>
#include <openssl/sha.h>
#include <openssl/x509.h>

#define TT_HEADERS_MAX	24

struct tt_req {
	const char	*names[TT_HEADERS_MAX];
	char		*values[TT_HEADERS_MAX];
	int		 n;
};

static inline const char *
tt_header(void *arg, const char *name, int *count)
{
	struct tt_req	*r = arg;
	const char	*v = NULL;
	int		 i;

	*count = 0;
	for (i = 0; i < r->n; i++) {
		if (strcasecmp(r->names[i], name) == 0 && (*count)++ == 0)
			v = r->values[i];
	}
	return (v);
}

static inline void
tt_set(struct tt_req *r, const char *name, const char *value)
{
	int	i;

	for (i = 0; i < r->n; i++) {
		if (strcasecmp(r->names[i], name) == 0) {
			free(r->values[i]);
			if (value == NULL) {
				r->names[i] = r->names[r->n - 1];
				r->values[i] = r->values[r->n - 1];
				r->n--;
			} else
				r->values[i] = strdup(value);
			return;
		}
	}
	if (value != NULL && r->n < TT_HEADERS_MAX) {
		r->names[r->n] = name;
		r->values[r->n++] = strdup(value);
	}
}

static inline void
tt_add(struct tt_req *r, const char *name, const char *value)
{
	assert_true(r->n < TT_HEADERS_MAX);
	r->names[r->n] = name;
	r->values[r->n++] = strdup(value);
}

static inline void
tt_free(struct tt_req *r)
{
	int	i;

	for (i = 0; i < r->n; i++)
		free(r->values[i]);
	r->n = 0;
}

static inline const char *
tt_pki(void)
{
	const char	*d = getenv("TPP_PKI");

	return (d != NULL ? d : "build/tpp/pki");
}

static inline char *
tt_path(const char *name, char *buf, size_t len)
{
	snprintf(buf, len, "%s/%s", tt_pki(), name);
	return (buf);
}

static inline X509 *
tt_cert(const char *name)
{
	char	 path[512];
	FILE	*f;
	X509	*x;

	snprintf(path, sizeof(path), "%s/%s.crt", tt_pki(), name);
	f = fopen(path, "r");
	assert_non_null(f);
	x = PEM_read_X509(f, NULL, NULL, NULL);
	fclose(f);
	assert_non_null(x);
	return (x);
}

static inline EVP_PKEY *
tt_key(const char *name)
{
	char		 path[512];
	FILE		*f;
	EVP_PKEY	*k;

	snprintf(path, sizeof(path), "%s/%s.key", tt_pki(), name);
	f = fopen(path, "r");
	assert_non_null(f);
	k = PEM_read_PrivateKey(f, NULL, NULL, NULL);
	fclose(f);
	assert_non_null(k);
	return (k);
}

/* Base64 (standard, padded) of len bytes, malloc'ed. */
static inline char *
tt_b64(const void *data, size_t len)
{
	char	*out = malloc(len / 3 * 4 + 8);

	EVP_EncodeBlock((unsigned char *)out, data, (int)len);
	return (out);
}

static inline char *
tt_b64url(const void *data, size_t len)
{
	char	*s = tt_b64(data, len), *p;
	size_t	 n;

	for (p = s; *p; p++) {
		if (*p == '+')
			*p = '-';
		else if (*p == '/')
			*p = '_';
	}
	n = strlen(s);
	while (n > 0 && s[n - 1] == '=')
		s[--n] = '\0';
	return (s);
}

static inline char *
tt_cert_b64(X509 *x)
{
	unsigned char	*der = NULL;
	int		 len;
	char		*s;

	len = i2d_X509(x, &der);
	assert_true(len > 0);
	s = tt_b64(der, len);
	OPENSSL_free(der);
	return (s);
}

/* Signs data: md NULL means the key's default; pss for PS256. */
static inline size_t
tt_sign(EVP_PKEY *key, const EVP_MD *md, int pss, const void *data,
    size_t len, unsigned char *sig, size_t siglen)
{
	EVP_MD_CTX	*ctx = EVP_MD_CTX_new();
	EVP_PKEY_CTX	*pctx;

	assert_int_equal(EVP_DigestSignInit(ctx, &pctx, md, NULL, key), 1);
	if (pss) {
		EVP_PKEY_CTX_set_rsa_padding(pctx, RSA_PKCS1_PSS_PADDING);
		EVP_PKEY_CTX_set_rsa_pss_saltlen(pctx, 32);
	}
	assert_int_equal(EVP_DigestSign(ctx, sig, &siglen, data, len), 1);
	EVP_MD_CTX_free(ctx);
	return (siglen);
}

#endif
