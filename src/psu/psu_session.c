/*
 * The PSU's session cookie and the login of the bank's own pages; see
 * psu_session.h.
 */
#include <sys/types.h>

#include <string.h>

#include <kore.h>
#include <http.h>

#include "psu/login.h"
#include "psu/psu_session.h"
#include "web/forms.h"

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
