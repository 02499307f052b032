/*
 * psd2-deviced: connects the authenticators plugged into this host to the
 * shared PostgreSQL (device/PROTOCOL.md, "psd2-deviced").
 *
 * Two threads: the USB thread owns libusb (hot-plug, transfers, the
 * per-device protocol state) and never touches PostgreSQL; the main
 * thread owns libpq (LISTEN, claims, leases, outcomes) and never touches
 * libusb. They exchange struct dmsg through two queues.
 *
 * This header is what both threads share (configuration, log, messages,
 * queues, counters), below them: deviced.c (main) uses deviced_usb.h and
 * deviced_db.h, and neither of those uses main.
 */
#ifndef PSD2_DEVICED_COMMON_H
#define PSD2_DEVICED_COMMON_H

#include <pthread.h>
#include <stdint.h>

#include "devframe.h"

#define DEVD_REASON_MAX		96
#define DEVD_MAX_DEVICES	256

enum dmsg_type {
	/* USB thread -> main thread */
	DM_ARRIVED,	/* info, attest_ok */
	DM_GONE,
	DM_RESULT,	/* challenge, result */
	DM_FAILED,	/* challenge, reason */
	DM_BUSY,	/* challenge */
	DM_CANCELLED,	/* challenge */
	/* main thread -> USB thread */
	UM_CONFIRM,	/* confirm */
	UM_CANCEL	/* challenge */
};

struct dmsg {
	enum dmsg_type		 type;
	char			 serial[DEV_SERIAL_MAX + 1];
	uint8_t			 challenge[DEV_CHALLENGE_LEN];
	struct dev_info		 info;
	int			 attest_ok;
	struct dev_result	 result;
	struct dev_confirm	 confirm;
	char			 reason[DEVD_REASON_MAX];
	struct dmsg		*next;
};

struct dqueue {
	pthread_mutex_t		 lock;
	struct dmsg		*head;
	struct dmsg		*tail;
	int			 efd;	/* eventfd, or -1 */
	void			(*wake)(void *);
	void			*wake_arg;
};

int		 dqueue_init(struct dqueue *, int use_eventfd);
void		 dqueue_push(struct dqueue *, struct dmsg *);
struct dmsg	*dqueue_pop(struct dqueue *);
int		 dqueue_empty(struct dqueue *);
void		 dqueue_drain_fd(struct dqueue *);
void		 dqueue_free(struct dqueue *);
struct dmsg	*dmsg_new(enum dmsg_type, const char *serial);

struct devd_conf {
	char		 db[1024];
	uint16_t	 vid;
	uint16_t	 pid;
	char		 ca_path[1024];
	char		 host[128];
	int		 lease_seconds;
	int		 rescan_ms;
	int		 hotplug;
	int		 busy_retry_ms;
	char		 metrics_path[1024];	/* empty: no metrics file */
};

/* What the metrics file shows (device/deviced_metrics.c). */
enum {
	DEVD_OUT_APPROVED, DEVD_OUT_DECLINED, DEVD_OUT_TIMED_OUT,
	DEVD_OUT_FAILED, DEVD_OUT_RELEASED, DEVD_OUT_KINDS
};

/* Why an end was not written: the challenge was no longer this daemon's
 * to end (the service cancelled it first, the lease was lost), or the
 * database kept refusing the write until it could no longer count. */
enum {
	DEVD_NW_REFUSED, DEVD_NW_GIVEN_UP, DEVD_NW_KINDS
};

struct devd_stats {
	int		 present;
	int		 seen;
	int		 connected;
	uint64_t	 connects;
	uint64_t	 ends[DEVD_OUT_KINDS];
	uint64_t	 not_written[DEVD_NW_KINDS];
	uint64_t	 write_retries;
};

int	devd_metrics_write(const char *, const char *,
	    const struct devd_stats *);

/* One line per event on stderr (journald adds time and unit), or to
 * syslog after devd_log_to_syslog() (daemon mode). */
void	devd_log(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
void	devd_log_to_syslog(void);

#endif
