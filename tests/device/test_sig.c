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
#include <unistd.h>

#include <cmocka.h>
#include <openssl/bn.h>
#include <openssl/pem.h>

#include "devframe.h"
#include "devsig.h"
#include "encoding.h"
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
	n = devsig_confirm_encode(&c, r.outcome, r.flags, r.counter, enc,
	    sizeof(enc));
	wn = ex_bytes(EX_CONFIRM_ENCODING, want, sizeof(want));
	assert_int_equal(n, wn);
	assert_memory_equal(enc, want, n);
	/* Domain string first, NUL-terminated. */
	assert_memory_equal(enc, DEVSIG_CONFIRM_DOMAIN "",
	    sizeof(DEVSIG_CONFIRM_DOMAIN));
	assert_int_equal(devsig_confirm_encode(&c, 1, 5, 1, enc, n - 1), 0);
	/* The signature of the example is the document's, low-S. */
	n = ex_bytes(EX_SIGNATURE, want, sizeof(want));
	assert_int_equal(n, r.sig_len);
	assert_memory_equal(want, r.sig, n);
	assert_true(devsig_der_ok(r.sig, r.sig_len, 1));
}

static int
verify(const uint8_t *pub, const struct dev_confirm *c, uint8_t outcome,
    uint8_t flags, uint32_t counter, const uint8_t *sig, size_t siglen)
{
	return (devsig_confirm_verify(pub, c, outcome, flags, counter, sig,
	    siglen));
}

static void
test_example_signature(void **state)
{
	struct dev_confirm	c, c2;
	struct dev_result	r;
	uint8_t			pub[DEV_PUBKEY_LEN], sig[DEV_SIG_MAX];
	const uint8_t		uvup = DEV_FLAG_UP | DEV_FLAG_UV;

	(void)state;
	example(&c, &r);
	ex_bytes(EX_PUBKEY, pub, sizeof(pub));
	assert_int_equal(verify(pub, &c, r.outcome, r.flags, r.counter,
	    r.sig, r.sig_len), 1);
	assert_int_equal(devsig_approval_verify(pub, &c, r.counter, r.sig,
	    r.sig_len), 1);
	/* Each signed field matters. */
	c2 = c; c2.amount_minor = 1235;
	assert_int_equal(verify(pub, &c2, 1, uvup, 1, r.sig, r.sig_len), 0);
	c2 = c; memcpy(c2.currency, "USD", 4);
	assert_int_equal(verify(pub, &c2, 1, uvup, 1, r.sig, r.sig_len), 0);
	c2 = c; strcpy(c2.payee_name, "Muster GmbH.");
	assert_int_equal(verify(pub, &c2, 1, uvup, 1, r.sig, r.sig_len), 0);
	c2 = c; c2.payee_iban[21] = '1';
	assert_int_equal(verify(pub, &c2, 1, uvup, 1, r.sig, r.sig_len), 0);
	c2 = c; c2.nonce[0] ^= 1;
	assert_int_equal(verify(pub, &c2, 1, uvup, 1, r.sig, r.sig_len), 0);
	c2 = c; c2.challenge[0] ^= 1;
	assert_int_equal(verify(pub, &c2, 1, uvup, 1, r.sig, r.sig_len), 0);
	assert_int_equal(verify(pub, &c, DEV_OUTCOME_DECLINED, DEV_FLAG_UP, 1,
	    r.sig, r.sig_len), 0);
	assert_int_equal(verify(pub, &c, 1, uvup, 2, r.sig, r.sig_len), 0);
	assert_int_equal(devsig_approval_verify(pub, &c, 2, r.sig, r.sig_len),
	    0);
	/* Flags other than the outcome's are refused before any ECDSA. */
	assert_int_equal(verify(pub, &c, 1, DEV_FLAG_UP, 1, r.sig, r.sig_len),
	    0);
	assert_int_equal(verify(pub, &c, 1, uvup | 0x80, 1, r.sig, r.sig_len),
	    0);
	assert_int_equal(verify(pub, &c, DEV_OUTCOME_BUSY, 0, 1, r.sig,
	    r.sig_len), 0);
	/* The deadline is not signed: the device has no clock. */
	c2 = c; c2.timeout_s = 5;
	assert_int_equal(verify(pub, &c2, 1, uvup, 1, r.sig, r.sig_len), 1);
	/* Broken signatures and keys fail closed. */
	memcpy(sig, r.sig, r.sig_len);
	sig[10] ^= 0x40;
	assert_int_equal(verify(pub, &c, 1, uvup, 1, sig, r.sig_len), 0);
	assert_int_equal(verify(pub, &c, 1, uvup, 1, r.sig, 4), 0);
	pub[64] ^= 1;	/* no longer a point on the curve */
	assert_int_equal(verify(pub, &c, 1, uvup, 1, r.sig, r.sig_len), 0);
	pub[64] ^= 1;
	pub[0] = 0x02;
	assert_int_equal(verify(pub, &c, 1, uvup, 1, r.sig, r.sig_len), 0);
}

static EVP_PKEY *
example_key(void)
{
	EVP_PKEY	*k;
	FILE		*fp;

	assert_non_null(fp = fopen(keyfile("example-device-key.pem"), "r"));
	k = PEM_read_PrivateKey(fp, NULL, NULL, NULL);
	fclose(fp);
	assert_non_null(k);
	return (k);
}

/*
 * RTS Art. 4: an approval is two elements. A validly made signature over
 * an approval without UV (a device that skipped the PIN) is refused, and
 * so is one whose RESULT claims UV that the signature does not carry.
 */
static void
test_approval_needs_uv(void **state)
{
	struct dev_confirm	 c;
	struct dev_result	 r;
	EVP_PKEY		*k = example_key();
	uint8_t			 pub[DEV_PUBKEY_LEN], enc[DEVSIG_ENCODING_MAX];
	uint8_t			 sig[DEV_SIG_MAX];
	size_t			 n, siglen;

	(void)state;
	example(&c, &r);
	ex_bytes(EX_PUBKEY, pub, sizeof(pub));
	n = devsig_confirm_encode(&c, DEV_OUTCOME_APPROVED, DEV_FLAG_UP, 7,
	    enc, sizeof(enc));
	assert_int_equal(devsig_sign(k, enc, n, sig, &siglen), 0);
	assert_int_equal(devsig_verify(k, enc, n, sig, siglen), 1);
	assert_int_equal(verify(pub, &c, DEV_OUTCOME_APPROVED, DEV_FLAG_UP, 7,
	    sig, siglen), 0);
	assert_int_equal(verify(pub, &c, DEV_OUTCOME_APPROVED,
	    DEV_FLAG_UP | DEV_FLAG_UV, 7, sig, siglen), 0);
	assert_int_equal(devsig_approval_verify(pub, &c, 7, sig, siglen), 0);
	/* A decline needs no PIN and verifies with UP alone. */
	n = devsig_confirm_encode(&c, DEV_OUTCOME_DECLINED, DEV_FLAG_UP, 8,
	    enc, sizeof(enc));
	assert_int_equal(devsig_sign(k, enc, n, sig, &siglen), 0);
	assert_int_equal(verify(pub, &c, DEV_OUTCOME_DECLINED, DEV_FLAG_UP, 8,
	    sig, siglen), 1);
	assert_int_equal(devsig_approval_verify(pub, &c, 8, sig, siglen), 0);
	EVP_PKEY_free(k);
}

/*
 * Version 1 is refused: its example signature is valid ECDSA over the
 * version 1 bytes, yet no verifier call accepts it for that challenge.
 */
static void
old_signature_refused(const char *enc_hex, const char *result_hex,
    size_t sig_at)
{
	uint8_t			 buf[DEV_FRAME_MAX], enc[256], sig[DEV_SIG_MAX];
	uint8_t			 pub[DEV_PUBKEY_LEN];
	struct dev_confirm	 c;
	struct dev_result	 r;
	EVP_PKEY		*pk;
	size_t			 n, siglen;
	uint8_t			 fl;

	example(&c, &r);
	ex_bytes(EX_PUBKEY, pub, sizeof(pub));
	n = ex_bytes(enc_hex, enc, sizeof(enc));
	ex_bytes(result_hex, buf, sizeof(buf));
	siglen = buf[sig_at - 1];
	memcpy(sig, buf + sig_at, siglen);
	assert_non_null(pk = devsig_pubkey_from_raw(pub));
	assert_int_equal(devsig_verify(pk, enc, n, sig, siglen), 1);
	EVP_PKEY_free(pk);
	for (fl = 0; fl < 8; fl++)
		assert_int_equal(verify(pub, &c, 1, fl, 1, sig, siglen), 0);
	assert_int_equal(devsig_approval_verify(pub, &c, 1, sig, siglen), 0);
}

static void
test_v1_signature_refused(void **state)
{
	(void)state;
	/* The version 1 RESULT: its signature starts at byte 6+16+1+4+1. */
	old_signature_refused(EX1_CONFIRM_ENCODING, EX1_RESULT, 28);
}

/* Version 2's approval (appendix B) verifies for no challenge now. */
static void
test_v2_signature_refused(void **state)
{
	(void)state;
	/* The version 2 RESULT: its signature starts at byte 6+16+1+1+4+1. */
	old_signature_refused(EX2_CONFIRM_ENCODING, EX2_RESULT, 29);
}

/*
 * The minor units the amount was shown with are signed right after the
 * currency (4.2): 2 for EUR, 0 for JPY, 3 for BHD; a currency outside
 * the display table has no encoding, so nothing verifies for it.
 */
static void
test_minor_units_signed(void **state)
{
	struct dev_confirm	c;
	struct dev_result	r;
	uint8_t			enc[DEVSIG_ENCODING_MAX];
	const size_t		at = sizeof(DEVSIG_CONFIRM_DOMAIN) + 16 + 32 +
				    8 + 3;

	(void)state;
	example(&c, &r);
	assert_true(devsig_confirm_encode(&c, 1, 5, 1, enc, sizeof(enc)) > at);
	assert_int_equal(enc[at], 2);
	memcpy(c.currency, "JPY", 4);
	assert_true(devsig_confirm_encode(&c, 1, 5, 1, enc, sizeof(enc)) > at);
	assert_int_equal(enc[at], 0);
	memcpy(c.currency, "BHD", 4);
	assert_true(devsig_confirm_encode(&c, 1, 5, 1, enc, sizeof(enc)) > at);
	assert_int_equal(enc[at], 3);
	memcpy(c.currency, "XAU", 4);
	assert_int_equal(devsig_confirm_encode(&c, 1, 5, 1, enc, sizeof(enc)),
	    0);
}

/* INFO's public key must be a point on P-256 (5.2): the host refuses
 * the device otherwise. */
static void
test_pubkey_on_curve(void **state)
{
	uint8_t	pub[DEV_PUBKEY_LEN];

	(void)state;
	ex_bytes(EX_PUBKEY, pub, sizeof(pub));
	assert_true(devsig_pubkey_valid(pub));
	pub[DEV_PUBKEY_LEN - 1] ^= 0x01;
	assert_false(devsig_pubkey_valid(pub));
	pub[DEV_PUBKEY_LEN - 1] ^= 0x01;
	pub[0] = 0x02;
	assert_false(devsig_pubkey_valid(pub));
	memset(pub + 1, 0, DEV_PUBKEY_LEN - 1);
	pub[0] = 0x04;
	assert_false(devsig_pubkey_valid(pub));	/* (0, 0) */
	memset(pub + 1, 0xff, DEV_PUBKEY_LEN - 1);
	assert_false(devsig_pubkey_valid(pub));	/* beyond p */
}

/* A DER signature from r and s (32 bytes each), minimal. */
static size_t
der(const uint8_t r[32], const uint8_t s[32], uint8_t *out)
{
	size_t	o = 2, i;
	const uint8_t *v[2] = { r, s };
	size_t	k, skip;

	for (i = 0; i < 2; i++) {
		for (skip = 0; skip < 31 && v[i][skip] == 0; skip++)
			;
		k = 32 - skip;
		out[o++] = 0x02;
		if (v[i][skip] & 0x80) {
			out[o++] = (uint8_t)(k + 1);
			out[o++] = 0x00;
		} else
			out[o++] = (uint8_t)k;
		memcpy(out + o, v[i] + skip, k);
		o += k;
	}
	out[0] = 0x30;
	out[1] = (uint8_t)(o - 2);
	return (o);
}

/*
 * Strict DER with a low S for confirmations: the high-S twin of a valid
 * signature (valid ECDSA, OpenSSL accepts it) and every non-minimal or
 * malformed encoding of the same r and s are refused.
 */
static void
test_der_strict_low_s(void **state)
{
	struct dev_confirm	 c;
	struct dev_result	 r;
	uint8_t			 pub[DEV_PUBKEY_LEN], rb[32], sb[32], hs[32];
	uint8_t			 sig[DEV_SIG_MAX + 8], enc[DEVSIG_ENCODING_MAX];
	const uint8_t		 uvup = DEV_FLAG_UP | DEV_FLAG_UV;
	BIGNUM			*n, *s, *t;
	EVP_PKEY		*pk;
	EVP_MD_CTX		*md;
	size_t			 len, elen;
	int			 ossl;

	(void)state;
	example(&c, &r);
	ex_bytes(EX_PUBKEY, pub, sizeof(pub));
	/* The example: 30 44 02 20 r 02 20 s. */
	assert_int_equal(r.sig[3], 32);
	memcpy(rb, r.sig + 4, 32);
	memcpy(sb, r.sig + 38, 32);
	len = der(rb, sb, sig);
	assert_int_equal(len, r.sig_len);
	assert_memory_equal(sig, r.sig, len);
	assert_int_equal(verify(pub, &c, 1, uvup, 1, sig, len), 1);

	/* High S: n - s. */
	assert_non_null(n = BN_new());
	assert_true(BN_hex2bn(&n, "FFFFFFFF00000000FFFFFFFFFFFFFFFF"
	    "BCE6FAADA7179E84F3B9CAC2FC632551") > 0);
	assert_non_null(s = BN_bin2bn(sb, 32, NULL));
	assert_non_null(t = BN_new());
	assert_true(BN_sub(t, n, s));
	assert_int_equal(BN_bn2binpad(t, hs, 32), 32);
	len = der(rb, hs, sig);
	assert_true(devsig_der_ok(sig, len, 0));
	assert_false(devsig_der_ok(sig, len, 1));
	elen = devsig_confirm_encode(&c, 1, uvup, 1, enc, sizeof(enc));
	assert_non_null(pk = devsig_pubkey_from_raw(pub));
	assert_non_null(md = EVP_MD_CTX_new());
	ossl = EVP_DigestVerifyInit(md, NULL, EVP_sha256(), NULL, pk) == 1 &&
	    EVP_DigestVerify(md, sig, len, enc, elen) == 1;
	EVP_MD_CTX_free(md);
	assert_true(ossl);	/* mathematically valid... */
	assert_int_equal(devsig_verify(pk, enc, elen, sig, len), 1);
	assert_int_equal(verify(pub, &c, 1, uvup, 1, sig, len), 0);
	EVP_PKEY_free(pk);
	/* s = n and s = 0 and r = 0 are never valid. */
	assert_int_equal(BN_bn2binpad(n, hs, 32), 32);
	len = der(rb, hs, sig);
	assert_false(devsig_der_ok(sig, len, 0));
	memset(hs, 0, 32);
	len = der(rb, hs, sig);
	assert_false(devsig_der_ok(sig, len, 0));
	len = der(hs, sb, sig);
	assert_false(devsig_der_ok(sig, len, 0));
	BN_free(n);
	BN_free(s);
	BN_free(t);

	/* Non-minimal and malformed forms of the example. */
	len = der(rb, sb, sig);
	/* a superfluous leading zero on r */
	memmove(sig + 5, sig + 4, len - 4);
	sig[4] = 0x00;
	sig[3] = 33;
	sig[1]++;
	assert_false(devsig_der_ok(sig, len + 1, 0));
	assert_int_equal(verify(pub, &c, 1, uvup, 1, sig, len + 1), 0);
	/* a long-form SEQUENCE length */
	len = der(rb, sb, sig);
	memmove(sig + 3, sig + 2, len - 2);
	sig[1] = 0x81;
	sig[2] = (uint8_t)(len - 2);
	assert_false(devsig_der_ok(sig, len + 1, 0));
	assert_int_equal(verify(pub, &c, 1, uvup, 1, sig, len + 1), 0);
	/* a trailing byte, inside and outside the SEQUENCE */
	len = der(rb, sb, sig);
	sig[len] = 0x00;
	assert_false(devsig_der_ok(sig, len + 1, 0));
	sig[1]++;
	assert_false(devsig_der_ok(sig, len + 1, 0));
	assert_int_equal(verify(pub, &c, 1, uvup, 1, sig, len + 1), 0);
	/* a negative r (its sign bit set without the leading zero) */
	len = der(rb, sb, sig);
	sig[4] |= 0x80;
	assert_false(devsig_der_ok(sig, len, 0));
	/* a wrong tag, a wrong INTEGER length */
	len = der(rb, sb, sig);
	sig[0] = 0x31;
	assert_false(devsig_der_ok(sig, len, 0));
	len = der(rb, sb, sig);
	sig[3] = 31;
	assert_false(devsig_der_ok(sig, len, 0));
	len = der(rb, sb, sig);
	sig[37] = 0x03;
	assert_false(devsig_der_ok(sig, len, 0));
	assert_false(devsig_der_ok(NULL, 0, 0));
}

static void
test_attestation(void **state)
{
	uint8_t			 buf[DEV_FRAME_MAX], enc[256], want[256];
	uint8_t			 kid[DEV_KEY_ID_LEN];
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
	/* The key id selects the CA: another id finds none. */
	ex_bytes(EX_CA_KEY_ID, kid, sizeof(kid));
	assert_memory_equal(in.attest_kid, kid, DEV_KEY_ID_LEN);
	assert_int_equal(devsig_pkey_id(cas[0], kid), 0);
	assert_memory_equal(in.attest_kid, kid, DEV_KEY_ID_LEN);
	in.attest_kid[0] ^= 1;
	assert_int_equal(devsig_attest_verify(cas, ncas, &in), 0);
	in.attest_kid[0] ^= 1;
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
	int		 i;

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
	assert_int_equal(devsig_pkey_id(k, in.attest_kid), 0);
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
	/* devsig_sign always gives the low-S form. */
	for (i = 0; i < 64; i++) {
		assert_int_equal(devsig_sign(k, msg, n, sig, &siglen), 0);
		assert_true(devsig_der_ok(sig, siglen, 1));
		assert_int_equal(devsig_verify(k, msg, n, sig, siglen), 1);
	}
	EVP_PKEY_free(k);
}

/*
 * Manufacturer CA rotation: the CA file lists the new key and the old
 * one; each device's attestation is checked with the key its id names.
 */
static void
test_ca_rotation(void **state)
{
	EVP_PKEY	*old = NULL, *newk, *cas[DEVSIG_CA_MAX];
	struct dev_info	 in;
	uint8_t		 pub[DEV_PUBKEY_LEN], msg[256];
	char		 path[] = "/tmp/psd2ca.XXXXXX";
	size_t		 n, ncas;
	FILE		*fp;
	int		 fd;

	(void)state;
	assert_non_null(newk = EVP_EC_gen("P-256"));
	assert_non_null(fp = fopen(keyfile("manufacturer-test-key.pem"), "r"));
	old = PEM_read_PrivateKey(fp, NULL, NULL, NULL);
	fclose(fp);
	assert_non_null(old);
	assert_true((fd = mkstemp(path)) >= 0);
	assert_non_null(fp = fdopen(fd, "w"));
	assert_true(PEM_write_PUBKEY(fp, newk));
	assert_true(PEM_write_PUBKEY(fp, old));
	fclose(fp);
	assert_int_equal(devsig_load_cas(path, cas, DEVSIG_CA_MAX, &ncas), 0);
	unlink(path);
	assert_int_equal(ncas, 2);
	memset(&in, 0, sizeof(in));
	strcpy(in.serial, "EMU0009");
	strcpy(in.model, "PSD2-AUTH-EMU");
	ex_bytes(EX_PUBKEY, pub, sizeof(pub));
	memcpy(in.pubkey, pub, sizeof(pub));
	n = devsig_attest_encode(in.serial, in.model, pub, msg, sizeof(msg));
	/* A device made before the rotation, and one after. */
	assert_int_equal(devsig_sign(old, msg, n, in.attest, &in.attest_len),
	    0);
	assert_int_equal(devsig_pkey_id(old, in.attest_kid), 0);
	assert_int_equal(devsig_attest_verify(cas, ncas, &in), 1);
	assert_int_equal(devsig_pkey_id(newk, in.attest_kid), 0);
	assert_int_equal(devsig_attest_verify(cas, ncas, &in), 0);
	assert_int_equal(devsig_sign(newk, msg, n, in.attest, &in.attest_len),
	    0);
	assert_int_equal(devsig_attest_verify(cas, ncas, &in), 1);
	/* The old key retired: its devices no longer verify. */
	assert_int_equal(devsig_attest_verify(cas, 1, &in), 1);
	assert_int_equal(devsig_sign(old, msg, n, in.attest, &in.attest_len),
	    0);
	assert_int_equal(devsig_pkey_id(old, in.attest_kid), 0);
	assert_int_equal(devsig_attest_verify(cas, 1, &in), 0);
	devsig_free_cas(cas, ncas);
	EVP_PKEY_free(old);
	EVP_PKEY_free(newk);
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
	/* 2^32 - 1 is the last usable counter; after it, nothing. */
	assert_true(devsig_counter_ok(UINT32_MAX - 1, UINT32_MAX));
	assert_false(devsig_counter_exhausted(UINT32_MAX - 1));
	assert_true(devsig_counter_exhausted(UINT32_MAX));
	assert_true(devsig_counter_exhausted((uint64_t)UINT32_MAX + 5));
	assert_int_equal(uuid_decode(EX_CHALLENGE, id), 0);
	assert_int_equal(id[0], 0x00);
	assert_int_equal(id[15], 0xff);
	uuid_encode(id, s);
	assert_string_equal(s, EX_CHALLENGE);
	assert_int_equal(uuid_decode("00112233-4455-6677-8899-AABBCCDDEEFF",
	    id), 0);
	assert_int_equal(uuid_decode("00112233445566778899aabbccddeeff",
	    id), -1);
	assert_int_equal(uuid_decode("0011223x-4455-6677-8899-aabbccddeeff",
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
		cmocka_unit_test(test_approval_needs_uv),
		cmocka_unit_test(test_v1_signature_refused),
		cmocka_unit_test(test_v2_signature_refused),
		cmocka_unit_test(test_minor_units_signed),
		cmocka_unit_test(test_pubkey_on_curve),
		cmocka_unit_test(test_der_strict_low_s),
		cmocka_unit_test(test_ca_rotation),
		cmocka_unit_test(test_attestation),
		cmocka_unit_test(test_sign_roundtrip_and_domains),
		cmocka_unit_test(test_counter_uuid_fingerprint),
	};

	return (cmocka_run_group_tests_name("device-sig", tests, NULL, NULL));
}
