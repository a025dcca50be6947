/* The clutch and the pointer tracker: samples in, one trk_pointer out per update. */
#include "tracking/tracking.h"

#include <stdio.h>
#include <string.h>

void trk_clutch_reset(trk_clutch *clutch)
{
	memset(clutch, 0, sizeof *clutch);
}

void trk_clutch_engage(trk_clutch *clutch, const float calibrated[3])
{
	if (clutch->engaged)
		return;
	for (int i = 0; i < 3; i++)
		clutch->held[i] = calibrated[i] + clutch->offset[i];
	clutch->engaged = true;
}

void trk_clutch_release(trk_clutch *clutch, const float calibrated[3])
{
	if (!clutch->engaged)
		return;
	/* from here the pointer moves with the hand, starting from where it was held */
	for (int i = 0; i < 3; i++)
		clutch->offset[i] = clutch->held[i] - calibrated[i];
	clutch->engaged = false;
}

void trk_clutch_apply(trk_clutch *clutch, const trk_pose *calibrated, trk_pose *pointer)
{
	*pointer = *calibrated;
	if (clutch->engaged) {
		for (int i = 0; i < 3; i++) {
			clutch->offset[i] = clutch->held[i] - calibrated->position[i];
			pointer->position[i] = clutch->held[i];
		}
		return;
	}
	for (int i = 0; i < 3; i++)
		pointer->position[i] = calibrated->position[i] + clutch->offset[i];
}

trk_tracker_config trk_tracker_config_default(void)
{
	return (trk_tracker_config){
		.calibration = trk_calibration_default(),
		.filter = trk_filter_params_default(),
		.sensor = -1,
		.button_mask = 1u,
		.timeout_ns = 250000000,
		.max_extrapolation_ns = 50000000,
		.velocity_window_ns = 20000000,
	};
}

void trk_tracker_init(trk_tracker *tracker, const trk_tracker_config *config)
{
	memset(tracker, 0, sizeof *tracker);
	tracker->config = *config;
	trk_filter_init(&tracker->filter, &config->filter);
	trk_clutch_reset(&tracker->clutch);
	trk_history_init(&tracker->history, config->max_extrapolation_ns);
}

void trk_tracker_freeze(trk_tracker *tracker, const char *reason)
{
	tracker->frozen = true;
	snprintf(tracker->reason, sizeof tracker->reason, "%s", reason && reason[0] ? reason : "the source stopped");
}

/* One accepted sample through calibration, filter, clutch and history. */
static void feed(trk_tracker *tr, const dev_sample *s, bool near_object, bool *pressed_edge, bool *released_edge)
{
	if (tr->have_pose && s->t_ns <= tr->last_sample_ns) {
		/* counted with the history's drops: a stale sample must not move the pointer
		 * back nor toggle the button */
		if (s->t_ns == tr->last_sample_ns)
			tr->history.dropped_duplicates++;
		else
			tr->history.dropped_out_of_order++;
		return;
	}
	bool after_gap = !tr->have_pose || tr->frozen || s->t_ns - tr->last_sample_ns > tr->config.timeout_ns;
	if (tr->frozen) {
		/* after a gap, a fresh start: the filter would smear the jump over its time
		 * constant and the history would invent motion across the gap */
		trk_filter_reset(&tr->filter);
		trk_history_clear(&tr->history);
		tr->frozen = false;
		tr->reason[0] = '\0';
	}
	trk_pose cal, filtered;
	trk_calibrate(&tr->config.calibration, s, &cal);
	trk_filter_apply(&tr->filter, &cal, &filtered);

	bool pressed = (s->buttons & tr->config.button_mask) != 0;
	if (pressed && !tr->pressed) {
		*pressed_edge = true;
		/* near_object is the pick at the pointer's previous position; across a gap the
		 * hand may have moved onto the cloth, so that pick says nothing about this
		 * press, and clutching on it would turn a grab into a clutch. */
		if (after_gap)
			tr->press_undecided = true;
		else if (!near_object)
			trk_clutch_engage(&tr->clutch, filtered.position);
	} else if (!pressed && tr->pressed) {
		*released_edge = true;
		tr->press_undecided = false;
		trk_clutch_release(&tr->clutch, filtered.position);
	} else if (pressed && tr->press_undecided) {
		/* the caller has picked at the post-gap position: nothing held means the press
		 * was away from every object */
		tr->press_undecided = false;
		if (!near_object)
			trk_clutch_engage(&tr->clutch, filtered.position);
	}
	tr->pressed = pressed;

	trk_clutch_apply(&tr->clutch, &filtered, &tr->pose);
	trk_history_push(&tr->history, &tr->pose);
	tr->have_pose = true;
	tr->last_sample_ns = s->t_ns;
}

void trk_tracker_update(trk_tracker *tracker, const dev_sample *samples, int count, bool near_object,
                        int64_t now_ns, trk_pointer *out)
{
	trk_tracker *tr = tracker;
	bool pressed_edge = false, released_edge = false;
	for (int i = 0; i < count; i++) {
		const dev_sample *s = &samples[i];
		if (tr->config.sensor >= 0 && s->sensor != tr->config.sensor) {
			tr->other_sensors++;
			continue;
		}
		feed(tr, s, near_object, &pressed_edge, &released_edge);
	}

	int64_t quiet = now_ns - tr->last_sample_ns;
	if (tr->have_pose && !tr->frozen && quiet > tr->config.timeout_ns) {
		tr->frozen = true;
		snprintf(tr->reason, sizeof tr->reason, "no sample from the tracker for %lld ms",
		         (long long)(quiet / 1000000));
	}

	memset(out, 0, sizeof *out);
	out->pressed_edge = pressed_edge;
	out->released_edge = released_edge;
	out->pressed = tr->pressed;
	out->clutched = tr->clutch.engaged;
	if (!tr->have_pose) {
		out->orientation[3] = 1.0f;
		out->direction[0] = 1.0f;
		out->frozen = tr->frozen;
		snprintf(out->reason, sizeof out->reason, "%s", tr->frozen ? tr->reason : "no sample yet");
		return;
	}
	out->valid = true;
	out->frozen = tr->frozen;
	out->t_ns = tr->pose.t_ns;
	memcpy(out->position, tr->pose.position, sizeof out->position);
	memcpy(out->orientation, tr->pose.orientation, sizeof out->orientation);
	trk_tip_direction(&tr->config.calibration, tr->pose.orientation, out->direction);
	if (tr->frozen)
		snprintf(out->reason, sizeof out->reason, "%s", tr->reason);
	else
		trk_history_velocity(&tr->history, tr->pose.t_ns, tr->config.velocity_window_ns, out->velocity);
}
