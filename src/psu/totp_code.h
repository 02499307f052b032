/*
 * A typed TOTP code checked against a subject's sealed seed: the PSU
 * login, the staff login and the payment page's TOTP share it.
 */
#ifndef PSD2_TOTP_CODE_H
#define PSD2_TOTP_CODE_H

struct http_request;
struct db_query;

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

#endif
