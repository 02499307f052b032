/*
 * Pieces shared by the PSU's payment pages (src/pis/payments_page.c,
 * src/pis/authorise_page.c).
 */
#ifndef PSD2_PAYMENTS_PAGE_H
#define PSD2_PAYMENTS_PAGE_H

#include <jansson.h>

struct http_request;

/*
 * Adds to a payment object of psu_payments() the page's texts: amount
 * (devcur_format, as the authenticator shows it), status_text and
 * reason_text in the request's language.
 */
void		 payments_page_translate(struct http_request *, json_t *);

#endif
