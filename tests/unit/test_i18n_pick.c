/*
 * Unit tests for src/web/i18n_pick.c: explicit choice, RFC 9110
 * Accept-Language q-values, ranges, wildcard, ties and garbage.
 */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <string.h>
#include <cmocka.h>

#include "i18n_pick.h"

#define PICK(al, ex, want)	assert_string_equal(i18n_pick(al, ex), want)

static void
test_explicit(void **state)
{
	(void)state;

	PICK("de", "nl", "nl");
	PICK("de", "NL", "nl");
	PICK("nl", "en", "en");
	PICK(NULL, "de", "de");
	/* Unsupported or malformed choices fall back to the header. */
	PICK("de", "fr", "de");
	PICK("de", "", "de");
	PICK("de", "de-DE", "de");
	PICK("nl", "d", "nl");
	PICK("nl", "dee", "nl");
	PICK("nl", NULL, "nl");
}

static void
test_defaults(void **state)
{
	(void)state;

	PICK(NULL, NULL, "en");
	PICK("", NULL, "en");
	PICK("fr, es;q=0.9", NULL, "en");
	PICK("de;q=0, nl;q=0", NULL, "en");
}

static void
test_qvalues(void **state)
{
	(void)state;

	PICK("de", NULL, "de");
	PICK("nl;q=0.8, de;q=0.9", NULL, "de");
	PICK("en;q=0.1, nl;q=0.8", NULL, "nl");
	PICK("fr, nl;q=0.8, de;q=0.7", NULL, "nl");
	PICK("de-DE,de;q=0.9,en-US;q=0.8,en;q=0.7", NULL, "de");
	PICK("en-GB;q=0.5, nl-BE;q=0.501", NULL, "nl");
	PICK("nl;q=0.999, de;q=1", NULL, "de");
	PICK("nl;q=1.000, de;q=0.999", NULL, "nl");
	PICK("nl;Q=0.2, de;q=0.1", NULL, "nl");
	/* Omitted q is 1. */
	PICK("nl;q=0.9, de", NULL, "de");
	/* The best q among ranges for one language counts. */
	PICK("de-AT;q=0.1, nl;q=0.5, de-DE;q=0.9", NULL, "de");
	/* OWS around separators and parameters. */
	PICK("  de ; q=0.2 ,\tnl\t;\tq=0.3  ", NULL, "nl");
	/* Other parameters are ignored. */
	PICK("de;x=1;q=0.2, nl;q=0.3", NULL, "nl");
}

static void
test_ties(void **state)
{
	(void)state;

	PICK("nl, de", NULL, "nl");
	PICK("de, nl", NULL, "de");
	PICK("de;q=0.5, en;q=0.5", NULL, "de");
	PICK("nl-NL, de-DE", NULL, "nl");
}

static void
test_wildcard(void **state)
{
	(void)state;

	PICK("*", NULL, "en");
	PICK("fr, *;q=0.5", NULL, "en");
	PICK("*;q=0.5, nl", NULL, "nl");
	/* "*" covers only languages not named: en is excluded by q=0. */
	PICK("en;q=0, *;q=0.1", NULL, "de");
	PICK("en;q=0, de;q=0, *", NULL, "nl");
	PICK("*;q=0", NULL, "en");
	PICK("de;q=0.1, *;q=0.5", NULL, "en");
}

static void
test_garbage(void **state)
{
	static const char *bad[] = {
		",,,", ";", ";q=1", "de;q=", "de;q=2", "de;q=1.5",
		"de;q=0.5555", "de;q=-1", "de;q=.5", "de;q=0,5", "de;q=abc",
		"de_DE", "-de", "de-", "de--DE", "d3", "abcdefghi",
		"de-abcdefghi", "\xff\xfe", "de q=0.5", "de;q=0.5x",
		"de;;q=0.4", "**", "*-de", "de;q= 0.5",
	};
	size_t		i;
	(void)state;

	/* Each malformed element is skipped; the default remains. */
	for (i = 0; i < sizeof(bad) / sizeof(bad[0]); i++)
		PICK(bad[i], NULL, "en");
	/* A malformed element does not spoil the rest. */
	PICK("de;q=2, nl;q=0.3", NULL, "nl");
	PICK("de_DE, nl", NULL, "nl");
	PICK(",,nl,,", NULL, "nl");
	PICK("nl;q=0.0001, de;q=0.001", NULL, "de");
	/* Accepted edge forms. */
	PICK("de;q=0., nl;q=0.", NULL, "en");
	PICK("de;q=1., nl;q=0.3", NULL, "de");
	PICK("DE", NULL, "de");
	PICK("nl-x-private-1", NULL, "nl");
}

static void
test_long_header(void **state)
{
	char		buf[64 * 1024];
	size_t		i;
	(void)state;

	for (i = 0; i + 6 < sizeof(buf); i += 6)
		memcpy(buf + i, "fr-FR,", 6);
	memcpy(buf + i - 6, "nl,de\0", 6);
	PICK(buf, NULL, "nl");
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_explicit),
		cmocka_unit_test(test_defaults),
		cmocka_unit_test(test_qvalues),
		cmocka_unit_test(test_ties),
		cmocka_unit_test(test_wildcard),
		cmocka_unit_test(test_garbage),
		cmocka_unit_test(test_long_header),
	};

	return (cmocka_run_group_tests_name("i18n_pick", tests, NULL, NULL));
}
