/*
 * A WebAuthn origin and its relying party id (WebAuthn 5.1.4.1: the
 * origin's effective domain). Browsers refuse an IP address as an id and
 * allow http only on localhost, so those are the origins accepted here.
 */
#include <ctype.h>
#include <stdio.h>
#include <string.h>

#include "webauthn.h"

int
webauthn_rp_id(const char *origin, char *out, size_t len)
{
	const char	*host;
	size_t		 n, i;
	int		 letters = 0;

	if (strncmp(origin, "https://", 8) == 0)
		host = origin + 8;
	else if (strncmp(origin, "http://localhost", 16) == 0 &&
	    (origin[16] == '\0' || origin[16] == ':'))
		host = origin + 7;
	else
		return (-1);
	n = strcspn(host, ":");
	if (n == 0 || n >= len || host[0] == '.' || host[0] == '-' ||
	    host[n - 1] == '.' || host[n - 1] == '-')
		return (-1);
	for (i = 0; i < n; i++) {
		if (isalpha((unsigned char)host[i]))
			letters = 1;
		else if (!isdigit((unsigned char)host[i]) && host[i] != '.' &&
		    host[i] != '-')
			return (-1);
	}
	/* Digits and dots only: an IPv4 address. */
	if (!letters)
		return (-1);
	if (host[n] == ':') {
		for (i = n + 1; host[i] != '\0'; i++) {
			if (!isdigit((unsigned char)host[i]))
				return (-1);
		}
		if (i == n + 1 || i - n - 1 > 5)
			return (-1);
	}
	for (i = 0; i < n; i++)
		out[i] = (char)tolower((unsigned char)host[i]);
	out[n] = '\0';
	return (0);
}
