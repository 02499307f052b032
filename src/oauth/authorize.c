/*
 * GET /auth/oauth/authorize (spec 4.1, RFC 6749 4.1.1, RFC 7636).
 *
 * The client and its redirect_uri are checked against the registry first:
 * until both are known good, errors are shown to the PSU and never
 * redirected. A repeated parameter is invalid_request (RFC 6749 3.1):
 * client_id or redirect_uri repeated is an error page, anything else an
 * error redirect, without a state when state itself is repeated (which
 * of the two would be the TPP's?). The validated request is then sealed
 * into the login form; nothing is written to the database.
 *
 * scope=AIS:{consentId} (that one scope alone) is the integrated OAuth
 * approach of a Berlin Group consent (src/bg/README.md): one more query
 * (bg_oauth_authorize) checks that it names a received consent of this
 * client made on /xs2a/v1/consents (else invalid_scope), moves the
 * TPP's OAUTH authorisation of it to started, and adds the consent to
 * the sealed request (key "bg", src/oauth/oauth.h).
 */
#include <sys/types.h>

#include <string.h>

#include <kore.h>
#include <http.h>

#include "api/respond.h"
#include "common/crypto.h"
#include "db/db.h"
#include "oauth/client_cache.h"
#include "psu/login.h"
#include "oauth/oauth.h"
#include "web/forms.h"
#include "web/pages.h"

int	oauth_authorize(struct http_request *);

#define AUTHORIZE_STATE_MAX	1024
#define AUTHORIZE_BG_SCOPE	"AIS:"
#define AUTHORIZE_UUID_LEN	36

struct authorize_ctx {
	struct db_query	 q;
	/* scope=AIS:{consentId}: the request waiting for the consent. */
	json_t		*request;
	char		 consent_id[AUTHORIZE_UUID_LEN + 1];
};

static const char sql_client[] =
    "SELECT json_build_object('uris', c.redirect_uris, 'pkce', "
    "c.pkce_required, 'name', t.name, 'org', t.org_id) "
    "FROM oauth_client c JOIN tpp t ON t.id = c.tpp_id "
    "WHERE c.client_id = $1 AND c.status = 'active' AND t.status = 'active'";
static const char sql_bg_consent[] =
    "SELECT description, request FROM bg_oauth_authorize($1, $2)";

static void
authorize_free(struct http_request *req)
{
	struct authorize_ctx	*ctx = http_state_get(req);

	db_query_end(&ctx->q);
	if (ctx->request != NULL)
		json_decref(ctx->request);
}

static int
authorize_challenge_valid(const char *c)
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

/* Answered by an error page, never by a redirect. */
static const char *const authorize_page_params[] = {
	"client_id", "redirect_uri", NULL
};
static const char *const authorize_state_param[] = { "state", NULL };
/* Answered by an error redirect. */
static const char *const authorize_redirect_params[] = {
	"response_type", "scope", "state", "code_challenge",
	"code_challenge_method", NULL
};

static int
authorize_repeated(struct http_request *req, json_t *request)
{
	const char	*name;
	char		 text[96];

	if ((name = oauth_repeated_param(req,
	    authorize_redirect_params)) == NULL)
		return (0);
	(void)snprintf(text, sizeof(text), "%s must not be repeated", name);
	oauth_redirect_error(req, request, "invalid_request", text);
	return (-1);
}

/*
 * scope=AIS:{consentId}: 1 and the id when the scope is that alone, 0
 * when it names no AIS: scope, -1 (an error was sent) when it mixes one
 * with others or the id is not a UUID.
 */
static int
authorize_bg_scope(struct http_request *req, json_t *request,
    char consent_id[AUTHORIZE_UUID_LEN + 1])
{
	const char	*scope, *p;
	size_t		 plen = sizeof(AUTHORIZE_BG_SCOPE) - 1, len;

	if ((scope = forms_arg(req, "scope")) == NULL)
		return (0);
	for (p = scope; (p = strstr(p, AUTHORIZE_BG_SCOPE)) != NULL; p++) {
		if (p == scope || p[-1] == ' ')
			break;
	}
	if (p == NULL)
		return (0);
	while (*scope == ' ')
		scope++;
	len = strcspn(scope, " ");
	if (p != scope || strspn(scope + len, " ") != strlen(scope + len)) {
		oauth_redirect_error(req, request, "invalid_scope",
		    "scope AIS:{consentId} must be the only scope");
		return (-1);
	}
	if (len == plen + AUTHORIZE_UUID_LEN) {
		memcpy(consent_id, scope + plen, AUTHORIZE_UUID_LEN);
		consent_id[AUTHORIZE_UUID_LEN] = '\0';
	} else
		consent_id[0] = '\0';
	if (!crypto_is_uuid(consent_id)) {
		oauth_redirect_error(req, request, "invalid_scope",
		    "scope AIS:{consentId} must name a consentId (a UUID)");
		return (-1);
	}
	return (1);
}

/*
 * Checks what may be answered by redirect; 0 or an error was sent. A
 * Berlin Group consent's scope leaves its id in consent_id (else "").
 */
static int
authorize_check_request(struct http_request *req, json_t *request,
    int pkce_required, char consent_id[AUTHORIZE_UUID_LEN + 1])
{
	const char	*rtype, *method, *challenge, *state;
	char		 scope[128];
	int		 bits, bg;

	if (authorize_repeated(req, request) == -1)
		return (-1);
	/* The request travels sealed in the login form: bound its size. */
	state = forms_arg(req, "state");
	if (state != NULL && strlen(state) > AUTHORIZE_STATE_MAX) {
		oauth_redirect_error(req, request, "invalid_request",
		    "state is longer than 1024 bytes");
		return (-1);
	}
	rtype = forms_arg(req, "response_type");
	if (rtype == NULL || strcmp(rtype, "code") != 0) {
		oauth_redirect_error(req, request, rtype == NULL ?
		    "invalid_request" : "unsupported_response_type",
		    "response_type must be code");
		return (-1);
	}
	consent_id[0] = '\0';
	if ((bg = authorize_bg_scope(req, request, consent_id)) == -1)
		return (-1);
	bits = bg ? OAUTH_SCOPE_AIS : oauth_scope_parse(forms_arg(req,
	    "scope"), scope, sizeof(scope));
	if (bg)
		(void)snprintf(scope, sizeof(scope), "ACCOUNT_INFORMATION");
	if (bits <= 0) {
		oauth_redirect_error(req, request, "invalid_scope",
		    "scope must name FUND_AVAILABILITY, ACCOUNT_INFORMATION "
		    "or PAYMENT_INITIATION");
		return (-1);
	}
	json_object_set_new(request, "scope", json_string(scope));

	challenge = forms_arg(req, "code_challenge");
	method = forms_arg(req, "code_challenge_method");
	if (method != NULL && strcmp(method, "S256") != 0) {
		oauth_redirect_error(req, request, "invalid_request",
		    "code_challenge_method must be S256");
		return (-1);
	}
	if (challenge == NULL && (method != NULL || pkce_required)) {
		oauth_redirect_error(req, request, "invalid_request",
		    "code_challenge (S256) is required");
		return (-1);
	}
	if (challenge != NULL) {
		if (method == NULL || !authorize_challenge_valid(challenge)) {
			oauth_redirect_error(req, request, "invalid_request",
			    "code_challenge must be a base64url S256 value "
			    "with code_challenge_method=S256");
			return (-1);
		}
		json_object_set_new(request, "code_challenge",
		    json_string(challenge));
	}
	return (0);
}

/* redirect_uri must equal one registered URI exactly (RFC 9700 2.1). */
static int
authorize_redirect_registered(json_t *client, const char *redirect_uri)
{
	json_t	*uri;
	size_t	 i;

	json_array_foreach(json_object_get(client, "uris"), i, uri) {
		if (json_is_string(uri) &&
		    strcmp(json_string_value(uri), redirect_uri) == 0)
			return (1);
	}
	return (0);
}

static enum db_next
authorize_decide(struct http_request *req, struct authorize_ctx *ctx,
    json_t *client)
{
	json_t		*request;
	const char	*state, *redirect_uri;

	redirect_uri = forms_arg(req, "redirect_uri");
	if (client == NULL ||
	    !authorize_redirect_registered(client, redirect_uri)) {
		pages_message(req, 400, "error_title", "error_client");
		return (DB_ANSWERED);
	}
	state = forms_arg(req, "state");
	request = json_pack("{s:s, s:s, s:O, s:O}",
	    "client_id", forms_arg(req, "client_id"),
	    "redirect_uri", redirect_uri,
	    "tpp_name", json_object_get(client, "name"),
	    "tpp_org", json_object_get(client, "org"));
	if (request == NULL) {
		respond_server_error(req, "authorize json");
		return (DB_ANSWERED);
	}
	/* A repeated state is echoed in no error: which one is the TPP's? */
	if (state != NULL &&
	    oauth_repeated_param(req, authorize_state_param) == NULL)
		json_object_set_new(request, "state", json_string(state));
	if (authorize_check_request(req, request, json_is_true(
	    json_object_get(client, "pkce")), ctx->consent_id) == -1) {
		json_decref(request);
		return (DB_ANSWERED);
	}
	if (ctx->consent_id[0] == '\0') {
		login_page_new(req, request);
		json_decref(request);
		return (DB_ANSWERED);
	}
	ctx->request = request;
	db_query_begin(&ctx->q, req, sql_bg_consent);
	db_param(&ctx->q, forms_arg(req, "client_id"));
	db_param(&ctx->q, ctx->consent_id);
	return (DB_QUERY);
}

/* The Berlin Group consent's answer: invalid_scope, or its login page. */
static enum db_next
authorize_bg_consent(struct http_request *req, struct authorize_ctx *ctx)
{
	json_t		*found;
	const char	*key;
	json_t		*value;

	if (db_rows(&ctx->q) != 1) {
		respond_server_error(req, "authorize bg consent rows");
		return (DB_ANSWERED);
	}
	if (!db_is_null(&ctx->q, 0, 0)) {
		oauth_redirect_error(req, ctx->request, "invalid_scope",
		    db_value(&ctx->q, 0, 0));
		return (DB_ANSWERED);
	}
	if ((found = json_loads(db_value(&ctx->q, 0, 1), 0, NULL)) == NULL) {
		respond_server_error(req, "authorize bg consent");
		return (DB_ANSWERED);
	}
	/* The consent's TPP is the client's: its name and key "bg". */
	json_object_foreach(found, key, value) {
		if (strcmp(key, "client_id") != 0)
			json_object_set(ctx->request, key, value);
	}
	json_decref(found);
	login_page_new(req, ctx->request);
	return (DB_ANSWERED);
}

/* The registration from the database row, cached for the next requests. */
static json_t *
authorize_client_row(struct authorize_ctx *ctx, const char *client_id)
{
	json_t	*row;

	if (db_rows(&ctx->q) != 1)
		return (NULL);
	if ((row = json_loads(db_value(&ctx->q, 0, 0), 0, NULL)) == NULL)
		return (NULL);
	client_cache_put(CLIENT_CACHE_PAGE, client_id, row);
	json_decref(row);
	return (client_cache_get(CLIENT_CACHE_PAGE, client_id));
}

static enum db_next
authorize_start(struct http_request *req, struct authorize_ctx *ctx)
{
	json_t		*client;
	const char	*client_id, *redirect_uri;

	http_populate_get(req);
	client_id = forms_arg(req, "client_id");
	redirect_uri = forms_arg(req, "redirect_uri");
	if (client_id == NULL || redirect_uri == NULL ||
	    oauth_repeated_param(req, authorize_page_params) != NULL) {
		pages_message(req, 400, "error_title", "error_client");
		return (DB_ANSWERED);
	}
	client = client_cache_get(CLIENT_CACHE_PAGE, client_id);
	if (client != NULL)
		return (authorize_decide(req, ctx, client));
	db_query_begin(&ctx->q, req, sql_client);
	db_param(&ctx->q, client_id);
	return (DB_QUERY);
}

static enum db_next
authorize_client_found(struct http_request *req, void *arg)
{
	struct authorize_ctx	*ctx = arg;

	if (ctx->request != NULL)
		return (authorize_bg_consent(req, ctx));
	return (authorize_decide(req, ctx, authorize_client_row(ctx,
	    forms_arg(req, "client_id"))));
}

int
oauth_authorize(struct http_request *req)
{
	struct authorize_ctx	*ctx;

	if (!http_state_exists(req)) {
		ctx = http_state_create(req, sizeof(*ctx), authorize_free);
		if (authorize_start(req, ctx) == DB_ANSWERED)
			return (KORE_RESULT_OK);
	}
	ctx = http_state_get(req);
	return (db_drive(req, &ctx->q, authorize_client_found, ctx,
	    "authorize client lookup"));
}
