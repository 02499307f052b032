/*
 * The enrolment check shared by psd2ctl device enrol and the staff pages
 * (devenrol.h). The recorded attestation carries no CA key id, so every
 * configured CA key is tried.
 */
#include <stdint.h>
#include <string.h>

#include "devenrol.h"
#include "encoding.h"

/* PostgreSQL's bytea hex output ("\x0a1b...") into out; -1 if not. */
static int
devenrol_unhex(const char *s, uint8_t *out, size_t max, size_t *len)
{
	int	n;

	if (s == NULL || strncmp(s, "\\x", 2) != 0)
		return (-1);
	if ((n = hex_decode(s + 2, strlen(s + 2), out, max)) == -1)
		return (-1);
	*len = (size_t)n;
	return (0);
}

static int
devenrol_pubkey(const char *hex, uint8_t pub[DEV_PUBKEY_LEN])
{
	size_t	len;

	if (devenrol_unhex(hex, pub, DEV_PUBKEY_LEN, &len) == -1 ||
	    len != DEV_PUBKEY_LEN || pub[0] != 0x04)
		return (-1);
	return (0);
}

int
devenrol_fingerprint(const char *pubkey_hex, char fpr[DEVSIG_FPR_LEN + 1])
{
	uint8_t	pub[DEV_PUBKEY_LEN];

	if (devenrol_pubkey(pubkey_hex, pub) == -1)
		return (-1);
	devsig_fingerprint(pub, fpr);
	return (0);
}

enum devenrol_result
devenrol_check(EVP_PKEY *const *cas, size_t ncas, const char *serial,
    const char *model, const char *pubkey_hex, const char *attest_hex,
    char fpr[DEVSIG_FPR_LEN + 1])
{
	uint8_t	pub[DEV_PUBKEY_LEN], sig[DEV_SIG_MAX];
	uint8_t	msg[DEVSIG_ENCODING_MAX];
	size_t	siglen, len, i;

	if (devenrol_pubkey(pubkey_hex, pub) == -1 ||
	    devenrol_unhex(attest_hex, sig, sizeof(sig), &siglen) == -1)
		return (DEVENROL_UNREADABLE);
	devsig_fingerprint(pub, fpr);
	if ((len = devsig_attest_encode(serial, model, pub, msg,
	    sizeof(msg))) == 0)
		return (DEVENROL_INVALID);
	for (i = 0; i < ncas; i++) {
		if (devsig_verify(cas[i], msg, len, sig, siglen) == 1)
			return (DEVENROL_OK);
	}
	return (DEVENROL_INVALID);
}
