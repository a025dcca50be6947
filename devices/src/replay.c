/* Replay of a "tela-rec 1" or "tela-rec 2" recording (docs/devices.md):
 * "replay:FILE[@SPEED]".  The whole file is read and checked at open, so a bad file fails
 * there with the byte offset of the problem instead of freezing the pointer half-way; the
 * streamed chunks then go through the same pol_parse as live traffic, and the commands
 * and initialisation replies of a version 2 file are passed over as the driver passed
 * over them. */
#define _POSIX_C_SOURCE 200809L

#include "device_internal.h"
#include "devices/polhemus.h"

#include <errno.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>

/* Recordings larger than this are refused rather than read into memory (an hour of a
 * 16-station LIBERTY at 240 Hz is about 650 MB). */
#define REPLAY_MAX_BYTES ((long)1 << 30)

typedef struct rep_chunk {
	int64_t t_ns;
	size_t offset; /* of the bytes in `data` */
	uint32_t count;
	dev_rec_dir dir;
} rep_chunk;

typedef struct rep_source {
	dev_source base;
	char path[256];
	double speed;
	uint8_t *data;
	rep_chunk *chunks;
	size_t chunk_count;
	size_t next_chunk;
	bool started;
	int64_t base_ns; /* host time the first chunk is replayed at */
	pol_parser parser;
	/* Samples of the current chunk that did not fit the caller's buffer. */
	dev_sample *queue;
	int queue_cap, queue_len, queue_pos;
} rep_source;

static uint64_t get_le(const uint8_t *b, int n)
{
	uint64_t v = 0;
	for (int i = n - 1; i >= 0; i--)
		v = (v << 8) | b[i];
	return v;
}

/* Host time at which chunk c is due, and the time its samples carry: the recorded
 * spacing, scaled by SPEED; at SPEED 0 everything is due now but the samples keep the
 * recorded spacing, so that what consumes them sees the motion as it was. */
static int64_t chunk_time(const rep_source *s, size_t c, bool for_delivery)
{
	int64_t rel = s->chunks[c].t_ns - s->chunks[0].t_ns;
	if (s->speed > 0.0)
		return s->base_ns + (int64_t)((double)rel / s->speed);
	return for_delivery ? s->base_ns : s->base_ns + rel;
}

static void describe(rep_source *s)
{
	if (s->base.state == DEV_ENDED)
		dev_set_describe(&s->base, "replay %s ended (%zu chunks)", s->path, s->chunk_count);
	else if (s->speed > 0.0)
		dev_set_describe(&s->base, "replay %s at %gx: chunk %zu of %zu", s->path, s->speed, s->next_chunk,
		                 s->chunk_count);
	else
		dev_set_describe(&s->base, "replay %s as fast as possible: chunk %zu of %zu", s->path, s->next_chunk,
		                 s->chunk_count);
}

/* Parses the next chunk into the queue. */
static void feed_chunk(rep_source *s)
{
	const rep_chunk *c = &s->chunks[s->next_chunk];
	int64_t t = chunk_time(s, s->next_chunk, false);
	s->next_chunk++;
	int need = POL_MAX_SAMPLES(c->count);
	if (need > s->queue_cap) {
		dev_sample *q = realloc(s->queue, (size_t)need * sizeof *q);
		if (!q) {
			s->base.state = DEV_FAILED;
			dev_set_describe(&s->base, "replay %s: out of memory", s->path);
			return;
		}
		s->queue = q;
		s->queue_cap = need;
	}
	/* Re-recording a replay keeps it replayable: same bytes, the times they were
	 * replayed at. */
	dev_record_chunk(&s->base, t, c->dir, s->data + c->offset, c->count);
	s->queue_pos = 0;
	if (c->dir == DEV_REC_IN) {
		s->queue_len = pol_parse(&s->parser, s->data + c->offset, c->count, t, s->queue, s->queue_cap);
	} else {
		/* The driver never parsed these.  A command means it was initialising the
		 * tracker, after which it restarted its parser: so does the replay. */
		s->queue_len = 0;
		if (c->dir == DEV_REC_OUT)
			pol_parser_restart(&s->parser);
	}
	s->base.health = s->parser.health;
}

static int rep_poll(dev_source *base, dev_sample *out, int max, int timeout_ms)
{
	rep_source *s = (rep_source *)base;
	if (base->state == DEV_FAILED || base->state == DEV_ENDED)
		return -1;
	int64_t deadline = dev_now_ns() + (int64_t)timeout_ms * 1000000;
	if (!s->started) {
		/* From the first poll, not from open: the set-up between the two must not
		 * turn into a burst of overdue samples. */
		s->started = true;
		s->base_ns = dev_now_ns();
	}
	int n = 0;
	for (;;) {
		while (n < max && s->queue_pos < s->queue_len)
			out[n++] = s->queue[s->queue_pos++];
		if (n == max)
			break;
		if (s->next_chunk == s->chunk_count) {
			if (n == 0) {
				base->state = DEV_ENDED;
				describe(s);
				return -1;
			}
			break;
		}
		int64_t due = chunk_time(s, s->next_chunk, true);
		if (due > dev_now_ns()) {
			/* Hand over what is there rather than hold it back for later chunks. */
			if (n > 0)
				break;
			/* Still DEV_STREAMING: the gap is the recording's own. */
			if (due > deadline) {
				dev_sleep_until_ns(deadline);
				describe(s);
				return 0;
			}
			dev_sleep_until_ns(due);
		}
		feed_chunk(s);
		if (base->state == DEV_FAILED)
			return -1;
	}
	base->state = DEV_STREAMING;
	describe(s);
	return n;
}

static void rep_close(dev_source *base)
{
	rep_source *s = (rep_source *)base;
	free(s->data);
	free(s->chunks);
	free(s->queue);
	free(s);
}

static const dev_ops rep_ops = {.kind = "replay", .poll = rep_poll, .close = rep_close};

static dev_source *fail(rep_source *s, char *error, int error_size, const char *fmt, ...)
#if defined(__GNUC__)
	__attribute__((format(printf, 4, 5)))
#endif
	;

static dev_source *fail(rep_source *s, char *error, int error_size, const char *fmt, ...)
{
	if (error && error_size > 0) {
		va_list ap;
		va_start(ap, fmt);
		vsnprintf(error, (size_t)error_size, fmt, ap);
		va_end(ap);
	}
	if (s)
		rep_close(&s->base);
	return NULL;
}

/* Reads FILE whole. */
static uint8_t *read_all(const char *path, size_t *size, char *why, size_t why_size)
{
	FILE *f = fopen(path, "rb");
	if (!f) {
		snprintf(why, why_size, "%s", strerror(errno));
		return NULL;
	}
	uint8_t *data = NULL;
	size_t len = 0, cap = 0;
	for (;;) {
		if (len == cap) {
			if (cap >= (size_t)REPLAY_MAX_BYTES) {
				snprintf(why, why_size, "larger than %ld bytes", REPLAY_MAX_BYTES);
				break;
			}
			cap = cap ? cap * 2 : 65536;
			uint8_t *d = realloc(data, cap);
			if (!d) {
				snprintf(why, why_size, "out of memory");
				break;
			}
			data = d;
		}
		size_t got = fread(data + len, 1, cap - len, f);
		len += got;
		if (got == 0) {
			if (ferror(f)) {
				snprintf(why, why_size, "%s", strerror(errno));
				break;
			}
			fclose(f);
			*size = len;
			return data;
		}
	}
	fclose(f);
	free(data);
	return NULL;
}

dev_source *dev_replay_open(const char *args, char *error, int error_size)
{
	rep_source *s = calloc(1, sizeof *s);
	if (!s)
		return fail(NULL, error, error_size, "replay: out of memory");
	dev_source_init(&s->base, &rep_ops, DEV_REC_POLHEMUS);
	pol_parser_init(&s->parser);

	/* FILE may itself contain '@': only a trailing @NUMBER is a speed. */
	size_t len = strlen(args);
	s->speed = 1.0;
	const char *at = strrchr(args, '@');
	if (at) {
		char *end;
		errno = 0;
		double v = strtod(at + 1, &end);
		if (end != at + 1 && *end == '\0') {
			if (!(v >= 0.0 && v <= 1e6))
				return fail(s, error, error_size, "replay:%s: SPEED must be 0 (as fast as possible) or a positive factor", args);
			s->speed = v;
			len = (size_t)(at - args);
		}
	}
	if (len == 0)
		return fail(s, error, error_size, "replay: no file given (replay:FILE[@SPEED])");
	if (len >= sizeof s->path)
		return fail(s, error, error_size, "replay: file name too long");
	memcpy(s->path, args, len);
	s->path[len] = '\0';

	char why[128];
	size_t size = 0;
	s->data = read_all(s->path, &size, why, sizeof why);
	if (!s->data)
		return fail(s, error, error_size, "replay: cannot read %s: %s", s->path, why);

	/* The header line: "tela-rec VERSION KIND\n". */
	static const char magic[] = "tela-rec ";
	const uint8_t *nl = memchr(s->data, '\n', size < 64 ? size : 64);
	if (size < sizeof magic - 1 || memcmp(s->data, magic, sizeof magic - 1) != 0 || !nl)
		return fail(s, error, error_size, "replay: %s: not a tela recording (byte offset 0: expected a \"tela-rec 1 ...\" header line)",
		            s->path);
	size_t header = (size_t)(nl - s->data) + 1;
	char line[64];
	memcpy(line, s->data, header - 1);
	line[header - 1] = '\0';
	int version = strncmp(line, "tela-rec 1 ", 11) == 0 ? 1 : strncmp(line, "tela-rec 2 ", 11) == 0 ? 2 : 0;
	if (version == 0)
		return fail(s, error, error_size, "replay: %s: unsupported recording version (byte offset 9: \"%s\"; this tela reads versions 1 and 2)",
		            s->path, line);
	if (strcmp(line + 11, "polhemus-binary") == 0)
		s->base.rec_kind = DEV_REC_POLHEMUS;
	else if (strcmp(line + 11, "synthetic-samples") == 0)
		s->base.rec_kind = DEV_REC_SYNTHETIC;
	else if (strcmp(line + 11, "world-samples") == 0) {
		s->base.rec_kind = DEV_REC_WORLD;
		s->base.frame = DEV_FRAME_WORLD;
	} else
		return fail(s, error, error_size, "replay: %s: unknown recording kind \"%s\" at byte offset 11 (expected polhemus-binary, synthetic-samples or world-samples)",
		            s->path, line + 11);

	/* The chunks, all checked now.  Version 2 adds the direction byte to the header. */
	size_t head = version == 2 ? 13 : 12;
	size_t cap = 0;
	for (size_t off = header; off < size;) {
		if (size - off < head)
			return fail(s, error, error_size, "replay: %s: truncated chunk header at byte offset %zu (%zu of %zu bytes)", s->path,
			            off, size - off, head);
		int64_t t = (int64_t)get_le(s->data + off, 8);
		uint32_t count = (uint32_t)get_le(s->data + off + 8, 4);
		dev_rec_dir dir = DEV_REC_IN;
		if (version == 2) {
			uint8_t d = s->data[off + 12];
			if (d > DEV_REC_OUT)
				return fail(s, error, error_size, "replay: %s: unknown chunk direction %u at byte offset %zu (expected 0 in, 1 reply, 2 out)",
				            s->path, (unsigned)d, off + 12);
			dir = (dev_rec_dir)d;
		}
		if (count > size - off - head)
			return fail(s, error, error_size, "replay: %s: truncated chunk at byte offset %zu (%u bytes announced, %zu left)",
			            s->path, off, count, size - off - head);
		if (s->chunk_count > 0 && t < s->chunks[s->chunk_count - 1].t_ns)
			return fail(s, error, error_size, "replay: %s: chunk at byte offset %zu goes back in time", s->path, off);
		if (s->chunk_count == cap) {
			cap = cap ? cap * 2 : 256;
			rep_chunk *c = realloc(s->chunks, cap * sizeof *c);
			if (!c)
				return fail(s, error, error_size, "replay: %s: out of memory", s->path);
			s->chunks = c;
		}
		s->chunks[s->chunk_count++] = (rep_chunk){.t_ns = t, .offset = off + head, .count = count, .dir = dir};
		off += head + (size_t)count;
	}
	s->base.state = DEV_STREAMING;
	describe(s);
	return &s->base;
}
