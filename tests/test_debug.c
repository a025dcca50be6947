/* The collision pipeline's debug data (sim_world_set_debug): the recorded narrow pairs
 * are exactly those geometry says (found here by brute force, independently of the
 * pipeline), the broad pairs hold them, the predicted positions are the integrator's,
 * the hierarchy boxes nest and hold the cloth, and recording never changes the
 * simulation. */
#include "test.h"
#include "sim_fixtures.h"

#include "scenes/scenes.h"
#include "sim/sim.h"
#include "sim/sim_geom.h"

#include <stdint.h>

/* ---- pairs as comparable keys ---------------------------------------------------------------- */

/* The recorded pairs of one stage, canonical, sorted and without repeats. */
typedef struct keyset {
	pair_key *k;
	int n;
} keyset;

static keyset stage_set(const sim_world *w, int stage)
{
	const sim_debug_pair *p = NULL;
	int n = sim_world_debug_pairs(w, &p, NULL);
	keyset s = {malloc(sizeof(pair_key) * (size_t)(n > 0 ? n : 1)), 0};
	for (int i = 0; i < n; i++)
		if (p[i].stage == stage)
			s.k[s.n++] = pair_key_of(p[i].kind, p[i].v);
	qsort(s.k, (size_t)s.n, sizeof(pair_key), pair_key_cmp);
	int m = 0;
	for (int i = 0; i < s.n; i++)
		if (m == 0 || pair_key_cmp(&s.k[m - 1], &s.k[i]) != 0)
			s.k[m++] = s.k[i];
	s.n = m;
	return s;
}

static bool contains(const keyset *s, const pair_key *k) { return bsearch(k, s->k, (size_t)s->n, sizeof(pair_key), pair_key_cmp) != NULL; }

static bool subset(const keyset *a, const keyset *b)
{
	for (int i = 0; i < a->n; i++)
		if (!contains(b, &a->k[i]))
			return false;
	return true;
}

static bool same(const keyset *a, const keyset *b)
{
	return a->n == b->n && subset(a, b);
}

static void print_set(const char *what, const keyset *s)
{
	fprintf(stderr, "%s (%d):", what, s->n);
	for (int i = 0; i < s->n; i++)
		fprintf(stderr, " %s(%d %d %d %d)", s->k[i].kind == SIM_PAIR_EDGE_EDGE ? "ee" : "vt", s->k[i].v[0],
		        s->k[i].v[1], s->k[i].v[2], s->k[i].v[3]);
	fputc('\n', stderr);
}

static int count_stage(const sim_world *w, int stage)
{
	const sim_debug_pair *p = NULL;
	int n = sim_world_debug_pairs(w, &p, NULL), c = 0;
	for (int i = 0; i < n; i++)
		c += p[i].stage == stage;
	return c;
}

/* ---- independent geometry (Ericson, Real-Time Collision Detection, 5.1) ---------------------- */

static double dot3(const double *a, const double *b) { return a[0] * b[0] + a[1] * b[1] + a[2] * b[2]; }

static void sub3(const double *a, const double *b, double *out)
{
	out[0] = a[0] - b[0], out[1] = a[1] - b[1], out[2] = a[2] - b[2];
}

static double dist2(const double *a, const double *b)
{
	double d[3];
	sub3(a, b, d);
	return dot3(d, d);
}

static void closest_on_triangle(const double *p, const double *a, const double *b, const double *c, double *out)
{
	double ab[3], ac[3], ap[3], bp[3], cp[3];
	sub3(b, a, ab), sub3(c, a, ac), sub3(p, a, ap);
	double d1 = dot3(ab, ap), d2 = dot3(ac, ap);
	if (d1 <= 0 && d2 <= 0) {
		memcpy(out, a, sizeof(double) * 3);
		return;
	}
	sub3(p, b, bp);
	double d3 = dot3(ab, bp), d4 = dot3(ac, bp);
	if (d3 >= 0 && d4 <= d3) {
		memcpy(out, b, sizeof(double) * 3);
		return;
	}
	double vc = d1 * d4 - d3 * d2;
	if (vc <= 0 && d1 >= 0 && d3 <= 0) {
		double v = d1 / (d1 - d3);
		for (int k = 0; k < 3; k++)
			out[k] = a[k] + v * ab[k];
		return;
	}
	sub3(p, c, cp);
	double d5 = dot3(ab, cp), d6 = dot3(ac, cp);
	if (d6 >= 0 && d5 <= d6) {
		memcpy(out, c, sizeof(double) * 3);
		return;
	}
	double vb = d5 * d2 - d1 * d6;
	if (vb <= 0 && d2 >= 0 && d6 <= 0) {
		double w = d2 / (d2 - d6);
		for (int k = 0; k < 3; k++)
			out[k] = a[k] + w * ac[k];
		return;
	}
	double va = d3 * d6 - d5 * d4;
	if (va <= 0 && (d4 - d3) >= 0 && (d5 - d6) >= 0) {
		double w = (d4 - d3) / ((d4 - d3) + (d5 - d6));
		for (int k = 0; k < 3; k++)
			out[k] = b[k] + w * (c[k] - b[k]);
		return;
	}
	double denom = 1.0 / (va + vb + vc), v = vb * denom, w = vc * denom;
	for (int k = 0; k < 3; k++)
		out[k] = a[k] + ab[k] * v + ac[k] * w;
}

static double clamp01(double x) { return x < 0 ? 0 : (x > 1 ? 1 : x); }

/* Squared distance of two non-parallel segments and the parameters of the closest points. */
static double segment_segment(const double *p1, const double *q1, const double *p2, const double *q2, double *s,
                              double *t)
{
	double d1[3], d2[3], r[3];
	sub3(q1, p1, d1), sub3(q2, p2, d2), sub3(p1, p2, r);
	double a = dot3(d1, d1), e = dot3(d2, d2), f = dot3(d2, r), c = dot3(d1, r), b = dot3(d1, d2);
	double denom = a * e - b * b;
	*s = denom > 0 ? clamp01((b * f - c * e) / denom) : 0.0;
	*t = (b * *s + f) / e;
	if (*t < 0) {
		*t = 0;
		*s = clamp01(-c / a);
	} else if (*t > 1) {
		*t = 1;
		*s = clamp01((b - c) / a);
	}
	double c1[3], c2[3];
	for (int k = 0; k < 3; k++) {
		c1[k] = p1[k] + d1[k] * *s;
		c2[k] = p2[k] + d2[k] * *t;
	}
	return dist2(c1, c2);
}

/* ---- worlds ----------------------------------------------------------------------------------- */

static sim_world *zero_g_world(void)
{
	sim_world_def def = sim_world_def_default();
	def.gravity[1] = 0.0f;
	def.blowup_speed = 1e3f;
	return sim_world_create(&def);
}

/* Two n x n cloths of the given side, "lower" with its corner at `lower` and "upper" at
 * `upper`, turned by 20 degrees about y so that no two edges are parallel; without
 * gravity. */
static sim_world *crossed_grids(int n, float side, const float lower[3], const float upper[3])
{
	sim_world *w = zero_g_world();
	if (!w)
		return NULL;
	sim_grid_def g = sim_grid_def_default();
	g.nx = g.ny = n;
	g.size_x = g.size_y = side;
	g.name = "lower";
	for (int k = 0; k < 3; k++)
		g.origin[k] = lower[k];
	int a = sim_world_add_grid(w, &g);
	const float c = 0.93969262f, s = 0.34202014f; /* cos and sin of 20 degrees */
	g.name = "upper";
	for (int k = 0; k < 3; k++)
		g.origin[k] = upper[k];
	g.axis_u[0] = c, g.axis_u[1] = 0.0f, g.axis_u[2] = -s;
	g.axis_v[0] = -s, g.axis_v[1] = 0.0f, g.axis_v[2] = -c;
	int b = sim_world_add_grid(w, &g);
	if (a != 0 || b != 1)
		sim_world_destroy(&w);
	return w;
}

/* Two 3 x 3 cloths 2 mm apart (less than their 3 mm separation), placed so that no
 * vertex lies above an edge of the other; at rest: nothing moves but the contacts. */
static sim_world *two_grids(void)
{
	return crossed_grids(3, 0.2f, (const float[3]){-0.1f, 0.0f, 0.1f}, (const float[3]){-0.083f, 0.002f, 0.087f});
}


/* A pinned triangle (vertices 0-2) and a small one (3-5) above it flying down at 60 m/s:
 * all three of its vertices cross the wall within the first 1 ms step. */
static sim_world *dart_world(bool collisions)
{
	sim_world_def def = sim_world_def_default();
	def.gravity[1] = 0.0f;
	def.blowup_speed = 1e3f;
	def.collisions = collisions;
	sim_world *w = sim_world_create(&def);
	if (!w)
		return NULL;
	static const float wall[9] = {-1, 0, -1, 1, 0, -1, 0, 0, 1};
	static const float dart[9] = {0.0f, 0.02f, 0.0f, 0.02f, 0.05f, 0.0f, -0.02f, 0.05f, 0.01f};
	const float vel[3] = {0.0f, -60.0f, 0.0f};
	if (add_triangle(w, "wall", wall, NULL) != 0 || add_triangle(w, "dart", dart, vel) != 1) {
		sim_world_destroy(&w);
		return NULL;
	}
	for (int i = 0; i < 3; i++)
		sim_world_pin(w, i, true);
	return w;
}

/* Every triangle of every object (world indices, 3 each); returns the count. */
static int world_triangles(const sim_world *w, int *out)
{
	int nt = 0;
	for (int o = 0; o < sim_world_object_count(w); o++) {
		const int *t = sim_world_object_triangles(w, o);
		int first = sim_world_object_first_vertex(w, o);
		for (int k = 0; k < 3 * sim_world_object_triangle_count(w, o); k++)
			out[3 * nt + k] = first + t[k];
		nt += sim_world_object_triangle_count(w, o);
	}
	return nt;
}

static void to_d(const float *p, double *out) { out[0] = p[0], out[1] = p[1], out[2] = p[2]; }

/* The unique edges of nt triangles (each sorted, in the order the triangles meet them);
 * returns how many, or -1 past cap. */
static int unique_edges(const int *tris, int nt, int *edges, int cap)
{
	int ne = 0;
	for (int t = 0; t < nt; t++)
		for (int j = 0; j < 3; j++) {
			int a = tris[3 * t + j], b = tris[3 * t + (j + 1) % 3];
			pair_key_sort2(&a, &b);
			bool seen = false;
			for (int e = 0; e < ne && !seen; e++)
				seen = edges[2 * e] == a && edges[2 * e + 1] == b;
			if (seen)
				continue;
			if (ne == cap)
				return -1;
			edges[2 * ne] = a;
			edges[2 * ne + 1] = b;
			ne++;
		}
	return ne;
}

static void push_key(keyset *s, pair_key k)
{
	/* capacity: 64, then doubling (the set starts with room for 64) */
	if (s->n >= 64 && (s->n & (s->n - 1)) == 0) {
		pair_key *g = realloc(s->k, sizeof(pair_key) * 2 * (size_t)s->n);
		if (!g)
			abort(); /* out of memory in a test */
		s->k = g;
	}
	s->k[s->n++] = k;
}

/* By brute force over positions x: the vertex-triangle pairs closer than sep and the
 * edge-edge pairs closer than sep (with `interior`, only at interior points of both
 * edges: what the contacts take), primitives sharing a vertex left out; sorted.
 * *vertex_face: how many of the first kind. */
static keyset close_pairs(const vec4 *x, int n, const int *tris, int nt, const int *edges, int ne, double sep,
                          bool interior, int *vertex_face)
{
	keyset want = {malloc(sizeof(pair_key) * 64), 0};
	if (!want.k)
		abort(); /* out of memory in a test */
	for (int v = 0; v < n; v++)
		for (int t = 0; t < nt; t++) {
			const int *q = &tris[3 * t];
			if (q[0] == v || q[1] == v || q[2] == v)
				continue;
			double p[3], a[3], b[3], c[3], cl[3];
			to_d(x[v], p), to_d(x[q[0]], a), to_d(x[q[1]], b), to_d(x[q[2]], c);
			closest_on_triangle(p, a, b, c, cl);
			if (dist2(p, cl) < sep * sep)
				push_key(&want, pair_key_of(SIM_PAIR_VERTEX_TRIANGLE, (int[4]){v, q[0], q[1], q[2]}));
		}
	if (vertex_face)
		*vertex_face = want.n;
	for (int e = 0; e < ne; e++)
		for (int f = e + 1; f < ne; f++) {
			const int *a = &edges[2 * e], *b = &edges[2 * f];
			if (a[0] == b[0] || a[0] == b[1] || a[1] == b[0] || a[1] == b[1])
				continue;
			double p0[3], p1[3], q0[3], q1[3], u, t;
			to_d(x[a[0]], p0), to_d(x[a[1]], p1), to_d(x[b[0]], q0), to_d(x[b[1]], q1);
			double d2 = segment_segment(p0, p1, q0, q1, &u, &t);
			if (d2 < sep * sep && (!interior || (u > 0 && u < 1 && t > 0 && t < 1)))
				push_key(&want, pair_key_of(SIM_PAIR_EDGE_EDGE, (int[4]){a[0], a[1], b[0], b[1]}));
		}
	qsort(want.k, (size_t)want.n, sizeof(pair_key), pair_key_cmp);
	return want;
}

/* The box of points p[0, n) at both times (x0 and x1), in double. */
static void swept_box(const vec4 *x0, const vec4 *x1, const int *p, int n, double lo[3], double hi[3])
{
	for (int k = 0; k < 3; k++)
		lo[k] = INFINITY, hi[k] = -INFINITY;
	for (int j = 0; j < n; j++)
		for (int k = 0; k < 3; k++) {
			double a = x0[p[j]][k], b = x1[p[j]][k];
			lo[k] = fmin(lo[k], fmin(a, b)), hi[k] = fmax(hi[k], fmax(a, b));
		}
}

static bool boxes_meet(const double *alo, const double *ahi, const double *blo, const double *bhi)
{
	return alo[0] <= bhi[0] && blo[0] <= ahi[0] && alo[1] <= bhi[1] && blo[1] <= ahi[1] && alo[2] <= bhi[2] &&
	       blo[2] <= ahi[2];
}

/* Every vertex-triangle and edge-edge pair (sharing no vertex) whose primitives touch or
 * cross at some time while every point moves linearly from x0 to x1 (CCD with no gap),
 * by brute force: the pairs the broad phase must hand to the collision sweeps. */
static keyset crossing_pairs(const vec4 *x0, const vec4 *x1, int n, const int *tris, int nt, const int *edges, int ne)
{
	keyset want = {malloc(sizeof(pair_key) * 64), 0};
	const size_t boxes = (size_t)(nt + ne + n);
	double(*tlo)[3] = malloc(sizeof(double[3]) * boxes), (*thi)[3] = malloc(sizeof(double[3]) * boxes);
	if (!want.k || !tlo || !thi)
		abort(); /* out of memory in a test */
	for (int t = 0; t < nt; t++)
		swept_box(x0, x1, &tris[3 * t], 3, tlo[t], thi[t]);
	for (int e = 0; e < ne; e++)
		swept_box(x0, x1, &edges[2 * e], 2, tlo[nt + e], thi[nt + e]);
	for (int v = 0; v < n; v++)
		swept_box(x0, x1, &v, 1, tlo[nt + ne + v], thi[nt + ne + v]);
	for (int v = 0; v < n; v++)
		for (int t = 0; t < nt; t++) {
			const int *q = &tris[3 * t];
			if (q[0] == v || q[1] == v || q[2] == v || !boxes_meet(tlo[nt + ne + v], thi[nt + ne + v], tlo[t], thi[t]))
				continue;
			const int id[4] = {v, q[0], q[1], q[2]};
			double a[4][3], b[4][3];
			for (int j = 0; j < 4; j++)
				to_d(x0[id[j]], a[j]), to_d(x1[id[j]], b[j]);
			if (sim_ccd_vertex_face(a, b, 0.0, NULL))
				push_key(&want, pair_key_of(SIM_PAIR_VERTEX_TRIANGLE, (int[4]){v, q[0], q[1], q[2]}));
		}
	for (int e = 0; e < ne; e++)
		for (int f = e + 1; f < ne; f++) {
			const int *a = &edges[2 * e], *b = &edges[2 * f];
			if (a[0] == b[0] || a[0] == b[1] || a[1] == b[0] || a[1] == b[1] ||
			    !boxes_meet(tlo[nt + e], thi[nt + e], tlo[nt + f], thi[nt + f]))
				continue;
			const int id[4] = {a[0], a[1], b[0], b[1]};
			double p[4][3], q[4][3];
			for (int j = 0; j < 4; j++)
				to_d(x0[id[j]], p[j]), to_d(x1[id[j]], q[j]);
			if (sim_ccd_edge_edge(p, q, 0.0, NULL))
				push_key(&want, pair_key_of(SIM_PAIR_EDGE_EDGE, (int[4]){a[0], a[1], b[0], b[1]}));
		}
	free(tlo);
	free(thi);
	qsort(want.k, (size_t)want.n, sizeof(pair_key), pair_key_cmp);
	return want;
}

/* ---- tests ------------------------------------------------------------------------------------ */

/* The contacts of the first step are exactly the vertex-triangle pairs closer than the
 * separation and the edge-edge pairs closer than it at interior points, all between
 * the two cloths (within one flat cloth everything is a grid spacing apart). */
static void test_proximity_pairs_exact(void)
{
	sim_world *w = two_grids();
	REQUIRE(w);
	sim_world_set_debug(w, SIM_DEBUG_PAIRS);
	int n = sim_world_vertex_count(w);
	/* the expectation from the start positions, before stepping */
	int tris[3 * 64], edges[2 * 256];
	int nt = world_triangles(w, tris), ne = unique_edges(tris, nt, edges, 256);
	REQUIRE(nt == 16 && ne == 2 * 16);
	const sim_material *m = sim_world_object_material(w, 0);
	double sep = 2.0 * (double)(0.5f * m->thickness);
	int vt_expected = 0;
	keyset want = close_pairs(sim_world_positions(w), n, tris, nt, edges, ne, sep, true, &vt_expected);
	/* a meaningful layout: some of each kind, and none within one cloth */
	CHECK_MSG(vt_expected >= 4 && want.n - vt_expected >= 4, "%d vertex-triangle, %d edge-edge", vt_expected,
	          want.n - vt_expected);
	for (int i = 0; i < want.n; i++)
		CHECK((want.k[i].v[0] < 9) != (want.k[i].v[3] < 9));

	printf("two grids: %d vertex-triangle and %d edge-edge pairs within %g m\n", vt_expected, want.n - vt_expected,
	       sep);
	REQUIRE(sim_world_step(w, 1e-3f) == SIM_OK);
	keyset got = stage_set(w, SIM_PAIR_PROXIMITY);
	keyset broad = stage_set(w, SIM_PAIR_BROAD_PROXIMITY);
	CHECK(same(&got, &want));
	if (!same(&got, &want)) {
		print_set("expected", &want);
		print_set("recorded", &got);
	}
	/* one substep, so each contact once; and the stats count the same contacts */
	CHECK(count_stage(w, SIM_PAIR_PROXIMITY) == got.n);
	CHECK(sim_world_stats(w)->contacts == got.n);
	CHECK(subset(&got, &broad));
	CHECK(broad.n > got.n);
	/* at rest nothing collides */
	CHECK(count_stage(w, SIM_PAIR_COLLISION) == 0);
	CHECK(count_stage(w, SIM_PAIR_BROAD_COLLISION) > 0);
	bool truncated = true;
	sim_world_debug_pairs(w, NULL, &truncated);
	CHECK(!truncated);
	free(want.k);
	free(got.k);
	free(broad.k);
	sim_world_destroy(&w);
}

/* The dart's three vertices each cross the wall in the first step: exactly those three
 * vertex-triangle pairs get collision impulses; the predicted positions are where they
 * would have gone through. */
static void test_collision_pairs_exact(void)
{
	sim_world *w = dart_world(true);
	REQUIRE(w);
	sim_world_set_debug(w, SIM_DEBUG_PAIRS | SIM_DEBUG_PREDICTED);
	REQUIRE(sim_world_step(w, 1e-3f) == SIM_OK);
	keyset got = stage_set(w, SIM_PAIR_COLLISION), broad = stage_set(w, SIM_PAIR_BROAD_COLLISION);
	keyset want = {malloc(sizeof(pair_key) * 3), 0};
	for (int v = 3; v < 6; v++)
		want.k[want.n++] = pair_key_of(SIM_PAIR_VERTEX_TRIANGLE, (int[4]){v, 0, 1, 2});
	qsort(want.k, 3, sizeof(pair_key), pair_key_cmp);
	CHECK(same(&got, &want));
	if (!same(&got, &want))
		print_set("recorded", &got);
	CHECK(subset(&got, &broad));
	CHECK(count_stage(w, SIM_PAIR_COLLISION) <= sim_world_stats(w)->collisions);
	/* 2 cm apart at the start: no contact */
	CHECK(count_stage(w, SIM_PAIR_PROXIMITY) == 0);

	const vec4 *pred = sim_world_debug_predicted(w);
	REQUIRE(pred);
	for (int v = 3; v < 6; v++) {
		CHECK_MSG(pred[v][1] < 0.0f, "predicted y %g", (double)pred[v][1]);
		CHECK(sim_world_positions(w)[v][1] > 0.0f);
	}
	free(got.k);
	free(broad.k);
	free(want.k);
	sim_world_destroy(&w);
}

/* A vertex 1 mm above a sphere (within the cloth's half thickness) is a proximity pair
 * of the sphere; the triangle's other vertices are far from it. */
static void test_vertex_obstacle_pairs(void)
{
	sim_world *w = zero_g_world();
	REQUIRE(w);
	sim_obstacle_def ball = sim_obstacle_def_default(SIM_SHAPE_SPHERE);
	ball.radius = 0.1f;
	REQUIRE(sim_world_add_obstacle(w, &ball) == 0);
	static const float tri[9] = {0.0f, 0.101f, 0.0f, 0.1f, 0.101f, 0.0f, 0.0f, 0.101f, 0.1f};
	REQUIRE(add_triangle(w, "tri", tri, NULL) == 0);
	sim_world_set_debug(w, SIM_DEBUG_PAIRS);
	REQUIRE(sim_world_step(w, 1e-3f) == SIM_OK);
	const sim_debug_pair *p = NULL;
	int n = sim_world_debug_pairs(w, &p, NULL), broad = 0, near = 0;
	for (int i = 0; i < n; i++) {
		CHECK(p[i].kind == SIM_PAIR_VERTEX_OBSTACLE);
		CHECK(p[i].v[0] == 0 && p[i].v[1] == 0 && p[i].v[2] == -1 && p[i].v[3] == -1);
		broad += p[i].stage == SIM_PAIR_BROAD_PROXIMITY;
		near += p[i].stage == SIM_PAIR_PROXIMITY;
	}
	CHECK(broad >= 1 && near >= 1);
	/* no triangle obstacle: no obstacle vertex ids */
	CHECK(sim_world_debug_vertex_count(w) == 3);
	sim_world_destroy(&w);
}

/* Off (the default, and after turning it off): nothing recorded. */
static void test_off_records_nothing(void)
{
	sim_world *w = dart_world(true);
	REQUIRE(w);
	CHECK(sim_world_get_debug(w) == 0);
	REQUIRE(sim_world_step(w, 1e-3f) == SIM_OK);
	const sim_debug_pair *p = (const sim_debug_pair *)1;
	bool truncated = true;
	CHECK(sim_world_debug_pairs(w, &p, &truncated) == 0);
	CHECK(p == NULL && !truncated);
	CHECK(sim_world_debug_predicted(w) == NULL);
	CHECK(sim_world_stats(w)->collisions > 0);

	/* a fresh dart, still flying at the wall: now there are pairs to record (the stopped
	 * one floats where it stopped, and its new boxes meet nothing) */
	sim_world_destroy(&w);
	w = dart_world(true);
	REQUIRE(w);
	sim_world_set_debug(w, SIM_DEBUG_PAIRS | SIM_DEBUG_PREDICTED);
	REQUIRE(sim_world_step(w, 1e-3f) == SIM_OK);
	CHECK(sim_world_debug_pairs(w, NULL, NULL) > 0);
	CHECK(sim_world_debug_predicted(w) != NULL);
	sim_world_set_debug(w, 0);
	CHECK(sim_world_debug_pairs(w, &p, NULL) == 0);
	CHECK(sim_world_debug_predicted(w) == NULL);
	REQUIRE(sim_world_step(w, 1e-3f) == SIM_OK);
	CHECK(sim_world_debug_pairs(w, &p, NULL) == 0);
	CHECK(sim_world_debug_predicted(w) == NULL);
	/* one kind alone */
	sim_world_set_debug(w, SIM_DEBUG_PREDICTED);
	REQUIRE(sim_world_step(w, 1e-3f) == SIM_OK);
	CHECK(sim_world_debug_pairs(w, NULL, NULL) == 0);
	CHECK(sim_world_debug_predicted(w) != NULL);
	sim_world_destroy(&w);
}

/* The predicted positions are bit for bit those of the same world stepped with
 * collisions off: the integrator's part of the step is the same. */
static void predicted_matches(sim_world *on, sim_world *off, const char *what)
{
	sim_world_set_debug(on, SIM_DEBUG_PREDICTED);
	REQUIRE(sim_world_step(on, 1e-3f) == SIM_OK);
	REQUIRE(sim_world_step(off, 1e-3f) == SIM_OK);
	const vec4 *pred = sim_world_debug_predicted(on);
	REQUIRE(pred);
	int n = sim_world_vertex_count(on);
	REQUIRE(n == sim_world_vertex_count(off));
	CHECK_MSG(memcmp(pred, sim_world_positions(off), sizeof(vec4) * (size_t)n) == 0, "%s", what);
	/* the collision response did change something, so the test means something */
	CHECK_MSG(memcmp(pred, sim_world_positions(on), sizeof(vec4) * (size_t)n) != 0, "%s", what);
}

static void test_predicted_is_integrator_only(void)
{
	sim_world *on = dart_world(true), *off = dart_world(false);
	REQUIRE(on && off);
	predicted_matches(on, off, "dart");
	sim_world_destroy(&on);
	sim_world_destroy(&off);

	/* contacts only (the two cloths rest within their separation) */
	on = two_grids();
	off = two_grids();
	REQUIRE(on && off);
	sim_world_def d = *sim_world_get_def(off);
	d.collisions = false;
	REQUIRE(sim_world_set_def(off, &d) == SIM_OK);
	predicted_matches(on, off, "two grids");
	sim_world_destroy(&on);
	sim_world_destroy(&off);
}

static bool box_holds(const float *outer, const float *inner)
{
	for (int k = 0; k < 3; k++)
		if (!(outer[k] <= inner[k] && inner[3 + k] <= outer[3 + k]))
			return false;
	return true;
}

static bool box_holds_point(const float *b, const float *p)
{
	for (int k = 0; k < 3; k++)
		if (!(b[k] <= p[k] && p[k] <= b[3 + k]))
			return false;
	return true;
}

/* After some steps of the two-cloths scene (two cloth trees and the floor's): boxes
 * come in pre-order, each inside its parent (the last box one level up before it), the
 * roots hold every cloth vertex, the deepest level holds one box per triangle, and a
 * depth range returns the boxes of those levels whatever the capacity. */
static void test_boxes(void)
{
	sim_world *w = scn_create("two-cloths");
	REQUIRE(w);
	CHECK(sim_world_debug_tree_depth(w) == -1); /* the pipeline has not run */
	CHECK(sim_world_debug_boxes(w, 0, 100, NULL, 0) == 0);
	for (int s = 0; s < 50; s++)
		REQUIRE(sim_world_step(w, 1e-3f) == SIM_OK);
	int depth = sim_world_debug_tree_depth(w);
	REQUIRE(depth >= 2);
	int total = sim_world_debug_boxes(w, 0, depth, NULL, 0);
	REQUIRE(total > 0);
	float(*b)[7] = malloc(sizeof *b * (size_t)total);
	REQUIRE(b);
	CHECK(sim_world_debug_boxes(w, 0, depth, b, total) == total);
	CHECK(sim_world_debug_boxes(w, 0, depth + 5, NULL, 0) == total);

	int roots = 0, nested = 0, *per_level = calloc((size_t)depth + 1, sizeof(int));
	REQUIRE(per_level);
	for (int i = 0; i < total; i++) {
		int d = (int)b[i][6];
		CHECK(d >= 0 && d <= depth && (float)d == b[i][6]);
		if (d < 0 || d > depth)
			continue;
		per_level[d]++;
		if (d == 0) {
			roots++;
			continue;
		}
		int parent = i - 1;
		while (parent >= 0 && (int)b[parent][6] != d - 1)
			parent--;
		CHECK_MSG(parent >= 0 && (int)b[parent][6] == d - 1, "box %d at depth %d has no parent", i, d);
		CHECK_MSG(parent >= 0 && box_holds(b[parent], b[i]), "box %d not inside box %d", i, parent);
		nested += parent >= 0;
		/* nothing between the parent and this box is shallower than d */
		for (int j = parent + 1; j < i; j++)
			CHECK((int)b[j][6] >= d);
	}
	CHECK(roots == 3); /* lower, upper, floor */
	CHECK(nested == total - roots);
	/* a tree's triangle boxes sit one below its leaves, so each triangle is a box with no
	 * box below it: count the boxes whose next box (in pre-order) is not deeper */
	int childless = 0;
	for (int i = 0; i < total; i++)
		childless += i + 1 == total || b[i + 1][6] <= b[i][6];
	int triangles = 2; /* the floor's */
	for (int o = 0; o < sim_world_object_count(w); o++)
		triangles += sim_world_object_triangle_count(w, o);
	CHECK_MSG(childless == triangles, "%d boxes without children, %d triangles", childless, triangles);

	int n = sim_world_vertex_count(w);
	const vec4 *x = sim_world_positions(w);
	for (int v = 0; v < n; v++) {
		bool in = false;
		for (int i = 0; i < total && !in; i++)
			in = b[i][6] == 0.0f && box_holds_point(b[i], x[v]);
		CHECK_MSG(in, "vertex %d outside every root box", v);
	}

	/* ranges: level by level adds up; a small capacity fills the first boxes only */
	int sum = 0;
	for (int d = 0; d <= depth; d++) {
		int c = sim_world_debug_boxes(w, d, d, NULL, 0);
		CHECK(c == per_level[d]);
		sum += c;
	}
	CHECK(sum == total);
	CHECK(sim_world_debug_boxes(w, 0, 0, NULL, 0) == 3);
	CHECK(sim_world_debug_boxes(w, 3, 1, NULL, 0) == 0);
	float small[5][7];
	memset(small, 0x7f, sizeof small);
	CHECK(sim_world_debug_boxes(w, 0, depth, small, 4) == total);
	CHECK(memcmp(small, b, sizeof small[0] * 4) == 0);
	CHECK(small[4][0] == small[4][0] && memcmp(small[4], b[4], sizeof small[4]) != 0); /* untouched */

	/* without the pipeline there are no hierarchies to show */
	sim_world_def d = *sim_world_get_def(w);
	d.collisions = false;
	REQUIRE(sim_world_set_def(w, &d) == SIM_OK);
	CHECK(sim_world_debug_boxes(w, 0, depth, NULL, 0) == 0);
	CHECK(sim_world_debug_tree_depth(w) == -1);
	free(per_level);
	free(b);
	sim_world_destroy(&w);
}

/* Recording changes nothing: the same scene with and without it hashes the same after
 * every step; and on the way, in a scene with contacts, collisions and the floor, every
 * narrow pair is among the broad ones, the contact count matches the stats, and every
 * vertex id is valid (the floor's vertices among them). */
static void same_with_and_without(const char *scene, int steps)
{
	sim_world *plain = scn_create(scene), *rec = scn_create(scene);
	REQUIRE(plain && rec);
	sim_world_set_debug(rec, SIM_DEBUG_PAIRS | SIM_DEBUG_PREDICTED);
	float dt = 1e-3f;
	int n = sim_world_vertex_count(rec), ids = sim_world_debug_vertex_count(rec);
	CHECK(ids == n + 4); /* the floor plane's square */
	vec4 floor[4];
	CHECK(sim_world_debug_obstacle_vertices(rec, floor, 4) == 4);
	for (int k = 0; k < 4; k++)
		CHECK(fabsf(floor[k][1]) < 1e-6f && floor[k][3] == 0.0f);
	long contacts = 0, collisions = 0, stat_collisions = 0, floor_pairs = 0;
	bool diverged = false;
	for (int s = 0; s < steps && !diverged; s++) {
		REQUIRE(sim_world_step(plain, dt) == SIM_OK);
		REQUIRE(sim_world_step(rec, dt) == SIM_OK);
		if (sim_world_state_hash(plain) != sim_world_state_hash(rec)) {
			CHECK_MSG(false, "%s: states differ after step %d", scene, s + 1);
			diverged = true;
		}
		const sim_stats *a = sim_world_stats(plain), *b = sim_world_stats(rec);
		CHECK(a->contacts == b->contacts && a->collisions == b->collisions && a->impact_zones == b->impact_zones &&
		      a->self_contacts == b->self_contacts && a->largest_zone == b->largest_zone);
		bool truncated = true;
		const sim_debug_pair *p = NULL;
		int np = sim_world_debug_pairs(rec, &p, &truncated);
		CHECK(!truncated);
		CHECK(sim_world_debug_predicted(rec) != NULL);
		for (int i = 0; i < np; i++) {
			bool ok = p[i].stage < SIM_PAIR_STAGE_COUNT && p[i].kind < SIM_PAIR_KIND_COUNT &&
			          p[i].kind != SIM_PAIR_VERTEX_OBSTACLE && p[i].v[0] >= 0;
			for (int k = 0; k < 4; k++) {
				ok = ok && p[i].v[k] >= 0 && p[i].v[k] < ids;
				floor_pairs += p[i].v[k] >= n;
			}
			if (!ok) {
				CHECK_MSG(ok, "%s step %d: bad pair %d", scene, s + 1, i);
				break;
			}
		}
		int prox = count_stage(rec, SIM_PAIR_PROXIMITY), coll = count_stage(rec, SIM_PAIR_COLLISION);
		CHECK(prox == sim_world_stats(rec)->contacts);
		CHECK(coll <= sim_world_stats(rec)->collisions);
		contacts += prox;
		collisions += coll;
		stat_collisions += sim_world_stats(rec)->collisions;
		if (prox > 0 || coll > 0 || s % 50 == 0) {
			keyset np_ = stage_set(rec, SIM_PAIR_PROXIMITY), bp = stage_set(rec, SIM_PAIR_BROAD_PROXIMITY);
			keyset nc = stage_set(rec, SIM_PAIR_COLLISION), bc = stage_set(rec, SIM_PAIR_BROAD_COLLISION);
			CHECK_MSG(subset(&np_, &bp), "%s step %d: a contact is not a broad pair", scene, s + 1);
			CHECK_MSG(subset(&nc, &bc), "%s step %d: a collision is not a broad pair", scene, s + 1);
			free(np_.k), free(bp.k), free(nc.k), free(bc.k);
		}
	}
	printf("%s: %d steps, %ld contacts, %ld collisions recorded (stats: %ld), %ld floor vertex ids\n", scene, steps,
	       contacts, collisions, stat_collisions, floor_pairs);
	CHECK(contacts > 0 && floor_pairs > 0);
	sim_world_destroy(&plain);
	sim_world_destroy(&rec);
}

static void test_recording_changes_nothing(void)
{
	same_with_and_without("two-cloths", 400);
	same_with_and_without("pile", 300);
}

/* Two 41 x 41 sheets of 0.4 m, one 2 mm above the other: about 80 000 candidate pairs
 * between them at every substep (within one flat sheet the broad phase keeps none). */
static sim_world *stacked_sheets(void)
{
	return crossed_grids(41, 0.4f, (const float[3]){-0.2f, 0.0f, 0.2f}, (const float[3]){-0.2f, 0.002f, 0.2f});
}

/* More pairs than the cap: the log stops at SIM_DEBUG_MAX_PAIRS and says so, and the
 * step itself is not affected. */
static void test_truncation(void)
{
	sim_world *plain = stacked_sheets(), *rec = stacked_sheets();
	REQUIRE(plain && rec);
	sim_world_def d = *sim_world_get_def(rec);
	d.substeps = 20;
	REQUIRE(sim_world_set_def(rec, &d) == SIM_OK && sim_world_set_def(plain, &d) == SIM_OK);
	sim_world_set_debug(rec, SIM_DEBUG_PAIRS);
	REQUIRE(sim_world_step(plain, 1e-3f) == SIM_OK);
	REQUIRE(sim_world_step(rec, 1e-3f) == SIM_OK);
	const sim_debug_pair *p = NULL;
	bool truncated = false;
	int n = sim_world_debug_pairs(rec, &p, &truncated);
	CHECK_MSG(n == SIM_DEBUG_MAX_PAIRS && truncated, "%d pairs, truncated %d", n, truncated);
	CHECK(p && p[n - 1].stage < SIM_PAIR_STAGE_COUNT && p[n - 1].kind < SIM_PAIR_KIND_COUNT);
	CHECK(sim_world_state_hash(plain) == sim_world_state_hash(rec));
	/* the next step starts afresh */
	d.substeps = 1;
	REQUIRE(sim_world_set_def(rec, &d) == SIM_OK);
	REQUIRE(sim_world_step(rec, 1e-3f) == SIM_OK);
	n = sim_world_debug_pairs(rec, &p, &truncated);
	CHECK(n > 0 && n < SIM_DEBUG_MAX_PAIRS && !truncated);
	sim_world_destroy(&plain);
	sim_world_destroy(&rec);
}

/* A 13 x 13 cloth released hanging above the floor, as the pile scene's, folding onto
 * itself: integrator and step given. */
static sim_world *small_pile(sim_integrator integ) { return hanging_pile(integ, 13, 0.4f, 0.45f); }

/* The broad phase misses no contact and no collision: while a cloth folds onto itself,
 * every pair of its own primitives that brute force over all of them finds closer than
 * the separation at a step's start is among the contacts' candidates (the broad
 * proximity pairs), but for a relative 1e-6 at the border, where two distance routines
 * may round apart; and so is every pair that would touch or cross on the integrator's
 * motion, the straight paths from the step's start to the predicted positions (the floor
 * is triangles, so nothing moved the cloth before the broad phase).  (The recorded
 * contacts and collisions are fewer: a pair already separating fast enough gets no
 * impulse.)  The candidates are made once and kept for several substeps while the
 * vertices stay in their moving boxes, and culled along other axes than x, y and z
 * (sep_axis.h), so this holds only if those boxes, their refreshes and the axes are
 * right: at 1 ms (a window of several substeps, boxes that stand still at rest) and at
 * 1/90 s (a window of one).  And so do the patches (docs/collisions.md), whose pairs it
 * leaves out. */
static void broad_misses_nothing(sim_integrator integ, float dt, int steps)
{
	sim_world *w = small_pile(integ);
	REQUIRE(w);
	sim_world_set_debug(w, SIM_DEBUG_PAIRS | SIM_DEBUG_PREDICTED);
	int n = sim_world_vertex_count(w);
	int tris[3 * 288], edges[2 * 456];
	int nt = world_triangles(w, tris), ne = unique_edges(tris, nt, edges, 456);
	REQUIRE(nt == 288 && ne > 0);
	const sim_material *m = sim_world_object_material(w, 0);
	const double sep = (double)m->thickness, lo = sep * (1.0 - 1e-6);
	vec4 *x = malloc(sizeof(vec4) * (size_t)n);
	REQUIRE(x);
	long total = 0, missed = 0, crossing = 0, uncaught = 0, patches = 0, blocks = 0;
	int self_steps = 0;
	for (int s = 0; s < steps; s++) {
		memcpy(x, sim_world_positions(w), sizeof(vec4) * (size_t)n);
		sim_result r = sim_world_step(w, dt);
		CHECK_MSG(r == SIM_OK, "step %d: %s", s + 1, sim_result_string(r));
		if (r != SIM_OK)
			break;
		keyset got = stage_set(w, SIM_PAIR_BROAD_PROXIMITY);
		int own = 0; /* the cloth's own pairs: the floor's ids are above n */
		for (int i = 0; i < got.n; i++) {
			bool cloth = true;
			for (int k = 0; k < 4; k++)
				cloth &= got.k[i].v[k] < n;
			if (cloth)
				got.k[own++] = got.k[i];
		}
		got.n = own;
		qsort(got.k, (size_t)got.n, sizeof(pair_key), pair_key_cmp);
		keyset want = close_pairs(x, n, tris, nt, edges, ne, lo, false, NULL);
		int found = want.n;
		for (int i = 0; i < want.n; i++)
			missed += !contains(&got, &want.k[i]);
		free(want.k);
		const vec4 *pred = sim_world_debug_predicted(w);
		REQUIRE(pred);
		keyset cross = crossing_pairs(x, pred, n, tris, nt, edges, ne);
		for (int i = 0; i < cross.n; i++)
			uncaught += !contains(&got, &cross.k[i]);
		crossing += cross.n;
		free(cross.k);
		total += found;
		self_steps += found > 0;
		patches += sim_world_stats(w)->patches;
		blocks += sim_world_stats(w)->patch_blocks;
		free(got.k);
	}
	printf("%s at %g s: %d steps, %ld pairs of the cloth closer than %g m over %d steps, %ld not candidates; "
	       "%ld pairs meeting on the predicted paths, %ld not candidates; %.0f %% of the patches certified\n",
	       sim_integrator_name(integ), (double)dt, steps, total, sep, self_steps, missed, crossing, uncaught,
	       blocks ? 100.0 * (double)patches / (double)blocks : 0.0);
	/* the patches leave pairs out of the broad phase all along: half of them or more
	 * certified on average, yet nothing missed */
	CHECK(blocks > 0 && 2 * patches > blocks);
	CHECK(missed == 0);
	CHECK(uncaught == 0);
	CHECK(crossing > 0);
	CHECK_MSG(self_steps > 50, "only %d steps with self contacts", self_steps);
	free(x);
	sim_world_destroy(&w);
}

static void test_broad_phase_misses_nothing(void)
{
	broad_misses_nothing(SIM_SYMPLECTIC, 1e-3f, 1500);
	broad_misses_nothing(SIM_IMPLICIT, 1.0f / 90.0f, 150);
}

static const test_case tests[] = {
	TEST(test_truncation),
	TEST(test_proximity_pairs_exact),
	TEST(test_collision_pairs_exact),
	TEST(test_vertex_obstacle_pairs),
	TEST(test_off_records_nothing),
	TEST(test_predicted_is_integrator_only),
	TEST(test_boxes),
	TEST(test_recording_changes_nothing),
	TEST(test_broad_phase_misses_nothing),
};
TEST_MAIN(tests)
