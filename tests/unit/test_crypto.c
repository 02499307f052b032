/*
 * Unit tests for src/common/crypto.c: FIPS 180-2 SHA-256 and RFC 4231
 * HMAC-SHA256 vectors, constant-time equality, UUID shape.
 */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <string.h>
#include <cmocka.h>

#include "crypto.h"

static void
hex(const uint8_t *in, size_t len, char *out)
{
	static const char	d[] = "0123456789abcdef";
	size_t			i;

	for (i = 0; i < len; i++) {
		out[i * 2] = d[in[i] >> 4];
		out[i * 2 + 1] = d[in[i] & 15];
	}
	out[len * 2] = '\0';
}

static void
test_sha256_vectors(void **state)
{
	char		out[65];
	uint8_t		raw[32];
	char		million[1000];
	(void)state;

	crypto_sha256_hex("abc", 3, out);
	assert_string_equal(out,
	    "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad");
	crypto_sha256_hex("", 0, out);
	assert_string_equal(out,
	    "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855");
	crypto_sha256_hex(
	    "abcdbcdecdefdefgefghfghighijhijkijkljklmklmnlmnomnopnopq", 56,
	    out);
	assert_string_equal(out,
	    "248d6a61d20638b8e5c026930c3e6039a33ce45964ff2167f6ecedd419db06c1");

	crypto_sha256("abc", 3, raw);
	hex(raw, 32, out);
	assert_string_equal(out,
	    "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad");

	/* Not a published vector, but checks len is honoured, not strlen. */
	memset(million, 'a', sizeof(million));
	crypto_sha256_hex(million, 0, out);
	assert_string_equal(out,
	    "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855");
}

static void
test_hmac_rfc4231(void **state)
{
	uint8_t		key[131], mac[32];
	char		out[65];
	const char	*d6 =
	    "Test Using Larger Than Block-Size Key - Hash Key First";
	(void)state;

	/* Test case 1 */
	memset(key, 0x0b, 20);
	crypto_hmac_sha256(key, 20, "Hi There", 8, mac);
	hex(mac, 32, out);
	assert_string_equal(out,
	    "b0344c61d8db38535ca8afceaf0bf12b881dc200c9833da726e9376c2e32cff7");

	/* Test case 2, through both forms. */
	crypto_hmac_sha256("Jefe", 4, "what do ya want for nothing?", 28, mac);
	hex(mac, 32, out);
	assert_string_equal(out,
	    "5bdcc146bf60754e6a042426089575c75a003f089d2739839dec58b964ec3843");
	memset(mac, 0, sizeof(mac));
	assert_int_equal(crypto_hmac_sha256_checked("Jefe", 4,
	    "what do ya want for nothing?", 28, mac), 0);
	hex(mac, 32, out);
	assert_string_equal(out,
	    "5bdcc146bf60754e6a042426089575c75a003f089d2739839dec58b964ec3843");

	/* Test case 3 */
	{
		uint8_t	data[50];

		memset(key, 0xaa, 20);
		memset(data, 0xdd, sizeof(data));
		crypto_hmac_sha256(key, 20, data, sizeof(data), mac);
		hex(mac, 32, out);
		assert_string_equal(out, "773ea91e36800e46854db8ebd09181a7"
		    "2959098b3ef8c122d9635514ced565fe");
	}

	/* Test case 6: key longer than the block size. */
	memset(key, 0xaa, sizeof(key));
	crypto_hmac_sha256(key, sizeof(key), d6, strlen(d6), mac);
	hex(mac, 32, out);
	assert_string_equal(out,
	    "60e431591ee0b67f0d8a26aacbf5b77f8e0bc6213728c5140546040f0ee37f54");
}

static void
test_hmac_empty(void **state)
{
	uint8_t		mac[32];
	char		out[65];
	(void)state;

	/* HMAC-SHA256("", "") is a well-known constant. */
	crypto_hmac_sha256(NULL, 0, NULL, 0, mac);
	hex(mac, 32, out);
	assert_string_equal(out,
	    "b613679a0814d9ec772f95d778c35fc5ff1697c493715653c6c712144292c5ad");
}

static void
test_equal(void **state)
{
	uint8_t		a[32], b[32];
	size_t		i;
	(void)state;

	memset(a, 0x5a, sizeof(a));
	memcpy(b, a, sizeof(b));
	assert_int_equal(crypto_equal(a, b, sizeof(a)), 1);
	assert_int_equal(crypto_equal(a, b, 0), 1);
	for (i = 0; i < sizeof(a); i++) {
		b[i] ^= 0x01;
		assert_int_equal(crypto_equal(a, b, sizeof(a)), 0);
		b[i] ^= 0x01;
	}
	b[31] ^= 0x80;
	assert_int_equal(crypto_equal(a, b, 31), 1);
	assert_int_equal(crypto_equal(a, b, 32), 0);
}

static void
test_random(void **state)
{
	uint8_t		a[64], b[64], zero[64];
	(void)state;

	memset(a, 0, sizeof(a));
	memset(b, 0, sizeof(b));
	memset(zero, 0, sizeof(zero));
	assert_int_equal(crypto_random(a, sizeof(a)), 0);
	assert_int_equal(crypto_random(b, sizeof(b)), 0);
	assert_memory_not_equal(a, zero, sizeof(a));
	assert_memory_not_equal(a, b, sizeof(a));
	assert_int_equal(crypto_random(a, 0), 0);
}

static void
test_uuid_shape(void **state)
{
	char		u[37], v[37];
	size_t		i;
	int		n;
	(void)state;

	for (n = 0; n < 200; n++) {
		assert_int_equal(crypto_uuid(u), 0);
		assert_int_equal(strlen(u), 36);
		assert_true(crypto_is_uuid(u));
		assert_int_equal(u[14], '4');
		assert_non_null(strchr("89ab", u[19]));
		for (i = 0; i < 36; i++)
			assert_non_null(strchr("-0123456789abcdef", u[i]));
	}
	assert_int_equal(crypto_uuid(v), 0);
	assert_string_not_equal(u, v);
}

static void
test_is_uuid(void **state)
{
	(void)state;

	assert_true(crypto_is_uuid("123e4567-e89b-12d3-a456-426614174000"));
	assert_true(crypto_is_uuid("123E4567-E89B-12D3-A456-426614174000"));
	assert_true(crypto_is_uuid("00000000-0000-0000-0000-000000000000"));
	assert_false(crypto_is_uuid(NULL));
	assert_false(crypto_is_uuid(""));
	assert_false(crypto_is_uuid("123e4567-e89b-12d3-a456-42661417400"));
	assert_false(crypto_is_uuid("123e4567-e89b-12d3-a456-4266141740000"));
	assert_false(crypto_is_uuid("123e4567e89b-12d3-a456-4266141740000"));
	assert_false(crypto_is_uuid("123e4567-e89b-12d3-a456_426614174000"));
	assert_false(crypto_is_uuid("123e4567-e89b-12d3-a456-42661417400g"));
	assert_false(crypto_is_uuid("{23e4567-e89b-12d3-a456-426614174000"));
	assert_false(crypto_is_uuid(" 123e4567-e89b-12d3-a456-42661417400"));
	assert_false(crypto_is_uuid("123e4567-e89b-12d3-a456-426614174000\n"));
	assert_false(crypto_is_uuid("123e4567-e89b-12d3-a4-56426614174000"));
}

static void
test_short_hash(void **state)
{
	char		out[13];
	(void)state;

	crypto_short_hash("abc", out);
	assert_string_equal(out, "ba7816bf8f01");
	crypto_short_hash("", out);
	assert_string_equal(out, "e3b0c44298fc");
	crypto_short_hash(NULL, out);
	assert_string_equal(out, "e3b0c44298fc");
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_sha256_vectors),
		cmocka_unit_test(test_hmac_rfc4231),
		cmocka_unit_test(test_hmac_empty),
		cmocka_unit_test(test_equal),
		cmocka_unit_test(test_random),
		cmocka_unit_test(test_uuid_shape),
		cmocka_unit_test(test_is_uuid),
		cmocka_unit_test(test_short_hash),
	};

	return (cmocka_run_group_tests_name("crypto", tests, NULL, NULL));
}
