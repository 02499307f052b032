/*
 * The consent resource of the standard interface (src/bg/README.md
 * "Consents", "SCA of a consent"): the request's input (consent_input.c)
 * and the handlers (consents.c, consent_authorisations.c).
 */
#ifndef PSD2_BG_CONSENTS_H
#define PSD2_BG_CONSENTS_H

#include <stddef.h>

#include "bg/bg.h"

struct http_request;

#define BG_CONSENTS		BG_ROOT "/consents/"
#define BG_DATE_LEN		10
#define BG_URL_MAX		2048

/* The TPP's redirect headers of a POST that starts an authorisation. */
struct bg_redirects {
	const char	*ok;			/* TPP-Redirect-URI or NULL */
	const char	*nok;			/* TPP-Nok-Redirect-URI or NULL */
};

/* The body and headers of POST /xs2a/v1/consents, checked. */
struct bg_consent_input {
	char		 kind[32];		/* consent.access_kind */
	char		*access;		/* access_request, normalised
						   JSON (free with free()) */
	int		 recurring;
	char		 valid_until[BG_DATE_LEN + 1];
	int		 frequency;
	int		 explicit_start;	/* TPP-Explicit-Authorisation-
						   Preferred: true */
	struct bg_redirects	 redirects;
};

/*
 * Reads and checks the request of POST /xs2a/v1/consents: the first
 * error is recorded on the call (xs2a_input_error). in->access is set
 * only when the input is sound.
 */
void	bg_consent_input(struct http_request *, struct bg_call *,
	    struct bg_consent_input *);
void	bg_consent_input_clear(struct bg_consent_input *);

/* TPP-Redirect-URI and TPP-Nok-Redirect-URI: their form. */
void	bg_redirect_headers(struct http_request *, struct bg_call *,
	    struct bg_redirects *);

/*
 * The public base URL (psd2_issuer, else the request's scheme and Host,
 * as the RFC 8414 metadata) for the absolute links; -1 when the Host
 * header is no host (an input error is recorded).
 */
int	bg_base_url(struct http_request *, struct bg_call *, char *, size_t);

/* {consentId} of a path under /xs2a/v1/consents/: a UUID, else -1. */
int	bg_consent_path_id(struct http_request *, char *);

#endif
