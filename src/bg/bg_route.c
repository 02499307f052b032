/*
 * The standard interface's own answers about routes: the methods a path
 * takes, and an unknown path under /xs2a. Kore answers these itself on
 * the contract's paths (`restrict', no route), but Kore's answers are
 * sent before the request's headers are read, so they cannot echo
 * X-Request-ID, which the Berlin Group guidelines require on every
 * answer. So the /xs2a routes have no `restrict' line: each handler
 * names its methods with bg_method(), and the last route of
 * conf/routes.conf sends any other /xs2a path to bg_unknown().
 */
#include <sys/types.h>

#include <stdio.h>
#include <string.h>

#include <kore.h>
#include <http.h>

#include "api/respond.h"
#include "bg/bg.h"

int	bg_unknown(struct http_request *);

static const struct {
	int		 method;
	const char	*name;
} bg_methods[] = {
	{ HTTP_METHOD_GET,	"GET" },
	{ HTTP_METHOD_HEAD,	"HEAD" },
	{ HTTP_METHOD_POST,	"POST" },
	{ HTTP_METHOD_PUT,	"PUT" },
	{ HTTP_METHOD_DELETE,	"DELETE" },
	{ HTTP_METHOD_PATCH,	"PATCH" },
};

int
bg_method(struct http_request *req, int allowed)
{
	char	allow[64];
	size_t	i;

	/* HEAD is GET without the body (Kore patch 0015). */
	if (allowed & HTTP_METHOD_GET)
		allowed |= HTTP_METHOD_HEAD;
	if (req->method & allowed)
		return (1);
	allow[0] = '\0';
	for (i = 0; i < sizeof(bg_methods) / sizeof(bg_methods[0]); i++) {
		if (!(allowed & bg_methods[i].method))
			continue;
		snprintf(allow + strlen(allow), sizeof(allow) - strlen(allow),
		    "%s%s", allow[0] ? ", " : "", bg_methods[i].name);
	}
	http_response_header(req, "allow", allow);
	respond_tpp_error(req, 405, "SERVICE_INVALID", NULL,
	    "The method is not allowed on this path.");
	return (0);
}

/* Any /xs2a path no other route takes (the last route). */
int
bg_unknown(struct http_request *req)
{
	respond_tpp_error(req, 404, "RESOURCE_UNKNOWN", NULL,
	    "No such resource or endpoint.");
	return (KORE_RESULT_OK);
}
