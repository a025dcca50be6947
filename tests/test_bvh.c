/* The bounding volume hierarchy and sim_world_check.
 *
 * The hierarchy's contract is exact: it reports precisely the triangle pairs whose
 * swept, inflated boxes overlap (closed boxes), each once.  So every traversal here is
 * compared with a brute-force pass over all pairs using boxes the test computes on its
 * own, on random triangle soups with moving, degenerate and identical triangles, before
 * and after large motions.  The world check is compared with hand-made configurations
 * and with an all-pairs count. */
#include "sim_internal.h"
#include "sim/sim_geom.h"

#include "test.h"

#include <stdint.h>

/* Deterministic generator (xorshift64*). */
static uint64_t rng_state;

static void rng_seed(uint64_t seed)
{
	rng_state = seed ? seed : 1;
}

static uint64_t rng_next(void)
{
	rng_state ^= rng_state >> 12;
	rng_state ^= rng_state << 25;
	rng_state ^= rng_state >> 27;
	return rng_state * 0x2545f4914f6cdd1dull;
}

static float rng_float(float lo, float hi)
{
	return lo + (hi - lo) * (float)((double)(rng_next() >> 11) * 0x1p-53);
}

static int rng_below(int n)
{
	return (int)(rng_next() % (uint64_t)n);
}

/* ---- triangle soups ------------------------------------------------------------------------- */

typedef struct soup {
	int nv, nt;
	vec4 *x0, *x1;
	int *tris;
} soup;

static void soup_free(soup *s)
{
	free(s->x0);
	free(s->x1);
	free(s->tris);
	memset(s, 0, sizeof *s);
}

/* nt triangles of about `size` scattered in a cube of side `extent`.  Most have their
 * own vertices; some share vertices with the previous triangle (as in a mesh), some move
 * between x0 and x1, some are points or segments, and some repeat the previous
 * triangle's positions exactly (identical boxes and centres). */
static soup soup_make(int nt, float extent, float size, uint64_t seed)
{
	rng_seed(seed);
	soup s = {3 * nt, nt, NULL, NULL, NULL};
	s.x0 = calloc((size_t)s.nv, sizeof(vec4));
	s.x1 = calloc((size_t)s.nv, sizeof(vec4));
	s.tris = malloc(sizeof(int) * 3 * (size_t)nt);
	if (!s.x0 || !s.x1 || !s.tris)
		return s;
	for (int t = 0; t < nt; t++) {
		int *tri = &s.tris[3 * t];
		vec3 c = {rng_float(0, extent), rng_float(0, extent), rng_float(0, extent)};
		int kind = rng_below(20);
		for (int k = 0; k < 3; k++) {
			tri[k] = 3 * t + k;
			float *p = s.x0[3 * t + k];
			for (int a = 0; a < 3; a++)
				p[a] = c[a] + rng_float(-size, size);
		}
		if (kind == 0) { /* a point */
			glm_vec3_copy(s.x0[3 * t], s.x0[3 * t + 1]);
			glm_vec3_copy(s.x0[3 * t], s.x0[3 * t + 2]);
		} else if (kind == 1) { /* a segment */
			glm_vec3_lerp(s.x0[3 * t], s.x0[3 * t + 1], 0.25f, s.x0[3 * t + 2]);
		} else if (kind == 2 && t > 0) { /* the previous triangle again */
			for (int k = 0; k < 3; k++)
				glm_vec3_copy(s.x0[3 * (t - 1) + k], s.x0[3 * t + k]);
		} else if (kind == 3 && t > 0) { /* shares an edge with the previous one */
			tri[0] = s.tris[3 * (t - 1)];
			tri[1] = s.tris[3 * (t - 1) + 1];
		}
		for (int k = 0; k < 3; k++)
			glm_vec3_copy(s.x0[3 * t + k], s.x1[3 * t + k]);
		if (kind >= 16) { /* moves over the step */
			vec3 d = {rng_float(-3 * size, 3 * size), rng_float(-3 * size, 3 * size),
			          rng_float(-3 * size, 3 * size)};
			for (int k = 0; k < 3; k++)
				glm_vec3_add(s.x1[3 * t + k], d, s.x1[3 * t + k]);
		}
	}
	return s;
}

/* The test's own box of a triangle over x0 and x1, inflated by margin. */
static void tri_box(const soup *s, int t, float margin, float lo[3], float hi[3])
{
	for (int a = 0; a < 3; a++) {
		lo[a] = INFINITY;
		hi[a] = -INFINITY;
		for (int k = 0; k < 3; k++) {
			int v = s->tris[3 * t + k];
			lo[a] = fminf(lo[a], fminf(s->x0[v][a], s->x1[v][a]));
			hi[a] = fmaxf(hi[a], fmaxf(s->x0[v][a], s->x1[v][a]));
		}
		lo[a] -= margin;
		hi[a] += margin;
	}
}

static bool boxes_overlap(const soup *p, int a, float mp, const soup *q, int b, float mq)
{
	float la[3], ha[3], lb[3], hb[3];
	tri_box(p, a, mp, la, ha);
	tri_box(q, b, mq, lb, hb);
	for (int k = 0; k < 3; k++)
		if (la[k] > hb[k] || lb[k] > ha[k])
			return false;
	return true;
}

/* ---- pair logs ------------------------------------------------------------------------------ */

typedef struct pair_log {
	int count, capacity;
	int *pairs; /* 2 per pair, in report order */
	bool overflow;
} pair_log;

static void log_pair(void *user, int a, int b)
{
	pair_log *l = user;
	if (l->count == l->capacity) {
		int cap = l->capacity ? 2 * l->capacity : 1024;
		int *p = realloc(l->pairs, sizeof(int) * 2 * (size_t)cap);
		if (!p) {
			l->overflow = true;
			return;
		}
		l->pairs = p;
		l->capacity = cap;
	}
	l->pairs[2 * l->count] = a;
	l->pairs[2 * l->count + 1] = b;
	l->count++;
}

static void log_free(pair_log *l)
{
	free(l->pairs);
	memset(l, 0, sizeof *l);
}

/* Compares a log with brute force: self (p == q) wants a < b, each overlapping pair once
 * and nothing else.  Returns the number of discrepancies. */
static int compare_with_brute_force(const pair_log *l, const soup *p, float mp, const soup *q, float mq, bool self)
{
	int bad = l->overflow ? 1 : 0;
	unsigned char *seen = calloc((size_t)p->nt * (size_t)q->nt, 1);
	if (!seen)
		return 1;
	for (int k = 0; k < l->count; k++) {
		int a = l->pairs[2 * k], b = l->pairs[2 * k + 1];
		if (a < 0 || a >= p->nt || b < 0 || b >= q->nt || (self && a >= b)) {
			bad++;
			continue;
		}
		if (seen[(size_t)a * (size_t)q->nt + (size_t)b]++)
			bad++; /* reported twice */
	}
	int expected = 0;
	for (int a = 0; a < p->nt; a++)
		for (int b = self ? a + 1 : 0; b < q->nt; b++) {
			bool want = boxes_overlap(p, a, mp, q, b, mq);
			expected += want;
			if (want != (seen[(size_t)a * (size_t)q->nt + (size_t)b] != 0))
				bad++;
		}
	CHECK_MSG(bad == 0, "%d discrepancies (%d pairs reported, %d expected)", bad, l->count, expected);
	free(seen);
	return bad;
}

static int self_check(const sim_bvh *b, const soup *s, float margin)
{
	pair_log l = {0};
	sim_bvh_self_pairs(b, log_pair, &l);
	int bad = compare_with_brute_force(&l, s, margin, s, margin, true);
	log_free(&l);
	return bad;
}

/* ---- hierarchy ------------------------------------------------------------------------------ */

static void self_pairs_match_brute_force(void)
{
	const float margins[] = {0.0f, 0.004f, 0.03f};
	for (int m = 0; m < 3; m++)
		for (uint64_t seed = 1; seed <= 3; seed++) {
			soup s = soup_make(300 + 50 * (int)seed, 1.0f, 0.04f, seed * 7919);
			REQUIRE(s.tris);
			sim_bvh *b = sim_bvh_create();
			REQUIRE(b);
			CHECK(sim_bvh_update(b, s.tris, s.nt, s.x0, s.x1, margins[m]));
			CHECK(self_check(b, &s, margins[m]) == 0);
			sim_bvh_destroy(b);
			soup_free(&s);
		}
}

/* A tree fitted to given boxes, queried one box at a time (the collision broad phase's
 * in-place refresh), reports exactly the triangles whose inflated boxes overlap the
 * query's, before and after a refit to moved boxes. */
static void hit_counter(void *user, int t)
{
	int *seen = user;
	seen[t]++;
}

static void box_queries_match_brute_force(void)
{
	const float margin = 0.004f;
	for (uint64_t seed = 1; seed <= 3; seed++) {
		soup s = soup_make(400, 1.0f, 0.04f, seed * 104729);
		REQUIRE(s.tris);
		sim_box *boxes = malloc(sizeof(sim_box) * (size_t)s.nt);
		int *seen = calloc((size_t)s.nt, sizeof(int));
		sim_bvh *b = sim_bvh_create();
		REQUIRE(boxes && seen && b);
		for (int pass = 0; pass < 2; pass++) {
			for (int t = 0; t < s.nt; t++) {
				tri_box(&s, t, 0.0f, boxes[t].lo, boxes[t].hi);
				if (pass == 1 && t % 3 == 0) /* moved: a refit, perhaps a rebuild */
					for (int a = 0; a < 3; a++)
						boxes[t].lo[a] += 0.2f, boxes[t].hi[a] += 0.2f;
			}
			CHECK(sim_bvh_update_boxes(b, boxes, NULL, s.nt, margin));
			int bad = 0;
			for (int q = 0; q < s.nt; q += 7) {
				memset(seen, 0, sizeof(int) * (size_t)s.nt);
				sim_bvh_query(b, &boxes[q], NULL, margin, hit_counter, seen);
				for (int t = 0; t < s.nt; t++) {
					bool want = true;
					for (int a = 0; a < 3; a++)
						want = want && boxes[q].lo[a] - margin <= boxes[t].hi[a] + margin &&
						       boxes[t].lo[a] - margin <= boxes[q].hi[a] + margin;
					bad += seen[t] != (want ? 1 : 0);
				}
			}
			CHECK_MSG(bad == 0, "pass %d: %d discrepancies", pass, bad);
		}
		sim_bvh_destroy(b);
		free(boxes);
		free(seen);
		soup_free(&s);
	}
}

static void identical_triangles(void)
{
	/* Every centre coincides: the median split must still divide, and every pair
	 * overlaps. */
	soup s = soup_make(100, 1.0f, 0.1f, 42);
	REQUIRE(s.tris);
	for (int v = 3; v < s.nv; v++) {
		glm_vec4_copy(s.x0[v % 3], s.x0[v]);
		glm_vec4_copy(s.x0[v % 3], s.x1[v]);
	}
	for (int t = 0; t < s.nt; t++)
		for (int k = 0; k < 3; k++)
			s.tris[3 * t + k] = 3 * t + k;
	sim_bvh *b = sim_bvh_create();
	REQUIRE(b);
	CHECK(sim_bvh_update(b, s.tris, s.nt, s.x0, s.x1, 0.0f));
	pair_log l = {0};
	sim_bvh_self_pairs(b, log_pair, &l);
	CHECK(l.count == 100 * 99 / 2);
	CHECK(compare_with_brute_force(&l, &s, 0.0f, &s, 0.0f, true) == 0);
	log_free(&l);
	sim_bvh_destroy(b);
	soup_free(&s);
}

static void touching_boxes_overlap(void)
{
	/* Point triangles on an integer lattice with margin 1/2: neighbours' boxes touch
	 * exactly (dyadic values, no rounding), and closed boxes must count as overlapping:
	 * each point pairs with its up to 26 lattice neighbours. */
	soup s = soup_make(8 * 8 * 3, 1.0f, 0.1f, 8);
	REQUIRE(s.tris);
	int t = 0, expected = 0;
	for (int i = 0; i < 8; i++)
		for (int j = 0; j < 8; j++)
			for (int k = 0; k < 3; k++, t++)
				for (int v = 0; v < 3; v++) {
					s.tris[3 * t + v] = 3 * t + v;
					vec4 p = {(float)i, (float)j, (float)k, 1.0f};
					glm_vec4_copy(p, s.x0[3 * t + v]);
					glm_vec4_copy(p, s.x1[3 * t + v]);
				}
	for (int i = 0; i < 8; i++)
		for (int j = 0; j < 8; j++)
			for (int k = 0; k < 3; k++) {
				int ni = 1 + (i > 0) + (i < 7), nj = 1 + (j > 0) + (j < 7), nk = 1 + (k > 0) + (k < 2);
				expected += ni * nj * nk - 1;
			}
	sim_bvh *b = sim_bvh_create(), *c = sim_bvh_create();
	REQUIRE(b && c);
	CHECK(sim_bvh_update(b, s.tris, s.nt, s.x0, s.x1, 0.5f));
	pair_log l = {0};
	sim_bvh_self_pairs(b, log_pair, &l);
	CHECK(2 * l.count == expected);
	CHECK(compare_with_brute_force(&l, &s, 0.5f, &s, 0.5f, true) == 0);
	log_free(&l);
	/* Tree against tree: the same pairs both ways round plus each point with itself. */
	CHECK(sim_bvh_update(c, s.tris, s.nt, s.x0, s.x1, 0.5f));
	sim_bvh_pairs(b, c, log_pair, &l);
	CHECK(l.count == expected + s.nt);
	CHECK(compare_with_brute_force(&l, &s, 0.5f, &s, 0.5f, false) == 0);
	log_free(&l);
	sim_bvh_destroy(b);
	sim_bvh_destroy(c);
	soup_free(&s);
}

static void tree_pairs_match_brute_force(void)
{
	soup p = soup_make(320, 1.0f, 0.05f, 11);
	soup q = soup_make(250, 1.2f, 0.03f, 12);
	REQUIRE(p.tris && q.tris);
	sim_bvh *bp = sim_bvh_create(), *bq = sim_bvh_create();
	REQUIRE(bp && bq);
	CHECK(sim_bvh_update(bp, p.tris, p.nt, p.x0, p.x1, 0.01f));
	CHECK(sim_bvh_update(bq, q.tris, q.nt, q.x0, q.x1, 0.002f));
	pair_log l = {0};
	sim_bvh_pairs(bp, bq, log_pair, &l);
	CHECK(l.count > 0);
	CHECK(compare_with_brute_force(&l, &p, 0.01f, &q, 0.002f, false) == 0);
	log_free(&l);
	/* The other way round: the same pairs, swapped. */
	sim_bvh_pairs(bq, bp, log_pair, &l);
	CHECK(compare_with_brute_force(&l, &q, 0.002f, &p, 0.01f, false) == 0);
	log_free(&l);
	sim_bvh_destroy(bp);
	sim_bvh_destroy(bq);
	soup_free(&p);
	soup_free(&q);
}

static void move_all(soup *s, void (*move)(float *p, void *arg), void *arg)
{
	for (int v = 0; v < s->nv; v++) {
		move(s->x0[v], arg);
		move(s->x1[v], arg);
	}
}

static void jitter(float *p, void *arg)
{
	float r = *(float *)arg;
	for (int a = 0; a < 3; a++)
		p[a] += rng_float(-r, r);
}

static void translate(float *p, void *arg)
{
	glm_vec3_add(p, (float *)arg, p);
}

/* Scales by 1.35 about a far point: every box moves far and grows by at most 1.35 per
 * side, so the summed area grows by less than 1.35^2 < 2. */
static void scale_far(float *p, void *arg)
{
	(void)arg;
	for (int a = 0; a < 3; a++)
		p[a] = 40.0f + 1.35f * (p[a] - 40.0f);
}

/* Sends every vertex to a random place in a big box: neighbours in the tree are now far
 * apart, so the refitted boxes swell far past the rule. */
static void scatter(float *p, void *arg)
{
	(void)arg;
	for (int a = 0; a < 3; a++)
		p[a] = rng_float(-5.0f, 5.0f);
}

/* Running the jobs of sim_bvh_split in job order reports the whole traversal's pairs in
 * its order, for any target count, for a tree with itself and for two trees; and jobs
 * run in reverse order report the same multiset (they are independent). */
static int jobs_log(const sim_bvh *p, const sim_bvh *q, int target, bool backwards, pair_log *l)
{
	enum { ROOM = 4096 };
	static sim_bvh_job jobs[ROOM], scratch[ROOM];
	int n = sim_bvh_split(p, q, jobs, scratch, ROOM, target);
	for (int k = 0; k < n; k++)
		sim_bvh_run_job(p, q, jobs[backwards ? n - 1 - k : k], log_pair, l);
	return n;
}

static bool same_log(const pair_log *a, const pair_log *b)
{
	return a->count == b->count && !a->overflow && !b->overflow &&
	       (a->count == 0 || memcmp(a->pairs, b->pairs, sizeof(int) * 2 * (size_t)a->count) == 0);
}

static int cmp_pair(const void *x, const void *y)
{
	const int *a = x, *b = y;
	return a[0] != b[0] ? (a[0] > b[0]) - (a[0] < b[0]) : (a[1] > b[1]) - (a[1] < b[1]);
}

static void split_jobs_keep_order(void)
{
	soup p = soup_make(900, 1.0f, 0.05f, 21);
	soup q = soup_make(400, 1.2f, 0.04f, 22);
	REQUIRE(p.tris && q.tris);
	sim_bvh *bp = sim_bvh_create(), *bq = sim_bvh_create();
	REQUIRE(bp && bq);
	CHECK(sim_bvh_update(bp, p.tris, p.nt, p.x0, p.x1, 0.01f));
	CHECK(sim_bvh_update(bq, q.tris, q.nt, q.x0, q.x1, 0.004f));
	for (int two = 0; two < 2; two++) {
		const sim_bvh *a = bp, *b = two ? bq : bp;
		pair_log whole = {0};
		if (two)
			sim_bvh_pairs(a, b, log_pair, &whole);
		else
			sim_bvh_self_pairs(a, log_pair, &whole);
		REQUIRE(whole.count > 100);
		static const int targets[] = {1, 2, 3, 7, 64, 500, 100000};
		for (size_t t = 0; t < sizeof targets / sizeof targets[0]; t++) {
			pair_log l = {0};
			int n = jobs_log(a, b, targets[t], false, &l);
			CHECK_MSG(same_log(&l, &whole), "%s, target %d: %d jobs, %d pairs against %d",
			          two ? "two trees" : "one tree", targets[t], n, l.count, whole.count);
			/* the split really splits (the soup has far more than 64 leaf pairs) */
			if (targets[t] >= 64)
				CHECK_MSG(n >= 64, "target %d: only %d jobs", targets[t], n);
			pair_log r = {0};
			jobs_log(a, b, targets[t], true, &r);
			CHECK(r.count == whole.count && !r.overflow);
			if (r.count == whole.count && !r.overflow) {
				pair_log sorted = {0};
				for (int k = 0; k < whole.count; k++)
					log_pair(&sorted, whole.pairs[2 * k], whole.pairs[2 * k + 1]);
				qsort(sorted.pairs, (size_t)sorted.count, 2 * sizeof(int), cmp_pair);
				qsort(r.pairs, (size_t)r.count, 2 * sizeof(int), cmp_pair);
				CHECK(same_log(&r, &sorted));
				log_free(&sorted);
			}
			log_free(&r);
			log_free(&l);
		}
		log_free(&whole);
	}
	/* two trees whose roots are apart: no job */
	pair_log none = {0};
	move_all(&q, translate, (float[3]){5.0f, 0.0f, 0.0f});
	CHECK(sim_bvh_update(bq, q.tris, q.nt, q.x0, q.x1, 0.004f));
	CHECK(jobs_log(bp, bq, 64, false, &none) == 0 && none.count == 0);
	sim_bvh_destroy(bp);
	sim_bvh_destroy(bq);
	soup_free(&p);
	soup_free(&q);
}

/* sim_bvh_run_job_masks' masks, expanded as its contract says (bits low first, the
 * smaller triangle first when sorted), give sim_bvh_run_job's pairs in its order, job by
 * job: for a tree with itself and two trees, with and without the neighbour filter. */
static soup grid_soup(int n, uint64_t seed);

typedef struct mask_log {
	pair_log *log;
	int calls, empty; /* calls, and calls with an empty mask (there must be none) */
} mask_log;

static void log_mask(void *user, const int *ta, const int *tb, unsigned mask, bool sorted)
{
	mask_log *ml = user;
	ml->calls++;
	ml->empty += mask == 0;
	for (int bit = 0; bit < 16; bit++) {
		if (!(mask >> bit & 1u))
			continue;
		int a = ta[bit >> 2], b = tb[bit & 3];
		if (sorted && b < a)
			log_pair(ml->log, b, a);
		else
			log_pair(ml->log, a, b);
	}
}

static void masks_give_the_jobs_pairs(void)
{
	enum { ROOM = 4096 };
	static sim_bvh_job jobs[ROOM], scratch[ROOM];
	soup g = grid_soup(24, 4242);
	soup p = soup_make(900, 1.0f, 0.05f, 23);
	soup q = soup_make(400, 1.2f, 0.04f, 24);
	REQUIRE(g.tris && p.tris && q.tris);
	sim_bvh *bg = sim_bvh_create(), *bp = sim_bvh_create(), *bq = sim_bvh_create();
	REQUIRE(bg && bp && bq);
	CHECK(sim_bvh_update(bp, p.tris, p.nt, p.x0, p.x1, 0.01f));
	CHECK(sim_bvh_update(bq, q.tris, q.nt, q.x0, q.x1, 0.004f));
	for (int variant = 0; variant < 4; variant++) {
		/* 0: soup with itself, 1: two soups, 2 and 3: the grid with itself, without and
		 * with its vertices (the neighbour filter) */
		const sim_bvh *a = variant < 2 ? bp : bg, *b = variant == 1 ? bq : a;
		if (variant >= 2) {
			sim_box *boxes = malloc(sizeof(sim_box) * (size_t)g.nt);
			REQUIRE(boxes);
			for (int t = 0; t < g.nt; t++)
				tri_box(&g, t, 0.0f, boxes[t].lo, boxes[t].hi);
			CHECK(sim_bvh_update_boxes(bg, boxes, variant == 3 ? g.tris : NULL, g.nt, 0.002f));
			free(boxes);
		}
		int n = sim_bvh_split(a, b, jobs, scratch, ROOM, 64);
		CHECK(n >= 64);
		pair_log want = {0}, got = {0};
		mask_log ml = {&got, 0, 0};
		for (int k = 0; k < n; k++) {
			sim_bvh_run_job(a, b, jobs[k], log_pair, &want);
			sim_bvh_run_job_masks(a, b, jobs[k], log_mask, &ml);
		}
		CHECK_MSG(want.count > 200, "variant %d: %d pairs", variant, want.count);
		CHECK_MSG(same_log(&got, &want), "variant %d: %d pairs against %d", variant, got.count, want.count);
		/* fewer calls than pairs: the point of the masks */
		CHECK_MSG(ml.empty == 0 && ml.calls < want.count, "variant %d: %d calls (%d empty) for %d pairs", variant,
		          ml.calls, ml.empty, want.count);
		log_free(&want);
		log_free(&got);
	}
	sim_bvh_destroy(bg), sim_bvh_destroy(bp), sim_bvh_destroy(bq);
	soup_free(&g), soup_free(&p), soup_free(&q);
}

static void refit_and_rebuild_rule(void)
{
	soup s = soup_make(400, 1.0f, 0.04f, 99);
	REQUIRE(s.tris);
	const float margin = 0.005f;
	sim_bvh *b = sim_bvh_create();
	REQUIRE(b);
	CHECK(sim_bvh_build_count(b) == 0);
	CHECK(sim_bvh_update(b, s.tris, s.nt, s.x0, s.x1, margin));
	CHECK(sim_bvh_build_count(b) == 1);
	CHECK(self_check(b, &s, margin) == 0);

	/* Small motion: refit only. */
	float r = 0.002f;
	rng_seed(5);
	move_all(&s, jitter, &r);
	CHECK(sim_bvh_update(b, s.tris, s.nt, s.x0, s.x1, margin));
	CHECK(sim_bvh_build_count(b) == 1);
	CHECK(self_check(b, &s, margin) == 0);

	/* A long rigid translation: every box moves, the quality does not change. */
	vec3 d = {17.0f, -3.5f, 250.0f};
	move_all(&s, translate, d);
	CHECK(sim_bvh_update(b, s.tris, s.nt, s.x0, s.x1, margin));
	CHECK(sim_bvh_build_count(b) == 1);
	CHECK(self_check(b, &s, margin) == 0);

	/* Large motion within the rule: refit only, and still exact. */
	move_all(&s, scale_far, NULL);
	CHECK(sim_bvh_update(b, s.tris, s.nt, s.x0, s.x1, margin));
	CHECK(sim_bvh_build_count(b) == 1);
	CHECK(self_check(b, &s, margin) == 0);

	/* Scrambled: must rebuild, and be exact. */
	rng_seed(6);
	move_all(&s, scatter, NULL);
	CHECK(sim_bvh_update(b, s.tris, s.nt, s.x0, s.x1, margin));
	CHECK(sim_bvh_build_count(b) == 2);
	CHECK(self_check(b, &s, margin) == 0);

	/* The rebuilt tree fits the new layout: small motion refits again. */
	r = 0.001f;
	move_all(&s, jitter, &r);
	CHECK(sim_bvh_update(b, s.tris, s.nt, s.x0, s.x1, margin));
	CHECK(sim_bvh_build_count(b) == 2);
	CHECK(self_check(b, &s, margin) == 0);

	/* A different count builds. */
	CHECK(sim_bvh_update(b, s.tris, s.nt - 7, s.x0, s.x1, margin));
	CHECK(sim_bvh_build_count(b) == 3);
	soup fewer = s;
	fewer.nt = s.nt - 7;
	CHECK(self_check(b, &fewer, margin) == 0);

	sim_bvh_destroy(b);
	soup_free(&s);
}

static void refit_without_rebuild_is_exact(void)
{
	/* Large per-vertex motion whose area growth stays inside the rule is the case where
	 * a stale refit could go wrong; check it over several rounds of growing jitter. */
	soup s = soup_make(300, 1.0f, 0.05f, 123);
	REQUIRE(s.tris);
	sim_bvh *b = sim_bvh_create();
	REQUIRE(b);
	CHECK(sim_bvh_update(b, s.tris, s.nt, s.x0, s.x1, 0.0f));
	rng_seed(77);
	int refits = 0;
	for (int round = 0; round < 8; round++) {
		float r = 0.01f * (float)(round + 1);
		move_all(&s, jitter, &r);
		int before = sim_bvh_build_count(b);
		CHECK(sim_bvh_update(b, s.tris, s.nt, s.x0, s.x1, 0.0f));
		refits += sim_bvh_build_count(b) == before;
		CHECK(self_check(b, &s, 0.0f) == 0);
	}
	CHECK(refits > 0);
	sim_bvh_destroy(b);
	soup_free(&s);
}

static void empty_and_single(void)
{
	soup s = soup_make(5, 1.0f, 0.5f, 3);
	REQUIRE(s.tris);
	sim_bvh *b = sim_bvh_create(), *c = sim_bvh_create();
	REQUIRE(b && c);
	pair_log l = {0};
	/* Never updated: empty. */
	sim_bvh_self_pairs(b, log_pair, &l);
	sim_bvh_pairs(b, c, log_pair, &l);
	CHECK(l.count == 0);
	CHECK(sim_bvh_update(b, s.tris, 0, s.x0, s.x1, 0.0f));
	CHECK(sim_bvh_update(c, s.tris, 1, s.x0, s.x1, 1.0f));
	sim_bvh_self_pairs(b, log_pair, &l);
	sim_bvh_self_pairs(c, log_pair, &l);
	sim_bvh_pairs(b, c, log_pair, &l);
	sim_bvh_pairs(c, b, log_pair, &l);
	CHECK(l.count == 0);
	/* One triangle against itself across two trees is a pair. */
	sim_bvh_pairs(c, c, log_pair, &l);
	CHECK(l.count == 1 && l.pairs[0] == 0 && l.pairs[1] == 0);
	log_free(&l);
	/* From empty to full. */
	CHECK(sim_bvh_update(b, s.tris, s.nt, s.x0, s.x1, 0.3f));
	CHECK(self_check(b, &s, 0.3f) == 0);
	sim_bvh_destroy(b);
	sim_bvh_destroy(c);
	sim_bvh_destroy(NULL);
	soup_free(&s);
}

static void pair_order_is_deterministic(void)
{
	soup s = soup_make(400, 1.0f, 0.06f, 2024);
	REQUIRE(s.tris);
	sim_bvh *a = sim_bvh_create(), *b = sim_bvh_create();
	REQUIRE(a && b);
	CHECK(sim_bvh_update(a, s.tris, s.nt, s.x0, s.x1, 0.01f));
	CHECK(sim_bvh_update(b, s.tris, s.nt, s.x0, s.x1, 0.01f));
	pair_log la = {0}, lb = {0};
	sim_bvh_self_pairs(a, log_pair, &la);
	sim_bvh_self_pairs(b, log_pair, &lb);
	CHECK(la.count > 0 && la.count == lb.count);
	if (la.count == lb.count)
		CHECK(memcmp(la.pairs, lb.pairs, sizeof(int) * 2 * (size_t)la.count) == 0);
	log_free(&la);
	log_free(&lb);
	sim_bvh_pairs(a, b, log_pair, &la);
	sim_bvh_pairs(a, b, log_pair, &lb);
	CHECK(la.count > 0 && la.count == lb.count);
	if (la.count == lb.count)
		CHECK(memcmp(la.pairs, lb.pairs, sizeof(int) * 2 * (size_t)la.count) == 0);
	log_free(&la);
	log_free(&lb);
	sim_bvh_destroy(a);
	sim_bvh_destroy(b);
	soup_free(&s);
}

/* ---- sim_world_check ------------------------------------------------------------------------ */

/* Intersecting pairs of triangles sharing no vertex, over all pairs. */
static int brute_force_intersections(const sim_world *w)
{
	const vec4 *x = sim_world_positions(w);
	int count = 0;
	for (int a = 0; a < w->triangle_count; a++)
		for (int b = a + 1; b < w->triangle_count; b++) {
			const int *ta = &w->triangles[3 * a], *tb = &w->triangles[3 * b];
			bool shared = false;
			for (int i = 0; i < 3; i++)
				for (int j = 0; j < 3; j++)
					shared = shared || ta[i] == tb[j];
			if (shared)
				continue;
			double pa[3][3], pb[3][3];
			for (int k = 0; k < 3; k++)
				for (int c = 0; c < 3; c++) {
					pa[k][c] = x[ta[k]][c];
					pb[k][c] = x[tb[k]][c];
				}
			count += sim_geom_triangles_intersect(pa, pb);
		}
	return count;
}

static sim_world *grid_world(int *object)
{
	sim_world_def def = sim_world_def_default();
	sim_world *w = sim_world_create(&def);
	if (!w)
		return NULL;
	sim_grid_def g = sim_grid_def_default();
	g.nx = g.ny = 20;
	*object = sim_world_add_grid(w, &g);
	return w;
}

static void flat_grid_is_clean(void)
{
	int obj;
	sim_world *w = grid_world(&obj);
	REQUIRE(w && obj >= 0);
	int hits = -1, inside = -1;
	sim_world_check(w, &hits, &inside);
	CHECK(hits == 0);
	CHECK(inside == 0);
	sim_world_check(w, NULL, NULL);
	sim_world_destroy(&w);
}

static void folded_grid_pierced(void)
{
	int obj;
	sim_world *w = grid_world(&obj);
	REQUIRE(w && obj >= 0);
	const int nx = 20, first = sim_world_object_first_vertex(w, obj);
	const float cell = 1.0f / 19.0f, gap = 0.02f;
	vec3 zero = {0, 0, 0};
	/* Fold rows 10..19 back over rows 0..9: two flat layers gap apart, joined by a
	 * vertical strip between rows 9 and 10. */
	for (int j = 0; j < 20; j++)
		for (int i = 0; i < nx; i++) {
			int jj = j < 10 ? j : 19 - j;
			vec3 p = {-0.5f + cell * (float)i, j < 10 ? 0.0f : gap, 0.5f - cell * (float)jj};
			CHECK(sim_world_set_vertex(w, first + j * nx + i, p, zero) == SIM_OK);
		}
	int hits = -1, inside = -1;
	sim_world_check(w, &hits, &inside);
	CHECK(hits == 0);
	CHECK(inside == 0);
	CHECK(brute_force_intersections(w) == 0);

	/* Push an interior vertex of the lower layer up through the upper one. */
	vec3 p = {-0.5f + cell * 6.0f, 2.0f * gap, 0.5f - cell * 4.0f};
	CHECK(sim_world_set_vertex(w, first + 4 * nx + 6, p, zero) == SIM_OK);
	sim_world_check(w, &hits, NULL);
	CHECK(hits > 0);
	CHECK(hits == brute_force_intersections(w));

	/* And a second one elsewhere, through the fold line's strip. */
	vec3 q = {-0.5f + cell * 14.0f, 0.5f * gap, 0.5f - cell * 11.0f};
	CHECK(sim_world_set_vertex(w, first + 8 * nx + 14, q, zero) == SIM_OK);
	int more = -1;
	sim_world_check(w, &more, NULL);
	CHECK(more == brute_force_intersections(w));
	sim_world_destroy(&w);
}

static int add_triangle(sim_world *w, const char *name, const float p[9])
{
	static const int tri[3] = {0, 1, 2};
	sim_mesh_def m = {
		.name = name, .vertex_count = 3, .positions = p, .triangle_count = 1, .triangles = tri,
		.material = sim_material_default(),
	};
	return sim_world_add_mesh(w, &m);
}

static void two_triangles(void)
{
	sim_world_def def = sim_world_def_default();
	sim_world *w = sim_world_create(&def);
	REQUIRE(w);
	const float flat[9] = {0, 0, 0, 1, 0, 0, 0, 0, 1};
	const float spike[9] = {0.2f, -0.5f, 0.2f, 0.3f, 0.5f, 0.2f, 0.2f, 0.5f, 0.3f};
	int a = add_triangle(w, "flat", flat), b = add_triangle(w, "spike", spike);
	REQUIRE(a >= 0 && b >= 0);
	int first = sim_world_object_first_vertex(w, b), hits = -1;
	sim_world_check(w, &hits, NULL);
	CHECK(hits == 1);
	/* Moved up out of the flat one. */
	vec3 zero = {0, 0, 0};
	for (int k = 0; k < 3; k++) {
		vec3 p = {spike[3 * k], spike[3 * k + 1] + 1.0f, spike[3 * k + 2]};
		CHECK(sim_world_set_vertex(w, first + k, p, zero) == SIM_OK);
	}
	sim_world_check(w, &hits, NULL);
	CHECK(hits == 0);
	/* Down until its lowest vertex touches the flat one's interior: touching counts. */
	for (int k = 0; k < 3; k++) {
		vec3 p = {spike[3 * k], spike[3 * k + 1] + 0.5f, spike[3 * k + 2]};
		CHECK(sim_world_set_vertex(w, first + k, p, zero) == SIM_OK);
	}
	sim_world_check(w, &hits, NULL);
	CHECK(hits == 1);
	sim_world_destroy(&w);
}

static void vertices_inside_obstacles(void)
{
	int obj;
	sim_world *w = grid_world(&obj);
	REQUIRE(w && obj >= 0);
	const vec4 *x = sim_world_positions(w);
	int first = sim_world_object_first_vertex(w, obj);
	int v0 = first + 5 * 20 + 5, v1 = first + 15 * 20 + 12;
	/* Two spheres around v0 (counted once), one just under v1's level so that v1 is
	 * outside it, and a sphere far away. */
	sim_obstacle_def s = sim_obstacle_def_default(SIM_SHAPE_SPHERE);
	s.radius = 0.02f;
	glm_vec3_copy((float *)x[v0], s.position);
	CHECK(sim_world_add_obstacle(w, &s) >= 0);
	s.radius = 0.03f;
	s.position[0] += 0.005f;
	CHECK(sim_world_add_obstacle(w, &s) >= 0);
	s.radius = 0.1f;
	glm_vec3_copy((float *)x[v1], s.position);
	s.position[1] -= 0.11f;
	CHECK(sim_world_add_obstacle(w, &s) >= 0);
	s.radius = 0.5f;
	s.position[0] = 10.0f;
	CHECK(sim_world_add_obstacle(w, &s) >= 0);
	int hits = -1, inside = -1;
	sim_world_check(w, &hits, &inside);
	CHECK(hits == 0);
	CHECK(inside == 1);
	/* Lower the third sphere so that v1 is inside too. */
	vec3 zero = {0, 0, 0}, p;
	glm_vec3_copy((float *)x[v1], p);
	p[1] -= 0.05f;
	CHECK(sim_world_set_vertex(w, v1, p, zero) == SIM_OK);
	sim_world_check(w, NULL, &inside);
	CHECK(inside == 2);
	sim_world_destroy(&w);
}

/* ---- neighbour filter ----------------------------------------------------------------------- */

/* A crumpled grid mesh: (n + 1)^2 vertices with random heights and random motion, two
 * triangles per cell, so that nearly every overlapping pair of triangles shares a
 * vertex, as in the collision pipeline's cloth. */
static soup grid_soup(int n, uint64_t seed)
{
	rng_seed(seed);
	soup s = {(n + 1) * (n + 1), 2 * n * n, NULL, NULL, NULL};
	s.x0 = calloc((size_t)s.nv, sizeof(vec4));
	s.x1 = calloc((size_t)s.nv, sizeof(vec4));
	s.tris = malloc(sizeof(int) * 3 * (size_t)s.nt);
	if (!s.x0 || !s.x1 || !s.tris)
		return s;
	const float cell = 1.0f / (float)n;
	for (int j = 0; j <= n; j++)
		for (int i = 0; i <= n; i++) {
			float *p = s.x0[j * (n + 1) + i], *q = s.x1[j * (n + 1) + i];
			p[0] = cell * (float)i, p[1] = cell * (float)j, p[2] = rng_float(-2.0f * cell, 2.0f * cell);
			for (int a = 0; a < 3; a++)
				q[a] = p[a] + rng_float(-0.5f * cell, 0.5f * cell);
		}
	for (int j = 0; j < n; j++)
		for (int i = 0; i < n; i++) {
			int v = j * (n + 1) + i, *t = &s.tris[6 * (j * n + i)];
			t[0] = v, t[1] = v + 1, t[2] = v + n + 2;
			t[3] = v, t[4] = v + n + 2, t[5] = v + n + 1;
		}
	return s;
}

typedef struct query_log {
	pair_log *log;
	int q; /* the asking triangle, logged first */
} query_log;

static void log_hit(void *user, int t)
{
	query_log *ql = user;
	log_pair(ql->log, ql->q, t);
}

static bool tris_share(const int *a, const int *b)
{
	for (int i = 0; i < 3; i++)
		for (int k = 0; k < 3; k++)
			if (a[i] == b[k])
				return true;
	return false;
}

/* The unfiltered log less its pairs of triangles that share a vertex (ta: tree p's
 * triangles, tb: tree q's), in its order. */
static pair_log without_neighbours(const pair_log *all, const int *ta, const int *tb)
{
	pair_log l = {0};
	for (int k = 0; k < all->count; k++) {
		int a = all->pairs[2 * k], b = all->pairs[2 * k + 1];
		if (!tris_share(&ta[3 * a], &tb[3 * b]))
			log_pair(&l, a, b);
	}
	return l;
}

/* A tree that holds its triangles' vertices reports exactly the pairs of one that does
 * not, in the same order, less those that share a vertex: in one tree, between two trees
 * over one vertex set, in jobs, and in queries.  The unfiltered reports are themselves
 * checked against brute force, and most of them are neighbours (else the test would
 * prove little). */
static void neighbour_filter_drops_only_neighbours(void)
{
	const float margin = 0.002f;
	for (uint64_t seed = 1; seed <= 2; seed++) {
		soup s = grid_soup(24, seed * 31337);
		REQUIRE(s.tris);
		/* the first half of the triangles in one tree, the rest in another: they meet
		 * along the middle row, sharing its vertices */
		int half = s.nt / 2;
		soup lo = s, hi = s;
		lo.nt = half;
		hi.nt = s.nt - half, hi.tris = s.tris + 3 * half;
		sim_box *boxes = malloc(sizeof(sim_box) * (size_t)s.nt);
		REQUIRE(boxes);
		for (int t = 0; t < s.nt; t++)
			tri_box(&s, t, 0.0f, boxes[t].lo, boxes[t].hi);
		sim_bvh *plain = sim_bvh_create(), *skip = sim_bvh_create();
		sim_bvh *plain_hi = sim_bvh_create(), *skip_hi = sim_bvh_create();
		REQUIRE(plain && skip && plain_hi && skip_hi);
		CHECK(sim_bvh_update_boxes(plain, boxes, NULL, half, margin));
		CHECK(sim_bvh_update_boxes(skip, boxes, s.tris, half, margin));
		CHECK(sim_bvh_update_boxes(plain_hi, boxes + half, NULL, hi.nt, margin));
		CHECK(sim_bvh_update_boxes(skip_hi, boxes + half, hi.tris, hi.nt, margin));

		pair_log all = {0}, got = {0};
		sim_bvh_self_pairs(plain, log_pair, &all);
		CHECK(compare_with_brute_force(&all, &lo, margin, &lo, margin, true) == 0);
		sim_bvh_self_pairs(skip, log_pair, &got);
		pair_log want = without_neighbours(&all, s.tris, s.tris);
		CHECK_MSG(same_log(&got, &want), "one tree: %d pairs, %d wanted of %d", got.count, want.count, all.count);
		CHECK_MSG(want.count > 0 && 2 * want.count < all.count, "%d apart of %d", want.count, all.count);
		/* in jobs, as the broad phase runs it */
		pair_log jobs = {0};
		jobs_log(skip, skip, 64, false, &jobs);
		CHECK(same_log(&jobs, &want));
		log_free(&jobs);
		log_free(&all), log_free(&got), log_free(&want);

		/* two trees: only when both hold their vertices */
		sim_bvh_pairs(plain, plain_hi, log_pair, &all);
		CHECK(compare_with_brute_force(&all, &lo, margin, &hi, margin, false) == 0);
		want = without_neighbours(&all, s.tris, hi.tris);
		CHECK(want.count < all.count);
		sim_bvh_pairs(skip, skip_hi, log_pair, &got);
		CHECK_MSG(same_log(&got, &want), "two trees: %d pairs, %d wanted", got.count, want.count);
		log_free(&got);
		sim_bvh_pairs(skip, plain_hi, log_pair, &got);
		CHECK(same_log(&got, &all));
		log_free(&all), log_free(&got), log_free(&want);

		/* queries: with the asking triangle's vertices, its neighbours (and itself) are
		 * left out of what the plain query reports, in order */
		query_log qa = {&all, 0}, qg = {&got, 0}, qp = {&want, 0};
		for (int q = 0; q < s.nt; q += 5) {
			qa.q = qg.q = qp.q = q;
			sim_bvh_query(plain, &boxes[q], NULL, margin, log_hit, &qa);
			sim_bvh_query(skip, &boxes[q], &s.tris[3 * q], margin, log_hit, &qg);
			sim_bvh_query(plain, &boxes[q], &s.tris[3 * q], margin, log_hit, &qp); /* holds none */
		}
		CHECK(same_log(&want, &all));
		log_free(&want);
		want = without_neighbours(&all, s.tris, s.tris);
		CHECK(want.count > 0 && 2 * want.count < all.count);
		CHECK_MSG(same_log(&got, &want), "queries: %d hits, %d wanted of %d", got.count, want.count, all.count);
		log_free(&all), log_free(&got), log_free(&want);
		free(boxes);
		sim_bvh_destroy(plain), sim_bvh_destroy(skip), sim_bvh_destroy(plain_hi), sim_bvh_destroy(skip_hi);
		soup_free(&s);
	}
}

/* Whether pair (a, b) is in the log (any order of the log, the pair as reported). */
static bool log_has(const pair_log *l, int a, int b)
{
	for (int k = 0; k < l->count; k++)
		if (l->pairs[2 * k] == a && l->pairs[2 * k + 1] == b)
			return true;
	return false;
}

/* The marked traversal reports exactly the full traversal's pairs with a marked triangle
 * (each once), in one tree and between two, for marks from none to all. */
static void marked_pairs_are_the_marked_subset(void)
{
	const float margin = 0.002f;
	const int rates[] = {0, 3, 20, 100}; /* percent marked */
	for (uint64_t seed = 1; seed <= 2; seed++) {
		soup s = grid_soup(24, seed * 7919);
		REQUIRE(s.tris);
		int half = s.nt / 2;
		sim_box *boxes = malloc(sizeof(sim_box) * (size_t)s.nt);
		unsigned char *mark = malloc((size_t)s.nt);
		REQUIRE(boxes && mark);
		for (int t = 0; t < s.nt; t++)
			tri_box(&s, t, 0.0f, boxes[t].lo, boxes[t].hi);
		sim_bvh *p = sim_bvh_create(), *q = sim_bvh_create();
		REQUIRE(p && q);
		CHECK(sim_bvh_update_boxes(p, boxes, s.tris, half, margin));
		CHECK(sim_bvh_update_boxes(q, boxes + half, s.tris + 3 * half, s.nt - half, margin));
		for (size_t r = 0; r < sizeof rates / sizeof rates[0]; r++) {
			int marked = 0;
			for (int t = 0; t < s.nt; t++)
				marked += mark[t] = rng_below(100) < rates[r];
			CHECK(sim_bvh_mark(p, mark) == (rates[r] > 0 && memchr(mark, 1, (size_t)half) != NULL));
			sim_bvh_mark(q, mark + half);
			/* one tree, then two */
			for (int two = 0; two < 2; two++) {
				const unsigned char *mq = two ? mark + half : mark;
				pair_log all = {0}, got = {0};
				if (two) {
					sim_bvh_pairs(p, q, log_pair, &all);
					sim_bvh_marked_pairs(p, q, log_pair, &got);
				} else {
					sim_bvh_self_pairs(p, log_pair, &all);
					sim_bvh_marked_pairs(p, p, log_pair, &got);
				}
				int want = 0;
				for (int k = 0; k < all.count; k++) {
					int a = all.pairs[2 * k], b = all.pairs[2 * k + 1];
					if (mark[a] || mq[b]) {
						want++;
						CHECK(log_has(&got, a, b));
					}
				}
				CHECK_MSG(got.count == want && !got.overflow, "%d reported, %d wanted (of %d, %d marked)", got.count,
				          want, all.count, marked);
				/* the marked walk in sim_bvh_split's jobs (the refresh's parallel traversal):
				 * the same pairs in the same order, job after job */
				{
					enum { ROOM = 512 };
					static sim_bvh_job jobs[ROOM], scratch[ROOM];
					const sim_bvh *b = two ? q : p;
					int n = sim_bvh_split(p, b, jobs, scratch, ROOM, 64);
					CHECK(n >= 16);
					pair_log in_jobs = {0};
					for (int k = 0; k < n; k++)
						sim_bvh_run_marked_job(p, b, jobs[k], log_pair, &in_jobs);
					CHECK_MSG(same_log(&in_jobs, &got), "%d in %d jobs, %d in one walk", in_jobs.count, n, got.count);
					log_free(&in_jobs);
				}
				if (rates[r] == 100)
					CHECK(want == all.count && want > 0);
				log_free(&all), log_free(&got);
			}
		}
		free(boxes), free(mark);
		sim_bvh_destroy(p), sim_bvh_destroy(q);
		soup_free(&s);
	}
}

/* A scheduler without threads for the parallel refit: every range of exactly min_range
 * items, last range first, counting the items it hands out. */
typedef struct backwards {
	long loops, items;
} backwards;

static void *backwards_enqueue(sim_task_fn *task, int count, int min_range, void *task_ctx, void *user)
{
	backwards *b = user;
	b->loops++;
	b->items += count;
	for (int r = (count + min_range - 1) / min_range - 1; r >= 0; r--) {
		int start = r * min_range, end = start + min_range < count ? start + min_range : count;
		task(start, end, r % 3, task_ctx);
	}
	return b;
}

static void backwards_finish(void *handle, void *user) { CHECK(handle == user); }

/* A world of three workers whose loops run backwards on the caller, counted in bw. */
static sim_world *backwards_world(backwards *bw)
{
	sim_world_def def = sim_world_def_default();
	def.worker_count = 3;
	def.enqueue_task = backwards_enqueue;
	def.finish_task = backwards_finish;
	def.user_task_context = bw;
	return sim_world_create(&def);
}

/* The build and the refit split into tasks through a world's callbacks
 * (sim_bvh_update_boxes_on) give the tree the serial ones give, box for box, and the
 * pairs with the neighbour filter: a 64 x 64 grid (8192 triangles, 2048 leaves, so the
 * refit is split), built, then moved a little (a refit, no rebuild).  The scheduler runs
 * the tasks last first: the build's right half before its left. */
static void parallel_refit_is_the_serial_one(void)
{
	soup g = grid_soup(64, 515);
	REQUIRE(g.tris);
	backwards bw = {0};
	sim_world *w = backwards_world(&bw);
	sim_box *boxes = malloc(sizeof(sim_box) * (size_t)g.nt);
	sim_bvh *serial = sim_bvh_create(), *split = sim_bvh_create();
	REQUIRE(w && boxes && serial && split);
	for (int t = 0; t < g.nt; t++)
		tri_box(&g, t, 0.0f, boxes[t].lo, boxes[t].hi);
	CHECK(sim_bvh_update_boxes(serial, boxes, g.tris, g.nt, 0.002f));
	CHECK(sim_bvh_update_boxes_on(split, boxes, g.tris, NULL, g.nt, 0.002f, w));
	/* the build's two halves, every leaf, the 16 subtrees below depth 4 */
	CHECK_MSG(bw.loops == 3 && bw.items == 2 + 2048 + 16, "%ld loops, %ld items", bw.loops, bw.items);
	for (int t = 0; t < g.nt; t++) {
		const float d = 0.001f * (float)(t % 7) - 0.003f;
		for (int a = 0; a < 3; a++)
			boxes[t].lo[a] += d, boxes[t].hi[a] += d + 0.0005f;
	}
	bw = (backwards){0};
	CHECK(sim_bvh_update_boxes(serial, boxes, g.tris, g.nt, 0.002f));
	CHECK(sim_bvh_update_boxes_on(split, boxes, g.tris, NULL, g.nt, 0.002f, w));
	CHECK(sim_bvh_build_count(serial) == 1 && sim_bvh_build_count(split) == 1);
	/* the refit went through the callbacks, every leaf and every subtree once */
	CHECK_MSG(bw.loops == 2 && bw.items == 2048 + 16, "%ld loops, %ld items", bw.loops, bw.items);
	enum { CAP = 20000 };
	static float a[CAP][7], b[CAP][7];
	int na = sim_bvh_debug_boxes(serial, 0, 64, a, CAP, 0), nb = sim_bvh_debug_boxes(split, 0, 64, b, CAP, 0);
	CHECK_MSG(na == nb && na > g.nt && na <= CAP, "%d boxes against %d", nb, na);
	CHECK(na == nb && memcmp(a, b, sizeof(a[0]) * (size_t)(na < CAP ? na : CAP)) == 0);
	pair_log want = {0}, got = {0};
	sim_bvh_self_pairs(serial, log_pair, &want);
	sim_bvh_self_pairs(split, log_pair, &got);
	CHECK_MSG(want.count > 1000 && same_log(&got, &want), "%d pairs against %d", got.count, want.count);
	log_free(&want);
	log_free(&got);
	sim_bvh_destroy(serial), sim_bvh_destroy(split);
	free(boxes);
	sim_world_destroy(&w);
	soup_free(&g);
}

/* The in-place refresh's refit (sim_bvh_update_marked): when only the marked triangles'
 * boxes have changed, it gives the tree of the full refit, box for box, with the same
 * rebuild decisions and the tree marked as sim_bvh_mark would mark it: on a 64 x 64 grid
 * (1024 leaves and more, so that the refit is split) through a world's callbacks and on
 * the caller, for a few and for many marked triangles moved a little (refits), then for
 * the marked ones scattered far (a rebuild), then for a different count (a build). */
static void marked_refit_is_the_full_one(void)
{
	soup g = grid_soup(64, 2203);
	REQUIRE(g.tris);
	backwards bw = {0};
	sim_world *w = backwards_world(&bw);
	sim_box *boxes = malloc(sizeof(sim_box) * (size_t)g.nt);
	unsigned char *mark = malloc((size_t)g.nt);
	REQUIRE(w && boxes && mark);
	enum { CAP = 20000 };
	static float a[CAP][7], b[CAP][7];
	for (int on = 0; on < 2; on++) {
		const sim_world *pw = on ? w : NULL;
		sim_bvh *full = sim_bvh_create(), *part = sim_bvh_create();
		REQUIRE(full && part);
		for (int t = 0; t < g.nt; t++)
			tri_box(&g, t, 0.0f, boxes[t].lo, boxes[t].hi);
		memset(mark, 0, (size_t)g.nt);
		CHECK(sim_bvh_update_boxes_on(full, boxes, g.tris, NULL, g.nt, 0.002f, pw));
		CHECK(sim_bvh_update_marked(part, boxes, g.tris, NULL, g.nt, 0.002f, mark, pw)); /* the first call builds */
		rng_seed(31 + (uint64_t)on);
		/* percent marked; the last round scatters them (a rebuild), then one with fewer triangles */
		const int rates[] = {2, 40, 100, 30, 30};
		for (size_t r = 0; r < sizeof rates / sizeof rates[0]; r++) {
			const bool far = r == 3, fewer = r == 4;
			for (int t = 0; t < g.nt; t++) {
				mark[t] = rng_below(100) < rates[r];
				if (!mark[t])
					continue;
				for (int k = 0; k < 3; k++) {
					const float d = far ? rng_float(-0.8f, 0.8f) : rng_float(-0.004f, 0.004f);
					boxes[t].lo[k] += d, boxes[t].hi[k] += d + (far ? 0.05f : 0.0005f);
				}
			}
			const int nt = fewer ? g.nt - 5 : g.nt, builds = sim_bvh_build_count(full);
			CHECK(sim_bvh_update_boxes_on(full, boxes, g.tris, NULL, nt, 0.002f, pw));
			CHECK(sim_bvh_update_marked(part, boxes, g.tris, NULL, nt, 0.002f, mark, pw));
			CHECK_MSG(sim_bvh_build_count(full) == builds + (far || fewer), "round %zu: %d builds after %d", r,
			          sim_bvh_build_count(full), builds);
			CHECK(sim_bvh_build_count(part) == sim_bvh_build_count(full));
			int na = sim_bvh_debug_boxes(full, 0, 64, a, CAP, 0), nb = sim_bvh_debug_boxes(part, 0, 64, b, CAP, 0);
			CHECK_MSG(na == nb && na > nt && na <= CAP, "round %zu: %d boxes against %d", r, nb, na);
			CHECK_MSG(na == nb && memcmp(a, b, sizeof(a[0]) * (size_t)(na < CAP ? na : CAP)) == 0,
			          "round %zu: the boxes differ", r);
			/* left marked: the marked pairs of the full tree marked afterwards */
			sim_bvh_mark(full, mark);
			pair_log want = {0}, got = {0};
			sim_bvh_marked_pairs(full, full, log_pair, &want);
			sim_bvh_marked_pairs(part, part, log_pair, &got);
			CHECK_MSG(want.count > 0 && same_log(&got, &want), "round %zu: %d marked pairs against %d", r, got.count,
			          want.count);
			log_free(&want);
			log_free(&got);
		}
		sim_bvh_destroy(full), sim_bvh_destroy(part);
	}
	free(boxes), free(mark);
	sim_world_destroy(&w);
	soup_free(&g);
}

/* Groups (sim_bvh_update_boxes_on, sim_bvh_update_marked): a tree's traversals with
 * itself report exactly the pairs they report without groups, less those of two
 * triangles in one group, in the same order: the whole walk, its jobs, its masks and the
 * marked walk; two trees' traversals ignore groups; groups changed for marked triangles
 * alone take with the marked refit, as with the whole one; an update without them
 * clears them.  On a 32 x 32 grid (its triangles in 4 x 4-quad blocks, a group each,
 * some left out) and on a random soup (random groups, many of them none). */
static void groups_drop_only_their_pairs(void)
{
	enum { ROOM = 1024 };
	static sim_bvh_job jobs[ROOM], scratch[ROOM];
	soup g = grid_soup(32, 77);
	soup r = soup_make(800, 1.0f, 0.06f, 78);
	REQUIRE(g.tris && r.tris);
	for (int variant = 0; variant < 2; variant++) {
		const soup *s = variant ? &r : &g;
		const int *verts = variant ? NULL : s->tris;
		sim_box *boxes = malloc(sizeof(sim_box) * (size_t)s->nt);
		int *groups = malloc(sizeof(int) * (size_t)s->nt), *one = malloc(sizeof(int) * (size_t)s->nt);
		unsigned char *mark = malloc((size_t)s->nt);
		REQUIRE(boxes && groups && one && mark);
		for (int t = 0; t < s->nt; t++) {
			tri_box(s, t, 0.0f, boxes[t].lo, boxes[t].hi);
			int q = t / 2, bi = (q % 32) / 4, bj = (q / 32) / 4;
			groups[t] = variant ? (rng_below(3) ? rng_below(6) : -1) : ((bi + bj) % 5 == 0 ? -1 : bj * 8 + bi);
			one[t] = 3;
			mark[t] = rng_below(10) == 0;
		}
		sim_bvh *b = sim_bvh_create(), *m = sim_bvh_create();
		REQUIRE(b && m);
		CHECK(sim_bvh_update_boxes(b, boxes, verts, s->nt, 0.01f));
		pair_log all = {0}, all_marked = {0}, all_two = {0};
		sim_bvh_self_pairs(b, log_pair, &all);
		sim_bvh_mark(b, mark);
		sim_bvh_marked_pairs(b, b, log_pair, &all_marked);
		sim_bvh_pairs(b, b, log_pair, &all_two);
		CHECK(sim_bvh_update_boxes_on(b, boxes, verts, groups, s->nt, 0.01f, NULL));
		pair_log got = {0}, want = {0}, jobs_log = {0}, masks = {0}, marked = {0}, want_marked = {0}, two = {0};
		sim_bvh_self_pairs(b, log_pair, &got);
		for (int k = 0; k < all.count; k++) {
			int x = all.pairs[2 * k], y = all.pairs[2 * k + 1];
			if (groups[x] < 0 || groups[x] != groups[y])
				log_pair(&want, x, y);
		}
		CHECK_MSG(same_log(&got, &want) && want.count < all.count && want.count > 0, "%d pairs, %d wanted of %d",
		          got.count, want.count, all.count);
		int n = sim_bvh_split(b, b, jobs, scratch, ROOM, 64);
		mask_log ml = {&masks, 0, 0};
		for (int k = 0; k < n; k++) {
			sim_bvh_run_job(b, b, jobs[k], log_pair, &jobs_log);
			sim_bvh_run_job_masks(b, b, jobs[k], log_mask, &ml);
		}
		CHECK_MSG(n > 0 && same_log(&jobs_log, &want) && same_log(&masks, &want) && ml.empty == 0,
		          "%d jobs: %d pairs, %d from the masks (%d empty calls), %d wanted", n, jobs_log.count, masks.count,
		          ml.empty, want.count);
		sim_bvh_mark(b, mark);
		sim_bvh_marked_pairs(b, b, log_pair, &marked);
		for (int k = 0; k < all_marked.count; k++) {
			int x = all_marked.pairs[2 * k], y = all_marked.pairs[2 * k + 1];
			if (groups[x] < 0 || groups[x] != groups[y])
				log_pair(&want_marked, x, y);
		}
		CHECK(want_marked.count > 0 && same_log(&marked, &want_marked));
		sim_bvh_pairs(b, b, log_pair, &two);
		CHECK(same_log(&two, &all_two));
		/* the groups of the marked triangles changed, and the marked refit alone: the tree
		 * the whole refit gives */
		for (int t = 0; t < s->nt; t++)
			if (mark[t])
				groups[t] = groups[t] < 0 ? 2 : -1;
		CHECK(sim_bvh_update_boxes_on(m, boxes, verts, NULL, s->nt, 0.01f, NULL));
		CHECK(sim_bvh_update_boxes_on(m, boxes, verts, groups, s->nt, 0.01f, NULL));
		CHECK(sim_bvh_update_marked(b, boxes, verts, groups, s->nt, 0.01f, mark, NULL));
		pair_log whole = {0}, part = {0};
		sim_bvh_self_pairs(m, log_pair, &whole);
		sim_bvh_self_pairs(b, log_pair, &part);
		CHECK(whole.count > 0 && same_log(&part, &whole) && !same_log(&whole, &want));
		/* one group for all: nothing at all, not even a job */
		CHECK(sim_bvh_update_boxes_on(b, boxes, verts, one, s->nt, 0.01f, NULL));
		pair_log none = {0};
		sim_bvh_self_pairs(b, log_pair, &none);
		CHECK(none.count == 0 && sim_bvh_split(b, b, jobs, scratch, ROOM, 64) == 0);
		/* an update without groups clears them, the marked one too */
		CHECK(sim_bvh_update_marked(b, boxes, verts, NULL, s->nt, 0.01f, mark, NULL));
		sim_bvh_self_pairs(b, log_pair, &none);
		CHECK(same_log(&none, &all));
		log_free(&all), log_free(&all_marked), log_free(&all_two), log_free(&got), log_free(&want);
		log_free(&jobs_log), log_free(&masks), log_free(&marked), log_free(&want_marked), log_free(&two);
		log_free(&whole), log_free(&part), log_free(&none);
		sim_bvh_destroy(b), sim_bvh_destroy(m);
		free(boxes), free(groups), free(one), free(mark);
	}
	soup_free(&g);
	soup_free(&r);
}

static const test_case tests[] = {
	TEST(self_pairs_match_brute_force),
	TEST(box_queries_match_brute_force),
	TEST(identical_triangles),
	TEST(touching_boxes_overlap),
	TEST(tree_pairs_match_brute_force),
	TEST(split_jobs_keep_order),
	TEST(masks_give_the_jobs_pairs),
	TEST(refit_and_rebuild_rule),
	TEST(parallel_refit_is_the_serial_one),
	TEST(marked_refit_is_the_full_one),
	TEST(refit_without_rebuild_is_exact),
	TEST(empty_and_single),
	TEST(pair_order_is_deterministic),
	TEST(flat_grid_is_clean),
	TEST(folded_grid_pierced),
	TEST(two_triangles),
	TEST(vertices_inside_obstacles),
	TEST(neighbour_filter_drops_only_neighbours),
	TEST(marked_pairs_are_the_marked_subset),
	TEST(groups_drop_only_their_pairs),
};

TEST_MAIN(tests)
