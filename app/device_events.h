/* A source's troubles as events (events.h), for the window's device thread and the
 * lock-step feed alike: the source lost (unplugged), back and ended, each when it
 * happens, and the driver's counters (error records, resyncs, dropped frames) when they
 * grow, said at most once a second with how many came since the last time and how many
 * so far, so a noisy cable makes a line a second rather than one a frame. */
#ifndef TELA_DEVICE_EVENTS_H
#define TELA_DEVICE_EVENTS_H

#include "devices/device.h"

#include <stdbool.h>
#include <stdint.h>

/* How often the counters are said at most, on the caller's clock. */
#define DVE_PERIOD_NS 1000000000LL

typedef struct dve_watch {
	dev_state state;
	bool lost;        /* said lost, not yet said back (a reconnect may wait in between) */
	dev_health said;  /* the counters as of the last time they were said */
	bool have_said_ns;
	int64_t said_ns;
} dve_watch;

/* Takes the source's state and counters now as the baseline: how it starts is the status
 * line's to say, not an event. */
void dve_watch_init(dve_watch *w, const dev_source *source);
/* Posts what changed since the last call.  now_ns paces the counters (the host clock in
 * a window, the simulated time in lock step, so a replay says the same every run);
 * sim_time is the events' time (negative: not known). */
void dve_watch_update(dve_watch *w, const dev_source *source, int64_t now_ns, double sim_time);
/* Posts counters that grew but were held back by the pacing (the end of a run). */
void dve_watch_flush(dve_watch *w, const dev_source *source, double sim_time);

#endif
