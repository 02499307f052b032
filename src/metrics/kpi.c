/*
 * The KPI minutes in shared memory: a ring of KPI_RING slots, one per
 * minute (the minute since the epoch modulo KPI_RING). The first answer
 * of a new minute claims its slot with a compare-and-swap and zeroes it;
 * every other answer only adds with atomic operations, so the hot path
 * takes no lock. A slot keeps its minute until the flusher has written
 * it; a minute still unwritten when its slot is claimed again (the
 * database was down for a whole ring, a day) is lost and counted.
 */
#include <sys/types.h>
#include <sys/mman.h>

#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <kore.h>

#include "metrics/kpi.h"

#define KPI_FREE	0	/* never used */
#define KPI_RESET	(-1)	/* being zeroed for a new minute */

/*
 * Upper bounds of the latency buckets (ms): 1 ms steps to 10 ms, then
 * steps of at most a quarter of the bound; a median or 95th percentile
 * read as its bucket's bound is at most 1 ms high up to 10 ms and at
 * most 25% high above (src/db/README.md). 80_kpi.sql has the same list.
 */
const uint32_t	kpi_bounds_ms[KPI_BOUNDS] = {
	1, 2, 3, 4, 5, 6, 7, 8, 9, 10,
	12, 14, 16, 18, 20, 25, 30, 35, 40, 50,
	60, 70, 80, 100, 120, 140, 160, 200, 250, 300,
	350, 400, 500, 600, 700, 800, 1000, 1250, 1500, 2000,
	2500, 3000, 4000, 5000, 6000, 8000, 10000, 12500, 15000, 17500,
	20000, 22500, 25000, 30000
};

struct kpi_slot {
	int64_t			minute;
	uint32_t		written;
	struct kpi_counts	c[KPI_CLASSES];
};

struct kpi_ring {
	uint64_t		lost;
	struct kpi_slot		slot[KPI_RING];
};

static struct kpi_ring	*kpi_ring;

void
kpi_init(int on)
{
	void	*p;

	if (!on)
		return;
	p = mmap(NULL, sizeof(*kpi_ring), PROT_READ | PROT_WRITE,
	    MAP_SHARED | MAP_ANONYMOUS, -1, 0);
	if (p == MAP_FAILED)
		fatal("kpi: mmap: %s", errno_s);
	kpi_ring = p;
}

int
kpi_enabled(void)
{
	return (kpi_ring != NULL);
}

size_t
kpi_bucket(uint64_t ms)
{
	size_t	lo, hi, mid;

	lo = 0;
	hi = KPI_BOUNDS;
	while (lo < hi) {
		mid = (lo + hi) / 2;
		if (ms <= kpi_bounds_ms[mid])
			hi = mid;
		else
			lo = mid + 1;
	}
	return (lo);
}

/* The slot of minute m, claimed and zeroed when it held another. */
static struct kpi_slot *
kpi_slot(int64_t m)
{
	struct kpi_slot	*s;
	int64_t		 cur;

	s = &kpi_ring->slot[m % KPI_RING];
	for (;;) {
		cur = __atomic_load_n(&s->minute, __ATOMIC_ACQUIRE);
		if (cur == m)
			return (s);
		if (cur > m)
			return (NULL);	/* a late answer of a reused slot */
		if (cur == KPI_RESET)
			continue;	/* another worker zeroes it */
		if (!__atomic_compare_exchange_n(&s->minute, &cur, KPI_RESET,
		    0, __ATOMIC_ACQ_REL, __ATOMIC_ACQUIRE))
			continue;
		if (cur != KPI_FREE && !__atomic_load_n(&s->written,
		    __ATOMIC_ACQUIRE))
			__atomic_add_fetch(&kpi_ring->lost, 1,
			    __ATOMIC_RELAXED);
		memset(s->c, 0, sizeof(s->c));
		__atomic_store_n(&s->written, 0, __ATOMIC_RELEASE);
		__atomic_store_n(&s->minute, m, __ATOMIC_RELEASE);
		return (s);
	}
}

void
kpi_record(const char *path, int status, uint64_t ms)
{
	struct kpi_counts	*c;
	struct kpi_slot		*s;
	enum kpi_class		 class;
	enum kpi_cause		 cause;

	if (kpi_ring == NULL)
		return;
	if ((class = kpi_class_of(path)) == KPI_NONE)
		return;
	if ((s = kpi_slot((int64_t)time(NULL) / 60)) == NULL)
		return;
	c = &s->c[class];
	cause = kpi_cause_of(class, status);
	__atomic_add_fetch(&c->requests, 1, __ATOMIC_RELAXED);
	if (cause != KPI_CAUSE_NONE)
		__atomic_add_fetch(&c->cause[cause], 1, __ATOMIC_RELAXED);
	if (ms > KPI_SLOW_MS)
		__atomic_add_fetch(&c->slow, 1, __ATOMIC_RELAXED);
	if (ms > KPI_SLOW_MS || cause == KPI_CAUSE_BANK)
		__atomic_add_fetch(&c->failed, 1, __ATOMIC_RELAXED);
	__atomic_add_fetch(&c->sum_ms, ms, __ATOMIC_RELAXED);
	__atomic_add_fetch(&c->latency[kpi_bucket(ms)], 1, __ATOMIC_RELAXED);
}

static void
kpi_copy(struct kpi_counts *dst, const struct kpi_counts *src)
{
	size_t	i;

	dst->requests = __atomic_load_n(&src->requests, __ATOMIC_RELAXED);
	for (i = 0; i < KPI_CAUSES; i++)
		dst->cause[i] = __atomic_load_n(&src->cause[i],
		    __ATOMIC_RELAXED);
	dst->slow = __atomic_load_n(&src->slow, __ATOMIC_RELAXED);
	dst->failed = __atomic_load_n(&src->failed, __ATOMIC_RELAXED);
	dst->sum_ms = __atomic_load_n(&src->sum_ms, __ATOMIC_RELAXED);
	for (i = 0; i < KPI_BUCKETS; i++)
		dst->latency[i] = __atomic_load_n(&src->latency[i],
		    __ATOMIC_RELAXED);
}

static int
kpi_minute_cmp(const void *a, const void *b)
{
	int64_t	x = *(const int64_t *)a, y = *(const int64_t *)b;

	return (x < y ? -1 : x > y);
}

size_t
kpi_finished(int64_t upto, int64_t *minutes,
    struct kpi_counts (*out)[KPI_CLASSES], size_t max)
{
	struct kpi_slot	*s;
	int64_t		 all[KPI_RING], m;
	size_t		 i, n, k;

	if (kpi_ring == NULL)
		return (0);
	for (i = 0, n = 0; i < KPI_RING; i++) {
		s = &kpi_ring->slot[i];
		m = __atomic_load_n(&s->minute, __ATOMIC_ACQUIRE);
		if (m <= 0 || m > upto ||
		    __atomic_load_n(&s->written, __ATOMIC_ACQUIRE))
			continue;
		all[n++] = m;
	}
	qsort(all, n, sizeof(all[0]), kpi_minute_cmp);
	for (i = 0; i < n && i < max; i++) {
		minutes[i] = all[i];
		s = &kpi_ring->slot[all[i] % KPI_RING];
		for (k = 0; k < KPI_CLASSES; k++)
			kpi_copy(&out[i][k], &s->c[k]);
	}
	return (i);
}

void
kpi_written(int64_t m)
{
	struct kpi_slot	*s;

	if (kpi_ring == NULL)
		return;
	s = &kpi_ring->slot[m % KPI_RING];
	if (__atomic_load_n(&s->minute, __ATOMIC_ACQUIRE) == m)
		__atomic_store_n(&s->written, 1, __ATOMIC_RELEASE);
}

uint64_t
kpi_lost(void)
{
	if (kpi_ring == NULL)
		return (0);
	return (__atomic_load_n(&kpi_ring->lost, __ATOMIC_RELAXED));
}
