/* Linearised implicit (backward) Euler after Baraff and Witkin, "Large Steps in Cloth
 * Simulation", SIGGRAPH 1998.
 *
 * One step of length h solves
 *
 *     A dv = b,   A = M - h dF/dv - h^2 dF/dx,   b = h (f0 + h dF/dx v0)
 *
 * and moves x by h (v0 + dv).  Every force in the world that has a Jacobian (air
 * damping, springs with damping, anchors) has one that is a multiple of the identity
 * per vertex or a symmetric 3x3 block per spring, so A is stored as
 *
 *   - one scalar per vertex, d_i = m_i (1 + h c_air) + h kd_anchor + h^2 k_anchor, and
 *   - one symmetric block per spring, S = h D + h^2 K (6 floats),
 *
 * where A_aa = d_a I + sum of the S of springs at a, A_ab = -S.  The product is then
 * (A p)_a = d_a p_a + sum_s S_s (p_a - p_b): the spring term works on the difference of
 * the two end values.  That is the same matrix as diagonal plus off-diagonal blocks,
 * but it does half the arithmetic and, more importantly for float storage, it never
 * forms A_aa p_a - S p_b, which cancels catastrophically when p is smooth (a falling
 * cloth) and the springs are stiff.
 *
 * The solve is Baraff and Witkin's modified preconditioned conjugate gradient
 * (section 5.3): kinematic vertices (x.w == 0) are filtered out of the residual and the
 * search directions, and their dv is fixed to vc - v from the start, so the free
 * vertices see the prescribed motion through the coupling blocks.
 *
 * Storage is float; every dot product accumulates in double in a fixed order, so the
 * result is deterministic and the scalar recurrences of CG do not lose the small
 * residuals to rounding.
 */
#include "sim_internal.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

/* One spring's coupling block.  The indices travel with the block so the matrix
 * product streams one array instead of gathering from the spring list. */
typedef struct implicit_block {
	int a, b;
	float s[6]; /* symmetric: xx, xy, xz, yy, yz, zz */
} implicit_block;

struct sim_implicit {
	int vertex_capacity, block_capacity;
	implicit_block *blocks;
	float *diag;  /* scalar part of A's diagonal blocks (mass, air, anchor) */
	float *mask;  /* the filter S_i: 1 free, 0 kinematic */
	vec4 *pinv;   /* inverse of the diagonal of A (Jacobi), 0 for kinematic vertices */
	vec4 *dv;     /* the unknown */
	vec4 *r;      /* filtered residual */
	vec4 *c;      /* search direction (filtered) */
	vec4 *q;      /* A c */
	vec4 *q2;     /* second accumulator of A c, see implicit_multiply */
};

sim_implicit *sim_implicit_create(void)
{
	return calloc(1, sizeof(sim_implicit));
}

void sim_implicit_destroy(sim_implicit *im)
{
	if (!im)
		return;
	free(im->blocks);
	free(im->diag);
	free(im->mask);
	free(im->pinv);
	free(im->dv);
	free(im->r);
	free(im->c);
	free(im->q);
	free(im->q2);
	free(im);
}

/* Grows an array to count elements; the old contents need not survive (every array
 * is rewritten each step), so free + aligned_alloc avoids copying. */
static bool grow(void **p, size_t count, size_t size, size_t align)
{
	size_t bytes = count * size;
	bytes = (bytes + align - 1) / align * align; /* aligned_alloc wants a multiple */
	void *n = aligned_alloc(align, bytes ? bytes : align);
	if (!n)
		return false;
	free(*p);
	*p = n;
	return true;
}

static bool implicit_reserve(sim_implicit *im, int n, int springs)
{
	if (n > im->vertex_capacity) {
		/* Grow geometrically so a world that gains objects one at a time does not
		 * reallocate on every step after each addition. */
		int cap = im->vertex_capacity ? im->vertex_capacity : 64;
		while (cap < n)
			cap *= 2;
		size_t vn = (size_t)cap;
		if (!grow((void **)&im->diag, vn, sizeof(float), 16) ||
		    !grow((void **)&im->mask, vn, sizeof(float), 16) ||
		    !grow((void **)&im->pinv, vn, sizeof(vec4), 16) ||
		    !grow((void **)&im->dv, vn, sizeof(vec4), 16) ||
		    !grow((void **)&im->r, vn, sizeof(vec4), 16) ||
		    !grow((void **)&im->c, vn, sizeof(vec4), 16) ||
		    !grow((void **)&im->q, vn, sizeof(vec4), 16) ||
		    !grow((void **)&im->q2, vn, sizeof(vec4), 16)) {
			/* Some arrays may now be larger than others; remember the old size so
			 * the next call tries again. */
			return false;
		}
		im->vertex_capacity = cap;
	}
	if (springs > im->block_capacity) {
		int cap = im->block_capacity ? im->block_capacity : 256;
		while (cap < springs)
			cap *= 2;
		if (!grow((void **)&im->blocks, (size_t)cap, sizeof(implicit_block), 32))
			return false;
		im->block_capacity = cap;
	}
	return true;
}

/* q = A p without the filter, and returns p . (A p) (p is zero at kinematic vertices
 * whenever this is used as cᵀ A c, so it equals cᵀ filter(A c)).
 *
 * The spring pass adds S (p_a - p_b) to q_a and subtracts it from q_b into a second
 * array: in a grid the springs come in chains (0,1), (1,2), ... and with a single
 * accumulator every spring would have to wait for the previous one's store to q_1.
 * The quadratic form is summed per spring as (p_a - p_b)ᵀ S (p_a - p_b), a sum of
 * non-negative terms for an SPD block, which is better conditioned than cᵀ q. */
static double implicit_multiply(const sim_implicit *im, int n, int springs, const vec4 *p, vec4 *q)
{
	vec4 *restrict qa = q;
	vec4 *restrict qb = im->q2;
	const float *restrict diag = im->diag;
	double quad = 0.0;
	for (int i = 0; i < n; i++) {
		float d = diag[i];
		qa[i][0] = d * p[i][0];
		qa[i][1] = d * p[i][1];
		qa[i][2] = d * p[i][2];
		qb[i][0] = 0.0f;
		qb[i][1] = 0.0f;
		qb[i][2] = 0.0f;
		quad += (double)(d * (p[i][0] * p[i][0] + p[i][1] * p[i][1] + p[i][2] * p[i][2]));
	}
	const implicit_block *restrict blocks = im->blocks;
	for (int k = 0; k < springs; k++) {
		const implicit_block *bk = &blocks[k];
		int a = bk->a, b = bk->b;
		float e0 = p[a][0] - p[b][0];
		float e1 = p[a][1] - p[b][1];
		float e2 = p[a][2] - p[b][2];
		const float *s = bk->s;
		float t0 = s[0] * e0 + s[1] * e1 + s[2] * e2;
		float t1 = s[1] * e0 + s[3] * e1 + s[4] * e2;
		float t2 = s[2] * e0 + s[4] * e1 + s[5] * e2;
		qa[a][0] += t0;
		qa[a][1] += t1;
		qa[a][2] += t2;
		qb[b][0] += t0;
		qb[b][1] += t1;
		qb[b][2] += t2;
		quad += (double)(e0 * t0 + e1 * t1 + e2 * t2);
	}
	for (int i = 0; i < n; i++) {
		qa[i][0] -= qb[i][0];
		qa[i][1] -= qb[i][1];
		qa[i][2] -= qb[i][2];
	}
	return quad;
}

/* Builds d, the spring blocks, the Jacobi preconditioner and the right-hand side
 * b = h f0 + h^2 (dF/dx) v0 (into r).  w->f holds f0. */
static void implicit_assemble(sim_implicit *im, const sim_world *w, float h)
{
	const int n = w->n;
	const float h2 = h * h;
	const float air = w->def.air_damping;
	const vec4 *restrict x = w->x;
	const vec4 *restrict v = w->v;
	const vec4 *restrict f = w->f;
	vec4 *restrict r = im->r;
	vec4 *restrict pd = im->pinv; /* the diagonal of A until it is inverted below */

	for (int i = 0; i < n; i++) {
		/* Air damping -c m v and the anchor -k (x - rest) - kd v are isotropic, so
		 * they only add to the scalar part; the anchor's dF/dx v0 = -k v0 goes into b. */
		float ka = w->rest[i][3];
		float d = w->mass[i] * (1.0f + h * air) + h * w->anchor_kd[i] + h2 * ka;
		im->diag[i] = d;
		im->mask[i] = x[i][3] != 0.0f ? 1.0f : 0.0f;
		pd[i][0] = pd[i][1] = pd[i][2] = d;
		pd[i][3] = 0.0f;
		float hka = h2 * ka;
		r[i][0] = h * f[i][0] - hka * v[i][0];
		r[i][1] = h * f[i][1] - hka * v[i][1];
		r[i][2] = h * f[i][2] - hka * v[i][2];
		r[i][3] = 0.0f;
	}

	for (int k = 0; k < w->spring_count; k++) {
		const sim_spring *sp = &w->springs[k];
		implicit_block *bk = &im->blocks[k];
		const int a = sp->a, b = sp->b;
		bk->a = a;
		bk->b = b;
		float dx0 = x[b][0] - x[a][0];
		float dx1 = x[b][1] - x[a][1];
		float dx2 = x[b][2] - x[a][2];
		float l2 = dx0 * dx0 + dx1 * dx1 + dx2 * dx2;
		/* A collapsed spring has no direction; forces.c exerts no force along it
		 * either, so it contributes nothing to the system. */
		if (!(l2 > 1e-24f)) {
			memset(bk->s, 0, sizeof bk->s);
			continue;
		}
		float l = sqrtf(l2);
		float inv_l = 1.0f / l;
		float u0 = dx0 * inv_l, u1 = dx1 * inv_l, u2 = dx2 * inv_l;
		/* dF/dx = k [u uᵀ + (1 - L/l)(I - u uᵀ)].  Under compression the transverse
		 * term is negative and can make A indefinite (buckling); clamping it to zero
		 * keeps A symmetric positive definite so CG applies, at the price of an
		 * inexact Jacobian for compressed springs (Choi and Ko 2002 do the same). */
		float t = 1.0f - sp->rest * inv_l;
		if (t < 0.0f)
			t = 0.0f;
		/* S = h D + h^2 K = beta I + gamma u uᵀ with D = kd u uᵀ. */
		float beta = h2 * sp->k * t;
		float gamma = h * sp->kd + h2 * sp->k - beta;
		bk->s[0] = beta + gamma * u0 * u0;
		bk->s[1] = gamma * u0 * u1;
		bk->s[2] = gamma * u0 * u2;
		bk->s[3] = beta + gamma * u1 * u1;
		bk->s[4] = gamma * u1 * u2;
		bk->s[5] = beta + gamma * u2 * u2;
		pd[a][0] += bk->s[0];
		pd[a][1] += bk->s[3];
		pd[a][2] += bk->s[5];
		pd[b][0] += bk->s[0];
		pd[b][1] += bk->s[3];
		pd[b][2] += bk->s[5];
		/* h^2 dF/dx v0 for this spring: dF_a/dx_a = -K, dF_a/dx_b = K, so the
		 * contribution to a is h^2 K (v_b - v_a) and the opposite to b. */
		float e0 = v[b][0] - v[a][0];
		float e1 = v[b][1] - v[a][1];
		float e2 = v[b][2] - v[a][2];
		float hk = h2 * sp->k;
		float iso = hk * t;
		float along = (hk - iso) * (u0 * e0 + u1 * e1 + u2 * e2);
		float g0 = iso * e0 + along * u0;
		float g1 = iso * e1 + along * u1;
		float g2 = iso * e2 + along * u2;
		r[a][0] += g0;
		r[a][1] += g1;
		r[a][2] += g2;
		r[b][0] -= g0;
		r[b][1] -= g1;
		r[b][2] -= g2;
	}

	for (int i = 0; i < n; i++) {
		/* Kinematic vertices get 0 so that the preconditioned residual is already
		 * filtered; a free vertex's diagonal is at least its mass, never 0. */
		float m = im->mask[i];
		pd[i][0] = m / pd[i][0];
		pd[i][1] = m / pd[i][1];
		pd[i][2] = m / pd[i][2];
	}
}

void sim_implicit_step(sim_world *w, float h, sim_stats *stats)
{
	sim_implicit *im = w->implicit;
	const int n = w->n;
	const int springs = w->spring_count;
	if (!im || !implicit_reserve(im, n, springs)) {
		/* Without scratch there is nothing sound to do; leave the state as it is and
		 * report a failed solve (an infinite residual) instead of moving anything. */
		if (stats) {
			stats->cg_iterations = 0;
			stats->cg_residual = INFINITY;
		}
		return;
	}

	sim_compute_forces(w, w->x, w->v, w->f);
	implicit_assemble(im, w, h);

	vec4 *restrict dv = im->dv;
	vec4 *restrict r = im->r;
	vec4 *restrict c = im->c;
	vec4 *restrict q = im->q;
	const float *restrict mask = im->mask;
	const vec4 *restrict pinv = im->pinv;

	/* dv starts at z: the constraint's velocity change on kinematic vertices, 0 on
	 * free ones. */
	bool constrained_motion = false;
	for (int i = 0; i < n; i++) {
		for (int j = 0; j < 3; j++) {
			float z = mask[i] != 0.0f ? 0.0f : w->vc[i][j] - w->v[i][j];
			dv[i][j] = z;
			constrained_motion |= z != 0.0f;
		}
		dv[i][3] = 0.0f;
	}
	/* r = filter(b - A z); with z = 0 the product is skipped (it would be exactly 0). */
	if (constrained_motion) {
		implicit_multiply(im, n, springs, (const vec4 *)dv, q);
		for (int i = 0; i < n; i++)
			for (int j = 0; j < 3; j++)
				r[i][j] -= q[i][j];
	}
	double delta = 0.0;
	for (int i = 0; i < n; i++) {
		for (int j = 0; j < 3; j++) {
			r[i][j] *= mask[i];
			c[i][j] = pinv[i][j] * r[i][j];
			delta += (double)r[i][j] * (double)c[i][j];
		}
		c[i][3] = 0.0f;
	}

	/* The tolerance is relative to the initial residual rather than to b (Baraff and
	 * Witkin use b): a cloth at rest with a moving pin has b = 0 but still has to
	 * follow the pin. */
	const double delta0 = delta;
	const double tol = (double)w->def.cg_tolerance;
	const double target = tol * tol * delta0;
	const int max_iterations = w->def.cg_max_iterations > 0 ? w->def.cg_max_iterations : 0;
	int iterations = 0;
	while (iterations < max_iterations && delta > target) {
		double cq = implicit_multiply(im, n, springs, (const vec4 *)c, q);
		/* cᵀ A c <= 0 means A is not positive definite in floating point (or a NaN
		 * came in); stopping keeps the iterate we have, and the blow-up check of the
		 * world deals with non-finite states. */
		if (!(cq > 0.0))
			break;
		const float alpha = (float)(delta / cq);
		double delta_new = 0.0;
		for (int i = 0; i < n; i++) {
			const float m = mask[i];
			for (int j = 0; j < 3; j++) {
				dv[i][j] += alpha * c[i][j];
				r[i][j] -= alpha * (m * q[i][j]);
				delta_new += (double)r[i][j] * (double)(pinv[i][j] * r[i][j]);
			}
		}
		const float beta = (float)(delta_new / delta);
		delta = delta_new;
		iterations++;
		if (!(delta > target))
			break;
		/* pinv is 0 at kinematic vertices and c was 0 there, so c stays filtered. */
		for (int i = 0; i < n; i++)
			for (int j = 0; j < 3; j++)
				c[i][j] = pinv[i][j] * r[i][j] + beta * c[i][j];
	}

	for (int i = 0; i < n; i++) {
		vec4 *xi = &w->x[i];
		vec4 *vi = &w->v[i];
		if (mask[i] != 0.0f) {
			for (int j = 0; j < 3; j++)
				(*vi)[j] += dv[i][j];
		} else {
			/* Exactly the constraint velocity, not v + (vc - v) rounded. */
			for (int j = 0; j < 3; j++)
				(*vi)[j] = w->vc[i][j];
		}
		for (int j = 0; j < 3; j++)
			(*xi)[j] += h * (*vi)[j];
	}

	if (stats) {
		stats->cg_iterations = iterations;
		stats->cg_residual = delta0 > 0.0 ? (float)sqrt(delta / delta0) : 0.0f;
	}
}
