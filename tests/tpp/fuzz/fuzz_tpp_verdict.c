/*
 * libFuzzer: the whole verdict on hostile headers. The input is split at
 * NUL bytes into the values of the signing headers, the last part being
 * the body; no trust anchors, so every path up to the certificate check
 * (and the signature step's parsers through the cache) is reached.
 */
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "tpp/cache.h"
#include "tpp/verdict.h"

int	LLVMFuzzerTestOneInput(const uint8_t *, size_t);

static const char *const names[] = {
	"signature", "tpp-signing-certificate", "x-request-id", "digest",
	"date", "psu-id", "tpp-signature-certificate",
};
#define NNAMES	(sizeof(names) / sizeof(names[0]))

struct fuzz_req {
	const char	*values[NNAMES];
};

static const char *
fuzz_header(void *arg, const char *name, int *count)
{
	struct fuzz_req	*r = arg;
	size_t		 i;

	*count = 0;
	for (i = 0; i < NNAMES; i++) {
		if (strcasecmp(names[i], name) == 0 && r->values[i] != NULL) {
			*count = 1;
			return (r->values[i]);
		}
	}
	return (NULL);
}

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t len)
{
	static struct tpp_config	 cfg;
	struct tpp_input		 in;
	struct tpp_verdict		 v;
	struct fuzz_req			 r;
	char				*copy, *p, *end;
	size_t				 i;

	if (cfg.cache == NULL) {
		cfg.cache = tpp_cache_new(8);
		cfg.skew = 300;
		cfg.required = 1;
	}
	if ((copy = malloc(len + 1)) == NULL)
		return (0);
	memcpy(copy, data, len);
	copy[len] = '\0';
	memset(&r, 0, sizeof(r));
	p = copy;
	end = copy + len;
	for (i = 0; i < NNAMES && p < end; i++) {
		r.values[i] = *p == '\0' ? NULL : p;
		p += strlen(p) + 1;
	}
	memset(&in, 0, sizeof(in));
	in.header = fuzz_header;
	in.arg = &r;
	in.method = "GET";
	in.target = "/x";
	in.body = p < end ? p : NULL;
	in.bodylen = p < end ? (size_t)(end - p) : 0;
	in.now = 1700000000;
	tpp_verdict_run(&cfg, &in, &v);
	free(copy);
	return (0);
}
