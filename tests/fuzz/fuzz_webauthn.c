/*
 * libFuzzer: webauthn_client_data, webauthn_attestation and
 * webauthn_assertion (src/common/webauthn.c), on what a browser posts.
 * Byte 0 picks the mode: the input as client data; as an attestation
 * object; spliced into a genuine attestation object (so that libcbor's
 * and libfido2's readers get nearly valid objects); as an assertion's
 * authenticator data; or spliced into the genuine signature. Nothing but
 * the genuine objects may pass.
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "webauthn.h"
#include "../unit/webauthn_vectors.h"

int	LLVMFuzzerTestOneInput(const uint8_t *, size_t);

static uint8_t	cd_hash[32];

static void
fuzz_client_data(const uint8_t *data, size_t size)
{
	uint8_t	hash[32];

	if (webauthn_client_data(data, size, "webauthn.get", wa_challenge,
	    WA_ORIGIN, hash) == NULL && (size != sizeof(wa_cd_get) ||
	    memcmp(data, wa_cd_get, size) != 0)) {
		/* Other JSON with the same members may pass: not a fault. */
		return;
	}
}

static void
fuzz_attestation(const uint8_t *data, size_t size)
{
	struct webauthn_credential	cred;

	(void)webauthn_attestation(data, size, cd_hash, WA_RP_ID, &cred);
}

/* The input overwrites the genuine object from an offset it names. */
static void
fuzz_spliced(const uint8_t *data, size_t size, const uint8_t *genuine,
    size_t len, int attestation)
{
	struct webauthn_credential	 cred;
	uint8_t				*buf;
	size_t				 at, n;
	uint32_t			 count;
	const char			*why;

	if (size < 1)
		return;
	at = data[0] % len;
	n = size - 1 < len - at ? size - 1 : len - at;
	if ((buf = malloc(len)) == NULL)
		abort();
	memcpy(buf, genuine, len);
	memcpy(buf + at, data + 1, n);
	if (attestation)
		why = webauthn_attestation(buf, len, cd_hash, WA_RP_ID, &cred);
	else
		why = webauthn_assertion(WEBAUTHN_ES256, wa_pk, sizeof(wa_pk),
		    wa_ad_get, sizeof(wa_ad_get), cd_hash, buf, len, WA_RP_ID,
		    &count);
	/* A changed signature never verifies. */
	if (!attestation && why == NULL && memcmp(buf, genuine, len) != 0)
		abort();
	free(buf);
}

static void
fuzz_auth_data(const uint8_t *data, size_t size)
{
	uint32_t	count;

	if (webauthn_assertion(WEBAUTHN_ES256, wa_pk, sizeof(wa_pk), data,
	    size, cd_hash, wa_sig_get, sizeof(wa_sig_get), WA_RP_ID,
	    &count) == NULL && (size != sizeof(wa_ad_get) ||
	    memcmp(data, wa_ad_get, size) != 0))
		abort();
}

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	if (size < 1)
		return (0);
	if (webauthn_client_data(wa_cd_get, sizeof(wa_cd_get), "webauthn.get",
	    wa_challenge, WA_ORIGIN, cd_hash) != NULL)
		abort();
	switch (data[0] % 5) {
	case 0:
		fuzz_client_data(data + 1, size - 1);
		break;
	case 1:
		fuzz_attestation(data + 1, size - 1);
		break;
	case 2:
		fuzz_spliced(data + 1, size - 1, wa_att_packed,
		    sizeof(wa_att_packed), 1);
		break;
	case 3:
		fuzz_auth_data(data + 1, size - 1);
		break;
	default:
		fuzz_spliced(data + 1, size - 1, wa_sig_get,
		    sizeof(wa_sig_get), 0);
		break;
	}
	return (0);
}
