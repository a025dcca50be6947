/* The lock-step stylus feed (stylus_feed.h). */
#define _POSIX_C_SOURCE 200809L
#include "stylus_feed.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

static int64_t now_ns(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (int64_t)ts.tv_sec * 1000000000 + ts.tv_nsec;
}

bool sty_spec_is_scripted(const char *spec)
{
	return strncmp(spec, "synthetic:", 10) == 0 || strncmp(spec, "replay:", 7) == 0;
}

bool sty_spec_is_fast(const char *spec)
{
	if (strncmp(spec, "synthetic:", 10) == 0) {
		/* ",fast" as one of the comma-separated options */
		const char *p = spec;
		while ((p = strstr(p, ",fast")) != NULL) {
			if (p[5] == '\0' || p[5] == ',')
				return true;
			p += 5;
		}
		return false;
	}
	if (strncmp(spec, "replay:", 7) == 0) {
		/* only a trailing @NUMBER is a speed (docs/devices.md), and 0 is "at once" */
		const char *at = strrchr(spec + 7, '@');
		if (!at || !at[1])
			return false;
		char *end;
		double speed = strtod(at + 1, &end);
		return *end == '\0' && speed == 0.0;
	}
	return false;
}

dev_source *sty_source_open(const sty_feed_options *o, trk_tracker_config *tc, sty_config *sc, char *error,
                            int error_size)
{
	*tc = trk_tracker_config_default();
	*sc = o->stylus;
	if (o->calibration && !trk_calibration_load(o->calibration, &tc->calibration, error, error_size))
		return NULL;
	if (o->calibration_value)
		tc->calibration = *o->calibration_value;
	dev_source *source = o->source ? o->source : dev_open(o->spec, error, error_size);
	if (!source)
		return NULL;
	if (o->record && !dev_record(source, o->record, error, error_size)) {
		if (source != o->source)
			dev_close(&source);
		return NULL;
	}
	if (dev_get_frame(source) == DEV_FRAME_WORLD && !o->calibration && !o->calibration_value)
		tc->calibration = (trk_calibration){.rotation = {0.0f, 0.0f, 0.0f, 1.0f}, .scale = 1.0f};
	return source;
}

bool sty_feed_open(sty_feed *f, const sty_feed_options *o, char *error, int error_size)
{
	memset(f, 0, sizeof *f);
	trk_tracker_config tc;
	sty_config sc;
	f->source = sty_source_open(o, &tc, &sc, error, error_size);
	if (!f->source)
		return false;
	trk_tracker_init(&f->tracker, &tc);
	sty_init(&f->stylus, &sc);
	f->lock_to_source = sty_spec_is_fast(o->spec);
	f->output.hover = f->output.grabbed = f->output.released = -1;
	dve_watch_init(&f->watch, f->source);
	return true;
}

void sty_feed_close(sty_feed *f)
{
	dev_close(&f->source);
}

double sty_feed_sample_time(const sty_feed *f, const dev_sample *s)
{
	return (double)(s->t_ns - f->origin_ns) * 1e-9;
}

/* Tops the queue up from the source without waiting (timeout 0). */
static void refill(sty_feed *f)
{
	if (f->ended)
		return;
	if (f->pending_count == 0)
		f->pending_first = 0;
	int room_at = f->pending_first + f->pending_count;
	int room = (int)(sizeof f->pending / sizeof f->pending[0]) - room_at;
	if (room < 64 && f->pending_first > 0) {
		memmove(f->pending, f->pending + f->pending_first, sizeof f->pending[0] * (size_t)f->pending_count);
		f->pending_first = 0;
		room_at = f->pending_count;
		room = (int)(sizeof f->pending / sizeof f->pending[0]) - room_at;
	}
	if (room <= 0)
		return;
	/* one at a time from a source that runs ahead of the clock (as the device thread
	 * does): its counters then change when the samples around the bad bytes come due,
	 * not all at the first poll */
	if (f->lock_to_source)
		room = 1;
	int n = dev_poll(f->source, f->pending + room_at, room, 0);
	if (n < 0) {
		f->ended = true;
		trk_tracker_freeze(&f->tracker, dev_describe(f->source));
		return;
	}
	if (n > 0 && !f->have_origin && f->lock_to_source) {
		f->origin_ns = f->pending[room_at].t_ns;
		f->have_origin = true;
	}
	f->pending_count += n;
}

int sty_feed_advance(sty_feed *f, double t_s, const sty_scene *scene, sty_feed_fn fn, void *context)
{
	if (!f->lock_to_source && !f->have_origin) {
		f->origin_ns = now_ns();
		f->have_origin = true;
	}
	int64_t due = (int64_t)(t_s * 1e9 + 0.5);
	if (!f->lock_to_source) {
		/* a live source: the simulation keeps the host's pace */
		int64_t wake = f->origin_ns + due;
		int64_t left = wake - now_ns();
		if (left > 0) {
			struct timespec nap = {(time_t)(left / 1000000000), (long)(left % 1000000000)};
			nanosleep(&nap, NULL);
		}
	}
	int delivered = 0;
	for (;;) {
		if (f->pending_count == 0)
			refill(f);
		if (f->pending_count == 0 || !f->have_origin)
			break;
		const dev_sample *s = &f->pending[f->pending_first];
		if (s->t_ns - f->origin_ns > due)
			break;
		dev_sample sample = *s;
		f->pending_first++;
		f->pending_count--;
		/* the first station to report is the stylus; a second one (a camera sensor in the
		 * window) must not drive the pointer too */
		if (f->tracker.config.sensor < 0)
			f->tracker.config.sensor = sample.sensor;
		trk_tracker_update(&f->tracker, &sample, 1, sty_near_object(&f->output), sample.t_ns, &f->pointer);
		sty_update(&f->stylus, &f->pointer, scene, &f->output);
		f->delivered++;
		delivered++;
		if (fn)
			fn(context, &sample, &f->pointer, &f->output);
	}
	dev_state state = dev_get_state(f->source);
	if (delivered == 0 && (state == DEV_DISCONNECTED || state == DEV_FAILED))
		trk_tracker_freeze(&f->tracker, dev_describe(f->source));
	if (delivered == 0 && f->have_origin && (f->pointer.valid || f->tracker.frozen)) {
		/* no sample: let the tracker say when the source has gone quiet */
		trk_tracker_update(&f->tracker, NULL, 0, sty_near_object(&f->output), f->origin_ns + due, &f->pointer);
	}
	dve_watch_update(&f->watch, f->source, due, t_s);
	return delivered;
}

void sty_feed_flush_events(sty_feed *f, double t_s)
{
	dve_watch_flush(&f->watch, f->source, t_s);
}

void sty_obstacle_from_def(const sim_obstacle_def *d, const float *pose, sty_obstacle *out)
{
	static const sty_shape shapes[SIM_SHAPE_COUNT] = {
	    [SIM_SHAPE_PLANE] = STY_SHAPE_PLANE, [SIM_SHAPE_SPHERE] = STY_SHAPE_SPHERE, [SIM_SHAPE_BOX] = STY_SHAPE_BOX,
	    [SIM_SHAPE_CAPSULE] = STY_SHAPE_CAPSULE, [SIM_SHAPE_MESH] = STY_SHAPE_MESH,
	};
	*out = (sty_obstacle){.shape = shapes[d->shape], .pose = pose, .radius = d->radius, .half_height = d->half_height,
	                      .vertex_count = d->vertex_count, .positions = d->positions,
	                      .triangle_count = d->triangle_count, .triangles = d->triangles};
	memcpy(out->position, d->position, sizeof out->position);
	memcpy(out->orientation, d->orientation, sizeof out->orientation);
	memcpy(out->half_extents, d->half_extents, sizeof out->half_extents);
}

void sty_scene_from_layout(const st_layout *l, const float (*positions)[4], const float (*obstacle_pose)[7],
                           sty_mesh *meshes, sty_obstacle *obstacles, sty_scene *out)
{
	int nm = 0;
	for (int o = 0; o < l->object_count; o++)
		if (l->objects[o].triangle_count > 0)
			meshes[nm++] = (sty_mesh){.positions = positions + l->objects[o].first_vertex,
			                          .triangles = l->objects[o].triangles,
			                          .triangle_count = l->objects[o].triangle_count};
	for (int o = 0; o < l->obstacle_count; o++)
		sty_obstacle_from_def(&l->obstacles[o].def, obstacle_pose ? obstacle_pose[o] : NULL, &obstacles[o]);
	*out = (sty_scene){.positions = positions, .vertex_count = l->vertex_count, .driven = l->driven, .meshes = meshes,
	                   .mesh_count = nm, .obstacles = obstacles, .obstacle_count = l->obstacle_count};
}
