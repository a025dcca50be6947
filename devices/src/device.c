/* The device interface: dispatch by specification, the shared getters and the recorder
 * ("tela-rec 1" and "tela-rec 2", docs/devices.md).  The sources themselves live in synthetic.c, replay.c
 * and polhemus_usb.c behind the dev_ops vtable (device_internal.h). */
#define _POSIX_C_SOURCE 200809L

#include "device_internal.h"

#include <errno.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

void dev_set_error(char *error, int error_size, const char *fmt, ...)
{
	if (!error || error_size <= 0)
		return;
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(error, (size_t)error_size, fmt, ap);
	va_end(ap);
}

int64_t dev_now_ns(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (int64_t)ts.tv_sec * 1000000000 + ts.tv_nsec;
}

void dev_sleep_until_ns(int64_t deadline_ns)
{
	if (deadline_ns <= dev_now_ns())
		return;
	struct timespec ts = {.tv_sec = (time_t)(deadline_ns / 1000000000), .tv_nsec = (long)(deadline_ns % 1000000000)};
	/* Absolute time, so a signal that interrupts the sleep does not stretch it. */
	while (clock_nanosleep(CLOCK_MONOTONIC, TIMER_ABSTIME, &ts, NULL) == EINTR) {
	}
}

void dev_source_init(dev_source *source, const dev_ops *ops, dev_rec_kind rec_kind)
{
	memset(source, 0, sizeof *source);
	source->ops = ops;
	source->state = DEV_WAITING;
	source->rec_kind = rec_kind;
}

void dev_format(char *dst, size_t size, const char *fmt, ...)
{
	if (!dst || size == 0)
		return;
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(dst, size, fmt, ap);
	va_end(ap);
}

void dev_set_describe(dev_source *source, const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(source->describe, sizeof source->describe, fmt, ap);
	va_end(ap);
}

/* dev_describe takes a const source, so the line it returns is composed whenever either
 * half may have changed: after open, poll and record. */
static void compose_line(dev_source *s)
{
	if (s->rec_error[0])
		dev_format(s->line, sizeof s->line, "%s (%s)", s->describe, s->rec_error);
	else
		dev_format(s->line, sizeof s->line, "%s", s->describe);
}

static bool has_prefix(const char *s, const char *prefix)
{
	return strncmp(s, prefix, strlen(prefix)) == 0;
}

dev_source *dev_open(const char *spec, char *error, int error_size)
{
	dev_set_error(error, error_size, "%s", "");
	if (!spec || !spec[0]) {
		dev_set_error(error, error_size, "no device given (polhemus[:BUS-ADDR], synthetic:still|circle|grab|orbit[+SCRIPT], replay:FILE[@SPEED], push:NAME)");
		return NULL;
	}
	dev_source *s = NULL;
	if (strcmp(spec, "polhemus") == 0)
		s = pol_usb_open(NULL, error, error_size);
	else if (has_prefix(spec, "polhemus:"))
		s = pol_usb_open(spec[strlen("polhemus:")] ? spec + strlen("polhemus:") : NULL, error, error_size);
	else if (has_prefix(spec, "synthetic:"))
		s = dev_synthetic_open(spec + strlen("synthetic:"), error, error_size);
	else if (has_prefix(spec, "replay:"))
		s = dev_replay_open(spec + strlen("replay:"), error, error_size);
	else if (has_prefix(spec, "push:"))
		s = dev_push_open_spec(spec + strlen("push:"), error, error_size);
	else {
		dev_set_error(error, error_size,
		          "unknown device '%s' (expected polhemus[:BUS-ADDR], synthetic:still|circle|grab|orbit[+SCRIPT], replay:FILE[@SPEED] or push:NAME)",
		          spec);
		return NULL;
	}
	if (s)
		compose_line(s);
	else if (error && error_size > 0 && !error[0])
		dev_set_error(error, error_size, "cannot open device '%s'", spec);
	return s;
}

/* Flushes and closes the recording; a failure at this point can only be remembered in
 * rec_error (the caller may still read it before the source goes away). */
static void stop_recording(dev_source *s)
{
	if (!s->rec_file)
		return;
	bool ok = fflush(s->rec_file) == 0;
	int err = errno;
	if (fclose(s->rec_file) != 0 && ok) {
		ok = false;
		err = errno;
	}
	s->rec_file = NULL;
	if (!ok)
		dev_format(s->rec_error, sizeof s->rec_error, "recording to %s failed: %s", s->rec_path, strerror(err));
}

void dev_close(dev_source **source)
{
	if (!source || !*source)
		return;
	dev_source *s = *source;
	if (s->ops->finish)
		s->ops->finish(s);
	stop_recording(s);
	s->ops->close(s);
	*source = NULL;
}

int dev_poll(dev_source *source, dev_sample *out, int max, int timeout_ms)
{
	if (!source)
		return -1;
	if (!out || max <= 0)
		return (source->state == DEV_ENDED || source->state == DEV_FAILED) ? -1 : 0;
	if (timeout_ms < 0)
		timeout_ms = 0;
	int n = source->ops->poll(source, out, max, timeout_ms);
	compose_line(source);
	return n;
}

dev_state dev_get_state(const dev_source *source)
{
	return source ? source->state : DEV_FAILED;
}

const char *dev_describe(const dev_source *source)
{
	return source ? source->line : "no device";
}

dev_health dev_get_health(const dev_source *source)
{
	dev_health none = {0};
	return source ? source->health : none;
}

dev_frame dev_get_frame(const dev_source *source)
{
	return source ? source->frame : DEV_FRAME_DEVICE;
}

static const char *rec_kind_name(dev_rec_kind kind)
{
	switch (kind) {
	case DEV_REC_SYNTHETIC: return "synthetic-samples";
	case DEV_REC_WORLD: return "world-samples";
	case DEV_REC_POLHEMUS: break;
	}
	return "polhemus-binary";
}

bool dev_record(dev_source *source, const char *path, char *error, int error_size)
{
	if (!source || !path || !path[0]) {
		dev_set_error(error, error_size, "no recording file given");
		return false;
	}
	if (source->rec_file) {
		dev_set_error(error, error_size, "already recording to %s", source->rec_path);
		return false;
	}
	FILE *f = fopen(path, "wb");
	if (!f) {
		dev_set_error(error, error_size, "cannot record to %s: %s", path, strerror(errno));
		return false;
	}
	/* Only a driver's raw traffic has two directions to tell apart; the sample kinds keep
	 * the version that every reader knows. */
	int version = source->rec_kind == DEV_REC_POLHEMUS ? 2 : 1;
	if (fprintf(f, "tela-rec %d %s\n", version, rec_kind_name(source->rec_kind)) < 0) {
		dev_set_error(error, error_size, "cannot record to %s: %s", path, strerror(errno));
		fclose(f);
		return false;
	}
	source->rec_file = f;
	source->rec_version = version;
	dev_format(source->rec_path, sizeof source->rec_path, "%s", path);
	source->rec_error[0] = '\0';
	source->rec_bytes = 0;
	compose_line(source);
	return true;
}

const char *dev_record_error(const dev_source *source)
{
	return source ? source->rec_error : "";
}

void dev_record_bytes(dev_source *source, int64_t t_ns, const uint8_t *bytes, size_t count)
{
	dev_record_chunk(source, t_ns, DEV_REC_IN, bytes, count);
}

void dev_record_chunk(dev_source *source, int64_t t_ns, dev_rec_dir dir, const uint8_t *bytes, size_t count)
{
	if (!source->rec_file || count == 0)
		return;
	/* A version 1 file has no way to say that bytes went to the device or were
	 * discarded: it gets only what the parser met. */
	if (source->rec_version < 2 && dir != DEV_REC_IN)
		return;
	/* Little-endian whatever the host, so a recording plays back anywhere. */
	uint8_t head[13];
	size_t head_size = source->rec_version >= 2 ? 13 : 12;
	head[12] = (uint8_t)dir;
	uint64_t t = (uint64_t)t_ns;
	for (int i = 0; i < 8; i++)
		head[i] = (uint8_t)(t >> (8 * i));
	uint32_t c = (uint32_t)count;
	for (int i = 0; i < 4; i++)
		head[8 + i] = (uint8_t)(c >> (8 * i));
	if (count > UINT32_MAX || fwrite(head, 1, head_size, source->rec_file) != head_size ||
	    fwrite(bytes, 1, count, source->rec_file) != count) {
		int err = count > UINT32_MAX ? EFBIG : errno;
		fclose(source->rec_file);
		source->rec_file = NULL;
		/* The source goes on: losing the recording must not freeze the pointer. */
		dev_format(source->rec_error, sizeof source->rec_error, "recording to %s stopped: %s", source->rec_path,
		         strerror(err));
		compose_line(source);
		return;
	}
	source->rec_bytes += head_size + count;
}
