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

#include <openssl/pem.h>

#include "firmware.h"
#include "../devsig.h"

#define FW_UNPLUG_DELAY_MS	30

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
	uint32_t		 counter;
	enum fw_fault		 fault;
	int			 pending;
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

/* Caller holds fw->lock. */
static void
fw_show(struct fw *fw)
{
	char	fpr[DEVSIG_FPR_LEN + 1];

	if (fw->pending) {
		snprintf(fw->display, sizeof(fw->display),
		    "PAY %" PRIu64 ".%02" PRIu64 " %s TO %s %s ? [confirm|decline]",
		    fw->confirm.amount_minor / 100,
		    fw->confirm.amount_minor % 100, fw->confirm.currency,
		    fw->confirm.payee_name, fw->confirm.payee_iban);
	} else {
		devsig_fingerprint(fw->pub, fpr);
		snprintf(fw->display, sizeof(fw->display), "READY %s KEY %s",
		    fw->serial, fpr);
	}
	if (fw->verbose) {
		printf("emu %s display: %s\n", fw->serial, fw->display);
		fflush(stdout);
	}
}

/* Key and counter file: "serial S", "counter N", then the PEM key. */
static int
fw_save(struct fw *fw)
{
	char	 tmp[600];
	FILE	*fp;
	int	 ok;

	snprintf(tmp, sizeof(tmp), "%s.tmp", fw->path);
	if ((fp = fopen(tmp, "w")) == NULL)
		return (-1);
	fprintf(fp, "serial %s\ncounter %" PRIu32 "\n", fw->serial,
	    fw->counter);
	ok = PEM_write_PrivateKey(fp, fw->key, NULL, NULL, 0, NULL, NULL);
	if (fclose(fp) != 0 || !ok)
		return (-1);
	return (rename(tmp, fw->path));
}

static int
fw_load(struct fw *fw)
{
	FILE	*fp;
	char	 line[128];

	if ((fp = fopen(fw->path, "r")) == NULL)
		return (errno == ENOENT ? 1 : -1);
	if (fgets(line, sizeof(line), fp) == NULL ||
	    fgets(line, sizeof(line), fp) == NULL ||
	    sscanf(line, "counter %" SCNu32, &fw->counter) != 1) {
		fclose(fp);
		return (-1);
	}
	fw->key = PEM_read_PrivateKey(fp, NULL, NULL, NULL);
	fclose(fp);
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
	if ((rc = fw_load(fw)) == 1) {
		fw->key = EVP_EC_gen("P-256");
		rc = fw->key != NULL ? fw_save(fw) : -1;
	}
	fw->wrong_key = EVP_EC_gen("P-256");
	other = fw->wrong_key;
	if (rc != 0 || other == NULL || devsig_pubkey_raw(fw->key, fw->pub) ||
	    fw_attest(fw, p->manufacturer, fw->attest, &fw->attest_len) ||
	    fw_attest(fw, other, fw->bad_attest, &fw->bad_attest_len)) {
		snprintf(err, elen, "state file %s unusable", fw->path);
		fw_free(fw);
		return (NULL);
	}
	desc.vid = p->vid;
	desc.pid = p->pid;
	desc.manufacturer = "psd2gate test";
	desc.product = "PSD2 Authenticator (emulated)";
	desc.serial = fw->serial;
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
	size_t			 len, plen;
	EVP_PKEY		*key;

	memset(&r, 0, sizeof(r));
	memcpy(r.challenge, fw->confirm.challenge, DEV_CHALLENGE_LEN);
	r.outcome = outcome;
	if (fw->fault != FW_FAULT_REPEAT_COUNTER || fw->counter == 0) {
		fw->counter++;
		(void)fw_save(fw);
	}
	r.counter = fw->counter;
	key = fw->fault == FW_FAULT_WRONG_KEY ? fw->wrong_key : fw->key;
	len = devsig_confirm_encode(&fw->confirm, outcome, r.counter, buf,
	    sizeof(buf));
	if (len == 0 || devsig_sign(key, buf, len, r.sig, &r.sig_len) != 0)
		return;
	fw->pending = 0;
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

static void
fw_confirm(struct fw *fw, const struct dev_frame *f)
{
	struct dev_confirm	c;
	int			rc;
	static const uint8_t	junk[] = { 0x01, 0x83, 0x00 };

	if ((rc = dev_confirm_decode(f->payload, f->len, &c)) != DEV_OK) {
		fw_send_error(fw, f->seq, (uint8_t)rc, f->type);
		return;
	}
	fw->confirms_seen++;
	if (fw->fault == FW_FAULT_BUSY || (fw->pending &&
	    memcmp(c.challenge, fw->confirm.challenge, DEV_CHALLENGE_LEN))) {
		fw_send_busy(fw, &c, f->seq);
		return;
	}
	fw->confirm = c;
	fw->pending = 1;
	fw->pending_seq = f->seq;
	fw->deadline_ms = now_ms() + (int64_t)c.timeout_s * 1000;
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
	in.counter = fw->counter;
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
		fw_answer(fw, outcome);
		rc = 0;
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
