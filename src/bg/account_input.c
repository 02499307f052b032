/*
 * The {account-id} segment and withBalance (see account_input.h).
 */
#include <sys/types.h>

#include <string.h>

#include <kore.h>
#include <http.h>

#include "ais/ais.h"
#include "bg/account_input.h"

void
bg_account_id(struct http_request *req, char *out, size_t len)
{
	if (bg_path_segment(req->path, BG_ACCOUNTS_PREFIX, out, len) == -1 ||
	    !ais_resource_id_valid(out))
		out[0] = '\0';
}

int
bg_with_balance(struct bg_call *c, const struct bg_param *p)
{
	if (!p->seen || strcmp(p->value, "false") == 0)
		return (0);
	if (strcmp(p->value, "true") == 0)
		return (1);
	xs2a_input_error(&c->x, 400, "FORMAT_ERROR", "withBalance",
	    "withBalance must be true or false.");
	return (0);
}
