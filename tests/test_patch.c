/* Patches of grid cloth that cannot meet themselves (sim/src/patch.h).
 *
 * The certificate's promise is geometric: when a block is certified, every two
 * primitives in it that share no vertex keep the hulls of their vertices' balls apart,
 * that is their centre-primitives more than twice the radius apart, at every time of the
 * window.  So the soundness test measures, by brute force with the exact distance
 * routines, every such pair of every certified block of sheets bent, wrinkled, folded
 * and stretched at random, at several times of the window; it also checks that the
 * certificate is tight enough to matter (certified pairs do come near twice the radius,
 * so a certificate that allowed a little more would fail here). */
#include "patch.h"
#include "sim/sim_geom.h"
#include "sim_internal.h"

#include "test.h"

#include <stdint.h>

static uint64_t rng_state = 1;

static double rng_unit(void)
{
	rng_state ^= rng_state >> 12;
	rng_state ^= rng_state << 25;
	rng_state ^= rng_state >> 27;
	return (double)((rng_state * 0x2545f4914f6cdd1dull) >> 11) * 0x1p-53;
}

static double rng_range(double lo, double hi) { return lo + (hi - lo) * rng_unit(); }

/* An n x n grid of side `size` in the x-z plane, and nothing else. */
static sim_world *grid_world(int n, float size)
{
	sim_world_def def = sim_world_def_default();
	sim_world *w = sim_world_create(&def);
	if (!w)
		return NULL;
	sim_grid_def g = sim_grid_def_default();
	g.nx = g.ny = n;
	g.size_x = g.size_y = size;
	g.origin[0] = g.origin[1] = g.origin[2] = 0.0f;
	g.axis_u[0] = 1.0f, g.axis_u[1] = 0.0f, g.axis_u[2] = 0.0f;
	g.axis_v[0] = 0.0f, g.axis_v[1] = 0.0f, g.axis_v[2] = 1.0f;
	if (sim_world_add_grid(w, &g) < 0)
		sim_world_destroy(&w);
	return w;
}

/* An n x n grid of 1 cm quads (grid_world) laid out in patches, with room for a ball per
 * vertex. */
typedef struct sheet {
	sim_world *w;
	sim_patches *p;
	vsphere *balls;
	int nt;
	const int *tri;
} sheet;

static bool sheet_make(sheet *s, int n)
{
	*s = (sheet){grid_world(n, 0.01f * (float)(n - 1)), sim_patches_create(), malloc(sizeof(vsphere) * (size_t)(n * n)),
	             0, NULL};
	if (!s->w || !s->p || !s->balls)
		return false;
	s->nt = sim_world_triangle_total(s->w), s->tri = sim_world_triangles(s->w);
	return sim_patches_layout(s->p, s->w, s->tri, s->nt) && sim_patches_any(s->p);
}

static void sheet_free(sheet *s)
{
	free(s->balls);
	sim_patches_destroy(s->p);
	sim_world_destroy(&s->w);
}

/* A shape of the sheet: vertex (i, j) of an n x n grid of spacing l mapped through a
 * random smooth deformation (stretch, shear, bending about two axes, a wave) plus noise of
 * the given size per vertex. */
typedef struct shape {
	double stretch[2], shear, bend[2], wave, freq, phase, noise;
	double origin[3];
} shape;

static shape random_shape(double l, double scale)
{
	shape s;
	s.stretch[0] = rng_range(0.8, 1.2), s.stretch[1] = rng_range(0.8, 1.2);
	s.shear = rng_range(-0.2, 0.2) * scale;
	s.bend[0] = rng_range(-3.0, 3.0) * scale, s.bend[1] = rng_range(-3.0, 3.0) * scale;
	s.wave = rng_range(0.0, 2.0) * l * scale, s.freq = rng_range(2.0, 30.0), s.phase = rng_range(0.0, 6.3);
	s.noise = rng_range(0.0, 0.1) * l * scale;
	for (int k = 0; k < 3; k++)
		s.origin[k] = rng_range(-2.0, 2.0);
	return s;
}

static void place(const shape *s, double u, double v, double out[3])
{
	double x = s->stretch[0] * u + s->shear * v, z = s->stretch[1] * v;
	/* bending: the plane rolled about two axes, lengths along the roll kept */
	double y = 0.5 * s->bend[0] * x * x + 0.5 * s->bend[1] * z * z + s->wave * sin(s->freq * x + s->phase);
	out[0] = s->origin[0] + x;
	out[1] = s->origin[1] + y;
	out[2] = s->origin[2] + z;
}

/* The balls of every vertex: centres from shape a at the window's start and shape b at
 * its end (plus each vertex's own noise), radius r. */
static void make_balls(int n, double l, const shape *a, const shape *b, float r, vsphere *balls)
{
	for (int j = 0; j < n; j++)
		for (int i = 0; i < n; i++) {
			double p[3], q[3];
			place(a, i * l, j * l, p);
			place(b, i * l, j * l, q);
			float c0[3], c1[3];
			for (int k = 0; k < 3; k++) {
				c0[k] = (float)(p[k] + a->noise * rng_range(-1.0, 1.0));
				c1[k] = (float)(q[k] + b->noise * rng_range(-1.0, 1.0));
			}
			vsphere_set(&balls[j * n + i], c0, c1, r);
		}
}

static void centre_at(const vsphere *b, double f, double out[3])
{
	for (int k = 0; k < 3; k++)
		out[k] = (double)b->c0[k] + f * ((double)b->c1[k] - (double)b->c0[k]);
}

static bool shares(const int *a, int na, const int *b, int nb)
{
	for (int i = 0; i < na; i++)
		for (int k = 0; k < nb; k++)
			if (a[i] == b[k])
				return true;
	return false;
}

/* The closest approach, over times 0, 1/steps, ..., 1 of the window, of the
 * centre-primitives of every pair that shares no vertex among triangles ta and tb (the
 * vertices of each against the other, their edges against each other's); INFINITY when
 * their vertices' boxes are more than `beyond` apart at every one of those times. */
static double pair_distance(const int *tri, int ta, int tb, const vsphere *balls, int steps, double beyond)
{
	const int *a = &tri[3 * ta], *b = &tri[3 * tb];
	double best = INFINITY;
	for (int s = 0; s <= steps; s++) {
		double f = steps ? (double)s / steps : 0.0, pa[3][3], pb[3][3], w[3], u, v;
		for (int k = 0; k < 3; k++) {
			centre_at(&balls[a[k]], f, pa[k]);
			centre_at(&balls[b[k]], f, pb[k]);
		}
		bool apart = false;
		for (int k = 0; k < 3; k++) {
			double alo = fmin(fmin(pa[0][k], pa[1][k]), pa[2][k]), ahi = fmax(fmax(pa[0][k], pa[1][k]), pa[2][k]);
			double blo = fmin(fmin(pb[0][k], pb[1][k]), pb[2][k]), bhi = fmax(fmax(pb[0][k], pb[1][k]), pb[2][k]);
			apart |= blo - ahi > beyond || alo - bhi > beyond;
		}
		if (apart)
			continue;
		for (int k = 0; k < 3; k++) {
			if (!shares(&a[k], 1, b, 3))
				best = fmin(best, sqrt(sim_geom_point_triangle(pa[k], pb[0], pb[1], pb[2], w)));
			if (!shares(&b[k], 1, a, 3))
				best = fmin(best, sqrt(sim_geom_point_triangle(pb[k], pa[0], pa[1], pa[2], w)));
		}
		for (int i = 0; i < 3; i++)
			for (int k = 0; k < 3; k++) {
				int ea[2] = {a[i], a[(i + 1) % 3]}, eb[2] = {b[k], b[(k + 1) % 3]};
				if (!shares(ea, 2, eb, 2))
					best = fmin(best, sqrt(sim_geom_segment_segment(pa[i], pa[(i + 1) % 3], pb[k], pb[(k + 1) % 3],
					                                                 &u, &v)));
			}
	}
	return best;
}

/* Whether the patches leave triangles ta and tb unpaired: their smallest common block is
 * held by a certified one. */
static bool covered(const sim_patches *p, int ta, int tb)
{
	int b = sim_patches_pair_block(p, ta, tb);
	return b >= 0 && sim_patches_tops(p)[b] >= 0;
}

/* Sheets of 13 x 13 and 14 x 14 vertices (whole and partial blocks), bent, waved,
 * sheared, stretched and noisy, moving between two such shapes over the window, with
 * radii from a tenth to 0.35 of the least rest distance a: every pair of every certified
 * block stays more than 2 r apart.  The first eight sheets are tight cases: flat, scaled
 * by s (their closest pairs, a vertex and its quad's diagonal, s a apart), with r just
 * under or just over s a / 2: the first must be certified everywhere, the second nowhere,
 * so a certificate that allowed a few percent more would fail here. */
static void test_certificate_is_sound(void)
{
	long checked = 0, worlds_certified = 0, worlds_partial = 0;
	double tightest = INFINITY;
	for (int trial = 0; trial < 32; trial++) {
		int n = trial % 2 ? 14 : 13;
		double l = 0.01, al = l / sqrt(2.0);
		sheet sh;
		REQUIRE(sheet_make(&sh, n));
		sim_world *w = sh.w;
		sim_patches *p = sh.p;
		vsphere *balls = sh.balls;
		const int nt = sh.nt, *tri = sh.tri;
		shape a, b;
		float r;
		bool tight = trial < 8;
		if (tight) {
			double sc = 0.8 + 0.05 * (trial / 2);
			a = (shape){{sc, sc}, 0.0, {0.0, 0.0}, 0.0, 1.0, 0.0, 0.0, {rng_range(-1, 1), 0.5, rng_range(-1, 1)}};
			b = a;
			b.origin[1] += 0.01; /* moving, rigidly */
			r = (float)(0.5 * sc * al * (trial % 2 ? 1.03 : 0.99));
		} else {
			double scale = trial < 16 ? 0.3 : trial < 24 ? 0.6 : 1.0;
			a = random_shape(l, scale), b = a;
			/* the end: the same shape moved a little, or another one */
			if (trial % 3 == 0) {
				b = random_shape(l, scale);
			} else {
				for (int k = 0; k < 3; k++)
					b.origin[k] += rng_range(-0.02, 0.02);
				b.bend[0] += rng_range(-0.5, 0.5) * scale;
			}
			r = (float)(al * rng_range(0.1, 0.35));
		}
		make_balls(n, l, &a, &b, r, balls);
		sim_patches_certify(p, w, balls, NULL, 0, NULL);
		int blocks = 0, certified = sim_patches_certified(p, &blocks);
		if (tight)
			CHECK_MSG(certified == (trial % 2 ? 0 : blocks), "tight sheet %d: %d of %d blocks certified", trial,
			          certified, blocks);
		worlds_certified += certified > 0;
		worlds_partial += certified > 0 && certified < blocks;
		for (int ta = 0; ta < nt; ta++)
			for (int tb = ta + 1; tb < nt; tb++) {
				if (!covered(p, ta, tb))
					continue;
				double d = pair_distance(tri, ta, tb, balls, 8, INFINITY);
				checked++;
				tightest = fmin(tightest, d / (2.0 * (double)balls[0].c0[3]));
				CHECK_MSG(d > 2.0 * (double)r, "trial %d: triangles %d and %d certified apart, %.9g <= 2 r = %.9g",
				          trial, ta, tb, d, 2.0 * (double)r);
			}
		sheet_free(&sh);
	}
	printf("%ld certified triangle pairs measured, closest at %.4f x 2 r; %ld of 32 sheets certified somewhere, %ld "
	       "partly\n",
	       checked, tightest, worlds_certified, worlds_partial);
	CHECK(checked > 100000);
	CHECK(worlds_partial >= 4);
	CHECK(tightest > 1.0 && tightest < 1.02);
}

/* ||M||_2 of a 3 x 2 matrix, in long double. */
static long double spectral(const long double m[6])
{
	long double g00 = m[0] * m[0] + m[2] * m[2] + m[4] * m[4], g01 = m[0] * m[1] + m[2] * m[3] + m[4] * m[5];
	long double g11 = m[1] * m[1] + m[3] * m[3] + m[5] * m[5], mid = 0.5L * (g00 + g11), half = 0.5L * (g00 - g11);
	return sqrtl(mid + sqrtl(half * half + g01 * g01));
}

/* Every block's measure against the gradients computed here, in long double, triangle by
 * triangle at both ends of the window: its L bounds every ||J - A||_2 (and at level 1, where
 * it comes from the edges, exceeds the largest Frobenius norm by at most a factor sqrt 2:
 * the two largest edge terms may come from two triangles), its r is its balls' largest,
 * and it is certified exactly when (sigma_min(A) - L) a > 2 r with the 2^-20 spared; a
 * block left unmeasured (a child not certified) is not certified. */
static void test_bound_holds_the_gradients(void)
{
	long blocks_checked = 0, certified = 0, loose = 0, unmeasured = 0;
	for (int trial = 0; trial < 12; trial++) {
		int n = trial % 2 ? 18 : 17;
		double l = 0.01, al = l / sqrt(2.0);
		sheet sh;
		REQUIRE(sheet_make(&sh, n));
		sim_world *w = sh.w;
		sim_patches *p = sh.p;
		vsphere *balls = sh.balls;
		const int *tri = sh.tri;
		double scale = trial < 4 ? 0.3 : trial < 8 ? 1.0 : 3.0;
		shape a = random_shape(l, scale), b = random_shape(l, scale);
		if (trial % 3)
			b = a, b.origin[2] += 0.003;
		make_balls(n, l, &a, &b, (float)(al * rng_range(0.05, 0.3)), balls);
		sim_patches_certify(p, w, balls, NULL, 0, NULL);
		sim_patch_block_info info;
		for (int blk = 0; sim_patches_debug_block(p, blk, &info); blk++) {
			if (!info.measured) { /* above level 1, with a child not certified */
				CHECK(info.level > 1 && !info.certified);
				unmeasured++;
				continue;
			}
			long double worst = 0.0L, worst_f = 0.0L, r = 0.0L;
			for (int qj = info.q0[1]; qj < info.q1[1]; qj++)
				for (int qi = info.q0[0]; qi < info.q1[0]; qi++)
					for (int h = 0; h < 2; h++) {
						const int *v = &tri[3 * (info.first_tri + 2 * (qj * info.qx + qi) + h)];
						long double u[3][2];
						for (int k = 0; k < 3; k++) {
							u[k][0] = (long double)(v[k] % n) * l, u[k][1] = (long double)(v[k] / n) * l;
							r = fmaxl(r, balls[v[k]].c0[3]);
						}
						long double e00 = u[1][0] - u[0][0], e01 = u[2][0] - u[0][0], e10 = u[1][1] - u[0][1];
						long double e11 = u[2][1] - u[0][1], det = e00 * e11 - e01 * e10;
						for (int end = 0; end < 2; end++) {
							long double d[6], f = 0.0L;
							for (int k = 0; k < 3; k++) {
								const float *c0 = end ? balls[v[0]].c1 : balls[v[0]].c0;
								const float *c1 = end ? balls[v[1]].c1 : balls[v[1]].c0;
								const float *c2 = end ? balls[v[2]].c1 : balls[v[2]].c0;
								long double p1 = (long double)c1[k] - c0[k], p2 = (long double)c2[k] - c0[k];
								d[2 * k] = (p1 * e11 - p2 * e10) / det - info.A[2 * k];
								d[2 * k + 1] = (p2 * e00 - p1 * e01) / det - info.A[2 * k + 1];
								f += d[2 * k] * d[2 * k] + d[2 * k + 1] * d[2 * k + 1];
							}
							worst = fmaxl(worst, spectral(d));
							worst_f = fmaxl(worst_f, sqrtl(f));
						}
					}
			CHECK_MSG(worst <= info.L, "block %d (level %d): a gradient %.12Lg from A, bound %.12g", blk, info.level,
			          worst, info.L);
			CHECK(r == (long double)info.r);
			if (info.level == 1)
				loose += info.L > sqrtl(2.0L) * worst_f * (1.0L + 1e-5L) + 1e-5L;
			long double g00 = 0, g01 = 0, g11 = 0;
			for (int k = 0; k < 3; k++) {
				g00 += (long double)info.A[2 * k] * info.A[2 * k];
				g01 += (long double)info.A[2 * k] * info.A[2 * k + 1];
				g11 += (long double)info.A[2 * k + 1] * info.A[2 * k + 1];
			}
			long double mid = 0.5L * (g00 + g11), half = 0.5L * (g00 - g11);
			long double smin = sqrtl(fmaxl(mid - sqrtl(half * half + g01 * g01), 0.0L));
			long double lhs = (smin - info.L) * (long double)al, rhs = 2.0L * info.r;
			/* away from the border (a relative 1e-5) the two must agree */
			if (fabsl(lhs - rhs) > 1e-5L * rhs)
				CHECK_MSG(info.certified == (lhs > rhs), "block %d: certified %d, (sigma - L) a = %.9Lg, 2 r = %.9Lg",
				          blk, info.certified, lhs, rhs);
			certified += info.certified;
			blocks_checked++;
		}
		sheet_free(&sh);
	}
	printf("%ld blocks' bounds checked, %ld certified, %ld level-1 bounds looser than sqrt 2, %ld blocks not measured\n",
	       blocks_checked, certified, loose, unmeasured);
	CHECK(loose == 0);
	CHECK(certified > 0 && certified < blocks_checked);
}

/* A flat sheet at rest is one patch: the top block is certified and every triangle is in
 * its group, so no two of its triangles pair. */
static void test_flat_sheet_is_one_patch(void)
{
	const int n = 33;
	const double l = 0.01;
	sheet sh;
	REQUIRE(sheet_make(&sh, n));
	sim_world *w = sh.w;
	sim_patches *p = sh.p;
	vsphere *balls = sh.balls;
	const int nt = sh.nt;
	shape s = {{1.0, 1.0}, 0.0, {0.0, 0.0}, 0.0, 1.0, 0.0, 0.0, {0.3, 1.0, -0.2}};
	make_balls(n, l, &s, &s, 0.003f, balls);
	int changed = sim_patches_certify(p, w, balls, NULL, 0, NULL);
	int blocks = 0;
	CHECK(sim_patches_certified(p, &blocks) == blocks && blocks == 256 + 64 + 16 + 4 + 1);
	CHECK(changed == nt); /* from no group at all */
	const int *g = sim_patches_groups(p);
	bool one = g[0] >= 0;
	for (int t = 1; t < nt; t++)
		one &= g[t] == g[0];
	CHECK(one);
	CHECK(covered(p, 0, nt - 1));
	/* certified again from the same balls: nothing moves */
	CHECK(sim_patches_certify(p, w, balls, NULL, 0, NULL) == 0);
	/* a radius past half the least rest distance (7.07 mm) certifies nothing */
	make_balls(n, l, &s, &s, 0.0036f, balls);
	CHECK(sim_patches_certify(p, w, balls, NULL, 0, NULL) == nt);
	CHECK(sim_patches_certified(p, NULL) == 0 && !covered(p, 0, nt - 1));
	sheet_free(&sh);
}

/* A sheet folded back on itself across a crease at x = 0.16: the two layers 4 mm apart
 * (twice a 2 mm radius) must not be a patch; the blocks away from the fold are. */
static void test_fold_is_not_a_patch(void)
{
	const int n = 33;
	const double l = 0.01, crease = 0.16, gap = 0.004;
	sheet sh;
	REQUIRE(sheet_make(&sh, n));
	sim_world *w = sh.w;
	sim_patches *p = sh.p;
	vsphere *balls = sh.balls;
	const int nt = sh.nt, *tri = sh.tri;
	for (int j = 0; j < n; j++)
		for (int i = 0; i < n; i++) {
			double u = i * l, x, y;
			if (u <= crease) {
				x = u, y = 0.0;
			} else { /* round the crease on a half circle of diameter gap, then back */
				double s = u - crease, arc = 3.14159265358979323846 * 0.5 * gap;
				if (s < arc) {
					double t = s / (0.5 * gap);
					x = crease + 0.5 * gap * sin(t), y = 0.5 * gap * (1.0 - cos(t));
				} else {
					x = crease - (s - arc), y = gap;
				}
			}
			float c[3] = {(float)x, (float)y, (float)(j * l)};
			vsphere_set(&balls[j * n + i], c, c, 0.002f);
		}
	sim_patches_certify(p, w, balls, NULL, 0, NULL);
	int blocks = 0, certified = sim_patches_certified(p, &blocks);
	long close = 0, close_covered = 0;
	for (int ta = 0; ta < nt; ta++)
		for (int tb = ta + 1; tb < nt; tb++) {
			double d = pair_distance(tri, ta, tb, balls, 0, 0.0041);
			if (d <= 2.0 * 0.002 * (1.0 + 1e-6)) {
				close++;
				close_covered += covered(p, ta, tb);
			}
		}
	printf("folded sheet: %d of %d blocks certified, %ld pairs within 2 r, %ld of them covered\n", certified, blocks,
	       close, close_covered);
	CHECK(close > 1000 && close_covered == 0);
	CHECK(certified > blocks / 2 && certified < blocks);
	/* a pair far from the fold, in one flat level-3 block (8 x 8 quads): left out */
	int q0 = 2 * (0 * (n - 1) + 0), q1 = 2 * (7 * (n - 1) + 7);
	CHECK(covered(p, q0, q1));
	sheet_free(&sh);
}

/* With a list (an in-place refresh) only the listed triangles' blocks are measured again
 * and a block can only lose its certificate: a bump raised under certified blocks takes
 * theirs away and flags exactly the triangles whose holder changed; flattened again it
 * gives it back only at the next certification without a list. */
static void test_refresh_only_loses(void)
{
	const int n = 17;
	const double l = 0.01;
	sheet sh;
	REQUIRE(sheet_make(&sh, n));
	sim_world *w = sh.w;
	sim_patches *p = sh.p;
	vsphere *balls = sh.balls;
	const int nt = sh.nt, *tri = sh.tri;
	unsigned char *changed = calloc((size_t)nt, 1);
	int *list = malloc(sizeof(int) * (size_t)nt);
	REQUIRE(changed && list);
	shape s = {{1.0, 1.0}, 0.0, {0.0, 0.0}, 0.0, 1.0, 0.0, 0.0, {0.0, 0.0, 0.0}};
	make_balls(n, l, &s, &s, 0.002f, balls);
	sim_patches_certify(p, w, balls, NULL, 0, NULL);
	int blocks = 0;
	REQUIRE(sim_patches_certified(p, &blocks) == blocks);
	/* each triangle's holder: the top of its own smallest block */
	int before[512];
	REQUIRE(nt <= 512);
	for (int t = 0; t < nt; t++)
		before[t] = sim_patches_tops(p)[sim_patches_pair_block(p, t, t)];
	/* vertex (5, 5) raised by 6 mm: a sharp spike */
	const int spike = 5 * n + 5;
	vsphere flat = balls[spike];
	float up[3] = {flat.c0[0], flat.c0[1] + 0.006f, flat.c0[2]};
	vsphere_set(&balls[spike], up, up, 0.002f);
	int nd = 0;
	for (int t = 0; t < nt; t++)
		if (tri[3 * t] == spike || tri[3 * t + 1] == spike || tri[3 * t + 2] == spike)
			list[nd++] = t;
	REQUIRE(nd == 8); /* where four diagonals meet */
	int moved = sim_patches_certify(p, w, balls, list, nd, changed);
	int lost = blocks - sim_patches_certified(p, NULL);
	int flagged = 0;
	for (int t = 0; t < nt; t++)
		flagged += changed[t];
	printf("spike: %d blocks lost, %d triangles flagged\n", lost, flagged);
	CHECK(lost > 0 && moved == flagged && flagged > 0);
	/* the spike's triangles are no longer in one patch with a triangle far away, and
	 * the flags are exactly the triangles whose holder changed */
	CHECK(!covered(p, list[0], nt - 1));
	int wrong = 0;
	for (int t = 0; t < nt; t++)
		wrong += changed[t] != (sim_patches_tops(p)[sim_patches_pair_block(p, t, t)] != before[t]);
	CHECK(wrong == 0);
	/* flattened again: a list may not give the certificates back */
	balls[spike] = flat;
	memset(changed, 0, (size_t)nt);
	CHECK(sim_patches_certify(p, w, balls, list, nd, changed) == 0);
	CHECK(blocks - sim_patches_certified(p, NULL) == lost);
	/* without a list: all back */
	CHECK(sim_patches_certify(p, w, balls, NULL, 0, NULL) == flagged);
	CHECK(sim_patches_certified(p, NULL) == blocks);
	free(list);
	free(changed);
	sheet_free(&sh);
}

/* The smallest common block of two triangles, against the quads' coordinates: the
 * level where their quads' indices, halved that many times, first agree. */
static void test_pair_block(void)
{
	const int n = 21; /* 20 x 20 quads: levels of 10, 5, 3, 2 and 1 blocks a side */
	sim_world *w = grid_world(n, 0.2f);
	REQUIRE(w);
	sim_patches *p = sim_patches_create();
	REQUIRE(p);
	const int nt = sim_world_triangle_total(w), *tri = sim_world_triangles(w);
	REQUIRE(sim_patches_layout(p, w, tri, nt));
	int mismatches = 0, same = 0;
	for (int ta = 0; ta < nt; ta += 7)
		for (int tb = 0; tb < nt; tb += 5) {
			int qa = ta / 2, qb = tb / 2, ia = qa % (n - 1), ja = qa / (n - 1), ib = qb % (n - 1), jb = qb / (n - 1);
			int k = 1;
			while ((ia >> k) != (ib >> k) || (ja >> k) != (jb >> k))
				k++;
			/* the blocks of level k are numbered after those of the levels below */
			int first = 0, side = n - 1;
			for (int m = 1; m < k; m++) {
				side = (side + 1) / 2;
				first += side * side;
			}
			side = (side + 1) / 2;
			int want = first + (ja >> k) * side + (ia >> k), got = sim_patches_pair_block(p, ta, tb);
			mismatches += got != want;
			same += ta == tb && got == sim_patches_pair_block(p, ta, ta);
		}
	CHECK(mismatches == 0 && same > 0);
	CHECK(sim_patches_pair_block(p, 0, nt) == -1 && sim_patches_pair_block(p, -1, 0) == -1);
	sim_patches_destroy(p);
	sim_world_destroy(&w);
}

/* Only grids get patches: a mesh, a grid of a single row of quads, and two grids side by
 * side, whose triangles never share a block. */
static void test_layout_needs_grids(void)
{
	sim_world_def def = sim_world_def_default();
	sim_world *w = sim_world_create(&def);
	REQUIRE(w);
	const float x[4][3] = {{0, 0, 0}, {1, 0, 0}, {1, 0, 1}, {0, 0, 1}};
	const int t[6] = {0, 1, 2, 0, 2, 3};
	sim_mesh_def m = {.name = "mesh", .material = sim_material_default()};
	m.positions = &x[0][0];
	m.vertex_count = 4;
	m.triangles = t;
	m.triangle_count = 2;
	REQUIRE(sim_world_add_mesh(w, &m) >= 0);
	sim_grid_def strip = sim_grid_def_default();
	strip.nx = 9, strip.ny = 2;
	REQUIRE(sim_world_add_grid(w, &strip) >= 0);
	sim_patches *p = sim_patches_create();
	REQUIRE(p);
	CHECK(sim_patches_layout(p, w, sim_world_triangles(w), sim_world_triangle_total(w)) && !sim_patches_any(p));
	sim_grid_def g = sim_grid_def_default();
	g.nx = g.ny = 5;
	REQUIRE(sim_world_add_grid(w, &g) >= 0 && sim_world_add_grid(w, &g) >= 0);
	const int nt = sim_world_triangle_total(w), first = 2 + 16;
	CHECK(sim_patches_layout(p, w, sim_world_triangles(w), nt) && sim_patches_any(p));
	int blocks = 0;
	sim_patches_certified(p, &blocks);
	CHECK(blocks == 2 * (4 + 1));
	CHECK(sim_patches_pair_block(p, first, first + 31) >= 0);
	CHECK(sim_patches_pair_block(p, first, first + 32) == -1); /* across the two grids */
	CHECK(sim_patches_pair_block(p, 0, first) == -1);          /* the mesh */
	sim_patches_destroy(p);
	sim_world_destroy(&w);
}

static const test_case tests[] = {
	TEST(test_certificate_is_sound),
	TEST(test_bound_holds_the_gradients),
	TEST(test_flat_sheet_is_one_patch),
	TEST(test_fold_is_not_a_patch),
	TEST(test_refresh_only_loses),
	TEST(test_pair_block),
	TEST(test_layout_needs_grids),
};
TEST_MAIN(tests)
