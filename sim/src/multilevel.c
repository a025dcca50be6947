/* Coarse levels of the implicit solve's multilevel preconditioner (see implicit.c for why
 * and for the finest level, multilevel.h for the interface).
 *
 * Level 1 aggregates the cloth's vertices in 2 x 2 squares (a last odd row or column in
 * pairs or alone), and each level below interpolates the one above bilinearly (coarsen);
 * every operator is the Galerkin product Pᵀ A P of the level above.  Both keep the
 * fine level's form
 *
 *     (A p)_I = D_I p_I + sum over edges E (p_I - p_J),
 *
 * D_I a symmetric 3x3 diagonal block (on level 1 the summed scalar diagonal plus the
 * blocks of springs to kinematic vertices, which the filter keeps on the free end's
 * diagonal only) and E a symmetric 3x3 block per coupled pair.  Products never form
 * D_I p_I - E p_J, which cancels in float for smooth p (the reason implicit.c's product
 * has this form).  With P constant on an aggregate, a spring inside one drops out of
 * level 1 and a spring between two adds its block to their coupling; the cloth's springs
 * reach two vertices (bend), so aggregates of 2 x 2 couple only to their 8 neighbours,
 * where interpolation from the cloth would couple each level 1 vertex to 24.  Below, a
 * 9-point level interpolated stays 9-point (coarsen).  So every coarse level is a
 * 9-point stencil, four edge families per vertex.  Levels are built until one has at
 * most DIRECT_MAX vertices; that one is solved exactly (Cholesky in double).
 *
 * Vectors are three planes (x, y, z); blocks six (S_XX ...).  A plane holds a level's n
 * values and then zeros to n + nx + 1, so an edge's partner p[I + offset] is always a
 * finite read and a missing edge (zero block, at the grid's border) contributes 0. */
#include "multilevel.h"

#include "sim_internal.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

enum { S_XX, S_XY, S_XZ, S_YY, S_YZ, S_ZZ, S_COUNT };

#define FAMILIES 4
/* (di, dj) of the four edge families: right, down-left, down, down-right.  Each edge is
 * stored once, at its end with the lower index. */
static const int family_di[FAMILIES] = {1, -1, 0, 1};
static const int family_dj[FAMILIES] = {0, 1, 1, 1};

#define MAX_LEVELS 24
/* The coarsest level's size: a dense 3n x 3n Cholesky factor in double per step and two
 * triangular solves per application.  On a 129 x 129 cloth the levels are 65, 33, 17, 9
 * and 5 vertices wide. */
#define DIRECT_MAX 36
/* The weight of the damped block Jacobi smoother on the coarse levels. */
#define COARSE_OMEGA 0.6f
/* ml_assemble's row scratch: six planes of a row's blocks. */
#define ROW_PLANES S_COUNT

/* Planes of a level, in order within its allocation. */
enum {
	L_DIAG = 0,                            /* six: D */
	L_EDGE = L_DIAG + S_COUNT,             /* 4 x six: the edge blocks */
	L_INV = L_EDGE + FAMILIES * S_COUNT,   /* six: inverse of the whole diagonal block */
	L_B = L_INV + S_COUNT,                 /* three each: right-hand side, solution, */
	L_X = L_B + 3,                         /* residual and edge terms */
	L_T = L_X + 3,
	L_U = L_T + 3,
	L_PLANES = L_U + 3
};

/* Level 1's rows per block of the parallel cycle and assembly (even: a block restricts
 * onto whole rows of level 2 and reads whole row pairs of the fine grid), and the level 1
 * size from which level 1's work runs through the world's task callbacks: a 129 x 129 cloth
 * (level 1 65 x 65, 9 blocks) is split, a 65 x 65 one (33 x 33) stays on the caller,
 * where the wake-ups would cost about what the split saves. */
#define BLOCK_ROWS 8
#define PARALLEL_MIN 2048
/* A block's edge terms: three planes per family. */
#define TERM_PLANES (FAMILIES * 3)

typedef struct ml_level {
	int nx, ny, n, st;
	float *mem; /* L_PLANES planes of st floats */
} ml_level;

struct ml_grid {
	int nx, ny;      /* the fine grid */
	int levels;      /* coarse levels, level l + 1 at lv[l] */
	ml_level lv[MAX_LEVELS];
	double *chol;    /* the coarsest level's Cholesky factor, 3n x 3n, lower triangle */
	double *work;    /* 3n */
	float *rows;     /* ROW_PLANES rows of the fine grid's width per block: ml_assemble's scratch */
	float *block_rows; /* a fine row per block of the parallel cycle: its restriction's scratch */
	float *block_terms; /* per block of the parallel cycle, its edge terms (TERM_PLANES planes of term_stride) */
	float *hrows;    /* three planes of level 1's rows restricted along their lines (restrict_rows_h) */
	float *line;     /* a row of level 2: the serial cycle's prolongation scratch */
	struct gal_patterns *pat; /* coarsen's terms in the interior */
	int term_stride;
	int chol_n;
	int64_t coarse_ns; /* in the levels below level 1 since ml_take_coarse_ns */
};

ml_grid *ml_create(void)
{
	return calloc(1, sizeof(ml_grid));
}

static void release(ml_grid *g)
{
	for (int l = 0; l < g->levels; l++)
		free(g->lv[l].mem);
	free(g->chol);
	free(g->work);
	free(g->rows);
	free(g->block_rows);
	free(g->block_terms);
	free(g->hrows);
	free(g->line);
	free(g->pat);
	g->hrows = g->line = NULL;
	g->pat = NULL;
	g->levels = 0;
	g->chol = g->work = NULL;
	g->rows = g->block_rows = g->block_terms = NULL;
}

void ml_destroy(ml_grid *g)
{
	if (!g)
		return;
	release(g);
	free(g);
}

static struct gal_patterns *gal_patterns_create(void);

bool ml_reserve(ml_grid *g, int nx, int ny)
{
	if (g->nx == nx && g->ny == ny && g->levels > 0)
		return true;
	release(g);
	g->nx = g->ny = 0;
	int cx = nx, cy = ny;
	for (int l = 0; l < MAX_LEVELS; l++) {
		cx = (cx + 1) / 2, cy = (cy + 1) / 2;
		ml_level *L = &g->lv[l];
		L->nx = cx, L->ny = cy, L->n = cx * cy;
		/* room for the partner of the last vertex's farthest edge, rounded up */
		L->st = (L->n + cx + 2 + 31) / 32 * 32 + 32;
		/* zeroed: the planes' tails are read and must stay finite */
		L->mem = calloc((size_t)L_PLANES * (size_t)L->st, sizeof(float));
		g->levels = l + 1;
		if (!L->mem) {
			release(g);
			return false;
		}
		if (L->n <= DIRECT_MAX)
			break;
	}
	const int n3 = 3 * g->lv[g->levels - 1].n;
	g->chol = malloc(sizeof(double) * (size_t)n3 * (size_t)n3);
	g->work = malloc(sizeof(double) * (size_t)n3);
	const int blocks = (g->lv[0].ny + BLOCK_ROWS - 1) / BLOCK_ROWS;
	g->rows = malloc(sizeof(float) * ROW_PLANES * (size_t)blocks * (size_t)nx);
	g->block_rows = malloc(sizeof(float) * (size_t)blocks * (size_t)nx);
	/* a block's rows and the row and vertex before them */
	g->term_stride = ((BLOCK_ROWS + 1) * g->lv[0].nx + 1 + 15) / 16 * 16;
	g->block_terms = malloc(sizeof(float) * TERM_PLANES * (size_t)g->term_stride * (size_t)blocks);
	/* level 2's sizes, or level 1's where it is the last (then unused) */
	const ml_level *L2 = &g->lv[g->levels > 1 ? 1 : 0];
	g->hrows = malloc(sizeof(float) * 3 * (size_t)g->lv[0].ny * (size_t)L2->nx);
	g->line = malloc(sizeof(float) * (size_t)L2->nx);
	g->pat = gal_patterns_create();
	if (!g->chol || !g->work || !g->rows || !g->block_rows || !g->block_terms || !g->hrows || !g->line || !g->pat) {
		release(g);
		return false;
	}
	g->chol_n = n3;
	g->nx = nx, g->ny = ny;
	return true;
}

int ml_levels(const ml_grid *g)
{
	return g->levels;
}

void ml_level_size(const ml_grid *g, int l, int *nx, int *ny)
{
	*nx = g->lv[l - 1].nx, *ny = g->lv[l - 1].ny;
}

int ml_level1_count(const ml_grid *g)
{
	return g->levels > 0 ? g->lv[0].n : 0;
}

/* ---- assembly ----------------------------------------------------------------------------- */

static void add_block(float *planes, int st, int i, const float s[S_COUNT])
{
	for (int k = 0; k < S_COUNT; k++)
		planes[k * st + i] += s[k];
}

static void clear_level(ml_level *L)
{
	memset(L->mem, 0, sizeof(float) * (size_t)(L_INV + S_COUNT) * (size_t)L->st);
}

/* The inverse of each vertex's whole diagonal block, D + the blocks of its edges, in
 * double (0 where the block is singular: an aggregate of kinematic vertices only). */
static void invert_range(ml_level *L, int lo, int hi)
{
	const int st = L->st;
	float *inv = L->mem + L_INV * st;
	const float *diag = L->mem + L_DIAG * st, *edge = L->mem + L_EDGE * st;
	for (int k = 0; k < S_COUNT; k++)
		memcpy(inv + k * st + lo, diag + k * st + lo, sizeof(float) * (size_t)(hi - lo));
	for (int f = 0; f < FAMILIES; f++) {
		const int off = family_dj[f] * L->nx + family_di[f];
		const float *e = edge + f * S_COUNT * st;
		const int a = lo > off ? lo : off;
		for (int k = 0; k < S_COUNT; k++) {
			for (int i = lo; i < hi; i++)
				inv[k * st + i] += e[k * st + i];
			for (int i = a; i < hi; i++)
				inv[k * st + i] += e[k * st + i - off];
		}
	}
	for (int i = lo; i < hi; i++) {
		double a00 = inv[S_XX * st + i], a01 = inv[S_XY * st + i], a02 = inv[S_XZ * st + i];
		double a11 = inv[S_YY * st + i], a12 = inv[S_YZ * st + i], a22 = inv[S_ZZ * st + i];
		double c00 = a11 * a22 - a12 * a12, c01 = a02 * a12 - a01 * a22, c02 = a01 * a12 - a02 * a11;
		double c11 = a00 * a22 - a02 * a02, c12 = a01 * a02 - a00 * a12, c22 = a00 * a11 - a01 * a01;
		double det = a00 * c00 + a01 * c01 + a02 * c02;
		double f = det > 0.0 ? 1.0 / det : 0.0;
		inv[S_XX * st + i] = (float)(c00 * f);
		inv[S_XY * st + i] = (float)(c01 * f);
		inv[S_XZ * st + i] = (float)(c02 * f);
		inv[S_YY * st + i] = (float)(c11 * f);
		inv[S_YZ * st + i] = (float)(c12 * f);
		inv[S_ZZ * st + i] = (float)(c22 * f);
	}
}

/* The whole level; the tails stay zero (the ranges cover [0, n) only). */
static void invert_level(ml_level *L)
{
	invert_range(L, 0, L->n);
}

/* Below level 1 the levels are linked by bilinear interpolation: coarse vertex (I, J)
 * sits on vertex (2I, 2J) of the level above, which takes its value whole; a vertex
 * between two coarse ones takes half of each, one in the middle of four a quarter of
 * each, and the last column or row of an even-sized level, which has no coarse
 * neighbour beyond it, takes its one coarse neighbour whole.  Every row of P sums to 1.
 * Aggregation's corrections are flat on each aggregate, and level after level they fit
 * the smooth errors the coarse levels are there for less well: with interpolation below
 * level 1 the drape's solve takes about a fifth fewer iterations at nearly the same cost
 * per iteration (docs/benchmarks.md, "Bilinear coarse levels").  An edge's two ends
 * reach at most a 2 x 2 square of coarse vertices, so a 9-point level stays 9-point. */

/* Fine index i of a line of n onto a line of c = (n + 1) / 2 coarse ones: up to two
 * coarse indices and their weights. */
static int line_weights(int i, int c, int idx[2], double w[2])
{
	idx[0] = i >> 1;
	if (!(i & 1) || (i >> 1) + 1 >= c) {
		w[0] = 1.0;
		return 1;
	}
	idx[1] = idx[0] + 1;
	w[0] = w[1] = 0.5;
	return 2;
}

/* The coarse vertices of fine vertex (i, j) and their weights (up to four, in increasing
 * index, which is y then x), by their coordinates. */
static int vertex_weights(const ml_level *C, int i, int j, int xy[4][2], double w[4])
{
	int xi[2], yi[2];
	double xw[2], yw[2];
	const int nxs = line_weights(i, C->nx, xi, xw), nys = line_weights(j, C->ny, yi, yw);
	int m = 0;
	for (int b = 0; b < nys; b++)
		for (int a = 0; a < nxs; a++, m++)
			xy[m][0] = xi[a], xy[m][1] = yi[b], w[m] = yw[b] * xw[a];
	return m;
}

/* One term of coarsen: `c` times a fine block onto the block `group` (0 the diagonal,
 * 1 + g the edge of family g) of coarse vertex (x, y). */
typedef struct gal_term {
	int group, x, y;
	double c;
} gal_term;

/* Sources of coarse terms at a fine vertex: its diagonal block (GAL_DIAG) or the edge of
 * family f stored at it. */
#define GAL_DIAG FAMILIES
#define GAL_SOURCES (FAMILIES + 1)
/* A diagonal: up to four weights and their six pairs; an edge: its two ends reach at most
 * a 2 x 2 square of coarse vertices, six pairs. */
#define GAL_MAX_TERMS 10

/* The term from K to L (K < L, within a 2 x 2 square: L is one of K's families). */
static gal_term edge_term(const int k[2], const int l[2], double c)
{
	const int dx = l[0] - k[0], dy = l[1] - k[1];
	return (gal_term){1 + (dy == 0 ? 0 : dx < 0 ? 1 : dx == 0 ? 2 : 3), k[0], k[1], c};
}

/* The terms of source `src` at fine vertex (i, j) of F onto C, C = Pᵀ F P in the levels'
 * form D_K p_K + sum of E (p_K - p_L).  With every row of P summing to 1, a diagonal D_i
 * adds P_iK D_i to D_K and -P_iK P_iL D_i to the edge K-L, and an edge i-j with block E
 * adds -w_K w_L E to the edge K-L, w = P_i - P_j (which sums to 0): Pᵀ (e_i - e_j)(e_i -
 * e_j)ᵀ P = w wᵀ = -sum over K < L of w_K w_L (e_K - e_L)(e_K - e_L)ᵀ, and the same
 * identity with sum 1 for the diagonal.  So no entry is formed as a difference of large
 * terms that cancel (the reason for the levels' form).  Returns how many (0 for an edge
 * off the grid). */
static int vertex_terms(const ml_level *F, const ml_level *C, int i, int j, int src, gal_term *out)
{
	int xa[4][2];
	double wa[4];
	const int na = vertex_weights(C, i, j, xa, wa);
	int n = 0;
	if (src == GAL_DIAG) {
		for (int p = 0; p < na; p++) {
			out[n++] = (gal_term){0, xa[p][0], xa[p][1], wa[p]};
			for (int q = p + 1; q < na; q++)
				out[n++] = edge_term(xa[p], xa[q], -wa[p] * wa[q]);
		}
		return n;
	}
	const int bi = i + family_di[src], bj = j + family_dj[src];
	if (bi < 0 || bi >= F->nx || bj >= F->ny)
		return 0;
	int xb[4][2], xw[8][2];
	double wb[4], w[8];
	const int nb = vertex_weights(C, bi, bj, xb, wb);
	/* w = P_a - P_b over the coarse vertices of either, in increasing index */
	int m = 0;
	for (int p = 0, q = 0; p < na || q < nb; m++) {
		const long ka = p < na ? (long)xa[p][1] * C->nx + xa[p][0] : -1;
		const long kb = q < nb ? (long)xb[q][1] * C->nx + xb[q][0] : -1;
		if (q >= nb || (p < na && ka < kb))
			xw[m][0] = xa[p][0], xw[m][1] = xa[p][1], w[m] = wa[p], p++;
		else if (p >= na || kb < ka)
			xw[m][0] = xb[q][0], xw[m][1] = xb[q][1], w[m] = -wb[q], q++;
		else
			xw[m][0] = xa[p][0], xw[m][1] = xa[p][1], w[m] = wa[p] - wb[q], p++, q++;
	}
	for (int p = 0; p < m; p++)
		for (int q = p + 1; q < m; q++)
			if (w[p] != 0.0 && w[q] != 0.0)
				out[n++] = edge_term(xw[p], xw[q], -w[p] * w[q]);
	return n;
}

/* C's planes += the terms of source src at fine vertex (i, j) of F. */
static void add_terms(const ml_level *F, ml_level *C, int i, int j, int src)
{
	gal_term t[GAL_MAX_TERMS];
	const int n = vertex_terms(F, C, i, j, src, t), a = j * F->nx + i;
	const float *blk = F->mem + (src == GAL_DIAG ? L_DIAG : L_EDGE + src * S_COUNT) * F->st;
	float *planes = C->mem + L_DIAG * C->st;
	for (int m = 0; m < n; m++)
		for (int k = 0; k < S_COUNT; k++)
			planes[(size_t)(t[m].group * S_COUNT + k) * (size_t)C->st + t[m].y * C->nx + t[m].x] +=
			    (float)t[m].c * blk[k * F->st + a];
}

/* dst[k dst_st + m] += c src[k src_st + 2m] for the six planes k of a block and m < n: one
 * term over a row's vertices of one column parity. */
SIM_VECTOR_CLONES
static void add_scaled_even(float *restrict dst, int dst_st, const float *restrict src, int src_st, float c, int n)
{
	for (int k = 0; k < S_COUNT; k++)
		for (int m = 0; m < n; m++)
			dst[k * dst_st + m] += c * src[k * src_st + 2 * m];
}

/* A fine index whose weights are the interior's: even, or with a coarse neighbour on
 * either side (line_weights). */
static bool regular(int i, int c)
{
	return !(i & 1) || (i >> 1) + 1 < c;
}

/* The interior's terms of coarsen by source and parities, relative to (i >> 1, j >> 1). */
typedef struct gal_patterns {
	gal_term term[GAL_SOURCES][2][2][GAL_MAX_TERMS];
	int count[GAL_SOURCES][2][2];
} gal_patterns;

/* From a vertex of a grid large enough that none of its weights meets an edge. */
static void gal_patterns_init(gal_patterns *p)
{
	const ml_level big_f = {.nx = 15, .ny = 15}, big_c = {.nx = 8, .ny = 8};
	for (int src = 0; src < GAL_SOURCES; src++)
		for (int pj = 0; pj < 2; pj++)
			for (int pi = 0; pi < 2; pi++) {
				gal_term *t = p->term[src][pj][pi];
				const int n = vertex_terms(&big_f, &big_c, 6 + pi, 6 + pj, src, t);
				for (int m = 0; m < n; m++)
					t[m].x -= 3, t[m].y -= 3;
				p->count[src][pj][pi] = n;
			}
}

static gal_patterns *gal_patterns_create(void)
{
	gal_patterns *p = malloc(sizeof *p);
	if (p)
		gal_patterns_init(p);
	return p;
}

/* coarsen's work for the fine rows [j0, j1), row by row.  A source's terms at vertices
 * of the same row and column parities whose weights are the interior's are the same up
 * to a shift, so they go a row at a time in vector loops; the others (an even-sized
 * level's last row or column) one by one. */
static void coarsen_rows(const ml_level *F, ml_level *C, const gal_patterns *pat, int j0, int j1)
{
	const int fst = F->st, cst = C->st, cnx = C->nx;
	float *planes = C->mem + L_DIAG * cst;
	const bool even_x = !(F->nx & 1);
	for (int j = j0; j < j1; j++) {
		for (int src = 0; src < GAL_SOURCES; src++) {
			const int di = src == GAL_DIAG ? 0 : family_di[src], dj = src == GAL_DIAG ? 0 : family_dj[src];
			if (j + dj >= F->ny)
				continue;
			/* the columns whose edge is on the grid, the last apart in an even-sized level */
			const int lo = di < 0 ? -di : 0, hi = F->nx - 1 - (di > 0 ? di : 0);
			if (!regular(j, C->ny) || !regular(j + dj, C->ny)) {
				for (int i = lo; i <= hi; i++)
					add_terms(F, C, i, j, src);
				continue;
			}
			const int hi_regular = even_x ? hi - 1 : hi;
			const float *blk = F->mem + (src == GAL_DIAG ? L_DIAG : L_EDGE + src * S_COUNT) * fst + j * F->nx;
			for (int pi = 0; pi < 2; pi++) {
				/* i = 2m + pi for m in [m0, m1) */
				const int m0 = (lo - pi + 1) >> 1, m1 = hi_regular >= pi ? ((hi_regular - pi) >> 1) + 1 : 0;
				if (m1 <= m0)
					continue;
				const gal_term *t = pat->term[src][j & 1][pi];
				for (int q = 0; q < pat->count[src][j & 1][pi]; q++) {
					const int at = ((j >> 1) + t[q].y) * cnx + t[q].x + m0;
					add_scaled_even(planes + (size_t)t[q].group * S_COUNT * (size_t)cst + at, cst,
					                blk + 2 * m0 + pi, fst, (float)t[q].c, m1 - m0);
				}
			}
			if (hi_regular < hi)
				add_terms(F, C, hi, j, src);
		}
	}
}

/* Fine rows in bands of COARSEN_ROWS: a band's rows write coarse rows b COARSEN_ROWS / 2
 * to b COARSEN_ROWS / 2 + COARSEN_ROWS / 2 (the row after its own), so the even bands
 * write disjoint rows, and so do the odd ones. */
#define COARSEN_ROWS 4

typedef struct coarsen_task {
	const ml_level *F;
	ml_level *C;
	const gal_patterns *pat;
	int parity; /* the bands 2k + parity */
} coarsen_task;

static void coarsen_range(int start, int end, int worker, void *ctx)
{
	const coarsen_task *k = ctx;
	(void)worker;
	for (int b = start; b < end; b++) {
		const int j0 = (2 * b + k->parity) * COARSEN_ROWS;
		coarsen_rows(k->F, k->C, k->pat, j0, j0 + COARSEN_ROWS < k->F->ny ? j0 + COARSEN_ROWS : k->F->ny);
	}
}

/* Level l + 1 from level l (both at least level 1): C = Pᵀ F P, P the bilinear
 * interpolation (vertex_terms).  Summed in float, as level 1's assembly: the weights are
 * powers of two, and the terms that cancel (a fine edge adds to the coarse edges across
 * it with both signs) leave the coarse operator within float rounding of Pᵀ F P, which
 * a preconditioner needs no closer (test_multilevel_galerkin).  The even bands of rows,
 * then the odd ones: every entry gets its terms in that one order, and with w a large
 * level's bands of each parity go through w's task callbacks, with the same bits. */
static void coarsen(const ml_level *F, ml_level *C, const gal_patterns *pat, const sim_world *w)
{
	clear_level(C);
	const int bands = (F->ny + COARSEN_ROWS - 1) / COARSEN_ROWS;
	const bool par = w && w->def.enqueue_task && w->def.worker_count > 1 && F->n >= PARALLEL_MIN;
	for (int parity = 0; parity < 2; parity++) {
		coarsen_task k = {F, C, pat, parity};
		const int count = (bands - parity + 1) / 2;
		if (par)
			sim_parallel_for(w, coarsen_range, count, 1, &k);
		else
			coarsen_range(0, count, 0, &k);
	}
}

/* y[i] -= x[i] s. */
SIM_VECTOR_CLONES
static void column_update(double *restrict y, const double *restrict x, double s, int n)
{
	for (int i = 0; i < n; i++)
		y[i] -= x[i] * s;
}

/* The coarsest level as a dense matrix, factored by Cholesky in double.  A vertex with
 * an empty row (kinematic aggregate) gets an identity row: its right-hand side is 0. */
static void factor_coarsest(ml_grid *g)
{
	const ml_level *L = &g->lv[g->levels - 1];
	const int n = L->n, n3 = 3 * n, st = L->st;
	double *K = g->chol;
	memset(K, 0, sizeof(double) * (size_t)n3 * (size_t)n3);
	static const int pair[S_COUNT][2] = {{0, 0}, {0, 1}, {0, 2}, {1, 1}, {1, 2}, {2, 2}};
	const float *diag = L->mem + L_DIAG * st, *edge = L->mem + L_EDGE * st;
	for (int i = 0; i < n; i++) {
		for (int k = 0; k < S_COUNT; k++) {
			const int r = 3 * i + pair[k][0], c = 3 * i + pair[k][1];
			K[(size_t)r * n3 + c] += diag[k * st + i];
		}
	}
	for (int f = 0; f < FAMILIES; f++) {
		const int off = family_dj[f] * L->nx + family_di[f];
		for (int a = 0; a < n; a++) {
			const int ai = a % L->nx, aj = a / L->nx, bi = ai + family_di[f], bj = aj + family_dj[f];
			if (bi < 0 || bi >= L->nx || bj >= L->ny)
				continue;
			const int b = a + off;
			for (int k = 0; k < S_COUNT; k++) {
				const double s = edge[(f * S_COUNT + k) * st + a];
				const int p = pair[k][0], q = pair[k][1];
				K[(size_t)(3 * a + p) * n3 + 3 * a + q] += s;
				K[(size_t)(3 * b + p) * n3 + 3 * b + q] += s;
				K[(size_t)(3 * a + p) * n3 + 3 * b + q] -= s;
				K[(size_t)(3 * b + p) * n3 + 3 * a + q] -= s;
				if (p != q) {
					K[(size_t)(3 * a + q) * n3 + 3 * b + p] -= s;
					K[(size_t)(3 * b + q) * n3 + 3 * a + p] -= s;
				}
			}
		}
	}
	/* The factor L is kept by columns: L[r][c] (r >= c) at c n3 + r, where the upper
	 * triangle was, so that the loops below run along contiguous columns. */
	for (int r = 0; r < n3; r++)
		for (int c = 0; c < r; c++)
			K[(size_t)c * n3 + r] = K[(size_t)c * n3 + r] != 0.0 ? K[(size_t)c * n3 + r] : K[(size_t)r * n3 + c];
	/* Column by column, each column's update of the columns right of it at once: every
	 * entry still gets its terms in the order k = 0, 1, ... of the row-by-row form
	 * (L[r][c] = (A[r][c] - sum over k < c of L[r][k] L[c][k]) / L[c][c]), and the
	 * update vectorises along the columns. */
	for (int c = 0; c < n3; c++) {
		double *col = K + (size_t)c * n3;
		/* an empty row, or rounding on a singular aggregate: decouple the unknown */
		const bool empty = !(col[c] > 0.0);
		const double d = empty ? 1.0 : sqrt(col[c]);
		col[c] = d;
		for (int r = c + 1; r < n3; r++)
			col[r] = (empty ? 0.0 : col[r]) / d;
		for (int t = c + 1; t < n3; t++)
			column_update(K + (size_t)t * n3 + t, col + t, col[t], n3 - t);
	}
}

/* out[k] (+)= t[2k] + t[2k + 1] for the pairs of one row, then the odd column alone. */
SIM_VECTOR_CLONES
static void pair_row(float *restrict out, const float *restrict t, int nx, bool accumulate)
{
	const int pairs = nx / 2;
	for (int k = 0; k < pairs; k++)
		out[k] = (accumulate ? out[k] : 0.0f) + (t[2 * k] + t[2 * k + 1]);
	if (nx & 1)
		out[pairs] = (accumulate ? out[pairs] : 0.0f) + t[nx - 1];
}

/* out[k + shift] += v[2k + parity] for the k with both in range: one parity class of a
 * fine row's springs onto a row of level 1. */
SIM_VECTOR_CLONES
static void add_class(float *restrict out, const float *restrict v, int parity, int shift, int nx, int cnx)
{
	const int k0 = shift < 0 ? -shift : 0;
	int k1 = (nx - parity + 1) / 2;
	k1 = k1 < cnx - shift ? k1 : cnx - shift;
	for (int k = k0; k < k1; k++)
		out[k + shift] += v[2 * k + parity];
}

/* One fine row's springs of a run: the blocks beta I + w wᵀ of those between free
 * vertices (zero for the others: the masks are 0 or 1), six planes `rs` apart; returns
 * whether any spring has exactly one free end. */
SIM_VECTOR_CLONES
static bool spring_row(const float *restrict wx, const float *restrict wy, const float *restrict wz,
                       const float *restrict beta, const float *restrict ma, const float *restrict mb,
                       float *restrict out, int rs, int count)
{
	float one_free = 0.0f;
	for (int i = 0; i < count; i++) {
		const float both = ma[i] * mb[i];
		one_free += (ma[i] + mb[i]) - 2.0f * both;
		out[S_XX * rs + i] = both * (wx[i] * wx[i] + beta[i]);
		out[S_XY * rs + i] = both * (wx[i] * wy[i]);
		out[S_XZ * rs + i] = both * (wx[i] * wz[i]);
		out[S_YY * rs + i] = both * (wy[i] * wy[i] + beta[i]);
		out[S_YZ * rs + i] = both * (wy[i] * wz[i]);
		out[S_ZZ * rs + i] = both * (wz[i] * wz[i] + beta[i]);
	}
	return one_free != 0.0f;
}

SIM_VECTOR_CLONES
static void masked_row(float *restrict t, const float *restrict d, const float *restrict mask, int nx)
{
	for (int i = 0; i < nx; i++)
		t[i] = mask[i] * d[i];
}

/* Level 1's operator over its rows [j0, j1) (the fine rows onto them), with `rows`
 * (ROW_PLANES fine rows) of scratch.  Every entry of those rows gets the additions of the
 * whole level's assembly in its order: the fine diagonal, rows in pairs; then run after
 * run, fine row after fine row, the springs to kinematic vertices and the spring blocks'
 * parity classes.  A fine row whose springs reach into [j0, j1) from the row before is
 * computed here too, and only its contributions to [j0, j1) are added, so the result
 * does not depend on how the rows are split. */
static void assemble_rows(ml_grid *g, const float *diag, const float *mask, const ml_fine_run *runs, int run_count,
                          float *rows, int j0, int j1)
{
	ml_level *C = &g->lv[0];
	const int nx = g->nx, cnx = C->nx, cst = C->st;
	float *cdiag = C->mem + L_DIAG * cst, *cedge = C->mem + L_EDGE * cst;
	/* the tails of the last rows' planes too: they are read and must stay 0 */
	const int lo = j0 * cnx, hi = j1 == C->ny ? cst : j1 * cnx;
	for (int p = 0; p < L_INV; p++)
		memset(C->mem + (size_t)p * (size_t)cst + lo, 0, sizeof(float) * (size_t)(hi - lo));
	/* a row's pairs of columns, and rows in pairs: the same order of additions for every
	 * aggregate */
	const int f0 = 2 * j0, f1 = 2 * j1 < g->ny ? 2 * j1 : g->ny;
	for (int j = f0; j < f1; j++) {
		masked_row(rows, diag + j * nx, mask + j * nx, nx);
		static const int diagonal[3] = {S_XX, S_YY, S_ZZ};
		for (int k = 0; k < 3; k++)
			pair_row(cdiag + diagonal[k] * cst + (j >> 1) * cnx, rows, nx, true);
	}
	for (int r = 0; r < run_count; r++) {
		const ml_fine_run *run = &runs[r];
		/* where a spring between free vertices goes depends on the parity of its a-end's
		 * row and column only: inside an aggregate (family -1), or to the edge of one
		 * family stored at the a-end's or the b-end's aggregate */
		int fam[2][2], at_b[2][2];
		for (int pj = 0; pj < 2; pj++) {
			for (int pi = 0; pi < 2; pi++) {
				const int cdi = ((pi + run->di + 4) >> 1) - 2, cdj = (pj + run->dj) >> 1;
				fam[pj][pi] = -1, at_b[pj][pi] = 0;
				for (int f = 0; f < FAMILIES; f++) {
					if (cdi == family_di[f] && cdj == family_dj[f])
						fam[pj][pi] = f;
					else if (cdi == -family_di[f] && cdj == -family_dj[f])
						fam[pj][pi] = f, at_b[pj][pi] = 1;
				}
			}
		}
		const int off = run->dj * nx + run->di, span = run->i1 - run->i0;
		const int rows_of_run = (run->count - span) / nx + 1;
		/* the run's fine rows with an end in [f0, f1) */
		const int r0 = f0 - run->dj > 0 ? f0 - run->dj : 0, r1 = f1 < rows_of_run ? f1 : rows_of_run;
		memset(rows, 0, sizeof(float) * ROW_PLANES * (size_t)nx);
		for (int j = r0; j < r1; j++) {
			const int m = j * nx, a = run->i0 + m; /* the row's first real spring */
			const bool one_free = spring_row(run->wx + m, run->wy + m, run->wz + m, run->beta + m, mask + a,
			                                 mask + a + off, rows + run->i0, nx, span);
			const int ja = j >> 1, jb = (j + run->dj) >> 1;
			const bool in_a = ja >= j0 && ja < j1, in_b = jb >= j0 && jb < j1;
			const int ra = ja * cnx, rb = jb * cnx;
			/* springs to a kinematic vertex (few): their block on the free end's diagonal */
			for (int i = run->i0; one_free && i < run->i1; i++) {
				const int ia = a + i - run->i0, ms = m + i - run->i0;
				const bool fa = mask[ia] != 0.0f, fb = mask[ia + off] != 0.0f;
				if (fa == fb || !(fa ? in_a : in_b))
					continue;
				const float wx = run->wx[ms], wy = run->wy[ms], wz = run->wz[ms], be = run->beta[ms];
				const float blk[S_COUNT] = {wx * wx + be, wx * wy, wx * wz, wy * wy + be, wy * wz, wz * wz + be};
				add_block(cdiag, cst, fa ? ra + (i >> 1) : rb + ((i + run->di) >> 1), blk);
			}
			for (int k = 0; k < S_COUNT; k++) {
				for (int p = 0; p < 2; p++) {
					const int shift = ((p + run->di + 4) >> 1) - 2;
					const int f = fam[j & 1][p];
					if (f < 0)
						continue;
					float *plane = cedge + (f * S_COUNT + k) * cst;
					if (at_b[j & 1][p]) {
						if (in_b)
							add_class(plane + rb, rows + k * nx, p, shift, nx, cnx);
					} else if (in_a) {
						add_class(plane + ra, rows + k * nx, p, 0, nx, cnx);
					}
				}
			}
		}
	}
}

typedef struct assemble_task {
	ml_grid *g;
	const float *diag, *mask;
	const ml_fine_run *runs;
	int run_count;
	bool invert; /* the second loop: the inverses of the blocks' diagonal blocks */
} assemble_task;

static void assemble_range(int start, int end, int worker, void *ctx)
{
	const assemble_task *k = ctx;
	ml_grid *g = k->g;
	ml_level *C = &g->lv[0];
	const int j0 = start * BLOCK_ROWS, j1 = end * BLOCK_ROWS < C->ny ? end * BLOCK_ROWS : C->ny;
	(void)worker;
	if (k->invert)
		invert_range(C, j0 * C->nx, j1 * C->nx);
	else /* the range's first block's scratch: ranges do not overlap */
		assemble_rows(g, k->diag, k->mask, k->runs, k->run_count,
		              g->rows + (size_t)start * ROW_PLANES * (size_t)g->nx, j0, j1);
}

void ml_assemble(ml_grid *g, const float *diag, const float *mask, const ml_fine_run *runs, int run_count,
                 const sim_world *w)
{
	ml_level *C = &g->lv[0];
	const int blocks = (C->ny + BLOCK_ROWS - 1) / BLOCK_ROWS;
	assemble_task k = {g, diag, mask, runs, run_count, false};
	if (!w || !w->def.enqueue_task || w->def.worker_count <= 1 || C->n < PARALLEL_MIN) {
		assemble_range(0, blocks, 0, &k);
		k.invert = true;
		assemble_range(0, blocks, 0, &k);
	} else {
		const int range = ml_even_range(blocks, BLOCK_ROWS, C->ny - (blocks - 1) * BLOCK_ROWS, w->def.worker_count);
		sim_parallel_for(w, assemble_range, blocks, range, &k);
		k.invert = true;
		sim_parallel_for(w, assemble_range, blocks, range, &k);
	}
	for (int l = 1; l < g->levels; l++) {
		coarsen(&g->lv[l - 1], &g->lv[l], g->pat, w);
		invert_level(&g->lv[l]);
	}
	factor_coarsest(g);
}

/* ---- the cycle ---------------------------------------------------------------------------- */

/* y += scale S x for the six-plane symmetric blocks S. */
SIM_VECTOR_CLONES
static void block_apply(const float *restrict s, const float *restrict x, float *restrict y, int n, int st,
                        float scale)
{
	for (int i = 0; i < n; i++) {
		float x0 = x[i], x1 = x[st + i], x2 = x[2 * st + i];
		float y0 = s[S_XX * st + i] * x0 + s[S_XY * st + i] * x1 + s[S_XZ * st + i] * x2;
		float y1 = s[S_XY * st + i] * x0 + s[S_YY * st + i] * x1 + s[S_YZ * st + i] * x2;
		float y2 = s[S_XZ * st + i] * x0 + s[S_YZ * st + i] * x1 + s[S_ZZ * st + i] * x2;
		y[i] += scale * y0;
		y[st + i] += scale * y1;
		y[2 * st + i] += scale * y2;
	}
}

/* out = y + scale S x: block_apply into other planes. */
SIM_VECTOR_CLONES
static void block_apply_to(const float *restrict s, const float *restrict x, const float *restrict y,
                           float *restrict out, int n, int st, float scale)
{
	for (int i = 0; i < n; i++) {
		float x0 = x[i], x1 = x[st + i], x2 = x[2 * st + i];
		float y0 = s[S_XX * st + i] * x0 + s[S_XY * st + i] * x1 + s[S_XZ * st + i] * x2;
		float y1 = s[S_XY * st + i] * x0 + s[S_YY * st + i] * x1 + s[S_YZ * st + i] * x2;
		float y2 = s[S_XZ * st + i] * x0 + s[S_YZ * st + i] * x1 + s[S_ZZ * st + i] * x2;
		out[i] = y[i] + scale * y0;
		out[st + i] = y[st + i] + scale * y1;
		out[2 * st + i] = y[2 * st + i] + scale * y2;
	}
}

/* x = omega inv b and t = b - D x in one pass (the smoother's first sweep from x = 0
 * and the diagonal part of its residual). */
SIM_VECTOR_CLONES
static void smooth_first(const float *restrict inv, const float *restrict d, const float *restrict b,
                         float *restrict x, float *restrict t, float omega, int n, int st)
{
	for (int i = 0; i < n; i++) {
		float b0 = b[i], b1 = b[st + i], b2 = b[2 * st + i];
		float x0 = omega * (inv[S_XX * st + i] * b0 + inv[S_XY * st + i] * b1 + inv[S_XZ * st + i] * b2);
		float x1 = omega * (inv[S_XY * st + i] * b0 + inv[S_YY * st + i] * b1 + inv[S_YZ * st + i] * b2);
		float x2 = omega * (inv[S_XZ * st + i] * b0 + inv[S_YZ * st + i] * b1 + inv[S_ZZ * st + i] * b2);
		x[i] = x0, x[st + i] = x1, x[2 * st + i] = x2;
		t[i] = b0 - (d[S_XX * st + i] * x0 + d[S_XY * st + i] * x1 + d[S_XZ * st + i] * x2);
		t[st + i] = b1 - (d[S_XY * st + i] * x0 + d[S_YY * st + i] * x1 + d[S_YZ * st + i] * x2);
		t[2 * st + i] = b2 - (d[S_XZ * st + i] * x0 + d[S_YZ * st + i] * x1 + d[S_ZZ * st + i] * x2);
	}
}

/* t = b - D x. */
SIM_VECTOR_CLONES
static void diag_residual(const float *restrict d, const float *restrict b, const float *restrict x,
                          float *restrict t, int n, int st)
{
	for (int i = 0; i < n; i++) {
		float x0 = x[i], x1 = x[st + i], x2 = x[2 * st + i];
		t[i] = b[i] - (d[S_XX * st + i] * x0 + d[S_XY * st + i] * x1 + d[S_XZ * st + i] * x2);
		t[st + i] = b[st + i] - (d[S_XY * st + i] * x0 + d[S_YY * st + i] * x1 + d[S_YZ * st + i] * x2);
		t[2 * st + i] = b[2 * st + i] - (d[S_XZ * st + i] * x0 + d[S_YZ * st + i] * x1 + d[S_ZZ * st + i] * x2);
	}
}

/* u = E (x_I - x_{I + off}) for one edge family (u's planes `us` apart). */
SIM_VECTOR_CLONES
static void edge_terms(const float *restrict e, const float *restrict x, float *restrict u, int off, int n, int st,
                       int us)
{
	for (int i = 0; i < n; i++) {
		float d0 = x[i] - x[i + off], d1 = x[st + i] - x[st + i + off], d2 = x[2 * st + i] - x[2 * st + i + off];
		u[i] = e[S_XX * st + i] * d0 + e[S_XY * st + i] * d1 + e[S_XZ * st + i] * d2;
		u[us + i] = e[S_XY * st + i] * d0 + e[S_YY * st + i] * d1 + e[S_YZ * st + i] * d2;
		u[2 * us + i] = e[S_XZ * st + i] * d0 + e[S_YZ * st + i] * d1 + e[S_ZZ * st + i] * d2;
	}
}

/* edge_terms, and t -= u as it goes (sim_plane_sub's arithmetic, t's planes st apart):
 * the subtraction without a second pass over u. */
SIM_VECTOR_CLONES
static void edge_terms_sub(const float *restrict e, const float *restrict x, float *restrict u, float *restrict t,
                           int off, int n, int st, int us)
{
	for (int i = 0; i < n; i++) {
		float d0 = x[i] - x[i + off], d1 = x[st + i] - x[st + i + off], d2 = x[2 * st + i] - x[2 * st + i + off];
		float u0 = e[S_XX * st + i] * d0 + e[S_XY * st + i] * d1 + e[S_XZ * st + i] * d2;
		float u1 = e[S_XY * st + i] * d0 + e[S_YY * st + i] * d1 + e[S_YZ * st + i] * d2;
		float u2 = e[S_XZ * st + i] * d0 + e[S_YZ * st + i] * d1 + e[S_ZZ * st + i] * d2;
		u[i] = u0, u[us + i] = u1, u[2 * us + i] = u2;
		t[i] -= u0, t[st + i] -= u1, t[2 * st + i] -= u2;
	}
}

/* t -= the edges' part of A x, t holding b - D x. */
static void edges_residual(ml_level *L, const float *x, float *t)
{
	const int st = L->st, n = L->n;
	float *u = L->mem + L_U * st;
	for (int f = 0; f < FAMILIES; f++) {
		const int off = family_dj[f] * L->nx + family_di[f];
		/* the terms first, then the two scatters: three loops that vectorise (one loop
		 * doing both scatters measured twice as slow) */
		edge_terms_sub(L->mem + (L_EDGE + f * S_COUNT) * st, x, u, t, off, n, st, st);
		for (int c = 0; c < 3; c++)
			if (off < n)
				sim_plane_add(t + c * st + off, u + c * st, n - off);
	}
}

void ml_level_multiply(ml_grid *g, int l, const float *x, float *y)
{
	/* the cycle's own product, t = b - A x with b = 0, through the level's planes */
	ml_level *L = &g->lv[l - 1];
	const int st = L->st, n = L->n;
	float *lx = L->mem + L_X * st, *lb = L->mem + L_B * st, *lt = L->mem + L_T * st;
	for (int c = 0; c < 3; c++) {
		memcpy(lx + c * st, x + c * n, sizeof(float) * (size_t)n);
		memset(lb + c * st, 0, sizeof(float) * (size_t)n);
	}
	diag_residual(L->mem + L_DIAG * st, lb, lx, lt, n, st);
	edges_residual(L, lx, lt);
	for (int c = 0; c < 3; c++)
		for (int i = 0; i < n; i++)
			y[c * n + i] = -lt[c * st + i];
}

/* The two triangular solves with the factor L (by columns, see factor_coarsest), each
 * row's terms in the order k = 0, 1, ... as by rows: the forward one a column at a time
 * (vectorised), the backward one row by row (L's rows are its stored columns). */
static void solve_coarsest(ml_grid *g)
{
	ml_level *L = &g->lv[g->levels - 1];
	const int n3 = g->chol_n, st = L->st;
	const double *K = g->chol;
	double *y = g->work;
	const float *b = L->mem + L_B * st;
	float *x = L->mem + L_X * st;
	for (int r = 0; r < n3; r++)
		y[r] = b[(r % 3) * st + r / 3];
	for (int k = 0; k < n3; k++) {
		const double *col = K + (size_t)k * n3;
		y[k] = y[k] / col[k];
		column_update(y + k + 1, col + k + 1, y[k], n3 - k - 1);
	}
	for (int r = n3 - 1; r >= 0; r--) {
		const double *col = K + (size_t)r * n3;
		double s = y[r];
		for (int k = r + 1; k < n3; k++)
			s -= col[k] * y[k];
		y[r] = s / col[r];
	}
	for (int r = 0; r < n3; r++)
		x[(r % 3) * st + r / 3] = (float)y[r];
}

/* h[K] = sum over i of P_iK t[i] along a line of n onto c: t[2K] and half of t[2K - 1]
 * and t[2K + 1] (the whole of an even line's last, line_weights). */
SIM_VECTOR_CLONES
static void restrict_line(float *restrict h, const float *restrict t, int n, int c)
{
	/* K = 0 and, for an odd n, K = c - 1 have one neighbour; the rest two */
	const int last = n & 1 ? c - 1 : c;
	h[0] = t[0] + 0.5f * (n > 1 ? (n == 2 ? 2.0f * t[1] : t[1]) : 0.0f);
	for (int K = 1; K < last; K++) {
		const float hi = 2 * K + 1 == n - 1 ? t[2 * K + 1] + t[2 * K + 1] : t[2 * K + 1];
		h[K] = t[2 * K] + 0.5f * (t[2 * K - 1] + hi);
	}
	if (n & 1 && c > 1)
		h[c - 1] = t[n - 1] + 0.5f * t[n - 2];
}

/* x[i] += sum over K of P_iK e[K] along a line of n from c (restrict_line's transpose). */
SIM_VECTOR_CLONES
static void prolong_line(float *restrict x, const float *restrict e, int n, int c)
{
	const int pairs = n / 2; /* (2K, 2K + 1) */
	for (int K = 0; K < pairs; K++) {
		x[2 * K] += e[K];
		x[2 * K + 1] += K + 1 < c ? 0.5f * (e[K] + e[K + 1]) : e[K];
	}
	if (n & 1)
		x[n - 1] += e[pairs];
}

/* Rows [j0, j1) of F's residual t, each restricted along its line into row j of h (a
 * plane of F->ny rows of C->nx): the first half of a restriction, which the parallel
 * cycle's blocks do for their rows, every row the same way (restrict_rows_v the
 * second, across the rows). */
static void restrict_rows_h(const ml_level *F, const ml_level *C, float *h, int j0, int j1)
{
	const int fst = F->st;
	const float *t = F->mem + L_T * fst;
	const size_t hp = (size_t)F->ny * (size_t)C->nx;
	for (int c = 0; c < 3; c++)
		for (int j = j0; j < j1; j++)
			restrict_line(h + c * hp + (size_t)j * (size_t)C->nx, t + c * fst + j * F->nx, F->nx, C->nx);
}

/* b of C from h (restrict_rows_h's rows): the rows' lines restricted across them. */
static void restrict_rows_v(const ml_level *F, ml_level *C, const float *h)
{
	const int cst = C->st, cnx = C->nx;
	const size_t hp = (size_t)F->ny * (size_t)cnx;
	float *b = C->mem + L_B * cst;
	for (int c = 0; c < 3; c++) {
		const float *hc = h + c * hp;
		for (int J = 0; J < C->ny; J++) {
			const float *mid = hc + (size_t)(2 * J) * (size_t)cnx;
			const float *lo = J > 0 ? mid - cnx : NULL, *hi = 2 * J + 1 < F->ny ? mid + cnx : NULL;
			const bool whole = 2 * J + 1 == F->ny - 1 && !(F->ny & 1);
			float *out = b + c * cst + J * cnx;
			for (int K = 0; K < cnx; K++) {
				const float l = lo ? lo[K] : 0.0f;
				float u = hi ? hi[K] : 0.0f;
				if (whole)
					u += u;
				out[K] = mid[K] + 0.5f * (l + u);
			}
		}
	}
}

/* Rows [j0, j1) of level l's x += P e, e level l + 1's x: each row's line from the
 * coarse row it lies on, or from half of each of the two it lies between (line, a row
 * of C->nx floats of scratch). */
static void prolong_rows_c(ml_level *F, const ml_level *C, float *line, int j0, int j1)
{
	const int fst = F->st, cst = C->st, cnx = C->nx;
	float *x = F->mem + L_X * fst;
	const float *e = C->mem + L_X * cst;
	for (int c = 0; c < 3; c++) {
		for (int j = j0; j < j1; j++) {
			const int J = j >> 1;
			const float *src = e + c * cst + J * cnx;
			if ((j & 1) && J + 1 < C->ny) {
				for (int K = 0; K < cnx; K++)
					line[K] = 0.5f * (src[K] + src[K + cnx]);
				src = line;
			}
			prolong_line(x + c * fst + j * F->nx, src, F->nx, cnx);
		}
	}
}

static void prolong_level(ml_level *F, const ml_level *C, float *line)
{
	prolong_rows_c(F, C, line, 0, F->ny);
}

static void vcycle(ml_grid *g, int l);

/* The levels below level 1, timed: in the parallel cycle they are the calling thread's
 * alone. */
static void coarse_cycle(ml_grid *g)
{
	int64_t t0 = sim_now_ns();
	/* level 1's rows were restricted along their lines by the blocks */
	restrict_rows_v(&g->lv[0], &g->lv[1], g->hrows);
	vcycle(g, 1);
	g->coarse_ns += sim_now_ns() - t0;
}

int64_t ml_take_coarse_ns(ml_grid *g)
{
	int64_t ns = g->coarse_ns;
	g->coarse_ns = 0;
	return ns;
}

static void vcycle(ml_grid *g, int l)
{
	if (l == g->levels - 1) {
		solve_coarsest(g);
		return;
	}
	ml_level *L = &g->lv[l];
	const int st = L->st, n = L->n;
	const float *inv = L->mem + L_INV * st, *b = L->mem + L_B * st;
	float *x = L->mem + L_X * st, *t = L->mem + L_T * st;
	const float *d = L->mem + L_DIAG * st;
	/* x = w D^-1 b; t = b - A x */
	smooth_first(inv, d, b, x, t, COARSE_OMEGA, n, st);
	edges_residual(L, x, t);
	restrict_rows_h(L, &g->lv[l + 1], g->hrows, 0, L->ny);
	if (l == 0)
		coarse_cycle(g);
	else {
		restrict_rows_v(L, &g->lv[l + 1], g->hrows);
		vcycle(g, l + 1);
	}
	prolong_level(L, &g->lv[l + 1], g->line);
	/* x += w D^-1 (b - A x): the same smoother after as before, so the cycle is symmetric */
	diag_residual(d, b, x, t, n, st);
	edges_residual(L, x, t);
	block_apply(inv, t, x, n, st, COARSE_OMEGA);
}

/* z[2k] += mask[2k] e[k], z[2k + 1] += mask[2k + 1] e[k] along one fine row: level 1's
 * correction onto the cloth, kinematic vertices filtered out. */
SIM_VECTOR_CLONES
static void prolong_row(float *restrict z, const float *restrict mask, const float *restrict e, int nx)
{
	const int pairs = nx / 2;
	for (int k = 0; k < pairs; k++) {
		z[2 * k] += mask[2 * k] * e[k];
		z[2 * k + 1] += mask[2 * k + 1] * e[k];
	}
	if (nx & 1)
		z[nx - 1] += mask[nx - 1] * e[pairs];
}

/* Fine rows [2 j0, 2 j1) of z += the prolongation of level 1's solution, in its planes
 * from `plane` (L_X, or L_U after the parallel cycle). */
static void prolong_rows(ml_grid *g, float *z, const float *mask, int stride, int plane, int j0, int j1)
{
	const ml_level *C = &g->lv[0];
	const int nx = g->nx, f1 = 2 * j1 < g->ny ? 2 * j1 : g->ny;
	const float *x = C->mem + plane * C->st;
	for (int c = 0; c < 3; c++)
		for (int j = 2 * j0; j < f1; j++)
			prolong_row(z + (size_t)c * (size_t)stride + (size_t)j * (size_t)nx, mask + j * nx,
			            x + c * C->st + (j >> 1) * C->nx, nx);
}

/* One fine row's filtered residual mask (r - q), into a row of scratch. */
SIM_VECTOR_CLONES
static void residual_row(float *restrict t, const float *restrict r, const float *restrict q,
                         const float *restrict mask, int nx)
{
	for (int i = 0; i < nx; i++)
		t[i] = mask[i] * (r[i] - q[i]);
}

/* Rows [j0, j1) of level 1's right-hand side from the fine residual mask (r - q), a
 * fine row at a time through the row of scratch t: the same additions in the same order
 * whichever rows a call is given. */
static void restrict_rows(ml_grid *g, const float *r, const float *q, const float *mask, int stride, float *t,
                          int j0, int j1)
{
	ml_level *C = &g->lv[0];
	const int cst = C->st, nx = g->nx;
	float *b = C->mem + L_B * cst;
	const int f0 = 2 * j0, f1 = 2 * j1 < g->ny ? 2 * j1 : g->ny;
	for (int c = 0; c < 3; c++) {
		for (int j = f0; j < f1; j++) {
			const size_t at = (size_t)c * (size_t)stride + (size_t)j * (size_t)nx;
			residual_row(t, r + at, q + at, mask + j * nx, nx);
			pair_row(b + c * cst + (j >> 1) * C->nx, t, nx, (j & 1) != 0);
		}
	}
}

/* The serial cycle, for hierarchies too small to split. */
static void cycle_serial(ml_grid *g, const float *r, const float *q, const float *mask, int stride, float *z,
                         ml_product_fn *product, void *product_ctx)
{
	if (product)
		product(product_ctx, 0, g->nx * g->ny, 0);
	/* a row of scratch: level 1's residual plane is free until the cycle writes it */
	restrict_rows(g, r, q, mask, stride, g->lv[0].mem + L_U * g->lv[0].st, 0, g->lv[0].ny);
	vcycle(g, 0);
	prolong_rows(g, z, mask, stride, L_X, 0, g->lv[0].ny);
}

/* ---- the parallel cycle --------------------------------------------------------------------
 * Level 1's work (the bulk of the coarse levels: level 2 is a quarter of it) in blocks of
 * BLOCK_ROWS rows, through the world's task callbacks; the levels below run on the
 * caller.  Each phase writes only its block's entries, and every entry gets the serial
 * cycle's operations in the serial cycle's order, so the result is the serial cycle's bit
 * for bit whatever the number of workers.  An entry's residual takes the edge terms of
 * its own edges and of the edges that reach it from the row before (edges_residual's
 * order: family by family, the subtraction then the addition), so a block computes the
 * terms of its rows and of the row and vertex before them (those are computed twice, by
 * two blocks, the same way) into its own scratch.  Four phases, a barrier between two
 * where a block reads its neighbours' entries: the product q = A z over the block's fine
 * rows (when ml_apply computes it), restriction from the fine grid and the first
 * smoothing sweep; the residual and its restriction to level 2; then, after the
 * levels below, prolongation and the diagonal residual; the residual, the last sweep (into
 * L_U: the neighbours still read x) and the prolongation of the block's rows onto the
 * cloth. */

typedef enum { CP_FIRST, CP_DOWN, CP_UP, CP_LAST, CP_COUNT } cycle_phase;

typedef struct cycle_task {
	ml_grid *g;
	cycle_phase phase;
	const float *r, *q, *mask;
	int stride;
	float *z;
	ml_product_fn *product;
	void *product_ctx;
} cycle_task;

/* t -= the edges' part of A x over [lo, hi): the four families' terms over [h0, hi), h0
 * a row and a vertex before lo (or 0), into u (TERM_PLANES planes `us` apart), then each
 * entry's own term subtracted and the term of the edge reaching it added, family by
 * family. */
static void block_residual(ml_level *L, const float *x, float *t, float *u, int us, int lo, int hi)
{
	const int st = L->st, n = L->n, h0 = lo - (L->nx + 1) > 0 ? lo - (L->nx + 1) : 0;
	for (int f = 0; f < FAMILIES; f++) {
		const int off = family_dj[f] * L->nx + family_di[f];
		float *uf = u + 3 * f * us - h0; /* uf[I] is the term of vertex I */
		const float *ef = L->mem + (L_EDGE + f * S_COUNT) * st;
		edge_terms(ef + h0, x + h0, uf + h0, off, lo - h0, st, us);
		edge_terms_sub(ef + lo, x + lo, uf + lo, t + lo, off, hi - lo, st, us);
		const int a = lo > off ? lo : off;
		for (int c = 0; c < 3; c++)
			if (off < n && a < hi)
				sim_plane_add(t + c * st + a, uf + c * us + a - off, hi - a);
	}
}

static void cycle_range(int start, int end, int worker, void *ctx)
{
	const cycle_task *k = ctx;
	ml_grid *g = k->g;
	ml_level *L = &g->lv[0], *C = &g->lv[1];
	const int st = L->st;
	const float *inv = L->mem + L_INV * st, *b = L->mem + L_B * st, *d = L->mem + L_DIAG * st;
	float *x = L->mem + L_X * st, *t = L->mem + L_T * st;
	for (int blk = start; blk < end; blk++) {
		const int j0 = blk * BLOCK_ROWS, j1 = j0 + BLOCK_ROWS < L->ny ? j0 + BLOCK_ROWS : L->ny;
		const int lo = j0 * L->nx, hi = j1 * L->nx;
		float *u = g->block_terms + (size_t)blk * TERM_PLANES * (size_t)g->term_stride;
		switch (k->phase) {
		case CP_FIRST:
			/* q over the block's fine rows, which only its restriction reads */
			if (k->product)
				k->product(k->product_ctx, 2 * j0 * g->nx, (2 * j1 < g->ny ? 2 * j1 : g->ny) * g->nx, worker);
			restrict_rows(g, k->r, k->q, k->mask, k->stride, g->block_rows + (size_t)blk * (size_t)g->nx, j0, j1);
			smooth_first(inv + lo, d + lo, b + lo, x + lo, t + lo, COARSE_OMEGA, hi - lo, st);
			break;
		case CP_DOWN:
			block_residual(L, x, t, u, g->term_stride, lo, hi);
			restrict_rows_h(L, C, g->hrows, j0, j1);
			break;
		case CP_UP:
			prolong_rows_c(L, C, g->block_rows + (size_t)blk * (size_t)g->nx, j0, j1);
			diag_residual(d + lo, b + lo, x + lo, t + lo, hi - lo, st);
			break;
		case CP_LAST:
			/* the neighbours read this block's x for their terms: the result goes to L_U */
			block_residual(L, x, t, u, g->term_stride, lo, hi);
			block_apply_to(inv + lo, t + lo, x + lo, L->mem + L_U * st + lo, hi - lo, st, COARSE_OMEGA);
			prolong_rows(g, k->z, k->mask, k->stride, L_U, j0, j1);
			break;
		case CP_COUNT:
			break;
		}
	}
}

void ml_apply(ml_grid *g, const float *r, float *q, const float *mask, int stride, float *z,
              ml_product_fn *product, void *product_ctx, const sim_world *w)
{
	/* without callbacks, the serial cycle: the reference the blocked one must match */
	if (!w || !w->def.enqueue_task || w->def.worker_count <= 1 || g->levels < 2 || g->lv[0].n < PARALLEL_MIN) {
		cycle_serial(g, r, q, mask, stride, z, product, product_ctx);
		return;
	}
	const ml_level *L = &g->lv[0];
	const int blocks = (L->ny + BLOCK_ROWS - 1) / BLOCK_ROWS;
	/* the blocks in as few and as even ranges as whole blocks allow: on the drape 4, 4
	 * and the last row's block */
	const int range = ml_even_range(blocks, BLOCK_ROWS, L->ny - (blocks - 1) * BLOCK_ROWS, w->def.worker_count);
	cycle_task k = {g, CP_FIRST, r, q, mask, stride, z, product, product_ctx};
	sim_parallel_for(w, cycle_range, blocks, range, &k);
	k.phase = CP_DOWN;
	sim_parallel_for(w, cycle_range, blocks, range, &k);
	coarse_cycle(g);
	k.phase = CP_UP;
	sim_parallel_for(w, cycle_range, blocks, range, &k);
	k.phase = CP_LAST;
	sim_parallel_for(w, cycle_range, blocks, range, &k);
}
