/*
 * The OpenAPI document of the TPP-facing interface (assets/openapi.json,
 * compiled into the binary like the templates) at
 * /auth/v1/psd2/openapi.json. The tests check every response they
 * receive against this same file (tests/lib/openapi_check.py).
 */
#include <string.h>

#include <kore.h>
#include <http.h>

#include "api/respond.h"
#include "build/embedded.h"

int	api_openapi(struct http_request *);

static const struct embedded_file *
openapi_document(void)
{
	static const struct embedded_file	*doc;
	size_t					 i;

	for (i = 0; doc == NULL && i < embedded_count; i++) {
		if (strcmp(embedded_files[i].name, "assets/openapi.json") == 0)
			doc = &embedded_files[i];
	}
	return (doc);
}

int
api_openapi(struct http_request *req)
{
	const struct embedded_file	*doc;

	if ((doc = openapi_document()) == NULL) {
		respond_server_error(req, "openapi document not embedded");
		return (KORE_RESULT_OK);
	}
	respond_raw(req, 200, "application/json", doc->data, doc->len);
	return (KORE_RESULT_OK);
}
