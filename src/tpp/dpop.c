/*
 * DPoP proofs (see dpop.h). The signature is jws_verify_dpop's; this
 * file reads the request and checks the claims. A refusal's why names
 * the rule broken, never a value.
 */
#include <sys/types.h>

#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <time.h>

#include <kore.h>
#include <http.h>

#include "common/config.h"
#include "common/crypto.h"
#include "common/encoding.h"
#include "common/sealed.h"
#include "common/settings.h"
#include "tpp/dpop.h"

#define DPOP_PAYLOAD_MAX	(JWS_COMPACT_MAX * 3 / 4)
#define DPOP_NONCE_PURPOSE	"dpop-nonce"
#define DPOP_URL_MAX		1024

static enum dpop_result
dpop_refuse(struct dpop_proof *p, const char *why)
{
	(void)snprintf(p->why, sizeof(p->why), "%s", why);
	return (DPOP_INVALID);
}

int
dpop_nonce(char *out, size_t len)
{
	return (sealed_make(&app_form_keys, DPOP_NONCE_PURPOSE, "n",
	    (int64_t)time(NULL) + DPOP_NONCE_TTL, out, len) < 0 ? -1 : 0);
}

/* The request's one DPoP header: 1, 0 when none, -1 when repeated. */
static int
dpop_header(struct http_request *req, const char **value)
{
	struct http_header	*hdr;
	int			 n;

	n = 0;
	TAILQ_FOREACH(hdr, &req->req_headers, list) {
		if (strcasecmp(hdr->header, "dpop") == 0) {
			*value = hdr->value;
			n++;
		}
	}
	return (n > 1 ? -1 : n);
}

/* One origin the request may have been sent to, and its path. */
static int
dpop_htu_is(const char *htu, size_t htulen, const char *origin,
    const char *path)
{
	char	url[DPOP_URL_MAX];
	int	n;

	if (origin == NULL)
		return (0);
	n = snprintf(url, sizeof(url), "%s%s", origin, path);
	return (n > 0 && (size_t)n == htulen && memcmp(url, htu, htulen) == 0);
}

/* htu without query and fragment against the request (RFC 9449 4.3). */
static int
dpop_htu_ok(struct http_request *req, const char *htu)
{
	char	origin[DPOP_URL_MAX];
	size_t	len;

	len = strcspn(htu, "?#");
	origin[0] = '\0';
	if (req->host != NULL)
		(void)snprintf(origin, sizeof(origin), "%s://%s",
		    req->owner->ssl != NULL ? "https" : "http", req->host);
	return ((origin[0] != '\0' &&
	    dpop_htu_is(htu, len, origin, req->path)) ||
	    dpop_htu_is(htu, len, settings_get("issuer", NULL), req->path) ||
	    dpop_htu_is(htu, len, settings_get("mtls_base", NULL), req->path));
}

static int
dpop_iat_ok(const json_t *claims, long long now)
{
	const json_t	*v;
	double		 iat;

	v = json_object_get(claims, "iat");
	if (!json_is_number(v))
		return (0);
	iat = json_number_value(v);
	return (isfinite(iat) && iat >= (double)(now - DPOP_IAT_WINDOW) &&
	    iat <= (double)(now + DPOP_SKEW));
}

static int
dpop_ath_ok(const json_t *claims, const char *token)
{
	const char	*ath;
	uint8_t		 digest[32];
	char		 want[BASE64URL_ENCODED_LEN(32) + 1];

	if ((ath = json_string_value(json_object_get(claims, "ath"))) == NULL)
		return (0);
	crypto_sha256(token, strlen(token), digest);
	if (base64url_encode(digest, sizeof(digest), want, sizeof(want)) < 0)
		return (0);
	return (strlen(ath) == strlen(want) &&
	    crypto_equal(ath, want, strlen(want)));
}

static int
dpop_nonce_ok(const json_t *claims, long long now)
{
	const char	*nonce;
	char		 payload[8];

	if ((nonce = json_string_value(json_object_get(claims,
	    "nonce"))) == NULL)
		return (0);
	return (sealed_open(&app_form_keys, DPOP_NONCE_PURPOSE, nonce,
	    (int64_t)now, payload, sizeof(payload)) >= 0);
}

/* The claims of a verified proof; the binding on DPOP_OK. */
static enum dpop_result
dpop_claims(struct http_request *req, const json_t *claims,
    const char *token, struct dpop_proof *p)
{
	const char	*jti, *htm, *htu;
	char		 hex[65];
	long long	 now;
	size_t		 len;
	json_t		*key;
	char		*text;

	if (!json_is_object(claims))
		return (dpop_refuse(p, "its payload is not a JSON object"));
	jti = json_string_value(json_object_get(claims, "jti"));
	len = jti != NULL ? strlen(jti) : 0;
	if (len == 0 || len > DPOP_JTI_MAX)
		return (dpop_refuse(p, "jti is required, of 1 to 256 bytes"));
	htm = json_string_value(json_object_get(claims, "htm"));
	if (htm == NULL || strcmp(htm, http_method_text(req->method)) != 0)
		return (dpop_refuse(p, "htm is not the request's method"));
	htu = json_string_value(json_object_get(claims, "htu"));
	if (htu == NULL || !dpop_htu_ok(req, htu))
		return (dpop_refuse(p, "htu is not the request's URL"));
	now = (long long)time(NULL);
	if (!dpop_iat_ok(claims, now))
		return (dpop_refuse(p, "iat is not within the last 60 "
		    "seconds"));
	if (token != NULL && !dpop_ath_ok(claims, token))
		return (dpop_refuse(p, "ath is not the access token's hash"));
	if (!dpop_nonce_ok(claims, now)) {
		(void)snprintf(p->why, sizeof(p->why), "a fresh nonce of "
		    "this server is required (DPoP-Nonce)");
		return (DPOP_NONCE);
	}
	/* The jti is the key's own: hashed with its thumbprint. */
	key = json_pack("[s, s]", p->jkt, jti);
	text = key != NULL ? json_dumps(key, JSON_COMPACT) : NULL;
	json_decref(key);
	if (text == NULL)
		return (dpop_refuse(p, "out of memory"));
	crypto_sha256_hex(text, strlen(text), hex);
	free(text);
	(void)snprintf(p->binding, sizeof(p->binding), "dpop %s %s %lld",
	    p->jkt, hex, now + DPOP_IAT_WINDOW + 2 * DPOP_SKEW);
	return (DPOP_OK);
}

enum dpop_result
dpop_check(struct http_request *req, const char *token,
    struct dpop_proof *p)
{
	const char		*proof;
	uint8_t			 payload[DPOP_PAYLOAD_MAX];
	size_t			 len;
	json_t			*claims;
	enum jws_result		 r;
	enum dpop_result	 d;
	int			 n;

	memset(p, 0, sizeof(*p));
	proof = NULL;
	if ((n = dpop_header(req, &proof)) == 0)
		return (DPOP_NONE);
	if (n == -1)
		return (dpop_refuse(p, "more than one DPoP header"));
	r = jws_verify_dpop(proof, payload, sizeof(payload), &len, p->jkt);
	if (r != JWS_OK)
		return (dpop_refuse(p, jws_result_text(r)));
	claims = json_loadb((const char *)payload, len,
	    JSON_REJECT_DUPLICATES, NULL);
	d = dpop_claims(req, claims, token, p);
	json_decref(claims);
	return (d);
}
