/*
 * Compact JWS verification (see jws.h). Only the key set registered for
 * the client is used: a header's jwk, jku, x5u or x5c is ignored, never
 * a source of keys.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <openssl/bn.h>
#include <openssl/core_names.h>
#include <openssl/ecdsa.h>
#include <openssl/evp.h>
#include <openssl/param_build.h>
#include <openssl/rsa.h>

#include "encoding.h"
#include "jws.h"
#include "pkey_cache.h"

#define JWS_HEADER_MAX		1024
#define JWS_RSA_MIN_BITS	2048
#define JWS_RSA_MAX_BITS	8192
#define JWS_SIG_MAX		(JWS_RSA_MAX_BITS / 8)
/* RFC 7518 3.5: the PSS salt is as long as the hash's output. */
#define JWS_PSS_SALT		32

enum jws_alg {
	JWS_PS256,
	JWS_ES256,
	JWS_EDDSA,
	JWS_ALG_COUNT
};

static const struct {
	const char	*name;
	const char	*kty;
} jws_algs[JWS_ALG_COUNT] = {
	{ "PS256", "RSA" },
	{ "ES256", "EC" },
	{ "EdDSA", "OKP" },
};

static const char *const jws_private_members[] = {
	"d", "p", "q", "dp", "dq", "qi", "oth", "k", NULL
};

static int
jws_alg_find(const char *name)
{
	int	i;

	for (i = 0; i < JWS_ALG_COUNT; i++) {
		if (strcmp(name, jws_algs[i].name) == 0)
			return (i);
	}
	return (-1);
}

static int
jws_kty_alg(const char *kty)
{
	int	i;

	for (i = 0; i < JWS_ALG_COUNT; i++) {
		if (strcmp(kty, jws_algs[i].kty) == 0)
			return (i);
	}
	return (-1);
}

/* 1 when the key's member name is absent or the string value. */
static int
jws_absent_or(const json_t *key, const char *name, const char *value)
{
	const json_t	*v;

	if ((v = json_object_get(key, name)) == NULL)
		return (1);
	return (json_is_string(v) && strcmp(json_string_value(v), value) == 0);
}

static const char *
jws_private_member(const json_t *key)
{
	int	i;

	for (i = 0; jws_private_members[i] != NULL; i++) {
		if (json_object_get(key, jws_private_members[i]) != NULL)
			return (jws_private_members[i]);
	}
	return (NULL);
}

/* A base64url member of a key, decoded; its length or -1. */
static int
jws_member_bytes(const json_t *key, const char *name, uint8_t *out,
    size_t outlen)
{
	const char	*s;

	if ((s = json_string_value(json_object_get(key, name))) == NULL)
		return (-1);
	return (base64url_decode(s, strlen(s), out, outlen));
}

/*
 * A P-256 coordinate into 32 bytes. RFC 7518 6.2.1.2 asks the full 32,
 * but some libraries drop leading zero bytes (Debian's Authlib 1.2 does,
 * for one key in about 128): those are padded, the point then checked.
 */
static int
jws_coordinate(const json_t *key, const char *name, uint8_t out[32])
{
	uint8_t	buf[32];
	int	n;

	if ((n = jws_member_bytes(key, name, buf, sizeof(buf))) <= 0)
		return (-1);
	memset(out, 0, 32 - (size_t)n);
	memcpy(out + 32 - n, buf, (size_t)n);
	return (0);
}

static EVP_PKEY *
jws_pkey_fromdata(const char *type, OSSL_PARAM *params)
{
	EVP_PKEY_CTX	*ctx;
	EVP_PKEY	*pkey;

	pkey = NULL;
	if ((ctx = EVP_PKEY_CTX_new_from_name(NULL, type, NULL)) == NULL)
		return (NULL);
	if (EVP_PKEY_fromdata_init(ctx) <= 0 ||
	    EVP_PKEY_fromdata(ctx, &pkey, EVP_PKEY_PUBLIC_KEY, params) <= 0)
		pkey = NULL;
	EVP_PKEY_CTX_free(ctx);
	return (pkey);
}

static EVP_PKEY *
jws_key_rsa(const json_t *key)
{
	uint8_t		 n[JWS_RSA_MAX_BITS / 8], e[8], id[32];
	int		 nlen, elen;
	BIGNUM		*bn_n, *bn_e;
	OSSL_PARAM_BLD	*bld;
	OSSL_PARAM	*params;
	EVP_PKEY	*pkey;

	if ((nlen = jws_member_bytes(key, "n", n, sizeof(n))) <= 0 ||
	    (elen = jws_member_bytes(key, "e", e, sizeof(e))) <= 0)
		return (NULL);
	if ((pkey = pkey_cache_get(EVP_PKEY_RSA, n, (size_t)nlen, e,
	    (size_t)elen, id)) != NULL)
		return (pkey);
	params = NULL;
	bld = OSSL_PARAM_BLD_new();
	bn_n = BN_bin2bn(n, nlen, NULL);
	bn_e = BN_bin2bn(e, elen, NULL);
	if (bld == NULL || bn_n == NULL || bn_e == NULL)
		goto done;
	if (BN_num_bits(bn_n) < JWS_RSA_MIN_BITS || !BN_is_odd(bn_e) ||
	    BN_is_one(bn_e))
		goto done;
	if (OSSL_PARAM_BLD_push_BN(bld, OSSL_PKEY_PARAM_RSA_N, bn_n) != 1 ||
	    OSSL_PARAM_BLD_push_BN(bld, OSSL_PKEY_PARAM_RSA_E, bn_e) != 1 ||
	    (params = OSSL_PARAM_BLD_to_param(bld)) == NULL)
		goto done;
	if ((pkey = jws_pkey_fromdata("RSA", params)) != NULL)
		pkey_cache_put(id, pkey);
done:
	OSSL_PARAM_free(params);
	OSSL_PARAM_BLD_free(bld);
	BN_free(bn_n);
	BN_free(bn_e);
	return (pkey);
}

static EVP_PKEY *
jws_key_ec(const json_t *key)
{
	static char	 group[] = "prime256v1";
	uint8_t		 pub[65], id[32];
	OSSL_PARAM	 params[3];
	EVP_PKEY_CTX	*check;
	EVP_PKEY	*pkey;

	pub[0] = 0x04;
	if (!jws_absent_or(key, "crv", "P-256") ||
	    json_object_get(key, "crv") == NULL ||
	    jws_coordinate(key, "x", pub + 1) == -1 ||
	    jws_coordinate(key, "y", pub + 33) == -1)
		return (NULL);
	if ((pkey = pkey_cache_get(EVP_PKEY_EC, pub, sizeof(pub), NULL, 0,
	    id)) != NULL)
		return (pkey);
	params[0] = OSSL_PARAM_construct_utf8_string(
	    OSSL_PKEY_PARAM_GROUP_NAME, group, 0);
	params[1] = OSSL_PARAM_construct_octet_string(
	    OSSL_PKEY_PARAM_PUB_KEY, pub, sizeof(pub));
	params[2] = OSSL_PARAM_construct_end();
	if ((pkey = jws_pkey_fromdata("EC", params)) == NULL)
		return (NULL);
	/*
	 * A point off the curve is refused here, not left to the verify.
	 * The quick check (range, on the curve, not infinity) is the whole
	 * validation on P-256, whose order is prime: the full check's
	 * further multiplication by the order costs a signature's time and
	 * finds nothing more.
	 */
	check = EVP_PKEY_CTX_new_from_pkey(NULL, pkey, NULL);
	if (check == NULL || EVP_PKEY_public_check_quick(check) != 1) {
		EVP_PKEY_free(pkey);
		pkey = NULL;
	}
	EVP_PKEY_CTX_free(check);
	if (pkey != NULL)
		pkey_cache_put(id, pkey);
	return (pkey);
}

static EVP_PKEY *
jws_key_okp(const json_t *key)
{
	uint8_t		 x[32], id[32];
	EVP_PKEY	*pkey;

	if (!jws_absent_or(key, "crv", "Ed25519") ||
	    json_object_get(key, "crv") == NULL ||
	    jws_member_bytes(key, "x", x, sizeof(x)) != 32)
		return (NULL);
	if ((pkey = pkey_cache_get(EVP_PKEY_ED25519, x, sizeof(x), NULL, 0,
	    id)) != NULL)
		return (pkey);
	if ((pkey = EVP_PKEY_new_raw_public_key(EVP_PKEY_ED25519, NULL, x,
	    sizeof(x))) != NULL)
		pkey_cache_put(id, pkey);
	return (pkey);
}

static EVP_PKEY *
jws_key_load(const json_t *key)
{
	const char	*kty;

	if ((kty = json_string_value(json_object_get(key, "kty"))) == NULL)
		return (NULL);
	switch (jws_kty_alg(kty)) {
	case JWS_PS256:
		return (jws_key_rsa(key));
	case JWS_ES256:
		return (jws_key_ec(key));
	case JWS_EDDSA:
		return (jws_key_okp(key));
	default:
		return (NULL);
	}
}

/* Whether a key of the set may verify a signature of alg under kid. */
static int
jws_key_fits(const json_t *key, int alg, const char *kid)
{
	if (!json_is_object(key) || jws_private_member(key) != NULL)
		return (0);
	if (!jws_absent_or(key, "kty", jws_algs[alg].kty) ||
	    json_object_get(key, "kty") == NULL)
		return (0);
	if (!jws_absent_or(key, "use", "sig") ||
	    !jws_absent_or(key, "alg", jws_algs[alg].name))
		return (0);
	if (kid != NULL) {
		return (json_is_string(json_object_get(key, "kid")) &&
		    strcmp(json_string_value(json_object_get(key, "kid")),
		    kid) == 0);
	}
	return (1);
}

/* r || s (RFC 7518 3.4) as the DER ECDSA-Sig-Value OpenSSL verifies. */
static size_t
jws_ecdsa_der(const uint8_t sig[64], uint8_t *out, size_t outlen)
{
	ECDSA_SIG	*es;
	BIGNUM		*r, *s;
	uint8_t		*p;
	int		 len;

	r = BN_bin2bn(sig, 32, NULL);
	s = BN_bin2bn(sig + 32, 32, NULL);
	if (r == NULL || s == NULL || (es = ECDSA_SIG_new()) == NULL) {
		BN_free(r);
		BN_free(s);
		return (0);
	}
	(void)ECDSA_SIG_set0(es, r, s);
	len = i2d_ECDSA_SIG(es, NULL);
	if (len <= 0 || (size_t)len > outlen) {
		ECDSA_SIG_free(es);
		return (0);
	}
	p = out;
	len = i2d_ECDSA_SIG(es, &p);
	ECDSA_SIG_free(es);
	return (len > 0 ? (size_t)len : 0);
}

static int
jws_signature_ok(int alg, EVP_PKEY *pkey, const uint8_t *sig, size_t siglen,
    const char *input, size_t inputlen)
{
	EVP_MD_CTX	*mctx;
	EVP_PKEY_CTX	*pctx;
	uint8_t		 der[80];
	int		 ok;

	ok = 0;
	if ((mctx = EVP_MD_CTX_new()) == NULL)
		return (0);
	switch (alg) {
	case JWS_PS256:
		if (EVP_DigestVerifyInit(mctx, &pctx, EVP_sha256(), NULL,
		    pkey) != 1 ||
		    EVP_PKEY_CTX_set_rsa_padding(pctx,
		    RSA_PKCS1_PSS_PADDING) <= 0 ||
		    EVP_PKEY_CTX_set_rsa_pss_saltlen(pctx, JWS_PSS_SALT) <= 0 ||
		    EVP_PKEY_CTX_set_rsa_mgf1_md(pctx, EVP_sha256()) <= 0)
			goto done;
		break;
	case JWS_ES256:
		if (siglen != 64 ||
		    (siglen = jws_ecdsa_der(sig, der, sizeof(der))) == 0 ||
		    EVP_DigestVerifyInit(mctx, NULL, EVP_sha256(), NULL,
		    pkey) != 1)
			goto done;
		sig = der;
		break;
	case JWS_EDDSA:
		if (EVP_DigestVerifyInit(mctx, NULL, NULL, NULL, pkey) != 1)
			goto done;
		break;
	default:
		goto done;
	}
	ok = EVP_DigestVerify(mctx, sig, siglen, (const uint8_t *)input,
	    inputlen) == 1;
done:
	EVP_MD_CTX_free(mctx);
	return (ok);
}

/*
 * The signature of a parsed JWS against the keys of jwks; with_kid: a
 * header's kid picks the key (a DPoP proof's own key has none to match).
 */
static enum jws_result
jws_verify_with(const json_t *hdr, const json_t *jwks, int with_kid,
    const uint8_t *sig, size_t siglen, const char *input, size_t inputlen,
    const char **algname)
{
	const json_t	*kidv, *key, *keys;
	const char	*name, *kid;
	EVP_PKEY	*pkey;
	size_t		 i;
	int		 alg, found, ok;

	if ((name = json_string_value(json_object_get(hdr, "alg"))) == NULL)
		return (JWS_MALFORMED);
	if ((alg = jws_alg_find(name)) < 0 ||
	    json_object_get(hdr, "crit") != NULL)
		return (JWS_ALG_REFUSED);
	kidv = json_object_get(hdr, "kid");
	if (kidv != NULL && !json_is_string(kidv))
		return (JWS_MALFORMED);
	kid = with_kid ? json_string_value(kidv) : NULL;
	keys = json_object_get(jwks, "keys");
	found = 0;
	for (i = 0; i < json_array_size(keys) && i < JWS_KEYS_MAX; i++) {
		key = json_array_get(keys, i);
		if (!jws_key_fits(key, alg, kid) ||
		    (pkey = jws_key_load(key)) == NULL)
			continue;
		found = 1;
		ok = jws_signature_ok(alg, pkey, sig, siglen, input, inputlen);
		EVP_PKEY_free(pkey);
		if (ok) {
			if (algname != NULL)
				*algname = jws_algs[alg].name;
			return (JWS_OK);
		}
	}
	return (found ? JWS_BAD_SIGNATURE : JWS_NO_KEY);
}

/* A DPoP proof's header: its typ, and its jwk as a set of one key. */
static json_t *
jws_dpop_keys(const json_t *hdr, json_t **jwk)
{
	const char	*typ;

	*jwk = json_object_get(hdr, "jwk");
	typ = json_string_value(json_object_get(hdr, "typ"));
	if (typ == NULL || strcmp(typ, "dpop+jwt") != 0 ||
	    !json_is_object(*jwk) || jws_private_member(*jwk) != NULL)
		return (NULL);
	return (json_pack("{s:[O]}", "keys", *jwk));
}

/*
 * Both forms: jwks given (a client's set), or NULL for a DPoP proof,
 * whose header carries the key (and thumb gets its thumbprint).
 */
static enum jws_result
jws_verify_compact(const char *compact, const json_t *jwks, uint8_t *payload,
    size_t payloadmax, size_t *payloadlen, const char **algname,
    char *thumb)
{
	const char		*dot1, *dot2;
	uint8_t			 header[JWS_HEADER_MAX], sig[JWS_SIG_MAX];
	int			 hlen, plen, slen;
	json_t			*hdr, *own, *jwk;
	enum jws_result		 r;

	*payloadlen = 0;
	if (strnlen(compact, JWS_COMPACT_MAX + 1) > JWS_COMPACT_MAX)
		return (JWS_MALFORMED);
	if ((dot1 = strchr(compact, '.')) == NULL ||
	    (dot2 = strchr(dot1 + 1, '.')) == NULL ||
	    strchr(dot2 + 1, '.') != NULL)
		return (JWS_MALFORMED);
	hlen = base64url_decode(compact, (size_t)(dot1 - compact), header,
	    sizeof(header));
	plen = base64url_decode(dot1 + 1, (size_t)(dot2 - dot1 - 1), payload,
	    payloadmax);
	slen = base64url_decode(dot2 + 1, strlen(dot2 + 1), sig, sizeof(sig));
	if (hlen <= 0 || plen <= 0 || slen <= 0)
		return (JWS_MALFORMED);
	hdr = json_loadb((const char *)header, (size_t)hlen,
	    JSON_REJECT_DUPLICATES, NULL);
	if (!json_is_object(hdr)) {
		json_decref(hdr);
		return (JWS_MALFORMED);
	}
	own = jwk = NULL;
	if (jwks == NULL && (jwks = own = jws_dpop_keys(hdr, &jwk)) == NULL) {
		json_decref(hdr);
		return (JWS_NOT_DPOP);
	}
	r = jws_verify_with(hdr, jwks, own == NULL, sig, (size_t)slen,
	    compact, (size_t)(dot2 - compact), algname);
	if (r == JWS_OK && own != NULL && jws_thumbprint(jwk, thumb) == -1)
		r = JWS_NO_KEY;
	json_decref(own);
	json_decref(hdr);
	if (r == JWS_OK)
		*payloadlen = (size_t)plen;
	return (r);
}

enum jws_result
jws_verify(const char *compact, const json_t *jwks, uint8_t *payload,
    size_t payloadmax, size_t *payloadlen, const char **algname)
{
	if (jwks == NULL)
		return (JWS_NO_KEY);
	return (jws_verify_compact(compact, jwks, payload, payloadmax,
	    payloadlen, algname, NULL));
}

enum jws_result
jws_verify_dpop(const char *compact, uint8_t *payload, size_t payloadmax,
    size_t *payloadlen, char thumb[JWS_THUMBPRINT_LEN + 1])
{
	return (jws_verify_compact(compact, NULL, payload, payloadmax,
	    payloadlen, NULL, thumb));
}

/* RFC 7638: the required members of the key's type, sorted, compact. */
int
jws_thumbprint(const json_t *jwk, char out[JWS_THUMBPRINT_LEN + 1])
{
	static const char *const	 members[][5] = {
		{ "RSA", "e", "kty", "n", NULL },
		{ "EC", "crv", "kty", "x", "y" },
		{ "OKP", "crv", "kty", "x", NULL },
	};
	const char			*kty, *v;
	json_t				*canon;
	char				*text;
	uint8_t				 digest[32];
	size_t				 m, i;
	int				 n;

	if ((kty = json_string_value(json_object_get(jwk, "kty"))) == NULL)
		return (-1);
	for (m = 0; m < 3 && strcmp(members[m][0], kty) != 0; m++)
		;
	if (m == 3 || (canon = json_object()) == NULL)
		return (-1);
	for (i = 1; i < 5 && members[m][i] != NULL; i++) {
		v = json_string_value(json_object_get(jwk, members[m][i]));
		if (v == NULL) {
			json_decref(canon);
			return (-1);
		}
		json_object_set_new(canon, members[m][i], json_string(v));
	}
	text = json_dumps(canon, JSON_COMPACT | JSON_SORT_KEYS);
	json_decref(canon);
	if (text == NULL)
		return (-1);
	if (EVP_Digest(text, strlen(text), digest, NULL, EVP_sha256(),
	    NULL) != 1) {
		free(text);
		return (-1);
	}
	free(text);
	n = base64url_encode(digest, sizeof(digest), out,
	    JWS_THUMBPRINT_LEN + 1);
	return (n == JWS_THUMBPRINT_LEN ? 0 : -1);
}

static int
jws_key_check(const json_t *key, size_t i, const json_t *keys, char *why,
    size_t whylen)
{
	const char	*kty, *member, *kid, *other;
	EVP_PKEY	*pkey;
	size_t		 j;
	int		 alg;

	if (!json_is_object(key)) {
		(void)snprintf(why, whylen, "key %zu is not an object", i);
		return (-1);
	}
	if ((member = jws_private_member(key)) != NULL) {
		(void)snprintf(why, whylen, "key %zu has the private member "
		    "\"%s\": register public keys only", i, member);
		return (-1);
	}
	kty = json_string_value(json_object_get(key, "kty"));
	if (kty == NULL || (alg = jws_kty_alg(kty)) < 0) {
		(void)snprintf(why, whylen, "key %zu: kty must be RSA, EC "
		    "(P-256) or OKP (Ed25519)", i);
		return (-1);
	}
	if (!jws_absent_or(key, "use", "sig") ||
	    !jws_absent_or(key, "alg", jws_algs[alg].name)) {
		(void)snprintf(why, whylen, "key %zu: use must be sig and alg "
		    "%s, when present", i, jws_algs[alg].name);
		return (-1);
	}
	if (json_object_get(key, "kid") != NULL) {
		if ((kid = json_string_value(json_object_get(key, "kid"))) ==
		    NULL) {
			(void)snprintf(why, whylen, "key %zu: kid is not a "
			    "string", i);
			return (-1);
		}
		for (j = 0; j < i; j++) {
			other = json_string_value(json_object_get(
			    json_array_get(keys, j), "kid"));
			if (other != NULL && strcmp(other, kid) == 0) {
				(void)snprintf(why, whylen, "key %zu: kid "
				    "\"%s\" is taken by key %zu", i, kid, j);
				return (-1);
			}
		}
	}
	if ((pkey = jws_key_load(key)) == NULL) {
		(void)snprintf(why, whylen, "key %zu is not a usable public key "
		    "(RSA of %d to %d bits, a P-256 point on the curve, or "
		    "Ed25519 of 32 bytes)", i, JWS_RSA_MIN_BITS,
		    JWS_RSA_MAX_BITS);
		return (-1);
	}
	EVP_PKEY_free(pkey);
	return (0);
}

int
jws_jwks_check(const json_t *jwks, char *why, size_t whylen)
{
	const json_t	*keys;
	size_t		 i;

	keys = json_object_get(jwks, "keys");
	if (!json_is_object(jwks) || !json_is_array(keys) ||
	    json_array_size(keys) == 0 ||
	    json_array_size(keys) > JWS_KEYS_MAX) {
		(void)snprintf(why, whylen, "not a JWK Set of 1 to %d keys "
		    "({\"keys\": [...]})", JWS_KEYS_MAX);
		return (-1);
	}
	for (i = 0; i < json_array_size(keys); i++) {
		if (jws_key_check(json_array_get(keys, i), i, keys, why,
		    whylen) == -1)
			return (-1);
	}
	return (0);
}

const char *
jws_result_text(enum jws_result r)
{
	switch (r) {
	case JWS_OK:
		return ("verified");
	case JWS_MALFORMED:
		return ("not a compact JWS");
	case JWS_ALG_REFUSED:
		return ("alg must be PS256, ES256 or EdDSA, without crit");
	case JWS_NO_KEY:
		return ("no registered key fits its alg and kid");
	case JWS_BAD_SIGNATURE:
		return ("its signature does not verify");
	case JWS_NOT_DPOP:
		return ("its header lacks typ dpop+jwt or a public jwk");
	}
	return ("refused");
}
