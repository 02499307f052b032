/* cmocka unit tests of the frame codec, against PROTOCOL.md's examples. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include <cmocka.h>

#include "devframe.h"
#include "examples.h"

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
	assert_int_equal(dev_error_decode((const uint8_t *)"\x09\x00", 2, &e),
	    DEV_ERR_PAYLOAD);
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
	assert_string_equal(in.firmware, "1.0.0");
	assert_int_equal(in.counter, 0);
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
	assert_int_equal(r.counter, 1);
	assert_int_equal(r.sig_len, 72);
	n = dev_result_encode(&r, pl, sizeof(pl));
	assert_memory_equal(pl, f.payload, n);
	frame(EX_RESULT_BUSY, buf, &f);
	assert_int_equal(dev_result_decode(f.payload, f.len, &r2), DEV_OK);
	assert_int_equal(r2.outcome, DEV_OUTCOME_BUSY);
	assert_int_equal(r2.sig_len, 0);
	/* Signed outcomes need a signature, busy must not have one. */
	r2.outcome = DEV_OUTCOME_APPROVED;
	n = dev_result_encode(&r2, pl, sizeof(pl));
	assert_int_equal(dev_result_decode(pl, n, &r2), DEV_ERR_PAYLOAD);
	r.outcome = DEV_OUTCOME_BUSY;
	n = dev_result_encode(&r, pl, sizeof(pl));
	assert_int_equal(dev_result_decode(pl, n, &r2), DEV_ERR_PAYLOAD);
	r.outcome = 9;
	n = dev_result_encode(&r, pl, sizeof(pl));
	assert_int_equal(dev_result_decode(pl, n, &r2), DEV_ERR_PAYLOAD);
	/* A signature length beyond the maximum is refused. */
	pl[21] = DEV_SIG_MAX + 1;
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
	ex_bytes("020100010000", buf, sizeof(buf));
	assert_int_equal(dev_frame_decode(buf, 6, &f), DEV_ERR_VERSION);
	assert_int_equal(f.seq, 1);
	ex_bytes("0101000100050102", buf, sizeof(buf));
	assert_int_equal(dev_frame_decode(buf, 8, &f), DEV_ERR_TRUNCATED);
	ex_bytes("01010001000001", buf, sizeof(buf));
	assert_int_equal(dev_frame_decode(buf, 7, &f), DEV_ERR_OVERSIZED);
	ex_bytes("0101000103fb", buf, sizeof(buf));
	assert_int_equal(dev_frame_decode(buf, 6, &f), DEV_ERR_OVERSIZED);
	/* The largest frame: 1018 bytes of payload, 16 packets. */
	buf[0] = 1;
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

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_ping_info_cancel_error),
		cmocka_unit_test(test_info_answer),
		cmocka_unit_test(test_confirm),
		cmocka_unit_test(test_result),
		cmocka_unit_test(test_malformed_frames),
	};

	return (cmocka_run_group_tests_name("device-frame", tests, NULL,
	    NULL));
}
