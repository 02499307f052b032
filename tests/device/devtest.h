/* Helpers shared by the device tests (emulated authenticators). */
#ifndef PSD2_DEVTEST_H
#define PSD2_DEVTEST_H

#include <stdint.h>

#include <openssl/evp.h>

#include "firmware.h"
#include "usbemu.h"

#define DEVTEST_VID	0x1209
#define DEVTEST_PID	0x0001

/* Test manufacturer keys under device/testkeys (PSD2_DEV_TESTKEYS). */
EVP_PKEY	*devtest_manufacturer_key(void);
const char	*devtest_ca_path(void);
/* A fresh temporary folder (removed by devtest_rmdir). */
char		*devtest_tmpdir(void);
void		 devtest_rmdir(char *);
struct fw	*devtest_fw(struct usbemu *, const char *serial,
		    const char *statedir, EVP_PKEY *mfr);
/* The same with 512-byte packets (a high-speed device). */
struct fw	*devtest_fw_hs(struct usbemu *, const char *serial,
		    const char *statedir, EVP_PKEY *mfr);
/* The PSU's two elements: the PIN on the keypad, then confirm. */
int		 devtest_approve(struct fw *);
int64_t		 devtest_now_ms(void);
/* A sample confirmation (12.34 EUR to "Muster GmbH"). */
void		 devtest_confirm(struct dev_confirm *, uint16_t timeout_s);

#endif
