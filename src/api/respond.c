/*
 * Response helpers. A handler sends exactly one answer through one of
 * these; each adds the security headers and writes the request's log line.
 */
#include <sys/types.h>

#include <stdio.h>
#include <string.h>
#include <time.h>

#include <kore.h>
#include <http.h>

#include "api/respond.h"
#include "common/config.h"
#include "common/crypto.h"
#include "db/db.h"
#include "metrics/downtime.h"
#include "metrics/kpi.h"
#include "metrics/metrics.h"
#include "tpp/dpop.h"

static void
respond_security_headers(struct http_request *req)
{
	http_response_header(req, "content-security-policy",
	    "default-src 'self'; frame-ancestors 'none'");
	http_response_header(req, "x-content-type-options", "nosniff");
	http_response_header(req, "x-frame-options", "DENY");
	http_response_header(req, "referrer-policy", "no-referrer");
	http_response_header(req, "cache-control", "no-store");
	http_response_header(req, "pragma", "no-cache");
}

/*
 * The request id is the TPP's x-request-id when it is a UUID, otherwise a
 * fresh one; it ties every log line of a request (and its statements in
 * PostgreSQL: handed down to src/db/db.c by respond_install_hooks) to
 * what the caller saw. It lives in the
 * request itself (Kore patch 0021): a worker has many requests in flight.
 */
const char *
respond_request_id(struct http_request *req)
{
	const char	*hdr;

	if (req->rid[0] != '\0')
		return (req->rid);
	if (http_request_header(req, "x-request-id", &hdr) &&
	    crypto_is_uuid(hdr)) {
		snprintf(req->rid, sizeof(req->rid), "%s", hdr);
	} else if (crypto_uuid(req->rid) == -1) {
		snprintf(req->rid, sizeof(req->rid), "-");
	}
	return (req->rid);
}

/* The route's pattern, not the path: one label set per route. */
static void
respond_metrics(struct http_request *req, int status, u_int64_t ms)
{
	metrics_http(req->hdlr != NULL ? req->hdlr->path : "unrouted",
	    http_method_text(req->method), status, ms * 1000);
}

/*
 * The time since the request was read (Kore patch 0032): Kore's own
 * start and total count only the handler's runs, not the waits for the
 * database between them, which are most of a slow answer. The
 * instance's own probe (src/app/probe.c) feeds the downtime detector
 * itself and stays out of the log, the HTTP metrics and the KPIs.
 */
static void
respond_log(struct http_request *req, int status)
{
	u_int64_t	ms;

	ms = kore_time_ms() - req->received;
	downtime_request(req, status);
	if (downtime_is_probe(req))
		return;
	kore_log(LOG_INFO, "request id=%s method=%s path=%s status=%d ms=%llu",
	    respond_request_id(req), http_method_text(req->method),
	    req->path, status, (unsigned long long)ms);
	respond_metrics(req, status, ms);
	kpi_record(req->path, status, ms);
}

/*
 * The standard interface (/xs2a/) echoes X-Request-ID on every answer, as
 * the Berlin Group guidelines require; the contract's paths do not.
 */
static void
respond_echo_request_id(struct http_request *req)
{
	if (req->path == NULL || strncmp(req->path, RESPOND_BG_ROOT,
	    strlen(RESPOND_BG_ROOT)) != 0 ||
	    (req->path[strlen(RESPOND_BG_ROOT)] != '\0' &&
	    req->path[strlen(RESPOND_BG_ROOT)] != '/'))
		return;
	http_response_header(req, "x-request-id", respond_request_id(req));
}

void
respond_raw(struct http_request *req, int status, const char *ctype,
    const void *body, size_t len)
{
	respond_security_headers(req);
	respond_echo_request_id(req);
	if (ctype != NULL)
		http_response_header(req, "content-type", ctype);
	respond_log(req, status);
	http_response(req, status, body, len);
}

void
respond_json(struct http_request *req, int status, json_t *body)
{
	char	*text;

	text = json_dumps(body, JSON_COMPACT);
	json_decref(body);
	if (text == NULL) {
		respond_server_error(req, "json_dumps");
		return;
	}
	respond_raw(req, status, "application/json", text, strlen(text));
	free(text);
}

void
respond_html(struct http_request *req, int status, const char *html,
    size_t len)
{
	respond_raw(req, status, "text/html; charset=utf-8", html, len);
}

/*
 * After a POST, 303: the browser follows with a GET and never sends the
 * form (a PSU's decision, credentials) on to the client (FAPI 2.0
 * 5.3.2.2 rules out 307).
 */
void
respond_redirect(struct http_request *req, const char *url)
{
	http_response_header(req, "location", url);
	respond_raw(req, req->method == HTTP_METHOD_POST ? 303 : 302, NULL,
	    NULL, 0);
}

void
respond_tpp_error(struct http_request *req, int status, const char *code,
    const char *path, const char *text)
{
	json_t	*msg, *v;

	msg = json_pack("{s:s, s:s}", "category", "ERROR", "code", code);
	if (msg == NULL) {
		respond_server_error(req, "json_pack");
		return;
	}
	/*
	 * A text or path cut inside a UTF-8 sequence (a "%.40s" of what the
	 * TPP sent) is not a JSON string: the body keeps its documented
	 * shape with a plain text instead.
	 */
	if (path != NULL && (v = json_string(path)) != NULL)
		json_object_set_new(msg, "path", v);
	if ((v = json_string(text)) == NULL)
		v = json_string("The request is malformed.");
	json_object_set_new(msg, "text", v);
	respond_json(req, status, json_pack("{s:[o]}", "tppMessages", msg));
}

void
respond_oauth_error(struct http_request *req, int status, const char *error,
    const char *description)
{
	if (status == 401)
		http_response_header(req, "www-authenticate",
		    "Basic realm=\"psd2gate\"");
	respond_json(req, status, json_pack("{s:s, s:s}", "error", error,
	    "error_description", description));
}

void
respond_bearer_error(struct http_request *req, int expired, const char *token)
{
	json_t	*body;
	char	*desc;
	int	 len;

	len = asprintf(&desc, "%s: %s", expired ? "Access token expired" :
	    "Invalid access token", token ? token : "");
	if (len == -1) {
		respond_server_error(req, "asprintf");
		return;
	}
	body = json_pack("{s:s, s:s}", "error", "invalid_token",
	    "error_description", desc);
	free(desc);
	http_response_header(req, "www-authenticate",
	    "Bearer error=\"invalid_token\"");
	respond_json(req, 401, body);
}

/*
 * A DPoP proof refused at a resource (RFC 9449 7.1): WWW-Authenticate
 * DPoP with the error, and for use_dpop_nonce a fresh DPoP-Nonce; the
 * body the surface's own (standard: TOKEN_INVALID; the contract's paths:
 * the error and why).
 */
void
respond_dpop_error(struct http_request *req, int standard, int nonce,
    const char *why)
{
	const char	*error;
	char		 hdr[96], fresh[DPOP_NONCE_MAX];

	error = nonce ? "use_dpop_nonce" : "invalid_dpop_proof";
	(void)snprintf(hdr, sizeof(hdr), "DPoP error=\"%s\", "
	    "algs=\"PS256 ES256 EdDSA\"", error);
	http_response_header(req, "www-authenticate", hdr);
	if (nonce && dpop_nonce(fresh, sizeof(fresh)) == 0)
		http_response_header(req, "dpop-nonce", fresh);
	if (standard) {
		respond_tpp_error(req, 401, "TOKEN_INVALID", "DPoP", why);
		return;
	}
	respond_json(req, 401, json_pack("{s:s, s:s}", "error", error,
	    "error_description", why));
}

/*
 * The standard interface's 401 for a bearer token it cannot use: the
 * Berlin Group body (TOKEN_INVALID, TOKEN_EXPIRED), never the token.
 */
void
respond_bg_token_error(struct http_request *req, int expired)
{
	http_response_header(req, "www-authenticate",
	    "Bearer error=\"invalid_token\"");
	respond_tpp_error(req, 401, expired ? "TOKEN_EXPIRED" :
	    "TOKEN_INVALID", "Authorization", expired ?
	    "The access token has expired." :
	    "The access token is missing, unknown or no longer valid.");
}

static void
respond_timestamp(char *out, size_t len)
{
	struct timespec	ts;
	struct tm	tm;
	char		base[24];
	int		ms;

	clock_gettime(CLOCK_REALTIME, &ts);
	gmtime_r(&ts.tv_sec, &tm);
	if (strftime(base, sizeof(base), "%Y-%m-%dT%H:%M:%S", &tm) == 0)
		base[0] = '\0';
	ms = (int)((ts.tv_nsec / 1000000) % 1000);
	snprintf(out, len, "%.19s.%03d+0000", base, ms);
}

/*
 * The spec's 500 body. When the database could not be reached at all
 * (the query never ran), the same body with 503 and Retry-After: the
 * outage is transient and the client may retry.
 */
void
respond_server_error(struct http_request *req, const char *where)
{
	char		 error_id[37], stamp[40], body[512], retry_s[16];
	const char	*message;
	int		 len, retry, down, status;

	down = db_unavailable(req, &retry);
	if (crypto_uuid(error_id) == -1)
		snprintf(error_id, sizeof(error_id), "%s",
		    "00000000-0000-4000-8000-000000000000");
	respond_timestamp(stamp, sizeof(stamp));
	kore_log(LOG_ERR, "error id=%s errorId=%s path=%s where=%s%s%s",
	    respond_request_id(req), error_id, req->path, where,
	    down ? " cause=database-unavailable" : "",
	    downtime_is_probe(req) ? " source=probe" : "");
	if (down) {
		status = 503;
		message = "The service is temporarily unavailable. Please "
		    "retry later; if the problem persists, contact the system "
		    "administration and quote the errorId.";
		snprintf(retry_s, sizeof(retry_s), "%d", retry);
		http_response_header(req, "retry-after", retry_s);
	} else {
		status = 500;
		message = "An unexpected error occurred. Please contact the "
		    "system administration and quote the errorId.";
	}
	len = snprintf(body, sizeof(body), "{\"errorId\":\"%s\","
	    "\"timestamp\":\"%s\",\"message\":\"%s\"}", error_id, stamp,
	    message);
	respond_raw(req, status, "application/json", body, (size_t)len);
}

void
respond_set_cookie(struct http_request *req, const char *name,
    const char *value, const char *path, int64_t max_age)
{
	char	buf[1024];
	int	len;

	len = snprintf(buf, sizeof(buf),
	    "%s=%s; Path=%s; Max-Age=%lld; HttpOnly; SameSite=Lax%s",
	    name, value, path, (long long)max_age,
	    app_cfg.cookie_secure ? "; Secure" : "");
	if (len < 0 || (size_t)len >= sizeof(buf))
		return;
	http_response_header(req, "set-cookie", buf);
}

static const struct {
	int		 status;
	const char	*code;
	const char	*text;
} respond_kore_errors[] = {
	{ 400, "FORMAT_ERROR", "The request is malformed." },
	{ 403, "SERVICE_BLOCKED", "The request is not allowed." },
	{ 404, "RESOURCE_UNKNOWN", "No such resource or endpoint." },
	{ 405, "SERVICE_INVALID", "The method is not allowed on this path." },
	{ 408, "FORMAT_ERROR", "The request was not received in time." },
	{ 411, "FORMAT_ERROR", "Content-Length is required." },
	{ 413, "FORMAT_ERROR", "The request body is too large." },
	{ 414, "FORMAT_ERROR", "The request URI is too long." },
	{ 431, "FORMAT_ERROR", "The request headers are too large." },
};

/*
 * Bodies and log lines for the answers Kore gives by itself (unknown
 * route, method not allowed, limits); see conf/kore-patches/0006.
 */
static void
respond_kore_error(struct connection *c, int status, struct kore_buf *body,
    const char **ctype)
{
	struct http_request	*req, *last;
	const char		*code, *text;
	size_t			 i;

	code = "FORMAT_ERROR";
	text = "The request could not be processed.";
	for (i = 0; i < sizeof(respond_kore_errors) /
	    sizeof(respond_kore_errors[0]); i++) {
		if (respond_kore_errors[i].status == status) {
			code = respond_kore_errors[i].code;
			text = respond_kore_errors[i].text;
		}
	}
	kore_buf_appendf(body, "{\"tppMessages\":[{\"category\":\"ERROR\","
	    "\"code\":\"%s\",\"text\":\"%s\"}]}", code, text);
	*ctype = "application/json";

	/*
	 * The request this answer is for: the last one on the connection
	 * that has no answer yet. With pipelining the previous request is
	 * still listed (answered) while the next one is parsed; an error
	 * found before the next one exists (bad request line) is not its.
	 */
	last = NULL;
	TAILQ_FOREACH(req, &c->http_requests, olist)
		last = req;
	req = (last != NULL && last->status == 0) ? last : NULL;
	if (req != NULL && req->path != NULL) {
		downtime_request(req, status);
		kore_log(LOG_INFO, "request id=%s method=%s path=%s status=%d "
		    "ms=0", respond_request_id(req),
		    http_method_text(req->method), req->path, status);
		respond_metrics(req, status, 0);
	} else {
		kore_log(LOG_INFO, "request id=- method=- path=- status=%d "
		    "ms=0", status);
		metrics_http("unrouted", "-", status, 0);
	}
}

/*
 * The answers given below this layer: Kore's own (unknown route, limits)
 * and the database layer's for a failed query, which also logs with the
 * request's id.
 */
void
respond_install_hooks(void)
{
	static const struct db_request_hooks	db_hooks = {
		respond_request_id,
		respond_server_error
	};

	http_error_body_hook = respond_kore_error;
	db_init(&db_hooks);
}
