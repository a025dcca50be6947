/* Linearised implicit (backward) Euler after Baraff and Witkin, "Large Steps in Cloth
 * Simulation", SIGGRAPH 1998.
 *
 * One step of length h solves
 *
 *     A dv = b,   A = M - h dF/dv - h^2 dF/dx,   b = h (f0 + h dF/dx v0)
 *
 * and moves x by h (v0 + dv).  Every force with a Jacobian (air damping, damped
 * springs, anchors) contributes either a multiple of the identity per vertex or one
 * symmetric 3x3 block per spring, so A is stored as
 *
 *   - a scalar per vertex, d_i = m_i (1 + h c_air) + h kd_anchor + h^2 k_anchor, and
 *   - a block per spring, S = h D + h^2 K,
 *
 * with A_aa = d_a I + (sum of S over the springs at a) and A_ab = -S.  The product is
 * evaluated as (A p)_a = d_a p_a + sum_s S_s (p_a - p_b).  That is the same matrix as
 * "diagonal blocks plus off-diagonal blocks", but it does half the arithmetic and it
 * never forms A_aa p_a - S p_b, which cancels catastrophically in float when p is
 * smooth (a falling cloth) and the springs are stiff.
 *
 * The solve is Baraff and Witkin's modified preconditioned conjugate gradient (section
 * 5.3): kinematic vertices (x.w == 0) are filtered out of the residual and the search
 * directions, and their dv is fixed to vc - v, so free vertices feel the prescribed
 * motion through the coupling blocks.  Two departures from the paper, both measured on
 * the 64x64 benchmark cloth at h = 1/240 (issue 2):
 *
 *   - The preconditioner is the inverse of each vertex's 3x3 diagonal block rather than
 *     of its three diagonal entries.  A cloth vertex is stiff in the cloth's plane and
 *     soft across it; the scalar version only sees that when the cloth happens to lie
 *     along the world axes, the block version in any orientation.  About a third fewer
 *     iterations for little extra arithmetic.
 *   - Free vertices start from the previous step's dv (scaled to the new h) when that
 *     lowers the residual; the paper starts from 0.  The convergence test stays relative
 *     to the residual of the paper's starting point, so the guess only saves iterations
 *     and never changes what "converged" means.
 *
 * Layout: every vector of the solve is three planes (x, y, z) of floats.  The blocks of
 * a grid object are stored per spring family, in the grid's vertex order (the families
 * forces.c walks), so each product is a few long loops over contiguous planes that the
 * compiler vectorises; springs of other objects go through a plain list.  Dot products
 * accumulate in double, in eight fixed partial sums, so every build of the kernels
 * (SIM_VECTOR_CLONES) gives the same bits.
 */
#include "sim_internal.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

/* As in forces.c: keeps the length and its inverse finite for coincident ends without a
 * branch.  The direction is then 0, so the spring's block is 0 too. */
#define LENGTH2_BIAS 1e-30f

/* The symmetric 3x3 blocks of the preconditioner and of listed springs are six planes
 * (or floats) in this order. */
enum { S_XX, S_XY, S_XZ, S_YY, S_YZ, S_ZZ, S_COUNT };

/* A grid spring's block S = beta I + gamma u uᵀ (gamma >= 0) is kept as w = sqrt(gamma) u
 * and beta, S = beta I + w wᵀ: four planes instead of six.  The product streams these
 * planes once per CG iteration and they are most of its memory traffic. */
enum { W_X, W_Y, W_Z, W_BETA, W_COUNT };

/* All springs of one family of a grid object as one run: a + i -> a + i + offset for
 * i < count, blocks at slot + i of the block planes.  A family's springs of consecutive
 * rows are adjacent in this numbering except where a row wraps: the few a + i whose
 * partner would lie in another column range (the last vertex of a row for a
 * horizontal family, say) are placeholders with a zero block, which the product
 * passes through at no cost, so every product is six long vectorised loops per cloth
 * instead of six per grid row. */
typedef struct implicit_run {
	int a, offset, count, slot;
} implicit_run;

/* A spring outside a grid: its block as (w, beta). */
typedef struct implicit_block {
	int a, b;
	float w[W_COUNT];
} implicit_block;

/* Plane padding, in floats.  Planes a whole number of pages apart would all map to the
 * same offsets within a page, and a load from one plane would then wait for a store to
 * another that merely shares the low address bits (4K aliasing): a CG iteration of the
 * 64x64 benchmark took 32 us instead of 27.  128 bytes per plane spreads 32 planes over
 * a page. */
#define PLANE_PAD 32

/* Vertex planes, in order, within one allocation. */
enum {
	P_X = 0,       /* x of the step, three planes */
	P_V = 3,       /* v of the step, three planes */
	P_DIAG = 6,    /* scalar part of A's diagonal: mass, air and anchor terms */
	P_MASK = 7,    /* the filter S_i: 1 free, 0 kinematic */
	P_PRE = 8,     /* six planes: A's diagonal blocks, then their inverses (0 if kinematic) */
	P_DV = 14,     /* the unknown; between steps, the last solution (warm start) */
	P_R = 17,      /* filtered residual b - A dv (r and q may trade places) */
	P_S = 20,      /* preconditioned residual */
	P_C = 23,      /* search direction, zero at kinematic vertices */
	P_Q = 26,      /* A c */
	P_ROW = 29,    /* one run's products or right-hand side terms */
	P_COUNT = 32
};

struct sim_implicit {
	int capacity;      /* vertices */
	int stride;        /* floats from one vertex plane to the next */
	int slot_capacity; /* grid springs */
	int slot_stride;   /* floats from one block plane to the next */
	int run_capacity, block_capacity;

	float *planes;     /* P_COUNT vertex planes */
	float *diag, *mask, *pre, *dv, *r, *s, *c, *q, *row; /* into planes */
	float *slots;      /* W_COUNT planes of grid spring blocks */
	implicit_run *runs;
	implicit_block *blocks;
	int run_count, block_count;

	/* Warm start: dv[0, guess_count) is the solution of a step of length guess_h taken
	 * during world step guess_step. */
	int guess_count;
	float guess_h;
	int64_t guess_step;
};

sim_implicit *sim_implicit_create(void)
{
	return calloc(1, sizeof(sim_implicit));
}

void sim_implicit_destroy(sim_implicit *im)
{
	if (!im)
		return;
	free(im->planes);
	free(im->slots);
	free(im->runs);
	free(im->blocks);
	free(im);
}

/* ---- storage -------------------------------------------------------------------------------- */

/* Replaces an array by a larger one, page-aligned (see PLANE_PAD); the contents need not
 * survive (everything but the warm-start guess is rebuilt each step, and the guess is
 * dropped), so nothing is copied. */
static bool regrow(void **p, size_t bytes)
{
	bytes = (bytes + 4095) / 4096 * 4096; /* aligned_alloc wants a multiple of the alignment */
	void *fresh = aligned_alloc(4096, bytes ? bytes : 4096);
	if (!fresh)
		return false;
	free(*p);
	*p = fresh;
	return true;
}

/* Doubles from a minimum until `need` fits: a world that gains objects one by one
 * reallocates a few times, and never inside the steady-state step. */
static int grown(int have, int need, int minimum)
{
	int cap = have ? have : minimum;
	while (cap < need)
		cap *= 2;
	return cap;
}

/* The family's run over the whole grid (object-local a, see implicit_run); 0 when the
 * family has no springs or no stiffness and damping (forces.c skips it too).  *i0 and
 * *i1 bound the columns whose springs are real. */
static int family_span(const sim_object *o, const sim_grid_family *fam, int *a, int *i0, int *i1)
{
	const int nx = o->grid_nx, rows = o->grid_ny - fam->dj;
	*i0 = fam->di < 0 ? -fam->di : 0;
	*i1 = nx - (fam->di > 0 ? fam->di : 0);
	*a = *i0;
	if ((fam->k == 0.0f && fam->kd == 0.0f) || rows <= 0 || *i1 <= *i0)
		return 0;
	return (rows - 1) * nx + *i1 - *i0;
}

static bool implicit_reserve(sim_implicit *im, const sim_world *w)
{
	int runs = 0, slots = 0, listed = 0;
	for (int k = 0; k < w->object_count; k++) {
		const sim_object *o = &w->objects[k];
		if (!o->grid_nx) {
			listed += o->spring_count;
			continue;
		}
		for (int f = 0; f < SIM_GRID_FAMILIES; f++) {
			int a, i0, i1, count = family_span(o, &o->families[f], &a, &i0, &i1);
			if (count <= 0)
				continue;
			runs++;
			slots += count;
		}
	}
	if (w->n > im->capacity) {
		int cap = grown(im->capacity, w->n, 64);
		int stride = cap + PLANE_PAD;
		im->guess_count = 0;
		if (!regrow((void **)&im->planes, sizeof(float) * P_COUNT * (size_t)stride))
			return false;
		im->capacity = cap;
		im->stride = stride;
		float *b = im->planes;
		im->diag = b + P_DIAG * stride;
		im->mask = b + P_MASK * stride;
		im->pre = b + P_PRE * stride;
		im->dv = b + P_DV * stride;
		im->r = b + P_R * stride;
		im->s = b + P_S * stride;
		im->c = b + P_C * stride;
		im->q = b + P_Q * stride;
		im->row = b + P_ROW * stride;
	}
	if (slots > im->slot_capacity) {
		int cap = grown(im->slot_capacity, slots, 1024);
		int stride = cap + PLANE_PAD;
		if (!regrow((void **)&im->slots, sizeof(float) * W_COUNT * (size_t)stride))
			return false;
		im->slot_capacity = cap;
		im->slot_stride = stride;
	}
	if (runs > im->run_capacity) {
		int cap = grown(im->run_capacity, runs, 64);
		if (!regrow((void **)&im->runs, sizeof(implicit_run) * (size_t)cap))
			return false;
		im->run_capacity = cap;
	}
	if (listed > im->block_capacity) {
		int cap = grown(im->block_capacity, listed, 64);
		if (!regrow((void **)&im->blocks, sizeof(implicit_block) * (size_t)cap))
			return false;
		im->block_capacity = cap;
	}
	return true;
}

/* ---- kernels -------------------------------------------------------------------------------- */


/* sum a[i] b[i], i < n, in double: eight partial sums in a fixed pattern, so the loop
 * vectorises without reassociation and every build adds in the same order.  Products
 * of two floats are exact in double. */
SIM_VECTOR_CLONES
static double dot(const float *restrict a, const float *restrict b, int n)
{
	double acc[8] = {0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0};
	int i = 0;
	for (; i + 8 <= n; i += 8)
		for (int k = 0; k < 8; k++)
			acc[k] += (double)a[i + k] * (double)b[i + k];
	for (int k = 0; i + k < n; k++)
		acc[k] += (double)a[i + k] * (double)b[i + k];
	return ((acc[0] + acc[1]) + (acc[2] + acc[3])) + ((acc[4] + acc[5]) + (acc[6] + acc[7]));
}

/* aᵀ b over three planes. */
static double dot3(const float *a, const float *b, int n, int stride)
{
	return (dot(a, b, n) + dot(a + stride, b + stride, n)) + dot(a + 2 * stride, b + 2 * stride, n);
}

/* Blocks of one grid run and its share of b.  For spring i, with d = x_b - x_a:
 *   dF/dx = k [u uᵀ + t (I - u uᵀ)],  t = max(0, 1 - L/l)
 * The transverse term 1 - L/l is negative under compression and can make A indefinite
 * (the buckling instability); clamping it at zero keeps A symmetric positive definite so
 * CG applies, at the price of an inexact Jacobian for compressed springs (as Choi and Ko
 * 2002).  With D = kd u uᵀ the block is S = h D + h^2 K = beta I + gamma u uᵀ, stored as
 * (w, beta).  g receives h^2 K (v_b - v_a), the spring's part of h^2 dF/dx v0 on a (b
 * gets -g). */
SIM_VECTOR_CLONES
static void run_assemble(const float *restrict px, const float *restrict py, const float *restrict pz,
                         const float *restrict vx, const float *restrict vy, const float *restrict vz, int offset,
                         int count, float h, float k, float kd, float rest, float *restrict wx, float *restrict wy,
                         float *restrict wz, float *restrict wbeta, float *restrict gx, float *restrict gy,
                         float *restrict gz)
{
	const float hk = h * h * k;
	const float hkd = h * kd + hk;
	for (int i = 0; i < count; i++) {
		float dx = px[i + offset] - px[i], dy = py[i + offset] - py[i], dz = pz[i + offset] - pz[i];
		float l = sqrtf(dx * dx + dy * dy + dz * dz + LENGTH2_BIAS);
		float inv_l = 1.0f / l;
		float ux = dx * inv_l, uy = dy * inv_l, uz = dz * inv_l;
		float t = 1.0f - rest * inv_l;
		t = t > 0.0f ? t : 0.0f;
		float beta = hk * t;
		/* hkd >= hk >= beta, so gamma >= 0 even after rounding. */
		float root = sqrtf(hkd - beta);
		wx[i] = root * ux;
		wy[i] = root * uy;
		wz[i] = root * uz;
		wbeta[i] = beta;
		float ex = vx[i + offset] - vx[i], ey = vy[i + offset] - vy[i], ez = vz[i + offset] - vz[i];
		float along = (hk - beta) * (ux * ex + uy * ey + uz * ez);
		gx[i] = beta * ex + along * ux;
		gy[i] = beta * ey + along * uy;
		gz[i] = beta * ez + along * uz;
	}
}

/* Adds the blocks beta I + w wᵀ of a run to six planes of diagonal blocks. */
SIM_VECTOR_CLONES
static void run_add_blocks(float *restrict sxx, float *restrict sxy, float *restrict sxz, float *restrict syy,
                           float *restrict syz, float *restrict szz, const float *restrict wx,
                           const float *restrict wy, const float *restrict wz, const float *restrict wbeta,
                           int count)
{
	for (int i = 0; i < count; i++) {
		sxx[i] += wx[i] * wx[i] + wbeta[i];
		sxy[i] += wx[i] * wy[i];
		sxz[i] += wx[i] * wz[i];
		syy[i] += wy[i] * wy[i] + wbeta[i];
		syz[i] += wy[i] * wz[i];
		szz[i] += wz[i] * wz[i] + wbeta[i];
	}
}

/* q_a += S (p_a - p_b) and q_b -= S (p_a - p_b) for a run whose b-run starts at least a
 * grid row further on.  The two runs overlap in memory, but only `offset` apart: the
 * compiler vectorises with a run-time check that the offset exceeds the vector width,
 * which keeps every element's operations in the scalar order. */
SIM_VECTOR_CLONES
static void run_product(const float *restrict wx, const float *restrict wy, const float *restrict wz,
                        const float *restrict wbeta, const float *restrict px, const float *restrict py,
                        const float *restrict pz, float *restrict qx, float *restrict qy, float *restrict qz,
                        int offset, int count)
{
	for (int i = 0; i < count; i++) {
		float ex = px[i] - px[i + offset], ey = py[i] - py[i + offset], ez = pz[i] - pz[i + offset];
		float we = wx[i] * ex + wy[i] * ey + wz[i] * ez;
		float tx = wbeta[i] * ex + we * wx[i];
		float ty = wbeta[i] * ey + we * wy[i];
		float tz = wbeta[i] * ez + we * wz[i];
		qx[i] += tx;
		qy[i] += ty;
		qz[i] += tz;
		qx[i + offset] -= tx;
		qy[i + offset] -= ty;
		qz[i + offset] -= tz;
	}
}

/* t = S (p_a - p_b) for a run within grid rows (offset 1 or 2, below the vector width),
 * to be scattered by two separate passes. */
SIM_VECTOR_CLONES
static void run_product_row(const float *restrict wx, const float *restrict wy, const float *restrict wz,
                            const float *restrict wbeta, const float *restrict px, const float *restrict py,
                            const float *restrict pz, float *restrict tx, float *restrict ty, float *restrict tz,
                            int offset, int count)
{
	for (int i = 0; i < count; i++) {
		float ex = px[i] - px[i + offset], ey = py[i] - py[i + offset], ez = pz[i] - pz[i + offset];
		float we = wx[i] * ex + wy[i] * ey + wz[i] * ez;
		tx[i] = wbeta[i] * ex + we * wx[i];
		ty[i] = wbeta[i] * ey + we * wy[i];
		tz[i] = wbeta[i] * ez + we * wz[i];
	}
}

SIM_VECTOR_CLONES
static void row_add(float *restrict dst, const float *restrict src, int count)
{
	for (int i = 0; i < count; i++)
		dst[i] += src[i];
}

SIM_VECTOR_CLONES
static void row_sub(float *restrict dst, const float *restrict src, int count)
{
	for (int i = 0; i < count; i++)
		dst[i] -= src[i];
}

/* dst_a[i] += src[i], then dst_b[i] -= src[i] (or += when both_add, for the diagonal
 * blocks), for `planes` planes.  Separate passes: in a family within one grid row the
 * b-run overlaps the a-run, and the second pass must see what the first wrote. */
static void scatter_planes(float *dst, int stride, int a, int b, const float *src, int src_stride, int planes,
                           int count, bool both_add)
{
	for (int p = 0; p < planes; p++)
		row_add(dst + p * stride + a, src + p * src_stride, count);
	for (int p = 0; p < planes; p++) {
		if (both_add)
			row_add(dst + p * stride + b, src + p * src_stride, count);
		else
			row_sub(dst + p * stride + b, src + p * src_stride, count);
	}
}

/* y = P x for the six-plane block diagonal P (x, y: three planes). */
SIM_VECTOR_CLONES
static void precondition(const float *restrict pre, const float *restrict x, float *restrict y, int n, int stride)
{
	for (int i = 0; i < n; i++) {
		float x0 = x[i], x1 = x[stride + i], x2 = x[2 * stride + i];
		y[i] = pre[S_XX * stride + i] * x0 + pre[S_XY * stride + i] * x1 + pre[S_XZ * stride + i] * x2;
		y[stride + i] = pre[S_XY * stride + i] * x0 + pre[S_YY * stride + i] * x1 + pre[S_YZ * stride + i] * x2;
		y[2 * stride + i] = pre[S_XZ * stride + i] * x0 + pre[S_YZ * stride + i] * x1 + pre[S_ZZ * stride + i] * x2;
	}
}

/* dv += alpha c, r -= alpha filter(q), s = P r. */
SIM_VECTOR_CLONES
static void cg_update(float *restrict dv, float *restrict r, float *restrict s, const float *restrict c,
                      const float *restrict q, const float *restrict mask, const float *restrict pre, float alpha,
                      int n, int stride)
{
	for (int p = 0; p < 3; p++) {
		for (int i = 0; i < n; i++) {
			dv[p * stride + i] += alpha * c[p * stride + i];
			r[p * stride + i] -= alpha * (mask[i] * q[p * stride + i]);
		}
	}
	precondition(pre, r, s, n, stride);
}

/* c = s + beta c, and q = d c to start the next product. */
SIM_VECTOR_CLONES
static void cg_direction(float *restrict c, float *restrict q, const float *restrict s, const float *restrict diag,
                         float beta, int n, int stride)
{
	for (int p = 0; p < 3; p++) {
		for (int i = 0; i < n; i++) {
			float ci = s[p * stride + i] + beta * c[p * stride + i];
			c[p * stride + i] = ci;
			q[p * stride + i] = diag[i] * ci;
		}
	}
}

/* Inverse of each vertex's symmetric positive definite 3x3 block, times mask (zero for
 * kinematic vertices, which filters every preconditioned residual).  In double: a cloth
 * vertex's block is stiff in-plane and soft across, condition numbers in the hundreds. */
SIM_VECTOR_CLONES
static void invert_blocks(float *restrict pre, const float *restrict mask, int n, int stride)
{
	for (int i = 0; i < n; i++) {
		double a00 = pre[S_XX * stride + i], a01 = pre[S_XY * stride + i], a02 = pre[S_XZ * stride + i];
		double a11 = pre[S_YY * stride + i], a12 = pre[S_YZ * stride + i], a22 = pre[S_ZZ * stride + i];
		double c00 = a11 * a22 - a12 * a12;
		double c01 = a02 * a12 - a01 * a22;
		double c02 = a01 * a12 - a02 * a11;
		double c11 = a00 * a22 - a02 * a02;
		double c12 = a01 * a02 - a00 * a12;
		double c22 = a00 * a11 - a01 * a01;
		double det = a00 * c00 + a01 * c01 + a02 * c02;
		/* A free vertex's block is at least m I, so det > 0; the guard only keeps a NaN
		 * or a zero-mass kinematic vertex from producing inf * 0. */
		double f = det > 0.0 ? (double)mask[i] / det : 0.0;
		pre[S_XX * stride + i] = (float)(c00 * f);
		pre[S_XY * stride + i] = (float)(c01 * f);
		pre[S_XZ * stride + i] = (float)(c02 * f);
		pre[S_YY * stride + i] = (float)(c11 * f);
		pre[S_YZ * stride + i] = (float)(c12 * f);
		pre[S_ZZ * stride + i] = (float)(c22 * f);
	}
}

/* ---- the matrix ----------------------------------------------------------------------------- */

/* Builds d, the spring blocks and the preconditioner, and writes the right-hand side
 * b = h f0 + h^2 (dF/dx) v0 into r.  w->f holds f0. */
static void implicit_assemble(sim_implicit *im, const sim_world *w, float h)
{
	const int n = w->n, st = im->stride;
	const float h2 = h * h;
	const float air = w->def.air_damping;
	float *px = im->planes + P_X * st, *pv = im->planes + P_V * st;
	float *r = im->r, *pre = im->pre;

	sim_to_planes(w->x, px, px + st, px + 2 * st, n);
	sim_to_planes(w->v, pv, pv + st, pv + 2 * st, n);
	sim_to_planes(w->f, r, r + st, r + 2 * st, n);
	for (int p = 0; p < S_COUNT; p++)
		memset(pre + p * st, 0, sizeof(float) * (size_t)n);
	for (int i = 0; i < n; i++) {
		/* Air damping -c m v and the anchor -k (x - rest) - kd v are isotropic: they
		 * only add to the scalar diagonal, and the anchor's dF/dx v0 = -k v0 to b. */
		float ka = w->rest[i][3];
		float d = w->mass[i] * (1.0f + h * air) + h * w->anchor_kd[i] + h2 * ka;
		im->diag[i] = d;
		im->mask[i] = w->x[i][3] != 0.0f ? 1.0f : 0.0f;
		pre[S_XX * st + i] = d;
		pre[S_YY * st + i] = d;
		pre[S_ZZ * st + i] = d;
		for (int p = 0; p < 3; p++)
			r[p * st + i] = h * r[p * st + i] - h2 * ka * pv[p * st + i];
	}

	/* Grid objects: one run per family (see implicit_run). */
	int runs = 0, slot = 0;
	const int ss = im->slot_stride;
	float *g = im->row;
	const int gs = st;
	for (int k = 0; k < w->object_count; k++) {
		const sim_object *o = &w->objects[k];
		if (!o->grid_nx)
			continue;
		for (int f = 0; f < SIM_GRID_FAMILIES; f++) {
			const sim_grid_family *fam = &o->families[f];
			int a, i0, i1, count = family_span(o, fam, &a, &i0, &i1);
			if (count <= 0)
				continue;
			a += o->first_vertex;
			const int nx = o->grid_nx, offset = fam->dj * nx + fam->di;
			im->runs[runs++] = (implicit_run){a, offset, count, slot};
			float *wb = im->slots + slot;
			run_assemble(px + a, px + st + a, px + 2 * st + a, pv + a, pv + st + a, pv + 2 * st + a, offset, count,
			             h, fam->k, fam->kd, fam->rest, wb, wb + ss, wb + 2 * ss, wb + 3 * ss, g, g + gs, g + 2 * gs);
			/* The placeholders: columns outside [i0, i1) that fall inside the run. */
			for (int j = 0; j < o->grid_ny - fam->dj; j++) {
				for (int col = 0; col < nx; col++) {
					const int m = j * nx + col - i0;
					if ((col >= i0 && col < i1) || m < 0 || m >= count)
						continue;
					for (int p = 0; p < W_COUNT; p++)
						wb[p * ss + m] = 0.0f;
					for (int p = 0; p < 3; p++)
						g[p * gs + m] = 0.0f;
				}
			}
			for (int side = 0; side < 2; side++) {
				float *d = pre + (side ? a + offset : a);
				run_add_blocks(d, d + st, d + 2 * st, d + 3 * st, d + 4 * st, d + 5 * st, wb, wb + ss, wb + 2 * ss,
				               wb + 3 * ss, count);
			}
			scatter_planes(r, st, a, a + offset, g, gs, 3, count, false);
			slot += count;
		}
	}
	im->run_count = runs;

	/* Other objects: spring by spring, the same formulas. */
	int listed = 0;
	for (int k = 0; k < w->object_count; k++) {
		const sim_object *o = &w->objects[k];
		if (o->grid_nx)
			continue;
		for (int e = o->first_spring; e < o->first_spring + o->spring_count; e++) {
			const sim_spring *sp = &w->springs[e];
			if (sp->k == 0.0f && sp->kd == 0.0f)
				continue;
			implicit_block *bk = &im->blocks[listed++];
			const int a = sp->a, b = sp->b;
			bk->a = a;
			bk->b = b;
			/* A one-spring run of the grid kernel: the same arithmetic by construction. */
			float ends[6][2], gl[3];
			for (int p = 0; p < 3; p++) {
				ends[p][0] = px[p * st + a];
				ends[p][1] = px[p * st + b];
				ends[3 + p][0] = pv[p * st + a];
				ends[3 + p][1] = pv[p * st + b];
			}
			float *wv = bk->w;
			run_assemble(ends[0], ends[1], ends[2], ends[3], ends[4], ends[5], 1, 1, h, sp->k, sp->kd, sp->rest,
			             wv + W_X, wv + W_Y, wv + W_Z, wv + W_BETA, gl, gl + 1, gl + 2);
			for (int side = 0; side < 2; side++) {
				float *d = pre + (side ? b : a);
				run_add_blocks(d, d + st, d + 2 * st, d + 3 * st, d + 4 * st, d + 5 * st, wv + W_X, wv + W_Y,
				               wv + W_Z, wv + W_BETA, 1);
			}
			for (int p = 0; p < 3; p++) {
				r[p * st + a] += gl[p];
				r[p * st + b] -= gl[p];
			}
		}
	}
	im->block_count = listed;

	invert_blocks(pre, im->mask, n, st);
}

/* q += (A - D_scalar) p: the spring part of the product; the caller set q = d p. */
static void springs_multiply(sim_implicit *im, const float *p, float *q)
{
	const int st = im->stride, ss = im->slot_stride, ts = st;
	float *t = im->row;
	for (int k = 0; k < im->run_count; k++) {
		const implicit_run *run = &im->runs[k];
		const int a = run->a, off = run->offset, count = run->count;
		const float *wb = im->slots + run->slot;
		if (off >= 16) {
			run_product(wb, wb + ss, wb + 2 * ss, wb + 3 * ss, p + a, p + st + a, p + 2 * st + a, q + a, q + st + a,
			            q + 2 * st + a, off, count);
		} else {
			run_product_row(wb, wb + ss, wb + 2 * ss, wb + 3 * ss, p + a, p + st + a, p + 2 * st + a, t, t + ts,
			                t + 2 * ts, off, count);
			scatter_planes(q, st, a, a + off, t, ts, 3, count, false);
		}
	}
	for (int k = 0; k < im->block_count; k++) {
		const implicit_block *bk = &im->blocks[k];
		const int a = bk->a, b = bk->b;
		float e[3];
		for (int i = 0; i < 3; i++)
			e[i] = p[i * st + a] - p[i * st + b];
		const float *wv = bk->w;
		float we = wv[W_X] * e[0] + wv[W_Y] * e[1] + wv[W_Z] * e[2];
		float tx = wv[W_BETA] * e[0] + we * wv[W_X];
		float ty = wv[W_BETA] * e[1] + we * wv[W_Y];
		float tz = wv[W_BETA] * e[2] + we * wv[W_Z];
		q[a] += tx;
		q[st + a] += ty;
		q[2 * st + a] += tz;
		q[b] -= tx;
		q[st + b] -= ty;
		q[2 * st + b] -= tz;
	}
}

/* q = A p (unfiltered). */
static void full_multiply(sim_implicit *im, int n, const float *p, float *q)
{
	const int st = im->stride;
	for (int c = 0; c < 3; c++)
		for (int i = 0; i < n; i++)
			q[c * st + i] = im->diag[i] * p[c * st + i];
	springs_multiply(im, p, q);
}

/* out = filter(in - sub), scratch = P out; returns outᵀ P out.  out may be in or sub. */
static double filtered_residual(const sim_implicit *im, int n, const float *in, const float *sub, float *out,
                                float *scratch)
{
	const int st = im->stride;
	for (int c = 0; c < 3; c++)
		for (int i = 0; i < n; i++)
			out[c * st + i] = im->mask[i] * (in[c * st + i] - sub[c * st + i]);
	precondition(im->pre, out, scratch, n, st);
	return dot3(out, scratch, n, st);
}

/* ---- the step ------------------------------------------------------------------------------- */

void sim_implicit_forget(sim_implicit *im)
{
	if (im)
		im->guess_count = 0;
}

sim_result sim_implicit_step(sim_world *w, float h, sim_stats *stats)
{
	sim_implicit *im = w->implicit;
	const int n = w->n;
	if (n == 0) {
		if (stats) {
			stats->cg_iterations = 0;
			stats->cg_residual = 0.0f;
		}
		return SIM_OK;
	}
	if (!im || !implicit_reserve(im, w)) {
		/* Without scratch there is nothing sound to do: the world rolls the step back. */
		if (stats) {
			stats->cg_iterations = 0;
			stats->cg_residual = INFINITY;
		}
		return SIM_ERROR_OUT_OF_MEMORY;
	}
	const int st = im->stride;

	sim_forces_timed(w, w->x, w->v, w->f);
	implicit_assemble(im, w, h);

	float *dv = im->dv, *r = im->r, *s = im->s, *c = im->c, *q = im->q;
	const float *mask = im->mask;

	/* The paper's start: dv = z, the constraint's velocity change on kinematic vertices
	 * and 0 on free ones.  The previous solution, scaled to this h, goes to c as a
	 * candidate guess. */
	const bool warm = im->guess_count > 0 && im->guess_h > 0.0f &&
	                  (w->steps == im->guess_step || w->steps == im->guess_step + 1);
	const int guess_count = warm ? (im->guess_count < n ? im->guess_count : n) : 0;
	const float guess_scale = warm ? h / im->guess_h : 0.0f;
	bool moving_constraint = false, have_guess = false;
	for (int p = 0; p < 3; p++) {
		for (int i = 0; i < n; i++) {
			const int k = p * st + i;
			if (mask[i] != 0.0f) {
				c[k] = i < guess_count ? guess_scale * dv[k] : 0.0f;
				dv[k] = 0.0f;
				have_guess |= c[k] != 0.0f;
			} else {
				c[k] = 0.0f;
				dv[k] = w->vc[i][p] - w->v[i][p];
				moving_constraint |= dv[k] != 0.0f;
			}
		}
	}

	/* r = filter(b - A z).  The world has already set v = vc on constrained vertices, so
	 * z is usually 0 and so is the product. */
	if (moving_constraint)
		full_multiply(im, n, dv, q);
	else
		for (int p = 0; p < 3; p++)
			memset(q + p * st, 0, sizeof(float) * (size_t)n);
	/* The tolerance is relative to this residual rather than to b as in the paper: a
	 * cloth at rest with a moving pin has b = 0 but still has to follow the pin. */
	const double delta_ref = filtered_residual(im, n, r, q, r, s);
	double delta = delta_ref;

	if (have_guess && delta_ref > 0.0) {
		/* The guess g is kept only if filter(b - A (z + g)) is the smaller residual. */
		full_multiply(im, n, c, q);
		const double delta_guess = filtered_residual(im, n, r, q, q, s);
		if (delta_guess < delta_ref) {
			im->q = r;
			im->r = r = q;
			q = im->q;
			for (int p = 0; p < 3; p++)
				for (int i = 0; i < n; i++)
					dv[p * st + i] += c[p * st + i];
			delta = delta_guess;
		} else {
			precondition(im->pre, r, s, n, st);
		}
	}

	const double tol = (double)w->def.cg_tolerance;
	const double target = tol * tol * delta_ref;
	const int max_iterations = w->def.cg_max_iterations > 0 ? w->def.cg_max_iterations : 0;
	int iterations = 0;
	if (iterations < max_iterations && delta > target) {
		for (int p = 0; p < 3; p++) {
			for (int i = 0; i < n; i++) {
				c[p * st + i] = s[p * st + i];
				q[p * st + i] = im->diag[i] * s[p * st + i];
			}
		}
		for (;;) {
			springs_multiply(im, c, q);
			/* c is zero at kinematic vertices, so cᵀ A c = cᵀ filter(A c). */
			const double quad = dot3(c, q, n, st);
			/* cᵀ A c <= 0: A is not positive definite in floating point, or a NaN came
			 * in.  Stopping keeps the iterate; the world's blow-up check handles NaNs. */
			if (!(quad > 0.0))
				break;
			cg_update(dv, r, s, c, q, mask, im->pre, (float)(delta / quad), n, st);
			const double delta_new = dot3(r, s, n, st);
			const float beta = (float)(delta_new / delta);
			delta = delta_new;
			iterations++;
			if (iterations >= max_iterations || !(delta > target))
				break;
			/* s is zero at kinematic vertices (zero preconditioner), so c stays filtered. */
			cg_direction(c, q, s, im->diag, beta, n, st);
		}
	}

	bool finite = isfinite(delta);
	for (int i = 0; i < n; i++) {
		float *xi = w->x[i];
		float *vi = w->v[i];
		for (int p = 0; p < 3; p++) {
			/* Kinematic vertices get exactly the constraint velocity, not v + (vc - v)
			 * rounded. */
			vi[p] = mask[i] != 0.0f ? vi[p] + dv[p * st + i] : w->vc[i][p];
			xi[p] += h * vi[p];
			finite = finite && isfinite(dv[p * st + i]);
		}
	}
	/* A failed solve must not seed the next one, or a rolled-back step would fail the
	 * same way forever. */
	im->guess_count = finite ? n : 0;
	im->guess_h = h;
	im->guess_step = w->steps;

	if (stats) {
		stats->cg_iterations = iterations;
		stats->cg_residual = delta_ref > 0.0 ? (float)sqrt(delta / delta_ref) : 0.0f;
	}
	return SIM_OK;
}
