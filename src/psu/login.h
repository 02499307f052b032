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

/*
 * A fresh login page for request (an OAuth request, or {"next": path} for
 * the bank's own pages): the request, with a random flow id, is sealed
 * into the form; nothing is written to the database.
 */
void	login_page_new(struct http_request *, json_t *);

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

/* The PSU kind's TOTP hooks (otp.c), for its kind in login.c. */
extern const struct login_kind	psu_login_kind;
void	psu_otp_page(struct http_request *, struct login *, int,
	    const char *, const char *);
void	psu_totp_seed(struct http_request *, struct login *);
void	psu_totp_outcome(struct http_request *, struct login *, long long);

#endif
