/* What goes wrong (and right again) while tela runs, shown where the user looks: one
 * small queue that the simulation thread, the device thread, the GPU integrator's set-up
 * and the recorders post to, and that one reader drains: the window into its message
 * line (ev_line, drawn by the panel), a headless loop onto stderr (ev_printer).  Posting
 * never blocks for long and never fails the poster: a full queue drops its oldest event
 * and counts it.
 *
 * A repeat is counted, not repeated: an event with the same key as the newest one (the
 * key defaults to the text) adds to its count and takes its newer text and time, in the
 * queue, in the message line and on stderr alike. */
#ifndef TELA_EVENTS_H
#define TELA_EVENTS_H

#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>

#ifdef __cplusplus
extern "C" {
#endif

enum {
	EV_TEXT = 240,      /* bytes of an event's text, with the terminating 0 */
	EV_KEY = EV_TEXT,   /* bytes of its key */
	EV_QUEUE = 64,      /* events the queue holds between two drains */
	EV_LINE_EVENTS = 4, /* events the message line shows at once, newest last */
};

/* How long the message line shows an event, and the last part of that during which it
 * fades out. */
#define EV_LINE_SHOW_NS 6000000000LL
#define EV_LINE_FADE_NS 1500000000LL

typedef enum ev_level { EV_INFO, EV_WARNING, EV_ERROR } ev_level;

typedef struct ev_event {
	ev_level level;
	double sim_time; /* simulated time, s, when it happened; negative: not known */
	int64_t wall_ns; /* CLOCK_MONOTONIC when (last) posted */
	int count;       /* 1, or how many times it came in a row */
	char key[EV_KEY];
	char text[EV_TEXT];
} ev_event;

/* Posts to the process's queue (thread-safe).  key NULL or "": the text is the key. */
void ev_post(ev_level level, double sim_time, const char *key, const char *fmt, ...)
    __attribute__((format(printf, 4, 5)));
/* Moves up to `max` queued events, oldest first, into `out`; returns how many.  *dropped
 * (may be NULL) gets the number the full queue lost since the previous drain. */
int ev_drain(ev_event *out, int max, uint64_t *dropped);
/* Empties the queue (a test starting afresh). */
void ev_clear(void);

/* One event as a line: "TEXT (at t = 1.234 s)", or "TEXT (at t = 1.234 s; 3 times)" for
 * a repeat (the time its latest). */
void ev_format(const ev_event *e, char *out, int size);

/* The window's message line: the newest EV_LINE_EVENTS events, each shown for
 * EV_LINE_SHOW_NS after it (last) came. */
typedef struct ev_line {
	ev_event events[EV_LINE_EVENTS];
	int count;
} ev_line;

void ev_line_add(ev_line *line, const ev_event *e);
/* Drops the events shown long enough by `now_ns`. */
void ev_line_expire(ev_line *line, int64_t now_ns);
/* How opaque event i is at `now_ns`: 1, falling to 0 over its last EV_LINE_FADE_NS. */
float ev_line_alpha(const ev_line *line, int i, int64_t now_ns);

/* Events onto a stream as they come, one line each ("PREFIX: " and ev_format's); a run of
 * repeats is held back and said once, with its count, when something else comes or at
 * ev_printer_flush.  `before_line` (may be NULL) is called before each line is written
 * (the progress line erases itself there). */
typedef struct ev_printer {
	FILE *stream;
	const char *prefix;
	void (*before_line)(void *user);
	void *user;
	ev_event held; /* the newest event, count beyond the printed one not yet said */
	bool have_held;
	int printed_count; /* of `held`, already written */
	int64_t printed_ns;
} ev_printer;

void ev_printer_init(ev_printer *p, FILE *stream, const char *prefix);
void ev_printer_add(ev_printer *p, const ev_event *e);
/* Says a repeat not yet said. */
void ev_printer_flush(ev_printer *p);
/* Drains the process's queue into the printer. */
void ev_printer_drain(ev_printer *p);

int64_t ev_now_ns(void);

#ifdef __cplusplus
}
#endif

#endif
