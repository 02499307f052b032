/*
 * The device's display table (devcur.c, device/PROTOCOL.md 5.3.1) is the
 * part of the service's one ISO 4217 table (money.c) marked for devices:
 * a device displays fewer currencies than the service knows. What must
 * never happen is that they disagree on a code both know (the service
 * would parse an amount with one exponent and the device show it with
 * another: a 100x misdisplay) or that the device displays a code the
 * service does not know. Every three-letter code is checked.
 */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <stdio.h>
#include <string.h>
#include <cmocka.h>

#include "devcur.h"
#include "money.h"

static void
test_every_displayable_code_agrees(void **state)
{
	char	code[4];
	int	a, b, c, dev, svc, shown;

	(void)state;
	shown = 0;
	code[3] = '\0';
	for (a = 'A'; a <= 'Z'; a++)
	for (b = 'A'; b <= 'Z'; b++)
	for (c = 'A'; c <= 'Z'; c++) {
		code[0] = (char)a;
		code[1] = (char)b;
		code[2] = (char)c;
		dev = devcur_minor_units(code);
		assert_int_equal(devcur_displayable(code), dev >= 0);
		if (dev < 0)
			continue;
		shown++;
		svc = money_currency_exponent(code);
		if (svc != dev)
			fail_msg("%s: device shows %d decimals, service "
			    "parses %d", code, dev, svc);
	}
	/* The protocol's table has 23 codes; a shrunken table is a bug. */
	assert_int_equal(shown, 23);
}

static void
test_eur_is_displayable(void **state)
{
	(void)state;
	/* Both SEPA products are EUR only: it must be on every device. */
	assert_true(devcur_displayable("EUR"));
	assert_int_equal(money_currency_exponent("EUR"), 2);
}

int
main(void)
{
	const struct CMUnitTest	tests[] = {
		cmocka_unit_test(test_every_displayable_code_agrees),
		cmocka_unit_test(test_eur_is_displayable),
	};

	return (cmocka_run_group_tests(tests, NULL, NULL));
}
