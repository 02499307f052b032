/*
 * Unit tests for src/common/totp.c: RFC 4226 Appendix D and RFC 6238
 * Appendix B (SHA-1) vectors, drift window, replay refusal, malformed
 * codes.
 */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <stdio.h>
#include <string.h>
#include <cmocka.h>

#include "totp.h"

static const uint8_t	seed[] = "12345678901234567890";
#define SEEDLEN		20

static void
test_rfc4226_appendix_d(void **state)
{
	static const uint32_t	expect[10] = {
		755224, 287082, 359152, 969429, 338314,
		254676, 287922, 162583, 399871, 520489
	};
	uint64_t		c;
	(void)state;

	for (c = 0; c < 10; c++)
		assert_int_equal(totp_hotp(seed, SEEDLEN, c, 6), expect[c]);
}

struct rfc6238 {
	int64_t		time;
	uint32_t	totp8;
};

/* RFC 6238 Appendix B, SHA-1 rows. */
static const struct rfc6238	rfc6238_sha1[] = {
	{ 59, 94287082 },
	{ 1111111109, 7081804 },
	{ 1111111111, 14050471 },
	{ 1234567890, 89005924 },
	{ 2000000000, 69279037 },
	{ 20000000000LL, 65353130 },
};

static void
test_rfc6238_appendix_b(void **state)
{
	char		code[8];
	int64_t		matched;
	size_t		i;
	uint64_t	step;
	(void)state;

	for (i = 0; i < sizeof(rfc6238_sha1) / sizeof(rfc6238_sha1[0]); i++) {
		step = (uint64_t)totp_step(rfc6238_sha1[i].time);
		assert_int_equal(totp_hotp(seed, SEEDLEN, step, 8),
		    rfc6238_sha1[i].totp8);
		/* The 6-digit code is the last six of the eight digits. */
		assert_int_equal(totp_hotp(seed, SEEDLEN, step, 6),
		    rfc6238_sha1[i].totp8 % 1000000);

		snprintf(code, sizeof(code), "%06u",
		    (unsigned)(rfc6238_sha1[i].totp8 % 1000000));
		matched = -7;
		assert_int_equal(totp_verify(seed, SEEDLEN, code,
		    rfc6238_sha1[i].time, -1, &matched), 1);
		assert_int_equal(matched, (int64_t)step);
	}
}

static void
test_leading_zero(void **state)
{
	int64_t		matched;
	(void)state;

	/* 1111111109 -> 07081804 -> "081804": leading zero must match. */
	assert_int_equal(totp_verify(seed, SEEDLEN, "081804", 1111111109, -1,
	    &matched), 1);
	assert_int_equal(totp_verify(seed, SEEDLEN, "81804", 1111111109, -1,
	    &matched), 0);
}

static void
test_hotp_digits(void **state)
{
	(void)state;

	assert_int_equal(totp_hotp(seed, SEEDLEN, 0, 0), TOTP_ERROR);
	assert_int_equal(totp_hotp(seed, SEEDLEN, 0, 10), TOTP_ERROR);
	assert_int_equal(totp_hotp(seed, SEEDLEN, 0, -1), TOTP_ERROR);
	assert_int_equal(totp_hotp(seed, SEEDLEN, 1, 1), 2);
	/* Counter 1: truncated value 1094287082 (RFC 4226 Appendix D). */
	assert_int_equal(totp_hotp(seed, SEEDLEN, 1, 9), 94287082);
}

static void
code_for(int64_t step, char out[7])
{
	snprintf(out, 7, "%06u",
	    (unsigned)totp_hotp(seed, SEEDLEN, (uint64_t)step, 6));
}

static void
test_drift_window(void **state)
{
	char		code[7];
	int64_t		matched, now = 1234567890, step = now / 30;
	(void)state;

	/* The code of the previous, current and next step are accepted. */
	code_for(step - 1, code);
	assert_int_equal(totp_verify(seed, SEEDLEN, code, now, -1,
	    &matched), 1);
	assert_int_equal(matched, step - 1);
	code_for(step, code);
	assert_int_equal(totp_verify(seed, SEEDLEN, code, now, -1,
	    &matched), 1);
	assert_int_equal(matched, step);
	code_for(step + 1, code);
	assert_int_equal(totp_verify(seed, SEEDLEN, code, now, -1,
	    &matched), 1);
	assert_int_equal(matched, step + 1);

	/* Two steps away is refused. */
	code_for(step - 2, code);
	assert_int_equal(totp_verify(seed, SEEDLEN, code, now, -1,
	    &matched), 0);
	code_for(step + 2, code);
	assert_int_equal(totp_verify(seed, SEEDLEN, code, now, -1,
	    &matched), 0);

	/* Edges of the window inside a step: first and last second. */
	code_for(step - 1, code);
	assert_int_equal(totp_verify(seed, SEEDLEN, code, step * 30, -1,
	    &matched), 1);
	assert_int_equal(totp_verify(seed, SEEDLEN, code, step * 30 + 29, -1,
	    &matched), 1);
	assert_int_equal(totp_verify(seed, SEEDLEN, code, step * 30 + 30, -1,
	    &matched), 0);
	code_for(step + 1, code);
	assert_int_equal(totp_verify(seed, SEEDLEN, code, step * 30 - 1, -1,
	    &matched), 0);
	assert_int_equal(totp_verify(seed, SEEDLEN, code, step * 30, -1,
	    &matched), 1);
}

static void
test_reuse_refused(void **state)
{
	char		code[7];
	int64_t		matched = -1, now = 1700000000, step = now / 30;
	int64_t		last;
	(void)state;

	code_for(step, code);
	assert_int_equal(totp_verify(seed, SEEDLEN, code, now, -1,
	    &matched), 1);
	last = matched;
	/* The same code again, same or later time: refused. */
	assert_int_equal(totp_verify(seed, SEEDLEN, code, now, last,
	    &matched), 0);
	assert_int_equal(totp_verify(seed, SEEDLEN, code, now + 29, last,
	    &matched), 0);
	/* An older code after a newer one was used: refused. */
	code_for(step - 1, code);
	assert_int_equal(totp_verify(seed, SEEDLEN, code, now, last,
	    &matched), 0);
	/* The next step's code is still fine. */
	code_for(step + 1, code);
	matched = 0;
	assert_int_equal(totp_verify(seed, SEEDLEN, code, now, last,
	    &matched), 1);
	assert_int_equal(matched, step + 1);
	/* A refused verify leaves *matched_step alone. */
	matched = 42;
	assert_int_equal(totp_verify(seed, SEEDLEN, code, now, step + 1,
	    &matched), 0);
	assert_int_equal(matched, 42);
}

static void
test_malformed(void **state)
{
	char		code[7], longer[9];
	int64_t		matched, now = 1234567890;
	static const char *bad[] = {
		"12345", "1234567", "12a456", "", " 123456", "123456 ",
		"-12345", "+12345", "12 456", "１２３４５６",
	};
	size_t		i;
	(void)state;

	for (i = 0; i < sizeof(bad) / sizeof(bad[0]); i++)
		assert_int_equal(totp_verify(seed, SEEDLEN, bad[i], now, -1,
		    &matched), 0);
	assert_int_equal(totp_verify(seed, SEEDLEN, NULL, now, -1,
	    &matched), 0);

	/* The right code with anything after it is still wrong. */
	code_for(now / 30, code);
	snprintf(longer, sizeof(longer), "%s0", code);
	assert_int_equal(totp_verify(seed, SEEDLEN, longer, now, -1,
	    &matched), 0);
	assert_int_equal(totp_verify(seed, SEEDLEN, code, now, -1, NULL), 0);
	/* Wrong key. */
	assert_int_equal(totp_verify((const uint8_t *)"12345678901234567891",
	    SEEDLEN, code, now, -1, &matched), 0);
}

static void
test_early_times(void **state)
{
	char		code[7];
	int64_t		matched;
	(void)state;

	/* At step 0 there is no step -1; negative times never match. */
	code_for(0, code);
	assert_int_equal(totp_verify(seed, SEEDLEN, code, 0, -1, &matched), 1);
	assert_int_equal(matched, 0);
	assert_int_equal(totp_verify(seed, SEEDLEN, code, -1, -1, &matched),
	    0);
	assert_int_equal(totp_step(-1), -1);
	assert_int_equal(totp_step(29), 0);
	assert_int_equal(totp_step(30), 1);
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_rfc4226_appendix_d),
		cmocka_unit_test(test_rfc6238_appendix_b),
		cmocka_unit_test(test_leading_zero),
		cmocka_unit_test(test_hotp_digits),
		cmocka_unit_test(test_drift_window),
		cmocka_unit_test(test_reuse_refused),
		cmocka_unit_test(test_malformed),
		cmocka_unit_test(test_early_times),
	};

	return (cmocka_run_group_tests_name("totp", tests, NULL, NULL));
}
