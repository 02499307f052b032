#include <malloc.h>
#include <stddef.h>
#include <stdio.h>
#include <string.h>

#include "psu/password_task.h"

static char	password_dummy[PASSHASH_ENCODED_MAX];

/*
 * Made once in the parent (workers inherit both): the hash an unknown
 * username is checked against, and a fixed mmap threshold. Each hash
 * mallocs PASSHASH_M_COST KiB (19 MiB) in a task thread. glibc raises its
 * mmap threshold to the size of the first such block freed, so later
 * ones came from the task threads' arenas and stayed there (a worker
 * held 43 MB after a burst of logins, make bench). Fixed, every block of
 * 1 MiB or more is mmapped and returned to the system when freed (make
 * bench checks every worker's PSS after the burst).
 */
int
password_tasks_init(void)
{
	/* Not fatal: under ASan its own allocator answers (and ignores it). */
	(void)mallopt(M_MMAP_THRESHOLD, 1024 * 1024);
	return (passhash_make("psd2gate-no-such-user", password_dummy,
	    sizeof(password_dummy)));
}

/*
 * The task thread wipes the password itself as soon as it is hashed: the
 * request may be gone by then (the browser disconnected), and Kore frees
 * its state without the handler ever polling the task.
 */
static int
password_task_run(struct kore_task *t)
{
	struct password_job	*job;
	int			 match;

	job = (struct password_job *)((char *)t -
	    offsetof(struct password_job, task));
	match = passhash_verify(job->encoded, job->password);
	explicit_bzero(job->password, sizeof(job->password));
	return (match ? 1 : 0);
}

void
password_job_start(struct password_job *job, struct http_request *req,
    const char *encoded, const char *password)
{
	snprintf(job->encoded, sizeof(job->encoded), "%s",
	    encoded != NULL ? encoded : password_dummy);
	snprintf(job->password, sizeof(job->password), "%s", password);
	job->finished = 0;
	kore_task_create(&job->task, password_task_run);
	kore_task_bind_request(&job->task, req);
	kore_task_run(&job->task);
	job->started = 1;
}

enum password_status
password_job_poll(struct password_job *job)
{
	int	result;

	if (!job->started || kore_task_state(&job->task) !=
	    KORE_TASK_STATE_FINISHED)
		return (PASSWORD_PENDING);
	result = kore_task_result(&job->task);
	kore_task_destroy(&job->task);
	job->finished = 1;
	password_job_end(job);
	return (result == 1 ? PASSWORD_MATCH : PASSWORD_MISMATCH);
}

/*
 * Wipes the password once no thread reads it. A task still running when
 * the request goes away wipes it itself (password_task_run) and is
 * destroyed by Kore when it finishes.
 */
void
password_job_end(struct password_job *job)
{
	if (!job->started || job->finished)
		explicit_bzero(job->password, sizeof(job->password));
}

void
password_request_wipe(struct http_request *req)
{
	struct http_arg	*q;

	TAILQ_FOREACH(q, &req->arguments, list) {
		if (strcmp(q->name, "password") == 0 && q->s_value != NULL)
			explicit_bzero(q->s_value, strlen(q->s_value));
	}
	if (req->http_body != NULL && req->http_body->data != NULL)
		explicit_bzero(req->http_body->data, req->http_body->length);
}
