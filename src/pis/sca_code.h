/*
 * The authentication code of a payment authorised by redirect SCA, bound
 * to the amount and the payee (RTS Art. 5): HMAC-SHA256 under a key of
 * the form key file (form_keys, label "sca-code", so it rotates with the
 * form keys: the key id is stored with the code, and a code verifies as
 * long as its key is still in the file) over
 *
 *	"psd2gate sca-code v1" NUL, then for each of payment id (lowercase
 *	UUID text), amount (integer minor units, decimal), currency, creditor
 *	IBAN and creditor name (UTF-8, NFC, as stored): a 4-byte big-endian
 *	length and the bytes.
 *
 * Kept in payment_authorisation (auth_code_mac, auth_code_kid) when SCA
 * passes, and checked again before booking: a payment row changed after
 * SCA does not book (RJCT payment changed).
 */
#ifndef PSD2_PIS_SCA_CODE_H
#define PSD2_PIS_SCA_CODE_H

#include <stddef.h>
#include <stdint.h>

#include "common/keyring.h"

#define SCA_CODE_LEN	32

struct sca_code_input {
	const char	*payment_id;
	const char	*amount_minor;	/* decimal digits */
	const char	*currency;
	const char	*creditor_iban;
	const char	*creditor_name;
};

/* The code under the current key; kid gets its id. 0 or -1. */
int	sca_code_make(const struct keyring *, const struct sca_code_input *,
	    uint8_t [SCA_CODE_LEN], char [KEYRING_ID_MAX + 1]);
/* 1 if mac (len bytes) is the code of in under key kid, else 0. */
int	sca_code_verify(const struct keyring *, const struct sca_code_input *,
	    const char *, const uint8_t *, size_t);

#endif
