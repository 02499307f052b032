/*
 * The downtime detector (see downtime.h). The hot path of a good answer
 * while nothing is pending is two relaxed loads; the counting, the
 * clock and the probe check happen only on a bad answer or on the first
 * good one after bad ones.
 */
#include <sys/types.h>
#include <sys/mman.h>

#include <netinet/in.h>
#include <arpa/inet.h>

#include <stdio.h>
#include <string.h>
#include <time.h>

#include <openssl/crypto.h>
#include <openssl/rand.h>

#include <kore.h>
#include <http.h>

#include "metrics/downtime.h"
#include "metrics/metrics.h"

#define DOWNTIME_EVENTS		256

/*
 * A class's state moves UP -> STARTING -> DOWN -> ENDING -> UP; the
 * event of each change is queued before the next change may begin, so
 * that worker 1 writes a start before its end and an end before the
 * next start.
 */
enum { DT_UP, DT_STARTING, DT_DOWN, DT_ENDING };

struct downtime_state {
	uint32_t	run;		/* requests not answered in a row */
	uint32_t	down;		/* DT_* */
	int64_t		first_ms;	/* the earliest of the run */
};

struct downtime_slot {
	uint64_t		seq;	/* index + 1 once filled in */
	struct downtime_event	ev;
};

struct downtime_shared {
	struct downtime_state	state[KPI_CLASSES][DOWNTIME_SOURCES];
	uint64_t		head;	/* next slot to claim */
	uint64_t		tail;	/* next to write (worker 1 only) */
	struct downtime_slot	slot[DOWNTIME_EVENTS];
};

static struct downtime_shared	*downtime;

static void	downtime_event_push(enum kpi_class, enum downtime_source,
		    enum downtime_kind, int64_t, const char *);
static char			 downtime_secret[33];

static const char	*downtime_sources[DOWNTIME_SOURCES] = {
	"service", "probe"
};

const char *
downtime_kind_name(enum downtime_kind kind)
{
	if (kind == DOWNTIME_START)
		return ("start");
	return (kind == DOWNTIME_END ? "end" : "restart");
}

const char *
downtime_source_name(enum downtime_source source)
{
	return (downtime_sources[source == DOWNTIME_PROBE]);
}

int64_t
downtime_now_ms(void)
{
	struct timespec	ts;

	clock_gettime(CLOCK_REALTIME, &ts);
	return ((int64_t)ts.tv_sec * 1000 + ts.tv_nsec / 1000000);
}

void
downtime_init(void)
{
	uint8_t		 raw[16];
	void		*p;
	size_t		 i;
	int		 c, s;

	p = mmap(NULL, sizeof(*downtime), PROT_READ | PROT_WRITE,
	    MAP_SHARED | MAP_ANONYMOUS, -1, 0);
	if (p == MAP_FAILED)
		fatal("downtime: mmap: %s", errno_s);
	downtime = p;
	if (RAND_bytes(raw, sizeof(raw)) != 1)
		fatal("downtime: RAND_bytes failed");
	for (i = 0; i < sizeof(raw); i++)
		snprintf(downtime_secret + 2 * i, 3, "%02x", raw[i]);
	OPENSSL_cleanse(raw, sizeof(raw));
	/* Whatever this instance left open before it started has ended. */
	downtime_event_push(KPI_NONE, DOWNTIME_SERVICE, DOWNTIME_RESTART,
	    downtime_now_ms(), "");
	/* Every class and source at 0: an alert needs the series. */
	for (c = 0; c < KPI_CLASSES; c++) {
		for (s = 0; s < DOWNTIME_SOURCES; s++) {
			metrics_gauge_set(METRICS_INTERFACE_DOWN, "class",
			    kpi_class_name(c), "source",
			    downtime_sources[s], 0);
			metrics_count_n(METRICS_INCIDENTS, "class",
			    kpi_class_name(c), "source",
			    downtime_sources[s], 0);
		}
	}
}

const char *
downtime_probe_secret(void)
{
	return (downtime_secret);
}

/* The probe connects to a loopback address of its own host. */
static int
downtime_from_loopback(struct http_request *req)
{
	struct connection	*c = req->owner;

	if (c == NULL)
		return (0);
	if (c->family == AF_INET)
		return ((ntohl(c->addr.ipv4.sin_addr.s_addr) >> 24) == 127);
	if (c->family == AF_INET6)
		return (IN6_IS_ADDR_LOOPBACK(&c->addr.ipv6.sin6_addr));
	return (0);
}

/* A request from elsewhere is never the probe: no header look-up. */
int
downtime_is_probe(struct http_request *req)
{
	const char	*v;

	if (!downtime_from_loopback(req) ||
	    !http_request_header(req, DOWNTIME_PROBE_HEADER, &v))
		return (0);
	if (strlen(v) != sizeof(downtime_secret) - 1)
		return (0);
	return (CRYPTO_memcmp(v, downtime_secret,
	    sizeof(downtime_secret) - 1) == 0);
}

/* A start or an end for worker 1 to write; dropped when 256 wait. */
static void
downtime_event_push(enum kpi_class class, enum downtime_source source,
    enum downtime_kind kind, int64_t at_ms, const char *detail)
{
	struct downtime_slot	*s;
	uint64_t		 idx;

	idx = __atomic_load_n(&downtime->head, __ATOMIC_ACQUIRE);
	do {
		if (idx - __atomic_load_n(&downtime->tail, __ATOMIC_ACQUIRE) >=
		    DOWNTIME_EVENTS) {
			kore_log(LOG_ERR, "downtime: event queue full, %s %s "
			    "not recorded", kpi_class_name(class),
			    downtime_kind_name(kind));
			return;
		}
	} while (!__atomic_compare_exchange_n(&downtime->head, &idx, idx + 1,
	    0, __ATOMIC_ACQ_REL, __ATOMIC_ACQUIRE));
	s = &downtime->slot[idx % DOWNTIME_EVENTS];
	s->ev.class = class;
	s->ev.source = source;
	s->ev.kind = kind;
	s->ev.at_ms = at_ms;
	snprintf(s->ev.detail, sizeof(s->ev.detail), "%s", detail);
	__atomic_store_n(&s->seq, idx + 1, __ATOMIC_RELEASE);
}

int
downtime_event_peek(struct downtime_event *ev)
{
	struct downtime_slot	*s;
	uint64_t		 tail;

	if (downtime == NULL)
		return (0);
	tail = __atomic_load_n(&downtime->tail, __ATOMIC_ACQUIRE);
	if (tail == __atomic_load_n(&downtime->head, __ATOMIC_ACQUIRE))
		return (0);
	s = &downtime->slot[tail % DOWNTIME_EVENTS];
	if (__atomic_load_n(&s->seq, __ATOMIC_ACQUIRE) != tail + 1)
		return (0);
	*ev = s->ev;
	return (1);
}

void
downtime_event_done(void)
{
	__atomic_add_fetch(&downtime->tail, 1, __ATOMIC_RELEASE);
}

static void
downtime_status_text(char *out, size_t len, int status, int64_t took_ms)
{
	if (status == 0)
		snprintf(out, len, "no answer");
	else if (took_ms >= DOWNTIME_SLOW_MS)
		snprintf(out, len, "status %d after %lld ms", status,
		    (long long)took_ms);
	else
		snprintf(out, len, "status %d", status);
}

static void
downtime_bad(struct downtime_state *st, enum kpi_class class,
    enum downtime_source source, int status, int64_t started_ms,
    int64_t answered_ms)
{
	char		detail[DOWNTIME_DETAIL_MAX];
	uint32_t	n, expect;
	int64_t		first;

	n = __atomic_add_fetch(&st->run, 1, __ATOMIC_ACQ_REL);
	if (n == 1) {
		__atomic_store_n(&st->first_ms, started_ms, __ATOMIC_RELEASE);
	} else if (n <= DOWNTIME_RUN) {
		/* Concurrent requests: the earliest sent is the first. */
		first = __atomic_load_n(&st->first_ms, __ATOMIC_ACQUIRE);
		while ((first == 0 || started_ms < first) &&
		    !__atomic_compare_exchange_n(&st->first_ms, &first,
		    started_ms, 0, __ATOMIC_ACQ_REL, __ATOMIC_ACQUIRE))
			;
	}
	if (n < DOWNTIME_RUN)
		return;
	expect = DT_UP;
	if (!__atomic_compare_exchange_n(&st->down, &expect, DT_STARTING, 0,
	    __ATOMIC_ACQ_REL, __ATOMIC_ACQUIRE))
		return;
	first = __atomic_load_n(&st->first_ms, __ATOMIC_ACQUIRE);
	if (first == 0 || first > started_ms)
		first = started_ms;
	downtime_status_text(detail, sizeof(detail), status,
	    answered_ms - started_ms);
	downtime_event_push(class, source, DOWNTIME_START, first, detail);
	metrics_gauge_set(METRICS_INTERFACE_DOWN, "class",
	    kpi_class_name(class), "source", downtime_sources[source], 1);
	metrics_count(METRICS_INCIDENTS, "class", kpi_class_name(class),
	    "source", downtime_sources[source]);
	__atomic_store_n(&st->down, DT_DOWN, __ATOMIC_RELEASE);
	kore_log(LOG_ERR, "downtime: %s (%s) down since %lld: %s",
	    kpi_class_name(class), downtime_sources[source], (long long)first,
	    detail);
}

/* A good answer while STARTING ends nothing: the next one will. */
static void
downtime_good(struct downtime_state *st, enum kpi_class class,
    enum downtime_source source, int status, int64_t answered_ms)
{
	char		detail[DOWNTIME_DETAIL_MAX];
	uint32_t	expect;

	__atomic_store_n(&st->run, 0, __ATOMIC_RELEASE);
	expect = DT_DOWN;
	if (!__atomic_compare_exchange_n(&st->down, &expect, DT_ENDING, 0,
	    __ATOMIC_ACQ_REL, __ATOMIC_ACQUIRE))
		return;
	snprintf(detail, sizeof(detail), "answered: status %d", status);
	downtime_event_push(class, source, DOWNTIME_END, answered_ms, detail);
	metrics_gauge_set(METRICS_INTERFACE_DOWN, "class",
	    kpi_class_name(class), "source", downtime_sources[source], 0);
	__atomic_store_n(&st->down, DT_UP, __ATOMIC_RELEASE);
	kore_log(LOG_NOTICE, "downtime: %s (%s) answered again at %lld",
	    kpi_class_name(class), downtime_sources[source],
	    (long long)answered_ms);
}

static int
downtime_answered(int status, int64_t took_ms)
{
	return (status > 0 && status < 500 && took_ms < DOWNTIME_SLOW_MS);
}

void
downtime_feed(enum kpi_class class, enum downtime_source source, int status,
    int64_t started_ms, int64_t answered_ms)
{
	struct downtime_state	*st;

	if (downtime == NULL || class >= KPI_CLASSES ||
	    source >= DOWNTIME_SOURCES)
		return;
	st = &downtime->state[class][source];
	if (downtime_answered(status, answered_ms - started_ms))
		downtime_good(st, class, source, status, answered_ms);
	else
		downtime_bad(st, class, source, status, started_ms,
		    answered_ms);
}

/*
 * From the time Kore read the request (Kore patch 0032), not the
 * handler's own time: a wait for the database counts.
 */
void
downtime_request(struct http_request *req, int status)
{
	struct downtime_state	*st;
	enum kpi_class		 class;
	int64_t			 now, took;

	if (downtime == NULL ||
	    (class = kpi_class_of(req->path)) == KPI_NONE)
		return;
	took = req->received != 0 ?
	    (int64_t)(kore_time_ms() - req->received) : 0;
	st = &downtime->state[class][DOWNTIME_SERVICE];
	/* The usual case: answered, nothing pending. */
	if (downtime_answered(status, took) &&
	    __atomic_load_n(&st->run, __ATOMIC_RELAXED) == 0 &&
	    __atomic_load_n(&st->down, __ATOMIC_RELAXED) == DT_UP)
		return;
	/* The probe's answers count as the probe's (src/app/probe.c). */
	if (downtime_is_probe(req))
		return;
	now = downtime_now_ms();
	downtime_feed(class, DOWNTIME_SERVICE, status, now - took, now);
}
