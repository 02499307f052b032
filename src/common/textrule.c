/*
 * One rule for every text people read: the payee names' character set
 * and NFC (src/common/devtext.c, shared with the authenticators), with each
 * field's own length.
 */
#include <stdio.h>

#include "devtext.h"
#include "textrule.h"

int
textrule_check(const char *in, size_t inlen, size_t maxchars, char *out,
    size_t outlen, size_t *outn)
{
	return (devtext_normalize(in, inlen, maxchars, out, outlen, outn));
}

void
textrule_error(int code, size_t maxchars, char *buf, size_t len)
{
	if (code == DEVTEXT_LENGTH)
		snprintf(buf, len, "must be 1 to %zu characters", maxchars);
	else
		snprintf(buf, len, "%s", devtext_error(code));
}
