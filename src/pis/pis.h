/*
 * Payment initiation: the TPP's payment endpoints under
 * /auth/v1/psd2/payments/, the decider that verifies the authenticator's
 * signed outcome itself, and the booking.
 *
 * An endpoint call runs one way, as the AIS calls do (src/ais/ais.h):
 *
 *	1. C settles everything it can judge alone, before any query: the
 *	   bearer token's form, the TPP verdict (signature, certificate,
 *	   role PSP_PI), PSU-IP-Address, the product, the path's ids and the
 *	   body (IBANs mod 97, amount into minor units, currency, creditor
 *	   name NFC, remittance, SCA headers).
 *	2. One query: pis_initiate() or pis_payment()
 *	   (src/db/functions/60_pis.sql), which do the bearer check, the
 *	   certificate's TPP against the token's, the x-request-id mark, the
 *	   scope, the consent's accounts and the payment in one transaction
 *	   and return the answer or one named refusal (enum pis_refusal);
 *	   or, when step 1 refused, only the bearer check.
 *	3. The answer is written once, by pis_finish().
 *
 * Order of answers: bearer token, TPP verdict, role, PSU-IP-Address,
 * product, input format, certificate organisation vs the token's TPP,
 * x-request-id replay, scope, debtor account, redirect URI, resource.
 */
#ifndef PSD2_PIS_H
#define PSD2_PIS_H

#include <stddef.h>
#include <stdint.h>

#include "api/xs2a_call.h"

struct http_request;

#define PIS_PREFIX	"/auth/v1/psd2/payments/"

/*
 * A surface the payment endpoints answer on: the contract's paths
 * (PIS_PREFIX) or the Berlin Group standard's (src/bg/payments.c). Both
 * serve the same payments; the root is the answer's links' too.
 */
struct pis_surface {
	const char	*root;		/* ends with '/' */
	int		 standard;	/* the standard's frame and answers */
};

struct pis_settings {
	int	sca_seconds;	/* psd2_pis_sca_seconds: challenge deadline */
	int	sweep_ms;	/* psd2_pis_sweep_ms: decider sweep period */
	int	redirect_seconds; /* psd2_pis_redirect_seconds: redirect SCA */
};

void				 pis_settings_load(void);
const struct pis_settings	*pis_settings(void);

/* A payment call: the shared XS2A call and the 201 it keeps. */
struct pis_call {
	struct xs2a_call	 x;
	/* A 201 waits for pis_wake() (the daemons' wake-up after the
	 * initiation's commit), then is sent as kept here. */
	int			 waking;
	char			*answer_body;
	char			*answer_location;
};

/* http_state of a payment call, freed with the request. */
struct pis_call	*pis_call_new(struct http_request *);

/*
 * Serves a payment call on a surface: the path below root, the method,
 * the input, then the query; a Kore handler result. c is the request's
 * http_state (pis_call_new).
 */
int	pis_serve(struct http_request *, struct pis_call *,
	    const struct pis_surface *);

/* The methods (HTTP_METHOD_* bits) of a payment path; 0 when none. */
int	pis_path_methods(const char *, const struct pis_surface *);

/*
 * Steps 1 and 2: xs2a_begin() for role PSP_PI. Returns 1 when sql was
 * started with the common parameters $1 to $5 and the caller must add
 * its own ($6...); 0 when it must not.
 */
int	pis_begin(struct http_request *, struct pis_call *, const char *);

/* Drives the query and writes the answer; a Kore handler result. */
int	pis_finish(struct http_request *, struct pis_call *);

/* The payment products (404 PRODUCT_UNKNOWN for anything else). */
int	pis_product_known(const char *, size_t);

/*
 * The amount of a payment: a decimal string > 0 with at most 2
 * decimals and at most 999999999.99, without sign, exponent, spaces or
 * leading zeros ("0.5" and "10" are fine, "010", ".5", "5." are not),
 * into minor units. Returns 0, or -1.
 */
int	pis_amount_parse(const char *, int64_t *);

/* The decider (decide.c): one worker per instance listens. */
void	pis_decider_start(void);

#endif
