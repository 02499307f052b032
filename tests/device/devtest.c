/* Helpers shared by the device tests. */
#include <dirent.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include <openssl/pem.h>
#include <openssl/rand.h>

#include "devtest.h"

static const char *
testkeys(void)
{
	const char	*d = getenv("PSD2_DEV_TESTKEYS");

	return (d != NULL ? d : "device/testkeys");
}

EVP_PKEY *
devtest_manufacturer_key(void)
{
	char		 path[512];
	FILE		*fp;
	EVP_PKEY	*pk;

	snprintf(path, sizeof(path), "%s/manufacturer-test-key.pem",
	    testkeys());
	if ((fp = fopen(path, "r")) == NULL)
		return (NULL);
	pk = PEM_read_PrivateKey(fp, NULL, NULL, NULL);
	fclose(fp);
	return (pk);
}

const char *
devtest_ca_path(void)
{
	static char	path[512];

	snprintf(path, sizeof(path), "%s/manufacturer-test-ca.pem",
	    testkeys());
	return (path);
}

char *
devtest_tmpdir(void)
{
	char	tmpl[] = "/tmp/psd2devtest.XXXXXX";
	char	*d;

	if ((d = mkdtemp(tmpl)) == NULL)
		return (NULL);
	return (strdup(d));
}

void
devtest_rmdir(char *dir)
{
	DIR		*dp;
	struct dirent	*de;
	char		 path[1024];

	if (dir == NULL)
		return;
	/* PSD2_DEVTEST_KEEP=1 keeps daemon logs and state for a post-mortem. */
	if (getenv("PSD2_DEVTEST_KEEP") != NULL) {
		fprintf(stderr, "devtest: kept %s\n", dir);
		free(dir);
		return;
	}
	if ((dp = opendir(dir)) != NULL) {
		while ((de = readdir(dp)) != NULL) {
			if (de->d_name[0] == '.')
				continue;
			snprintf(path, sizeof(path), "%s/%s", dir, de->d_name);
			(void)unlink(path);
		}
		closedir(dp);
	}
	(void)rmdir(dir);
	free(dir);
}

static struct fw *
devtest_fw_speed(struct usbemu *emu, const char *serial, const char *statedir,
    EVP_PKEY *mfr, int high_speed)
{
	struct fw_params	p;
	char			err[256];
	struct fw		*fw;

	memset(&p, 0, sizeof(p));
	p.high_speed = high_speed;
	p.serial = serial;
	p.statedir = statedir;
	p.manufacturer = mfr;
	p.vid = DEVTEST_VID;
	p.pid = DEVTEST_PID;
	if ((fw = fw_new(emu, &p, err, sizeof(err))) == NULL)
		fprintf(stderr, "fw_new: %s\n", err);
	return (fw);
}

struct fw *
devtest_fw(struct usbemu *emu, const char *serial, const char *statedir,
    EVP_PKEY *mfr)
{
	return (devtest_fw_speed(emu, serial, statedir, mfr, 0));
}

struct fw *
devtest_fw_hs(struct usbemu *emu, const char *serial, const char *statedir,
    EVP_PKEY *mfr)
{
	return (devtest_fw_speed(emu, serial, statedir, mfr, 1));
}

int
devtest_approve(struct fw *fw)
{
	if (fw_pin(fw, FW_DEFAULT_PIN) != FW_PIN_OK)
		return (-1);
	return (fw_press(fw));
}

int64_t
devtest_now_ms(void)
{
	struct timespec	ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ((int64_t)ts.tv_sec * 1000 + ts.tv_nsec / 1000000);
}

void
devtest_confirm(struct dev_confirm *c, uint16_t timeout_s)
{
	memset(c, 0, sizeof(*c));
	RAND_bytes(c->challenge, sizeof(c->challenge));
	RAND_bytes(c->nonce, sizeof(c->nonce));
	c->amount_minor = 1234;
	memcpy(c->currency, "EUR", 4);
	snprintf(c->payee_name, sizeof(c->payee_name), "Muster GmbH");
	snprintf(c->payee_iban, sizeof(c->payee_iban), "DE89370400440532013000");
	c->timeout_s = timeout_s;
}
