/*
 * cmocka unit tests of the frame codec and its field rules (IBAN, payee
 * name, currency display), against PROTOCOL.md's examples.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "devcur.h"
#include "devframe.h"
#include "devtext.h"
#include "examples.h"
#include "iban.h"

static size_t
frame(const char *hex, uint8_t *buf, struct dev_frame *f)
{
	size_t	n = ex_bytes(hex, buf, DEV_FRAME_MAX + 16);

	assert_int_equal(dev_frame_decode(buf, n, f), DEV_OK);
	return (n);
}

static void
test_ping_info_cancel_error(void **state)
{
	uint8_t			 buf[DEV_FRAME_MAX + 16], out[DEV_FRAME_MAX];
	struct dev_frame	 f;
	struct dev_error	 e;
	uint8_t			 id[DEV_CHALLENGE_LEN];
	size_t			 n;

	(void)state;
	n = frame(EX_PING, buf, &f);
	assert_int_equal(f.type, DEV_MSG_PING);
	assert_int_equal(f.seq, 1);
	assert_int_equal(f.len, 4);
	assert_int_equal(dev_frame_encode(out, sizeof(out), DEV_MSG_PING, 1,
	    f.payload, f.len), n);
	assert_memory_equal(out, buf, n);
	frame(EX_PONG, buf, &f);
	assert_int_equal(f.type, DEV_MSG_PONG);
	frame(EX_INFO, buf, &f);
	assert_int_equal(f.type, DEV_MSG_INFO);
	assert_int_equal(f.seq, 2);
	assert_int_equal(f.len, 0);
	frame(EX_CANCEL, buf, &f);
	assert_int_equal(f.type, DEV_MSG_CANCEL);
	assert_int_equal(dev_cancel_decode(f.payload, f.len, id), DEV_OK);
	assert_int_equal(id[0], 0x00);
	assert_int_equal(id[15], 0xff);
	assert_int_equal(dev_cancel_decode(f.payload, f.len - 1, id),
	    DEV_ERR_PAYLOAD);
	frame(EX_CANCELLED, buf, &f);
	assert_int_equal(f.type, DEV_MSG_CANCELLED);
	frame(EX_ERROR, buf, &f);
	assert_int_equal(f.type, DEV_MSG_ERROR);
	assert_int_equal(f.seq, 0);
	assert_int_equal(dev_error_decode(f.payload, f.len, &e), DEV_OK);
	assert_int_equal(e.code, DEV_ERR_TRUNCATED);
	assert_int_equal(dev_error_decode((const uint8_t *)"\x0b\x00", 2, &e),
	    DEV_ERR_PAYLOAD);
	assert_int_equal(dev_error_decode((const uint8_t *)"\x00\x00", 2, &e),
	    DEV_ERR_PAYLOAD);
	frame(EX_ERROR_CONFLICT, buf, &f);
	assert_int_equal(f.seq, 6);
	assert_int_equal(dev_error_decode(f.payload, f.len, &e), DEV_OK);
	assert_int_equal(e.code, DEV_ERR_CONFLICT);
	assert_int_equal(e.offending_type, DEV_MSG_CONFIRM);
	frame(EX_ERROR_PIN_LOCKED, buf, &f);
	assert_int_equal(dev_error_decode(f.payload, f.len, &e), DEV_OK);
	assert_int_equal(e.code, DEV_ERR_PIN_LOCKED);
	assert_string_equal(dev_error_name(DEV_ERR_PIN_LOCKED), "PIN locked");
	assert_string_equal(dev_error_name(DEV_ERR_EXHAUSTED),
	    "counter exhausted");
	assert_string_equal(dev_error_name(DEV_ERR_CURRENCY),
	    "currency not displayable");
	assert_string_equal(dev_error_name(DEV_ERR_CONFLICT),
	    "challenge changed");
}

static void
test_info_answer(void **state)
{
	uint8_t			 buf[DEV_FRAME_MAX], pl[DEV_PAYLOAD_MAX];
	uint8_t			 pub[DEV_PUBKEY_LEN];
	struct dev_frame	 f;
	struct dev_info		 in;
	size_t			 n;

	(void)state;
	frame(EX_INFO_ANSWER, buf, &f);
	assert_int_equal(f.type, DEV_MSG_INFO_ANSWER);
	assert_int_equal(dev_info_decode(f.payload, f.len, &in), DEV_OK);
	assert_string_equal(in.serial, "EMU0001");
	assert_string_equal(in.model, "PSD2-AUTH-EMU");
	assert_string_equal(in.firmware, "3.0.0");
	assert_int_equal(in.counter, 0);
	assert_int_equal(in.pin_tries, DEV_PIN_TRIES);
	assert_int_equal(in.puk_tries, DEV_PUK_TRIES);
	ex_bytes(EX_CA_KEY_ID, pub, DEV_KEY_ID_LEN);
	assert_memory_equal(in.attest_kid, pub, DEV_KEY_ID_LEN);
	assert_int_equal(in.attest_len, 72);
	ex_bytes(EX_PUBKEY, pub, sizeof(pub));
	assert_memory_equal(in.pubkey, pub, DEV_PUBKEY_LEN);
	n = dev_info_encode(&in, pl, sizeof(pl));
	assert_int_equal(n, f.len);
	assert_memory_equal(pl, f.payload, n);
	/* Every shorter payload is malformed, and so is one byte more. */
	for (n = 0; n < f.len; n++)
		assert_int_equal(dev_info_decode(f.payload, n, &in),
		    DEV_ERR_PAYLOAD);
	memcpy(pl, f.payload, f.len);
	pl[f.len] = 0;
	assert_int_equal(dev_info_decode(pl, f.len + 1, &in), DEV_ERR_PAYLOAD);
	/* PIN and PUK tries beyond their maximum are refused. */
	n = 1 + 7 + 1 + 13 + 1 + 5 + DEV_PUBKEY_LEN + 4;
	pl[n] = DEV_PIN_TRIES + 1;
	assert_int_equal(dev_info_decode(pl, f.len, &in), DEV_ERR_PAYLOAD);
	pl[n] = 0;
	assert_int_equal(dev_info_decode(pl, f.len, &in), DEV_OK);
	assert_int_equal(in.pin_tries, 0);
	pl[n + 1] = DEV_PUK_TRIES + 1;
	assert_int_equal(dev_info_decode(pl, f.len, &in), DEV_ERR_PAYLOAD);
	pl[n + 1] = DEV_PUK_TRIES;
	/* A serial with a space is refused. */
	pl[3] = ' ';
	assert_int_equal(dev_info_decode(pl, f.len, &in), DEV_ERR_PAYLOAD);
}

static void
test_confirm(void **state)
{
	uint8_t			 buf[DEV_FRAME_MAX], pl[DEV_PAYLOAD_MAX];
	struct dev_frame	 f;
	struct dev_confirm	 c, c2;
	size_t			 n;

	(void)state;
	frame(EX_CONFIRM, buf, &f);
	assert_int_equal(f.type, DEV_MSG_CONFIRM);
	assert_int_equal(f.seq, 3);
	assert_int_equal(dev_confirm_decode(f.payload, f.len, &c), DEV_OK);
	assert_int_equal(c.challenge[0], 0x00);
	assert_int_equal(c.challenge[15], 0xff);
	assert_int_equal(c.nonce[31], 0x1f);
	assert_int_equal(c.amount_minor, 1234);
	assert_string_equal(c.currency, "EUR");
	assert_string_equal(c.payee_name, "Muster GmbH");
	assert_string_equal(c.payee_iban, "DE89370400440532013000");
	assert_int_equal(c.timeout_s, 60);
	n = dev_confirm_encode(&c, pl, sizeof(pl));
	assert_int_equal(n, f.len);
	assert_memory_equal(pl, f.payload, n);

	/* Field rules, one at a time. */
	c2 = c; c2.amount_minor = 0;
	n = dev_confirm_encode(&c2, pl, sizeof(pl));
	assert_int_equal(dev_confirm_decode(pl, n, &c2), DEV_ERR_PAYLOAD);
	c2 = c; c2.amount_minor = (uint64_t)INT64_MAX + 1;
	n = dev_confirm_encode(&c2, pl, sizeof(pl));
	assert_int_equal(dev_confirm_decode(pl, n, &c2), DEV_ERR_PAYLOAD);
	c2 = c; memcpy(c2.currency, "eur", 4);
	n = dev_confirm_encode(&c2, pl, sizeof(pl));
	assert_int_equal(dev_confirm_decode(pl, n, &c2), DEV_ERR_PAYLOAD);
	c2 = c; strcpy(c2.payee_iban, "DE8X370400440532013000");
	n = dev_confirm_encode(&c2, pl, sizeof(pl));
	assert_int_equal(dev_confirm_decode(pl, n, &c2), DEV_ERR_PAYLOAD);
	c2 = c; strcpy(c2.payee_iban, "de89370400440532013000");
	n = dev_confirm_encode(&c2, pl, sizeof(pl));
	assert_int_equal(dev_confirm_decode(pl, n, &c2), DEV_ERR_PAYLOAD);
	/* The IBAN's check digits must hold (mod 97). */
	c2 = c; strcpy(c2.payee_iban, "DE88370400440532013000");
	n = dev_confirm_encode(&c2, pl, sizeof(pl));
	assert_int_equal(dev_confirm_decode(pl, n, &c2), DEV_ERR_PAYLOAD);
	c2 = c; strcpy(c2.payee_iban, "DE89370400440532013001");
	n = dev_confirm_encode(&c2, pl, sizeof(pl));
	assert_int_equal(dev_confirm_decode(pl, n, &c2), DEV_ERR_PAYLOAD);
	/* Deceiving payee names (section 5.3.2). */
	c2 = c; strcpy(c2.payee_name, "Muster \xe2\x80\xaeHbmG");	/* RLO */
	n = dev_confirm_encode(&c2, pl, sizeof(pl));
	assert_int_equal(dev_confirm_decode(pl, n, &c2), DEV_ERR_PAYLOAD);
	c2 = c; strcpy(c2.payee_name, "Muster\xe2\x80\x8b GmbH");	/* ZWSP */
	n = dev_confirm_encode(&c2, pl, sizeof(pl));
	assert_int_equal(dev_confirm_decode(pl, n, &c2), DEV_ERR_PAYLOAD);
	c2 = c; strcpy(c2.payee_name, "\xef\xbb\xbfMuster GmbH");	/* BOM */
	n = dev_confirm_encode(&c2, pl, sizeof(pl));
	assert_int_equal(dev_confirm_decode(pl, n, &c2), DEV_ERR_PAYLOAD);
	c2 = c; strcpy(c2.payee_name, "Mu\xcc\x88ller");	/* NFD */
	n = dev_confirm_encode(&c2, pl, sizeof(pl));
	assert_int_equal(dev_confirm_decode(pl, n, &c2), DEV_ERR_PAYLOAD);
	c2 = c; strcpy(c2.payee_name, "Muster GmbH ");
	n = dev_confirm_encode(&c2, pl, sizeof(pl));
	assert_int_equal(dev_confirm_decode(pl, n, &c2), DEV_ERR_PAYLOAD);
	c2 = c; strcpy(c2.payee_name, "Evil\nCorp");
	n = dev_confirm_encode(&c2, pl, sizeof(pl));
	assert_int_equal(dev_confirm_decode(pl, n, &c2), DEV_ERR_PAYLOAD);
	c2 = c; strcpy(c2.payee_name, "Zo\xc3\xab M\xc3\xbcller");
	n = dev_confirm_encode(&c2, pl, sizeof(pl));
	assert_int_equal(dev_confirm_decode(pl, n, &c2), DEV_OK);
	c2 = c; strcpy(c2.payee_name, "overlong \xc0\xaf");
	n = dev_confirm_encode(&c2, pl, sizeof(pl));
	assert_int_equal(dev_confirm_decode(pl, n, &c2), DEV_ERR_PAYLOAD);
	c2 = c; strcpy(c2.payee_name, "cut \xe2\x82");
	n = dev_confirm_encode(&c2, pl, sizeof(pl));
	assert_int_equal(dev_confirm_decode(pl, n, &c2), DEV_ERR_PAYLOAD);
	c2 = c; strcpy(c2.payee_name, "C1 \xc2\x85 control");
	n = dev_confirm_encode(&c2, pl, sizeof(pl));
	assert_int_equal(dev_confirm_decode(pl, n, &c2), DEV_ERR_PAYLOAD);
	c2 = c; c2.payee_name[0] = '\0';
	n = dev_confirm_encode(&c2, pl, sizeof(pl));
	assert_int_equal(dev_confirm_decode(pl, n, &c2), DEV_ERR_PAYLOAD);
	c2 = c; c2.timeout_s = 0;
	n = dev_confirm_encode(&c2, pl, sizeof(pl));
	assert_int_equal(dev_confirm_decode(pl, n, &c2), DEV_ERR_PAYLOAD);
	c2 = c; c2.timeout_s = DEV_TIMEOUT_MAX + 1;
	n = dev_confirm_encode(&c2, pl, sizeof(pl));
	assert_int_equal(dev_confirm_decode(pl, n, &c2), DEV_ERR_PAYLOAD);
	/* A payee name longer than the display allows cannot be encoded. */
	c2 = c; memset(c2.payee_name, 'a', DEV_PAYEE_NAME_MAX);
	c2.payee_name[DEV_PAYEE_NAME_MAX] = '\0';
	assert_true(dev_confirm_encode(&c2, pl, sizeof(pl)) > 0);
	assert_int_equal(dev_confirm_encode(&c2, pl, 20), 0);
}

static void
test_result(void **state)
{
	uint8_t			 buf[DEV_FRAME_MAX], pl[DEV_PAYLOAD_MAX];
	struct dev_frame	 f;
	struct dev_result	 r, r2;
	size_t			 n;

	(void)state;
	frame(EX_RESULT, buf, &f);
	assert_int_equal(f.type, DEV_MSG_RESULT);
	assert_int_equal(dev_result_decode(f.payload, f.len, &r), DEV_OK);
	assert_int_equal(r.outcome, DEV_OUTCOME_APPROVED);
	assert_int_equal(r.flags, DEV_FLAG_UP | DEV_FLAG_UV);
	assert_int_equal(r.counter, 1);
	assert_int_equal(r.sig_len, 70);
	n = dev_result_encode(&r, pl, sizeof(pl));
	assert_memory_equal(pl, f.payload, n);
	frame(EX_RESULT_BUSY, buf, &f);
	assert_int_equal(dev_result_decode(f.payload, f.len, &r2), DEV_OK);
	assert_int_equal(r2.outcome, DEV_OUTCOME_BUSY);
	assert_int_equal(r2.flags, 0);
	assert_int_equal(r2.sig_len, 0);
	/* An approval without UV (or without UP), a decline claiming UV, a
	 * timeout claiming presence: one meaning per outcome, refused. */
	r.flags = DEV_FLAG_UP;
	n = dev_result_encode(&r, pl, sizeof(pl));
	assert_int_equal(dev_result_decode(pl, n, &r2), DEV_ERR_PAYLOAD);
	r.flags = DEV_FLAG_UV;
	n = dev_result_encode(&r, pl, sizeof(pl));
	assert_int_equal(dev_result_decode(pl, n, &r2), DEV_ERR_PAYLOAD);
	r.flags = DEV_FLAG_UP | DEV_FLAG_UV | 0x40;
	n = dev_result_encode(&r, pl, sizeof(pl));
	assert_int_equal(dev_result_decode(pl, n, &r2), DEV_ERR_PAYLOAD);
	r.outcome = DEV_OUTCOME_DECLINED;
	r.flags = DEV_FLAG_UP | DEV_FLAG_UV;
	n = dev_result_encode(&r, pl, sizeof(pl));
	assert_int_equal(dev_result_decode(pl, n, &r2), DEV_ERR_PAYLOAD);
	r.flags = DEV_FLAG_UP;
	n = dev_result_encode(&r, pl, sizeof(pl));
	assert_int_equal(dev_result_decode(pl, n, &r2), DEV_OK);
	r.outcome = DEV_OUTCOME_TIMED_OUT;
	n = dev_result_encode(&r, pl, sizeof(pl));
	assert_int_equal(dev_result_decode(pl, n, &r2), DEV_ERR_PAYLOAD);
	r.flags = 0;
	n = dev_result_encode(&r, pl, sizeof(pl));
	assert_int_equal(dev_result_decode(pl, n, &r2), DEV_OK);
	r.outcome = DEV_OUTCOME_APPROVED;
	r.flags = DEV_FLAG_UP | DEV_FLAG_UV;
	frame(EX_RESULT_BUSY, buf, &f);
	assert_int_equal(dev_result_decode(f.payload, f.len, &r2), DEV_OK);
	/* Signed outcomes need a signature, busy must not have one. */
	r2.outcome = DEV_OUTCOME_APPROVED;
	r2.flags = DEV_FLAG_UP | DEV_FLAG_UV;
	n = dev_result_encode(&r2, pl, sizeof(pl));
	assert_int_equal(dev_result_decode(pl, n, &r2), DEV_ERR_PAYLOAD);
	r.outcome = DEV_OUTCOME_BUSY;
	r.flags = 0;
	n = dev_result_encode(&r, pl, sizeof(pl));
	assert_int_equal(dev_result_decode(pl, n, &r2), DEV_ERR_PAYLOAD);
	r.outcome = 9;
	n = dev_result_encode(&r, pl, sizeof(pl));
	assert_int_equal(dev_result_decode(pl, n, &r2), DEV_ERR_PAYLOAD);
	/* A signature length beyond the maximum is refused. */
	pl[22] = DEV_SIG_MAX + 1;
	assert_int_equal(dev_result_decode(pl, n, &r2), DEV_ERR_PAYLOAD);
	assert_string_equal(dev_outcome_name(DEV_OUTCOME_TIMED_OUT),
	    "timed_out");
}

static void
test_malformed_frames(void **state)
{
	uint8_t			buf[DEV_FRAME_MAX + 8];
	struct dev_frame	f;

	(void)state;
	memset(buf, 0, sizeof(buf));
	assert_int_equal(dev_frame_decode(buf, 0, &f), DEV_ERR_TRUNCATED);
	ex_bytes("010100", buf, sizeof(buf));
	assert_int_equal(dev_frame_decode(buf, 3, &f), DEV_ERR_TRUNCATED);
	ex_bytes("040100010000", buf, sizeof(buf));
	assert_int_equal(dev_frame_decode(buf, 6, &f), DEV_ERR_VERSION);
	assert_int_equal(f.seq, 1);
	ex_bytes("0301000100050102", buf, sizeof(buf));
	assert_int_equal(dev_frame_decode(buf, 8, &f), DEV_ERR_TRUNCATED);
	ex_bytes("03010001000001", buf, sizeof(buf));
	assert_int_equal(dev_frame_decode(buf, 7, &f), DEV_ERR_OVERSIZED);
	ex_bytes("0301000103fb", buf, sizeof(buf));
	assert_int_equal(dev_frame_decode(buf, 6, &f), DEV_ERR_OVERSIZED);
	/* The largest frame: 1018 bytes of payload, 16 packets. */
	buf[0] = DEV_PROTO_VERSION;
	buf[1] = 1;
	buf[4] = DEV_PAYLOAD_MAX >> 8;
	buf[5] = DEV_PAYLOAD_MAX & 0xff;
	assert_int_equal(dev_frame_decode(buf, DEV_FRAME_MAX, &f), DEV_OK);
	assert_int_equal(f.len, DEV_PAYLOAD_MAX);
	assert_int_equal(dev_frame_encode(buf, sizeof(buf), 1, 1, buf,
	    DEV_PAYLOAD_MAX + 1), 0);
	assert_int_equal(dev_frame_encode(buf, 5, 1, 1, NULL, 0), 0);
	assert_string_equal(dev_error_name(DEV_ERR_OVERSIZED),
	    "oversized frame");
}

/* Versions 1 and 2 are withdrawn: every one of their frames is
 * BAD_VERSION. */
static void
test_v1_refused(void **state)
{
	const char	*old[] = { EX1_PING, EX1_PONG, EX1_INFO, EX1_INFO_ANSWER,
	    EX1_CONFIRM, EX1_RESULT, EX1_RESULT_BUSY, EX1_CANCEL,
	    EX1_CANCELLED, EX1_ERROR, EX2_PING, EX2_PONG, EX2_INFO,
	    EX2_INFO_ANSWER, EX2_CONFIRM, EX2_RESULT, EX2_RESULT_BUSY,
	    EX2_CANCEL, EX2_CANCELLED, EX2_ERROR, EX2_ERROR_CONFLICT,
	    EX2_ERROR_PIN_LOCKED };
	uint8_t			buf[DEV_FRAME_MAX];
	struct dev_frame	f;
	size_t			i, n;

	(void)state;
	for (i = 0; i < sizeof(old) / sizeof(old[0]); i++) {
		n = ex_bytes(old[i], buf, sizeof(buf));
		assert_int_equal(buf[0], i < 10 ? 0x01 : 0x02);
		assert_int_equal(dev_frame_decode(buf, n, &f), DEV_ERR_VERSION);
	}
}

static void
test_iban(void **state)
{
	const char	*good[] = { "DE89370400440532013000",
	    "NL91ABNA0417164300", "GB82WEST12345698765432",
	    "BE68539007547034", "MT84MALT011000012345MTLCAST001S",
	    "FR1420041010050500013M02606", "NO9386011117947",
	    "DE98370400440000000042", "DE02370400440000000024" };
	/* Each fails one rule: the sum, the shape, or the check digits
	 * 00, 01, 99 (their sums pass whenever 97, 98 and 02 do). */
	const char	*bad[] = { "DE88370400440532013000",
	    "DE89370400440532013001", "DE89370400440523013000",
	    "de89370400440532013000", "DE89 3704 0044 0532 0130 00",
	    "D889370400440532013000", "DEX9370400440532013000",
	    "DE01370400440000000042", "DE00370400440000000060",
	    "DE99370400440000000024", "DE89", "",
	    "DE8937040044053201300000000000000000",
	    "NL91abna0417164300", "DE89370400440532013000\n" };
	size_t		i;

	(void)state;
	for (i = 0; i < sizeof(good) / sizeof(good[0]); i++) {
		if (!iban_valid(good[i], strlen(good[i])))
			fail_msg("refused %s", good[i]);
	}
	for (i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		if (iban_valid(bad[i], strlen(bad[i])))
			fail_msg("accepted %s", bad[i]);
	}
	assert_false(iban_valid(NULL, 0));
	/* Only the given length counts: no reading past it. */
	assert_true(iban_valid("NL91ABNA0417164300XYZ", 18));
}

static void
expect_amount(uint64_t minor, const char *cur, const char *want)
{
	char	out[DEVCUR_FORMAT_MAX];

	assert_int_equal(devcur_format(minor, cur, out, sizeof(out)),
	    strlen(want));
	assert_string_equal(out, want);
}

static void
test_currency_display(void **state)
{
	char	out[DEVCUR_FORMAT_MAX];

	(void)state;
	/* 1234567 minor units, three minor units. */
	expect_amount(1234567, "EUR", "12 345.67 EUR");
	expect_amount(1234567, "JPY", "1 234 567 JPY");
	expect_amount(1234567, "BHD", "1 234.567 BHD");
	expect_amount(1234, "EUR", "12.34 EUR");
	expect_amount(5, "EUR", "0.05 EUR");
	expect_amount(5, "KWD", "0.005 KWD");
	expect_amount(5, "ISK", "5 ISK");
	expect_amount(100000, "EUR", "1 000.00 EUR");
	expect_amount(99999999999ULL, "EUR", "999 999 999.99 EUR");
	expect_amount(INT64_MAX, "EUR", "92 233 720 368 547 758.07 EUR");
	expect_amount(UINT64_MAX, "JPY",
	    "18 446 744 073 709 551 615 JPY");
	assert_int_equal(devcur_minor_units("EUR"), 2);
	assert_int_equal(devcur_minor_units("JPY"), 0);
	assert_int_equal(devcur_minor_units("BHD"), 3);
	/* Unknown, not displayable, or malformed: refused, never guessed. */
	assert_int_equal(devcur_minor_units("XAU"), -1);
	assert_int_equal(devcur_minor_units("XXX"), -1);
	assert_int_equal(devcur_minor_units("QQQ"), -1);
	assert_int_equal(devcur_minor_units("eur"), -1);
	assert_int_equal(devcur_minor_units("EURO"), -1);
	assert_int_equal(devcur_minor_units(""), -1);
	assert_int_equal(devcur_minor_units(NULL), -1);
	assert_false(devcur_displayable("XAU"));
	assert_true(devcur_displayable("EUR"));
	assert_int_equal(devcur_format(1234567, "QQQ", out, sizeof(out)), 0);
	assert_int_equal(devcur_format(1234567, "EUR", out, 13), 0);
	assert_int_equal(devcur_format(1234567, "EUR", out, 14), 13);
}

/*
 * The display table of PROTOCOL.md 5.3.1 is the code's: every code
 * AAA..ZZZ is displayable exactly when the document lists it, with the
 * document's minor units.
 */
static void
test_currency_table_is_the_document(void **state)
{
	FILE	*fp;
	char	 line[256], code[4], doc[26 * 26 * 26];
	int	 minor, n = 0, i;

	(void)state;
	memset(doc, -1, sizeof(doc));
	assert_non_null(fp = fopen("device/PROTOCOL.md", "r"));
	while (fgets(line, sizeof(line), fp) != NULL) {
		if (sscanf(line, "| %3[A-Z] | %d |", code, &minor) != 2 ||
		    strlen(code) != 3)
			continue;
		doc[((code[0] - 'A') * 26 + code[1] - 'A') * 26 + code[2] -
		    'A'] = (char)minor;
		n++;
	}
	fclose(fp);
	assert_int_equal(n, 23);
	for (i = 0; i < 26 * 26 * 26; i++) {
		code[0] = (char)('A' + i / 676);
		code[1] = (char)('A' + i / 26 % 26);
		code[2] = (char)('A' + i % 26);
		code[3] = '\0';
		if (devcur_minor_units(code) != doc[i])
			fail_msg("%s: code says %d, PROTOCOL.md %d", code,
			    devcur_minor_units(code), doc[i]);
	}
}

static void
expect_name(const char *in, int rc, const char *want)
{
	char	out[DEVTEXT_PAYEE_MAX + 1];
	size_t	n;

	if (devtext_payee_normalize(in, strlen(in), out, sizeof(out), &n) !=
	    rc)
		fail_msg("%s: not %s", in, devtext_error(rc));
	if (rc == DEVTEXT_OK) {
		assert_string_equal(out, want);
		assert_int_equal(n, strlen(want));
		assert_true(devtext_payee_ok(out, n));
	} else {
		assert_string_equal(out, "");
	}
}

static void
test_payee_names(void **state)
{
	char	seventy[DEVTEXT_PAYEE_MAX + 2];

	(void)state;
	assert_true(devtext_payee_ok("Muster GmbH", 11));
	assert_true(devtext_payee_ok("Zo\xc3\xab M\xc3\xbcller", 12));
	assert_true(devtext_payee_ok("\xc8\x98tefan \xc8\x9aurcanu", 16));
	assert_true(devtext_payee_ok("O'Brien & Co. (Ltd.), 1/2", 25));
	assert_false(devtext_payee_ok("", 0));
	assert_false(devtext_payee_ok(NULL, 3));
	/* Already NFC, changed by nothing. */
	expect_name("Zo\xc3\xab M\xc3\xbcller", DEVTEXT_OK,
	    "Zo\xc3\xab M\xc3\xbcller");
	/* NFD in, NFC out; the Kelvin and Angstrom signs are K and A-ring. */
	expect_name("Zoe\xcc\x88 Mu\xcc\x88ller", DEVTEXT_OK,
	    "Zo\xc3\xab M\xc3\xbcller");
	expect_name("S\xcc\xa6tefan", DEVTEXT_OK, "\xc8\x98tefan");
	expect_name("\xe2\x84\xaa" "elvin \xe2\x84\xab", DEVTEXT_OK,
	    "Kelvin \xc3\x85");
	expect_name("a\xcd\x81", DEVTEXT_OK, "\xc3\xa1");
	/* Names that deceive the reader, each refused. */
	expect_name("Muster \xe2\x80\xaeHbmG", DEVTEXT_CHAR, NULL);	/* RLO */
	expect_name("Muster \xe2\x81\xa6GmbH", DEVTEXT_CHAR, NULL);	/* LRI */
	expect_name("Mus\xe2\x80\x8bter", DEVTEXT_CHAR, NULL);	/* ZWSP */
	expect_name("Mus\xe2\x80\x8dter", DEVTEXT_CHAR, NULL);	/* ZWJ */
	expect_name("\xef\xbb\xbfMuster", DEVTEXT_CHAR, NULL);	/* BOM */
	expect_name("Muster\xef\xbf\xbe", DEVTEXT_CHAR, NULL);	/* U+FFFE */
	expect_name("Muster\xef\xb7\x90", DEVTEXT_CHAR, NULL);	/* U+FDD0 */
	expect_name("Muster\xf4\x8f\xbf\xbf", DEVTEXT_CHAR, NULL);
	expect_name("Mu\xcc\xa3ster", DEVTEXT_CHAR, NULL);	/* dot below */
	expect_name("e\xcc\x81\xcc\x81", DEVTEXT_CHAR, NULL);	/* two marks */
	expect_name("\xcc\x81Muster", DEVTEXT_CHAR, NULL);	/* mark first */
	expect_name("Mu\xc2\xadster", DEVTEXT_CHAR, NULL);	/* soft hyphen */
	expect_name("Muster\xc2\xa0GmbH", DEVTEXT_CHAR, NULL);	/* NBSP */
	expect_name("\xd0\x90pple", DEVTEXT_CHAR, NULL);	/* Cyrillic A */
	expect_name("Muster\tGmbH", DEVTEXT_CHAR, NULL);
	expect_name("Muster\xc2\x85", DEVTEXT_CHAR, NULL);	/* C1 NEL */
	expect_name("Muster\x7f", DEVTEXT_CHAR, NULL);
	expect_name("Muster\xee\x80\x80", DEVTEXT_CHAR, NULL);	/* private */
	/* Malformed UTF-8: overlong, surrogate, cut, stray continuation. */
	expect_name("Mu\xc0\xafster", DEVTEXT_UTF8, NULL);
	expect_name("Mu\xed\xa0\x80ster", DEVTEXT_UTF8, NULL);
	expect_name("Muster\xc3", DEVTEXT_UTF8, NULL);
	expect_name("Mu\x80ster", DEVTEXT_UTF8, NULL);
	expect_name("Mu\xf5\x80\x80\x80", DEVTEXT_UTF8, NULL);
	/* Spaces that read as nothing. */
	expect_name(" Muster", DEVTEXT_SPACE, NULL);
	expect_name("Muster ", DEVTEXT_SPACE, NULL);
	expect_name("Muster  GmbH", DEVTEXT_SPACE, NULL);
	expect_name(" ", DEVTEXT_SPACE, NULL);
	/* 70 bytes after NFC: 70 precomposed two-byte letters do not fit,
	 * 35 do, even when they came in as 105 bytes of NFD. */
	memset(seventy, 'a', DEVTEXT_PAYEE_MAX);
	seventy[DEVTEXT_PAYEE_MAX] = '\0';
	expect_name(seventy, DEVTEXT_OK, seventy);
	seventy[DEVTEXT_PAYEE_MAX] = 'a';
	seventy[DEVTEXT_PAYEE_MAX + 1] = '\0';
	expect_name(seventy, DEVTEXT_LENGTH, NULL);
	expect_name("", DEVTEXT_LENGTH, NULL);
	{
		char	nfd[200], nfc[80];
		size_t	i;

		for (i = 0; i < 35; i++) {
			memcpy(nfd + 3 * i, "e\xcc\x81", 3);
			memcpy(nfc + 2 * i, "\xc3\xa9", 2);
		}
		nfd[105] = '\0';
		nfc[70] = '\0';
		expect_name(nfd, DEVTEXT_OK, nfc);
		memcpy(nfd + 105, "e", 2);
		expect_name(nfd, DEVTEXT_LENGTH, NULL);
	}
}

/*
 * Version 3's display rules (PROTOCOL.md 5.3.2): the payee name
 * that showed a second IBAN, each label, IBAN and amount look-alikes,
 * folded letters; real names with a few digits stay allowed.
 */
static void
test_payee_display_rules(void **state)
{
	(void)state;
	expect_name("Muster GmbH IBAN GB82 WEST 1234 5698 7654 32",
	    DEVTEXT_LABEL, NULL);
	expect_name("Muster GmbH DE89 3704", DEVTEXT_NUMBER, NULL);
	expect_name("Muster gb82west", DEVTEXT_NUMBER, NULL);
	expect_name("Muster 20 000.00 EUR", DEVTEXT_NUMBER, NULL);
	expect_name("Muster 9,99", DEVTEXT_NUMBER, NULL);
	expect_name("Muster 12345", DEVTEXT_NUMBER, NULL);
	expect_name("Muster 1\xc2\xb2\xc2\xb3\xc2\xb9 9", DEVTEXT_NUMBER,
	    NULL);					/* superscripts */
	expect_name("Muster iban", DEVTEXT_LABEL, NULL);
	expect_name("Amount: Muster", DEVTEXT_LABEL, NULL);
	expect_name("Pay Muster", DEVTEXT_LABEL, NULL);
	expect_name("PAYEE-Muster", DEVTEXT_LABEL, NULL);
	expect_name("Muster PIN OK", DEVTEXT_LABEL, NULL);
	expect_name("\xc4\xb1" "BAN Muster", DEVTEXT_LABEL, NULL); /* dotless i */
	expect_name("\xc3\x8d" "BAN Muster", DEVTEXT_LABEL, NULL);	/* I acute */
	expect_name("Ib\xc3\xa1n Muster", DEVTEXT_LABEL, NULL);	/* a acute */
	expect_name("Ib\xc3\xa1n\xcc\x83" "ez", DEVTEXT_OK,
	    "Ib\xc3\xa1\xc3\xb1" "ez");			/* NFD n tilde */
	/* A label word and an IBAN run: the label decides (the order). */
	expect_name("IBAN DE89", DEVTEXT_LABEL, NULL);
	/* Space before the display rules, character before space. */
	expect_name("IBAN  DE89", DEVTEXT_SPACE, NULL);
	expect_name("IBAN \xe2\x80\xae DE89 ", DEVTEXT_CHAR, NULL);
	expect_name("Ibanez & Pinto", DEVTEXT_OK, "Ibanez & Pinto");
	expect_name("PayPal Europe", DEVTEXT_OK, "PayPal Europe");
	expect_name("7-Eleven Ltd.", DEVTEXT_OK, "7-Eleven Ltd.");
	expect_name("7-Eleven 2024 Ltd.", DEVTEXT_NUMBER, NULL);
	expect_name("3M Deutschland GmbH", DEVTEXT_OK, "3M Deutschland GmbH");
	expect_name("Studio 54, Bar", DEVTEXT_OK, "Studio 54, Bar");
	expect_name("AB 12 GmbH", DEVTEXT_OK, "AB 12 GmbH");
	/* PROTOCOL.md section 9's table of names, row by row. */
	expect_name("Muster GmbH IBAN GB82 WEST", DEVTEXT_LABEL, NULL);
	expect_name("\xc4\xb1" "BAN Muster", DEVTEXT_LABEL, NULL);
	expect_name("Muster DE89", DEVTEXT_NUMBER, NULL);
	expect_name("Muster 9.99 EUR", DEVTEXT_NUMBER, NULL);
	expect_name("Muster 12345", DEVTEXT_NUMBER, NULL);
	expect_name("IBAN  DE89", DEVTEXT_SPACE, NULL);
	expect_name("Ibanez & Pinto", DEVTEXT_OK, "Ibanez & Pinto");
	/* The device's check is the same rule. */
	assert_false(devtext_payee_ok("Muster IBAN", 11));
	assert_false(devtext_payee_ok("Muster DE89", 11));
	assert_false(devtext_payee_ok("Muster 1.50", 11));
	assert_true(devtext_payee_ok("Ibanez 2024", 11));
}

/*
 * tests/device/devtext_vectors.py (Python's unicodedata and the rules
 * written out again): every code point, and random strings of marks in
 * every order. $PSD2_DEVTEXT_VECTORS names the file (run.sh makes it).
 */
static void
test_payee_vectors(void **state)
{
	FILE		*fp;
	const char	*path = getenv("PSD2_DEVTEXT_VECTORS");
	char		 line[512], in[256], want[256], out[DEVTEXT_PAYEE_MAX + 1];
	char		 hin[512], hwant[512];
	size_t		 inlen, wantlen, n, lines = 0, ok = 0;
	int		 rc;

	(void)state;
	if (path == NULL)
		fail_msg("PSD2_DEVTEXT_VECTORS not set (tests/device/run.sh)");
	assert_non_null(fp = fopen(path, "r"));
	while (fgets(line, sizeof(line), fp) != NULL) {
		if (sscanf(line, "%511s %511s", hin, hwant) != 2)
			fail_msg("bad vector line %zu", lines);
		inlen = ex_bytes(hin, (uint8_t *)in, sizeof(in));
		rc = devtext_payee_normalize(in, inlen, out, sizeof(out), &n);
		if (strcmp(hwant, "-") == 0) {
			if (rc == DEVTEXT_OK)
				fail_msg("accepted %s", hin);
		} else {
			wantlen = ex_bytes(hwant, (uint8_t *)want,
			    sizeof(want));
			if (rc != DEVTEXT_OK || n != wantlen ||
			    memcmp(out, want, n) != 0)
				fail_msg("%s: want %s", hin, hwant);
			/* The device accepts exactly the NFC result... */
			if (!devtext_payee_ok(out, n))
				fail_msg("device refuses %s", hwant);
			ok++;
		}
		/* ...and accepts input only where it is its own NFC. */
		if (devtext_payee_ok(in, inlen) != (rc == DEVTEXT_OK &&
		    n == inlen && memcmp(out, in, n) == 0))
			fail_msg("payee_ok disagrees on %s", hin);
		lines++;
	}
	fclose(fp);
	assert_true(lines > 1100000);
	assert_true(ok > 700);
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_ping_info_cancel_error),
		cmocka_unit_test(test_info_answer),
		cmocka_unit_test(test_confirm),
		cmocka_unit_test(test_result),
		cmocka_unit_test(test_malformed_frames),
		cmocka_unit_test(test_v1_refused),
		cmocka_unit_test(test_iban),
		cmocka_unit_test(test_currency_display),
		cmocka_unit_test(test_currency_table_is_the_document),
		cmocka_unit_test(test_payee_names),
		cmocka_unit_test(test_payee_display_rules),
		cmocka_unit_test(test_payee_vectors),
	};

	return (cmocka_run_group_tests_name("device-frame", tests, NULL,
	    NULL));
}
