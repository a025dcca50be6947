/* Provot's strain limiting (Graphics Interface 1995).
 *
 * Real fabric barely stretches, but a soft spring can stretch without bound where
 * the load concentrates (next to pins).  After the integrator, every structural or
 * shear spring longer than (1 + tau) L is shortened to (1 + tau) L by moving its ends
 * along the spring, each by its share of the inverse mass, so a kinematic end (inverse
 * mass 0) stays put and the free end takes the whole correction.  Sweeps repeat until
 * no spring is over the limit or the iteration cap is reached; alternating the sweep
 * direction spreads a correction along a chain in both directions each pair of sweeps.
 * The velocities then change by the position correction divided by h (Provot's
 * "inverse dynamics"), so the next step does not undo the correction. */
#include "sim_internal.h"

#include <math.h>
#include <string.h>

static bool limit_spring(vec4 *x, const sim_spring *s, float limit_factor)
{
	float *pa = x[s->a], *pb = x[s->b];
	float wa = pa[3], wb = pb[3];
	if (wa + wb == 0.0f)
		return false;
	float dx = pb[0] - pa[0], dy = pb[1] - pa[1], dz = pb[2] - pa[2];
	float l = sqrtf(dx * dx + dy * dy + dz * dz);
	float max_l = limit_factor * s->rest;
	if (l <= max_l || l <= 0.0f)
		return false;
	float corr = (l - max_l) / (l * (wa + wb));
	pa[0] += wa * corr * dx, pa[1] += wa * corr * dy, pa[2] += wa * corr * dz;
	pb[0] -= wb * corr * dx, pb[1] -= wb * corr * dy, pb[2] -= wb * corr * dz;
	return true;
}

int sim_strain_limit(sim_world *w, float h)
{
	vec4 *x = w->x, *before = w->tmp_x;
	memcpy(before, x, sizeof(vec4) * (size_t)w->n);
	float limit = 1.0f + w->def.strain_tau;
	/* A spring counts as over the limit only past a small relative slack, so rounding in
	 * the correction itself cannot keep the loop running. */
	float trigger = limit * (1.0f + 1e-5f);
	const sim_spring *sp = w->springs;
	int ns = w->spring_count, sweeps = 0;
	for (; sweeps < w->def.strain_iterations; sweeps++) {
		bool forward = (sweeps & 1) == 0, any = false;
		for (int k = 0; k < ns; k++) {
			const sim_spring *s = &sp[forward ? k : ns - 1 - k];
			if (s->kind == SIM_SPRING_BEND)
				continue;
			float l = glm_vec3_distance(x[s->a], x[s->b]);
			if (l > trigger * s->rest)
				any = limit_spring(x, s, limit) || any;
		}
		if (!any)
			break;
	}
	float inv_h = 1.0f / h;
	for (int i = 0; i < w->n; i++)
		for (int k = 0; k < 3; k++)
			w->v[i][k] += (x[i][k] - before[i][k]) * inv_h;
	return sweeps;
}
