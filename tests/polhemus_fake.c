/* The emulated PATRIOT (polhemus_fake.h).  Recipe A of ../shared/reference/
 * test-without-hardware.md: a UMockdevIoctlBase answers the usbdevfs ioctls that
 * libusb 1.0.26's Linux backend issues on the device node, and a device model behind
 * them parses the commands the driver sends and produces what a PATRIOT would.
 *
 * The model runs inside REAPURBNDELAY: libusb polls the node (a regular file, always
 * "ready") and reaps continually, so a record is produced whenever 1/60 s has passed,
 * which gives real-time pacing without a thread of its own.  The handler runs on
 * umockdev's worker thread and the test's controls on the main thread, so one mutex
 * guards everything. */
#define _POSIX_C_SOURCE 200809L /* clock_gettime, unlink */

#include "polhemus_fake.h"

#include "devices/polhemus.h"

#include <errno.h>
#include <linux/usbdevice_fs.h>
#include <math.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h> /* _IOR & co., which the USBDEVFS_ request numbers expand to */
#include <time.h>
#include <umockdev.h>
#include <unistd.h>

enum {
	MAX_DEVICES = 8,
	MAX_URBS = 64,
	LOG_MAX = 64,
	OUT_MAX = 64 * 1024,
	INJECT_MAX = 4096,
	FRAME_NS = 1000000000 / 60, /* the PATRIOT's 60 Hz */
	/* A model that fell behind (the test process was descheduled) skips frames
	 * rather than bursting a backlog: a real tracker does not catch up either. */
	MAX_CATCH_UP = 4,
};

typedef struct fake_urb {
	UMockdevIoctlData *urb; /* the resolved struct usbdevfs_urb */
	UMockdevIoctlData *buf; /* its buffer */
} fake_urb;

typedef struct fake_dev {
	pol_fake *f;
	int devnum;
	uint16_t product;
	char syspath[256];
	char devnode[64];
	UMockdevIoctlBase *handler;
	bool gone;

	fake_urb pending[MAX_URBS]; /* IN transfers waiting for data */
	int pending_count;
	fake_urb done[MAX_URBS]; /* completed, waiting to be reaped */
	int done_count;

	/* The device model. */
	bool binary, streaming;
	char cmd[64];
	size_t cmd_len;
	char log[LOG_MAX][32];
	int log_count;
	uint8_t out[OUT_MAX]; /* bytes for the host, in order */
	size_t out_len;
	uint32_t frame;
	uint32_t frames_sent;
	long long next_frame_ns;
} fake_dev;

struct pol_fake {
	pthread_mutex_t lock;
	UMockdevTestbed *tb;
	fake_dev *devices[MAX_DEVICES];
	int device_count;
	fake_dev *current;
	bool stylus, mute;
	uint8_t inject[INJECT_MAX];
	size_t inject_len;
	dev_sample *script; /* pol_fake_play's poses */
	int script_count, script_next;
	uint64_t to_host, from_host;
};

static long long now_ns(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (long long)ts.tv_sec * 1000000000LL + ts.tv_nsec;
}

/* ---- the device model ---------------------------------------------------------------- */

void pol_fake_position(uint32_t frame, float out[3])
{
	/* A slow circle 10 cm across, 30 cm above the source: distinct for every frame. */
	double a = (double)frame * 0.05;
	out[0] = (float)(0.05 * cos(a));
	out[1] = (float)(0.05 * sin(a));
	out[2] = -0.30f;
}

static void emit(fake_dev *d, const void *bytes, size_t count)
{
	if (d->out_len + count > sizeof d->out)
		return; /* the host stopped reading: a real tracker drops too */
	memcpy(d->out + d->out_len, bytes, count);
	d->out_len += count;
}

static void encode_frame(fake_dev *d, uint8_t cmd, uint8_t rec[POL_RECORD_BYTES])
{
	pol_fake *f = d->f;
	dev_sample s = {0};
	if (f->script_count > 0) {
		int i = f->script_next < f->script_count ? f->script_next : f->script_count - 1;
		s = f->script[i];
	} else {
		pol_fake_position(d->frame, s.position);
		s.orientation[3] = 1.0f;
	}
	s.sensor = 1;
	s.frame = d->frame;
	s.buttons |= f->stylus ? 1u : 0u;
	pol_encode(&s, rec);
	rec[3] = cmd;
}

/* One complete command from the host: what a PATRIOT does with it. */
static void command(fake_dev *d, const char *cmd)
{
	if (d->log_count < LOG_MAX) {
		snprintf(d->log[d->log_count], sizeof d->log[0], "%s", cmd);
		d->log_count++;
	}
	if (strcmp(cmd, "\r") == 0) {
		/* A lone CR is an invalid command: a short ASCII complaint, whatever the
		 * output format, which is what makes it a liveness probe. */
		static const char reply[] = "\r\n00I Invalid Command\r\n";
		emit(d, reply, sizeof reply - 1);
	} else if (strcmp(cmd, "P") == 0 || strcmp(cmd, "p") == 0) {
		d->streaming = false;
		if (d->binary) {
			uint8_t rec[POL_RECORD_BYTES];
			encode_frame(d, 'P', rec);
			emit(d, rec, sizeof rec);
		} else {
			static const char line[] = "01   5.000   0.000 -30.000 0.000 0.000 0.000\r\n";
			emit(d, line, sizeof line - 1);
		}
	} else if (strcmp(cmd, "C\r") == 0 || strcmp(cmd, "c\r") == 0) {
		d->streaming = true;
		d->next_frame_ns = now_ns();
	} else if (strcmp(cmd, "F1\r") == 0) {
		d->binary = true;
	} else if (strcmp(cmd, "F0\r") == 0) {
		d->binary = false;
	}
	/* U1, H*, O*, @B0: accepted silently, as the tracker does; the test checks the
	 * log, and the records always have the layout of O*,2,7,9,10,1 in centimetres. */
}

static void host_bytes(fake_dev *d, const uint8_t *bytes, size_t count)
{
	for (size_t i = 0; i < count; i++) {
		char c = (char)bytes[i];
		/* P needs no CR: alone at the start of a command it is complete. */
		if (d->cmd_len == 0 && (c == 'P' || c == 'p')) {
			char p[2] = {c, 0};
			command(d, p);
			continue;
		}
		if (d->cmd_len + 1 < sizeof d->cmd)
			d->cmd[d->cmd_len++] = c;
		if (c == '\r') {
			d->cmd[d->cmd_len] = 0;
			command(d, d->cmd);
			d->cmd_len = 0;
		}
	}
}

/* Produces the records due by now. */
static void tick(fake_dev *d)
{
	if (!d->streaming || !d->binary)
		return;
	long long now = now_ns();
	if (now < d->next_frame_ns)
		return;
	long long due = (now - d->next_frame_ns) / FRAME_NS + 1;
	if (due > MAX_CATCH_UP)
		due = MAX_CATCH_UP;
	d->next_frame_ns += ((now - d->next_frame_ns) / FRAME_NS + 1) * FRAME_NS;
	if (d->f->mute)
		return;
	for (long long i = 0; i < due; i++) {
		if (d->f->inject_len > 0) {
			emit(d, d->f->inject, d->f->inject_len);
			d->f->inject_len = 0;
		}
		uint8_t rec[POL_RECORD_BYTES];
		encode_frame(d, 'C', rec);
		emit(d, rec, sizeof rec);
		d->frame++;
		d->frames_sent++;
		/* Only streamed records advance the script: a "P" reply is not a step of the
		 * hand. */
		if (d->f->script_next < d->f->script_count)
			d->f->script_next++;
	}
}

/* ---- usbdevfs ------------------------------------------------------------------------ */

static void complete_urb(fake_dev *d, fake_urb u, int status, int actual)
{
	struct usbdevfs_urb *urb = (struct usbdevfs_urb *)u.urb->data;
	urb->status = status;
	urb->actual_length = actual;
	if (d->done_count < MAX_URBS)
		d->done[d->done_count++] = u;
}

static void fill_pending(fake_dev *d)
{
	while (d->pending_count > 0 && d->out_len > 0) {
		fake_urb u = d->pending[0];
		memmove(d->pending, d->pending + 1, (size_t)(d->pending_count - 1) * sizeof d->pending[0]);
		d->pending_count--;
		struct usbdevfs_urb *urb = (struct usbdevfs_urb *)u.urb->data;
		size_t n = d->out_len < (size_t)urb->buffer_length ? d->out_len : (size_t)urb->buffer_length;
		memcpy(u.buf->data, d->out, n);
		d->f->to_host += n;
		memmove(d->out, d->out + n, d->out_len - n);
		d->out_len -= n;
		complete_urb(d, u, 0, (int)n);
	}
}

static void release_urb(fake_urb u)
{
	g_object_unref(u.buf);
	g_object_unref(u.urb);
}

static gboolean on_ioctl(UMockdevIoctlBase *handler, UMockdevIoctlClient *client, gpointer user)
{
	(void)handler;
	fake_dev *d = user;
	pol_fake *f = d->f;
	gulong request = umockdev_ioctl_client_get_request(client);
	UMockdevIoctlData *arg = umockdev_ioctl_client_get_arg(client);
	GError *err = NULL;

	pthread_mutex_lock(&f->lock);
	if (d->gone && request != USBDEVFS_REAPURBNDELAY && request != USBDEVFS_REAPURB &&
	    request != USBDEVFS_DISCARDURB) {
		/* What usbfs answers once the device has left the bus. */
		umockdev_ioctl_client_complete(client, -1, ENODEV);
		pthread_mutex_unlock(&f->lock);
		return TRUE;
	}
	switch (request) {
	case USBDEVFS_GET_CAPABILITIES: {
		UMockdevIoctlData *caps = umockdev_ioctl_data_resolve(arg, 0, sizeof(uint32_t), &err);
		if (caps) {
			uint32_t v = USBDEVFS_CAP_ZERO_PACKET | USBDEVFS_CAP_BULK_CONTINUATION |
				     USBDEVFS_CAP_NO_PACKET_SIZE_LIM;
			memcpy(caps->data, &v, sizeof v);
			g_object_unref(caps);
			umockdev_ioctl_client_complete(client, 0, 0);
		} else {
			umockdev_ioctl_client_complete(client, -1, EFAULT);
		}
		break;
	}
	case USBDEVFS_CLAIMINTERFACE:
	case USBDEVFS_RELEASEINTERFACE:
	case USBDEVFS_SETCONFIGURATION:
	case USBDEVFS_SETINTERFACE:
	case USBDEVFS_CLEAR_HALT:
	case USBDEVFS_RESET:
	case USBDEVFS_RESETEP:
	case USBDEVFS_DISCONNECT_CLAIM: /* claim, no kernel driver to push aside */
		umockdev_ioctl_client_complete(client, 0, 0);
		break;
	case USBDEVFS_GETDRIVER: /* no kernel driver bound */
	case USBDEVFS_IOCTL:     /* reattaching one: there is none */
		umockdev_ioctl_client_complete(client, -1, ENODATA);
		break;
	case USBDEVFS_CONNECTINFO: {
		UMockdevIoctlData *ci = umockdev_ioctl_data_resolve(arg, 0, sizeof(struct usbdevfs_connectinfo), &err);
		if (ci) {
			struct usbdevfs_connectinfo *c = (struct usbdevfs_connectinfo *)ci->data;
			c->devnum = (unsigned)d->devnum;
			c->slow = 0;
			g_object_unref(ci);
			umockdev_ioctl_client_complete(client, 0, 0);
		} else {
			umockdev_ioctl_client_complete(client, -1, EFAULT);
		}
		break;
	}
	case USBDEVFS_SUBMITURB: {
		fake_urb u = {0};
		u.urb = umockdev_ioctl_data_resolve(arg, 0, sizeof(struct usbdevfs_urb), &err);
		struct usbdevfs_urb *urb = u.urb ? (struct usbdevfs_urb *)u.urb->data : NULL;
		if (urb)
			u.buf = umockdev_ioctl_data_resolve(u.urb, offsetof(struct usbdevfs_urb, buffer),
							    (gsize)urb->buffer_length, &err);
		if (!u.buf || urb->type != USBDEVFS_URB_TYPE_BULK ||
		    (urb->endpoint != 0x02 && urb->endpoint != 0x82) ||
		    d->pending_count == MAX_URBS || d->done_count == MAX_URBS) {
			if (u.buf)
				g_object_unref(u.buf);
			if (u.urb)
				g_object_unref(u.urb);
			umockdev_ioctl_client_complete(client, -1, EINVAL);
			break;
		}
		if (urb->endpoint & 0x80) {
			d->pending[d->pending_count++] = u;
		} else {
			host_bytes(d, u.buf->data, (size_t)urb->buffer_length);
			f->from_host += (uint64_t)urb->buffer_length;
			complete_urb(d, u, 0, urb->buffer_length);
		}
		umockdev_ioctl_client_complete(client, 0, 0);
		break;
	}
	case USBDEVFS_REAPURB:
	case USBDEVFS_REAPURBNDELAY: {
		if (!d->gone) {
			tick(d);
			fill_pending(d);
		}
		if (d->done_count == 0) {
			umockdev_ioctl_client_complete(client, -1, d->gone ? ENODEV : EAGAIN);
			break;
		}
		fake_urb u = d->done[0];
		memmove(d->done, d->done + 1, (size_t)(d->done_count - 1) * sizeof d->done[0]);
		d->done_count--;
		/* The argument is a struct usbdevfs_urb **: resolve it before setting it. */
		UMockdevIoctlData *pp = umockdev_ioctl_data_resolve(arg, 0, sizeof(void *), &err);
		if (pp) {
			umockdev_ioctl_data_set_ptr(pp, 0, u.urb);
			g_object_unref(pp);
			umockdev_ioctl_client_complete(client, 0, 0);
		} else {
			umockdev_ioctl_client_complete(client, -1, EFAULT);
		}
		release_urb(u);
		break;
	}
	case USBDEVFS_DISCARDURB: {
		/* The argument is the client's URB pointer: cancel that one.  This is what
		 * makes libusb's timeouts work. */
		int found = -1;
		for (int i = 0; i < d->pending_count; i++)
			if (arg->data_len >= (int)sizeof(gulong) &&
			    d->pending[i].urb->client_addr == *(gulong *)arg->data)
				found = i;
		if (found < 0) {
			umockdev_ioctl_client_complete(client, -1, EINVAL);
			break;
		}
		fake_urb u = d->pending[found];
		memmove(d->pending + found, d->pending + found + 1,
			(size_t)(d->pending_count - found - 1) * sizeof d->pending[0]);
		d->pending_count--;
		complete_urb(d, u, -ENOENT, 0);
		umockdev_ioctl_client_complete(client, 0, 0);
		break;
	}
	default:
		fprintf(stderr, "polhemus_fake: unhandled ioctl 0x%lx\n", (unsigned long)request);
		umockdev_ioctl_client_complete(client, -1, ENOTTY);
		break;
	}
	pthread_mutex_unlock(&f->lock);
	if (err) {
		fprintf(stderr, "polhemus_fake: %s\n", err->message);
		g_error_free(err);
	}
	return TRUE;
}

/* ---- the testbed --------------------------------------------------------------------- */

pol_fake *pol_fake_new(void)
{
	pol_fake *f = calloc(1, sizeof *f);
	if (!f)
		return NULL;
	pthread_mutex_init(&f->lock, NULL);
	f->tb = umockdev_testbed_new();
	if (!f->tb) {
		fprintf(stderr, "polhemus_fake: cannot create a umockdev testbed\n");
		free(f);
		return NULL;
	}
	return f;
}

bool pol_fake_plug(pol_fake *f, int devnum, uint16_t product)
{
	if (f->device_count == MAX_DEVICES)
		return false;
	/* Device, configuration 1, interface 0 (vendor class), bulk OUT 0x02 and IN 0x82,
	 * 64-byte packets: 50 bytes, as a full-speed PATRIOT. */
	uint8_t desc[50] = {
		18, 1, 0x00, 0x02, 0, 0, 0, 64, 0x44, 0x0f, (uint8_t)product, (uint8_t)(product >> 8),
		0x00, 0x01, 0, 0, 0, 1,
		9, 2, 32, 0, 1, 1, 0, 0x80, 50,
		9, 4, 0, 0, 2, 0xff, 0, 0, 0,
		7, 5, 0x02, 2, 64, 0, 0,
		7, 5, 0x82, 2, 64, 0, 0,
	};
	fake_dev *d = calloc(1, sizeof *d);
	if (!d)
		return false;
	d->f = f;
	d->devnum = devnum;
	d->product = product;
	snprintf(d->devnode, sizeof d->devnode, "/dev/bus/usb/001/%03d", devnum);
	GError *err = NULL;
	bool is_model = product == 0xef12;
	if (is_model) {
		/* Attached before the device appears, so that nobody can open the node
		 * without the handler (the race libusb's own test notes). */
		d->handler = umockdev_ioctl_base_new();
		g_signal_connect(d->handler, "handle-ioctl", G_CALLBACK(on_ioctl), d);
		if (!umockdev_testbed_attach_ioctl(f->tb, d->devnode, d->handler, &err)) {
			fprintf(stderr, "polhemus_fake: attach_ioctl: %s\n", err ? err->message : "?");
			g_clear_error(&err);
			g_object_unref(d->handler);
			free(d);
			return false;
		}
	}
	/* One description, so that the sysfs attributes (descriptors included) and the
	 * node all exist before the "add" uevent: libusb reads them as soon as it hears
	 * of the device, and one added piecemeal can be missed for good. */
	char hex[2 * sizeof desc + 1];
	for (size_t i = 0; i < sizeof desc; i++)
		snprintf(hex + 2 * i, 3, "%02X", desc[i]); /* umockdev reads upper case */
	char text[2048];
	snprintf(text, sizeof text,
		 "P: /devices/1-1\n"
		 "N: bus/usb/001/%03d=%s\n" /* reading a usbfs node gives the descriptors */
		 "E: SUBSYSTEM=usb\n"
		 "E: DEVTYPE=usb_device\n"
		 "E: DEVNAME=%s\n"
		 "E: BUSNUM=001\n"
		 "E: DEVNUM=%03d\n"
		 "E: PRODUCT=f44/%x/100\n"
		 "A: busnum=1\\n\n"
		 "A: devnum=%d\\n\n"
		 "A: speed=12\\n\n"
		 "A: bConfigurationValue=1\\n\n"
		 "A: idVendor=0f44\\n\n"
		 "A: idProduct=%04x\\n\n"
		 "H: descriptors=%s\n",
		 devnum, hex, d->devnode, devnum, (unsigned)product, devnum, (unsigned)product, hex);
	if (!umockdev_testbed_add_from_string(f->tb, text, &err)) {
		fprintf(stderr, "polhemus_fake: add_from_string: %s\n", err ? err->message : "?");
		g_clear_error(&err);
		return false;
	}
	snprintf(d->syspath, sizeof d->syspath, "/sys/devices/1-1");

	pthread_mutex_lock(&f->lock);
	f->devices[f->device_count++] = d;
	f->current = d;
	pthread_mutex_unlock(&f->lock);
	return true;
}

void pol_fake_unplug(pol_fake *f)
{
	pthread_mutex_lock(&f->lock);
	fake_dev *d = f->current;
	if (!d || d->gone) {
		pthread_mutex_unlock(&f->lock);
		return;
	}
	d->gone = true;
	/* The kernel ends every URB in flight with ENODEV when a device leaves: this is
	 * what libusb turns into LIBUSB_ERROR_NO_DEVICE for the transfer. */
	while (d->pending_count > 0) {
		complete_urb(d, d->pending[0], -ENODEV, 0);
		memmove(d->pending, d->pending + 1, (size_t)(d->pending_count - 1) * sizeof d->pending[0]);
		d->pending_count--;
	}
	pthread_mutex_unlock(&f->lock);

	/* Then the device leaves sysfs and /dev, announced as udev would. */
	umockdev_testbed_uevent(f->tb, d->syspath, "remove");
	umockdev_testbed_remove_device(f->tb, d->syspath);
	char *root = umockdev_testbed_get_root_dir(f->tb);
	char path[512];
	snprintf(path, sizeof path, "%s%s", root, d->devnode);
	unlink(path);
	g_free(root);
}

void pol_fake_free(pol_fake *f)
{
	if (!f)
		return;
	for (int i = 0; i < f->device_count; i++) {
		fake_dev *d = f->devices[i];
		if (d->handler) {
			umockdev_testbed_detach_ioctl(f->tb, d->devnode, NULL);
			g_object_unref(d->handler);
		}
		for (int k = 0; k < d->pending_count; k++)
			release_urb(d->pending[k]);
		for (int k = 0; k < d->done_count; k++)
			release_urb(d->done[k]);
		free(d);
	}
	g_object_unref(f->tb);
	free(f->script);
	pthread_mutex_destroy(&f->lock);
	free(f);
}

void pol_fake_set_stylus(pol_fake *f, bool pressed)
{
	pthread_mutex_lock(&f->lock);
	f->stylus = pressed;
	pthread_mutex_unlock(&f->lock);
}

void pol_fake_play(pol_fake *f, const dev_sample *poses, int count)
{
	dev_sample *copy = NULL;
	if (poses && count > 0) {
		copy = malloc(sizeof *copy * (size_t)count);
		if (!copy) {
			fprintf(stderr, "polhemus_fake: out of memory for %d poses\n", count);
			count = 0;
		} else {
			memcpy(copy, poses, sizeof *copy * (size_t)count);
		}
	}
	pthread_mutex_lock(&f->lock);
	dev_sample *old = f->script;
	f->script = copy;
	f->script_count = copy ? count : 0;
	f->script_next = 0;
	pthread_mutex_unlock(&f->lock);
	free(old);
}

int pol_fake_played(pol_fake *f)
{
	pthread_mutex_lock(&f->lock);
	int n = f->script_next;
	pthread_mutex_unlock(&f->lock);
	return n;
}

void pol_fake_set_mute(pol_fake *f, bool mute)
{
	pthread_mutex_lock(&f->lock);
	f->mute = mute;
	pthread_mutex_unlock(&f->lock);
}

void pol_fake_inject(pol_fake *f, const uint8_t *bytes, size_t count)
{
	pthread_mutex_lock(&f->lock);
	if (f->inject_len + count <= sizeof f->inject) {
		memcpy(f->inject + f->inject_len, bytes, count);
		f->inject_len += count;
	}
	pthread_mutex_unlock(&f->lock);
}

void pol_fake_inject_error_record(pol_fake *f, uint8_t error, float marker_m)
{
	pthread_mutex_lock(&f->lock);
	fake_dev *d = f->current;
	if (d && f->inject_len + POL_RECORD_BYTES <= sizeof f->inject) {
		dev_sample s = {0};
		s.sensor = 1;
		s.position[0] = s.position[1] = s.position[2] = marker_m;
		s.orientation[3] = 1.0f;
		/* A frame number of its own, as the tracker counts every frame it reports. */
		s.frame = d->frame++;
		pol_encode(&s, f->inject + f->inject_len);
		f->inject[f->inject_len + 4] = error;
		f->inject_len += POL_RECORD_BYTES;
	}
	pthread_mutex_unlock(&f->lock);
}

int pol_fake_commands(pol_fake *f, char (*out)[32], int max)
{
	pthread_mutex_lock(&f->lock);
	int n = f->current ? f->current->log_count : 0;
	for (int i = 0; i < n && i < max; i++)
		memcpy(out[i], f->current->log[i], sizeof out[i]);
	pthread_mutex_unlock(&f->lock);
	return n;
}

uint64_t pol_fake_bytes_to_host(pol_fake *f)
{
	pthread_mutex_lock(&f->lock);
	uint64_t n = f->to_host;
	pthread_mutex_unlock(&f->lock);
	return n;
}

uint64_t pol_fake_bytes_from_host(pol_fake *f)
{
	pthread_mutex_lock(&f->lock);
	uint64_t n = f->from_host;
	pthread_mutex_unlock(&f->lock);
	return n;
}

uint32_t pol_fake_frames(pol_fake *f)
{
	pthread_mutex_lock(&f->lock);
	uint32_t n = f->current ? f->current->frames_sent : 0;
	pthread_mutex_unlock(&f->lock);
	return n;
}

bool pol_fake_streaming(pol_fake *f)
{
	pthread_mutex_lock(&f->lock);
	bool s = f->current && f->current->streaming && !f->current->gone;
	pthread_mutex_unlock(&f->lock);
	return s;
}

int pol_fake_handler_count(pol_fake *f)
{
	pthread_mutex_lock(&f->lock);
	int n = 0;
	for (int i = 0; i < f->device_count; i++)
		n += f->devices[i]->handler != NULL;
	pthread_mutex_unlock(&f->lock);
	return n;
}
