/*
 * The authorisation request's parameters, for authorize and PAR (see
 * authreq.h). A repeated parameter is invalid_request (RFC 6749 3.1);
 * a repeated state is echoed in no error (which one is the TPP's?).
 */
#include <sys/types.h>

#include <stdio.h>
#include <string.h>

#include <kore.h>
#include <http.h>

#include "api/respond.h"
#include "common/crypto.h"
#include "common/encoding.h"
#include "common/jws.h"
#include "common/redirect_uri.h"
#include "common/settings.h"
#include "db/db.h"
#include "oauth/authreq.h"
#include "oauth/client_cache.h"
#include "oauth/oauth.h"
#include "web/forms.h"

#define AUTHREQ_STATE_MAX	1024
#define AUTHREQ_BG_SCOPE	"AIS:"

static const char *const authreq_state_param[] = { "state", NULL };
static const char *const authreq_params[] = {
	"response_type", "scope", "state", "code_challenge",
	"code_challenge_method", "dpop_jkt", NULL
};

void
authreq_refuse(struct http_request *req, json_t *request,
    enum authreq_answer answer, const char *error, const char *text)
{
	if (answer == AUTHREQ_JSON)
		respond_oauth_error(req, 400, error, text);
	else
		oauth_redirect_error(req, request, error, text);
}

json_t *
authreq_client_row(struct db_query *q, const char *client_id)
{
	json_t	*row;

	if (db_rows(q) != 1)
		return (NULL);
	if ((row = json_loads(db_value(q, 0, 0), 0, NULL)) == NULL)
		return (NULL);
	client_cache_put(CLIENT_CACHE_PAGE, client_id, row);
	json_decref(row);
	return (client_cache_get(CLIENT_CACHE_PAGE, client_id));
}

static int
authreq_redirect_registered(json_t *client, const char *redirect_uri)
{
	json_t	*uri;
	size_t	 i;

	if (redirect_uri == NULL)
		return (0);
	json_array_foreach(json_object_get(client, "uris"), i, uri) {
		if (json_is_string(uri) &&
		    strcmp(json_string_value(uri), redirect_uri) == 0)
			return (1);
	}
	return (0);
}

json_t *
authreq_new(struct http_request *req, json_t *client, const char *client_id,
    const char *redirect_uri)
{
	json_t		*request;
	const char	*state;

	/* Registered before the rule, or by hand: still not sent there. */
	if (!authreq_redirect_registered(client, redirect_uri) ||
	    !redirect_uri_allowed(redirect_uri, settings_production()))
		return (NULL);
	request = json_object();
	json_object_set_new(request, "client_id", json_string(client_id));
	json_object_set_new(request, "redirect_uri",
	    json_string(redirect_uri));
	json_object_set(request, "tpp_name", json_object_get(client, "name"));
	json_object_set(request, "tpp_org", json_object_get(client, "org"));
	state = forms_arg(req, "state");
	if (state != NULL &&
	    oauth_repeated_param(req, authreq_state_param) == NULL)
		json_object_set_new(request, "state", json_string(state));
	return (request);
}

/*
 * Authorize's query string. PAR refuses a repeated parameter itself,
 * before Kore parses the body (par.c): oauth_repeated_param cannot read
 * a body after that.
 */
static int
authreq_repeated(struct http_request *req, json_t *request,
    enum authreq_answer answer)
{
	const char	*name;
	char		 text[96];

	if (answer == AUTHREQ_JSON)
		return (0);
	if ((name = oauth_repeated_param(req, authreq_params)) == NULL)
		return (0);
	(void)snprintf(text, sizeof(text), "%s must not be repeated", name);
	authreq_refuse(req, request, answer, "invalid_request", text);
	return (-1);
}

static int
authreq_challenge_valid(const char *c)
{
	size_t	i, len;

	len = strlen(c);
	if (len < 43 || len > 128)
		return (0);
	for (i = 0; i < len; i++) {
		if (!((c[i] >= 'A' && c[i] <= 'Z') ||
		    (c[i] >= 'a' && c[i] <= 'z') ||
		    (c[i] >= '0' && c[i] <= '9') ||
		    c[i] == '-' || c[i] == '.' || c[i] == '_' || c[i] == '~'))
			return (0);
	}
	return (1);
}

/*
 * scope=AIS:{consentId}: 1 and the id when the scope is that alone, 0
 * when it names no AIS: scope, -1 (an error was sent) when it mixes one
 * with others or the id is not a UUID.
 */
static int
authreq_bg_scope(struct http_request *req, json_t *request,
    enum authreq_answer answer, char consent_id[AUTHREQ_UUID_LEN + 1])
{
	const char	*scope, *p;
	size_t		 plen = sizeof(AUTHREQ_BG_SCOPE) - 1, len;

	if ((scope = forms_arg(req, "scope")) == NULL)
		return (0);
	for (p = scope; (p = strstr(p, AUTHREQ_BG_SCOPE)) != NULL; p++) {
		if (p == scope || p[-1] == ' ')
			break;
	}
	if (p == NULL)
		return (0);
	while (*scope == ' ')
		scope++;
	len = strcspn(scope, " ");
	if (p != scope || strspn(scope + len, " ") != strlen(scope + len)) {
		authreq_refuse(req, request, answer, "invalid_scope",
		    "scope AIS:{consentId} must be the only scope");
		return (-1);
	}
	if (len == plen + AUTHREQ_UUID_LEN) {
		memcpy(consent_id, scope + plen, AUTHREQ_UUID_LEN);
		consent_id[AUTHREQ_UUID_LEN] = '\0';
	} else
		consent_id[0] = '\0';
	if (!crypto_is_uuid(consent_id)) {
		authreq_refuse(req, request, answer, "invalid_scope",
		    "scope AIS:{consentId} must name a consentId (a UUID)");
		return (-1);
	}
	return (1);
}

static int
authreq_scope(struct http_request *req, json_t *request,
    enum authreq_answer answer, char consent_id[AUTHREQ_UUID_LEN + 1])
{
	char	scope[128];
	int	bits, bg;

	consent_id[0] = '\0';
	if ((bg = authreq_bg_scope(req, request, answer, consent_id)) == -1)
		return (-1);
	bits = bg ? OAUTH_SCOPE_AIS : oauth_scope_parse(forms_arg(req,
	    "scope"), scope, sizeof(scope));
	if (bg)
		(void)snprintf(scope, sizeof(scope), "ACCOUNT_INFORMATION");
	if (bits <= 0) {
		authreq_refuse(req, request, answer, "invalid_scope",
		    "scope must name FUND_AVAILABILITY, ACCOUNT_INFORMATION "
		    "or PAYMENT_INITIATION");
		return (-1);
	}
	json_object_set_new(request, "scope", json_string(scope));
	return (0);
}

/* PKCE S256 (RFC 7636), required of a client that must use PAR too. */
static int
authreq_pkce(struct http_request *req, json_t *request, json_t *client,
    enum authreq_answer answer)
{
	const char	*method, *challenge;
	int		 required;

	required = json_is_true(json_object_get(client, "pkce")) ||
	    json_is_true(json_object_get(client, "par"));
	challenge = forms_arg(req, "code_challenge");
	method = forms_arg(req, "code_challenge_method");
	if (method != NULL && strcmp(method, "S256") != 0) {
		authreq_refuse(req, request, answer, "invalid_request",
		    "code_challenge_method must be S256");
		return (-1);
	}
	if (challenge == NULL && (method != NULL || required)) {
		authreq_refuse(req, request, answer, "invalid_request",
		    "code_challenge (S256) is required");
		return (-1);
	}
	if (challenge == NULL)
		return (0);
	if (method == NULL || !authreq_challenge_valid(challenge)) {
		authreq_refuse(req, request, answer, "invalid_request",
		    "code_challenge must be a base64url S256 value with "
		    "code_challenge_method=S256");
		return (-1);
	}
	json_object_set_new(request, "code_challenge", json_string(challenge));
	return (0);
}

/*
 * dpop_jkt (RFC 9449 10): the thumbprint of the DPoP key the code will
 * be bound to, 43 base64url characters.
 */
static int
authreq_dpop_jkt(struct http_request *req, json_t *request,
    enum authreq_answer answer)
{
	const char	*jkt;
	uint8_t		 raw[32];

	if ((jkt = forms_arg(req, "dpop_jkt")) == NULL)
		return (0);
	if (strlen(jkt) != JWS_THUMBPRINT_LEN ||
	    base64url_decode(jkt, strlen(jkt), raw, sizeof(raw)) != 32) {
		authreq_refuse(req, request, answer, "invalid_request",
		    "dpop_jkt must be a JWK SHA-256 thumbprint (43 base64url "
		    "characters)");
		return (-1);
	}
	json_object_set_new(request, "dpop_jkt", json_string(jkt));
	return (0);
}

int
authreq_check(struct http_request *req, json_t *request, json_t *client,
    enum authreq_answer answer, char consent_id[AUTHREQ_UUID_LEN + 1])
{
	const char	*rtype, *state;

	consent_id[0] = '\0';
	if (authreq_repeated(req, request, answer) == -1)
		return (-1);
	/* The request travels sealed in the login form: bound its size. */
	state = forms_arg(req, "state");
	if (state != NULL && strlen(state) > AUTHREQ_STATE_MAX) {
		authreq_refuse(req, request, answer, "invalid_request",
		    "state is longer than 1024 bytes");
		return (-1);
	}
	rtype = forms_arg(req, "response_type");
	if (rtype == NULL || strcmp(rtype, "code") != 0) {
		authreq_refuse(req, request, answer, rtype == NULL ?
		    "invalid_request" : "unsupported_response_type",
		    "response_type must be code");
		return (-1);
	}
	if (authreq_scope(req, request, answer, consent_id) == -1 ||
	    authreq_dpop_jkt(req, request, answer) == -1)
		return (-1);
	return (authreq_pkce(req, request, client, answer));
}

int
authreq_bg_merge(struct http_request *req, struct db_query *q,
    json_t *request, enum authreq_answer answer)
{
	json_t		*found, *value;
	const char	*key;

	if (db_rows(q) != 1) {
		respond_server_error(req, "authreq bg consent rows");
		return (-1);
	}
	if (!db_is_null(q, 0, 0)) {
		authreq_refuse(req, request, answer, "invalid_scope",
		    db_value(q, 0, 0));
		return (-1);
	}
	if ((found = json_loads(db_value(q, 0, 1), 0, NULL)) == NULL) {
		respond_server_error(req, "authreq bg consent");
		return (-1);
	}
	/* The consent's TPP is the client's: its name and key "bg". */
	json_object_foreach(found, key, value) {
		if (strcmp(key, "client_id") != 0)
			json_object_set(request, key, value);
	}
	json_decref(found);
	return (0);
}
