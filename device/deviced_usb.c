/*
 * psd2-deviced's USB thread: the only thread that calls libusb. It finds
 * authenticators (hot-plug, or a periodic rescan where hot-plug is not
 * available), asks each for INFO, and runs the CONFIRM / CANCEL exchanges
 * the main thread asks for, reporting every outcome back as a message.
 */
#include <errno.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <libusb.h>

#include "deviced_usb.h"
#include "devsig.h"
#include "devusb.h"

#define USB_INFO_TIMEOUT_MS	2000
#define USB_CANCEL_TIMEOUT_MS	2000
#define USB_INFO_TRIES		3
/* The device answers by its timeout, which the main thread set a second
 * before the deadline; waiting one second more ends at the deadline. */
#define USB_CONFIRM_MARGIN_MS	1000
#define USB_LOOP_MS		500
/* Even with hot-plug, look at the bus now and then: a lost or early
 * hot-plug event must not hide a device for good. */
#define USB_HOTPLUG_RESCAN_MS	5000
#define USB_PENDING_MAX		64
#define USB_OPEN_TRIES		5
#define USB_OPEN_RETRY_MS	200

enum ustate {
	US_INFO,
	US_IDLE,
	US_CONFIRM,
	US_CANCEL,
	US_DEAD
};

/* A device we could not open. Hot-plug can announce a device before its
 * node is ready (udev rules, or umockdev's early "add"), so it is retried
 * a few times before it is left alone until it is plugged in again. */
struct rejected {
	libusb_device	*ldev;
	int		 tries;
	int64_t		 retry_at;
};

struct udev {
	struct devusb	*u;
	libusb_device	*ldev;
	char		 serial[DEV_SERIAL_MAX + 1];
	enum ustate	 state;
	int		 info_tries;
	int		 announced;
	uint8_t		 challenge[DEV_CHALLENGE_LEN];
	int		 cancel_report;	/* tell main when CANCEL is done */
};

static struct {
	const struct devd_conf		*conf;
	struct dqueue			*to_main;
	struct dqueue			*to_usb;
	libusb_context			*ctx;
	pthread_t			 thread;
	atomic_int			 stop;
	int				 hotplug;
	libusb_hotplug_callback_handle	 cbh;
	struct udev			*devs[DEVD_MAX_DEVICES];
	size_t				 ndevs;
	libusb_device			*arrived[USB_PENDING_MAX];
	size_t				 narrived;
	libusb_device			*left[USB_PENDING_MAX];
	size_t				 nleft;
	struct rejected			 rejected[DEVD_MAX_DEVICES];
	size_t				 nrejected;
	int64_t				 next_rescan;
	EVP_PKEY			*cas[DEVSIG_CA_MAX];
	size_t				 ncas;
} U;

static int64_t
now_ms(void)
{
	struct timespec	ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ((int64_t)ts.tv_sec * 1000 + ts.tv_nsec / 1000000);
}

static void
report(enum dmsg_type type, struct udev *d, const char *reason)
{
	struct dmsg	*m = dmsg_new(type, d->serial);

	memcpy(m->challenge, d->challenge, DEV_CHALLENGE_LEN);
	if (reason != NULL)
		snprintf(m->reason, sizeof(m->reason), "%s", reason);
	dqueue_push(U.to_main, m);
}

static void
report_challenge(enum dmsg_type type, const char *serial,
    const uint8_t *challenge, const char *reason)
{
	struct dmsg	*m = dmsg_new(type, serial);

	memcpy(m->challenge, challenge, DEV_CHALLENGE_LEN);
	if (reason != NULL)
		snprintf(m->reason, sizeof(m->reason), "%s", reason);
	dqueue_push(U.to_main, m);
}

static struct udev *
find_serial(const char *serial)
{
	size_t	i;

	for (i = 0; i < U.ndevs; i++) {
		if (U.devs[i]->announced &&
		    strcmp(U.devs[i]->serial, serial) == 0)
			return (U.devs[i]);
	}
	return (NULL);
}

static struct udev *
find_ldev(libusb_device *ldev)
{
	size_t	i;

	for (i = 0; i < U.ndevs; i++) {
		if (U.devs[i]->ldev == ldev)
			return (U.devs[i]);
	}
	return (NULL);
}

/* The device is gone: whatever it was doing fails, with the reason. */
static void
dev_gone(struct udev *d, const char *why)
{
	size_t	i;

	if (d->state == US_CONFIRM || (d->state == US_CANCEL &&
	    d->cancel_report))
		report(DM_FAILED, d, "device unplugged");
	if (d->announced) {
		devd_log("device %s gone: %s", d->serial, why);
		report(DM_GONE, d, NULL);
	}
	for (i = 0; i < U.ndevs; i++) {
		if (U.devs[i] == d) {
			U.devs[i] = U.devs[--U.ndevs];
			break;
		}
	}
	devusb_close(d->u);
	libusb_unref_device(d->ldev);
	free(d);
}

static void	on_info(struct devusb *, void *, enum devusb_status,
		    const struct dev_frame *);
static void	on_confirm(struct devusb *, void *, enum devusb_status,
		    const struct dev_frame *);
static void	on_cancel(struct devusb *, void *, enum devusb_status,
		    const struct dev_frame *);

static void
send_info(struct udev *d)
{
	d->state = US_INFO;
	d->info_tries++;
	if (devusb_request(d->u, DEV_MSG_INFO, NULL, 0, USB_INFO_TIMEOUT_MS,
	    on_info, d) != 0) {
		devd_log("device %s: INFO could not be sent", d->serial);
		d->state = US_DEAD;
	}
}

static void
send_cancel(struct udev *d, int report_done)
{
	d->state = US_CANCEL;
	d->cancel_report = report_done;
	if (devusb_request(d->u, DEV_MSG_CANCEL, d->challenge,
	    DEV_CHALLENGE_LEN, USB_CANCEL_TIMEOUT_MS, on_cancel, d) != 0) {
		d->state = US_IDLE;
		if (report_done)
			report(DM_CANCELLED, d, NULL);
	}
}

static void
on_info(struct devusb *u, void *arg, enum devusb_status st,
    const struct dev_frame *f)
{
	struct udev	*d = arg;
	struct dmsg	*m;
	struct dev_info	 in;

	(void)u;
	if (st == DEVUSB_GONE) {
		dev_gone(d, "unplugged during INFO");
		return;
	}
	if (st != DEVUSB_OK || f->type != DEV_MSG_INFO_ANSWER ||
	    dev_info_decode(f->payload, f->len, &in) != DEV_OK ||
	    strcmp(in.serial, d->serial) != 0) {
		devd_log("device %s: INFO failed: %s", d->serial,
		    st == DEVUSB_OK ? "malformed answer" :
		    devusb_status_name(st));
		if (st == DEVUSB_STALL)
			(void)devusb_clear_halt(d->u);
		if (d->info_tries < USB_INFO_TRIES)
			send_info(d);
		else
			d->state = US_DEAD;
		return;
	}
	if (!devsig_pubkey_valid(in.pubkey)) {
		devd_log("device %s: INFO public key is not a point on P-256; "
		    "device not used", d->serial);
		d->state = US_DEAD;
		return;
	}
	if (find_serial(d->serial) != NULL) {
		devd_log("device %s: a device with this serial is already "
		    "attached here; ignoring the second", d->serial);
		d->state = US_DEAD;
		return;
	}
	m = dmsg_new(DM_ARRIVED, d->serial);
	m->info = in;
	m->attest_ok = devsig_attest_verify(U.cas, U.ncas, &in);
	d->announced = 1;
	d->state = US_IDLE;
	devd_log("device %s arrived: model %s firmware %s counter %u%s "
	    "PIN tries %u%s PUK tries %u%s attestation %s", d->serial,
	    in.model, in.firmware, in.counter, in.counter == UINT32_MAX ?
	    " (exhausted)" : "", in.pin_tries, in.pin_tries == 0 ?
	    " (locked)" : "", in.puk_tries, in.puk_tries == 0 ? " (dead)" : "",
	    m->attest_ok ? "valid" : "INVALID");
	dqueue_push(U.to_main, m);
}

static void
confirm_answer(struct udev *d, const struct dev_frame *f)
{
	struct dmsg		*m;
	struct dev_result	 r;
	struct dev_error	 e;
	char			 why[DEVD_REASON_MAX];

	if (f->type == DEV_MSG_ERROR) {
		snprintf(why, sizeof(why), "device refused: %s",
		    dev_error_decode(f->payload, f->len, &e) == DEV_OK ?
		    dev_error_name(e.code) : "malformed error");
		report(DM_FAILED, d, why);
		/* After CONFLICT the device still shows the first content,
		 * which the PSU could approve for a payment already ended:
		 * every refused CONFIRM is followed by a CANCEL (5.3). */
		send_cancel(d, 0);
		return;
	}
	if (f->type != DEV_MSG_RESULT ||
	    dev_result_decode(f->payload, f->len, &r) != DEV_OK) {
		report(DM_FAILED, d, "malformed answer");
		send_cancel(d, 0);
		return;
	}
	if (memcmp(r.challenge, d->challenge, DEV_CHALLENGE_LEN) != 0) {
		report(DM_FAILED, d, "answer for another challenge");
		send_cancel(d, 0);
		return;
	}
	if (r.outcome == DEV_OUTCOME_BUSY) {
		report(DM_BUSY, d, NULL);
		return;
	}
	m = dmsg_new(DM_RESULT, d->serial);
	memcpy(m->challenge, d->challenge, DEV_CHALLENGE_LEN);
	m->result = r;
	dqueue_push(U.to_main, m);
}

static void
on_confirm(struct devusb *u, void *arg, enum devusb_status st,
    const struct dev_frame *f)
{
	struct udev	*d = arg;

	(void)u;
	d->state = US_IDLE;
	switch (st) {
	case DEVUSB_OK:
		confirm_answer(d, f);
		break;
	case DEVUSB_CANCELLED:
		send_cancel(d, 1);
		break;
	case DEVUSB_GONE:
		d->state = US_CONFIRM;
		dev_gone(d, "unplugged during confirmation");
		break;
	case DEVUSB_STALL:
		report(DM_FAILED, d, "endpoint stalled");
		(void)devusb_clear_halt(d->u);
		/* The device may still show the payment: clear it. */
		send_cancel(d, 0);
		break;
	case DEVUSB_TIMEOUT:
		report(DM_FAILED, d, "no answer by the deadline");
		send_cancel(d, 0);
		break;
	default:
		report(DM_FAILED, d, devusb_status_name(st));
		send_cancel(d, 0);
		break;
	}
}

static void
on_cancel(struct devusb *u, void *arg, enum devusb_status st,
    const struct dev_frame *f)
{
	struct udev	*d = arg;

	(void)u;
	(void)f;
	if (st == DEVUSB_GONE) {
		dev_gone(d, "unplugged during cancel");
		return;
	}
	if (st == DEVUSB_STALL)
		(void)devusb_clear_halt(d->u);
	d->state = US_IDLE;
	if (d->cancel_report)
		report(DM_CANCELLED, d, NULL);
	d->cancel_report = 0;
}

static void
cmd_confirm(struct dmsg *m)
{
	struct udev	*d;
	uint8_t		 p[DEV_PAYLOAD_MAX];
	size_t		 plen;
	unsigned int	 timeout;

	if ((d = find_serial(m->serial)) == NULL) {
		report_challenge(DM_FAILED, m->serial, m->confirm.challenge,
		    "device unplugged");
		return;
	}
	if (d->state != US_IDLE) {
		report_challenge(DM_BUSY, m->serial, m->confirm.challenge,
		    NULL);
		return;
	}
	memcpy(d->challenge, m->confirm.challenge, DEV_CHALLENGE_LEN);
	timeout = (unsigned int)m->confirm.timeout_s * 1000 +
	    USB_CONFIRM_MARGIN_MS;
	if ((plen = dev_confirm_encode(&m->confirm, p, sizeof(p))) == 0 ||
	    devusb_request(d->u, DEV_MSG_CONFIRM, p, plen, timeout,
	    on_confirm, d) != 0) {
		report(DM_FAILED, d, "transfer error");
		return;
	}
	d->state = US_CONFIRM;
}

static void
cmd_cancel(struct dmsg *m)
{
	struct udev	*d;

	if ((d = find_serial(m->serial)) == NULL ||
	    memcmp(d->challenge, m->challenge, DEV_CHALLENGE_LEN) != 0 ||
	    d->state != US_CONFIRM) {
		report_challenge(DM_CANCELLED, m->serial, m->challenge, NULL);
		return;
	}
	devusb_abort(d->u);
}

static struct rejected *
find_rejected(libusb_device *ldev)
{
	size_t	i;

	for (i = 0; i < U.nrejected; i++) {
		if (U.rejected[i].ldev == ldev)
			return (&U.rejected[i]);
	}
	return (NULL);
}

static void
forget_rejected(libusb_device *ldev)
{
	struct rejected	*r;

	if ((r = find_rejected(ldev)) == NULL)
		return;
	libusb_unref_device(r->ldev);
	*r = U.rejected[--U.nrejected];
}

static void
reject(libusb_device *ldev, const char *err)
{
	struct rejected	*r;

	if ((r = find_rejected(ldev)) == NULL) {
		if (U.nrejected == DEVD_MAX_DEVICES)
			return;
		r = &U.rejected[U.nrejected++];
		r->ldev = libusb_ref_device(ldev);
		r->tries = 0;
	}
	r->tries++;
	r->retry_at = now_ms() + USB_OPEN_RETRY_MS;
	if (r->tries == USB_OPEN_TRIES)
		devd_log("device at bus %u address %u not usable: %s",
		    libusb_get_bus_number(ldev),
		    libusb_get_device_address(ldev), err);
}

static void
adopt(libusb_device *ldev, int retry)
{
	struct udev	*d;
	struct devusb	*u;
	struct rejected	*r;
	char		 err[128];

	if (find_ldev(ldev) != NULL)
		return;
	if ((r = find_rejected(ldev)) != NULL && !retry)
		return;
	if (!devusb_match(ldev, U.conf->vid, U.conf->pid))
		return;
	if (U.ndevs == DEVD_MAX_DEVICES) {
		reject(ldev, "too many devices");
		return;
	}
	if ((u = devusb_open(ldev, err, sizeof(err))) == NULL) {
		reject(ldev, err);
		return;
	}
	forget_rejected(ldev);
	if ((d = calloc(1, sizeof(*d))) == NULL)
		abort();
	d->u = u;
	d->ldev = libusb_ref_device(ldev);
	snprintf(d->serial, sizeof(d->serial), "%s", devusb_serial(u));
	U.devs[U.ndevs++] = d;
	send_info(d);
}

static int
retry_pending(void)
{
	size_t	i;

	for (i = 0; i < U.nrejected; i++) {
		if (U.rejected[i].tries < USB_OPEN_TRIES)
			return (1);
	}
	return (0);
}

static void
retry_rejected(void)
{
	int64_t	now = now_ms();
	size_t	i;

	for (i = 0; i < U.nrejected; i++) {
		if (U.rejected[i].tries < USB_OPEN_TRIES &&
		    now >= U.rejected[i].retry_at)
			adopt(U.rejected[i].ldev, 1);
	}
}

/* Fallback where hot-plug is unavailable: compare with the bus. */
static void
rescan(void)
{
	libusb_device	**list;
	ssize_t		 n, i;
	size_t		 k;
	int		 seen;

	if ((n = libusb_get_device_list(U.ctx, &list)) < 0)
		return;
	for (k = 0; k < U.ndevs;) {
		for (seen = 0, i = 0; i < n && !seen; i++)
			seen = list[i] == U.devs[k]->ldev;
		if (!seen)
			dev_gone(U.devs[k], "no longer on the bus");
		else
			k++;
	}
	for (k = 0; k < U.nrejected;) {
		for (seen = 0, i = 0; i < n && !seen; i++)
			seen = list[i] == U.rejected[k].ldev;
		if (!seen)
			forget_rejected(U.rejected[k].ldev);
		else
			k++;
	}
	for (i = 0; i < n; i++)
		adopt(list[i], 0);
	libusb_free_device_list(list, 1);
}

static int LIBUSB_CALL
on_hotplug(libusb_context *ctx, libusb_device *ldev,
    libusb_hotplug_event ev, void *arg)
{
	(void)ctx;
	(void)arg;
	/* Only note it: opening is not allowed inside the callback. */
	if (ev == LIBUSB_HOTPLUG_EVENT_DEVICE_ARRIVED &&
	    U.narrived < USB_PENDING_MAX)
		U.arrived[U.narrived++] = libusb_ref_device(ldev);
	else if (ev == LIBUSB_HOTPLUG_EVENT_DEVICE_LEFT &&
	    U.nleft < USB_PENDING_MAX)
		U.left[U.nleft++] = libusb_ref_device(ldev);
	return (0);
}

static void
process_hotplug(void)
{
	struct udev	*d;
	size_t		 i;

	for (i = 0; i < U.nleft; i++) {
		if ((d = find_ldev(U.left[i])) != NULL)
			dev_gone(d, "unplugged");
		forget_rejected(U.left[i]);
		libusb_unref_device(U.left[i]);
	}
	U.nleft = 0;
	for (i = 0; i < U.narrived; i++) {
		adopt(U.arrived[i], 0);
		libusb_unref_device(U.arrived[i]);
	}
	U.narrived = 0;
}

static void
process_commands(void)
{
	struct dmsg	*m;

	while ((m = dqueue_pop(U.to_usb)) != NULL) {
		if (m->type == UM_CONFIRM)
			cmd_confirm(m);
		else if (m->type == UM_CANCEL)
			cmd_cancel(m);
		free(m);
	}
}

static void
wake_usb(void *arg)
{
	(void)arg;
	if (U.ctx != NULL)
		libusb_interrupt_event_handler(U.ctx);
}

static void
shutdown_devices(void)
{
	int64_t	end = now_ms() + 1000;
	size_t	i;
	struct timeval tv = { 0, 20000 };

	while (U.ndevs > 0) {
		/* Announced devices' CANCELs were queued by the main thread. */
		if (devusb_busy(U.devs[U.ndevs - 1]->u) && now_ms() < end) {
			libusb_handle_events_timeout_completed(U.ctx, &tv, NULL);
			devusb_collect();
			process_commands();
			continue;
		}
		devusb_close(U.devs[U.ndevs - 1]->u);
		libusb_unref_device(U.devs[U.ndevs - 1]->ldev);
		free(U.devs[--U.ndevs]);
	}
	/* Let cancelled transfers come back before libusb_exit. */
	for (i = 0; i < 10; i++) {
		libusb_handle_events_timeout_completed(U.ctx, &tv, NULL);
		devusb_collect();
	}
	for (i = 0; i < U.nrejected; i++)
		libusb_unref_device(U.rejected[i].ldev);
	U.nrejected = 0;
}

static void *
usb_thread(void *arg)
{
	struct timeval	tv;
	int64_t		now;

	(void)arg;
	while (!atomic_load(&U.stop)) {
		tv.tv_sec = 0;
		tv.tv_usec = (retry_pending() ? USB_OPEN_RETRY_MS / 2 :
		    USB_LOOP_MS) * 1000;
		libusb_handle_events_timeout_completed(U.ctx, &tv, NULL);
		devusb_collect();
		process_hotplug();
		retry_rejected();
		process_commands();
		now = now_ms();
		if (now >= U.next_rescan) {
			rescan();
			U.next_rescan = now + (U.hotplug ?
			    USB_HOTPLUG_RESCAN_MS : U.conf->rescan_ms);
		}
	}
	shutdown_devices();
	if (U.hotplug)
		libusb_hotplug_deregister_callback(U.ctx, U.cbh);
	process_hotplug();
	return (NULL);
}

int
devd_usb_start(const struct devd_conf *conf, struct dqueue *to_main,
    struct dqueue *to_usb)
{
	int	rc;

	memset(&U, 0, sizeof(U));
	U.conf = conf;
	U.to_main = to_main;
	U.to_usb = to_usb;
	if (devsig_load_cas(conf->ca_path, U.cas, DEVSIG_CA_MAX,
	    &U.ncas) != 0) {
		devd_log("cannot load manufacturer CA keys from %s",
		    conf->ca_path);
		return (-1);
	}
	if ((rc = libusb_init(&U.ctx)) != 0) {
		devd_log("libusb_init: %s", libusb_strerror(rc));
		return (-1);
	}
	to_usb->wake = wake_usb;
	if (conf->hotplug && libusb_has_capability(LIBUSB_CAP_HAS_HOTPLUG)) {
		rc = libusb_hotplug_register_callback(U.ctx,
		    LIBUSB_HOTPLUG_EVENT_DEVICE_ARRIVED |
		    LIBUSB_HOTPLUG_EVENT_DEVICE_LEFT, LIBUSB_HOTPLUG_ENUMERATE,
		    conf->vid, conf->pid, LIBUSB_HOTPLUG_MATCH_ANY, on_hotplug,
		    NULL, &U.cbh);
		U.hotplug = rc == 0;
	}
	devd_log("usb: watching %04x:%04x by %s", conf->vid, conf->pid,
	    U.hotplug ? "hot-plug" : "periodic rescan");
	if (pthread_create(&U.thread, NULL, usb_thread, NULL) != 0) {
		libusb_exit(U.ctx);
		return (-1);
	}
	return (0);
}

void
devd_usb_stop(void)
{
	atomic_store(&U.stop, 1);
	libusb_interrupt_event_handler(U.ctx);
	pthread_join(U.thread, NULL);
	U.to_usb->wake = NULL;
	libusb_exit(U.ctx);
	U.ctx = NULL;
	devsig_free_cas(U.cas, U.ncas);
}
