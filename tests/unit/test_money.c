/*
 * Unit tests for src/common/money.c: exact formatting (including
 * INT64_MIN), strict parsing, overflow edges, currency exponents.
 */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <stdio.h>
#include <string.h>
#include <cmocka.h>

#include "money.h"

static void
fmt(int64_t v, int e, const char *want)
{
	char	out[MONEY_TEXT_MAX];

	assert_int_equal(money_format(v, e, out, sizeof(out)), strlen(want));
	assert_string_equal(out, want);
}

static void
test_format(void **state)
{
	(void)state;

	fmt(123450, 2, "1234.50");
	fmt(-5, 2, "-0.05");
	fmt(5, 2, "0.05");
	fmt(0, 2, "0.00");
	fmt(0, 0, "0");
	fmt(-1, 0, "-1");
	fmt(100, 2, "1.00");
	fmt(-100, 2, "-1.00");
	fmt(1, 3, "0.001");
	fmt(12345, 3, "12.345");
	fmt(1234, 0, "1234");
	fmt(INT64_MAX, 2, "92233720368547758.07");
	fmt(INT64_MIN, 2, "-92233720368547758.08");
	fmt(INT64_MIN, 0, "-9223372036854775808");
	fmt(INT64_MIN, 18, "-9.223372036854775808");
	fmt(INT64_MIN + 1, 2, "-92233720368547758.07");
	fmt(1, 18, "0.000000000000000001");
	fmt(-1, 18, "-0.000000000000000001");
}

static void
test_format_errors(void **state)
{
	char	out[MONEY_TEXT_MAX];
	(void)state;

	assert_int_equal(money_format(1, -1, out, sizeof(out)), -1);
	assert_int_equal(money_format(1, 19, out, sizeof(out)), -1);
	/* "1234.50" needs 8 bytes with the NUL. */
	assert_int_equal(money_format(123450, 2, out, 7), -1);
	assert_int_equal(money_format(123450, 2, out, 8), 7);
	assert_int_equal(money_format(-5, 2, out, 5), -1);
	assert_int_equal(money_format(-5, 2, out, 6), 5);
	assert_int_equal(money_format(0, 0, out, 0), -1);
	assert_int_equal(money_format(0, 0, NULL, 8), -1);
	assert_int_equal(money_format(INT64_MIN, 18, out, sizeof(out)), 21);
}

static void
parse_ok(const char *text, int e, int64_t want)
{
	int64_t	v = 42;

	if (money_parse(text, e, &v) != 0)
		fail_msg("refused \"%s\" (exponent %d)", text, e);
	assert_int_equal(v, want);
}

static void
test_parse(void **state)
{
	(void)state;

	parse_ok("1234.5", 2, 123450);
	parse_ok("1234.50", 2, 123450);
	parse_ok("-0.05", 2, -5);
	parse_ok("0", 2, 0);
	parse_ok("0", 0, 0);
	parse_ok("-0", 2, 0);
	parse_ok("-0.00", 2, 0);
	parse_ok("7", 2, 700);
	parse_ok("007.10", 2, 710);
	parse_ok("1234", 0, 1234);
	parse_ok("1.234", 3, 1234);
	parse_ok("1.2", 3, 1200);
	parse_ok("92233720368547758.07", 2, INT64_MAX);
	parse_ok("-92233720368547758.08", 2, INT64_MIN);
	parse_ok("9223372036854775807", 0, INT64_MAX);
	parse_ok("-9223372036854775808", 0, INT64_MIN);
	parse_ok("-9.223372036854775808", 18, INT64_MIN);
	parse_ok("0.000000000000000001", 18, 1);
	parse_ok("00000000000000000000000000000001", 0, 1);
}

static void
test_parse_reject(void **state)
{
	static const char *bad2[] = {
		"", "-", ".", "-.", ".5", "-.5", "5.", "-5.", "1.234",
		"1.2.3", "+1", "+1.00", " 1", "1 ", "1 .00", "1. 00", "1e3",
		"1E3", "1.0e2", "0x10", "1,00", "1,000.00", "--1", "-+1",
		"\xd9\xa1", "1\n", "12a", "inf", "NaN", "1..0", "- 1",
		"92233720368547758.08", "-92233720368547758.09",
		"100000000000000000000", "99999999999999999999999.99",
	};
	size_t		i;
	int64_t		v;
	(void)state;

	for (i = 0; i < sizeof(bad2) / sizeof(bad2[0]); i++) {
		v = 42;
		if (money_parse(bad2[i], 2, &v) != -1)
			fail_msg("accepted \"%s\"", bad2[i]);
		assert_int_equal(v, 42);
	}
	/* Any decimal point with exponent 0. */
	assert_int_equal(money_parse("1.0", 0, &v), -1);
	assert_int_equal(money_parse("1.", 0, &v), -1);
	assert_int_equal(money_parse("1.0000", 3, &v), -1);
	assert_int_equal(money_parse("9223372036854775808", 0, &v), -1);
	assert_int_equal(money_parse("-9223372036854775809", 0, &v), -1);
	assert_int_equal(money_parse("1", -1, &v), -1);
	assert_int_equal(money_parse("1", 19, &v), -1);
	assert_int_equal(money_parse(NULL, 2, &v), -1);
	assert_int_equal(money_parse("1", 2, NULL), -1);
}

static void
test_roundtrip(void **state)
{
	static const int64_t	values[] = {
		0, 1, -1, 9, 10, 99, 100, 101, 123456789, -987654321,
		INT64_MAX, INT64_MIN, INT64_MAX - 1, INT64_MIN + 1,
	};
	char			out[MONEY_TEXT_MAX];
	size_t			i;
	int64_t			v;
	int			e;
	(void)state;

	for (e = 0; e <= MONEY_EXPONENT_MAX; e++) {
		for (i = 0; i < sizeof(values) / sizeof(values[0]); i++) {
			assert_true(money_format(values[i], e, out,
			    sizeof(out)) > 0);
			assert_int_equal(money_parse(out, e, &v), 0);
			assert_int_equal(v, values[i]);
		}
	}
}

static void
test_currency(void **state)
{
	static const char *two[] = { "EUR", "USD", "GBP", "CHF", "SEK",
	    "DKK", "PLN", "CZK", "HUF", "NOK" };
	static const char *bad[] = { "", "EU", "EURO", "eur", "Eur", "EU1",
	    "XXX", "ZZZ", " EUR", "EUR ", "\xc3\x89UR" };
	size_t		i;
	(void)state;

	for (i = 0; i < sizeof(two) / sizeof(two[0]); i++)
		assert_int_equal(money_currency_exponent(two[i]), 2);
	assert_int_equal(money_currency_exponent("JPY"), 0);
	assert_int_equal(money_currency_exponent("KWD"), 3);
	assert_int_equal(money_currency_exponent("BHD"), 3);
	for (i = 0; i < sizeof(bad) / sizeof(bad[0]); i++)
		assert_int_equal(money_currency_exponent(bad[i]), -1);
	assert_int_equal(money_currency_exponent(NULL), -1);
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_format),
		cmocka_unit_test(test_format_errors),
		cmocka_unit_test(test_parse),
		cmocka_unit_test(test_parse_reject),
		cmocka_unit_test(test_roundtrip),
		cmocka_unit_test(test_currency),
	};

	return (cmocka_run_group_tests_name("money", tests, NULL, NULL));
}
