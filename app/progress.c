/* The live progress line (progress.h). */
#define _POSIX_C_SOURCE 200809L
#include "progress.h"

#include <string.h>
#include <unistd.h>

/* Often enough to look alive, seldom enough to cost nothing and not to flicker. */
#define PROGRESS_PERIOD_NS 250000000LL

static void clear_line(void *user)
{
	progress_clear(user);
}

void progress_start(progress *p, const char *prefix, double total, bool quiet)
{
	*p = (progress){.stream = stderr, .total = total > 0.0 ? total : 0.0, .start_ns = ev_now_ns()};
	/* drawn_ns 0: the first update draws at once, so that even a short run shows it */
	p->live = !quiet && isatty(fileno(stderr));
	ev_printer_init(&p->events, stderr, prefix);
	p->events.before_line = clear_line;
	p->events.user = p;
}

void progress_clear(progress *p)
{
	if (p->shown <= 0)
		return;
	fprintf(p->stream, "\r%*s\r", p->shown, "");
	fflush(p->stream);
	p->shown = 0;
}

/* Writes `line` over the one on screen, padded over what a longer one left. */
static void show(progress *p, const char *line, int64_t now)
{
	int n = (int)strlen(line);
	fprintf(p->stream, "\r%s%*s", line, p->shown > n ? p->shown - n : 0, "");
	fflush(p->stream);
	p->shown = n > p->shown ? n : p->shown;
	p->drawn_ns = now;
}

static bool due(progress *p, int64_t *now)
{
	ev_printer_drain(&p->events);
	if (!p->live)
		return false;
	*now = ev_now_ns();
	return *now - p->drawn_ns >= PROGRESS_PERIOD_NS;
}

void progress_update(progress *p, double t)
{
	int64_t now;
	if (!due(p, &now))
		return;
	char line[256];
	int n = 0;
	if (p->label)
		n += snprintf(line + n, sizeof line - (size_t)n, "%.60s  ", p->label);
	if (p->total > 0.0)
		n += snprintf(line + n, sizeof line - (size_t)n, "t %.2f/%.2f s  %3.0f%%", t, p->total,
		              100.0 * (t < p->total ? t : p->total) / p->total);
	else
		n += snprintf(line + n, sizeof line - (size_t)n, "t %.2f s", t);
	double wall = (double)(now - p->start_ns) * 1e-9, rate = wall > 0.0 ? t / wall : 0.0;
	snprintf(line + n, sizeof line - (size_t)n, rate < 10.0 ? "  %.2fx real time" : "  %.0fx real time", rate);
	show(p, line, now);
}

void progress_count(progress *p, int done, int total, const char *what)
{
	int64_t now;
	if (!due(p, &now) || total <= 0)
		return;
	char line[256];
	snprintf(line, sizeof line, "%.60s%s%d/%d  %3.0f%%  %.80s", p->label ? p->label : "", p->label ? "  " : "", done,
	         total, 100.0 * done / total, what ? what : "");
	show(p, line, now);
}

void progress_end(progress *p)
{
	ev_printer_drain(&p->events);
	ev_printer_flush(&p->events);
	progress_clear(p);
}
