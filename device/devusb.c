/*
 * libusb transport: see devusb.h. Each device has exactly two transfer
 * objects (OUT and IN) reused for every request, so that nothing is
 * allocated on the hot path and the close path knows what is in flight.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "devusb.h"

#define DEV_CLASS_VENDOR	0xff
#define DEVUSB_PACKET_MAX	512

struct devusb {
	libusb_device		*dev;
	libusb_device_handle	*h;
	int			 iface;
	uint8_t			 ep_out;
	uint8_t			 ep_in;
	unsigned int		 mps_out;	/* wMaxPacketSize: 64 or 512 */
	unsigned int		 mps_in;
	char			 serial[DEV_SERIAL_MAX + 1];
	struct libusb_transfer	*out;
	struct libusb_transfer	*in;
	int			 out_busy;
	int			 in_busy;
	int			 active;	/* a request is in flight */
	int			 aborted;
	int			 ended;		/* result waits for idle */
	enum devusb_status	 result;
	struct dev_frame	 frame;
	int			 closing;
	uint16_t		 seq;
	uint16_t		 req_seq;
	unsigned int		 timeout_ms;
	devusb_cb		 cb;
	void			*arg;
	struct devusb		*next_dead;
	int			 dead;
	uint8_t			 obuf[DEV_FRAME_MAX];
	/* A frame and one packet more: a 1024-byte frame's ZLP then ends
	 * the same URB, and an over-long answer is seen as such. */
	uint8_t			 ibuf[DEV_FRAME_MAX + DEVUSB_PACKET_MAX];
};

int
devusb_match(libusb_device *dev, uint16_t vid, uint16_t pid)
{
	struct libusb_device_descriptor	d;

	if (libusb_get_device_descriptor(dev, &d) != 0)
		return (0);
	return (d.idVendor == vid && d.idProduct == pid);
}

/* Finds the vendor-specific interface with one bulk OUT and one IN. */
static int
find_endpoints(struct devusb *u)
{
	struct libusb_config_descriptor		*cfg;
	const struct libusb_interface_descriptor *id;
	const struct libusb_endpoint_descriptor	*ep;
	int					 i, k, found = -1;
	int					 rc_out, rc_in;

	if (libusb_get_active_config_descriptor(u->dev, &cfg) != 0)
		return (-1);
	for (i = 0; i < cfg->bNumInterfaces && found == -1; i++) {
		if (cfg->interface[i].num_altsetting < 1)
			continue;
		id = &cfg->interface[i].altsetting[0];
		if (id->bInterfaceClass != DEV_CLASS_VENDOR)
			continue;
		u->ep_in = u->ep_out = 0;
		for (k = 0; k < id->bNumEndpoints; k++) {
			ep = &id->endpoint[k];
			if ((ep->bmAttributes & 0x03) !=
			    LIBUSB_TRANSFER_TYPE_BULK)
				continue;
			if (ep->bEndpointAddress & LIBUSB_ENDPOINT_IN)
				u->ep_in = ep->bEndpointAddress;
			else
				u->ep_out = ep->bEndpointAddress;
		}
		if (u->ep_in != 0 && u->ep_out != 0) {
			u->iface = id->bInterfaceNumber;
			found = 0;
		}
	}
	libusb_free_config_descriptor(cfg);
	if (found != 0)
		return (-1);
	/* PROTOCOL.md 2: 64 (full speed) or 512 (high speed) only. */
	rc_out = libusb_get_max_packet_size(u->dev, u->ep_out);
	rc_in = libusb_get_max_packet_size(u->dev, u->ep_in);
	if ((rc_out != 64 && rc_out != 512) || (rc_in != 64 && rc_in != 512))
		return (-1);
	u->mps_out = (unsigned int)rc_out;
	u->mps_in = (unsigned int)rc_in;
	return (0);
}

static void
devusb_free(struct devusb *u)
{
	if (u->h != NULL) {
		(void)libusb_release_interface(u->h, u->iface);
		libusb_close(u->h);
	}
	libusb_free_transfer(u->out);
	libusb_free_transfer(u->in);
	libusb_unref_device(u->dev);
	free(u);
}

struct devusb *
devusb_open(libusb_device *dev, char *err, size_t errlen)
{
	struct libusb_device_descriptor	 d;
	struct devusb			*u;
	int				 rc, n;

	if ((u = calloc(1, sizeof(*u))) == NULL) {
		snprintf(err, errlen, "out of memory");
		return (NULL);
	}
	u->dev = libusb_ref_device(dev);
	u->out = libusb_alloc_transfer(0);
	u->in = libusb_alloc_transfer(0);
	if (u->out == NULL || u->in == NULL) {
		snprintf(err, errlen, "out of memory");
		devusb_free(u);
		return (NULL);
	}
	if (find_endpoints(u) != 0) {
		snprintf(err, errlen, "no vendor interface with bulk endpoints");
		devusb_free(u);
		return (NULL);
	}
	if ((rc = libusb_open(dev, &u->h)) != 0) {
		u->h = NULL;
		snprintf(err, errlen, "open: %s", libusb_strerror(rc));
		devusb_free(u);
		return (NULL);
	}
	if ((rc = libusb_claim_interface(u->h, u->iface)) != 0) {
		libusb_close(u->h);
		u->h = NULL;
		snprintf(err, errlen, "claim: %s", libusb_strerror(rc));
		devusb_free(u);
		return (NULL);
	}
	if (libusb_get_device_descriptor(dev, &d) != 0 ||
	    d.iSerialNumber == 0 ||
	    (n = libusb_get_string_descriptor_ascii(u->h, d.iSerialNumber,
	    (unsigned char *)u->serial, sizeof(u->serial))) <= 0 ||
	    !dev_valid_serial(u->serial, (size_t)n)) {
		snprintf(err, errlen, "no valid serial number string");
		devusb_free(u);
		return (NULL);
	}
	u->seq = 0;
	return (u);
}

/* Closed devices wait here for devusb_collect(): libusb_close() must not
 * run inside a transfer callback (it deadlocks on libusb's own lock). */
static struct devusb	*graveyard;

static void
devusb_maybe_free(struct devusb *u)
{
	if (u->closing && !u->out_busy && !u->in_busy && !u->dead) {
		u->dead = 1;
		u->next_dead = graveyard;
		graveyard = u;
	}
}

void
devusb_collect(void)
{
	struct devusb	*u;

	while ((u = graveyard) != NULL) {
		graveyard = u->next_dead;
		devusb_free(u);
	}
}

void
devusb_close(struct devusb *u)
{
	if (u == NULL)
		return;
	u->closing = 1;
	u->active = 0;
	if (u->out_busy)
		(void)libusb_cancel_transfer(u->out);
	if (u->in_busy)
		(void)libusb_cancel_transfer(u->in);
	devusb_maybe_free(u);
}

const char *
devusb_serial(struct devusb *u)
{
	return (u->serial);
}

libusb_device *
devusb_device(struct devusb *u)
{
	return (u->dev);
}

int
devusb_busy(struct devusb *u)
{
	return (u->active || u->out_busy || u->in_busy);
}

static enum devusb_status
map_status(enum libusb_transfer_status s)
{
	switch (s) {
	case LIBUSB_TRANSFER_COMPLETED:	return (DEVUSB_OK);
	case LIBUSB_TRANSFER_TIMED_OUT:	return (DEVUSB_TIMEOUT);
	case LIBUSB_TRANSFER_STALL:	return (DEVUSB_STALL);
	case LIBUSB_TRANSFER_NO_DEVICE:	return (DEVUSB_GONE);
	case LIBUSB_TRANSFER_CANCELLED:	return (DEVUSB_CANCELLED);
	case LIBUSB_TRANSFER_OVERFLOW:	return (DEVUSB_BAD_FRAME);
	default:			return (DEVUSB_IO);
	}
}

/* Delivers the result once both transfers are idle, so that the
 * callback may start the next request at once. */
static void
deliver(struct devusb *u)
{
	devusb_cb		cb = u->cb;
	void			*arg = u->arg;
	enum devusb_status	st = u->result;

	if (!u->ended || u->out_busy || u->in_busy)
		return;
	u->ended = 0;
	u->active = 0;
	if (u->aborted)
		st = DEVUSB_CANCELLED;
	cb(u, arg, st, st == DEVUSB_OK ? &u->frame : NULL);
}

/* Ends the request: exactly one callback per devusb_request(). */
static void
finish(struct devusb *u, enum devusb_status st, const struct dev_frame *f)
{
	if (!u->active || u->closing || u->ended)
		return;
	u->ended = 1;
	u->result = st;
	if (f != NULL)
		u->frame = *f;
	if (u->out_busy)
		(void)libusb_cancel_transfer(u->out);
	if (u->in_busy)
		(void)libusb_cancel_transfer(u->in);
	deliver(u);
}

static void LIBUSB_CALL	in_done(struct libusb_transfer *);

static int
submit_in(struct devusb *u)
{
	libusb_fill_bulk_transfer(u->in, u->h, u->ep_in, u->ibuf,
	    (int)(DEV_FRAME_MAX + u->mps_in), in_done, u, u->timeout_ms);
	if (libusb_submit_transfer(u->in) != 0)
		return (-1);
	u->in_busy = 1;
	return (0);
}

static void LIBUSB_CALL
in_done(struct libusb_transfer *t)
{
	struct devusb		*u = t->user_data;
	struct dev_frame	 f;
	enum devusb_status	 st;

	u->in_busy = 0;
	if (u->closing) {
		devusb_maybe_free(u);
		return;
	}
	if (u->ended) {
		deliver(u);
		return;
	}
	if ((st = map_status(t->status)) != DEVUSB_OK) {
		finish(u, st, NULL);
		return;
	}
	/* A lone zero-length packet (the end of an earlier transfer that
	 * filled a URB exactly) is not an answer: keep listening. */
	if (t->actual_length == 0) {
		if (!u->active || submit_in(u) != 0)
			finish(u, DEVUSB_IO, NULL);
		return;
	}
	if (dev_frame_decode(u->ibuf, (size_t)t->actual_length, &f) != DEV_OK) {
		finish(u, DEVUSB_BAD_FRAME, NULL);
		return;
	}
	/* An answer to an earlier, abandoned request: wait for ours. */
	if (f.seq != u->req_seq && f.seq != 0) {
		if (!u->active || submit_in(u) != 0)
			finish(u, DEVUSB_IO, NULL);
		return;
	}
	finish(u, DEVUSB_OK, &f);
}

static void LIBUSB_CALL
out_done(struct libusb_transfer *t)
{
	struct devusb		*u = t->user_data;
	enum devusb_status	 st;

	u->out_busy = 0;
	if (u->closing) {
		devusb_maybe_free(u);
		return;
	}
	if (u->ended) {
		deliver(u);
		return;
	}
	if (!u->active)
		return;
	st = map_status(t->status);
	if (st == DEVUSB_OK && t->actual_length != t->length)
		st = DEVUSB_IO;
	if (st != DEVUSB_OK) {
		finish(u, st, NULL);
		return;
	}
	if (!u->in_busy && submit_in(u) != 0)
		finish(u, DEVUSB_IO, NULL);
}

int
devusb_request(struct devusb *u, uint8_t type, const uint8_t *payload,
    size_t plen, unsigned int timeout_ms, devusb_cb cb, void *arg)
{
	size_t	len;

	if (u->closing || u->active || u->out_busy || u->in_busy)
		return (-1);
	if (++u->seq == 0)
		u->seq = 1;
	if ((len = dev_frame_encode(u->obuf, sizeof(u->obuf), type, u->seq,
	    payload, plen)) == 0)
		return (-1);
	u->req_seq = u->seq;
	u->timeout_ms = timeout_ms;
	u->cb = cb;
	u->arg = arg;
	u->aborted = 0;
	u->ended = 0;
	/* A frame whose length is a multiple of the OUT endpoint's packet
	 * size ends with a ZLP; any other ends with its short packet. */
	libusb_fill_bulk_transfer(u->out, u->h, u->ep_out, u->obuf, (int)len,
	    out_done, u, DEVUSB_OUT_TIMEOUT_MS);
	u->out->flags = (len % u->mps_out) == 0 ?
	    LIBUSB_TRANSFER_ADD_ZERO_PACKET : 0;
	if (libusb_submit_transfer(u->out) != 0)
		return (-1);
	u->out_busy = 1;
	u->active = 1;
	/* Arm IN at once: the answer may come before OUT's completion is
	 * reaped. */
	if (submit_in(u) != 0) {
		u->active = 0;
		(void)libusb_cancel_transfer(u->out);
		return (-1);
	}
	return (0);
}

void
devusb_abort(struct devusb *u)
{
	if (!u->active)
		return;
	u->aborted = 1;
	if (u->in_busy)
		(void)libusb_cancel_transfer(u->in);
	if (u->out_busy)
		(void)libusb_cancel_transfer(u->out);
}

int
devusb_clear_halt(struct devusb *u)
{
	if (u->closing || u->in_busy || u->out_busy)
		return (-1);
	return (libusb_clear_halt(u->h, u->ep_in) == 0 ? 0 : -1);
}

const char *
devusb_status_name(enum devusb_status st)
{
	switch (st) {
	case DEVUSB_OK:		return ("ok");
	case DEVUSB_TIMEOUT:	return ("no answer");
	case DEVUSB_STALL:	return ("endpoint stalled");
	case DEVUSB_GONE:	return ("device unplugged");
	case DEVUSB_BAD_FRAME:	return ("malformed answer");
	case DEVUSB_CANCELLED:	return ("cancelled");
	default:		return ("transfer error");
	}
}
