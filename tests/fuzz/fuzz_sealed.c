/*
 * libFuzzer: sealed_open. Byte 0 picks the mode: open the input as a
 * token, or splice the input into a valid token (so the MAC check, not
 * just the parser, is exercised). Nothing but the genuine token may
 * ever open.
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "keyring.h"
#include "sealed.h"

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
	    sealed_make(&kr, "authreq", "{\"s\":\"x\"}", 2000000000, good,
	    sizeof(good)) <= 0)
		abort();
}

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	char		*tok, payload[128];
	size_t		 goodlen, off, len, rest;
	int		 n;

	init();
	goodlen = strlen(good);
	if ((tok = malloc(size + goodlen + 1)) == NULL)
		abort();
	if (size > 0 && data[0] & 1) {
		/* Overwrite part of the valid token with the input. */
		off = size > 1 ? data[1] % (goodlen + 1) : 0;
		len = size > 2 ? size - 2 : 0;
		rest = goodlen - off;
		rest = len < rest ? rest - len : 0;
		memcpy(tok, good, off);
		memcpy(tok + off, data + (size > 2 ? 2 : size), len);
		memcpy(tok + off + len, good + goodlen - rest, rest);
		tok[off + len + rest] = '\0';
	} else {
		memcpy(tok, data, size);
		tok[size] = '\0';
	}
	n = sealed_open(&kr, "authreq", tok, 1700000000, payload,
	    sizeof(payload));
	if (n >= 0 && strcmp(tok, good) != 0)
		abort();
	if (n >= 0 && strcmp(payload, "{\"s\":\"x\"}") != 0)
		abort();
	(void)sealed_open(&kr, "csrf", tok, 1700000000, payload, 4);
	free(tok);
	return (0);
}
