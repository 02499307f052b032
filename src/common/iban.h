/*
 * IBAN check (ISO 13616): the shape and the ISO 7064 MOD 97-10 check
 * digits. Pure C, no allocation; shared by the authenticator protocol
 * (device/PROTOCOL.md, section 5.3) and the service's payment initiation.
 */
#ifndef PSD2_IBAN_H
#define PSD2_IBAN_H

#include <stddef.h>

#define IBAN_MIN	5
#define IBAN_MAX	34

/*
 * 1 if s[0..len) is an IBAN in electronic format: 2 letters A-Z, 2 check
 * digits 02..98, then 1..30 characters A-Z/0-9 (no spaces, upper case
 * only), whose MOD 97-10 remainder is 1. 0 otherwise.
 */
int	iban_valid(const char *s, size_t len);

#endif
