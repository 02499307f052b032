/*
 * Which redirect URIs a client may register and be sent to
 * (src/common/redirect_uri.c): https anywhere, http only on the loopback
 * and never in production.
 */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>

#include <cmocka.h>

#include "redirect_uri.h"

static void
test_https_anywhere(void **state)
{
	const char	*ok[] = {
		"https://tpp.example/callback",
		"https://tpp.example:8443/cb?tenant=7&x=a",
		"https://tpp.example",
		"https://[2001:db8::1]/cb",
	};
	size_t		 i;

	(void)state;
	for (i = 0; i < sizeof(ok) / sizeof(ok[0]); i++) {
		assert_int_equal(redirect_uri_allowed(ok[i], 0), 1);
		assert_int_equal(redirect_uri_allowed(ok[i], 1), 1);
	}
}

static void
test_loopback_http_outside_production(void **state)
{
	const char	*ok[] = {
		"http://127.0.0.1:8000/callback",
		"http://127.0.0.1/callback",
		"http://127.0.0.1",
		"http://localhost:8080/cb?x=1",
		"http://[::1]:8000/cb",
	};
	size_t		 i;

	(void)state;
	for (i = 0; i < sizeof(ok) / sizeof(ok[0]); i++) {
		assert_int_equal(redirect_uri_allowed(ok[i], 0), 1);
		assert_int_equal(redirect_uri_allowed(ok[i], 1), 0);
	}
}

static void
test_refused_everywhere(void **state)
{
	const char	*bad[] = {
		"http://tpp.example/callback",
		"http://127.0.0.1.evil.example/cb",
		"http://localhost.evil.example/cb",
		"http://localhost@evil.example/cb",
		"http://127.0.0.1:/cb",
		"http://127.0.0.1:80x/cb",
		"https:///cb",
		"https://:443/cb",
		"https://@evil.example/cb",
		"https://tpp.example/cb#frag",
		"https://tpp.example/c b",
		"https://tpp.example/cb\n",
		"https://tpp.example/\"cb",
		"https://tpp.example/{cb}",
		"https://tpp.example/a,b",
		"https://tpp.example/a\\b",
		"ftp://tpp.example/cb",
		"HTTPS://tpp.example/cb",
		"tpp.example/cb",
		"",
	};
	size_t		 i;

	(void)state;
	for (i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		assert_int_equal(redirect_uri_allowed(bad[i], 0), 0);
		assert_int_equal(redirect_uri_allowed(bad[i], 1), 0);
	}
	assert_int_equal(redirect_uri_allowed(NULL, 0), 0);
}

int
main(void)
{
	const struct CMUnitTest	tests[] = {
		cmocka_unit_test(test_https_anywhere),
		cmocka_unit_test(test_loopback_http_outside_production),
		cmocka_unit_test(test_refused_everywhere),
	};

	return (cmocka_run_group_tests(tests, NULL, NULL));
}
