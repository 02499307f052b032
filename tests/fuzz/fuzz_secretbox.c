/*
 * libFuzzer: secretbox_open on hostile text, raw or spliced into a
 * valid box. Only the genuine box may open.
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "keyring.h"
#include "secretbox.h"

int	LLVMFuzzerTestOneInput(const uint8_t *, size_t);

static struct keyring	kr;
static char		good[256];

static void
init(void)
{
	static const uint8_t	k1[32] = { 1 }, k2[32] = { 2 };

	if (kr.count > 0)
		return;
	if (keyring_add(&kr, "new", k2) != 0 ||
	    keyring_add(&kr, "old", k1) != 0 ||
	    secretbox_seal(&kr, (const uint8_t *)"JBSWY3DPEHPK3PXP", 16,
	    "psu:anna:totp", good, sizeof(good)) <= 0)
		abort();
}

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	char		*box;
	uint8_t		 pt[64];
	size_t		 goodlen, off, len, rest;
	int		 n;

	init();
	goodlen = strlen(good);
	if ((box = malloc(size + goodlen + 1)) == NULL)
		abort();
	if (size > 0 && data[0] & 1) {
		off = size > 1 ? data[1] % (goodlen + 1) : 0;
		len = size > 2 ? size - 2 : 0;
		rest = goodlen - off;
		if (len < rest)
			rest -= len;
		else
			rest = 0;
		memcpy(box, good, off);
		memcpy(box + off, data + (size > 2 ? 2 : size), len);
		memcpy(box + off + len, good + goodlen - rest, rest);
		box[off + len + rest] = '\0';
	} else {
		memcpy(box, data, size);
		box[size] = '\0';
	}
	n = secretbox_open(&kr, box, "psu:anna:totp", pt, sizeof(pt));
	if (n >= 0 && (strcmp(box, good) != 0 || n != 16 ||
	    memcmp(pt, "JBSWY3DPEHPK3PXP", 16) != 0))
		abort();
	(void)secretbox_open(&kr, box, "x", pt, 3);
	free(box);
	return (0);
}
