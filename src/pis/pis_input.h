/*
 * The initiation's input (pis_input.c), checked in C before the query.
 */
#ifndef PSD2_PIS_INPUT_H
#define PSD2_PIS_INPUT_H

#include <stddef.h>
#include <stdint.h>

#define PIS_IBAN_MAX	34

struct xs2a_call;
struct http_request;

struct pis_payment_in {
	const char	*product;
	int		 standard;		/* the standard's members */
	int64_t		 amount_minor;
	char		 currency[4];
	char		 debtor[PIS_IBAN_MAX + 1];
	char		 creditor[PIS_IBAN_MAX + 1];
	char		 name[72];		/* NFC, at most 70 bytes */
	char		*remittance;		/* kore_malloc'ed, or NULL */
	char		 execution_date[11];	/* YYYY-MM-DD, "" absent */
	int		 decoupled;		/* TPP-Decoupled-Preferred */
	const char	*redirect_uri;		/* TPP-Redirect-URI */
	const char	*nok_redirect_uri;	/* TPP-Nok-Redirect-URI */
};

/* The body: 0, or -1 with the input error recorded on the call. */
int	pis_payment_parse(struct xs2a_call *, const char *, size_t,
	    struct pis_payment_in *);
/* TPP-Redirect-Preferred, TPP-Decoupled-Preferred, the redirect URIs. */
int	pis_sca_headers(struct xs2a_call *, struct http_request *,
	    struct pis_payment_in *);

#endif
