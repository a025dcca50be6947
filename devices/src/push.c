/* A source the application feeds: "push:NAME" or dev_open_push.  The demo pushes its
 * mouse pointer here, an OpenXR session its controllers' poses; whatever drives the
 * pointer then comes out of dev_poll like a tracker's samples, and can be recorded and
 * replayed.
 *
 * Every sample goes through pol_encode + pol_parse on its way out (as the synthetic
 * device's do), so what the application sees is exactly what a replay of the recording
 * will see: a pushed position comes back within one float step of what went in (the
 * record carries centimetres), bit-identical on every replay. */
#define _POSIX_C_SOURCE 200809L

#include "device_internal.h"
#include "devices/polhemus.h"

#include <math.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

/* A second of samples at 1 kHz: a poller that stalls longer loses the oldest. */
#define PUSH_QUEUE 1024

typedef struct push_source {
	dev_source base;
	char name[32];

	pthread_mutex_t lock;
	pthread_cond_t arrived;
	/* Under `lock`: */
	dev_sample queue[PUSH_QUEUE];
	int first, count;
	uint32_t next_frame[17]; /* per sensor: the parser counts gaps per station */
	int64_t last_t_ns;       /* a recording's chunk times never decrease */
	uint64_t dropped;        /* samples the full queue lost */
	bool pushed; /* any sample yet */
	dev_state wanted; /* dev_push_set_state's, applied by poll */
	bool have_wanted;
	char why[96];

	pol_parser parser; /* poll's thread only */
} push_source;

static void describe(push_source *s)
{
	const char *state = s->base.state == DEV_STREAMING ? "streaming"
	                    : s->base.state == DEV_WAITING  ? "waiting for the first sample"
	                    : s->base.state == DEV_ENDED    ? "ended"
	                                                    : "disconnected";
	if (s->why[0] && s->base.state != DEV_STREAMING)
		dev_set_describe(&s->base, "%s: %s", s->name, s->why);
	else
		dev_set_describe(&s->base, "%s: %s", s->name, state);
}

/* Moves up to max queued samples through the record encoding into out; under the lock. */
static int drain(push_source *s, dev_sample *out, int max)
{
	int n = 0;
	while (s->count > 0 && n < max) {
		dev_sample in = s->queue[s->first];
		s->first = (s->first + 1) % PUSH_QUEUE;
		s->count--;
		uint8_t rec[POL_RECORD_BYTES];
		pol_encode(&in, rec);
		dev_record_bytes(&s->base, in.t_ns, rec, sizeof rec);
		n += pol_parse(&s->parser, rec, sizeof rec, in.t_ns, out + n, max - n);
	}
	return n;
}

static int push_poll(dev_source *base, dev_sample *out, int max, int timeout_ms)
{
	push_source *s = (push_source *)base;
	struct timespec deadline;
	clock_gettime(CLOCK_MONOTONIC, &deadline);
	deadline.tv_sec += timeout_ms / 1000;
	deadline.tv_nsec += (long)(timeout_ms % 1000) * 1000000L;
	if (deadline.tv_nsec >= 1000000000L) {
		deadline.tv_sec++;
		deadline.tv_nsec -= 1000000000L;
	}
	pthread_mutex_lock(&s->lock);
	while (s->count == 0 && timeout_ms > 0 && !(s->have_wanted && s->wanted == DEV_ENDED)) {
		if (pthread_cond_timedwait(&s->arrived, &s->lock, &deadline) != 0)
			break;
	}
	int n = drain(s, out, max);
	bool ended = s->have_wanted && s->wanted == DEV_ENDED && s->count == 0;
	if (s->have_wanted)
		base->state = s->wanted;
	else if (s->pushed)
		base->state = DEV_STREAMING;
	if (base->state == DEV_ENDED && !ended)
		base->state = DEV_STREAMING; /* ending, but samples are still queued */
	/* The parser would see a lost sample as a gap in its station's frame counter, but
	 * not one lost before the first poll: count them here, where they are lost. */
	base->health = s->parser.health;
	base->health.dropped_frames = s->dropped;
	describe(s);
	pthread_mutex_unlock(&s->lock);
	return n == 0 && ended ? -1 : n;
}

static void push_close(dev_source *base)
{
	push_source *s = (push_source *)base;
	pthread_cond_destroy(&s->arrived);
	pthread_mutex_destroy(&s->lock);
	free(s);
}

static const dev_ops push_ops = {.kind = "push", .poll = push_poll, .close = push_close};

dev_source *dev_open_push(const char *name, dev_frame frame, char *error, int error_size)
{
	if (!name || !name[0] || strlen(name) >= sizeof ((push_source *)0)->name) {
		dev_set_error(error, error_size, "push: a source needs a name of 1 to 31 characters (push:NAME)");
		return NULL;
	}
	push_source *s = calloc(1, sizeof *s);
	if (!s) {
		dev_set_error(error, error_size, "push:%s: out of memory", name);
		return NULL;
	}
	dev_source_init(&s->base, &push_ops, frame == DEV_FRAME_WORLD ? DEV_REC_WORLD : DEV_REC_SYNTHETIC);
	s->base.frame = frame;
	strcpy(s->name, name);
	pthread_mutex_init(&s->lock, NULL);
	pthread_condattr_t attr;
	pthread_condattr_init(&attr);
	/* the poll's deadline is on the monotonic clock, as every time in tela is */
	pthread_condattr_setclock(&attr, CLOCK_MONOTONIC);
	pthread_cond_init(&s->arrived, &attr);
	pthread_condattr_destroy(&attr);
	pol_parser_init(&s->parser);
	for (int k = 0; k < 17; k++)
		s->next_frame[k] = 1;
	describe(s);
	return &s->base;
}

dev_source *dev_push_open_spec(const char *args, char *error, int error_size)
{
	return dev_open_push(args, DEV_FRAME_DEVICE, error, error_size);
}

static bool finite_sample(const dev_sample *x)
{
	for (int k = 0; k < 3; k++)
		if (!isfinite(x->position[k]))
			return false;
	for (int k = 0; k < 4; k++)
		if (!isfinite(x->orientation[k]))
			return false;
	return true;
}

bool dev_push(dev_source *source, const dev_sample *sample)
{
	if (!source || source->ops != &push_ops || !sample || sample->sensor < 1 || sample->sensor > 16 ||
	    !finite_sample(sample))
		return false;
	push_source *s = (push_source *)source;
	dev_sample x = *sample;
	if (x.t_ns == 0)
		x.t_ns = dev_now_ns();
	pthread_mutex_lock(&s->lock);
	if (s->have_wanted && s->wanted == DEV_ENDED) {
		pthread_mutex_unlock(&s->lock);
		return false;
	}
	/* a sample means the source is live again, whatever it was told before */
	s->have_wanted = false;
	s->why[0] = '\0';
	if (x.t_ns < s->last_t_ns)
		x.t_ns = s->last_t_ns;
	s->last_t_ns = x.t_ns;
	if (x.frame == 0)
		x.frame = s->next_frame[x.sensor];
	s->next_frame[x.sensor] = x.frame + 1;
	if (s->count == PUSH_QUEUE) {
		s->first = (s->first + 1) % PUSH_QUEUE;
		s->count--;
		s->dropped++;
	}
	s->queue[(s->first + s->count) % PUSH_QUEUE] = x;
	s->count++;
	s->pushed = true;
	pthread_cond_signal(&s->arrived);
	pthread_mutex_unlock(&s->lock);
	return true;
}

void dev_push_set_state(dev_source *source, dev_state state, const char *why)
{
	if (!source || source->ops != &push_ops)
		return;
	push_source *s = (push_source *)source;
	pthread_mutex_lock(&s->lock);
	s->wanted = state;
	s->have_wanted = true;
	dev_format(s->why, sizeof s->why, "%s", why ? why : "");
	pthread_cond_signal(&s->arrived);
	pthread_mutex_unlock(&s->lock);
}
