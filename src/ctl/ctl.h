/*
 * psd2ctl's commands, as psd2ctl.c dispatches them. Each returns 0 ok,
 * 1 failure, 2 usage. Their plumbing (connection, statements, actor) is
 * ctl_db.h, below them.
 */
#ifndef PSD2_CTL_H
#define PSD2_CTL_H

#include <libpq-fe.h>

int		 ctl_migrate(PGconn *);
int		 ctl_keys_init(void);
int		 ctl_tpp(PGconn *, int, char **);
int		 ctl_psu(PGconn *, int, char **);
int		 ctl_staff(PGconn *, int, char **);
int		 ctl_account(PGconn *, int, char **);
int		 ctl_sandbox_seed(PGconn *);
int		 ctl_audit(PGconn *, int, char **);
int		 ctl_purge(PGconn *);
/* report NAME ... (ctl_report.c: one row a report). A report that
 * connects itself runs in ctl_report_alone (1: it ran, its exit code in
 * *rc), the others in ctl_report with psd2ctl's connection. */
int		 ctl_report_alone(int, char **, int *);
int		 ctl_report(PGconn *, int, char **);
/* report fraud: argv after "report fraud"; connects itself. */
int		 ctl_report_fraud(int, char **);
int		 ctl_risk(PGconn *, int, char **);

/* Creates a TPP client: secret NULL generates one (printed once). */
int		 ctl_client_add(PGconn *, const char *, const char *,
		    const char *, const char *const *, int, int, int,
		    const char *);
/* Legacy client secret rows to the keyed form (NULL: all); count or -1. */
int		 ctl_client_rehash(PGconn *, const char *);
/* A name people read (kind names it in the error) against the text rule. */
int		 ctl_name_ok(const char *, const char *, char *, size_t);
/* Adds a PSU or staff member ("psu"/"staff", staff with a role);
 * totp_b32 NULL generates one. */
int		 ctl_person_add(PGconn *, const char *, const char *,
		    const char *, const char *, const char *, const char *);
int		 ctl_account_add(PGconn *, const char *, const char *,
		    const char *, const char *, const char *);

#endif
