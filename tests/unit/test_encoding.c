/*
 * Unit tests for src/common/encoding.c: RFC 4648 section 10 vectors,
 * strictness of every decoder, buffer limits, form-urlencoding.
 */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <string.h>
#include <cmocka.h>

#include "encoding.h"

struct vector {
	const char	*plain;
	const char	*b64;
	const char	*b32;
	const char	*b16;
};

/* RFC 4648 section 10. */
static const struct vector rfc4648[] = {
	{ "", "", "", "" },
	{ "f", "Zg==", "MY======", "66" },
	{ "fo", "Zm8=", "MZXQ====", "666F" },
	{ "foo", "Zm9v", "MZXW6===", "666F6F" },
	{ "foob", "Zm9vYg==", "MZXW6YQ=", "666F6F62" },
	{ "fooba", "Zm9vYmE=", "MZXW6YTB", "666F6F6261" },
	{ "foobar", "Zm9vYmFy", "MZXW6YTBOI======", "666F6F626172" },
};

#define NVEC	(sizeof(rfc4648) / sizeof(rfc4648[0]))

static size_t
unpadded(const char *s)
{
	size_t	n = strlen(s);

	while (n > 0 && s[n - 1] == '=')
		n--;
	return (n);
}

static int
dec64(const char *s, uint8_t *out, size_t outlen)
{
	return (base64_decode(s, strlen(s), out, outlen));
}

static int
dec64url(const char *s, uint8_t *out, size_t outlen)
{
	return (base64url_decode(s, strlen(s), out, outlen));
}

static int
dec32(const char *s, uint8_t *out, size_t outlen)
{
	return (base32_decode(s, strlen(s), out, outlen));
}

static void
test_base64_vectors(void **state)
{
	char		enc[64];
	uint8_t		dec[64];
	size_t		i, n;
	(void)state;

	for (i = 0; i < NVEC; i++) {
		n = strlen(rfc4648[i].plain);
		assert_int_equal(base64_encode(rfc4648[i].plain, n, enc,
		    sizeof(enc)), strlen(rfc4648[i].b64));
		assert_string_equal(enc, rfc4648[i].b64);
		assert_int_equal(BASE64_ENCODED_LEN(n), strlen(rfc4648[i].b64));
		assert_int_equal(dec64(rfc4648[i].b64, dec, sizeof(dec)), n);
		assert_memory_equal(dec, rfc4648[i].plain, n);

		/* base64url: same text for this alphabet, padding dropped. */
		assert_int_equal(base64url_encode(rfc4648[i].plain, n, enc,
		    sizeof(enc)), unpadded(rfc4648[i].b64));
		assert_memory_equal(enc, rfc4648[i].b64, unpadded(enc));
		assert_int_equal(BASE64URL_ENCODED_LEN(n), strlen(enc));
		assert_int_equal(base64url_decode(rfc4648[i].b64,
		    unpadded(rfc4648[i].b64), dec, sizeof(dec)), n);
		assert_memory_equal(dec, rfc4648[i].plain, n);
	}
}

static void
test_base64_alphabets(void **state)
{
	static const uint8_t	raw[] = { 0xfb, 0xff, 0xbf };
	char			enc[16];
	uint8_t			dec[16];
	(void)state;

	assert_int_equal(base64_encode(raw, 3, enc, sizeof(enc)), 4);
	assert_string_equal(enc, "+/+/");
	assert_int_equal(base64url_encode(raw, 3, enc, sizeof(enc)), 4);
	assert_string_equal(enc, "-_-_");
	assert_int_equal(base64url_encode(raw, 2, enc, sizeof(enc)), 3);
	assert_string_equal(enc, "-_8");
	assert_int_equal(dec64url("-_8", dec, sizeof(dec)), 2);
	assert_memory_equal(dec, raw, 2);
	assert_int_equal(dec64("+/8=", dec, sizeof(dec)), 2);
	assert_memory_equal(dec, raw, 2);

	/* Each decoder refuses the other's alphabet. */
	assert_int_equal(dec64("-_-_", dec, sizeof(dec)), -1);
	assert_int_equal(dec64url("+/+/", dec, sizeof(dec)), -1);
}

static void
test_base64_strict(void **state)
{
	uint8_t		dec[32];
	static const char *bad[] = {
		"Zg", "Zg=", "Zg===", "Z===", "====", "=Zg=", "Zg==Zg==",
		"Zm9v ", " Zm9v", "Zm 9v", "Zm9v\n", "Zm9\tv", "Zm9v\r\n",
		"Zh==", "Zm9=", "Zm9vYh==", "Zm9vYmF=", "Zm9v*", "Zm9v====",
		"Z", "Zm9vY", "Zm9v!A==", "Zm-v", "Zm_v", "Zg=a",
	};
	size_t		i;
	(void)state;

	for (i = 0; i < sizeof(bad) / sizeof(bad[0]); i++)
		assert_int_equal(dec64(bad[i], dec, sizeof(dec)), -1);
	/* Embedded NUL is just another invalid character. */
	assert_int_equal(base64_decode("Zm\0v", 4, dec, sizeof(dec)), -1);
	assert_int_equal(dec64("", dec, 0), 0);
}

static void
test_base64url_strict(void **state)
{
	uint8_t		dec[32];
	static const char *bad[] = {
		"Zg==", "Zm8=", "Z", "Zm9vY", "Zh", "Zm9", "Zm9v ", "Zm+v",
		"Zm/v", "Zm9v\n", "=", "Zg=",
	};
	size_t		i;
	(void)state;

	for (i = 0; i < sizeof(bad) / sizeof(bad[0]); i++)
		assert_int_equal(dec64url(bad[i], dec, sizeof(dec)), -1);
	assert_int_equal(dec64url("Zm8", dec, sizeof(dec)), 2);
	assert_int_equal(dec64url("", dec, sizeof(dec)), 0);
}

static void
test_base64_buffers(void **state)
{
	char		enc[9];
	uint8_t		dec[6];
	(void)state;

	/* "foobar" -> 8 chars + NUL: 9 fits, 8 does not. */
	assert_int_equal(base64_encode("foobar", 6, enc, 9), 8);
	assert_int_equal(base64_encode("foobar", 6, enc, 8), -1);
	assert_int_equal(base64url_encode("fooba", 5, enc, 7), -1);
	assert_int_equal(base64url_encode("fooba", 5, enc, 8), 7);
	assert_int_equal(dec64("Zm9vYmFy", dec, 6), 6);
	assert_int_equal(dec64("Zm9vYmFy", dec, 5), -1);
	assert_int_equal(dec64url("Zm9vYmE", dec, 4), -1);
	assert_int_equal(dec64url("Zm9vYmE", dec, 5), 5);
	assert_int_equal(base64_encode("", 0, enc, 1), 0);
	assert_string_equal(enc, "");
	assert_int_equal(base64_encode("", 0, enc, 0), -1);
}

static void
test_base32_vectors(void **state)
{
	char		enc[64], lower[64];
	uint8_t		dec[64];
	size_t		i, n, j;
	(void)state;

	for (i = 0; i < NVEC; i++) {
		n = strlen(rfc4648[i].plain);
		/* Encoder emits the unpadded form. */
		assert_int_equal(base32_encode(rfc4648[i].plain, n, enc,
		    sizeof(enc)), unpadded(rfc4648[i].b32));
		assert_memory_equal(enc, rfc4648[i].b32, unpadded(enc));
		assert_int_equal(BASE32_ENCODED_LEN(n), strlen(enc));

		assert_int_equal(dec32(rfc4648[i].b32, dec, sizeof(dec)), n);
		assert_memory_equal(dec, rfc4648[i].plain, n);
		assert_int_equal(base32_decode(rfc4648[i].b32,
		    unpadded(rfc4648[i].b32), dec, sizeof(dec)), n);
		assert_memory_equal(dec, rfc4648[i].plain, n);

		for (j = 0; rfc4648[i].b32[j] != '\0'; j++)
			lower[j] = (char)(rfc4648[i].b32[j] >= 'A' &&
			    rfc4648[i].b32[j] <= 'Z' ?
			    rfc4648[i].b32[j] + 32 : rfc4648[i].b32[j]);
		lower[j] = '\0';
		assert_int_equal(dec32(lower, dec, sizeof(dec)), n);
		assert_memory_equal(dec, rfc4648[i].plain, n);
	}
	/* RFC 6238's SHA-1 seed, as authenticator apps show it. */
	assert_int_equal(dec32("GEZDGNBVGY3TQOJQGEZDGNBVGY3TQOJQ", dec,
	    sizeof(dec)), 20);
	assert_memory_equal(dec, "12345678901234567890", 20);
}

static void
test_base32_strict(void **state)
{
	uint8_t		dec[32];
	static const char *bad[] = {
		"M", "MZX", "MZXW6Y", "MY=", "MY=====", "MY=======",
		"MY======MY======", "MY======\n", "MZ", "MZXR", "MZXW7",
		"MZXW6YR", "MY1", "MY8", "M0", "MY======x", "========",
		"MZXW6YTB========", "MY============== ", " MY", "MY ======",
		"MZXW6YTB=", "MY==============",
	};
	size_t		i;
	(void)state;

	for (i = 0; i < sizeof(bad) / sizeof(bad[0]); i++)
		assert_int_equal(dec32(bad[i], dec, sizeof(dec)), -1);
	assert_int_equal(dec32("MZXW6YTBOI", dec, 5), -1);
	assert_int_equal(dec32("MZXW6YTBOI", dec, 6), 6);
}

static void
test_hex(void **state)
{
	char		enc[32];
	uint8_t		dec[16];
	size_t		i, n;
	(void)state;

	for (i = 0; i < NVEC; i++) {
		n = strlen(rfc4648[i].plain);
		assert_int_equal(hex_decode(rfc4648[i].b16,
		    strlen(rfc4648[i].b16), dec, sizeof(dec)), n);
		assert_memory_equal(dec, rfc4648[i].plain, n);
		assert_int_equal(hex_encode(rfc4648[i].plain, n, enc,
		    sizeof(enc)), 2 * n);
		assert_int_equal(strcasecmp(enc, rfc4648[i].b16), 0);
	}
	assert_int_equal(hex_encode("\x00\xff\x10", 3, enc, sizeof(enc)), 6);
	assert_string_equal(enc, "00ff10");
	assert_int_equal(hex_encode("\x00\xff\x10", 3, enc, 6), -1);
	assert_int_equal(hex_decode("aBcD", 4, dec, sizeof(dec)), 2);
	assert_memory_equal(dec, "\xab\xcd", 2);
	assert_int_equal(hex_decode("abc", 3, dec, sizeof(dec)), -1);
	assert_int_equal(hex_decode("0g", 2, dec, sizeof(dec)), -1);
	assert_int_equal(hex_decode(" 0", 2, dec, sizeof(dec)), -1);
	assert_int_equal(hex_decode("0\0", 2, dec, sizeof(dec)), -1);
	assert_int_equal(hex_decode("abcd", 4, dec, 1), -1);
}

static void
test_roundtrip_random(void **state)
{
	uint8_t		raw[70], dec[70];
	char		enc[200];
	size_t		n, i;
	int		len;
	(void)state;

	for (n = 0; n < sizeof(raw); n++) {
		for (i = 0; i < n; i++)
			raw[i] = (uint8_t)(i * 37 + n * 11 + 5);

		len = base64_encode(raw, n, enc, sizeof(enc));
		assert_true(len >= 0);
		assert_int_equal(base64_decode(enc, (size_t)len, dec,
		    sizeof(dec)), n);
		assert_memory_equal(dec, raw, n);

		len = base64url_encode(raw, n, enc, sizeof(enc));
		assert_true(len >= 0);
		assert_int_equal(base64url_decode(enc, (size_t)len, dec,
		    sizeof(dec)), n);
		assert_memory_equal(dec, raw, n);

		len = base32_encode(raw, n, enc, sizeof(enc));
		assert_true(len >= 0);
		assert_int_equal(base32_decode(enc, (size_t)len, dec,
		    sizeof(dec)), n);
		assert_memory_equal(dec, raw, n);

		len = hex_encode(raw, n, enc, sizeof(enc));
		assert_true(len >= 0);
		assert_int_equal(hex_decode(enc, (size_t)len, dec,
		    sizeof(dec)), n);
		assert_memory_equal(dec, raw, n);
	}
}

static int
fdec(const char *s, char *out, size_t outlen)
{
	return (form_decode(s, strlen(s), out, outlen));
}

static void
test_form_decode(void **state)
{
	char		out[64];
	static const char *bad[] = {
		"%", "%4", "a%", "%zz", "%4g", "%g4", "%00", "a%00b", "%%",
		"% 41", "%+41",
	};
	size_t		i;
	(void)state;

	assert_int_equal(fdec("a+b%20c%2Bd", out, sizeof(out)), 7);
	assert_string_equal(out, "a b c+d");
	assert_int_equal(fdec("%e2%82%AC", out, sizeof(out)), 3);
	assert_string_equal(out, "\xe2\x82\xac");
	assert_int_equal(fdec("", out, sizeof(out)), 0);
	assert_string_equal(out, "");
	assert_int_equal(fdec("%25", out, sizeof(out)), 1);
	assert_string_equal(out, "%");
	assert_int_equal(fdec("caf\xc3\xa9", out, sizeof(out)), 5);
	assert_string_equal(out, "caf\xc3\xa9");
	assert_int_equal(fdec("%41%42", out, sizeof(out)), 2);
	assert_string_equal(out, "AB");

	for (i = 0; i < sizeof(bad) / sizeof(bad[0]); i++)
		assert_int_equal(fdec(bad[i], out, sizeof(out)), -1);
	assert_int_equal(form_decode("a\0b", 3, out, sizeof(out)), -1);

	/* Output needs room for the NUL. */
	assert_int_equal(fdec("abc", out, 3), -1);
	assert_int_equal(fdec("abc", out, 4), 3);
	assert_int_equal(fdec("", out, 0), -1);
}

static void
test_form_encode(void **state)
{
	char		out[64], back[64];
	const char	*in = "a b&c=d/\xc3\xa9~-._+%*";
	int		len;
	(void)state;

	len = form_encode(in, strlen(in), out, sizeof(out));
	assert_string_equal(out,
	    "a%20b%26c%3Dd%2F%C3%A9~-._%2B%25%2A");
	assert_int_equal(len, strlen(out));
	assert_int_equal(fdec(out, back, sizeof(back)), strlen(in));
	assert_string_equal(back, in);

	assert_int_equal(form_encode("AZaz09", 6, out, sizeof(out)), 6);
	assert_string_equal(out, "AZaz09");
	assert_int_equal(form_encode("\x01\x7f\x80\xff", 4, out,
	    sizeof(out)), 12);
	assert_string_equal(out, "%01%7F%80%FF");
	assert_int_equal(form_encode(" ", 1, out, 3), -1);
	assert_int_equal(form_encode(" ", 1, out, 4), 3);
	assert_int_equal(form_encode("ab", 2, out, 2), -1);
	assert_int_equal(form_encode("", 0, out, 1), 0);
}

static int
fcount(const char *s, const char *name)
{
	return (form_count(s, strlen(s), name));
}

static void
test_form_count(void **state)
{
	(void)state;

	assert_int_equal(fcount("a=1&b=2&a=3", "a"), 2);
	assert_int_equal(fcount("a=1&b=2&a=3", "b"), 1);
	assert_int_equal(fcount("a=1&b=2&a=3", "c"), 0);
	assert_int_equal(fcount("", "a"), 0);
	assert_int_equal(fcount("&&a&", "a"), 1);
	assert_int_equal(fcount("a=&a", "a"), 2);
	assert_int_equal(fcount("%61=x&a=y", "a"), 2);
	assert_int_equal(fcount("sco%70e=1&scope=2", "scope"), 2);
	assert_int_equal(fcount("a+b=1&a%20b=2", "a b"), 2);
	assert_int_equal(fcount("a%zz=1&a=2", "a"), 1);
	assert_int_equal(fcount("a%00=1&a=2", "a"), 1);
	assert_int_equal(fcount("ab=1&a=2&aa=3", "a"), 1);
	assert_int_equal(form_count("a=1&a=2", 3, "a"), 1);
}

/* The one UUID reader: the service's ids and the device's challenges. */
static void
test_uuid(void **state)
{
	uint8_t		id[16];
	char		text[UUID_TEXT_LEN + 1];
	static const char *const bad[] = {
		"", "00112233-4455-6677-8899-aabbccddeef",
		"00112233-4455-6677-8899-aabbccddeeff0",
		"00112233445566778899aabbccddeeff",
		"0011223x-4455-6677-8899-aabbccddeeff",
		"00112233-4455-6677-8899_aabbccddeeff",
		"0011223-34455-6677-8899-aabbccddeeff",
		" 0112233-4455-6677-8899-aabbccddeeff",
		"00112233-4455-6677-8899-aabbccddeeff\n",
	};
	size_t		i;

	(void)state;
	assert_int_equal(uuid_decode("00112233-4455-6677-8899-AABBCCDDEEFF",
	    id), 0);
	assert_int_equal(id[0], 0x00);
	assert_int_equal(id[10], 0xaa);
	assert_int_equal(id[15], 0xff);
	uuid_encode(id, text);
	assert_string_equal(text, "00112233-4455-6677-8899-aabbccddeeff");
	assert_int_equal(uuid_decode(text, NULL), 0);
	for (i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		if (uuid_decode(bad[i], id) != -1)
			fail_msg("accepted \"%s\"", bad[i]);
	}
	assert_int_equal(uuid_decode(NULL, id), -1);
	/* A short string is refused before anything past its NUL is read. */
	text[5] = '\0';
	assert_int_equal(uuid_decode(text, id), -1);
}

static void
test_hex_digit(void **state)
{
	int	c, n = 0;

	(void)state;
	for (c = -1; c < 256; c++) {
		if (hex_digit(c) >= 0)
			n++;
	}
	assert_int_equal(n, 22);
	assert_int_equal(hex_digit('0'), 0);
	assert_int_equal(hex_digit('a'), 10);
	assert_int_equal(hex_digit('F'), 15);
	assert_int_equal(hex_digit('g'), -1);
}

static void
test_row_id_text(void **state)
{
	(void)state;
	assert_true(row_id_text("1"));
	assert_true(row_id_text("000000000000000042"));
	assert_true(row_id_text("999999999999999999"));
	assert_false(row_id_text(NULL));
	assert_false(row_id_text(""));
	assert_false(row_id_text("1000000000000000000"));	/* 19 digits */
	assert_false(row_id_text("-1"));
	assert_false(row_id_text("+1"));
	assert_false(row_id_text(" 1"));
	assert_false(row_id_text("1 "));
	assert_false(row_id_text("12a"));
	assert_false(row_id_text("0x1"));
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_base64_vectors),
		cmocka_unit_test(test_base64_alphabets),
		cmocka_unit_test(test_base64_strict),
		cmocka_unit_test(test_base64url_strict),
		cmocka_unit_test(test_base64_buffers),
		cmocka_unit_test(test_base32_vectors),
		cmocka_unit_test(test_base32_strict),
		cmocka_unit_test(test_hex),
		cmocka_unit_test(test_roundtrip_random),
		cmocka_unit_test(test_form_decode),
		cmocka_unit_test(test_form_encode),
		cmocka_unit_test(test_form_count),
		cmocka_unit_test(test_uuid),
		cmocka_unit_test(test_hex_digit),
		cmocka_unit_test(test_row_id_text),
	};

	return (cmocka_run_group_tests_name("encoding", tests, NULL, NULL));
}
