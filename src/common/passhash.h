/*
 * Password hashing with argon2id (libargon2). Slow on purpose: in the
 * service it only ever runs in a Kore task thread, never on the event loop.
 */
#ifndef PSD2_PASSHASH_H
#define PSD2_PASSHASH_H

#include <stddef.h>

/* RFC 9106 second recommended option scaled down: 19 MiB, t=2, p=1. */
#define PASSHASH_T_COST		2
#define PASSHASH_M_COST		19456
#define PASSHASH_PARALLELISM	1
#define PASSHASH_ENCODED_MAX	128

int	passhash_make(const char *, char *, size_t);
/* 1 when password matches encoded, 0 otherwise (also for a bad hash). */
int	passhash_verify(const char *, const char *);

#endif
