/*
 * The PSU's login (src/psu): the pages of its password and TOTP steps,
 * run by the login state machine (login_machine.h) with the PSU's kind.
 * The TOTP code check they share with the payment page: totp_code.h.
 */
#ifndef PSD2_LOGIN_H
#define PSD2_LOGIN_H

#include <stddef.h>
#include <stdint.h>

#include <jansson.h>

struct http_request;
struct login;
struct form_state;
struct db_query;

/*
 * A fresh login page for request (an OAuth request, or {"next": path} for
 * the bank's own pages): the request, with a random flow id, is sealed
 * into the form; nothing is written to the database.
 */
void	login_page_new(struct http_request *, json_t *);

/*
 * The page that ends the login of an OAuth request (the consent page,
 * src/oauth), given the request's form state, the PSU and the result of
 * the PSU's accounts query (for a Berlin Group consent, key "bg": one
 * value, bg_consent_page's JSON). Set once at start-up (src/app/main.c): the
 * login sits below the OAuth layer and does not import it.
 */
typedef void	(*psu_login_oauth_page)(struct http_request *,
		    struct form_state *, long long, struct db_query *);
void	psu_login_set_oauth_page(psu_login_oauth_page);

/* The PSU kind's TOTP hooks (otp.c), for its kind in login.c. */
extern const struct login_kind	psu_login_kind;
void	psu_otp_page(struct http_request *, struct login *, int,
	    const char *, const char *);
void	psu_totp_seed(struct http_request *, struct login *);
void	psu_totp_outcome(struct http_request *, struct login *, long long);
/* Its key hooks (login_key.c). */
void	psu_key_read(struct http_request *, struct login *);
void	psu_key_outcome(struct http_request *, struct login *, long long, int,
	    uint32_t, const uint8_t [32]);

#endif
