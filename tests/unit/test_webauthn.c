/*
 * WebAuthn's relying party checks (src/common/webauthn.c) against
 * registrations and assertions of an ES256 key made by Python's
 * cryptography (webauthn_vectors.h, from webauthn_vectors.py): what a
 * genuine key sends passes, with its credential read by libfido2; a
 * wrong type, origin, challenge, relying party, flag or signature is
 * refused; and the origins a relying party id may come from.
 */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <string.h>

#include <cmocka.h>

#include "webauthn.h"
#include "webauthn_vectors.h"

#define LEN(a)	sizeof(a)

static const char *
client(const void *cd, size_t len, const char *type, uint8_t hash[32])
{
	return (webauthn_client_data(cd, len, type, wa_challenge, WA_ORIGIN,
	    hash));
}

static void
test_rp_id(void **state)
{
	char	id[64];

	(void)state;
	assert_int_equal(webauthn_rp_id("https://psd2.bank.example", id,
	    sizeof(id)), 0);
	assert_string_equal(id, "psd2.bank.example");
	assert_int_equal(webauthn_rp_id("https://Bank.Example:8443", id,
	    sizeof(id)), 0);
	assert_string_equal(id, "bank.example");
	assert_int_equal(webauthn_rp_id("http://localhost:18080", id,
	    sizeof(id)), 0);
	assert_string_equal(id, "localhost");
	/* Browsers refuse an IP address, and http elsewhere. */
	assert_int_equal(webauthn_rp_id("http://127.0.0.1:8080", id,
	    sizeof(id)), -1);
	assert_int_equal(webauthn_rp_id("https://10.0.0.1", id,
	    sizeof(id)), -1);
	assert_int_equal(webauthn_rp_id("http://bank.example", id,
	    sizeof(id)), -1);
	assert_int_equal(webauthn_rp_id("http://localhost.evil", id,
	    sizeof(id)), -1);
	assert_int_equal(webauthn_rp_id("https://bank.example/path", id,
	    sizeof(id)), -1);
	assert_int_equal(webauthn_rp_id("https://bank.example:", id,
	    sizeof(id)), -1);
	assert_int_equal(webauthn_rp_id("https://bank.example:123456", id,
	    sizeof(id)), -1);
	assert_int_equal(webauthn_rp_id("https://", id, sizeof(id)), -1);
	assert_int_equal(webauthn_rp_id("https://.bank.example", id,
	    sizeof(id)), -1);
	assert_int_equal(webauthn_rp_id("https://bank.example", id, 5), -1);
}

static void
test_client_data(void **state)
{
	uint8_t		 hash[32];
	const char	*bad;

	(void)state;
	assert_null(client(wa_cd_create, LEN(wa_cd_create), "webauthn.create",
	    hash));
	assert_null(client(wa_cd_get, LEN(wa_cd_get), "webauthn.get", hash));
	assert_non_null(client(wa_cd_get, LEN(wa_cd_get), "webauthn.create",
	    hash));
	assert_non_null(webauthn_client_data(wa_cd_get, LEN(wa_cd_get),
	    "webauthn.get", wa_challenge, "http://localhost:8000", hash));
	assert_non_null(webauthn_client_data(wa_cd_get, LEN(wa_cd_get),
	    "webauthn.get", wa_cred_id, WA_ORIGIN, hash));
	bad = "{\"type\":\"webauthn.get\",\"challenge\":\"AAECAwQFBgcICQoLD"
	    "A0ODxAREhMUFRYXGBkaGxwdHh8\",\"origin\":\"" WA_ORIGIN "\","
	    "\"crossOrigin\":true}";
	assert_string_equal(client(bad, strlen(bad), "webauthn.get", hash),
	    "client data cross-origin");
	bad = "{\"type\":\"webauthn.get\",\"type\":\"webauthn.get\"}";
	assert_non_null(client(bad, strlen(bad), "webauthn.get", hash));
	assert_non_null(client("[]", 2, "webauthn.get", hash));
	assert_non_null(client("", 0, "webauthn.get", hash));
}

static void
test_registration(void **state)
{
	struct webauthn_credential	cred;
	uint8_t				hash[32];

	(void)state;
	assert_null(client(wa_cd_create, LEN(wa_cd_create), "webauthn.create",
	    hash));
	assert_null(webauthn_attestation(wa_att_none, LEN(wa_att_none), hash,
	    WA_RP_ID, &cred));
	assert_int_equal(cred.alg, WEBAUTHN_ES256);
	assert_int_equal(cred.id_len, LEN(wa_cred_id));
	assert_memory_equal(cred.id, wa_cred_id, LEN(wa_cred_id));
	assert_int_equal(cred.pk_len, LEN(wa_pk));
	assert_memory_equal(cred.pk, wa_pk, LEN(wa_pk));
	assert_memory_equal(cred.aaguid, wa_aaguid, LEN(wa_aaguid));
	assert_int_equal(cred.sign_count, 0);
	assert_null(webauthn_attestation(wa_att_packed, LEN(wa_att_packed),
	    hash, WA_RP_ID, &cred));
	assert_int_equal(cred.alg, WEBAUTHN_ES256);
}

static void
test_registration_refused(void **state)
{
	struct webauthn_credential	cred;
	uint8_t				hash[32];

	(void)state;
	assert_null(client(wa_cd_create, LEN(wa_cd_create), "webauthn.create",
	    hash));
	assert_string_equal(webauthn_attestation(wa_att_no_uv,
	    LEN(wa_att_no_uv), hash, WA_RP_ID, &cred), "user not verified");
	assert_string_equal(webauthn_attestation(wa_att_other_rp,
	    LEN(wa_att_other_rp), hash, WA_RP_ID, &cred), "rpIdHash");
	assert_string_equal(webauthn_attestation(wa_att_none,
	    LEN(wa_att_none), hash, "bank.example", &cred), "rpIdHash");
	assert_string_equal(webauthn_attestation(wa_att_packed_bad,
	    LEN(wa_att_packed_bad), hash, WA_RP_ID, &cred),
	    "packed self attestation: signature");
	assert_string_equal(webauthn_attestation(wa_att_fido_u2f,
	    LEN(wa_att_fido_u2f), hash, WA_RP_ID, &cred),
	    "attestation format");
	/* Cut short, or with bytes after the object. */
	assert_non_null(webauthn_attestation(wa_att_none,
	    LEN(wa_att_none) - 1, hash, WA_RP_ID, &cred));
	assert_non_null(webauthn_attestation(wa_cd_get, LEN(wa_cd_get), hash,
	    WA_RP_ID, &cred));
	assert_non_null(webauthn_attestation(wa_att_none, 0, hash, WA_RP_ID,
	    &cred));
}

static void
test_assertion(void **state)
{
	uint8_t		hash[32], pk[LEN(wa_pk)];
	uint32_t	count = 0;

	(void)state;
	assert_null(client(wa_cd_get, LEN(wa_cd_get), "webauthn.get", hash));
	assert_null(webauthn_assertion(WEBAUTHN_ES256, wa_pk, LEN(wa_pk),
	    wa_ad_get, LEN(wa_ad_get), hash, wa_sig_get, LEN(wa_sig_get),
	    WA_RP_ID, &count));
	assert_int_equal(count, 7);
	assert_string_equal(webauthn_assertion(WEBAUTHN_ES256, wa_pk,
	    LEN(wa_pk), wa_ad_get_no_uv, LEN(wa_ad_get_no_uv), hash,
	    wa_sig_get_no_uv, LEN(wa_sig_get_no_uv), WA_RP_ID, &count),
	    "user not verified");
	assert_string_equal(webauthn_assertion(WEBAUTHN_ES256, wa_pk,
	    LEN(wa_pk), wa_ad_get, LEN(wa_ad_get), hash, wa_sig_get,
	    LEN(wa_sig_get), "bank.example", &count), "rpIdHash");
	/* Another client data: the signature does not cover it. */
	assert_null(client(wa_cd_create, LEN(wa_cd_create), "webauthn.create",
	    hash));
	assert_string_equal(webauthn_assertion(WEBAUTHN_ES256, wa_pk,
	    LEN(wa_pk), wa_ad_get, LEN(wa_ad_get), hash, wa_sig_get,
	    LEN(wa_sig_get), WA_RP_ID, &count), "assertion signature");
	assert_null(client(wa_cd_get, LEN(wa_cd_get), "webauthn.get", hash));
	/* Another key, another algorithm, a short signature. */
	memcpy(pk, wa_pk, sizeof(pk));
	pk[40] ^= 1;
	assert_non_null(webauthn_assertion(WEBAUTHN_ES256, pk, sizeof(pk),
	    wa_ad_get, LEN(wa_ad_get), hash, wa_sig_get, LEN(wa_sig_get),
	    WA_RP_ID, &count));
	assert_non_null(webauthn_assertion(WEBAUTHN_EDDSA, wa_pk, 32,
	    wa_ad_get, LEN(wa_ad_get), hash, wa_sig_get, LEN(wa_sig_get),
	    WA_RP_ID, &count));
	assert_non_null(webauthn_assertion(WEBAUTHN_ES256, wa_pk, LEN(wa_pk),
	    wa_ad_get, LEN(wa_ad_get), hash, wa_sig_get, 10, WA_RP_ID,
	    &count));
	assert_non_null(webauthn_assertion(WEBAUTHN_ES256, wa_pk, LEN(wa_pk),
	    wa_ad_get, 36, hash, wa_sig_get, LEN(wa_sig_get), WA_RP_ID,
	    &count));
}

int
main(void)
{
	const struct CMUnitTest	tests[] = {
		cmocka_unit_test(test_rp_id),
		cmocka_unit_test(test_client_data),
		cmocka_unit_test(test_registration),
		cmocka_unit_test(test_registration_refused),
		cmocka_unit_test(test_assertion),
	};

	return (cmocka_run_group_tests(tests, NULL, NULL));
}
