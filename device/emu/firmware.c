/*
 * Emulated authenticator firmware (device/PROTOCOL.md, device side).
 *
 * Runs in three threads: OUT transfers arrive in umockdev's worker thread,
 * deadlines and deferred faults fire on the emulator thread, buttons come
 * from the harness. fw->lock guards the state; the order is fw->lock
 * before the emulator's lock.
 */
#include <errno.h>
#include <inttypes.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <openssl/crypto.h>
#include <openssl/pem.h>
#include <openssl/sha.h>

#include "firmware.h"
#include "devcur.h"
#include "devsig.h"
#include "encoding.h"

#define FW_UNPLUG_DELAY_MS	30
#define FW_PIN_MIN		4
#define FW_PIN_MAX		8
#define FW_PUK_LEN		8

struct fw {
	pthread_mutex_t		 lock;
	struct usbemu		*emu;
	struct usbemu_dev	*dev;
	char			 serial[DEV_SERIAL_MAX + 1];
	char			 path[512];
	int			 verbose;
	EVP_PKEY		*key;
	EVP_PKEY		*wrong_key;
	uint8_t			 pub[DEV_PUBKEY_LEN];
	uint8_t			 attest[DEV_SIG_MAX];
	size_t			 attest_len;
	uint8_t			 bad_attest[DEV_SIG_MAX];
	size_t			 bad_attest_len;
	uint8_t			 attest_kid[DEV_KEY_ID_LEN];
	uint32_t		 counter;
	/* Non-volatile PIN state: salted hashes and the retry counters. */
	uint8_t			 pin_hash[SHA256_DIGEST_LENGTH];
	uint8_t			 puk_hash[SHA256_DIGEST_LENGTH];
	unsigned int		 pin_fails;
	unsigned int		 puk_fails;
	enum fw_fault		 fault;
	int			 pending;
	int			 uv;		/* PIN checked for this challenge */
	char			 prompt[48];
	uint16_t		 pending_seq;
	struct dev_confirm	 confirm;
	int64_t			 deadline_ms;
	unsigned int		 confirms_seen;
	char			 display[FW_DISPLAY_MAX];
};

static int64_t
now_ms(void)
{
	struct timespec	ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ((int64_t)ts.tv_sec * 1000 + ts.tv_nsec / 1000000);
}

static int
fw_pin_locked(struct fw *fw)
{
	return (fw->pin_fails >= DEV_PIN_TRIES);
}

static int
fw_dead(struct fw *fw)
{
	return (fw->puk_fails >= DEV_PUK_TRIES);
}

/* The IBAN in groups of four, as printed on paper. */
static void
fw_iban_groups(const char *iban, char *out, size_t len)
{
	size_t	i, o = 0;

	for (i = 0; iban[i] != '\0' && o + 2 < len; i++) {
		if (i > 0 && i % 4 == 0)
			out[o++] = ' ';
		out[o++] = iban[i];
	}
	out[o] = '\0';
}

/* One log line per display change: its lines joined by " / ". */
static void
fw_log_display(struct fw *fw)
{
	const char	*p;

	printf("emu %s display: ", fw->serial);
	for (p = fw->display; *p != '\0'; p++) {
		if (*p == '\n')
			fputs(" / ", stdout);
		else
			putchar(*p);
	}
	putchar('\n');
	fflush(stdout);
}

/*
 * Caller holds fw->lock. The emulated display has four lines, each field
 * on its own line after its label and the prompt last (PROTOCOL.md
 * 5.3.3): a name never contains a line break or a label (5.3.2), so no
 * field can pass for another. Each line is wide enough for its field.
 */
static void
fw_show(struct fw *fw)
{
	char	fpr[DEVSIG_FPR_LEN + 1], amount[DEVCUR_FORMAT_MAX];
	char	iban[DEV_IBAN_MAX + DEV_IBAN_MAX / 4 + 1];

	devsig_fingerprint(fw->pub, fpr);
	if (fw->pending) {
		(void)devcur_format(fw->confirm.amount_minor,
		    fw->confirm.currency, amount, sizeof(amount));
		fw_iban_groups(fw->confirm.payee_iban, iban, sizeof(iban));
		snprintf(fw->display, sizeof(fw->display),
		    "AMOUNT %s\nPAYEE %s\nIBAN %s\n%s", amount,
		    fw->confirm.payee_name, iban, fw->uv ?
		    "PIN OK [confirm|decline]" : fw->prompt);
	} else if (fw_dead(fw)) {
		snprintf(fw->display, sizeof(fw->display), "DEAD %s PUK "
		    "tries used up: replace this device KEY %s", fw->serial,
		    fpr);
	} else if (fw_pin_locked(fw)) {
		snprintf(fw->display, sizeof(fw->display), "LOCKED %s PIN "
		    "locked: staff reset needed KEY %s", fw->serial, fpr);
	} else {
		snprintf(fw->display, sizeof(fw->display), "READY %s KEY %s",
		    fw->serial, fpr);
	}
	if (fw->verbose)
		fw_log_display(fw);
}

static int
fw_digits(const char *s, size_t min, size_t max)
{
	size_t	i, n = strlen(s);

	if (n < min || n > max)
		return (0);
	for (i = 0; i < n; i++) {
		if (s[i] < '0' || s[i] > '9')
			return (0);
	}
	return (1);
}

/* Salted with the serial and a purpose, as a secure element would. */
static void
fw_secret_hash(struct fw *fw, const char *what, const char *secret,
    uint8_t out[SHA256_DIGEST_LENGTH])
{
	EVP_MD_CTX	*md;

	memset(out, 0, SHA256_DIGEST_LENGTH);
	if ((md = EVP_MD_CTX_new()) == NULL)
		return;
	if (EVP_DigestInit_ex(md, EVP_sha256(), NULL) != 1 ||
	    EVP_DigestUpdate(md, what, strlen(what) + 1) != 1 ||
	    EVP_DigestUpdate(md, fw->serial, strlen(fw->serial) + 1) != 1 ||
	    EVP_DigestUpdate(md, secret, strlen(secret)) != 1 ||
	    EVP_DigestFinal_ex(md, out, NULL) != 1)
		memset(out, 0xff, SHA256_DIGEST_LENGTH);
	EVP_MD_CTX_free(md);
}

/* Exactly n bytes of hex, as the state file holds a hash. */
static int
fw_unhex(const char *s, uint8_t *out, size_t n)
{
	return (hex_decode(s, strlen(s), out, n) == (int)n ? 0 : -1);
}

/*
 * The state file ("non-volatile memory"): "serial S", "counter N",
 * "pin_hash H", "pin_fails N", "puk_hash H", "puk_fails N", then the PEM
 * key. A file from before the PIN (protocol version 1) gets the default
 * PIN and PUK.
 */
static int
fw_save(struct fw *fw)
{
	char	 tmp[600], pin[2 * SHA256_DIGEST_LENGTH + 1];
	char	 puk[2 * SHA256_DIGEST_LENGTH + 1];
	FILE	*fp;
	int	 ok;

	snprintf(tmp, sizeof(tmp), "%s.tmp", fw->path);
	if ((fp = fopen(tmp, "w")) == NULL)
		return (-1);
	(void)hex_encode(fw->pin_hash, sizeof(fw->pin_hash), pin, sizeof(pin));
	(void)hex_encode(fw->puk_hash, sizeof(fw->puk_hash), puk, sizeof(puk));
	fprintf(fp, "serial %s\ncounter %" PRIu32 "\npin_hash %s\n"
	    "pin_fails %u\npuk_hash %s\npuk_fails %u\n", fw->serial,
	    fw->counter, pin, fw->pin_fails, puk, fw->puk_fails);
	ok = PEM_write_PrivateKey(fp, fw->key, NULL, NULL, 0, NULL, NULL);
	if (fclose(fp) != 0 || !ok)
		return (-1);
	return (rename(tmp, fw->path));
}

static int
fw_load_line(struct fw *fw, const char *line)
{
	char	v[80];

	if (sscanf(line, "counter %" SCNu32, &fw->counter) == 1 ||
	    sscanf(line, "pin_fails %u", &fw->pin_fails) == 1 ||
	    sscanf(line, "puk_fails %u", &fw->puk_fails) == 1 ||
	    strncmp(line, "serial ", 7) == 0)
		return (0);
	if (sscanf(line, "pin_hash %79s", v) == 1)
		return (fw_unhex(v, fw->pin_hash, sizeof(fw->pin_hash)));
	if (sscanf(line, "puk_hash %79s", v) == 1)
		return (fw_unhex(v, fw->puk_hash, sizeof(fw->puk_hash)));
	return (-1);
}

static int
fw_load(struct fw *fw)
{
	FILE	*fp;
	char	 line[160];
	long	 pos;

	if ((fp = fopen(fw->path, "r")) == NULL)
		return (errno == ENOENT ? 1 : -1);
	for (;;) {
		pos = ftell(fp);
		if (fgets(line, sizeof(line), fp) == NULL) {
			fclose(fp);
			return (-1);
		}
		if (strncmp(line, "-----BEGIN", 10) == 0)
			break;
		if (fw_load_line(fw, line) != 0) {
			fclose(fp);
			return (-1);
		}
	}
	if (pos < 0 || fseek(fp, pos, SEEK_SET) != 0) {
		fclose(fp);
		return (-1);
	}
	fw->key = PEM_read_PrivateKey(fp, NULL, NULL, NULL);
	fclose(fp);
	if (fw->pin_fails > DEV_PIN_TRIES || fw->puk_fails > DEV_PUK_TRIES)
		return (-1);
	return (fw->key != NULL ? 0 : -1);
}

static int
fw_attest(struct fw *fw, EVP_PKEY *signer, uint8_t *sig, size_t *siglen)
{
	uint8_t	buf[DEVSIG_ENCODING_MAX];
	size_t	len;

	len = devsig_attest_encode(fw->serial, FW_MODEL, fw->pub, buf,
	    sizeof(buf));
	if (len == 0)
		return (-1);
	return (devsig_sign(signer, buf, len, sig, siglen));
}

static void	fw_on_out(struct usbemu_dev *, void *, const uint8_t *, size_t);

struct fw *
fw_new(struct usbemu *emu, const struct fw_params *p, char *err, size_t elen)
{
	struct fw		*fw;
	struct usbemu_desc	 desc;
	EVP_PKEY		*other;
	int			 rc;

	if (!dev_valid_serial(p->serial, strlen(p->serial))) {
		snprintf(err, elen, "bad serial");
		return (NULL);
	}
	if ((fw = calloc(1, sizeof(*fw))) == NULL) {
		snprintf(err, elen, "out of memory");
		return (NULL);
	}
	pthread_mutex_init(&fw->lock, NULL);
	fw->emu = emu;
	fw->verbose = p->verbose;
	snprintf(fw->serial, sizeof(fw->serial), "%s", p->serial);
	snprintf(fw->path, sizeof(fw->path), "%s/%s.state", p->statedir,
	    p->serial);
	if (!fw_digits(p->pin ? p->pin : FW_DEFAULT_PIN, FW_PIN_MIN,
	    FW_PIN_MAX) || !fw_digits(p->puk ? p->puk : FW_DEFAULT_PUK,
	    FW_PUK_LEN, FW_PUK_LEN)) {
		snprintf(err, elen, "PIN must be 4 to 8 digits, PUK 8 digits");
		fw_free(fw);
		return (NULL);
	}
	fw_secret_hash(fw, "PIN", p->pin ? p->pin : FW_DEFAULT_PIN,
	    fw->pin_hash);
	fw_secret_hash(fw, "PUK", p->puk ? p->puk : FW_DEFAULT_PUK,
	    fw->puk_hash);
	if ((rc = fw_load(fw)) == 1) {
		fw->key = EVP_EC_gen("P-256");
		rc = fw->key != NULL ? fw_save(fw) : -1;
	}
	fw->wrong_key = EVP_EC_gen("P-256");
	other = fw->wrong_key;
	if (rc != 0 || other == NULL || devsig_pubkey_raw(fw->key, fw->pub) ||
	    fw_attest(fw, p->manufacturer, fw->attest, &fw->attest_len) ||
	    fw_attest(fw, other, fw->bad_attest, &fw->bad_attest_len) ||
	    devsig_pkey_id(p->manufacturer, fw->attest_kid) ||
	    (rc = fw_save(fw)) != 0) {
		snprintf(err, elen, "state file %s unusable", fw->path);
		fw_free(fw);
		return (NULL);
	}
	desc.vid = p->vid;
	desc.pid = p->pid;
	desc.manufacturer = "psd2gate test";
	desc.product = "PSD2 Authenticator (emulated)";
	desc.serial = fw->serial;
	desc.high_speed = p->high_speed;
	fw->dev = usbemu_dev_new(emu, &desc, fw_on_out, fw);
	pthread_mutex_lock(&fw->lock);
	fw_show(fw);
	pthread_mutex_unlock(&fw->lock);
	return (fw);
}

void
fw_free(struct fw *fw)
{
	if (fw == NULL)
		return;
	EVP_PKEY_free(fw->key);
	EVP_PKEY_free(fw->wrong_key);
	pthread_mutex_destroy(&fw->lock);
	free(fw);
}

const char *
fw_serial(struct fw *fw)
{
	return (fw->serial);
}

struct usbemu_dev *
fw_usbdev(struct fw *fw)
{
	return (fw->dev);
}

int
fw_plug(struct fw *fw)
{
	return (usbemu_dev_plug(fw->dev));
}

void
fw_unplug(struct fw *fw)
{
	pthread_mutex_lock(&fw->lock);
	/* Unplugging powers the device off: what it showed is gone. */
	fw->pending = 0;
	fw->uv = 0;
	fw_show(fw);
	pthread_mutex_unlock(&fw->lock);
	usbemu_dev_unplug(fw->dev);
}

int
fw_plugged(struct fw *fw)
{
	return (usbemu_dev_plugged(fw->dev));
}

/* Caller holds fw->lock. */
static void
fw_send(struct fw *fw, uint8_t type, uint16_t seq, const uint8_t *payload,
    size_t plen)
{
	uint8_t	frame[DEV_FRAME_MAX];
	size_t	len;

	if ((len = dev_frame_encode(frame, sizeof(frame), type, seq, payload,
	    plen)) == 0)
		return;
	(void)usbemu_dev_send_in(fw->dev, frame, len);
}

static void
fw_send_error(struct fw *fw, uint16_t seq, uint8_t code, uint8_t type)
{
	uint8_t	p[2] = { code, type };

	fw_send(fw, DEV_MSG_ERROR, seq, p, sizeof(p));
}

/* Caller holds fw->lock: signs and sends the pending confirmation's end. */
static void
fw_answer(struct fw *fw, uint8_t outcome)
{
	struct dev_result	 r;
	uint8_t			 buf[DEVSIG_ENCODING_MAX], payload[128];
	uint8_t			 signed_flags;
	size_t			 len, plen;
	EVP_PKEY		*key;

	memset(&r, 0, sizeof(r));
	memcpy(r.challenge, fw->confirm.challenge, DEV_CHALLENGE_LEN);
	r.outcome = outcome;
	r.flags = (uint8_t)dev_outcome_flags(outcome);
	signed_flags = r.flags;
	if (fw->fault == FW_FAULT_NO_UV)
		signed_flags &= (uint8_t)~DEV_FLAG_UV;
	/* Persisted before the RESULT leaves (PROTOCOL.md 4.3). */
	if (fw->fault != FW_FAULT_REPEAT_COUNTER || fw->counter == 0) {
		fw->counter++;
		(void)fw_save(fw);
	}
	r.counter = fw->counter;
	key = fw->fault == FW_FAULT_WRONG_KEY ? fw->wrong_key : fw->key;
	len = devsig_confirm_encode(&fw->confirm, outcome, signed_flags,
	    r.counter, buf, sizeof(buf));
	if (len == 0 || devsig_sign(key, buf, len, r.sig, &r.sig_len) != 0)
		return;
	fw->pending = 0;
	fw->uv = 0;
	fw_show(fw);
	if ((plen = dev_result_encode(&r, payload, sizeof(payload))) == 0)
		return;
	fw_send(fw, DEV_MSG_RESULT, fw->pending_seq, payload, plen);
}

static void
fw_deadline(void *arg)
{
	struct fw	*fw = arg;

	pthread_mutex_lock(&fw->lock);
	if (fw->pending && fw->fault != FW_FAULT_NO_ANSWER &&
	    now_ms() >= fw->deadline_ms)
		fw_answer(fw, DEV_OUTCOME_TIMED_OUT);
	pthread_mutex_unlock(&fw->lock);
}

static void
fw_deferred_unplug(void *arg)
{
	fw_unplug(arg);
}

static void
fw_send_busy(struct fw *fw, const struct dev_confirm *c, uint16_t seq)
{
	struct dev_result	r;
	uint8_t			payload[64];
	size_t			plen;

	memset(&r, 0, sizeof(r));
	memcpy(r.challenge, c->challenge, DEV_CHALLENGE_LEN);
	r.outcome = DEV_OUTCOME_BUSY;
	r.counter = fw->counter;
	if ((plen = dev_result_encode(&r, payload, sizeof(payload))) != 0)
		fw_send(fw, DEV_MSG_RESULT, seq, payload, plen);
}

/* The same payment: everything but the timeout is equal. */
static int
fw_same_content(const struct dev_confirm *a, const struct dev_confirm *b)
{
	return (memcmp(a->challenge, b->challenge, DEV_CHALLENGE_LEN) == 0 &&
	    memcmp(a->nonce, b->nonce, DEV_NONCE_LEN) == 0 &&
	    a->amount_minor == b->amount_minor &&
	    strcmp(a->currency, b->currency) == 0 &&
	    strcmp(a->payee_name, b->payee_name) == 0 &&
	    strcmp(a->payee_iban, b->payee_iban) == 0);
}

/* Checks in the order of PROTOCOL.md 5.3; 0 to show c, else answered. */
static int
fw_confirm_refused(struct fw *fw, const struct dev_frame *f,
    const struct dev_confirm *c)
{
	uint8_t	code = 0;

	if (fw_pin_locked(fw) || fw_dead(fw))
		code = DEV_ERR_PIN_LOCKED;
	else if (fw->counter == UINT32_MAX)
		code = DEV_ERR_EXHAUSTED;
	else if (!devcur_displayable(c->currency))
		code = DEV_ERR_CURRENCY;
	else if (fw->pending && memcmp(c->challenge, fw->confirm.challenge,
	    DEV_CHALLENGE_LEN) == 0 && !fw_same_content(c, &fw->confirm))
		code = DEV_ERR_CONFLICT;
	if (code != 0) {
		fw_send_error(fw, f->seq, code, f->type);
		return (1);
	}
	if (fw->fault == FW_FAULT_BUSY || (fw->pending &&
	    memcmp(c->challenge, fw->confirm.challenge, DEV_CHALLENGE_LEN))) {
		fw_send_busy(fw, c, f->seq);
		return (1);
	}
	return (0);
}

static void
fw_confirm(struct fw *fw, const struct dev_frame *f)
{
	struct dev_confirm	c;
	int			rc, retake;
	static const uint8_t	junk[] = { 0x02, 0x83, 0x00 };

	if ((rc = dev_confirm_decode(f->payload, f->len, &c)) != DEV_OK) {
		fw_send_error(fw, f->seq, (uint8_t)rc, f->type);
		return;
	}
	fw->confirms_seen++;
	if (fw_confirm_refused(fw, f, &c))
		return;
	/* The same payment again (a host retook it): keep display and PIN. */
	retake = fw->pending;
	fw->confirm = c;
	fw->pending = 1;
	fw->pending_seq = f->seq;
	fw->deadline_ms = now_ms() + (int64_t)c.timeout_s * 1000;
	if (!retake) {
		fw->uv = 0;
		snprintf(fw->prompt, sizeof(fw->prompt), "ENTER PIN [decline]");
	}
	fw_show(fw);
	switch (fw->fault) {
	case FW_FAULT_STALL:
		usbemu_dev_stall_in(fw->dev);
		break;
	case FW_FAULT_BAD_FRAME:
		(void)usbemu_dev_send_in(fw->dev, junk, sizeof(junk));
		break;
	case FW_FAULT_UNPLUG_MID:
		usbemu_task(fw->emu, FW_UNPLUG_DELAY_MS, fw_deferred_unplug, fw);
		break;
	default:
		usbemu_task(fw->emu, (unsigned int)c.timeout_s * 1000 + 1,
		    fw_deadline, fw);
		break;
	}
}

static void
fw_cancel(struct fw *fw, const struct dev_frame *f)
{
	uint8_t	id[DEV_CHALLENGE_LEN];

	if (dev_cancel_decode(f->payload, f->len, id) != DEV_OK) {
		fw_send_error(fw, f->seq, DEV_ERR_PAYLOAD, f->type);
		return;
	}
	if (!fw->pending || memcmp(id, fw->confirm.challenge, sizeof(id))) {
		fw_send_error(fw, f->seq, DEV_ERR_NOT_PENDING, f->type);
		return;
	}
	fw->pending = 0;
	fw->uv = 0;
	fw_show(fw);
	fw_send(fw, DEV_MSG_CANCELLED, f->seq, id, sizeof(id));
}

static void
fw_info(struct fw *fw, const struct dev_frame *f)
{
	struct dev_info	in;
	uint8_t		payload[256];
	size_t		plen;

	if (f->len != 0) {
		fw_send_error(fw, f->seq, DEV_ERR_PAYLOAD, f->type);
		return;
	}
	memset(&in, 0, sizeof(in));
	snprintf(in.serial, sizeof(in.serial), "%s", fw->serial);
	snprintf(in.model, sizeof(in.model), "%s", FW_MODEL);
	snprintf(in.firmware, sizeof(in.firmware), "%s", FW_VERSION);
	memcpy(in.pubkey, fw->pub, DEV_PUBKEY_LEN);
	/* Flipping y's last bit gives y + 1 or y - 1; x has only y and p - y
	 * on the curve, and p - y is neither for the emulator's keys. */
	if (fw->fault == FW_FAULT_BAD_KEY)
		in.pubkey[DEV_PUBKEY_LEN - 1] ^= 0x01;
	in.counter = fw->counter;
	in.pin_tries = (uint8_t)(DEV_PIN_TRIES - fw->pin_fails);
	in.puk_tries = (uint8_t)(DEV_PUK_TRIES - fw->puk_fails);
	memcpy(in.attest_kid, fw->attest_kid, DEV_KEY_ID_LEN);
	if (fw->fault == FW_FAULT_BAD_ATTEST) {
		memcpy(in.attest, fw->bad_attest, fw->bad_attest_len);
		in.attest_len = fw->bad_attest_len;
	} else {
		memcpy(in.attest, fw->attest, fw->attest_len);
		in.attest_len = fw->attest_len;
	}
	if ((plen = dev_info_encode(&in, payload, sizeof(payload))) != 0)
		fw_send(fw, DEV_MSG_INFO_ANSWER, f->seq, payload, plen);
}

static void
fw_on_out(struct usbemu_dev *dev, void *arg, const uint8_t *data, size_t len)
{
	struct fw		*fw = arg;
	struct dev_frame	 f;
	int			 rc;

	(void)dev;
	/* An empty transfer is a host's stray zero-length packet: no frame. */
	if (len == 0)
		return;
	pthread_mutex_lock(&fw->lock);
	if ((rc = dev_frame_decode(data, len, &f)) != DEV_OK) {
		/* The sequence is echoed only from a readable header. */
		fw_send_error(fw, rc == DEV_ERR_TRUNCATED && len < DEV_HDR_LEN ?
		    0 : f.seq, (uint8_t)rc, f.type);
		pthread_mutex_unlock(&fw->lock);
		return;
	}
	switch (f.type) {
	case DEV_MSG_PING:
		if (f.len > DEV_PING_MAX)
			fw_send_error(fw, f.seq, DEV_ERR_PAYLOAD, f.type);
		else
			fw_send(fw, DEV_MSG_PONG, f.seq, f.payload, f.len);
		break;
	case DEV_MSG_INFO:
		fw_info(fw, &f);
		break;
	case DEV_MSG_CONFIRM:
		fw_confirm(fw, &f);
		break;
	case DEV_MSG_CANCEL:
		fw_cancel(fw, &f);
		break;
	default:
		fw_send_error(fw, f.seq, DEV_ERR_TYPE, f.type);
		break;
	}
	pthread_mutex_unlock(&fw->lock);
}

static int
fw_button(struct fw *fw, uint8_t outcome)
{
	int	rc = -1;

	pthread_mutex_lock(&fw->lock);
	if (fw->pending && fw->fault != FW_FAULT_NO_ANSWER &&
	    fw->fault != FW_FAULT_STALL && fw->fault != FW_FAULT_BAD_FRAME) {
		/* Declining needs no PIN; confirming does (RTS Art. 4). */
		if (outcome == DEV_OUTCOME_APPROVED && !fw->uv &&
		    fw->fault != FW_FAULT_NO_UV) {
			rc = -2;
		} else {
			fw_answer(fw, outcome);
			rc = 0;
		}
	}
	pthread_mutex_unlock(&fw->lock);
	return (rc);
}

int
fw_press(struct fw *fw)
{
	return (fw_button(fw, DEV_OUTCOME_APPROVED));
}

int
fw_decline(struct fw *fw)
{
	return (fw_button(fw, DEV_OUTCOME_DECLINED));
}

/* Caller holds fw->lock: the fifth wrong PIN ends the challenge. */
static void
fw_lock_now(struct fw *fw)
{
	uint16_t	seq = fw->pending_seq;

	fw->pending = 0;
	fw->uv = 0;
	fw_show(fw);
	fw_send_error(fw, seq, DEV_ERR_PIN_LOCKED, DEV_MSG_CONFIRM);
}

int
fw_pin(struct fw *fw, const char *pin)
{
	uint8_t	h[SHA256_DIGEST_LENGTH];
	int	rc;

	if (!fw_digits(pin, FW_PIN_MIN, FW_PIN_MAX))
		return (FW_PIN_FORMAT);
	pthread_mutex_lock(&fw->lock);
	if (fw_dead(fw) || fw_pin_locked(fw)) {
		rc = fw_dead(fw) ? FW_PIN_DEAD : FW_PIN_LOCKED;
	} else if (!fw->pending || fw->uv) {
		rc = FW_PIN_NOTHING;
	} else {
		fw_secret_hash(fw, "PIN", pin, h);
		if (CRYPTO_memcmp(h, fw->pin_hash, sizeof(h)) == 0) {
			fw->pin_fails = 0;
			fw->uv = 1;
			rc = FW_PIN_OK;
		} else {
			fw->pin_fails++;
			rc = fw_pin_locked(fw) ? FW_PIN_LOCKED : FW_PIN_WRONG;
			snprintf(fw->prompt, sizeof(fw->prompt),
			    "WRONG PIN, %u TRIES LEFT [decline]",
			    DEV_PIN_TRIES - fw->pin_fails);
		}
		/* The retry counter is persisted before anything is shown. */
		(void)fw_save(fw);
		if (rc == FW_PIN_LOCKED)
			fw_lock_now(fw);
		else
			fw_show(fw);
	}
	pthread_mutex_unlock(&fw->lock);
	return (rc);
}

int
fw_unlock(struct fw *fw, const char *puk, const char *newpin)
{
	uint8_t	h[SHA256_DIGEST_LENGTH];
	int	rc;

	if (!fw_digits(puk, FW_PUK_LEN, FW_PUK_LEN) ||
	    !fw_digits(newpin, FW_PIN_MIN, FW_PIN_MAX))
		return (FW_PIN_FORMAT);
	pthread_mutex_lock(&fw->lock);
	if (fw_dead(fw)) {
		rc = FW_PIN_DEAD;
	} else if (!fw_pin_locked(fw)) {
		rc = FW_PIN_NOTHING;
	} else {
		fw_secret_hash(fw, "PUK", puk, h);
		if (CRYPTO_memcmp(h, fw->puk_hash, sizeof(h)) == 0) {
			fw->puk_fails = 0;
			fw->pin_fails = 0;
			fw_secret_hash(fw, "PIN", newpin, fw->pin_hash);
			rc = FW_PIN_OK;
		} else {
			fw->puk_fails++;
			rc = fw_dead(fw) ? FW_PIN_DEAD : FW_PIN_WRONG;
		}
		(void)fw_save(fw);
		fw_show(fw);
	}
	pthread_mutex_unlock(&fw->lock);
	return (rc);
}

int
fw_pin_tries(struct fw *fw)
{
	int	n;

	pthread_mutex_lock(&fw->lock);
	n = DEV_PIN_TRIES - (int)fw->pin_fails;
	pthread_mutex_unlock(&fw->lock);
	return (n);
}

void
fw_set_counter(struct fw *fw, uint32_t counter)
{
	pthread_mutex_lock(&fw->lock);
	fw->counter = counter;
	(void)fw_save(fw);
	pthread_mutex_unlock(&fw->lock);
}

void
fw_display(struct fw *fw, char *out, size_t len)
{
	pthread_mutex_lock(&fw->lock);
	snprintf(out, len, "%s", fw->display);
	pthread_mutex_unlock(&fw->lock);
}

int
fw_pending(struct fw *fw)
{
	int	p;

	pthread_mutex_lock(&fw->lock);
	p = fw->pending;
	pthread_mutex_unlock(&fw->lock);
	return (p);
}

void
fw_set_fault(struct fw *fw, enum fw_fault fault)
{
	pthread_mutex_lock(&fw->lock);
	fw->fault = fault;
	pthread_mutex_unlock(&fw->lock);
}

int
fw_fault_parse(const char *s, enum fw_fault *out)
{
	static const struct {
		const char	*name;
		enum fw_fault	 fault;
	} names[] = {
		{ "none", FW_FAULT_NONE },
		{ "noanswer", FW_FAULT_NO_ANSWER },
		{ "stall", FW_FAULT_STALL },
		{ "badframe", FW_FAULT_BAD_FRAME },
		{ "unplugmid", FW_FAULT_UNPLUG_MID },
		{ "wrongkey", FW_FAULT_WRONG_KEY },
		{ "repeatcounter", FW_FAULT_REPEAT_COUNTER },
		{ "busy", FW_FAULT_BUSY },
		{ "badattest", FW_FAULT_BAD_ATTEST },
		{ "nouv", FW_FAULT_NO_UV },
		{ "badkey", FW_FAULT_BAD_KEY },
	};
	size_t	i;

	for (i = 0; i < sizeof(names) / sizeof(names[0]); i++) {
		if (strcmp(s, names[i].name) == 0) {
			*out = names[i].fault;
			return (0);
		}
	}
	return (-1);
}

uint32_t
fw_counter(struct fw *fw)
{
	uint32_t	c;

	pthread_mutex_lock(&fw->lock);
	c = fw->counter;
	pthread_mutex_unlock(&fw->lock);
	return (c);
}

void
fw_pubkey(struct fw *fw, uint8_t pub[DEV_PUBKEY_LEN])
{
	memcpy(pub, fw->pub, DEV_PUBKEY_LEN);
}

unsigned int
fw_confirms_seen(struct fw *fw)
{
	unsigned int	n;

	pthread_mutex_lock(&fw->lock);
	n = fw->confirms_seen;
	pthread_mutex_unlock(&fw->lock);
	return (n);
}
