/*
 * libFuzzer harness for the authenticator frame codec: the frame decoder
 * and every payload decoder run on the same untrusted bytes, and whatever
 * decodes must re-encode to the same bytes (one meaning per byte string).
 * The same bytes go through the field checks the service reuses: a
 * normalised payee name must pass the device's check and normalise to
 * itself, an IBAN check must not read past its length.
 */
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "devcur.h"
#include "devframe.h"
#include "devtext.h"
#include "iban.h"

static void
check_roundtrip(const uint8_t *p, size_t n, size_t (*enc)(const void *,
    uint8_t *, size_t), const void *msg)
{
	uint8_t	out[DEV_PAYLOAD_MAX];
	size_t	len;

	len = enc(msg, out, sizeof(out));
	if (len != n || memcmp(out, p, n) != 0)
		abort();
}

static size_t
enc_info(const void *m, uint8_t *o, size_t l)
{
	return (dev_info_encode(m, o, l));
}

static size_t
enc_confirm(const void *m, uint8_t *o, size_t l)
{
	return (dev_confirm_encode(m, o, l));
}

static size_t
enc_result(const void *m, uint8_t *o, size_t l)
{
	return (dev_result_encode(m, o, l));
}

static void
check_text(const uint8_t *data, size_t size)
{
	char	out[DEVTEXT_PAYEE_MAX + 1], again[DEVTEXT_PAYEE_MAX + 1];
	char	amount[DEVCUR_FORMAT_MAX], cur[4];
	size_t	n, n2;
	uint64_t v = 0;

	if (devtext_payee_normalize((const char *)data, size, out,
	    sizeof(out), &n) == DEVTEXT_OK) {
		if (!devtext_payee_ok(out, n) ||
		    devtext_payee_normalize(out, n, again, sizeof(again),
		    &n2) != DEVTEXT_OK || n2 != n || memcmp(out, again, n))
			abort();
	}
	if (devtext_payee_ok((const char *)data, size) &&
	    (devtext_payee_normalize((const char *)data, size, out,
	    sizeof(out), &n) != DEVTEXT_OK || n != size ||
	    memcmp(out, data, n)))
		abort();
	(void)iban_valid((const char *)data, size);
	if (size >= 11) {
		memcpy(&v, data, 8);
		memcpy(cur, data + 8, 3);
		cur[3] = '\0';
		n = devcur_format(v, cur, amount, sizeof(amount));
		if (n != 0 && (strlen(amount) != n ||
		    !devcur_displayable(cur)))
			abort();
	}
}

int	LLVMFuzzerTestOneInput(const uint8_t *, size_t);

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct dev_frame	f;
	struct dev_info		in;
	struct dev_confirm	c;
	struct dev_result	r;
	struct dev_error	e;
	uint8_t			id[DEV_CHALLENGE_LEN];
	uint8_t			frame[DEV_FRAME_MAX];

	if (dev_frame_decode(data, size, &f) == DEV_OK) {
		if (dev_frame_encode(frame, sizeof(frame), f.type, f.seq,
		    f.payload, f.len) != size || memcmp(frame, data, size))
			abort();
		data = f.payload;
		size = f.len;
	}
	if (dev_info_decode(data, size, &in) == DEV_OK)
		check_roundtrip(data, size, enc_info, &in);
	if (dev_confirm_decode(data, size, &c) == DEV_OK)
		check_roundtrip(data, size, enc_confirm, &c);
	if (dev_result_decode(data, size, &r) == DEV_OK)
		check_roundtrip(data, size, enc_result, &r);
	(void)dev_cancel_decode(data, size, id);
	(void)dev_error_decode(data, size, &e);
	check_text(data, size);
	return (0);
}
