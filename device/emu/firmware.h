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
#include "devframe.h"

#define FW_MODEL		"PSD2-AUTH-EMU"
#define FW_VERSION		"3.0.0"
#define FW_DISPLAY_MAX		320
/* Sandbox and test secrets of a new emulated device (README.md). */
#define FW_DEFAULT_PIN		"1234"
#define FW_DEFAULT_PUK		"12345678"

enum fw_fault {
	FW_FAULT_NONE,
	FW_FAULT_NO_ANSWER,	/* shows the payment, never answers */
	FW_FAULT_STALL,		/* answers CONFIRM with a STALL */
	FW_FAULT_BAD_FRAME,	/* answers CONFIRM with a malformed frame */
	FW_FAULT_UNPLUG_MID,	/* is unplugged while confirming */
	FW_FAULT_WRONG_KEY,	/* signs with a key other than its own */
	FW_FAULT_REPEAT_COUNTER,/* signs with its previous counter */
	FW_FAULT_BUSY,		/* answers every CONFIRM with BUSY */
	FW_FAULT_BAD_ATTEST,	/* attestation not from the manufacturer */
	FW_FAULT_NO_UV,		/* approves without a PIN, signs without UV,
				 * and its RESULT claims UV all the same */
	FW_FAULT_BAD_KEY	/* INFO's public key is not a P-256 point */
};

/* fw_pin() and fw_unlock() results. */
#define FW_PIN_OK		0
#define FW_PIN_WRONG		1	/* tries are left */
#define FW_PIN_LOCKED		2	/* locked now, or already */
#define FW_PIN_DEAD		3	/* PUK tries used up: replace it */
#define FW_PIN_NOTHING		(-1)	/* nothing to enter a PIN for */
#define FW_PIN_FORMAT		(-2)	/* not 4..8 digits (PUK: 8 digits) */

struct fw;

struct fw_params {
	const char	*serial;
	const char	*statedir;	/* holds SERIAL.state */
	EVP_PKEY	*manufacturer;	/* private test key */
	uint16_t	 vid;
	uint16_t	 pid;
	int		 verbose;	/* print display changes */
	int		 high_speed;	/* 512-byte packets */
	const char	*pin;		/* for a new state file; NULL: default */
	const char	*puk;
};

struct fw	*fw_new(struct usbemu *, const struct fw_params *, char *,
		    size_t);
void		 fw_free(struct fw *);
int		 fw_plug(struct fw *);
void		 fw_unplug(struct fw *);
int		 fw_plugged(struct fw *);
const char	*fw_serial(struct fw *);

/* Buttons: 0 if a confirmation was on the display, -1 otherwise; the
 * confirm button also -2 while the PIN has not been entered. */
int	fw_press(struct fw *);
int	fw_decline(struct fw *);
/* The PIN keypad (FW_PIN_*), and the staff's PUK reset of a locked PIN. */
int	fw_pin(struct fw *, const char *pin);
int	fw_unlock(struct fw *, const char *puk, const char *newpin);
int	fw_pin_tries(struct fw *);
/* Tests: puts the signature counter where exhaustion can be reached. */
void	fw_set_counter(struct fw *, uint32_t);

void	fw_display(struct fw *, char *, size_t);
int	fw_pending(struct fw *);
void	fw_set_fault(struct fw *, enum fw_fault);
int	fw_fault_parse(const char *, enum fw_fault *);
uint32_t fw_counter(struct fw *);
void	fw_pubkey(struct fw *, uint8_t pub[DEV_PUBKEY_LEN]);
unsigned int fw_confirms_seen(struct fw *);
struct usbemu_dev *fw_usbdev(struct fw *);

#endif
