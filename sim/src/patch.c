/* Patches of grid cloth that cannot meet themselves: the certificate of patch.h. */
#include "patch.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#if defined(__SSE2__)
#include <emmintrin.h>
#endif

/* Levels at most: a grid of 4096 x 4096 vertices has 4095 quads a side, 12 levels. */
#define PATCH_LEVELS 14

/* Level-1 blocks per range of the parallel measure. */
#define PATCH_RANGE 128

/* The least level whose blocks give the trees their groups: a level-1 block (2 x 2
 * quads) holds hardly a triangle pair that shares no vertex (the trees' neighbour rule
 * drops the rest), and level 2 few, so their groups would cost the traversals their
 * tests for almost nothing; the neighbour list uses every level. */
#define PATCH_TREE_LEVEL 3

typedef struct patch_grid {
	int first_tri, first_vertex, nx, ny, qx, qy; /* qx x qy quads */
	int levels;                                  /* 1 .. levels; the top level is one block */
	/* level k's blocks: first[k] + bj * bw[k] + bi, for bi < bw[k], bj < bh[k] */
	int first[PATCH_LEVELS + 1], bw[PATCH_LEVELS + 1], bh[PATCH_LEVELS + 1];
	double lx, ly; /* rest spacing */
	double a;      /* least rest distance of two primitives that share no vertex */
} patch_grid;

typedef struct patch_block {
	double A[6]; /* the mean deformation gradient, 3 x 2 row by row */
	double L;    /* at least the largest ||J - A||_2 of the block's gradients */
	double r;    /* the largest ball radius of the block's vertices */
	int n;       /* gradients in the mean: two per triangle and end (0: not measured) */
} patch_block;

struct sim_patches {
	patch_grid *grids;
	int grid_count;
	patch_block *blocks;
	int *parent;           /* per block: its parent block, -1 at the top */
	int *top;              /* per block: the highest certified block holding it, or -1 */
	unsigned char *level;  /* per block: its level */
	unsigned char *cert;   /* per block: certified */
	unsigned char *fresh;  /* per level-1 block: its last measure passes (scratch) */
	unsigned char *stale;  /* per block: to be measured again (scratch) */
	int *todo;             /* scratch: the blocks a refresh measures, level by level */
	int block_count;
	int *tri_block;        /* per collision triangle: its level-1 block, or -1 */
	int *group;            /* per collision triangle */
	int tri_count;
	int certified;
	bool entries; /* a third of the level-1 blocks or more have a holder (sim_patches_cover_entries) */
};

sim_patches *sim_patches_create(void) { return calloc(1, sizeof(sim_patches)); }

static void clear(sim_patches *p)
{
	free(p->grids);
	free(p->blocks);
	free(p->parent);
	free(p->top);
	free(p->level);
	free(p->cert);
	free(p->fresh);
	free(p->stale);
	free(p->todo);
	free(p->tri_block);
	free(p->group);
	memset(p, 0, sizeof *p);
}

void sim_patches_destroy(sim_patches *p)
{
	if (!p)
		return;
	clear(p);
	free(p);
}

bool sim_patches_any(const sim_patches *p) { return p->grid_count > 0; }
bool sim_patches_cover_entries(const sim_patches *p) { return p->entries; }
const int *sim_patches_groups(const sim_patches *p) { return p->group; }
const int *sim_patches_tops(const sim_patches *p) { return p->top; }

int sim_patches_certified(const sim_patches *p, int *blocks)
{
	if (blocks)
		*blocks = p->block_count;
	return p->certified;
}

/* Whether the object's triangles are sim_world_add_grid's: triangles 2 q and 2 q + 1
 * halve quad q (row by row) along one of its diagonals, whichever. */
static bool grid_layout(const sim_object *o, const int *tris)
{
	const int nx = o->grid_nx, qx = nx - 1, qy = o->grid_ny - 1;
	if (o->triangle_count != 2 * qx * qy)
		return false;
	for (int q = 0; q < qx * qy; q++) {
		int base = o->first_vertex + (q / qx) * nx + q % qx, corners[2] = {0, 0};
		for (int h = 0; h < 2; h++) {
			const int *v = &tris[3 * (o->first_triangle + 2 * q + h)];
			for (int j = 0; j < 3; j++) {
				int d = v[j] - base, bit = d == 0 ? 1 : d == 1 ? 2 : d == nx ? 4 : d == nx + 1 ? 8 : 0;
				if (!bit || (corners[h] & bit))
					return false;
				corners[h] |= bit;
			}
		}
		/* together all four corners, sharing a diagonal: (0, 0)-(1, 1) or (1, 0)-(0, 1) */
		int shared = corners[0] & corners[1];
		if ((corners[0] | corners[1]) != 15 || (shared != 9 && shared != 6))
			return false;
	}
	return true;
}

bool sim_patches_layout(sim_patches *p, const sim_world *w, const int *tris, int tri_count)
{
	clear(p);
	int grids = 0, blocks = 0;
	for (int i = 0; i < w->object_count; i++)
		grids += w->objects[i].grid_nx >= 3 && w->objects[i].grid_ny >= 3;
	p->grids = calloc((size_t)(grids ? grids : 1), sizeof(patch_grid));
	p->tri_block = malloc(sizeof(int) * (size_t)(tri_count ? tri_count : 1));
	p->group = malloc(sizeof(int) * (size_t)(tri_count ? tri_count : 1));
	if (!p->grids || !p->tri_block || !p->group) {
		clear(p);
		return false;
	}
	p->tri_count = tri_count;
	for (int t = 0; t < tri_count; t++)
		p->tri_block[t] = p->group[t] = -1;
	for (int i = 0; i < w->object_count; i++) {
		const sim_object *o = &w->objects[i];
		if (o->grid_nx < 3 || o->grid_ny < 3 || o->first_triangle + o->triangle_count > tri_count ||
		    !grid_layout(o, tris))
			continue;
		patch_grid *g = &p->grids[p->grid_count++];
		g->first_tri = o->first_triangle;
		g->first_vertex = o->first_vertex;
		g->nx = o->grid_nx, g->ny = o->grid_ny;
		g->qx = g->nx - 1, g->qy = g->ny - 1;
		g->lx = o->families[0].rest, g->ly = o->families[1].rest;
		g->a = g->lx * g->ly / sqrt(g->lx * g->lx + g->ly * g->ly);
		int k = 1, w_ = (g->qx + 1) / 2, h_ = (g->qy + 1) / 2;
		for (;; k++) {
			g->first[k] = blocks, g->bw[k] = w_, g->bh[k] = h_;
			blocks += w_ * h_;
			if ((w_ == 1 && h_ == 1) || k == PATCH_LEVELS)
				break;
			w_ = (w_ + 1) / 2, h_ = (h_ + 1) / 2;
		}
		g->levels = k;
	}
	size_t nb = (size_t)(blocks ? blocks : 1);
	p->blocks = calloc(nb, sizeof(patch_block));
	p->parent = malloc(sizeof(int) * nb);
	p->top = malloc(sizeof(int) * nb);
	p->level = malloc(nb);
	p->cert = calloc(nb, 1);
	p->fresh = calloc(nb, 1);
	p->stale = calloc(nb, 1);
	p->todo = malloc(sizeof(int) * nb);
	if (!p->blocks || !p->parent || !p->top || !p->level || !p->cert || !p->fresh || !p->stale || !p->todo) {
		clear(p);
		return false;
	}
	p->block_count = blocks;
	for (int gi = 0; gi < p->grid_count; gi++) {
		const patch_grid *g = &p->grids[gi];
		for (int k = 1; k <= g->levels; k++)
			for (int bj = 0; bj < g->bh[k]; bj++)
				for (int bi = 0; bi < g->bw[k]; bi++) {
					int b = g->first[k] + bj * g->bw[k] + bi;
					p->parent[b] = k < g->levels ? g->first[k + 1] + (bj / 2) * g->bw[k + 1] + bi / 2 : -1;
					p->top[b] = -1;
					p->level[b] = (unsigned char)k;
				}
		for (int q = 0; q < g->qx * g->qy; q++) {
			int qi = q % g->qx, qj = q / g->qx, b = g->first[1] + (qj / 2) * g->bw[1] + qi / 2;
			p->tri_block[g->first_tri + 2 * q] = p->tri_block[g->first_tri + 2 * q + 1] = b;
		}
	}
	return true;
}

int sim_patches_pair_block(const sim_patches *p, int ta, int tb)
{
	if (ta < 0 || tb < 0 || ta >= p->tri_count || tb >= p->tri_count)
		return -1;
	int a = p->tri_block[ta], b = p->tri_block[tb];
	/* both on level 1, so they climb in step; two grids never meet */
	while (a != b && a >= 0 && b >= 0)
		a = p->parent[a], b = p->parent[b];
	return a == b ? a : -1;
}

/* The least and the largest singular value of a 3 x 2 matrix, from its Gram matrix. */
static void singular_values(const double m[6], double *lo, double *hi)
{
	double g00 = m[0] * m[0] + m[2] * m[2] + m[4] * m[4];
	double g01 = m[0] * m[1] + m[2] * m[3] + m[4] * m[5];
	double g11 = m[1] * m[1] + m[3] * m[3] + m[5] * m[5];
	double mid = 0.5 * (g00 + g11), half = 0.5 * (g00 - g11), d = sqrt(half * half + g01 * g01);
	double l0 = mid - d;
	*lo = sqrt(l0 > 0.0 ? l0 : 0.0);
	*hi = sqrt(mid + d);
}

/* A level-1 block's mean gradient, bound and radius.  On a grid triangle the gradient's
 * columns are its two legs, one along each axis, over lx and ly; every quad's two
 * triangles, whichever its diagonal, take its bottom and top edges once each as the
 * first column and its left and right edges as the second.  So A, the mean over the
 * block's triangles at both ends of the window, is the weighted mean of the edges (an
 * edge inside the block serves the quads on both sides), and ||J - A||_F^2, which is
 * |h / lx - A_0|^2 + |v / ly - A_1|^2 for the triangle's legs h and v, is at most the
 * largest first term over the block's first-column edges plus the largest second term
 * over its second-column edges. */
static inline void measure_quads(const sim_patches *p, const patch_grid *g, int b, int i0, int j0, int nqx, int nqy,
                                 const vsphere *balls)
{
	const double sx = 1.0 / g->lx, sy = 1.0 / g->ly;
	/* the edges as gradient columns, at both ends: along x (rows j0 .. j0 + nqy) and
	 * along y (columns i0 .. i0 + nqx); an edge inside the block serves two quads */
	double hx[2][3][2][3], vy[2][3][2][3], r = 0.0, A[6] = {0.0, 0.0, 0.0, 0.0, 0.0, 0.0};
	for (int j = 0; j <= nqy; j++) {
		for (int i = 0; i <= nqx; i++) {
			const vsphere *c = &balls[g->first_vertex + (j0 + j) * g->nx + i0 + i];
			r = (double)c->c0[3] > r ? (double)c->c0[3] : r;
			for (int end = 0; end < 2; end++) {
				const float *x = end ? c->c1 : c->c0;
				if (i < nqx) {
					const float *y = end ? c[1].c1 : c[1].c0;
					double wt = (double)((j > 0) + (j < nqy));
					for (int k = 0; k < 3; k++) {
						double e = ((double)y[k] - (double)x[k]) * sx;
						hx[end][j][i][k] = e;
						A[2 * k] += wt * e;
					}
				}
				if (j < nqy) {
					const float *y = end ? c[g->nx].c1 : c[g->nx].c0;
					double wt = (double)((i > 0) + (i < nqx));
					for (int k = 0; k < 3; k++) {
						double e = ((double)y[k] - (double)x[k]) * sy;
						vy[end][i][j][k] = e;
						A[2 * k + 1] += wt * e;
					}
				}
			}
		}
	}
	/* each quad takes two first-column edges and two second-column ones, at two ends */
	const double n = 4.0 * nqx * nqy;
	for (int k = 0; k < 6; k++)
		A[k] /= n;
	double dh = 0.0, dv = 0.0;
	for (int end = 0; end < 2; end++) {
		for (int j = 0; j <= nqy; j++)
			for (int i = 0; i < nqx; i++) {
				double f = 0.0;
				for (int k = 0; k < 3; k++)
					f += (hx[end][j][i][k] - A[2 * k]) * (hx[end][j][i][k] - A[2 * k]);
				dh = f > dh ? f : dh;
			}
		for (int i = 0; i <= nqx; i++)
			for (int j = 0; j < nqy; j++) {
				double f = 0.0;
				for (int k = 0; k < 3; k++)
					f += (vy[end][i][j][k] - A[2 * k + 1]) * (vy[end][i][j][k] - A[2 * k + 1]);
				dv = f > dv ? f : dv;
			}
	}
	patch_block *out = &p->blocks[b];
	memcpy(out->A, A, sizeof A);
	out->L = sqrt(dh + dv);
	out->r = r;
	out->n = 4 * nqx * nqy; /* gradients: two triangles a quad, at two ends */
}

#if defined(__SSE2__)
/* The largest |d_k - a|^2 over lanes 0-2 of four vectors d_k, in every lane: the four
 * differences transposed, so that their squares add lane by lane. */
static inline __m128 max_dev4(__m128 d0, __m128 d1, __m128 d2, __m128 d3, __m128 a)
{
	d0 = _mm_sub_ps(d0, a), d1 = _mm_sub_ps(d1, a), d2 = _mm_sub_ps(d2, a), d3 = _mm_sub_ps(d3, a);
	_MM_TRANSPOSE4_PS(d0, d1, d2, d3); /* d0: the x of all four, d1 y, d2 z, d3 lane 3 (unused) */
	__m128 q = _mm_add_ps(_mm_add_ps(_mm_mul_ps(d0, d0), _mm_mul_ps(d1, d1)), _mm_mul_ps(d2, d2));
	q = _mm_max_ps(q, _mm_shuffle_ps(q, q, _MM_SHUFFLE(2, 3, 0, 1)));
	return _mm_max_ps(q, _mm_shuffle_ps(q, q, _MM_SHUFFLE(1, 0, 3, 2)));
}

/* measure_quads for a whole block of 2 x 2 quads, in float vectors (the ball's radius
 * rides in lane 3): the edges, their weighted means (any A will do, so its roundings
 * cost nothing) and each edge's squared deviation.  An edge is its exact value times
 * (1 + t), |t| <= 3u (u = 2^-24: the difference, the scale and the scale's own rounding),
 * and a deviation's square comes out within 5u of the computed edge's: so the exact
 * gradients lie within L (1 + 3u) + 5u (|A|_F + L) of A, which the stored bound,
 * L (1 + 2^-20) + 2^-20 (|A|_F + 1), exceeds for any L below 10^4 (and a block with L
 * that large is far from certified). */
static void measure_block_sse(const sim_patches *p, const patch_grid *g, int b, int i0, int j0, const vsphere *balls)
{
	const __m128 sx = _mm_set1_ps((float)(1.0 / g->lx)), sy = _mm_set1_ps((float)(1.0 / g->ly));
	__m128 c[2][3][3], r = _mm_setzero_ps();
	for (int j = 0; j < 3; j++)
		for (int i = 0; i < 3; i++) {
			const vsphere *v = &balls[g->first_vertex + (j0 + j) * g->nx + i0 + i];
			c[0][j][i] = _mm_load_ps(v->c0);
			c[1][j][i] = _mm_load_ps(v->c1);
			r = _mm_max_ps(r, c[0][j][i]);
		}
	/* edge m of row k along x (h), and of column k along y (v), at end e: 12 of each */
	__m128 h[12], v[12], a0 = _mm_setzero_ps(), a1 = _mm_setzero_ps();
	for (int e = 0; e < 2; e++)
		for (int k = 0; k < 3; k++)
			for (int m = 0; m < 2; m++) {
				int q = 6 * e + 2 * k + m;
				h[q] = _mm_mul_ps(_mm_sub_ps(c[e][k][m + 1], c[e][k][m]), sx);
				v[q] = _mm_mul_ps(_mm_sub_ps(c[e][m + 1][k], c[e][m][k]), sy);
				/* the middle row and column serve two quads each */
				a0 = _mm_add_ps(a0, k == 1 ? _mm_add_ps(h[q], h[q]) : h[q]);
				a1 = _mm_add_ps(a1, k == 1 ? _mm_add_ps(v[q], v[q]) : v[q]);
			}
	const __m128 n = _mm_set1_ps(1.0f / 16.0f); /* weights: 8 a column an end, two ends */
	a0 = _mm_mul_ps(a0, n);
	a1 = _mm_mul_ps(a1, n);
	__m128 dh = max_dev4(h[0], h[1], h[2], h[3], a0), dv = max_dev4(v[0], v[1], v[2], v[3], a1);
	dh = _mm_max_ps(dh, _mm_max_ps(max_dev4(h[4], h[5], h[6], h[7], a0), max_dev4(h[8], h[9], h[10], h[11], a0)));
	dv = _mm_max_ps(dv, _mm_max_ps(max_dev4(v[4], v[5], v[6], v[7], a1), max_dev4(v[8], v[9], v[10], v[11], a1)));
	float fa0[4], fa1[4], fr[4];
	_mm_storeu_ps(fa0, a0);
	_mm_storeu_ps(fa1, a1);
	_mm_storeu_ps(fr, r);
	patch_block *out = &p->blocks[b];
	double af = 0.0;
	for (int k = 0; k < 3; k++) {
		out->A[2 * k] = fa0[k], out->A[2 * k + 1] = fa1[k];
		af += (double)fa0[k] * fa0[k] + (double)fa1[k] * fa1[k];
	}
	double L = sqrt((double)_mm_cvtss_f32(dh) + (double)_mm_cvtss_f32(dv));
	out->L = L * (1.0 + 0x1p-20) + 0x1p-20 * (sqrt(af) + 1.0);
	out->r = fr[3];
	out->n = 16;
}
#endif

static void measure_leaf(const sim_patches *p, const patch_grid *g, int b, const vsphere *balls)
{
	const int bi = (b - g->first[1]) % g->bw[1], bj = (b - g->first[1]) / g->bw[1];
	const int i0 = 2 * bi, j0 = 2 * bj, nqx = g->qx - i0 < 2 ? 1 : 2, nqy = g->qy - j0 < 2 ? 1 : 2;
#if defined(__SSE2__)
	if (nqx == 2 && nqy == 2) {
		measure_block_sse(p, g, b, i0, j0, balls);
		return;
	}
#endif
	measure_quads(p, g, b, i0, j0, nqx, nqy, balls);
}

/* The children of block (bi, bj) of level k, into kids; returns how many (1 to 4). */
static int children(const patch_grid *g, int k, int bi, int bj, int kids[4])
{
	int nk = 0;
	for (int dj = 0; dj < 2; dj++)
		for (int di = 0; di < 2; di++)
			if (2 * bi + di < g->bw[k - 1] && 2 * bj + dj < g->bh[k - 1])
				kids[nk++] = g->first[k - 1] + (2 * bj + dj) * g->bw[k - 1] + 2 * bi + di;
	return nk;
}

/* An upper block from its children's: the weighted mean, and the children's bounds
 * carried over by the triangle inequality. */
static void measure_parent(const sim_patches *p, int b, const int *kids, int nk)
{
	patch_block *out = &p->blocks[b];
	double A[6] = {0.0, 0.0, 0.0, 0.0, 0.0, 0.0}, r = 0.0, L = 0.0;
	int n = 0;
	for (int c = 0; c < nk; c++) {
		const patch_block *kid = &p->blocks[kids[c]];
		for (int m = 0; m < 6; m++)
			A[m] += kid->n * kid->A[m];
		n += kid->n;
		r = kid->r > r ? kid->r : r;
	}
	for (int m = 0; m < 6; m++)
		A[m] /= n;
	for (int c = 0; c < nk; c++) {
		const patch_block *kid = &p->blocks[kids[c]];
		double d[6], lo, hi;
		for (int m = 0; m < 6; m++)
			d[m] = kid->A[m] - A[m];
		singular_values(d, &lo, &hi);
		double Lc = kid->L + hi;
		L = Lc > L ? Lc : L;
	}
	memcpy(out->A, A, sizeof A);
	out->L = L;
	out->r = r;
	out->n = n;
}

typedef struct measure_task {
	const sim_patches *p;
	const patch_grid *g;
	const vsphere *balls;
	const int *todo; /* NULL: the grid's level-1 blocks from its first */
} measure_task;

/* (sigma_min(A) - L) a > 2 r, with 2^-20 of 2 r to spare for the roundings. */
static bool certify_block(const sim_patches *p, const patch_grid *g, int b)
{
	const patch_block *blk = &p->blocks[b];
	double lo, hi;
	singular_values(blk->A, &lo, &hi);
	return (lo - blk->L) * g->a > 2.0 * blk->r * (1.0 + 0x1p-20);
}

/* Each level-1 block's measure and whether it passes (fresh), for the caller to take. */
static void measure_range(int start, int end, int worker, void *ctx)
{
	(void)worker;
	const measure_task *t = ctx;
	for (int k = start; k < end; k++) {
		int b = t->todo ? t->todo[k] : t->g->first[1] + k;
		measure_leaf(t->p, t->g, b, t->balls);
		t->p->fresh[b] = certify_block(t->p, t->g, b);
	}
}


/* Weyl's inequality gives sigma_min(A_b) <= sigma_min(A_c) + ||A_b - A_c||_2 for each
 * child c of a block b, and L_b >= L_c + ||A_c - A_b||_2, r_b >= r_c by construction, so
 * sigma_min(A_b) - L_b <= sigma_min(A_c) - L_c: a block can be certified only when each
 * of its children is, and the others need not be measured. */
static bool certify_parent(const sim_patches *p, const patch_grid *g, int k, int bi, int bj, int b)
{
	int kids[4], nk = children(g, k, bi, bj, kids);
	for (int c = 0; c < nk; c++)
		if (!p->cert[kids[c]]) {
			p->blocks[b].n = 0; /* not measured: nothing reads it */
			return false;
		}
	measure_parent(p, b, kids, nk);
	return certify_block(p, g, b);
}

typedef struct holder_out {
	unsigned char *changed;
	int count;
} holder_out;

/* Level-1 block rel (of its grid's, row by row) has a new holder, top: its triangles take
 * its group and are flagged. */
static void regroup(sim_patches *p, const patch_grid *g, int rel, int top, holder_out *out)
{
	const int bi = rel % g->bw[1], bj = rel / g->bw[1];
	const int group = top >= 0 && p->level[top] >= PATCH_TREE_LEVEL ? top : -1;
	for (int qj = 2 * bj; qj < 2 * bj + 2 && qj < g->qy; qj++)
		for (int qi = 2 * bi; qi < 2 * bi + 2 && qi < g->qx; qi++)
			for (int h = 0; h < 2; h++) {
				int t = g->first_tri + 2 * (qj * g->qx + qi) + h;
				p->group[t] = group;
				if (out->changed)
					out->changed[t] = 1;
				out->count++;
			}
}

/* Every block's highest certified holder, from the top level down (a parent before its
 * children); a level-1 block whose holder changes moves its triangles' group. */
static void set_holders(sim_patches *p, const patch_grid *g, holder_out *out)
{
	for (int k = g->levels; k >= 1; k--) {
		for (int b = g->first[k]; b < g->first[k] + g->bw[k] * g->bh[k]; b++) {
			int up = p->parent[b], top = up >= 0 && p->top[up] >= 0 ? p->top[up] : (p->cert[b] ? b : -1);
			if (k == 1 && top != p->top[b])
				regroup(p, g, b - g->first[1], top, out);
			p->top[b] = top;
		}
	}
}

/* Level-2 blocks [start, end) of a grid (row by row) with their children: measured and
 * certified, each its own blocks. */
static void measure_level2_range(int start, int end, int worker, void *ctx)
{
	(void)worker;
	const measure_task *t = ctx;
	sim_patches *p = (sim_patches *)t->p;
	const patch_grid *g = t->g;
	for (int q = start; q < end; q++) {
		const int bi = q % g->bw[2], bj = q / g->bw[2];
		int kids[4], nk = children(g, 2, bi, bj, kids);
		for (int c = 0; c < nk; c++) {
			measure_leaf(p, g, kids[c], t->balls);
			p->cert[kids[c]] = certify_block(p, g, kids[c]);
		}
		p->cert[g->first[2] + q] = certify_parent(p, g, 2, bi, bj, g->first[2] + q);
	}
}

/* Every block measured and certified from the bottom up, then every holder. */
static void certify_grid(sim_patches *p, const patch_grid *g, const sim_world *w, const vsphere *balls,
                         holder_out *out)
{
	measure_task task = {p, g, balls, NULL};
	/* levels 1 and 2 in the parallel loop, a level-2 block with its children at a time
	 * (a grid of one level has no level 2) */
	if (g->levels >= 2) {
		sim_parallel_for(w, measure_level2_range, g->bw[2] * g->bh[2], PATCH_RANGE / 4, &task);
	} else {
		const int n1 = g->bw[1] * g->bh[1];
		sim_parallel_for(w, measure_range, n1, PATCH_RANGE, &task);
		memcpy(p->cert + g->first[1], p->fresh + g->first[1], (size_t)n1);
	}
	for (int k = 3; k <= g->levels; k++)
		for (int bj = 0, b = g->first[k]; bj < g->bh[k]; bj++)
			for (int bi = 0; bi < g->bw[k]; bi++, b++)
				p->cert[b] = certify_parent(p, g, k, bi, bj, b);
	set_holders(p, g, out);
}

/* The in-place refresh's: the todo level-1 blocks (m of them, flagged stale) measured
 * again, their ancestors after them, level by level (each flagged stale once, listed in
 * todo in turn); a certified block keeps its certificate only if it still holds, one
 * that was not stays so.  When one lost it, the holders are set again. */
static void recertify_grid(sim_patches *p, const patch_grid *g, const sim_world *w, const vsphere *balls, int m,
                           holder_out *out)
{
	measure_task task = {p, g, balls, p->todo};
	sim_parallel_for(w, measure_range, m, PATCH_RANGE, &task);
	bool lost = false;
	for (int k = 1; k <= g->levels && m > 0; k++) {
		int next = 0;
		for (int q = 0; q < m; q++) {
			const int b = p->todo[q], rel = b - g->first[k], bi = rel % g->bw[k], bj = rel / g->bw[k];
			p->stale[b] = 0;
			if (p->cert[b] && !(k == 1 ? p->fresh[b] : certify_parent(p, g, k, bi, bj, b))) {
				p->cert[b] = 0;
				lost = true;
				p->certified--;
			}
			const int up = p->parent[b];
			if (up >= 0 && !p->stale[up]) {
				p->stale[up] = 1;
				p->todo[next++] = up; /* behind q: the todo of this level is read in order */
			}
		}
		m = next;
	}
	if (lost)
		set_holders(p, g, out);
}

int sim_patches_certify(sim_patches *p, const sim_world *w, const vsphere *balls, const int *list, int nd,
                        unsigned char *changed)
{
	holder_out out = {changed, 0};
	if (list) {
		for (int k = 0; k < nd; k++)
			if (list[k] >= 0 && list[k] < p->tri_count && p->tri_block[list[k]] >= 0)
				p->stale[p->tri_block[list[k]]] = 1;
		for (int gi = 0; gi < p->grid_count; gi++) {
			const patch_grid *g = &p->grids[gi];
			/* a stale block not certified stays so, and so do its ancestors (which would
			 * need it) */
			int m = 0;
			for (int b = g->first[1]; b < g->first[1] + g->bw[1] * g->bh[1]; b++) {
				if (p->stale[b] && p->cert[b])
					p->todo[m++] = b;
				else
					p->stale[b] = 0;
			}
			if (m > 0)
				recertify_grid(p, g, w, balls, m, &out);
		}
	} else {
		for (int gi = 0; gi < p->grid_count; gi++)
			certify_grid(p, &p->grids[gi], w, balls, &out);
		p->certified = 0;
		for (int b = 0; b < p->block_count; b++)
			p->certified += p->cert[b];
	}
	int held = 0, level1 = 0;
	for (int gi = 0; gi < p->grid_count; gi++) {
		const patch_grid *g = &p->grids[gi];
		for (int b = g->first[1]; b < g->first[1] + g->bw[1] * g->bh[1]; b++)
			held += p->top[b] >= 0;
		level1 += g->bw[1] * g->bh[1];
	}
	p->entries = 3 * held >= level1 && held > 0;
	return out.count;
}

bool sim_patches_debug_block(const sim_patches *p, int b, sim_patch_block_info *out)
{
	for (int gi = 0; gi < p->grid_count; gi++) {
		const patch_grid *g = &p->grids[gi];
		for (int k = 1; k <= g->levels; k++) {
			int rel = b - g->first[k];
			if (rel < 0 || rel >= g->bw[k] * g->bh[k])
				continue;
			int bi = rel % g->bw[k], bj = rel / g->bw[k], side = 1 << k;
			*out = (sim_patch_block_info){g->first_tri, g->qx, {bi * side, bj * side}, {0, 0}, k, {0}, 0.0, 0.0, false, false};
			out->q1[0] = (bi + 1) * side < g->qx ? (bi + 1) * side : g->qx;
			out->q1[1] = (bj + 1) * side < g->qy ? (bj + 1) * side : g->qy;
			memcpy(out->A, p->blocks[b].A, sizeof out->A);
			out->L = p->blocks[b].L;
			out->r = p->blocks[b].r;
			out->certified = p->cert[b];
			out->measured = p->blocks[b].n > 0;
			return true;
		}
	}
	return false;
}
