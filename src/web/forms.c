/*
 * Sealed form state and CSRF (see forms.h).
 */
#include <sys/types.h>

#include <stdio.h>
#include <string.h>
#include <time.h>

#include <openssl/crypto.h>

#include <kore.h>
#include <http.h>

#include "api/respond.h"
#include "common/config.h"
#include "common/crypto.h"
#include "common/encoding.h"
#include "common/keyring.h"
#include "common/sealed.h"
#include "web/forms.h"

#define PRE_COOKIE_BYTES	16

static int64_t
forms_now(void)
{
	return ((int64_t)time(NULL));
}

int
forms_seal_authreq(json_t *request, char *out, size_t outlen)
{
	char	*payload;
	int	 rc;

	if ((payload = json_dumps(request, JSON_COMPACT)) == NULL)
		return (-1);
	rc = sealed_make(&app_form_keys, "authreq", payload,
	    forms_now() + FORMS_AUTHREQ_TTL, out, outlen);
	free(payload);
	return (rc < 0 ? -1 : 0);
}

/* csrf payload: SHA-256 of the authreq token and of the pre-login cookie. */
static void
forms_binding(const char *authreq, const char *cookie, char *out, size_t len)
{
	char	a[65], c[65];

	crypto_sha256_hex(authreq, strlen(authreq), a);
	crypto_sha256_hex(cookie, strlen(cookie), c);
	snprintf(out, len, "%s:%s", a, c);
}

static int
forms_pre_cookie_valid(const char *value)
{
	size_t	i;

	if (strlen(value) != PRE_COOKIE_BYTES * 2)
		return (0);
	for (i = 0; value[i] != '\0'; i++) {
		if (!((value[i] >= '0' && value[i] <= '9') ||
		    (value[i] >= 'a' && value[i] <= 'f')))
			return (0);
	}
	return (1);
}

static const char *
forms_pre_cookie(struct http_request *req)
{
	char	*value;

	http_populate_cookies(req);
	if (!http_request_cookie(req, FORMS_PRE_COOKIE, &value))
		return (NULL);
	return (forms_pre_cookie_valid(value) ? value : NULL);
}

int
forms_csrf_issue(struct http_request *req, const char *authreq, char *out,
    size_t outlen)
{
	return (forms_csrf_issue_at(req, "/auth", authreq, out, outlen));
}

int
forms_csrf_issue_at(struct http_request *req, const char *path,
    const char *authreq, char *out, size_t outlen)
{
	const char	*cookie;
	char		 fresh[PRE_COOKIE_BYTES * 2 + 1], binding[160];
	uint8_t		 raw[PRE_COOKIE_BYTES];

	if ((cookie = forms_pre_cookie(req)) == NULL) {
		if (crypto_random(raw, sizeof(raw)) == -1 ||
		    hex_encode(raw, sizeof(raw), fresh, sizeof(fresh)) < 0)
			return (-1);
		respond_set_cookie(req, FORMS_PRE_COOKIE, fresh, path,
		    FORMS_AUTHREQ_TTL);
		cookie = fresh;
	}
	forms_binding(authreq, cookie, binding, sizeof(binding));
	if (sealed_make(&app_form_keys, "csrf", binding,
	    forms_now() + FORMS_AUTHREQ_TTL, out, outlen) < 0)
		return (-1);
	return (0);
}

int
forms_derive_secret(const char *purpose, const char *input, char out[37],
    uint8_t digest[32])
{
	const struct keyring_key	*k;
	struct kore_buf			*msg;
	uint8_t				 mac[32];
	int				 rc;

	if ((k = keyring_current(&app_form_keys)) == NULL)
		return (-1);
	msg = kore_buf_alloc(128);
	kore_buf_append(msg, "derive", 7);
	kore_buf_append(msg, purpose, strlen(purpose) + 1);
	kore_buf_append(msg, input, strlen(input));
	rc = crypto_hmac_sha256_checked(k->key, KEYRING_KEY_LEN, msg->data,
	    msg->offset, mac);
	OPENSSL_cleanse(msg->data, msg->offset);
	kore_buf_free(msg);
	if (rc == -1)
		return (-1);
	crypto_uuid_format(mac, out);
	OPENSSL_cleanse(mac, sizeof(mac));
	crypto_sha256(out, 36, digest);
	return (0);
}

int
forms_flow_secret(const struct form_state *fs, const char *purpose,
    long long subject, char out[37], uint8_t digest[32])
{
	const char	*flow;
	char		 input[128];

	flow = json_string_value(json_object_get(fs->request, "flow"));
	if (flow == NULL)
		return (-1);
	(void)snprintf(input, sizeof(input), "%s:%lld", flow, subject);
	return (forms_derive_secret(purpose, input, out, digest));
}

const char *
forms_arg(struct http_request *req, const char *name)
{
	char	*value;

	if (!http_argument_get_string(req, name, &value))
		return (NULL);
	return (value);
}

int
forms_verify(struct http_request *req, struct form_state *fs)
{
	const char	*authreq, *csrf, *cookie;
	char		 payload[FORMS_TOKEN_MAX], binding[160];
	int		 len;

	memset(fs, 0, sizeof(*fs));
	authreq = forms_arg(req, "authreq");
	csrf = forms_arg(req, "csrf");
	cookie = forms_pre_cookie(req);
	if (authreq == NULL || csrf == NULL || cookie == NULL)
		return (-1);

	len = sealed_open(&app_form_keys, "csrf", csrf, forms_now(),
	    payload, sizeof(payload));
	if (len < 0)
		return (-1);
	forms_binding(authreq, cookie, binding, sizeof(binding));
	if ((size_t)len != strlen(binding) ||
	    !crypto_equal(payload, binding, (size_t)len))
		return (-1);

	len = sealed_open(&app_form_keys, "authreq", authreq, forms_now(),
	    payload, sizeof(payload));
	if (len < 0)
		return (-1);
	if ((fs->request = json_loads(payload, 0, NULL)) == NULL ||
	    !json_is_object(fs->request)) {
		forms_clear(fs);
		return (-1);
	}
	snprintf(fs->authreq, sizeof(fs->authreq), "%s", authreq);
	snprintf(fs->csrf, sizeof(fs->csrf), "%s", csrf);
	return (0);
}

void
forms_clear(struct form_state *fs)
{
	if (fs->request != NULL)
		json_decref(fs->request);
	fs->request = NULL;
}

int
forms_seal_step(const char *purpose, long long subject, const char *authreq,
    char *out, size_t outlen)
{
	char	payload[128], digest[65];

	crypto_sha256_hex(authreq, strlen(authreq), digest);
	snprintf(payload, sizeof(payload), "%lld:%s", subject, digest);
	if (sealed_make(&app_form_keys, purpose, payload,
	    forms_now() + FORMS_STEP_TTL, out, outlen) < 0)
		return (-1);
	return (0);
}

int
forms_open_step(const char *purpose, const char *token, const char *authreq,
    long long *subject)
{
	char		 payload[128], digest[65], *colon, *end;
	int		 len;

	if (token == NULL)
		return (-1);
	len = sealed_open(&app_form_keys, purpose, token, forms_now(),
	    payload, sizeof(payload));
	if (len < 0 || (colon = strchr(payload, ':')) == NULL)
		return (-1);
	*colon++ = '\0';
	crypto_sha256_hex(authreq, strlen(authreq), digest);
	if (strlen(colon) != 64 || !crypto_equal(colon, digest, 64))
		return (-1);
	*subject = strtoll(payload, &end, 10);
	if (*end != '\0' || *subject <= 0)
		return (-1);
	return (0);
}
