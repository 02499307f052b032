/*
 * The consent page and the PSU's decision for a Berlin Group consent
 * (src/bg/README.md "SCA of a consent"): the request sealed in the PSU's
 * forms carries key "bg" (src/oauth/oauth.h). consent.c hands these
 * requests over; the form, its CSRF, its session and code and its single
 * decision per flow are those of every consent.
 */
#ifndef PSD2_CONSENT_BG_H
#define PSD2_CONSENT_BG_H

#include <stddef.h>
#include <stdint.h>

struct http_request;
struct db_query;
struct form_state;

/* What consent.c settled about a posted decision. */
struct consent_post {
	long long	 psu_id;
	int		 approve;
	const char	*accounts;	/* text[] literal of ticked accounts */
	uint8_t		 flow_digest[32];
	uint8_t		 session_digest[32];
	uint8_t		 code_digest[32];
	char		 family[37];
};

/* The posted decision: 1 approve, 0 deny, -1 answered (a form error). */
int	consent_form_decision(struct http_request *);
/* The ticked accounts as a text[] literal: their count, -1 malformed. */
int	consent_form_accounts(struct http_request *, char *, size_t);

/*
 * The consent page; q holds bg_consent_page's one JSON value, step and
 * csrf are the form's sealed step and CSRF token.
 */
void	consent_bg_page(struct http_request *, struct form_state *,
	    struct db_query *, const char *, const char *);

/*
 * The posted decision: 1 approve, 0 deny, -1 answered (a page saying
 * what is wrong). accounts gets the ticked accounts of a bank-offered
 * consent ("{}" otherwise).
 */
int	consent_bg_read(struct http_request *, struct form_state *, char *,
	    size_t);

/* Starts bg_consent_decide on q. */
void	consent_bg_query(struct http_request *, struct db_query *,
	    struct form_state *, const struct consent_post *);

/* The decision's answer: the TPP's redirect, or a page. */
void	consent_bg_finish(struct http_request *, struct db_query *,
	    struct form_state *, const char *);

#endif
