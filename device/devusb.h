/*
 * libusb transport of the authenticator protocol: opens a device by its
 * vendor-specific interface, and runs one request at a time (OUT frame,
 * then the IN answer with the same sequence number) asynchronously on the
 * caller's libusb event thread.
 */
#ifndef PSD2_DEVUSB_H
#define PSD2_DEVUSB_H

#include <stddef.h>
#include <stdint.h>

#include <libusb.h>

#include "devframe.h"

enum devusb_status {
	DEVUSB_OK,		/* frame decoded, same sequence number */
	DEVUSB_TIMEOUT,		/* no answer in time */
	DEVUSB_STALL,		/* the device stalled an endpoint */
	DEVUSB_GONE,		/* the device disappeared */
	DEVUSB_BAD_FRAME,	/* the answer was not a valid frame */
	DEVUSB_CANCELLED,	/* devusb_abort() */
	DEVUSB_IO		/* any other transfer error */
};

#define DEVUSB_OUT_TIMEOUT_MS	1000
#define DEVUSB_CTRL_TIMEOUT_MS	1000

struct devusb;

/* f is valid only for DEVUSB_OK and only during the call. */
typedef void	(*devusb_cb)(struct devusb *, void *, enum devusb_status,
		    const struct dev_frame *);

/* 1 if the device has our VID:PID, 0 if not. */
int		 devusb_match(libusb_device *, uint16_t vid, uint16_t pid);
/* Opens, claims the vendor interface and reads the serial (sync: call
 * outside libusb callbacks). NULL with a reason in err. */
struct devusb	*devusb_open(libusb_device *, char *err, size_t errlen);
/* Closes once the transfers in flight have ended; the memory and the
 * libusb handle are released by the next devusb_collect(). */
void		 devusb_close(struct devusb *);
/* Call from the event thread outside libusb callbacks (after each
 * libusb_handle_events*()); not thread-safe. */
void		 devusb_collect(void);

const char	*devusb_serial(struct devusb *);
libusb_device	*devusb_device(struct devusb *);
int		 devusb_busy(struct devusb *);

int	devusb_request(struct devusb *, uint8_t type, const uint8_t *payload,
	    size_t plen, unsigned int timeout_ms, devusb_cb, void *arg);
/* Ends the request in flight with DEVUSB_CANCELLED. */
void	devusb_abort(struct devusb *);
/* After a STALL, before the next request (sync ioctl). */
int	devusb_clear_halt(struct devusb *);

const char	*devusb_status_name(enum devusb_status);

#endif
