/* Golden determinism: the same scene stepped the same way gives a bit-identical state,
 * for every integrator, and the state hash is sensitive enough (one ulp of one initial
 * coordinate changes it) that the equality means something. */
#include "test.h"

#include "scenes/scenes.h"
#include "sim/sim.h"

#include <stdint.h>

enum { GOLDEN_STEPS = 300 };

/* The hanging scene's 1 ms is stable for every scheme except explicit Euler, which runs
 * at 0.1 ms: 300 steps of it stay sane there. */
static float golden_dt(sim_integrator integ) { return integ == SIM_EULER ? 1e-4f : 1e-3f; }

/* A free vertex of the hanging cloth away from the pins: the middle of the far edge. */
enum { PROBE_VERTEX = 19 * 20 + 10 };

/* Builds the hanging scene with the given integrator, moves the probe vertex's x by
 * `ulps` units in the last place (0: sets it to its own value), steps it and returns the
 * state hash.  *ok is false if anything failed. */
static uint64_t run_hanging(sim_integrator integ, int steps, int ulps, bool *ok)
{
	*ok = false;
	sim_world *w = scn_create("hanging");
	if (!w)
		return 0;
	if (sim_world_set_integrator(w, integ) != SIM_OK || sim_world_vertex_count(w) != 400) {
		sim_world_destroy(&w);
		return 0;
	}
	/* Both the reference and the perturbed run go through set_vertex, so the only
	 * difference between them is the ulp. */
	const vec4 *x = sim_world_positions(w);
	vec3 p = {x[PROBE_VERTEX][0], x[PROBE_VERTEX][1], x[PROBE_VERTEX][2]};
	vec3 v = {0.0f, 0.0f, 0.0f};
	for (int k = 0; k < ulps; k++)
		p[0] = nextafterf(p[0], INFINITY);
	if (sim_world_set_vertex(w, PROBE_VERTEX, p, v) != SIM_OK) {
		sim_world_destroy(&w);
		return 0;
	}
	float dt = golden_dt(integ);
	for (int s = 0; s < steps; s++) {
		if (sim_world_step(w, dt) != SIM_OK) {
			fprintf(stderr, "%s: step %d failed\n", sim_integrator_name(integ), s + 1);
			sim_world_destroy(&w);
			return 0;
		}
	}
	uint64_t h = sim_world_state_hash(w);
	sim_world_destroy(&w);
	*ok = true;
	return h;
}

static void test_same_run_same_hash(void)
{
	for (int k = 0; k < SIM_INTEGRATOR_COUNT; k++) {
		sim_integrator integ = (sim_integrator)k;
		bool ok_a, ok_b;
		uint64_t a = run_hanging(integ, GOLDEN_STEPS, 0, &ok_a);
		uint64_t b = run_hanging(integ, GOLDEN_STEPS, 0, &ok_b);
		CHECK_MSG(ok_a && ok_b, "%s: a run failed", sim_integrator_name(integ));
		CHECK_MSG(a == b, "%s: %016llx then %016llx", sim_integrator_name(integ), (unsigned long long)a,
		          (unsigned long long)b);
		printf("  %-10s %d steps: %016llx\n", sim_integrator_name(integ), GOLDEN_STEPS, (unsigned long long)a);
	}
}

/* One ulp of one coordinate, 300 steps later, gives a different state. */
static void test_one_ulp_changes_hash(void)
{
	for (int k = 0; k < SIM_INTEGRATOR_COUNT; k++) {
		sim_integrator integ = (sim_integrator)k;
		bool ok_a, ok_b;
		uint64_t a = run_hanging(integ, GOLDEN_STEPS, 0, &ok_a);
		uint64_t b = run_hanging(integ, GOLDEN_STEPS, 1, &ok_b);
		CHECK_MSG(ok_a && ok_b, "%s: a run failed", sim_integrator_name(integ));
		CHECK_MSG(a != b, "%s: one ulp made no difference (%016llx)", sim_integrator_name(integ),
		          (unsigned long long)a);
	}
}

/* The hash covers every particle's position and velocity bit patterns: any single bit
 * of state changes it, and it does not depend on the step count or time alone. */
static void test_hash_sees_state_only(void)
{
	sim_world *a = scn_create("hanging");
	sim_world *b = scn_create("hanging");
	REQUIRE(a && b);
	CHECK(sim_world_state_hash(a) == sim_world_state_hash(b));
	int n = sim_world_vertex_count(a);
	/* A velocity one ulp away from zero at the last vertex. */
	const vec4 *x = sim_world_positions(a);
	vec3 p = {x[n - 1][0], x[n - 1][1], x[n - 1][2]};
	vec3 v = {0.0f, 0.0f, nextafterf(0.0f, 1.0f)};
	REQUIRE(sim_world_set_vertex(a, n - 1, p, v) == SIM_OK);
	CHECK(sim_world_state_hash(a) != sim_world_state_hash(b));
	vec3 zero = {0.0f, 0.0f, 0.0f};
	REQUIRE(sim_world_set_vertex(a, n - 1, p, zero) == SIM_OK);
	CHECK(sim_world_state_hash(a) == sim_world_state_hash(b));
	sim_world_destroy(&a);
	sim_world_destroy(&b);
}

/* The other built-in scenes are deterministic too, with their own default scheme. */
static void test_other_scenes(void)
{
	const char *names[] = {"free-fall", "tetrahedron"};
	for (int s = 0; s < 2; s++) {
		uint64_t h[2] = {0, 0};
		for (int r = 0; r < 2; r++) {
			sim_world *w = scn_create(names[s]);
			REQUIRE(w);
			float dt = scn_find(names[s])->dt;
			for (int i = 0; i < GOLDEN_STEPS; i++)
				REQUIRE(sim_world_step(w, dt) == SIM_OK);
			h[r] = sim_world_state_hash(w);
			sim_world_destroy(&w);
		}
		CHECK_MSG(h[0] == h[1], "%s: %016llx then %016llx", names[s], (unsigned long long)h[0],
		          (unsigned long long)h[1]);
	}
}

static const test_case tests[] = {
	TEST(test_same_run_same_hash),
	TEST(test_one_ulp_changes_hash),
	TEST(test_hash_sees_state_only),
	TEST(test_other_scenes),
};
TEST_MAIN(tests)
