/*
 * Device tests under umockdev, in one process: the emulated authenticator
 * and the libusb transport exchange real frames through usbdevfs ioctls.
 * Run under the preload (tests/device/run.sh).
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>
#include <libusb.h>

#include "devframe.h"
#include "devsig.h"
#include "devtest.h"
#include "devusb.h"

#define WAIT_MS		5000

struct answer {
	int			done;
	enum devusb_status	st;
	uint8_t			type;
	uint16_t		seq;
	uint8_t			payload[DEV_PAYLOAD_MAX];
	size_t			len;
};

struct t {
	struct usbemu		*emu;
	EVP_PKEY		*mfr;
	char			*dir;
	struct fw		*fw;
	struct fw		*fw2;
	libusb_context		*ctx;
	struct devusb		*u;
};

static void
on_answer(struct devusb *u, void *arg, enum devusb_status st,
    const struct dev_frame *f)
{
	struct answer	*a = arg;

	(void)u;
	a->done = 1;
	a->st = st;
	if (f != NULL) {
		a->type = f->type;
		a->seq = f->seq;
		a->len = f->len;
		memcpy(a->payload, f->payload, f->len);
	}
}

static void
pump(struct t *t, int ms)
{
	struct timeval	tv = { 0, ms * 1000 };

	libusb_handle_events_timeout_completed(t->ctx, &tv, NULL);
	devusb_collect();
}

static int
wait_answer(struct t *t, struct answer *a)
{
	int64_t	end = devtest_now_ms() + WAIT_MS;

	while (!a->done && devtest_now_ms() < end)
		pump(t, 20);
	return (a->done);
}

static int
wait_pending(struct t *t, struct fw *fw)
{
	int64_t	end = devtest_now_ms() + WAIT_MS;

	while (!fw_pending(fw) && devtest_now_ms() < end)
		pump(t, 10);
	return (fw_pending(fw));
}

static struct devusb *
open_serial(struct t *t, const char *serial)
{
	libusb_device	**list;
	struct devusb	*u = NULL, *c;
	ssize_t		 n, i;
	char		 err[128];

	if ((n = libusb_get_device_list(t->ctx, &list)) < 0)
		return (NULL);
	for (i = 0; i < n && u == NULL; i++) {
		if (!devusb_match(list[i], DEVTEST_VID, DEVTEST_PID))
			continue;
		if ((c = devusb_open(list[i], err, sizeof(err))) == NULL)
			continue;
		if (strcmp(devusb_serial(c), serial) == 0)
			u = c;
		else
			devusb_close(c);
	}
	libusb_free_device_list(list, 1);
	return (u);
}

static int
setup(void **state)
{
	struct t	*t = calloc(1, sizeof(*t));

	assert_non_null(t);
	/* The testbed first: umockdev caches whether it is in a mock. */
	assert_non_null(t->emu = usbemu_new());
	assert_non_null(t->mfr = devtest_manufacturer_key());
	assert_non_null(t->dir = devtest_tmpdir());
	assert_non_null(t->fw = devtest_fw(t->emu, "EMU0001", t->dir, t->mfr));
	assert_int_equal(fw_plug(t->fw), 0);
	assert_int_equal(libusb_init(&t->ctx), 0);
	assert_non_null(t->u = open_serial(t, "EMU0001"));
	*state = t;
	return (0);
}

static int
teardown(void **state)
{
	struct t	*t = *state;
	int		 i;

	if (t->u != NULL)
		devusb_close(t->u);
	for (i = 0; i < 5; i++)
		pump(t, 5);
	libusb_exit(t->ctx);
	usbemu_free(t->emu);
	fw_free(t->fw);
	fw_free(t->fw2);
	EVP_PKEY_free(t->mfr);
	devtest_rmdir(t->dir);
	free(t);
	return (0);
}

static void
request(struct t *t, struct devusb *u, uint8_t type, const uint8_t *p,
    size_t plen, unsigned int timeout_ms, struct answer *a)
{
	memset(a, 0, sizeof(*a));
	assert_int_equal(devusb_request(u, type, p, plen, timeout_ms,
	    on_answer, a), 0);
	(void)t;
}

static void
test_info(void **state)
{
	struct t	*t = *state;
	struct answer	 a;
	struct dev_info	 in;
	EVP_PKEY	*cas[DEVSIG_CA_MAX];
	size_t		 ncas;
	uint8_t		 pub[DEV_PUBKEY_LEN];

	request(t, t->u, DEV_MSG_INFO, NULL, 0, 2000, &a);
	assert_true(wait_answer(t, &a));
	assert_int_equal(a.st, DEVUSB_OK);
	assert_int_equal(a.type, DEV_MSG_INFO_ANSWER);
	assert_int_equal(dev_info_decode(a.payload, a.len, &in), DEV_OK);
	assert_string_equal(in.serial, "EMU0001");
	assert_string_equal(in.model, FW_MODEL);
	assert_string_equal(in.firmware, FW_VERSION);
	fw_pubkey(t->fw, pub);
	assert_memory_equal(in.pubkey, pub, DEV_PUBKEY_LEN);
	assert_int_equal(in.counter, 0);
	assert_int_equal(devsig_load_cas(devtest_ca_path(), cas,
	    DEVSIG_CA_MAX, &ncas), 0);
	assert_int_equal(devsig_attest_verify(cas, ncas, &in), 1);
	/* The attestation binds the serial: another serial fails. */
	in.serial[0] = 'X';
	assert_int_equal(devsig_attest_verify(cas, ncas, &in), 0);
	devsig_free_cas(cas, ncas);
}

static void
test_ping(void **state)
{
	struct t	*t = *state;
	struct answer	 a;
	const uint8_t	 p[] = { 1, 2, 3, 4 };

	request(t, t->u, DEV_MSG_PING, p, sizeof(p), 2000, &a);
	assert_true(wait_answer(t, &a));
	assert_int_equal(a.st, DEVUSB_OK);
	assert_int_equal(a.type, DEV_MSG_PONG);
	assert_int_equal(a.len, sizeof(p));
	assert_memory_equal(a.payload, p, sizeof(p));
}

/* Sends CONFIRM, checks the display, presses a button, checks the result. */
static void
confirm_button(struct t *t, int approve, struct dev_confirm *c,
    struct dev_result *r)
{
	struct answer	a;
	uint8_t		p[DEV_PAYLOAD_MAX];
	size_t		plen;
	char		disp[FW_DISPLAY_MAX];

	devtest_confirm(c, 30);
	assert_true((plen = dev_confirm_encode(c, p, sizeof(p))) > 0);
	request(t, t->u, DEV_MSG_CONFIRM, p, plen, 35000, &a);
	assert_true(wait_pending(t, t->fw));
	fw_display(t->fw, disp, sizeof(disp));
	assert_non_null(strstr(disp, "PAY 12.34 EUR TO Muster GmbH "
	    "DE89370400440532013000"));
	assert_int_equal(approve ? fw_press(t->fw) : fw_decline(t->fw), 0);
	assert_true(wait_answer(t, &a));
	assert_int_equal(a.st, DEVUSB_OK);
	assert_int_equal(a.type, DEV_MSG_RESULT);
	assert_int_equal(dev_result_decode(a.payload, a.len, r), DEV_OK);
	assert_memory_equal(r->challenge, c->challenge, DEV_CHALLENGE_LEN);
}

static void
test_confirm_press(void **state)
{
	struct t		*t = *state;
	struct dev_confirm	 c;
	struct dev_result	 r;
	uint8_t			 pub[DEV_PUBKEY_LEN];

	fw_pubkey(t->fw, pub);
	confirm_button(t, 1, &c, &r);
	assert_int_equal(r.outcome, DEV_OUTCOME_APPROVED);
	assert_int_equal(r.counter, 1);
	assert_int_equal(devsig_confirm_verify(pub, &c, r.outcome, r.counter,
	    r.sig, r.sig_len), 1);
	/* Dynamic linking: another amount, payee or outcome fails. */
	c.amount_minor++;
	assert_int_equal(devsig_confirm_verify(pub, &c, r.outcome, r.counter,
	    r.sig, r.sig_len), 0);
	c.amount_minor--;
	c.payee_iban[5] = '9';
	assert_int_equal(devsig_confirm_verify(pub, &c, r.outcome, r.counter,
	    r.sig, r.sig_len), 0);
	assert_int_equal(fw_pending(t->fw), 0);
	/* The next one carries a higher counter. */
	confirm_button(t, 1, &c, &r);
	assert_int_equal(r.counter, 2);
	assert_true(devsig_counter_ok(1, r.counter));
	assert_int_equal(fw_counter(t->fw), 2);
}

static void
test_confirm_decline(void **state)
{
	struct t		*t = *state;
	struct dev_confirm	 c;
	struct dev_result	 r;
	uint8_t			 pub[DEV_PUBKEY_LEN];

	fw_pubkey(t->fw, pub);
	confirm_button(t, 0, &c, &r);
	assert_int_equal(r.outcome, DEV_OUTCOME_DECLINED);
	assert_int_equal(devsig_confirm_verify(pub, &c, DEV_OUTCOME_DECLINED,
	    r.counter, r.sig, r.sig_len), 1);
	/* A declined answer cannot be passed off as approved. */
	assert_int_equal(devsig_confirm_verify(pub, &c, DEV_OUTCOME_APPROVED,
	    r.counter, r.sig, r.sig_len), 0);
}

static void
test_confirm_timeout(void **state)
{
	struct t		*t = *state;
	struct dev_confirm	 c;
	struct dev_result	 r;
	struct answer		 a;
	uint8_t			 p[DEV_PAYLOAD_MAX], pub[DEV_PUBKEY_LEN];
	size_t			 plen;
	int64_t			 start;

	fw_pubkey(t->fw, pub);
	devtest_confirm(&c, 1);
	plen = dev_confirm_encode(&c, p, sizeof(p));
	start = devtest_now_ms();
	request(t, t->u, DEV_MSG_CONFIRM, p, plen, 3000, &a);
	assert_true(wait_answer(t, &a));
	assert_int_equal(a.st, DEVUSB_OK);
	assert_true(devtest_now_ms() - start >= 900);
	assert_int_equal(dev_result_decode(a.payload, a.len, &r), DEV_OK);
	assert_int_equal(r.outcome, DEV_OUTCOME_TIMED_OUT);
	assert_int_equal(devsig_confirm_verify(pub, &c, r.outcome, r.counter,
	    r.sig, r.sig_len), 1);
	/* A press after the device's own deadline changes nothing. */
	assert_int_equal(fw_press(t->fw), -1);
}

static void
test_unplug_mid_confirmation(void **state)
{
	struct t		*t = *state;
	struct dev_confirm	 c;
	struct answer		 a;
	uint8_t			 p[DEV_PAYLOAD_MAX];
	size_t			 plen;

	devtest_confirm(&c, 30);
	plen = dev_confirm_encode(&c, p, sizeof(p));
	request(t, t->u, DEV_MSG_CONFIRM, p, plen, 35000, &a);
	assert_true(wait_pending(t, t->fw));
	fw_unplug(t->fw);
	assert_true(wait_answer(t, &a));
	assert_int_equal(a.st, DEVUSB_GONE);
}

static void
test_fault_unplugmid(void **state)
{
	struct t		*t = *state;
	struct dev_confirm	 c;
	struct answer		 a;
	uint8_t			 p[DEV_PAYLOAD_MAX];
	size_t			 plen;

	fw_set_fault(t->fw, FW_FAULT_UNPLUG_MID);
	devtest_confirm(&c, 30);
	plen = dev_confirm_encode(&c, p, sizeof(p));
	request(t, t->u, DEV_MSG_CONFIRM, p, plen, 35000, &a);
	assert_true(wait_answer(t, &a));
	assert_int_equal(a.st, DEVUSB_GONE);
	assert_false(fw_plugged(t->fw));
}

struct hot {
	libusb_device	*arrived;
};

static int LIBUSB_CALL
on_hotplug(libusb_context *ctx, libusb_device *dev, libusb_hotplug_event ev,
    void *arg)
{
	struct hot	*h = arg;

	(void)ctx;
	if (ev == LIBUSB_HOTPLUG_EVENT_DEVICE_ARRIVED && h->arrived == NULL)
		h->arrived = libusb_ref_device(dev);
	return (0);
}

static void
test_hotplug_second_while_busy(void **state)
{
	struct t		*t = *state;
	struct fw		*fw2;
	struct hot		 h = { NULL };
	struct devusb		*u2;
	struct dev_confirm	 c;
	struct dev_result	 r;
	struct dev_info		 in;
	struct answer		 a1, a2;
	libusb_hotplug_callback_handle cbh;
	uint8_t			 p[DEV_PAYLOAD_MAX];
	size_t			 plen;
	char			 err[128];
	int64_t			 end;

	assert_true(libusb_has_capability(LIBUSB_CAP_HAS_HOTPLUG));
	assert_int_equal(libusb_hotplug_register_callback(t->ctx,
	    LIBUSB_HOTPLUG_EVENT_DEVICE_ARRIVED, 0, DEVTEST_VID, DEVTEST_PID,
	    LIBUSB_HOTPLUG_MATCH_ANY, on_hotplug, &h, &cbh), 0);
	devtest_confirm(&c, 30);
	plen = dev_confirm_encode(&c, p, sizeof(p));
	request(t, t->u, DEV_MSG_CONFIRM, p, plen, 35000, &a1);
	assert_true(wait_pending(t, t->fw));

	assert_non_null(fw2 = devtest_fw(t->emu, "EMU0002", t->dir, t->mfr));
	t->fw2 = fw2;
	assert_int_equal(fw_plug(fw2), 0);
	end = devtest_now_ms() + WAIT_MS;
	while (h.arrived == NULL && devtest_now_ms() < end)
		pump(t, 20);
	assert_non_null(h.arrived);
	/* umockdev announces the device before its node is ready (as udev
	 * can with real hardware): retry briefly, as psd2-deviced does. */
	end = devtest_now_ms() + WAIT_MS;
	while ((u2 = devusb_open(h.arrived, err, sizeof(err))) == NULL &&
	    devtest_now_ms() < end)
		pump(t, 50);
	assert_non_null(u2);
	libusb_unref_device(h.arrived);
	assert_string_equal(devusb_serial(u2), "EMU0002");
	request(t, u2, DEV_MSG_INFO, NULL, 0, 2000, &a2);
	assert_true(wait_answer(t, &a2));
	assert_int_equal(a2.st, DEVUSB_OK);
	assert_int_equal(dev_info_decode(a2.payload, a2.len, &in), DEV_OK);
	assert_string_equal(in.serial, "EMU0002");
	/* The first device is still waiting for its button, undisturbed. */
	assert_false(a1.done);
	assert_int_equal(fw_press(t->fw), 0);
	assert_true(wait_answer(t, &a1));
	assert_int_equal(a1.st, DEVUSB_OK);
	assert_int_equal(dev_result_decode(a1.payload, a1.len, &r), DEV_OK);
	assert_int_equal(r.outcome, DEV_OUTCOME_APPROVED);
	libusb_hotplug_deregister_callback(t->ctx, cbh);
	devusb_close(u2);
}

/* Raw OUT transfers of broken frames: each gets its defined ERROR. */
static void
raw_exchange(libusb_device_handle *h, const uint8_t *out, int olen,
    uint8_t *in, int *ilen)
{
	int	n = 0;

	assert_int_equal(libusb_bulk_transfer(h, 0x01, (uint8_t *)out, olen,
	    &n, 1000), 0);
	assert_int_equal(n, olen);
	assert_int_equal(libusb_bulk_transfer(h, 0x81, in, DEV_FRAME_MAX, ilen,
	    1000), 0);
}

static void
expect_error(libusb_device_handle *h, const uint8_t *out, int olen,
    uint16_t seq, uint8_t code)
{
	uint8_t			in[DEV_FRAME_MAX];
	int			ilen = 0;
	struct dev_frame	f;
	struct dev_error	e;

	raw_exchange(h, out, olen, in, &ilen);
	assert_int_equal(dev_frame_decode(in, (size_t)ilen, &f), DEV_OK);
	assert_int_equal(f.type, DEV_MSG_ERROR);
	assert_int_equal(f.seq, seq);
	assert_int_equal(dev_error_decode(f.payload, f.len, &e), DEV_OK);
	assert_int_equal(e.code, code);
}

static void
test_bad_frames(void **state)
{
	struct t		*t = *state;
	libusb_device_handle	*h;
	uint8_t			 big[DEV_FRAME_MAX + 8];
	const uint8_t		 badver[] = { 0x02, 0x01, 0x00, 0x07, 0x00, 0x00 };
	const uint8_t		 shorthdr[] = { 0x01, 0x01, 0x00 };
	const uint8_t		 trunc[] = { 0x01, 0x01, 0x00, 0x09, 0x00, 0x05, 1 };
	const uint8_t		 trailing[] = { 0x01, 0x02, 0x00, 0x0a, 0x00, 0x00, 9 };
	const uint8_t		 huge[] = { 0x01, 0x01, 0x00, 0x0b, 0x04, 0x00 };
	const uint8_t		 type[] = { 0x01, 0x42, 0x00, 0x0c, 0x00, 0x00 };
	const uint8_t		 payload[] = { 0x01, 0x03, 0x00, 0x0d, 0x00, 0x01, 0 };
	const uint8_t		 cancel[] = { 0x01, 0x04, 0x00, 0x0e, 0x00, 0x10,
	    1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15, 16 };

	/* The transport's own handle stays open; a second one is allowed. */
	assert_int_equal(libusb_open(devusb_device(t->u), &h), 0);
	expect_error(h, badver, sizeof(badver), 7, DEV_ERR_VERSION);
	expect_error(h, shorthdr, sizeof(shorthdr), 0, DEV_ERR_TRUNCATED);
	expect_error(h, trunc, sizeof(trunc), 9, DEV_ERR_TRUNCATED);
	expect_error(h, trailing, sizeof(trailing), 10, DEV_ERR_OVERSIZED);
	expect_error(h, huge, sizeof(huge), 11, DEV_ERR_OVERSIZED);
	expect_error(h, type, sizeof(type), 12, DEV_ERR_TYPE);
	expect_error(h, payload, sizeof(payload), 13, DEV_ERR_PAYLOAD);
	expect_error(h, cancel, sizeof(cancel), 14, DEV_ERR_NOT_PENDING);
	/* More than a frame can hold (17 packets) is oversized too. */
	memset(big, 0, sizeof(big));
	big[0] = 1;
	big[1] = 1;
	big[3] = 15;
	big[4] = (DEV_PAYLOAD_MAX + 8) >> 8;
	big[5] = (DEV_PAYLOAD_MAX + 8) & 0xff;
	expect_error(h, big, sizeof(big), 15, DEV_ERR_OVERSIZED);
	libusb_close(h);
}

static void
confirm_fault(struct t *t, enum fw_fault fault, unsigned int timeout_ms,
    struct answer *a)
{
	struct dev_confirm	c;
	uint8_t			p[DEV_PAYLOAD_MAX];
	size_t			plen;

	fw_set_fault(t->fw, fault);
	devtest_confirm(&c, 30);
	plen = dev_confirm_encode(&c, p, sizeof(p));
	request(t, t->u, DEV_MSG_CONFIRM, p, plen, timeout_ms, a);
	assert_true(wait_answer(t, a));
}

static void
test_fault_badframe(void **state)
{
	struct t	*t = *state;
	struct answer	 a;

	confirm_fault(t, FW_FAULT_BAD_FRAME, 2000, &a);
	assert_int_equal(a.st, DEVUSB_BAD_FRAME);
}

static void
test_fault_stall(void **state)
{
	struct t	*t = *state;
	struct answer	 a;

	confirm_fault(t, FW_FAULT_STALL, 2000, &a);
	assert_int_equal(a.st, DEVUSB_STALL);
	assert_int_equal(devusb_clear_halt(t->u), 0);
	fw_set_fault(t->fw, FW_FAULT_NONE);
	request(t, t->u, DEV_MSG_PING, NULL, 0, 2000, &a);
	assert_true(wait_answer(t, &a));
	assert_int_equal(a.st, DEVUSB_OK);
	assert_int_equal(a.type, DEV_MSG_PONG);
}

static void
test_fault_noanswer(void **state)
{
	struct t	*t = *state;
	struct answer	 a;
	int64_t		 start = devtest_now_ms();

	confirm_fault(t, FW_FAULT_NO_ANSWER, 300, &a);
	assert_int_equal(a.st, DEVUSB_TIMEOUT);
	assert_true(devtest_now_ms() - start >= 250);
	assert_int_equal(fw_press(t->fw), -1);
}

static void
test_fault_busy_and_cancel(void **state)
{
	struct t		*t = *state;
	struct answer		 a;
	struct dev_result	 r;
	struct dev_confirm	 c;
	uint8_t			 p[DEV_PAYLOAD_MAX];
	size_t			 plen;

	confirm_fault(t, FW_FAULT_BUSY, 2000, &a);
	assert_int_equal(a.st, DEVUSB_OK);
	assert_int_equal(dev_result_decode(a.payload, a.len, &r), DEV_OK);
	assert_int_equal(r.outcome, DEV_OUTCOME_BUSY);
	assert_int_equal(r.sig_len, 0);

	/* CANCEL of a pending confirmation: abort the wait, then cancel. */
	fw_set_fault(t->fw, FW_FAULT_NONE);
	devtest_confirm(&c, 30);
	plen = dev_confirm_encode(&c, p, sizeof(p));
	request(t, t->u, DEV_MSG_CONFIRM, p, plen, 35000, &a);
	assert_true(wait_pending(t, t->fw));
	devusb_abort(t->u);
	assert_true(wait_answer(t, &a));
	assert_int_equal(a.st, DEVUSB_CANCELLED);
	request(t, t->u, DEV_MSG_CANCEL, c.challenge, DEV_CHALLENGE_LEN, 2000,
	    &a);
	assert_true(wait_answer(t, &a));
	assert_int_equal(a.st, DEVUSB_OK);
	assert_int_equal(a.type, DEV_MSG_CANCELLED);
	assert_memory_equal(a.payload, c.challenge, DEV_CHALLENGE_LEN);
	assert_int_equal(fw_pending(t->fw), 0);
}

static void
test_fault_wrongkey_repeatcounter(void **state)
{
	struct t		*t = *state;
	struct dev_confirm	 c;
	struct dev_result	 r1, r2;
	uint8_t			 pub[DEV_PUBKEY_LEN];

	fw_pubkey(t->fw, pub);
	fw_set_fault(t->fw, FW_FAULT_WRONG_KEY);
	confirm_button(t, 1, &c, &r1);
	assert_int_equal(devsig_confirm_verify(pub, &c, r1.outcome,
	    r1.counter, r1.sig, r1.sig_len), 0);

	fw_set_fault(t->fw, FW_FAULT_REPEAT_COUNTER);
	confirm_button(t, 1, &c, &r2);
	/* Validly signed, but the counter did not move: a clone's mark. */
	assert_int_equal(devsig_confirm_verify(pub, &c, r2.outcome,
	    r2.counter, r2.sig, r2.sig_len), 1);
	assert_int_equal(r2.counter, r1.counter);
	assert_false(devsig_counter_ok(r1.counter, r2.counter));
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_setup_teardown(test_info, setup, teardown),
		cmocka_unit_test_setup_teardown(test_ping, setup, teardown),
		cmocka_unit_test_setup_teardown(test_confirm_press, setup,
		    teardown),
		cmocka_unit_test_setup_teardown(test_confirm_decline, setup,
		    teardown),
		cmocka_unit_test_setup_teardown(test_confirm_timeout, setup,
		    teardown),
		cmocka_unit_test_setup_teardown(test_unplug_mid_confirmation,
		    setup, teardown),
		cmocka_unit_test_setup_teardown(test_fault_unplugmid, setup,
		    teardown),
		cmocka_unit_test_setup_teardown(test_hotplug_second_while_busy,
		    setup, teardown),
		cmocka_unit_test_setup_teardown(test_bad_frames, setup,
		    teardown),
		cmocka_unit_test_setup_teardown(test_fault_badframe, setup,
		    teardown),
		cmocka_unit_test_setup_teardown(test_fault_stall, setup,
		    teardown),
		cmocka_unit_test_setup_teardown(test_fault_noanswer, setup,
		    teardown),
		cmocka_unit_test_setup_teardown(test_fault_busy_and_cancel,
		    setup, teardown),
		cmocka_unit_test_setup_teardown(
		    test_fault_wrongkey_repeatcounter, setup, teardown),
	};

	return (cmocka_run_group_tests_name("device-usb", tests, NULL, NULL));
}
