/* The explicit, multistep and approximate-implicit integrators.
 *
 * Every scheme sees the same system: x.w holds the inverse mass (0 for a kinematic
 * vertex), so a = f * x.w and a kinematic vertex moves with the constraint velocity
 * that apply_constraints() stored in v (the position-form schemes report it back as a
 * difference of positions, equal up to rounding).  The implicit Euler solver lives in
 * implicit.c. */
#include "sim_internal.h"

#include <math.h>
#include <string.h>

void sim_reset_history(sim_world *w, float h)
{
	for (int i = 0; i < w->n; i++) {
		for (int k = 0; k < 3; k++)
			w->x_prev[i][k] = w->x[i][k] - h * w->v[i][k];
		w->x_prev[i][3] = w->x[i][3];
	}
	w->history_valid = true;
	w->history_h = h;
}

/* The per-vertex updates run over all four lanes of each vec4: f.w and v.w are 0, so
 * x.w (the inverse mass) and v.w do not change, and the loops vectorise. */
SIM_VECTOR_CLONES
static void euler_kernel(vec4 *restrict x, vec4 *restrict v, const vec4 *restrict f, int n, float h)
{
	for (int i = 0; i < n; i++) {
		float s = h * x[i][3];
		for (int k = 0; k < 4; k++) {
			x[i][k] += h * v[i][k];
			v[i][k] += s * f[i][k];
		}
	}
}

SIM_VECTOR_CLONES
static void symplectic_kernel(vec4 *restrict x, vec4 *restrict v, const vec4 *restrict f, int n, float h)
{
	for (int i = 0; i < n; i++) {
		float s = h * x[i][3];
		for (int k = 0; k < 4; k++) {
			v[i][k] += s * f[i][k];
			x[i][k] += h * v[i][k];
		}
	}
}

/* x_{n+1} = x_n + h v_n, v_{n+1} = v_n + h a(x_n, v_n).  Amplifies an undamped
 * oscillator by sqrt(1 + (w h)^2) per step: unconditionally unstable without damping. */
static void step_euler(sim_world *w, float h)
{
	sim_forces_timed(w, w->x, w->v, w->f);
	euler_kernel(w->x, w->v, w->f, w->n, h);
}

/* v_{n+1} = v_n + h a(x_n, v_n), x_{n+1} = x_n + h v_{n+1}.  Symplectic: energy stays
 * bounded for h < 2 / w_max. */
static void step_symplectic(sim_world *w, float h)
{
	sim_forces_timed(w, w->x, w->v, w->f);
	symplectic_kernel(w->x, w->v, w->f, w->n, h);
}

/* Explicit midpoint (RK2): derivatives at the half step predicted by Euler. */
static void step_midpoint(sim_world *w, float h)
{
	vec4 *x = w->x, *v = w->v, *f = w->f, *xm = w->tmp_x, *vm = w->tmp_v;
	float hh = 0.5f * h;
	sim_forces_timed(w, x, v, f);
	for (int i = 0; i < w->n; i++) {
		float s = hh * x[i][3];
		for (int k = 0; k < 3; k++) {
			xm[i][k] = x[i][k] + hh * v[i][k];
			vm[i][k] = v[i][k] + s * f[i][k];
		}
		xm[i][3] = x[i][3];
		vm[i][3] = 0.0f;
	}
	sim_forces_timed(w, xm, vm, f);
	for (int i = 0; i < w->n; i++) {
		float s = h * x[i][3];
		for (int k = 0; k < 3; k++) {
			x[i][k] += h * vm[i][k];
			v[i][k] += s * f[i][k];
		}
	}
}

/* One RK4 stage: evaluates the derivative at (xs, vs), adds weight times it to the
 * accumulators and, when next > 0, writes the next stage state x + next h k. */
static void rk4_stage(sim_world *w, const vec4 *xs, const vec4 *vs, float weight, float next, float h)
{
	vec4 *x = w->x, *v = w->v, *f = w->f;
	sim_forces_timed(w, xs, vs, f);
	for (int i = 0; i < w->n; i++) {
		float inv_m = x[i][3];
		for (int k = 0; k < 3; k++) {
			float kx = vs[i][k], kv = f[i][k] * inv_m;
			w->acc_x[i][k] += weight * kx;
			w->acc_v[i][k] += weight * kv;
			if (next > 0.0f) {
				w->tmp_x[i][k] = x[i][k] + next * h * kx;
				w->tmp_v[i][k] = v[i][k] + next * h * kv;
			}
		}
	}
}

static void step_rk4(sim_world *w, float h)
{
	size_t bytes = sizeof(vec4) * (size_t)w->n;
	memset(w->acc_x, 0, bytes);
	memset(w->acc_v, 0, bytes);
	memcpy(w->tmp_x, w->x, bytes); /* keeps w components defined */
	memset(w->tmp_v, 0, bytes);
	rk4_stage(w, w->x, w->v, 1.0f, 0.5f, h);
	rk4_stage(w, w->tmp_x, w->tmp_v, 2.0f, 0.5f, h);
	rk4_stage(w, w->tmp_x, w->tmp_v, 2.0f, 1.0f, h);
	rk4_stage(w, w->tmp_x, w->tmp_v, 1.0f, 0.0f, h);
	float s = h / 6.0f;
	for (int i = 0; i < w->n; i++) {
		for (int k = 0; k < 3; k++) {
			w->x[i][k] += s * w->acc_x[i][k];
			w->v[i][k] += s * w->acc_v[i][k];
		}
	}
}

/* Position Verlet: x_{n+1} = x_n + d (x_n - x_{n-1}) + h^2 a, with d = 1 or, with the
 * drag form, x_{n+1} = 1.99 x_n - 0.99 x_{n-1} + h^2 a (Jakobsen).  The velocity fed to
 * damping forces and reported is the backward difference (x_n - x_{n-1}) / h. */
static void step_verlet(sim_world *w, float h)
{
	vec4 *x = w->x, *v = w->v, *xp = w->x_prev, *f = w->f;
	float d = w->def.verlet_drag ? 0.99f : 1.0f;
	float h2 = h * h;
	sim_forces_timed(w, x, v, f);
	for (int i = 0; i < w->n; i++) {
		float inv_m = x[i][3];
		for (int k = 0; k < 3; k++) {
			float xn = x[i][k];
			float next = inv_m == 0.0f ? xn + h * v[i][k] : xn + d * (xn - xp[i][k]) + h2 * inv_m * f[i][k];
			xp[i][k] = xn;
			x[i][k] = next;
			v[i][k] = (next - xn) / h;
		}
	}
}

/* Kang's approximate implicit update: one Jacobi sweep of the implicit system
 * (M - h D - h^2 K) dv = h f with each neighbour's velocity change predicted as its
 * last |dv_j| along its current force:
 *   dv_i = (h f_i + sum_j (h^2 k_ij + h kd_ij) |dv_j| f_j / |f_j|)
 *          / (m_i + h^2 (sum_j k_ij + k_a) + h (sum_j kd_ij + kd_a + c m_i))
 * Kang's paper keeps only the stiffness terms; the damping terms complete the same
 * Jacobi sweep, so a uniformly moving cloth feels no spring damping.  On the first
 * step (or after a switch) the prediction is the explicit dv_j = h f_j / m_j, which
 * makes uniform motion (free fall) exact from the start. */
static void step_kang(sim_world *w, float h)
{
	vec4 *x = w->x, *v = w->v, *f = w->f, *g = w->tmp_v, *acc = w->acc_v, *dv = w->kang_dv;
	sim_forces_timed(w, x, v, f);
	if (!w->history_valid || w->history_h != h) {
		for (int i = 0; i < w->n; i++)
			glm_vec3_scale(f[i], h * x[i][3], dv[i]);
		w->history_valid = true;
		w->history_h = h;
	}
	for (int i = 0; i < w->n; i++) {
		float fn = glm_vec3_norm(f[i]);
		float s = fn > 0.0f ? glm_vec3_norm(dv[i]) / fn : 0.0f;
		glm_vec3_scale(f[i], s, g[i]);
		glm_vec4_zero(acc[i]);
	}
	float h2 = h * h, c = w->def.air_damping;
	for (int s = 0; s < w->spring_count; s++) {
		const sim_spring *sp = &w->springs[s];
		float wgt = h2 * sp->k + h * sp->kd;
		for (int k = 0; k < 3; k++) {
			acc[sp->a][k] += wgt * g[sp->b][k];
			acc[sp->b][k] += wgt * g[sp->a][k];
		}
	}
	for (int i = 0; i < w->n; i++) {
		if (x[i][3] == 0.0f) {
			glm_vec4_zero(dv[i]);
		} else {
			float m = w->mass[i];
			float denom = m + h2 * (w->kang_k[i] + w->rest[i][3]) + h * (w->kang_kd[i] + w->anchor_kd[i] + c * m);
			for (int k = 0; k < 3; k++) {
				dv[i][k] = (h * f[i][k] + acc[i][k]) / denom;
				v[i][k] += dv[i][k];
			}
		}
		for (int k = 0; k < 3; k++)
			x[i][k] += h * v[i][k];
	}
}

/* The seed 002 mass-spring-damper scheme, per vertex, on the displacement u = x - rest
 * from the anchor (rest) position:
 *   m (u' - 2u + u_) / h^2 + b (u' - u) / h + k_a u = f
 *   u' = k1 u - k2 u_ + k3 f,  k1 = (2m + bh - k_a h^2) / (m + bh),
 *                              k2 = m / (m + bh),  k3 = h^2 / (m + bh)
 * with b the anchor damping plus air damping and f every other force.  Without an
 * anchor it is Verlet with backward-difference damping. */
static void step_mra(sim_world *w, float h)
{
	vec4 *x = w->x, *v = w->v, *xp = w->x_prev, *f = w->f;
	float h2 = h * h, c = w->def.air_damping;
	int64_t t0 = sim_now_ns();
	sim_compute_forces_no_anchor(w, x, v, f);
	w->stats.stage_us[SIM_STAGE_FORCES] += (double)(sim_now_ns() - t0) * 1e-3;
	for (int i = 0; i < w->n; i++) {
		float m = w->mass[i];
		float b = w->anchor_kd[i] + c * m, ka = w->rest[i][3];
		float denom = m + b * h;
		float k1 = (2.0f * m + b * h - ka * h2) / denom, k2 = m / denom, k3 = h2 / denom;
		bool kinematic = x[i][3] == 0.0f;
		for (int k = 0; k < 3; k++) {
			float r = w->rest[i][k], xn = x[i][k];
			float next = kinematic ? xn + h * v[i][k] : r + k1 * (xn - r) - k2 * (xp[i][k] - r) + k3 * f[i][k];
			xp[i][k] = xn;
			x[i][k] = next;
			v[i][k] = (next - xn) / h;
		}
	}
}

void sim_integrate(sim_world *w, float h)
{
	switch (w->def.integrator) {
	case SIM_EULER: step_euler(w, h); break;
	case SIM_SYMPLECTIC: step_symplectic(w, h); break;
	case SIM_MIDPOINT: step_midpoint(w, h); break;
	case SIM_RK4: step_rk4(w, h); break;
	case SIM_VERLET: step_verlet(w, h); break;
	case SIM_KANG: step_kang(w, h); break;
	case SIM_MRA: step_mra(w, h); break;
	case SIM_IMPLICIT:
	case SIM_INTEGRATOR_COUNT: break; /* implicit.c; the count is not a scheme */
	}
}
