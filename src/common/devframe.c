/*
 * Frame codec of the authenticator protocol: see device/PROTOCOL.md.
 * Decoders read through a bounded cursor so that no field can run past
 * the buffer, and reject trailing bytes so that one byte string has
 * exactly one meaning.
 */
#include <string.h>

#include "devframe.h"
#include "devtext.h"
#include "iban.h"

struct cursor {
	const uint8_t	*p;
	size_t		 left;
	int		 bad;
};

struct writer {
	uint8_t		*p;
	size_t		 left;
	size_t		 used;
	int		 bad;
};

static void
cur_bytes(struct cursor *c, void *out, size_t n)
{
	if (c->bad || c->left < n) {
		c->bad = 1;
		memset(out, 0, n);
		return;
	}
	memcpy(out, c->p, n);
	c->p += n;
	c->left -= n;
}

static uint8_t
cur_u8(struct cursor *c)
{
	uint8_t	v;

	cur_bytes(c, &v, 1);
	return (v);
}

static uint64_t
cur_be(struct cursor *c, size_t n)
{
	uint8_t		b[8];
	uint64_t	v = 0;
	size_t		i;

	cur_bytes(c, b, n);
	for (i = 0; i < n; i++)
		v = (v << 8) | b[i];
	return (v);
}

/* A u8 length followed by that many bytes, NUL-terminated into out. */
static size_t
cur_str(struct cursor *c, char *out, size_t max)
{
	size_t	n;

	n = cur_u8(c);
	if (n > max) {
		c->bad = 1;
		out[0] = '\0';
		return (0);
	}
	cur_bytes(c, out, n);
	out[c->bad ? 0 : n] = '\0';
	return (n);
}

static void
put_bytes(struct writer *w, const void *src, size_t n)
{
	if (w->bad || w->left < n) {
		w->bad = 1;
		return;
	}
	memcpy(w->p, src, n);
	w->p += n;
	w->left -= n;
	w->used += n;
}

static void
put_be(struct writer *w, uint64_t v, size_t n)
{
	uint8_t	b[8];
	size_t	i;

	for (i = 0; i < n; i++)
		b[n - 1 - i] = (uint8_t)(v >> (8 * i));
	put_bytes(w, b, n);
}

static void
put_str(struct writer *w, const char *s, size_t max)
{
	size_t	n = strlen(s);

	if (n > max) {
		w->bad = 1;
		return;
	}
	put_be(w, n, 1);
	put_bytes(w, s, n);
}

static size_t
writer_done(struct writer *w)
{
	return (w->bad ? 0 : w->used);
}

size_t
dev_frame_encode(uint8_t *out, size_t outlen, uint8_t type, uint16_t seq,
    const uint8_t *payload, size_t plen)
{
	struct writer	w = { out, outlen, 0, 0 };

	if (plen > DEV_PAYLOAD_MAX)
		return (0);
	put_be(&w, DEV_PROTO_VERSION, 1);
	put_be(&w, type, 1);
	put_be(&w, seq, 2);
	put_be(&w, plen, 2);
	if (plen > 0)
		put_bytes(&w, payload, plen);
	return (writer_done(&w));
}

int
dev_frame_decode(const uint8_t *buf, size_t len, struct dev_frame *f)
{
	memset(f, 0, sizeof(*f));
	if (len < DEV_HDR_LEN)
		return (DEV_ERR_TRUNCATED);
	f->version = buf[0];
	f->type = buf[1];
	f->seq = (uint16_t)((buf[2] << 8) | buf[3]);
	f->len = (uint16_t)((buf[4] << 8) | buf[5]);
	if (f->version != DEV_PROTO_VERSION)
		return (DEV_ERR_VERSION);
	if (f->len > DEV_PAYLOAD_MAX || len > DEV_FRAME_MAX)
		return (DEV_ERR_OVERSIZED);
	if (len < DEV_HDR_LEN + (size_t)f->len)
		return (DEV_ERR_TRUNCATED);
	if (len > DEV_HDR_LEN + (size_t)f->len)
		return (DEV_ERR_OVERSIZED);
	f->payload = buf + DEV_HDR_LEN;
	return (DEV_OK);
}

int
dev_valid_serial(const char *s, size_t n)
{
	size_t	i;

	if (n < 1 || n > DEV_SERIAL_MAX)
		return (0);
	for (i = 0; i < n; i++) {
		if ((s[i] >= 'A' && s[i] <= 'Z') || (s[i] >= '0' && s[i] <= '9') ||
		    (s[i] >= 'a' && s[i] <= 'z') || s[i] == '-' || s[i] == '.' ||
		    s[i] == '_')
			continue;
		return (0);
	}
	return (1);
}

/* Printable ASCII, 1..max bytes. */
int
dev_valid_text(const char *s, size_t n, size_t max)
{
	size_t	i;

	if (n < 1 || n > max)
		return (0);
	for (i = 0; i < n; i++) {
		if ((unsigned char)s[i] < 0x20 || (unsigned char)s[i] > 0x7e)
			return (0);
	}
	return (1);
}

int
dev_valid_currency(const char *s, size_t n)
{
	size_t	i;

	if (n != 3)
		return (0);
	for (i = 0; i < n; i++) {
		if (s[i] < 'A' || s[i] > 'Z')
			return (0);
	}
	return (1);
}

/* Shape and MOD 97-10 check digits (iban.c). */
int
dev_valid_iban(const char *s, size_t n)
{
	return (iban_valid(s, n));
}

/* The payee name rules of PROTOCOL.md 5.3.2 (devtext.c). */
int
dev_valid_payee(const char *s, size_t n)
{
	return (devtext_payee_ok(s, n));
}

int
dev_outcome_flags(int outcome)
{
	switch (outcome) {
	case DEV_OUTCOME_APPROVED:	return (DEV_FLAG_UP | DEV_FLAG_UV);
	case DEV_OUTCOME_DECLINED:	return (DEV_FLAG_UP);
	case DEV_OUTCOME_TIMED_OUT:	return (0);
	case DEV_OUTCOME_BUSY:		return (0);
	default:			return (-1);
	}
}

/* Well-formed UTF-8 without control characters, 1..max bytes. */
int
dev_valid_utf8_line(const char *str, size_t n, size_t max)
{
	const unsigned char	*s = (const unsigned char *)str;
	size_t			 i = 0, k, need;
	uint32_t		 cp;

	if (n < 1 || n > max)
		return (0);
	while (i < n) {
		if (s[i] < 0x20 || s[i] == 0x7f)
			return (0);
		if (s[i] < 0x80) {
			i++;
			continue;
		}
		if (s[i] >= 0xc2 && s[i] <= 0xdf) {
			need = 1;
			cp = s[i] & 0x1f;
		} else if (s[i] >= 0xe0 && s[i] <= 0xef) {
			need = 2;
			cp = s[i] & 0x0f;
		} else if (s[i] >= 0xf0 && s[i] <= 0xf4) {
			need = 3;
			cp = s[i] & 0x07;
		} else
			return (0);
		if (n - i <= need)
			return (0);
		for (k = 1; k <= need; k++) {
			if ((s[i + k] & 0xc0) != 0x80)
				return (0);
			cp = (cp << 6) | (s[i + k] & 0x3f);
		}
		/* Overlong forms, surrogates and C1 controls are refused. */
		if ((need == 2 && cp < 0x800) || (need == 3 && cp < 0x10000) ||
		    cp > 0x10ffff || (cp >= 0xd800 && cp <= 0xdfff) ||
		    (cp >= 0x80 && cp <= 0x9f))
			return (0);
		i += need + 1;
	}
	return (1);
}

size_t
dev_info_encode(const struct dev_info *in, uint8_t *out, size_t outlen)
{
	struct writer	w = { out, outlen, 0, 0 };

	put_str(&w, in->serial, DEV_SERIAL_MAX);
	put_str(&w, in->model, DEV_MODEL_MAX);
	put_str(&w, in->firmware, DEV_FIRMWARE_MAX);
	put_bytes(&w, in->pubkey, DEV_PUBKEY_LEN);
	put_be(&w, in->counter, 4);
	put_be(&w, in->pin_tries, 1);
	put_be(&w, in->puk_tries, 1);
	put_bytes(&w, in->attest_kid, DEV_KEY_ID_LEN);
	if (in->attest_len > DEV_SIG_MAX)
		return (0);
	put_be(&w, in->attest_len, 1);
	put_bytes(&w, in->attest, in->attest_len);
	return (writer_done(&w));
}

int
dev_info_decode(const uint8_t *p, size_t n, struct dev_info *in)
{
	struct cursor	c = { p, n, 0 };
	size_t		sl, ml, fl;

	memset(in, 0, sizeof(*in));
	sl = cur_str(&c, in->serial, DEV_SERIAL_MAX);
	ml = cur_str(&c, in->model, DEV_MODEL_MAX);
	fl = cur_str(&c, in->firmware, DEV_FIRMWARE_MAX);
	cur_bytes(&c, in->pubkey, DEV_PUBKEY_LEN);
	in->counter = (uint32_t)cur_be(&c, 4);
	in->pin_tries = cur_u8(&c);
	in->puk_tries = cur_u8(&c);
	cur_bytes(&c, in->attest_kid, DEV_KEY_ID_LEN);
	in->attest_len = cur_u8(&c);
	if (in->attest_len > DEV_SIG_MAX)
		return (DEV_ERR_PAYLOAD);
	cur_bytes(&c, in->attest, in->attest_len);
	if (c.bad || c.left != 0)
		return (DEV_ERR_PAYLOAD);
	if (!dev_valid_serial(in->serial, sl) ||
	    !dev_valid_text(in->model, ml, DEV_MODEL_MAX) ||
	    !dev_valid_text(in->firmware, fl, DEV_FIRMWARE_MAX) ||
	    in->pubkey[0] != 0x04 || in->attest_len < DEV_SIG_MIN ||
	    in->pin_tries > DEV_PIN_TRIES || in->puk_tries > DEV_PUK_TRIES)
		return (DEV_ERR_PAYLOAD);
	return (DEV_OK);
}

size_t
dev_confirm_encode(const struct dev_confirm *in, uint8_t *out, size_t outlen)
{
	struct writer	w = { out, outlen, 0, 0 };

	put_bytes(&w, in->challenge, DEV_CHALLENGE_LEN);
	put_bytes(&w, in->nonce, DEV_NONCE_LEN);
	put_be(&w, in->amount_minor, 8);
	if (strlen(in->currency) != 3)
		return (0);
	put_bytes(&w, in->currency, 3);
	put_str(&w, in->payee_name, DEV_PAYEE_NAME_MAX);
	put_str(&w, in->payee_iban, DEV_IBAN_MAX);
	put_be(&w, in->timeout_s, 2);
	return (writer_done(&w));
}

int
dev_confirm_decode(const uint8_t *p, size_t n, struct dev_confirm *in)
{
	struct cursor	c = { p, n, 0 };
	size_t		nl, il;

	memset(in, 0, sizeof(*in));
	cur_bytes(&c, in->challenge, DEV_CHALLENGE_LEN);
	cur_bytes(&c, in->nonce, DEV_NONCE_LEN);
	in->amount_minor = cur_be(&c, 8);
	cur_bytes(&c, in->currency, 3);
	in->currency[3] = '\0';
	nl = cur_str(&c, in->payee_name, DEV_PAYEE_NAME_MAX);
	il = cur_str(&c, in->payee_iban, DEV_IBAN_MAX);
	in->timeout_s = (uint16_t)cur_be(&c, 2);
	if (c.bad || c.left != 0)
		return (DEV_ERR_PAYLOAD);
	if (in->amount_minor == 0 || in->amount_minor > INT64_MAX ||
	    !dev_valid_currency(in->currency, 3) ||
	    !dev_valid_payee(in->payee_name, nl) ||
	    !dev_valid_iban(in->payee_iban, il) ||
	    in->timeout_s < 1 || in->timeout_s > DEV_TIMEOUT_MAX)
		return (DEV_ERR_PAYLOAD);
	return (DEV_OK);
}

size_t
dev_result_encode(const struct dev_result *in, uint8_t *out, size_t outlen)
{
	struct writer	w = { out, outlen, 0, 0 };

	if (in->sig_len > DEV_SIG_MAX)
		return (0);
	put_bytes(&w, in->challenge, DEV_CHALLENGE_LEN);
	put_be(&w, in->outcome, 1);
	put_be(&w, in->flags, 1);
	put_be(&w, in->counter, 4);
	put_be(&w, in->sig_len, 1);
	put_bytes(&w, in->sig, in->sig_len);
	return (writer_done(&w));
}

int
dev_result_decode(const uint8_t *p, size_t n, struct dev_result *in)
{
	struct cursor	c = { p, n, 0 };

	memset(in, 0, sizeof(*in));
	cur_bytes(&c, in->challenge, DEV_CHALLENGE_LEN);
	in->outcome = cur_u8(&c);
	in->flags = cur_u8(&c);
	in->counter = (uint32_t)cur_be(&c, 4);
	in->sig_len = cur_u8(&c);
	if (in->sig_len > DEV_SIG_MAX)
		return (DEV_ERR_PAYLOAD);
	cur_bytes(&c, in->sig, in->sig_len);
	if (c.bad || c.left != 0)
		return (DEV_ERR_PAYLOAD);
	/* One meaning per outcome: an approval always carries UP and UV. */
	if (dev_outcome_flags(in->outcome) != in->flags)
		return (DEV_ERR_PAYLOAD);
	switch (in->outcome) {
	case DEV_OUTCOME_APPROVED:
	case DEV_OUTCOME_DECLINED:
	case DEV_OUTCOME_TIMED_OUT:
		if (in->sig_len < DEV_SIG_MIN)
			return (DEV_ERR_PAYLOAD);
		break;
	case DEV_OUTCOME_BUSY:
		if (in->sig_len != 0)
			return (DEV_ERR_PAYLOAD);
		break;
	default:
		return (DEV_ERR_PAYLOAD);
	}
	return (DEV_OK);
}

int
dev_cancel_decode(const uint8_t *p, size_t n, uint8_t *challenge)
{
	if (n != DEV_CHALLENGE_LEN)
		return (DEV_ERR_PAYLOAD);
	memcpy(challenge, p, DEV_CHALLENGE_LEN);
	return (DEV_OK);
}

int
dev_error_decode(const uint8_t *p, size_t n, struct dev_error *e)
{
	if (n != 2 || p[0] < DEV_ERR_VERSION || p[0] > DEV_ERR_MAX)
		return (DEV_ERR_PAYLOAD);
	e->code = p[0];
	e->offending_type = p[1];
	return (DEV_OK);
}

const char *
dev_error_name(int code)
{
	switch (code) {
	case DEV_OK:			return ("ok");
	case DEV_ERR_VERSION:		return ("bad version");
	case DEV_ERR_TRUNCATED:		return ("truncated frame");
	case DEV_ERR_OVERSIZED:		return ("oversized frame");
	case DEV_ERR_TYPE:		return ("unknown message type");
	case DEV_ERR_PAYLOAD:		return ("malformed payload");
	case DEV_ERR_NOT_PENDING:	return ("nothing pending");
	case DEV_ERR_CURRENCY:		return ("currency not displayable");
	case DEV_ERR_CONFLICT:		return ("challenge changed");
	case DEV_ERR_PIN_LOCKED:	return ("PIN locked");
	case DEV_ERR_EXHAUSTED:		return ("counter exhausted");
	default:			return ("unknown error");
	}
}

const char *
dev_outcome_name(int outcome)
{
	switch (outcome) {
	case DEV_OUTCOME_APPROVED:	return ("approved");
	case DEV_OUTCOME_DECLINED:	return ("declined");
	case DEV_OUTCOME_TIMED_OUT:	return ("timed_out");
	case DEV_OUTCOME_BUSY:		return ("busy");
	default:			return ("unknown");
	}
}
