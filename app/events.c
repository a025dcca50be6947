/* The event queue, the message line and the stderr printer (events.h). */
#define _POSIX_C_SOURCE 200809L
#include "events.h"

#include <pthread.h>
#include <stdarg.h>
#include <string.h>
#include <time.h>

/* A run of repeats on stderr is said again at most this often while it goes on, so that
 * a blow-up recovered every step neither floods the terminal nor goes unmentioned. */
#define EV_PRINT_REPEAT_NS 1000000000LL

static struct {
	pthread_mutex_t lock;
	ev_event ring[EV_QUEUE];
	int head, count; /* the oldest at ring[head] */
	uint64_t dropped;
} queue = {.lock = PTHREAD_MUTEX_INITIALIZER};

int64_t ev_now_ns(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (int64_t)ts.tv_sec * 1000000000 + ts.tv_nsec;
}

static bool same_key(const ev_event *a, const ev_event *b)
{
	return strcmp(a->key, b->key) == 0;
}

/* The newer event's text and time, the sum of the counts. */
static void merge(ev_event *into, const ev_event *e)
{
	int count = into->count + e->count;
	*into = *e;
	into->count = count;
}

void ev_post(ev_level level, double sim_time, const char *key, const char *fmt, ...)
{
	ev_event e = {.level = level, .sim_time = sim_time, .wall_ns = ev_now_ns(), .count = 1};
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(e.text, sizeof e.text, fmt, ap);
	va_end(ap);
	const char *k = key && key[0] ? key : e.text;
	size_t n = strnlen(k, sizeof e.key - 1);
	memcpy(e.key, k, n);
	e.key[n] = '\0';
	pthread_mutex_lock(&queue.lock);
	if (queue.count > 0) {
		ev_event *newest = &queue.ring[(queue.head + queue.count - 1) % EV_QUEUE];
		if (same_key(newest, &e)) {
			merge(newest, &e);
			pthread_mutex_unlock(&queue.lock);
			return;
		}
	}
	if (queue.count == EV_QUEUE) {
		queue.head = (queue.head + 1) % EV_QUEUE;
		queue.count--;
		queue.dropped++;
	}
	queue.ring[(queue.head + queue.count) % EV_QUEUE] = e;
	queue.count++;
	pthread_mutex_unlock(&queue.lock);
}

int ev_drain(ev_event *out, int max, uint64_t *dropped)
{
	pthread_mutex_lock(&queue.lock);
	int n = 0;
	while (n < max && queue.count > 0) {
		out[n++] = queue.ring[queue.head];
		queue.head = (queue.head + 1) % EV_QUEUE;
		queue.count--;
	}
	if (dropped)
		*dropped = queue.dropped;
	queue.dropped = 0;
	pthread_mutex_unlock(&queue.lock);
	return n;
}

void ev_clear(void)
{
	pthread_mutex_lock(&queue.lock);
	queue.head = queue.count = 0;
	queue.dropped = 0;
	pthread_mutex_unlock(&queue.lock);
}

void ev_format(const ev_event *e, char *out, int size)
{
	char when[64] = "";
	if (e->sim_time >= 0.0 && e->count > 1)
		snprintf(when, sizeof when, " (at t = %.3f s; %d times)", e->sim_time, e->count);
	else if (e->sim_time >= 0.0)
		snprintf(when, sizeof when, " (at t = %.3f s)", e->sim_time);
	else if (e->count > 1)
		snprintf(when, sizeof when, " (%d times)", e->count);
	snprintf(out, (size_t)size, "%s%s", e->text, when);
}

/* ---- the message line --------------------------------------------------------------------- */

void ev_line_add(ev_line *line, const ev_event *e)
{
	if (line->count > 0 && same_key(&line->events[line->count - 1], e)) {
		merge(&line->events[line->count - 1], e);
		return;
	}
	if (line->count == EV_LINE_EVENTS) {
		memmove(line->events, line->events + 1, (EV_LINE_EVENTS - 1) * sizeof line->events[0]);
		line->count--;
	}
	line->events[line->count++] = *e;
}

void ev_line_expire(ev_line *line, int64_t now_ns)
{
	int kept = 0;
	for (int i = 0; i < line->count; i++)
		if (now_ns - line->events[i].wall_ns < EV_LINE_SHOW_NS)
			line->events[kept++] = line->events[i];
	line->count = kept;
}

float ev_line_alpha(const ev_line *line, int i, int64_t now_ns)
{
	if (i < 0 || i >= line->count)
		return 0.0f;
	int64_t left = line->events[i].wall_ns + EV_LINE_SHOW_NS - now_ns;
	if (left <= 0)
		return 0.0f;
	if (left >= EV_LINE_FADE_NS)
		return 1.0f;
	return (float)((double)left / (double)EV_LINE_FADE_NS);
}

/* ---- stderr ---------------------------------------------------------------------------------- */

void ev_printer_init(ev_printer *p, FILE *stream, const char *prefix)
{
	*p = (ev_printer){.stream = stream, .prefix = prefix};
}

static void print_line(ev_printer *p, const ev_event *e)
{
	char line[EV_TEXT + 96];
	ev_format(e, line, sizeof line);
	if (p->before_line)
		p->before_line(p->user);
	fprintf(p->stream, "%s%s%s\n", p->prefix ? p->prefix : "", p->prefix ? ": " : "", line);
	fflush(p->stream);
	p->printed_count = e->count;
	p->printed_ns = e->wall_ns;
}

void ev_printer_flush(ev_printer *p)
{
	if (p->have_held && p->held.count > p->printed_count)
		print_line(p, &p->held);
}

void ev_printer_add(ev_printer *p, const ev_event *e)
{
	if (p->have_held && same_key(&p->held, e)) {
		merge(&p->held, e);
		if (e->wall_ns - p->printed_ns >= EV_PRINT_REPEAT_NS)
			print_line(p, &p->held);
		return;
	}
	ev_printer_flush(p);
	p->held = *e;
	p->have_held = true;
	print_line(p, e);
}

void ev_printer_drain(ev_printer *p)
{
	ev_event batch[16];
	uint64_t dropped = 0, lost = 0;
	int n;
	do {
		n = ev_drain(batch, 16, &dropped);
		lost += dropped;
		for (int i = 0; i < n; i++)
			ev_printer_add(p, &batch[i]);
	} while (n == 16);
	if (lost) {
		ev_event e = {.level = EV_WARNING, .sim_time = -1.0, .wall_ns = ev_now_ns(), .count = 1};
		snprintf(e.text, sizeof e.text, "%llu earlier events were not shown (too many at once)",
		         (unsigned long long)lost);
		snprintf(e.key, sizeof e.key, "(dropped)");
		ev_printer_add(p, &e);
	}
}
