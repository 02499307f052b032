/*
 * Canonical encodings and ECDSA P-256 verification of device signatures.
 * The encodings start with a domain string and a NUL so that a signature
 * made for one purpose (attestation, confirmation) can never be replayed
 * as the other.
 */
#include <stdio.h>
#include <string.h>

#include <openssl/bn.h>
#include <openssl/core_names.h>
#include <openssl/ec.h>
#include <openssl/pem.h>
#include <openssl/sha.h>

#include "devcur.h"
#include "devsig.h"

struct enc {
	uint8_t	*p;
	size_t	 left;
	size_t	 used;
	int	 bad;
};

static void
enc_bytes(struct enc *e, const void *src, size_t n)
{
	if (e->bad || e->left < n) {
		e->bad = 1;
		return;
	}
	memcpy(e->p, src, n);
	e->p += n;
	e->left -= n;
	e->used += n;
}

static void
enc_be(struct enc *e, uint64_t v, size_t n)
{
	uint8_t	b[8];
	size_t	i;

	for (i = 0; i < n; i++)
		b[n - 1 - i] = (uint8_t)(v >> (8 * i));
	enc_bytes(e, b, n);
}

static void
enc_str(struct enc *e, const char *s, size_t max)
{
	size_t	n = strlen(s);

	if (n > max || n > 255) {
		e->bad = 1;
		return;
	}
	enc_be(e, n, 1);
	enc_bytes(e, s, n);
}

/* The order n of P-256 and n / 2 (rounded down), big-endian. */
static const uint8_t p256_n[32] = {
	0xff, 0xff, 0xff, 0xff, 0x00, 0x00, 0x00, 0x00,
	0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff,
	0xbc, 0xe6, 0xfa, 0xad, 0xa7, 0x17, 0x9e, 0x84,
	0xf3, 0xb9, 0xca, 0xc2, 0xfc, 0x63, 0x25, 0x51
};
static const uint8_t p256_half_n[32] = {
	0x7f, 0xff, 0xff, 0xff, 0x80, 0x00, 0x00, 0x00,
	0x7f, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff,
	0xde, 0x73, 0x7d, 0x56, 0xd3, 0x8b, 0xcf, 0x42,
	0x79, 0xdc, 0xe5, 0x61, 0x7e, 0x31, 0x92, 0xa8
};

size_t
devsig_confirm_encode(const struct dev_confirm *c, uint8_t outcome,
    uint8_t flags, uint32_t counter, uint8_t *out, size_t outlen)
{
	struct enc	e = { out, outlen, 0, 0 };
	int		minor;

	/* The minor units the amount was shown with are signed too, so a
	 * table that disagrees with the service's never verifies. */
	if (strlen(c->currency) != 3 ||
	    (minor = devcur_minor_units(c->currency)) < 0)
		return (0);
	enc_bytes(&e, DEVSIG_CONFIRM_DOMAIN, sizeof(DEVSIG_CONFIRM_DOMAIN));
	enc_bytes(&e, c->challenge, DEV_CHALLENGE_LEN);
	enc_bytes(&e, c->nonce, DEV_NONCE_LEN);
	enc_be(&e, c->amount_minor, 8);
	enc_bytes(&e, c->currency, 3);
	enc_be(&e, (uint64_t)minor, 1);
	enc_str(&e, c->payee_name, DEV_PAYEE_NAME_MAX);
	enc_str(&e, c->payee_iban, DEV_IBAN_MAX);
	enc_be(&e, outcome, 1);
	enc_be(&e, flags, 1);
	enc_be(&e, counter, 4);
	return (e.bad ? 0 : e.used);
}

size_t
devsig_attest_encode(const char *serial, const char *model,
    const uint8_t pubkey[DEV_PUBKEY_LEN], uint8_t *out, size_t outlen)
{
	struct enc	e = { out, outlen, 0, 0 };

	enc_bytes(&e, DEVSIG_ATTEST_DOMAIN, sizeof(DEVSIG_ATTEST_DOMAIN));
	enc_str(&e, serial, DEV_SERIAL_MAX);
	enc_str(&e, model, DEV_MODEL_MAX);
	enc_bytes(&e, pubkey, DEV_PUBKEY_LEN);
	return (e.bad ? 0 : e.used);
}

EVP_PKEY *
devsig_pubkey_from_raw(const uint8_t pubkey[DEV_PUBKEY_LEN])
{
	EVP_PKEY_CTX	*ctx;
	EVP_PKEY	*pk = NULL;
	OSSL_PARAM	 params[3];
	char		 group[] = "prime256v1";

	if (pubkey[0] != 0x04)
		return (NULL);
	params[0] = OSSL_PARAM_construct_utf8_string(
	    OSSL_PKEY_PARAM_GROUP_NAME, group, 0);
	params[1] = OSSL_PARAM_construct_octet_string(
	    OSSL_PKEY_PARAM_PUB_KEY, (void *)pubkey, DEV_PUBKEY_LEN);
	params[2] = OSSL_PARAM_construct_end();
	if ((ctx = EVP_PKEY_CTX_new_from_name(NULL, "EC", NULL)) == NULL)
		return (NULL);
	if (EVP_PKEY_fromdata_init(ctx) != 1 ||
	    EVP_PKEY_fromdata(ctx, &pk, EVP_PKEY_PUBLIC_KEY, params) != 1)
		pk = NULL;
	EVP_PKEY_CTX_free(ctx);
	return (pk);
}

int
devsig_pubkey_raw(EVP_PKEY *pk, uint8_t pubkey[DEV_PUBKEY_LEN])
{
	char	group[32];
	size_t	len = 0;

	if (EVP_PKEY_get_utf8_string_param(pk, OSSL_PKEY_PARAM_GROUP_NAME,
	    group, sizeof(group), NULL) != 1 || strcmp(group, "prime256v1") != 0)
		return (-1);
	if (EVP_PKEY_get_octet_string_param(pk,
	    OSSL_PKEY_PARAM_ENCODED_PUBLIC_KEY, pubkey, DEV_PUBKEY_LEN,
	    &len) != 1 || len != DEV_PUBKEY_LEN || pubkey[0] != 0x04)
		return (-1);
	return (0);
}

/*
 * One DER INTEGER at p[*o]: minimal (a leading 0x00 only before a byte
 * >= 0x80), positive, 1..32 value bytes; copied right-aligned into v.
 */
static int
der_int(const uint8_t *p, size_t len, size_t *o, uint8_t v[32])
{
	size_t	n;

	if (len - *o < 2 || p[*o] != 0x02)
		return (-1);
	n = p[*o + 1];
	*o += 2;
	if (n < 1 || n > 33 || len - *o < n)
		return (-1);
	if (p[*o] & 0x80)
		return (-1);
	if (n > 1 && p[*o] == 0x00 && !(p[*o + 1] & 0x80))
		return (-1);
	if (p[*o] == 0x00 && n > 1) {
		(*o)++;
		n--;
	}
	if (n > 32)
		return (-1);
	memset(v, 0, 32);
	memcpy(v + 32 - n, p + *o, n);
	*o += n;
	return (0);
}

static int
is_zero(const uint8_t v[32])
{
	uint8_t	acc = 0;
	size_t	i;

	for (i = 0; i < 32; i++)
		acc |= v[i];
	return (acc == 0);
}

int
devsig_der_ok(const uint8_t *sig, size_t siglen, int low_s)
{
	uint8_t	r[32], s[32];
	size_t	o = 2;

	/* SEQUENCE with a short-form length covering exactly the rest. */
	if (sig == NULL || siglen < DEV_SIG_MIN || siglen > DEV_SIG_MAX ||
	    sig[0] != 0x30 || sig[1] != siglen - 2)
		return (0);
	if (der_int(sig, siglen, &o, r) != 0 ||
	    der_int(sig, siglen, &o, s) != 0 || o != siglen)
		return (0);
	if (is_zero(r) || is_zero(s) || memcmp(r, p256_n, 32) >= 0 ||
	    memcmp(s, p256_n, 32) >= 0)
		return (0);
	if (low_s && memcmp(s, p256_half_n, 32) > 0)
		return (0);
	return (1);
}

int
devsig_verify(EVP_PKEY *pk, const uint8_t *msg, size_t len,
    const uint8_t *sig, size_t siglen)
{
	EVP_MD_CTX	*md;
	int		 ok;

	if (pk == NULL || !devsig_der_ok(sig, siglen, 0))
		return (0);
	if ((md = EVP_MD_CTX_new()) == NULL)
		return (0);
	ok = EVP_DigestVerifyInit(md, NULL, EVP_sha256(), NULL, pk) == 1 &&
	    EVP_DigestVerify(md, sig, siglen, msg, len) == 1;
	EVP_MD_CTX_free(md);
	return (ok ? 1 : 0);
}

/* Replaces a high S by n - S: the same signature, in its one form. */
static int
sig_low_s(uint8_t *sig, size_t *siglen)
{
	ECDSA_SIG		*es;
	const BIGNUM		*r, *s;
	BIGNUM			*n, *half, *ns = NULL, *nr = NULL;
	const unsigned char	*p = sig;
	unsigned char		*q = sig;
	int			 rc = -1, len;

	if ((es = d2i_ECDSA_SIG(NULL, &p, (long)*siglen)) == NULL)
		return (-1);
	ECDSA_SIG_get0(es, &r, &s);
	n = BN_bin2bn(p256_n, 32, NULL);
	half = BN_bin2bn(p256_half_n, 32, NULL);
	if (n == NULL || half == NULL)
		goto out;
	if (BN_cmp(s, half) <= 0) {
		rc = 0;
		goto out;
	}
	if ((ns = BN_new()) == NULL || !BN_sub(ns, n, s) ||
	    (nr = BN_dup(r)) == NULL || !ECDSA_SIG_set0(es, nr, ns))
		goto out;
	nr = ns = NULL;		/* owned by es now */
	if ((len = i2d_ECDSA_SIG(es, NULL)) <= 0 || len > DEV_SIG_MAX)
		goto out;
	*siglen = (size_t)i2d_ECDSA_SIG(es, &q);
	rc = 0;
out:
	BN_free(nr);
	BN_free(ns);
	BN_free(n);
	BN_free(half);
	ECDSA_SIG_free(es);
	return (rc);
}

int
devsig_sign(EVP_PKEY *pk, const uint8_t *msg, size_t len, uint8_t *sig,
    size_t *siglen)
{
	EVP_MD_CTX	*md;
	size_t		 n = DEV_SIG_MAX;
	int		 ok;

	if ((md = EVP_MD_CTX_new()) == NULL)
		return (-1);
	ok = EVP_DigestSignInit(md, NULL, EVP_sha256(), NULL, pk) == 1 &&
	    EVP_DigestSign(md, sig, &n, msg, len) == 1;
	EVP_MD_CTX_free(md);
	if (!ok)
		return (-1);
	*siglen = n;
	return (sig_low_s(sig, siglen));
}

int
devsig_pubkey_valid(const uint8_t pubkey[DEV_PUBKEY_LEN])
{
	EVP_PKEY	*pk;

	if ((pk = devsig_pubkey_from_raw(pubkey)) == NULL)
		return (0);
	EVP_PKEY_free(pk);
	return (1);
}

int
devsig_confirm_verify(const uint8_t pubkey[DEV_PUBKEY_LEN],
    const struct dev_confirm *c, uint8_t outcome, uint8_t flags,
    uint32_t counter, const uint8_t *sig, size_t siglen)
{
	uint8_t		 buf[DEVSIG_ENCODING_MAX];
	size_t		 len;
	EVP_PKEY	*pk;
	int		 ok;

	if (outcome == DEV_OUTCOME_BUSY ||
	    dev_outcome_flags(outcome) != (int)flags ||
	    !devsig_der_ok(sig, siglen, 1))
		return (0);
	if ((len = devsig_confirm_encode(c, outcome, flags, counter, buf,
	    sizeof(buf))) == 0)
		return (0);
	if ((pk = devsig_pubkey_from_raw(pubkey)) == NULL)
		return (0);
	ok = devsig_verify(pk, buf, len, sig, siglen);
	EVP_PKEY_free(pk);
	return (ok);
}

int
devsig_approval_verify(const uint8_t pubkey[DEV_PUBKEY_LEN],
    const struct dev_confirm *c, uint32_t counter, const uint8_t *sig,
    size_t siglen)
{
	return (devsig_confirm_verify(pubkey, c, DEV_OUTCOME_APPROVED,
	    DEV_FLAG_UP | DEV_FLAG_UV, counter, sig, siglen));
}

int
devsig_counter_ok(uint64_t last_accepted, uint32_t counter)
{
	return ((uint64_t)counter > last_accepted);
}

int
devsig_counter_exhausted(uint64_t last_accepted)
{
	return (last_accepted >= UINT32_MAX);
}

void
devsig_key_id(const uint8_t pubkey[DEV_PUBKEY_LEN],
    uint8_t out[DEV_KEY_ID_LEN])
{
	uint8_t	md[SHA256_DIGEST_LENGTH];

	SHA256(pubkey, DEV_PUBKEY_LEN, md);
	memcpy(out, md, DEV_KEY_ID_LEN);
}

int
devsig_pkey_id(EVP_PKEY *pk, uint8_t out[DEV_KEY_ID_LEN])
{
	uint8_t	raw[DEV_PUBKEY_LEN];

	if (devsig_pubkey_raw(pk, raw) != 0)
		return (-1);
	devsig_key_id(raw, out);
	return (0);
}

int
devsig_attest_verify(EVP_PKEY *const *cas, size_t ncas,
    const struct dev_info *in)
{
	uint8_t	buf[DEVSIG_ENCODING_MAX], kid[DEV_KEY_ID_LEN];
	size_t	len, i;

	if ((len = devsig_attest_encode(in->serial, in->model, in->pubkey,
	    buf, sizeof(buf))) == 0)
		return (0);
	for (i = 0; i < ncas; i++) {
		if (devsig_pkey_id(cas[i], kid) != 0 ||
		    memcmp(kid, in->attest_kid, DEV_KEY_ID_LEN) != 0)
			continue;
		return (devsig_verify(cas[i], buf, len, in->attest,
		    in->attest_len));
	}
	return (0);
}

/* One or more PEM "PUBLIC KEY" blocks; each must be a P-256 key. */
int
devsig_load_cas(const char *path, EVP_PKEY **cas, size_t max, size_t *n)
{
	FILE		*fp;
	EVP_PKEY	*pk;
	uint8_t		 raw[DEV_PUBKEY_LEN];

	*n = 0;
	if ((fp = fopen(path, "r")) == NULL)
		return (-1);
	while ((pk = PEM_read_PUBKEY(fp, NULL, NULL, NULL)) != NULL) {
		if (*n == max || devsig_pubkey_raw(pk, raw) == -1) {
			EVP_PKEY_free(pk);
			fclose(fp);
			devsig_free_cas(cas, *n);
			*n = 0;
			return (-1);
		}
		cas[(*n)++] = pk;
	}
	fclose(fp);
	return (*n > 0 ? 0 : -1);
}

void
devsig_free_cas(EVP_PKEY **cas, size_t n)
{
	size_t	i;

	for (i = 0; i < n; i++)
		EVP_PKEY_free(cas[i]);
}

void
devsig_fingerprint(const uint8_t pubkey[DEV_PUBKEY_LEN],
    char out[DEVSIG_FPR_LEN + 1])
{
	uint8_t		 md[SHA256_DIGEST_LENGTH];
	static const char hex[] = "0123456789ABCDEF";
	size_t		 i, o = 0;

	SHA256(pubkey, DEV_PUBKEY_LEN, md);
	for (i = 0; i < 16; i++) {
		if (i > 0 && i % 2 == 0)
			out[o++] = ' ';
		out[o++] = hex[md[i] >> 4];
		out[o++] = hex[md[i] & 0x0f];
	}
	out[o] = '\0';
}

