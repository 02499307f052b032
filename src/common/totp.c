/*
 * HOTP/TOTP. The comparison runs over every candidate step without an
 * early exit so that the timing tells nothing about which step (or
 * whether any) matched.
 */
#include <limits.h>

#include <openssl/crypto.h>
#include <openssl/evp.h>
#include <openssl/hmac.h>

#include "totp.h"

#define TOTP_DRIFT	1	/* accepted steps either side of now */

static const uint32_t	pow10[] = {
	1, 10, 100, 1000, 10000, 100000, 1000000, 10000000, 100000000,
	1000000000
};

uint32_t
totp_hotp(const uint8_t *key, size_t keylen, uint64_t counter, int digits)
{
	uint8_t		msg[8], mac[EVP_MAX_MD_SIZE];
	unsigned int	maclen = 0;
	uint32_t	bin;
	int		i, off;
	static const uint8_t	empty = 0;

	if (digits < 1 || digits > 9 || keylen > INT_MAX)
		return (TOTP_ERROR);
	if (key == NULL)
		key = &empty;

	for (i = 7; i >= 0; i--) {
		msg[i] = (uint8_t)(counter & 0xff);
		counter >>= 8;
	}
	if (HMAC(EVP_sha1(), key, (int)keylen, msg, sizeof(msg), mac,
	    &maclen) == NULL || maclen != 20)
		return (TOTP_ERROR);

	/* RFC 4226 section 5.3, dynamic truncation. */
	off = mac[19] & 0x0f;
	bin = (uint32_t)(mac[off] & 0x7f) << 24 |
	    (uint32_t)mac[off + 1] << 16 |
	    (uint32_t)mac[off + 2] << 8 | mac[off + 3];
	OPENSSL_cleanse(mac, sizeof(mac));
	return (bin % pow10[digits]);
}

int64_t
totp_step(int64_t now)
{
	if (now < 0)
		return (-1);
	return (now / TOTP_STEP);
}

/* Exactly TOTP_DIGITS ASCII digits, then the end of the string. */
static int
code_well_formed(const char *code)
{
	int	i;

	if (code == NULL)
		return (0);
	for (i = 0; i < TOTP_DIGITS; i++) {
		if (code[i] < '0' || code[i] > '9')
			return (0);
	}
	return (code[TOTP_DIGITS] == '\0');
}

static void
format_code(uint32_t value, char out[TOTP_DIGITS])
{
	int	i;

	for (i = TOTP_DIGITS - 1; i >= 0; i--) {
		out[i] = (char)('0' + value % 10);
		value /= 10;
	}
}

int
totp_verify(const uint8_t *key, size_t keylen, const char *code,
    int64_t now, int64_t last_used_step, int64_t *matched_step)
{
	char		expect[TOTP_DIGITS];
	int64_t		step, s, found = -1;
	uint32_t	value;
	int		match;

	if (!code_well_formed(code) || matched_step == NULL)
		return (0);
	if ((step = totp_step(now)) == -1)
		return (0);

	for (s = step - TOTP_DRIFT; s <= step + TOTP_DRIFT; s++) {
		if (s < 0)
			continue;
		if ((value = totp_hotp(key, keylen, (uint64_t)s,
		    TOTP_DIGITS)) == TOTP_ERROR)
			return (0);
		format_code(value, expect);
		match = CRYPTO_memcmp(expect, code, TOTP_DIGITS) == 0;
		/* The earliest matching step that was not used yet. */
		if (match && s > last_used_step && found == -1)
			found = s;
	}
	OPENSSL_cleanse(expect, sizeof(expect));
	if (found == -1)
		return (0);
	*matched_step = found;
	return (1);
}
