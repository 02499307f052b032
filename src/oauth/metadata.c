/*
 * OAuth 2.0 authorization server metadata (RFC 8414) at
 * /.well-known/oauth-authorization-server: what a TPP's OAuth library
 * needs to configure itself. The endpoints are those of routes.conf;
 * the issuer is psd2_issuer (required in production), else the scheme
 * and Host of the request (sandbox and tests on any port). With
 * psd2_mtls_base, the endpoints a TPP calls with its QWAC are named as
 * RFC 8705 aliases and tokens issued there are certificate-bound.
 */
#include <ctype.h>
#include <stdio.h>
#include <string.h>

#include <kore.h>
#include <http.h>

#include <jansson.h>

#include "api/respond.h"
#include "common/settings.h"
#include "oauth/oauth.h"

int	oauth_metadata(struct http_request *);


/* Host header characters of a name, an IPv4 or [IPv6] address and port. */
static int
metadata_host_valid(const char *host)
{
	size_t	i;

	if (host == NULL || *host == '\0' || strlen(host) > 255)
		return (0);
	for (i = 0; host[i] != '\0'; i++) {
		if (!isalnum((unsigned char)host[i]) &&
		    strchr(".-:[]", host[i]) == NULL)
			return (0);
	}
	return (1);
}

int
oauth_issuer(struct http_request *req, char *out, size_t len)
{
	const char	*issuer;
	int		 n;

	if ((issuer = settings_get("issuer", NULL)) != NULL) {
		n = snprintf(out, len, "%s", issuer);
		return (n < 0 || (size_t)n >= len ? -1 : 0);
	}
	if (!metadata_host_valid(req->host))
		return (-1);
	n = snprintf(out, len, "%s://%s",
	    req->owner->ssl != NULL ? "https" : "http", req->host);
	return (n < 0 || (size_t)n >= len ? -1 : 0);
}

static void
metadata_url(json_t *obj, const char *key, const char *base,
    const char *path)
{
	json_object_set_new(obj, key, json_sprintf("%s%s", base, path));
}

static json_t *
metadata_list(const char *const *words)
{
	json_t	*a;

	a = json_array();
	for (; *words != NULL; words++)
		json_array_append_new(a, json_string(*words));
	return (a);
}

/*
 * Only where TPPs reach the service with their QWAC: the aliases, bound
 * tokens, and client authentication by that certificate (RFC 8705 2.1).
 */
static void
metadata_mtls(json_t *doc, const char *mtls)
{
	json_t	*aliases;

	aliases = json_object();
	metadata_url(aliases, "token_endpoint", mtls, "/auth/oauth/token");
	metadata_url(aliases, "revocation_endpoint", mtls,
	    "/auth/oauth/revoke");
	metadata_url(aliases, "pushed_authorization_request_endpoint", mtls,
	    "/auth/oauth/par");
	json_object_set_new(doc, "mtls_endpoint_aliases", aliases);
	json_object_set_new(doc, "tls_client_certificate_bound_access_tokens",
	    json_true());
	json_array_append_new(json_object_get(doc,
	    "token_endpoint_auth_methods_supported"),
	    json_string("tls_client_auth"));
	json_array_append_new(json_object_get(doc,
	    "revocation_endpoint_auth_methods_supported"),
	    json_string("tls_client_auth"));
}

int
oauth_metadata(struct http_request *req)
{
	static const char *const	scopes[] = { "ACCOUNT_INFORMATION",
		"FUND_AVAILABILITY", "PAYMENT_INITIATION", "xs2a", NULL };
	static const char *const	responses[] = { "code", NULL };
	static const char *const	modes[] = { "query", NULL };
	static const char *const	grants[] = { "authorization_code",
		"refresh_token", "client_credentials", NULL };
	static const char *const	pkce[] = { "S256", NULL };
	static const char *const	auth[] = { "client_secret_basic",
		"private_key_jwt", NULL };
	/* src/common/jws.h: what FAPI 2.0 allows, never none or HMAC. */
	static const char *const	algs[] = { "PS256", "ES256", "EdDSA",
		NULL };
	static const char *const	locales[] = { "en", "de", "nl", NULL };
	char				 issuer[OAUTH_ISSUER_MAX];
	const char			*mtls;
	json_t				*doc;

	if (oauth_issuer(req, issuer, sizeof(issuer)) == -1) {
		respond_oauth_error(req, 400, "invalid_request",
		    "The Host header is not a host name or address.");
		return (KORE_RESULT_OK);
	}
	doc = json_object();
	json_object_set_new(doc, "issuer", json_string(issuer));
	metadata_url(doc, "authorization_endpoint", issuer,
	    "/auth/oauth/authorize");
	metadata_url(doc, "token_endpoint", issuer, "/auth/oauth/token");
	metadata_url(doc, "revocation_endpoint", issuer,
	    "/auth/oauth/revoke");
	metadata_url(doc, "pushed_authorization_request_endpoint", issuer,
	    "/auth/oauth/par");
	/* Per client (psd2ctl tpp par-required), not for every client. */
	json_object_set_new(doc, "require_pushed_authorization_requests",
	    json_false());
	metadata_url(doc, "service_documentation", issuer,
	    "/auth/v1/psd2/openapi.json");
	json_object_set_new(doc, "scopes_supported", metadata_list(scopes));
	json_object_set_new(doc, "response_types_supported",
	    metadata_list(responses));
	json_object_set_new(doc, "response_modes_supported",
	    metadata_list(modes));
	json_object_set_new(doc, "grant_types_supported",
	    metadata_list(grants));
	json_object_set_new(doc, "code_challenge_methods_supported",
	    metadata_list(pkce));
	json_object_set_new(doc, "token_endpoint_auth_methods_supported",
	    metadata_list(auth));
	json_object_set_new(doc, "revocation_endpoint_auth_methods_supported",
	    metadata_list(auth));
	json_object_set_new(doc,
	    "token_endpoint_auth_signing_alg_values_supported",
	    metadata_list(algs));
	json_object_set_new(doc,
	    "revocation_endpoint_auth_signing_alg_values_supported",
	    metadata_list(algs));
	/* RFC 9449 5.1: DPoP proofs, at the token endpoint and resources. */
	json_object_set_new(doc, "dpop_signing_alg_values_supported",
	    metadata_list(algs));
	json_object_set_new(doc, "ui_locales_supported",
	    metadata_list(locales));
	json_object_set_new(doc,
	    "authorization_response_iss_parameter_supported", json_true());
	if ((mtls = settings_get("mtls_base", NULL)) != NULL)
		metadata_mtls(doc, mtls);
	respond_json(req, 200, doc);
	return (KORE_RESULT_OK);
}
