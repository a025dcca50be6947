/* Forces of the mass-spring model and its potential energy.
 *
 * Sign conventions (the implicit solver's Jacobians follow them exactly):
 *   spring a-b:  d = x_b - x_a, l = |d|, u = d / l
 *                f_a += k (l - L) u + kd ((v_b - v_a) . u) u,   f_b -= the same
 *   anchor:      f_i += -k_a (x_i - rest_i) - kd_a v_i
 *   air:         f_i += -c m_i v_i
 *   gravity:     f_i += m_i g
 */
#include "sim_internal.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

static void spring_forces(const sim_world *w, const vec4 *restrict x, const vec4 *restrict v, vec4 *restrict f)
{
	const sim_spring *sp = w->springs;
	int ns = w->spring_count;
	for (int s = 0; s < ns; s++) {
		int a = sp[s].a, b = sp[s].b;
		float dx = x[b][0] - x[a][0], dy = x[b][1] - x[a][1], dz = x[b][2] - x[a][2];
		float l = sqrtf(dx * dx + dy * dy + dz * dz);
		/* Coincident endpoints have no direction; such a spring exerts nothing this step. */
		float inv_l = l > 1e-12f ? 1.0f / l : 0.0f;
		float ux = dx * inv_l, uy = dy * inv_l, uz = dz * inv_l;
		float rel = (v[b][0] - v[a][0]) * ux + (v[b][1] - v[a][1]) * uy + (v[b][2] - v[a][2]) * uz;
		float mag = sp[s].k * (l - sp[s].rest) + sp[s].kd * rel;
		float fx = mag * ux, fy = mag * uy, fz = mag * uz;
		f[a][0] += fx, f[a][1] += fy, f[a][2] += fz;
		f[b][0] -= fx, f[b][1] -= fy, f[b][2] -= fz;
	}
}

static void body_forces(const sim_world *w, const vec4 *restrict x, const vec4 *restrict v, vec4 *restrict f,
                        bool anchors_and_air)
{
	const float *g = w->def.gravity;
	float c = anchors_and_air ? w->def.air_damping : 0.0f;
	for (int i = 0; i < w->n; i++) {
		float m = w->mass[i];
		for (int k = 0; k < 3; k++)
			f[i][k] = m * g[k] - c * m * v[i][k] + w->ext_force[i][k];
		f[i][3] = 0.0f;
	}
	if (!anchors_and_air)
		return;
	for (int i = 0; i < w->n; i++) {
		float ka = w->rest[i][3], kd = w->anchor_kd[i];
		if (ka == 0.0f && kd == 0.0f)
			continue;
		for (int k = 0; k < 3; k++)
			f[i][k] += -ka * (x[i][k] - w->rest[i][k]) - kd * v[i][k];
	}
}

static bool wind_active(const sim_world *w)
{
	const float *u = w->def.wind;
	return (u[0] != 0.0f || u[1] != 0.0f || u[2] != 0.0f) && w->def.air_density > 0.0f &&
	       (w->def.drag_coefficient != 0.0f || w->def.lift_coefficient != 0.0f);
}

/* Per triangle, with u the air velocity relative to the triangle (wind minus the mean
 * vertex velocity), A the area and theta the angle between u and the normal n (oriented
 * so u . n >= 0):
 *   drag = 1/2 rho C_d A |u|^2 cos(theta)            along u
 *   lift = 1/2 rho C_l A |u|^2 cos(theta) sin(theta) along n's component normal to u
 * The projected area A cos(theta) meets the flow; lift vanishes face-on and edge-on.
 * A third of the triangle's force goes to each vertex.  Still air (zero wind) exerts no
 * aerodynamic force; air_damping models that. */
void sim_add_wind_forces(const sim_world *w, const vec4 *x, const vec4 *v, vec4 *f)
{
	if (!wind_active(w))
		return;
	const float half_rho = 0.5f * w->def.air_density;
	for (int t = 0; t < w->triangle_count; t++) {
		const int *tri = &w->triangles[3 * t];
		vec3 e1, e2, n, u;
		glm_vec3_sub((float *)x[tri[1]], (float *)x[tri[0]], e1);
		glm_vec3_sub((float *)x[tri[2]], (float *)x[tri[0]], e2);
		glm_vec3_cross(e1, e2, n);
		float n_len = glm_vec3_norm(n);
		for (int k = 0; k < 3; k++)
			u[k] = w->def.wind[k] - (v[tri[0]][k] + v[tri[1]][k] + v[tri[2]][k]) / 3.0f;
		float speed = glm_vec3_norm(u);
		if (n_len <= 0.0f || speed <= 0.0f)
			continue;
		float area = 0.5f * n_len;
		glm_vec3_scale(n, 1.0f / n_len, n);
		float cos_t = glm_vec3_dot(n, u) / speed;
		if (cos_t < 0.0f) {
			glm_vec3_negate(n);
			cos_t = -cos_t;
		}
		float sin_t = sqrtf(fmaxf(0.0f, 1.0f - cos_t * cos_t));
		float q = half_rho * area * speed * speed;
		vec3 force;
		float drag = q * w->def.drag_coefficient * cos_t / speed; /* times u gives |u| direction */
		for (int k = 0; k < 3; k++)
			force[k] = drag * u[k];
		if (sin_t > 1e-6f && w->def.lift_coefficient != 0.0f) {
			vec3 l;
			for (int k = 0; k < 3; k++)
				l[k] = n[k] - cos_t * u[k] / speed;
			glm_vec3_scale(l, 1.0f / glm_vec3_norm(l), l);
			float lift = q * w->def.lift_coefficient * cos_t * sin_t;
			for (int k = 0; k < 3; k++)
				force[k] += lift * l[k];
		}
		for (int j = 0; j < 3; j++)
			for (int k = 0; k < 3; k++)
				f[tri[j]][k] += force[k] / 3.0f;
	}
}

void sim_compute_forces(const sim_world *w, const vec4 *x, const vec4 *v, vec4 *f)
{
	body_forces(w, x, v, f, true);
	spring_forces(w, x, v, f);
	sim_add_wind_forces(w, x, v, f);
}

void sim_compute_forces_no_anchor(const sim_world *w, const vec4 *x, const vec4 *v, vec4 *f)
{
	body_forces(w, x, v, f, false);
	spring_forces(w, x, v, f);
	sim_add_wind_forces(w, x, v, f);
}

void sim_update_incidence(sim_world *w)
{
	if (w->incidence_valid)
		return;
	free(w->inc_start);
	free(w->inc_spring);
	w->inc_start = calloc((size_t)w->n + 1, sizeof(int));
	w->inc_spring = malloc(sizeof(int) * 2 * (size_t)(w->spring_count ? w->spring_count : 1));
	if (!w->inc_start || !w->inc_spring)
		abort(); /* out of memory in set-up: nothing sensible to continue with */
	for (int s = 0; s < w->spring_count; s++) {
		w->inc_start[w->springs[s].a + 1]++;
		w->inc_start[w->springs[s].b + 1]++;
	}
	for (int i = 0; i < w->n; i++)
		w->inc_start[i + 1] += w->inc_start[i];
	int *fill = calloc((size_t)w->n + 1, sizeof(int));
	if (!fill)
		abort();
	for (int s = 0; s < w->spring_count; s++) {
		int a = w->springs[s].a, b = w->springs[s].b;
		w->inc_spring[w->inc_start[a] + fill[a]++] = s;
		w->inc_spring[w->inc_start[b] + fill[b]++] = s;
	}
	free(fill);
	for (int i = 0; i < w->n; i++) {
		float k = 0.0f, kd = 0.0f;
		for (int e = w->inc_start[i]; e < w->inc_start[i + 1]; e++) {
			k += w->springs[w->inc_spring[e]].k;
			kd += w->springs[w->inc_spring[e]].kd;
		}
		w->kang_k[i] = k;
		w->kang_kd[i] = kd;
	}
	w->incidence_valid = true;
}

void sim_vertex_force(sim_world *w, int i, const vec4 *x, const vec4 *v, vec3 out)
{
	sim_update_incidence(w);
	float m = w->mass[i], c = w->def.air_damping, ka = w->rest[i][3], kd = w->anchor_kd[i];
	for (int k = 0; k < 3; k++)
		out[k] = m * w->def.gravity[k] - c * m * v[i][k] + w->ext_force[i][k] - ka * (x[i][k] - w->rest[i][k]) -
		         kd * v[i][k];
	for (int e = w->inc_start[i]; e < w->inc_start[i + 1]; e++) {
		const sim_spring *s = &w->springs[w->inc_spring[e]];
		vec3 d;
		glm_vec3_sub((float *)x[s->b], (float *)x[s->a], d);
		float l = glm_vec3_norm(d);
		if (l <= 1e-12f)
			continue;
		glm_vec3_scale(d, 1.0f / l, d);
		vec3 dv;
		glm_vec3_sub((float *)v[s->b], (float *)v[s->a], dv);
		float mag = s->k * (l - s->rest) + s->kd * glm_vec3_dot(dv, d);
		float sign = s->a == i ? 1.0f : -1.0f;
		for (int k = 0; k < 3; k++)
			out[k] += sign * mag * d[k];
	}
}

double sim_potential_energy(const sim_world *w, const vec4 *x)
{
	double e = 0.0;
	const float *g = w->def.gravity;
	for (int i = 0; i < w->n; i++) {
		double gx = (double)g[0] * x[i][0] + (double)g[1] * x[i][1] + (double)g[2] * x[i][2];
		e -= (double)w->mass[i] * gx;
		float ka = w->rest[i][3];
		if (ka != 0.0f) {
			vec3 d;
			glm_vec3_sub((float *)x[i], w->rest[i], d);
			e += 0.5 * (double)ka * (double)glm_vec3_norm2(d);
		}
	}
	for (int s = 0; s < w->spring_count; s++) {
		const sim_spring *sp = &w->springs[s];
		double l = glm_vec3_distance((float *)x[sp->a], (float *)x[sp->b]);
		double d = l - sp->rest;
		e += 0.5 * (double)sp->k * d * d;
	}
	return e;
}
