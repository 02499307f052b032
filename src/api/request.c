/*
 * Request input shared by the account information and payment endpoints
 * (see request.h). Values are checked here precisely; the Kore validators
 * only bound sizes.
 */
#include <sys/types.h>
#include <sys/socket.h>

#include <netinet/in.h>
#include <arpa/inet.h>

#include <kore.h>
#include <http.h>

#include "api/request.h"

char *
request_body(struct http_request *req, size_t max, size_t *len)
{
	char	*body;
	ssize_t	 n;
	size_t	 off, total;

	*len = 0;
	total = req->http_body_length;
	if (total == 0 || total > max)
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

int
request_ip_normalise(const char *s, char *out)
{
	struct in6_addr	a6;
	struct in_addr	a4;

	/* inet_pton takes only the plain forms: no prefix, zone or port. */
	if (inet_pton(AF_INET, s, &a4) == 1)
		return (inet_ntop(AF_INET, &a4, out, REQUEST_IP_MAX) ? 0 : -1);
	if (inet_pton(AF_INET6, s, &a6) == 1)
		return (inet_ntop(AF_INET6, &a6, out, REQUEST_IP_MAX) ? 0 : -1);
	return (-1);
}
