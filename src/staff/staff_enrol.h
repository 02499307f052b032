/* Enrolment on the staff pages (staff_enrol.c). */
#ifndef PSD2_STAFF_ENROL_H
#define PSD2_STAFF_ENROL_H

#include "staff/staff_page.h"

/* The manufacturer CA keys, in the parent: 0, or -1 if unreadable. */
int	staff_enrol_init(void);
/* Starts an enrolment of serial on p (the verification follows). */
void	staff_enrol_query(struct http_request *, struct staff_page *,
	    const char *);

#endif
