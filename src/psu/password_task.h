/*
 * Password verification in a Kore task thread, bound to the request so
 * the handler is woken when the verdict is in.
 */
#ifndef PSD2_PASSWORD_TASK_H
#define PSD2_PASSWORD_TASK_H

#include <kore.h>
#include <http.h>
#include <tasks.h>

#include "common/passhash.h"

enum password_status {
	PASSWORD_PENDING,
	PASSWORD_MATCH,
	PASSWORD_MISMATCH
};

struct password_job {
	struct kore_task	task;
	int			started;
	int			finished;
	char			encoded[PASSHASH_ENCODED_MAX];
	char			password[1024];
};

/* encoded NULL: verify against a dummy hash so an unknown user costs the same. */
void			password_job_start(struct password_job *,
			    struct http_request *, const char *, const char *);
enum password_status	password_job_poll(struct password_job *);
/* Wipes the job's password unless its task still runs (it wipes it). */
void			password_job_end(struct password_job *);
/*
 * Wipes the request's copies of a posted "password" (the form argument
 * and the body): for the handler's free callback, as Kore frees both
 * without wiping.
 */
void			password_request_wipe(struct http_request *);
int			password_tasks_init(void);

#endif
