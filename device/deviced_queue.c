/*
 * Message queues between psd2-deviced's threads: a locked list plus a
 * wake-up (an eventfd the main thread polls, or a callback that
 * interrupts libusb's event handling).
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/eventfd.h>
#include <unistd.h>

#include "deviced_common.h"

int
dqueue_init(struct dqueue *q, int use_eventfd)
{
	memset(q, 0, sizeof(*q));
	pthread_mutex_init(&q->lock, NULL);
	q->efd = -1;
	if (use_eventfd &&
	    (q->efd = eventfd(0, EFD_NONBLOCK | EFD_CLOEXEC)) == -1)
		return (-1);
	return (0);
}

void
dqueue_push(struct dqueue *q, struct dmsg *m)
{
	m->next = NULL;
	pthread_mutex_lock(&q->lock);
	if (q->tail != NULL)
		q->tail->next = m;
	else
		q->head = m;
	q->tail = m;
	pthread_mutex_unlock(&q->lock);
	/* A failure can only be a counter already full: a wake-up is due. */
	if (q->efd != -1)
		(void)eventfd_write(q->efd, 1);
	if (q->wake != NULL)
		q->wake(q->wake_arg);
}

struct dmsg *
dqueue_pop(struct dqueue *q)
{
	struct dmsg	*m;

	pthread_mutex_lock(&q->lock);
	if ((m = q->head) != NULL) {
		q->head = m->next;
		if (q->head == NULL)
			q->tail = NULL;
	}
	pthread_mutex_unlock(&q->lock);
	return (m);
}

int
dqueue_empty(struct dqueue *q)
{
	int	empty;

	pthread_mutex_lock(&q->lock);
	empty = q->head == NULL;
	pthread_mutex_unlock(&q->lock);
	return (empty);
}

void
dqueue_drain_fd(struct dqueue *q)
{
	eventfd_t	v;

	/* Nonblocking: EAGAIN only says another drain came first. */
	if (q->efd != -1)
		(void)eventfd_read(q->efd, &v);
}

void
dqueue_free(struct dqueue *q)
{
	struct dmsg	*m;

	while ((m = dqueue_pop(q)) != NULL)
		free(m);
	if (q->efd != -1)
		close(q->efd);
	pthread_mutex_destroy(&q->lock);
}

struct dmsg *
dmsg_new(enum dmsg_type type, const char *serial)
{
	struct dmsg	*m;

	if ((m = calloc(1, sizeof(*m))) == NULL)
		abort();
	m->type = type;
	if (serial != NULL)
		memcpy(m->serial, serial, strnlen(serial, DEV_SERIAL_MAX));
	return (m);
}
