/*
 * The relying party's checks of webauthn.h. The bytes come from the
 * browser (base64url-decoded by the caller) and are bounded by it.
 */
#include <string.h>

#include <cbor.h>
#include <fido.h>
#include <fido/eddsa.h>
#include <fido/es256.h>
#include <fido/rs256.h>
#include <jansson.h>

#include "crypto.h"
#include "encoding.h"
#include "webauthn.h"

/* WebAuthn 6.1: rpIdHash, flags, signCount, then attested data. */
#define AD_FLAGS	32
#define AD_COUNT	33
#define AD_MIN		37
#define AD_UP		0x01
#define AD_UV		0x04
#define AD_AT		0x40
#define AD_ED		0x80

static const int	webauthn_algs[] = {
	WEBAUTHN_ES256, WEBAUTHN_EDDSA, WEBAUTHN_RS256
};

static int
webauthn_json_is(json_t *obj, const char *key, const char *want)
{
	const char	*v;

	v = json_string_value(json_object_get(obj, key));
	return (v != NULL && strcmp(v, want) == 0);
}

const char *
webauthn_client_data(const uint8_t *cd, size_t len, const char *type,
    const uint8_t challenge[WEBAUTHN_CHALLENGE_LEN], const char *origin,
    uint8_t hash[32])
{
	json_t		*obj, *cross;
	const char	*chal, *why;
	uint8_t		 got[WEBAUTHN_CHALLENGE_LEN + 3];
	int		 n;

	obj = json_loadb((const char *)cd, len, JSON_REJECT_DUPLICATES, NULL);
	why = NULL;
	if (obj == NULL || !json_is_object(obj))
		why = "client data is not a JSON object";
	else if (!webauthn_json_is(obj, "type", type))
		why = "client data type";
	else if (!webauthn_json_is(obj, "origin", origin))
		why = "client data origin";
	else if ((cross = json_object_get(obj, "crossOrigin")) != NULL &&
	    !json_is_false(cross))
		why = "client data cross-origin";
	else if ((chal = json_string_value(json_object_get(obj,
	    "challenge"))) == NULL || (n = base64url_decode(chal,
	    strlen(chal), got, sizeof(got))) != WEBAUTHN_CHALLENGE_LEN ||
	    !crypto_equal(got, challenge, WEBAUTHN_CHALLENGE_LEN))
		why = "client data challenge";
	json_decref(obj);
	if (why == NULL)
		crypto_sha256(cd, len, hash);
	return (why);
}

static int	webauthn_cbor_sane(const uint8_t *, size_t);

/*
 * The CBOR after the fixed fields (the credential's COSE key, the
 * extensions), which libfido2 hands to cbor_load: sane, as the
 * attestation object must be.
 */
static int
webauthn_auth_data_cbor(const uint8_t *ad, size_t len)
{
	size_t	at;

	if (ad[AD_FLAGS] & AD_AT) {
		if (len < AD_MIN + 18)
			return (0);
		at = AD_MIN + 18 + ((size_t)ad[AD_MIN + 16] << 8 |
		    ad[AD_MIN + 17]);
		return (at < len && webauthn_cbor_sane(ad + at, len - at));
	}
	if (ad[AD_FLAGS] & AD_ED)
		return (webauthn_cbor_sane(ad + AD_MIN, len - AD_MIN));
	return (len == AD_MIN);
}

/* rpIdHash and the flags every key's data must carry. */
static const char *
webauthn_auth_data(const uint8_t *ad, size_t len, const char *rp_id,
    uint8_t need)
{
	uint8_t	rp_hash[32];

	if (len < AD_MIN)
		return ("authenticator data too short");
	crypto_sha256(rp_id, strlen(rp_id), rp_hash);
	if (!crypto_equal(ad, rp_hash, sizeof(rp_hash)))
		return ("rpIdHash");
	if ((ad[AD_FLAGS] & AD_UP) == 0)
		return ("user not present");
	if ((ad[AD_FLAGS] & AD_UV) == 0)
		return ("user not verified");
	if ((ad[AD_FLAGS] & need) != need)
		return ("no attested credential data");
	if (!webauthn_auth_data_cbor(ad, len))
		return ("authenticator data: its CBOR");
	return (NULL);
}

/*
 * libcbor's cbor_load allocates what a header declares before it reads
 * the items (a five-byte array header asks for gigabytes), and frees
 * nested items recursively. So the headers are read first with its
 * streaming decoder: definite lengths only (CTAP2's canonical CBOR), no
 * more items declared than bytes remain, and few containers.
 */
#define CBOR_CONTAINERS_MAX	32

struct cbor_scan {
	size_t	left;		/* bytes after the current header */
	int	containers;
	int	bad;
};

static void
webauthn_scan_indefinite(void *arg)
{
	((struct cbor_scan *)arg)->bad = 1;
}

static void
webauthn_scan_array(void *arg, size_t n)
{
	struct cbor_scan	*sc = arg;

	if (n > sc->left || ++sc->containers > CBOR_CONTAINERS_MAX)
		sc->bad = 1;
}

static void
webauthn_scan_map(void *arg, size_t n)
{
	struct cbor_scan	*sc = arg;

	if (n > sc->left / 2 || ++sc->containers > CBOR_CONTAINERS_MAX)
		sc->bad = 1;
}

static int
webauthn_cbor_sane(const uint8_t *p, size_t len)
{
	struct cbor_callbacks		cb = cbor_empty_callbacks;
	struct cbor_decoder_result	r;
	struct cbor_scan		sc;
	size_t				off;

	cb.array_start = webauthn_scan_array;
	cb.map_start = webauthn_scan_map;
	cb.indef_array_start = webauthn_scan_indefinite;
	cb.indef_map_start = webauthn_scan_indefinite;
	cb.byte_string_start = webauthn_scan_indefinite;
	cb.string_start = webauthn_scan_indefinite;
	cb.indef_break = webauthn_scan_indefinite;
	memset(&sc, 0, sizeof(sc));
	for (off = 0; off < len; off += r.read) {
		/* The worst case: this header is one byte long. */
		sc.left = len - off - 1;
		r = cbor_stream_decode(p + off, len - off, &cb, &sc);
		if (r.status != CBOR_DECODER_FINISHED || r.read == 0 || sc.bad)
			return (0);
	}
	return (len > 0);
}

static int
webauthn_cbor_key(const cbor_item_t *k, const char *name)
{
	size_t	len = strlen(name);

	return (k != NULL && cbor_isa_string(k) &&
	    cbor_string_is_definite(k) &&
	    cbor_string_length(k) == len &&
	    memcmp(cbor_string_handle(k), name, len) == 0);
}

static const cbor_item_t *
webauthn_cbor_get(const cbor_item_t *map, const char *name)
{
	struct cbor_pair	*p;
	size_t			 i, n;

	if (!cbor_isa_map(map) || !cbor_map_is_definite(map))
		return (NULL);
	p = cbor_map_handle(map);
	n = cbor_map_size(map);
	for (i = 0; i < n; i++) {
		if (webauthn_cbor_key(p[i].key, name))
			return (p[i].value);
	}
	return (NULL);
}

static int
webauthn_cbor_bytes(const cbor_item_t *it, const uint8_t **ptr,
    size_t *len)
{
	if (it == NULL || !cbor_isa_bytestring(it) ||
	    !cbor_bytestring_is_definite(it))
		return (-1);
	*ptr = cbor_bytestring_handle(it);
	*len = cbor_bytestring_length(it);
	return (0);
}

/* The credential of authData: the algorithm libfido2 reads it as. */
static fido_cred_t *
webauthn_cred_read(const uint8_t *ad, size_t len, int *alg)
{
	fido_cred_t	*c;
	size_t		 i;

	for (i = 0; i < sizeof(webauthn_algs) / sizeof(webauthn_algs[0]);
	    i++) {
		if ((c = fido_cred_new()) == NULL)
			return (NULL);
		if (fido_cred_set_type(c, webauthn_algs[i]) == FIDO_OK &&
		    fido_cred_set_authdata_raw(c, ad, len) == FIDO_OK) {
			*alg = webauthn_algs[i];
			return (c);
		}
		fido_cred_free(&c);
	}
	return (NULL);
}

/* x5c's certificates into out: NULL, or what is wrong with them. */
static const char *
webauthn_x5c_keep(const cbor_item_t *x5c, struct webauthn_credential *out)
{
	const uint8_t	*der;
	size_t		 i, n, len, off;

	n = cbor_array_size(x5c);
	if (n < 1 || n > WEBAUTHN_X5C_MAX)
		return ("packed attestation: x5c count");
	off = 0;
	for (i = 0; i < n; i++) {
		if (webauthn_cbor_bytes(cbor_array_handle(x5c)[i], &der,
		    &len) == -1 || len == 0 ||
		    len > sizeof(out->x5c) - off)
			return ("packed attestation: x5c");
		memcpy(out->x5c + off, der, len);
		out->x5c_len[i] = len;
		off += len;
	}
	out->x5c_count = n;
	return (NULL);
}

/* "packed" (WebAuthn 8.2): self attestation, or by a certificate. */
static const char *
webauthn_packed(fido_cred_t *c, int alg, const cbor_item_t *stmt,
    const uint8_t cd_hash[32], const char *rp_id,
    struct webauthn_credential *out)
{
	const cbor_item_t	*a, *x5c;
	const uint8_t		*sig, *der;
	size_t			 sig_len, der_len;

	a = webauthn_cbor_get(stmt, "alg");
	if (a == NULL || !cbor_isa_negint(a) ||
	    -1 - (long long)cbor_get_int(a) != alg)
		return ("packed attestation: alg");
	if (webauthn_cbor_bytes(webauthn_cbor_get(stmt, "sig"), &sig,
	    &sig_len) == -1)
		return ("packed attestation: sig");
	if (fido_cred_set_fmt(c, "packed") != FIDO_OK ||
	    fido_cred_set_clientdata_hash(c, cd_hash, 32) != FIDO_OK ||
	    fido_cred_set_rp(c, rp_id, NULL) != FIDO_OK ||
	    fido_cred_set_sig(c, sig, sig_len) != FIDO_OK)
		return ("packed attestation: fields");
	if ((x5c = webauthn_cbor_get(stmt, "x5c")) == NULL) {
		out->attested = WEBAUTHN_ATT_SELF;
		return (fido_cred_verify_self(c) == FIDO_OK ? NULL :
		    "packed self attestation: signature");
	}
	if (!cbor_isa_array(x5c) || cbor_array_size(x5c) < 1 ||
	    webauthn_cbor_bytes(cbor_array_handle(x5c)[0], &der,
	    &der_len) == -1 || fido_cred_set_x509(c, der, der_len) != FIDO_OK)
		return ("packed attestation: x5c");
	if (fido_cred_verify(c) != FIDO_OK)
		return ("packed attestation: signature");
	out->attested = WEBAUTHN_ATT_X5C;
	return (webauthn_x5c_keep(x5c, out));
}

static const char *
webauthn_statement(fido_cred_t *c, int alg, const cbor_item_t *fmt,
    const cbor_item_t *stmt, const uint8_t cd_hash[32], const char *rp_id,
    struct webauthn_credential *out)
{
	if (stmt == NULL || !cbor_isa_map(stmt))
		return ("attStmt");
	if (webauthn_cbor_key(fmt, "none"))
		return (cbor_map_size(stmt) == 0 ? NULL : "none: attStmt");
	if (webauthn_cbor_key(fmt, "packed"))
		return (webauthn_packed(c, alg, stmt, cd_hash, rp_id, out));
	return ("attestation format");
}

static const char *
webauthn_cred_copy(fido_cred_t *c, int alg, struct webauthn_credential *out)
{
	if (fido_cred_id_len(c) == 0 || fido_cred_id_len(c) > sizeof(out->id) ||
	    fido_cred_pubkey_len(c) == 0 ||
	    fido_cred_pubkey_len(c) > sizeof(out->pk) ||
	    fido_cred_aaguid_len(c) != sizeof(out->aaguid))
		return ("credential sizes");
	out->alg = alg;
	out->id_len = fido_cred_id_len(c);
	memcpy(out->id, fido_cred_id_ptr(c), out->id_len);
	out->pk_len = fido_cred_pubkey_len(c);
	memcpy(out->pk, fido_cred_pubkey_ptr(c), out->pk_len);
	memcpy(out->aaguid, fido_cred_aaguid_ptr(c), sizeof(out->aaguid));
	out->sign_count = fido_cred_sigcount(c);
	return (NULL);
}

const char *
webauthn_attestation(const uint8_t *att, size_t len,
    const uint8_t cd_hash[32], const char *rp_id,
    struct webauthn_credential *out)
{
	struct cbor_load_result	 res;
	cbor_item_t		*obj;
	fido_cred_t		*c;
	const uint8_t		*ad;
	size_t			 ad_len;
	const char		*why;
	int			 alg;

	memset(out, 0, sizeof(*out));
	c = NULL;
	obj = NULL;
	if (!webauthn_cbor_sane(att, len))
		why = "attestation object is not canonical CBOR";
	else if ((obj = cbor_load(att, len, &res)) == NULL ||
	    res.error.code != CBOR_ERR_NONE || res.read != len)
		why = "attestation object is not CBOR";
	else if (webauthn_cbor_bytes(webauthn_cbor_get(obj, "authData"), &ad,
	    &ad_len) == -1)
		why = "authData";
	else if ((why = webauthn_auth_data(ad, ad_len, rp_id, AD_AT)) != NULL)
		;
	else if ((c = webauthn_cred_read(ad, ad_len, &alg)) == NULL)
		why = "credential data or algorithm";
	else if ((why = webauthn_statement(c, alg, webauthn_cbor_get(obj,
	    "fmt"), webauthn_cbor_get(obj, "attStmt"), cd_hash, rp_id,
	    out)) == NULL)
		why = webauthn_cred_copy(c, alg, out);
	fido_cred_free(&c);
	if (obj != NULL)
		cbor_decref(&obj);
	return (why);
}

static int
webauthn_verify_key(const fido_assert_t *a, int alg, const uint8_t *pk,
    size_t pk_len)
{
	es256_pk_t	*es;
	eddsa_pk_t	*ed;
	rs256_pk_t	*rs;
	int		 r = FIDO_ERR_INVALID_ARGUMENT;

	switch (alg) {
	case WEBAUTHN_ES256:
		if ((es = es256_pk_new()) != NULL &&
		    es256_pk_from_ptr(es, pk, pk_len) == FIDO_OK)
			r = fido_assert_verify(a, 0, COSE_ES256, es);
		es256_pk_free(&es);
		break;
	case WEBAUTHN_EDDSA:
		if ((ed = eddsa_pk_new()) != NULL &&
		    eddsa_pk_from_ptr(ed, pk, pk_len) == FIDO_OK)
			r = fido_assert_verify(a, 0, COSE_EDDSA, ed);
		eddsa_pk_free(&ed);
		break;
	case WEBAUTHN_RS256:
		if ((rs = rs256_pk_new()) != NULL &&
		    rs256_pk_from_ptr(rs, pk, pk_len) == FIDO_OK)
			r = fido_assert_verify(a, 0, COSE_RS256, rs);
		rs256_pk_free(&rs);
		break;
	}
	return (r);
}

const char *
webauthn_assertion(int alg, const uint8_t *pk, size_t pk_len,
    const uint8_t *ad, size_t ad_len, const uint8_t cd_hash[32],
    const uint8_t *sig, size_t sig_len, const char *rp_id, uint32_t *count)
{
	fido_assert_t	*a;
	const char	*why;

	if ((why = webauthn_auth_data(ad, ad_len, rp_id, 0)) != NULL)
		return (why);
	if ((a = fido_assert_new()) == NULL)
		return ("memory");
	if (fido_assert_set_count(a, 1) != FIDO_OK ||
	    fido_assert_set_rp(a, rp_id) != FIDO_OK ||
	    fido_assert_set_clientdata_hash(a, cd_hash, 32) != FIDO_OK ||
	    fido_assert_set_up(a, FIDO_OPT_TRUE) != FIDO_OK ||
	    fido_assert_set_uv(a, FIDO_OPT_TRUE) != FIDO_OK ||
	    fido_assert_set_authdata_raw(a, 0, ad, ad_len) != FIDO_OK ||
	    fido_assert_set_sig(a, 0, sig, sig_len) != FIDO_OK)
		why = "assertion fields";
	else if (webauthn_verify_key(a, alg, pk, pk_len) != FIDO_OK)
		why = "assertion signature";
	else
		*count = fido_assert_sigcount(a, 0);
	fido_assert_free(&a);
	return (why);
}
