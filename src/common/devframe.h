/*
 * Frame codec of the psd2gate authenticator protocol (device/PROTOCOL.md).
 *
 * Pure C: no I/O, no allocation. Every decoder takes untrusted bytes and
 * either fills a structure whose fields are all validated or returns a
 * DEV_ERR_* code that is also the code of the protocol's ERROR answer.
 */
#ifndef PSD2_DEVFRAME_H
#define PSD2_DEVFRAME_H

#include <stddef.h>
#include <stdint.h>

#define DEV_PROTO_VERSION	0x03	/* versions 1 and 2 are withdrawn */
#define DEV_HDR_LEN		6
#define DEV_FRAME_MAX		1024
#define DEV_PAYLOAD_MAX		(DEV_FRAME_MAX - DEV_HDR_LEN)
#define DEV_PACKET_SIZE		64	/* full speed; 512 at high speed */

/* Message types: requests from the host, answers have bit 7 set. */
#define DEV_MSG_PING		0x01
#define DEV_MSG_INFO		0x02
#define DEV_MSG_CONFIRM		0x03
#define DEV_MSG_CANCEL		0x04
#define DEV_MSG_PONG		0x81
#define DEV_MSG_INFO_ANSWER	0x82
#define DEV_MSG_RESULT		0x83
#define DEV_MSG_CANCELLED	0x84
#define DEV_MSG_ERROR		0x7f

/* Error codes: decoder results and the ERROR answer's code byte. */
#define DEV_OK			0x00
#define DEV_ERR_VERSION		0x01
#define DEV_ERR_TRUNCATED	0x02
#define DEV_ERR_OVERSIZED	0x03
#define DEV_ERR_TYPE		0x04
#define DEV_ERR_PAYLOAD		0x05
#define DEV_ERR_NOT_PENDING	0x06
#define DEV_ERR_CURRENCY	0x07	/* currency not in the display table */
#define DEV_ERR_CONFLICT	0x08	/* shown challenge id, other content */
#define DEV_ERR_PIN_LOCKED	0x09	/* 5 wrong PINs; staff must reset */
#define DEV_ERR_EXHAUSTED	0x0a	/* signature counter at 2^32 - 1 */
#define DEV_ERR_MAX		DEV_ERR_EXHAUSTED

/* Outcomes of a RESULT answer. */
#define DEV_OUTCOME_APPROVED	0x01
#define DEV_OUTCOME_DECLINED	0x02
#define DEV_OUTCOME_TIMED_OUT	0x03
#define DEV_OUTCOME_BUSY	0x04

/* Signed flags of a RESULT (the bits of FIDO2's authenticator data). */
#define DEV_FLAG_UP		0x01	/* user present: a button was pressed */
#define DEV_FLAG_UV		0x04	/* user verified: PIN checked on the device */

#define DEV_PIN_TRIES		5	/* wrong PINs in a row before the lock */
#define DEV_PUK_TRIES		10	/* wrong PUKs before the device is dead */
#define DEV_KEY_ID_LEN		8

#define DEV_SERIAL_MAX		32
#define DEV_MODEL_MAX		32
#define DEV_FIRMWARE_MAX	16
#define DEV_PUBKEY_LEN		65
#define DEV_SIG_MAX		72
#define DEV_SIG_MIN		8
#define DEV_CHALLENGE_LEN	16
#define DEV_NONCE_LEN		32
#define DEV_PAYEE_NAME_MAX	70
#define DEV_IBAN_MIN		5
#define DEV_IBAN_MAX		34
#define DEV_PING_MAX		32
#define DEV_TIMEOUT_MAX		600

struct dev_frame {
	uint8_t		 version;
	uint8_t		 type;
	uint16_t	 seq;
	uint16_t	 len;
	const uint8_t	*payload;	/* points into the decoded buffer */
};

struct dev_info {
	char		serial[DEV_SERIAL_MAX + 1];
	char		model[DEV_MODEL_MAX + 1];
	char		firmware[DEV_FIRMWARE_MAX + 1];
	uint8_t		pubkey[DEV_PUBKEY_LEN];
	uint32_t	counter;
	uint8_t		pin_tries;	/* PIN tries left; 0: locked */
	uint8_t		puk_tries;	/* PUK tries left; 0: dead */
	uint8_t		attest_kid[DEV_KEY_ID_LEN];	/* manufacturer CA */
	uint8_t		attest[DEV_SIG_MAX];
	size_t		attest_len;
};

struct dev_confirm {
	uint8_t		challenge[DEV_CHALLENGE_LEN];
	uint8_t		nonce[DEV_NONCE_LEN];
	uint64_t	amount_minor;
	char		currency[4];
	char		payee_name[DEV_PAYEE_NAME_MAX + 1];
	char		payee_iban[DEV_IBAN_MAX + 1];
	uint16_t	timeout_s;
};

struct dev_result {
	uint8_t		challenge[DEV_CHALLENGE_LEN];
	uint8_t		outcome;
	uint8_t		flags;
	uint32_t	counter;
	uint8_t		sig[DEV_SIG_MAX];
	size_t		sig_len;
};

struct dev_error {
	uint8_t		code;
	uint8_t		offending_type;
};

/* Whole frames. encode returns the frame length or 0 if it does not fit. */
size_t	dev_frame_encode(uint8_t *out, size_t outlen, uint8_t type,
	    uint16_t seq, const uint8_t *payload, size_t plen);
int	dev_frame_decode(const uint8_t *buf, size_t len, struct dev_frame *f);

/* Payloads: encode returns the payload length or 0; decode DEV_OK or code. */
size_t	dev_info_encode(const struct dev_info *, uint8_t *, size_t);
int	dev_info_decode(const uint8_t *, size_t, struct dev_info *);
size_t	dev_confirm_encode(const struct dev_confirm *, uint8_t *, size_t);
int	dev_confirm_decode(const uint8_t *, size_t, struct dev_confirm *);
size_t	dev_result_encode(const struct dev_result *, uint8_t *, size_t);
int	dev_result_decode(const uint8_t *, size_t, struct dev_result *);
int	dev_cancel_decode(const uint8_t *, size_t, uint8_t *);
int	dev_error_decode(const uint8_t *, size_t, struct dev_error *);

/* Field checks shared by the codec, the daemon and the database layer. */
int	dev_valid_serial(const char *, size_t);
int	dev_valid_text(const char *, size_t, size_t);
int	dev_valid_currency(const char *, size_t);
int	dev_valid_iban(const char *, size_t);		/* iban_valid() */
int	dev_valid_payee(const char *, size_t);		/* devtext_payee_ok() */
int	dev_valid_utf8_line(const char *, size_t, size_t);
/* The only flags a RESULT with this outcome may carry, or -1. */
int	dev_outcome_flags(int outcome);

const char	*dev_error_name(int);
const char	*dev_outcome_name(int);

#endif
