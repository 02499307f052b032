/*
 * Device tests under umockdev, in one process: the emulated authenticator
 * and the libusb transport exchange real frames through usbdevfs ioctls.
 * Run under the preload (tests/device/run.sh).
 */
#include <sys/socket.h>
#include <sys/stat.h>

#include <linux/netlink.h>

#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

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
	assert_string_equal(disp, "AMOUNT 12.34 EUR\nPAYEE Muster GmbH\n"
	    "IBAN DE89 3704 0044 0532 0130 00\nENTER PIN [decline]");
	assert_int_equal(approve ? devtest_approve(t->fw) :
	    fw_decline(t->fw), 0);
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
	assert_int_equal(r.flags, DEV_FLAG_UP | DEV_FLAG_UV);
	assert_int_equal(r.counter, 1);
	assert_true(devsig_der_ok(r.sig, r.sig_len, 1));
	assert_int_equal(devsig_approval_verify(pub, &c, r.counter, r.sig,
	    r.sig_len), 1);
	/* Dynamic linking: another amount, payee or outcome fails. */
	c.amount_minor++;
	assert_int_equal(devsig_approval_verify(pub, &c, r.counter, r.sig,
	    r.sig_len), 0);
	c.amount_minor--;
	c.payee_iban[5] = '9';
	assert_int_equal(devsig_approval_verify(pub, &c, r.counter, r.sig,
	    r.sig_len), 0);
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
	assert_int_equal(r.flags, DEV_FLAG_UP);
	assert_int_equal(devsig_confirm_verify(pub, &c, DEV_OUTCOME_DECLINED,
	    DEV_FLAG_UP, r.counter, r.sig, r.sig_len), 1);
	/* A declined answer cannot be passed off as approved. */
	assert_int_equal(devsig_approval_verify(pub, &c, r.counter, r.sig,
	    r.sig_len), 0);
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
	assert_int_equal(r.flags, 0);
	assert_int_equal(devsig_confirm_verify(pub, &c, r.outcome, 0,
	    r.counter, r.sig, r.sig_len), 1);
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
	assert_int_equal(devtest_approve(t->fw), 0);
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

/* Finds "KEY=value" among a uevent's NUL-separated properties. */
static const char *
uevent_prop(const char *msg, size_t len, const char *key)
{
	size_t	klen = strlen(key), i;

	for (i = 0; i < len; i += strlen(msg + i) + 1) {
		if (strncmp(msg + i, key, klen) == 0 && msg[i + klen] == '=')
			return (msg + i + klen + 1);
	}
	return (NULL);
}

/*
 * umockdev announces a record as soon as it is added, while its node is
 * still a regular file: a host that opened the device on that
 * announcement polled the regular file in a busy loop for as long as it
 * kept the device (UMOCKDEV.md trap 8). Hosts (libusb's hot-plug and
 * enumeration) take only usb_device events: exactly one per plug, and
 * the node is a FIFO by then.
 */
static void
test_plug_announced_when_ready(void **state)
{
	struct t		*t = *state;
	struct sockaddr_nl	 nl = { .nl_family = AF_NETLINK, .nl_groups = 2 };
	struct stat		 st;
	char			 msg[8192], node[512];
	const char		*action, *type, *name;
	ssize_t			 n;
	int			 fd, adds = 0;

	fd = socket(AF_NETLINK, SOCK_RAW | SOCK_CLOEXEC | SOCK_NONBLOCK,
	    NETLINK_KOBJECT_UEVENT);
	assert_true(fd >= 0);
	assert_int_equal(bind(fd, (struct sockaddr *)&nl, sizeof(nl)), 0);
	assert_non_null(t->fw2 = devtest_fw(t->emu, "EMU0002", t->dir,
	    t->mfr));
	assert_int_equal(fw_plug(t->fw2), 0);
	/* The testbed sends its uevents before the plug returns. */
	while ((n = recv(fd, msg, sizeof(msg) - 1, 0)) > 0) {
		msg[n] = '\0';
		action = uevent_prop(msg, (size_t)n, "ACTION");
		type = uevent_prop(msg, (size_t)n, "DEVTYPE");
		if (action == NULL || strcmp(action, "add") != 0 ||
		    type == NULL || strcmp(type, "usb_device") != 0)
			continue;
		adds++;
		assert_non_null(name = uevent_prop(msg, (size_t)n, "DEVNAME"));
		snprintf(node, sizeof(node), "%s/dev/%s",
		    usbemu_root(t->emu), name);
		assert_int_equal(lstat(node, &st), 0);
		assert_true(S_ISFIFO(st.st_mode));
	}
	assert_true(n == -1 && errno == EAGAIN);
	assert_int_equal(adds, 1);
	close(fd);
}

static void
test_bad_frames(void **state)
{
	struct t		*t = *state;
	libusb_device_handle	*h;
	uint8_t			 big[DEV_FRAME_MAX + 8];
	/* Version 1 and 2 frames are refused as versions it does not speak. */
	const uint8_t		 badver[] = { 0x01, 0x01, 0x00, 0x07, 0x00, 0x00 };
	const uint8_t		 badver2[] = { 0x02, 0x01, 0x00, 0x08, 0x00, 0x00 };
	const uint8_t		 shorthdr[] = { 0x03, 0x01, 0x00 };
	const uint8_t		 trunc[] = { 0x03, 0x01, 0x00, 0x09, 0x00, 0x05, 1 };
	const uint8_t		 trailing[] = { 0x03, 0x02, 0x00, 0x0a, 0x00, 0x00, 9 };
	const uint8_t		 huge[] = { 0x03, 0x01, 0x00, 0x0b, 0x04, 0x00 };
	const uint8_t		 type[] = { 0x03, 0x42, 0x00, 0x0c, 0x00, 0x00 };
	const uint8_t		 payload[] = { 0x03, 0x03, 0x00, 0x0d, 0x00, 0x01, 0 };
	const uint8_t		 cancel[] = { 0x03, 0x04, 0x00, 0x0e, 0x00, 0x10,
	    1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15, 16 };

	/* The transport's own handle stays open; a second one is allowed. */
	assert_int_equal(libusb_open(devusb_device(t->u), &h), 0);
	expect_error(h, badver, sizeof(badver), 7, DEV_ERR_VERSION);
	expect_error(h, badver2, sizeof(badver2), 8, DEV_ERR_VERSION);
	expect_error(h, shorthdr, sizeof(shorthdr), 0, DEV_ERR_TRUNCATED);
	expect_error(h, trunc, sizeof(trunc), 9, DEV_ERR_TRUNCATED);
	expect_error(h, trailing, sizeof(trailing), 10, DEV_ERR_OVERSIZED);
	expect_error(h, huge, sizeof(huge), 11, DEV_ERR_OVERSIZED);
	expect_error(h, type, sizeof(type), 12, DEV_ERR_TYPE);
	expect_error(h, payload, sizeof(payload), 13, DEV_ERR_PAYLOAD);
	expect_error(h, cancel, sizeof(cancel), 14, DEV_ERR_NOT_PENDING);
	/* More than a frame can hold (17 packets) is oversized too. */
	memset(big, 0, sizeof(big));
	big[0] = DEV_PROTO_VERSION;
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
	assert_int_equal(devsig_approval_verify(pub, &c, r1.counter, r1.sig,
	    r1.sig_len), 0);

	fw_set_fault(t->fw, FW_FAULT_REPEAT_COUNTER);
	confirm_button(t, 1, &c, &r2);
	/* Validly signed, but the counter did not move: a clone's mark. */
	assert_int_equal(devsig_approval_verify(pub, &c, r2.counter, r2.sig,
	    r2.sig_len), 1);
	assert_int_equal(r2.counter, r1.counter);
	assert_false(devsig_counter_ok(r1.counter, r2.counter));
}

/* Raw frames through a second handle, to see every answer in order. */
static void
raw_send(libusb_device_handle *h, uint8_t type, uint16_t seq,
    const uint8_t *p, size_t plen)
{
	uint8_t	frame[DEV_FRAME_MAX];
	size_t	len;
	int	n = 0;

	assert_true((len = dev_frame_encode(frame, sizeof(frame), type, seq,
	    p, plen)) > 0);
	assert_int_equal(libusb_bulk_transfer(h, 0x01, frame, (int)len, &n,
	    1000), 0);
	assert_int_equal(n, (int)len);
}

static void
raw_confirm(libusb_device_handle *h, uint16_t seq,
    const struct dev_confirm *c)
{
	uint8_t	p[DEV_PAYLOAD_MAX];
	size_t	plen;

	assert_true((plen = dev_confirm_encode(c, p, sizeof(p))) > 0);
	raw_send(h, DEV_MSG_CONFIRM, seq, p, plen);
}

/* The next answer: its frame in f (payload in buf), or 0 on timeout. */
static int
raw_recv(libusb_device_handle *h, uint8_t *buf, struct dev_frame *f,
    unsigned int ms)
{
	int	n = 0, rc;

	rc = libusb_bulk_transfer(h, 0x81, buf, DEV_FRAME_MAX + 64, &n, ms);
	if (rc == LIBUSB_ERROR_TIMEOUT)
		return (0);
	assert_int_equal(rc, 0);
	assert_int_equal(dev_frame_decode(buf, (size_t)n, f), DEV_OK);
	return (1);
}

static void
raw_expect_error(libusb_device_handle *h, uint16_t seq, uint8_t code)
{
	uint8_t			buf[DEV_FRAME_MAX + 64];
	struct dev_frame	f;
	struct dev_error	e;

	assert_true(raw_recv(h, buf, &f, 2000));
	assert_int_equal(f.type, DEV_MSG_ERROR);
	assert_int_equal(f.seq, seq);
	assert_int_equal(dev_error_decode(f.payload, f.len, &e), DEV_OK);
	assert_int_equal(e.code, code);
}

static void
raw_expect_result(libusb_device_handle *h, uint16_t seq,
    struct dev_result *r)
{
	uint8_t			buf[DEV_FRAME_MAX + 64];
	struct dev_frame	f;

	assert_true(raw_recv(h, buf, &f, 2000));
	assert_int_equal(f.type, DEV_MSG_RESULT);
	assert_int_equal(f.seq, seq);
	assert_int_equal(dev_result_decode(f.payload, f.len, r), DEV_OK);
}

static void
wait_pending_raw(struct fw *fw, int want)
{
	int64_t	end = devtest_now_ms() + WAIT_MS;

	while (fw_pending(fw) != want && devtest_now_ms() < end)
		usleep(5000);
	assert_int_equal(fw_pending(fw), want);
}

/*
 * What a dead device reports (4.4): INFO with 0 PIN and 0 PUK tries,
 * ERROR PIN_LOCKED to every CONFIRM, PING and CANCEL answered as usual;
 * PINs and PUKs are refused and not counted.
 */
static void
dead_device_reports(struct t *t, libusb_device_handle *h)
{
	uint8_t			buf[DEV_FRAME_MAX + 64], id[DEV_CHALLENGE_LEN];
	struct dev_frame	f;
	struct dev_info		in;
	struct dev_confirm	c;

	raw_send(h, DEV_MSG_INFO, 0x30, NULL, 0);
	assert_true(raw_recv(h, buf, &f, 2000));
	assert_int_equal(f.type, DEV_MSG_INFO_ANSWER);
	assert_int_equal(dev_info_decode(f.payload, f.len, &in), DEV_OK);
	assert_int_equal(in.pin_tries, 0);
	assert_int_equal(in.puk_tries, 0);
	devtest_confirm(&c, 30);
	raw_confirm(h, 0x31, &c);
	raw_expect_error(h, 0x31, DEV_ERR_PIN_LOCKED);
	assert_int_equal(fw_pending(t->fw), 0);
	raw_send(h, DEV_MSG_PING, 0x32, (const uint8_t *)"ok", 2);
	assert_true(raw_recv(h, buf, &f, 2000));
	assert_int_equal(f.type, DEV_MSG_PONG);
	memcpy(id, c.challenge, sizeof(id));
	raw_send(h, DEV_MSG_CANCEL, 0x33, id, sizeof(id));
	raw_expect_error(h, 0x33, DEV_ERR_NOT_PENDING);
	assert_int_equal(fw_pin(t->fw, FW_DEFAULT_PIN), FW_PIN_DEAD);
	assert_int_equal(fw_pin_tries(t->fw), 0);
}

/*
 * Knowledge: the confirm button needs the PIN; a correct PIN resets the
 * retry counter; the fifth wrong one in a row locks the device, ends the
 * challenge with ERROR PIN_LOCKED, and survives a power cycle. Staff
 * reset it with the PUK; ten wrong PUKs kill the device for good.
 */
static void
test_pin_retry_counter(void **state)
{
	struct t		*t = *state;
	libusb_device_handle	*h;
	struct dev_confirm	 c;
	struct dev_result	 r;
	struct fw		*again;
	uint8_t			 pub[DEV_PUBKEY_LEN];
	char			 disp[FW_DISPLAY_MAX];
	int			 i;

	fw_pubkey(t->fw, pub);
	assert_int_equal(libusb_open(devusb_device(t->u), &h), 0);
	assert_int_equal(fw_pin(t->fw, FW_DEFAULT_PIN), FW_PIN_NOTHING);
	devtest_confirm(&c, 30);
	raw_confirm(h, 0x20, &c);
	wait_pending_raw(t->fw, 1);
	assert_int_equal(fw_press(t->fw), -2);
	assert_int_equal(fw_pin(t->fw, "12a4"), FW_PIN_FORMAT);
	assert_int_equal(fw_pin(t->fw, "123"), FW_PIN_FORMAT);
	assert_int_equal(fw_pin_tries(t->fw), DEV_PIN_TRIES);
	for (i = 1; i < DEV_PIN_TRIES; i++) {
		assert_int_equal(fw_pin(t->fw, "9999"), FW_PIN_WRONG);
		assert_int_equal(fw_pin_tries(t->fw), DEV_PIN_TRIES - i);
	}
	fw_display(t->fw, disp, sizeof(disp));
	assert_non_null(strstr(disp, "WRONG PIN, 1 TRIES LEFT [decline]"));
	assert_int_equal(fw_pin(t->fw, FW_DEFAULT_PIN), FW_PIN_OK);
	assert_int_equal(fw_pin_tries(t->fw), DEV_PIN_TRIES);
	/* Once right, the keypad takes nothing more for this challenge:
	 * a wrong PIN now is not counted (4.4, corner cases). */
	assert_int_equal(fw_pin(t->fw, "9999"), FW_PIN_NOTHING);
	assert_int_equal(fw_pin_tries(t->fw), DEV_PIN_TRIES);
	/* A PUK while the PIN is not locked: not taken, PIN unchanged. */
	assert_int_equal(fw_unlock(t->fw, FW_DEFAULT_PUK, "4321"),
	    FW_PIN_NOTHING);
	assert_int_equal(fw_press(t->fw), 0);
	raw_expect_result(h, 0x20, &r);
	assert_int_equal(devsig_approval_verify(pub, &c, r.counter, r.sig,
	    r.sig_len), 1);

	devtest_confirm(&c, 30);
	raw_confirm(h, 0x21, &c);
	wait_pending_raw(t->fw, 1);
	for (i = 1; i < DEV_PIN_TRIES; i++)
		assert_int_equal(fw_pin(t->fw, "9999"), FW_PIN_WRONG);
	assert_int_equal(fw_pin(t->fw, "9999"), FW_PIN_LOCKED);
	raw_expect_error(h, 0x21, DEV_ERR_PIN_LOCKED);
	assert_int_equal(fw_pending(t->fw), 0);
	assert_int_equal(fw_pin(t->fw, FW_DEFAULT_PIN), FW_PIN_LOCKED);
	fw_display(t->fw, disp, sizeof(disp));
	assert_true(strncmp(disp, "LOCKED EMU0001", 14) == 0);
	/* Non-volatile: the same device's memory, read afresh. */
	assert_non_null(again = devtest_fw(t->emu, "EMU0001", t->dir, t->mfr));
	t->fw2 = again;
	assert_int_equal(fw_pin_tries(again), 0);
	devtest_confirm(&c, 30);
	raw_confirm(h, 0x22, &c);
	raw_expect_error(h, 0x22, DEV_ERR_PIN_LOCKED);
	/* The host cannot reset it: the PUK is entered on the device. */
	assert_int_equal(fw_unlock(t->fw, "1234567", "4321"), FW_PIN_FORMAT);
	assert_int_equal(fw_unlock(t->fw, "00000000", "4321"), FW_PIN_WRONG);
	assert_int_equal(fw_unlock(t->fw, FW_DEFAULT_PUK, "4321"), FW_PIN_OK);
	assert_int_equal(fw_unlock(t->fw, FW_DEFAULT_PUK, "4321"),
	    FW_PIN_NOTHING);
	devtest_confirm(&c, 30);
	raw_confirm(h, 0x23, &c);
	wait_pending_raw(t->fw, 1);
	assert_int_equal(fw_pin(t->fw, FW_DEFAULT_PIN), FW_PIN_WRONG);
	assert_int_equal(fw_pin(t->fw, "4321"), FW_PIN_OK);
	assert_int_equal(fw_press(t->fw), 0);
	raw_expect_result(h, 0x23, &r);
	assert_int_equal(devsig_approval_verify(pub, &c, r.counter, r.sig,
	    r.sig_len), 1);

	/* Locked again, then ten wrong PUKs: dead, whatever comes next. */
	devtest_confirm(&c, 30);
	raw_confirm(h, 0x24, &c);
	wait_pending_raw(t->fw, 1);
	for (i = 0; i < DEV_PIN_TRIES; i++)
		(void)fw_pin(t->fw, "9999");
	raw_expect_error(h, 0x24, DEV_ERR_PIN_LOCKED);
	for (i = 1; i < DEV_PUK_TRIES; i++)
		assert_int_equal(fw_unlock(t->fw, "00000000", "1111"),
		    FW_PIN_WRONG);
	assert_int_equal(fw_unlock(t->fw, "00000000", "1111"), FW_PIN_DEAD);
	assert_int_equal(fw_unlock(t->fw, FW_DEFAULT_PUK, "1111"),
	    FW_PIN_DEAD);
	fw_display(t->fw, disp, sizeof(disp));
	assert_true(strncmp(disp, "DEAD EMU0001", 12) == 0);
	dead_device_reports(t, h);
	libusb_close(h);
}

/*
 * PROTOCOL.md 5.3: a CONFIRM with the shown challenge's id and other
 * content is refused (ERROR CONFLICT) and the first content stays shown
 * and is what gets signed; the same content again (a host that retook
 * the challenge) keeps display and PIN and answers the new sequence.
 */
static void
test_conflict_keeps_first(void **state)
{
	struct t		*t = *state;
	libusb_device_handle	*h;
	struct dev_confirm	 c, other;
	struct dev_result	 r;
	uint8_t			 pub[DEV_PUBKEY_LEN], buf[DEV_FRAME_MAX + 64];
	struct dev_frame	 f;
	char			 disp[FW_DISPLAY_MAX];

	fw_pubkey(t->fw, pub);
	assert_int_equal(libusb_open(devusb_device(t->u), &h), 0);
	devtest_confirm(&c, 30);
	raw_confirm(h, 0x30, &c);
	wait_pending_raw(t->fw, 1);
	assert_int_equal(fw_pin(t->fw, FW_DEFAULT_PIN), FW_PIN_OK);
	other = c;
	other.amount_minor = 999999;
	strcpy(other.payee_name, "Evil Ltd");
	raw_confirm(h, 0x31, &other);
	raw_expect_error(h, 0x31, DEV_ERR_CONFLICT);
	other = c;
	other.nonce[5] ^= 1;
	raw_confirm(h, 0x32, &other);
	raw_expect_error(h, 0x32, DEV_ERR_CONFLICT);
	fw_display(t->fw, disp, sizeof(disp));
	assert_non_null(strstr(disp, "AMOUNT 12.34 EUR\nPAYEE Muster GmbH\nIBAN "));
	assert_non_null(strstr(disp, "PIN OK [confirm|decline]"));
	/* The same payment with another timeout: a retake, no answer yet. */
	c.timeout_s = 20;
	raw_confirm(h, 0x33, &c);
	assert_false(raw_recv(h, buf, &f, 200));
	assert_int_equal(fw_press(t->fw), 0);
	raw_expect_result(h, 0x33, &r);
	assert_int_equal(devsig_approval_verify(pub, &c, r.counter, r.sig,
	    r.sig_len), 1);
	assert_int_equal(devsig_approval_verify(pub, &other, r.counter, r.sig,
	    r.sig_len), 0);
	libusb_close(h);
}

/* A currency outside the display table is refused; others are shown
 * with their own minor units. */
static void
test_currency_display(void **state)
{
	struct t		*t = *state;
	libusb_device_handle	*h;
	struct dev_confirm	 c;
	char			 disp[FW_DISPLAY_MAX];

	assert_int_equal(libusb_open(devusb_device(t->u), &h), 0);
	devtest_confirm(&c, 30);
	memcpy(c.currency, "XAU", 4);
	raw_confirm(h, 0x40, &c);
	raw_expect_error(h, 0x40, DEV_ERR_CURRENCY);
	assert_int_equal(fw_pending(t->fw), 0);
	memcpy(c.currency, "JPY", 4);
	c.amount_minor = 1234567;
	raw_confirm(h, 0x41, &c);
	wait_pending_raw(t->fw, 1);
	fw_display(t->fw, disp, sizeof(disp));
	assert_non_null(strstr(disp, "AMOUNT 1 234 567 JPY\nPAYEE "));
	raw_send(h, DEV_MSG_CANCEL, 0x42, c.challenge, DEV_CHALLENGE_LEN);
	wait_pending_raw(t->fw, 0);
	devtest_confirm(&c, 30);
	memcpy(c.currency, "BHD", 4);
	c.amount_minor = 1234567;
	/* The longest name, shown whole. */
	memset(c.payee_name, 'N', DEV_PAYEE_NAME_MAX);
	c.payee_name[DEV_PAYEE_NAME_MAX] = '\0';
	raw_confirm(h, 0x43, &c);
	wait_pending_raw(t->fw, 1);
	fw_display(t->fw, disp, sizeof(disp));
	assert_non_null(strstr(disp, "AMOUNT 1 234.567 BHD\nPAYEE "));
	assert_non_null(strstr(disp, c.payee_name));
	libusb_close(h);
}

/*
 * A press racing a CANCEL: the device answers in the order things
 * happened. Press first: RESULT (the CONFIRM's sequence), then ERROR
 * NOT_PENDING for the CANCEL. CANCEL first: CANCELLED, and the button
 * does nothing.
 */
static void
test_press_races_cancel(void **state)
{
	struct t		*t = *state;
	libusb_device_handle	*h;
	struct dev_confirm	 c;
	struct dev_result	 r;
	uint8_t			 buf[DEV_FRAME_MAX + 64];
	struct dev_frame	 f;

	assert_int_equal(libusb_open(devusb_device(t->u), &h), 0);
	devtest_confirm(&c, 30);
	raw_confirm(h, 0x50, &c);
	wait_pending_raw(t->fw, 1);
	assert_int_equal(devtest_approve(t->fw), 0);
	raw_send(h, DEV_MSG_CANCEL, 0x51, c.challenge, DEV_CHALLENGE_LEN);
	raw_expect_result(h, 0x50, &r);
	assert_int_equal(r.outcome, DEV_OUTCOME_APPROVED);
	raw_expect_error(h, 0x51, DEV_ERR_NOT_PENDING);

	devtest_confirm(&c, 30);
	raw_confirm(h, 0x52, &c);
	wait_pending_raw(t->fw, 1);
	assert_int_equal(fw_pin(t->fw, FW_DEFAULT_PIN), FW_PIN_OK);
	raw_send(h, DEV_MSG_CANCEL, 0x53, c.challenge, DEV_CHALLENGE_LEN);
	assert_true(raw_recv(h, buf, &f, 2000));
	assert_int_equal(f.type, DEV_MSG_CANCELLED);
	assert_int_equal(f.seq, 0x53);
	assert_int_equal(fw_press(t->fw), -1);
	assert_false(raw_recv(h, buf, &f, 200));
	libusb_close(h);
}

/* 2^32 - 1 is the last counter signed; then ERROR COUNTER_EXHAUSTED. */
static void
test_counter_exhaustion(void **state)
{
	struct t		*t = *state;
	struct dev_confirm	 c;
	struct dev_result	 r;
	struct dev_error	 e;
	struct dev_info		 in;
	struct answer		 a;
	uint8_t			 p[DEV_PAYLOAD_MAX], pub[DEV_PUBKEY_LEN];
	size_t			 plen;

	fw_pubkey(t->fw, pub);
	fw_set_counter(t->fw, UINT32_MAX - 1);
	confirm_button(t, 1, &c, &r);
	assert_int_equal(r.counter, UINT32_MAX);
	assert_int_equal(devsig_approval_verify(pub, &c, r.counter, r.sig,
	    r.sig_len), 1);
	assert_true(devsig_counter_ok(UINT32_MAX - 1, r.counter));
	assert_true(devsig_counter_exhausted(r.counter));
	devtest_confirm(&c, 30);
	plen = dev_confirm_encode(&c, p, sizeof(p));
	request(t, t->u, DEV_MSG_CONFIRM, p, plen, 2000, &a);
	assert_true(wait_answer(t, &a));
	assert_int_equal(a.st, DEVUSB_OK);
	assert_int_equal(a.type, DEV_MSG_ERROR);
	assert_int_equal(dev_error_decode(a.payload, a.len, &e), DEV_OK);
	assert_int_equal(e.code, DEV_ERR_EXHAUSTED);
	request(t, t->u, DEV_MSG_INFO, NULL, 0, 2000, &a);
	assert_true(wait_answer(t, &a));
	assert_int_equal(dev_info_decode(a.payload, a.len, &in), DEV_OK);
	assert_int_equal(in.counter, UINT32_MAX);
	assert_int_equal(in.pin_tries, DEV_PIN_TRIES);
}

/* A device that skips the PIN and claims UV: the verifier refuses. */
static void
test_fault_nouv(void **state)
{
	struct t		*t = *state;
	struct dev_confirm	 c;
	struct dev_result	 r;
	struct answer		 a;
	uint8_t			 p[DEV_PAYLOAD_MAX], pub[DEV_PUBKEY_LEN];
	size_t			 plen;

	fw_pubkey(t->fw, pub);
	fw_set_fault(t->fw, FW_FAULT_NO_UV);
	devtest_confirm(&c, 30);
	plen = dev_confirm_encode(&c, p, sizeof(p));
	request(t, t->u, DEV_MSG_CONFIRM, p, plen, 35000, &a);
	assert_true(wait_pending(t, t->fw));
	assert_int_equal(fw_press(t->fw), 0);
	assert_true(wait_answer(t, &a));
	assert_int_equal(dev_result_decode(a.payload, a.len, &r), DEV_OK);
	assert_int_equal(r.flags, DEV_FLAG_UP | DEV_FLAG_UV);
	assert_int_equal(devsig_approval_verify(pub, &c, r.counter, r.sig,
	    r.sig_len), 0);
}

/* The host's stray zero-length packet is no frame: no ERROR for it. */
static void
test_empty_transfers(void **state)
{
	struct t		*t = *state;
	libusb_device_handle	*h;
	uint8_t			 buf[DEV_FRAME_MAX + 64];
	struct dev_frame	 f;
	struct answer		 a;
	const uint8_t		 ping[] = { 7, 7 };
	int			 n = 0;

	assert_int_equal(libusb_open(devusb_device(t->u), &h), 0);
	assert_int_equal(libusb_bulk_transfer(h, 0x01, buf, 0, &n, 1000), 0);
	assert_false(raw_recv(h, buf, &f, 200));
	libusb_close(h);
	/* The device's stray ZLP before an answer: the host skips it. */
	request(t, t->u, DEV_MSG_INFO, NULL, 0, 2000, &a);
	assert_true(wait_answer(t, &a));
	assert_int_equal(usbemu_dev_send_in(fw_usbdev(t->fw), NULL, 0), 0);
	request(t, t->u, DEV_MSG_PING, ping, sizeof(ping), 2000, &a);
	assert_true(wait_answer(t, &a));
	assert_int_equal(a.st, DEVUSB_OK);
	assert_int_equal(a.type, DEV_MSG_PONG);
	assert_int_equal(a.len, sizeof(ping));
}

/* An answer longer than a frame can be is refused, not truncated. */
static void
test_overlong_answer(void **state)
{
	struct t		*t = *state;
	struct dev_confirm	 c;
	struct answer		 a;
	uint8_t			 p[DEV_PAYLOAD_MAX], big[1100];
	size_t			 plen;

	fw_set_fault(t->fw, FW_FAULT_NO_ANSWER);
	devtest_confirm(&c, 30);
	plen = dev_confirm_encode(&c, p, sizeof(p));
	request(t, t->u, DEV_MSG_CONFIRM, p, plen, 5000, &a);
	assert_true(wait_pending(t, t->fw));
	memset(big, 0, sizeof(big));
	big[0] = DEV_PROTO_VERSION;
	big[1] = DEV_MSG_RESULT;
	assert_int_equal(usbemu_dev_send_in(fw_usbdev(t->fw), big,
	    sizeof(big)), 0);
	assert_true(wait_answer(t, &a));
	assert_int_equal(a.st, DEVUSB_BAD_FRAME);
}

static int
setup_hs(void **state)
{
	struct t	*t = calloc(1, sizeof(*t));

	assert_non_null(t);
	assert_non_null(t->emu = usbemu_new());
	assert_non_null(t->mfr = devtest_manufacturer_key());
	assert_non_null(t->dir = devtest_tmpdir());
	assert_non_null(t->fw = devtest_fw_hs(t->emu, "EMU0512", t->dir,
	    t->mfr));
	assert_int_equal(fw_plug(t->fw), 0);
	assert_int_equal(libusb_init(&t->ctx), 0);
	assert_non_null(t->u = open_serial(t, "EMU0512"));
	*state = t;
	return (0);
}

/*
 * High speed, 512-byte packets: a 512-byte frame needs the ZLP after it
 * (without one the device waits for more), and a 1024-byte answer's ZLP
 * completes a following URB with 0 bytes if the first had no room left.
 */
static void
test_zlp_high_speed(void **state)
{
	struct t		*t = *state;
	libusb_device_handle	*h;
	struct answer		 a;
	struct dev_frame	 f;
	struct dev_error	 e;
	uint8_t			 p[DEV_PAYLOAD_MAX], frame[DEV_FRAME_MAX + 512];
	size_t			 len;
	int			 n = 0;

	assert_int_equal(libusb_get_max_packet_size(devusb_device(t->u), 0x01),
	    512);
	/* devusb sends the ZLP: the device sees the end and answers. */
	memset(p, 0xab, sizeof(p));
	request(t, t->u, DEV_MSG_PING, p, 512 - DEV_HDR_LEN, 2000, &a);
	assert_true(wait_answer(t, &a));
	assert_int_equal(a.st, DEVUSB_OK);
	assert_int_equal(a.type, DEV_MSG_ERROR);
	assert_int_equal(dev_error_decode(a.payload, a.len, &e), DEV_OK);
	assert_int_equal(e.code, DEV_ERR_PAYLOAD);
	/* 576 bytes end with a short packet: no ZLP, and none needed. */
	request(t, t->u, DEV_MSG_PING, p, 576 - DEV_HDR_LEN, 2000, &a);
	assert_true(wait_answer(t, &a));
	assert_int_equal(a.type, DEV_MSG_ERROR);

	assert_int_equal(libusb_open(devusb_device(t->u), &h), 0);
	/* Without the ZLP the transfer has not ended: no answer... */
	len = dev_frame_encode(frame, sizeof(frame), DEV_MSG_PING, 0x60, p,
	    512 - DEV_HDR_LEN);
	assert_int_equal(libusb_bulk_transfer(h, 0x01, frame, (int)len, &n,
	    1000), 0);
	assert_false(raw_recv(h, frame, &f, 300));
	/* ...until the ZLP ends it. */
	assert_int_equal(libusb_bulk_transfer(h, 0x01, frame, 0, &n, 1000), 0);
	raw_expect_error(h, 0x60, DEV_ERR_PAYLOAD);

	/* A 1024-byte answer into a 1024-byte URB: the ZLP comes next. */
	len = dev_frame_encode(frame, sizeof(frame), DEV_MSG_PONG, 0x61, p,
	    DEV_PAYLOAD_MAX);
	assert_int_equal(len, DEV_FRAME_MAX);
	assert_int_equal(usbemu_dev_send_in(fw_usbdev(t->fw), frame, len), 0);
	assert_int_equal(libusb_bulk_transfer(h, 0x81, frame, DEV_FRAME_MAX,
	    &n, 1000), 0);
	assert_int_equal(n, DEV_FRAME_MAX);
	assert_int_equal(libusb_bulk_transfer(h, 0x81, frame, DEV_FRAME_MAX,
	    &n, 1000), 0);
	assert_int_equal(n, 0);
	/* With a packet of room (as devusb reads), the ZLP ends the URB. */
	assert_int_equal(usbemu_dev_send_in(fw_usbdev(t->fw), frame, len), 0);
	len = dev_frame_encode(frame, sizeof(frame), DEV_MSG_PONG, 0x61, p,
	    DEV_PAYLOAD_MAX);
	assert_int_equal(usbemu_dev_send_in(fw_usbdev(t->fw), frame, len), 0);
	assert_int_equal(libusb_bulk_transfer(h, 0x81, frame, DEV_FRAME_MAX +
	    512, &n, 1000), 0);
	assert_int_equal(n, DEV_FRAME_MAX);
	assert_int_equal(libusb_bulk_transfer(h, 0x81, frame, DEV_FRAME_MAX +
	    512, &n, 1000), 0);
	assert_int_equal(n, DEV_FRAME_MAX);
	assert_int_equal(libusb_bulk_transfer(h, 0x81, frame, DEV_FRAME_MAX +
	    512, &n, 200), LIBUSB_ERROR_TIMEOUT);
	libusb_close(h);
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
		cmocka_unit_test_setup_teardown(test_plug_announced_when_ready,
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
		cmocka_unit_test_setup_teardown(test_pin_retry_counter, setup,
		    teardown),
		cmocka_unit_test_setup_teardown(test_conflict_keeps_first,
		    setup, teardown),
		cmocka_unit_test_setup_teardown(test_currency_display, setup,
		    teardown),
		cmocka_unit_test_setup_teardown(test_press_races_cancel, setup,
		    teardown),
		cmocka_unit_test_setup_teardown(test_counter_exhaustion, setup,
		    teardown),
		cmocka_unit_test_setup_teardown(test_fault_nouv, setup,
		    teardown),
		cmocka_unit_test_setup_teardown(test_empty_transfers, setup,
		    teardown),
		cmocka_unit_test_setup_teardown(test_overlong_answer, setup,
		    teardown),
		cmocka_unit_test_setup_teardown(test_zlp_high_speed, setup_hs,
		    teardown),
	};

	return (cmocka_run_group_tests_name("device-usb", tests, NULL, NULL));
}
