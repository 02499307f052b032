/* psd2ctl: the operator CLI. Blocking libpq is fine here. */
#ifndef PSD2_CTL_H
#define PSD2_CTL_H

#include <stddef.h>

#include <libpq-fe.h>

/* Runs a parameterised statement; exits with a message on failure. */
PGresult	*ctl_exec(PGconn *, const char *, int, const char *const *);
int		 ctl_migrate(PGconn *);
/* Kore's root from the configuration text; psd2_db for psd2ctl with
 * its file paths inside that root (malloc'ed). */
void		 ctl_kore_root_set(const char *);
char		*ctl_conninfo(const char *);
int		 ctl_keys_init(void);
int		 ctl_tpp(PGconn *, int, char **);
int		 ctl_psu(PGconn *, int, char **);
int		 ctl_staff(PGconn *, int, char **);
int		 ctl_account(PGconn *, int, char **);
int		 ctl_sandbox_seed(PGconn *);
int		 ctl_audit(PGconn *, int, char **);
/* "operator:<login>", the actor of psd2ctl's audit rows. */
void		 ctl_actor(char *, size_t);
/* An audit row of psd2ctl: action and up to two detail pairs (k2 NULL). */
void		 ctl_audit_write(PGconn *, const char *, const char *,
		    const char *, const char *, const char *);

/* Creates a TPP client: secret NULL generates one (printed once). */
int		 ctl_client_add(PGconn *, const char *, const char *,
		    const char *, const char *const *, int, int, int,
		    const char *);
/* Legacy client secret rows to the keyed form (NULL: all); count or -1. */
int		 ctl_client_rehash(PGconn *, const char *);
/* Adds a PSU or staff member ("psu"/"staff"); totp_b32 NULL generates one. */
int		 ctl_name_ok(const char *, const char *, char *, size_t);
int		 ctl_person_add(PGconn *, const char *, const char *,
		    const char *, const char *, const char *);
int		 ctl_account_add(PGconn *, const char *, const char *,
		    const char *, const char *, const char *);

#endif
