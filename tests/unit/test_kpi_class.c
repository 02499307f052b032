/*
 * Unit tests for src/metrics/kpi_class.c: the KPI class of each kind of
 * path (both surfaces, the PSU pages before OAuth, exact paths), and
 * whose fault an answer was in each class.
 */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <string.h>
#include <cmocka.h>

#include "metrics/kpi_class.h"

struct path_class {
	const char	*path;
	enum kpi_class	 class;
};

static const struct path_class	paths[] = {
	{ "/auth/oauth/authorize", KPI_OAUTH },
	{ "/auth/oauth/token", KPI_OAUTH },
	{ "/auth/oauth/revoke", KPI_OAUTH },
	{ "/.well-known/oauth-authorization-server", KPI_OAUTH },
	{ "/.well-known/oauth-authorization-server/x", KPI_NONE },
	/* the PSU's consent page, not the TPP's OAuth */
	{ "/auth/oauth/consent", KPI_PSU_PAGES },
	{ "/auth/oauth/consentx", KPI_OAUTH },
	{ "/auth/login", KPI_PSU_PAGES },
	{ "/auth/login/otp", KPI_PSU_PAGES },
	{ "/auth/consents", KPI_PSU_PAGES },
	{ "/auth/consents/revoke", KPI_PSU_PAGES },
	{ "/auth/consents/abc/authorisations/def", KPI_PSU_PAGES },
	{ "/auth/payments", KPI_PSU_PAGES },
	{ "/auth/payments/p1/authorise", KPI_PSU_PAGES },
	{ "/auth/v1/psd2/account/account-list", KPI_AIS },
	{ "/auth/v1/psd2/account/a1/transactions", KPI_AIS },
	{ "/auth/v1/psd2/consents/current", KPI_AIS },
	{ "/auth/v1/psd2/payments/sepa-credit-transfers", KPI_PIS },
	{ "/auth/v1/psd2/funds-confirmations", KPI_FUNDS },
	{ "/auth/v1/psd2/funds-confirmations/x", KPI_NONE },
	{ "/auth/v1/psd2/openapi.json", KPI_NONE },
	{ "/xs2a/v1/consents", KPI_AIS },
	{ "/xs2a/v1/consents/c1/status", KPI_AIS },
	{ "/xs2a/v1/accounts", KPI_AIS },
	{ "/xs2a/v1/accounts/a1/balances", KPI_AIS },
	{ "/xs2a/v1/card-accounts", KPI_AIS },
	{ "/xs2a/v1/payments/sepa-credit-transfers", KPI_PIS },
	{ "/xs2a/v1/periodic-payments/sepa-credit-transfers", KPI_PIS },
	{ "/xs2a/v1/bulk-payments/sepa-credit-transfers", KPI_PIS },
	{ "/xs2a/v1/signing-baskets", KPI_PIS },
	{ "/xs2a/v1/funds-confirmations", KPI_FUNDS },
	{ "/xs2a/v1/unknown", KPI_NONE },
	{ "/health", KPI_NONE },
	{ "/assets/style.css", KPI_NONE },
	{ "/psd2/statistics", KPI_NONE },
	{ "/staff/home", KPI_NONE },
	{ "", KPI_NONE },
};

static void
test_classes(void **state)
{
	size_t	i;

	(void)state;
	for (i = 0; i < sizeof(paths) / sizeof(paths[0]); i++) {
		if (kpi_class_of(paths[i].path) != paths[i].class)
			fail_msg("%s: class %d, want %d", paths[i].path,
			    kpi_class_of(paths[i].path), paths[i].class);
	}
	assert_int_equal(kpi_class_of(NULL), KPI_NONE);
}

static void
test_causes(void **state)
{
	enum kpi_class	c;

	(void)state;
	for (c = KPI_OAUTH; c < KPI_CLASSES; c++) {
		assert_int_equal(kpi_cause_of(c, 200), KPI_CAUSE_NONE);
		assert_int_equal(kpi_cause_of(c, 204), KPI_CAUSE_NONE);
		assert_int_equal(kpi_cause_of(c, 302), KPI_CAUSE_NONE);
		assert_int_equal(kpi_cause_of(c, 399), KPI_CAUSE_NONE);
		assert_int_equal(kpi_cause_of(c, 500), KPI_CAUSE_BANK);
		assert_int_equal(kpi_cause_of(c, 503), KPI_CAUSE_BANK);
		assert_int_equal(kpi_cause_of(c, 400), c == KPI_PSU_PAGES ?
		    KPI_CAUSE_PSU : KPI_CAUSE_TPP);
		assert_int_equal(kpi_cause_of(c, 429), c == KPI_PSU_PAGES ?
		    KPI_CAUSE_PSU : KPI_CAUSE_TPP);
		assert_int_equal(kpi_cause_of(c, 499), c == KPI_PSU_PAGES ?
		    KPI_CAUSE_PSU : KPI_CAUSE_TPP);
	}
}

static void
test_names(void **state)
{
	(void)state;
	assert_string_equal(kpi_class_name(KPI_OAUTH), "oauth");
	assert_string_equal(kpi_class_name(KPI_AIS), "ais");
	assert_string_equal(kpi_class_name(KPI_PIS), "pis");
	assert_string_equal(kpi_class_name(KPI_FUNDS), "funds");
	assert_string_equal(kpi_class_name(KPI_PSU_PAGES), "psu_pages");
	assert_string_equal(kpi_class_name(KPI_NONE), "none");
	assert_string_equal(kpi_class_name((enum kpi_class)99), "none");
	assert_string_equal(kpi_cause_name(KPI_CAUSE_BANK), "bank");
	assert_string_equal(kpi_cause_name(KPI_CAUSE_TPP), "tpp");
	assert_string_equal(kpi_cause_name(KPI_CAUSE_PSU), "psu");
	assert_string_equal(kpi_cause_name((enum kpi_cause)99), "none");
}

int
main(void)
{
	const struct CMUnitTest	tests[] = {
		cmocka_unit_test(test_classes),
		cmocka_unit_test(test_causes),
		cmocka_unit_test(test_names),
	};

	return (cmocka_run_group_tests(tests, NULL, NULL));
}
