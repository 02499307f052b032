/*
 * Input helpers of the AIS endpoints: the request body, dates, resource
 * ids, the PSU's IP address. Values are checked here precisely; the Kore validators only bound
 * sizes.
 */
#include <sys/types.h>
#include <sys/socket.h>

#include <netinet/in.h>
#include <arpa/inet.h>

#include <ctype.h>
#include <string.h>

#include <kore.h>
#include <http.h>

#include "ais/ais.h"

char *
ais_body(struct http_request *req, struct xs2a_call *c, size_t max,
    size_t *len)
{
	char	*body;
	ssize_t	 n;
	size_t	 off, total;

	*len = 0;
	total = req->http_body_length;
	/* Over this endpoint's own limit, though under Kore's: the same
	   413 as Kore's, not a malformed body. */
	if (total > max) {
		xs2a_input_error(c, 413, "FORMAT_ERROR", NULL,
		    "The request body is too large (at most %zu bytes here).",
		    max);
		return (NULL);
	}
	if (total == 0)
		return (NULL);
	body = kore_malloc(total + 1);
	off = 0;
	while (off < total) {
		n = http_body_read(req, body + off, total - off);
		if (n < 0) {
			kore_free(body);
			return (NULL);
		}
		if (n == 0)
			break;
		off += (size_t)n;
	}
	body[off] = '\0';
	*len = off;
	return (body);
}

static int
ais_digits(const char *s, size_t n)
{
	size_t	i;

	for (i = 0; i < n; i++) {
		if (!isdigit((unsigned char)s[i]))
			return (0);
	}
	return (1);
}

int
ais_date_valid(const char *s)
{
	static const int	mdays[] = { 31, 29, 31, 30, 31, 30, 31, 31, 30,
				    31, 30, 31 };
	int			y, m, d;

	if (strlen(s) != 10 || s[4] != '-' || s[7] != '-' ||
	    !ais_digits(s, 4) || !ais_digits(s + 5, 2) || !ais_digits(s + 8, 2))
		return (0);
	y = (s[0] - '0') * 1000 + (s[1] - '0') * 100 + (s[2] - '0') * 10 +
	    (s[3] - '0');
	m = (s[5] - '0') * 10 + (s[6] - '0');
	d = (s[8] - '0') * 10 + (s[9] - '0');
	if (y < 1000 || m < 1 || m > 12 || d < 1 || d > mdays[m - 1])
		return (0);
	if (m == 2 && d == 29 && !((y % 4 == 0 && y % 100 != 0) ||
	    y % 400 == 0))
		return (0);
	return (1);
}

int
ais_resource_id_valid(const char *s)
{
	size_t	i, len;

	len = strlen(s);
	if (len == 0 || len > 64)
		return (0);
	for (i = 0; i < len; i++) {
		if (!isalnum((unsigned char)s[i]) && s[i] != '-' &&
		    s[i] != '_' && s[i] != '.')
			return (0);
	}
	return (1);
}

int
ais_ip_normalise(const char *s, char *out)
{
	struct in6_addr	a6;
	struct in_addr	a4;

	/* inet_pton takes only the plain forms: no prefix, zone or port. */
	if (inet_pton(AF_INET, s, &a4) == 1)
		return (inet_ntop(AF_INET, &a4, out, AIS_IP_MAX) ? 0 : -1);
	if (inet_pton(AF_INET6, s, &a6) == 1)
		return (inet_ntop(AF_INET6, &a6, out, AIS_IP_MAX) ? 0 : -1);
	return (-1);
}
