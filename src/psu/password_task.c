#include <malloc.h>
#include <stddef.h>
#include <stdio.h>
#include <string.h>

#include <openssl/crypto.h>

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

static int
password_task_run(struct kore_task *t)
{
	struct password_job	*job;

	job = (struct password_job *)((char *)t -
	    offsetof(struct password_job, task));
	return (passhash_verify(job->encoded, job->password) ? 1 : 0);
}

void
password_job_start(struct password_job *job, struct http_request *req,
    const char *encoded, const char *password)
{
	snprintf(job->encoded, sizeof(job->encoded), "%s",
	    encoded != NULL ? encoded : password_dummy);
	snprintf(job->password, sizeof(job->password), "%s", password);
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
 * the request goes away is destroyed by Kore itself when it finishes.
 */
void
password_job_end(struct password_job *job)
{
	if (!job->started || job->finished)
		OPENSSL_cleanse(job->password, sizeof(job->password));
}
