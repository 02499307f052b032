/*
 * The shared metrics registry: a fixed table of slots in memory that the
 * parent maps (MAP_SHARED) before forking the workers. A slot is one
 * label set of one family; it is claimed once with a compare-and-swap and
 * only ever added to afterwards, so readers need no lock.
 */
#include <sys/types.h>
#include <sys/mman.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <kore.h>

#include "metrics/metrics.h"

#define METRICS_SLOTS		1024
#define METRICS_LABELS_MAX	160
#define METRICS_BUCKETS		12

enum { SLOT_FREE, SLOT_CLAIMING, SLOT_READY };

struct metrics_slot {
	uint32_t	state;
	uint32_t	family;
	char		labels[METRICS_LABELS_MAX];
	uint64_t	count;
	uint64_t	sum_us;
	uint64_t	bucket[METRICS_BUCKETS];
};

/* Upper bounds in microseconds (Prometheus' le, in seconds). */
static const uint64_t	metrics_bounds_us[METRICS_BUCKETS] = {
	500, 1000, 2500, 5000, 10000, 25000, 50000, 100000, 250000,
	500000, 1000000, 5000000
};

static const struct {
	const char	*name;
	const char	*type;
	const char	*help;
} metrics_families[METRICS_FAMILIES] = {
	{ "psd2_http_request_duration_seconds", "histogram",
	    "Requests answered, by route, method and status, with latency." },
	{ "psd2_db_query_duration_seconds", "histogram",
	    "Time from sending a query to its complete result." },
	{ "psd2_db_pool_wait_seconds", "histogram",
	    "Time a query waited for a free database connection." },
	{ "psd2_db_unavailable_total", "counter",
	    "Queries not run because the database was unreachable." },
	{ "psd2_db_errors_total", "counter",
	    "Queries that failed in the database." },
	{ "psd2_token_grants_total", "counter",
	    "Token endpoint grants by grant_type and outcome." },
	{ "psd2_sca_total", "counter",
	    "Strong customer authentication outcomes by kind." },
	{ "psd2_tpp_revocation_failures_total", "counter",
	    "TPP certificate revocation checks that lacked trusted data, and "
	    "CRL reloads that failed, by reason." },
	{ "psd2_interface_down", "gauge",
	    "1 while a KPI class is down by EBA GL 2.2 (five consecutive "
	    "requests not answered within 30 s), by class and source." },
	{ "psd2_incidents_total", "counter",
	    "Downtimes started, by KPI class and source." },
	{ "psd2_probe_requests_total", "counter",
	    "The instance's probe requests to itself, by KPI class and "
	    "outcome (answered, failed)." },
};

static struct metrics_slot	*metrics_table;

static struct metrics_slot	*metrics_slot(uint32_t, const char *);
static struct metrics_slot	*metrics_counter(enum metrics_family,
				    const char *, const char *, const char *,
				    const char *);

uint64_t
metrics_now_us(void)
{
	struct timespec	ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ((uint64_t)ts.tv_sec * 1000000 + (uint64_t)ts.tv_nsec / 1000);
}

void
metrics_init(void)
{
	static const char	*declared[][2] = {
		{ "login", "ok" }, { "login", "failed" },
		{ "consent", "ok" }, { "consent", "denied" },
		{ "payment", "ok" }, { "payment", "failed" },
		{ "payment", "denied" },
	};
	static const char	*revocation[] = {
		"crl_unreadable", "crl_folder_empty", "crl_missing",
		"crl_expired", "crl_not_yet_valid",
	};
	void			*p;
	size_t			 i;

	p = mmap(NULL, sizeof(*metrics_table) * METRICS_SLOTS,
	    PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS, -1, 0);
	if (p == MAP_FAILED)
		fatal("metrics: mmap: %s", errno_s);
	metrics_table = p;

	/*
	 * Label sets shown at zero before their first observation (a rate()
	 * needs the zero); payments count under kind="payment" (decide.c,
	 * authorise_confirm.c).
	 */
	(void)metrics_counter(METRICS_DB_UNAVAILABLE, NULL, NULL, NULL, NULL);
	(void)metrics_counter(METRICS_DB_ERRORS, NULL, NULL, NULL, NULL);
	for (i = 0; i < sizeof(revocation) / sizeof(revocation[0]); i++)
		(void)metrics_counter(METRICS_TPP_REVOCATION, "reason",
		    revocation[i], NULL, NULL);
	(void)metrics_slot(METRICS_DB_QUERY, "");
	(void)metrics_slot(METRICS_DB_POOL_WAIT, "");
	for (i = 0; i < sizeof(declared) / sizeof(declared[0]); i++)
		(void)metrics_counter(METRICS_SCA, "kind", declared[i][0],
		    "outcome", declared[i][1]);
}

/* Label values are escaped as the exposition format asks. */
static void
metrics_label(char *out, size_t len, size_t *off, const char *name,
    const char *value)
{
	const char	*p;
	int		 n;

	if (name == NULL || value == NULL)
		return;
	n = snprintf(out + *off, len - *off, "%s%s=\"", *off ? "," : "", name);
	if (n < 0 || (size_t)n >= len - *off)
		return;
	*off += (size_t)n;
	for (p = value; *p != '\0' && *off + 3 < len; p++) {
		if (*p == '\\' || *p == '"') {
			out[(*off)++] = '\\';
			out[(*off)++] = *p;
		} else if (*p == '\n') {
			out[(*off)++] = '\\';
			out[(*off)++] = 'n';
		} else {
			out[(*off)++] = *p;
		}
	}
	if (*off + 1 < len)
		out[(*off)++] = '"';
	out[*off] = '\0';
}

static uint32_t
metrics_hash(uint32_t family, const char *labels)
{
	uint32_t	h;

	h = 2166136261u ^ family;
	for (; *labels != '\0'; labels++)
		h = (h ^ (uint8_t)*labels) * 16777619u;
	return (h);
}

/* The slot of family and labels, claimed on first use; NULL when full. */
static struct metrics_slot *
metrics_slot(uint32_t family, const char *labels)
{
	struct metrics_slot	*s;
	uint32_t		 i, n, state, expect;

	if (metrics_table == NULL)
		return (NULL);
	i = metrics_hash(family, labels) % METRICS_SLOTS;
	for (n = 0; n < METRICS_SLOTS; n++, i = (i + 1) % METRICS_SLOTS) {
		s = &metrics_table[i];
		state = __atomic_load_n(&s->state, __ATOMIC_ACQUIRE);
		if (state == SLOT_FREE) {
			expect = SLOT_FREE;
			if (__atomic_compare_exchange_n(&s->state, &expect,
			    SLOT_CLAIMING, 0, __ATOMIC_ACQ_REL,
			    __ATOMIC_ACQUIRE)) {
				s->family = family;
				snprintf(s->labels, sizeof(s->labels), "%s",
				    labels);
				__atomic_store_n(&s->state, SLOT_READY,
				    __ATOMIC_RELEASE);
				return (s);
			}
			state = expect;
		}
		/* Another worker is filling it in: a few stores away. */
		while (state == SLOT_CLAIMING)
			state = __atomic_load_n(&s->state, __ATOMIC_ACQUIRE);
		if (s->family == family && strcmp(s->labels, labels) == 0)
			return (s);
	}
	return (NULL);
}

static void
metrics_add(struct metrics_slot *s, uint64_t us)
{
	int	i;

	if (s == NULL)
		return;
	__atomic_add_fetch(&s->count, 1, __ATOMIC_RELAXED);
	__atomic_add_fetch(&s->sum_us, us, __ATOMIC_RELAXED);
	for (i = 0; i < METRICS_BUCKETS; i++) {
		if (us <= metrics_bounds_us[i]) {
			__atomic_add_fetch(&s->bucket[i], 1, __ATOMIC_RELAXED);
			break;
		}
	}
}

void
metrics_http(const char *route, const char *method, int status,
    uint64_t us)
{
	char	labels[METRICS_LABELS_MAX], code[8];
	size_t	off;

	off = 0;
	labels[0] = '\0';
	snprintf(code, sizeof(code), "%d", status);
	metrics_label(labels, sizeof(labels), &off, "route", route);
	metrics_label(labels, sizeof(labels), &off, "method", method);
	metrics_label(labels, sizeof(labels), &off, "status", code);
	metrics_add(metrics_slot(METRICS_HTTP, labels), us);
}

void
metrics_observe_us(enum metrics_family family, uint64_t us)
{
	metrics_add(metrics_slot(family, ""), us);
}

static struct metrics_slot *
metrics_counter(enum metrics_family family, const char *n1, const char *v1,
    const char *n2, const char *v2)
{
	char	labels[METRICS_LABELS_MAX];
	size_t	off;

	off = 0;
	labels[0] = '\0';
	metrics_label(labels, sizeof(labels), &off, n1, v1);
	metrics_label(labels, sizeof(labels), &off, n2, v2);
	return (metrics_slot(family, labels));
}

void
metrics_count(enum metrics_family family, const char *n1, const char *v1,
    const char *n2, const char *v2)
{
	metrics_count_n(family, n1, v1, n2, v2, 1);
}

void
metrics_count_n(enum metrics_family family, const char *n1, const char *v1,
    const char *n2, const char *v2, uint64_t n)
{
	struct metrics_slot	*s;

	if ((s = metrics_counter(family, n1, v1, n2, v2)) != NULL)
		__atomic_add_fetch(&s->count, n, __ATOMIC_RELAXED);
}

void
metrics_gauge_set(enum metrics_family family, const char *n1,
    const char *v1, const char *n2, const char *v2, uint64_t value)
{
	struct metrics_slot	*s;

	if ((s = metrics_counter(family, n1, v1, n2, v2)) != NULL)
		__atomic_store_n(&s->count, value, __ATOMIC_RELAXED);
}

void
metrics_sca(const char *kind, const char *outcome)
{
	metrics_count(METRICS_SCA, "kind", kind, "outcome", outcome);
}

void
metrics_token_grant(const char *grant_type, const char *outcome)
{
	metrics_count(METRICS_TOKEN_GRANTS, "grant_type", grant_type,
	    "outcome", outcome);
}

static void
metrics_render_slot(struct kore_buf *b, const char *name, const char *type,
    struct metrics_slot *s)
{
	const char	*sep;
	uint64_t	 cum, count;
	int		 i;

	sep = s->labels[0] ? "," : "";
	count = __atomic_load_n(&s->count, __ATOMIC_RELAXED);
	if (strcmp(type, "counter") == 0 || strcmp(type, "gauge") == 0) {
		kore_buf_appendf(b, "%s%s%s%s %llu\n", name,
		    s->labels[0] ? "{" : "", s->labels,
		    s->labels[0] ? "}" : "", (unsigned long long)count);
		return;
	}
	cum = 0;
	for (i = 0; i < METRICS_BUCKETS; i++) {
		cum += __atomic_load_n(&s->bucket[i], __ATOMIC_RELAXED);
		kore_buf_appendf(b, "%s_bucket{%s%sle=\"%g\"} %llu\n", name,
		    s->labels, sep, (double)metrics_bounds_us[i] / 1e6,
		    (unsigned long long)cum);
	}
	/* count is read first: +Inf is never below a finite bucket. */
	if (count < cum)
		count = cum;
	kore_buf_appendf(b, "%s_bucket{%s%sle=\"+Inf\"} %llu\n", name,
	    s->labels, sep, (unsigned long long)count);
	kore_buf_appendf(b, "%s_sum%s%s%s %.6f\n", name,
	    s->labels[0] ? "{" : "", s->labels, s->labels[0] ? "}" : "",
	    (double)__atomic_load_n(&s->sum_us, __ATOMIC_RELAXED) / 1e6);
	kore_buf_appendf(b, "%s_count%s%s%s %llu\n", name,
	    s->labels[0] ? "{" : "", s->labels, s->labels[0] ? "}" : "",
	    (unsigned long long)count);
}

char *
metrics_render(size_t *len)
{
	struct kore_buf		*b;
	struct metrics_slot	*s;
	char			*out;
	int			 f, i;

	b = kore_buf_alloc(8192);
	for (f = 0; f < METRICS_FAMILIES; f++) {
		kore_buf_appendf(b, "# HELP %s %s\n# TYPE %s %s\n",
		    metrics_families[f].name, metrics_families[f].help,
		    metrics_families[f].name, metrics_families[f].type);
		for (i = 0; metrics_table != NULL && i < METRICS_SLOTS; i++) {
			s = &metrics_table[i];
			if (__atomic_load_n(&s->state, __ATOMIC_ACQUIRE) !=
			    SLOT_READY || s->family != (uint32_t)f)
				continue;
			metrics_render_slot(b, metrics_families[f].name,
			    metrics_families[f].type, s);
		}
	}
	out = kore_buf_stringify(b, len);
	out = kore_strdup(out);
	kore_buf_free(b);
	return (out);
}
