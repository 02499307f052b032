/*
 * The payment endpoints, on the contract's paths /auth/v1/psd2/payments/
 * (Berlin Group 1.2) and, through src/bg/payments.c, on the standard's
 * /xs2a/v1/payments/ (1.3.11); below the root:
 *
 *	POST	{product}				initiate (201)
 *	GET	{product}/{paymentId}			the payment
 *	DELETE	{product}/{paymentId}			cancel (204, or 405)
 *	GET	{product}/{paymentId}/status		transactionStatus
 *	GET	{product}/{paymentId}/authorisations	its one authorisation id
 *	POST	{product}/{paymentId}/authorisations	the existing one (200;
 *							the standard: 409)
 *	GET	{product}/{paymentId}/authorisations/{authorisationId}
 *
 * One route; the path is parsed here, so that a product or an id that is
 * not one is answered (after the bearer token) with its Berlin Group code.
 */
#include <sys/types.h>

#include <stdio.h>
#include <string.h>

#include <kore.h>
#include <http.h>

#include <openssl/rand.h>

#include "api/respond.h"
#include "common/crypto.h"
#include "pis/pis.h"
#include "pis/pis_input.h"

int	pis_payments(struct http_request *);

#define PIS_BODY_MAX		16384
#define PIS_SEGMENT_MAX		64
#define PIS_NONCE_LEN		32

static const char sql_initiate[] =
    "SELECT refusal, detail, status, body FROM pis_initiate($1, $2, $3, $4, "
    "$5, $6, $7, $8, $9, $10, $11, $12, $13, $14)";
static const char sql_payment[] =
    "SELECT refusal, detail, status, body FROM pis_payment($1, $2, $3, $4, "
    "$5, $6, $7, $8, $9, $10)";

static const struct pis_surface	pis_contract = { PIS_PREFIX, 0 };

enum pis_kind {
	PIS_NONE,
	PIS_INITIATE,
	PIS_PAYMENT,
	PIS_STATUS,
	PIS_AUTHORISATIONS,
	PIS_AUTHORISATION
};

struct pis_path {
	enum pis_kind	kind;
	char		product[PIS_SEGMENT_MAX + 1];
	char		payment[PIS_SEGMENT_MAX + 1];
	char		auth[PIS_SEGMENT_MAX + 1];
};

/* The next segment of *p into out; -1 when it is empty or too long. */
static int
pis_segment(const char **p, char *out)
{
	size_t	len;

	len = strcspn(*p, "/");
	if (len == 0 || len > PIS_SEGMENT_MAX)
		return (-1);
	memcpy(out, *p, len);
	out[len] = '\0';
	*p += len;
	if (**p == '/')
		(*p)++;
	return (0);
}

static void
pis_path_parse(const char *path, const char *root, struct pis_path *pp)
{
	const char	*p;
	char		 word[PIS_SEGMENT_MAX + 1];

	memset(pp, 0, sizeof(*pp));
	if (strncmp(path, root, strlen(root)) != 0)
		return;
	p = path + strlen(root);
	if (pis_segment(&p, pp->product) == -1)
		return;
	if (*p == '\0') {
		pp->kind = p[-1] == '/' ? PIS_NONE : PIS_INITIATE;
		return;
	}
	if (pis_segment(&p, pp->payment) == -1)
		return;
	if (*p == '\0') {
		pp->kind = p[-1] == '/' ? PIS_NONE : PIS_PAYMENT;
		return;
	}
	if (pis_segment(&p, word) == -1)
		return;
	if (strcmp(word, "status") == 0 && *p == '\0' && p[-1] != '/') {
		pp->kind = PIS_STATUS;
	} else if (strcmp(word, "authorisations") == 0 && *p == '\0' &&
	    p[-1] != '/') {
		pp->kind = PIS_AUTHORISATIONS;
	} else if (strcmp(word, "authorisations") == 0 &&
	    pis_segment(&p, pp->auth) == 0 && *p == '\0' && p[-1] != '/') {
		pp->kind = PIS_AUTHORISATION;
	}
}

int
pis_path_methods(const char *path, const struct pis_surface *surface)
{
	struct pis_path	pp;

	pis_path_parse(path, surface->root, &pp);
	switch (pp.kind) {
	case PIS_INITIATE:
		return (HTTP_METHOD_POST);
	case PIS_PAYMENT:
		return (HTTP_METHOD_GET | HTTP_METHOD_DELETE);
	case PIS_AUTHORISATIONS:
		return (HTTP_METHOD_GET | HTTP_METHOD_POST);
	case PIS_STATUS:
	case PIS_AUTHORISATION:
		return (HTTP_METHOD_GET);
	default:
		return (0);
	}
}

/*
 * The action of pis_payment() for this path and method, or NULL. On the
 * standard's surface HEAD is GET without the body, as on its other paths.
 */
static const char *
pis_action(struct http_request *req, const struct pis_path *pp,
    int standard)
{
	int	get;

	get = req->method == HTTP_METHOD_GET ||
	    (standard && req->method == HTTP_METHOD_HEAD);
	switch (pp->kind) {
	case PIS_PAYMENT:
		if (get)
			return ("payment");
		if (req->method == HTTP_METHOD_DELETE)
			return ("cancel");
		break;
	case PIS_STATUS:
		if (get)
			return ("status");
		break;
	case PIS_AUTHORISATIONS:
		if (get)
			return ("authorisations");
		if (req->method == HTTP_METHOD_POST)
			return (standard ? "start" : "authorise");
		break;
	case PIS_AUTHORISATION:
		if (get)
			return ("authorisation");
		break;
	default:
		break;
	}
	return (NULL);
}

static void
pis_ids_check(struct xs2a_call *c, const struct pis_path *pp)
{
	if (!pis_product_known(pp->product, strlen(pp->product))) {
		xs2a_input_error(c, 404, "PRODUCT_UNKNOWN", NULL,
		    "The payment product %s is not offered; products: "
		    "sepa-credit-transfers, instant-sepa-credit-transfers.",
		    pp->product);
		return;
	}
	if (pp->payment[0] != '\0' && !crypto_is_uuid(pp->payment))
		xs2a_input_error(c, 404, "RESOURCE_UNKNOWN", "paymentId",
		    "The payment or authorisation is unknown.");
	if (pp->auth[0] != '\0' && !crypto_is_uuid(pp->auth))
		xs2a_input_error(c, 404, "RESOURCE_UNKNOWN", "authorisationId",
		    "The payment or authorisation is unknown.");
}

static void
pis_initiate(struct http_request *req, struct pis_call *pc,
    const struct pis_path *pp, const struct pis_surface *surface)
{
	struct xs2a_call	*c = &pc->x;
	struct pis_payment_in	 in;
	json_t			*doc;
	char			*body, *json, amount[24];
	uint8_t			 nonce[PIS_NONCE_LEN];
	size_t			 len;

	memset(&in, 0, sizeof(in));
	in.product = pp->product;
	in.standard = surface->standard;
	pis_ids_check(c, pp);
	body = xs2a_body(req, c, PIS_BODY_MAX, &len);
	if (c->input.status == 0)
		(void)pis_payment_parse(c, body, len, &in);
	if (body != NULL)
		kore_free(body);
	if (c->input.status == 0)
		(void)pis_sca_headers(c, req, &in);

	json = NULL;
	if (c->input.status == 0) {
		snprintf(amount, sizeof(amount), "%lld",
		    (long long)in.amount_minor);
		doc = json_pack("{s:s, s:s, s:s, s:s?, s:s, s:s, s:s?}",
		    "debtor", in.debtor, "creditor", in.creditor,
		    "name", in.name, "remittance", in.remittance,
		    "amount", amount, "currency", in.currency, "date",
		    in.execution_date[0] ? in.execution_date : NULL);
		json = doc ? json_dumps(doc, JSON_COMPACT) : NULL;
		if (doc != NULL)
			json_decref(doc);
		if (json == NULL || RAND_bytes(nonce, sizeof(nonce)) != 1)
			xs2a_input_error(c, 500, "INTERNAL_SERVER_ERROR", NULL,
			    "The payment could not be prepared.");
	}
	if (pis_begin(req, pc, sql_initiate)) {
		db_param(&c->q, surface->root);
		db_param(&c->q, pp->product);
		db_param(&c->q, json);
		db_param_bin(&c->q, nonce, sizeof(nonce));
		db_param(&c->q, in.decoupled ? "true" : "false");
		db_param(&c->q, in.redirect_uri);
		db_param(&c->q, in.nok_redirect_uri);
		db_param_int(&c->q, pis_settings()->sca_seconds);
		db_param_int(&c->q, pis_settings()->redirect_seconds);
	}
	free(json);
	if (in.remittance != NULL)
		kore_free(in.remittance);
}

int
pis_payments(struct http_request *req)
{
	if (http_state_exists(req))
		return (pis_finish(req, http_state_get(req)));
	return (pis_serve(req, pis_call_new(req), &pis_contract));
}

int
pis_serve(struct http_request *req, struct pis_call *c,
    const struct pis_surface *surface)
{
	struct pis_path		 pp;
	const char		*action;

	pis_path_parse(req->path, surface->root, &pp);
	if (pp.kind == PIS_NONE) {
		respond_tpp_error(req, 404, "RESOURCE_UNKNOWN", NULL,
		    "No payment resource at this path.");
		c->x.answered = 1;
		return (KORE_RESULT_OK);
	}
	if (pp.kind == PIS_INITIATE) {
		if (req->method != HTTP_METHOD_POST) {
			respond_tpp_error(req, 405, "SERVICE_INVALID", NULL,
			    "Payments are initiated with POST.");
			c->x.answered = 1;
			return (KORE_RESULT_OK);
		}
		pis_initiate(req, c, &pp, surface);
		return (pis_finish(req, c));
	}
	if ((action = pis_action(req, &pp, surface->standard)) == NULL) {
		respond_tpp_error(req, 405, "SERVICE_INVALID", NULL,
		    "This method is not offered on this payment resource.");
		c->x.answered = 1;
		return (KORE_RESULT_OK);
	}
	pis_ids_check(&c->x, &pp);
	if (pis_begin(req, c, sql_payment)) {
		db_param(&c->x.q, surface->root);
		db_param(&c->x.q, pp.product);
		db_param(&c->x.q, pp.payment);
		db_param(&c->x.q, action);
		db_param(&c->x.q, pp.auth[0] ? pp.auth : NULL);
	}
	return (pis_finish(req, c));
}
