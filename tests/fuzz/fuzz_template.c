/*
 * libFuzzer: template compiler and renderer. Input is "<template>\0<json
 * context>"; the template is compiled next to two fixed partials and,
 * when it validates, rendered.
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <jansson.h>

#include "template.h"

static const char	default_ctx[] =
    "{\"x\":\"<&>\",\"n\":3,\"t\":true,\"e\":[],\"s\":\"str\","
    "\"l\":[{\"x\":\"a\"},{\"y\":\"b\"},1,\"c\",null],"
    "\"o\":{\"x\":{\"y\":\"deep\"},\"l\":[true,false]}}";

int	LLVMFuzzerTestOneInput(const uint8_t *, size_t);

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct template_set	 set;
	const uint8_t		*nul;
	size_t			 tlen, outlen;
	json_t			*ctx = NULL;
	char			*out;

	nul = memchr(data, '\0', size);
	tlen = nul ? (size_t)(nul - data) : size;
	if (nul != NULL)
		ctx = json_loadb((const char *)nul + 1, size - tlen - 1,
		    JSON_DECODE_ANY, NULL);
	if (ctx == NULL)
		ctx = json_loads(default_ctx, 0, NULL);

	template_set_init(&set);
	if (template_register(&set, "p", "<{{x}}>", 7) != 0 ||
	    template_register(&set, "q", "{{#l}}{{>p}}{{/l}}", 18) != 0)
		abort();
	if (template_register(&set, "main", (const char *)data, tlen) == 0 &&
	    template_set_validate(&set) == 0) {
		if (template_render(&set, "main", ctx, &out, &outlen) == 0) {
			if (strlen(out) > outlen)
				abort();
			free(out);
		}
	}
	/* Rendering the fixed partials must always work. */
	if (template_render(&set, "q", ctx, &out, &outlen) != 0)
		abort();
	free(out);
	template_set_free(&set);
	json_decref(ctx);
	return (0);
}
