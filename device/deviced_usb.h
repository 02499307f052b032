/*
 * psd2-deviced's USB thread (deviced_usb.c): the only thread that calls
 * libusb.
 */
#ifndef PSD2_DEVICED_USB_H
#define PSD2_DEVICED_USB_H

#include "deviced_common.h"

int	devd_usb_start(const struct devd_conf *, struct dqueue *to_main,
	    struct dqueue *to_usb);
void	devd_usb_stop(void);

#endif
