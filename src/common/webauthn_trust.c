/*
 * The attestation trust check of webauthn_trust.h, on OpenSSL. The
 * certificates come from the browser (through webauthn_attestation):
 * each is parsed over exactly its own bytes.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <openssl/err.h>
#include <openssl/evp.h>
#include <openssl/objects.h>
#include <openssl/pem.h>
#include <openssl/x509.h>
#include <openssl/x509v3.h>

#include "encoding.h"
#include "webauthn_trust.h"

#define WEBAUTHN_AAGUID_SEP	" \t\r\n,"
#define WEBAUTHN_ATT_OU		"Authenticator Attestation"

/* id-fido-gen-ce-aaguid, 1.3.6.1.4.1.45724.1.1.4, as DER content. */
static const uint8_t	webauthn_aaguid_oid[] = {
	0x2b, 0x06, 0x01, 0x04, 0x01, 0x82, 0xe5, 0x1c, 0x01, 0x01, 0x04
};

struct webauthn_trust {
	X509_STORE	*store;
	STACK_OF(X509)	*roots;		/* the same, for the batch leaves */
	uint8_t		 aaguids[WEBAUTHN_AAGUIDS_MAX][16];
	size_t		 naaguid;
};

static int
webauthn_trust_aaguids(struct webauthn_trust *t, const char *list,
    char *err, size_t errlen)
{
	char		uuid[UUID_TEXT_LEN + 1];
	size_t		len;

	for (;;) {
		list += strspn(list, WEBAUTHN_AAGUID_SEP);
		if (*list == '\0')
			break;
		len = strcspn(list, WEBAUTHN_AAGUID_SEP);
		if (t->naaguid == WEBAUTHN_AAGUIDS_MAX) {
			(void)snprintf(err, errlen, "AAGUIDs: more than %d",
			    WEBAUTHN_AAGUIDS_MAX);
			return (-1);
		}
		if (len == UUID_TEXT_LEN) {
			memcpy(uuid, list, len);
			uuid[len] = '\0';
		}
		if (len != UUID_TEXT_LEN ||
		    uuid_decode(uuid, t->aaguids[t->naaguid]) == -1) {
			(void)snprintf(err, errlen, "AAGUID %zu \"%.*s\" is "
			    "not a UUID 8-4-4-4-12", t->naaguid + 1,
			    (int)(len > 40 ? 40 : len), list);
			return (-1);
		}
		t->naaguid++;
		list += len;
	}
	if (t->naaguid == 0) {
		(void)snprintf(err, errlen, "AAGUIDs: none listed");
		return (-1);
	}
	return (0);
}

/* An encrypted PEM block is refused, never a prompt for its password. */
static int
webauthn_trust_no_pass(char *buf, int size, int rw, void *arg)
{
	(void)buf;
	(void)size;
	(void)rw;
	(void)arg;
	return (-1);
}

static int
webauthn_trust_roots(struct webauthn_trust *t, const char *path, char *err,
    size_t errlen)
{
	FILE		*fp;
	X509		*x;
	const char	*why = NULL;
	unsigned long	 e;
	int		 n = 0;

	if ((fp = fopen(path, "r")) == NULL) {
		(void)snprintf(err, errlen, "%s: %s", path, strerror(errno));
		return (-1);
	}
	ERR_clear_error();
	while (why == NULL && (x = PEM_read_X509(fp, NULL,
	    webauthn_trust_no_pass, NULL)) != NULL) {
		n++;
		if (!sk_X509_push(t->roots, x)) {
			X509_free(x);
			why = "out of memory";
		} else if (X509_STORE_add_cert(t->store, x) != 1)
			why = "not added to the store";
	}
	/* The end of the file reads as "no start line", all else is wrong. */
	e = ERR_peek_last_error();
	(void)fclose(fp);
	ERR_clear_error();
	if (why != NULL) {
		(void)snprintf(err, errlen, "%s: certificate %d: %s", path, n,
		    why);
		return (-1);
	}
	if (ERR_GET_LIB(e) != ERR_LIB_PEM ||
	    ERR_GET_REASON(e) != PEM_R_NO_START_LINE) {
		(void)snprintf(err, errlen, "%s: certificate %d is not a "
		    "readable PEM certificate", path, n + 1);
		return (-1);
	}
	if (n == 0) {
		(void)snprintf(err, errlen, "%s: no certificate", path);
		return (-1);
	}
	return (0);
}

struct webauthn_trust *
webauthn_trust_load(const char *roots, const char *aaguids, char *err,
    size_t errlen)
{
	struct webauthn_trust	*t;

	if ((t = calloc(1, sizeof(*t))) == NULL ||
	    (t->store = X509_STORE_new()) == NULL ||
	    (t->roots = sk_X509_new_null()) == NULL) {
		(void)snprintf(err, errlen, "out of memory");
		webauthn_trust_free(t);
		return (NULL);
	}
	if (webauthn_trust_aaguids(t, aaguids, err, errlen) == -1 ||
	    webauthn_trust_roots(t, roots, err, errlen) == -1) {
		webauthn_trust_free(t);
		return (NULL);
	}
	return (t);
}

void
webauthn_trust_free(struct webauthn_trust *t)
{
	if (t == NULL)
		return;
	X509_STORE_free(t->store);
	sk_X509_pop_free(t->roots, X509_free);
	free(t);
}

void
webauthn_aaguid_text(const uint8_t aaguid[16], char out[37])
{
	uuid_encode(aaguid, out);
}

static int
webauthn_trust_listed(const struct webauthn_trust *t,
    const uint8_t aaguid[16])
{
	size_t		i;

	for (i = 0; i < t->naaguid; i++) {
		if (memcmp(t->aaguids[i], aaguid, 16) == 0)
			return (1);
	}
	return (0);
}

/* x5c as the leaf and the rest: NULL, or what is wrong with them. */
static const char *
webauthn_trust_x5c(const struct webauthn_credential *c, X509 **leaf,
    STACK_OF(X509) *rest)
{
	const uint8_t	*p, *start;
	X509		*x;
	size_t		 i, off;

	if (c->x5c_count < 1 || c->x5c_count > WEBAUTHN_X5C_MAX)
		return ("x5c count");
	for (i = 0, off = 0; i < c->x5c_count; i++) {
		if (c->x5c_len[i] == 0 || c->x5c_len[i] > sizeof(c->x5c) - off)
			return ("x5c lengths");
		start = p = c->x5c + off;
		x = d2i_X509(NULL, &p, (long)c->x5c_len[i]);
		if (x == NULL || p != start + c->x5c_len[i]) {
			X509_free(x);
			return ("x5c: a certificate is not DER");
		}
		if (i == 0)
			*leaf = x;
		else if (!sk_X509_push(rest, x)) {
			X509_free(x);
			return ("x5c: out of memory");
		}
		off += c->x5c_len[i];
	}
	return (NULL);
}

/* The name has exactly one nid, non-empty, and want when not NULL. */
static int
webauthn_trust_name_has(const X509_NAME *name, int nid, const char *want)
{
	unsigned char	*utf8;
	int		 i, len, ok;

	if ((i = X509_NAME_get_index_by_NID(name, nid, -1)) < 0 ||
	    X509_NAME_get_index_by_NID(name, nid, i) >= 0)
		return (0);
	len = ASN1_STRING_to_UTF8(&utf8,
	    X509_NAME_ENTRY_get_data(X509_NAME_get_entry(name, i)));
	if (len < 0)
		return (0);
	ok = len > 0 && (want == NULL || ((size_t)len == strlen(want) &&
	    memcmp(utf8, want, len) == 0));
	OPENSSL_free(utf8);
	return (ok);
}

/* Basic Constraints absent or CA false (once, readable). */
static int
webauthn_trust_not_ca(X509 *x)
{
	BASIC_CONSTRAINTS	*bc;
	int			 crit, ca;

	if ((bc = X509_get_ext_d2i(x, NID_basic_constraints, &crit,
	    NULL)) == NULL)
		return (crit == -1);
	ca = bc->ca;
	BASIC_CONSTRAINTS_free(bc);
	return (!ca);
}

/* id-fido-gen-ce-aaguid, when present: not critical, the key's AAGUID. */
static const char *
webauthn_trust_aaguid_ext(X509 *x, const uint8_t aaguid[16])
{
	X509_EXTENSION		*ext, *found = NULL;
	const ASN1_OBJECT	*obj;
	const ASN1_OCTET_STRING	*v;
	const unsigned char	*d;
	int			 i;

	for (i = 0; i < X509_get_ext_count(x); i++) {
		ext = X509_get_ext(x, i);
		obj = X509_EXTENSION_get_object(ext);
		if (OBJ_length(obj) != sizeof(webauthn_aaguid_oid) ||
		    memcmp(OBJ_get0_data(obj), webauthn_aaguid_oid,
		    sizeof(webauthn_aaguid_oid)) != 0)
			continue;
		if (found != NULL)
			return ("attestation certificate: AAGUID extension "
			    "twice");
		found = ext;
	}
	if (found == NULL)
		return (NULL);
	if (X509_EXTENSION_get_critical(found))
		return ("attestation certificate: AAGUID extension critical");
	/* An OCTET STRING of 16 bytes has one DER form: 04 10, the bytes. */
	v = X509_EXTENSION_get_data(found);
	d = ASN1_STRING_get0_data(v);
	if (ASN1_STRING_length(v) != 18 || d[0] != 0x04 || d[1] != 16 ||
	    memcmp(d + 2, aaguid, 16) != 0)
		return ("attestation certificate: AAGUID extension differs");
	return (NULL);
}

/* WebAuthn Level 2, 8.2.1: the attestation certificate's requirements. */
static const char *
webauthn_trust_leaf(X509 *x, const uint8_t aaguid[16])
{
	const X509_NAME	*subject;

	if (X509_get_version(x) != X509_VERSION_3)
		return ("attestation certificate: not version 3");
	if (X509_get_extension_flags(x) & EXFLAG_INVALID)
		return ("attestation certificate: extensions unreadable");
	subject = X509_get_subject_name(x);
	if (!webauthn_trust_name_has(subject, NID_countryName, NULL) ||
	    !webauthn_trust_name_has(subject, NID_organizationName, NULL) ||
	    !webauthn_trust_name_has(subject, NID_commonName, NULL))
		return ("attestation certificate: subject C, O or CN");
	if (!webauthn_trust_name_has(subject, NID_organizationalUnitName,
	    WEBAUTHN_ATT_OU))
		return ("attestation certificate: subject OU");
	if (!webauthn_trust_not_ca(x))
		return ("attestation certificate: a CA");
	return (webauthn_trust_aaguid_ext(x, aaguid));
}

/*
 * A self-issued leaf alone (a batch certificate): trusted when a root
 * has its subject and key, the key signed it and it is valid now.
 */
static const char *
webauthn_trust_batch(const struct webauthn_trust *t, X509 *leaf)
{
	EVP_PKEY	*key, *rkey;
	X509		*root;
	int		 i, n;

	if ((key = X509_get0_pubkey(leaf)) == NULL)
		return ("self-signed attestation certificate: key");
	n = sk_X509_num(t->roots);
	for (i = 0; i < n; i++) {
		root = sk_X509_value(t->roots, i);
		rkey = X509_get0_pubkey(root);
		if (rkey != NULL && X509_NAME_cmp(X509_get_subject_name(root),
		    X509_get_subject_name(leaf)) == 0 &&
		    EVP_PKEY_eq(rkey, key) == 1)
			break;
	}
	if (i == n)
		return ("self-signed attestation certificate: no root of "
		    "its name and key");
	if (X509_verify(leaf, key) != 1)
		return ("self-signed attestation certificate: signature");
	if (X509_cmp_time(X509_get0_notBefore(leaf), NULL) != -1 ||
	    X509_cmp_time(X509_get0_notAfter(leaf), NULL) != 1)
		return ("self-signed attestation certificate: not valid now");
	return (NULL);
}

static const char *
webauthn_trust_chain(const struct webauthn_trust *t, X509 *leaf,
    STACK_OF(X509) *rest)
{
	X509_STORE_CTX	*ctx;
	const char	*why = NULL;
	int		 e;

	if (sk_X509_num(rest) == 0 &&
	    X509_NAME_cmp(X509_get_issuer_name(leaf),
	    X509_get_subject_name(leaf)) == 0)
		return (webauthn_trust_batch(t, leaf));
	/* At the current time, without a purpose: the context's defaults. */
	if ((ctx = X509_STORE_CTX_new()) == NULL ||
	    X509_STORE_CTX_init(ctx, t->store, leaf, rest) != 1) {
		X509_STORE_CTX_free(ctx);
		return ("attestation chain: out of memory");
	}
	if (X509_verify_cert(ctx) != 1) {
		e = X509_STORE_CTX_get_error(ctx);
		if (e == X509_V_ERR_CERT_HAS_EXPIRED ||
		    e == X509_V_ERR_CERT_NOT_YET_VALID)
			why = "attestation chain: a certificate not valid now";
		else
			why = "attestation chain: not to a root";
	}
	X509_STORE_CTX_free(ctx);
	return (why);
}

const char *
webauthn_trust_check(const struct webauthn_trust *t,
    const struct webauthn_credential *c)
{
	STACK_OF(X509)	*rest;
	X509		*leaf = NULL;
	const char	*why;

	if (c->attested == WEBAUTHN_ATT_NONE)
		return ("attestation none: no maker proven");
	if (c->attested == WEBAUTHN_ATT_SELF)
		return ("self attestation: no maker proven");
	if (c->attested != WEBAUTHN_ATT_X5C)
		return ("attestation kind");
	if (!webauthn_trust_listed(t, c->aaguid))
		return ("AAGUID not allowed");
	if ((rest = sk_X509_new_null()) == NULL)
		return ("x5c: out of memory");
	if ((why = webauthn_trust_x5c(c, &leaf, rest)) == NULL &&
	    (why = webauthn_trust_leaf(leaf, c->aaguid)) == NULL)
		why = webauthn_trust_chain(t, leaf, rest);
	X509_free(leaf);
	sk_X509_pop_free(rest, X509_free);
	/* Leave no error queued for the process's next TLS call. */
	ERR_clear_error();
	return (why);
}
