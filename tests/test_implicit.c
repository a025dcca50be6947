/* Implicit Euler (Baraff-Witkin) against expectations computed independently of
 * implicit.c: closed-form backward Euler for linear one-particle systems, a dense
 * matrix built here from the force formulas (and checked against finite differences of
 * sim_compute_forces), and bounds on a stiff cloth. */
#include "sim/sim.h"
#include "multilevel.h"
#include "sim_internal.h"
#include "test.h"
#include "sim_fixtures.h"

#include <stdint.h>

static sim_world_def implicit_def(void)
{
	sim_world_def def = sim_world_def_default();
	def.integrator = SIM_IMPLICIT;
	def.substeps = 1;
	def.strain_limit = false;
	return def;
}

static double sq(double a)
{
	return a * a;
}

/* ---- dense reference system -------------------------------------------------------------- */

/* Full Jacobians dF/dx (K) and dF/dv (D) of gravity, air damping, springs and anchors at
 * state x, as dense 3n x 3n row-major matrices, from the conventions of forces.c:
 *   spring: f_a += k (l - L) u + kd ((v_b - v_a) . u) u, f_b -= the same
 *   K_spring = k [u uᵀ + t (I - u uᵀ)], t = 1 - L/l, clamped at 0 when clamp is set
 *   D_spring = kd u uᵀ; anchor: -k_a I, -kd_a I; air: -c m I. */
static void dense_jacobians(const sim_world *w, const vec4 *x, bool clamp, double *K, double *D)
{
	const int n3 = 3 * w->n;
	memset(K, 0, sizeof(double) * (size_t)n3 * (size_t)n3);
	memset(D, 0, sizeof(double) * (size_t)n3 * (size_t)n3);
	for (int i = 0; i < w->n; i++) {
		for (int c = 0; c < 3; c++) {
			int r = 3 * i + c;
			K[(size_t)r * n3 + r] -= w->rest[i][3];
			D[(size_t)r * n3 + r] -= w->anchor_kd[i] + (double)w->def.air_damping * w->mass[i];
		}
	}
	for (int s = 0; s < w->spring_count; s++) {
		const sim_spring *sp = &w->springs[s];
		double d[3], l = 0.0;
		for (int c = 0; c < 3; c++) {
			d[c] = (double)x[sp->b][c] - x[sp->a][c];
			l += d[c] * d[c];
		}
		l = sqrt(l);
		if (l == 0.0)
			continue;
		double t = 1.0 - sp->rest / l;
		if (clamp && t < 0.0)
			t = 0.0;
		double ks[3][3], ds[3][3];
		for (int r = 0; r < 3; r++) {
			for (int c = 0; c < 3; c++) {
				double uu = d[r] / l * d[c] / l;
				ks[r][c] = sp->k * (uu + t * ((r == c ? 1.0 : 0.0) - uu));
				ds[r][c] = sp->kd * uu;
			}
		}
		/* dF_a/dx_a = -K, dF_a/dx_b = +K, dF_b/dx_a = +K, dF_b/dx_b = -K. */
		const int ends[2] = {sp->a, sp->b};
		for (int p = 0; p < 2; p++) {
			for (int q = 0; q < 2; q++) {
				double sign = p == q ? -1.0 : 1.0;
				for (int r = 0; r < 3; r++) {
					for (int c = 0; c < 3; c++) {
						size_t at = (size_t)(3 * ends[p] + r) * n3 + (3 * ends[q] + c);
						K[at] += sign * ks[r][c];
						D[at] += sign * ds[r][c];
					}
				}
			}
		}
	}
}

/* A = M - h D - h^2 K and b = h f0 + h^2 K v0 at state (x, v), K clamped as the solver's. */
static void dense_system(const sim_world *w, const vec4 *x, const vec4 *v, float h, double *A, double *b)
{
	const int n3 = 3 * w->n;
	double *K = malloc(sizeof(double) * (size_t)n3 * (size_t)n3);
	vec4 *f = malloc(sizeof(vec4) * (size_t)w->n);
	REQUIRE(K && f);
	dense_jacobians(w, x, true, K, A);
	sim_compute_forces(w, x, v, f);
	for (int r = 0; r < n3; r++) {
		double kv = 0.0;
		for (int c = 0; c < n3; c++) {
			size_t at = (size_t)r * n3 + c;
			kv += K[at] * v[c / 3][c % 3];
			A[at] = -(double)h * A[at] - (double)h * h * K[at];
		}
		A[(size_t)r * n3 + r] += w->mass[r / 3];
		b[r] = (double)h * f[r / 3][r % 3] + (double)h * h * kv;
	}
	free(K);
	free(f);
}

/* r^T P^-1 r with P the 3x3 block diagonal of A, each block inverted by Gaussian
 * elimination (a different route from the solver's cofactors). */
static double block_jacobi_norm2(const double *A, int n, const double *r)
{
	const int n3 = 3 * n;
	double total = 0.0;
	for (int i = 0; i < n; i++) {
		double m[3][4];
		for (int p = 0; p < 3; p++) {
			for (int q = 0; q < 3; q++)
				m[p][q] = A[(size_t)(3 * i + p) * n3 + 3 * i + q];
			m[p][3] = r[3 * i + p];
		}
		for (int p = 0; p < 3; p++) {
			for (int q = p + 1; q < 3; q++) {
				double f = m[q][p] / m[p][p];
				for (int c = p; c < 4; c++)
					m[q][c] -= f * m[p][c];
			}
		}
		double z[3];
		for (int p = 2; p >= 0; p--) {
			double s = m[p][3];
			for (int c = p + 1; c < 3; c++)
				s -= m[p][c] * z[c];
			z[p] = s / m[p][p];
		}
		total += r[3 * i] * z[0] + r[3 * i + 1] * z[1] + r[3 * i + 2] * z[2];
	}
	return total;
}

/* Takes one solver step from the world's current state and checks the solution against
 * the dense system: the filtered residual b - A dv, relative to the residual of the
 * paper's starting point dv = z, in the block-Jacobi norm the solver reports. */
static void check_solution_n(sim_world *w, float h, double tol_factor, int *iterations)
{
	const int n = w->n, n3 = 3 * n;
	const size_t bytes = sizeof(vec4) * (size_t)n;
	vec4 *x0 = malloc(bytes), *v0 = malloc(bytes);
	double *A = malloc(sizeof(double) * (size_t)n3 * (size_t)n3);
	double *b = malloc(sizeof(double) * (size_t)n3), *r = malloc(sizeof(double) * (size_t)n3);
	double *r0 = malloc(sizeof(double) * (size_t)n3), *dv = malloc(sizeof(double) * (size_t)n3);
	REQUIRE(x0 && v0 && A && b && r && r0 && dv);
	memcpy(x0, w->x, bytes);
	memcpy(v0, w->v, bytes);
	dense_system(w, x0, v0, h, A, b);

	sim_stats st = {0};
	sim_implicit_step(w, h, &st);

	for (int i = 0; i < n; i++) {
		bool kinematic = x0[i][3] == 0.0f;
		for (int c = 0; c < 3; c++)
			dv[3 * i + c] = kinematic ? (double)w->vc[i][c] - v0[i][c] : (double)w->v[i][c] - v0[i][c];
		/* Positions follow the new velocities. */
		for (int c = 0; c < 3; c++)
			CHECK_NEAR(w->x[i][c], x0[i][c] + h * w->v[i][c], 1e-6);
		CHECK(w->x[i][3] == x0[i][3]);
	}
	for (int rr = 0; rr < n3; rr++) {
		double adv = 0.0, az = 0.0;
		for (int c = 0; c < n3; c++) {
			adv += A[(size_t)rr * n3 + c] * dv[c];
			if (x0[c / 3][3] == 0.0f)
				az += A[(size_t)rr * n3 + c] * dv[c];
		}
		bool kinematic = x0[rr / 3][3] == 0.0f;
		r[rr] = kinematic ? 0.0 : b[rr] - adv;
		r0[rr] = kinematic ? 0.0 : b[rr] - az;
	}
	double rel = sqrt(block_jacobi_norm2(A, n, r) / block_jacobi_norm2(A, n, r0));
	double tol = w->def.cg_tolerance;
	CHECK_MSG(st.cg_iterations > 0, "%d iterations", st.cg_iterations);
	CHECK_MSG(st.cg_iterations < w->def.cg_max_iterations, "%d iterations", st.cg_iterations);
	CHECK_MSG(st.cg_residual <= tol, "reported residual %g", st.cg_residual);
	/* The recomputed residual includes the float rounding of v1 - v0 and of the solver's
	 * own products, so it may exceed the reported one slightly. */
	CHECK_MSG(rel <= tol_factor * tol, "dense relative residual %g (reported %g, %d iterations)", rel,
	          st.cg_residual, st.cg_iterations);
	CHECK_MSG(fabs(rel - st.cg_residual) <= 0.1 * tol, "dense %g vs reported %g", rel, st.cg_residual);
	free(x0);
	free(v0);
	free(A);
	free(b);
	free(r);
	free(r0);
	free(dv);
	if (iterations)
		*iterations = st.cg_iterations;
}

static void check_solution(sim_world *w, float h, double tol_factor)
{
	check_solution_n(w, h, tol_factor, NULL);
}

/* ---- tests ------------------------------------------------------------------------------- */

/* Tetrahedron with inert edges: each vertex is a linear oscillator on its anchor spring,
 * for which the linearised implicit step is exact backward Euler:
 *   v1 = (v0 - h w^2 e0) / (1 + h^2 w^2),  e1 = e0 + h v1,  w^2 = k / m
 * and v^2 + w^2 e^2 shrinks by exactly 1 / (1 + (w h)^2) per step. */
static void test_anchor_closed_form(void)
{
	sim_world_def def = implicit_def();
	def.gravity[1] = 0.0f;
	sim_world *w = sim_world_create(&def);
	REQUIRE(w);
	sim_material m = sim_material_default();
	for (int k = 0; k < SIM_SPRING_KIND_COUNT; k++)
		m.stiffness[k] = m.damping[k] = 0.0f;
	m.total_mass = 0.4f;
	m.anchor_stiffness = 100.0f;
	m.anchor_damping = 0.0f;
	REQUIRE(sim_world_add_tetrahedron(w, "tet", (vec3){0.0f, 0.0f, 0.0f}, 0.2f, &m) == 0);
	const float h = 1.0f / 60.0f;
	const double mass = sim_world_vertex_mass(w, 0);
	CHECK_NEAR(mass, 0.1, 1e-6);
	const double w2 = 100.0 / mass;
	vec4 rest[4];
	memcpy(rest, sim_world_positions(w), sizeof rest);

	const double e0[3] = {0.03, -0.02, 0.01}, u0[3] = {0.2, 0.1, -0.3};
	vec3 p, vel;
	for (int c = 0; c < 3; c++) {
		p[c] = rest[0][c] + (float)e0[c];
		vel[c] = (float)u0[c];
	}
	REQUIRE(sim_world_set_vertex(w, 0, p, vel) == SIM_OK);
	double e[3], u[3];
	for (int c = 0; c < 3; c++) {
		e[c] = (double)p[c] - rest[0][c];
		u[c] = vel[c];
	}
	REQUIRE(sim_world_step(w, h) == SIM_OK);
	const vec4 *x = sim_world_positions(w), *v = sim_world_velocities(w);
	for (int c = 0; c < 3; c++) {
		double v1 = (u[c] - h * w2 * e[c]) / (1.0 + (double)h * h * w2);
		double e1 = e[c] + h * v1;
		CHECK_NEAR(v[0][c], v1, 1e-6 * (1.0 + fabs(v1)));
		CHECK_NEAR(x[0][c] - rest[0][c], e1, 1e-6);
	}
	/* The other vertices have no force and no coupling: exactly at rest. */
	for (int i = 1; i < 4; i++) {
		for (int c = 0; c < 3; c++) {
			CHECK(x[i][c] == rest[i][c]);
			CHECK(v[i][c] == 0.0f);
		}
	}

	/* Amplitude decay over many steps (with the warm start active from step 2 on). */
	const double factor = 1.0 / (1.0 + (double)h * h * w2);
	double energy = 0.0;
	for (int c = 0; c < 3; c++)
		energy += sq(v[0][c]) + w2 * sq((double)x[0][c] - rest[0][c]);
	const double energy0 = energy;
	const int steps = 20;
	for (int s = 0; s < steps; s++) {
		REQUIRE(sim_world_step(w, h) == SIM_OK);
		double next = 0.0;
		for (int c = 0; c < 3; c++)
			next += sq(v[0][c]) + w2 * sq((double)x[0][c] - rest[0][c]);
		CHECK_NEAR(next / energy, factor, 2e-4);
		energy = next;
	}
	CHECK_NEAR(sqrt(energy / energy0), pow(factor, 0.5 * steps), 1e-3 * pow(factor, 0.5 * steps));
	sim_world_destroy(&w);
}

/* A triangle whose only live spring joins vertex 0 (pinned) and vertex 1, along x.  The
 * motion stays on the spring's axis, where the system is linear and one implicit step
 * is exactly backward Euler for m e'' = -k e - kd e':
 *   v1 = (m v0 - h k e0) / (m + h kd + h^2 k),  e1 = e0 + h v1. */
static sim_world *spring_world(double *mass, double *k, double *kd, double *rest)
{
	sim_world_def def = implicit_def();
	def.gravity[1] = 0.0f;
	sim_world *w = sim_world_create(&def);
	if (!w)
		return NULL;
	static const float pos[9] = {0.0f, 0.0f, 0.0f, 0.25f, 0.0f, 0.0f, 0.0f, 0.25f, 0.0f};
	static const int tri[3] = {0, 1, 2};
	sim_mesh_def mesh = {.name = "spring", .vertex_count = 3, .positions = pos, .triangle_count = 1,
	                     .triangles = tri, .material = sim_material_default()};
	for (int i = 0; i < SIM_SPRING_KIND_COUNT; i++)
		mesh.material.stiffness[i] = mesh.material.damping[i] = 0.0f;
	mesh.material.total_mass = 0.3f;
	if (sim_world_add_mesh(w, &mesh) != 0) {
		sim_world_destroy(&w);
		return NULL;
	}
	for (int s = 0; s < w->spring_count; s++) {
		sim_spring *sp = &w->springs[s];
		if ((sp->a == 0 && sp->b == 1) || (sp->a == 1 && sp->b == 0)) {
			sp->k = 200.0f;
			sp->kd = 0.3f;
			*k = sp->k;
			*kd = sp->kd;
			*rest = sp->rest;
		}
	}
	*mass = sim_world_vertex_mass(w, 1);
	sim_world_pin(w, 0, true);
	sim_world_pin(w, 2, true);
	return w;
}

static void test_pinned_spring_closed_form(void)
{
	double m = 0.0, k = 0.0, kd = 0.0, rest = 0.0;
	sim_world *w = spring_world(&m, &k, &kd, &rest);
	REQUIRE(w);
	REQUIRE(k == 200.0);
	CHECK_NEAR(m, 0.1, 1e-6);
	CHECK_NEAR(rest, 0.25, 1e-7);
	const float h = 1.0f / 100.0f;
	vec3 p = {0.25f + 0.02f, 0.0f, 0.0f}, vel = {-0.1f, 0.0f, 0.0f};
	REQUIRE(sim_world_set_vertex(w, 1, p, vel) == SIM_OK);
	vec4 pinned;
	memcpy(pinned, sim_world_positions(w)[0], sizeof pinned);
	double e = (double)p[0] - rest, u = vel[0];
	const vec4 *x = sim_world_positions(w), *v = sim_world_velocities(w);
	for (int s = 0; s < 50; s++) {
		REQUIRE(sim_world_step(w, h) == SIM_OK);
		u = (m * u - h * k * e) / (m + h * kd + (double)h * h * k);
		e = e + h * u;
		CHECK_NEAR(v[1][0], u, 2e-5 * (1.0 + fabs(u)));
		CHECK_NEAR(x[1][0] - rest, e, 2e-6);
		/* Off-axis components never start. */
		CHECK(v[1][1] == 0.0f && v[1][2] == 0.0f);
		CHECK(x[1][1] == 0.0f && x[1][2] == 0.0f);
		/* The pinned end does not move at all. */
		for (int c = 0; c < 3; c++) {
			CHECK(x[0][c] == pinned[c]);
			CHECK(v[0][c] == 0.0f);
		}
		CHECK(x[0][3] == 0.0f);
	}
	CHECK(fabs(e) < 0.02); /* damped */
	sim_world_destroy(&w);
}

/* The same spring with its end moving at a prescribed velocity, given to the solver
 * directly with v != vc (z != 0), so the constraint reaches the free vertex through the
 * coupling block:  A_bb dv_b = b_b - A_ba z,  A_ba = -(h kd + h^2 k). */
static void test_moving_constraint(void)
{
	double m = 0.0, k = 0.0, kd = 0.0, rest = 0.0;
	sim_world *w = spring_world(&m, &k, &kd, &rest);
	REQUIRE(w);
	const float h = 1.0f / 100.0f;
	vec3 p = {0.25f + 0.01f, 0.0f, 0.0f}, vel = {0.05f, 0.0f, 0.0f};
	REQUIRE(sim_world_set_vertex(w, 1, p, vel) == SIM_OK);
	REQUIRE(sim_world_step(w, h) == SIM_OK); /* lets the world mark vertices 0 and 2 kinematic */
	REQUIRE(w->x[0][3] == 0.0f && w->x[2][3] == 0.0f && w->x[1][3] != 0.0f);

	const double U = 0.4;
	w->vc[0][0] = (float)U;
	w->v[0][0] = 0.0f;
	const double va = 0.0, vb = w->v[1][0];
	const double e = (double)w->x[1][0] - w->x[0][0] - rest;
	const double xa = w->x[0][0], xb = w->x[1][0];
	sim_stats st = {0};
	sim_implicit_step(w, h, &st);
	const double coupling = h * kd + (double)h * h * k;
	const double bb = h * (-k * e - kd * (vb - va) - h * k * (vb - va));
	const double dvb = (bb + coupling * (U - va)) / (m + coupling);
	CHECK_NEAR(w->v[1][0], vb + dvb, 1e-5);
	CHECK_NEAR(w->x[1][0], xb + h * (vb + dvb), 1e-6);
	CHECK(w->v[0][0] == (float)U);
	CHECK(w->x[0][0] == (float)(xa + h * (float)U));
	CHECK(st.cg_residual <= w->def.cg_tolerance);
	sim_world_destroy(&w);
}

/* The dense reference matrix itself against finite differences of sim_compute_forces,
 * on a stretched cloth (every spring longer than its rest length, where the clamp does
 * not apply) with anchors, air damping and spring damping all on. */
static void test_reference_jacobian_matches_forces(void)
{
	sim_world_def def = implicit_def();
	def.air_damping = 0.7f;
	sim_world *w = sim_world_create(&def);
	REQUIRE(w);
	sim_grid_def g = sim_grid_def_default();
	g.nx = g.ny = 4;
	g.size_x = g.size_y = 0.3f;
	g.material.anchor_stiffness = 3.0f;
	g.material.anchor_damping = 0.02f;
	REQUIRE(sim_world_add_grid(w, &g) == 0);
	const int n = w->n, n3 = 3 * n;
	uint32_t seed = 12345u;
	for (int i = 0; i < n; i++) {
		vec3 p, vel;
		for (int c = 0; c < 3; c++) {
			seed = seed * 1664525u + 1013904223u;
			float jitter = (float)(seed >> 8) / 16777216.0f - 0.5f;
			p[c] = 1.2f * w->x[i][c] + 0.002f * jitter;
			vel[c] = 0.5f * jitter;
		}
		REQUIRE(sim_world_set_vertex(w, i, p, vel) == SIM_OK);
	}
	for (int s = 0; s < w->spring_count; s++)
		REQUIRE(sim_spring_strain(&w->springs[s], w->x) > 0.05f);

	double *K = malloc(sizeof(double) * (size_t)n3 * (size_t)n3);
	double *D = malloc(sizeof(double) * (size_t)n3 * (size_t)n3);
	vec4 *xs = malloc(sizeof(vec4) * (size_t)n), *vs = malloc(sizeof(vec4) * (size_t)n);
	vec4 *fp = malloc(sizeof(vec4) * (size_t)n), *fm = malloc(sizeof(vec4) * (size_t)n);
	REQUIRE(K && D && xs && vs && fp && fm);
	dense_jacobians(w, w->x, false, K, D);
	double kmax = 0.0, dmax = 0.0;
	for (size_t i = 0; i < (size_t)n3 * (size_t)n3; i++) {
		kmax = fmax(kmax, fabs(K[i]));
		dmax = fmax(dmax, fabs(D[i]));
	}
	/* Forces are linear in v, so the velocity step can be large (less rounding). */
	const float eps_x = 1e-3f, eps_v = 0.05f;
	double kerr = 0.0, derr = 0.0;
	for (int col = 0; col < n3; col++) {
		for (int pass = 0; pass < 2; pass++) {
			vec4 *pert = pass == 0 ? xs : vs;
			const float eps = pass == 0 ? eps_x : eps_v;
			memcpy(xs, w->x, sizeof(vec4) * (size_t)n);
			memcpy(vs, w->v, sizeof(vec4) * (size_t)n);
			pert[col / 3][col % 3] += eps;
			sim_compute_forces(w, xs, vs, fp);
			pert[col / 3][col % 3] -= 2.0f * eps;
			sim_compute_forces(w, xs, vs, fm);
			const double *J = pass == 0 ? K : D;
			for (int row = 0; row < n3; row++) {
				double fd = ((double)fp[row / 3][row % 3] - fm[row / 3][row % 3]) / (2.0 * eps);
				double err = fabs(fd - J[(size_t)row * n3 + col]);
				if (pass == 0)
					kerr = fmax(kerr, err);
				else
					derr = fmax(derr, err);
			}
		}
	}
	CHECK_MSG(kerr <= 1e-3 * kmax, "dF/dx error %g of %g", kerr, kmax);
	CHECK_MSG(derr <= 1e-3 * dmax, "dF/dv error %g of %g", derr, dmax);
	free(K);
	free(D);
	free(xs);
	free(vs);
	free(fp);
	free(fm);
	sim_world_destroy(&w);
}

/* A 20 x 20 cloth hanging from two corners, after it has started to swing (stretched and
 * compressed springs, non-zero velocities, warm start active): the step's dv solves the
 * dense system to the requested tolerance. */
static void test_hanging_cloth_residual(void)
{
	sim_world_def def = implicit_def();
	def.air_damping = 0.3f;
	def.cg_tolerance = 1e-4f;
	def.cg_max_iterations = 500;
	sim_world *w = sim_world_create(&def);
	REQUIRE(w);
	sim_grid_def g = sim_grid_def_default();
	g.nx = g.ny = 20;
	g.size_x = g.size_y = 0.5f;
	g.material.anchor_stiffness = 0.5f;
	g.material.anchor_damping = 0.01f;
	REQUIRE(sim_world_add_grid(w, &g) == 0);
	sim_world_pin(w, 0, true);
	sim_world_pin(w, g.nx - 1, true);
	const float h = 1.0f / 120.0f;
	for (int s = 0; s < 40; s++)
		REQUIRE(sim_world_step(w, h) == SIM_OK);
	int compressed = 0;
	for (int s = 0; s < w->spring_count; s++)
		compressed += sim_spring_strain(&w->springs[s], w->x) < 0.0f;
	CHECK(compressed > 0);
	check_solution(w, h, 1.5);
	sim_world_destroy(&w);
}

/* The same check on a world of two objects: a small non-square grid and, after it, a
 * triangle mesh (the solver's list path), each with one vertex pinned. */
static void test_mesh_residual(void)
{
	enum { N = 8 };
	float pos[3 * N * N];
	int tri[6 * (N - 1) * (N - 1)];
	int nt = 0;
	for (int j = 0; j < N; j++) {
		for (int i = 0; i < N; i++) {
			float *p = &pos[3 * (j * N + i)];
			p[0] = 0.05f * (float)i;
			p[1] = 1.0f + 0.01f * (float)((i * 7 + j * 3) % 5); /* not flat */
			p[2] = 0.05f * (float)j;
		}
	}
	for (int j = 0; j + 1 < N; j++) {
		for (int i = 0; i + 1 < N; i++) {
			int a = j * N + i, b = a + 1, c = a + N + 1, d = a + N;
			int t[6] = {a, b, c, a, c, d};
			memcpy(&tri[3 * nt], t, sizeof t);
			nt += 2;
		}
	}
	sim_world_def def = implicit_def();
	def.air_damping = 0.2f;
	sim_world *w = sim_world_create(&def);
	REQUIRE(w);
	sim_grid_def g = sim_grid_def_default();
	g.nx = 7;
	g.ny = 5;
	g.size_x = 0.3f;
	g.size_y = 0.2f;
	REQUIRE(sim_world_add_grid(w, &g) == 0);
	sim_world_pin(w, g.nx - 1, true);
	sim_mesh_def mesh = {.name = "patch", .vertex_count = N * N, .positions = pos, .triangle_count = nt,
	                     .triangles = tri, .material = sim_material_default()};
	REQUIRE(sim_world_add_mesh(w, &mesh) == 1);
	sim_world_pin(w, sim_world_object_first_vertex(w, 1), true);
	const float h = 1.0f / 120.0f;
	for (int s = 0; s < 20; s++)
		REQUIRE(sim_world_step(w, h) == SIM_OK);
	check_solution(w, h, 1.5);
	sim_world_destroy(&w);
}

/* A stiff cloth (5000 N/m, 0.2 kg/m^2, 16 x 16, 0.5 m) at dt = 1/60 stays bounded and
 * settles: h^2 k / m is about 1400, far beyond any explicit scheme. */
static void test_stiff_cloth_bounded(void)
{
	sim_world_def def = implicit_def();
	sim_world *w = sim_world_create(&def);
	REQUIRE(w);
	sim_grid_def g = sim_grid_def_default();
	g.nx = g.ny = 16;
	g.size_x = g.size_y = 0.5f;
	g.material.areal_density = 0.2f;
	for (int k = 0; k < SIM_SPRING_KIND_COUNT; k++)
		g.material.stiffness[k] = 5000.0f;
	REQUIRE(sim_world_add_grid(w, &g) == 0);
	sim_world_pin(w, 0, true);
	sim_world_pin(w, g.nx - 1, true);
	const float h = 1.0f / 60.0f;
	const int n = sim_world_vertex_count(w);
	float max_speed = 0.0f, late_speed = 0.0f;
	for (int s = 0; s < 300; s++) {
		REQUIRE(sim_world_step(w, h) == SIM_OK);
		const vec4 *x = sim_world_positions(w), *v = sim_world_velocities(w);
		for (int i = 0; i < n; i++) {
			float speed = sqrtf(v[i][0] * v[i][0] + v[i][1] * v[i][1] + v[i][2] * v[i][2]);
			max_speed = fmaxf(max_speed, speed);
			if (s >= 240)
				late_speed = fmaxf(late_speed, speed);
			/* Never further from the pins than the cloth's diagonal. */
			CHECK(fabsf(x[i][0]) < 1.5f && x[i][1] > 1.0f - 1.5f && fabsf(x[i][2]) < 1.5f);
		}
		CHECK(sim_world_stats(w)->cg_residual <= def.cg_tolerance);
	}
	CHECK_MSG(max_speed < 10.0f, "max speed %g", max_speed);
	CHECK_MSG(late_speed < 0.5f, "speed in the last second %g", late_speed);
	CHECK(sim_world_stats(w)->max_strain < 0.05f);
	sim_world_destroy(&w);
}

/* Same input, same bits: two worlds stepped identically hash identically. */
static void test_deterministic(void)
{
	uint64_t hash[2];
	for (int run = 0; run < 2; run++) {
		sim_world_def def = implicit_def();
		def.air_damping = 0.1f;
		sim_world *w = sim_world_create(&def);
		REQUIRE(w);
		sim_grid_def g = sim_grid_def_default();
		g.nx = 24;
		g.ny = 17;
		REQUIRE(sim_world_add_grid(w, &g) == 0);
		sim_world_pin(w, 0, true);
		sim_world_pin(w, g.nx - 1, true);
		for (int s = 0; s < 60; s++)
			REQUIRE(sim_world_step(w, 1.0f / 120.0f) == SIM_OK);
		hash[run] = sim_world_state_hash(w);
		sim_world_destroy(&w);
	}
	CHECK(hash[0] == hash[1]);
}

/* Coincident spring ends and an empty world: no NaN, no crash. */
static void test_degenerate_inputs(void)
{
	sim_world_def def = implicit_def();
	sim_world *w = sim_world_create(&def);
	REQUIRE(w);
	/* The solver directly: sim_world_step's own handling of an empty world is not what
	 * this file tests. */
	sim_stats st = {.cg_iterations = -1, .cg_residual = -1.0f};
	sim_implicit_step(w, 1.0f / 60.0f, &st);
	CHECK(st.cg_iterations == 0 && st.cg_residual == 0.0f);
	double m, k, kd, rest;
	sim_world_destroy(&w);
	w = spring_world(&m, &k, &kd, &rest);
	REQUIRE(w);
	REQUIRE(sim_world_set_vertex(w, 1, sim_world_positions(w)[0], (vec3){0.0f, 0.0f, 0.0f}) == SIM_OK);
	REQUIRE(sim_world_step(w, 1.0f / 60.0f) == SIM_OK);
	for (int c = 0; c < 3; c++)
		CHECK(isfinite(sim_world_positions(w)[1][c]) && isfinite(sim_world_velocities(w)[1][c]));
	sim_world_destroy(&w);
}

/* ---- the multilevel preconditioner (multilevel.c) ----------------------------------------- */

/* A 37 x 29 cloth (1073 vertices: large enough for the multilevel preconditioner, odd in
 * both directions so the last aggregates of each row and column are partial) of
 * stiffness k (shear k / 2, bend k / 50), pinned at one corner and at a vertex inside,
 * its other top corner pulled sideways (a moving constraint), stepped at 1/90 s. */
static sim_world *multilevel_world(bool multilevel, float k, int steps)
{
	sim_world_def def = implicit_def();
	def.air_damping = 0.1f;
	def.cg_max_iterations = 2000;
	sim_world *w = sim_world_create(&def);
	if (!w)
		return NULL;
	sim_implicit_set_multilevel(w->implicit, multilevel ? ML_ALWAYS : ML_NEVER);
	sim_grid_def g = sim_grid_def_default();
	g.nx = 37;
	g.ny = 29;
	g.size_x = 0.9f;
	g.size_y = 0.7f;
	g.material.stiffness[0] = k, g.material.stiffness[1] = 0.5f * k, g.material.stiffness[2] = 0.02f * k;
	bool ok = sim_world_add_grid(w, &g) == 0 && sim_world_pin(w, 0, true) == SIM_OK &&
	          sim_world_pin(w, 12 * g.nx + 17, true) == SIM_OK &&
	          sim_world_add_velocity_block(w, 0.0, g.nx - 1, (vec3){0.4f, 0.1f, 0.0f}) == SIM_OK;
	for (int s = 0; ok && s < steps; s++)
		ok = sim_world_step(w, 1.0f / 90.0f) == SIM_OK;
	if (!ok)
		sim_world_destroy(&w);
	return w;
}

/* sim_stats.coarse_us: with a clock that advances one microsecond a reading, each
 * preconditioner application times its levels below level 1 as exactly one microsecond,
 * and a solve that converges applies it once per iteration (before the first, and after
 * each but the last); without a clock it reads 0. */
static void test_multilevel_coarse_time(void)
{
	sim_world *w = multilevel_world(true, 100.0f, 3);
	REQUIRE(w);
	sim_set_clock(tick_clock);
	sim_result r = sim_world_step(w, 1.0f / 90.0f);
	sim_set_clock(NULL);
	REQUIRE(r == SIM_OK);
	const sim_stats *st = sim_world_stats(w);
	REQUIRE(st->cg_iterations > 1 && st->cg_iterations < w->def.cg_max_iterations);
	CHECK_MSG(st->coarse_us == (double)st->cg_iterations, "coarse levels %g us over %d iterations", st->coarse_us,
	          st->cg_iterations);
	CHECK(st->coarse_us < st->stage_us[SIM_STAGE_SOLVE]);
	REQUIRE(sim_world_step(w, 1.0f / 90.0f) == SIM_OK);
	CHECK(st->coarse_us == 0.0);
	sim_world_destroy(&w);
}

/* The step's dv solves the dense system to the tolerance, in the same block-Jacobi norm
 * as with block Jacobi preconditioning, and kinematic vertices move exactly as
 * prescribed. */
static void test_multilevel_residual(void)
{
	sim_world *w = multilevel_world(true, 100.0f, 20);
	REQUIRE(w);
	const float h = 1.0f / 90.0f;
	check_solution(w, h, 1.5);
	/* and once more through the world's step: the pinned vertices keep their prescribed
	 * velocity to the bit, and x moved by exactly h v */
	const int n = w->n;
	vec4 *x0 = malloc(sizeof(vec4) * (size_t)n);
	REQUIRE(x0);
	memcpy(x0, w->x, sizeof(vec4) * (size_t)n);
	REQUIRE(sim_world_step(w, h) == SIM_OK);
	const int kinematic[3] = {0, 36, 12 * 37 + 17};
	const float expect[3][3] = {{0.0f, 0.0f, 0.0f}, {0.4f, 0.1f, 0.0f}, {0.0f, 0.0f, 0.0f}};
	for (int k = 0; k < 3; k++) {
		const int i = kinematic[k];
		for (int c = 0; c < 3; c++) {
			CHECK_MSG(w->v[i][c] == expect[k][c], "vertex %d: v %g, prescribed %g", i, w->v[i][c], expect[k][c]);
			CHECK(w->x[i][c] == x0[i][c] + h * expect[k][c]);
		}
	}
	free(x0);
	sim_world_destroy(&w);
}

/* The same state solved with each preconditioner: both meet the tolerance against the
 * dense system, and the multilevel one needs far fewer iterations, the more so the
 * stiffer the cloth. */
static void test_multilevel_fewer_iterations(void)
{
	const float stiffness[2] = {100.0f, 2000.0f};
	for (int k = 0; k < 2; k++) {
		int iterations[2];
		for (int ml = 0; ml < 2; ml++) {
			sim_world *w = multilevel_world(ml == 1, stiffness[k], 10);
			REQUIRE(w);
			check_solution_n(w, 1.0f / 90.0f, 1.5, &iterations[ml]);
			sim_world_destroy(&w);
		}
		printf("stiffness %g: block Jacobi %d iterations, multilevel %d\n", (double)stiffness[k], iterations[0],
		       iterations[1]);
		CHECK_MSG(3 * iterations[1] < iterations[0], "stiffness %g: multilevel %d, block Jacobi %d iterations",
		          (double)stiffness[k], iterations[1], iterations[0]);
	}
}

static uint64_t lcg(uint64_t *state)
{
	*state = *state * 6364136223846793005ULL + 1442695040888963407ULL;
	return *state >> 33;
}

static double dot_d(const float *a, const float *b, int n)
{
	double s = 0.0;
	for (int i = 0; i < n; i++)
		s += (double)a[i] * b[i];
	return s;
}

/* CG needs the preconditioner symmetric and positive definite on the free vertices and
 * zero on the kinematic ones: uᵀ M v = vᵀ M u to float rounding, vᵀ M v > 0 for random
 * vectors, and M of a vector that lives on kinematic vertices only is exactly 0. */
static void test_multilevel_symmetric_positive(void)
{
	sim_world *w = multilevel_world(true, 100.0f, 30);
	REQUIRE(w);
	const int n = w->n, n3 = 3 * n;
	float *u = malloc(sizeof(float) * (size_t)n3), *v = malloc(sizeof(float) * (size_t)n3);
	float *mu = malloc(sizeof(float) * (size_t)n3), *mv = malloc(sizeof(float) * (size_t)n3);
	REQUIRE(u && v && mu && mv);
	uint64_t seed = 12345;
	const float h = 1.0f / 90.0f;
	for (int trial = 0; trial < 8; trial++) {
		for (int i = 0; i < n3; i++) {
			/* smooth and rough parts: the coarse levels see the one, the smoother the other */
			const int vi = i / 3, col = vi % 37, row = vi / 37;
			u[i] = (float)((double)lcg(&seed) / 2147483648.0 - 0.5) + sinf(0.1f * (float)(col + trial * row));
			v[i] = (float)((double)lcg(&seed) / 2147483648.0 - 0.5) + cosf(0.07f * (float)(row * (trial + 1)));
		}
		REQUIRE(sim_implicit_apply_preconditioner(w, h, u, mu));
		REQUIRE(sim_implicit_apply_preconditioner(w, h, v, mv));
		const double umv = dot_d(u, mv, n3), vmu = dot_d(v, mu, n3);
		const double uu = dot_d(u, mu, n3), vv = dot_d(v, mv, n3);
		CHECK_MSG(uu > 0.0 && vv > 0.0, "trial %d: uMu %g, vMv %g", trial, uu, vv);
		CHECK_MSG(fabs(umv - vmu) <= 1e-5 * sqrt(uu * vv), "trial %d: uMv %.9g, vMu %.9g (scale %g)", trial, umv,
		          vmu, sqrt(uu * vv));
		for (int i = 0; i < n; i++)
			if (w->x[i][3] == 0.0f)
				for (int c = 0; c < 3; c++)
					CHECK(mu[3 * i + c] == 0.0f && mv[3 * i + c] == 0.0f);
	}
	/* a vector on the kinematic vertices only */
	for (int i = 0; i < n3; i++)
		u[i] = w->x[i / 3][3] == 0.0f ? 1.0f : 0.0f;
	REQUIRE(sim_implicit_apply_preconditioner(w, h, u, mu));
	for (int i = 0; i < n3; i++)
		CHECK(mu[i] == 0.0f);
	free(u);
	free(v);
	free(mu);
	free(mv);
	sim_world_destroy(&w);
}

/* The default choice (ML_AUTO): a soft cloth that block Jacobi solves in a few
 * iterations never switches, so its steps are block Jacobi's to the bit; a stiff one
 * switches within its first step and needs far fewer iterations than block Jacobi on
 * the same steps, each meeting the tolerance. */
static void test_multilevel_auto(void)
{
	uint64_t hash[2];
	long iterations[2][2] = {{0, 0}, {0, 0}};
	for (int mode = 0; mode < 2; mode++) {
		for (int stiff = 0; stiff < 2; stiff++) {
			sim_world_def def = implicit_def();
			def.air_damping = 0.1f;
			def.cg_max_iterations = 2000;
			sim_world *w = sim_world_create(&def);
			REQUIRE(w);
			sim_implicit_set_multilevel(w->implicit, mode == 0 ? ML_AUTO : ML_NEVER);
			sim_grid_def g = sim_grid_def_default();
			g.nx = g.ny = 40;
			g.size_x = g.size_y = 0.4f;
			g.material.stiffness[0] = stiff ? 2000.0f : 2.0f;
			g.material.stiffness[1] = stiff ? 800.0f : 0.8f;
			g.material.stiffness[2] = stiff ? 80.0f : 0.08f;
			REQUIRE(sim_world_add_grid(w, &g) == 0);
			REQUIRE(sim_world_pin(w, 0, true) == SIM_OK && sim_world_pin(w, g.nx - 1, true) == SIM_OK);
			const float h = stiff ? 1.0f / 90.0f : 1.0f / 1000.0f;
			for (int s = 0; s < 20; s++) {
				REQUIRE(sim_world_step(w, h) == SIM_OK);
				const int it = sim_world_stats(w)->cg_iterations;
				CHECK_MSG(sim_world_stats(w)->cg_residual <= def.cg_tolerance, "mode %d, stiff %d, step %d: %d iterations, residual %g",
				          mode, stiff, s, it, (double)sim_world_stats(w)->cg_residual);
				if (s > 0)
					iterations[mode][stiff] += it;
			}
			if (!stiff)
				hash[mode] = sim_world_state_hash(w);
			sim_world_destroy(&w);
		}
	}
	printf("stiff cloth: auto %ld, block Jacobi %ld iterations in 19 steps\n", iterations[0][1], iterations[1][1]);
	CHECK_MSG(hash[0] == hash[1], "soft cloth: auto %016llx, block Jacobi %016llx", (unsigned long long)hash[0],
	          (unsigned long long)hash[1]);
	CHECK_MSG(iterations[1][1] > 19L * ML_ENTER_ITERATIONS, "stiff cloth: block Jacobi %ld iterations", iterations[1][1]);
	CHECK_MSG(3 * iterations[0][1] < iterations[1][1], "stiff cloth: auto %ld, block Jacobi %ld iterations",
	          iterations[0][1], iterations[1][1]);
}

/* The bilinear interpolation from level l + 1 to level l, from its definition: coarse
 * index I on fine index 2I, which takes it whole; a fine index between two coarse ones
 * half of each; an even-sized line's last index, with no coarse one beyond it, its one
 * neighbour whole (c coarse indices). */
static double interp_weight(int i, int I, int c)
{
	if (i == 2 * I)
		return 1.0;
	if (i == 2 * I + 1)
		return I + 1 < c ? 0.5 : 1.0;
	if (i == 2 * I - 1)
		return 0.5;
	return 0.0;
}

/* out = P in (in on the coarse grid) or, with `transpose`, out = Pᵀ in (in on the fine
 * grid): three planes each, every entry summed over the whole grid in double. */
static void interpolate(const float *in, double *out, int fnx, int fny, int cnx, int cny, bool transpose)
{
	const int fn = fnx * fny, cn = cnx * cny;
	for (int c = 0; c < 3; c++)
		for (int a = 0; a < (transpose ? cn : fn); a++) {
			const int ai = transpose ? a % cnx : a % fnx, aj = transpose ? a / cnx : a / fnx;
			double v = 0.0;
			for (int b = 0; b < (transpose ? fn : cn); b++) {
				const int bi = transpose ? b % fnx : b % cnx, bj = transpose ? b / fnx : b / cnx;
				const double wgt = transpose ? interp_weight(bj, aj, cny) * interp_weight(bi, ai, cnx)
				                             : interp_weight(aj, bj, cny) * interp_weight(ai, bi, cnx);
				v += wgt * in[c * (transpose ? fn : cn) + b];
			}
			out[c * (transpose ? cn : fn) + a] = v;
		}
}

/* Every level below level 1 is the Galerkin product Pᵀ A P of the level above, P the
 * bilinear interpolation: on the 37 x 29 cloth (levels 19 x 15, 10 x 8 and 5 x 4, so odd
 * and even sizes both ways), level l + 1's operator times a random vector equals
 * Pᵀ (A_l (P x)) computed here with P written from its definition. */
static void test_multilevel_galerkin(void)
{
	sim_world *w = multilevel_world(true, 100.0f, 3);
	REQUIRE(w);
	ml_grid *g = sim_implicit_grid(w->implicit, 0);
	REQUIRE(g && ml_levels(g) == 3);
	uint32_t seed = 12345u;
	for (int l = 2; l <= ml_levels(g); l++) {
		int fnx, fny, cnx, cny;
		ml_level_size(g, l - 1, &fnx, &fny);
		ml_level_size(g, l, &cnx, &cny);
		const int fn = fnx * fny, cn = cnx * cny;
		float *x = malloc(sizeof(float) * 3 * (size_t)cn), *y = malloc(sizeof(float) * 3 * (size_t)cn);
		float *px = malloc(sizeof(float) * 3 * (size_t)fn), *apx = malloc(sizeof(float) * 3 * (size_t)fn);
		REQUIRE(x && y && px && apx);
		for (int i = 0; i < 3 * cn; i++) {
			seed = seed * 1664525u + 1013904223u;
			x[i] = (float)(seed >> 8) / 16777216.0f - 0.5f;
		}
		double *pt = malloc(sizeof(double) * 3 * (size_t)(fn > cn ? fn : cn));
		REQUIRE(pt);
		interpolate(x, pt, fnx, fny, cnx, cny, false);
		for (int i = 0; i < 3 * fn; i++)
			px[i] = (float)pt[i];
		ml_level_multiply(g, l - 1, px, apx);
		ml_level_multiply(g, l, x, y);
		interpolate(apx, pt, fnx, fny, cnx, cny, true);
		double worst = 0.0, scale = 0.0;
		for (int i = 0; i < 3 * cn; i++) {
			worst = fabs(pt[i] - y[i]) > worst ? fabs(pt[i] - y[i]) : worst;
			scale = fabs(pt[i]) > scale ? fabs(pt[i]) : scale;
		}
		printf("level %d (%d x %d) from %d x %d: largest difference %.3g of %.3g\n", l, cnx, cny, fnx, fny, worst,
		       scale);
		CHECK_MSG(scale > 0.0 && worst <= 1e-5 * scale, "level %d: Pᵀ A P x differs by %g of %g", l, worst, scale);
		free(x), free(y), free(px), free(apx), free(pt);
	}
	sim_world_destroy(&w);
}

/* Grids of odd shapes through the multilevel solve: two or three vertices wide (levels
 * one aggregate wide), long the other way, and a cloth whose first rows are all pinned
 * (aggregates of kinematic vertices only, empty rows in the coarsest matrix): the step
 * meets the tolerance against the dense system. */
static void test_multilevel_odd_shapes(void)
{
	const int shapes[4][2] = {{2, 600}, {600, 2}, {3, 401}, {45, 25}};
	for (int k = 0; k < 4; k++) {
		sim_world_def def = implicit_def();
		def.air_damping = 0.1f;
		def.cg_max_iterations = 1000;
		sim_world *w = sim_world_create(&def);
		REQUIRE(w);
		sim_implicit_set_multilevel(w->implicit, ML_ALWAYS);
		sim_grid_def g = sim_grid_def_default();
		g.nx = shapes[k][0];
		g.ny = shapes[k][1];
		g.size_x = 0.01f * (float)(g.nx - 1);
		g.size_y = 0.01f * (float)(g.ny - 1);
		REQUIRE(sim_world_add_grid(w, &g) == 0);
		/* the last shape: its first eight rows pinned (so every level, the coarsest too,
		 * has aggregates of kinematic vertices only), one of them pulled */
		const int pinned = k == 3 ? 8 * g.nx : 1;
		for (int i = 0; i < pinned; i++)
			REQUIRE(sim_world_pin(w, i, true) == SIM_OK);
		if (k == 3)
			REQUIRE(sim_world_add_velocity_block(w, 0.0, 7 * g.nx + 7, (vec3){0.0f, 0.2f, 0.1f}) == SIM_OK);
		for (int s = 0; s < 5; s++)
			REQUIRE(sim_world_step(w, 1.0f / 90.0f) == SIM_OK);
		check_solution(w, 1.0f / 90.0f, 1.5);
		sim_world_destroy(&w);
	}
}

static const test_case tests[] = {
	TEST(test_anchor_closed_form),
	TEST(test_pinned_spring_closed_form),
	TEST(test_moving_constraint),
	TEST(test_reference_jacobian_matches_forces),
	TEST(test_hanging_cloth_residual),
	TEST(test_mesh_residual),
	TEST(test_stiff_cloth_bounded),
	TEST(test_deterministic),
	TEST(test_degenerate_inputs),
	TEST(test_multilevel_residual),
	TEST(test_multilevel_coarse_time),
	TEST(test_multilevel_fewer_iterations),
	TEST(test_multilevel_symmetric_positive),
	TEST(test_multilevel_auto),
	TEST(test_multilevel_odd_shapes),
	TEST(test_multilevel_galerkin),
};
TEST_MAIN(tests)
