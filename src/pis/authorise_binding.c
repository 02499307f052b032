/*
 * What a payment's authorise page binds its "payconfirm" token to
 * (authorise.h): shown by authorise_page.c, checked by
 * authorise_confirm.c.
 */
#include <stdio.h>

#include "pis/authorise.h"

int
authorise_binding(const char *id, const char *session,
    const struct authorise_shown *v, char *out, size_t outlen)
{
	int	n;

	/* Fields of fixed shape first; the name (any text) last. */
	n = snprintf(out, outlen, "payment:%s:%s:%s:%s:%s\n%s", id, session,
	    v->amount_minor, v->currency, v->creditor_iban, v->creditor_name);
	return (n < 0 || (size_t)n >= outlen ? -1 : 0);
}
