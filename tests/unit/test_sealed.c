/*
 * Unit tests for src/common/sealed.c: round trip, documented format and
 * MAC construction, tampering of every part, purpose separation, expiry
 * edge, key rotation, buffer limits.
 */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <stdio.h>
#include <string.h>
#include <cmocka.h>

#include "crypto.h"
#include "encoding.h"
#include "keyring.h"
#include "sealed.h"

static const uint8_t	key_old[32] = { 0xaa, 0xbb };
static const uint8_t	key_new[32] = { 0x11, 0x22, 0x33 };

#define EXP	1700000000

static void
ring(struct keyring *kr, int with_new)
{
	memset(kr, 0, sizeof(*kr));
	if (with_new)
		assert_int_equal(keyring_add(kr, "k2", key_new), 0);
	assert_int_equal(keyring_add(kr, "k1", key_old), 0);
}

static void
test_roundtrip(void **state)
{
	struct keyring	kr;
	char		tok[512], out[256];
	const char	*payload = "{\"state\":\"abc\",\"client\":\"tpp-1\"}";
	int		len;
	(void)state;

	ring(&kr, 0);
	len = sealed_make(&kr, "authreq", payload, EXP, tok, sizeof(tok));
	assert_true(len > 0);
	assert_int_equal(strlen(tok), len);
	assert_true((size_t)len < SEALED_TOKEN_SIZE(strlen(payload)));
	assert_int_equal(sealed_open(&kr, "authreq", tok, EXP - 100, out,
	    sizeof(out)), strlen(payload));
	assert_string_equal(out, payload);

	/* Empty payload and every non-NUL byte value. */
	assert_true(sealed_make(&kr, "p", "", EXP, tok, sizeof(tok)) > 0);
	assert_int_equal(sealed_open(&kr, "p", tok, 0, out, sizeof(out)), 0);
	assert_string_equal(out, "");
	{
		char	all[256];
		int	i;

		for (i = 1; i < 256; i++)
			all[i - 1] = (char)i;
		all[255] = '\0';
		assert_true(sealed_make(&kr, "p", all, EXP, tok,
		    sizeof(tok)) > 0);
		assert_int_equal(sealed_open(&kr, "p", tok, 0, out,
		    sizeof(out)), 255);
		assert_string_equal(out, all);
	}
	keyring_clear(&kr);
}

static void
test_format(void **state)
{
	struct keyring	kr;
	char		tok[256], expect[256], macb64[64], pb64[64];
	uint8_t		mac[32];
	const char	msg[] = "csrf\0k1\0" "1700000000\0hello";
	(void)state;

	ring(&kr, 0);
	assert_true(sealed_make(&kr, "csrf", "hello", EXP, tok,
	    sizeof(tok)) > 0);
	/* The documented construction, computed independently. */
	crypto_hmac_sha256(key_old, 32, msg, sizeof(msg) - 1, mac);
	assert_int_equal(base64url_encode(mac, 32, macb64, sizeof(macb64)),
	    43);
	assert_int_equal(base64url_encode("hello", 5, pb64, sizeof(pb64)), 7);
	snprintf(expect, sizeof(expect), "k1.1700000000.%s.%s", pb64, macb64);
	assert_string_equal(tok, expect);
	assert_memory_equal(tok, "k1.1700000000.aGVsbG8.", 22);
	keyring_clear(&kr);
}

static void
test_tamper(void **state)
{
	struct keyring	kr;
	char		tok[256], bad[300], out[64], *p;
	size_t		i, len;
	(void)state;

	ring(&kr, 1);
	assert_true(sealed_make(&kr, "authreq", "payload-1", EXP, tok,
	    sizeof(tok)) > 0);
	len = strlen(tok);
	/* Any changed character (other than a dot) breaks it. */
	for (i = 0; i < len; i++) {
		if (tok[i] == '.')
			continue;
		strcpy(bad, tok);
		bad[i] = bad[i] == '1' ? '2' : '1';
		assert_int_equal(sealed_open(&kr, "authreq", bad, 0, out,
		    sizeof(out)), -1);
	}
	/* Any truncation breaks it. */
	for (i = 0; i < len; i++) {
		memcpy(bad, tok, i);
		bad[i] = '\0';
		assert_int_equal(sealed_open(&kr, "authreq", bad, 0, out,
		    sizeof(out)), -1);
	}
	/* Key id swapped to the other known key. */
	snprintf(bad, sizeof(bad), "k1%s", tok + 2);
	assert_int_equal(sealed_open(&kr, "authreq", bad, 0, out,
	    sizeof(out)), -1);
	/* A later expiry, a non-canonical spelling of the same expiry. */
	snprintf(bad, sizeof(bad), "k2.1800000000%s", tok + 13);
	assert_int_equal(sealed_open(&kr, "authreq", bad, 0, out,
	    sizeof(out)), -1);
	snprintf(bad, sizeof(bad), "k2.01700000000%s", tok + 13);
	assert_int_equal(sealed_open(&kr, "authreq", bad, 0, out,
	    sizeof(out)), -1);
	snprintf(bad, sizeof(bad), "k2.+1700000000%s", tok + 13);
	assert_int_equal(sealed_open(&kr, "authreq", bad, 0, out,
	    sizeof(out)), -1);
	/* Another payload with the old MAC. */
	p = strrchr(tok, '.');
	snprintf(bad, sizeof(bad), "k2.1700000000.cGF5bG9hZC0y%s", p);
	assert_int_equal(sealed_open(&kr, "authreq", bad, 0, out,
	    sizeof(out)), -1);
	/* Extra parts, missing parts. */
	snprintf(bad, sizeof(bad), "%s.", tok);
	assert_int_equal(sealed_open(&kr, "authreq", bad, 0, out,
	    sizeof(out)), -1);
	snprintf(bad, sizeof(bad), "x.%s", tok);
	assert_int_equal(sealed_open(&kr, "authreq", bad, 0, out,
	    sizeof(out)), -1);
	assert_int_equal(sealed_open(&kr, "authreq", "", 0, out, sizeof(out)),
	    -1);
	assert_int_equal(sealed_open(&kr, "authreq", "...", 0, out,
	    sizeof(out)), -1);
	assert_int_equal(sealed_open(&kr, "authreq", "k2.1..", 0, out,
	    sizeof(out)), -1);
	/* Failures leave an empty string, not the unverified payload. */
	assert_string_equal(out, "");
	/* The original still works. */
	assert_int_equal(sealed_open(&kr, "authreq", tok, 0, out,
	    sizeof(out)), 9);
	keyring_clear(&kr);
}

static void
test_purpose(void **state)
{
	struct keyring	kr;
	char		tok[256], out[64];
	(void)state;

	ring(&kr, 0);
	assert_true(sealed_make(&kr, "authreq", "x", EXP, tok,
	    sizeof(tok)) > 0);
	assert_int_equal(sealed_open(&kr, "csrf", tok, 0, out, sizeof(out)),
	    -1);
	assert_int_equal(sealed_open(&kr, "authre", tok, 0, out, sizeof(out)),
	    -1);
	assert_int_equal(sealed_open(&kr, "authreqx", tok, 0, out,
	    sizeof(out)), -1);
	assert_int_equal(sealed_open(&kr, "", tok, 0, out, sizeof(out)), -1);
	assert_int_equal(sealed_open(&kr, "authreq", tok, 0, out,
	    sizeof(out)), 1);
	keyring_clear(&kr);
}

static void
test_expiry(void **state)
{
	struct keyring	kr;
	char		tok[256], out[64];
	(void)state;

	ring(&kr, 0);
	assert_true(sealed_make(&kr, "p", "x", EXP, tok, sizeof(tok)) > 0);
	assert_int_equal(sealed_open(&kr, "p", tok, EXP - 1, out,
	    sizeof(out)), 1);
	assert_int_equal(sealed_open(&kr, "p", tok, EXP, out, sizeof(out)),
	    -1);
	assert_int_equal(sealed_open(&kr, "p", tok, EXP + 1, out,
	    sizeof(out)), -1);
	assert_int_equal(sealed_open(&kr, "p", tok, INT64_MIN, out,
	    sizeof(out)), 1);

	/* Extremes of the expiry field. */
	assert_true(sealed_make(&kr, "p", "x", 0, tok, sizeof(tok)) > 0);
	assert_int_equal(sealed_open(&kr, "p", tok, -1, out, sizeof(out)), 1);
	assert_int_equal(sealed_open(&kr, "p", tok, 0, out, sizeof(out)), -1);
	assert_true(sealed_make(&kr, "p", "x", INT64_MAX, tok,
	    sizeof(tok)) > 0);
	assert_int_equal(sealed_open(&kr, "p", tok, INT64_MAX - 1, out,
	    sizeof(out)), 1);
	assert_int_equal(sealed_make(&kr, "p", "x", -1, tok, sizeof(tok)), -1);
	/* An expiry beyond int64 is refused before anything else. */
	assert_int_equal(sealed_open(&kr, "p",
	    "k1.9223372036854775808.eA."
	    "AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA",
	    0, out, sizeof(out)), -1);
	keyring_clear(&kr);
}

static void
test_rotation(void **state)
{
	struct keyring	before, after;
	char		tok[256], out[64];
	(void)state;

	ring(&before, 0);
	assert_true(sealed_make(&before, "p", "carry", EXP, tok,
	    sizeof(tok)) > 0);
	ring(&after, 1);
	assert_int_equal(sealed_open(&after, "p", tok, 0, out, sizeof(out)),
	    5);
	assert_string_equal(out, "carry");
	assert_true(sealed_make(&after, "p", "carry", EXP, tok,
	    sizeof(tok)) > 0);
	assert_memory_equal(tok, "k2.", 3);
	assert_int_equal(sealed_open(&before, "p", tok, 0, out, sizeof(out)),
	    -1);
	keyring_clear(&before);
	keyring_clear(&after);
}

static void
test_buffers(void **state)
{
	struct keyring	kr, empty;
	char		tok[256], out[64];
	int		len;
	(void)state;

	ring(&kr, 0);
	len = sealed_make(&kr, "p", "hello", EXP, tok, sizeof(tok));
	assert_true(len > 0);
	assert_int_equal(sealed_make(&kr, "p", "hello", EXP, tok,
	    (size_t)len), -1);
	assert_int_equal(sealed_make(&kr, "p", "hello", EXP, tok,
	    (size_t)len + 1), len);
	assert_int_equal(sealed_open(&kr, "p", tok, 0, out, 5), -1);
	assert_int_equal(sealed_open(&kr, "p", tok, 0, out, 6), 5);
	assert_int_equal(sealed_open(&kr, "p", tok, 0, out, 0), -1);

	memset(&empty, 0, sizeof(empty));
	assert_int_equal(sealed_make(&empty, "p", "x", EXP, tok, sizeof(tok)),
	    -1);
	assert_int_equal(sealed_open(&empty, "p", tok, 0, out, sizeof(out)),
	    -1);
	assert_int_equal(sealed_make(&kr, NULL, "x", EXP, tok, sizeof(tok)),
	    -1);
	assert_int_equal(sealed_make(&kr, "p", NULL, EXP, tok, sizeof(tok)),
	    -1);
	keyring_clear(&kr);
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_roundtrip),
		cmocka_unit_test(test_format),
		cmocka_unit_test(test_tamper),
		cmocka_unit_test(test_purpose),
		cmocka_unit_test(test_expiry),
		cmocka_unit_test(test_rotation),
		cmocka_unit_test(test_buffers),
	};

	return (cmocka_run_group_tests_name("sealed", tests, NULL, NULL));
}
