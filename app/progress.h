/* The live progress line of long headless runs (`tela run`, the headless demo, the
 * benches) and the events that come during them, on stderr:
 *
 *   t 1.23/3.00 s  41%  0.8x real time
 *
 * redrawn in place (carriage return) a few times a second while stderr is a terminal,
 * erased before an event's line is printed (events.h) and at the end.  Nothing is drawn
 * when stderr is not a terminal (a pipe, a log file) or with --quiet; the events are
 * printed either way. */
#ifndef TELA_PROGRESS_H
#define TELA_PROGRESS_H

#include "events.h"

#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>

typedef struct progress {
	FILE *stream;
	bool live;           /* a terminal, and not quiet: the line is drawn */
	double total;        /* simulated seconds to run (0: unknown) */
	const char *label;   /* what runs now, shown before the times (NULL: nothing) */
	int64_t start_ns, drawn_ns;
	int shown;           /* characters of the line now on screen (0: none) */
	ev_printer events;
} progress;

/* Starts the line for `total` simulated seconds.  prefix: the events' (e.g. "tela run"). */
void progress_start(progress *p, const char *prefix, double total, bool quiet);
/* Prints the events that came, and redraws the line if it is due; `t` is the simulated
 * time done so far. */
void progress_update(progress *p, double t);
/* The same for work counted in parts (a benchmark's cases): "LABEL  3/41  7%  WHAT". */
void progress_count(progress *p, int done, int total, const char *what);
/* Prints the events that came, and says repeats not yet said; erases the line. */
void progress_end(progress *p);
/* Erases the line (it comes back at the next due update): before other output. */
void progress_clear(progress *p);

#endif
