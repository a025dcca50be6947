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
 *     and never changes what "converged" means.  It pays while a cloth falls freely (2
 *     to 4 iterations a step on the 129 x 129 drape before it reaches the ball).  Once
 *     the cloth lies on something, the collision impulses between steps make the
 *     previous dv a poor guess (its residual is 0.5 to 1.6 times the reference): neither
 *     it, nor its A-optimal multiple, nor it minus the last collision response brought
 *     the 60 to 170 iterations of such a step down (measured on that drape).
 *
 * The iteration is written in Chronopoulos and Gear's form, which needs one reduction
 * per iteration instead of two (see sim_implicit_step).
 *
 * The multilevel preconditioner.  Block Jacobi sees one vertex at a time, so CG needs
 * about as many iterations as the stiffness takes to spread across the cloth: on the
 * 129 x 129 drape on its ball (h = 1/90 s, 100 N/m, h^2 k / m in the thousands) 60 to 170
 * a step.  Grid objects of ML_MIN_VERTICES or more therefore also get one symmetric
 * V-cycle per iteration (solve_multilevel, multilevel.c): damped block Jacobi on the cloth
 * (omega = FINE_OMEGA, before and after), a coarse correction whose first level
 * aggregates 2 x 2 vertices (P piecewise constant, kinematic vertices filtered out of it,
 * so the whole map is S M S and stays in the filtered space) and whose levels below
 * interpolate bilinearly, all with Galerkin operators Pᵀ A P, the coarsest level (at
 * most 36 vertices) solved exactly.  Each piece is symmetric and the smoothers are the
 * same before and after, so the preconditioner is symmetric positive definite and plain
 * PCG applies.  An iteration costs three products instead of one plus the coarse levels
 * (about 3.5 times a block Jacobi iteration on the drape); it cuts the drape's iterations
 * on the ball from 63-170 to 13-24 a step with aggregation on every level (85.9 to 15.3
 * a frame on average), and its solve from 10.9-11.0 to 6.9 ms a frame on one core
 * (docs/benchmarks.md, "A multilevel preconditioner"); interpolation below level 1 took
 * the frames on the ball from 19.2 to 15.1 iterations ("Bilinear coarse levels").
 * The first level aggregates because the cloth's bend springs reach two vertices:
 * interpolated, level 1 would couple each vertex to 24 (aggregated, to 8, the form every
 * level has).  A W-cycle (13.9 iterations instead of 15.6, solve 9.8 ms), a scaled
 * coarse correction (1.5: 15.7 to 20.8 iterations) and a smoother weight of 0.75 (15.8)
 * did not pay (with aggregation on every level).
 *
 * Where the cloth is soft or the step short, block Jacobi converges in a few iterations
 * and the cycle's setup and its three products would double the solve (4 iterations a
 * step on the 2 N/m cloths of `tela bench integrators`: 0.27 against 0.61 ms at 64 x 64).
 * So by default (ML_AUTO) a solve starts on block Jacobi and, if it has not converged
 * after ML_ENTER_ITERATIONS iterations, restarts PCG from that iterate with the
 * multilevel preconditioner (the drape's first step on the ball: 20 + 7 iterations
 * instead of 88); the next step then starts with it, and goes back to block Jacobi after
 * a step that needed at most ML_LEAVE_ITERATIONS multilevel ones.  The choice follows
 * the iteration counts, so it is the same for any number of workers.  The convergence test
 * is the same in both: rᵀ P r relative to the paper's starting point, P the block Jacobi
 * inverse, so "converged" means the same whichever preconditioner ran (the multilevel
 * path computes rᵀ P r alongside its own rᵀ M r).
 *
 * Layout: every vector of the solve is three planes (x, y, z) of floats.  The blocks of
 * a grid object are stored per spring family, in the grid's vertex order (the families
 * forces.c walks), so each product is a few long loops over contiguous planes that the
 * compiler vectorises; springs of other objects go through a plain list.  Dot products
 * accumulate in double, in eight fixed partial sums per block of VERTEX_BLOCK vertices,
 * and the blocks' sums are added in block order, so every build of the kernels
 * (SIM_VECTOR_CLONES) gives the same bits.
 *
 * Parallel work (docs/collisions.md): the assembly (a vertex pass, a pass over the grid
 * springs, a vertex pass that gathers each vertex's blocks and terms of b) and every
 * iteration run through sim_parallel_for over fixed blocks, and each vertex's sums are
 * taken in one fixed order whichever block, chunk or worker computes them, so the
 * result is the same for any number of workers; an iteration is one parallel loop (two
 * with listed springs, whose product is serial).  Below PARALLEL_MIN_VERTICES it all
 * runs inline, and an inline iteration is two plain loops with the same bits.  The
 * multilevel path's loops over the cloth are parallel loops of the same kind, five per
 * iteration besides the cycle's: the direction, the product with pᵀ q, the update with
 * the first smoothing sweep, and the second product fused with the last sweep; the first
 * product is computed inside the cycle's first loop, on the hierarchies' vertices only.
 * Level 1 of a large hierarchy (its assembly, four loops of its cycle and the
 * prolongation onto the cloth) runs in blocks of rows (multilevel.c); levels 2 and below
 * run on the calling thread (a sixteenth of the cloth's vertices and less).
 */
#include "multilevel.h"
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
 * planes once per CG iteration and they are most of its memory traffic.  Three more
 * planes per grid spring (G_*) hold its share of the right-hand side from the spring
 * pass of the assembly until the vertex pass gathers it. */
enum { W_X, W_Y, W_Z, W_BETA, W_COUNT };
enum { G_X = W_COUNT, G_Y, G_Z, SLOT_PLANES };

/* All springs of one family of a grid object as one run: a + i -> a + i + offset for
 * i < count, blocks at slot + i of the block planes.  A family's springs of consecutive
 * rows are adjacent in this numbering except where a row wraps: the few a + i whose
 * partner would lie in another column range (the last vertex of a row for a
 * horizontal family, say) are placeholders with a zero block, which the product
 * passes through at no cost, so every product is a few long vectorised loops per cloth
 * instead of a few per grid row.  Spring i is real when column (i + i0) mod nx lies in
 * [i0, i1). */
typedef struct implicit_run {
	int a, offset, count, slot;
	int nx, i0, i1;
	float k, kd, rest;
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
 * a page (of the 41 now, those 32 apart share offsets: still faster on the 129 x 129
 * drape than 64 bytes per plane, 11.4 against 12.0 ms of solve a frame). */
#define PLANE_PAD 32

/* Parallel work (docs/collisions.md, "Parallel work").  Every loop of the solve runs
 * over fixed blocks of VERTEX_BLOCK vertices (or SLOT_BLOCK grid springs), whatever the
 * number of workers: a vertex's sums are taken in one fixed order (its own term, then
 * each run's a-side and b-side in run order) by whichever block owns it, and the dot
 * products add one double per block, in block order.  So any split of the blocks over
 * workers gives the same bits.  The block is small enough that a block's vectors and its
 * springs stay in the first two cache levels while the product walks them. */
#define VERTEX_BLOCK 1024
/* An iteration walks the blocks of a range in chunks of up to this many (a vertex's
 * result does not depend on the chunk either).  A chunk recomputes the u of up to two
 * grid rows either side and the springs reaching into it; with one range per worker and
 * chunks this long, a 129 x 129 cloth is one chunk per worker and the halo work is a
 * few percent.  The per-worker scratch (about 0.8 MB) follows from it. */
#define CHUNK_BLOCKS 32
#define SLOT_BLOCK 4096
/* Below this many vertices every loop runs inline: a CG iteration of a 33 x 33 cloth
 * costs a few microseconds, about what waking a pool thread does. */
#define PARALLEL_MIN_VERTICES 4096
/* Grid objects at least this large get the multilevel preconditioner; smaller ones keep
 * block Jacobi (see the header comment).  About where it breaks even on a stiff cloth:
 * 32 x 32 at 500 N/m and 1/240 s took 0.29 ms of solve a step with it (7.8 iterations)
 * and 0.30 ms with block Jacobi (40.4). */
#define ML_MIN_VERTICES 1024
/* The weight of the damped block Jacobi smoother on the cloth itself. */
#define FINE_OMEGA 0.6f

/* Vertex planes, in order, within one allocation. */
enum {
	P_X = 0,       /* x of the step, three planes */
	P_V = 3,       /* v of the step, three planes */
	P_DIAG = 6,    /* scalar part of A's diagonal: mass, air and anchor terms */
	P_MASK = 7,    /* the filter S_i: 1 free, 0 kinematic */
	P_PRE = 8,     /* six planes: A's diagonal blocks, then their inverses (0 if kinematic) */
	P_DV = 14,     /* the unknown; between steps, the last solution (warm start) */
	P_R = 17,      /* filtered residual b - A dv (r and q may trade places) */
	P_S = 20,      /* preconditioned residual u = P r */
	P_C = 23,      /* search direction p, zero at kinematic vertices */
	P_Q = 26,      /* w = A u (unfiltered) */
	P_AP = 29,     /* filter(A p), by recurrence */
	P_R2 = 32,     /* the next r, filter(A p) and w: an iteration reads the current ones */
	P_AP2 = 35,    /* around its block while other blocks write the next ones */
	P_W2 = 38,
	P_COUNT = 41
};

struct sim_implicit {
	int capacity;      /* vertices */
	int stride;        /* floats from one vertex plane to the next */
	int slot_capacity; /* grid springs */
	int slot_stride;   /* floats from one block plane to the next */
	int run_capacity, block_capacity;

	float *planes;     /* P_COUNT vertex planes */
	float *diag, *mask, *pre, *dv, *r, *s, *c, *q, *ap, *r2, *ap2, *w2; /* into planes */
	float *slots;      /* SLOT_PLANES planes of grid spring blocks */
	implicit_run *runs;
	implicit_block *blocks;
	int run_count, block_count;

	/* Per-block results of a parallel loop, combined in block order. */
	double *partial, *partial2;
	unsigned char *flags;
	int block_capacity_v;

	/* Per-worker scratch of an iteration: a chunk's next u with `halo` vertices either side
	 * (3 planes of local_stride), its springs' products (3 planes of t_stride) and the
	 * halo's next r and filter(A p), which only serve to compute u there (6 planes of
	 * junk_stride). */
	float *scratch;
	int scratch_workers, halo, local_stride, t_stride, junk_stride;
	size_t scratch_floats;

	/* The multilevel preconditioner (multilevel.c): one hierarchy per grid object
	 * (NULL for other objects), used when ml_on. */
	bool ml_ready; /* some grid object has a hierarchy */
	bool ml_on;    /* this step's solve uses it */
	int ml_mode;   /* ml_mode (multilevel.h) */
	bool ml_next; /* ML_AUTO: whether the next step uses it (see ML_ENTER_ITERATIONS) */
	ml_grid **grids;
	int grid_capacity;

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
	free(im->partial);
	free(im->partial2);
	free(im->flags);
	free(im->scratch);
	for (int k = 0; k < im->grid_capacity; k++)
		ml_destroy(im->grids[k]);
	free(im->grids);
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
	int runs = 0, slots = 0, listed = 0, halo = 0;
	for (int k = 0; k < w->object_count; k++) {
		const sim_object *o = &w->objects[k];
		if (!o->grid_nx) {
			listed += o->spring_count;
			continue;
		}
		for (int f = 0; f < SIM_GRID_FAMILIES; f++) {
			const sim_grid_family *fam = &o->families[f];
			int a, i0, i1, count = family_span(o, fam, &a, &i0, &i1);
			if (count <= 0)
				continue;
			runs++;
			slots += count;
			const int offset = fam->dj * o->grid_nx + fam->di;
			halo = offset > halo ? offset : halo;
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
		im->ap = b + P_AP * stride;
		im->r2 = b + P_R2 * stride;
		im->ap2 = b + P_AP2 * stride;
		im->w2 = b + P_W2 * stride;
	}
	const int vblocks = (w->n + VERTEX_BLOCK - 1) / VERTEX_BLOCK;
	if (vblocks > im->block_capacity_v) {
		int cap = grown(im->block_capacity_v, vblocks, 16);
		if (!regrow((void **)&im->partial, sizeof(double) * (size_t)cap) ||
		    !regrow((void **)&im->partial2, sizeof(double) * (size_t)cap) ||
		    !regrow((void **)&im->flags, (size_t)cap))
			return false;
		im->block_capacity_v = cap;
	}
	if (slots > im->slot_capacity) {
		int cap = grown(im->slot_capacity, slots, 1024);
		int stride = cap + PLANE_PAD;
		if (!regrow((void **)&im->slots, sizeof(float) * SLOT_PLANES * (size_t)stride))
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
	/* The scratch follows the largest offset of any run: the product of a block reads the
	 * direction that far beyond it. */
	const int workers = w->def.worker_count > 1 ? w->def.worker_count : 1;
	const int chunk = CHUNK_BLOCKS * VERTEX_BLOCK;
	const int local_stride = chunk + 2 * halo + PLANE_PAD, t_stride = chunk + halo + PLANE_PAD;
	const int junk_stride = halo + PLANE_PAD;
	const size_t per_worker = 3 * (size_t)local_stride + 3 * (size_t)t_stride + 6 * (size_t)junk_stride;
	if (workers > im->scratch_workers || halo > im->halo) {
		if (!regrow((void **)&im->scratch, sizeof(float) * per_worker * (size_t)workers))
			return false;
		im->scratch_workers = workers;
		im->halo = halo;
		im->local_stride = local_stride;
		im->t_stride = t_stride;
		im->junk_stride = junk_stride;
		im->scratch_floats = per_worker;
	}
	return true;
}

/* Builds (or resizes) a hierarchy for each grid object of at least ML_MIN_VERTICES
 * vertices and says whether this step starts with them (im->ml_on: see ML_AUTO in the
 * header comment).  false when out of memory. */
static bool multilevel_reserve(sim_implicit *im, const sim_world *w)
{
	im->ml_on = im->ml_ready = false;
	if (im->ml_mode == ML_NEVER)
		return true;
	if (w->object_count > im->grid_capacity) {
		ml_grid **g = realloc(im->grids, sizeof(ml_grid *) * (size_t)w->object_count);
		if (!g)
			return false;
		for (int k = im->grid_capacity; k < w->object_count; k++)
			g[k] = NULL;
		im->grids = g;
		im->grid_capacity = w->object_count;
	}
	for (int k = 0; k < w->object_count; k++) {
		const sim_object *o = &w->objects[k];
		if (!o->grid_nx || o->grid_nx < 2 || o->grid_ny < 2 || o->vertex_count < ML_MIN_VERTICES)
			continue;
		if (!im->grids[k] && !(im->grids[k] = ml_create()))
			return false;
		if (!ml_reserve(im->grids[k], o->grid_nx, o->grid_ny))
			return false;
		im->ml_ready = true;
	}
	if (!im->ml_ready)
		return true;
	im->ml_on = im->ml_mode == ML_ALWAYS || im->ml_next;
	return true;
}

int ml_even_range(int count, int unit, int last, int workers)
{
	if (workers <= 1 || count <= 1)
		return count;
	/* the ranges in order, each to the least loaded worker (the pool hands them out as
	 * workers come free); among the lengths from count / workers down to a quarter of it,
	 * the one with the smallest largest load, the longest on a tie */
	long long best = -1;
	int best_range = count;
	const int top = (count + workers - 1) / workers, bottom = (count + 4 * workers - 1) / (4 * workers);
	for (int range = top; range >= bottom && range >= 1; range--) {
		long long load[SIM_MAX_WORKERS] = {0};
		const int w = workers < SIM_MAX_WORKERS ? workers : SIM_MAX_WORKERS;
		for (int start = 0; start < count; start += range) {
			const int end = start + range < count ? start + range : count;
			const long long work = (long long)(end - start - 1) * unit + (end == count ? last : unit);
			int least = 0;
			for (int k = 1; k < w; k++)
				least = load[k] < load[least] ? k : least;
			load[least] += work;
		}
		long long most = 0;
		for (int k = 0; k < w; k++)
			most = load[k] > most ? load[k] : most;
		if (best < 0 || most < best)
			best = most, best_range = range;
	}
	return best_range;
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

/* Spring i's term t = S (p_a - p_b), S = beta I + w w^T, for the run whose b-ends lie
 * `offset` beyond its a-ends: the one formula every product kernel below applies (inlined,
 * so each still vectorises as one loop). */
static inline void spring_term(const float *restrict wx, const float *restrict wy, const float *restrict wz,
                               const float *restrict wbeta, const float *restrict px, const float *restrict py,
                               const float *restrict pz, int i, int offset, float t[3])
{
	float ex = px[i] - px[i + offset], ey = py[i] - py[i + offset], ez = pz[i] - pz[i + offset];
	float we = wx[i] * ex + wy[i] * ey + wz[i] * ez;
	t[0] = wbeta[i] * ex + we * wx[i];
	t[1] = wbeta[i] * ey + we * wy[i];
	t[2] = wbeta[i] * ez + we * wz[i];
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
		float t[3];
		spring_term(wx, wy, wz, wbeta, px, py, pz, i, offset, t);
		tx[i] = t[0], ty[i] = t[1], tz[i] = t[2];
	}
}

SIM_VECTOR_CLONES
void sim_plane_add(float *restrict dst, const float *restrict src, int count)
{
	for (int i = 0; i < count; i++)
		dst[i] += src[i];
}

SIM_VECTOR_CLONES
void sim_plane_sub(float *restrict dst, const float *restrict src, int count)
{
	for (int i = 0; i < count; i++)
		dst[i] -= src[i];
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


/* q = d p, the scalar diagonal's part of a product. */
SIM_VECTOR_CLONES
static void scale(float *restrict q, const float *restrict d, const float *restrict p, int count)
{
	for (int i = 0; i < count; i++)
		q[i] = d[i] * p[i];
}

/* The three parts of a run whose b-ends lie at least a vector width beyond its a-ends,
 * within one block of vertices: springs with only the b-end in the block, with both, and
 * with only the a-end.  A vertex gets its b-side term before its a-side term in every
 * case (in the part with both, spring i's b-end term lands on vertex i + offset before
 * spring i + offset's a-end term does: the compiler vectorises with a run-time check that
 * the offset exceeds the vector width, which keeps the scalar order). */
SIM_VECTOR_CLONES
static void run_product_both(const float *restrict wx, const float *restrict wy, const float *restrict wz,
                             const float *restrict wbeta, const float *restrict px, const float *restrict py,
                             const float *restrict pz, float *restrict qx, float *restrict qy, float *restrict qz,
                             int offset, int count)
{
	for (int i = 0; i < count; i++) {
		float t[3];
		spring_term(wx, wy, wz, wbeta, px, py, pz, i, offset, t);
		qx[i] += t[0];
		qy[i] += t[1];
		qz[i] += t[2];
		qx[i + offset] -= t[0];
		qy[i + offset] -= t[1];
		qz[i + offset] -= t[2];
	}
}

/* q_a += S (p_a - p_b) when sign > 0 (q points at the a-ends), q_b -= S (p_a - p_b)
 * otherwise (q points at the b-ends). */
SIM_VECTOR_CLONES
static void run_product_side(const float *restrict wx, const float *restrict wy, const float *restrict wz,
                             const float *restrict wbeta, const float *restrict px, const float *restrict py,
                             const float *restrict pz, float *restrict qx, float *restrict qy, float *restrict qz,
                             int offset, int count, bool a_side)
{
	if (a_side) {
		for (int i = 0; i < count; i++) {
			float t[3];
			spring_term(wx, wy, wz, wbeta, px, py, pz, i, offset, t);
			qx[i] += t[0], qy[i] += t[1], qz[i] += t[2];
		}
	} else {
		for (int i = 0; i < count; i++) {
			float t[3];
			spring_term(wx, wy, wz, wbeta, px, py, pz, i, offset, t);
			qx[i] -= t[0], qy[i] -= t[1], qz[i] -= t[2];
		}
	}
}

/* One iteration's pointwise part (see sim_implicit_step): the next filter(A p) =
 * filter(w) + beta filter(A p) (filter(A p) is 0 before the first iteration), the next
 * r = r - alpha filter(A p) and the next u = P r, over `count` vertices; the inputs'
 * planes are `st` apart, the outputs' `os` and `us`.  A block's own vertices and its halo
 * go through this same loop, so a vertex's u is the same whichever block computes it. */
SIM_VECTOR_CLONES
static void cg_point(const float *restrict w, const float *restrict ap, const float *restrict r,
                     const float *restrict mask, const float *restrict pre, int st, float alpha, float beta,
                     float *restrict ap_out, float *restrict r_out, int os, float *restrict u_out, int us, int count)
{
	for (int i = 0; i < count; i++) {
		float rn[3];
		for (int c = 0; c < 3; c++) {
			float a = mask[i] * w[c * st + i] + beta * ap[c * st + i];
			ap_out[c * os + i] = a;
			rn[c] = r[c * st + i] - alpha * a;
			r_out[c * os + i] = rn[c];
		}
		u_out[i] = pre[S_XX * st + i] * rn[0] + pre[S_XY * st + i] * rn[1] + pre[S_XZ * st + i] * rn[2];
		u_out[us + i] = pre[S_XY * st + i] * rn[0] + pre[S_YY * st + i] * rn[1] + pre[S_YZ * st + i] * rn[2];
		u_out[2 * us + i] = pre[S_XZ * st + i] * rn[0] + pre[S_YZ * st + i] * rn[1] + pre[S_ZZ * st + i] * rn[2];
	}
}

/* p = u + beta p (first: p = u) and dv += alpha p, one plane. */
SIM_VECTOR_CLONES
static void cg_step(float *restrict p, float *restrict dv, const float *restrict u, float alpha, float beta,
                    bool first, int count)
{
	for (int i = 0; i < count; i++) {
		float pi = first ? u[i] : u[i] + beta * p[i];
		p[i] = pi;
		dv[i] += alpha * pi;
	}
}

/* q += ta, q -= tb, and q = q + ta - tb where a vertex is both an a-end and a b-end of
 * one run: three planes per call, q read and written once. */
SIM_VECTOR_CLONES
static void side_add3(float *restrict qx, float *restrict qy, float *restrict qz, const float *restrict tx,
                      const float *restrict ty, const float *restrict tz, int count)
{
	for (int i = 0; i < count; i++) {
		qx[i] += tx[i];
		qy[i] += ty[i];
		qz[i] += tz[i];
	}
}

SIM_VECTOR_CLONES
static void side_sub3(float *restrict qx, float *restrict qy, float *restrict qz, const float *restrict tx,
                      const float *restrict ty, const float *restrict tz, int count)
{
	for (int i = 0; i < count; i++) {
		qx[i] -= tx[i];
		qy[i] -= ty[i];
		qz[i] -= tz[i];
	}
}

SIM_VECTOR_CLONES
static void side_both3(float *restrict qx, float *restrict qy, float *restrict qz, const float *ax,
                       const float *ay, const float *az, const float *bx, const float *by, const float *bz,
                       int count)
{
	for (int i = 0; i < count; i++) {
		qx[i] = (qx[i] + ax[i]) - bx[i];
		qy[i] = (qy[i] + ay[i]) - by[i];
		qz[i] = (qz[i] + az[i]) - bz[i];
	}
}

/* The multilevel path's pointwise kernels (see job_multilevel), one plane each except
 * where blocks couple the planes. */
SIM_VECTOR_CLONES
static void ml_update(float *restrict dv, float *restrict r, const float *restrict p, const float *restrict q,
                      const float *restrict mask, float alpha, int count)
{
	for (int i = 0; i < count; i++) {
		dv[i] += alpha * p[i];
		r[i] -= alpha * (mask[i] * q[i]);
	}
}

SIM_VECTOR_CLONES
static void ml_direction(float *restrict p, const float *restrict z, float beta, int count)
{
	for (int i = 0; i < count; i++)
		p[i] = z[i] + beta * p[i];
}

SIM_VECTOR_CLONES
static void ml_scale(float *restrict z, float omega, int count)
{
	for (int i = 0; i < count; i++)
		z[i] *= omega;
}

/* z += omega P (r - q), P the block Jacobi inverse (six planes), over three planes. */
SIM_VECTOR_CLONES
static void ml_smooth(const float *restrict pre, const float *restrict r, const float *restrict q,
                      float *restrict z, float omega, int n, int st)
{
	for (int i = 0; i < n; i++) {
		float e0 = r[i] - q[i], e1 = r[st + i] - q[st + i], e2 = r[2 * st + i] - q[2 * st + i];
		float y0 = pre[S_XX * st + i] * e0 + pre[S_XY * st + i] * e1 + pre[S_XZ * st + i] * e2;
		float y1 = pre[S_XY * st + i] * e0 + pre[S_YY * st + i] * e1 + pre[S_YZ * st + i] * e2;
		float y2 = pre[S_XZ * st + i] * e0 + pre[S_YZ * st + i] * e1 + pre[S_ZZ * st + i] * e2;
		z[i] += omega * y0;
		z[st + i] += omega * y1;
		z[2 * st + i] += omega * y2;
	}
}

/* out = z + omega P (r - q): ml_smooth's arithmetic into another three planes. */
SIM_VECTOR_CLONES
static void ml_smooth_to(const float *restrict pre, const float *restrict r, const float *restrict q,
                         const float *restrict z, float *restrict out, float omega, int n, int st)
{
	for (int i = 0; i < n; i++) {
		float e0 = r[i] - q[i], e1 = r[st + i] - q[st + i], e2 = r[2 * st + i] - q[2 * st + i];
		float y0 = pre[S_XX * st + i] * e0 + pre[S_XY * st + i] * e1 + pre[S_XZ * st + i] * e2;
		float y1 = pre[S_XY * st + i] * e0 + pre[S_YY * st + i] * e1 + pre[S_YZ * st + i] * e2;
		float y2 = pre[S_XZ * st + i] * e0 + pre[S_YZ * st + i] * e1 + pre[S_ZZ * st + i] * e2;
		out[i] = z[i] + omega * y0;
		out[st + i] = z[st + i] + omega * y1;
		out[2 * st + i] = z[2 * st + i] + omega * y2;
	}
}

/* ---- parallel loops ------------------------------------------------------------------------- */

typedef enum phase {
	PH_SETUP,      /* vertex blocks: planes of x, v, f; d, mask; b's vertex terms */
	PH_SPRINGS,    /* slot blocks: grid spring blocks and their terms of b */
	PH_GATHER,     /* vertex blocks: diagonal blocks and b from the runs; inverses unless deferred */
	PH_INVERT,     /* vertex blocks: inverses (after the listed springs) */
	PH_START,      /* vertex blocks: the paper's start z, the guess into c; flags */
	PH_PRODUCT,    /* vertex blocks: q = A p over the grid runs */
	PH_DOT,        /* vertex blocks: pᵀ q */
	PH_RESIDUAL,   /* vertex blocks: out = filter(in - sub), scratch = P out; outᵀ scratch */
	PH_PRECOND,    /* vertex blocks: s = P r */
	PH_ADD,        /* vertex blocks: dv += c */
	PH_CG,         /* vertex blocks: one iteration (see sim_implicit_step); rᵀ u, uᵀ w */
	PH_CG_POINT,   /* vertex blocks: PH_CG's pointwise part alone; rᵀ u */
	PH_CG_PRODUCT, /* vertex blocks: PH_CG's w = A u alone; uᵀ w */
	PH_FINISH,     /* vertex blocks: v and x of the step; flags non-finite */
	/* The multilevel path (solve_multilevel): */
	PH_PRODUCT_DOT, /* vertex blocks: q = A p over the grid runs and pᵀ q */
	PH_ML_DIR,     /* vertex blocks: p = z + beta p (first: p = z) */
	PH_ML_UPDATE,  /* vertex blocks: dv += alpha p, r -= alpha filter(q); rᵀ P r; z = omega P r */
	PH_ML_PRE,     /* vertex blocks: z = omega P r */
	PH_ML_POST,    /* vertex blocks: z += omega P (r - q); rᵀ z */
	PH_PRODUCT_POST /* vertex blocks: q = A z over the grid runs, then w2 = z + omega P (r - q); rᵀ w2 */
} phase;

typedef struct solve_job {
	sim_implicit *im;
	sim_world *w;
	phase phase;
	int n;
	float h;
	/* PH_PRODUCT: q = A p.  PH_CG: alpha, beta, first (see sim_implicit_step). */
	bool first;
	float beta, alpha;
	const float *p, *in, *sub;
	float *out, *aux;
	/* PH_START */
	int guess_count;
	float guess_scale;
	/* PH_SPRINGS: the grid springs' count */
	int slots;
} solve_job;

static void job_setup(const solve_job *j, int lo, int hi)
{
	sim_implicit *im = j->im;
	const sim_world *w = j->w;
	const int st = im->stride, m = hi - lo;
	const float h = j->h, h2 = h * h, air = w->def.air_damping;
	float *px = im->planes + P_X * st, *pv = im->planes + P_V * st, *r = im->r;
	sim_to_planes(w->x + lo, px + lo, px + st + lo, px + 2 * st + lo, m);
	sim_to_planes(w->v + lo, pv + lo, pv + st + lo, pv + 2 * st + lo, m);
	sim_to_planes(w->f + lo, r + lo, r + st + lo, r + 2 * st + lo, m);
	for (int i = lo; i < hi; i++) {
		/* Air damping -c m v and the anchor -k (x - rest) - kd v are isotropic: they
		 * only add to the scalar diagonal, and the anchor's dF/dx v0 = -k v0 to b. */
		float ka = w->rest[i][3];
		im->diag[i] = w->mass[i] * (1.0f + h * air) + h * w->anchor_kd[i] + h2 * ka;
		im->mask[i] = w->x[i][3] != 0.0f ? 1.0f : 0.0f;
		for (int p = 0; p < 3; p++)
			r[p * st + i] = h * r[p * st + i] - h2 * ka * pv[p * st + i];
	}
}

/* Grid springs [s0, s1) of the slot numbering: blocks and terms of b, placeholders
 * zeroed. */
static void job_springs(const solve_job *j, int s0, int s1)
{
	sim_implicit *im = j->im;
	const int st = im->stride, ss = im->slot_stride;
	const float *px = im->planes + P_X * st, *pv = im->planes + P_V * st;
	for (int k = 0; k < im->run_count; k++) {
		const implicit_run *run = &im->runs[k];
		const int m0 = (s0 > run->slot ? s0 : run->slot) - run->slot;
		const int m1 = (s1 < run->slot + run->count ? s1 : run->slot + run->count) - run->slot;
		if (m0 >= m1)
			continue;
		const int a = run->a + m0;
		float *wb = im->slots + run->slot + m0;
		run_assemble(px + a, px + st + a, px + 2 * st + a, pv + a, pv + st + a, pv + 2 * st + a, run->offset,
		             m1 - m0, j->h, run->k, run->kd, run->rest, wb + W_X * ss, wb + W_Y * ss, wb + W_Z * ss,
		             wb + W_BETA * ss, wb + G_X * ss, wb + G_Y * ss, wb + G_Z * ss);
		int col = (m0 + run->i0) % run->nx;
		for (int m = m0; m < m1; m++) {
			if (col < run->i0 || col >= run->i1)
				for (int p = 0; p < SLOT_PLANES; p++)
					im->slots[p * ss + run->slot + m] = 0.0f;
			if (++col == run->nx)
				col = 0;
		}
	}
}

/* Of the vertices [lo, hi): the run's a-ends, [*a0, *a1), and its b-ends, [*b0, *b1)
 * (either may be empty). */
static void run_sides(const implicit_run *run, int lo, int hi, int *a0, int *a1, int *b0, int *b1)
{
	*a0 = lo > run->a ? lo : run->a;
	*a1 = hi < run->a + run->count ? hi : run->a + run->count;
	const int b = run->a + run->offset;
	*b0 = lo > b ? lo : b;
	*b1 = hi < b + run->count ? hi : b + run->count;
}

/* Each vertex of [lo, hi): its diagonal block d I plus the blocks of its springs, and b
 * plus or minus their terms, run after run, a-ends before b-ends (the order the serial
 * scatter had); then the inverse, unless listed springs still have to be added. */
static void job_gather(const solve_job *j, int lo, int hi, bool invert)
{
	sim_implicit *im = j->im;
	const int st = im->stride, ss = im->slot_stride;
	float *pre = im->pre, *r = im->r;
	for (int p = 0; p < S_COUNT; p++) {
		const bool diagonal = p == S_XX || p == S_YY || p == S_ZZ;
		for (int i = lo; i < hi; i++)
			pre[p * st + i] = diagonal ? im->diag[i] : 0.0f;
	}
	for (int k = 0; k < im->run_count; k++) {
		const implicit_run *run = &im->runs[k];
		int a0, a1, b0, b1;
		run_sides(run, lo, hi, &a0, &a1, &b0, &b1);
		for (int side = 0; side < 2; side++) {
			const int v0 = side ? b0 : a0, v1 = side ? b1 : a1;
			if (v0 >= v1)
				continue;
			const float *wb = im->slots + run->slot + (v0 - run->a - (side ? run->offset : 0));
			float *d = pre + v0;
			run_add_blocks(d, d + st, d + 2 * st, d + 3 * st, d + 4 * st, d + 5 * st, wb + W_X * ss,
			               wb + W_Y * ss, wb + W_Z * ss, wb + W_BETA * ss, v1 - v0);
			for (int p = 0; p < 3; p++) {
				if (side)
					sim_plane_sub(r + p * st + v0, wb + (G_X + p) * ss, v1 - v0);
				else
					sim_plane_add(r + p * st + v0, wb + (G_X + p) * ss, v1 - v0);
			}
		}
	}
	if (invert)
		invert_blocks(pre + lo, im->mask + lo, hi - lo, st);
}

/* q = A p over [lo, hi) for the grid runs (the listed springs are added afterwards),
 * reading p over [lo - halo, hi + halo) (p[i] at p + (i - base), planes ps apart); with
 * `partial`, pᵀ q per block.  Every spring with an end in [lo, hi) is computed here, so
 * the springs reaching across the range's ends are computed by both ranges they touch,
 * the same way.  A vertex's sum is d p, then run after run: for a run a grid row or more
 * long its b-side term then its a-side term (three fused loops: springs with only the
 * b-end in the range, both ends, only the a-end), for a run within rows its a-side then
 * its b-side term (t = S (p_a - p_b) into the scratch, then gathered).  Either way the
 * order does not depend on lo and hi. */
static void job_product(const solve_job *j, int lo, int hi, int worker, const float *p, int base, int ps, float *q,
                        double *partial)
{
	sim_implicit *im = j->im;
	const int st = im->stride, ss = im->slot_stride;
	float *t = im->scratch + (size_t)worker * im->scratch_floats + 3 * (size_t)im->local_stride;
	const int ts = im->t_stride;
	for (int c = 0; c < 3; c++)
		scale(q + c * st + lo, im->diag + lo, p + c * ps + (lo - base), hi - lo);
	for (int k = 0; k < im->run_count; k++) {
		const implicit_run *run = &im->runs[k];
		int a0, a1, b0, b1;
		run_sides(run, lo, hi, &a0, &a1, &b0, &b1);
		/* springs m0 .. m1 - 1 of the run have an end in the block */
		const int m0 = b0 < b1 ? b0 - run->a - run->offset : a0 - run->a;
		const int m1 = a0 < a1 ? a1 - run->a : b1 - run->a - run->offset;
		if (m0 >= m1)
			continue;
		if (run->offset >= 16) {
			/* springs with only the b-end, both ends, only the a-end in the block */
			const int a = run->a, off = run->offset;
			const int ma0 = a0 < a1 ? a0 - a : m1, mb1 = b0 < b1 ? b1 - a - off : m0;
			const int seg[3][3] = {{m0, mb1 < ma0 ? mb1 : ma0, 0}, {ma0 > m0 ? ma0 : m0, mb1, 1},
			                       {mb1 > ma0 ? mb1 : ma0, m1, 2}};
			for (int g = 0; g < 3; g++) {
				const int g0 = seg[g][0], g1 = seg[g][1];
				if (g0 >= g1)
					continue;
				const float *wb = im->slots + run->slot + g0;
				const float *pa = p + (a + g0 - base);
				float *qa = q + a + g0 + (g == 0 ? off : 0);
				if (g == 1)
					run_product_both(wb + W_X * ss, wb + W_Y * ss, wb + W_Z * ss, wb + W_BETA * ss, pa, pa + ps,
					                 pa + 2 * ps, qa, qa + st, qa + 2 * st, off, g1 - g0);
				else
					run_product_side(wb + W_X * ss, wb + W_Y * ss, wb + W_Z * ss, wb + W_BETA * ss, pa, pa + ps,
					                 pa + 2 * ps, qa, qa + st, qa + 2 * st, off, g1 - g0, g == 2);
			}
			continue;
		}
		const float *wb = im->slots + run->slot + m0;
		const float *pa = p + (run->a + m0 - base);
		run_product_row(wb + W_X * ss, wb + W_Y * ss, wb + W_Z * ss, wb + W_BETA * ss, pa, pa + ps, pa + 2 * ps, t,
		                t + ts, t + 2 * ts, run->offset, m1 - m0);
		/* t of the spring whose a-end (b-end) is vertex i */
		const int ta = run->a + m0, tb = run->a + run->offset + m0;
		int i0 = a0 > b0 ? a0 : b0, i1 = a1 < b1 ? a1 : b1;
		if (i0 >= i1)
			i0 = i1 = a1 > b1 ? a1 : b1; /* no vertex is both: the pieces below are the sides */
		int piece[4][3] = {{a0, a1 < i0 ? a1 : i0, ta}, {i1 > a0 ? i1 : a0, a1, ta}, {b0, b1 < i0 ? b1 : i0, tb},
		                   {i1 > b0 ? i1 : b0, b1, tb}};
		for (int k2 = 0; k2 < 4; k2++) {
			const int v0 = piece[k2][0], v1 = piece[k2][1], o = v0 - piece[k2][2];
			if (v0 >= v1)
				continue;
			if (k2 < 2)
				side_add3(q + v0, q + st + v0, q + 2 * st + v0, t + o, t + ts + o, t + 2 * ts + o, v1 - v0);
			else
				side_sub3(q + v0, q + st + v0, q + 2 * st + v0, t + o, t + ts + o, t + 2 * ts + o, v1 - v0);
		}
		if (i0 < i1)
			side_both3(q + i0, q + st + i0, q + 2 * st + i0, t + (i0 - ta), t + ts + (i0 - ta),
			           t + 2 * ts + (i0 - ta), t + (i0 - tb), t + ts + (i0 - tb), t + 2 * ts + (i0 - tb), i1 - i0);
	}
	if (!partial)
		return;
	/* pᵀ q per block of the chunk */
	for (int b = lo / VERTEX_BLOCK; b * VERTEX_BLOCK < hi; b++) {
		const int b0 = b * VERTEX_BLOCK, m = (hi - b0 < VERTEX_BLOCK ? hi - b0 : VERTEX_BLOCK);
		const float *pl = p + (b0 - base);
		partial[b] = (dot(pl, q + b0, m) + dot(pl + ps, q + st + b0, m)) + dot(pl + 2 * ps, q + 2 * st + b0, m);
	}
}

/* One iteration over the vertices [lo, hi) (see sim_implicit_step): the pointwise part
 * over the chunk and its halo, p and dv over the chunk, then w = A u with u from the
 * scratch; per block rᵀ u into partial2 and, without listed springs, uᵀ w into partial. */
static void job_cg(const solve_job *j, int lo, int hi, int worker)
{
	sim_implicit *im = j->im;
	const int st = im->stride, n = j->n;
	const int L = lo - im->halo > 0 ? lo - im->halo : 0, R = hi + im->halo < n ? hi + im->halo : n;
	float *local = im->scratch + (size_t)worker * im->scratch_floats;
	float *junk = local + 3 * (size_t)im->local_stride + 3 * (size_t)im->t_stride;
	const int ls = im->local_stride, js = im->junk_stride;
	/* the halo's u, recomputed here rather than read after a second pass: one
	 * synchronisation per iteration */
	const int part[2][2] = {{L, lo}, {hi, R}};
	for (int k = 0; k < 2; k++) {
		const int v0 = part[k][0], v1 = part[k][1];
		if (v0 < v1)
			cg_point(im->q + v0, im->ap + v0, im->r + v0, im->mask + v0, im->pre + v0, st, j->alpha, j->beta, junk,
			         junk + 3 * js, js, local + (v0 - L), ls, v1 - v0);
	}
	for (int c = 0; c < 3; c++)
		cg_step(im->c + c * st + lo, im->dv + c * st + lo, im->s + c * st + lo, j->alpha, j->beta, j->first,
		        hi - lo);
	cg_point(im->q + lo, im->ap + lo, im->r + lo, im->mask + lo, im->pre + lo, st, j->alpha, j->beta, im->ap2 + lo,
	         im->r2 + lo, st, local + (lo - L), ls, hi - lo);
	for (int c = 0; c < 3; c++)
		memcpy(im->s + c * st + lo, local + c * ls + (lo - L), sizeof(float) * (size_t)(hi - lo));
	job_product(j, lo, hi, worker, local, L, ls, im->w2, im->block_count == 0 ? im->partial : NULL);
	for (int b = lo / VERTEX_BLOCK; b * VERTEX_BLOCK < hi; b++) {
		const int b0 = b * VERTEX_BLOCK, m = (hi - b0 < VERTEX_BLOCK ? hi - b0 : VERTEX_BLOCK);
		im->partial2[b] = dot3(im->r2 + b0, im->s + b0, m, st);
	}
}

/* job_cg in two loops, for a solve that runs inline (see sim_implicit_step): the same
 * arithmetic, without the halo, so the same bits. */
static void job_cg_point(const solve_job *j, int lo, int hi)
{
	sim_implicit *im = j->im;
	const int st = im->stride;
	for (int c = 0; c < 3; c++)
		cg_step(im->c + c * st + lo, im->dv + c * st + lo, im->s + c * st + lo, j->alpha, j->beta, j->first,
		        hi - lo);
	cg_point(im->q + lo, im->ap + lo, im->r + lo, im->mask + lo, im->pre + lo, st, j->alpha, j->beta, im->ap2 + lo,
	         im->r2 + lo, st, im->s + lo, st, hi - lo);
}

static void job_start(const solve_job *j, int lo, int hi, unsigned char *flags)
{
	sim_implicit *im = j->im;
	const sim_world *w = j->w;
	const int st = im->stride;
	float *dv = im->dv, *c = im->c;
	const float *mask = im->mask;
	bool have_guess = false, moving = false;
	for (int p = 0; p < 3; p++) {
		for (int i = lo; i < hi; i++) {
			const int k = p * st + i;
			if (mask[i] != 0.0f) {
				c[k] = i < j->guess_count ? j->guess_scale * dv[k] : 0.0f;
				dv[k] = 0.0f;
				have_guess |= c[k] != 0.0f;
			} else {
				c[k] = 0.0f;
				dv[k] = w->vc[i][p] - w->v[i][p];
				moving |= dv[k] != 0.0f;
			}
		}
	}
	*flags = (unsigned char)((have_guess ? 1 : 0) | (moving ? 2 : 0));
}

static double job_residual(const solve_job *j, int lo, int hi)
{
	const sim_implicit *im = j->im;
	const int st = im->stride, m = hi - lo;
	for (int c = 0; c < 3; c++)
		for (int i = lo; i < hi; i++)
			j->out[c * st + i] = im->mask[i] * (j->in[c * st + i] - j->sub[c * st + i]);
	precondition(im->pre + lo, j->out + lo, j->aux + lo, m, st);
	return dot3(j->out + lo, j->aux + lo, m, st);
}

static void job_finish(const solve_job *j, int lo, int hi, unsigned char *flags)
{
	const sim_implicit *im = j->im;
	sim_world *w = j->w;
	const int st = im->stride;
	const float h = j->h;
	bool finite = true;
	for (int i = lo; i < hi; i++) {
		float *xi = w->x[i];
		float *vi = w->v[i];
		for (int p = 0; p < 3; p++) {
			/* Kinematic vertices get exactly the constraint velocity, not v + (vc - v)
			 * rounded. */
			vi[p] = im->mask[i] != 0.0f ? vi[p] + im->dv[p * st + i] : w->vc[i][p];
			xi[p] += h * vi[p];
			finite = finite && isfinite(im->dv[p * st + i]);
		}
	}
	*flags = finite ? 1 : 0;
}

/* The multilevel path's pointwise phases over [lo, hi) (see solve_multilevel); returns
 * the block's partial sum where the phase has one. */
static double job_multilevel(const solve_job *j, int lo, int hi)
{
	sim_implicit *im = j->im;
	const int st = im->stride, m = hi - lo;
	const float *mask = im->mask;
	float *z = im->s, *r = im->r;
	switch (j->phase) {
	case PH_ML_DIR:
		for (int c = 0; c < 3; c++) {
			if (j->first)
				memcpy(im->c + c * st + lo, z + c * st + lo, sizeof(float) * (size_t)m);
			else
				ml_direction(im->c + c * st + lo, z + c * st + lo, j->beta, m);
		}
		return 0.0;
	case PH_ML_UPDATE:
		for (int c = 0; c < 3; c++)
			ml_update(im->dv + c * st + lo, r + c * st + lo, im->c + c * st + lo, im->q + c * st + lo, mask + lo,
			          j->alpha, m);
		/* then the convergence test's rᵀ P r and the smoother's first sweep */
		__attribute__((fallthrough));
	case PH_ML_PRE: {
		precondition(im->pre + lo, r + lo, z + lo, m, st);
		const double rpr = dot3(r + lo, z + lo, m, st);
		for (int c = 0; c < 3; c++)
			ml_scale(z + c * st + lo, FINE_OMEGA, m);
		return rpr;
	}
	case PH_ML_POST:
		ml_smooth(im->pre + lo, r + lo, im->q + lo, z + lo, FINE_OMEGA, m, st);
		return dot3(r + lo, z + lo, m, st);
	default:
		return 0.0;
	}
}

/* The multilevel path's second product and last smoothing sweep in one loop (grid runs
 * only, see multilevel_precondition): q = A z over [lo, hi), then, block by block, the
 * smoothed z into w2 (z itself is still read by the products of the neighbouring
 * ranges) and rᵀ w2 per block: PH_PRODUCT then PH_ML_POST, with w2 for z after. */
static void job_product_post(const solve_job *j, int lo, int hi, int worker)
{
	sim_implicit *im = j->im;
	const int st = im->stride;
	job_product(j, lo, hi, worker, im->s, 0, st, im->q, NULL);
	for (int b = lo / VERTEX_BLOCK; b * VERTEX_BLOCK < hi; b++) {
		const int b0 = b * VERTEX_BLOCK, m = (hi - b0 < VERTEX_BLOCK ? hi - b0 : VERTEX_BLOCK);
		ml_smooth_to(im->pre + b0, im->r + b0, im->q + b0, im->s + b0, im->w2 + b0, FINE_OMEGA, m, st);
		im->partial[b] = dot3(im->r + b0, im->w2 + b0, m, st);
	}
}

static void solve_task(int start, int end, int worker, void *ctx)
{
	const solve_job *j = ctx;
	sim_implicit *im = j->im;
	const int st = im->stride;
	if (j->phase == PH_PRODUCT || j->phase == PH_CG || j->phase == PH_CG_PRODUCT || j->phase == PH_PRODUCT_DOT ||
	    j->phase == PH_PRODUCT_POST) {
		for (int b = start; b < end; b += CHUNK_BLOCKS) {
			const int lo = b * VERTEX_BLOCK, b1 = b + CHUNK_BLOCKS < end ? b + CHUNK_BLOCKS : end;
			const int hi = b1 * VERTEX_BLOCK < j->n ? b1 * VERTEX_BLOCK : j->n;
			if (j->phase == PH_CG)
				job_cg(j, lo, hi, worker);
			else if (j->phase == PH_CG_PRODUCT)
				job_product(j, lo, hi, worker, im->s, 0, im->stride, im->w2,
				            im->block_count == 0 ? im->partial : NULL);
			else if (j->phase == PH_PRODUCT_DOT)
				job_product(j, lo, hi, worker, j->p, 0, im->stride, im->q, im->partial);
			else if (j->phase == PH_PRODUCT_POST)
				job_product_post(j, lo, hi, worker);
			else
				job_product(j, lo, hi, worker, j->p, 0, im->stride, im->q, NULL);
		}
		return;
	}
	for (int b = start; b < end; b++) {
		const int lo = b * VERTEX_BLOCK, hi = lo + VERTEX_BLOCK < j->n ? lo + VERTEX_BLOCK : j->n;
		switch (j->phase) {
		case PH_SETUP:
			job_setup(j, lo, hi);
			break;
		case PH_SPRINGS: {
			const int s0 = b * SLOT_BLOCK;
			job_springs(j, s0, s0 + SLOT_BLOCK);
			break;
		}
		case PH_GATHER:
			job_gather(j, lo, hi, im->block_count == 0);
			break;
		case PH_INVERT:
			invert_blocks(im->pre + lo, im->mask + lo, hi - lo, st);
			break;
		case PH_START:
			job_start(j, lo, hi, &im->flags[b]);
			break;
		case PH_PRODUCT: /* above */
		case PH_CG:
		case PH_CG_PRODUCT:
			break;
		case PH_CG_POINT:
			job_cg_point(j, lo, hi);
			im->partial2[b] = dot3(im->r2 + lo, im->s + lo, hi - lo, st);
			break;
		case PH_DOT:
			im->partial[b] = dot3(j->p + lo, j->in + lo, hi - lo, st);
			break;
		case PH_RESIDUAL:
			im->partial[b] = job_residual(j, lo, hi);
			break;
		case PH_PRECOND:
			precondition(im->pre + lo, im->r + lo, im->s + lo, hi - lo, st);
			break;
		case PH_ADD:
			for (int c = 0; c < 3; c++)
				sim_plane_add(im->dv + c * st + lo, im->c + c * st + lo, hi - lo);
			break;
		case PH_FINISH:
			job_finish(j, lo, hi, &im->flags[b]);
			break;
		case PH_PRODUCT_DOT:
		case PH_PRODUCT_POST:
			break;
		case PH_ML_DIR:
		case PH_ML_UPDATE:
		case PH_ML_PRE:
		case PH_ML_POST:
			im->partial[b] = job_multilevel(j, lo, hi);
			break;
		}
	}
}

/* Runs one phase over its blocks; returns the sum of the blocks' partial results, added
 * in block order. */
static double run_phase(solve_job *j, phase ph)
{
	sim_implicit *im = j->im;
	j->phase = ph;
	int count = (j->n + VERTEX_BLOCK - 1) / VERTEX_BLOCK;
	if (ph == PH_SPRINGS) {
		j->slots = 0;
		for (int k = 0; k < im->run_count; k++)
			j->slots += im->runs[k].count;
		count = (j->slots + SLOT_BLOCK - 1) / SLOT_BLOCK;
	}
	/* Few long ranges, as even as whole blocks allow (ml_even_range): with ranges of one
	 * to three blocks, the blocks moved between the cores' caches from one iteration to
	 * the next and two threads were slower than one.  Two ranges per worker, as before,
	 * split the drape's 17 blocks 10 : 7 (ranges of 5, 5, 5 and 2); 8, 8 and the last
	 * block's 257 vertices split them evenly. */
	const int workers = j->w->def.worker_count > 1 ? j->w->def.worker_count : 1;
	int min_range = count;
	if (j->n >= PARALLEL_MIN_VERTICES && workers > 1) {
		const int unit = ph == PH_SPRINGS ? SLOT_BLOCK : VERTEX_BLOCK;
		const int items = ph == PH_SPRINGS ? j->slots : j->n;
		min_range = ml_even_range(count, unit, items - (count - 1) * unit, workers);
	}
	sim_parallel_for(j->w, solve_task, count, min_range, j);
	double sum = 0.0;
	if (ph == PH_DOT || ph == PH_RESIDUAL || ph == PH_PRODUCT_DOT || ph == PH_ML_UPDATE || ph == PH_ML_PRE ||
	    ph == PH_ML_POST || ph == PH_PRODUCT_POST)
		for (int b = 0; b < count; b++)
			sum += im->partial[b];
	return sum;
}

/* ---- the matrix ----------------------------------------------------------------------------- */

/* Builds d, the spring blocks and the preconditioner, and writes the right-hand side
 * b = h f0 + h^2 (dF/dx) v0 into r.  w->f holds f0. */
static void implicit_assemble(sim_implicit *im, solve_job *j)
{
	const sim_world *w = j->w;
	const int st = im->stride;
	const float h = j->h;
	float *px = im->planes + P_X * st, *pv = im->planes + P_V * st;
	float *r = im->r, *pre = im->pre;

	/* Grid objects: one run per family (see implicit_run). */
	int runs = 0, slot = 0;
	for (int k = 0; k < w->object_count; k++) {
		const sim_object *o = &w->objects[k];
		if (!o->grid_nx)
			continue;
		for (int f = 0; f < SIM_GRID_FAMILIES; f++) {
			const sim_grid_family *fam = &o->families[f];
			int a, i0, i1, count = family_span(o, fam, &a, &i0, &i1);
			if (count <= 0)
				continue;
			const int nx = o->grid_nx, offset = fam->dj * nx + fam->di;
			im->runs[runs++] =
			    (implicit_run){a + o->first_vertex, offset, count, slot, nx, i0, i1, fam->k, fam->kd, fam->rest};
			slot += count;
		}
	}
	im->run_count = runs;
	int listed = 0;
	for (int k = 0; k < w->object_count; k++) {
		const sim_object *o = &w->objects[k];
		if (o->grid_nx)
			continue;
		for (int e = o->first_spring; e < o->first_spring + o->spring_count; e++) {
			const sim_spring *sp = &w->springs[e];
			listed += sp->k != 0.0f || sp->kd != 0.0f;
		}
	}
	im->block_count = listed;

	run_phase(j, PH_SETUP);
	run_phase(j, PH_SPRINGS);
	run_phase(j, PH_GATHER);
	if (listed == 0)
		return;

	/* Other objects: spring by spring, the same formulas, after the grids' terms. */
	listed = 0;
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
	run_phase(j, PH_INVERT);
}

/* q += the listed springs' part of A p, serially in list order (meshes other than grids
 * are small). */
static void listed_multiply(sim_implicit *im, const float *p, float *q)
{
	const int st = im->stride;
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
static void full_multiply(sim_implicit *im, solve_job *j, const float *p)
{
	j->p = p;
	run_phase(j, PH_PRODUCT);
	listed_multiply(im, p, im->q);
}

/* out = filter(in - sub), aux = P out; returns outᵀ P out.  out may be in or sub. */
static double filtered_residual(solve_job *j, const float *in, const float *sub, float *out, float *aux)
{
	j->in = in;
	j->sub = sub;
	j->out = out;
	j->aux = aux;
	return run_phase(j, PH_RESIDUAL);
}

/* ---- the multilevel preconditioner ---------------------------------------------------------- */

/* The coarse operators of every hierarchy, from the blocks implicit_assemble built. */
static void multilevel_assemble(sim_implicit *im, const sim_world *w)
{
	const int ss = im->slot_stride;
	int r = 0;
	for (int k = 0; k < w->object_count; k++) {
		const sim_object *o = &w->objects[k];
		if (!o->grid_nx)
			continue;
		ml_fine_run runs[SIM_GRID_FAMILIES];
		int count = 0;
		for (int f = 0; f < SIM_GRID_FAMILIES; f++) {
			const sim_grid_family *fam = &o->families[f];
			int a, i0, i1;
			if (family_span(o, fam, &a, &i0, &i1) <= 0)
				continue;
			const implicit_run *run = &im->runs[r++];
			const float *wb = im->slots + run->slot;
			runs[count++] = (ml_fine_run){fam->di, fam->dj, a, run->count, i0, i1,
			                              wb + W_X * ss, wb + W_Y * ss, wb + W_Z * ss, wb + W_BETA * ss};
		}
		if (k < im->grid_capacity && im->grids[k] && o->vertex_count >= ML_MIN_VERTICES && o->grid_nx >= 2 &&
		    o->grid_ny >= 2)
			ml_assemble(im->grids[k], im->diag + o->first_vertex, im->mask + o->first_vertex, runs, count, w);
	}
}

/* q = A z over the vertices [first + lo, first + hi) of a hierarchy's object, for
 * ml_apply's restriction (PH_PRODUCT's arithmetic, in pieces of at most a chunk: the
 * worker's scratch holds one). */
typedef struct fine_product {
	const solve_job *j;
	int first;
} fine_product;

static void ml_fine_product(void *ctx, int lo, int hi, int worker)
{
	const fine_product *fp = ctx;
	sim_implicit *im = fp->j->im;
	const int chunk = CHUNK_BLOCKS * VERTEX_BLOCK;
	for (int a = fp->first + lo; a < fp->first + hi; a += chunk) {
		const int b = a + chunk < fp->first + hi ? a + chunk : fp->first + hi;
		job_product(fp->j, a, b, worker, im->s, 0, im->stride, im->q, NULL);
	}
}

/* z = M r for the current r, M the preconditioner: one symmetric V-cycle whose finest
 * level is the cloth, smoothed by damped block Jacobi (omega P) before and after the
 * coarse correction; vertices outside the hierarchies get the two Jacobi sweeps alone.
 * With `smoothed`, z = omega P r is already in place (PH_ML_UPDATE computed it).  q is
 * overwritten.  Returns rᵀ z. */
static double multilevel_precondition(sim_implicit *im, solve_job *j, const sim_world *w, bool smoothed)
{
	const int st = im->stride;
	if (!smoothed)
		run_phase(j, PH_ML_PRE);
	/* q = A z is needed on the hierarchies' vertices only (the others' coarse correction is
	 * 0), and each hierarchy's cycle computes it there, row by row as its restriction
	 * reads it */
	for (int k = 0; k < w->object_count && k < im->grid_capacity; k++) {
		const sim_object *o = &w->objects[k];
		if (!im->grids[k] || !o->grid_nx || o->grid_nx < 2 || o->grid_ny < 2 || o->vertex_count < ML_MIN_VERTICES)
			continue;
		const int first = o->first_vertex;
		fine_product fp = {j, first};
		ml_apply(im->grids[k], im->r + first, im->q + first, im->mask + first, st, im->s + first, ml_fine_product,
		         &fp, w);
	}
	if (im->block_count > 0) {
		full_multiply(im, j, im->s);
		return run_phase(j, PH_ML_POST);
	}
	/* without listed springs, the product and the last sweep in one loop */
	const double rz = run_phase(j, PH_PRODUCT_POST);
	float *t = im->s;
	im->s = im->w2, im->w2 = t;
	return rz;
}

/* Preconditioned CG with the multilevel preconditioner, in the standard form (the
 * Chronopoulos and Gear form of sim_implicit_step fuses the pointwise preconditioner into
 * the product; this one is not pointwise).  The convergence test stays on rᵀ P r with P
 * the block Jacobi inverse, the norm the other path uses, so "converged" means the same
 * whichever preconditioner ran.  Starts from dv and r as sim_implicit_step leaves them;
 * returns the final rᵀ P r and the iteration count in *iterations. */
static double solve_multilevel(sim_implicit *im, solve_job *j, sim_world *w, double delta, double target,
                               int max_iterations, int *iterations)
{
	*iterations = 0;
	if (max_iterations <= 0 || !(delta > target))
		return delta;
	double rz = multilevel_precondition(im, j, w, false);
	double beta = 0.0;
	j->first = true;
	for (;;) {
		j->beta = (float)beta;
		run_phase(j, PH_ML_DIR);
		j->p = im->c;
		double pq;
		if (im->block_count == 0) {
			pq = run_phase(j, PH_PRODUCT_DOT);
		} else {
			run_phase(j, PH_PRODUCT);
			listed_multiply(im, im->c, im->q);
			j->in = im->q;
			pq = run_phase(j, PH_DOT);
		}
		/* p is zero at kinematic vertices, so pᵀ A p = pᵀ filter(A p).  A non-positive
		 * curvature or step (rounding, or a NaN) stops with the iterate, as the other path. */
		const double alpha = rz / pq;
		if (!(pq > 0.0 && alpha > 0.0))
			break;
		j->alpha = (float)alpha;
		delta = run_phase(j, PH_ML_UPDATE);
		++*iterations;
			if (*iterations >= max_iterations || !(delta > target))
			break;
		const double rz_new = multilevel_precondition(im, j, w, true);
		beta = rz_new / rz;
		rz = rz_new;
		j->first = false;
	}
	return delta;
}

ml_grid *sim_implicit_grid(sim_implicit *im, int object)
{
	return im && object >= 0 && object < im->grid_capacity && im->ml_on ? im->grids[object] : NULL;
}

void sim_implicit_set_multilevel(sim_implicit *im, ml_mode mode)
{
	im->ml_mode = mode;
}

bool sim_implicit_apply_preconditioner(sim_world *w, float h, const float *r, float *z)
{
	sim_implicit *im = w->implicit;
	if (!im || w->n == 0 || !implicit_reserve(im, w) || !multilevel_reserve(im, w))
		return false;
	solve_job job = {.im = im, .w = w, .n = w->n, .h = h};
	sim_compute_forces(w, w->x, w->v, w->f);
	implicit_assemble(im, &job);
	if (im->ml_on)
		multilevel_assemble(im, w);
	const int st = im->stride;
	for (int i = 0; i < w->n; i++)
		for (int c = 0; c < 3; c++)
			im->r[c * st + i] = im->mask[i] * r[3 * i + c];
	if (im->ml_on)
		multilevel_precondition(im, &job, w, false);
	else
		run_phase(&job, PH_PRECOND);
	for (int i = 0; i < w->n; i++)
		for (int c = 0; c < 3; c++)
			z[3 * i + c] = im->s[c * st + i];
	return true;
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
	if (!im || !implicit_reserve(im, w) || !multilevel_reserve(im, w)) {
		/* Without scratch there is nothing sound to do: the world rolls the step back. */
		if (stats) {
			stats->cg_iterations = 0;
			stats->cg_residual = INFINITY;
		}
		return SIM_ERROR_OUT_OF_MEMORY;
	}
	const int st = im->stride;
	const int vblocks = (n + VERTEX_BLOCK - 1) / VERTEX_BLOCK;
	solve_job job = {.im = im, .w = w, .n = n, .h = h};

	sim_forces_timed(w, w->x, w->v, w->f);
	implicit_assemble(im, &job);
	if (im->ml_on)
		multilevel_assemble(im, w);

	/* The paper's start: dv = z, the constraint's velocity change on kinematic vertices
	 * and 0 on free ones.  The previous solution, scaled to this h, goes to c as a
	 * candidate guess. */
	const bool warm = im->guess_count > 0 && im->guess_h > 0.0f &&
	                  (w->steps == im->guess_step || w->steps == im->guess_step + 1);
	job.guess_count = warm ? (im->guess_count < n ? im->guess_count : n) : 0;
	job.guess_scale = warm ? h / im->guess_h : 0.0f;
	run_phase(&job, PH_START);
	bool moving_constraint = false, have_guess = false;
	for (int b = 0; b < vblocks; b++) {
		have_guess |= (im->flags[b] & 1) != 0;
		moving_constraint |= (im->flags[b] & 2) != 0;
	}

	/* r = filter(b - A z).  The world has already set v = vc on constrained vertices, so
	 * z is usually 0 and so is the product. */
	if (moving_constraint)
		full_multiply(im, &job, im->dv);
	else
		for (int p = 0; p < 3; p++)
			memset(im->q + p * st, 0, sizeof(float) * (size_t)n);
	/* The tolerance is relative to this residual rather than to b as in the paper: a
	 * cloth at rest with a moving pin has b = 0 but still has to follow the pin. */
	const double delta_ref = filtered_residual(&job, im->r, im->q, im->r, im->s);
	double delta = delta_ref;

	if (have_guess && delta_ref > 0.0) {
		/* The guess g is kept only if filter(b - A (z + g)) is the smaller residual. */
		full_multiply(im, &job, im->c);
		const double delta_guess = filtered_residual(&job, im->r, im->q, im->q, im->s);
		if (delta_guess < delta_ref) {
			float *t = im->r;
			im->r = im->q;
			im->q = t;
			run_phase(&job, PH_ADD);
			delta = delta_guess;
		} else {
			run_phase(&job, PH_PRECOND);
		}
	}

	const double tol = (double)w->def.cg_tolerance;
	const double target = tol * tol * delta_ref;
	const int max_iterations = w->def.cg_max_iterations > 0 ? w->def.cg_max_iterations : 0;
	int iterations = 0;
	if (im->ml_on)
		delta = solve_multilevel(im, &job, w, delta, target, max_iterations, &iterations);
	/* ML_AUTO on block Jacobi: at most ML_ENTER_ITERATIONS of them, then the multilevel
	 * preconditioner from where they stopped (below). */
	const bool may_switch = !im->ml_on && im->ml_ready && im->ml_mode == ML_AUTO;
	const int limit = may_switch && ML_ENTER_ITERATIONS < max_iterations ? ML_ENTER_ITERATIONS : max_iterations;
	/* The iteration in Chronopoulos and Gear's form (J. Comput. Appl. Math. 25, 1989): with
	 * u = P r and w = A u, pᵀ A p follows from uᵀ w and the previous alpha and beta, and
	 * A p from w by the same recurrence as p from u.  So an iteration's only sums, rᵀ u and
	 * uᵀ w, come out of one loop that updates p, dv, filter(A p) and r, then computes u
	 * and w: one parallel loop and one reduction per iteration instead of two of each, for
	 * the iterates of the standard algorithm (in exact arithmetic). */
	if (!im->ml_on && iterations < max_iterations && delta > target) {
		/* w = A u for the first iteration; s holds u = P r. */
		full_multiply(im, &job, im->s);
		for (int p = 0; p < 3; p++)
			memset(im->ap + p * st, 0, sizeof(float) * (size_t)n);
		job.p = im->s;
		job.in = im->q;
		double quad = run_phase(&job, PH_DOT);
		double alpha = delta / quad;
		job.first = true;
		job.beta = 0.0f;
		/* u is zero at kinematic vertices, so uᵀ A u = uᵀ filter(A u).  A non-positive
		 * curvature: A is not positive definite in floating point, or a NaN came in.
		 * Stopping keeps the iterate; the world's blow-up check handles NaNs. */
		/* Inline, the iteration's pointwise part and its product are two loops, which
		 * gives the same bits without the halo's work and skips the last iteration's
		 * product, which the one loop computes before anyone knows it is the last. */
		const bool inline_only = !w->def.enqueue_task || w->def.worker_count <= 1 || n < PARALLEL_MIN_VERTICES;
		while (quad > 0.0 && alpha > 0.0) {
			job.alpha = (float)alpha;
			run_phase(&job, inline_only ? PH_CG_POINT : PH_CG);
			double delta_new = 0.0;
			for (int b = 0; b < vblocks; b++)
				delta_new += im->partial2[b];
			float *t;
			t = im->r, im->r = im->r2, im->r2 = t;
			t = im->ap, im->ap = im->ap2, im->ap2 = t;
			if (inline_only && (iterations + 1 >= limit || !(delta_new > target))) {
				delta = delta_new;
				iterations++;
				break;
			}
			if (inline_only)
				run_phase(&job, PH_CG_PRODUCT);
			t = im->q, im->q = im->w2, im->w2 = t;
			if (im->block_count > 0) {
				listed_multiply(im, im->s, im->q);
				job.p = im->s;
				job.in = im->q;
				quad = run_phase(&job, PH_DOT);
			} else {
				quad = 0.0;
				for (int b = 0; b < vblocks; b++)
					quad += im->partial[b];
			}
			const double beta = delta_new / delta;
			delta = delta_new;
			iterations++;
			if (iterations >= limit || !(delta > target))
				break;
			/* Chronopoulos and Gear: pᵀ A p from uᵀ A u and the previous step */
			quad -= beta * delta / alpha;
			alpha = delta / quad;
			job.beta = (float)beta;
			job.first = false;
		}
	}

	/* r and dv are the block Jacobi iteration's, which the multilevel one continues from
	 * (a restart of PCG: the same convergence test on the same residual). */
	bool switched = false;
	if (may_switch && iterations >= limit && limit < max_iterations && delta > target) {
		multilevel_assemble(im, w);
		im->ml_on = switched = true;
		int more;
		delta = solve_multilevel(im, &job, w, delta, target, max_iterations - iterations, &more);
		iterations += more;
	}

	run_phase(&job, PH_FINISH);
	/* The next step starts with the preconditioner that this one ended with, unless the
	 * multilevel one had little left to do from the start. */
	if (im->ml_mode == ML_AUTO)
		im->ml_next = switched || (im->ml_on && iterations > ML_LEAVE_ITERATIONS);
	bool finite = isfinite(delta);
	for (int b = 0; b < vblocks; b++)
		finite = finite && im->flags[b] != 0;
	/* A failed solve must not seed the next one, or a rolled-back step would fail the
	 * same way forever. */
	im->guess_count = finite ? n : 0;
	im->guess_h = h;
	im->guess_step = w->steps;

	int64_t coarse_ns = 0;
	for (int k = 0; k < w->object_count && k < im->grid_capacity; k++)
		if (im->grids[k])
			coarse_ns += ml_take_coarse_ns(im->grids[k]);
	if (stats) {
		stats->cg_iterations = iterations;
		stats->cg_residual = delta_ref > 0.0 ? (float)sqrt(delta / delta_ref) : 0.0f;
		stats->coarse_us += (double)coarse_ns * 1e-3;
	}
	return SIM_OK;
}
