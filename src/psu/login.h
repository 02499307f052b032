/*
 * The PSU's login (src/psu): the pages of its password and TOTP steps,
 * run by the login state machine (login_machine.h) with the PSU's kind,
 * and the TOTP code check the login and the payment page share.
 */
#ifndef PSD2_LOGIN_H
#define PSD2_LOGIN_H

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
 * the PSU's accounts query. Set once at start-up (src/app/main.c): the
 * login sits below the OAuth layer and does not import it.
 */
typedef void	(*psu_login_oauth_page)(struct http_request *,
		    struct form_state *, long long, struct db_query *);
void	psu_login_set_oauth_page(psu_login_oauth_page);

/* A typed TOTP code as six digits (spaces dropped); 0 or -1. */
int	otp_normalise(const char *, char [7]);
/*
 * The time step the posted "otp" code matches for a subject (kind "psu"
 * or "staff", its id as text: the seed's sealing context) with the sealed
 * seed, within totp_verify's window; or accepted (>= 0), the step this
 * flow already accepted, when the code is that step's (a repeated post).
 * -1 when it matches nothing. The seed is wiped after use.
 */
long long	otp_code_step(struct http_request *, const char *, const char *,
		    const char *, long long);
/*
 * The matched step (NULL when none) and the lockout rule (failures, lock
 * seconds) as the next three parameters of q: every TOTP check's SQL
 * function takes them in this order.
 */
void	otp_param_step(struct db_query *, long long);

/* The PSU kind's TOTP hooks (otp.c), for its kind in login.c. */
extern const struct login_kind	psu_login_kind;
void	psu_otp_page(struct http_request *, struct login *, int,
	    const char *, const char *);
void	psu_totp_seed(struct http_request *, struct login *);
void	psu_totp_outcome(struct http_request *, struct login *, long long);

#endif
