/*
 * Placeholder verification until the TPP identity issue lands: accepts
 * the signing headers without verifying them, and passes a well-formed
 * x-request-id on. Signing is not required.
 */
#include <sys/types.h>

#include <stdio.h>
#include <string.h>

#include <kore.h>
#include <http.h>

#include "common/crypto.h"
#include "tpp/tpp.h"

int
tpp_init(void)
{
	return (0);
}

void
tpp_verify_request(struct http_request *req, struct tpp_verdict *v)
{
	const char	*rid;

	memset(v, 0, sizeof(*v));
	if (http_request_header(req, "x-request-id", &rid) &&
	    crypto_is_uuid(rid))
		snprintf(v->request_id, sizeof(v->request_id), "%s", rid);
}

int
tpp_has_role(const struct tpp_verdict *v, int role)
{
	if (!v->signed_request)
		return (1);
	return ((v->roles & role) != 0);
}
