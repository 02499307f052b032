/*
 * The PSU's session cookie and the login of the bank's own pages; see
 * psu_session.h.
 */
#include <sys/types.h>

#include <string.h>

#include <kore.h>
#include <http.h>

#include "common/crypto.h"
#include "psu/login.h"
#include "psu/psu_session.h"
#include "web/forms.h"

#define PSU_PAYMENT_PREFIX	"/auth/payments/"
#define PSU_PAYMENT_SUFFIX	"/authorise"

const char *
psu_session_cookie(struct http_request *req)
{
	char	*value;

	http_populate_cookies(req);
	if (!http_request_cookie(req, FORMS_SESSION_COOKIE, &value) ||
	    *value == '\0')
		return (NULL);
	return (value);
}

void
psu_session_login(struct http_request *req, const char *path)
{
	json_t	*next;

	next = json_pack("{s:s}", "next", path);
	login_page_new(req, next);
	json_decref(next);
}

int
psu_payment_path_id(const char *path, char id[PSU_PAYMENT_ID_LEN + 1])
{
	size_t	plen = sizeof(PSU_PAYMENT_PREFIX) - 1;

	if (strlen(path) != plen + PSU_PAYMENT_ID_LEN +
	    sizeof(PSU_PAYMENT_SUFFIX) - 1 ||
	    strncmp(path, PSU_PAYMENT_PREFIX, plen) != 0 ||
	    strcmp(path + plen + PSU_PAYMENT_ID_LEN, PSU_PAYMENT_SUFFIX) != 0)
		return (-1);
	memcpy(id, path + plen, PSU_PAYMENT_ID_LEN);
	id[PSU_PAYMENT_ID_LEN] = '\0';
	/* Lower case only: the id is part of the authentication code. */
	if (strspn(id, "0123456789abcdef-") != PSU_PAYMENT_ID_LEN)
		return (-1);
	return (crypto_is_uuid(id) ? 0 : -1);
}
