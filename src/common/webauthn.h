/*
 * WebAuthn (Level 2) relying party checks for passkeys and FIDO2
 * security keys: the client data a browser signs over, a new key's
 * attestation object and an assertion. libfido2 reads the authenticator
 * data and the COSE key and verifies the signatures; libcbor reads the
 * attestation object; what WebAuthn leaves to the relying party (7.1 and
 * 7.2: type, challenge, origin, rpIdHash, the flags) is checked here.
 *
 * Each check returns NULL when it passes, or a short reason for the log
 * (never shown to the browser, which sees one kind of failure).
 */
#ifndef PSD2_WEBAUTHN_H
#define PSD2_WEBAUTHN_H

#include <stddef.h>
#include <stdint.h>

/* COSE algorithms accepted (RFC 9053): ES256, EdDSA (Ed25519), RS256. */
#define WEBAUTHN_ES256		(-7)
#define WEBAUTHN_EDDSA		(-8)
#define WEBAUTHN_RS256		(-257)

#define WEBAUTHN_ID_MAX		1023	/* WebAuthn 5.1: credential ids */
#define WEBAUTHN_PK_MAX		1024
#define WEBAUTHN_CHALLENGE_LEN	32
/* An attestation's certificates kept for a trust check (webauthn_trust.h). */
#define WEBAUTHN_X5C_MAX	4
#define WEBAUTHN_X5C_BYTES	8192

enum webauthn_attested {
	WEBAUTHN_ATT_NONE,	/* fmt "none" */
	WEBAUTHN_ATT_SELF,	/* "packed" signed by the new key itself */
	WEBAUTHN_ATT_X5C	/* "packed" signed by x5c[0]'s key */
};

struct webauthn_credential {
	int		alg;
	uint8_t		id[WEBAUTHN_ID_MAX];
	size_t		id_len;
	uint8_t		pk[WEBAUTHN_PK_MAX];	/* libfido2's raw form */
	size_t		pk_len;
	uint8_t		aaguid[16];
	uint32_t	sign_count;
	enum webauthn_attested	attested;
	/* WEBAUTHN_ATT_X5C: the certificates (DER), leaf first, back to back. */
	size_t		x5c_count;
	size_t		x5c_len[WEBAUTHN_X5C_MAX];
	uint8_t		x5c[WEBAUTHN_X5C_BYTES];
};

/*
 * The relying party id of an origin (https://domain[:port], or
 * http://localhost[:port]): its host, lower case. 0, or -1 when the
 * origin is none of those (an IP address, a path, another scheme).
 */
int		 webauthn_rp_id(const char *, char *, size_t);

/*
 * The client data (its JSON bytes): type "webauthn.create" or
 * "webauthn.get", the challenge (base64url of challenge), origin equal to
 * origin, not cross-origin. Fills hash with its SHA-256.
 */
const char	*webauthn_client_data(const uint8_t *, size_t, const char *,
		    const uint8_t [WEBAUTHN_CHALLENGE_LEN], const char *,
		    uint8_t [32]);

/*
 * A new key's attestation object: authData for rp_id with the flags UP,
 * UV and AT, a key of an accepted algorithm, and an attestation "none" or
 * "packed" (self or with a certificate: the signature is verified, the
 * certificate's chain is not, so it proves nothing about the maker; the
 * certificates are kept in the credential for webauthn_trust_check).
 */
const char	*webauthn_attestation(const uint8_t *, size_t,
		    const uint8_t [32], const char *,
		    struct webauthn_credential *);

/*
 * An assertion by a registered key (alg, pk): authenticator data for
 * rp_id with UP and UV, its signature over it and the client data's hash.
 * Sets *count to the authenticator's signature counter.
 */
const char	*webauthn_assertion(int, const uint8_t *, size_t,
		    const uint8_t *, size_t, const uint8_t [32],
		    const uint8_t *, size_t, const char *, uint32_t *);

#endif
