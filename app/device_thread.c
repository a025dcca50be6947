/* The windowed demo's device thread (device_thread.h). */
#define _POSIX_C_SOURCE 200809L
#include "device_thread.h"
#include "device_events.h"
#include "events.h"
#include "stop.h"

#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

/* dev_poll's timeout: short, so that a quiet source is noticed (the tracker's timeout)
 * and dt_stop is never kept waiting. */
enum { POLL_MS = 5, BATCH = 64 };
static const int64_t MAX_NAP_NS = 20000000;

struct dt_thread {
	pthread_t thread;
	atomic_bool quit;
	/* the device thread's alone once it runs */
	dev_source *source;
	bool owns_source; /* false: the caller's (sty_feed_options.source) */
	bool fast;          /* the source runs ahead of the host clock: paced here */
	bool waits;         /* a script not yet polled: it starts with the scene it drives */
	bool have_offset;
	int64_t offset_ns;  /* host clock - the samples' clock */
	bool ended;
	int camera_station;            /* 0: none */
	trk_calibration camera_calibration; /* the stylus's, without its tip */
	/* the rest is shared with the main thread */
	pthread_mutex_t lock;
	trk_tracker tracker;
	sty_stylus stylus;
	trk_pointer pointer;
	sty_output output;
	st_thread *sim;
	const st_layout *layout;
	float (*positions)[4];
	float (*obstacle_pose)[7];
	sty_mesh *meshes;
	sty_obstacle *obstacles;
	bool have_scene;
	uint64_t scene_serial;
	double scene_time;  /* simulated, of the copied snapshot: when the events below happen */
	bool said_record;   /* the recording's failure is in the event queue */
	dve_watch watch;    /* the source's state and counters as last told */
	dt_status status;
};

static int64_t now_ns(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (int64_t)ts.tv_sec * 1000000000 + ts.tv_nsec;
}

static void nap(int64_t ns)
{
	struct timespec ts = {(time_t)(ns / 1000000000), (long)(ns % 1000000000)};
	nanosleep(&ts, NULL);
}

/* Holds a sample of a fast source until its time, the first one mapped to now; false
 * when asked to quit meanwhile. */
static bool pace(dt_thread *t, int64_t sample_ns)
{
	if (!t->have_offset) {
		t->offset_ns = now_ns() - sample_ns;
		t->have_offset = true;
		return true;
	}
	int64_t due = sample_ns + t->offset_ns;
	while (!atomic_load(&t->quit) && !stop_requested()) {
		int64_t left = due - now_ns();
		if (left <= 0)
			return true;
		nap(left < MAX_NAP_NS ? left : MAX_NAP_NS);
	}
	return false;
}

/* One sample through the tracker and the stylus, and its decisions to the simulation
 * thread at once.  Under the lock. */
static void deliver(dt_thread *t, const dev_sample *s)
{
	trk_tracker_update(&t->tracker, s, 1, sty_near_object(&t->output), s->t_ns, &t->pointer);
	sty_scene scene;
	const sty_scene *meets = NULL;
	if (t->sim && t->have_scene) {
		sty_scene_from_layout(t->layout, (const float(*)[4])t->positions, (const float(*)[7])t->obstacle_pose,
		                      t->meshes, t->obstacles, &scene);
		meets = &scene;
	}
	sty_update(&t->stylus, &t->pointer, meets, &t->output);
	t->status.samples++;
	if (!t->sim)
		return;
	const sty_output *o = &t->output;
	if (o->release) {
		st_command c = {.kind = ST_RELEASE};
		st_send(t->sim, &c);
		t->status.releases++;
	}
	if (o->grab) {
		st_command c = {.kind = ST_GRAB, .vertex = o->grabbed};
		st_send(t->sim, &c);
		t->status.grabs++;
	}
	/* the sample's arrival on the host clock, for the latency bench */
	int64_t arrived = s->t_ns + t->offset_ns;
	if (o->grabbed >= 0)
		st_set_pointer_at(t->sim, o->target, o->target_velocity, arrived);
	else
		st_set_pointer_at(t->sim, o->drawn, NULL, arrived);
}

/* A camera station's sample: its calibrated pose for the main thread.  Not the tracker:
 * its clutch and button belong to the stylus, and the camera wants the sensor's own
 * pose, not a tip ahead of it.  Under the lock. */
static void camera_sample(dt_thread *t, const dev_sample *s)
{
	dt_camera *c = &t->status.camera;
	trk_calibrate(&t->camera_calibration, s, &c->pose);
	c->newest_sample = *s;
	if (c->samples++ == 0) {
		c->first = c->pose;
		c->first_sample = *s;
	}
}

/* Sends a sample to the camera or the stylus; true when the stylus took it.  The stylus
 * locks onto the first station other than the camera's that reports, so one sensor on
 * any other port drives it and a third one cannot make it jump between two.  Under the
 * lock. */
static bool route(dt_thread *t, const dev_sample *s)
{
	if (t->camera_station > 0 && s->sensor == t->camera_station) {
		camera_sample(t, s);
		return false;
	}
	if (t->tracker.config.sensor < 0) {
		t->tracker.config.sensor = s->sensor;
		t->status.stylus_station = s->sensor;
	}
	if (s->sensor != t->tracker.config.sensor) {
		t->tracker.other_sensors++;
		t->status.other_samples++;
		return false;
	}
	deliver(t, s);
	return true;
}

/* The source's losses and returns, its error counters, and a recording that stopped, as
 * events for the message line (events.h); the status line keeps saying how things are
 * now. */
static void tell_changes(dt_thread *t)
{
	double when = t->have_scene ? t->scene_time : -1.0;
	dve_watch_update(&t->watch, t->source, now_ns(), when);
	const char *rec = dev_record_error(t->source);
	if (rec[0] && !t->said_record) {
		ev_post(EV_ERROR, when, NULL, "%s", rec);
		t->said_record = true;
	}
}

static void publish(dt_thread *t)
{
	dt_status *s = &t->status;
	s->state = dev_get_state(t->source);
	tell_changes(t);
	snprintf(s->line, sizeof s->line, "%s", dev_describe(t->source));
	s->pointer = t->pointer;
	s->output = t->output;
	s->ignored_jumps = t->stylus.ignored_jumps;
}

static void *run(void *arg)
{
	dt_thread *t = arg;
	dev_sample samples[BATCH];
	/* a signal: no more samples, so the run ends with the grab where it stands; dt_stop
	 * still joins the thread and closes the source (and its recording) */
	while (!atomic_load(&t->quit) && !stop_requested()) {
		if (t->waits) {
			/* The window, the renderer and the simulation start after the source opens,
			 * which can take longer than a script's approach (a second, on a loaded
			 * machine): a press before the stylus has a scene to meet grabs nothing. */
			pthread_mutex_lock(&t->lock);
			t->waits = !(t->sim && t->have_scene);
			pthread_mutex_unlock(&t->lock);
		}
		if (t->ended || t->waits) {
			nap(MAX_NAP_NS);
			continue;
		}
		/* one at a time from a fast source, so that each waits for its own time */
		int n = dev_poll(t->source, samples, t->fast ? 1 : BATCH, POLL_MS);
		if (n > 0 && t->fast && !pace(t, samples[0].t_ns))
			break;
		pthread_mutex_lock(&t->lock);
		if (n < 0) {
			t->ended = true;
			/* no later poll will say what the pacing held back */
			dve_watch_flush(&t->watch, t->source, t->have_scene ? t->scene_time : -1.0);
			trk_tracker_freeze(&t->tracker, dev_describe(t->source));
		} else if (n == 0) {
			/* the tracker's own timeout says "no sample for N ms"; an unplugged device
			 * says more, and the driver keeps reconnecting meanwhile */
			dev_state state = dev_get_state(t->source);
			if (state == DEV_DISCONNECTED || state == DEV_FAILED)
				trk_tracker_freeze(&t->tracker, dev_describe(t->source));
		}
		int stylus = 0;
		for (int i = 0; i < n; i++)
			stylus += route(t, &samples[i]);
		/* also when only the camera's samples came: the stylus's quiet must still
		 * freeze its pointer */
		if (stylus == 0)
			trk_tracker_update(&t->tracker, NULL, 0, sty_near_object(&t->output), now_ns() - t->offset_ns,
			                   &t->pointer);
		publish(t);
		pthread_mutex_unlock(&t->lock);
	}
	return NULL;
}

static void close_source(dt_thread *t)
{
	if (t->owns_source)
		dev_close(&t->source);
	t->source = NULL;
}

dt_thread *dt_start(const sty_feed_options *o, int camera_station, char *error, int error_size)
{
	return dt_start_attached(o, camera_station, NULL, NULL, error, error_size);
}

dt_thread *dt_start_attached(const sty_feed_options *o, int camera_station, st_thread *sim, const st_layout *layout,
                             char *error, int error_size)
{
	dt_thread *t = calloc(1, sizeof *t);
	if (!t) {
		snprintf(error, (size_t)error_size, "out of memory");
		return NULL;
	}
	trk_tracker_config tc;
	sty_config sc;
	t->source = sty_source_open(o, &tc, &sc, error, error_size);
	if (!t->source) {
		free(t);
		return NULL;
	}
	t->owns_source = t->source != o->source;
	/* any station until the first one reports (route) */
	tc.sensor = -1;
	trk_tracker_init(&t->tracker, &tc);
	t->camera_station = camera_station > 0 ? camera_station : 0;
	t->status.camera.station = t->camera_station;
	t->camera_calibration = tc.calibration;
	memset(t->camera_calibration.tip, 0, sizeof t->camera_calibration.tip);
	sty_init(&t->stylus, &sc);
	t->fast = sty_spec_is_fast(o->spec);
	t->waits = sty_spec_is_scripted(o->spec);
	/* a live source's samples carry the host clock already */
	t->have_offset = !t->fast;
	t->output.hover = t->output.grabbed = t->output.released = -1;
	t->status.sphere_radius = o->stylus.sphere_radius;
	trk_tracker_update(&t->tracker, NULL, 0, false, now_ns(), &t->pointer);
	/* how the source starts is the status line's to say; changes from it are events */
	t->status.state = dev_get_state(t->source);
	dve_watch_init(&t->watch, t->source);
	publish(t);
	atomic_init(&t->quit, false);
	if (pthread_mutex_init(&t->lock, NULL) != 0) {
		close_source(t);
		free(t);
		snprintf(error, (size_t)error_size, "cannot create a mutex");
		return NULL;
	}
	if (sim)
		dt_attach(t, sim, layout);
	if (pthread_create(&t->thread, NULL, run, t) != 0) {
		dt_attach(t, NULL, NULL);
		pthread_mutex_destroy(&t->lock);
		close_source(t);
		free(t);
		snprintf(error, (size_t)error_size, "cannot start the device thread");
		return NULL;
	}
	return t;
}

static void free_scene(dt_thread *t)
{
	free(t->positions);
	free(t->obstacle_pose);
	free(t->meshes);
	free(t->obstacles);
	t->positions = NULL, t->obstacle_pose = NULL, t->meshes = NULL, t->obstacles = NULL;
	t->have_scene = false;
}

void dt_stop(dt_thread **tp)
{
	dt_thread *t = tp ? *tp : NULL;
	if (!t)
		return;
	atomic_store(&t->quit, true);
	pthread_join(t->thread, NULL);
	close_source(t);
	free_scene(t);
	pthread_mutex_destroy(&t->lock);
	free(t);
	*tp = NULL;
}

/* Under the lock. */
static void drop(dt_thread *t)
{
	sty_drop(&t->stylus);
	t->output.grabbed = t->output.hover = -1;
	t->output.grab = t->output.release = false;
	t->status.output = t->output;
}

void dt_attach(dt_thread *t, st_thread *sim, const st_layout *layout)
{
	pthread_mutex_lock(&t->lock);
	drop(t);
	free_scene(t);
	t->sim = NULL;
	t->layout = NULL;
	if (sim && layout) {
		size_t n = layout->vertex_count > 0 ? (size_t)layout->vertex_count : 1;
		size_t obstacles = layout->obstacle_count > 0 ? (size_t)layout->obstacle_count : 1;
		t->positions = malloc(n * sizeof *t->positions);
		t->obstacle_pose = malloc(obstacles * sizeof *t->obstacle_pose);
		t->meshes = calloc((size_t)layout->object_count + 1, sizeof *t->meshes);
		t->obstacles = calloc(obstacles, sizeof *t->obstacles);
		if (t->positions && t->obstacle_pose && t->meshes && t->obstacles) {
			t->sim = sim;
			t->layout = layout;
		} else {
			free_scene(t);
			fprintf(stderr, "tela: out of memory: the stylus drives nothing\n");
		}
	}
	pthread_mutex_unlock(&t->lock);
}

void dt_set_scene(dt_thread *t, const st_snapshot *s)
{
	pthread_mutex_lock(&t->lock);
	if (t->sim && (!t->have_scene || s->serial != t->scene_serial) && s->vertex_count == t->layout->vertex_count &&
	    s->obstacle_count == t->layout->obstacle_count) {
		memcpy(t->positions, s->positions, sizeof *t->positions * (size_t)s->vertex_count);
		if (s->obstacle_count > 0)
			memcpy(t->obstacle_pose, s->obstacle_pose, sizeof *t->obstacle_pose * (size_t)s->obstacle_count);
		t->scene_serial = s->serial;
		t->scene_time = s->time;
		t->have_scene = true;
	}
	pthread_mutex_unlock(&t->lock);
}

void dt_drop(dt_thread *t, const st_command *then)
{
	pthread_mutex_lock(&t->lock);
	drop(t);
	if (then && t->sim)
		st_send(t->sim, then);
	pthread_mutex_unlock(&t->lock);
}

void dt_get_status(dt_thread *t, dt_status *out)
{
	pthread_mutex_lock(&t->lock);
	*out = t->status;
	pthread_mutex_unlock(&t->lock);
}
