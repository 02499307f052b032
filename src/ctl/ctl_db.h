/*
 * psd2ctl's plumbing below the commands: the database connection, its
 * statements and the actor of its audit rows. Blocking libpq is fine
 * here. The command files use this; it uses none of them.
 */
#ifndef PSD2_CTL_DB_H
#define PSD2_CTL_DB_H

#include <stddef.h>

#include <libpq-fe.h>

/* The connection for a command (migrate: the owner's role); exits. */
PGconn		*ctl_connect(const char *);
/* Runs a parameterised statement; exits with a message on failure. */
PGresult	*ctl_exec(PGconn *, const char *, int, const char *const *);
/* Kore's root from the configuration text; psd2_db for psd2ctl with
 * its file paths inside that root (malloc'ed). */
void		 ctl_kore_root_set(const char *);
char		*ctl_conninfo(const char *);
/* "operator:<login>", the actor of psd2ctl's audit rows. */
void		 ctl_actor(char *, size_t);

#endif
