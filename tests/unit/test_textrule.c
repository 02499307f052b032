/*
 * The rule for every text people read (src/common/textrule.c): the
 * characters a payee name may hold, NFC, spacing, each field's length;
 * the authenticator's display rules are the payee name's alone.
 */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <string.h>

#include <cmocka.h>

#include "devtext.h"
#include "textrule.h"

static int
check(const char *in, size_t max, char *out, size_t outlen)
{
	size_t	n;

	return (textrule_check(in, strlen(in), max, out, outlen, &n));
}

static void
test_refused_characters(void **state)
{
	char		 out[64];
	const char	*bad[] = {
		"Invoice \xe2\x80\xae" "42",	/* U+202E right-to-left override */
		"Invoice \xe2\x81\xa6" "42",	/* U+2066 left-to-right isolate */
		"Invoice\xe2\x80\x8b" "42",	/* U+200B zero-width space */
		"Invoice\xe2\x80\x8d" "42",	/* U+200D zero-width joiner */
		"\xef\xbb\xbfInvoice",		/* U+FEFF byte-order mark */
		"Invoice\xc2\xa0" "42",		/* no-break space */
		"Invoice\t42", "Invoice\n42", "Invoice\x7f",
		"Invoice\xc2\x85",		/* C1 control */
		"\xd0\xa1\xd1\x87\xd0\xb5\xd1\x82",	/* Cyrillic */
		"x\xcc\x88\xcc\x88",		/* two marks */
	};
	size_t		 i;

	(void)state;
	for (i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		assert_int_equal(check(bad[i], 140, out, sizeof(out)),
		    DEVTEXT_CHAR);
		assert_string_equal(out, "");
	}
	assert_int_equal(check("Invoice \xff", 140, out, sizeof(out)),
	    DEVTEXT_UTF8);
	assert_int_equal(check("Invoice  42", 140, out, sizeof(out)),
	    DEVTEXT_SPACE);
	assert_int_equal(check(" Invoice", 140, out, sizeof(out)),
	    DEVTEXT_SPACE);
}

static void
test_nfc_and_length(void **state)
{
	char	in[3 * 141 + 1], out[2 * 140 + 1], why[TEXTRULE_ERROR_MAX];
	size_t	i, n;

	(void)state;
	assert_int_equal(check("Rene\xcc\x81 12345, 9.99 IBAN", 140, out,
	    sizeof(out)), DEVTEXT_OK);
	assert_string_equal(out, "Ren\xc3\xa9 12345, 9.99 IBAN");
	/* 140 characters, whatever their bytes; NFD counts after NFC. */
	for (i = 0; i < 140; i++)
		memcpy(in + 3 * i, "u\xcc\x88", 3);
	in[3 * 140] = '\0';
	assert_int_equal(textrule_check(in, strlen(in), 140, out, sizeof(out),
	    &n), DEVTEXT_OK);
	assert_int_equal(n, 280);
	memcpy(in + 3 * 140, "u", 2);
	assert_int_equal(textrule_check(in, strlen(in), 140, out, sizeof(out),
	    &n), DEVTEXT_LENGTH);
	assert_int_equal(check("", 140, out, sizeof(out)), DEVTEXT_LENGTH);
	textrule_error(DEVTEXT_LENGTH, 140, why, sizeof(why));
	assert_string_equal(why, "must be 1 to 140 characters");
	textrule_error(DEVTEXT_CHAR, 140, why, sizeof(why));
	assert_string_equal(why, "contains a character that is not allowed");
}

/* The payee name is this rule with the display rules on top. */
static void
test_same_rule_as_payee_names(void **state)
{
	char	out[DEVTEXT_PAYEE_MAX + 1], out2[2 * 70 + 1];
	size_t	n;

	(void)state;
	assert_int_equal(devtext_payee_normalize("Evil\xe2\x80\xae" "Corp", 11,
	    out, sizeof(out), &n), DEVTEXT_CHAR);
	assert_int_equal(check("Evil\xe2\x80\xae" "Corp", 70, out2,
	    sizeof(out2)), DEVTEXT_CHAR);
	assert_int_equal(devtext_payee_normalize("Muster IBAN", 11, out,
	    sizeof(out), &n), DEVTEXT_LABEL);
	assert_int_equal(check("Muster IBAN", 70, out2, sizeof(out2)),
	    DEVTEXT_OK);
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_refused_characters),
		cmocka_unit_test(test_nfc_and_length),
		cmocka_unit_test(test_same_rule_as_payee_names),
	};

	return (cmocka_run_group_tests(tests, NULL, NULL));
}
