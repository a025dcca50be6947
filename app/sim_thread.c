/* The demo's simulation thread (sim_thread.h).
 *
 * Ownership: after st_start returns, the world, the schedule and the writer's side of the
 * triple buffer belong to the simulation thread alone; other threads reach it only through
 * the command queue (a mutex and a condition variable, so a paused thread sleeps), the
 * pointer (its own mutex, read once per step) and the triple buffer (one atomic exchange
 * on each side, so neither the writer nor the reader ever waits for the other). */
#define _POSIX_C_SOURCE 200809L

#include "sim_thread.h"

#include "events.h"
#include "grab.h"
#include "stop.h"

#include <math.h>
#include <pthread.h>
#include <stdarg.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

enum {
	QUEUE_SIZE = 256,
	TIMING_WINDOW = 256, /* steps behind step_p50_us and step_p99_us */
	RATE_SAMPLES = 11,   /* 50 ms apart: the achieved rate spans the last half second */
};

#define NS_PER_S 1000000000LL
#define RATE_SAMPLE_NS (50 * 1000000LL)
/* Falling behind by less than this is caught up (a short hiccup of the OS should not
 * slow the demo down); by more, the backlog is dropped. */
#define BACKLOG_MIN_NS (50 * 1000000LL)
#define BACKLOG_STEPS 4
/* slow_motion stays set this long after the last dropped backlog, so a reader polling
 * at display rate sees it. */
#define SLOW_HOLD_NS NS_PER_S
/* The energies cost a force evaluation and the percentiles a sort: while running they are
 * refreshed at most this often, which is still faster than any display. */
#define REFRESH_NS (10 * 1000000LL)

/* Bit of `middle`: the slot it names holds a publication the reader has not taken yet. */
#define TB_DIRTY 4u
#define TB_SLOT 3u

struct st_thread {
	const scn_scene *scene;
	st_options options;
	st_layout layout;
	int64_t period_ns; /* wall time per step; 0: as fast as possible */
	float dt;          /* the step now in use; the thread's own once it runs */

	/* The simulation thread's own (st_start fills them before the thread exists). */
	sim_world *world;
	bool paused;
	grab grab; /* what the pointer holds (grab.vertex -1: nothing) */
	uint64_t grab_pointer_seq; /* pointer_seq at grab time: older pointers are not applied */
	uint64_t serial;
	uint64_t commands;    /* handled */
	int64_t next_due;     /* CLOCK_MONOTONIC ns of the next step */
	int64_t last_drop_ns; /* when the backlog was last dropped */
	bool dropped_once;
	int64_t executed;     /* steps attempted since start (a reset does not rewind it) */
	char message[256];
	char export_dir[256]; /* non-empty: every step's meshes are written there */
	unsigned debug_flags; /* ST_SET_DEBUG: what every publication carries */
	int debug_depth_min, debug_depth_max;
	float step_us[TIMING_WINDOW];
	int timing_count, timing_pos;
	int64_t rate_t[RATE_SAMPLES], rate_n[RATE_SAMPLES];
	int rate_count, rate_pos;
	int64_t last_refresh_ns;
	bool refresh_now;
	sim_stats stats;
	int64_t stats_steps;
	double p50_us, p99_us;

	/* The triple buffer: the writer owns slots[write_slot], the reader slots[read_slot],
	 * and `middle` names the third (TB_DIRTY when it is newer than the reader's). */
	st_snapshot slots[ST_SLOTS];
	int write_slot;
	int read_slot;
	atomic_uint middle;

	pthread_mutex_t lock; /* the queue and quit */
	pthread_cond_t wake;  /* a command arrived, or quit */
	pthread_cond_t room;  /* the queue has room again */
	st_command queue[QUEUE_SIZE];
	int queue_head, queue_count;
	uint64_t sent; /* st_send calls queued so far (under lock) */
	bool quit;

	pthread_mutex_t pointer_lock;
	float pointer_position[3], pointer_velocity[3];
	uint64_t pointer_seq;
	/* st_measure_latency: the arrival times of the pointers set since the last step (the
	 * oldest ST_LATENCY_PENDING), and each one's arrival-to-step time once a step read
	 * them.  Under pointer_lock. */
	bool measure_latency;
	int64_t pending_arrival[ST_LATENCY_PENDING];
	int pending_arrivals;
	uint64_t lost_arrivals;
	double *latency_ms;
	size_t latency_count, latency_cap;

	/* issue 7: the alternative stepper (options.stepper) */
	bool use_stepper, stepper_begun, stepper_last;
	int stepper_refused; /* the integrator the stepper last refused, -1: none */

	pthread_t thread;
	bool started;
	bool sync_ready; /* the mutexes and condition variables exist */
};

static int64_t now_ns(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (int64_t)ts.tv_sec * NS_PER_S + ts.tv_nsec;
}

static struct timespec to_timespec(int64_t ns)
{
	struct timespec ts = {.tv_sec = (time_t)(ns / NS_PER_S), .tv_nsec = (long)(ns % NS_PER_S)};
	return ts;
}

st_options st_options_default(void)
{
	sim_attachment_def a = sim_attachment_def_default(0);
	return (st_options){.start_paused = false, .rate_scale = 1.0, .grab_hertz = a.hertz,
	                    .grab_max_force = a.max_force};
}

/* ---- the layout ----------------------------------------------------------------------------- */

static void free_layout(st_layout *l)
{
	for (int i = 0; i < l->object_count; i++)
		free((void *)l->objects[i].triangles);
	for (int i = 0; i < l->obstacle_count; i++) {
		free((void *)l->obstacles[i].def.name);
		free((void *)l->obstacles[i].def.positions);
		free((void *)l->obstacles[i].def.triangles);
	}
	free(l->objects);
	free(l->obstacles);
	free(l->driven);
	memset(l, 0, sizeof *l);
}

static void *copy_bytes(const void *src, size_t bytes, bool *ok)
{
	if (!src || bytes == 0)
		return NULL;
	void *p = malloc(bytes);
	if (!p)
		*ok = false;
	else
		memcpy(p, src, bytes);
	return p;
}

/* Everything copied, so that the layout outlives any world (reset rebuilds it). */
static bool build_layout(st_layout *l, const scn_scene *scene, const sim_world *w)
{
	const scn_info *info = scn_scene_info(scene);
	snprintf(l->scene, sizeof l->scene, "%s", info->name ? info->name : "");
	l->dt = info->dt;
	l->vertex_count = sim_world_vertex_count(w);
	scn_scene_view(scene, l->camera_position, l->camera_target, &l->camera_fov);

	l->driven = malloc((size_t)(l->vertex_count > 0 ? l->vertex_count : 1));
	if (!l->driven)
		return false;
	sim_world_driven_vertices(w, l->driven);

	bool ok = true;
	int objects = sim_world_object_count(w);
	if (objects > 0) {
		l->objects = calloc((size_t)objects, sizeof *l->objects);
		if (!l->objects)
			return false;
		l->object_count = objects;
	}
	for (int i = 0; i < objects; i++) {
		st_object *o = &l->objects[i];
		const char *name = sim_world_object_name(w, i);
		snprintf(o->name, sizeof o->name, "%s", name ? name : "");
		o->first_vertex = sim_world_object_first_vertex(w, i);
		o->vertex_count = sim_world_object_vertex_count(w, i);
		o->triangle_count = sim_world_object_triangle_count(w, i);
		o->triangles = copy_bytes(sim_world_object_triangles(w, i), sizeof(int) * 3 * (size_t)o->triangle_count,
		                          &ok);
		scn_scene_cloth_color(scene, i, o->color);
		o->material = *sim_world_object_material(w, i);
	}
	int obstacles = sim_world_obstacle_count(w);
	if (obstacles > 0) {
		l->obstacles = calloc((size_t)obstacles, sizeof *l->obstacles);
		if (!l->obstacles)
			return false;
		l->obstacle_count = obstacles;
	}
	for (int i = 0; i < obstacles; i++) {
		st_obstacle *o = &l->obstacles[i];
		const sim_obstacle_def *d = sim_world_obstacle(w, i);
		o->def = *d;
		o->def.name = d->name ? copy_bytes(d->name, strlen(d->name) + 1, &ok) : NULL;
		o->def.positions = copy_bytes(d->positions, sizeof(float) * 3 * (size_t)d->vertex_count, &ok);
		o->def.triangles = copy_bytes(d->triangles, sizeof(int) * 3 * (size_t)d->triangle_count, &ok);
		scn_scene_obstacle_color(scene, i, o->color);
	}
	return ok;
}

/* ---- publication ---------------------------------------------------------------------------- */

static bool alloc_snapshot(st_snapshot *s, int vertices, int obstacles)
{
	s->vertex_count = vertices;
	s->obstacle_count = obstacles;
	s->grabbed_vertex = -1;
	/* at least one element, so that NULL always means "out of memory" */
	s->positions = malloc(sizeof(vec4) * (size_t)(vertices > 0 ? vertices : 1));
	s->velocities = malloc(sizeof(vec3) * (size_t)(vertices > 0 ? vertices : 1));
	s->obstacle_pose = malloc(sizeof *s->obstacle_pose * (size_t)(obstacles > 0 ? obstacles : 1));
	return s->positions && s->velocities && s->obstacle_pose;
}

static void free_snapshot(st_snapshot *s)
{
	free(s->positions);
	free(s->velocities);
	free(s->obstacle_pose);
	free(s->debug_pairs);
	free(s->debug_obstacle_vertices);
	free(s->debug_predicted_store);
	free(s->debug_boxes);
}

bool st_layout_build(st_layout *l, const scn_scene *scene, const sim_world *w)
{
	memset(l, 0, sizeof *l);
	if (build_layout(l, scene, w))
		return true;
	free_layout(l);
	return false;
}

void st_layout_free(st_layout *l) { free_layout(l); }

int st_pick_free_corner(const st_layout *l, const vec4 *positions)
{
	for (int ob = 0; ob < l->object_count; ob++) {
		const st_object *o = &l->objects[ob];
		double c[3] = {0.0, 0.0, 0.0};
		for (int i = 0; i < o->vertex_count; i++)
			for (int k = 0; k < 3; k++)
				c[k] += positions[o->first_vertex + i][k] / o->vertex_count;
		int best = -1;
		double best_d = -1.0;
		for (int i = o->first_vertex; i < o->first_vertex + o->vertex_count; i++) {
			/* w alone is not enough: before the first step it is every vertex's free
			 * inverse mass, pinned or not */
			if (l->driven[i] || !(positions[i][3] > 0.0f))
				continue;
			double d = 0.0;
			for (int k = 0; k < 3; k++)
				d += (positions[i][k] - c[k]) * (positions[i][k] - c[k]);
			if (d > best_d + 1e-12)
				best = i, best_d = d;
		}
		if (best >= 0)
			return best;
	}
	return -1;
}

bool st_snapshot_alloc(st_snapshot *s, const st_layout *l)
{
	memset(s, 0, sizeof *s);
	if (alloc_snapshot(s, l->vertex_count, l->obstacle_count))
		return true;
	free_snapshot(s);
	return false;
}

void st_snapshot_free(st_snapshot *s) { free_snapshot(s); }

static int compare_float(const void *a, const void *b)
{
	float x = *(const float *)a, y = *(const float *)b;
	return (x > y) - (x < y);
}

static void refresh_percentiles(st_thread *t)
{
	int n = t->timing_count;
	if (n == 0) {
		t->p50_us = t->p99_us = 0.0;
		return;
	}
	float sorted[TIMING_WINDOW];
	memcpy(sorted, t->step_us, sizeof(float) * (size_t)n);
	qsort(sorted, (size_t)n, sizeof(float), compare_float);
	t->p50_us = sorted[(n - 1) / 2];
	t->p99_us = sorted[(int)((double)(n - 1) * 0.99 + 0.5)];
}

static void rate_sample(st_thread *t, int64_t now)
{
	int last = (t->rate_pos + RATE_SAMPLES - 1) % RATE_SAMPLES;
	if (t->rate_count > 0 && now - t->rate_t[last] < RATE_SAMPLE_NS)
		return;
	t->rate_t[t->rate_pos] = now;
	t->rate_n[t->rate_pos] = t->executed;
	t->rate_pos = (t->rate_pos + 1) % RATE_SAMPLES;
	if (t->rate_count < RATE_SAMPLES)
		t->rate_count++;
}

/* After a pause or a reset the window starts afresh: the rate shown is the rate since. */
static void rate_restart(st_thread *t, int64_t now)
{
	t->rate_count = 0;
	t->rate_pos = 0;
	rate_sample(t, now);
}

static double achieved_hz(const st_thread *t, int64_t now)
{
	if (t->paused || t->rate_count == 0)
		return 0.0;
	int oldest = (t->rate_pos + RATE_SAMPLES - t->rate_count) % RATE_SAMPLES;
	int64_t span = now - t->rate_t[oldest];
	/* a few milliseconds hold too few steps to say anything */
	if (span < 20 * 1000000LL)
		return 0.0;
	return (double)(t->executed - t->rate_n[oldest]) * 1e9 / (double)span;
}

void st_snapshot_capture(st_snapshot *s, const sim_world *w)
{
	int n = s->vertex_count;
	memcpy(s->positions, sim_world_positions(w), sizeof(vec4) * (size_t)n);
	const vec4 *v = sim_world_velocities(w);
	for (int i = 0; i < n; i++) {
		s->velocities[i][0] = v[i][0];
		s->velocities[i][1] = v[i][1];
		s->velocities[i][2] = v[i][2];
	}
	for (int i = 0; i < s->obstacle_count; i++) {
		vec3 p = {0};
		versor q = {0, 0, 0, 1};
		sim_world_obstacle_pose(w, i, p, q);
		float *pose = s->obstacle_pose[i];
		pose[0] = p[0], pose[1] = p[1], pose[2] = p[2];
		pose[3] = q[0], pose[4] = q[1], pose[5] = q[2], pose[6] = q[3];
	}
	s->steps = sim_world_step_count(w);
	s->time = sim_world_time(w);
	s->def = *sim_world_get_def(w);
}

/* Grows a debug array to hold `needed` elements, doubling (so a growing count
 * reallocates a few times only), never past `most`. */
static bool grow_debug(void **p, int *capacity, int needed, int most, size_t elem)
{
	needed = needed < most ? needed : most;
	if (needed <= *capacity)
		return true;
	int cap = *capacity ? *capacity : 1024;
	while (cap < needed)
		cap = cap > most / 2 ? most : 2 * cap;
	void *q = realloc(*p, elem * (size_t)cap);
	if (!q)
		return false;
	*p = q;
	*capacity = cap;
	return true;
}

bool st_snapshot_capture_debug(st_snapshot *s, const sim_world *w, unsigned flags, int depth_min, int depth_max)
{
	bool ok = true;
	s->debug_flags = flags;
	s->debug_pair_count = 0;
	s->debug_pairs_truncated = false;
	s->debug_obstacle_vertex_count = 0;
	s->debug_predicted = NULL;
	s->debug_depth_min = depth_min;
	s->debug_depth_max = depth_max;
	s->debug_tree_depth = -1;
	s->debug_box_count = 0;
	s->debug_boxes_truncated = false;

	if (flags & ST_DEBUG_PAIRS) {
		const sim_debug_pair *pairs = NULL;
		bool truncated = false;
		int n = sim_world_debug_pairs(w, &pairs, &truncated);
		if (!grow_debug((void **)&s->debug_pairs, &s->debug_pair_capacity, n, SIM_DEBUG_MAX_PAIRS,
		                sizeof *s->debug_pairs)) {
			ok = false;
			truncated = true;
			n = s->debug_pair_capacity;
		}
		if (n > 0)
			memcpy(s->debug_pairs, pairs, sizeof *s->debug_pairs * (size_t)n);
		s->debug_pair_count = n;
		s->debug_pairs_truncated = truncated;
		/* the pairs' obstacle vertices, where they are now */
		int m = sim_world_debug_obstacle_vertices(w, s->debug_obstacle_vertices, s->debug_obstacle_vertex_capacity);
		if (m > s->debug_obstacle_vertex_capacity) {
			if (grow_debug((void **)&s->debug_obstacle_vertices, &s->debug_obstacle_vertex_capacity, m, m,
			               sizeof *s->debug_obstacle_vertices))
				sim_world_debug_obstacle_vertices(w, s->debug_obstacle_vertices, s->debug_obstacle_vertex_capacity);
			else
				ok = false, m = 0, s->debug_pair_count = 0, s->debug_pairs_truncated = true;
		}
		s->debug_obstacle_vertex_count = m;
	}
	const vec4 *predicted = (flags & ST_DEBUG_PREDICTED) ? sim_world_debug_predicted(w) : NULL;
	if (predicted && s->vertex_count > 0) {
		if (!s->debug_predicted_store)
			s->debug_predicted_store = malloc(sizeof(vec4) * (size_t)s->vertex_count);
		if (s->debug_predicted_store) {
			memcpy(s->debug_predicted_store, predicted, sizeof(vec4) * (size_t)s->vertex_count);
			s->debug_predicted = s->debug_predicted_store;
		} else {
			ok = false;
		}
	}
	if (flags & ST_DEBUG_BOXES) {
		s->debug_tree_depth = sim_world_debug_tree_depth(w);
		int cap = s->debug_box_capacity < ST_DEBUG_MAX_BOXES ? s->debug_box_capacity : ST_DEBUG_MAX_BOXES;
		int n = sim_world_debug_boxes(w, depth_min, depth_max, s->debug_boxes, cap);
		if (n > cap) {
			/* the count is known now: one more walk fills the grown array */
			if (grow_debug((void **)&s->debug_boxes, &s->debug_box_capacity, n, ST_DEBUG_MAX_BOXES,
			               sizeof *s->debug_boxes)) {
				cap = s->debug_box_capacity < ST_DEBUG_MAX_BOXES ? s->debug_box_capacity : ST_DEBUG_MAX_BOXES;
				sim_world_debug_boxes(w, depth_min, depth_max, s->debug_boxes, cap);
			} else {
				ok = false;
			}
		}
		s->debug_box_count = n < cap ? n : cap;
		s->debug_boxes_truncated = n > cap;
	}
	return ok;
}

static void publish(st_thread *t)
{
	int64_t now = now_ns();
	const sim_world *w = t->world;
	st_snapshot *s = &t->slots[t->write_slot];
	st_snapshot_capture(s, w);
	/* out of memory shows as truncated (or missing) debug data; the simulation goes on */
	(void)st_snapshot_capture_debug(s, w, t->debug_flags, t->debug_depth_min, t->debug_depth_max);
	if (t->refresh_now || t->paused || now - t->last_refresh_ns >= REFRESH_NS) {
		t->stats = *sim_world_stats(w);
		t->stats_steps = sim_world_step_count(w);
		refresh_percentiles(t);
		t->last_refresh_ns = now;
		t->refresh_now = false;
	}
	s->stats = t->stats;
	s->stats_steps = t->stats_steps;
	s->dt = t->dt;
	s->paused = t->paused;
	s->achieved_hz = achieved_hz(t, now);
	s->target_hz = t->period_ns > 0 ? 1e9 / (double)t->period_ns : 0.0;
	s->step_p50_us = t->p50_us;
	s->step_p99_us = t->p99_us;
	s->slow_motion = !t->paused && t->dropped_once && now - t->last_drop_ns < SLOW_HOLD_NS;
	s->grabbed_vertex = t->grab.vertex;
	s->grabbed_count = t->grab.count;
	grab_force(&t->grab, w, s->grab_force);
	s->stepper_on = t->stepper_last;
	s->gpu_draw = (st_gpu_draw){.slot = -1};
	const st_stepper *sp = t->options.stepper;
	if (t->use_stepper && t->stepper_last && sp->publish) {
		st_gpu_draw g = {.slot = t->write_slot};
		if (sp->publish(sp->user, w, t->write_slot, &g) && g.buffer)
			s->gpu_draw = g;
	}
	memcpy(s->message, t->message, sizeof s->message);
	s->commands = t->commands;
	s->serial = ++t->serial;

	/* release: the reader that takes this slot sees everything written above */
	unsigned old = atomic_exchange_explicit(&t->middle, (unsigned)t->write_slot | TB_DIRTY, memory_order_acq_rel);
	t->write_slot = (int)(old & TB_SLOT);
}

const st_snapshot *st_latest(st_thread *t)
{
	if (atomic_load_explicit(&t->middle, memory_order_relaxed) & TB_DIRTY) {
		unsigned old = atomic_exchange_explicit(&t->middle, (unsigned)t->read_slot, memory_order_acq_rel);
		t->read_slot = (int)(old & TB_SLOT);
	}
	return &t->slots[t->read_slot];
}

/* ---- stepping and commands ------------------------------------------------------------------ */

/* The snapshot's message and an event for the message line (events.h) at simulated time
 * `when` (negative: the world's now); `key` groups repeats (NULL: the text does). */
static void tell(st_thread *t, ev_level level, double when, const char *key, const char *fmt, va_list ap)
{
	char text[EV_TEXT];
	vsnprintf(text, sizeof text, fmt, ap);
	double now = when >= 0.0 ? when : t->world ? sim_world_time(t->world) : 0.0;
	ev_post(level, now, key, "%s", text);
	/* what went wrong keeps its time in the snapshot's message too (a headless summary
	 * prints it); an answer to a command is plain */
	ev_event e = {.sim_time = level == EV_INFO ? -1.0 : now, .count = 1};
	snprintf(e.text, sizeof e.text, "%s", text);
	ev_format(&e, t->message, (int)sizeof t->message);
}

static void say(st_thread *t, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static void say(st_thread *t, const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	tell(t, EV_INFO, -1.0, NULL, fmt, ap);
	va_end(ap);
}

static void warn(st_thread *t, double when, const char *key, const char *fmt, ...)
    __attribute__((format(printf, 4, 5)));
static void warn(st_thread *t, double when, const char *key, const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	tell(t, EV_WARNING, when, key, fmt, ap);
	va_end(ap);
}

static void release_grab(st_thread *t)
{
	grab_release(&t->grab, t->world);
}

/* Every pointer set since the previous step is used by this one, which starts now. */
static void consume_arrivals(st_thread *t, int64_t step_start)
{
	pthread_mutex_lock(&t->pointer_lock);
	for (int i = 0; i < t->pending_arrivals; i++) {
		if (t->latency_count == t->latency_cap) {
			size_t cap = t->latency_cap ? 2 * t->latency_cap : 4096;
			double *grown = realloc(t->latency_ms, cap * sizeof *grown);
			if (!grown) {
				t->lost_arrivals += (uint64_t)(t->pending_arrivals - i);
				break;
			}
			t->latency_ms = grown;
			t->latency_cap = cap;
		}
		t->latency_ms[t->latency_count++] = (double)(step_start - t->pending_arrival[i]) * 1e-6;
	}
	t->pending_arrivals = 0;
	pthread_mutex_unlock(&t->pointer_lock);
}

/* sim_world_step, or the alternative stepper while selected (issue 7); a world the
 * stepper refuses (a scheme it lacks) steps on the CPU, said once per integrator. */
static sim_result step_world(st_thread *t)
{
	t->stepper_last = false;
	if (t->use_stepper) {
		const st_stepper *sp = t->options.stepper;
		sim_result r = sp->step(sp->user, t->world, t->dt);
		if (r != SIM_ERROR_INVALID) {
			t->stepper_last = true;
			t->stepper_refused = -1;
			return r;
		}
		int integ = (int)sim_world_get_def(t->world)->integrator;
		if (t->stepper_refused != integ)
			warn(t, -1.0, "stepper", "the %s cannot step with %s; the CPU steps", sp->name,
			     sim_integrator_name((sim_integrator)integ));
		t->stepper_refused = integ;
	}
	return sim_world_step(t->world, t->dt);
}

static void set_stepper(st_thread *t, bool on)
{
	const st_stepper *sp = t->options.stepper;
	if (!on || !sp) {
		if (t->use_stepper)
			say(t, "integrator on the CPU");
		else if (on)
			say(t, "no other integrator backend in this build");
		t->use_stepper = false;
		return;
	}
	if (!t->stepper_begun) {
		char why[200] = "";
		if (!sp->begin(sp->user, why, sizeof why)) {
			warn(t, -1.0, "stepper", "the %s is not available (%.150s); the CPU steps", sp->name, why);
			return;
		}
		t->stepper_begun = true;
	}
	t->use_stepper = true;
	t->stepper_refused = -1;
	say(t, "integrator on the %s", sp->name);
}

static void do_step(st_thread *t)
{
	if (t->measure_latency)
		consume_arrivals(t, now_ns());
	if (t->grab.vertex >= 0) {
		float p[3], v[3];
		bool fresh;
		pthread_mutex_lock(&t->pointer_lock);
		fresh = t->pointer_seq != t->grab_pointer_seq;
		memcpy(p, t->pointer_position, sizeof p);
		memcpy(v, t->pointer_velocity, sizeof v);
		pthread_mutex_unlock(&t->pointer_lock);
		/* a non-finite pointer is refused by sim and the last target kept */
		if (fresh)
			grab_set_target(&t->grab, t->world, p, v);
	}

	int64_t t0 = now_ns();
	sim_result r = step_world(t);
	int64_t t1 = now_ns();
	t->step_us[t->timing_pos] = (float)((double)(t1 - t0) * 1e-3);
	t->timing_pos = (t->timing_pos + 1) % TIMING_WINDOW;
	if (t->timing_count < TIMING_WINDOW)
		t->timing_count++;
	t->executed++;
	rate_sample(t, t1);

	if (r == SIM_ERROR_BLOWUP) {
		/* the world is back at its last good state; continue from it without the motion
		 * that diverged (the snapshot never shows the failed state) */
		const sim_blowup *b = sim_world_last_blowup(t->world);
		const char *name = sim_world_object_name(t->world, b->object);
		char value[32] = "";
		if (isfinite(b->value))
			snprintf(value, sizeof value, " %.3g", (double)b->value);
		/* at the time of the step that failed, as `tela run` says it */
		warn(t, sim_world_time(t->world) + (double)t->dt, "blow-up",
		     "blow-up in '%s' vertex %d (%s%s); recovered; to keep it stable try %smore substeps or strain "
		     "limiting (panel)",
		     name ? name : "?", b->vertex, b->reason ? b->reason : "?", value,
		     sim_world_get_def(t->world)->integrator == SIM_IMPLICIT ? "" : "the implicit integrator (key 6), ");
		sim_world_recover(t->world, b->object);
		t->refresh_now = true;
	} else if (r != SIM_OK) {
		/* out of memory in the implicit solver: stepping again would fail again */
		warn(t, -1.0, NULL, "step failed (%s); paused", sim_result_string(r));
		t->paused = true;
		t->refresh_now = true;
	}
	if (t->export_dir[0]) {
		/* on this thread, so that no step is missed; the time it takes shows in the
		 * step time and, if it is too long, as slow motion */
		scn_error err = {0};
		if (scn_export_frame(t->world, t->export_dir, (long)sim_world_step_count(t->world), &err) != SCN_OK) {
			warn(t, -1.0, NULL, "mesh export stopped: %.200s", err.message);
			t->export_dir[0] = '\0';
		}
	}
}

static void do_reset(st_thread *t)
{
	sim_world *fresh = NULL;
	scn_error err = {0};
	if (scn_build(t->scene, &fresh, &err) != SCN_OK) {
		say(t, "reset failed: %s", err.message);
		return;
	}
	if (sim_world_vertex_count(fresh) != t->layout.vertex_count ||
	    sim_world_obstacle_count(fresh) != t->layout.obstacle_count) {
		sim_world_destroy(&fresh);
		say(t, "reset failed: the scene built a different world");
		return;
	}
	/* the grab belonged to the old world */
	grab_init(&t->grab);
	sim_world_destroy(&t->world);
	t->world = fresh;
	sim_world_set_debug(t->world, t->debug_flags & (ST_DEBUG_PAIRS | ST_DEBUG_PREDICTED));
	t->timing_count = t->timing_pos = 0;
	say(t, "reset");
}

static void execute(st_thread *t, const st_command *c)
{
	t->commands++;
	switch (c->kind) {
	case ST_PLAY:
		if (t->paused) {
			t->paused = false;
			t->next_due = now_ns();
			rate_restart(t, t->next_due);
		}
		break;
	case ST_PAUSE:
		/* a backlog dropped before the pause says nothing about the paused demo */
		t->paused = true;
		t->dropped_once = false;
		break;
	case ST_STEP:
		t->paused = true;
		do_step(t);
		publish(t);
		break;
	case ST_RESET:
		do_reset(t);
		/* the scene's own step comes back with the scene */
		t->dt = t->layout.dt;
		t->period_ns = (int64_t)llround((double)t->dt * t->options.rate_scale * 1e9);
		t->next_due = now_ns();
		rate_restart(t, t->next_due);
		break;
	case ST_SET_DEF: {
		sim_integrator before = sim_world_get_def(t->world)->integrator;
		sim_result r = sim_world_set_def(t->world, &c->def);
		if (r != SIM_OK)
			say(t, "settings refused: %s", sim_result_string(r));
		else if (c->def.integrator != before)
			say(t, "integrator: %s", sim_integrator_name(c->def.integrator));
		break;
	}
	case ST_GRAB: {
		int id = grab_start(&t->grab, t->world, c->vertex, t->options.grab_radius, t->options.grab_hertz,
		                    t->options.grab_max_force);
		if (id < 0) {
			say(t, "cannot grab vertex %d: %s", c->vertex, sim_result_string((sim_result)id));
			break;
		}
		/* the target stays where the vertex is until the pointer moves after the grab */
		pthread_mutex_lock(&t->pointer_lock);
		t->grab_pointer_seq = t->pointer_seq;
		pthread_mutex_unlock(&t->pointer_lock);
		break;
	}
	case ST_RELEASE:
		release_grab(t);
		break;
	case ST_SET_DT:
		if (!(c->dt >= 1e-6f && c->dt <= 0.1f)) {
			say(t, "dt %g s refused: it must be in [1e-6, 0.1] s", (double)c->dt);
			break;
		}
		t->dt = c->dt;
		t->period_ns = t->options.rate_scale > 0.0 ? (int64_t)llround((double)c->dt * t->options.rate_scale * 1e9) : 0;
		t->next_due = now_ns();
		rate_restart(t, t->next_due);
		say(t, "dt %.3g ms", 1e3 * (double)c->dt);
		break;
	case ST_EXPORT:
		snprintf(t->export_dir, sizeof t->export_dir, "%s", c->path);
		say(t, c->path[0] ? "exporting meshes into %s/ every step" : "mesh export stopped%s", c->path);
		break;
	case ST_SET_DEBUG:
		t->debug_flags = c->debug_flags & (ST_DEBUG_PAIRS | ST_DEBUG_PREDICTED | ST_DEBUG_BOXES);
		t->debug_depth_min = c->debug_depth_min;
		t->debug_depth_max = c->debug_depth_max;
		sim_world_set_debug(t->world, t->debug_flags & (ST_DEBUG_PAIRS | ST_DEBUG_PREDICTED));
		break;
	case ST_SET_STEPPER:
		set_stepper(t, c->use_stepper);
		break;
	case ST_SET_MATERIAL: {
		sim_result r = sim_world_set_material(t->world, c->object, &c->material);
		if (r != SIM_OK)
			say(t, "material refused: %s", sim_result_string(r));
		break;
	}
	}
	t->refresh_now = true;
}

/* Takes the oldest command; false when there is none.  *quit is set when stopping. */
static bool pop_command(st_thread *t, st_command *out, bool *quit)
{
	pthread_mutex_lock(&t->lock);
	bool got = false;
	*quit = t->quit;
	if (!*quit && t->queue_count > 0) {
		*out = t->queue[t->queue_head];
		t->queue_head = (t->queue_head + 1) % QUEUE_SIZE;
		t->queue_count--;
		pthread_cond_signal(&t->room);
		got = true;
	}
	pthread_mutex_unlock(&t->lock);
	return got;
}

static void *thread_main(void *arg)
{
	st_thread *t = arg;
	t->next_due = now_ns();
	rate_restart(t, t->next_due);
	for (;;) {
		/* Commands run one at a time and outside the lock: a reset may take a while, and
		 * a STEP among them must step exactly where it stands in the queue. */
		st_command c;
		bool quit = false, any = false;
		while (pop_command(t, &c, &quit)) {
			execute(t, &c);
			any = true;
		}
		if (quit)
			break;
		if (any)
			publish(t);

		pthread_mutex_lock(&t->lock);
		bool wait_more = false;
		if (t->quit || t->queue_count > 0) {
			wait_more = true;
		} else if (t->paused || stop_requested()) {
			/* after a signal the run is ending: no step of its own, only what it is
			 * asked for, until st_stop */
			pthread_cond_wait(&t->wake, &t->lock);
			wait_more = true;
		} else if (t->period_ns > 0 && now_ns() < t->next_due) {
			/* an absolute deadline, so the schedule does not drift with wake-up latency;
			 * a command ends the wait early */
			struct timespec due = to_timespec(t->next_due);
			pthread_cond_timedwait(&t->wake, &t->lock, &due);
			wait_more = true;
		}
		pthread_mutex_unlock(&t->lock);
		if (wait_more)
			continue; /* look at the commands and the clock again */

		if (t->period_ns > 0) {
			int64_t now = now_ns();
			int64_t limit = BACKLOG_STEPS * t->period_ns;
			if (limit < BACKLOG_MIN_NS)
				limit = BACKLOG_MIN_NS;
			if (now - t->next_due > limit) {
				/* catching up would make every step later still: drop the backlog */
				t->next_due = now;
				t->last_drop_ns = now;
				t->dropped_once = true;
			}
		}
		do_step(t);
		t->next_due += t->period_ns;
		publish(t);
	}
	if (t->stepper_begun) /* on this thread, where begin ran */
		t->options.stepper->end(t->options.stepper->user);
	return NULL;
}

/* ---- start and stop ------------------------------------------------------------------------- */

static void destroy(st_thread *t)
{
	for (int i = 0; i < 3; i++)
		free_snapshot(&t->slots[i]);
	free_layout(&t->layout);
	sim_world_destroy(&t->world);
	free(t->latency_ms);
	if (t->sync_ready) {
		pthread_mutex_destroy(&t->lock);
		pthread_mutex_destroy(&t->pointer_lock);
		pthread_cond_destroy(&t->wake);
		pthread_cond_destroy(&t->room);
	}
	free(t);
}

static bool init_sync(st_thread *t)
{
	pthread_condattr_t attr;
	if (pthread_condattr_init(&attr) != 0)
		return false;
	/* the schedule is CLOCK_MONOTONIC; the default clock would jump with the wall time */
	bool ok = pthread_condattr_setclock(&attr, CLOCK_MONOTONIC) == 0;
	int made = 0;
	if (ok && pthread_mutex_init(&t->lock, NULL) == 0 && ++made && pthread_mutex_init(&t->pointer_lock, NULL) == 0 &&
	    ++made && pthread_cond_init(&t->wake, &attr) == 0 && ++made && pthread_cond_init(&t->room, NULL) == 0)
		made = 4;
	pthread_condattr_destroy(&attr);
	if (made == 4)
		return true;
	if (made > 0)
		pthread_mutex_destroy(&t->lock);
	if (made > 1)
		pthread_mutex_destroy(&t->pointer_lock);
	if (made > 2)
		pthread_cond_destroy(&t->wake);
	return false;
}

st_thread *st_start(const scn_scene *scene, const st_options *options, scn_error *err)
{
	st_options opt = options ? *options : st_options_default();
	st_options defaults = st_options_default();
	if (opt.grab_hertz == 0.0f)
		opt.grab_hertz = defaults.grab_hertz;
	if (opt.grab_max_force == 0.0f)
		opt.grab_max_force = defaults.grab_max_force;
	if (!(opt.rate_scale >= 0.0) || !isfinite(opt.rate_scale) || !(opt.grab_hertz > 0.0f) ||
	    !isfinite(opt.grab_hertz) || !(opt.grab_max_force > 0.0f)) {
		scn_fail(err, SCN_ERROR_PARSE, "simulation thread: bad options (rate_scale %g, grab %g Hz, %g N)",
		         opt.rate_scale, (double)opt.grab_hertz, (double)opt.grab_max_force);
		return NULL;
	}
	float dt = scn_scene_info(scene)->dt;
	if (!(dt > 0.0f) || !isfinite(dt)) {
		scn_fail(err, SCN_ERROR_PARSE, "simulation thread: the scene's step %g is not a step", (double)dt);
		return NULL;
	}

	st_thread *t = calloc(1, sizeof *t);
	if (!t) {
		scn_fail(err, SCN_ERROR_MEMORY, "simulation thread: out of memory");
		return NULL;
	}
	t->scene = scene;
	t->options = opt;
	t->paused = opt.start_paused;
	grab_init(&t->grab);
	t->refresh_now = true;
	t->stepper_refused = -1;
	t->dt = dt;
	t->period_ns = (int64_t)llround((double)dt * opt.rate_scale * 1e9);
	t->write_slot = 0;
	atomic_init(&t->middle, 1u);
	t->read_slot = 2;

	if (scn_build(scene, &t->world, err) != SCN_OK) {
		free(t);
		return NULL;
	}
	bool ok = build_layout(&t->layout, scene, t->world);
	for (int i = 0; i < 3 && ok; i++)
		ok = alloc_snapshot(&t->slots[i], t->layout.vertex_count, t->layout.obstacle_count);
	if (!ok) {
		destroy(t);
		scn_fail(err, SCN_ERROR_MEMORY, "simulation thread: out of memory");
		return NULL;
	}
	if (!init_sync(t)) {
		destroy(t);
		scn_fail(err, SCN_ERROR_MEMORY, "simulation thread: cannot create its locks");
		return NULL;
	}
	t->sync_ready = true;

	/* the initial state, so that st_latest has something to show from the start */
	publish(t);
	int rc = pthread_create(&t->thread, NULL, thread_main, t);
	if (rc != 0) {
		destroy(t);
		scn_fail(err, SCN_ERROR_MEMORY, "simulation thread: cannot start: %s", strerror(rc));
		return NULL;
	}
	t->started = true;
	return t;
}

void st_stop(st_thread **thread)
{
	if (!thread || !*thread)
		return;
	st_thread *t = *thread;
	if (t->started) {
		pthread_mutex_lock(&t->lock);
		t->quit = true;
		pthread_cond_broadcast(&t->wake);
		pthread_cond_broadcast(&t->room);
		pthread_mutex_unlock(&t->lock);
		pthread_join(t->thread, NULL);
	}
	destroy(t);
	*thread = NULL;
}

const st_layout *st_get_layout(st_thread *t) { return &t->layout; }

void st_send(st_thread *t, const st_command *command)
{
	pthread_mutex_lock(&t->lock);
	/* the thread drains the queue before every step, so a full queue empties quickly */
	while (t->queue_count == QUEUE_SIZE && !t->quit)
		pthread_cond_wait(&t->room, &t->lock);
	if (!t->quit) {
		t->queue[(t->queue_head + t->queue_count) % QUEUE_SIZE] = *command;
		t->queue_count++;
		t->sent++;
		pthread_cond_signal(&t->wake);
	}
	pthread_mutex_unlock(&t->lock);
}

uint64_t st_sent(st_thread *t)
{
	pthread_mutex_lock(&t->lock);
	uint64_t n = t->sent;
	pthread_mutex_unlock(&t->lock);
	return n;
}

void st_set_pointer(st_thread *t, const float position[3], const float velocity[3])
{
	st_set_pointer_at(t, position, velocity, 0);
}

void st_set_pointer_at(st_thread *t, const float position[3], const float velocity[3], int64_t arrived_ns)
{
	pthread_mutex_lock(&t->pointer_lock);
	if (t->measure_latency && arrived_ns > 0) {
		if (t->pending_arrivals < ST_LATENCY_PENDING)
			t->pending_arrival[t->pending_arrivals++] = arrived_ns;
		else
			t->lost_arrivals++;
	}
	memcpy(t->pointer_position, position, sizeof t->pointer_position);
	if (velocity)
		memcpy(t->pointer_velocity, velocity, sizeof t->pointer_velocity);
	else
		memset(t->pointer_velocity, 0, sizeof t->pointer_velocity);
	t->pointer_seq++;
	pthread_mutex_unlock(&t->pointer_lock);
}

void st_measure_latency(st_thread *t, bool on)
{
	pthread_mutex_lock(&t->pointer_lock);
	t->measure_latency = on;
	t->pending_arrivals = 0;
	pthread_mutex_unlock(&t->pointer_lock);
}

size_t st_latencies(st_thread *t, double *out, size_t capacity, uint64_t *lost)
{
	pthread_mutex_lock(&t->pointer_lock);
	size_t n = t->latency_count < capacity ? t->latency_count : capacity;
	if (n > 0)
		memcpy(out, t->latency_ms, n * sizeof *out);
	if (lost)
		*lost = t->lost_arrivals + (t->latency_count - n);
	pthread_mutex_unlock(&t->pointer_lock);
	return n;
}
