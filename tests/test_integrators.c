/* Every integrator against closed forms: a mass on a spring (the discrete amplification
 * and period each scheme must have) and free fall under gravity. */
#include "test.h"

#include "sim/sim.h"

#define PI 3.14159265358979323846

/* Three 1 kg particles, each on its own anchor spring (zero-length, to its rest point)
 * of stiffness k = (2 pi)^2 so T = 1 s; the triangle's springs are given zero stiffness.
 * Particle 0 starts displaced by 0.1 m along x. */
static sim_world *oscillator(sim_integrator integ, double omega)
{
	sim_world_def def = sim_world_def_default();
	def.gravity[1] = 0.0f;
	def.integrator = integ;
	def.blowup_speed = 1e9f;
	def.blowup_strain = 1e9f;
	sim_world *w = sim_world_create(&def);
	static const float pos[9] = {0, 0, 0, 1, 0, 0, 0, 1, 0};
	static const int tri[3] = {0, 1, 2};
	sim_mesh_def m = {.name = "osc", .vertex_count = 3, .positions = pos, .triangle_count = 1, .triangles = tri};
	m.material = sim_material_default();
	m.material.total_mass = 3.0f;
	for (int k = 0; k < SIM_SPRING_KIND_COUNT; k++)
		m.material.stiffness[k] = m.material.damping[k] = 0.0f;
	m.material.anchor_stiffness = (float)(omega * omega);
	if (sim_world_add_mesh(w, &m) < 0)
		sim_world_destroy(&w);
	if (w) {
		vec3 p = {0.1f, 0.0f, 0.0f}, v = {0.0f, 0.0f, 0.0f};
		sim_world_set_vertex(w, 0, p, v);
	}
	return w;
}

/* omega^2 x^2 + v^2 of particle 0: twice the energy per unit mass. */
static double energy(const sim_world *w, double omega)
{
	double x = sim_world_positions(w)[0][0], v = sim_world_velocities(w)[0][0];
	return omega * omega * x * x + v * v;
}

/* Steps n times; returns the mean period from upward zero crossings of x (linear
 * interpolation), and the largest |x| in the first and the last complete period. */
typedef struct run_result {
	double period, first_amp, last_amp;
	int crossings;
	bool ok;
} run_result;

static run_result run(sim_world *w, double h, int n)
{
	run_result r = {0};
	double prev = sim_world_positions(w)[0][0], t_first = -1, t_last = -1;
	double amp = 0.0;
	for (int i = 1; i <= n; i++) {
		if (sim_world_step(w, (float)h) != SIM_OK)
			return r;
		double x = sim_world_positions(w)[0][0];
		if (prev < 0.0 && x >= 0.0) {
			double t = h * (i - 1) + h * (-prev) / (x - prev);
			if (t_first < 0) {
				t_first = t;
			} else {
				r.crossings++;
				if (r.crossings == 1)
					r.first_amp = amp;
				r.last_amp = amp;
			}
			t_last = t;
			amp = 0.0;
		}
		amp = fmax(amp, fabs(x));
		prev = x;
	}
	r.period = r.crossings ? (t_last - t_first) / r.crossings : 0.0;
	r.ok = true;
	return r;
}

/* One-step schemes multiply omega^2 x^2 + v^2 by exactly |lambda|^2 per step, where
 * lambda is the scheme's amplification of the oscillator's eigenmode. */
static void check_energy_factor(sim_integrator integ, double h, int n, double factor_per_step, double tol)
{
	double omega = 2.0 * PI;
	sim_world *w = oscillator(integ, omega);
	REQUIRE(w);
	double e0 = energy(w, omega);
	for (int i = 0; i < n; i++)
		REQUIRE(sim_world_step(w, (float)h) == SIM_OK);
	double expected = e0 * pow(factor_per_step, n);
	CHECK_MSG(fabs(energy(w, omega) / expected - 1.0) < tol, "%s: energy %.9g, closed form %.9g",
	          sim_integrator_name(integ), energy(w, omega), expected);
	sim_world_destroy(&w);
}

static void test_explicit_euler_grows(void)
{
	double z = 2.0 * PI * 0.01;
	/* amplitude grows by sqrt(1 + z^2) per step: energy by 1 + z^2 */
	check_energy_factor(SIM_EULER, 0.01, 100, 1.0 + z * z, 1e-4);
	check_energy_factor(SIM_EULER, 0.01, 500, 1.0 + z * z, 1e-4);
}

static void test_implicit_euler_decays(void)
{
	double z = 2.0 * PI * 0.01;
	check_energy_factor(SIM_IMPLICIT, 0.01, 100, 1.0 / (1.0 + z * z), 1e-4);
	check_energy_factor(SIM_IMPLICIT, 0.01, 10000, 1.0 / (1.0 + z * z), 2e-3);
}

static void test_midpoint_grows_slowly(void)
{
	double z = 2.0 * PI * 0.02;
	check_energy_factor(SIM_MIDPOINT, 0.02, 5000, 1.0 + z * z * z * z / 4.0, 1e-3);
}

static void test_rk4_near_exact(void)
{
	/* |lambda|^2 = 1 - z^6 / 72 + z^8 / 576: visible only at a coarse step. */
	double z = 2.0 * PI * 0.05;
	double f = 1.0 - pow(z, 6) / 72.0 + pow(z, 8) / 576.0;
	check_energy_factor(SIM_RK4, 0.05, 2000, f, 2e-3);
	/* At a fine step RK4 keeps the energy over 100 periods to a few parts per million. */
	check_energy_factor(SIM_RK4, 0.005, 20000, 1.0, 1e-4);
}

/* Symplectic Euler, Verlet and the MRA scheme satisfy x' - 2x + x_ = -z^2 x, whose
 * solution turns by theta = acos(1 - z^2 / 2) per step: period 2 pi h / theta, O(h^2)
 * from the exact 1 s, with bounded amplitude. */
static void check_bounded(sim_integrator integ, double h, double z2_eff, double period_tol_exact)
{
	double omega = 2.0 * PI;
	sim_world *w = oscillator(integ, omega);
	REQUIRE(w);
	int n = (int)(100.0 / h);
	run_result r = run(w, h, n);
	REQUIRE(r.ok);
	double theta = acos(1.0 - z2_eff / 2.0);
	double discrete = 2.0 * PI * h / theta;
	CHECK_MSG(r.crossings >= 98, "%s: %d periods", sim_integrator_name(integ), r.crossings);
	CHECK_MSG(fabs(r.period - discrete) < 1e-5, "%s: period %.9f, discrete closed form %.9f",
	          sim_integrator_name(integ), r.period, discrete);
	CHECK_MSG(fabs(r.period - 1.0) < period_tol_exact, "%s: period %.9f vs exact 1 s", sim_integrator_name(integ),
	          r.period);
	CHECK_MSG(fabs(r.last_amp / r.first_amp - 1.0) < 0.01 && r.first_amp > 0.099 && r.first_amp < 0.101,
	          "%s: amplitude %.6f after 100 periods, %.6f in the first", sim_integrator_name(integ), r.last_amp,
	          r.first_amp);
	sim_world_destroy(&w);
}

static void test_symplectic_verlet_mra_bounded(void)
{
	double h = 0.01, z = 2.0 * PI * h;
	/* The O(h^2) period error is z^2 / 24 of the period: 1.6e-4 s here. */
	check_bounded(SIM_SYMPLECTIC, h, z * z, 3e-4);
	check_bounded(SIM_VERLET, h, z * z, 3e-4);
	check_bounded(SIM_MRA, h, z * z, 3e-4);
	/* Halving h quarters the period error. */
	check_bounded(SIM_SYMPLECTIC, h / 2, z * z / 4, 0.75e-4);
}

/* Kang on a linear oscillator is symplectic Euler with the softened frequency
 * omega^2 / (1 + z^2): area-preserving, stable at any step, longer period. */
static void test_kang_softened(void)
{
	double h = 0.01, z = 2.0 * PI * h;
	check_bounded(SIM_KANG, h, z * z / (1.0 + z * z), 3e-3);
	/* Beyond symplectic Euler's limit h < 2 / omega = 0.32 s, where it diverges. */
	h = 0.5, z = 2.0 * PI * h;
	sim_world *w = oscillator(SIM_KANG, 2.0 * PI);
	REQUIRE(w);
	run_result r = run(w, h, 2000);
	double amp_ratio = r.last_amp / r.first_amp;
	CHECK_MSG(fabs(amp_ratio - 1.0) < 0.05, "amplitude ratio %.4f over 2000 steps", amp_ratio);
	sim_world *sy = oscillator(SIM_SYMPLECTIC, 2.0 * PI);
	REQUIRE(sy);
	bool diverged = false;
	for (int i = 0; i < 200 && !diverged; i++)
		diverged = sim_world_step(sy, (float)h) != SIM_OK || fabs(sim_world_positions(sy)[0][0]) > 10.0;
	CHECK_MSG(diverged, "symplectic Euler should diverge at h = %.2f", h);
	sim_world_destroy(&sy);
	CHECK(r.ok);
	double theta = acos(1.0 - z * z / (1.0 + z * z) / 2.0);
	CHECK_NEAR(r.period, 2.0 * PI * h / theta, 1e-3);
	sim_world_destroy(&w);
}

/* Verlet's drag form x' = 1.99 x - 0.99 x_: amplitude decays by about sqrt(0.99) per step. */
static void test_verlet_drag_decays(void)
{
	sim_world *w = oscillator(SIM_VERLET, 2.0 * PI);
	REQUIRE(w);
	sim_world_def def = *sim_world_get_def(w);
	def.verlet_drag = true;
	REQUIRE(sim_world_set_def(w, &def) == SIM_OK);
	run_result r = run(w, 0.01, 1000);
	REQUIRE(r.ok);
	/* The characteristic roots of x' = (1.99 - z^2) x - 0.99 x_ are complex with product
	 * 0.99, so |lambda| = sqrt(0.99): between the first and the last complete period the
	 * amplitude falls by 0.99^(steps / 2). */
	REQUIRE(r.crossings >= 5);
	double steps = (r.crossings - 1) * r.period / 0.01;
	double expected = pow(0.99, 0.5 * steps);
	CHECK_MSG(fabs(r.last_amp / r.first_amp / expected - 1.0) < 0.02, "decay %.5g over %d periods, closed form %.5g",
	          r.last_amp / r.first_amp, r.crossings - 1, expected);
	sim_world_destroy(&w);
}

/* A 4 x 4 sheet with soft springs: its rest lengths and its float positions differ by
 * rounding, and at the default stiffness explicit Euler (unstable at any step without
 * damping) would amplify that into a blow-up within a few hundred steps. */
static sim_grid_def soft_grid(void)
{
	sim_grid_def gd = sim_grid_def_default();
	gd.nx = gd.ny = 4;
	gd.material.stiffness[SIM_SPRING_STRUCTURAL] = 1.0f;
	gd.material.stiffness[SIM_SPRING_SHEAR] = 0.5f;
	gd.material.stiffness[SIM_SPRING_BEND] = 0.05f;
	return gd;
}

/* Under uniform gravity with no deformation every scheme's velocity is exactly g t;
 * positions follow each scheme's discrete sum.  The position-form schemes (Verlet, MRA)
 * carry velocity only as a difference of float positions, so each step may round it by
 * up to an ulp of the position over h: their bound is n ulp(x) / h, not 1e-4. */
static void test_free_fall_all(void)
{
	const double g = -9.81, h = 1e-3;
	const int n = 500;
	for (int k = 0; k < SIM_INTEGRATOR_COUNT; k++) {
		sim_world_def def = sim_world_def_default();
		def.integrator = (sim_integrator)k;
		sim_world *w = sim_world_create(&def);
		REQUIRE(w);
		sim_grid_def gd = soft_grid();
		REQUIRE(sim_world_add_grid(w, &gd) == 0);
		double y0 = sim_world_positions(w)[5][1];
		for (int i = 0; i < n; i++)
			REQUIRE(sim_world_step(w, (float)h) == SIM_OK);
		double v = sim_world_velocities(w)[5][1], y = sim_world_positions(w)[5][1];
		bool position_form = k == SIM_VERLET || k == SIM_MRA;
		double v_tol = position_form ? n * (nextafterf(1.0f, 2.0f) - 1.0f) / h * 0.5 : 1e-4;
		double sum; /* h^2 g times sum of the step counts the scheme accumulates */
		if (k == SIM_EULER)
			sum = n * (n - 1) / 2.0;
		else if (k == SIM_MIDPOINT || k == SIM_RK4)
			sum = n * n / 2.0;
		else
			sum = n * (n + 1) / 2.0;
		CHECK_MSG(fabs(v - g * h * n) < v_tol, "%s: v %.7f, expected %.7f", sim_integrator_name(k), v, g * h * n);
		CHECK_MSG(fabs((y - y0) - g * h * h * sum) < v_tol * h * n, "%s: fell %.7f, expected %.7f",
		          sim_integrator_name(k), y - y0, g * h * h * sum);
		sim_world_destroy(&w);
	}
}

/* Switching schemes mid-fall keeps the state continuous: v stays g t throughout.  A
 * 10 ms step keeps the position-form schemes' rounding (ulp / h) well below 1e-4. */
static void test_switch_without_jump(void)
{
	const double g = -9.81, h = 1e-2;
	sim_world_def def = sim_world_def_default();
	sim_world *w = sim_world_create(&def);
	REQUIRE(w);
	sim_grid_def gd = soft_grid();
	REQUIRE(sim_world_add_grid(w, &gd) == 0);
	int steps = 0;
	for (int round = 0; round < 2; round++) {
		for (int k = 0; k < SIM_INTEGRATOR_COUNT; k++) {
			REQUIRE(sim_world_set_integrator(w, (sim_integrator)k) == SIM_OK);
			for (int i = 0; i < 3; i++, steps++)
				REQUIRE(sim_world_step(w, (float)h) == SIM_OK);
			double v = sim_world_velocities(w)[5][1];
			CHECK_MSG(fabs(v - g * h * steps) < 2e-4, "after %s: v %.6f, expected %.6f",
			          sim_integrator_name(k), v, g * h * steps);
		}
	}
	sim_world_destroy(&w);
}

static void test_names_round_trip(void)
{
	for (int k = 0; k < SIM_INTEGRATOR_COUNT; k++) {
		sim_integrator back;
		CHECK(sim_integrator_from_name(sim_integrator_name((sim_integrator)k), &back));
		CHECK(back == (sim_integrator)k);
	}
	sim_integrator dummy;
	CHECK(!sim_integrator_from_name("leapfrog", &dummy));
	CHECK(!sim_integrator_from_name("", &dummy));
}

static const test_case tests[] = {
	TEST(test_explicit_euler_grows),
	TEST(test_implicit_euler_decays),
	TEST(test_midpoint_grows_slowly),
	TEST(test_rk4_near_exact),
	TEST(test_symplectic_verlet_mra_bounded),
	TEST(test_kang_softened),
	TEST(test_verlet_drag_decays),
	TEST(test_free_fall_all),
	TEST(test_switch_without_jump),
	TEST(test_names_round_trip),
};
TEST_MAIN(tests)
