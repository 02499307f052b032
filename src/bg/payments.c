/*
 * Single payments on the standard's paths, /xs2a/v1/payments/
 * {payment-product}[/{paymentId}[/status|/authorisations[/{id}]]]
 * (src/bg/README.md "Payments"). The contract's payment endpoints serve
 * them (src/pis/payments.c): a payment made on either surface is the
 * same row, read, authorised and cancelled on either. What is the
 * standard's own is the frame (X-Request-ID required and echoed, the
 * 405 with Allow, ASPSP-SCA-Approach), the links under /xs2a/v1, the
 * body's members and a second authorisation refused.
 */
#include <sys/types.h>

#include <kore.h>
#include <http.h>

#include "api/respond.h"
#include "bg/bg.h"
#include "pis/pis.h"

int	bg_payments(struct http_request *);

static const struct pis_surface	bg_payment_surface = {
	BG_ROOT "/payments/", 1
};

int
bg_payments(struct http_request *req)
{
	struct pis_call	*c;
	char		 request_id[BG_UUID_LEN + 1];
	int		 methods;

	if (http_state_exists(req))
		return (pis_finish(req, http_state_get(req)));
	methods = pis_path_methods(req->path, &bg_payment_surface);
	if (methods == 0) {
		respond_tpp_error(req, 404, "RESOURCE_UNKNOWN", NULL,
		    "No payment resource at this path.");
		return (KORE_RESULT_OK);
	}
	if (!bg_method(req, methods))
		return (KORE_RESULT_OK);
	c = pis_call_new(req);
	c->x.standard = 1;
	bg_request_id(req, &c->x, request_id);
	return (pis_serve(req, c, &bg_payment_surface));
}
