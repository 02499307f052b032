/*
 * The published statistics (RTS Art. 32(4), EBA GL/2018/07 GL 2.4): the
 * quarter's KPIs of the dedicated interface beside the customer
 * interface, as a public page and CSV (kpi_page.c) and on the staff
 * page /staff/kpi (src/staff/staff_kpi.c).
 */
#ifndef PSD2_KPI_PAGE_H
#define PSD2_KPI_PAGE_H

#include <jansson.h>

struct http_request;

/* A quarter's name as the report takes it (YYYYQn, 1900 to 2999). */
int	kpi_quarter_valid(const char *);
/* The report's JSON (kpi_report_json) with the classes' headings added. */
json_t	*kpi_page_data(struct http_request *, const char *);

#endif
