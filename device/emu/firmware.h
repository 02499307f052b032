/*
 * The emulated authenticator's "firmware": the device side of
 * device/PROTOCOL.md on top of the usbdevfs emulator. It keeps its key
 * pair and signature counter in a state file, shows what its display
 * shows, and takes button presses from the harness or the tests.
 */
#ifndef PSD2_FIRMWARE_H
#define PSD2_FIRMWARE_H

#include <stddef.h>
#include <stdint.h>

#include <openssl/evp.h>

#include "usbemu.h"
#include "../devframe.h"

#define FW_MODEL		"PSD2-AUTH-EMU"
#define FW_VERSION		"1.0.0"
#define FW_DISPLAY_MAX		256

enum fw_fault {
	FW_FAULT_NONE,
	FW_FAULT_NO_ANSWER,	/* shows the payment, never answers */
	FW_FAULT_STALL,		/* answers CONFIRM with a STALL */
	FW_FAULT_BAD_FRAME,	/* answers CONFIRM with a malformed frame */
	FW_FAULT_UNPLUG_MID,	/* is unplugged while confirming */
	FW_FAULT_WRONG_KEY,	/* signs with a key other than its own */
	FW_FAULT_REPEAT_COUNTER,/* signs with its previous counter */
	FW_FAULT_BUSY,		/* answers every CONFIRM with BUSY */
	FW_FAULT_BAD_ATTEST	/* attestation not from the manufacturer */
};

struct fw;

struct fw_params {
	const char	*serial;
	const char	*statedir;	/* holds SERIAL.state */
	EVP_PKEY	*manufacturer;	/* private test key */
	uint16_t	 vid;
	uint16_t	 pid;
	int		 verbose;	/* print display changes */
};

struct fw	*fw_new(struct usbemu *, const struct fw_params *, char *,
		    size_t);
void		 fw_free(struct fw *);
int		 fw_plug(struct fw *);
void		 fw_unplug(struct fw *);
int		 fw_plugged(struct fw *);
const char	*fw_serial(struct fw *);

/* Buttons: 0 if a confirmation was on the display, -1 otherwise. */
int	fw_press(struct fw *);
int	fw_decline(struct fw *);

void	fw_display(struct fw *, char *, size_t);
int	fw_pending(struct fw *);
void	fw_set_fault(struct fw *, enum fw_fault);
int	fw_fault_parse(const char *, enum fw_fault *);
uint32_t fw_counter(struct fw *);
void	fw_pubkey(struct fw *, uint8_t pub[DEV_PUBKEY_LEN]);
unsigned int fw_confirms_seen(struct fw *);
struct usbemu_dev *fw_usbdev(struct fw *);

#endif
