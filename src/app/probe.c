/*
 * The synthetic probe (EBA GL 2.2: downtime also from requests the bank
 * sends itself). Every psd2_probe_seconds worker 1 starts a Kore task
 * whose thread sends one request per KPI class to the instance's own
 * public listener (psd2_probe_url) with blocking sockets, and feeds each
 * outcome to the downtime detector as source "probe". Each request is
 * one that the class's database work must answer, so that a database
 * outage shows as the 503 a TPP or PSU would get:
 *	oauth		a refresh grant of an unknown client: the client is
 *			looked up in the database (401 invalid_client)
 *	ais		the account list with an unknown bearer token: the
 *			gate's SQL looks the token up (401)
 *	pis		a payment status with an unknown token (401)
 *	funds		a funds confirmation with an unknown token (401)
 *	psu_pages	the PSU's payments page with an unknown session
 *			cookie: the session is looked up (the login page)
 * Tokens, client ids and cookies are fresh random values, so that no
 * cache answers instead of the database. Each request carries the
 * instance's secret in DOWNTIME_PROBE_HEADER: respond.c leaves it out of
 * the access log line, the HTTP metrics and the service's detector.
 * The listener is reached at an address of this host (psd2_probe_url:
 * http or https, no name lookup inside the chroot); over https the
 * probe sends psd2_probe_host as SNI and Host (a domain without client
 * certificates, e.g. the PSU pages' host, which serves the same routes)
 * and does not verify the certificate: it only ever talks to this
 * host's own loopback address (conf/README.md, psd2_probe_url).
 */
#include <sys/types.h>
#include <sys/socket.h>
#include <sys/time.h>

#include <netinet/in.h>
#include <arpa/inet.h>

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <openssl/evp.h>
#include <openssl/rand.h>
#include <openssl/ssl.h>

#include <kore.h>
#include <tasks.h>

#include "app/housekeeping.h"
#include "common/config.h"
#include "common/settings.h"
#include "metrics/downtime.h"
#include "metrics/metrics.h"

#define PROBE_TIMEOUT_S		30
#define PROBE_ANSWER_MAX	65536
#define PROBE_FIRST_MS		2000

struct probe_target {
	enum kpi_class	 class;
	const char	*method;
	const char	*path;		/* %s: a fresh UUID */
	int		 bearer;	/* Authorization: Bearer <uuid> */
	int		 basic;		/* an unknown client's credentials */
	int		 cookie;	/* an unknown PSU session */
	const char	*ctype;
	const char	*body;
};

static const struct probe_target	probe_targets[] = {
	{ KPI_OAUTH, "POST", "/auth/oauth/token", 0, 1, 0,
	    "application/x-www-form-urlencoded",
	    "grant_type=refresh_token&refresh_token=psd2gate-probe" },
	{ KPI_AIS, "GET", "/auth/v1/psd2/account/account-list", 1, 0, 0,
	    NULL, NULL },
	{ KPI_PIS, "GET",
	    "/auth/v1/psd2/payments/sepa-credit-transfers/%s/status", 1, 0, 0,
	    NULL, NULL },
	{ KPI_FUNDS, "POST", "/auth/v1/psd2/funds-confirmations", 1, 0, 0,
	    "application/json", "{}" },
	{ KPI_PSU_PAGES, "GET", "/auth/payments", 0, 0, 1, NULL, NULL },
};

static struct kore_task		probe_task;
static int			probe_busy;
static struct sockaddr_storage	probe_addr;
static socklen_t		probe_addrlen;
static char			probe_hostport[80];
static char			probe_sni[256];
static SSL_CTX			*probe_tls;

/* One connection: plain, or TLS when ssl is set. */
struct probe_conn {
	int	 fd;
	SSL	*ssl;
};

/* psd2_probe_url: http://IP[:port] (an address: no resolver here). */
static int
probe_parse_url(const char *url)
{
	struct sockaddr_in	*in4 = (struct sockaddr_in *)&probe_addr;
	struct sockaddr_in6	*in6 = (struct sockaddr_in6 *)&probe_addr;
	char			 host[64], *colon;
	const char		*p;
	long			 port;

	if (strncmp(url, "http://", 7) == 0) {
		p = url + 7;
		port = 80;
	} else if (strncmp(url, "https://", 8) == 0) {
		p = url + 8;
		port = 443;
	} else {
		return (-1);
	}
	if (snprintf(probe_hostport, sizeof(probe_hostport), "%s", p) >=
	    (int)sizeof(probe_hostport))
		return (-1);
	if (p[0] == '[') {
		if (sscanf(p, "[%63[^]]]", host) != 1)
			return (-1);
		if ((colon = strstr(p, "]:")) != NULL)
			port = strtol(colon + 2, NULL, 10);
	} else {
		snprintf(host, sizeof(host), "%s", p);
		if ((colon = strchr(host, ':')) != NULL) {
			*colon = '\0';
			port = strtol(colon + 1, NULL, 10);
		}
	}
	if (port < 1 || port > 65535)
		return (-1);
	memset(&probe_addr, 0, sizeof(probe_addr));
	/* Only this host's own listener: the secret header goes along. */
	if (inet_pton(AF_INET, host, &in4->sin_addr) == 1) {
		if ((ntohl(in4->sin_addr.s_addr) >> 24) != 127)
			return (-1);
		in4->sin_family = AF_INET;
		in4->sin_port = htons((u_int16_t)port);
		probe_addrlen = sizeof(*in4);
		return (0);
	}
	if (inet_pton(AF_INET6, host, &in6->sin6_addr) == 1) {
		if (!IN6_IS_ADDR_LOOPBACK(&in6->sin6_addr))
			return (-1);
		in6->sin6_family = AF_INET6;
		in6->sin6_port = htons((u_int16_t)port);
		probe_addrlen = sizeof(*in6);
		return (0);
	}
	return (-1);
}

static void
probe_uuid(char out[37])
{
	uint8_t	b[16];

	if (RAND_bytes(b, sizeof(b)) != 1)
		memset(b, 0x5a, sizeof(b));
	b[6] = (b[6] & 0x0f) | 0x40;
	b[8] = (b[8] & 0x3f) | 0x80;
	snprintf(out, 37, "%02x%02x%02x%02x-%02x%02x-%02x%02x-%02x%02x-"
	    "%02x%02x%02x%02x%02x%02x", b[0], b[1], b[2], b[3], b[4], b[5],
	    b[6], b[7], b[8], b[9], b[10], b[11], b[12], b[13], b[14], b[15]);
}

/* "probe-<8 hex>:x" in Basic (a client id no cache has seen). */
static void
probe_basic(const char *uuid, char *out, size_t len)
{
	char		cred[32];
	unsigned char	b64[64];
	int		n;

	n = snprintf(cred, sizeof(cred), "probe-%.8s:x", uuid);
	EVP_EncodeBlock(b64, (const unsigned char *)cred, n);
	snprintf(out, len, "Authorization: Basic %s\r\n", b64);
}

static size_t
probe_request_text(const struct probe_target *t, char *out, size_t len)
{
	char	uuid[37], path[160], auth[160];
	int	n;

	probe_uuid(uuid);
	snprintf(path, sizeof(path), t->path, uuid);
	auth[0] = '\0';
	if (t->bearer)
		snprintf(auth, sizeof(auth), "Authorization: Bearer %s\r\n",
		    uuid);
	else if (t->basic)
		probe_basic(uuid, auth, sizeof(auth));
	else if (t->cookie)
		snprintf(auth, sizeof(auth), "Cookie: psd2_session=probe%.8s"
		    "%.4s%.4s\r\n", uuid, uuid + 9, uuid + 14);
	n = snprintf(out, len, "%s %s HTTP/1.1\r\nHost: %s\r\n"
	    "%s: %s\r\n%sConnection: close\r\n%s%s%s"
	    "Content-Length: %zu\r\n\r\n%s", t->method, path,
	    probe_sni[0] != '\0' ? probe_sni : probe_hostport,
	    DOWNTIME_PROBE_HEADER, downtime_probe_secret(),
	    auth, t->ctype ? "Content-Type: " : "", t->ctype ? t->ctype : "",
	    t->ctype ? "\r\n" : "", t->body ? strlen(t->body) : 0,
	    t->body ? t->body : "");
	return (n < 0 || (size_t)n >= len ? 0 : (size_t)n);
}

/*
 * The status of the answer once its head and Content-Length bytes of
 * body (or the end of the stream) are in; 0 for no answer.
 */
static int
probe_read_answer(struct probe_conn *c)
{
	static __thread char	buf[PROBE_ANSWER_MAX];
	size_t			have, need;
	ssize_t			n;
	char			*end, *cl;
	int			status;

	have = 0;
	need = 0;
	status = 0;
	for (;;) {
		if (have == sizeof(buf) - 1)
			return (status);
		if (c->ssl != NULL)
			n = SSL_read(c->ssl, buf + have,
			    (int)(sizeof(buf) - 1 - have));
		else
			n = recv(c->fd, buf + have, sizeof(buf) - 1 - have, 0);
		if (n == -1 && c->ssl == NULL && errno == EINTR)
			continue;
		if (n <= 0)
			return (need == 0 ? 0 : status);
		have += (size_t)n;
		buf[have] = '\0';
		if (need == 0) {
			if ((end = strstr(buf, "\r\n\r\n")) == NULL)
				continue;
			if (sscanf(buf, "HTTP/1.%*d %d", &status) != 1)
				return (0);
			need = (size_t)(end + 4 - buf);
			if ((cl = strcasestr(buf, "\r\ncontent-length:")) !=
			    NULL && cl < end)
				need += strtoul(cl + 17, NULL, 10);
		}
		if (have >= need)
			return (status);
	}
}

static int
probe_send(struct probe_conn *c, const char *req, size_t len)
{
	size_t	off;
	ssize_t	n;

	for (off = 0; off < len; off += (size_t)n) {
		if (c->ssl != NULL)
			n = SSL_write(c->ssl, req + off, (int)(len - off));
		else
			n = send(c->fd, req + off, len - off, MSG_NOSIGNAL);
		if (n == -1 && c->ssl == NULL && errno == EINTR) {
			n = 0;
			continue;
		}
		if (n <= 0)
			return (-1);
	}
	return (0);
}

static int
probe_tls_start(struct probe_conn *c)
{
	if (probe_tls == NULL)
		return (0);
	if ((c->ssl = SSL_new(probe_tls)) == NULL ||
	    SSL_set_fd(c->ssl, c->fd) != 1 ||
	    (probe_sni[0] != '\0' &&
	    SSL_set_tlsext_host_name(c->ssl, probe_sni) != 1) ||
	    SSL_connect(c->ssl) != 1)
		return (-1);
	return (0);
}

static int
probe_one(const struct probe_target *t)
{
	static __thread char	req[2048];
	struct timeval		tv = { PROBE_TIMEOUT_S, 0 };
	struct probe_conn	c = { -1, NULL };
	size_t			len;
	int			status;

	if ((len = probe_request_text(t, req, sizeof(req))) == 0)
		return (0);
	if ((c.fd = socket(probe_addr.ss_family, SOCK_STREAM, 0)) == -1)
		return (0);
	status = 0;
	if (setsockopt(c.fd, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof(tv)) == -1 ||
	    setsockopt(c.fd, SOL_SOCKET, SO_SNDTIMEO, &tv, sizeof(tv)) == -1 ||
	    connect(c.fd, (struct sockaddr *)&probe_addr, probe_addrlen) == -1 ||
	    probe_tls_start(&c) == -1 || probe_send(&c, req, len) == -1)
		goto out;
	status = probe_read_answer(&c);
out:
	if (c.ssl != NULL) {
		(void)SSL_shutdown(c.ssl);
		SSL_free(c.ssl);
	}
	close(c.fd);
	return (status);
}

static int
probe_round(struct kore_task *t)
{
	const struct probe_target	*pt;
	int64_t				 t0, t1;
	size_t				 i;
	int				 status, ok;

	(void)t;
	for (i = 0; i < sizeof(probe_targets) / sizeof(probe_targets[0]);
	    i++) {
		pt = &probe_targets[i];
		t0 = downtime_now_ms();
		status = probe_one(pt);
		t1 = downtime_now_ms();
		ok = status > 0 && status < 500 &&
		    t1 - t0 < DOWNTIME_SLOW_MS;
		metrics_count(METRICS_PROBE, "class", kpi_class_name(pt->class),
		    "outcome", ok ? "answered" : "failed");
		downtime_feed(pt->class, DOWNTIME_PROBE, status, t0, t1);
	}
	return (KORE_RESULT_OK);
}

static void
probe_finished(struct kore_task *t)
{
	if (kore_task_state(t) != KORE_TASK_STATE_FINISHED)
		return;
	kore_task_destroy(t);
	probe_busy = 0;
}

static void
probe_tick(void *arg, u_int64_t now)
{
	(void)arg;
	(void)now;
	if (probe_busy)
		return;
	probe_busy = 1;
	kore_task_create(&probe_task, probe_round);
	kore_task_bind_callback(&probe_task, probe_finished);
	kore_task_run(&probe_task);
}

/*
 * Over https the probe talks to this host's own listener (a loopback
 * address, probe_parse_url): nothing to verify the certificate with
 * inside the chroot, and nothing gained by it.
 */
static int
probe_tls_init(void)
{
	if ((probe_tls = SSL_CTX_new(TLS_client_method())) == NULL)
		return (-1);
	SSL_CTX_set_verify(probe_tls, SSL_VERIFY_NONE, NULL);
	SSL_CTX_set_mode(probe_tls, SSL_MODE_AUTO_RETRY);
	return (0);
}

void
probe_start(void)
{
	const char	*url;

	if (worker == NULL || worker->id != 1 || app_cfg.probe_seconds <= 0)
		return;
	url = settings_get("probe_url", NULL);
	if (url == NULL || probe_parse_url(url) == -1) {
		kore_log(LOG_ERR, "probe: psd2_probe_url must be "
		    "http(s)://127.x.x.x[:port] (this host's own listener); "
		    "no probe");
		return;
	}
	snprintf(probe_sni, sizeof(probe_sni), "%s",
	    settings_get("probe_host", ""));
	if (strncmp(url, "https://", 8) == 0 && probe_tls_init() == -1) {
		kore_log(LOG_ERR, "probe: TLS set-up failed; no probe");
		return;
	}
	/* A first round soon after start, then every probe_seconds. */
	kore_timer_add(probe_tick, PROBE_FIRST_MS, NULL, KORE_TIMER_ONESHOT);
	kore_timer_add(probe_tick, (u_int64_t)app_cfg.probe_seconds * 1000,
	    NULL, 0);
}
