/* A source's troubles as events (device_events.h). */
#include "device_events.h"
#include "events.h"

static bool down(dev_state s)
{
	return s == DEV_DISCONNECTED || s == DEV_FAILED;
}

void dve_watch_init(dve_watch *w, const dev_source *source)
{
	dev_state state = dev_get_state(source);
	*w = (dve_watch){.state = state, .lost = down(state), .said = dev_get_health(source)};
}

static void tell_state(dve_watch *w, const dev_source *source, double when)
{
	dev_state now = dev_get_state(source);
	if (now == w->state)
		return;
	w->state = now;
	if (down(now)) {
		w->lost = true;
		ev_post(EV_WARNING, when, "device-lost", "device lost: %s", dev_describe(source));
	} else if (now == DEV_STREAMING && w->lost) {
		/* back however it came: straight from lost, or through a wait while it started up */
		w->lost = false;
		ev_post(EV_INFO, when, "device-back", "device back: %s", dev_describe(source));
	} else if (now == DEV_ENDED) {
		ev_post(EV_INFO, when, "device-ended", "device ended: %s", dev_describe(source));
	}
}

static const char *plural(uint64_t n)
{
	return n == 1 ? "" : "s";
}

static uint64_t since(uint64_t now, uint64_t then)
{
	return now > then ? now - then : 0;
}

static void tell_counters(dve_watch *w, const dev_health *h, double when)
{
	/* each its own key: a run of one kind is counted as a repeat, two kinds alternating
	 * are not merged into one */
	uint64_t n = since(h->error_records, w->said.error_records);
	if (n > 0)
		ev_post(EV_WARNING, when, "device-errors", "tracker: %llu error record%s (%llu so far)",
		        (unsigned long long)n, plural(n), (unsigned long long)h->error_records);
	n = since(h->resyncs, w->said.resyncs);
	if (n > 0)
		ev_post(EV_WARNING, when, "device-resyncs", "tracker: %llu resync%s, %llu bytes skipped (%llu so far)",
		        (unsigned long long)n, plural(n), (unsigned long long)since(h->skipped_bytes, w->said.skipped_bytes),
		        (unsigned long long)h->resyncs);
	n = since(h->dropped_frames, w->said.dropped_frames);
	if (n > 0)
		ev_post(EV_WARNING, when, "device-dropped", "tracker: %llu dropped frame%s (%llu so far)",
		        (unsigned long long)n, plural(n), (unsigned long long)h->dropped_frames);
	w->said = *h;
}

static bool counters_grew(const dve_watch *w, const dev_health *h)
{
	return h->error_records > w->said.error_records || h->resyncs > w->said.resyncs ||
	       h->dropped_frames > w->said.dropped_frames;
}

/* A counter that went down (a source that starts its counts again) makes a new baseline
 * rather than four billion errors. */
void dve_watch_update(dve_watch *w, const dev_source *source, int64_t now_ns, double sim_time)
{
	dev_health h = dev_get_health(source);
	if (h.error_records < w->said.error_records || h.resyncs < w->said.resyncs ||
	    h.dropped_frames < w->said.dropped_frames || h.skipped_bytes < w->said.skipped_bytes)
		w->said = h;
	/* what went wrong before the loss first: the loss often ends a burst of errors */
	if (counters_grew(w, &h) && (!w->have_said_ns || now_ns - w->said_ns >= DVE_PERIOD_NS)) {
		tell_counters(w, &h, sim_time);
		w->said_ns = now_ns;
		w->have_said_ns = true;
	}
	tell_state(w, source, sim_time);
}

void dve_watch_flush(dve_watch *w, const dev_source *source, double sim_time)
{
	dev_health h = dev_get_health(source);
	if (counters_grew(w, &h))
		tell_counters(w, &h, sim_time);
}
