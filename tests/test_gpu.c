/* The GPU integrator against the CPU one (issue 7), on Mesa's llvmpipe or any GL 4.3
 * context: every scheme the GPU has, on the same worlds, ends within a stated distance of
 * the CPU's result (docs/gpu.md, "Parity", says why these tolerances); broken shaders
 * report their compile or link log.  Exits 77 (ctest: skipped) only when no OpenGL 4.3
 * context can be created at all. */
#include "test.h"

#include "demo.h"
#include "gl_window.h"
#include "gpu_backend.h"
#include "panel.h"
#include "render.h"
#include "scenes/scenes.h"

#include <GL/glew.h>

#include "sim/sim.h"

static gpu_backend *gpu;

/* GL errors the debug output reported on the tests' own context (the demo tests' contexts
 * have the renderer's callback, demo_gl_errors). */
static int gl_errors_;
static void GLAPIENTRY count_gl_errors(GLenum source, GLenum type, GLuint id, GLenum severity, GLsizei length,
                                       const GLchar *message, const void *user)
{
	(void)length, (void)user;
	/* test_shader_errors_carry_log compiles broken shaders on purpose; their logs are
	 * what it checks */
	if (source == GL_DEBUG_SOURCE_SHADER_COMPILER)
		return;
	if (type != GL_DEBUG_TYPE_ERROR && type != GL_DEBUG_TYPE_UNDEFINED_BEHAVIOR)
		return;
	if (severity != GL_DEBUG_SEVERITY_HIGH && severity != GL_DEBUG_SEVERITY_MEDIUM)
		return;
	gl_errors_++;
	fprintf(stderr, "GL error on the tests' context (id %u): %s\n", id, message);
}

/* A 12 x 12 cloth hanging from two pinned corners, released from horizontal, with
 * optional wind and strain limiting; a third corner is driven by velocity blocks so that
 * a prescribed (kinematic) vertex takes part too. */
typedef struct setup {
	sim_integrator integ;
	bool wind, strain, anchors, blocks;
	bool mesh; /* a mesh sheet and seed 002's tetrahedron instead of the grid */
	float dt;
	int substeps;
} setup;

static float perturb_;
static sim_world *make_world(const setup *s)
{
	sim_world_def d = sim_world_def_default();
	d.integrator = s->integ;
	d.substeps = s->substeps > 0 ? s->substeps : 1;
	d.collisions = false;
	if (s->wind) {
		d.wind[0] = 3.0f, d.wind[1] = 0.5f, d.wind[2] = -4.0f;
		d.drag_coefficient = 1.0f;
		d.lift_coefficient = 0.6f;
	}
	d.strain_limit = s->strain;
	d.strain_tau = 0.05f;
	d.air_damping = 0.1f;
	sim_world *w = sim_world_create(&d);
	if (!w)
		return NULL;
	if (s->mesh) {
		/* 8 x 8 vertices, two triangles per quad: the spring-list path of the forces */
		float pos[64 * 3];
		int tri[49 * 6], nt = 0;
		for (int j = 0; j < 8; j++)
			for (int i = 0; i < 8; i++) {
				pos[3 * (j * 8 + i)] = -0.4f + 0.1f * (float)i;
				pos[3 * (j * 8 + i) + 1] = 1.5f;
				pos[3 * (j * 8 + i) + 2] = 0.4f - 0.1f * (float)j;
			}
		for (int j = 0; j < 7; j++)
			for (int i = 0; i < 7; i++) {
				int a = j * 8 + i;
				int quad[6] = {a, a + 1, a + 9, a, a + 9, a + 8};
				memcpy(&tri[6 * nt++], quad, sizeof quad);
			}
		sim_mesh_def m = {.name = "sheet", .vertex_count = 64, .positions = pos, .triangle_count = 2 * nt,
		                  .triangles = tri, .material = sim_material_default()};
		sim_material tm = sim_material_default();
		tm.anchor_stiffness = 0.5f;
		tm.anchor_damping = 0.001f;
		tm.total_mass = 0.02f;
		vec3 centre = {1.0f, 1.0f, 0.0f};
		if (sim_world_add_mesh(w, &m) < 0 || sim_world_add_tetrahedron(w, "tetra", centre, 0.3f, &tm) < 0) {
			sim_world_destroy(&w);
			return NULL;
		}
		sim_world_pin(w, 0, true);
		sim_world_pin(w, 7, true);
		vec3 kick = {0.0f, 0.0f, 0.02f};
		sim_world_set_point_force(w, 64 + 3, kick);
		return w;
	}
	sim_grid_def g = sim_grid_def_default();
	g.name = "cloth";
	g.nx = g.ny = 12;
	g.size_x = g.size_y = 1.0f;
	g.origin[0] = -0.5f, g.origin[1] = 1.5f, g.origin[2] = 0.5f;
	if (s->strain) { /* soft enough that gravity stretches it past the limit */
		g.material.stiffness[SIM_SPRING_STRUCTURAL] = 30.0f;
		g.material.stiffness[SIM_SPRING_SHEAR] = 10.0f;
	}
	if (s->anchors) {
		g.material.anchor_stiffness = 0.01f;
		g.material.anchor_damping = 0.001f;
	}
	int obj = sim_world_add_grid(w, &g);
	if (obj < 0) {
		sim_world_destroy(&w);
		return NULL;
	}
	if (perturb_ != 0.0f) {
		const float *p = sim_world_positions(w)[20];
		vec3 q = {p[0] + perturb_, p[1], p[2]}, z = {0, 0, 0};
		sim_world_set_vertex(w, 20, q, z);
	}
	sim_world_pin(w, 0, true);
	sim_world_pin(w, 11, true);
	vec3 push = {0.0f, 0.0f, 0.0f};
	sim_world_set_point_force(w, 70, push);
	if (s->blocks) {
		vec3 up = {0.0f, 0.4f, 0.2f}, end = {NAN, NAN, NAN};
		sim_world_add_velocity_block(w, 0.05, 143, up);
		sim_world_add_velocity_block(w, 0.15, 143, end);
	}
	return w;
}

/* The largest per-vertex position difference after `steps` steps on each side, and how far
 * the cloth moved (so that a GPU doing nothing cannot pass). */
static bool run_pair(const setup *s, int steps, float *max_diff, float *moved, int *strain_sweeps)
{
	*strain_sweeps = 0;
	sim_world *a = make_world(s);
	if (getenv("TELA_PARITY_SENSITIVITY"))
		perturb_ = 1e-7f;
	sim_world *b = make_world(s);
	perturb_ = 0.0f;
	bool ok = a && b;
	for (int k = 0; k < steps && ok; k++) {
		sim_result ra = sim_world_step(a, s->dt);
		sim_result rb = getenv("TELA_PARITY_SENSITIVITY") ? sim_world_step(b, s->dt) : gpu_backend_step(gpu, b, s->dt);
		if (ra != SIM_OK || rb != SIM_OK) {
			fprintf(stderr, "step %d: cpu %s, gpu %s\n", k, sim_result_string(ra), sim_result_string(rb));
			ok = false;
		}
		int sweeps = sim_world_stats(b)->strain_iterations;
		*strain_sweeps = sweeps > *strain_sweeps ? sweeps : *strain_sweeps;
	}
	*max_diff = 0.0f;
	*moved = 0.0f;
	if (ok) {
		sim_world *ref = make_world(s);
		const vec4 *xa = sim_world_positions(a), *xb = sim_world_positions(b), *x0 = sim_world_positions(ref);
		for (int i = 0; i < sim_world_vertex_count(a); i++) {
			float d = 0.0f, m = 0.0f;
			for (int k = 0; k < 3; k++) {
				d += (xa[i][k] - xb[i][k]) * (xa[i][k] - xb[i][k]);
				m += (xa[i][k] - x0[i][k]) * (xa[i][k] - x0[i][k]);
			}
			*max_diff = fmaxf(*max_diff, sqrtf(d));
			*moved = fmaxf(*moved, sqrtf(m));
		}
		sim_world_destroy(&ref);
	}
	sim_world_destroy(&a);
	sim_world_destroy(&b);
	return ok;
}

/* The stable step of each scheme for this cloth (k = 500 N/m, 1.2 g per vertex): the
 * explicit schemes need small steps, the others take the scenes' 1 ms. */
static float step_of(sim_integrator integ) { return integ == SIM_EULER ? 0.00005f : integ == SIM_MIDPOINT ? 0.0002f : 0.001f; }

/* Tolerances after 0.5 s of motion of a cloth that moves by about a metre.  The two sides
 * differ by rounding only (the order of the spring sums, the GPU's sqrt and division), and
 * the motion amplifies rounding as it amplifies any perturbation: moving one CPU vertex
 * by 1e-7 m (an ulp) moves the CPU's own result by up to 3e-5 m (explicit schemes), 4e-4 m
 * (Verlet, whose velocity is a difference quotient), 1.1e-3 m (Kang's prediction) and,
 * with strain limiting, whose threshold turns a rounding difference into a correction or
 * none, 1e-3 m.  The tolerances are those sensitivities with a margin; a missing or
 * wrong force term is off by centimetres.  TELA_PARITY_SENSITIVITY=1 runs the perturbed
 * CPU in place of the GPU, which is how the figures above were measured (docs/gpu.md). */
static float tolerance_of(sim_integrator integ, bool strain)
{
	if (strain)
		return 3e-3f;
	return integ == SIM_KANG ? 5e-3f : integ == SIM_VERLET ? 2e-3f : 1e-4f;
}

static void check_parity(setup s, const char *what)
{
	if (s.dt == 0.0f)
		s.dt = step_of(s.integ);
	if (s.substeps == 0)
		s.substeps = 1;
	int steps = (int)(0.5f / s.dt + 0.5f);
	float diff, moved;
	int sweeps;
	REQUIRE_MSG(run_pair(&s, steps, &diff, &moved, &sweeps), "%s %s", sim_integrator_name(s.integ), what);
	printf("  %-10s %-28s max |x_gpu - x_cpu| = %.3g m (cloth moved %.3g m)\n", sim_integrator_name(s.integ), what,
	       (double)diff, (double)moved);
	CHECK_MSG(diff <= tolerance_of(s.integ, s.strain), "%s %s: %g m apart", sim_integrator_name(s.integ), what, (double)diff);
	if (s.strain) /* Provot did act */
		CHECK_MSG(sweeps > 0, "%s %s: no strain-limiting sweep", sim_integrator_name(s.integ), what);
	CHECK_MSG(moved > 0.3f, "%s %s: the cloth moved only %g m", sim_integrator_name(s.integ), what, (double)moved);
}

static const sim_integrator gpu_schemes[] = {SIM_EULER, SIM_SYMPLECTIC, SIM_MIDPOINT, SIM_RK4,
                                             SIM_VERLET, SIM_KANG, SIM_IMPLICIT};
#define SCHEME_COUNT ((int)(sizeof gpu_schemes / sizeof gpu_schemes[0]))

static void test_parity_pinned(void)
{
	for (int k = 0; k < SCHEME_COUNT; k++)
		check_parity((setup){.integ = gpu_schemes[k]}, "pinned corners");
}

static void test_parity_wind(void)
{
	for (int k = 0; k < SCHEME_COUNT; k++)
		check_parity((setup){.integ = gpu_schemes[k], .wind = true}, "pinned, wind");
}

static void test_parity_strain_limit(void)
{
	for (int k = 0; k < SCHEME_COUNT; k++)
		check_parity((setup){.integ = gpu_schemes[k], .strain = true, .wind = true}, "pinned, wind, Provot");
}

static void test_parity_anchors_blocks_substeps(void)
{
	for (int k = 0; k < SCHEME_COUNT; k++)
		check_parity((setup){.integ = gpu_schemes[k], .anchors = true, .blocks = true, .substeps = 2},
		             "anchors, velocity blocks, 2 substeps");
}

/* Implicit Euler where it matters: 4.2 ms steps (240 Hz), past every explicit scheme's
 * limit on this cloth, with the CG solve converged to the default 1e-4 on both sides.
 * The GPU needs about as many CG iterations as the CPU (a few more: it starts from
 * dv = 0, the CPU from its previous solution when that is better). */
static void test_parity_implicit_large_step(void)
{
	check_parity((setup){.integ = SIM_IMPLICIT, .dt = 1.0f / 240.0f, .wind = true}, "240 Hz, wind");
	check_parity((setup){.integ = SIM_IMPLICIT, .dt = 1.0f / 240.0f, .strain = true}, "240 Hz, Provot");
	setup s = {.integ = SIM_IMPLICIT, .dt = 1.0f / 240.0f};
	sim_world *w = make_world(&s);
	REQUIRE(w);
	for (int k = 0; k < 20; k++)
		CHECK(gpu_backend_step(gpu, w, s.dt) == SIM_OK);
	int gpu_iterations = gpu_backend_timing(gpu).cg_iterations;
	sim_world *c = make_world(&s);
	REQUIRE(c);
	for (int k = 0; k < 20; k++)
		CHECK(sim_world_step(c, s.dt) == SIM_OK);
	int cpu_iterations = sim_world_stats(c)->cg_iterations;
	printf("  CG iterations of the 20th step: gpu %d, cpu %d\n", gpu_iterations, cpu_iterations);
	CHECK(gpu_iterations > 0 && gpu_iterations <= sim_world_get_def(w)->cg_max_iterations);
	CHECK(gpu_iterations <= 2 * cpu_iterations + 5); /* a wrong preconditioner needs far more */
	sim_world_destroy(&w);
	sim_world_destroy(&c);
}

/* Meshes take the spring-list path (the CPU scatters spring by spring); the
 * tetrahedron adds anchors and a point force. */
static void test_parity_mesh_objects(void)
{
	for (int k = 0; k < SCHEME_COUNT; k++)
		check_parity((setup){.integ = gpu_schemes[k], .mesh = true, .wind = true}, "mesh sheet, tetrahedron, wind");
}

/* Provot on the GPU (coloured Gauss-Seidel sweeps): the peak strain stays at the limit
 * (1 + tau) within what the sweep cap leaves, as on the CPU, on a cloth that stretches to
 * 33 % without it; it needs about as many sweeps as the CPU's Gauss-Seidel, and ends close
 * to the CPU's result (not equal: the colours visit the springs in another order, and the
 * two orders converge to different corrections of the same lengths). */
static void test_strain_limit_on_gpu(void)
{
	setup s = {.integ = SIM_SYMPLECTIC, .strain = true, .dt = 0.001f, .substeps = 1};
	sim_world *w = make_world(&s), *cpu = make_world(&s), *free_w = NULL;
	REQUIRE(w && cpu);
	sim_world_def nd = *sim_world_get_def(w);
	nd.strain_limit = false;
	free_w = make_world(&s);
	REQUIRE(free_w);
	sim_world_set_def(free_w, &nd);
	gpu_backend_set_strain_on_gpu(gpu, true);
	float worst = 0.0f, worst_free = 0.0f, diff = 0.0f;
	int sweeps = 0, cpu_sweeps = 0;
	long total_gpu = 0, total_cpu = 0;
	for (int k = 0; k < 500; k++) {
		CHECK(gpu_backend_step(gpu, w, s.dt) == SIM_OK);
		CHECK(gpu_backend_step(gpu, free_w, s.dt) == SIM_OK);
		CHECK(sim_world_step(cpu, s.dt) == SIM_OK);
		sweeps = sim_world_stats(w)->strain_iterations > sweeps ? sim_world_stats(w)->strain_iterations : sweeps;
		int cs = sim_world_stats(cpu)->strain_iterations;
		cpu_sweeps = cs > cpu_sweeps ? cs : cpu_sweeps;
		total_gpu += sim_world_stats(w)->strain_iterations;
		total_cpu += cs;
		worst = fmaxf(worst, sim_world_stats(w)->max_strain);
		worst_free = fmaxf(worst_free, sim_world_stats(free_w)->max_strain);
	}
	gpu_backend_set_strain_on_gpu(gpu, false);
	const vec4 *xa = sim_world_positions(w), *xb = sim_world_positions(cpu);
	for (int i = 0; i < sim_world_vertex_count(w); i++)
		for (int k = 0; k < 3; k++)
			diff = fmaxf(diff, fabsf(xa[i][k] - xb[i][k]));
	printf("  peak strain: GPU %.5f, without limiting %.3f; sweeps at most %d (CPU %d), in all %ld (CPU %ld); "
	       "%.3g m from the CPU's\n",
	       (double)worst, (double)worst_free, sweeps, cpu_sweeps, total_gpu, total_cpu, (double)diff);
	CHECK(worst_free > 0.2f);
	CHECK(sweeps > 1);
	CHECK(total_gpu <= 2 * total_cpu);
	/* converged sweeps stop at the trigger (1 + tau)(1 + 1e-5); the cap of 200 sweeps
	 * may leave a little more */
	CHECK_MSG(worst <= 0.05f * 1.01f + 1e-3f, "%g", (double)worst);
	CHECK_MSG(diff <= 0.005f, "%g m", (double)diff);
	sim_world_destroy(&w);
	sim_world_destroy(&cpu);
	sim_world_destroy(&free_w);
}

/* No kernel reads a buffer that no pass of the substep wrote.  GL leaves a store made
 * without data undefined; llvmpipe hands out zeros, the NVIDIA driver recycled memory,
 * and on an H200 every windless cloth took the never-written per-triangle wind forces
 * into its force sum (stale values: blow-ups, strains of 280 %).  Here every scratch
 * buffer is filled with NaN before every substep (gpu_backend_set_poison), so such a read
 * shows on llvmpipe too: each scheme, a windless cloth with triangles (the case that
 * failed), the wind, and Provot on the GPU (its counter and saved positions), and the
 * resident run, must stay finite and within the parity tolerances of the CPU after
 * 40 steps. */
static void test_no_read_before_write(void)
{
	gpu_backend_set_poison(gpu, true);
	for (int k = 0; k < SCHEME_COUNT; k++) {
		for (int c = 0; c < 3; c++) {
			setup s = {.integ = gpu_schemes[k], .wind = c > 0, .strain = c == 2, .substeps = 1};
			s.dt = step_of(s.integ);
			sim_world *a = make_world(&s), *b = make_world(&s);
			REQUIRE(a && b);
			gpu_backend_set_strain_on_gpu(gpu, s.strain);
			bool ok = true;
			for (int n = 0; n < 40 && ok; n++) {
				ok = sim_world_step(a, s.dt) == SIM_OK;
				sim_result r = gpu_backend_step(gpu, b, s.dt);
				CHECK_MSG(r == SIM_OK, "%s, case %d, step %d: %s", sim_integrator_name(s.integ), c, n,
				          sim_result_string(r));
				ok = ok && r == SIM_OK;
			}
			gpu_backend_set_strain_on_gpu(gpu, false);
			float diff = 0.0f;
			bool finite = true;
			const vec4 *xa = sim_world_positions(a), *xb = sim_world_positions(b);
			for (int i = 0; i < sim_world_vertex_count(a); i++)
				for (int j = 0; j < 3; j++) {
					finite = finite && isfinite(xb[i][j]);
					diff = fmaxf(diff, fabsf(xa[i][j] - xb[i][j]));
				}
			CHECK_MSG(ok && finite && diff <= tolerance_of(s.integ, s.strain), "%s, case %d: %g m from the CPU",
			          sim_integrator_name(s.integ), c, (double)diff);
			sim_world_destroy(&a);
			sim_world_destroy(&b);
		}
	}
	/* the resident run dispatches substep after substep with no fence between them */
	for (int k = 0; k < SCHEME_COUNT; k++) {
		setup s = {.integ = gpu_schemes[k], .substeps = 1};
		s.dt = step_of(s.integ);
		sim_world *w = make_world(&s);
		REQUIRE(w);
		CHECK(gpu_backend_step(gpu, w, s.dt) == SIM_OK); /* x.w holds the pins */
		CHECK(gpu_backend_run_resident(gpu, w, s.dt, 20) == SIM_OK);
		bool finite = true;
		for (int i = 0; i < sim_world_vertex_count(w); i++)
			for (int j = 0; j < 3; j++)
				finite = finite && isfinite(sim_world_positions(w)[i][j]);
		CHECK_MSG(finite, "%s resident: not finite", sim_integrator_name(s.integ));
		sim_world_destroy(&w);
	}
	gpu_backend_set_poison(gpu, false);
}

/* A backend whose worlds grow reallocates its state and its persistently mapped transfer
 * buffers (unmapping the old ones once, as they go) and is destroyed without a GL error:
 * an unmap of a buffer that is not mapped, or a delete of a name this context does not
 * have, is an error the debug output reports (on the H200 a destroy in the wrong context
 * reported both). */
static void test_regrow_and_destroy_cleanly(void)
{
	int before = gl_errors_;
	char error[512];
	while (glGetError() != GL_NO_ERROR) {
	}
	gpu_backend *b = gpu_backend_create(error, sizeof error);
	REQUIRE_MSG(b, "%s", error);
	static const int sizes[] = {4, 12, 8, 20};
	for (int k = 0; k < 4; k++) {
		sim_world_def d = sim_world_def_default();
		d.integrator = SIM_VERLET; /* x_prev travels too: all three transfer arrays */
		d.collisions = false;
		sim_world *w = sim_world_create(&d);
		REQUIRE(w);
		sim_grid_def g = sim_grid_def_default();
		g.name = "cloth";
		g.nx = g.ny = sizes[k];
		CHECK(sim_world_add_grid(w, &g) >= 0);
		sim_world_pin(w, 0, true);
		for (int n = 0; n < 3; n++)
			CHECK(gpu_backend_step(b, w, 0.001f) == SIM_OK);
		CHECK(gpu_backend_timing(b).persistent == gpu_backend_timing(gpu).persistent);
		sim_world_destroy(&w);
	}
	gpu_backend_destroy(&b);
	CHECK(b == NULL);
	GLenum e = glGetError();
	CHECK_MSG(e == GL_NO_ERROR, "0x%04x", e);
	CHECK_MSG(gl_errors_ == before, "%d GL errors", gl_errors_ - before);
}

/* MRA (the seed's own scheme) stays on the CPU: the GPU refuses it and leaves the world
 * as it was. */
static void test_unsupported_scheme_refused(void)
{
	setup s = {.integ = SIM_MRA};
	sim_world *w = make_world(&s);
	REQUIRE(w);
	uint64_t before = sim_world_state_hash(w);
	CHECK(!gpu_backend_supports(SIM_MRA));
	for (int k = 0; k < SIM_INTEGRATOR_COUNT; k++)
		CHECK(gpu_backend_supports((sim_integrator)k) == (k != SIM_MRA));
	CHECK(gpu_backend_step(gpu, w, 0.001f) == SIM_ERROR_INVALID);
	CHECK(sim_world_state_hash(w) == before);
	CHECK(sim_world_step_count(w) == 0);
	sim_world_destroy(&w);
}

/* A blow-up found by the sim library's check after a GPU step rolls the world back, as
 * on the CPU: explicit Euler at 10 ms. */
static void test_blowup_rolls_back(void)
{
	setup s = {.integ = SIM_EULER};
	sim_world *w = make_world(&s);
	REQUIRE(w);
	sim_result r = SIM_OK;
	int k = 0;
	uint64_t before = 0;
	for (; k < 2000 && r == SIM_OK; k++) {
		before = sim_world_state_hash(w);
		r = gpu_backend_step(gpu, w, 0.01f);
	}
	CHECK(r == SIM_ERROR_BLOWUP);
	CHECK(sim_world_state_hash(w) == before);
	CHECK(sim_world_step_count(w) == k - 1);
	sim_world_destroy(&w);
}

/* The hand-over uses persistent mapped buffers where the context has buffer storage
 * (llvmpipe: GL 4.5), and the timing counts every substep. */
static void test_timing_counts_substeps(void)
{
	gpu_timing t0 = gpu_backend_timing(gpu);
	setup s = {.integ = SIM_SYMPLECTIC, .substeps = 3};
	sim_world *w = make_world(&s);
	REQUIRE(w);
	for (int k = 0; k < 5; k++)
		CHECK(gpu_backend_step(gpu, w, 0.001f) == SIM_OK);
	gpu_timing t1 = gpu_backend_timing(gpu);
	CHECK(t1.substeps - t0.substeps == 15);
	CHECK(t1.gpu_us > t0.gpu_us);
	GLint major = 0, minor = 0;
	glGetIntegerv(GL_MAJOR_VERSION, &major);
	glGetIntegerv(GL_MINOR_VERSION, &minor);
	if (major * 10 + minor >= 44)
		CHECK(t1.persistent);
	sim_world_destroy(&w);
}

/* The resident run (the benchmark's) computes what the stepped run computes. */
static void test_resident_matches_stepped(void)
{
	setup s = {.integ = SIM_SYMPLECTIC, .dt = 0.001f, .substeps = 1};
	sim_world *a = make_world(&s), *b = make_world(&s);
	REQUIRE(a && b);
	/* one stepped step first, so x.w holds the pins */
	CHECK(gpu_backend_step(gpu, a, s.dt) == SIM_OK);
	CHECK(gpu_backend_step(gpu, b, s.dt) == SIM_OK);
	for (int k = 0; k < 100; k++)
		CHECK(gpu_backend_step(gpu, a, s.dt) == SIM_OK);
	CHECK(gpu_backend_run_resident(gpu, b, s.dt, 100) == SIM_OK);
	float diff = 0.0f;
	const vec4 *xa = sim_world_positions(a), *xb = sim_world_positions(b);
	for (int i = 0; i < sim_world_vertex_count(a); i++)
		for (int k = 0; k < 3; k++)
			diff = fmaxf(diff, fabsf(xa[i][k] - xb[i][k]));
	/* Same kernels and the same inputs: only a pinned vertex's x.w, written by the CPU's
	 * constraints each step, could differ, and it does not. */
	CHECK_MSG(diff == 0.0f, "%g", (double)diff);
	sim_world_destroy(&a);
	sim_world_destroy(&b);
}

/* The normals kernel against the renderer's CPU normals (rd_vertex_normals) for the same
 * positions.  The two add the same e1 x e2 products in the same triangle order, so the
 * unnormalised sums agree to the bit; only the normalisation may differ: GLSL allows
 * sqrt 3 ulp (as 1 / inversesqrt) and division 2.5 ulp where the CPU rounds correctly,
 * together under 6 ulp of 1.0 (7.2e-7) on a unit component, so 1e-6 per component.  A
 * wrong sign, a missing triangle or an unweighted sum is off by far more (a grid's
 * corner normal alone tilts by degrees). */
static float normals_gap(const sim_world *w, vec3 *cpu, vec4 *gpu_n, int *identical)
{
	int n = sim_world_vertex_count(w), nt = sim_world_triangle_total(w);
	const int *tris = sim_world_triangles(w);
	unsigned *ut = malloc(sizeof(unsigned) * 3 * (size_t)nt);
	vec4 *gx = malloc(sizeof(vec4) * (size_t)n);
	if (!ut || !gx) {
		free(ut);
		free(gx);
		return INFINITY;
	}
	for (int k = 0; k < 3 * nt; k++)
		ut[k] = (unsigned)tris[k];
	rd_vertex_normals(sim_world_positions(w), n, ut, nt, cpu);
	GLuint nb = gpu_backend_normals_buffer(gpu), xb = gpu_backend_positions_buffer(gpu);
	float gap = INFINITY;
	if (nb && xb) {
		glMemoryBarrier(GL_BUFFER_UPDATE_BARRIER_BIT);
		glBindBuffer(GL_SHADER_STORAGE_BUFFER, nb);
		glGetBufferSubData(GL_SHADER_STORAGE_BUFFER, 0, (GLsizeiptr)(sizeof(vec4) * (size_t)n), gpu_n);
		glBindBuffer(GL_SHADER_STORAGE_BUFFER, xb);
		glGetBufferSubData(GL_SHADER_STORAGE_BUFFER, 0, (GLsizeiptr)(sizeof(vec4) * (size_t)n), gx);
		glBindBuffer(GL_SHADER_STORAGE_BUFFER, 0);
		gap = 0.0f;
		*identical = 0;
		const vec4 *x = sim_world_positions(w);
		for (int i = 0; i < n; i++) {
			/* the positions' buffer holds the world's final state, not the GPU's candidate */
			for (int k = 0; k < 3; k++)
				if (gx[i][k] != x[i][k])
					gap = INFINITY;
			CHECK_MSG(gpu_n[i][3] == 0.0f, "vertex %d: w %g", i, (double)gpu_n[i][3]);
			bool same = true;
			for (int k = 0; k < 3; k++) {
				gap = fmaxf(gap, fabsf(gpu_n[i][k] - cpu[i][k]));
				same = same && gpu_n[i][k] == cpu[i][k];
			}
			*identical += same;
		}
	}
	free(ut);
	free(gx);
	return gap;
}

static void test_normals_match_renderer(void)
{
	setup s = {.integ = SIM_SYMPLECTIC, .wind = true, .dt = 0.001f, .substeps = 1};
	sim_world *w = make_world(&s);
	REQUIRE(w);
	int n = sim_world_vertex_count(w);
	vec3 *cpu = malloc(sizeof(vec3) * (size_t)n);
	vec4 *gn = malloc(sizeof(vec4) * (size_t)n);
	REQUIRE(cpu && gn);
	gpu_backend_set_normals(gpu, true);
	int identical = 0;
	for (int k = 0; k < 400; k++)
		REQUIRE(gpu_backend_step(gpu, w, s.dt) == SIM_OK);
	float gap = normals_gap(w, cpu, gn, &identical);
	/* deformed: the normals spread over more than 45 degrees (a flat sheet has one) */
	float least = 1.0f;
	for (int i = 0; i < n; i++)
		least = fminf(least, cpu[i][0] * cpu[0][0] + cpu[i][1] * cpu[0][1] + cpu[i][2] * cpu[0][2]);
	printf("  normals after 0.4 s in the wind: max |n_gpu - n_cpu| = %.3g, %d of %d bit-identical, "
	       "least cos to vertex 0's: %.3f\n", (double)gap, identical, n, (double)least);
	CHECK_MSG(gap <= 1e-6f, "%g", (double)gap);
	CHECK_MSG(least < 0.7f, "the cloth is hardly deformed: %g", (double)least);
	/* one step more: the pass follows the state */
	REQUIRE(gpu_backend_step(gpu, w, s.dt) == SIM_OK);
	float gap2 = normals_gap(w, cpu, gn, &identical);
	CHECK_MSG(gap2 <= 1e-6f, "%g", (double)gap2);
	/* every vertex on one point: the sums vanish and both sides give (0, 1, 0) */
	vec3 p = {0.1f, 1.0f, 0.2f}, z = {0.0f, 0.0f, 0.0f};
	for (int i = 0; i < n; i++)
		sim_world_set_vertex(w, i, p, z);
	REQUIRE(gpu_backend_normals(gpu, w));
	float gap3 = normals_gap(w, cpu, gn, &identical);
	CHECK_MSG(gap3 == 0.0f && identical == n, "collapsed: %g, %d identical", (double)gap3, identical);
	CHECK(gn[0][0] == 0.0f && gn[0][1] == 1.0f && gn[0][2] == 0.0f);
	gpu_backend_set_normals(gpu, false);
	free(cpu);
	free(gn);
	sim_world_destroy(&w);
}

/* A compile error and a link error each come back with the driver's log. */
static void test_shader_errors_carry_log(void)
{
	char error[2048] = "";
	const char *bad = "#version 430 core\nlayout(local_size_x = 1) in;\nvoid main() { undeclared_thing = 1.0; }\n";
	CHECK(gpu_compile_compute("broken.comp", bad, error, sizeof error) == 0);
	printf("  compile error: %s\n", error);
	CHECK(strstr(error, "compiling broken.comp: ") == error);
	CHECK(strstr(error, "undeclared_thing") != NULL);
	/* a compute shader without a work-group size compiles but cannot link */
	const char *unlinkable = "#version 430 core\nvoid main() { }\n";
	error[0] = '\0';
	CHECK(gpu_compile_compute("nosize.comp", unlinkable, error, sizeof error) == 0);
	printf("  link error: %s\n", error);
	CHECK(strstr(error, "linking nosize.comp: ") == error);
	CHECK(strlen(error) > strlen("linking nosize.comp: "));
	const char *good = "#version 430 core\nlayout(local_size_x = 1) in;\nvoid main() { }\n";
	unsigned p = gpu_compile_compute("good.comp", good, error, sizeof error);
	CHECK(p != 0);
	glDeleteProgram(p);
}

/* The demo's panel switch: the simulation thread steps on the GPU through its own
 * context shared with the window's (app/demo_gpu.c), the snapshot says so, the cloth
 * falls, and switching back returns the steps to the CPU. */
static void test_demo_switch(void)
{
	demo_options o = demo_options_default();
	o.scene = "hanging";
	o.offscreen = true;
	o.vsync = false;
	o.width = 320, o.height = 200;
	o.rate_scale = 0.0; /* as fast as it can */
	char error[512];
	int code = 0;
	demo *d = demo_create(&o, error, sizeof error, &code);
	REQUIRE_MSG(d != NULL, "%s", error);
	panel_model m;
	demo_panel_model(d, &m);
	CHECK(!m.gpu);
	m.gpu = true;
	m.gpu_changed = true;
	CHECK(demo_apply_panel(d, &m));
	bool on = false;
	int64_t steps_on = -1;
	float y0 = demo_snapshot(d)->positions[210][1];
	for (int k = 0; k < 4000 && !(on && demo_snapshot(d)->steps > steps_on + 50); k++) {
		demo_frame(d);
		const st_snapshot *sn = demo_snapshot(d);
		if (sn->stepper_on && !on) {
			on = true;
			steps_on = sn->steps;
		}
	}
	const st_snapshot *sn = demo_snapshot(d);
	printf("  demo: %s; %lld steps, message '%s'\n", on ? "stepped on the GPU" : "never on the GPU",
	       (long long)sn->steps, sn->message);
	CHECK(on);
	CHECK(sn->stepper_on);
	CHECK(sn->positions[210][1] < y0 - 0.001f); /* the middle of the cloth fell */
	demo_panel_model(d, &m);
	CHECK(m.gpu);
	m.gpu = false;
	m.gpu_changed = true;
	CHECK(demo_apply_panel(d, &m));
	bool off = false;
	for (int k = 0; k < 4000 && !off; k++) {
		demo_frame(d);
		off = !demo_snapshot(d)->stepper_on && strstr(demo_snapshot(d)->message, "integrator on the CPU") != NULL;
	}
	CHECK_MSG(off, "%s", demo_snapshot(d)->message);
	CHECK(demo_gl_errors(d) == 0);
	demo_destroy(&d);
}

/* Waits (calling demo_snapshot, as frames do) until the demo's snapshot has `steps`. */
static const st_snapshot *snapshot_at(demo *d, int64_t steps)
{
	const st_snapshot *s = demo_snapshot(d);
	for (Uint64 until = SDL_GetTicks64() + 60000; s->steps < steps && SDL_GetTicks64() < until;) {
		SDL_Delay(1);
		s = demo_snapshot(d);
	}
	return s->steps >= steps ? s : NULL;
}

/* Channels of two RGBA pictures that differ, and the largest difference. */
static long picture_diff(const uint8_t *a, const uint8_t *b, size_t bytes, int *largest)
{
	long n = 0;
	*largest = 0;
	for (size_t i = 0; i < bytes; i++) {
		int e = abs((int)a[i] - (int)b[i]);
		n += e != 0;
		if (e > *largest)
			*largest = e;
	}
	return n;
}

/* Issue 7's last piece: with the GPU integrator on, the demo draws the cloth straight from
 * the GPU (positions and the normals kernel's normals, copied into the snapshot slot's
 * draw buffer behind a fence) and not from the snapshot's copy.
 *
 * The picture must equal the one drawn from the CPU snapshot of the same state: the draw
 * buffer's positions are the world's final positions bit for bit (the very array the
 * snapshot copies), and the GPU's normals are within 1e-6 of the CPU's
 * (test_normals_match_renderer: GLSL's sqrt and division), which moves a lit channel by
 * under 1e-5 of a level; so a channel may differ by 1 where a value sits on a rounding
 * boundary, never more.  To show that the buffer is what was drawn, the snapshot's own
 * positions are then moved by 30 cm: drawn from the buffer the picture does not move,
 * drawn from the snapshot it does.  Switched off, the demo uploads the snapshot again. */
static void test_demo_draws_from_gpu_buffer(void)
{
	demo_options o = demo_options_default();
	o.scene = "hanging";
	o.offscreen = true;
	o.vsync = false;
	o.panel = false;
	o.width = 320, o.height = 200;
	o.rate_scale = 0.0;
	o.start_paused = true;
	o.gpu = true; /* as `tela hanging --backend gpu`: the switch on from the start */
	char error[512];
	int code = 0;
	demo *d = demo_create(&o, error, sizeof error, &code);
	REQUIRE_MSG(d != NULL, "%s", error);
	enum { STEPS = 300 }; /* 0.3 s: the cloth has swung into folds, its normals spread */
	st_command step = {.kind = ST_STEP}, pause = {.kind = ST_PAUSE};
	for (int k = 0; k < STEPS; k++)
		st_send(demo_sim(d), &step);
	/* A batch of commands ends with one more publication; ST_PAUSE publishes only that
	 * one, so the snapshot that has handled it (the demo's ST_SET_STEPPER, the steps,
	 * the pause) is the last until the next command. */
	st_send(demo_sim(d), &pause);
	const st_snapshot *s = snapshot_at(d, STEPS);
	for (Uint64 until = SDL_GetTicks64() + 60000; s && s->commands < STEPS + 2 && SDL_GetTicks64() < until;) {
		SDL_Delay(1);
		s = demo_snapshot(d);
	}
	REQUIRE(s && s->commands == STEPS + 2 && s->steps == STEPS);
	printf("  step %lld: stepper %s, draw buffer %u (slot %d), message '%s'\n", (long long)s->steps,
	       s->stepper_on ? "on" : "off", s->gpu_draw.buffer, s->gpu_draw.slot, s->message);
	REQUIRE(s->stepper_on && s->gpu_draw.buffer != 0 && s->gpu_draw.fence != NULL);

	/* Drawing from the GPU leaves the simulation alone (the normals pass only borrows the
	 * positions' buffer, which the next substep refills): the state is the bits of the
	 * same steps through gpu_backend_step directly, on a backend of this context. */
	{
		scn_scene *scene = NULL;
		sim_world *world = NULL;
		gpu_backend *direct = gpu_backend_create(error, sizeof error);
		REQUIRE_MSG(direct, "%s", error);
		REQUIRE(scn_load("hanging", &scene, NULL) == SCN_OK && scn_build(scene, &world, NULL) == SCN_OK);
		float dt = scn_scene_info(scene)->dt;
		bool ok = true;
		for (int k = 0; k < STEPS && ok; k++)
			ok = gpu_backend_step(direct, world, dt) == SIM_OK;
		CHECK(ok);
		CHECK(sim_world_vertex_count(world) == s->vertex_count);
		CHECK(memcmp(sim_world_positions(world), s->positions, sizeof(vec4) * (size_t)s->vertex_count) == 0);
		sim_world_destroy(&world);
		scn_scene_free(&scene);
		gpu_backend_destroy(&direct);
	}

	rd_renderer *r = demo_renderer(d);
	int w = 0, h = 0;
	demo_window_size(d, &w, &h);
	size_t bytes = (size_t)w * (size_t)h * 4;
	uint8_t *gpu_pic = malloc(bytes), *cpu_pic = malloc(bytes), *moved_gpu = malloc(bytes), *moved_cpu = malloc(bytes);
	vec4 *moved_x = malloc(sizeof(vec4) * (size_t)s->vertex_count);
	REQUIRE(gpu_pic && cpu_pic && moved_gpu && moved_cpu && moved_x);

	/* the demo's own frame: from the buffer */
	int64_t from_buffer = rd_cloth_buffer_frames(r), uploaded = rd_cloth_upload_frames(r);
	demo_draw(d);
	CHECK(rd_read_rgba(w, h, gpu_pic));
	CHECK(rd_cloth_buffer_frames(r) == from_buffer + 1 && rd_cloth_upload_frames(r) == uploaded);
	CHECK(demo_snapshot(d)->serial == s->serial); /* paused: the same state throughout */

	/* the same frame from the snapshot's copy */
	rd_frame f;
	demo_eye_frame(d, &f);
	REQUIRE(f.snapshot == s && f.cloth_buffer == s->gpu_draw.buffer);
	rd_frame cpu = f;
	cpu.cloth_buffer = 0, cpu.cloth_fence = NULL;
	rd_draw(r, &cpu);
	CHECK(rd_read_rgba(w, h, cpu_pic));
	CHECK(rd_cloth_upload_frames(r) == uploaded + 1);
	int largest = 0;
	long differ = picture_diff(gpu_pic, cpu_pic, bytes, &largest);
	printf("  from the GPU buffer against from the snapshot: %ld of %zu channels differ, by at most %d\n", differ,
	       bytes, largest);
	CHECK(largest <= 1);

	/* the snapshot's positions moved, the buffer not */
	st_snapshot moved = *s;
	memcpy(moved_x, s->positions, sizeof(vec4) * (size_t)s->vertex_count);
	for (int i = 0; i < s->vertex_count; i++)
		moved_x[i][0] += 0.3f;
	moved.positions = moved_x;
	rd_frame fm = f;
	fm.snapshot = &moved;
	rd_draw(r, &fm);
	CHECK(rd_read_rgba(w, h, moved_gpu));
	fm.cloth_buffer = 0, fm.cloth_fence = NULL;
	rd_draw(r, &fm);
	CHECK(rd_read_rgba(w, h, moved_cpu));
	int largest_gpu = 0, largest_cpu = 0;
	long same = picture_diff(moved_gpu, gpu_pic, bytes, &largest_gpu);
	long changed = picture_diff(moved_cpu, gpu_pic, bytes, &largest_cpu);
	printf("  snapshot moved 0.3 m: from the buffer %ld channels differ (at most %d), from the snapshot %ld "
	       "(at most %d)\n",
	       same, largest_gpu, changed, largest_cpu);
	CHECK(same == 0);
	CHECK(changed > 3000 && largest_cpu > 40); /* the cloth left its place on the screen */
	CHECK(demo_gl_errors(d) == 0);

	/* running: the simulation thread refills the slots' buffers while the window draws
	 * from the one it holds, frame after frame, every frame from a buffer */
	st_command play = {.kind = ST_PLAY};
	st_send(demo_sim(d), &play);
	from_buffer = rd_cloth_buffer_frames(r), uploaded = rd_cloth_upload_frames(r);
	int64_t steps_before = s->steps;
	int frames = 0;
	Uint64 t0 = SDL_GetTicks64();
	/* at least 100 frames and 50 steps (how the two threads share the cores varies) */
	for (Uint64 until = t0 + 60000; (frames < 100 || s->steps < steps_before + 50) && SDL_GetTicks64() < until;) {
		CHECK(demo_frame(d));
		frames++;
		s = demo_snapshot(d);
	}
	printf("  running: %d frames drawn in %llu ms while %lld steps were made\n", frames,
	       (unsigned long long)(SDL_GetTicks64() - t0), (long long)(s->steps - steps_before));
	CHECK(s->steps >= steps_before + 50);
	CHECK(rd_cloth_buffer_frames(r) == from_buffer + frames && rd_cloth_upload_frames(r) == uploaded);
	CHECK(demo_gl_errors(d) == 0);
	st_send(demo_sim(d), &pause);

	/* switched off: the snapshot carries no buffer and the demo uploads it */
	panel_model m;
	demo_panel_model(d, &m);
	CHECK(m.gpu);
	m.gpu = false;
	m.gpu_changed = true;
	CHECK(demo_apply_panel(d, &m));
	st_send(demo_sim(d), &step);
	s = demo_snapshot(d);
	for (Uint64 until = SDL_GetTicks64() + 60000; s->stepper_on && SDL_GetTicks64() < until;) {
		SDL_Delay(1);
		s = demo_snapshot(d);
	}
	CHECK(!s->stepper_on && s->gpu_draw.buffer == 0);
	from_buffer = rd_cloth_buffer_frames(r), uploaded = rd_cloth_upload_frames(r);
	demo_draw(d);
	CHECK(rd_cloth_buffer_frames(r) == from_buffer && rd_cloth_upload_frames(r) == uploaded + 1);
	CHECK(demo_gl_errors(d) == 0);
	free(gpu_pic), free(cpu_pic), free(moved_gpu), free(moved_cpu), free(moved_x);
	demo_destroy(&d);
}

static const test_case tests[] = {
    TEST(test_shader_errors_carry_log),
    TEST(test_parity_pinned),
    TEST(test_parity_wind),
    TEST(test_parity_strain_limit),
    TEST(test_parity_anchors_blocks_substeps),
    TEST(test_parity_mesh_objects),
    TEST(test_parity_implicit_large_step),
    TEST(test_strain_limit_on_gpu),
    TEST(test_no_read_before_write),
    TEST(test_regrow_and_destroy_cleanly),
    TEST(test_unsupported_scheme_refused),
    TEST(test_blowup_rolls_back),
    TEST(test_timing_counts_substeps),
    TEST(test_resident_matches_stepped),
    TEST(test_normals_match_renderer),
    /* last: they leave another context current */
    TEST(test_demo_switch),
    TEST(test_demo_draws_from_gpu_buffer),
};

int main(int argc, char **argv)
{
	gl_window win;
	char error[4096];
	if (!gl_window_open(&win, true, 64, 64, false, error, sizeof error)) {
		printf("SKIP: no OpenGL 4.3 context: %s\n", error);
		return 77;
	}
	GLint blocks = 0, bindings = 0;
	glGetIntegerv(GL_MAX_COMPUTE_SHADER_STORAGE_BLOCKS, &blocks);
	glGetIntegerv(GL_MAX_SHADER_STORAGE_BUFFER_BINDINGS, &bindings);
	printf("GL %s, renderer %s; %d storage blocks per compute shader, %d bindings\n",
	       (const char *)glGetString(GL_VERSION), (const char *)glGetString(GL_RENDERER), blocks, bindings);
	if (glDebugMessageCallback) {
		glEnable(GL_DEBUG_OUTPUT);
		glEnable(GL_DEBUG_OUTPUT_SYNCHRONOUS);
		glDebugMessageCallback(count_gl_errors, NULL);
	}
	gpu = gpu_backend_create(error, sizeof error);
	if (!gpu) {
		fprintf(stderr, "FAIL: gpu_backend_create: %s\n", error);
		gl_window_close(&win);
		return 1;
	}
	int rc = test_run(argc, argv, tests, (int)(sizeof tests / sizeof tests[0]));
	/* The demo tests leave their window's context current, and a demo a failed REQUIRE
	 * left behind keeps it: the backend's names belong to this context (on the H200 its
	 * destroy in the demo's context reported an unmapped buffer and unknown programs). */
	SDL_GL_MakeCurrent(win.window, win.context);
	gpu_backend_destroy(&gpu);
	if (gl_errors_ > 0) {
		fprintf(stderr, "FAIL: %d GL errors on the tests' context\n", gl_errors_);
		rc = 1;
	}
	gl_window_close(&win);
	return rc;
}
