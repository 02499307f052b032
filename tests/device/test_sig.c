/*
 * cmocka unit tests of the canonical signed encodings and of signature
 * verification (devsig), with PROTOCOL.md's example key and signature.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>
#include <openssl/pem.h>

#include "devframe.h"
#include "devsig.h"
#include "examples.h"

static const char *
keyfile(const char *name)
{
	static char	 path[512];
	const char	*d = getenv("PSD2_DEV_TESTKEYS");

	snprintf(path, sizeof(path), "%s/%s", d ? d : "device/testkeys", name);
	return (path);
}

static void
example(struct dev_confirm *c, struct dev_result *r)
{
	uint8_t			buf[DEV_FRAME_MAX];
	struct dev_frame	f;
	size_t			n;

	n = ex_bytes(EX_CONFIRM, buf, sizeof(buf));
	assert_int_equal(dev_frame_decode(buf, n, &f), DEV_OK);
	assert_int_equal(dev_confirm_decode(f.payload, f.len, c), DEV_OK);
	n = ex_bytes(EX_RESULT, buf, sizeof(buf));
	assert_int_equal(dev_frame_decode(buf, n, &f), DEV_OK);
	assert_int_equal(dev_result_decode(f.payload, f.len, r), DEV_OK);
}

static void
test_confirm_encoding(void **state)
{
	struct dev_confirm	c;
	struct dev_result	r;
	uint8_t			enc[DEVSIG_ENCODING_MAX], want[256];
	size_t			n, wn;

	(void)state;
	example(&c, &r);
	n = devsig_confirm_encode(&c, r.outcome, r.counter, enc, sizeof(enc));
	wn = ex_bytes(EX_CONFIRM_ENCODING, want, sizeof(want));
	assert_int_equal(n, wn);
	assert_memory_equal(enc, want, n);
	/* Domain string first, NUL-terminated. */
	assert_memory_equal(enc, DEVSIG_CONFIRM_DOMAIN "",
	    sizeof(DEVSIG_CONFIRM_DOMAIN));
	assert_int_equal(devsig_confirm_encode(&c, 1, 1, enc, n - 1), 0);
}

static void
test_example_signature(void **state)
{
	struct dev_confirm	c, c2;
	struct dev_result	r;
	uint8_t			pub[DEV_PUBKEY_LEN], sig[DEV_SIG_MAX];

	(void)state;
	example(&c, &r);
	ex_bytes(EX_PUBKEY, pub, sizeof(pub));
	assert_int_equal(devsig_confirm_verify(pub, &c, r.outcome, r.counter,
	    r.sig, r.sig_len), 1);
	/* Each signed field matters. */
	c2 = c; c2.amount_minor = 1235;
	assert_int_equal(devsig_confirm_verify(pub, &c2, 1, 1, r.sig,
	    r.sig_len), 0);
	c2 = c; memcpy(c2.currency, "USD", 4);
	assert_int_equal(devsig_confirm_verify(pub, &c2, 1, 1, r.sig,
	    r.sig_len), 0);
	c2 = c; strcpy(c2.payee_name, "Muster GmbH.");
	assert_int_equal(devsig_confirm_verify(pub, &c2, 1, 1, r.sig,
	    r.sig_len), 0);
	c2 = c; c2.payee_iban[21] = '1';
	assert_int_equal(devsig_confirm_verify(pub, &c2, 1, 1, r.sig,
	    r.sig_len), 0);
	c2 = c; c2.nonce[0] ^= 1;
	assert_int_equal(devsig_confirm_verify(pub, &c2, 1, 1, r.sig,
	    r.sig_len), 0);
	c2 = c; c2.challenge[0] ^= 1;
	assert_int_equal(devsig_confirm_verify(pub, &c2, 1, 1, r.sig,
	    r.sig_len), 0);
	assert_int_equal(devsig_confirm_verify(pub, &c, DEV_OUTCOME_DECLINED,
	    1, r.sig, r.sig_len), 0);
	assert_int_equal(devsig_confirm_verify(pub, &c, 1, 2, r.sig,
	    r.sig_len), 0);
	/* The deadline is not signed: the device has no clock. */
	c2 = c; c2.timeout_s = 5;
	assert_int_equal(devsig_confirm_verify(pub, &c2, 1, 1, r.sig,
	    r.sig_len), 1);
	/* Broken signatures and keys fail closed. */
	memcpy(sig, r.sig, r.sig_len);
	sig[10] ^= 0x40;
	assert_int_equal(devsig_confirm_verify(pub, &c, 1, 1, sig, r.sig_len),
	    0);
	assert_int_equal(devsig_confirm_verify(pub, &c, 1, 1, r.sig, 4), 0);
	pub[64] ^= 1;	/* no longer a point on the curve */
	assert_int_equal(devsig_confirm_verify(pub, &c, 1, 1, r.sig,
	    r.sig_len), 0);
	pub[64] ^= 1;
	pub[0] = 0x02;
	assert_int_equal(devsig_confirm_verify(pub, &c, 1, 1, r.sig,
	    r.sig_len), 0);
}

static void
test_attestation(void **state)
{
	uint8_t			 buf[DEV_FRAME_MAX], enc[256], want[256];
	struct dev_frame	 f;
	struct dev_info		 in;
	EVP_PKEY		*cas[DEVSIG_CA_MAX];
	size_t			 n, ncas;

	(void)state;
	n = ex_bytes(EX_INFO_ANSWER, buf, sizeof(buf));
	assert_int_equal(dev_frame_decode(buf, n, &f), DEV_OK);
	assert_int_equal(dev_info_decode(f.payload, f.len, &in), DEV_OK);
	n = devsig_attest_encode(in.serial, in.model, in.pubkey, enc,
	    sizeof(enc));
	assert_int_equal(n, ex_bytes(EX_ATTEST_ENCODING, want, sizeof(want)));
	assert_memory_equal(enc, want, n);
	assert_int_equal(devsig_load_cas(keyfile("manufacturer-test-ca.pem"),
	    cas, DEVSIG_CA_MAX, &ncas), 0);
	assert_int_equal(ncas, 1);
	assert_int_equal(devsig_attest_verify(cas, ncas, &in), 1);
	strcpy(in.model, "PSD2-AUTH-EMV");
	assert_int_equal(devsig_attest_verify(cas, ncas, &in), 0);
	assert_int_equal(devsig_attest_verify(cas, 0, &in), 0);
	devsig_free_cas(cas, ncas);
	/* A private key file is not a CA public key file. */
	assert_int_equal(devsig_load_cas(keyfile("no-such.pem"), cas,
	    DEVSIG_CA_MAX, &ncas), -1);
	assert_int_equal(devsig_load_cas(keyfile("example-device-key.pem"),
	    cas, DEVSIG_CA_MAX, &ncas), -1);
}

static void
test_sign_roundtrip_and_domains(void **state)
{
	EVP_PKEY	*k;
	FILE		*fp;
	uint8_t		 pub[DEV_PUBKEY_LEN], sig[DEV_SIG_MAX], msg[256];
	uint8_t		 want[DEV_PUBKEY_LEN];
	size_t		 siglen, n;
	struct dev_info	 in;
	EVP_PKEY	*cas[1];

	(void)state;
	assert_non_null(fp = fopen(keyfile("example-device-key.pem"), "r"));
	assert_non_null(k = PEM_read_PrivateKey(fp, NULL, NULL, NULL));
	fclose(fp);
	assert_int_equal(devsig_pubkey_raw(k, pub), 0);
	ex_bytes(EX_PUBKEY, want, sizeof(want));
	assert_memory_equal(pub, want, sizeof(pub));
	/* A device key must never pass for a manufacturer's attestation:
	 * the same bytes signed under the confirm domain do not verify. */
	memset(&in, 0, sizeof(in));
	strcpy(in.serial, "EMU0001");
	strcpy(in.model, "PSD2-AUTH-EMU");
	memcpy(in.pubkey, pub, sizeof(pub));
	n = devsig_attest_encode(in.serial, in.model, pub, msg, sizeof(msg));
	memmove(msg + sizeof(DEVSIG_CONFIRM_DOMAIN), msg +
	    sizeof(DEVSIG_ATTEST_DOMAIN), n - sizeof(DEVSIG_ATTEST_DOMAIN));
	memcpy(msg, DEVSIG_CONFIRM_DOMAIN, sizeof(DEVSIG_CONFIRM_DOMAIN));
	n += sizeof(DEVSIG_CONFIRM_DOMAIN) - sizeof(DEVSIG_ATTEST_DOMAIN);
	assert_int_equal(devsig_sign(k, msg, n, sig, &siglen), 0);
	memcpy(in.attest, sig, siglen);
	in.attest_len = siglen;
	cas[0] = k;
	assert_int_equal(devsig_attest_verify(cas, 1, &in), 0);
	n = devsig_attest_encode(in.serial, in.model, pub, msg, sizeof(msg));
	assert_int_equal(devsig_sign(k, msg, n, sig, &siglen), 0);
	memcpy(in.attest, sig, siglen);
	in.attest_len = siglen;
	assert_int_equal(devsig_attest_verify(cas, 1, &in), 1);
	EVP_PKEY_free(k);
}

static void
test_counter_uuid_fingerprint(void **state)
{
	uint8_t	id[DEV_CHALLENGE_LEN], pub[DEV_PUBKEY_LEN];
	char	s[37], fpr[DEVSIG_FPR_LEN + 1];

	(void)state;
	assert_true(devsig_counter_ok(0, 1));
	assert_true(devsig_counter_ok(41, 42));
	assert_false(devsig_counter_ok(42, 42));
	assert_false(devsig_counter_ok(43, 42));
	assert_false(devsig_counter_ok(UINT64_MAX, UINT32_MAX));
	assert_int_equal(devsig_uuid_parse(EX_CHALLENGE, id), 0);
	assert_int_equal(id[0], 0x00);
	assert_int_equal(id[15], 0xff);
	devsig_uuid_format(id, s);
	assert_string_equal(s, EX_CHALLENGE);
	assert_int_equal(devsig_uuid_parse("00112233-4455-6677-8899-AABBCCDDEEFF",
	    id), 0);
	assert_int_equal(devsig_uuid_parse("00112233445566778899aabbccddeeff",
	    id), -1);
	assert_int_equal(devsig_uuid_parse("0011223x-4455-6677-8899-aabbccddeeff",
	    id), -1);
	ex_bytes(EX_PUBKEY, pub, sizeof(pub));
	devsig_fingerprint(pub, fpr);
	assert_string_equal(fpr, EX_FINGERPRINT);
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_confirm_encoding),
		cmocka_unit_test(test_example_signature),
		cmocka_unit_test(test_attestation),
		cmocka_unit_test(test_sign_roundtrip_and_domains),
		cmocka_unit_test(test_counter_uuid_fingerprint),
	};

	return (cmocka_run_group_tests_name("device-sig", tests, NULL, NULL));
}
