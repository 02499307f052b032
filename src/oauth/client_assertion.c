/*
 * private_key_jwt client assertions (see client_assertion.h). The
 * signature is jws_verify's; this file reads the request and checks the
 * claims. The reason of a refusal goes to the client in
 * error_description: it names a rule, never a key or a value.
 */
#include <sys/types.h>

#include <math.h>
#include <stdio.h>
#include <string.h>
#include <time.h>

#include <kore.h>
#include <http.h>

#include "api/respond.h"
#include "common/crypto.h"
#include "common/encoding.h"
#include "common/jws.h"
#include "oauth/client_assertion.h"
#include "oauth/oauth.h"

/* The claims of an assertion: a JWS_COMPACT_MAX JWT's payload fits. */
#define CLIENT_ASSERTION_PAYLOAD_MAX	(JWS_COMPACT_MAX * 3 / 4)

void
client_assertion_refuse(struct http_request *req, const char *why)
{
	char	text[160];

	(void)snprintf(text, sizeof(text), "The client assertion is refused: "
	    "%s.", why);
	respond_oauth_error(req, 401, "invalid_client", text);
}

int
client_assertion_sent(struct http_request *req)
{
	const char	*v;

	return (http_argument_get_string(req, "client_assertion", &v) ||
	    http_argument_get_string(req, "client_assertion_type", &v));
}

/* The request's assertion, of the right type: NULL, or why not. */
static const char *
client_assertion_jwt(struct http_request *req, const char **jwt)
{
	const char	*type;

	type = *jwt = NULL;
	if (!http_argument_get_string(req, "client_assertion_type", &type) ||
	    strcmp(type, CLIENT_ASSERTION_TYPE) != 0)
		return ("client_assertion_type must be " CLIENT_ASSERTION_TYPE);
	if (!http_argument_get_string(req, "client_assertion", jwt))
		return ("client_assertion is missing");
	return (NULL);
}

/* The claims, unverified: for the client's id only. */
static json_t *
client_assertion_peek(const char *jwt)
{
	const char	*dot1, *dot2;
	uint8_t		 payload[CLIENT_ASSERTION_PAYLOAD_MAX];
	int		 n;

	if (strnlen(jwt, JWS_COMPACT_MAX + 1) > JWS_COMPACT_MAX ||
	    (dot1 = strchr(jwt, '.')) == NULL ||
	    (dot2 = strchr(dot1 + 1, '.')) == NULL)
		return (NULL);
	n = base64url_decode(dot1 + 1, (size_t)(dot2 - dot1 - 1), payload,
	    sizeof(payload));
	if (n <= 0)
		return (NULL);
	return (json_loadb((const char *)payload, (size_t)n,
	    JSON_REJECT_DUPLICATES, NULL));
}

int
client_assertion_client_id(struct http_request *req, char *client_id,
    size_t len)
{
	const char	*jwt, *iss, *why;
	json_t		*claims;
	int		 n;

	if ((why = client_assertion_jwt(req, &jwt)) != NULL) {
		client_assertion_refuse(req, why);
		return (-1);
	}
	claims = client_assertion_peek(jwt);
	iss = json_string_value(json_object_get(claims, "iss"));
	n = iss != NULL ? snprintf(client_id, len, "%s", iss) : -1;
	json_decref(claims);
	if (n <= 0 || (size_t)n >= len) {
		client_assertion_refuse(req, "it is not a JWT whose iss is a "
		    "client_id");
		return (-1);
	}
	return (0);
}

/*
 * aud is the issuer, as a string (FAPI 2.0 Security Profile 5.3.2.1 item
 * 8): not an endpoint's URL, not an array. A client that took an
 * endpoint's URL from another server's metadata could otherwise be led
 * to sign for this one (the audience injection the OpenID Foundation
 * published in January 2025).
 */
static int
client_assertion_aud_ok(struct http_request *req, const json_t *aud)
{
	char	issuer[OAUTH_ISSUER_MAX];

	if (!json_is_string(aud) ||
	    oauth_issuer(req, issuer, sizeof(issuer)) == -1)
		return (0);
	return (strcmp(json_string_value(aud), issuer) == 0);
}

/* A NumericDate claim (RFC 7519 2): 1 and *t, 0 when absent, -1 bad. */
static int
client_assertion_time(const json_t *claims, const char *name, long long *t)
{
	const json_t	*v;
	double		 d;

	if ((v = json_object_get(claims, name)) == NULL)
		return (0);
	if (!json_is_number(v))
		return (-1);
	d = json_number_value(v);
	if (!isfinite(d) || d < 0 || d > 1e12)
		return (-1);
	*t = (long long)d;	/* d >= 0: the floor */
	return (1);
}

static const char *
client_assertion_times_why(const json_t *claims, long long now,
    long long *exp)
{
	long long	t;
	int		r;

	if (client_assertion_time(claims, "exp", exp) != 1)
		return ("exp is required, a NumericDate");
	if (*exp < now - CLIENT_ASSERTION_SKEW)
		return ("it has expired");
	if (*exp > now + CLIENT_ASSERTION_LIFETIME + CLIENT_ASSERTION_SKEW)
		return ("exp is more than an hour ahead");
	if ((r = client_assertion_time(claims, "iat", &t)) == -1)
		return ("iat is not a NumericDate");
	if (r == 1 && t > now + CLIENT_ASSERTION_SKEW)
		return ("iat is more than 10 seconds in the future");
	if ((r = client_assertion_time(claims, "nbf", &t)) == -1)
		return ("nbf is not a NumericDate");
	if (r == 1 && t > now + CLIENT_ASSERTION_SKEW)
		return ("nbf is more than 10 seconds in the future");
	return (NULL);
}

static const char *
client_assertion_claims_why(struct http_request *req, const json_t *claims,
    const char *client_id, struct client_assertion *out)
{
	const char	*iss, *sub, *jti, *why;
	long long	 exp;
	size_t		 len;

	if (!json_is_object(claims))
		return ("its payload is not a JSON object");
	iss = json_string_value(json_object_get(claims, "iss"));
	sub = json_string_value(json_object_get(claims, "sub"));
	if (iss == NULL || sub == NULL || strcmp(iss, client_id) != 0 ||
	    strcmp(sub, client_id) != 0)
		return ("iss and sub must both be the client_id");
	if (!client_assertion_aud_ok(req, json_object_get(claims, "aud")))
		return ("aud must be the issuer, as a string");
	if ((why = client_assertion_times_why(claims, (long long)time(NULL),
	    &exp)) != NULL)
		return (why);
	jti = json_string_value(json_object_get(claims, "jti"));
	len = jti != NULL ? strlen(jti) : 0;
	if (len == 0 || len > CLIENT_ASSERTION_JTI_MAX)
		return ("jti is required, of 1 to 256 bytes");
	crypto_sha256(jti, len, out->jti_hash);
	out->keep_until = exp + CLIENT_ASSERTION_SKEW;
	return (NULL);
}

int
client_assertion_check(struct http_request *req, const char *client_id,
    const json_t *jwks, struct client_assertion *out, const char **why)
{
	const char	*jwt;
	uint8_t		 payload[CLIENT_ASSERTION_PAYLOAD_MAX];
	size_t		 len;
	json_t		*claims;
	enum jws_result	 r;

	if ((*why = client_assertion_jwt(req, &jwt)) != NULL)
		return (-1);
	r = jws_verify(jwt, jwks, payload, sizeof(payload), &len, NULL);
	if (r != JWS_OK) {
		*why = jws_result_text(r);
		return (-1);
	}
	claims = json_loadb((const char *)payload, len,
	    JSON_REJECT_DUPLICATES, NULL);
	*why = client_assertion_claims_why(req, claims, client_id, out);
	json_decref(claims);
	return (*why == NULL ? 0 : -1);
}

int
client_assertion_verify(struct http_request *req, const char *client_id,
    const char *jwks_text, struct client_assertion *out)
{
	const char	*why;
	json_t		*jwks;
	int		 r;

	jwks = json_loads(jwks_text, 0, NULL);
	r = client_assertion_check(req, client_id, jwks, out, &why);
	json_decref(jwks);
	if (r == -1)
		client_assertion_refuse(req, why);
	return (r);
}
