/*
 * usbdevfs emulator over umockdev (see usbemu.h and
 * UMOCKDEV.md).
 *
 * Locking: one emulator mutex guards every device, plug and session; it
 * is never held while calling into umockdev's testbed (tb_lock serialises
 * those) nor while calling a device's OUT callback, because firmware code
 * calls back into usbemu_dev_send_in().
 */
#include <errno.h>
#include <fcntl.h>
#include <stddef.h>
#include <stdio.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <linux/usbdevice_fs.h>

#include <glib.h>
#include <umockdev.h>

#include "usbemu.h"

#define EMU_BUSNUM		1
#define EMU_DEVNUM_FIRST	2
#define EMU_DEVNUM_COUNT	120
#define EMU_CAPS		(USBDEVFS_CAP_ZERO_PACKET | \
				 USBDEVFS_CAP_NO_PACKET_SIZE_LIM | \
				 USBDEVFS_CAP_REAP_AFTER_DISCONNECT)
#define EMU_EP_OUT		0x01
#define EMU_EP_IN		0x81
#define EMU_CLOSE_WAIT_MS	2000

struct emu_urb {
	UMockdevIoctlData	*urb;
	UMockdevIoctlData	*buf;
};

struct session;

struct plug {
	struct usbemu_dev	*dev;
	UMockdevIoctlBase	*base;
	char			 devnode[64];
	char			 syspath[96];
	int			 fifo;
	int			 fifo_full;
	int			 gone;
	int			 stall;
	GList			*sessions;
	struct session		*last_out;
	/* OUT bytes of a transfer whose end (short packet or ZLP) is
	 * still to come, as the device's USB controller sees them. */
	GByteArray		*out_acc;
};

struct session {
	struct plug		*plug;
	UMockdevIoctlClient	*client;
	GQueue			 pending_in;	/* struct emu_urb */
	GQueue			 done;		/* struct emu_urb */
	GQueue			 msgs;		/* GBytes queued for IN */
};

struct usbemu_dev {
	struct usbemu		*emu;
	uint16_t		 vid;
	uint16_t		 pid;
	char			*manufacturer;
	char			*product;
	char			*serial;
	unsigned int		 maxpacket;	/* bulk wMaxPacketSize */
	usbemu_out_cb		 out_cb;
	void			*out_arg;
	struct plug		*plug;
};

struct usbemu {
	UMockdevTestbed		*tb;
	GMutex			 lock;
	GMutex			 tb_lock;
	GMainContext		*ctx;
	GMainLoop		*loop;
	GThread			*thread;
	GPtrArray		*devs;
	GPtrArray		*plugs;		/* every plug ever made */
	unsigned int		 devnum_next;
	unsigned int		 nsessions;
	char			*root;
};

struct emu_task {
	usbemu_task_cb		 fn;
	void			*arg;
};

static void	session_vanished(gpointer, GObject *);

static void
urb_free(struct emu_urb *u)
{
	if (u->buf != NULL)
		g_object_unref(u->buf);
	g_object_unref(u->urb);
	g_free(u);
}

static struct usbdevfs_urb *
urb_hdr(struct emu_urb *u)
{
	return ((struct usbdevfs_urb *)u->urb->data);
}

/* Caller holds the lock. The FIFO is writable only while a URB waits. */
static void
plug_update_fifo(struct plug *p)
{
	GList	*l;
	int	 ready = 0;
	char	 c = 0;

	for (l = p->sessions; l != NULL; l = l->next) {
		if (!g_queue_is_empty(&((struct session *)l->data)->done))
			ready = 1;
	}
	if (p->fifo == -1)
		return;
	if (ready && p->fifo_full) {
		if (read(p->fifo, &c, 1) == 1)
			p->fifo_full = 0;
	} else if (!ready && !p->fifo_full) {
		if (write(p->fifo, &c, 1) == 1)
			p->fifo_full = 1;
	}
}

static void
urb_finish(struct session *s, struct emu_urb *u, int status, size_t actual)
{
	urb_hdr(u)->status = status;
	urb_hdr(u)->actual_length = (int)actual;
	g_queue_push_tail(&s->done, u);
}

/* Caller holds the lock. */
static void
session_drop_zlp(struct session *s)
{
	GBytes	*next = g_queue_peek_head(&s->msgs);

	if (next != NULL && g_bytes_get_size(next) == 0)
		g_bytes_unref(g_queue_pop_head(&s->msgs));
}

/* Caller holds the lock: answers pending IN URBs from queued messages. */
static void
session_pump(struct session *s)
{
	struct emu_urb	*u;
	GBytes		*msg;
	const uint8_t	*data;
	size_t		 len;

	while (!g_queue_is_empty(&s->pending_in)) {
		if (s->plug->stall) {
			s->plug->stall = 0;
			u = g_queue_pop_head(&s->pending_in);
			urb_finish(s, u, -EPIPE, 0);
			continue;
		}
		if ((msg = g_queue_pop_head(&s->msgs)) == NULL)
			break;
		u = g_queue_pop_head(&s->pending_in);
		data = g_bytes_get_data(msg, &len);
		if (len > (size_t)u->buf->data_len) {
			memcpy(u->buf->data, data, u->buf->data_len);
			urb_finish(s, u, -EOVERFLOW, u->buf->data_len);
		} else {
			if (len > 0)
				memcpy(u->buf->data, data, len);
			urb_finish(s, u, 0, len);
			/* Room left: the ZLP that follows ends this URB. */
			if (len > 0 && len % s->plug->dev->maxpacket == 0 &&
			    len < (size_t)u->buf->data_len)
				session_drop_zlp(s);
		}
		g_bytes_unref(msg);
	}
	plug_update_fifo(s->plug);
}

static struct session *
session_get(struct plug *p, UMockdevIoctlClient *client)
{
	struct session	*s;
	GList		*l;

	for (l = p->sessions; l != NULL; l = l->next) {
		s = l->data;
		if (s->client == client)
			return (s);
	}
	s = g_new0(struct session, 1);
	s->plug = p;
	s->client = client;
	g_queue_init(&s->pending_in);
	g_queue_init(&s->done);
	g_queue_init(&s->msgs);
	p->sessions = g_list_prepend(p->sessions, s);
	p->dev->emu->nsessions++;
	/* No close notification exists: the client's finalisation is it. */
	g_object_weak_ref(G_OBJECT(client), session_vanished, s);
	return (s);
}

/* Caller holds the lock. */
static void
session_free(struct session *s)
{
	struct plug	*p = s->plug;

	g_queue_clear_full(&s->pending_in, (GDestroyNotify)urb_free);
	g_queue_clear_full(&s->done, (GDestroyNotify)urb_free);
	g_queue_clear_full(&s->msgs, (GDestroyNotify)g_bytes_unref);
	p->sessions = g_list_remove(p->sessions, s);
	if (p->last_out == s)
		p->last_out = NULL;
	p->dev->emu->nsessions--;
	plug_update_fifo(p);
	g_free(s);
}

static void
session_vanished(gpointer data, GObject *gone)
{
	struct session	*s = data;
	struct usbemu	*emu = s->plug->dev->emu;

	(void)gone;
	g_mutex_lock(&emu->lock);
	session_free(s);
	g_mutex_unlock(&emu->lock);
}

static size_t
string_descriptor(struct usbemu_dev *d, uint8_t index, uint8_t *out,
    size_t max)
{
	const char	*s;
	size_t		 i, n;

	if (max < 4)
		return (0);
	if (index == 0) {
		out[0] = 4;
		out[1] = 3;
		out[2] = 0x09;
		out[3] = 0x04;
		return (4);
	}
	switch (index) {
	case 1:
		s = d->manufacturer;
		break;
	case 2:
		s = d->product;
		break;
	case 3:
		s = d->serial;
		break;
	default:
		return (0);
	}
	n = strlen(s);
	if (2 + 2 * n > 255)
		n = (255 - 2) / 2;
	out[0] = (uint8_t)(2 + 2 * n);
	out[1] = 3;
	for (i = 0; i < n && 2 + 2 * i + 1 < max; i++) {
		out[2 + 2 * i] = (uint8_t)s[i];
		out[3 + 2 * i] = 0;
	}
	return (2 + 2 * i);
}

/* EP0: only the string descriptors; libusb reads the others from sysfs. */
static void
control_urb(struct session *s, struct emu_urb *u)
{
	uint8_t		*b;
	size_t		 len, n;
	uint16_t	 wlength;

	if (u->buf == NULL || u->buf->data_len < 8) {
		urb_finish(s, u, -EPIPE, 0);
		return;
	}
	b = u->buf->data;
	len = u->buf->data_len - 8;
	wlength = (uint16_t)(b[6] | b[7] << 8);
	if (wlength < len)
		len = wlength;
	if (b[0] == 0x80 && b[1] == 0x06 && b[3] == 0x03) {
		if ((n = string_descriptor(s->plug->dev, b[2], b + 8, len)) == 0)
			urb_finish(s, u, -EPIPE, 0);
		else
			urb_finish(s, u, 0, n);
		return;
	}
	if ((b[0] & 0x80) == 0) {
		urb_finish(s, u, 0, 0);
		return;
	}
	urb_finish(s, u, -EPIPE, 0);
}

/*
 * Caller holds the lock. A bulk OUT URB as the device sees it: a length
 * that is a non-zero multiple of the packet size, without the ZLP flag,
 * does not end the transfer (the device waits for more), so its bytes
 * are kept and the next URB continues it. A completed transfer (possibly
 * empty: a lone ZLP) goes to the device in *out.
 */
static void
out_transfer(struct plug *p, UMockdevIoctlData *bufd, unsigned int flags,
    uint8_t **out, size_t *outlen)
{
	size_t	len = bufd != NULL ? bufd->data_len : 0;

	if (p->out_acc == NULL)
		p->out_acc = g_byte_array_new();
	if (len > 0)
		g_byte_array_append(p->out_acc, bufd->data, (guint)len);
	if (len > 0 && len % p->dev->maxpacket == 0 &&
	    !(flags & USBDEVFS_URB_ZERO_PACKET))
		return;
	*outlen = p->out_acc->len;
	*out = g_malloc(*outlen + 1);
	if (*outlen > 0)
		memcpy(*out, p->out_acc->data, *outlen);
	g_byte_array_set_size(p->out_acc, 0);
}

static void
ioctl_submit(struct plug *p, struct session *s, UMockdevIoctlClient *client,
    uint8_t **out, size_t *outlen)
{
	UMockdevIoctlData	*arg, *urbd, *bufd = NULL;
	struct usbdevfs_urb	*hdr;
	struct emu_urb		*u;

	arg = umockdev_ioctl_client_get_arg(client);
	urbd = umockdev_ioctl_data_resolve(arg, 0, sizeof(*hdr), NULL);
	if (urbd == NULL) {
		umockdev_ioctl_client_complete(client, -1, EFAULT);
		return;
	}
	hdr = (struct usbdevfs_urb *)urbd->data;
	if (hdr->buffer_length > 0) {
		bufd = umockdev_ioctl_data_resolve(urbd,
		    offsetof(struct usbdevfs_urb, buffer), hdr->buffer_length,
		    NULL);
		if (bufd == NULL) {
			g_object_unref(urbd);
			umockdev_ioctl_client_complete(client, -1, EFAULT);
			return;
		}
	}
	if (p->gone) {
		if (bufd != NULL)
			g_object_unref(bufd);
		g_object_unref(urbd);
		umockdev_ioctl_client_complete(client, -1, ENODEV);
		return;
	}
	u = g_new0(struct emu_urb, 1);
	u->urb = urbd;
	u->buf = bufd;
	if (hdr->type == USBDEVFS_URB_TYPE_CONTROL) {
		control_urb(s, u);
	} else if (hdr->type == USBDEVFS_URB_TYPE_BULK &&
	    hdr->endpoint == EMU_EP_OUT) {
		out_transfer(p, bufd, hdr->flags, out, outlen);
		p->last_out = s;
		urb_finish(s, u, 0, bufd ? bufd->data_len : 0);
	} else if (hdr->type == USBDEVFS_URB_TYPE_BULK &&
	    hdr->endpoint == EMU_EP_IN && bufd != NULL) {
		g_queue_push_tail(&s->pending_in, u);
		session_pump(s);
	} else {
		urb_free(u);
		umockdev_ioctl_client_complete(client, -1, EINVAL);
		return;
	}
	plug_update_fifo(p);
	umockdev_ioctl_client_complete(client, 0, 0);
}

static void
ioctl_reap(struct plug *p, struct session *s, UMockdevIoctlClient *client)
{
	UMockdevIoctlData	*arg, *slot;
	struct emu_urb		*u;

	if ((u = g_queue_pop_head(&s->done)) == NULL) {
		plug_update_fifo(p);
		umockdev_ioctl_client_complete(client, -1,
		    p->gone ? ENODEV : EAGAIN);
		return;
	}
	arg = umockdev_ioctl_client_get_arg(client);
	slot = umockdev_ioctl_data_resolve(arg, 0, sizeof(void *), NULL);
	if (slot == NULL) {
		urb_free(u);
		umockdev_ioctl_client_complete(client, -1, EFAULT);
		return;
	}
	umockdev_ioctl_data_set_ptr(slot, 0, u->urb);
	plug_update_fifo(p);
	umockdev_ioctl_client_complete(client, 0, 0);
	g_object_unref(slot);
	urb_free(u);
}

static void
ioctl_discard(struct plug *p, struct session *s, UMockdevIoctlClient *client)
{
	UMockdevIoctlData	*arg;
	struct emu_urb		*u;
	gulong			 addr;
	GList			*l;

	arg = umockdev_ioctl_client_get_arg(client);
	addr = *(gulong *)arg->data;
	for (l = s->pending_in.head; l != NULL; l = l->next) {
		u = l->data;
		if (u->urb->client_addr != addr)
			continue;
		g_queue_delete_link(&s->pending_in, l);
		urb_finish(s, u, -ENOENT, 0);
		plug_update_fifo(p);
		umockdev_ioctl_client_complete(client, 0, 0);
		return;
	}
	umockdev_ioctl_client_complete(client, -1, EINVAL);
}

static void
ioctl_caps(UMockdevIoctlClient *client)
{
	UMockdevIoctlData	*arg, *d;

	arg = umockdev_ioctl_client_get_arg(client);
	if ((d = umockdev_ioctl_data_resolve(arg, 0, sizeof(uint32_t),
	    NULL)) == NULL) {
		umockdev_ioctl_client_complete(client, -1, EFAULT);
		return;
	}
	*(uint32_t *)d->data = EMU_CAPS;
	umockdev_ioctl_client_complete(client, 0, 0);
	g_object_unref(d);
}

static gboolean
on_ioctl(UMockdevIoctlBase *base, UMockdevIoctlClient *client, gpointer data)
{
	struct plug	*p = data;
	struct usbemu	*emu = p->dev->emu;
	struct session	*s;
	gulong		 req;
	uint8_t		*out = NULL;
	size_t		 outlen = 0;

	(void)base;
	req = umockdev_ioctl_client_get_request(client);
	g_mutex_lock(&emu->lock);
	s = session_get(p, client);
	switch (req) {
	case USBDEVFS_SUBMITURB:
		ioctl_submit(p, s, client, &out, &outlen);
		break;
	case USBDEVFS_REAPURB:
	case USBDEVFS_REAPURBNDELAY:
		ioctl_reap(p, s, client);
		break;
	case USBDEVFS_DISCARDURB:
		ioctl_discard(p, s, client);
		break;
	case USBDEVFS_GET_CAPABILITIES:
		ioctl_caps(client);
		break;
	case USBDEVFS_CLAIMINTERFACE:
	case USBDEVFS_RELEASEINTERFACE:
	case USBDEVFS_SETINTERFACE:
	case USBDEVFS_SETCONFIGURATION:
	case USBDEVFS_RESETEP:
	case USBDEVFS_RESET:
		umockdev_ioctl_client_complete(client, p->gone ? -1 : 0,
		    p->gone ? ENODEV : 0);
		break;
	case USBDEVFS_CLEAR_HALT:
		p->stall = 0;
		umockdev_ioctl_client_complete(client, p->gone ? -1 : 0,
		    p->gone ? ENODEV : 0);
		break;
	case USBDEVFS_GETDRIVER:
	case USBDEVFS_IOCTL:
		umockdev_ioctl_client_complete(client, -1, ENODATA);
		break;
	default:
		umockdev_ioctl_client_complete(client, -1, ENOTTY);
		break;
	}
	g_mutex_unlock(&emu->lock);
	if (out != NULL) {
		if (p->dev->out_cb != NULL)
			p->dev->out_cb(p->dev, p->dev->out_arg, out, outlen);
		g_free(out);
	}
	return (TRUE);
}

static gpointer
emu_thread(gpointer data)
{
	struct usbemu	*emu = data;

	g_main_context_push_thread_default(emu->ctx);
	g_main_loop_run(emu->loop);
	g_main_context_pop_thread_default(emu->ctx);
	return (NULL);
}

struct usbemu *
usbemu_new(void)
{
	struct usbemu	*emu;

	emu = g_new0(struct usbemu, 1);
	/* First, before anyone asks umockdev_in_mock_environment(). */
	emu->tb = umockdev_testbed_new();
	if (emu->tb == NULL) {
		g_free(emu);
		return (NULL);
	}
	g_mutex_init(&emu->lock);
	g_mutex_init(&emu->tb_lock);
	emu->root = umockdev_testbed_get_root_dir(emu->tb);
	emu->devs = g_ptr_array_new();
	emu->plugs = g_ptr_array_new();
	emu->ctx = g_main_context_new();
	emu->loop = g_main_loop_new(emu->ctx, FALSE);
	emu->thread = g_thread_new("usbemu", emu_thread, emu);
	return (emu);
}

const char *
usbemu_root(struct usbemu *emu)
{
	return (emu->root);
}

static gboolean
task_run(gpointer data)
{
	struct emu_task	*t = data;

	t->fn(t->arg);
	return (G_SOURCE_REMOVE);
}

unsigned int
usbemu_task(struct usbemu *emu, unsigned int delay_ms, usbemu_task_cb fn,
    void *arg)
{
	struct emu_task	*t;
	GSource		*src;
	unsigned int	 id;

	t = g_new0(struct emu_task, 1);
	t->fn = fn;
	t->arg = arg;
	src = g_timeout_source_new(delay_ms);
	g_source_set_callback(src, task_run, t, g_free);
	id = g_source_attach(src, emu->ctx);
	g_source_unref(src);
	return (id);
}

void
usbemu_cancel_task(struct usbemu *emu, unsigned int id)
{
	GSource	*src;

	if (id == 0)
		return;
	if ((src = g_main_context_find_source_by_id(emu->ctx, id)) != NULL)
		g_source_destroy(src);
}

struct usbemu_dev *
usbemu_dev_new(struct usbemu *emu, const struct usbemu_desc *desc,
    usbemu_out_cb cb, void *arg)
{
	struct usbemu_dev	*d;

	d = g_new0(struct usbemu_dev, 1);
	d->emu = emu;
	d->vid = desc->vid;
	d->pid = desc->pid;
	d->manufacturer = g_strdup(desc->manufacturer);
	d->product = g_strdup(desc->product);
	d->serial = g_strdup(desc->serial);
	d->maxpacket = desc->high_speed ? 512 : 64;
	d->out_cb = cb;
	d->out_arg = arg;
	g_mutex_lock(&emu->lock);
	g_ptr_array_add(emu->devs, d);
	g_mutex_unlock(&emu->lock);
	return (d);
}

const char *
usbemu_dev_serial(struct usbemu_dev *d)
{
	return (d->serial);
}

static char *
dev_descriptors(struct usbemu_dev *d)
{
	uint8_t	b[] = {
		/* device: USB 2.0, class per interface, EP0 64 bytes */
		0x12, 0x01, 0x00, 0x02, 0x00, 0x00, 0x00, 0x40,
		(uint8_t)d->vid, (uint8_t)(d->vid >> 8),
		(uint8_t)d->pid, (uint8_t)(d->pid >> 8),
		0x00, 0x01, 0x01, 0x02, 0x03, 0x01,
		/* configuration 1, one interface, bus powered 100 mA */
		0x09, 0x02, 0x20, 0x00, 0x01, 0x01, 0x00, 0x80, 0x32,
		/* interface 0: vendor-specific, two endpoints */
		0x09, 0x04, 0x00, 0x00, 0x02, 0xff, 0x00, 0x00, 0x00,
		/* bulk OUT 0x01 and bulk IN 0x81, 64 or 512-byte packets */
		0x07, 0x05, 0x01, 0x02, (uint8_t)d->maxpacket,
		(uint8_t)(d->maxpacket >> 8), 0x00,
		0x07, 0x05, 0x81, 0x02, (uint8_t)d->maxpacket,
		(uint8_t)(d->maxpacket >> 8), 0x00,
	};
	GString	*hex = g_string_new(NULL);
	size_t	 i;

	for (i = 0; i < sizeof(b); i++)
		g_string_append_printf(hex, "%02x", b[i]);
	return (g_string_free(hex, FALSE));
}

/*
 * Without DEVTYPE: adding a record already sends an "add" uevent, while
 * the node is still umockdev's regular file. libusb ignores a usb device
 * that is not a usb_device, so the device is announced only once its
 * FIFO is in place (usbemu_dev_plug; UMOCKDEV.md trap 8).
 */
static char *
dev_record(struct usbemu_dev *d, const char *syspath, unsigned int devnum)
{
	char	*desc, *rec;

	desc = dev_descriptors(d);
	rec = g_strdup_printf(
	    "P: %s\n"
	    "N: bus/usb/%03u/%03u\n"
	    "E: DEVNAME=/dev/bus/usb/%03u/%03u\n"
	    "E: DRIVER=usb\n"
	    "E: SUBSYSTEM=usb\n"
	    "E: BUSNUM=%03u\n"
	    "E: DEVNUM=%03u\n"
	    "E: PRODUCT=%x/%x/100\n"
	    "A: busnum=%u\\n\n"
	    "A: devnum=%u\\n\n"
	    "A: dev=189:%u\\n\n"
	    "A: speed=%u\\n\n"
	    "A: bConfigurationValue=1\\n\n"
	    "A: idVendor=%04x\\n\n"
	    "A: idProduct=%04x\\n\n"
	    "A: serial=%s\\n\n"
	    "H: descriptors=%s\n",
	    syspath, EMU_BUSNUM, devnum, EMU_BUSNUM, devnum,
	    EMU_BUSNUM, devnum, d->vid, d->pid, EMU_BUSNUM, devnum,
	    (EMU_BUSNUM - 1) * 128 + devnum - 1,
	    d->maxpacket == 512 ? 480 : 12, d->vid, d->pid, d->serial, desc);
	g_free(desc);
	return (rec);
}

/* Replaces the regular file umockdev made with a FIFO (trap 1). */
static int
plug_fifo(struct plug *p, const char *root)
{
	char	path[512];
	char	c = 0;

	snprintf(path, sizeof(path), "%s%s", root, p->devnode);
	if (unlink(path) == -1 && errno != ENOENT)
		return (-1);
	if (mkfifo(path, 0666) == -1)
		return (-1);
	if ((p->fifo = open(path, O_RDWR | O_NONBLOCK | O_CLOEXEC)) == -1)
		return (-1);
	/* One page: a single byte makes the pipe full, so not writable. */
	(void)fcntl(p->fifo, F_SETPIPE_SZ, 4096);
	if (write(p->fifo, &c, 1) != 1)
		return (-1);
	p->fifo_full = 1;
	return (0);
}

int
usbemu_dev_plug(struct usbemu_dev *d)
{
	struct usbemu	*emu = d->emu;
	struct plug	*p;
	unsigned int	 devnum;
	char		*rec;
	GError		*err = NULL;
	int		 ok;

	g_mutex_lock(&emu->lock);
	if (d->plug != NULL) {
		g_mutex_unlock(&emu->lock);
		return (0);
	}
	devnum = EMU_DEVNUM_FIRST + emu->devnum_next++ % EMU_DEVNUM_COUNT;
	p = g_new0(struct plug, 1);
	p->dev = d;
	p->fifo = -1;
	snprintf(p->devnode, sizeof(p->devnode), "/dev/bus/usb/%03u/%03u",
	    EMU_BUSNUM, devnum);
	snprintf(p->syspath, sizeof(p->syspath), "/sys/devices/usb%u/%u-%u",
	    EMU_BUSNUM, EMU_BUSNUM, devnum);
	g_ptr_array_add(emu->plugs, p);
	g_mutex_unlock(&emu->lock);

	rec = dev_record(d, p->syspath + strlen("/sys"), devnum);
	g_mutex_lock(&emu->tb_lock);
	(void)umockdev_testbed_detach_ioctl(emu->tb, p->devnode, NULL);
	/*
	 * Ready before announced: a host that opens the node before its
	 * ioctl handler is attached gets no ioctl socket (the preload then
	 * ends the host's process), and one that opens umockdev's regular
	 * file before the FIFO replaces it polls in a busy loop for as
	 * long as it keeps the device (trap 1). So: handler, record (not
	 * yet a usb_device), FIFO, then the usb_device "add".
	 */
	p->base = umockdev_ioctl_base_new();
	g_signal_connect(p->base, "handle-ioctl", G_CALLBACK(on_ioctl), p);
	ok = umockdev_testbed_attach_ioctl(emu->tb, p->devnode, p->base,
	    &err);
	if (ok)
		ok = umockdev_testbed_add_from_string(emu->tb, rec, &err);
	if (ok)
		ok = plug_fifo(p, emu->root) == 0;
	if (ok) {
		g_mutex_lock(&emu->lock);
		d->plug = p;
		g_mutex_unlock(&emu->lock);
		umockdev_testbed_set_property(emu->tb, p->syspath, "DEVTYPE",
		    "usb_device");
		umockdev_testbed_uevent(emu->tb, p->syspath, "add");
	}
	g_mutex_unlock(&emu->tb_lock);
	g_free(rec);
	if (err != NULL) {
		g_warning("usbemu: plug %s: %s", d->serial, err->message);
		g_error_free(err);
	}
	return (ok ? 0 : -1);
}

void
usbemu_dev_unplug(struct usbemu_dev *d)
{
	struct usbemu	*emu = d->emu;
	struct plug	*p;
	struct session	*s;
	struct emu_urb	*u;
	GList		*l;

	g_mutex_lock(&emu->lock);
	if ((p = d->plug) == NULL) {
		g_mutex_unlock(&emu->lock);
		return;
	}
	d->plug = NULL;
	p->gone = 1;
	for (l = p->sessions; l != NULL; l = l->next) {
		s = l->data;
		while ((u = g_queue_pop_head(&s->pending_in)) != NULL)
			urb_finish(s, u, -ENODEV, 0);
		g_queue_clear_full(&s->msgs, (GDestroyNotify)g_bytes_unref);
	}
	plug_update_fifo(p);
	g_mutex_unlock(&emu->lock);

	g_mutex_lock(&emu->tb_lock);
	umockdev_testbed_uevent(emu->tb, p->syspath, "remove");
	umockdev_testbed_remove_device(emu->tb, p->syspath);
	g_mutex_unlock(&emu->tb_lock);
}

int
usbemu_dev_plugged(struct usbemu_dev *d)
{
	int	plugged;

	g_mutex_lock(&d->emu->lock);
	plugged = d->plug != NULL;
	g_mutex_unlock(&d->emu->lock);
	return (plugged);
}

int
usbemu_dev_send_in(struct usbemu_dev *d, const uint8_t *data, size_t len)
{
	struct session	*s;
	int		 rc = -1;

	g_mutex_lock(&d->emu->lock);
	if (d->plug != NULL && (s = d->plug->last_out) != NULL) {
		g_queue_push_tail(&s->msgs, g_bytes_new(data, len));
		if (len > 0 && len % d->maxpacket == 0)
			g_queue_push_tail(&s->msgs, g_bytes_new(NULL, 0));
		session_pump(s);
		rc = 0;
	}
	g_mutex_unlock(&d->emu->lock);
	return (rc);
}

void
usbemu_dev_stall_in(struct usbemu_dev *d)
{
	struct session	*s;

	g_mutex_lock(&d->emu->lock);
	if (d->plug != NULL) {
		d->plug->stall = 1;
		if ((s = d->plug->last_out) != NULL)
			session_pump(s);
	}
	g_mutex_unlock(&d->emu->lock);
}

size_t
usbemu_dev_in_pending(struct usbemu_dev *d)
{
	GList	*l;
	size_t	 n = 0;

	g_mutex_lock(&d->emu->lock);
	if (d->plug != NULL) {
		for (l = d->plug->sessions; l != NULL; l = l->next)
			n += g_queue_get_length(
			    &((struct session *)l->data)->pending_in);
	}
	g_mutex_unlock(&d->emu->lock);
	return (n);
}

static gboolean
emu_quit(gpointer data)
{
	struct usbemu	*emu = data;

	g_main_loop_quit(emu->loop);
	return (G_SOURCE_REMOVE);
}

/* Waits, bounded, until every client connection has been finalised. */
static void
emu_wait_sessions(struct usbemu *emu)
{
	int	i;

	for (i = 0; i < EMU_CLOSE_WAIT_MS / 5; i++) {
		g_mutex_lock(&emu->lock);
		if (emu->nsessions == 0) {
			g_mutex_unlock(&emu->lock);
			return;
		}
		g_mutex_unlock(&emu->lock);
		g_usleep(5000);
	}
}

void
usbemu_free(struct usbemu *emu)
{
	struct usbemu_dev	*d;
	struct plug		*p;
	struct session		*s;
	GSource			*src;
	guint			 i;

	if (emu == NULL)
		return;
	emu_wait_sessions(emu);
	/* Quit from inside the loop: a quit before run() would be lost. */
	src = g_idle_source_new();
	g_source_set_callback(src, emu_quit, emu, NULL);
	g_source_attach(src, emu->ctx);
	g_source_unref(src);
	g_thread_join(emu->thread);
	g_mutex_lock(&emu->lock);
	for (i = 0; i < emu->plugs->len; i++) {
		p = g_ptr_array_index(emu->plugs, i);
		while (p->sessions != NULL) {
			s = p->sessions->data;
			g_object_weak_unref(G_OBJECT(s->client),
			    session_vanished, s);
			session_free(s);
		}
	}
	g_mutex_unlock(&emu->lock);
	for (i = 0; i < emu->plugs->len; i++) {
		p = g_ptr_array_index(emu->plugs, i);
		if (p->base != NULL) {
			(void)umockdev_testbed_detach_ioctl(emu->tb,
			    p->devnode, NULL);
			g_object_unref(p->base);
		}
		if (p->fifo != -1)
			close(p->fifo);
		if (p->out_acc != NULL)
			g_byte_array_free(p->out_acc, TRUE);
		g_free(p);
	}
	for (i = 0; i < emu->devs->len; i++) {
		d = g_ptr_array_index(emu->devs, i);
		g_free(d->manufacturer);
		g_free(d->product);
		g_free(d->serial);
		g_free(d);
	}
	g_ptr_array_free(emu->plugs, TRUE);
	g_ptr_array_free(emu->devs, TRUE);
	g_main_loop_unref(emu->loop);
	g_main_context_unref(emu->ctx);
	g_object_unref(emu->tb);
	g_free(emu->root);
	g_mutex_clear(&emu->lock);
	g_mutex_clear(&emu->tb_lock);
	g_free(emu);
}
