/*
 * Kore side of TPP verification: settings, the per-worker trust store and
 * certificate cache, and the request adapter for the verdict in
 * verdict.c. The settings:
 *	psd2_signing_required	yes|no (default yes)
 *	psd2_unsigned_roles	PSD2 roles an unsigned request holds, only
 *				with signing off (default none)
 *	psd2_trust_dir		folder of CA certificates (PEM)
 *	psd2_crl_dir		folder of CRL files (optional, except in
 *				production: revocation is required there,
 *				so it must hold a current CRL of every
 *				trusted CA); with a chroot (root), put it
 *				under root so that workers can re-read it
 *	psd2_clock_skew		seconds a date may be off (default 300)
 *	psd2_cert_cache		certificates cached per worker (default 512)
 */
#include <sys/types.h>

#include <limits.h>
#include <stdio.h>
#include <string.h>
#include <time.h>

#include <openssl/x509.h>

#include <kore.h>
#include <http.h>

#include "common/crypto.h"
#include "common/encoding.h"
#include "common/settings.h"
#include "metrics/metrics.h"
#include "tpp/cache.h"
#include "tpp/cert.h"
#include "tpp/trust.h"
#include "tpp/verdict.h"
#include "tpp/tpp.h"

static struct tpp_config	tpp_cfg;
static int			worker_ready;

/* Every revocation failure: a log line and a count. */
static void
tpp_revocation_failure(const char *reason, const char *detail)
{
	kore_log(LOG_ERR, "TPP revocation %s: %s", reason, detail);
	metrics_count(METRICS_TPP_REVOCATION, "reason", reason, NULL, NULL);
}

int
tpp_init(void)
{
	char		trust[PATH_MAX], crl[PATH_MAX], err[256];
	const char	*roles;
	int64_t		max;
	int		have_crl, crl_required;

	tpp_cfg.required = settings_bool("signing_required", 1);
	/*
	 * An unsigned request proves no role. Only a configuration that
	 * turns signing off may grant it some, and must name them
	 * (settings_validate() has checked both).
	 */
	roles = settings_get("unsigned_roles", "none");
	if (tpp_cfg.required ||
	    settings_parse_roles(roles, &tpp_cfg.unsigned_roles) == -1)
		tpp_cfg.unsigned_roles = 0;
	tpp_cfg.skew = settings_int("clock_skew", 300);
	max = settings_int("cert_cache", 512);
	if (tpp_cfg.skew < 1 || tpp_cfg.skew > 3600 || max < 1 ||
	    max > 100000) {
		kore_log(LOG_ERR, "psd2_clock_skew (1-3600) or psd2_cert_cache "
		    "(1-100000) out of range");
		return (-1);
	}
	if ((tpp_cfg.cache = tpp_cache_new(max)) == NULL)
		return (-1);
	if (settings_path("trust_dir", NULL, trust, sizeof(trust)) == -1) {
		if (tpp_cfg.required) {
			kore_log(LOG_ERR, "psd2_signing_required needs "
			    "psd2_trust_dir");
			return (-1);
		}
		return (0);	/* nothing trusted: signed requests fail */
	}
	have_crl = settings_path("crl_dir", NULL, crl, sizeof(crl)) == 0;
	/* Production does not start without revocation data it trusts. */
	crl_required = settings_production();
	tpp_cfg.trust = tpp_trust_load(trust, have_crl ? crl : NULL,
	    crl_required, err, sizeof(err));
	if (tpp_cfg.trust == NULL && !tpp_cfg.required) {
		/*
		 * Signing optional (a fresh checkout before
		 * tests/pki/mint.sh ran): serve, and refuse signed requests.
		 */
		kore_log(LOG_WARNING, "psd2_trust_dir/psd2_crl_dir: %s; "
		    "signed requests will fail", err);
		return (0);
	}
	if (tpp_cfg.trust == NULL) {
		kore_log(LOG_ERR, "psd2_trust_dir/psd2_crl_dir: %s", err);
		return (-1);
	}
	if (tpp_trust_anchors(tpp_cfg.trust) == 0) {
		kore_log(LOG_ERR, "psd2_trust_dir %s holds no CA certificate",
		    trust);
		return (-1);
	}
	tpp_trust_on_failure(tpp_cfg.trust, tpp_revocation_failure);
	return (0);
}

/* Header lookup for the verdict: first value and number of occurrences. */
static const char *
tpp_header(void *arg, const char *name, int *count)
{
	struct http_request	*req = arg;
	struct http_header	*hdr;
	const char		*value = NULL;

	*count = 0;
	TAILQ_FOREACH(hdr, &req->req_headers, list) {
		if (strcasecmp(hdr->header, name) == 0) {
			if ((*count)++ == 0)
				value = hdr->value;
		}
	}
	return (value);
}

void
tpp_peer_x5t(struct http_request *req, char *out, size_t outlen)
{
	unsigned char	*der;
	uint8_t		 fp[32];
	int		 len;

	out[0] = '\0';
	if (req->owner == NULL || req->owner->cert == NULL)
		return;
	der = NULL;
	if ((len = i2d_X509(req->owner->cert, &der)) <= 0)
		return;
	crypto_sha256(der, len, fp);
	OPENSSL_free(der);
	if (base64url_encode(fp, sizeof(fp), out, outlen) < 0)
		out[0] = '\0';
}

/* Workers run chrooted (root): CRL paths are then under it. */
static void
tpp_worker_ready(void)
{
	if (worker_ready)
		return;
	worker_ready = 1;
	if (tpp_cfg.trust != NULL && !skip_chroot && kore_root_path != NULL)
		tpp_trust_chroot(tpp_cfg.trust, kore_root_path);
}

int
tpp_peer_org_id(struct http_request *req, char *out, size_t outlen)
{
	int64_t	now, from, until;
	int	depth;

	out[0] = '\0';
	tpp_worker_ready();
	if (req->owner == NULL || req->owner->cert == NULL ||
	    tpp_cfg.trust == NULL)
		return (-1);
	now = (int64_t)time(NULL);
	(void)tpp_trust_refresh(tpp_cfg.trust, now);
	if (tpp_trust_verify(tpp_cfg.trust, req->owner->cert, now, &from,
	    &until, &depth) != X509_V_OK ||
	    tpp_cert_org_id(req->owner->cert, out, outlen) == -1 ||
	    !tpp_org_id_valid(out)) {
		out[0] = '\0';
		return (-1);
	}
	return (0);
}

void
tpp_verify_request(struct http_request *req, struct tpp_verdict *v)
{
	struct tpp_input	 in;
	char			 target[2048];

	tpp_worker_ready();
	memset(&in, 0, sizeof(in));
	in.header = tpp_header;
	in.arg = req;
	in.method = http_method_text(req->method);
	if (req->query_string != NULL && req->query_string[0] != '\0')
		(void)snprintf(target, sizeof(target), "%s?%s", req->path,
		    req->query_string);
	else
		(void)snprintf(target, sizeof(target), "%s", req->path);
	in.target = target;
	/*
	 * The exact body bytes: Kore keeps them in http_body, whose offset
	 * is only the read cursor of http_body_read(), so the length is
	 * content_length. A body offloaded to disk (http_body_disk_offload,
	 * not used by psd2gate) is not hashed: its digest check fails.
	 */
	if (req->http_body != NULL && req->http_body_fd == -1 &&
	    req->content_length <= req->http_body->length) {
		in.body = req->http_body->data;
		in.bodylen = req->content_length;
	}
	in.now = (int64_t)time(NULL);
	tpp_verdict_run(&tpp_cfg, &in, v);
	tpp_peer_x5t(req, v->peer_x5t, sizeof(v->peer_x5t));
}

int
tpp_has_role(const struct tpp_verdict *v, int role)
{
	return ((v->roles & role) != 0);
}

void
tpp_role_text(const struct tpp_verdict *v, int role, char *out,
    size_t outlen)
{
	char		have[48], need[56];
	const char	*name;

	if ((name = tpp_role_name(role)) != NULL)
		snprintf(need, sizeof(need), "%s", name);
	else {
		memcpy(need, "one of ", 8);
		tpp_roles_format(role, need + 7, sizeof(need) - 7);
	}
	if (!v->signed_request) {
		snprintf(out, outlen, "The request is not signed, so it proves "
		    "no PSD2 role, and this service needs %s: sign it with the "
		    "TPP's QSealC.", need);
		return;
	}
	tpp_roles_format(v->roles, have, sizeof(have));
	snprintf(out, outlen, "The TPP certificate's PSD2 roles (%s) do not "
	    "include %s, which this service needs.", have, need);
}
