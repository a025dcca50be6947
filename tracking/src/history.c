/* The timestamped pose history: a ring of world poses that answers "the pose at time t"
 * for a consumer (the simulation step) running on a different clock tick than the
 * device. */
#include "tracking/tracking.h"

#include "trk_math.h"

#include <string.h>

void trk_history_init(trk_history *history, int64_t max_extrapolation_ns)
{
	memset(history, 0, sizeof *history);
	history->max_extrapolation_ns = max_extrapolation_ns > 0 ? max_extrapolation_ns : 0;
}

void trk_history_clear(trk_history *history)
{
	history->first = 0;
	history->count = 0;
}

/* The i-th pose, 0 being the oldest. */
static const trk_pose *at_index(const trk_history *h, int i)
{
	return &h->poses[(h->first + i) % TRK_HISTORY_CAPACITY];
}

const trk_pose *trk_history_newest(const trk_history *history)
{
	return history->count ? at_index(history, history->count - 1) : NULL;
}

bool trk_history_push(trk_history *history, const trk_pose *pose)
{
	const trk_pose *newest = trk_history_newest(history);
	if (newest && pose->t_ns <= newest->t_ns) {
		/* interpolation needs strictly increasing times, and a sample older than one
		 * already used cannot change what was already answered */
		if (pose->t_ns == newest->t_ns)
			history->dropped_duplicates++;
		else
			history->dropped_out_of_order++;
		return false;
	}
	if (history->count == TRK_HISTORY_CAPACITY) {
		history->first = (history->first + 1) % TRK_HISTORY_CAPACITY;
		history->count--;
	}
	history->poses[(history->first + history->count) % TRK_HISTORY_CAPACITY] = *pose;
	history->count++;
	return true;
}

/* a + u (b - a) for positions and slerp for orientations; u may exceed 1 (prediction). */
static void blend(const trk_pose *a, const trk_pose *b, double u, int64_t t_ns, trk_pose *out)
{
	double qa[4], qb[4], q[4];
	for (int i = 0; i < 3; i++) {
		double pa = a->position[i], pb = b->position[i];
		out->position[i] = (float)(pa + u * (pb - pa));
	}
	tm_from_float4(a->orientation, qa);
	tm_from_float4(b->orientation, qb);
	tm_qslerp(qa, qb, u, q);
	tm_to_float4(q, out->orientation);
	out->t_ns = t_ns;
}

trk_history_result trk_history_at(const trk_history *history, int64_t t_ns, trk_pose *out)
{
	int n = history->count;
	if (n == 0)
		return TRK_HISTORY_EMPTY;
	const trk_pose *oldest = at_index(history, 0), *newest = at_index(history, n - 1);
	if (t_ns < oldest->t_ns) {
		*out = *oldest;
		return TRK_HISTORY_CLAMPED;
	}
	if (t_ns > newest->t_ns) {
		if (n < 2 || history->max_extrapolation_ns == 0) {
			/* nothing to predict from, or prediction is off: hold the newest pose */
			*out = *newest;
			out->t_ns = t_ns;
			return TRK_HISTORY_EXTRAPOLATED;
		}
		const trk_pose *prev = at_index(history, n - 2);
		int64_t ahead = t_ns - newest->t_ns;
		if (ahead > history->max_extrapolation_ns)
			ahead = history->max_extrapolation_ns;
		/* the same velocity as over the last interval, as a fraction of it past the newest */
		double u = 1.0 + (double)ahead / (double)(newest->t_ns - prev->t_ns);
		blend(prev, newest, u, t_ns, out);
		return TRK_HISTORY_EXTRAPOLATED;
	}
	/* the last sample at or before t: times are strictly increasing */
	int lo = 0, hi = n - 1;
	while (lo < hi) {
		int mid = lo + (hi - lo + 1) / 2;
		if (at_index(history, mid)->t_ns <= t_ns)
			lo = mid;
		else
			hi = mid - 1;
	}
	const trk_pose *a = at_index(history, lo);
	if (a->t_ns == t_ns) {
		*out = *a;
		return TRK_HISTORY_EXACT;
	}
	const trk_pose *b = at_index(history, lo + 1);
	double u = (double)(t_ns - a->t_ns) / (double)(b->t_ns - a->t_ns);
	blend(a, b, u, t_ns, out);
	return TRK_HISTORY_INTERPOLATED;
}

void trk_history_velocity(const trk_history *history, int64_t t_ns, int64_t window_ns, float out[3])
{
	out[0] = out[1] = out[2] = 0.0f;
	if (history->count < 2 || window_ns <= 0)
		return;
	int64_t start = t_ns - window_ns;
	int64_t oldest = at_index(history, 0)->t_ns;
	if (start < oldest)
		start = oldest;
	if (start >= t_ns)
		return;
	trk_pose a, b;
	trk_history_at(history, start, &a);
	trk_history_at(history, t_ns, &b);
	double dt = (double)(t_ns - start) * 1e-9;
	for (int i = 0; i < 3; i++)
		out[i] = (float)(((double)b.position[i] - (double)a.position[i]) / dt);
}
