/*
 * Whether a bank staff's new FIDO2 security key is one the bank trusts:
 * its "packed" attestation (verified by webauthn_attestation) must be by
 * a certificate of a listed maker's model. The model is its AAGUID, on
 * an allow-list; the certificate must meet WebAuthn Level 2 8.2.1 and
 * chain to one of the configured attestation roots.
 *
 * A maker that signs with a self-signed batch certificate (as Chromium's
 * virtual authenticator does) publishes its key: such a leaf, alone in
 * x5c, is trusted when a root has its subject and its public key.
 */
#ifndef PSD2_WEBAUTHN_TRUST_H
#define PSD2_WEBAUTHN_TRUST_H

#include <stddef.h>
#include <stdint.h>

#include "webauthn.h"

#define WEBAUTHN_AAGUIDS_MAX	64

struct webauthn_trust;	/* attestation roots and the AAGUID allow-list */

/*
 * Reads roots (a PEM file of one or more attestation root certificates)
 * and aaguids (UUIDs 8-4-4-4-12, hex any case, separated by spaces and/or
 * commas; at least one, at most 64). NULL with err filled (naming what is
 * wrong: the file, which certificate, which UUID) on any error.
 */
struct webauthn_trust	*webauthn_trust_load(const char *, const char *,
			    char *, size_t);
void			 webauthn_trust_free(struct webauthn_trust *);

/*
 * A new staff key's attestation (webauthn_attestation passed on it):
 * NULL when trusted, or a short reason for the log.
 */
const char		*webauthn_trust_check(const struct webauthn_trust *,
			    const struct webauthn_credential *);

/* The AAGUID as text 8-4-4-4-12 lower case (37 bytes with the NUL). */
void			 webauthn_aaguid_text(const uint8_t [16], char [37]);

#endif
