/* The PSU login pages shared by the password and TOTP steps. */
#ifndef PSD2_LOGIN_H
#define PSD2_LOGIN_H

struct http_request;
struct form_state;
struct db_query;

#include <jansson.h>

void	login_page_new(struct http_request *, json_t *);
void	login_page(struct http_request *, int, struct form_state *,
	    const char *);
void	otp_page(struct http_request *, int, struct form_state *,
	    const char *, const char *);
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
void	consent_page(struct http_request *, struct form_state *, long long,
	    struct db_query *);

#endif
