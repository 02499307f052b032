/*
 * A reusable usbdevfs emulator on top of umockdev: emulated USB devices
 * with one vendor-specific interface (bulk OUT 0x01, bulk IN 0x81) that an
 * unmodified libusb program drives through the umockdev preload.
 *
 * Facts and traps: UMOCKDEV.md beside this file. In short: create the
 * emulator before anything calls libusb_init(); the device node is a FIFO
 * kept writable only while a URB is ready to reap, so that libusb sleeps
 * in poll() instead of spinning; ioctls arrive in umockdev's worker thread.
 */
#ifndef PSD2_USBEMU_H
#define PSD2_USBEMU_H

#include <stddef.h>
#include <stdint.h>

struct usbemu;
struct usbemu_dev;

/* Called (in umockdev's worker thread, no emulator lock held) with the
 * bytes of each completed bulk OUT transfer. */
typedef void	(*usbemu_out_cb)(struct usbemu_dev *, void *, const uint8_t *,
		    size_t);
typedef void	(*usbemu_task_cb)(void *);

struct usbemu_desc {
	uint16_t	 vid;
	uint16_t	 pid;
	const char	*manufacturer;
	const char	*product;
	const char	*serial;
	int		 high_speed;	/* 512-byte bulk packets, else 64 */
};

struct usbemu	*usbemu_new(void);
void		 usbemu_free(struct usbemu *);
const char	*usbemu_root(struct usbemu *);

/* Runs fn(arg) on the emulator's own thread after delay_ms; returns an
 * id for usbemu_cancel_task (0 on failure). */
unsigned int	 usbemu_task(struct usbemu *, unsigned int delay_ms,
		    usbemu_task_cb, void *);
void		 usbemu_cancel_task(struct usbemu *, unsigned int);

struct usbemu_dev	*usbemu_dev_new(struct usbemu *,
			    const struct usbemu_desc *, usbemu_out_cb, void *);
int			 usbemu_dev_plug(struct usbemu_dev *);
void			 usbemu_dev_unplug(struct usbemu_dev *);
int			 usbemu_dev_plugged(struct usbemu_dev *);
const char		*usbemu_dev_serial(struct usbemu_dev *);

/*
 * Queues one IN transfer's bytes (answered to the next IN URB). As on the
 * wire, a transfer whose length is a multiple of the packet size is
 * followed by a zero-length packet: it ends the host's URB if that URB
 * has room left, otherwise it completes the next IN URB with 0 bytes.
 * len 0 sends a lone zero-length packet.
 */
int	usbemu_dev_send_in(struct usbemu_dev *, const uint8_t *, size_t);
/* The pending (or next) IN URB ends with a STALL (-EPIPE). */
void	usbemu_dev_stall_in(struct usbemu_dev *);
/* Number of IN URBs the host has pending, for tests that must wait
 * until the host listens. */
size_t	usbemu_dev_in_pending(struct usbemu_dev *);

#endif
