/* Parallel work: sim's loops, split into ranges through the world's task callbacks, give
 * the state the inline pipeline gives, bit for bit, whatever the number of workers and
 * whatever order the ranges run in.  The reference is the same build stepped without
 * callbacks; the contenders are a scheduler that runs the ranges backwards in small
 * pieces (no threads: the order alone) and the application's thread pool with 2 and 3
 * workers. */
#include "test.h"

#include "scenes/scenes.h"
#include "multilevel.h"
#include "sim/sim.h"
#include "sim_internal.h"
#include "task_pool.h"

#include <stdint.h>
#include <string.h>

/* A scheduler without threads: every loop in ranges of exactly min_range items, run last
 * range first, each under a different worker index; it counts the loops and the items
 * so that a test can tell the callbacks were used. */
typedef struct backwards {
	int workers;
	long loops, items;
	int max_item_count;
} backwards;

static void *backwards_enqueue(sim_task_fn *task, int count, int min_range, void *task_ctx, void *user)
{
	backwards *b = user;
	b->loops++;
	b->items += count;
	b->max_item_count = count > b->max_item_count ? count : b->max_item_count;
	int ranges = (count + min_range - 1) / min_range;
	for (int r = ranges - 1; r >= 0; r--) {
		int start = r * min_range, end = start + min_range < count ? start + min_range : count;
		task(start, end, r % b->workers, task_ctx);
	}
	return b; /* a handle: finish is called */
}

static void backwards_finish(void *handle, void *user) { CHECK(handle == user); }

typedef enum { RUN_INLINE, RUN_BACKWARDS, RUN_POOL } run_kind;

/* Steps scene `name` (collision_iterations overridden when >= 0) for `steps` steps of
 * dt and returns the state hash; *bw gets the backwards scheduler's counts. */
static uint64_t run_world(sim_world *w, int steps, float dt, int iterations, run_kind kind, int workers,
                          backwards *bw);

static uint64_t run_scene(const char *name, int steps, float dt, int iterations, run_kind kind, int workers,
                          backwards *bw)
{
	sim_world *w = scn_create(name);
	return w ? run_world(w, steps, dt, iterations, kind, workers, bw) : 0;
}

/* The collision candidates after a step, their vertices and start-distance bounds, folded
 * into h (FNV-1a): the carried bounds (carry_bounds) and the refresh's kept and dropped
 * lists (drop_dirty) are compared through them, since a bound lost in a carry-over need
 * not change the state (it only costs an exact distance). */
static uint64_t fold_candidates(uint64_t h, const sim_world *w)
{
	if (!w->collide)
		return h;
	enum { CAP = 300000 };
	static int v[CAP][4];
	static double lb[CAP];
	int nvf = 0, n = sim_collide_debug_candidates(w->collide, v, lb, CAP, &nvf);
	CHECK_MSG(n <= CAP, "%d candidates", n);
	n = n < CAP ? n : CAP;
	const unsigned char *bytes[2] = {(const unsigned char *)v, (const unsigned char *)lb};
	const size_t sizes[2] = {sizeof v[0] * (size_t)n, sizeof lb[0] * (size_t)n};
	for (int k = 0; k < 2; k++)
		for (size_t i = 0; i < sizes[k]; i++)
			h = (h ^ bytes[k][i]) * 1099511628211ull;
	return h ^ (uint64_t)nvf;
}

/* The chunks after the first that the last run_world's parallel sweeps were cut into. */
static long last_sweep_chunks;

/* Steps world w (which it destroys) as run_scene does; the state hash, with every step's
 * candidates and bounds folded in (fold_candidates). */
static uint64_t run_world(sim_world *w, int steps, float dt, int iterations, run_kind kind, int workers,
                          backwards *bw)
{
	sim_world_def def = *sim_world_get_def(w);
	if (iterations >= 0)
		def.collision_iterations = iterations;
	task_pool *pool = NULL;
	if (kind == RUN_BACKWARDS) {
		*bw = (backwards){.workers = workers};
		def.worker_count = workers;
		def.enqueue_task = backwards_enqueue;
		def.finish_task = backwards_finish;
		def.user_task_context = bw;
	} else if (kind == RUN_POOL) {
		pool = task_pool_create(workers);
		if (!pool) {
			sim_world_destroy(&w);
			return 0;
		}
		task_pool_attach(pool, &def);
	}
	uint64_t h = 0;
	if (sim_world_set_def(w, &def) == SIM_OK) {
		bool ok = true;
		uint64_t cand = 14695981039346656037ull;
		for (int s = 0; s < steps && ok; s++) {
			ok = sim_world_step(w, dt) == SIM_OK;
			cand = fold_candidates(cand, w);
		}
		h = ok ? sim_world_state_hash(w) ^ cand : 0;
	}
	last_sweep_chunks = w->collide ? sim_collide_debug_sweep_chunks(w->collide) : 0;
	sim_world_destroy(&w);
	task_pool_destroy(&pool);
	return h;
}

typedef struct scene_case {
	const char *name;
	int steps;
	int iterations; /* -1: the scene's own */
} scene_case;

/* The pile through its folding phase, where candidates are refreshed and impulses fly;
 * the pile with no impulse sweeps at all, so that every hit goes to the impact-zone
 * fail-safe (its sweeps run through the pre-pass too); two cloths and the drape. */
static const scene_case cases[] = {
	{"pile", 600, -1},
	{"pile", 400, 0},
	{"two-cloths", 500, -1},
	{"sphere", 400, -1},
};

static void test_backwards_order_same_state(void)
{
	for (size_t k = 0; k < sizeof cases / sizeof cases[0]; k++) {
		const scene_case *sc = &cases[k];
		backwards bw;
		uint64_t ref = run_scene(sc->name, sc->steps, 1e-3f, sc->iterations, RUN_INLINE, 1, &bw);
		REQUIRE_MSG(ref != 0, "%s did not run", sc->name);
		uint64_t h = run_scene(sc->name, sc->steps, 1e-3f, sc->iterations, RUN_BACKWARDS, 4, &bw);
		CHECK_MSG(h == ref, "%s (iterations %d): %016llx backwards, %016llx inline", sc->name, sc->iterations,
		          (unsigned long long)h, (unsigned long long)ref);
		/* the callbacks carried the work: loops with many items went through them */
		CHECK_MSG(bw.loops > sc->steps && bw.max_item_count > 8, "%s: %ld loops, largest %d items", sc->name,
		          bw.loops, bw.max_item_count);
	}
}

static void test_pool_workers_same_state(void)
{
	for (size_t k = 0; k < sizeof cases / sizeof cases[0]; k++) {
		const scene_case *sc = &cases[k];
		uint64_t ref = run_scene(sc->name, sc->steps, 1e-3f, sc->iterations, RUN_INLINE, 1, NULL);
		REQUIRE(ref != 0);
		for (int workers = 1; workers <= 3; workers++) {
			uint64_t h = run_scene(sc->name, sc->steps, 1e-3f, sc->iterations, RUN_POOL, workers, NULL);
			CHECK_MSG(h == ref, "%s (iterations %d), %d workers: %016llx, inline %016llx", sc->name, sc->iterations,
			          workers, (unsigned long long)h, (unsigned long long)ref);
		}
	}
}

/* The implicit solve (implicit.c) splits its assembly and every CG iteration into fixed
 * blocks of vertices and springs.  Cases: a 65 x 65 cloth (4225 vertices, five blocks:
 * large enough to be split) pinned at two corners, one of them pulled sideways (a
 * moving constraint), collisions off, so that every loop handed out is the solve's; the
 * same cloth dropped on a ball with self-collision; and the drape with seed 002's
 * tetrahedron beside it, whose springs are not a grid's and go through the solve's
 * serial list.  Stepped at 1/90 s, where the solve needs tens of iterations.  The three go
 * through the multilevel preconditioner (multilevel.c); a fourth case has two cloths, a
 * 66 x 49 one with its own hierarchy and a 30 x 30 one too small for one (block Jacobi
 * inside the same solve), pinned and pulled, collisions off, the multilevel
 * preconditioner forced on every step (the others switch by their iterations).  A fifth
 * is the bench's 129 x 129 drape (on the smaller ball), the multilevel preconditioner
 * forced on: large enough that the hierarchy's level 1 (65 x 65) and the trees' refits
 * are split into blocks too; 45 steps, the last thirty in contact: enough for the
 * sweeps after the obstacle pass's holds to decide candidates a hold touched (25 did not
 * show a hold that stamped without flagging, collide.c's touch_prims), and for sweeps long
 * enough to be cut into chunks. */
typedef enum {
	IMPLICIT_PULLED,
	IMPLICIT_DRAPE,
	IMPLICIT_DRAPE_AND_MESH,
	IMPLICIT_TWO_CLOTHS,
	IMPLICIT_DRAPE_129,
	IMPLICIT_CASES
} implicit_case;

static sim_world *implicit_world(implicit_case c)
{
	sim_world_def def = sim_world_def_default();
	def.integrator = SIM_IMPLICIT;
	def.air_damping = 0.1f;
	def.collisions = c != IMPLICIT_PULLED && c != IMPLICIT_TWO_CLOTHS;
	sim_world *w = sim_world_create(&def);
	if (!w)
		return NULL;
	sim_grid_def g = sim_grid_def_default();
	g.nx = g.ny = 65;
	g.size_x = g.size_y = 1.0f;
	g.origin[0] = -0.5f, g.origin[1] = 0.75f, g.origin[2] = -0.5f;
	g.axis_v[0] = 0.0f, g.axis_v[1] = 0.0f, g.axis_v[2] = 1.0f;
	g.material.stiffness[0] = 100.0f, g.material.stiffness[1] = 50.0f, g.material.stiffness[2] = 2.0f;
	if (c == IMPLICIT_TWO_CLOTHS)
		g.nx = 66, g.ny = 49;
	if (c == IMPLICIT_DRAPE_129) {
		g.nx = g.ny = 129;
		sim_implicit_set_multilevel(w->implicit, ML_ALWAYS);
	}
	bool ok = sim_world_add_grid(w, &g) >= 0;
	if (c == IMPLICIT_TWO_CLOTHS) {
		sim_implicit_set_multilevel(w->implicit, ML_ALWAYS);
		sim_grid_def small = g;
		small.nx = small.ny = 30;
		small.origin[1] = 0.25f;
		const int first = sim_world_vertex_count(w);
		ok = ok && sim_world_add_grid(w, &small) >= 0;
		ok = ok && sim_world_pin(w, 0, true) == SIM_OK && sim_world_pin(w, first, true) == SIM_OK;
		ok = ok && sim_world_add_velocity_block(w, 0.0, 65, (vec3){0.3f, 0.0f, 0.0f}) == SIM_OK;
		ok = ok && sim_world_add_velocity_block(w, 0.0, first + 29, (vec3){0.0f, 0.2f, 0.1f}) == SIM_OK;
	} else if (c == IMPLICIT_PULLED) {
		ok = ok && sim_world_pin(w, 0, true) == SIM_OK;
		ok = ok && sim_world_add_velocity_block(w, 0.0, 64, (vec3){0.3f, 0.0f, 0.0f}) == SIM_OK;
	} else {
		sim_obstacle_def ball = sim_obstacle_def_default(SIM_SHAPE_SPHERE);
		ball.radius = 0.3f;
		ball.position[1] = 0.3f;
		sim_obstacle_def floor = sim_obstacle_def_default(SIM_SHAPE_PLANE);
		ok = ok && sim_world_add_obstacle(w, &floor) >= 0 && sim_world_add_obstacle(w, &ball) >= 0;
	}
	if (c == IMPLICIT_DRAPE_AND_MESH) {
		sim_material m = sim_material_default();
		ok = ok && sim_world_add_tetrahedron(w, "tetrahedron", (vec3){0.8f, 0.2f, 0.0f}, 0.3f, &m) >= 0;
	}
	if (!ok)
		sim_world_destroy(&w);
	return w;
}

static void test_implicit_same_state(void)
{
	static const char *const names[IMPLICIT_CASES] = {"pulled", "drape", "drape and mesh", "two cloths",
	                                                  "drape 129"};
	const float dt = 1.0f / 90.0f;
	for (int c = 0; c < IMPLICIT_CASES; c++) {
		const int steps = c == IMPLICIT_DRAPE_129 ? 45 : 40;
		backwards bw;
		sim_world *w = implicit_world((implicit_case)c);
		REQUIRE_MSG(w, "%s: no world", names[c]);
		uint64_t ref = run_world(w, steps, dt, -1, RUN_INLINE, 1, &bw);
		REQUIRE_MSG(ref != 0, "%s did not run", names[c]);
		w = implicit_world((implicit_case)c);
		REQUIRE(w);
		uint64_t h = run_world(w, steps, dt, -1, RUN_BACKWARDS, 4, &bw);
		CHECK_MSG(h == ref, "%s: %016llx backwards, %016llx inline", names[c], (unsigned long long)h,
		          (unsigned long long)ref);
		/* the 129 x 129 drape's sweeps are long enough to go in chunks (collide.c, sweep) */
		if (c == IMPLICIT_DRAPE_129)
			CHECK_MSG(last_sweep_chunks > 0, "%s: sweeps in %ld chunks more", names[c], last_sweep_chunks);
		/* the solve's loops went through the callbacks: without collisions nothing else
		 * hands any out; at least assembly and one iteration per step, over five blocks */
		CHECK_MSG(bw.loops >= 5L * steps && bw.max_item_count >= 5, "%s: %ld loops, largest %d items", names[c],
		          bw.loops, bw.max_item_count);
		for (int workers = 1; workers <= 3; workers++) {
			w = implicit_world((implicit_case)c);
			REQUIRE(w);
			h = run_world(w, steps, dt, -1, RUN_POOL, workers, NULL);
			CHECK_MSG(h == ref, "%s, %d workers: %016llx, inline %016llx", names[c], workers, (unsigned long long)h,
			          (unsigned long long)ref);
		}
	}
}

/* The multilevel preconditioner's coarse operators (ml_assemble, multilevel.c), level 1
 * assembled in blocks of rows and level 2 in bands of level 1's rows through the
 * callbacks, are the ones the caller alone assembles, bit for bit, and so is the coarse
 * correction the cycle then gives
 * (ml_apply), level 1 and the prolongation in blocks too: compared on the serial
 * cycle's correction for one right-hand side on a 129 x 97 grid (odd both ways: the last row and column
 * of aggregates are partial), random blocks on the six spring families a grid has (the
 * bend families reach two rows), a random diagonal and about one vertex in 23 kinematic
 * (so that springs with one free end go to the diagonals).  The backwards scheduler with
 * 2, 3 and 4 workers splits level 1's 49 rows differently each time (ml_even_range), so
 * every fine row that feeds two blocks is met; the pool runs it with two threads. */
static uint32_t lcg(uint32_t *state)
{
	*state = *state * 1664525u + 1013904223u;
	return *state >> 8;
}

static float uniform(uint32_t *state) { return (float)lcg(state) / 16777216.0f; }

enum { ML_NX = 129, ML_NY = 97, ML_N = ML_NX * ML_NY, ML_RUNS = 6 };

typedef struct ml_case {
	float diag[ML_N], mask[ML_N], r[3 * ML_N], q[3 * ML_N];
	float blocks[ML_RUNS][4][ML_N];
	ml_fine_run runs[ML_RUNS];
} ml_case;

/* The preconditioner's coarse correction z = P e (from z = 0) for the case's residual,
 * the operators assembled with `assemble` and the cycle applied with `apply` (NULL: on
 * the caller). */
static bool ml_correction(const ml_case *c, const sim_world *assemble, const sim_world *apply, float *z)
{
	ml_grid *g = ml_create();
	if (!g || !ml_reserve(g, ML_NX, ML_NY)) {
		ml_destroy(g);
		return false;
	}
	ml_assemble(g, c->diag, c->mask, c->runs, ML_RUNS, assemble);
	memset(z, 0, sizeof(float) * 3 * ML_N);
	ml_apply(g, c->r, (float *)c->q, c->mask, ML_N, z, NULL, NULL, apply);
	ml_destroy(g);
	return true;
}

static void test_multilevel_assembly_same_operators(void)
{
	static ml_case c;
	uint32_t seed = 12345u;
	for (int i = 0; i < ML_N; i++) {
		c.diag[i] = 0.5f + uniform(&seed);
		c.mask[i] = lcg(&seed) % 23u == 0 ? 0.0f : 1.0f;
	}
	for (int i = 0; i < 3 * ML_N; i++)
		c.r[i] = uniform(&seed) - 0.5f, c.q[i] = 0.1f * (uniform(&seed) - 0.5f);
	static const int fam[ML_RUNS][2] = {{1, 0}, {0, 1}, {1, 1}, {-1, 1}, {2, 0}, {0, 2}};
	for (int f = 0; f < ML_RUNS; f++) {
		const int di = fam[f][0], dj = fam[f][1];
		const int i0 = di < 0 ? -di : 0, i1 = ML_NX - (di > 0 ? di : 0);
		const int count = (ML_NY - dj - 1) * ML_NX + i1 - i0;
		for (int m = 0; m < count; m++) {
			for (int k = 0; k < 3; k++)
				c.blocks[f][k][m] = 2.0f * uniform(&seed) - 1.0f;
			c.blocks[f][3][m] = 0.25f * uniform(&seed);
		}
		c.runs[f] = (ml_fine_run){di, dj, i0, count, i0, i1, c.blocks[f][0], c.blocks[f][1], c.blocks[f][2],
		                          c.blocks[f][3]};
	}
	static float ref[3 * ML_N], got[3 * ML_N];
	REQUIRE(ml_correction(&c, NULL, NULL, ref));
	int nonzero = 0;
	for (int i = 0; i < 3 * ML_N; i++)
		nonzero += ref[i] != 0.0f;
	CHECK_MSG(nonzero > 2 * ML_N, "%d of %d", nonzero, 3 * ML_N);
	for (int workers = 2; workers <= 5; workers++) {
		/* 2 to 4: the backwards scheduler; 5: the pool with two threads */
		sim_world_def def = sim_world_def_default();
		backwards bw = {.workers = workers};
		task_pool *pool = NULL;
		if (workers <= 4) {
			def.worker_count = workers;
			def.enqueue_task = backwards_enqueue;
			def.finish_task = backwards_finish;
			def.user_task_context = &bw;
		} else {
			pool = task_pool_create(2);
			REQUIRE(pool);
			task_pool_attach(pool, &def);
		}
		sim_world *w = sim_world_create(&def);
		REQUIRE(w);
		/* the assembly split, the cycle on the caller */
		CHECK(ml_correction(&c, w, NULL, got));
		CHECK_MSG(memcmp(got, ref, sizeof got) == 0, "%d workers: the operators differ", workers);
		if (workers <= 4) /* level 1's two loops and level 2's two went through the callbacks */
			CHECK_MSG(bw.loops == 2 + 2 && bw.max_item_count == 7, "%d workers: %ld loops of up to %d blocks", workers,
			          bw.loops, bw.max_item_count);
		/* the cycle's level 1 and its prolongation split too */
		CHECK(ml_correction(&c, w, w, got));
		CHECK_MSG(memcmp(got, ref, sizeof got) == 0, "%d workers: the cycle differs", workers);
		if (workers <= 4)
			CHECK_MSG(bw.loops == 4 + 4 + 4, "%d workers: %ld loops", workers, bw.loops);
		sim_world_destroy(&w);
		task_pool_destroy(&pool);
	}
}

/* The callbacks come both or neither, and the worker count is in [1, SIM_MAX_WORKERS]. */
static void test_def_checked(void)
{
	sim_world_def def = sim_world_def_default();
	CHECK(def.worker_count == 1 && def.enqueue_task == NULL && def.finish_task == NULL);
	sim_world *w = sim_world_create(&def);
	REQUIRE(w);
	sim_world_def bad = def;
	bad.enqueue_task = backwards_enqueue;
	CHECK(sim_world_set_def(w, &bad) == SIM_ERROR_INVALID);
	bad = def;
	bad.finish_task = backwards_finish;
	CHECK(sim_world_set_def(w, &bad) == SIM_ERROR_INVALID);
	bad = def;
	bad.worker_count = 0;
	CHECK(sim_world_set_def(w, &bad) == SIM_ERROR_INVALID);
	bad.worker_count = SIM_MAX_WORKERS + 1;
	CHECK(sim_world_set_def(w, &bad) == SIM_ERROR_INVALID);
	bad.worker_count = SIM_MAX_WORKERS;
	CHECK(sim_world_set_def(w, &bad) == SIM_OK);
	sim_world_destroy(&w);
	bad.enqueue_task = backwards_enqueue;
	CHECK(sim_world_create(&bad) == NULL);
}

/* The pool runs every item of a loop exactly once, on worker indices below its count,
 * in ranges that shrink as the loop goes: each a sixth (three workers) of the items left
 * when it starts, rounded up, at least min_range, the last one whatever is left. */
typedef struct cover {
	int hits[10000];
	int range_end[10000]; /* per range start: its end (0: no range starts there) */
	int bad_worker;
} cover;

static void cover_task(int start, int end, int worker, void *ctx)
{
	cover *c = ctx;
	if (worker < 0 || worker >= 3)
		c->bad_worker = 1;
	__atomic_store_n(&c->range_end[start], end, __ATOMIC_RELAXED);
	for (int i = start; i < end; i++)
		__atomic_fetch_add(&c->hits[i], 1, __ATOMIC_RELAXED);
}

/* The ranges a loop of n items should have, walked from 0: returns how many of the
 * recorded ones differ from them. */
static int wrong_ranges(const cover *c, int n, int min_range)
{
	int wrong = 0, ranges = 0;
	for (int start = 0; start < n;) {
		int left = n - start, len = left / 6 + (left % 6 != 0);
		len = len > min_range ? len : min_range;
		int end = len < left ? start + len : n;
		wrong += c->range_end[start] != end;
		ranges++;
		start = end;
	}
	int recorded = 0;
	for (int i = 0; i < 10000; i++)
		recorded += c->range_end[i] != 0;
	return wrong + (recorded != ranges);
}

static void test_pool_covers_items_once(void)
{
	task_pool *pool = task_pool_create(3);
	REQUIRE(pool);
	static cover c;
	for (int round = 0; round < 200; round++) {
		int n = 1 + round * 47 % 10000;
		memset(&c, 0, sizeof c);
		int min_range = 1 + round % 7 + (round % 5 == 0 ? 900 : 0);
		void *h = task_pool_enqueue(cover_task, n, min_range, &c, pool);
		if (h)
			task_pool_finish(h, pool);
		int wrong = 0;
		for (int i = 0; i < 10000; i++)
			wrong += c.hits[i] != (i < n);
		CHECK_MSG(wrong == 0 && !c.bad_worker, "round %d, %d items: %d wrong", round, n, wrong);
		/* inline (no handle) exactly when one range would take every item */
		CHECK_MSG((h == NULL) == (n <= min_range) && (h == NULL || wrong_ranges(&c, n, min_range) == 0),
		          "round %d, %d items, ranges of at least %d: not the guided ranges", round, n, min_range);
	}
	task_pool_destroy(&pool);
	CHECK(pool == NULL);
	CHECK(task_pool_create(0) == NULL);
	CHECK(task_pool_create(SIM_MAX_WORKERS + 1) == NULL);
}

static const test_case tests[] = {
	TEST(test_def_checked),
	TEST(test_pool_covers_items_once),
	TEST(test_backwards_order_same_state),
	TEST(test_pool_workers_same_state),
	TEST(test_implicit_same_state),
	TEST(test_multilevel_assembly_same_operators),
};
TEST_MAIN(tests)
