/* Issue 7: the hand-over of the demo's GPU draw buffers, without a GPU.  The simulation
 * thread calls st_stepper.publish with the snapshot slot it publishes into, and the demo
 * fills that slot's draw buffer there (app/demo_gpu.c); the window draws from the buffer
 * of the slot it holds.  This is safe only if the triple buffer never hands the writer
 * the slot the reader holds, and if what the reader wrote before letting go of a slot
 * (its fence, in the demo) is visible to the writer when it next fills that slot.  A fake
 * stepper here writes CPU "draw buffers" as the demo writes GL ones, and a reader on this
 * thread checks both promises while the simulation thread publishes as fast as it can. */
#define _POSIX_C_SOURCE 200809L

#include "test.h"

#include "scenes/scenes.h"
#include "sim/sim.h"
#include "sim_thread.h"
#include "sim_thread_fixtures.h"

#include <pthread.h>
#include <sched.h>
#include <stdatomic.h>
#include <stdint.h>
#include <time.h>

typedef struct probe {
	int vertex_count;
	vec4 *buffer[ST_SLOTS];  /* the fake draw buffers */
	uint64_t tag[ST_SLOTS];  /* which publication each holds (its "fence") */
	uint64_t tags;
	/* Atomics, so that a broken protocol shows as a failed check, not only as a race. */
	atomic_int writing[ST_SLOTS]; /* the writer is filling the slot's buffer */
	atomic_int held[ST_SLOTS];    /* the reader holds the slot's snapshot */
	atomic_long collisions;       /* publish into a slot the reader held */
	/* The reader's marks, plain ints like the demo's fences: holds of slot k begun, and
	 * holds of slot k ended (written before the st_latest call that lets go of k). */
	long begun[ST_SLOTS], ended[ST_SLOTS];
	atomic_long unseen_marks; /* publish(k) saw begun[k] != ended[k] */
	atomic_long calls;
	bool refuse; /* publish returns false */
} probe;

static bool probe_begin(void *user, char *message, int size)
{
	(void)user, (void)message, (void)size;
	return true;
}

static sim_result probe_step(void *user, sim_world *w, float dt)
{
	(void)user;
	if (sim_world_get_def(w)->integrator == SIM_MRA)
		return SIM_ERROR_INVALID; /* as the GPU refuses it */
	return sim_world_step(w, dt);
}

static void probe_end(void *user) { (void)user; }

static bool probe_publish(void *user, const sim_world *w, int slot, st_gpu_draw *out)
{
	probe *p = user;
	atomic_fetch_add(&p->calls, 1);
	if (p->refuse)
		return false;
	if (slot < 0 || slot >= ST_SLOTS)
		return false;
	if (atomic_load(&p->held[slot]))
		atomic_fetch_add(&p->collisions, 1);
	/* every hold of this slot the reader began, it ended, and we see that it did */
	if (p->begun[slot] != p->ended[slot])
		atomic_fetch_add(&p->unseen_marks, 1);
	atomic_store(&p->writing[slot], 1);
	const vec4 *x = sim_world_positions(w);
	int n = p->vertex_count, half = n / 2;
	/* in two halves with a yield between: a reader on the same slot would see a torn
	 * buffer, not only a flag */
	memcpy(p->buffer[slot], x, sizeof(vec4) * (size_t)half);
	sched_yield();
	memcpy(p->buffer[slot] + half, x + half, sizeof(vec4) * (size_t)(n - half));
	p->tag[slot] = ++p->tags;
	atomic_store(&p->writing[slot], 0);
	*out = (st_gpu_draw){.slot = slot, .buffer = 100u + (unsigned)slot, .fence = (void *)(uintptr_t)p->tag[slot]};
	return true;
}

static st_thread *start(const scn_scene *scene, const st_stepper *sp, bool paused)
{
	st_options o = st_options_default();
	o.start_paused = paused;
	o.rate_scale = 0.0; /* as fast as it can: the most publications against the reader */
	o.stepper = sp;
	scn_error err = {0};
	st_thread *t = st_start(scene, &o, &err);
	if (!t)
		fprintf(stderr, "st_start: %s\n", err.message);
	return t;
}

static bool alloc_probe(probe *p, int n)
{
	memset(p, 0, sizeof *p);
	p->vertex_count = n;
	for (int k = 0; k < ST_SLOTS; k++) {
		p->buffer[k] = calloc((size_t)n, sizeof(vec4));
		if (!p->buffer[k])
			return false;
	}
	return true;
}

static void free_probe(probe *p)
{
	for (int k = 0; k < ST_SLOTS; k++)
		free(p->buffer[k]);
}

/* The reader holds each snapshot as the window does (sometimes for a while, as a slow
 * frame would) and checks, at the start and at the end of the hold, that the slot's
 * buffer is not being written and still holds exactly the snapshot's state and tag. */
static void test_ring_never_hands_a_buffer_being_written(void)
{
	scn_scene *scene = load("hanging");
	REQUIRE(scene);
	probe p;
	st_stepper sp = {.name = "GPU", .begin = probe_begin, .step = probe_step, .end = probe_end,
	                 .publish = probe_publish};
	st_thread *t = start(scene, &sp, false);
	REQUIRE(t);
	int n = st_get_layout(t)->vertex_count;
	REQUIRE(n > 1 && alloc_probe(&p, n));
	sp.user = &p; /* read by the thread only once the stepper is selected, after this */
	st_command c = {.kind = ST_SET_STEPPER, .use_stepper = true};
	st_send(t, &c);

	enum { PUBLICATIONS = 3000 };
	long reads = 0, drawn = 0, distinct = 0, torn = 0, busy = 0, wrong_tag = 0;
	int slots_seen = 0;
	uint64_t last_tag = 0;
	const st_snapshot *s = NULL;
	double until = now_s() + WAIT_S;
	while (distinct < PUBLICATIONS && now_s() < until) {
		if (s && s->gpu_draw.buffer) { /* letting go of it: the demo fences here */
			int k = s->gpu_draw.slot;
			p.ended[k]++;
			atomic_store(&p.held[k], 0);
		}
		s = st_latest(t);
		reads++;
		if (!s->gpu_draw.buffer)
			continue;
		int k = s->gpu_draw.slot;
		REQUIRE(k >= 0 && k < ST_SLOTS);
		REQUIRE(s->gpu_draw.buffer == 100u + (unsigned)k);
		atomic_store(&p.held[k], 1);
		p.begun[k]++;
		slots_seen |= 1 << k;
		uint64_t tag = (uint64_t)(uintptr_t)s->gpu_draw.fence;
		if (tag != last_tag)
			distinct++;
		last_tag = tag;
		for (int pass = 0; pass < 2; pass++) {
			busy += atomic_load(&p.writing[k]) != 0;
			wrong_tag += p.tag[k] != tag;
			torn += memcmp(p.buffer[k], s->positions, sizeof(vec4) * (size_t)n) != 0;
			if (pass == 0 && (reads & 15) == 0) { /* a slow frame */
				struct timespec ts = {0, 300000};
				nanosleep(&ts, NULL);
			}
		}
		drawn++;
	}
	st_stop(&t);
	printf("  %ld reads, %ld holds of a draw buffer, %ld distinct publications, slots used 0x%x; "
	       "%ld publish calls\n",
	       reads, drawn, distinct, slots_seen, atomic_load(&p.calls));
	CHECK(distinct >= PUBLICATIONS);
	CHECK(slots_seen == 7); /* all three slots took turns */
	CHECK(atomic_load(&p.collisions) == 0);
	CHECK(atomic_load(&p.unseen_marks) == 0);
	CHECK(busy == 0);
	CHECK(wrong_tag == 0);
	CHECK(torn == 0);
	free_probe(&p);
	scn_scene_free(&scene);
}

/* Waits until the snapshot reflects every command sent (st_snapshot.commands). */
static const st_snapshot *settle(st_thread *t, uint64_t commands)
{
	double until = now_s() + WAIT_S;
	const st_snapshot *s = st_latest(t);
	while (s->commands < commands && now_s() < until) {
		struct timespec ts = {0, 1000000};
		nanosleep(&ts, NULL);
		s = st_latest(t);
	}
	return s->commands >= commands ? s : NULL;
}

/* No draw buffer where the stepper did not make the step: before it is selected, for a
 * scheme it refuses (the CPU steps), after it is switched off; nor when publish fails. */
static void test_ring_only_for_the_steppers_steps(void)
{
	scn_scene *scene = load("hanging");
	REQUIRE(scene);
	probe p;
	st_stepper sp = {.name = "GPU", .begin = probe_begin, .step = probe_step, .end = probe_end,
	                 .publish = probe_publish};
	st_thread *t = start(scene, &sp, true);
	REQUIRE(t);
	REQUIRE(alloc_probe(&p, st_get_layout(t)->vertex_count));
	sp.user = &p;
	uint64_t sent = 0;
	st_command step = {.kind = ST_STEP};
	st_send(t, &step), sent++;
	const st_snapshot *s = settle(t, sent);
	REQUIRE(s);
	CHECK(s->gpu_draw.buffer == 0 && s->gpu_draw.slot == -1 && atomic_load(&p.calls) == 0);

	st_command c = {.kind = ST_SET_STEPPER, .use_stepper = true};
	st_send(t, &c), sent++;
	st_send(t, &step), sent++;
	s = settle(t, sent);
	REQUIRE(s);
	CHECK(s->stepper_on && s->gpu_draw.buffer != 0 && atomic_load(&p.calls) > 0);

	p.refuse = true; /* read on the thread after the next command's queue hand-off */
	st_send(t, &step), sent++;
	s = settle(t, sent);
	REQUIRE(s);
	CHECK(s->stepper_on && s->gpu_draw.buffer == 0 && s->gpu_draw.slot == -1);
	p.refuse = false;

	c = (st_command){.kind = ST_SET_DEF, .def = s->def};
	c.def.integrator = SIM_MRA;
	st_send(t, &c), sent++;
	st_send(t, &step), sent++;
	s = settle(t, sent);
	REQUIRE(s);
	long calls = atomic_load(&p.calls);
	CHECK(!s->stepper_on && s->gpu_draw.buffer == 0);

	c = (st_command){.kind = ST_SET_STEPPER, .use_stepper = false};
	st_send(t, &c), sent++;
	c = (st_command){.kind = ST_SET_DEF, .def = s->def};
	c.def.integrator = SIM_SYMPLECTIC;
	st_send(t, &c), sent++;
	st_send(t, &step), sent++;
	s = settle(t, sent);
	REQUIRE(s);
	CHECK(!s->stepper_on && s->gpu_draw.buffer == 0);
	CHECK(atomic_load(&p.calls) == calls);
	st_stop(&t);
	free_probe(&p);
	scn_scene_free(&scene);
}

static const test_case tests[] = {
	TEST(test_ring_never_hands_a_buffer_being_written),
	TEST(test_ring_only_for_the_steppers_steps),
};
TEST_MAIN(tests)
