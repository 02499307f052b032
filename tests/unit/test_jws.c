/*
 * Compact JWS verification (src/common/jws.c) against signatures made by
 * Python's cryptography (jws_vectors.h, from jws_vectors.py): the three
 * algorithms verify, everything else is refused, and a key set is
 * checked before it is registered.
 */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <string.h>

#include <cmocka.h>

#include "jws.h"
#include "jws_vectors.h"

static void	check_set(const char *, int);

static json_t *
jwks(void)
{
	json_t	*set;

	set = json_loads(JWS_VECTOR_JWKS, 0, NULL);
	assert_non_null(set);
	return (set);
}

static enum jws_result
verify(const char *compact, const json_t *set, const char **alg)
{
	uint8_t		payload[512];
	size_t		len;
	enum jws_result	r;

	r = jws_verify(compact, set, payload, sizeof(payload), &len, alg);
	if (r == JWS_OK) {
		assert_int_equal(len, strlen(JWS_VECTOR_PAYLOAD));
		assert_memory_equal(payload, JWS_VECTOR_PAYLOAD, len);
	} else
		assert_int_equal(len, 0);
	return (r);
}

static void
test_three_algorithms_verify(void **state)
{
	json_t		*set = jwks();
	const char	*alg;

	(void)state;
	assert_int_equal(verify(JWS_PS256, set, &alg), JWS_OK);
	assert_string_equal(alg, "PS256");
	assert_int_equal(verify(JWS_PS256_NOKID, set, &alg), JWS_OK);
	assert_int_equal(verify(JWS_ES256, set, &alg), JWS_OK);
	assert_string_equal(alg, "ES256");
	assert_int_equal(verify(JWS_EDDSA, set, &alg), JWS_OK);
	assert_string_equal(alg, "EdDSA");
	json_decref(set);
}

static void
test_short_coordinate_is_padded(void **state)
{
	json_t	*set;

	(void)state;
	set = json_loads(JWS_VECTOR_JWKS_SHORT, 0, NULL);
	assert_non_null(set);
	assert_int_equal(verify(JWS_ES256_SHORT_COORDINATE, set, NULL),
	    JWS_OK);
	json_decref(set);
	check_set(JWS_VECTOR_JWKS_SHORT, 0);
}

static void
test_other_algorithms_refused(void **state)
{
	json_t	*set = jwks();

	(void)state;
	assert_int_equal(verify(JWS_RS256, set, NULL), JWS_ALG_REFUSED);
	/* {"alg":"none"}.{"iss":"client-1"}. and an HMAC header. */
	assert_int_equal(verify("eyJhbGciOiJub25lIn0.eyJpc3MiOiJjbGllbnQtMSJ9.",
	    set, NULL), JWS_MALFORMED);
	assert_int_equal(verify("eyJhbGciOiJub25lIn0.eyJpc3MiOiJjbGllbnQtMSJ9.AA",
	    set, NULL), JWS_ALG_REFUSED);
	assert_int_equal(verify("eyJhbGciOiJIUzI1NiJ9.eyJpc3MiOiJjbGllbnQtMSJ9."
	    "AAAA", set, NULL), JWS_ALG_REFUSED);
	/* {"alg":"EdDSA","crit":["exp"]} */
	assert_int_equal(verify("eyJhbGciOiJFZERTQSIsImNyaXQiOlsiZXhwIl19."
	    "eyJpc3MiOiJjbGllbnQtMSJ9.AAAA", set, NULL), JWS_ALG_REFUSED);
	json_decref(set);
}

static void
test_signature_must_match(void **state)
{
	json_t	*set = jwks();
	char	 forged[JWS_COMPACT_MAX];
	char	*dot;

	(void)state;
	/* RFC 7518 3.5: the salt is 32 bytes, not the most that fits. */
	assert_int_equal(verify(JWS_PS256_SALT_MAX, set, NULL),
	    JWS_BAD_SIGNATURE);
	/* The EC signature under the RSA key's kid: no EC key of that kid. */
	assert_int_equal(verify(JWS_ES256_WRONG_KID, set, NULL), JWS_NO_KEY);
	/* Another payload under the Ed25519 signature. */
	(void)snprintf(forged, sizeof(forged), "%s", JWS_EDDSA);
	dot = strchr(forged, '.');
	dot[1] = dot[1] == 'e' ? 'f' : 'e';
	assert_int_not_equal(verify(forged, set, NULL), JWS_OK);
	/* A flipped bit of the ES256 signature. */
	(void)snprintf(forged, sizeof(forged), "%s", JWS_ES256);
	dot = strrchr(forged, '.');
	dot[5] = dot[5] == 'A' ? 'B' : 'A';
	assert_int_equal(verify(forged, set, NULL), JWS_BAD_SIGNATURE);
	json_decref(set);
}

static void
test_key_set_is_the_only_source(void **state)
{
	json_t	*set = jwks(), *keys, *other;

	(void)state;
	/* Without the EC key, ES256 finds no key. */
	keys = json_object_get(set, "keys");
	assert_int_equal(json_array_remove(keys, 1), 0);
	assert_int_equal(verify(JWS_ES256, set, NULL), JWS_NO_KEY);
	/* A key that says it is for encryption is not used. */
	json_object_set_new(json_array_get(keys, 0), "use",
	    json_string("enc"));
	assert_int_equal(verify(JWS_PS256, set, NULL), JWS_NO_KEY);
	/* An empty set, or no set at all. */
	other = json_pack("{s:[]}", "keys");
	assert_int_equal(verify(JWS_EDDSA, other, NULL), JWS_NO_KEY);
	assert_int_equal(verify(JWS_EDDSA, NULL, NULL), JWS_NO_KEY);
	json_decref(other);
	json_decref(set);
}

static void
test_malformed(void **state)
{
	json_t		*set = jwks();
	const char	*bad[] = {
		"", ".", "..", "a.b", "a.b.c.d",
		"eyJhbGciOiJFZERTQSJ9..AAAA",
		"eyJhbGciOiJFZERTQSJ9.e30.",
		"eyJhbGciOiJFZERTQSJ9=.e30.AAAA",
		"W10.e30.AAAA",				/* header [] */
		"eyJhbGciOiJFZERTQSIsImFsZyI6IkVkRFNBIn0.e30.AAAA",
		"e30.e30.AAAA",				/* no alg */
		"eyJhbGciOjF9.e30.AAAA",		/* alg 1 */
	};
	char		 huge[JWS_COMPACT_MAX + 2];
	size_t		 i;

	(void)state;
	for (i = 0; i < sizeof(bad) / sizeof(bad[0]); i++)
		assert_int_equal(verify(bad[i], set, NULL), JWS_MALFORMED);
	memset(huge, 'A', sizeof(huge) - 1);
	huge[sizeof(huge) - 1] = '\0';
	huge[10] = huge[20] = '.';
	assert_int_equal(verify(huge, set, NULL), JWS_MALFORMED);
	json_decref(set);
}

static void
check_set(const char *text, int want)
{
	json_t	*set;
	char	 why[256];

	set = json_loads(text, 0, NULL);
	why[0] = '\0';
	assert_int_equal(jws_jwks_check(set, why, sizeof(why)), want);
	if (want == -1)
		assert_true(why[0] != '\0');
	json_decref(set);
}

static void
test_key_set_check(void **state)
{
	(void)state;
	check_set(JWS_VECTOR_JWKS, 0);
	check_set("{\"keys\":[]}", -1);
	check_set("[]", -1);
	check_set("{\"keys\":[{\"kty\":\"oct\",\"k\":\"AAAA\"}]}", -1);
	/* A private key, an Ed448 key, an RS256 key. */
	check_set("{\"keys\":[{\"kty\":\"OKP\",\"crv\":\"Ed25519\",\"x\":"
	    "\"11qYAYKxCrfVS_7TyWQHOg7hcvPapiMlrwIaaPcHURo\",\"d\":"
	    "\"nWGxne_9WmC6hEr0kuwsxERJxWl7MmkZcDusAxyuf2A\"}]}", -1);
	check_set("{\"keys\":[{\"kty\":\"OKP\",\"crv\":\"Ed448\",\"x\":"
	    "\"11qYAYKxCrfVS_7TyWQHOg7hcvPapiMlrwIaaPcHURo\"}]}", -1);
	check_set("{\"keys\":[{\"kty\":\"OKP\",\"crv\":\"Ed25519\",\"alg\":"
	    "\"RS256\",\"x\":\"11qYAYKxCrfVS_7TyWQHOg7hcvPapiMlrwIaaPcHURo\"}]}",
	    -1);
	check_set("{\"keys\":[{\"kty\":\"OKP\",\"crv\":\"Ed25519\",\"x\":"
	    "\"11qYAYKxCrfVS_7TyWQHOg7hcvPapiMlrwIaaPcHURo\"}]}", 0);
	/* Two keys of one kid. */
	check_set("{\"keys\":[{\"kty\":\"OKP\",\"crv\":\"Ed25519\",\"kid\":\"a\","
	    "\"x\":\"11qYAYKxCrfVS_7TyWQHOg7hcvPapiMlrwIaaPcHURo\"},"
	    "{\"kty\":\"OKP\",\"crv\":\"Ed25519\",\"kid\":\"a\",\"x\":"
	    "\"11qYAYKxCrfVS_7TyWQHOg7hcvPapiMlrwIaaPcHURo\"}]}", -1);
	/* A P-256 point off the curve (y of another point). */
	check_set("{\"keys\":[{\"kty\":\"EC\",\"crv\":\"P-256\",\"x\":"
	    "\"f83OJ3D2xF1Bg8vub9tLe1gHMzV76e8Tus9uPHvRVEU\",\"y\":"
	    "\"AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA\"}]}", -1);
	/* RSA of 1024 bits. */
	check_set("{\"keys\":[{\"kty\":\"RSA\",\"e\":\"AQAB\",\"n\":\""
	    "wes9B-2I0FeHXonLBhjMHIqhb7ihP2UYYLgrl285czplrbmIM8DLSwNpgfSVV2OY"
	    "-VTia5SNefKk7jdh5XAcIRx9dXyEvqe1fiNMcUfhLrkBJ28ePp1DAtJ0-nGbTbSO"
	    "\"}]}", -1);
}

static void
test_dpop_proofs(void **state)
{
	const char	*proofs[] = { JWS_DPOP_0, JWS_DPOP_1, JWS_DPOP_2 };
	const char	*thumbs[] = { JWS_DPOP_0_THUMB, JWS_DPOP_1_THUMB,
			    JWS_DPOP_2_THUMB };
	uint8_t		 payload[512];
	char		 thumb[JWS_THUMBPRINT_LEN + 1];
	size_t		 i, len;

	(void)state;
	for (i = 0; i < 3; i++) {
		assert_int_equal(jws_verify_dpop(proofs[i], payload,
		    sizeof(payload), &len, thumb), JWS_OK);
		assert_string_equal(thumb, thumbs[i]);
		assert_int_equal(len, strlen(JWS_VECTOR_DPOP_PAYLOAD));
		assert_memory_equal(payload, JWS_VECTOR_DPOP_PAYLOAD, len);
	}
	assert_int_equal(jws_verify_dpop(JWS_DPOP_NO_TYP, payload,
	    sizeof(payload), &len, thumb), JWS_NOT_DPOP);
	/* A client assertion is no proof: no typ, no jwk. */
	assert_int_equal(jws_verify_dpop(JWS_EDDSA, payload, sizeof(payload),
	    &len, thumb), JWS_NOT_DPOP);
	/* And a proof is no client assertion: its key is not the client's. */
	{
		json_t	*set = jwks();

		json_array_remove(json_object_get(set, "keys"), 2);
		assert_int_equal(verify(JWS_DPOP_2, set, NULL), JWS_NO_KEY);
		json_decref(set);
	}
}

int
main(void)
{
	const struct CMUnitTest	tests[] = {
		cmocka_unit_test(test_three_algorithms_verify),
		cmocka_unit_test(test_short_coordinate_is_padded),
		cmocka_unit_test(test_other_algorithms_refused),
		cmocka_unit_test(test_signature_must_match),
		cmocka_unit_test(test_key_set_is_the_only_source),
		cmocka_unit_test(test_malformed),
		cmocka_unit_test(test_key_set_check),
		cmocka_unit_test(test_dpop_proofs),
	};

	return (cmocka_run_group_tests(tests, NULL, NULL));
}
