/*
 * GET /auth/consents/{consentId}/authorisations/{authorisationId}: the
 * scaRedirect of a Berlin Group consent authorised with the redirect
 * approach (src/bg/README.md "SCA of a consent"; ?lang=en|de|nl, no
 * JavaScript needed).
 *
 * One query (bg_authorise_page, src/db/functions/33_bg_authorise.sql)
 * checks that the authorisation is of that consent, REDIRECT, still
 * open and the consent received, moves it to started and returns the
 * request the PSU's login carries sealed (src/oauth/oauth.h, key "bg");
 * the page is then the PSU login of /auth/oauth/authorize, and after the
 * TOTP step the consent page (src/oauth/consent.c) shows the consent and
 * takes the decision. An unknown, answered or timed-out authorisation
 * gets a page saying so, and nothing changes.
 */
#include <sys/types.h>

#include <string.h>

#include <kore.h>
#include <http.h>

#include "api/respond.h"
#include "bg/bg.h"
#include "common/crypto.h"
#include "db/db.h"
#include "psu/login.h"
#include "web/pages.h"

int	bg_consent_authorise_page(struct http_request *);

#define AUTHORISE_PREFIX	"/auth/consents/"
#define AUTHORISE_MIDDLE	"/authorisations/"

struct authorise_ctx {
	struct db_query	q;
};

static const char sql_page[] =
    "SELECT refusal, request FROM bg_authorise_page($1, $2)";

static void
authorise_free(struct http_request *req)
{
	struct authorise_ctx	*ctx = http_state_get(req);

	db_query_end(&ctx->q);
}

/* The two ids of the path; -1 when it does not have that shape. */
static int
authorise_path_ids(const char *path, char consent[BG_UUID_LEN + 1],
    char authorisation[BG_UUID_LEN + 1])
{
	size_t	plen = sizeof(AUTHORISE_PREFIX) - 1;
	size_t	mlen = sizeof(AUTHORISE_MIDDLE) - 1;

	if (strlen(path) != plen + BG_UUID_LEN + mlen + BG_UUID_LEN ||
	    strncmp(path, AUTHORISE_PREFIX, plen) != 0 ||
	    strncmp(path + plen + BG_UUID_LEN, AUTHORISE_MIDDLE, mlen) != 0)
		return (-1);
	memcpy(consent, path + plen, BG_UUID_LEN);
	consent[BG_UUID_LEN] = '\0';
	memcpy(authorisation, path + plen + BG_UUID_LEN + mlen, BG_UUID_LEN);
	authorisation[BG_UUID_LEN] = '\0';
	return (crypto_is_uuid(consent) && crypto_is_uuid(authorisation) ?
	    0 : -1);
}

static enum db_next
authorise_answer(struct http_request *req, void *arg)
{
	struct authorise_ctx	*ctx = arg;
	json_t			*request;
	const char		*refusal;

	if (db_rows(&ctx->q) != 1) {
		respond_server_error(req, "bg authorise page rows");
		return (DB_ANSWERED);
	}
	if (!db_is_null(&ctx->q, 0, 0)) {
		refusal = db_value(&ctx->q, 0, 0);
		if (strcmp(refusal, "gone") == 0)
			pages_message(req, 410, "error_title", "bg_auth_gone");
		else
			pages_message(req, 404, "error_title",
			    "bg_auth_unknown");
		return (DB_ANSWERED);
	}
	if ((request = json_loads(db_value(&ctx->q, 0, 1), 0,
	    NULL)) == NULL) {
		respond_server_error(req, "bg authorise page request");
		return (DB_ANSWERED);
	}
	login_page_new(req, request);
	json_decref(request);
	return (DB_ANSWERED);
}

int
bg_consent_authorise_page(struct http_request *req)
{
	struct authorise_ctx	*ctx;
	char			 consent[BG_UUID_LEN + 1];
	char			 authorisation[BG_UUID_LEN + 1];

	if (!http_state_exists(req)) {
		http_populate_get(req);
		if (authorise_path_ids(req->path, consent,
		    authorisation) == -1) {
			pages_message(req, 404, "error_title",
			    "bg_auth_unknown");
			return (KORE_RESULT_OK);
		}
		ctx = http_state_create(req, sizeof(*ctx), authorise_free);
		db_query_begin(&ctx->q, req, sql_page);
		db_param(&ctx->q, consent);
		db_param(&ctx->q, authorisation);
	}
	ctx = http_state_get(req);
	return (db_drive(req, &ctx->q, authorise_answer, ctx,
	    "bg authorise page"));
}
