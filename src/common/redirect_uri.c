/*
 * The redirect URIs of clients (see redirect_uri.h). Only the scheme and
 * the start of the authority are read: what follows a loopback host must
 * be its end (a port, a path, a query), so "http://127.0.0.1.evil.example"
 * and "http://localhost@evil.example" are not loopback.
 */
#include <string.h>

#include "redirect_uri.h"

static const char *const redirect_loopback[] = {
	"127.0.0.1", "[::1]", "localhost"
};

static int
redirect_chars_ok(const char *uri)
{
	const unsigned char	*p;

	for (p = (const unsigned char *)uri; *p != '\0'; p++) {
		if (*p <= 0x20 || *p == 0x7f || strchr("\"\\{},#", *p) != NULL)
			return (0);
	}
	return (1);
}

/* The end of an authority: a port (digits), then a path, query or end. */
static int
redirect_authority_ends(const char *p)
{
	if (*p == ':') {
		if (p[1] < '0' || p[1] > '9')
			return (0);
		for (p++; *p >= '0' && *p <= '9'; p++)
			;
	}
	return (*p == '\0' || *p == '/' || *p == '?');
}

static int
redirect_loopback_http(const char *rest)
{
	size_t	i, len;

	for (i = 0; i < sizeof(redirect_loopback) /
	    sizeof(redirect_loopback[0]); i++) {
		len = strlen(redirect_loopback[i]);
		if (strncmp(rest, redirect_loopback[i], len) == 0 &&
		    redirect_authority_ends(rest + len))
			return (1);
	}
	return (0);
}

int
redirect_uri_allowed(const char *uri, int production)
{
	if (uri == NULL || !redirect_chars_ok(uri))
		return (0);
	if (strncmp(uri, "https://", 8) == 0)
		return (strchr("/:?@", uri[8]) == NULL);
	if (production || strncmp(uri, "http://", 7) != 0)
		return (0);
	return (redirect_loopback_http(uri + 7));
}
