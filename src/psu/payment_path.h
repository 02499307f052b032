/*
 * The path of a payment's authorise page, /auth/payments/{id}/authorise:
 * a login for that page opens a session for that payment only, with the
 * password alone, so both the login and the pages read the id from it.
 */
#ifndef PSD2_PSU_PAYMENT_PATH_H
#define PSD2_PSU_PAYMENT_PATH_H

#define PSU_PAYMENT_ID_LEN	36

/* The payment id of an authorise page's path into id, or -1. */
int	psu_payment_path_id(const char *, char [PSU_PAYMENT_ID_LEN + 1]);

#endif
