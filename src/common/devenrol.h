/*
 * Enrolment of an authenticator (device/PROTOCOL.md, "Attestation"): the
 * check psd2ctl device enrol and the staff pages both make, on the row
 * psd2-deviced recorded, before a device becomes active. It does not
 * trust the daemon's attestation_ok: the manufacturer's signature over
 * serial, model and public key is verified here against the CA keys of
 * psd2_device_manufacturer_ca (devsig.c's encoding and verification).
 */
#ifndef PSD2_DEVENROL_H
#define PSD2_DEVENROL_H

#include <stddef.h>

#include <openssl/evp.h>

#include "devsig.h"

enum devenrol_result {
	DEVENROL_OK,		/* a CA key signed it */
	DEVENROL_UNREADABLE,	/* the recorded key or attestation is not
				   what the protocol allows */
	DEVENROL_INVALID	/* no configured CA key signed it */
};

/*
 * serial, model and the database's text of public_key and attestation
 * (bytea hex output, "\x..."). fpr gets the key fingerprint (staff
 * compare it with the device's display and label) unless UNREADABLE.
 */
enum devenrol_result	devenrol_check(EVP_PKEY *const *cas, size_t ncas,
			    const char *serial, const char *model,
			    const char *pubkey_hex, const char *attest_hex,
			    char fpr[DEVSIG_FPR_LEN + 1]);
/* The fingerprint of a recorded key (bytea hex text); -1 if unreadable. */
int	devenrol_fingerprint(const char *pubkey_hex,
	    char fpr[DEVSIG_FPR_LEN + 1]);

#endif
