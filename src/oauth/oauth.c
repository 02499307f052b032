/*
 * Shared authorisation-server helpers (see oauth.h).
 */
#include <sys/types.h>

#include <stdint.h>

#include <stdio.h>
#include <string.h>
#include <strings.h>

#include <kore.h>
#include <http.h>

#include "api/respond.h"
#include "common/crypto.h"
#include "common/encoding.h"
#include "oauth/oauth.h"
#include "tpp/dpop.h"

static const struct {
	const char	*name;
	int		 bit;
} oauth_scopes[] = {
	{ "FUND_AVAILABILITY",		OAUTH_SCOPE_FUND },
	{ "ACCOUNT_INFORMATION",	OAUTH_SCOPE_AIS },
	{ "PAYMENT_INITIATION",		OAUTH_SCOPE_PIS },
};
#define OAUTH_NSCOPES	(sizeof(oauth_scopes) / sizeof(oauth_scopes[0]))

static int
oauth_scope_bit(const char *word, size_t len)
{
	size_t	i;

	for (i = 0; i < OAUTH_NSCOPES; i++) {
		if (strlen(oauth_scopes[i].name) == len &&
		    memcmp(oauth_scopes[i].name, word, len) == 0)
			return (oauth_scopes[i].bit);
	}
	return (-1);
}

static void
oauth_scope_join(int bits, const char *sep, const char *quote, char *out,
    size_t len)
{
	size_t	i;
	int	first;

	out[0] = '\0';
	first = 1;
	for (i = 0; i < OAUTH_NSCOPES; i++) {
		if (!(bits & oauth_scopes[i].bit))
			continue;
		snprintf(out + strlen(out), len - strlen(out), "%s%s%s%s",
		    first ? "" : sep, quote, oauth_scopes[i].name, quote);
		first = 0;
	}
}

int
oauth_scope_parse(const char *text, char *canonical, size_t len)
{
	const char	*p, *end;
	int		 bits, bit;

	bits = 0;
	p = text ? text : "";
	while (*p != '\0') {
		while (*p == ' ')
			p++;
		if (*p == '\0')
			break;
		end = p + strcspn(p, " ");
		if ((bit = oauth_scope_bit(p, (size_t)(end - p))) == -1)
			return (-1);
		bits |= bit;
		p = end;
	}
	oauth_scope_join(bits, " ", "", canonical, len);
	return (bits);
}

void
oauth_scope_array(int bits, char *out, size_t len)
{
	char	inner[128];

	oauth_scope_join(bits, ",", "\"", inner, sizeof(inner));
	snprintf(out, len, "{%s}", inner);
}

static void
oauth_append_param(struct kore_buf *buf, const char *name, const char *value)
{
	char	*enc;
	size_t	 max;
	int	 n;

	if (value == NULL)
		return;
	max = FORM_ENCODED_MAX(strlen(value)) + 1;
	enc = kore_malloc(max);
	n = form_encode(value, strlen(value), enc, max);
	if (n >= 0) {
		kore_buf_appendf(buf, "%s%s=%s",
		    buf->offset && memchr(buf->data, '?', buf->offset) ?
		    "&" : "?", name, enc);
	}
	kore_free(enc);
}

/*
 * Every authorisation response, success or error, names the issuer
 * (RFC 9207), the metadata's: a client that talks to several servers
 * tells by it which one answered (mix-up attacks).
 */
static void
oauth_redirect(struct http_request *req, json_t *request, const char *n1,
    const char *v1, const char *n2, const char *v2)
{
	struct kore_buf	*buf;
	const char	*uri, *state;
	char		 issuer[OAUTH_ISSUER_MAX];

	if (oauth_issuer(req, issuer, sizeof(issuer)) == -1) {
		respond_oauth_error(req, 400, "invalid_request",
		    "The Host header is not a host name or address.");
		return;
	}
	uri = json_string_value(json_object_get(request, "redirect_uri"));
	state = json_string_value(json_object_get(request, "state"));
	buf = kore_buf_alloc(512);
	kore_buf_append(buf, uri, strlen(uri));
	oauth_append_param(buf, n1, v1);
	oauth_append_param(buf, n2, v2);
	oauth_append_param(buf, "state", state);
	oauth_append_param(buf, "iss", issuer);
	kore_buf_append(buf, "", 1);
	respond_redirect(req, (const char *)buf->data);
	kore_buf_free(buf);
}

void
oauth_redirect_error(struct http_request *req, json_t *request,
    const char *error, const char *description)
{
	oauth_redirect(req, request, "error", error, "error_description",
	    description);
}

void
oauth_redirect_code(struct http_request *req, json_t *request,
    const char *code)
{
	oauth_redirect(req, request, "code", code, NULL, NULL);
}

int
oauth_new_secret(char text[37], uint8_t digest[32])
{
	if (crypto_uuid(text) == -1)
		return (-1);
	crypto_sha256(text, 36, digest);
	return (0);
}

int
oauth_basic_credentials(struct http_request *req, char *id, size_t idlen,
    char *secret, size_t secretlen)
{
	const char	*hdr, *colon;
	uint8_t		 raw[1024];
	int		 n;

	if (!http_request_header(req, "authorization", &hdr))
		return (-1);
	if (strncasecmp(hdr, "Basic ", 6) != 0)
		return (-1);
	hdr += 6;
	while (*hdr == ' ')
		hdr++;
	n = base64_decode(hdr, strlen(hdr), raw, sizeof(raw) - 1);
	if (n <= 0)
		return (-1);
	raw[n] = '\0';
	if (memchr(raw, '\0', (size_t)n) != NULL ||
	    (colon = strchr((char *)raw, ':')) == NULL)
		return (-1);
	if (form_decode((char *)raw, (size_t)(colon - (char *)raw), id,
	    idlen) <= 0)
		return (-1);
	if (form_decode(colon + 1, strlen(colon + 1), secret, secretlen) <= 0)
		return (-1);
	return (0);
}

/* The raw query string or form body: what Kore's parsing would split. */
static char *
oauth_raw_params(struct http_request *req, size_t *len)
{
	char	*raw;
	ssize_t	 n;

	if (req->method == HTTP_METHOD_GET) {
		if (req->query_string == NULL)
			return (NULL);
		*len = strlen(req->query_string);
		return (kore_strdup(req->query_string));
	}
	if (req->content_length == 0 || req->content_length > SIZE_MAX - 1)
		return (NULL);
	raw = kore_malloc(req->content_length + 1);
	*len = 0;
	while (*len < req->content_length) {
		n = http_body_read(req, raw + *len,
		    req->content_length - *len);
		if (n <= 0)
			break;
		*len += (size_t)n;
	}
	raw[*len] = '\0';
	(void)http_body_rewind(req);
	return (raw);
}

const char *
oauth_repeated_param(struct http_request *req, const char *const *names)
{
	const char	*found;
	char		*raw;
	size_t		 len, i;

	if ((raw = oauth_raw_params(req, &len)) == NULL)
		return (NULL);
	found = NULL;
	for (i = 0; names[i] != NULL && found == NULL; i++) {
		if (form_count(raw, len, names[i]) > 1)
			found = names[i];
	}
	kore_free(raw);
	return (found);
}

int
oauth_dpop(struct http_request *req, struct dpop_proof *p)
{
	char			nonce[DPOP_NONCE_MAX];
	enum dpop_result	r;

	if ((r = dpop_check(req, NULL, p)) == DPOP_NONE)
		return (0);
	if (r != DPOP_INVALID && dpop_nonce(nonce, sizeof(nonce)) == 0)
		http_response_header(req, "dpop-nonce", nonce);
	if (r != DPOP_OK) {
		respond_oauth_error(req, 400, r == DPOP_NONCE ?
		    "use_dpop_nonce" : "invalid_dpop_proof", p->why);
		return (-1);
	}
	return (1);
}
