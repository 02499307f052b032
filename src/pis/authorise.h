/*
 * The scaRedirect page of a payment, GET (authorise_page.c) and POST
 * (authorise_confirm.c) of /auth/payments/{paymentId}/authorise; what
 * both use is below them (authorise_binding.c, src/psu/payment_path.h).
 */
#ifndef PSD2_PIS_AUTHORISE_H
#define PSD2_PIS_AUTHORISE_H

#include <stddef.h>

#include "psu/payment_path.h"

struct http_request;

#define AUTHORISE_ID_LEN	PSU_PAYMENT_ID_LEN
/* A session cookie is a UUID; anything longer is not one. */
#define AUTHORISE_SESSION_MAX	128
#define AUTHORISE_BINDING_MAX	512

/* The POST of the page (the page's route handler hands it over). */
int	pis_authorise_confirm(struct http_request *);
/*
 * What the page's "payconfirm" CSRF token is bound to: the payment, the
 * session and the values the page showed (payment_binding_values order:
 * amount minor units, currency, creditor IBAN, creditor name), so that a
 * payment changed between showing and posting is refused. 0 or -1.
 */
struct authorise_shown {
	const char	*amount_minor;
	const char	*currency;
	const char	*creditor_iban;
	const char	*creditor_name;
};
int	authorise_binding(const char *, const char *,
	    const struct authorise_shown *, char *, size_t);

#endif
