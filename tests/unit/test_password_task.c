/*
 * The password task (src/psu/password_task.c) with Kore's task calls
 * replaced by a stand-in that runs the task's body when the test says
 * so, as Kore's task thread would: the password a user typed is wiped
 * on every path, including a request that went away while its hash was
 * being computed (the browser disconnected: Kore calls the request's
 * free callback and keeps the state until the task ends, but the
 * handler never polls the task again).
 */
#include <sys/types.h>

#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include <cmocka.h>

#include "psu/password_task.h"

#define SECRET	"correct horse battery staple"

static int	destroyed;

/* ---- Kore's task calls, without threads ------------------------------- */

void
kore_task_create(struct kore_task *t, int (*entry)(struct kore_task *))
{
	memset(t, 0, sizeof(*t));
	t->entry = entry;
	t->state = KORE_TASK_STATE_CREATED;
}

void
kore_task_bind_request(struct kore_task *t, struct http_request *req)
{
	t->req = req;
}

void
kore_task_run(struct kore_task *t)
{
	t->state = KORE_TASK_STATE_RUNNING;
}

int
kore_task_state(struct kore_task *t)
{
	return (t->state);
}

int
kore_task_result(struct kore_task *t)
{
	return (t->result);
}

void
kore_task_destroy(struct kore_task *t)
{
	t->req = NULL;
	destroyed++;
}

/* What Kore's task thread does with a task it picked up. */
static void
task_thread(struct kore_task *t)
{
	t->result = t->entry(t);
	t->state = KORE_TASK_STATE_FINISHED;
}

/* ---- helpers --------------------------------------------------------- */

static int
all_zero(const void *p, size_t len)
{
	const unsigned char	*b = p;
	size_t			 i;

	for (i = 0; i < len; i++) {
		if (b[i] != 0)
			return (0);
	}
	return (1);
}

static int
setup(void **state)
{
	static char		 encoded[PASSHASH_ENCODED_MAX];
	static int		 made;

	if (!made) {
		assert_int_equal(password_tasks_init(), 0);
		assert_int_equal(passhash_make(SECRET, encoded,
		    sizeof(encoded)), 0);
		made = 1;
	}
	*state = encoded;
	destroyed = 0;
	return (0);
}

/* ---- tests ------------------------------------------------------------ */

/* The browser went away while the task ran: the task wipes it. */
static void
test_disconnect_while_hashing(void **state)
{
	struct password_job	job;
	struct http_request	req;

	memset(&job, 0xa5, sizeof(job));
	password_job_start(&job, &req, *state, SECRET);
	assert_non_null(memmem(job.password, sizeof(job.password), SECRET,
	    strlen(SECRET)));
	/* Kore's http_request_free: the free callback, the task pending. */
	password_job_end(&job);
	task_thread(&job.task);
	/* The state is freed later; the handler never polled. */
	assert_true(all_zero(job.password, sizeof(job.password)));
	password_job_end(&job);
	assert_true(all_zero(job.password, sizeof(job.password)));
}

static void
test_verdict_then_wiped(void **state)
{
	struct password_job	job;
	struct http_request	req;

	memset(&job, 0, sizeof(job));
	password_job_start(&job, &req, *state, SECRET);
	assert_int_equal(password_job_poll(&job), PASSWORD_PENDING);
	task_thread(&job.task);
	assert_int_equal(password_job_poll(&job), PASSWORD_MATCH);
	assert_int_equal(destroyed, 1);
	assert_true(all_zero(job.password, sizeof(job.password)));

	memset(&job, 0, sizeof(job));
	password_job_start(&job, &req, *state, "wrong " SECRET);
	task_thread(&job.task);
	assert_int_equal(password_job_poll(&job), PASSWORD_MISMATCH);
	assert_true(all_zero(job.password, sizeof(job.password)));
}

/* An unknown user: the dummy hash, the same wipe. */
static void
test_unknown_user(void **state)
{
	struct password_job	job;
	struct http_request	req;

	(void)state;
	memset(&job, 0, sizeof(job));
	password_job_start(&job, &req, NULL, SECRET);
	task_thread(&job.task);
	assert_true(all_zero(job.password, sizeof(job.password)));
	assert_int_equal(password_job_poll(&job), PASSWORD_MISMATCH);
}

/* The request's own copies: the form argument and the body. */
static void
test_request_copies_wiped(void **state)
{
	struct http_request	req;
	struct http_arg		user, pass;
	struct kore_buf		body;
	char			uval[] = "alice", pval[] = SECRET;
	char			raw[] = "username=alice&password=" SECRET;

	(void)state;
	memset(&req, 0, sizeof(req));
	TAILQ_INIT(&req.arguments);
	user.name = "username";
	user.s_value = uval;
	pass.name = "password";
	pass.s_value = pval;
	TAILQ_INSERT_TAIL(&req.arguments, &user, list);
	TAILQ_INSERT_TAIL(&req.arguments, &pass, list);
	memset(&body, 0, sizeof(body));
	body.data = (u_int8_t *)raw;
	body.length = sizeof(raw);
	req.http_body = &body;
	password_request_wipe(&req);
	assert_true(all_zero(pval, sizeof(pval)));
	assert_true(all_zero(raw, sizeof(raw)));
	assert_string_equal(uval, "alice");
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_setup(test_disconnect_while_hashing, setup),
		cmocka_unit_test_setup(test_verdict_then_wiped, setup),
		cmocka_unit_test_setup(test_unknown_user, setup),
		cmocka_unit_test_setup(test_request_copies_wiped, setup),
	};

	return (cmocka_run_group_tests(tests, NULL, NULL));
}
