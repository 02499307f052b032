/*
 * Device signatures: the canonical, domain-separated encodings of what an
 * authenticator signs (device/PROTOCOL.md, "Signatures") and their
 * ECDSA P-256 / SHA-256 verification with OpenSSL.
 *
 * The service calls devsig_confirm_verify() with the public key recorded
 * at enrolment; psd2-deviced never decides on a signature's validity.
 * Every verify function fails closed: 1 means valid, 0 anything else.
 */
#ifndef PSD2_DEVSIG_H
#define PSD2_DEVSIG_H

#include <stddef.h>
#include <stdint.h>

#include <openssl/evp.h>

#include "devframe.h"

/* Confirmations: version 3 (flags, PIN, minor units); versions 1 and 2
 * are refused. The attestation encoding is unchanged and keeps its V1
 * name. */
#define DEVSIG_CONFIRM_DOMAIN	"PSD2GATE-DEVICE-CONFIRM-V3"
#define DEVSIG_ATTEST_DOMAIN	"PSD2GATE-DEVICE-ATTEST-V1"
#define DEVSIG_ENCODING_MAX	256
#define DEVSIG_FPR_LEN		39	/* "XXXX XXXX ... XXXX", 8 groups */
#define DEVSIG_CA_MAX		8

size_t	devsig_confirm_encode(const struct dev_confirm *, uint8_t outcome,
	    uint8_t flags, uint32_t counter, uint8_t *out, size_t outlen);
/*
 * 1 only if flags are exactly those of the outcome (dev_outcome_flags():
 * approved needs UP and UV), sig is strict DER with a low S, and it
 * verifies over the version 2 encoding of c, outcome, flags and counter.
 */
int	devsig_confirm_verify(const uint8_t pubkey[DEV_PUBKEY_LEN],
	    const struct dev_confirm *, uint8_t outcome, uint8_t flags,
	    uint32_t counter, const uint8_t *sig, size_t siglen);
/*
 * What the service calls for an outcome "approved": 1 only for a valid
 * version 2 signature over c with outcome approved, flags UP|UV (the PSU
 * pressed confirm after the device checked the PIN) and this counter.
 */
int	devsig_approval_verify(const uint8_t pubkey[DEV_PUBKEY_LEN],
	    const struct dev_confirm *, uint32_t counter, const uint8_t *sig,
	    size_t siglen);
/* 1 if sig is strict DER (minimal, positive, 0 < r,s < n), and, with
 * low_s, s <= n/2. */
int	devsig_der_ok(const uint8_t *sig, size_t siglen, int low_s);

/* A signature counter is accepted only if it exceeds the last accepted. */
int	devsig_counter_ok(uint64_t last_accepted, uint32_t counter);
/* 1 once last_accepted is 2^32 - 1: no counter can follow, the device
 * must be replaced (the service creates no more challenges for it). */
int	devsig_counter_exhausted(uint64_t last_accepted);

size_t	devsig_attest_encode(const char *serial, const char *model,
	    const uint8_t pubkey[DEV_PUBKEY_LEN], uint8_t *out, size_t outlen);
/* Verifies with the CA whose key id is in->attest_kid (none: 0). */
int	devsig_attest_verify(EVP_PKEY *const *cas, size_t ncas,
	    const struct dev_info *);
/* Key identifier: the first 8 bytes of SHA-256 of the 65-byte point. */
void	devsig_key_id(const uint8_t pubkey[DEV_PUBKEY_LEN],
	    uint8_t out[DEV_KEY_ID_LEN]);
int	devsig_pkey_id(EVP_PKEY *, uint8_t out[DEV_KEY_ID_LEN]);
int	devsig_load_cas(const char *path, EVP_PKEY **cas, size_t max,
	    size_t *n);
void	devsig_free_cas(EVP_PKEY **cas, size_t n);

/* Raw keys: 65-byte uncompressed P-256 points. */
EVP_PKEY	*devsig_pubkey_from_raw(const uint8_t pubkey[DEV_PUBKEY_LEN]);
int		 devsig_pubkey_raw(EVP_PKEY *, uint8_t pubkey[DEV_PUBKEY_LEN]);
/* 1 if pubkey is 0x04 || X || Y and (X, Y) a point on P-256 (5.2). */
int		 devsig_pubkey_valid(const uint8_t pubkey[DEV_PUBKEY_LEN]);
/* Strict DER required (any S: attestations are made by vendors' CAs). */
int		 devsig_verify(EVP_PKEY *, const uint8_t *msg, size_t len,
		    const uint8_t *sig, size_t siglen);
/* Signs with a low S, the form devsig_confirm_verify() requires. */
int		 devsig_sign(EVP_PKEY *, const uint8_t *msg, size_t len,
		    uint8_t *sig, size_t *siglen);

/* Key fingerprint shown on the device display and by psd2ctl. */
void	devsig_fingerprint(const uint8_t pubkey[DEV_PUBKEY_LEN],
	    char out[DEVSIG_FPR_LEN + 1]);

/*
 * Challenge ids travel as 16 bytes and are stored as uuid text:
 * uuid_decode() and uuid_encode() of encoding.h read and write them.
 */

#endif
