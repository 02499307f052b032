/*
 * The body of a confirmation of funds request, on either surface
 * (src/ais/funds_confirmation.c, src/bg/funds.c):
 *   {"account": {"iban": "..."},
 *    "instructedAmount": {"currency": "EUR", "amount": "123.45"}}
 * The amount is a decimal string as in Berlin Group; a JSON number with
 * at most the currency's decimals is accepted too. Amounts become integer
 * minor units here; other members (cardNumber, payee) are not used.
 */
#ifndef PSD2_AIS_FUNDS_INPUT_H
#define PSD2_AIS_FUNDS_INPUT_H

#include <stdint.h>

#include "api/xs2a_call.h"

struct http_request;

#define FUNDS_IBAN_MAX		35

struct funds_input {
	char		iban[FUNDS_IBAN_MAX];
	char		currency[4];
	int64_t		minor;
};

/* Reads the body into in; the first error is recorded in the call. */
void	funds_input_parse(struct http_request *, struct xs2a_call *,
	    struct funds_input *);

#endif
