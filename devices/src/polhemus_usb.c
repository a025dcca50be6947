/* The Polhemus PATRIOT / LIBERTY driver over libusb-1.0 (facts: ../shared/reference/
 * polhemus-usb.md; user-facing notes: docs/devices.md, "Polhemus over USB").
 *
 * One thread of the driver's own owns every libusb call after pol_usb_open: it reads the
 * bulk IN endpoint, stamps each transfer with the host monotonic clock, parses it and
 * queues the samples; dev_poll only takes from that queue under a mutex, so a stalled or
 * vanished tracker can never block the caller longer than its timeout.  The same thread
 * notices an unplug (LIBUSB_ERROR_NO_DEVICE), looks for the tracker again every 200 ms
 * and re-runs the initialisation when it returns.
 *
 * Every byte each way (the commands, the initialisation's replies, the stream) is queued
 * for the recorder from open on, and written by the thread that polls (which owns the
 * recorder); what is still queued at close is written before the recording closes. */
#define _POSIX_C_SOURCE 200809L /* pthread_condattr_setclock, clock_gettime */

#include "device_internal.h"
#include "devices/polhemus.h"

#include <libusb.h>
#include <pthread.h>
#include <stdarg.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

enum {
	POL_VENDOR = 0x0f44,
	POL_INTERFACE = 0,
	POL_CONFIGURATION = 1,
	/* Short, so that the thread sees a close request quickly; a silence longer than
	 * QUIET_LIMIT_MS is what the display reports as a read timeout. */
	READ_TIMEOUT_MS = 100,
	QUIET_LIMIT_MS = 500,
	WRITE_TIMEOUT_MS = 500,
	/* Real units need 50-100 ms per command (reference section 5); the flush after a
	 * command ends once the tracker has said nothing for FLUSH_QUIET_MS. */
	FLUSH_QUIET_MS = 60,
	FLUSH_MAX_MS = 1000,
	PROBE_TRIES = 3,
	RECONNECT_PERIOD_MS = 200,
	/* Consecutive unexplained USB errors after which the link is treated as lost and
	 * rebuilt, as after an unplug. */
	ERROR_LIMIT = 5,
	IN_BUFFER_BYTES = 4096,
	SAMPLE_QUEUE = 512,
	/* Raw traffic waiting for the recorder (dev_record_bytes runs on the dev_poll
	 * thread, which owns the recorder). */
	RAW_QUEUE_BYTES = 256 * 1024,
};

typedef struct pol_model {
	uint16_t product;
	uint8_t ep_out, ep_in;
	bool high_speed; /* takes "@B0\r" (no USB output buffering) */
	const char *name;
} pol_model;

/* Post-firmware ids and endpoints (reference section 1). */
static const pol_model models[] = {
	{0xef12, 0x02, 0x82, false, "PATRIOT"},
	{0xef20, 0x04, 0x88, true, "PATRIOT HS"},
	{0xff12, 0x02, 0x82, false, "LIBERTY"},
	{0xff20, 0x04, 0x88, true, "LIBERTY HS"},
};

/* The EZ-USB loader ids a tracker shows until fxload has given it its firmware. */
static const struct {
	uint16_t product;
	const char *name;
	const char *firmware;
} loaders[] = {
	{0xef11, "PATRIOT", "PatriotUSB.hex (fxload -t fx)"},
	{0xef21, "PATRIOT HS", "PatriotUSB2.hex (fxload -t fx2)"},
	{0xff11, "LIBERTY", "LbtyUsb.hex (fxload -t fx)"},
	{0xff21, "LIBERTY HS", "LbtyUsbHS.hex (fxload -t fx2)"},
};

typedef struct pol_usb {
	dev_source base; /* first: device.c hands this pointer back */

	/* Set at open, read-only afterwards. */
	libusb_context *ctx;
	bool want_addr; /* opened as polhemus:BUS-ADDR */
	unsigned want_bus, want_addr_num;
	pthread_t thread;
	bool thread_started;
	atomic_bool stop;

	/* Owned by the reader thread (and by pol_usb_open before the thread starts). */
	libusb_device_handle *handle;
	const pol_model *model;
	uint8_t bus, addr;
	uint8_t ports[8]; /* the physical port path: a replugged device gets a new address */
	int port_count;
	pol_parser parser;
	int64_t last_data_ns;
	int errors_in_row;
	bool waiting_reported;
	uint16_t loader_seen; /* a loader id turned up where the tracker should be */

	/* Shared between the thread and dev_poll. */
	pthread_mutex_t lock;
	pthread_cond_t ready;
	dev_sample queue[SAMPLE_QUEUE];
	int queue_head, queue_count;
	dev_state state;
	char describe[sizeof(((dev_source *)0)->describe)];
	dev_health health; /* the parser's counters and reconnects; samples counted in poll */
	/* Keep raw traffic for the recorder: from open until the first poll (a recording
	 * started before it gets the start-up), then while a recording runs. */
	bool want_raw;
	uint8_t *raw;      /* [int64 t_ns][uint32 count][uint8 dev_rec_dir][bytes] ... */
	size_t raw_used;
	uint64_t raw_lost; /* bytes the recorder never got because poll fell behind */
} pol_usb;

static const pol_model *find_model(uint16_t vendor, uint16_t product)
{
	if (vendor != POL_VENDOR)
		return NULL;
	for (size_t i = 0; i < sizeof models / sizeof models[0]; i++)
		if (models[i].product == product)
			return &models[i];
	return NULL;
}

static int find_loader(uint16_t vendor, uint16_t product)
{
	if (vendor != POL_VENDOR)
		return -1;
	for (int i = 0; i < (int)(sizeof loaders / sizeof loaders[0]); i++)
		if (loaders[i].product == product)
			return i;
	return -1;
}

/* ---- state shared with dev_poll ------------------------------------------------------ */

static void publish(pol_usb *s, dev_state state, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));

/* The thread's view of what is happening, for dev_poll to copy into the source. */
static void publish(pol_usb *s, dev_state state, const char *fmt, ...)
{
	char text[sizeof s->describe];
	int k = snprintf(text, sizeof text, "Polhemus %s at %u-%u: ", s->model ? s->model->name : "tracker",
			 (unsigned)s->bus, (unsigned)s->addr);
	if (k < 0 || (size_t)k >= sizeof text)
		k = 0;
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(text + k, sizeof text - (size_t)k, fmt, ap);
	va_end(ap);
	pthread_mutex_lock(&s->lock);
	s->state = state;
	memcpy(s->describe, text, sizeof text);
	pthread_cond_broadcast(&s->ready);
	pthread_mutex_unlock(&s->lock);
}

enum { RAW_HEAD = sizeof(int64_t) + sizeof(uint32_t) + 1 };

/* Queues one transfer for the recorder.  Under the lock. */
static void queue_raw(pol_usb *s, int64_t t_ns, dev_rec_dir dir, const uint8_t *bytes, size_t count)
{
	if (!s->want_raw || count == 0)
		return;
	size_t need = RAW_HEAD + count;
	if (s->raw_used + need > RAW_QUEUE_BYTES) {
		s->raw_lost += count;
		return;
	}
	uint32_t c = (uint32_t)count;
	uint8_t d = (uint8_t)dir;
	uint8_t *at = s->raw + s->raw_used;
	memcpy(at, &t_ns, sizeof t_ns);
	memcpy(at + sizeof t_ns, &c, sizeof c);
	memcpy(at + sizeof t_ns + sizeof c, &d, 1);
	memcpy(at + RAW_HEAD, bytes, count);
	s->raw_used += need;
}

static void record_raw(pol_usb *s, int64_t t_ns, dev_rec_dir dir, const uint8_t *bytes, size_t count)
{
	pthread_mutex_lock(&s->lock);
	queue_raw(s, t_ns, dir, bytes, count);
	pthread_mutex_unlock(&s->lock);
}

/* Hands one streaming transfer to the recorder queue and the parser. */
static void deliver(pol_usb *s, int64_t t_ns, const uint8_t *bytes, size_t count)
{
	dev_sample parsed[POL_MAX_SAMPLES(IN_BUFFER_BYTES)];
	int n = pol_parse(&s->parser, bytes, count, t_ns, parsed, (int)(sizeof parsed / sizeof parsed[0]));

	pthread_mutex_lock(&s->lock);
	queue_raw(s, t_ns, DEV_REC_IN, bytes, count);
	for (int i = 0; i < n; i++) {
		if (s->queue_count == SAMPLE_QUEUE) {
			/* Nobody is polling: the newest pose matters most to a pointer. */
			s->queue_head = (s->queue_head + 1) % SAMPLE_QUEUE;
			s->queue_count--;
		}
		s->queue[(s->queue_head + s->queue_count) % SAMPLE_QUEUE] = parsed[i];
		s->queue_count++;
	}
	uint64_t reconnects = s->health.reconnects;
	uint64_t samples = s->health.samples;
	s->health = s->parser.health;
	s->health.reconnects = reconnects;
	s->health.samples = samples;
	if (n > 0)
		pthread_cond_broadcast(&s->ready);
	pthread_mutex_unlock(&s->lock);
}

/* ---- USB ----------------------------------------------------------------------------- */

static int send_bytes(pol_usb *s, const char *bytes)
{
	int len = (int)strlen(bytes), done = 0;
	int64_t t = dev_now_ns();
	int r = libusb_bulk_transfer(s->handle, s->model->ep_out, (unsigned char *)bytes, len, &done,
				     WRITE_TIMEOUT_MS);
	/* what reached the device, stamped when it was sent */
	record_raw(s, t, DEV_REC_OUT, (const uint8_t *)bytes, done > 0 ? (size_t)done : 0);
	if (r == 0 && done != len)
		r = LIBUSB_ERROR_IO;
	return r;
}

/* Reads and discards replies until the tracker has been quiet for FLUSH_QUIET_MS.
 * Returns a libusb error if the device failed, else 0, with the byte count in *got. */
static int flush_replies(pol_usb *s, size_t *got)
{
	uint8_t buf[IN_BUFFER_BYTES];
	int64_t deadline = dev_now_ns() + (int64_t)FLUSH_MAX_MS * 1000000;
	*got = 0;
	while (dev_now_ns() < deadline) {
		int n = 0;
		int r = libusb_bulk_transfer(s->handle, s->model->ep_in, buf, sizeof buf, &n, FLUSH_QUIET_MS);
		*got += (size_t)(n > 0 ? n : 0);
		if (n > 0)
			record_raw(s, dev_now_ns(), DEV_REC_IN_REPLY, buf, (size_t)n);
		if (r == LIBUSB_ERROR_TIMEOUT && n <= 0)
			return 0;
		if (r == LIBUSB_ERROR_OVERFLOW || r == LIBUSB_ERROR_TIMEOUT)
			continue;
		if (r != 0)
			return r;
	}
	return 0;
}

static void drop_handle(pol_usb *s)
{
	if (!s->handle)
		return;
	/* Both fail harmlessly (LIBUSB_ERROR_NO_DEVICE) when the tracker has gone. */
	libusb_release_interface(s->handle, POL_INTERFACE);
	libusb_close(s->handle);
	s->handle = NULL;
}

/* The initialisation (reference section 5): probe, stop, configure, stream.  The
 * commands come from the parser (pol_init_commands) so that they always match the
 * record layout it expects.  Returns 0 or a libusb error, with a reason in `why`. */
static int run_init(pol_usb *s, char *why, size_t why_size)
{
	size_t got = 0;
	int r = 0;
	for (int i = 0; i < pol_init_command_count; i++) {
		const char *cmd = pol_init_commands[i];
		bool probe = strcmp(cmd, "\r") == 0;
		bool stream = strcmp(cmd, "C\r") == 0;
		if (stream && s->model->high_speed) {
			/* HS units otherwise hold records back to fill USB packets. */
			if ((r = send_bytes(s, "@B0\r")) != 0 || (r = flush_replies(s, &got)) != 0)
				goto usb_failed;
		}
		/* A lone CR earns a short error reply from a live tracker: the liveness probe. */
		for (int attempt = 0; attempt < (probe ? PROBE_TRIES : 1); attempt++) {
			if ((r = send_bytes(s, cmd)) != 0)
				goto usb_failed;
			if (stream)
				break; /* what follows is data: the reader takes it from here */
			if ((r = flush_replies(s, &got)) != 0)
				goto usb_failed;
			if (!probe || got > 0)
				break;
		}
		if (probe && got == 0) {
			snprintf(why, why_size,
				 "no reply to the liveness probe (CR) after %d tries: is the tracker "
				 "switched on?", PROBE_TRIES);
			return LIBUSB_ERROR_TIMEOUT;
		}
	}
	return 0;
usb_failed:
	snprintf(why, why_size, "initialisation failed: %s", libusb_strerror((enum libusb_error)r));
	return r;
}

/* Opens, claims and initialises `dev`; on failure leaves no handle and explains. */
static int connect_device(pol_usb *s, libusb_device *dev, const pol_model *model, char *why,
			  size_t why_size)
{
	s->model = model;
	s->bus = libusb_get_bus_number(dev);
	s->addr = libusb_get_device_address(dev);
	int r = libusb_open(dev, &s->handle);
	if (r != 0) {
		s->handle = NULL;
		if (r == LIBUSB_ERROR_ACCESS)
			snprintf(why, why_size,
				 "permission denied opening /dev/bus/usb/%03u/%03u: install "
				 "90-Polhemus_trkr.rules (MODE=\"0666\"), see docs/devices.md",
				 (unsigned)s->bus, (unsigned)s->addr);
		else
			snprintf(why, why_size, "cannot open: %s", libusb_strerror((enum libusb_error)r));
		return r;
	}
	int ports = libusb_get_port_numbers(dev, s->ports, (int)sizeof s->ports);
	s->port_count = ports > 0 ? ports : 0;
	/* Harmless where no kernel driver is bound, which is the usual case. */
	libusb_set_auto_detach_kernel_driver(s->handle, 1);

	int config = 0;
	if (libusb_get_configuration(s->handle, &config) != 0 || config != POL_CONFIGURATION) {
		r = libusb_set_configuration(s->handle, POL_CONFIGURATION);
		/* BUSY: another interface is claimed, so the configuration is already set. */
		if (r != 0 && r != LIBUSB_ERROR_BUSY) {
			snprintf(why, why_size, "cannot set configuration 1: %s",
				 libusb_strerror((enum libusb_error)r));
			goto failed;
		}
	}
	r = libusb_claim_interface(s->handle, POL_INTERFACE);
	if (r != 0) {
		snprintf(why, why_size, "cannot claim interface 0: %s%s",
			 libusb_strerror((enum libusb_error)r),
			 r == LIBUSB_ERROR_BUSY ? " (another program has the tracker)" : "");
		goto failed;
	}
	if ((r = run_init(s, why, why_size)) != 0)
		goto failed;

	pol_parser_restart(&s->parser);
	s->last_data_ns = dev_now_ns();
	s->errors_in_row = 0;
	s->waiting_reported = false;
	return 0;
failed:
	drop_handle(s);
	return r;
}

/* Whether `dev` is the tracker this source wants: any supported one, or the one named
 * at open, or after an unplug the one on the same bus and port (its address changes). */
static bool wanted(const pol_usb *s, libusb_device *dev, bool reconnecting)
{
	uint8_t bus = libusb_get_bus_number(dev);
	if (reconnecting && s->want_addr) {
		if (bus != s->bus)
			return false;
		if (s->port_count == 0)
			return true;
		uint8_t ports[8];
		int n = libusb_get_port_numbers(dev, ports, (int)sizeof ports);
		return n == s->port_count && memcmp(ports, s->ports, (size_t)n) == 0;
	}
	if (s->want_addr && !reconnecting)
		return bus == s->want_bus && libusb_get_device_address(dev) == s->want_addr_num;
	return true;
}

/* Looks for the tracker and connects.  0 on success; otherwise a message in `why`. */
static int find_and_connect(pol_usb *s, bool reconnecting, char *why, size_t why_size)
{
	libusb_device **list = NULL;
	ssize_t count = libusb_get_device_list(s->ctx, &list);
	if (count < 0) {
		snprintf(why, why_size, "cannot list USB devices: %s",
			 libusb_strerror((enum libusb_error)count));
		return (int)count;
	}
	int r = LIBUSB_ERROR_NOT_FOUND;
	bool tried = false;
	int loader = -1;
	uint8_t loader_bus = 0, loader_addr = 0;
	for (ssize_t i = 0; i < count; i++) {
		struct libusb_device_descriptor d;
		if (libusb_get_device_descriptor(list[i], &d) != 0 || !wanted(s, list[i], reconnecting))
			continue;
		const pol_model *model = find_model(d.idVendor, d.idProduct);
		if (!model) {
			int l = find_loader(d.idVendor, d.idProduct);
			if (l >= 0 && loader < 0) {
				loader = l;
				loader_bus = libusb_get_bus_number(list[i]);
				loader_addr = libusb_get_device_address(list[i]);
			}
			continue;
		}
		tried = true;
		r = connect_device(s, list[i], model, why, why_size);
		if (r == 0)
			break;
	}
	libusb_free_device_list(list, 1);
	s->loader_seen = loader >= 0 && !tried ? loaders[loader].product : 0;
	if (r == 0 || tried)
		return r;
	if (loader >= 0)
		snprintf(why, why_size,
			 "found a Polhemus %s at %u-%u still showing its firmware-loader id "
			 "0f44:%04x: its firmware (%s) was not loaded; install the "
			 "90-Polhemus_trkr.rules udev rule and fxload, then replug the tracker "
			 "(docs/devices.md, \"Polhemus over USB\")",
			 loaders[loader].name, (unsigned)loader_bus, (unsigned)loader_addr,
			 (unsigned)loaders[loader].product, loaders[loader].firmware);
	else if (s->want_addr && !reconnecting)
		snprintf(why, why_size,
			 "no Polhemus tracker at USB %u-%u (want vendor 0f44, product ef12 "
			 "PATRIOT, ef20 PATRIOT HS, ff12 LIBERTY or ff20 LIBERTY HS)",
			 s->want_bus, s->want_addr_num);
	else
		snprintf(why, why_size,
			 "no Polhemus tracker found on USB (vendor 0f44, product ef12 PATRIOT, "
			 "ef20 PATRIOT HS, ff12 LIBERTY or ff20 LIBERTY HS)");
	return r;
}

static void lost(pol_usb *s, const char *what)
{
	drop_handle(s);
	publish(s, DEV_DISCONNECTED, "%s; waiting for it to return", what);
}

static void *reader(void *arg)
{
	pol_usb *s = arg;
	uint8_t buf[IN_BUFFER_BYTES];
	int64_t next_try = 0;
	while (!atomic_load(&s->stop)) {
		if (!s->handle) {
			int64_t now = dev_now_ns();
			if (now < next_try) {
				/* Short naps so that close is never kept waiting. */
				int64_t until = now + 20 * 1000000LL;
				dev_sleep_until_ns(until < next_try ? until : next_try);
				continue;
			}
			next_try = now + (int64_t)RECONNECT_PERIOD_MS * 1000000;
			char why[160] = "";
			int r = find_and_connect(s, true, why, sizeof why);
			if (r == 0) {
				pthread_mutex_lock(&s->lock);
				s->health.reconnects++;
				uint64_t reconnects = s->health.reconnects;
				pthread_mutex_unlock(&s->lock);
				publish(s, DEV_WAITING, "reconnected (%llu); waiting for data",
					(unsigned long long)reconnects);
			} else if (s->loader_seen) {
				/* Power-cycled: it came back without firmware, so say so. */
				publish(s, DEV_DISCONNECTED,
					"back without its firmware (0f44:%04x): install the udev rule "
					"and fxload (docs/devices.md)", (unsigned)s->loader_seen);
			} else if (r != LIBUSB_ERROR_NOT_FOUND && r != LIBUSB_ERROR_NO_DEVICE) {
				/* It is there but will not come up (permissions, no probe reply):
				 * more useful than "waiting". */
				publish(s, DEV_DISCONNECTED, "%s; retrying", why);
			}
			continue;
		}

		int n = 0;
		int r = libusb_bulk_transfer(s->handle, s->model->ep_in, buf, sizeof buf, &n, READ_TIMEOUT_MS);
		int64_t t = dev_now_ns();
		if (n > 0) {
			deliver(s, t, buf, (size_t)n);
			s->last_data_ns = t;
			s->errors_in_row = 0;
			if (s->waiting_reported || s->state != DEV_STREAMING) {
				s->waiting_reported = false;
				publish(s, DEV_STREAMING, "streaming");
			}
		}
		if (r == 0 || (r == LIBUSB_ERROR_TIMEOUT && n > 0))
			continue;
		if (r == LIBUSB_ERROR_TIMEOUT) {
			if (!s->waiting_reported && t - s->last_data_ns > (int64_t)QUIET_LIMIT_MS * 1000000) {
				s->waiting_reported = true;
				publish(s, DEV_WAITING,
					"no data for %d ms (read timeout); is the source unit on and the "
					"sensor plugged in?", QUIET_LIMIT_MS);
			}
		} else if (r == LIBUSB_ERROR_NO_DEVICE) {
			lost(s, "unplugged");
			next_try = t + (int64_t)RECONNECT_PERIOD_MS * 1000000;
		} else if (r == LIBUSB_ERROR_PIPE) {
			libusb_clear_halt(s->handle, s->model->ep_in);
		} else if (++s->errors_in_row >= ERROR_LIMIT) {
			char what[96];
			snprintf(what, sizeof what, "USB errors (%s); reconnecting",
				 libusb_strerror((enum libusb_error)r));
			lost(s, what);
		}
	}
	if (s->handle) {
		/* Leave the tracker quiet for the next program. */
		send_bytes(s, "P");
		drop_handle(s);
	}
	return NULL;
}

/* ---- dev_source ops ------------------------------------------------------------------ */

/* Takes the queued raw traffic and writes it to the recorder outside the lock, so the
 * reader is never held up by the disk.  On the thread that owns the recorder. */
static void write_raw(pol_usb *s)
{
	dev_source *source = &s->base;
	pthread_mutex_lock(&s->lock);
	/* Nobody records: the start-up kept for a recording that did not come is dropped. */
	s->want_raw = source->rec_file != NULL;
	if (!s->want_raw)
		s->raw_lost = 0; /* nothing was lost to a recording that does not exist */
	uint8_t *raw = NULL;
	size_t raw_used = 0;
	if (s->raw_used > 0 && s->want_raw) {
		raw = malloc(s->raw_used);
		if (raw) {
			memcpy(raw, s->raw, s->raw_used);
			raw_used = s->raw_used;
		} else {
			s->raw_lost += s->raw_used;
		}
	}
	s->raw_used = 0;
	pthread_mutex_unlock(&s->lock);

	for (size_t at = 0; at < raw_used;) {
		int64_t t;
		uint32_t c;
		uint8_t d;
		memcpy(&t, raw + at, sizeof t);
		memcpy(&c, raw + at + sizeof t, sizeof c);
		memcpy(&d, raw + at + sizeof t + sizeof c, 1);
		dev_record_chunk(source, t, (dev_rec_dir)d, raw + at + RAW_HEAD, c);
		at += RAW_HEAD + c;
	}
	free(raw);
}

static int pol_usb_poll(dev_source *source, dev_sample *out, int max, int timeout_ms)
{
	pol_usb *s = (pol_usb *)source;
	struct timespec deadline;
	clock_gettime(CLOCK_MONOTONIC, &deadline);
	int64_t ns = (int64_t)deadline.tv_nsec + (int64_t)(timeout_ms > 0 ? timeout_ms : 0) * 1000000;
	deadline.tv_sec += (time_t)(ns / 1000000000);
	deadline.tv_nsec = (long)(ns % 1000000000);

	pthread_mutex_lock(&s->lock);
	while (s->queue_count == 0 && timeout_ms > 0 && !atomic_load(&s->stop)) {
		if (pthread_cond_timedwait(&s->ready, &s->lock, &deadline) != 0)
			break;
	}
	int n = 0;
	while (n < max && s->queue_count > 0) {
		out[n++] = s->queue[s->queue_head];
		s->queue_head = (s->queue_head + 1) % SAMPLE_QUEUE;
		s->queue_count--;
	}
	s->health.samples += (uint64_t)n;
	source->state = s->state;
	source->health = s->health;
	memcpy(source->describe, s->describe, sizeof source->describe);
	pthread_mutex_unlock(&s->lock);

	write_raw(s);
	pthread_mutex_lock(&s->lock);
	uint64_t raw_lost = s->raw_lost;
	pthread_mutex_unlock(&s->lock);
	if (raw_lost > 0 && source->rec_file) {
		char text[sizeof source->describe];
		memcpy(text, source->describe, sizeof text);
		dev_set_describe(source, "%s; the recording lost %llu bytes", text,
				 (unsigned long long)raw_lost);
	}
	/* A tracker that has gone keeps being looked for: never "ended". */
	return n;
}

/* The reader's last transfers and the "P" that quiets the tracker reach the recording. */
static void pol_usb_finish(dev_source *source)
{
	pol_usb *s = (pol_usb *)source;
	atomic_store(&s->stop, true);
	if (s->thread_started) {
		pthread_join(s->thread, NULL);
		s->thread_started = false;
	} else if (s->handle) {
		send_bytes(s, "P");
		drop_handle(s);
	}
	write_raw(s);
}

static void pol_usb_close(dev_source *source)
{
	pol_usb *s = (pol_usb *)source;
	atomic_store(&s->stop, true);
	if (s->thread_started)
		pthread_join(s->thread, NULL);
	else if (s->handle) {
		send_bytes(s, "P");
		drop_handle(s);
	}
	if (s->ctx)
		libusb_exit(s->ctx);
	pthread_cond_destroy(&s->ready);
	pthread_mutex_destroy(&s->lock);
	free(s->raw);
	free(s);
}

static const dev_ops pol_usb_ops = {
	.kind = "polhemus",
	.poll = pol_usb_poll,
	.finish = pol_usb_finish,
	.close = pol_usb_close,
};

dev_source *pol_usb_open(const char *bus_addr, char *error, int error_size)
{
	pol_usb *s = calloc(1, sizeof *s);
	if (!s) {
		dev_set_error(error, error_size, "polhemus: out of memory");
		return NULL;
	}
	dev_source_init(&s->base, &pol_usb_ops, DEV_REC_POLHEMUS);
	atomic_init(&s->stop, false);
	pthread_mutex_init(&s->lock, NULL);
	pthread_condattr_t attr;
	pthread_condattr_init(&attr);
	/* dev_poll's deadline is on the monotonic clock, immune to wall-clock steps. */
	pthread_condattr_setclock(&attr, CLOCK_MONOTONIC);
	pthread_cond_init(&s->ready, &attr);
	pthread_condattr_destroy(&attr);
	pol_parser_init(&s->parser);
	s->state = DEV_WAITING;
	s->want_raw = true;

	if (bus_addr) {
		char tail;
		if (sscanf(bus_addr, "%u-%u%c", &s->want_bus, &s->want_addr_num, &tail) != 2 ||
		    s->want_bus > 255 || s->want_addr_num > 255) {
			dev_set_error(error, error_size,
				  "polhemus: bad USB address \"%s\": expected BUS-ADDR as lsusb shows "
				  "them, e.g. polhemus:1-2", bus_addr);
			pol_usb_close(&s->base);
			return NULL;
		}
		s->want_addr = true;
	}
	s->raw = malloc(RAW_QUEUE_BYTES);
	int r = s->raw ? libusb_init(&s->ctx) : LIBUSB_ERROR_NO_MEM;
	if (r != 0) {
		s->ctx = NULL;
		dev_set_error(error, error_size, "polhemus: cannot start libusb: %s",
			  libusb_strerror((enum libusb_error)r));
		pol_usb_close(&s->base);
		return NULL;
	}
	char why[DEV_ERROR_MAX] = "";
	if (find_and_connect(s, false, why, sizeof why) != 0) {
		dev_set_error(error, error_size, "polhemus: %s", why);
		pol_usb_close(&s->base);
		return NULL;
	}
	publish(s, DEV_WAITING, "initialised; waiting for data");
	s->base.state = s->state;
	memcpy(s->base.describe, s->describe, sizeof s->base.describe);
	if (pthread_create(&s->thread, NULL, reader, s) != 0) {
		dev_set_error(error, error_size, "polhemus: cannot start the reader thread");
		pol_usb_close(&s->base);
		return NULL;
	}
	s->thread_started = true;
	return &s->base;
}
