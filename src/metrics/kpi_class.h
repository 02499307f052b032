/*
 * The classes of the regulator's key performance indicators (EBA
 * GL/2018/07, GL 2.2 to 2.4): which interface and service a request
 * belongs to, and whose fault an error answer was. One table for the
 * KPI aggregates (kpi.c), the downtime detector and the reports, so
 * that every figure counts the same requests.
 */
#ifndef PSD2_KPI_CLASS_H
#define PSD2_KPI_CLASS_H

enum kpi_class {
	KPI_OAUTH,		/* authorize, token, revoke, metadata */
	KPI_AIS,		/* account information, consents (both surfaces) */
	KPI_PIS,		/* payment initiation */
	KPI_FUNDS,		/* confirmation of funds */
	KPI_PSU_PAGES,		/* the bank's own customer interface */
	KPI_CLASSES,
	KPI_NONE = KPI_CLASSES	/* not counted: assets, health, staff, 404s */
};

enum kpi_cause {
	KPI_CAUSE_NONE,		/* answered as asked (1xx to 3xx) */
	KPI_CAUSE_BANK,		/* 5xx: the bank's fault */
	KPI_CAUSE_TPP,		/* 4xx on the dedicated interface */
	KPI_CAUSE_PSU,		/* 4xx on the PSU's own pages */
	KPI_CAUSES
};

/* The class of a request path (not the route's pattern). */
enum kpi_class	kpi_class_of(const char *);
/* Whose fault an answer with this status was, in this class. */
enum kpi_cause	kpi_cause_of(enum kpi_class, int);
/* Names as the database and the reports spell them. */
const char	*kpi_class_name(enum kpi_class);
const char	*kpi_cause_name(enum kpi_cause);

#endif
