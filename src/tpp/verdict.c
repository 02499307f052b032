/*
 * TPP request verification, in this order (src/tpp/README.md):
 *	1. presence and form of the headers	400 FORMAT_ERROR,
 *	   401 SIGNATURE_MISSING, 401 CERTIFICATE_MISSING
 *	2. date (and JWS sigT) within the skew	400 TIMESTAMP_INVALID
 *	3. digest of the exact body bytes	401 SIGNATURE_INVALID
 *	4. certificate: chain, validity, CRL,	401 CERTIFICATE_INVALID,
 *	   key usage, QCStatement, org id	    _EXPIRED, _BLOCKED
 *	6. signature (draft-cavage or JWS)	401 SIGNATURE_INVALID
 * Step 5 (role) is the endpoint's (src/ais/ais_call.c), with the roles
 * from here; the organizationIdentifier against the token's TPP belongs
 * to the endpoint's SQL statement, with org_id from here.
 * Syntax errors of a header are step 1; what needs the certificate or
 * other headers to judge is the later step.
 */
#include <stdarg.h>
#include <stdio.h>
#include <string.h>

#include <openssl/crypto.h>
#include <openssl/evp.h>
#include <openssl/x509.h>

#include "common/crypto.h"
#include "common/encoding.h"
#include "common/httpdate.h"
#include "tpp/cache.h"
#include "tpp/cert.h"
#include "tpp/digest.h"
#include "tpp/jws.h"
#include "tpp/keyid.h"
#include "tpp/sighdr.h"
#include "tpp/signature.h"
#include "tpp/trust.h"
#include "tpp/verdict.h"

#define SIGNING_STRING_MAX	8192
#define CHAIN_RETRY		60	/* seconds a failed chain result holds */

static const char	hdr_cert[] = "tpp-signing-certificate";
static const char	hdr_cert_bg[] = "tpp-signature-certificate";

/* Everything parsed from one request; large, so kept off small stacks. */
struct vctx {
	const char		*cert_name;	/* which certificate header */
	int			 jws;
	struct tpp_sighdr	 sh;
	struct tpp_keyid	 kid;
	struct tpp_jws		 js;
	struct tpp_digest	 digest;
	int64_t			 date;
	struct tpp_cert_info	*info;
	uint8_t			 der[TPP_CERT_DER_MAX];
	char			 sigstr[SIGNING_STRING_MAX];
};

static int __attribute__((format(printf, 4, 5)))
fail(struct tpp_verdict *v, int status, const char *code, const char *fmt,
    ...)
{
	va_list		ap;

	v->status = status;
	snprintf(v->code, sizeof(v->code), "%s", code);
	va_start(ap, fmt);
	vsnprintf(v->text, sizeof(v->text), fmt, ap);
	va_end(ap);
	return (-1);
}

/* One header: NULL when absent; a repeated one is a format error. */
static int
one_header(const struct tpp_input *in, const char *name, const char **out,
    struct tpp_verdict *v)
{
	int	count = 0;

	*out = in->header(in->arg, name, &count);
	if (*out != NULL && count > 1)
		return (fail(v, 400, "FORMAT_ERROR", "Header %s is sent more "
		    "than once.", name));
	return (0);
}

static int
check_request_id(const struct tpp_input *in, struct tpp_verdict *v,
    int needed)
{
	const char	*rid;

	if (one_header(in, "x-request-id", &rid, v) == -1)
		return (-1);
	if (rid == NULL) {
		if (!needed)
			return (0);
		return (fail(v, 400, "FORMAT_ERROR", "Header x-request-id is "
		    "missing: every signed request carries a UUID."));
	}
	if (!crypto_is_uuid(rid))
		return (fail(v, 400, "FORMAT_ERROR", "Header x-request-id must "
		    "be a UUID (8-4-4-4-12 hex digits)."));
	snprintf(v->request_id, sizeof(v->request_id), "%s", rid);
	return (0);
}

static int
parse_signature(const char *sig, struct vctx *c, struct tpp_verdict *v)
{
	char	err[160];

	c->jws = tpp_sighdr_is_jws(sig);
	if (c->jws) {
		if (tpp_jws_parse(sig, &c->js, err, sizeof(err)) == -1)
			return (fail(v, 400, "FORMAT_ERROR", "Header signature "
			    "is malformed: %s.", err));
		return (0);
	}
	if (tpp_sighdr_parse(sig, &c->sh, err, sizeof(err)) == -1)
		return (fail(v, 400, "FORMAT_ERROR", "Header signature is "
		    "malformed: %s.", err));
	if (tpp_keyid_parse(c->sh.key_id, &c->kid, err, sizeof(err)) == -1)
		return (fail(v, 400, "FORMAT_ERROR", "Header signature is "
		    "malformed: %s.", err));
	return (0);
}

static void
own_fail(struct tpp_cert_info *info, const char *code, const char *text)
{
	info->own_status = 401;
	snprintf(info->own_code, sizeof(info->own_code), "%s", code);
	snprintf(info->own_text, sizeof(info->own_text), "%s", text);
}

/* The checks that depend on the certificate alone, done once per entry. */
static void
own_checks(struct tpp_cert_info *info)
{
	struct tpp_qc	 qc;
	EVP_PKEY	*key;
	const char	*misfit;
	int		 rc;

	(void)tpp_cert_org_id(info->cert, info->org_id, sizeof(info->org_id));
	rc = tpp_cert_qc(info->cert, &qc);
	info->roles = rc == 0 ? qc.roles : 0;
	key = X509_get0_pubkey(info->cert);
	misfit = NULL;
	if (key == NULL)
		misfit = "has no usable public key";
	else if (EVP_PKEY_is_a(key, "RSA") && EVP_PKEY_get_bits(key) < 2048)
		misfit = "has an RSA key shorter than 2048 bits";
	else if (!EVP_PKEY_is_a(key, "RSA") &&
	    tpp_sig_key_misfit(key, TPP_SIG_ECDSA_SHA256) != NULL)
		misfit = "needs an RSA or EC P-256 key";
	if (misfit != NULL) {
		char	text[96];

		snprintf(text, sizeof(text), "The certificate %s.", misfit);
		own_fail(info, "CERTIFICATE_INVALID", text);
	} else if (!tpp_cert_can_sign(info->cert))
		own_fail(info, "CERTIFICATE_INVALID", "The certificate's key "
		    "usage does not allow signatures.");
	else if (rc == 1)
		own_fail(info, "CERTIFICATE_INVALID", "The certificate has no "
		    "PSD2 QCStatement (ETSI TS 119 495, 0.4.0.19495.2).");
	else if (rc == -1)
		own_fail(info, "CERTIFICATE_INVALID", "The certificate's PSD2 "
		    "QCStatement is malformed or names no PSD2 role.");
	else if (info->org_id[0] == '\0' || !tpp_org_id_valid(info->org_id))
		own_fail(info, "CERTIFICATE_INVALID", "The certificate subject "
		    "has no PSD2 organizationIdentifier (2.5.4.97, e.g. "
		    "PSDDE-BAFIN-123456).");
}

static int
load_certificate(const struct tpp_config *cfg, const char *text,
    struct vctx *c, struct tpp_verdict *v)
{
	uint8_t		 fp[32];
	X509		*x;
	int		 n;

	n = tpp_cert_decode(text, c->der, sizeof(c->der));
	if (n > 0)
		crypto_sha256(c->der, n, fp);
	if (n > 0 && (c->info = tpp_cache_get(cfg->cache, fp)) != NULL)
		return (0);
	if (n <= 0 || (x = tpp_cert_parse(c->der, n)) == NULL)
		return (fail(v, 400, "FORMAT_ERROR", "Header %s must be a "
		    "certificate: base64 of the DER, or PEM.", c->cert_name));
	c->info = tpp_cache_put(cfg->cache, fp, x);
	own_checks(c->info);
	return (0);
}

/* Step 1. Returns 1 for an unsigned request that may pass unsigned. */
static int
step_presence(const struct tpp_config *cfg, const struct tpp_input *in,
    struct vctx *c, struct tpp_verdict *v)
{
	const char	*sig, *cert, *cert_bg, *digest, *date;
	char		 err[160];

	if (one_header(in, "signature", &sig, v) == -1)
		return (-1);
	if (sig == NULL) {
		if (cfg->required)
			return (fail(v, 401, "SIGNATURE_MISSING", "Header "
			    "signature is missing: every API request must be "
			    "signed with the TPP's QSealC."));
		if (check_request_id(in, v, 0) == -1)
			return (-1);
		return (1);
	}
	if (one_header(in, hdr_cert, &cert, v) == -1 ||
	    one_header(in, hdr_cert_bg, &cert_bg, v) == -1)
		return (-1);
	if (cert != NULL && cert_bg != NULL)
		return (fail(v, 400, "FORMAT_ERROR", "Send the certificate in "
		    "one header: %s or %s, not both.", hdr_cert, hdr_cert_bg));
	c->cert_name = cert != NULL ? hdr_cert : hdr_cert_bg;
	if (cert == NULL && (cert = cert_bg) == NULL)
		return (fail(v, 401, "CERTIFICATE_MISSING", "Header %s is "
		    "missing: send the QSealC that signed the request.",
		    hdr_cert));
	if (check_request_id(in, v, 1) == -1 ||
	    one_header(in, "digest", &digest, v) == -1 ||
	    one_header(in, "date", &date, v) == -1)
		return (-1);
	if (digest == NULL)
		return (fail(v, 400, "FORMAT_ERROR", "Header digest is missing: "
		    "a signed request carries SHA-256=<base64 of the body "
		    "hash>."));
	if (tpp_digest_parse(digest, &c->digest, err, sizeof(err)) == -1)
		return (fail(v, 400, "FORMAT_ERROR", "Header digest is "
		    "malformed: %s.", err));
	if (date == NULL)
		return (fail(v, 400, "FORMAT_ERROR", "Header date is missing."));
	if (httpdate_parse(date, &c->date) == -1)
		return (fail(v, 400, "FORMAT_ERROR", "Header date must be an "
		    "HTTP date such as Sun, 06 Nov 1994 08:49:37 GMT."));
	if (parse_signature(sig, c, v) == -1)
		return (-1);
	return (load_certificate(cfg, cert, c, v));
}

/* Step 2. */
static int
step_date(const struct tpp_config *cfg, const struct tpp_input *in,
    struct vctx *c, struct tpp_verdict *v)
{
	int64_t	off;

	off = in->now - c->date;
	if (off > cfg->skew || off < -cfg->skew)
		return (fail(v, 400, "TIMESTAMP_INVALID", "Header date is %lld "
		    "s %s the server's clock; at most %lld s are allowed.",
		    (long long)(off < 0 ? -off : off),
		    off < 0 ? "ahead of" : "behind", (long long)cfg->skew));
	if (c->jws) {
		off = in->now - c->js.sig_t;
		if (off > cfg->skew || off < -cfg->skew)
			return (fail(v, 400, "TIMESTAMP_INVALID", "JWS sigT is "
			    "%lld s away from the server's clock; at most %lld "
			    "s are allowed.", (long long)(off < 0 ? -off : off),
			    (long long)cfg->skew));
	}
	return (0);
}

/* Step 3. */
static int
step_digest(const struct tpp_input *in, struct vctx *c,
    struct tpp_verdict *v)
{
	if (!tpp_digest_matches(&c->digest, in->body, in->bodylen))
		return (fail(v, 401, "SIGNATURE_INVALID", "Header digest does "
		    "not match the request body (%s of the exact body bytes; "
		    "an empty body hashes the empty string).",
		    c->digest.alg == TPP_DIGEST_SHA512 ? "SHA-512" : "SHA-256"));
	return (0);
}

static void
chain_result(struct tpp_cert_info *info, int rc, int depth, int64_t now)
{
	const char	*what;

	info->chain_status = 0;
	info->chain_code[0] = info->chain_text[0] = '\0';
	if (rc == X509_V_OK)
		return;
	info->chain_from = INT64_MIN;
	info->chain_until = now + CHAIN_RETRY;
	info->chain_status = 401;
	what = depth == 0 ? "The certificate" : "A CA certificate of its chain";
	switch (rc) {
	case X509_V_ERR_CERT_HAS_EXPIRED:
		snprintf(info->chain_code, sizeof(info->chain_code),
		    "CERTIFICATE_EXPIRED");
		snprintf(info->chain_text, sizeof(info->chain_text),
		    "%s has expired.", what);
		break;
	case X509_V_ERR_CERT_REVOKED:
		snprintf(info->chain_code, sizeof(info->chain_code),
		    "CERTIFICATE_BLOCKED");
		snprintf(info->chain_text, sizeof(info->chain_text),
		    "%s is revoked (CRL of its CA).", what);
		break;
	case X509_V_ERR_CERT_NOT_YET_VALID:
		snprintf(info->chain_code, sizeof(info->chain_code),
		    "CERTIFICATE_INVALID");
		snprintf(info->chain_text, sizeof(info->chain_text),
		    "%s is not valid yet.", what);
		break;
	default:
		snprintf(info->chain_code, sizeof(info->chain_code),
		    "CERTIFICATE_INVALID");
		snprintf(info->chain_text, sizeof(info->chain_text),
		    "The certificate does not chain to a CA the bank trusts "
		    "(%s).", X509_verify_cert_error_string(rc));
		break;
	}
}

/* Step 4. */
static int
step_certificate(const struct tpp_config *cfg, const struct tpp_input *in,
    struct vctx *c, struct tpp_verdict *v)
{
	struct tpp_cert_info	*info = c->info;
	unsigned		 gen;
	int			 rc, depth;

	snprintf(v->org_id, sizeof(v->org_id), "%s", info->org_id);
	v->roles = info->roles;
	if (cfg->trust == NULL)
		return (fail(v, 401, "CERTIFICATE_INVALID", "The certificate "
		    "does not chain to a CA the bank trusts (no trust anchors "
		    "are configured)."));
	gen = tpp_trust_refresh(cfg->trust, in->now);
	if (!info->chain_checked || info->chain_gen != gen ||
	    in->now < info->chain_from || in->now > info->chain_until) {
		rc = tpp_trust_verify(cfg->trust, info->cert, in->now,
		    &info->chain_from, &info->chain_until, &depth);
		chain_result(info, rc, depth, in->now);
		info->chain_checked = 1;
		info->chain_gen = gen;
	}
	if (info->chain_status != 0)
		return (fail(v, info->chain_status, info->chain_code, "%s",
		    info->chain_text));
	if (info->own_status != 0)
		return (fail(v, info->own_status, info->own_code, "%s",
		    info->own_text));
	return (0);
}

static int
signing_input(const struct tpp_input *in, const char *const *names,
    size_t n, const char *prefix, size_t plen, struct vctx *c,
    struct tpp_verdict *v)
{
	char	err[160];
	int	len;

	if (tpp_sig_rules(names, n, !c->jws, in->header, in->arg, err,
	    sizeof(err)) == -1)
		return (fail(v, 401, "SIGNATURE_INVALID", "Signature: %s.",
		    err));
	if (plen + 1 >= sizeof(c->sigstr))
		return (fail(v, 401, "SIGNATURE_INVALID", "Signature: the "
		    "protected header is too long."));
	if (plen > 0) {
		memcpy(c->sigstr, prefix, plen);
		c->sigstr[plen++] = '.';
	}
	len = tpp_sig_string(names, n, in->header, in->arg, in->method,
	    in->target, c->sigstr + plen, sizeof(c->sigstr) - plen, err,
	    sizeof(err));
	if (len < 0)
		return (fail(v, 401, "SIGNATURE_INVALID", "Signature: %s.",
		    err));
	return ((int)plen + len);
}

static int
verify_cavage(const struct tpp_input *in, struct vctx *c,
    struct tpp_verdict *v)
{
	EVP_PKEY		*key = X509_get0_pubkey(c->info->cert);
	enum tpp_sig_alg	 alg;
	int			 len;

	alg = tpp_sig_alg_cavage(c->sh.algorithm, key);
	if (alg == TPP_SIG_NONE)
		return (fail(v, 401, "SIGNATURE_INVALID", "Signature algorithm "
		    "is not supported: use rsa-sha256, rsa-sha512 or "
		    "ecdsa-sha256."));
	if (tpp_sig_key_misfit(key, alg) != NULL)
		return (fail(v, 401, "SIGNATURE_INVALID", "Signature algorithm "
		    "%s does not fit the certificate's key (%s).",
		    c->sh.algorithm ? c->sh.algorithm : "(default)",
		    tpp_sig_key_misfit(key, alg)));
	if (!tpp_keyid_matches(&c->kid, c->info->cert))
		return (fail(v, 401, "SIGNATURE_INVALID", "Signature keyId does "
		    "not name the certificate in %s (serial number and issuer "
		    "must be the certificate's).", c->cert_name));
	if ((len = signing_input(in, c->sh.names, c->sh.nnames, NULL, 0, c,
	    v)) < 0)
		return (-1);
	if (!tpp_sig_verify(key, alg, 0, c->sigstr, len, c->sh.sig,
	    c->sh.siglen))
		return (fail(v, 401, "SIGNATURE_INVALID", "Signature does not "
		    "verify with the key of the certificate in %s.",
		    c->cert_name));
	return (0);
}

static int
verify_jws(const struct tpp_input *in, struct vctx *c,
    struct tpp_verdict *v)
{
	EVP_PKEY		*key = X509_get0_pubkey(c->info->cert);
	enum tpp_sig_alg	 alg;
	int			 len;

	if ((alg = tpp_sig_alg_jws(c->js.alg)) == TPP_SIG_NONE)
		return (fail(v, 401, "SIGNATURE_INVALID", "JWS alg must be "
		    "RS256, PS256 or ES256."));
	if (tpp_sig_key_misfit(key, alg) != NULL)
		return (fail(v, 401, "SIGNATURE_INVALID", "JWS alg %s does not "
		    "fit the certificate's key (%s).", c->js.alg,
		    tpp_sig_key_misfit(key, alg)));
	if (memcmp(c->js.x5t, c->info->fp, 32) != 0)
		return (fail(v, 401, "SIGNATURE_INVALID", "JWS x5t#S256 does "
		    "not name the certificate in %s.", c->cert_name));
	if ((len = signing_input(in, c->js.names, c->js.nnames,
	    c->js.protected_b64, c->js.protected_len, c, v)) < 0)
		return (-1);
	if (!tpp_sig_verify(key, alg, 1, c->sigstr, len, c->js.sig,
	    c->js.siglen))
		return (fail(v, 401, "SIGNATURE_INVALID", "Signature does not "
		    "verify with the key of the certificate in %s.",
		    c->cert_name));
	return (0);
}

void
tpp_verdict_run(const struct tpp_config *cfg, const struct tpp_input *in,
    struct tpp_verdict *v)
{
	static struct vctx	 ctx;	/* one request at a time per worker */
	struct vctx		*c = &ctx;
	int			 rc;

	memset(v, 0, sizeof(*v));
	c->info = NULL;
	c->jws = 0;
	if ((rc = step_presence(cfg, in, c, v)) != 0) {
		/* Unsigned (signing off): only the roles configured for it. */
		if (rc == 1)
			v->roles = cfg->unsigned_roles;
		return;
	}
	if (step_date(cfg, in, c, v) == -1 ||
	    step_digest(in, c, v) == -1 ||
	    step_certificate(cfg, in, c, v) == -1)
		return;
	if ((c->jws ? verify_jws(in, c, v) : verify_cavage(in, c, v)) == -1)
		return;
	v->signed_request = 1;
}
