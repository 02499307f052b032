/*
 * Unit tests for src/common/secretbox.c: round trips, the documented
 * wire format (checked with an independent AES-GCM computation), aad
 * binding, tampering, rotation and buffer limits.
 */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <string.h>
#include <cmocka.h>

#include <openssl/evp.h>

#include "encoding.h"
#include "keyring.h"
#include "secretbox.h"

static const uint8_t	key_old[32] = { 1, 2, 3, 4, 5, 6, 7, 8 };
static const uint8_t	key_new[32] = { 9, 9, 9, 9, 9, 9, 9, 9, 9 };

static void
ring(struct keyring *kr, int with_new)
{
	memset(kr, 0, sizeof(*kr));
	if (with_new)
		assert_int_equal(keyring_add(kr, "new", key_new), 0);
	assert_int_equal(keyring_add(kr, "old", key_old), 0);
}

static void
test_roundtrip(void **state)
{
	struct keyring	kr;
	char		box[SECRETBOX_SEALED_SIZE(300)];
	uint8_t		pt[300], back[300];
	size_t		n;
	int		len;
	(void)state;

	ring(&kr, 0);
	for (n = 0; n < sizeof(pt); n += 37) {
		memset(pt, (int)n, n);
		len = secretbox_seal(&kr, pt, n, "psu:anna:totp", box,
		    sizeof(box));
		assert_true(len > 0);
		assert_int_equal(strlen(box), len);
		assert_memory_equal(box, "v1.old.", 7);
		assert_int_equal(len, 7 + BASE64URL_ENCODED_LEN(n + 28));
		assert_int_equal(secretbox_open(&kr, box, "psu:anna:totp",
		    back, sizeof(back)), n);
		assert_memory_equal(back, pt, n);
	}
	/* Empty plaintext; NULL aad is the empty aad. */
	len = secretbox_seal(&kr, NULL, 0, NULL, box, sizeof(box));
	assert_true(len > 0);
	assert_int_equal(secretbox_open(&kr, box, "", back, sizeof(back)), 0);
	keyring_clear(&kr);
}

static void
test_fresh_nonce(void **state)
{
	struct keyring	kr;
	char		a[128], b[128];
	(void)state;

	ring(&kr, 0);
	assert_true(secretbox_seal(&kr, (const uint8_t *)"seed", 4, "x", a,
	    sizeof(a)) > 0);
	assert_true(secretbox_seal(&kr, (const uint8_t *)"seed", 4, "x", b,
	    sizeof(b)) > 0);
	assert_string_not_equal(a, b);
	keyring_clear(&kr);
}

/* Builds a box the documented way, with a fixed nonce, outside the code. */
static void
reference_box(const uint8_t key[32], const char *kid, const char *aad,
    const uint8_t *pt, size_t ptlen, char *out, size_t outlen)
{
	EVP_CIPHER_CTX	*ctx;
	uint8_t		 raw[256];
	char		 hdr[64];
	int		 n, hdrlen;

	memset(raw, 0xa5, 12);	/* nonce */
	hdrlen = snprintf(hdr, sizeof(hdr), "v1.%s.", kid);
	assert_non_null(ctx = EVP_CIPHER_CTX_new());
	assert_int_equal(EVP_EncryptInit_ex(ctx, EVP_aes_256_gcm(), NULL, key,
	    raw), 1);
	assert_int_equal(EVP_EncryptUpdate(ctx, NULL, &n,
	    (const uint8_t *)hdr, hdrlen), 1);
	assert_int_equal(EVP_EncryptUpdate(ctx, NULL, &n,
	    (const uint8_t *)aad, (int)strlen(aad)), 1);
	assert_int_equal(EVP_EncryptUpdate(ctx, raw + 12, &n, pt,
	    (int)ptlen), 1);
	assert_int_equal(EVP_EncryptFinal_ex(ctx, raw + 12 + ptlen, &n), 1);
	assert_int_equal(EVP_CIPHER_CTX_ctrl(ctx, EVP_CTRL_GCM_GET_TAG, 16,
	    raw + 12 + ptlen), 1);
	EVP_CIPHER_CTX_free(ctx);
	memcpy(out, hdr, (size_t)hdrlen);
	assert_true(base64url_encode(raw, 12 + ptlen + 16, out + hdrlen,
	    outlen - (size_t)hdrlen) > 0);
}

static void
test_wire_format(void **state)
{
	struct keyring	kr;
	char		box[256];
	uint8_t		back[64];
	(void)state;

	ring(&kr, 1);
	reference_box(key_old, "old", "psu:anna:totp",
	    (const uint8_t *)"JBSWY3DPEHPK3PXP", 16, box, sizeof(box));
	assert_int_equal(secretbox_open(&kr, box, "psu:anna:totp", back,
	    sizeof(back)), 16);
	assert_memory_equal(back, "JBSWY3DPEHPK3PXP", 16);
	/* Without the header in the aad it must not open. */
	reference_box(key_old, "old", "", (const uint8_t *)"x", 1, box,
	    sizeof(box));
	assert_int_equal(secretbox_open(&kr, box, "", back, sizeof(back)), 1);
	keyring_clear(&kr);
}

static void
test_wrong_aad(void **state)
{
	struct keyring	kr;
	char		box[128];
	uint8_t		back[64];
	(void)state;

	ring(&kr, 0);
	assert_true(secretbox_seal(&kr, (const uint8_t *)"secret", 6,
	    "psu:anna:totp", box, sizeof(box)) > 0);
	memset(back, 'Z', sizeof(back));
	assert_int_equal(secretbox_open(&kr, box, "psu:bert:totp", back,
	    sizeof(back)), -1);
	/* Unauthenticated plaintext is wiped, not left in the buffer. */
	assert_memory_not_equal(back, "secret", 6);
	assert_int_equal(secretbox_open(&kr, box, "psu:anna:totp2", back,
	    sizeof(back)), -1);
	assert_int_equal(secretbox_open(&kr, box, "", back, sizeof(back)),
	    -1);
	assert_int_equal(secretbox_open(&kr, box, NULL, back, sizeof(back)),
	    -1);
	keyring_clear(&kr);
}

static void
test_tamper(void **state)
{
	struct keyring	kr;
	char		box[128], bad[160];
	uint8_t		back[64];
	size_t		i, len;
	(void)state;

	ring(&kr, 1);
	assert_true(secretbox_seal(&kr, (const uint8_t *)"0123456789", 10,
	    "aad", box, sizeof(box)) > 0);
	len = strlen(box);
	/* Every character of the text matters. */
	for (i = 0; i < len; i++) {
		strcpy(bad, box);
		bad[i] = bad[i] == 'A' ? 'B' : 'A';
		assert_int_equal(secretbox_open(&kr, bad, "aad", back,
		    sizeof(back)), -1);
	}
	/* Truncated and extended. */
	for (i = 0; i < len; i++) {
		memcpy(bad, box, i);
		bad[i] = '\0';
		assert_int_equal(secretbox_open(&kr, bad, "aad", back,
		    sizeof(back)), -1);
	}
	snprintf(bad, sizeof(bad), "%sAA", box);
	assert_int_equal(secretbox_open(&kr, bad, "aad", back, sizeof(back)),
	    -1);
	/* Key id swapped for another known key. */
	snprintf(bad, sizeof(bad), "v1.old.%s", box + strlen("v1.new."));
	assert_int_equal(secretbox_open(&kr, bad, "aad", back, sizeof(back)),
	    -1);
	snprintf(bad, sizeof(bad), "v1.nope.%s", box + strlen("v1.new."));
	assert_int_equal(secretbox_open(&kr, bad, "aad", back, sizeof(back)),
	    -1);
	snprintf(bad, sizeof(bad), "v2.new.%s", box + strlen("v1.new."));
	assert_int_equal(secretbox_open(&kr, bad, "aad", back, sizeof(back)),
	    -1);
	assert_int_equal(secretbox_open(&kr, "", "aad", back, sizeof(back)),
	    -1);
	assert_int_equal(secretbox_open(&kr, "v1.new", "aad", back,
	    sizeof(back)), -1);
	assert_int_equal(secretbox_open(&kr, "v1.new.", "aad", back,
	    sizeof(back)), -1);
	assert_int_equal(secretbox_open(&kr, "v1..AAAA", "aad", back,
	    sizeof(back)), -1);
	assert_int_equal(secretbox_open(&kr, NULL, "aad", back, sizeof(back)),
	    -1);
	keyring_clear(&kr);
}

static void
test_rotation(void **state)
{
	struct keyring	before, after;
	char		box[128];
	uint8_t		back[64];
	(void)state;

	ring(&before, 0);
	assert_true(secretbox_seal(&before, (const uint8_t *)"seed", 4, "a",
	    box, sizeof(box)) > 0);
	ring(&after, 1);
	assert_int_equal(secretbox_open(&after, box, "a", back, sizeof(back)),
	    4);
	assert_memory_equal(back, "seed", 4);
	/* New seals use the new first key, which the old ring lacks. */
	assert_true(secretbox_seal(&after, (const uint8_t *)"seed", 4, "a",
	    box, sizeof(box)) > 0);
	assert_memory_equal(box, "v1.new.", 7);
	assert_int_equal(secretbox_open(&before, box, "a", back,
	    sizeof(back)), -1);
	keyring_clear(&before);
	keyring_clear(&after);
}

static void
test_buffers(void **state)
{
	struct keyring	kr, empty;
	char		box[128];
	uint8_t		back[10];
	size_t		need;
	int		len;
	(void)state;

	ring(&kr, 0);
	need = 7 + BASE64URL_ENCODED_LEN(10 + 28) + 1;
	assert_int_equal(secretbox_seal(&kr, (const uint8_t *)"0123456789",
	    10, "", box, need - 1), -1);
	len = secretbox_seal(&kr, (const uint8_t *)"0123456789", 10, "", box,
	    need);
	assert_int_equal(len, need - 1);
	assert_true(SECRETBOX_SEALED_SIZE(10) >= need);
	assert_int_equal(secretbox_open(&kr, box, "", back, 9), -1);
	assert_int_equal(secretbox_open(&kr, box, "", back, 10), 10);

	memset(&empty, 0, sizeof(empty));
	assert_int_equal(secretbox_seal(&empty, back, 1, "", box,
	    sizeof(box)), -1);
	assert_int_equal(secretbox_seal(NULL, back, 1, "", box, sizeof(box)),
	    -1);
	assert_int_equal(secretbox_open(&empty, box, "", back, sizeof(back)),
	    -1);
	keyring_clear(&kr);
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_roundtrip),
		cmocka_unit_test(test_fresh_nonce),
		cmocka_unit_test(test_wire_format),
		cmocka_unit_test(test_wrong_aad),
		cmocka_unit_test(test_tamper),
		cmocka_unit_test(test_rotation),
		cmocka_unit_test(test_buffers),
	};

	return (cmocka_run_group_tests_name("secretbox", tests, NULL, NULL));
}
