/*
 * Unit tests for src/common/httpdate.c: the RFC 9110 example, known
 * instants, calendar edges, strictness, and a sweep against gmtime_r.
 */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <stdio.h>
#include <string.h>
#include <time.h>
#include <cmocka.h>

#include "httpdate.h"

struct instant {
	const char	*text;
	int64_t		 epoch;
};

static const struct instant	known[] = {
	{ "Sun, 06 Nov 1994 08:49:37 GMT", 784111777 },	/* RFC 9110 */
	{ "Thu, 01 Jan 1970 00:00:00 GMT", 0 },
	{ "Wed, 31 Dec 1969 23:59:59 GMT", -1 },
	{ "Sat, 01 Jan 2000 00:00:00 GMT", 946684800 },
	{ "Tue, 29 Feb 2000 12:00:00 GMT", 951825600 },
	{ "Thu, 29 Feb 2024 23:59:59 GMT", 1709251199 },
	{ "Tue, 19 Jan 2038 03:14:08 GMT", 2147483648LL },
	{ "Fri, 13 Feb 2009 23:31:30 GMT", 1234567890 },
	{ "Mon, 01 Jan 0001 00:00:00 GMT", -62135596800LL },
	{ "Sat, 01 Jan 0000 00:00:00 GMT", -62167219200LL },
	{ "Fri, 31 Dec 9999 23:59:59 GMT", 253402300799LL },
};

static void
test_known(void **state)
{
	char		out[30];
	int64_t		epoch;
	size_t		i;
	(void)state;

	for (i = 0; i < sizeof(known) / sizeof(known[0]); i++) {
		epoch = 0x5a5a;
		assert_int_equal(httpdate_parse(known[i].text, &epoch), 0);
		assert_int_equal(epoch, known[i].epoch);
		assert_int_equal(httpdate_format(known[i].epoch, out), 0);
		assert_string_equal(out, known[i].text);
	}
}

static void
test_reject(void **state)
{
	static const char *bad[] = {
		"",
		"Sun, 06 Nov 1994 08:49:37 GMT ",
		" Sun, 06 Nov 1994 08:49:37 GMT",
		"Sun, 06 Nov 1994 08:49:37 UTC",
		"Sun, 06 Nov 1994 08:49:37 gmt",
		"sun, 06 Nov 1994 08:49:37 GMT",
		"SUN, 06 Nov 1994 08:49:37 GMT",
		"Sun, 06 nov 1994 08:49:37 GMT",
		"Mon, 06 Nov 1994 08:49:37 GMT",	/* wrong weekday */
		"Sun, 6 Nov 1994 08:49:37 GMT",
		"Sun,  6 Nov 1994 08:49:37 GMT",
		"Sun 06 Nov 1994 08:49:37 GMT",
		"Sun, 06-Nov-1994 08:49:37 GMT",
		"Sunday, 06-Nov-94 08:49:37 GMT",	/* RFC 850 */
		"Sun Nov  6 08:49:37 1994",		/* asctime */
		"Sun, 06 Nov 1994 8:49:37 GMT",
		"Sun, 06 Nov 1994 08:49 GMT",
		"Sun, 06 Nov 94 08:49:37 GMT",
		"Sun, 06 Nov 1994 24:00:00 GMT",
		"Sun, 06 Nov 1994 08:60:00 GMT",
		"Sun, 06 Nov 1994 08:49:60 GMT",
		"Sun, 00 Nov 1994 08:49:37 GMT",
		"Thu, 31 Nov 1994 08:49:37 GMT",
		"Thu, 29 Feb 2001 00:00:00 GMT",
		"Tue, 29 Feb 1900 00:00:00 GMT",
		"Sun, 06 Nov 1994 08:49:37 GM",
		"Sun, 06 Nov 1994 08:49:37 GMTX",
		"Sun, 0x Nov 1994 08:49:37 GMT",
		"Sun, 06 Nov 19a4 08:49:37 GMT",
		"Sun, 06 Nov -994 08:49:37 GMT",
		"Sun, 06 Nov 1994 08:49:+7 GMT",
		"Sun, 06 Xyz 1994 08:49:37 GMT",
		"Sun, 06 Nov 1994 08.49.37 GMT",
		"Sun, 06 Nov 1994\t08:49:37 GMT",
	};
	size_t		i;
	int64_t		epoch;
	(void)state;

	for (i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		epoch = 77;
		if (httpdate_parse(bad[i], &epoch) != -1)
			fail_msg("accepted \"%s\"", bad[i]);
		assert_int_equal(epoch, 77);
	}
	assert_int_equal(httpdate_parse(NULL, &epoch), -1);
	assert_int_equal(httpdate_parse(known[0].text, NULL), -1);
	/* An embedded NUL shortens the string. */
	assert_int_equal(httpdate_parse("Sun, 06 Nov 1994 08:49:37\0GMT",
	    &epoch), -1);
}

static void
test_format_range(void **state)
{
	char		out[30];
	(void)state;

	assert_int_equal(httpdate_format(-62167219201LL, out), -1);
	assert_int_equal(httpdate_format(253402300800LL, out), -1);
	assert_int_equal(httpdate_format(INT64_MIN, out), -1);
	assert_int_equal(httpdate_format(INT64_MAX, out), -1);
	assert_int_equal(httpdate_format(0, NULL), -1);
	assert_int_equal(httpdate_format(0, out), 0);
	assert_int_equal(strlen(out), HTTPDATE_LEN);
}

static void
test_sweep_gmtime(void **state)
{
	static const char	wd[7][4] = { "Sun", "Mon", "Tue", "Wed", "Thu",
	    "Fri", "Sat" };
	static const char	mo[12][4] = { "Jan", "Feb", "Mar", "Apr",
	    "May", "Jun", "Jul", "Aug", "Sep", "Oct", "Nov", "Dec" };
	char			out[30], want[64];
	struct tm		tm;
	time_t			t;
	int64_t			epoch, back;
	(void)state;

	/* Every ~1.3 days from 1900 to 2200, checked against libc. */
	for (epoch = -2208988800LL; epoch < 7258118400LL; epoch += 113173) {
		t = (time_t)epoch;
		assert_non_null(gmtime_r(&t, &tm));
		snprintf(want, sizeof(want),
		    "%s, %02d %s %04d %02d:%02d:%02d GMT", wd[tm.tm_wday],
		    tm.tm_mday, mo[tm.tm_mon], tm.tm_year + 1900, tm.tm_hour,
		    tm.tm_min, tm.tm_sec);
		assert_int_equal(httpdate_format(epoch, out), 0);
		assert_string_equal(out, want);
		assert_int_equal(httpdate_parse(out, &back), 0);
		assert_int_equal(back, epoch);
	}
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_known),
		cmocka_unit_test(test_reject),
		cmocka_unit_test(test_format_range),
		cmocka_unit_test(test_sweep_gmtime),
	};

	return (cmocka_run_group_tests_name("httpdate", tests, NULL, NULL));
}
