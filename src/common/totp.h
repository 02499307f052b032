/*
 * One-time passwords: RFC 4226 HOTP and RFC 6238 TOTP with HMAC-SHA1,
 * the algorithm every authenticator app implements.
 */
#ifndef PSD2_TOTP_H
#define PSD2_TOTP_H

#include <stddef.h>
#include <stdint.h>

#define TOTP_STEP	30	/* seconds per time step */
#define TOTP_DIGITS	6
#define TOTP_ERROR	UINT32_MAX	/* no code is ever this large */

/*
 * The HOTP value for counter, reduced to digits (1..9) decimal digits.
 * Returns TOTP_ERROR for an invalid digit count or an HMAC failure.
 */
uint32_t	totp_hotp(const uint8_t *key, size_t keylen, uint64_t counter,
		    int digits);

/* The time step of a Unix time (floor(now / 30)); -1 before 1970. */
int64_t		totp_step(int64_t now);

/*
 * Checks a 6-digit code against the steps of now - 30 s, now and
 * now + 30 s. A step <= last_used_step is never accepted, so each code
 * works at most once: store *matched_step as the new last_used_step
 * (use -1 when none has been used). Returns 1 on a match, setting
 * *matched_step, or 0 (no match, malformed code, error).
 */
int		totp_verify(const uint8_t *key, size_t keylen,
		    const char *code, int64_t now, int64_t last_used_step,
		    int64_t *matched_step);

#endif
