/*
 * The body of a confirmation of funds request (see funds_input.h).
 */
#include <sys/types.h>

#include <ctype.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <kore.h>
#include <http.h>

#include <jansson.h>

#include "ais/funds_input.h"
#include "common/money.h"

#define FUNDS_BODY_MAX		8192
/* Beyond this a double no longer holds every cent exactly. */
#define FUNDS_REAL_MAX		1e13

/* IBAN without spaces, upper case, ^[A-Z]{2}[0-9]{2}[A-Z0-9]{11,30}$. */
static int
funds_iban(const char *in, char *out)
{
	size_t	n, i;

	for (n = 0; *in != '\0'; in++) {
		if (*in == ' ')
			continue;
		if (n == FUNDS_IBAN_MAX - 1 || !isalnum((unsigned char)*in))
			return (-1);
		out[n++] = (char)toupper((unsigned char)*in);
	}
	out[n] = '\0';
	if (n < 15 || !isalpha((unsigned char)out[0]) ||
	    !isalpha((unsigned char)out[1]) ||
	    !isdigit((unsigned char)out[2]) || !isdigit((unsigned char)out[3]))
		return (-1);
	for (i = 0; i < n; i++) {
		if (islower((unsigned char)out[i]))
			return (-1);
	}
	return (0);
}

/*
 * A JSON number: an integer, or a real whose nearest decimal with the
 * currency's decimals reads back as the same double (so 12.5 and 12.34
 * pass, 12.345 does not).
 */
static int
funds_number(json_t *v, int exponent, int64_t *minor)
{
	char	text[64];
	double	d;

	if (json_is_integer(v)) {
		snprintf(text, sizeof(text), "%" JSON_INTEGER_FORMAT,
		    json_integer_value(v));
		return (money_parse(text, exponent, minor));
	}
	d = json_real_value(v);
	if (!isfinite(d) || fabs(d) >= FUNDS_REAL_MAX)
		return (-1);
	snprintf(text, sizeof(text), "%.*f", exponent, d);
	if (strtod(text, NULL) != d)
		return (-1);
	return (money_parse(text, exponent, minor));
}

static void
funds_amount(struct xs2a_call *c, json_t *ia, struct funds_input *in)
{
	json_t		*cur, *amt;
	int		 exp, rc;

	cur = json_object_get(ia, "currency");
	amt = json_object_get(ia, "amount");
	if (!json_is_string(cur) || (exp = money_currency_exponent(
	    json_string_value(cur))) < 0) {
		xs2a_input_error(c, 400, "FORMAT_ERROR",
		    "instructedAmount.currency",
		    "instructedAmount.currency must be an ISO 4217 code.");
		return;
	}
	snprintf(in->currency, sizeof(in->currency), "%s",
	    json_string_value(cur));
	if (json_is_string(amt))
		rc = money_parse(json_string_value(amt), exp, &in->minor);
	else if (json_is_number(amt))
		rc = funds_number(amt, exp, &in->minor);
	else
		rc = -1;
	if (rc == -1 || in->minor <= 0) {
		xs2a_input_error(c, 400, "FORMAT_ERROR",
		    "instructedAmount.amount",
		    "instructedAmount.amount must be a positive decimal with "
		    "at most %d decimals.", exp);
	}
}

void
funds_input_parse(struct http_request *req, struct xs2a_call *c,
    struct funds_input *in)
{
	json_t		*doc, *acc, *iban, *ia;

	doc = xs2a_json_body(req, c, FUNDS_BODY_MAX);
	if (!json_is_object(doc)) {
		xs2a_input_error(c, 400, "FORMAT_ERROR", "body",
		    "The body must be a JSON object with account and "
		    "instructedAmount.");
	} else if (!json_is_object(acc = json_object_get(doc, "account"))) {
		xs2a_input_error(c, 400, "FORMAT_ERROR", "account",
		    "account must be an object {\"iban\": \"...\"}.");
	} else if (!json_is_string(iban = json_object_get(acc, "iban")) ||
	    funds_iban(json_string_value(iban), in->iban) == -1) {
		xs2a_input_error(c, 400, "FORMAT_ERROR", "account.iban",
		    "account.iban must be an IBAN.");
	} else if (!json_is_object(ia = json_object_get(doc,
	    "instructedAmount"))) {
		xs2a_input_error(c, 400, "FORMAT_ERROR", "instructedAmount",
		    "instructedAmount must be an object with currency and "
		    "amount.");
	} else {
		funds_amount(c, ia, in);
	}
	json_decref(doc);
}
