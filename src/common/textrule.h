/*
 * The one rule for free text that people read (device/PROTOCOL.md 5.3.2,
 * steps 1 to 4): a payment's remittance, the names staff give TPPs, and
 * (with the authenticator's display rules on top, devtext.h) the payee
 * name. Well-formed UTF-8, NFC, only the Latin set of the payee names
 * (no controls, no bidirectional or invisible characters, no other
 * scripts), no space first, last or after another.
 */
#ifndef PSD2_TEXTRULE_H
#define PSD2_TEXTRULE_H

#include <stddef.h>

/* The longest name staff or the operator give a TPP, a person or an
 * account (PSUs read a TPP's when they consent, staff read them all). */
#define TEXTRULE_NAME_MAX	140

/* Longest error sentence textrule_error() writes, with its NUL. */
#define TEXTRULE_ERROR_MAX	96

/*
 * Checks in[0..inlen) as 1..maxchars characters. On DEVTEXT_OK (0), out
 * holds the NUL-terminated NFC text (*outn bytes), which is what is
 * stored; out needs 2 * maxchars + 1 bytes. Otherwise out is "" and the
 * DEVTEXT_* code says why.
 */
int	textrule_check(const char *in, size_t inlen, size_t maxchars,
	    char *out, size_t outlen, size_t *outn);

/* The reason for a FORMAT_ERROR text, e.g. "must be 1 to 140 characters". */
void	textrule_error(int code, size_t maxchars, char *buf, size_t len);

#endif
