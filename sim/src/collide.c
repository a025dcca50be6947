/* The collision pipeline after Bridson, Fedkiw and Anderson 2002, once per substep.
 *
 * The integrator has moved every particle from x_start to x.  The motion over the
 * substep is taken as linear at the mean velocity vbar = (x - x_start) / h, and the
 * collision response only changes vbar:
 *
 *   1. obstacles with an exact distance (sphere, capsule): every cloth vertex is
 *      kept outside them along its whole path: the first time the path comes within the
 *      separation is a quadratic's root for a sphere; otherwise a search for the
 *      path's closest approach (golden section: the distance to a convex set is convex
 *      along a line; coarse samples for a spinning capsule), then a bisection.  First,
 *      before the broad phase, since it needs no candidates and its pushes would
 *      otherwise take the vertices out of the boxes the broad phase has just made.
 *      Then the cloth triangles near a sphere, capsule or box keep the separation at
 *      their nearest point too (surface_stage), so the obstacle cannot show between
 *      the vertices of a coarse cloth;
 *   2. contacts (proximity): vertex-face and edge-edge pairs closer than their
 *      separation at the start get a repulsion impulse that makes them separate at a
 *      tenth of the overlap per step, and Coulomb friction on the tangential motion;
 *      the impulses of one sweep are averaged per vertex (Jacobi), so the order of the
 *      pairs does not matter; contacts with a side that cannot move (an obstacle,
 *      pinned cloth) are applied in a second such sweep, on the result of the first;
 *   3. collisions (continuous detection): every pair that comes within CCD_GAP during
 *      the step, approaching, gets an inelastic impulse that stops the approach;
 *      impulses are applied at once (Gauss-Seidel) and the detection repeats, up to
 *      def.collision_iterations sweeps;
 *   4. fail-safe: pairs still colliding after that are merged into impact zones that
 *      move rigidly (Bridson section 7.4, preserving linear and angular momentum), and
 *      the detection repeats with the zones grown until none is left;
 *   5. obstacles again, so no vertex ends inside one and no triangle within one's
 *      separation;
 *   6. x = x_start + h vbar, and v changes by what vbar changed (Bridson's velocity
 *      update).
 *
 * Boxes and rigid meshes take part in 2, 3 and 4 through their triangles, with
 * infinite mass (inverse mass 0), moving with their prescribed velocities.  Kinematic
 * cloth vertices (pinned, prescribed, grabbed) have inverse mass 0 too.  Pairs whose
 * primitives share a vertex are never tested.
 *
 * Geometry runs in double on the exact float positions the step will write, so what
 * the detection has cleared is what the world ends up with.
 *
 * The broad phase's traversal, the contact search, the obstacle pass and the CCD
 * sweeps' tests run as ranges through the world's task callbacks (sim_parallel_for);
 * each range writes only its own items or its own block's output, merged in order, so
 * the result is the serial one bit for bit (docs/collisions.md, "Parallel work"). */
#include "sim_internal.h"
#include "sep_axis.h"
#include "patch.h"

#include "sim/sim_geom.h"

#include <assert.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#if defined(__SSE2__)
#include <emmintrin.h>
#endif

/* Continuous detection reports pairs that come within this distance (m): a positive gap
 * keeps resolved pairs from ending the step exactly touching, and it is far above the
 * rounding of float positions near the origin (1e-7 m). */
#define CCD_GAP 1e-5
/* A pair approaching slower than this (m/s) along its normal is not a collision. */
#define APPROACH_EPS 1e-9
/* The fail-safe gives up after this many detection rounds (each one grows the zones). */
#define FAILSAFE_ROUNDS 64
/* At most this many rounds of holding what the last obstacle pass moved and resolving
 * the cloth again (hold_obstacle_moves); each round holds more vertices, so it ends. */
#define OBSTACLE_ROUNDS 8
/* Sweeps over the triangles near a sphere, capsule or box in one obstacle pass
 * (surface_stage): a push given to one triangle moves its neighbours' shared vertices. */
#define SURFACE_SWEEPS 4
/* surface_stage's mask bits past the box's six faces: the vertex cannot move (kinematic or
 * held), the vertex passes skip it */
#define SURF_FIXED 6
#define SURF_SKIPPED 7
/* The broad phase gives every vertex a box that moves with it (a kinetic box): over a
 * window of W substeps from the broad phase, box(tau) is the vertex's position
 * extrapolated at its current velocity, x0 + tau d, with a reach around it, and the
 * candidates hold every pair whose boxes meet at one same tau, as long as each vertex
 * stays inside the ball of that reach inside its box (mark_escaped; the separating axes
 * other than x, y and z use the ball).  The reach is half the pad (what the contacts
 * need) plus a slack, a fraction of the pad, that the motion may depart from the
 * extrapolation by.  A larger slack means more candidates and fewer refreshes; with
 * cubes 3/8 measured best on the pile, but the ball is stricter and 3/8 let a tenth more
 * triangles be refreshed than the cube did, 7/16 a fifth fewer (docs/benchmarks.md). */
#define BROAD_SLACK 0.4375f
#define BROAD_SLACK_ONE 0.0625f
/* The window is about this long (s) and at most BROAD_WINDOW_MAX substeps: long enough
 * that a cloth falling at 1 kHz keeps its boxes for a few substeps, short enough that
 * gravity (g t^2 / 2 = 0.08 mm over 4 ms) stays well inside the slack; at 90 Hz it is
 * one substep. */
#define BROAD_WINDOW_S 0.004f
#define BROAD_WINDOW_MAX 16
/* A vertex whose extrapolation over the window stays within this fraction of the slack
 * gets a box that stands still (vertex_box). */
#define BROAD_STILL 0.25f
/* The candidates are refreshed in place while at most this fraction of the triangles
 * has a vertex with a new box; beyond it the whole broad phase runs again.  A refresh
 * costs about twice as much per triangle, but it keeps the untouched pairs' distance
 * bounds and hands the dropped ones on to the pairs found again, which the contacts and
 * the sweeps then need not recompute: with 0.6 rather than 0.25 the drape's sweep-forced
 * broad phases (52 in its 90 frames) become refreshes and a frame costs 6 % less on one
 * core; the pile's fold is unchanged within the noise (docs/benchmarks.md). */
#define BROAD_REFRESH_MAX 0.6f

/* After a full broad phase whose patches held less than a third of their level-1 blocks
 * (a cloth crumpled at the scale of its mesh), this many go without them: there they
 * would save less than measuring them costs (benchmarks.md, "Patches"), and a cloth that
 * smooths out again has them back within as many frames. */
#define PATCH_REST 7

/* Items per range, at least, of the loops over vertices, triangles or edges that hand
 * each item to one worker (boxes, the contact search's inputs, gathering and writing
 * back the cloth). */
#define BOX_RANGE 4096

typedef struct pair {
	int a, b; /* vertex-face: vertex, triangle; edge-edge: edge, edge */
} pair;

typedef sim_box fbox;

/* A kinetic box: the box at the start of the broad phase's window (tau = 0) and at its
 * end (tau = W); in between, the linear interpolation of the two.  Every point of a
 * vertex, triangle or edge at time tau lies in its box at tau.  Lane 3 of each corner is
 * 0 (neutral in the overlap test), so that a test is four vector compares on one
 * 64-byte record. */
typedef struct kbox {
	_Alignas(16) float lo0[4];
	float hi0[4], lo1[4], hi1[4];
} kbox;

/* What a triangle owns, with the vertex indices the broad phase's sharing tests need, in
 * one 64-byte record: a triangle pair then reads two records, not six arrays. */
typedef struct tri_own {
	int tri[3];     /* the triangle's vertices */
	int v[3];       /* the vertices it owns (nv of them) */
	int e[3];       /* the edges it owns (ne of them) */
	int ev[3][2];   /* their end vertices */
	unsigned char nv, ne;
} tri_own;

typedef struct darray {
	void *data;
	int count, capacity;
} darray;

/* What one block of a parallel loop produced, merged with the others in block order, so
 * that the result is the sequential one whatever the number of workers. */
typedef struct block_out {
	darray vf, ee;    /* broad phase: candidate pairs */
	darray contacts;  /* proximity: contact_rec */
	darray hits;      /* refresh: the marked traversal's triangle pairs */
	int vf_at, ee_at; /* merge_candidates: where its candidates go in the lists */
	int tested;       /* broad phase: the leaf pairs reported or neighbour-list entries it tested */
	bool failed;      /* out of memory */
} block_out;

struct sim_collide {
	/* collision vertices: the cloth particles first, then every triangle obstacle's */
	int nv, nv_capacity;
	int n_cloth;     /* the first n_cloth are cloth particles */
	int self_hits;   /* impulses between cloth vertices only, this substep */
	vec4 *x0;        /* positions at the start of the substep; w = inverse mass */
	darray x0d;      /* double[3]: x0 in double, for the contact search */
	vec4 *vbar;      /* mean velocity over the substep */
	vec4 *vbar_in;   /* vbar as the integrator left it, for the velocity update */
	vec4 *vbar_pre;  /* vbar before a held obstacle pass, of the vertices it did not skip */
	float *held_w;   /* the inverse mass of a vertex held by hold_obstacle_moves (else 0) */
	vec4 *acc;       /* contact impulses of one sweep (xyz) and their count (w) */
	float *sep;      /* half the separation this vertex's owner keeps (cloth t / 2, obstacle t) */
	vec4 *box_lo, *box_hi; /* each vertex's box over the rest of the window, for the trees (lane 3: 0) */
	kbox *vkin;      /* each vertex's kinetic box, for culling primitive pairs */
	vsphere *vaxis;  /* the balls inside those boxes, as centres and a radius, for other axes */
	float *vball;    /* the radius of each vertex's ball that the escape check keeps it in */
	int tau;         /* substeps since the last full broad phase */
	/* early_broad_phase ran jobs [0, pending_first) of pending_jobs for the window that
	 * starts at the next substep; their candidates wait in old_vf and old_ee */
	bool pending;
	int pending_first, pending_jobs;
	int traversal_pairs; /* the candidates the last full traversal found (not the neighbour list's) */
	long broad_tested;   /* the leaf pairs and neighbour-list entries the last full broad phase tested */
	int early_windows; /* finished so (for tests) */
	int window;      /* W: the substeps its kinetic boxes cover */
	float *mu;       /* friction coefficient of the owner */
	int *zone;       /* union-find parent for the impact zones */
	unsigned char *solid; /* per zone root: the zone moves as one rigid body (rigidify) */
	int *vstamp;     /* value of clock when this vertex's vbar last took a collision impulse */
	int *vert_tri;   /* the triangle that owns this vertex (-1: none) */
	unsigned char *escaped; /* this vertex has left its broad-phase box (refresh_candidates) */
	unsigned char *vmoving; /* this vertex's kinetic box moves (early_broad_phase's scratch) */
	int clock;       /* collision impulses applied this substep */
	int64_t prepass_ns, walk_ns; /* the sweeps' two parts this substep (sim_stats) */

	/* triangles and edges, in collision-vertex indices, and the object each belongs to */
	int topology_vertices, topology_triangles; /* counts the topology was built for */
	darray tris;     /* int[3] */
	darray tri_owner;
	darray edges;    /* int[2] */
	darray edge_owner;
	darray tri_edges; /* int[3] */
	/* Representative triangles (Curtis, Tamstorf and Manocha 2008): every vertex and
	 * edge belongs to exactly one of its triangles, so a primitive pair comes from
	 * exactly one triangle pair and needs no de-duplication. */
	darray own_vert_start, own_vert; /* CSR: triangle -> the vertices it owns */
	darray own_edge_start, own_edge; /* CSR: triangle -> the edges it owns */
	darray edge_tri;  /* int: the triangle that owns each edge */
	darray own;       /* tri_own per triangle: what triangle_pair reads, in one place */
	/* The primitive pairs of the triangle pairs that share a vertex (within one cloth),
	 * listed once per topology: such triangles always overlap, so the traversal would
	 * report them at every broad phase only to have most of their primitive pairs fall
	 * to the sharing test; the broad phase skips them and tests this list's boxes. */
	darray adj_vf, adj_ee; /* pair */
	/* per edge-edge entry: which of ee_apart_from's axes last found it apart, tried first
	 * the next time (a sheet's neighbours keep their layout, so mostly the same one works) */
	darray adj_hint;
	/* CSR: triangle -> the neighbour-list entries it takes part in (vertex-face entries,
	 * then edge-edge ones, as one sequence), and a bit per entry, so that an in-place
	 * refresh visits the dirty triangles' entries only, in list order */
	darray adj_tri_start, adj_tri_items, adj_bits;
	/* Patches of grid cloth that cannot meet themselves (patch.h), certified at every
	 * new ball: the trees never pair two triangles of one (their groups), and the
	 * neighbour list skips the entries whose smallest block (adj_blk, per entry as in
	 * adj_tri_items: -1 when not on one grid) is held by a certified one. */
	sim_patches *patches;
	darray adj_blk;
	bool patched; /* the last certification holds (self collisions on, grids to certify) */
	int patch_rest; /* full broad phases left without patches (PATCH_REST) */
	/* The neighbour list's candidates of the last full broad phase: [adj_lo, adj_hi) of vf
	 * ([0]) and of ee ([1]), in list order still after the in-place refreshes' compactions
	 * (drop_dirty), so that carry_bounds finds their old bounds by walking the old run
	 * along the new one rather than through its index; old_adj_*: the same for old_vf and
	 * old_ee while they are set aside. */
	int adj_lo[2], adj_hi[2], old_adj_lo[2], old_adj_hi[2];
	darray tri_dirty; /* unsigned char per triangle: a vertex of it has a new box */
	darray dirty_list; /* int: the dirty triangles, in index order */
	int owner_count;  /* cloth objects, then triangle obstacles */
	int *owner_first_tri, *owner_tri_count;
	bool *owner_rigid;
	sim_bvh **trees;
	int tree_capacity;

	darray tri_box;  /* fbox: the union of its vertices' boxes, per broad phase */
	darray tri_kin, edge_kin; /* kbox: the same for the kinetic boxes */
	darray vf, ee;    /* candidate pairs */
	bool have_candidates; /* vf and ee came from a broad phase over the current topology */
	bool candidates_self; /* ... with self collisions on */
	/* per candidate: the clock when it was last tested and found clear, or -1 when it
	 * must be tested (never tested since the broad phase, or a hit last time) */
	darray vf_state, ee_state;
	/* per candidate: a lower bound on the distance of its primitives at the start (the
	 * contacts compute it; 0 until they have), and each vertex's displacement over the
	 * substep: a pair whose start distance exceeds its two sides' largest displacements
	 * by more than 2 CCD_GAP cannot come within CCD_GAP */
	darray vf_lb, ee_lb;
	double *disp;
	double (*dvec)[3]; /* each vertex's displacement over the substep, end - start (disp: its length) */
	/* contacts against a side that cannot move (an obstacle, pinned cloth), applied after
	 * the others (see proximity) */
	darray rigid_contacts;
	/* the previous broad phase's candidates and bounds, while a new one looks up what
	 * it can carry over (carry_bounds), and the lookup's index */
	darray old_vf, old_ee, old_vf_lb, old_ee_lb, key_start, key_items;
	darray scan_counts; /* int: the parallel scan for dirty triangles' per-block counts */
	/* When the contacts reuse the candidates of an earlier substep, its start positions
	 * (x0_prev) and how far each vertex has moved since (move): a pair's bound then
	 * carries over, less the two sides' largest moves. */
	bool lb_carry;    /* vf_lb and ee_lb hold bounds for the positions in x0_prev */
	vec4 *x0_prev;
	double *move;
	double (*movev)[3]; /* x0 - x0_prev: the moves as vectors, for relative bounds */
	/* per triangle and edge: the largest move of its vertices, and the separation of its
	 * side, so that a carried bound is tested without visiting the vertices */
	darray tri_move, edge_move; /* double */
	darray tri_sep, edge_sep;   /* float; an edge's two vertices have one owner, so one value */
	/* The first candidates the last refresh_candidates added (the counts when it added
	 * none), so that the debug log can record each candidate once per substep. */
	int new_vf, new_ee;
	sim_debug_log *log; /* the world's, while it records pairs; NULL otherwise */
	/* parallel loops: per-block outputs, the broad phase's traversal jobs (with the tree
	 * pair of each), and the CCD pre-pass's hits */
	block_out *blocks;
	int block_capacity;
	darray jobs, job_scratch, job_trees;
	darray hits;      /* the in-place refresh's triangle pairs (dirty_pairs) */
	darray pre; /* CCD pre-pass: a mark per candidate (vertex-face, then edge-edge), PRE_HIT or PRE_ROOTS */
	/* The serial sweep's view of the triangles and edges (triangle t, then edge e as
	 * nt + e): the largest stamp of each one's vertices, and at least their largest
	 * displacement, so that a candidate's staleness and start-bound test read two records
	 * rather than four vertices through the topology (prim_view).  Kept up to date by the
	 * impulses through the CSR vertex -> the primitives it belongs to, built for the
	 * counts in prim_nv, prim_nt, prim_ne. */
	darray prim_stamp, prim_disp, vprim_start, vprim_items;
	int prim_nv, prim_nt, prim_ne;
	bool prim_valid; /* prim_stamp and prim_disp hold for the current stamps and disps */
	/* A flag per primitive (as above) that one of its vertices has been stamped since the
	 * substep's restamp (when every stamp and the clock went to 0), set wherever a stamp
	 * is (stamp_vertex) while touch_valid: a candidate found clear this substep (state >= 0)
	 * whose primitives carry no flag and whose vertex, for a vertex-face pair, still has
	 * stamp 0 is idle, and the parallel sweep tells so without its four vertices. */
	darray prim_touched;
	bool touch_valid;
	/* the CCD pre-pass's root finding (pick_roots): the candidates it runs in parallel,
	 * and a mark per vertex (all 0 between sweeps) for those in a candidate needing it */
	darray roots, seen;
	long sweep_chunks; /* chunks after the first, over every parallel sweep (for tests) */
	/* the obstacle passes after the first of a substep (obstacle_block): each vertex's
	 * vbar after the last pass, whether that pass left it alone (and it was free), and
	 * whether the current pass skips it */
	vec4 *vbar_obst;
	unsigned char *obst_clean, *obst_skip;
	/* surface_stage's broad phase: per vertex, the faces of the obstacle's box its path lies
	 * wholly beyond (a bit per side and axis; 0: none, or not known), whether it cannot
	 * move and whether the vertex passes skip it (SURF_FIXED, SURF_SKIPPED) */
	unsigned char *surf_out;
	/* the world's pair friction (sim_world_set_pair_friction), when it has entries: each
	 * collision vertex's body (cloth objects, then obstacles), and per pair of bodies its
	 * coefficient (NaN: none, the geometric mean), for the revision and counts in body_* */
	bool pair_mu;
	darray body, body_mu;
	int body_objects, body_count;
	unsigned body_revision;
};

/* ---- small helpers -------------------------------------------------------------------------- */

static bool reserve(darray *a, size_t elem, int needed)
{
	if (needed <= a->capacity)
		return true;
	int cap = a->capacity ? a->capacity : 64;
	while (cap < needed)
		cap *= 2;
	void *q = realloc(a->data, elem * (size_t)cap);
	if (!q)
		return false;
	a->data = q;
	a->capacity = cap;
	return true;
}

sim_collide *sim_collide_create(void) { return calloc(1, sizeof(sim_collide)); }

/* Room for n block outputs, each emptied. */
static bool reserve_blocks(sim_collide *c, int n)
{
	if (n > c->block_capacity) {
		block_out *b = realloc(c->blocks, sizeof *b * (size_t)n);
		if (!b)
			return false;
		memset(b + c->block_capacity, 0, sizeof *b * (size_t)(n - c->block_capacity));
		c->blocks = b;
		c->block_capacity = n;
	}
	for (int i = 0; i < n; i++) {
		c->blocks[i].vf.count = c->blocks[i].ee.count = c->blocks[i].contacts.count = 0;
		c->blocks[i].tested = 0;
		c->blocks[i].failed = false;
	}
	return true;
}

/* Appends src to dst. */
static bool append(darray *dst, const darray *src, size_t elem)
{
	if (src->count == 0)
		return true;
	if (!reserve(dst, elem, dst->count + src->count))
		return false;
	memcpy((char *)dst->data + elem * (size_t)dst->count, src->data, elem * (size_t)src->count);
	dst->count += src->count;
	return true;
}

void sim_collide_destroy(sim_collide *c)
{
	if (!c)
		return;
	void *arrays[] = {c->x0, c->vbar, c->vbar_in, c->vbar_pre, c->vbar_obst, c->obst_clean, c->obst_skip, c->surf_out, c->held_w, c->acc, c->sep, c->mu, c->zone, c->box_lo, c->box_hi, c->tris.data, c->tri_owner.data,
	                  c->edges.data, c->edge_owner.data, c->tri_edges.data, c->own_vert_start.data, c->own_vert.data,
	                  c->own_edge_start.data, c->own_edge.data, c->owner_first_tri, c->owner_tri_count,
	                  c->owner_rigid, c->vf.data, c->ee.data, c->vf_state.data, c->ee_state.data, c->vstamp,
	                  c->tri_box.data, c->vf_lb.data, c->ee_lb.data, c->disp,
	                  c->x0_prev, c->move, c->movev, c->dvec, c->old_vf.data, c->old_ee.data, c->old_vf_lb.data, c->old_ee_lb.data,
	                  c->key_start.data, c->key_items.data, c->rigid_contacts.data, c->vert_tri, c->escaped, c->vmoving,
	                  c->edge_tri.data, c->own.data, c->tri_dirty.data, c->dirty_list.data, c->solid,
	                  c->adj_vf.data, c->adj_ee.data, c->adj_tri_start.data,
	                  c->adj_tri_items.data, c->adj_bits.data, c->adj_hint.data, c->vkin, c->vaxis, c->vball,
	                  c->tri_kin.data, c->edge_kin.data};
	for (size_t i = 0; i < sizeof arrays / sizeof arrays[0]; i++)
		free(arrays[i]);
	for (int i = 0; i < c->tree_capacity; i++)
		sim_bvh_destroy(c->trees[i]);
	for (int i = 0; i < c->block_capacity; i++) {
		free(c->blocks[i].vf.data);
		free(c->blocks[i].ee.data);
		free(c->blocks[i].contacts.data);
		free(c->blocks[i].hits.data);
	}
	free(c->blocks);
	sim_patches_destroy(c->patches);
	free(c->adj_blk.data);
	free(c->jobs.data);
	free(c->job_scratch.data);
	free(c->job_trees.data);
	free(c->hits.data);
	free(c->scan_counts.data);
	free(c->pre.data);
	free(c->roots.data);
	free(c->seen.data);
	free(c->body.data);
	free(c->body_mu.data);
	free(c->prim_stamp.data);
	free(c->prim_disp.data);
	free(c->vprim_start.data);
	free(c->vprim_items.data);
	free(c->prim_touched.data);
	free(c->tri_move.data);
	free(c->edge_move.data);
	free(c->tri_sep.data);
	free(c->edge_sep.data);
	free(c->x0d.data);
	free(c->trees);
	free(c);
}

static void to_d(const float *p, double *out)
{
	out[0] = p[0], out[1] = p[1], out[2] = p[2];
}

/* ---- collision vertices and topology -------------------------------------------------------- */

static int obstacle_vertex_total(const sim_world *w)
{
	int total = 0;
	for (int k = 0; k < w->obstacle_count; k++)
		if (sim_obstacle_has_triangles(&w->obstacles[k]))
			total += w->obstacles[k].vertex_count;
	return total;
}

static bool reserve_vertices(sim_collide *c, int nv)
{
	if (nv <= c->nv_capacity)
		return true;
	int cap = c->nv_capacity ? c->nv_capacity : 256;
	while (cap < nv)
		cap *= 2;
	/* Every per-vertex array grows together; realloc keeps the old ones on failure. */
#define GROW(p)                                                                                  \
	do {                                                                                         \
		void *q_ = realloc((p), sizeof *(p) * (size_t)cap);                                      \
		if (!q_)                                                                                 \
			return false;                                                                        \
		(p) = q_;                                                                                \
	} while (0)
	GROW(c->x0);
	GROW(c->vbar);
	GROW(c->vbar_in);
	GROW(c->vbar_pre);
	GROW(c->vbar_obst);
	GROW(c->obst_clean);
	GROW(c->obst_skip);
	GROW(c->surf_out);
	GROW(c->held_w);
	GROW(c->acc);
	GROW(c->x0_prev);
	GROW(c->sep);
	GROW(c->mu);
	GROW(c->box_lo);
	GROW(c->box_hi);
	GROW(c->vkin);
	GROW(c->vaxis);
	GROW(c->vball);
	GROW(c->disp);
	GROW(c->move);
	GROW(c->dvec);
	GROW(c->movev);
	GROW(c->zone);
	GROW(c->vstamp);
	GROW(c->vert_tri);
	GROW(c->escaped);
	GROW(c->vmoving);
	GROW(c->solid);
#undef GROW
	/* the contact sweeps keep acc at zero between uses (apply_accumulated), and
	 * hold_obstacle_moves held_w */
	memset(c->acc, 0, sizeof *c->acc * (size_t)cap);
	memset(c->held_w, 0, sizeof *c->held_w * (size_t)cap);
	c->nv_capacity = cap;
	return true;
}

typedef struct edge_key {
	int a, b, owner;
} edge_key;

static int edge_key_cmp(const void *pa, const void *pb)
{
	const edge_key *x = pa, *y = pb;
	if (x->a != y->a)
		return x->a < y->a ? -1 : 1;
	return x->b < y->b ? -1 : (x->b > y->b);
}

static int find_edge(const int (*edges)[2], int count, int a, int b)
{
	int lo = 0, hi = count - 1;
	while (lo <= hi) {
		int mid = (lo + hi) / 2;
		const int *e = edges[mid];
		if (e[0] == a && e[1] == b)
			return mid;
		if (e[0] < a || (e[0] == a && e[1] < b))
			lo = mid + 1;
		else
			hi = mid - 1;
	}
	return -1;
}

/* Gives each item (3 per triangle in items) to the first triangle that has it: start[t]
 * to start[t + 1] index the items triangle t owns in list.  taken: zeroed scratch. */
static void give_to_first(const int *items, int nt, int *taken, int *start, int *list)
{
	int count = 0;
	for (int t = 0; t < nt; t++) {
		start[t] = count;
		for (int j = 0; j < 3; j++) {
			int item = items[3 * t + j];
			if (!taken[item]) {
				taken[item] = 1;
				list[count++] = item;
			}
		}
	}
	start[nt] = count;
}

/* Gives each vertex and edge to the first triangle (in index order) that has it. */
static bool assign_owners(sim_collide *c, int nv, int nt, int ne)
{
	if (!reserve(&c->own_vert_start, sizeof(int), nt + 1) || !reserve(&c->own_vert, sizeof(int), nv) ||
	    !reserve(&c->own_edge_start, sizeof(int), nt + 1) || !reserve(&c->own_edge, sizeof(int), ne))
		return false;
	size_t most = (size_t)(nv > ne ? nv : ne) + 1;
	int *taken = calloc(most, sizeof(int));
	if (!taken)
		return false;
	give_to_first(c->tris.data, nt, taken, c->own_vert_start.data, c->own_vert.data);
	memset(taken, 0, sizeof(int) * most);
	give_to_first(c->tri_edges.data, nt, taken, c->own_edge_start.data, c->own_edge.data);
	free(taken);
	if (!reserve(&c->edge_tri, sizeof(int), ne) || !reserve(&c->tri_dirty, 1, nt) ||
	    !reserve(&c->dirty_list, sizeof(int), nt))
		return false;
	const int *vs = c->own_vert_start.data, *vl = c->own_vert.data;
	const int *es = c->own_edge_start.data, *el = c->own_edge.data;
	int *et = c->edge_tri.data;
	for (int i = 0; i < nv; i++)
		c->vert_tri[i] = -1;
	for (int t = 0; t < nt; t++) {
		for (int k = vs[t]; k < vs[t + 1]; k++)
			c->vert_tri[vl[k]] = t;
		for (int k = es[t]; k < es[t + 1]; k++)
			et[el[k]] = t;
	}
	if (!reserve(&c->own, sizeof(tri_own), nt))
		return false;
	const int *tri = c->tris.data;
	const int(*edges)[2] = c->edges.data;
	tri_own *own = c->own.data;
	for (int t = 0; t < nt; t++) {
		tri_own *o = &own[t];
		memset(o, 0, sizeof *o);
		memcpy(o->tri, &tri[3 * t], sizeof o->tri);
		for (int k = vs[t]; k < vs[t + 1]; k++)
			o->v[o->nv++] = vl[k];
		for (int k = es[t]; k < es[t + 1]; k++) {
			o->ev[o->ne][0] = edges[el[k]][0];
			o->ev[o->ne][1] = edges[el[k]][1];
			o->e[o->ne++] = el[k];
		}
	}
	if (nt > 0)
		memset(c->tri_dirty.data, 0, (size_t)nt);
	return true;
}

static bool build_adjacency(sim_collide *c, int nv, int nt);

/* Triangles, unique edges and the owner ranges; rebuilt only when objects or obstacles
 * were added (the counts change). */
static bool build_topology(sim_collide *c, const sim_world *w, int nv)
{
	int nt = w->triangle_count;
	for (int k = 0; k < w->obstacle_count; k++)
		if (sim_obstacle_has_triangles(&w->obstacles[k]))
			nt += w->obstacles[k].triangle_count;
	if (c->topology_vertices == nv && c->topology_triangles == nt && c->owner_count > 0)
		return true;
	int owners = w->object_count;
	for (int k = 0; k < w->obstacle_count; k++)
		owners += sim_obstacle_has_triangles(&w->obstacles[k]);
	if (!reserve(&c->tris, sizeof(int) * 3, nt) || !reserve(&c->tri_owner, sizeof(int), nt) ||
	    !reserve(&c->tri_edges, sizeof(int) * 3, nt))
		return false;
	free(c->owner_first_tri);
	free(c->owner_tri_count);
	free(c->owner_rigid);
	c->owner_first_tri = calloc((size_t)owners + 1, sizeof(int));
	c->owner_tri_count = calloc((size_t)owners + 1, sizeof(int));
	c->owner_rigid = calloc((size_t)owners + 1, sizeof(bool));
	if (!c->owner_first_tri || !c->owner_tri_count || !c->owner_rigid)
		return false;
	if (owners > c->tree_capacity) {
		sim_bvh **t = realloc(c->trees, sizeof(sim_bvh *) * (size_t)owners);
		if (!t)
			return false;
		c->trees = t;
		for (int i = c->tree_capacity; i < owners; i++)
			c->trees[i] = NULL;
		c->tree_capacity = owners;
	}
	for (int i = 0; i < owners; i++) {
		if (!c->trees[i])
			c->trees[i] = sim_bvh_create();
		if (!c->trees[i])
			return false;
	}
	int *tri = c->tris.data, *towner = c->tri_owner.data;
	int t = 0, owner = 0;
	for (int i = 0; i < w->object_count; i++, owner++) {
		const sim_object *o = &w->objects[i];
		c->owner_first_tri[owner] = t;
		c->owner_tri_count[owner] = o->triangle_count;
		for (int k = 0; k < o->triangle_count; k++, t++) {
			memcpy(&tri[3 * t], &w->triangles[3 * (o->first_triangle + k)], sizeof(int) * 3);
			towner[t] = owner;
		}
	}
	int vbase = w->n;
	for (int k = 0; k < w->obstacle_count; k++) {
		const sim_obstacle *ob = &w->obstacles[k];
		if (!sim_obstacle_has_triangles(ob))
			continue;
		c->owner_first_tri[owner] = t;
		c->owner_tri_count[owner] = ob->triangle_count;
		c->owner_rigid[owner] = true;
		for (int q = 0; q < ob->triangle_count; q++, t++) {
			for (int j = 0; j < 3; j++)
				tri[3 * t + j] = vbase + ob->local_triangles[3 * q + j];
			towner[t] = owner;
		}
		vbase += ob->vertex_count;
		owner++;
	}
	c->tris.count = c->tri_owner.count = nt;
	c->owner_count = owners;

	edge_key *keys = malloc(sizeof(edge_key) * 3 * (size_t)(nt ? nt : 1));
	if (!keys)
		return false;
	for (int q = 0; q < nt; q++) {
		for (int j = 0; j < 3; j++) {
			int a = tri[3 * q + j], b = tri[3 * q + (j + 1) % 3];
			keys[3 * q + j] = (edge_key){a < b ? a : b, a < b ? b : a, towner[q]};
		}
	}
	qsort(keys, 3 * (size_t)nt, sizeof(edge_key), edge_key_cmp);
	int ne = 0;
	for (int i = 0; i < 3 * nt; i++)
		if (i == 0 || keys[i].a != keys[ne - 1].a || keys[i].b != keys[ne - 1].b)
			keys[ne++] = keys[i];
	if (!reserve(&c->edges, sizeof(int) * 2, ne) || !reserve(&c->edge_owner, sizeof(int), ne)) {
		free(keys);
		return false;
	}
	int(*edges)[2] = c->edges.data;
	for (int i = 0; i < ne; i++) {
		edges[i][0] = keys[i].a;
		edges[i][1] = keys[i].b;
		((int *)c->edge_owner.data)[i] = keys[i].owner;
	}
	c->edges.count = c->edge_owner.count = ne;
	free(keys);
	int *te = c->tri_edges.data;
	for (int q = 0; q < nt; q++) {
		for (int j = 0; j < 3; j++) {
			int a = tri[3 * q + j], b = tri[3 * q + (j + 1) % 3];
			te[3 * q + j] = find_edge((const int(*)[2])edges, ne, a < b ? a : b, a < b ? b : a);
		}
	}
	c->tri_edges.count = nt;
	c->patched = false;
	if (!c->patches && !(c->patches = sim_patches_create()))
		return false;
	if (!sim_patches_layout(c->patches, w, c->tris.data, nt))
		return false;
	if (!assign_owners(c, nv, nt, ne) || !build_adjacency(c, nv, nt))
		return false;
	c->have_candidates = false;
	c->topology_vertices = nv;
	c->topology_triangles = nt;
	return true;
}

/* Per-vertex loops of the substep, each vertex its own: gathering the cloth, renewing
 * the displacements, writing the result back. */
typedef struct vertex_task {
	sim_collide *c;
	sim_world *w;
	float h;
} vertex_task;

static void gather_range(int start, int end, int worker, void *ctx)
{
	(void)worker;
	const vertex_task *t = ctx;
	sim_collide *c = t->c;
	const sim_world *w = t->w;
	for (int i = start; i < end; i++) {
		const sim_object *o = &w->objects[w->owner[i]];
		glm_vec4_copy(w->x_start[i], c->x0[i]);
		c->x0[i][3] = w->x[i][3]; /* the inverse mass this substep used */
		for (int k = 0; k < 3; k++)
			c->vbar[i][k] = (w->x[i][k] - w->x_start[i][k]) / t->h;
		c->vbar[i][3] = 0.0f;
		glm_vec4_copy(c->vbar[i], c->vbar_in[i]);
		c->sep[i] = 0.5f * o->material.thickness;
		c->mu[i] = o->material.friction;
	}
}

/* Fills x0, vbar, the inverse masses, separations and friction of every collision
 * vertex for this substep. */
static void gather(sim_collide *c, sim_world *w, float h)
{
	vertex_task task = {c, w, h};
	sim_parallel_for(w, gather_range, w->n, BOX_RANGE, &task);
	int base = w->n;
	for (int k = 0; k < w->obstacle_count; k++) {
		const sim_obstacle *ob = &w->obstacles[k];
		if (!sim_obstacle_has_triangles(ob))
			continue;
		vec3 p1;
		versor q1;
		sim_obstacle_pose_at(ob, h, p1, q1);
		sim_obstacle_world_vertices(ob, ob->position, ob->orientation, c->x0 + base);
		/* the end positions go through vbar_in as scratch */
		sim_obstacle_world_vertices(ob, p1, q1, c->vbar_in + base);
		for (int i = base; i < base + ob->vertex_count; i++) {
			for (int j = 0; j < 3; j++)
				c->vbar[i][j] = (c->vbar_in[i][j] - c->x0[i][j]) / h;
			c->vbar[i][3] = 0.0f;
			c->x0[i][3] = 0.0f;
			c->sep[i] = ob->def.thickness;
			c->mu[i] = ob->def.friction;
		}
		base += ob->vertex_count;
	}
	/* the cloth's vbar_in came with gather_range */
	memcpy(c->vbar_in + w->n, c->vbar + w->n, sizeof(vec4) * (size_t)(c->nv - w->n));
}

/* The bodies of the collision vertices and the pair table, when the world has pair
 * friction; false out of memory. */
static bool gather_bodies(sim_collide *c, const sim_world *w)
{
	c->pair_mu = w->pair_mu_count > 0;
	if (!c->pair_mu)
		return true;
	int nb = w->object_count + w->obstacle_count;
	/* the bodies change only with the objects and obstacles, which change the counts */
	if (c->body.count != c->nv || c->body_objects != w->object_count || c->body_count != nb) {
		if (!reserve(&c->body, sizeof(int), c->nv) || !reserve(&c->body_mu, sizeof(float), nb * nb))
			return false;
		int *body = c->body.data;
		for (int i = 0; i < w->n; i++)
			body[i] = w->owner[i];
		int base = w->n;
		for (int k = 0; k < w->obstacle_count; k++) {
			if (!sim_obstacle_has_triangles(&w->obstacles[k]))
				continue;
			for (int i = base; i < base + w->obstacles[k].vertex_count; i++)
				body[i] = w->object_count + k;
			base += w->obstacles[k].vertex_count;
		}
		c->body.count = c->nv;
		c->body_revision = w->pair_mu_revision - 1; /* the table too */
	}
	if (c->body_revision == w->pair_mu_revision)
		return true;
	float *mu = c->body_mu.data;
	for (int i = 0; i < nb * nb; i++)
		mu[i] = NAN;
	for (int i = 0; i < w->pair_mu_count; i++) {
		const struct sim_pair_mu *e = &w->pair_mu[i];
		int a = e->a >= 0 ? e->a : w->object_count - 1 - e->a, b = e->b >= 0 ? e->b : w->object_count - 1 - e->b;
		mu[a * nb + b] = mu[b * nb + a] = e->mu;
	}
	c->body_revision = w->pair_mu_revision;
	c->body_objects = w->object_count;
	c->body_count = nb;
	return true;
}

/* The pair table's coefficient for bodies i and j (NaN: none). */
static inline float body_pair_mu(const sim_collide *c, int body_i, int body_j)
{
	return ((const float *)c->body_mu.data)[body_i * c->body_count + body_j];
}

/* The end position the step will write, x0 + h vbar, in float as the world computes it. */
static void end_position(const sim_collide *c, int i, float h, double out[3])
{
	for (int k = 0; k < 3; k++)
		out[k] = (double)(c->x0[i][k] + h * c->vbar[i][k]);
}

/* Renews vertex i's displacement over the substep, end - start in double, and its
 * length, after vbar changed. */
static void track_motion(sim_collide *c, int i, float h)
{
	double e[3], d2 = 0.0;
	end_position(c, i, h, e);
	for (int k = 0; k < 3; k++) {
		c->dvec[i][k] = e[k] - c->x0[i][k];
		d2 += c->dvec[i][k] * c->dvec[i][k];
	}
	c->disp[i] = sqrt(d2);
}

/* ---- broad phase ---------------------------------------------------------------------------- */

/* Vertex i's kinetic box, made at the current substep (tau): the line through x0 at tau
 * with the current displacement d per substep, reach around it, written at tau = 0 and
 * tau = W; and its box over the rest of the window, for the trees. */
static void vertex_box(sim_collide *c, int i, float h, float reach, float still)
{
	const float tau = (float)c->tau, ahead = (float)(c->window - c->tau);
	kbox *kb = &c->vkin[i];
#if defined(__SSE2__)
	/* The scalar form below, lane by lane: the same IEEE operations in the same order
	 * (_mm_min_ps(a, s1) is a < s1 ? a : s1, _mm_max_ps(s1, a) is s1 > a ? s1 : a, and
	 * the size's maxima skip a NaN as vsphere_size does), lane 3 cleared. */
	const __m128 xyz = _mm_castsi128_ps(_mm_setr_epi32(-1, -1, -1, 0));
	const __m128 magnitude = _mm_castsi128_ps(_mm_set1_epi32(0x7fffffff));
	const __m128 a = _mm_loadu_ps(c->x0[i]), hv = _mm_mul_ps(_mm_set1_ps(h), _mm_loadu_ps(c->vbar[i]));
	const __m128 far = _mm_cmpgt_ps(_mm_mul_ps(_mm_and_ps(hv, magnitude), _mm_set1_ps(ahead)), _mm_set1_ps(still));
	const bool moving = (_mm_movemask_ps(far) & 7) != 0;
	const __m128 d = moving ? hv : _mm_setzero_ps(), r = _mm_set1_ps(reach);
	const __m128 s0 = _mm_and_ps(_mm_sub_ps(a, _mm_mul_ps(_mm_set1_ps(tau), d)), xyz);
	const __m128 s1 = _mm_and_ps(_mm_add_ps(a, _mm_mul_ps(_mm_set1_ps(ahead), d)), xyz);
	_mm_storeu_ps(kb->lo0, _mm_and_ps(_mm_sub_ps(s0, r), xyz));
	_mm_storeu_ps(kb->hi0, _mm_and_ps(_mm_add_ps(s0, r), xyz));
	_mm_storeu_ps(kb->lo1, _mm_and_ps(_mm_sub_ps(s1, r), xyz));
	_mm_storeu_ps(kb->hi1, _mm_and_ps(_mm_add_ps(s1, r), xyz));
	_mm_storeu_ps(c->box_lo[i], _mm_and_ps(_mm_sub_ps(_mm_min_ps(a, s1), r), xyz));
	_mm_storeu_ps(c->box_hi[i], _mm_and_ps(_mm_add_ps(_mm_max_ps(s1, a), r), xyz));
	__m128 big = _mm_max_ps(_mm_and_ps(s0, magnitude), _mm_setzero_ps());
	big = _mm_max_ps(_mm_and_ps(s1, magnitude), big);
	big = _mm_max_ps(_mm_shuffle_ps(big, big, _MM_SHUFFLE(3, 3, 3, 1)), big);
	big = _mm_max_ps(_mm_shuffle_ps(big, big, _MM_SHUFFLE(3, 3, 3, 2)), big);
	const float size = _mm_cvtss_f32(big);
	const __m128 rad = _mm_setr_ps(0.0f, 0.0f, 0.0f, reach + 0x1p-20f * (size + reach));
	_mm_store_ps(c->vaxis[i].c0, _mm_or_ps(s0, rad));
	_mm_store_ps(c->vaxis[i].c1, _mm_or_ps(s1, rad));
	c->vball[i] = reach - 0x1p-19f * (size + reach);
#else
	/* A vertex that moves less than `still` over the rest of the window gets a box that
	 * stands still: it lasts past the window's end for as long as the vertex stays in. */
	bool moving = false;
	float c0[3], c1[3];
	for (int k = 0; k < 3; k++)
		moving |= fabsf(h * c->vbar[i][k]) * ahead > still;
	for (int k = 0; k < 3; k++) {
		float a = c->x0[i][k], d = moving ? h * c->vbar[i][k] : 0.0f;
		float s0 = a - tau * d, s1 = a + ahead * d;
		kb->lo0[k] = s0 - reach, kb->hi0[k] = s0 + reach;
		kb->lo1[k] = s1 - reach, kb->hi1[k] = s1 + reach;
		c->box_lo[i][k] = (a < s1 ? a : s1) - reach;
		c->box_hi[i][k] = (a < s1 ? s1 : a) + reach;
		c0[k] = s0, c1[k] = s1;
	}
	kb->lo0[3] = kb->hi0[3] = kb->lo1[3] = kb->hi1[3] = 0.0f;
	vsphere_set(&c->vaxis[i], c0, c1, reach);
	c->vball[i] = vsphere_ball(c0, c1, reach);
	c->box_lo[i][3] = c->box_hi[i][3] = 0.0f;
#endif
}

/* Vertices per block of mark_escaped. */
#define ESCAPE_BLOCK 4096

typedef struct escape_task {
	sim_collide *c;
	float h, start_margin, extra;
	int since;   /* only the vertices stamped after this clock (-1: all, the stamps unread) */
	int size;    /* vertices per block */
	int *counts; /* per block */
} escape_task;

static void escape_range(int start, int end, int worker, void *ctx)
{
	(void)worker;
	const escape_task *t = ctx;
	sim_collide *c = t->c;
	const float h = t->h, margin = 4.0f * (float)CCD_GAP + t->extra, start_margin = t->start_margin + t->extra;
	const bool check_start = t->start_margin >= 0.0f;
	const float f0 = (float)c->tau / (float)c->window, f1 = (float)(c->tau + 1) / (float)c->window;
	const bool ended = c->tau + 1 > c->window;
#if defined(__SSE2__)
	const __m128 hh = _mm_set1_ps(h);
#endif
	for (int blk = start; blk < end; blk++) {
		int first = blk * t->size, last = first + t->size < c->nv ? first + t->size : c->nv;
		int escaped = 0;
		for (int i = first; i < last; i++) {
			if (t->since >= 0 && c->vstamp[i] <= t->since)
				continue; /* unchanged since it was found in, or boxed anew (escaped 0) */
			const vsphere *v = &c->vaxis[i];
#if defined(__SSE2__)
			/* the scalar form's operations lane by lane */
			const __m128 a = _mm_loadu_ps(c->x0[i]), e = _mm_add_ps(a, _mm_mul_ps(hh, _mm_loadu_ps(c->vbar[i])));
			/* still boxes last */
			bool in = !ended || (_mm_movemask_ps(_mm_cmpeq_ps(_mm_load_ps(v->c0), _mm_load_ps(v->c1))) & 7) == 7;
			in = in && ball_holds_v(v, c->vball[i], f1, e, margin);
			in = in && (!check_start || ball_holds_v(v, c->vball[i], f0, a, start_margin));
#else
			const float *a = c->x0[i];
			float e[3];
			bool in = true;
			for (int k = 0; k < 3; k++) {
				e[k] = a[k] + h * c->vbar[i][k];
				in &= (!ended) | (v->c0[k] == v->c1[k]); /* still boxes last */
			}
			in = in && ball_holds(v, c->vball[i], f1, e, margin);
			in = in && (!check_start || ball_holds(v, c->vball[i], f0, a, start_margin));
#endif
			c->escaped[i] = !in;
			escaped += !in;
		}
		t->counts[blk] = escaped;
	}
}

/* Marks the vertices that have left the box the broad phase gave them, and returns how
 * many did.  A vertex stays covered while its current path, inflated by a few CCD gaps,
 * lies in the ball inside its kinetic box (ball_holds; the separating axes other than x,
 * y and z rely on the ball, the trees on the box): the start in the ball at tau and the
 * end in the ball at tau + 1 (the set of (time, point) in the ball is convex, so the
 * whole linear path is then in it; every pair that can come within CCD_GAP then has
 * balls that meet at one time, and the candidates hold every pair the detection could
 * find); and, with start_margin >= 0, its start position with that margin around it
 * (the contacts: a pair closer than its separation, at most the pad, at the start has
 * balls that meet at tau when each holds its start with half the pad around it).  Past
 * the window's end only the vertices whose boxes stand still can stay; extra more margin
 * marks those that have used up that much of their slack too.  With since >= 0,
 * only the vertices stamped after that clock are asked: the others must be unchanged
 * since the last refresh, which left every vertex in its ball (escaped all 0). */
static int mark_escaped(sim_collide *c, const sim_world *w, float h, float start_margin, float extra, int since)
{
	/* at most 64 blocks, so that their counts fit on the stack */
	int size = ESCAPE_BLOCK, nblocks = (c->nv + size - 1) / size;
	if (nblocks > 64) {
		size = (c->nv + 63) / 64;
		nblocks = (c->nv + size - 1) / size;
	}
	int counts[64];
	escape_task task = {c, h, start_margin, extra, since, size, counts};
	sim_parallel_for(w, escape_range, nblocks, 1, &task);
	int escaped = 0;
	for (int blk = 0; blk < nblocks; blk++)
		escaped += counts[blk];
	return escaped;
}

/* A window of about BROAD_WINDOW_S, from the current substep on. */
static void new_window(sim_collide *c, float h)
{
	int window = (int)(BROAD_WINDOW_S / h + 0.5f);
	c->window = window < 1 ? 1 : (window > BROAD_WINDOW_MAX ? BROAD_WINDOW_MAX : window);
	c->tau = 0;
}

/* The slack, as a fraction of the pad: a one-substep window ends before the motion can
 * depart from its extrapolation by much, so it only has to absorb the collision
 * impulses' changes within the substep. */
static float slack(const sim_collide *c) { return c->window == 1 ? BROAD_SLACK_ONE : BROAD_SLACK; }

typedef struct broad_ctx {
	sim_collide *c;
	darray *vf, *ee;      /* where the candidates go */
	int first_a, first_b; /* first triangle of the trees being traversed */
	int tested;           /* leaf pairs reported (a call each, up to 16 triangle pairs) */
	bool failed;
} broad_ctx;

static inline bool shares_vertex(const int *t, int v) { return (t[0] == v) | (t[1] == v) | (t[2] == v); }

/* Whether two kinetic boxes meet at one time of the window.  Along each axis the gap
 * between them is linear in tau, so its extremes are at the window's ends; the test is
 * per axis (a common tau for the three axes is not required, which only keeps more). */
static inline bool kbox_overlap(const kbox *a, const kbox *b)
{
#if defined(__SSE2__)
	/* the same IEEE <= as the scalar test, lane 3 (0 <= 0) always true */
	__m128 x = _mm_or_ps(_mm_cmple_ps(_mm_loadu_ps(b->lo0), _mm_loadu_ps(a->hi0)),
	                     _mm_cmple_ps(_mm_loadu_ps(b->lo1), _mm_loadu_ps(a->hi1)));
	__m128 y = _mm_or_ps(_mm_cmple_ps(_mm_loadu_ps(a->lo0), _mm_loadu_ps(b->hi0)),
	                     _mm_cmple_ps(_mm_loadu_ps(a->lo1), _mm_loadu_ps(b->hi1)));
	return _mm_movemask_ps(_mm_and_ps(x, y)) == 0xf;
#else
	bool r = true;
	for (int k = 0; k < 3; k++)
		r &= ((b->lo0[k] <= a->hi0[k]) | (b->lo1[k] <= a->hi1[k])) & ((a->lo0[k] <= b->hi0[k]) | (a->lo1[k] <= b->hi1[k]));
	return r;
#endif
}

/* Boxes that overlap along x, y and z often do not along the centroids' axis: in a sheet,
 * a triangle's box holds the vertices across its edges, and the two boxes of triangles
 * two rings apart meet wherever the sheet is not aligned with the axes. */
static inline bool vf_apart(const sim_collide *c, int v, const int *t)
{
	float m[3];
	centroid_axis(c->vaxis, &v, 1, t, 3, m);
	return apart_1_3(c->vaxis, v, t, m);
}

/* Two edges side by side in a sheet are often not apart along the axis between their
 * midpoints but along its part normal to one of them (in the sheet's plane): the three
 * axes, tried from *first on; *first becomes the one that separated them.  Which one is
 * tried first changes the cost, never the answer (apart along any of the three). */
static inline bool ee_apart_from(const sim_collide *c, const int *ea, const int *eb, unsigned char *first)
{
	const vsphere *vs = c->vaxis;
	float w[3];
	centroid_axis(vs, ea, 2, eb, 2, w);
	for (int k = 0; k < 3; k++) {
		int axis = (*first + k) % 3;
		float m[3] = {w[0], w[1], w[2]};
		if (axis > 0) {
			const int *e = axis == 1 ? ea : eb;
			float d[3], dd = 0.0f, wd = 0.0f;
			for (int j = 0; j < 3; j++) {
				d[j] = vs[e[1]].c0[j] - vs[e[0]].c0[j];
				dd += d[j] * d[j], wd += w[j] * d[j];
			}
			float f = wd / dd;
			for (int j = 0; j < 3; j++)
				m[j] = w[j] - f * d[j];
		}
		if (apart_2_2(vs, ea, eb, m)) {
			*first = (unsigned char)axis;
			return true;
		}
	}
	return false;
}

/* The primitive pairs of triangles ta and tb: the vertices each owns against the other
 * triangle, and the edges each owns against the other's, minus those whose primitives
 * share a vertex (neighbours, the neighbour list), or (`boxes`: triangles that share no
 * vertex, so that no primitive pair of theirs can) those whose own boxes are apart (a
 * vertex's box against the triangle's, an edge's against the edge's).  The lists must
 * have room for
 * the most one pair can add (3 + 3 vertex-face, 3 x 3 edge-edge): every pair is written
 * and kept or not by the count alone. */
static inline void expand_pair(const sim_collide *c, int ta, int tb, pair *vf, int *nvf_io, pair *ee, int *nee_io,
                               bool boxes)
{
	const tri_own *A = &((const tri_own *)c->own.data)[ta], *B = &((const tri_own *)c->own.data)[tb];
	const kbox *tkin = c->tri_kin.data, *ekin = c->edge_kin.data, *vkin = c->vkin;
	int nvf = *nvf_io, nee = *nee_io;
	for (int k = 0; k < A->nv; k++) {
		vf[nvf] = (pair){A->v[k], tb};
		nvf += boxes ? kbox_overlap(&vkin[A->v[k]], &tkin[tb]) : !shares_vertex(B->tri, A->v[k]);
	}
	for (int k = 0; k < B->nv; k++) {
		vf[nvf] = (pair){B->v[k], ta};
		nvf += boxes ? kbox_overlap(&vkin[B->v[k]], &tkin[ta]) : !shares_vertex(A->tri, B->v[k]);
	}
	for (int i = 0; i < A->ne; i++) {
		const int *p = A->ev[i];
		for (int j = 0; j < B->ne; j++) {
			const int *q = B->ev[j];
			ee[nee] = (pair){A->e[i], B->e[j]};
			nee += boxes ? kbox_overlap(&ekin[A->e[i]], &ekin[B->e[j]])
			             : (p[0] != q[0]) & (p[0] != q[1]) & (p[1] != q[0]) & (p[1] != q[1]);
		}
	}
	*nvf_io = nvf;
	*nee_io = nee;
}

static inline bool triangles_share_vertex(const int *a, const int *b)
{
	return shares_vertex(b, a[0]) | shares_vertex(b, a[1]) | shares_vertex(b, a[2]);
}

/* triangle_pair (below) for a pair whose kinetic boxes meet. */
static __attribute__((noinline)) bool triangle_pair_kept(const sim_collide *c, darray *vfa, darray *eea, int ta,
                                                          int tb)
{
	/* apart along the axis between the triangles' centroids: no pair of theirs can meet */
	const int *a = &((const int *)c->tris.data)[3 * ta], *b = &((const int *)c->tris.data)[3 * tb];
	float m[3];
	centroid_axis(c->vaxis, a, 3, b, 3, m);
	if (apart_3_3(c->vaxis, a, b, m))
		return true;
	/* The primitive pairs of the triangles kept get the boxes' test alone: along their own
	 * axes they were apart too rarely to pay (at the drape about a quarter of them, at the
	 * pile's fold fewer; its worst steps were 0.1 ms slower). */
	if (!reserve(vfa, sizeof(pair), vfa->count + 6) || !reserve(eea, sizeof(pair), eea->count + 9))
		return false;
	expand_pair(c, ta, tb, vfa->data, &vfa->count, eea->data, &eea->count, true);
	return true;
}

/* A pair of overlapping triangles (collision indices) from the traversal or a query:
 * its primitive pairs whose boxes meet.  Triangles that share a vertex are left to the
 * neighbour list (adjacent_candidates): the trees hold their triangles' vertices and
 * never report them (fit_trees).  The kinetic boxes' test is inlined into the callers'
 * loops: it drops three in five of the traversal's reports on the drape (pieces that
 * fall side by side), and a call for each cost more than the test. */
static inline __attribute__((always_inline)) bool triangle_pair(const sim_collide *c, darray *vfa, darray *eea,
                                                                int ta, int tb)
{
	const kbox *tkin = c->tri_kin.data;
	assert(!triangles_share_vertex(&((const int *)c->tris.data)[3 * ta], &((const int *)c->tris.data)[3 * tb]));
	return !kbox_overlap(&tkin[ta], &tkin[tb]) || triangle_pair_kept(c, vfa, eea, ta, tb);
}

static bool parallel(const sim_world *w);
static bool merge_candidates(sim_collide *c, const sim_world *w, int blocks);

/* Neighbour-list entries per block (vertex-face entries, then edge-edge ones, as one
 * sequence): a block's output is merged in block order. */
#define ADJ_BLOCK 8192

typedef struct adjacent_task {
	sim_collide *c;
	bool dirty;  /* only the entries of a dirty triangle: those whose bit is set in adj_bits */
	bool direct; /* inline: straight into c->vf and c->ee */
} adjacent_task;

/* An in-place refresh's share of block [first, last) of the neighbour list: the entries
 * whose bit is set, in increasing order (ADJ_BLOCK is a multiple of 64, so a block owns
 * whole words). */
static void adjacent_dirty(sim_collide *c, int first, int last, pair *vf, int *nvf_io, pair *ee, int *nee_io)
{
	const uint64_t *bits = c->adj_bits.data;
	const kbox *tkin = c->tri_kin.data, *ekin = c->edge_kin.data;
	const int *tri = c->tris.data, (*edge)[2] = c->edges.data;
	unsigned char *hint = c->adj_hint.data;
	const pair *avf = c->adj_vf.data, *aee = c->adj_ee.data;
	const int nvf_all = c->adj_vf.count;
	const int *blk = c->patched && sim_patches_cover_entries(c->patches) ? c->adj_blk.data : NULL;
	const int *top = sim_patches_tops(c->patches);
	int nvf = *nvf_io, nee = *nee_io;
	for (int wd = first >> 6; wd < (last + 63) >> 6; wd++) {
		for (uint64_t m = bits[wd]; m; m &= m - 1) {
			int q = (wd << 6) + __builtin_ctzll(m);
			if (blk && blk[q] >= 0 && top[blk[q]] >= 0)
				continue;
			if (q < nvf_all) {
				pair p = avf[q];
				vf[nvf] = p;
				nvf += kbox_overlap(&c->vkin[p.a], &tkin[p.b]) && !vf_apart(c, p.a, &tri[3 * p.b]);
			} else {
				pair p = aee[q - nvf_all];
				ee[nee] = p;
				nee += kbox_overlap(&ekin[p.a], &ekin[p.b]) &&
				       !ee_apart_from(c, edge[p.a], edge[p.b], &hint[q - nvf_all]);
			}
		}
	}
	*nvf_io = nvf;
	*nee_io = nee;
}

/* Vertex-face entries [vf_first, vf_end) and edge-edge entries [ee_first, ee_end) of the
 * neighbour list, appended where their boxes and axes meet; with pblk, those whose
 * smallest block has a holder (top) are skipped, and their count returned.  Inlined with
 * pblk NULL or not, so that the loop without patches tests nothing more. */
static inline __attribute__((always_inline)) int adjacent_entries(sim_collide *c, int vf_first, int vf_end,
                                                                  int ee_first, int ee_end, pair *vf, int *nvf_io,
                                                                  pair *ee, int *nee_io, const int *pblk,
                                                                  const int *top)
{
	const kbox *tkin = c->tri_kin.data, *ekin = c->edge_kin.data;
	const int *tri = c->tris.data, (*edge)[2] = c->edges.data;
	unsigned char *hint = c->adj_hint.data;
	const pair *avf = c->adj_vf.data, *aee = c->adj_ee.data;
	const int nvf_all = c->adj_vf.count;
	int nvf = *nvf_io, nee = *nee_io, skipped = 0;
	/* the axes right after the boxes' test: it keeps about one entry in eight, so its
	 * branch is well predicted, and nearly all it keeps are apart along an axis */
	for (int q = vf_first; q < vf_end; q++) {
		if (pblk && pblk[q] >= 0 && top[pblk[q]] >= 0) {
			skipped++;
			continue;
		}
		pair p = avf[q];
		vf[nvf] = p;
		nvf += kbox_overlap(&c->vkin[p.a], &tkin[p.b]) && !vf_apart(c, p.a, &tri[3 * p.b]);
	}
	for (int q = ee_first; q < ee_end; q++) {
		if (pblk && pblk[nvf_all + q] >= 0 && top[pblk[nvf_all + q]] >= 0) {
			skipped++;
			continue;
		}
		pair p = aee[q];
		ee[nee] = p;
		nee += kbox_overlap(&ekin[p.a], &ekin[p.b]) && !ee_apart_from(c, edge[p.a], edge[p.b], &hint[q]);
	}
	*nvf_io = nvf;
	*nee_io = nee;
	return skipped;
}

static void adjacent_range(int start, int end, int worker, void *ctx)
{
	(void)worker;
	const adjacent_task *t = ctx;
	sim_collide *c = t->c;
	const bool dirty = t->dirty;
	const int nvf_all = c->adj_vf.count, total = nvf_all + c->adj_ee.count;
	/* an entry whose smallest block a certified patch holds cannot meet (patch.h) */
	const int *pblk = c->patched && sim_patches_cover_entries(c->patches) ? c->adj_blk.data : NULL;
	const int *top = sim_patches_tops(c->patches);
	for (int blk = start; blk < end; blk++) {
		block_out *out = &c->blocks[blk];
		darray *vfa = t->direct ? &c->vf : &out->vf, *eea = t->direct ? &c->ee : &out->ee;
		int first = blk * ADJ_BLOCK, last = first + ADJ_BLOCK < total ? first + ADJ_BLOCK : total;
		int vf_end = last < nvf_all ? last : nvf_all, ee_first = (first > nvf_all ? first : nvf_all) - nvf_all;
		if (!reserve(vfa, sizeof(pair), vfa->count + (vf_end > first ? vf_end - first : 0)) ||
		    !reserve(eea, sizeof(pair), eea->count + (last - nvf_all > ee_first ? last - nvf_all - ee_first : 0))) {
			out->failed = true;
			return;
		}
		pair *vf = vfa->data, *ee = eea->data;
		int nvf = vfa->count, nee = eea->count;
		if (dirty) {
			adjacent_dirty(c, first, last, vf, &vfa->count, ee, &eea->count);
			continue;
		}
		int skipped = pblk ? adjacent_entries(c, first, vf_end, ee_first, last - nvf_all, vf, &nvf, ee, &nee, pblk, top)
		                   : adjacent_entries(c, first, vf_end, ee_first, last - nvf_all, vf, &nvf, ee, &nee, NULL, NULL);
		out->tested = last - first - skipped;
		vfa->count = nvf;
		eea->count = nee;
	}
}

/* The neighbour list's pairs whose boxes meet, appended to the candidates in list order;
 * with dirty triangles (list[0, nd); an in-place refresh: the others' were kept), only
 * those of a dirty triangle, found through the triangles' entries and a bit per entry,
 * so that the order is the list's. */
static bool adjacent_candidates(sim_collide *c, const sim_world *w, const int *list, int nd)
{
	int total = c->adj_vf.count + c->adj_ee.count, nblocks = (total + ADJ_BLOCK - 1) / ADJ_BLOCK;
	bool par = parallel(w) && nblocks > 1;
	if (!reserve_blocks(c, nblocks))
		return false;
	bool dirty = list != NULL;
	if (dirty) {
		uint64_t *bits = c->adj_bits.data;
		const int *ts = c->adj_tri_start.data, *ti = c->adj_tri_items.data;
		memset(bits, 0, sizeof(uint64_t) * (((size_t)total + 63) >> 6));
		for (int k = 0; k < nd; k++)
			for (int j = ts[list[k]]; j < ts[list[k] + 1]; j++)
				bits[ti[j] >> 6] |= (uint64_t)1 << (ti[j] & 63);
	}
	adjacent_task task = {c, dirty, !par};
	sim_parallel_for(w, adjacent_range, nblocks, 1, &task);
	bool ok = true;
	for (int k = 0; k < nblocks; k++) {
		ok &= !c->blocks[k].failed;
		c->broad_tested += dirty ? 0 : c->blocks[k].tested;
	}
	return ok && (!par || merge_candidates(c, w, nblocks));
}

/* The triangles -> entries index of the neighbour list (counting sort: each triangle's
 * entries in increasing order), and room for a bit per entry. */
static bool index_adjacency(sim_collide *c, int nt)
{
	const int nvf = c->adj_vf.count, total = nvf + c->adj_ee.count;
	if (!reserve(&c->adj_tri_start, sizeof(int), nt + 2) || !reserve(&c->adj_tri_items, sizeof(int), 2 * total) ||
	    !reserve(&c->adj_bits, sizeof(uint64_t), (total + 63) / 64 + 1) ||
	    !reserve(&c->adj_hint, 1, c->adj_ee.count + 1))
		return false;
	memset(c->adj_hint.data, 0, (size_t)c->adj_ee.count + 1);
	const pair *avf = c->adj_vf.data, *aee = c->adj_ee.data;
	const int *vt = c->vert_tri, *et = c->edge_tri.data;
	if (!reserve(&c->adj_blk, sizeof(int), total + 1))
		return false;
	int *blk = c->adj_blk.data;
	for (int q = 0; q < total; q++)
		blk[q] = sim_patches_pair_block(c->patches, q < nvf ? vt[avf[q].a] : et[aee[q - nvf].a],
		                                q < nvf ? avf[q].b : et[aee[q - nvf].b]);
	int *start = c->adj_tri_start.data, *items = c->adj_tri_items.data;
	memset(start, 0, sizeof(int) * ((size_t)nt + 2));
	/* an entry's two triangles: the owner of its vertex and its triangle, or its edges'
	 * owners (distinct: the pair came from two distinct triangles) */
	for (int pass = 0; pass < 2; pass++) {
		for (int q = 0; q < total; q++) {
			int ta = q < nvf ? vt[avf[q].a] : et[aee[q - nvf].a], tb = q < nvf ? avf[q].b : et[aee[q - nvf].b];
			if (pass == 0)
				start[ta + 2]++, start[tb + 2]++;
			else
				items[start[ta + 1]++] = q, items[start[tb + 1]++] = q;
		}
		if (pass == 0)
			for (int t = 0; t < nt; t++)
				start[t + 2] += start[t + 1];
	}
	/* start[t] to start[t + 1] now index t's entries */
	return true;
}

/* Fills adj_vf and adj_ee: for every cloth triangle ta, in order, the triangles tb > ta
 * that share a vertex with it (each once, in the order its vertices' incidence lists
 * meet them), and their primitive pairs, as the broad phase would have taken them with
 * every box overlapping. */
static bool build_adjacency(sim_collide *c, int nv, int nt)
{
	c->adj_vf.count = c->adj_ee.count = 0;
	int *start = calloc((size_t)nv + 2, sizeof(int)), *inc = malloc(sizeof(int) * 3 * (size_t)(nt ? nt : 1));
	int *seen = malloc(sizeof(int) * (size_t)(nt ? nt : 1));
	bool ok = start && inc && seen;
	const int *tri = c->tris.data, *towner = c->tri_owner.data;
	if (ok) {
		/* vertex -> triangles (CSR, triangles in index order) */
		for (int k = 0; k < 3 * nt; k++)
			start[tri[k] + 2]++;
		for (int v = 0; v < nv; v++)
			start[v + 2] += start[v + 1];
		for (int t = 0; t < nt; t++)
			for (int j = 0; j < 3; j++)
				inc[start[tri[3 * t + j] + 1]++] = t;
		/* start[v] to start[v + 1] now index v's triangles */
		for (int t = 0; t < nt; t++)
			seen[t] = -1;
	}
	for (int ta = 0; ok && ta < nt; ta++) {
		if (c->owner_rigid[towner[ta]])
			continue;
		for (int j = 0; ok && j < 3; j++) {
			int v = tri[3 * ta + j];
			for (int k = start[v]; ok && k < start[v + 1]; k++) {
				int tb = inc[k];
				if (tb <= ta || seen[tb] == ta)
					continue;
				seen[tb] = ta;
				ok = reserve(&c->adj_vf, sizeof(pair), c->adj_vf.count + 6) &&
				     reserve(&c->adj_ee, sizeof(pair), c->adj_ee.count + 9);
				if (ok)
					expand_pair(c, ta, tb, c->adj_vf.data, &c->adj_vf.count, c->adj_ee.data, &c->adj_ee.count,
					            false);
			}
		}
	}
	free(start);
	free(inc);
	free(seen);
	return ok && index_adjacency(c, nt);
}

/* The traversal's reports of a leaf pair (sim_bvh_run_job_masks): its overlapping
 * triangle pairs, in tree-local indices, in the order sim_bvh_run_job would report them
 * one call each. */
static void on_triangle_pairs(void *user, const int *ta, const int *tb, unsigned m, bool sorted)
{
	broad_ctx *ctx = user;
	ctx->tested++;
	while (m) {
		int bit = __builtin_ctz(m);
		m &= m - 1;
		int a = ta[bit >> 2], b = tb[bit & 3];
		if (sorted && b < a) {
			int t = a;
			a = b;
			b = t;
		}
		if (!triangle_pair(ctx->c, ctx->vf, ctx->ee, a + ctx->first_a, b + ctx->first_b))
			ctx->failed = true;
	}
}

/* The union of n vertices' kinetic boxes: at each end of the window the union of their
 * boxes there.  In between it holds them too (a minimum of linear functions lies above
 * the interpolation of their minima).  And in `box` (unless NULL: an edge's, which
 * nothing reads) the union of their boxes over the rest of the window, for the trees. */
static void kbox_union(const sim_collide *c, const int *v, int n, kbox *out, fbox *box)
{
#if defined(__SSE2__)
	/* _mm_min_ps(b, a) is b < a ? b : a, and _mm_max_ps(b, a) b > a ? b : a: the scalar
	 * loop's choices, lane by lane */
	const kbox *a = &c->vkin[v[0]];
	__m128 lo0 = _mm_loadu_ps(a->lo0), hi0 = _mm_loadu_ps(a->hi0), lo1 = _mm_loadu_ps(a->lo1);
	__m128 hi1 = _mm_loadu_ps(a->hi1);
	for (int j = 1; j < n; j++) {
		const kbox *b = &c->vkin[v[j]];
		lo0 = _mm_min_ps(_mm_loadu_ps(b->lo0), lo0);
		hi0 = _mm_max_ps(_mm_loadu_ps(b->hi0), hi0);
		lo1 = _mm_min_ps(_mm_loadu_ps(b->lo1), lo1);
		hi1 = _mm_max_ps(_mm_loadu_ps(b->hi1), hi1);
	}
	_mm_storeu_ps(out->lo0, lo0);
	_mm_storeu_ps(out->hi0, hi0);
	_mm_storeu_ps(out->lo1, lo1);
	_mm_storeu_ps(out->hi1, hi1);
	if (!box)
		return;
	__m128 lo = _mm_loadu_ps(c->box_lo[v[0]]), hi = _mm_loadu_ps(c->box_hi[v[0]]);
	for (int j = 1; j < n; j++) {
		lo = _mm_min_ps(_mm_loadu_ps(c->box_lo[v[j]]), lo);
		hi = _mm_max_ps(_mm_loadu_ps(c->box_hi[v[j]]), hi);
	}
	float l[4], h[4];
	_mm_storeu_ps(l, lo);
	_mm_storeu_ps(h, hi);
	memcpy(box->lo, l, sizeof box->lo);
	memcpy(box->hi, h, sizeof box->hi);
#else
	*out = c->vkin[v[0]];
	for (int j = 1; j < n; j++) {
		const kbox *b = &c->vkin[v[j]];
		for (int k = 0; k < 4; k++) {
			out->lo0[k] = b->lo0[k] < out->lo0[k] ? b->lo0[k] : out->lo0[k];
			out->hi0[k] = b->hi0[k] > out->hi0[k] ? b->hi0[k] : out->hi0[k];
			out->lo1[k] = b->lo1[k] < out->lo1[k] ? b->lo1[k] : out->lo1[k];
			out->hi1[k] = b->hi1[k] > out->hi1[k] ? b->hi1[k] : out->hi1[k];
		}
	}
	if (!box)
		return;
	for (int k = 0; k < 3; k++)
		box->lo[k] = c->box_lo[v[0]][k], box->hi[k] = c->box_hi[v[0]][k];
	for (int j = 1; j < n; j++) {
		for (int k = 0; k < 3; k++) {
			float l = c->box_lo[v[j]][k], u = c->box_hi[v[j]][k];
			box->lo[k] = l < box->lo[k] ? l : box->lo[k];
			box->hi[k] = u > box->hi[k] ? u : box->hi[k];
		}
	}
#endif
}

/* The boxes of triangle t and of edge e: the unions of their vertices' boxes (an edge's
 * kinetic box only: the primitive pairs' cull is all that reads it). */
static void triangle_box(sim_collide *c, int t)
{
	const int *v = &((const int *)c->tris.data)[3 * t];
	kbox_union(c, v, 3, &((kbox *)c->tri_kin.data)[t], &((fbox *)c->tri_box.data)[t]);
}

static void edge_box(sim_collide *c, int e)
{
	const int *v = ((const int(*)[2])c->edges.data)[e];
	kbox_union(c, v, 2, &((kbox *)c->edge_kin.data)[e], NULL);
}

/* The boxes of a full broad phase, in ranges of BOX_RANGE: each item writes only its own box. */

typedef struct box_task {
	sim_collide *c;
	float h, reach, still;
} box_task;

static void vertex_box_range(int start, int end, int worker, void *ctx)
{
	(void)worker;
	const box_task *t = ctx;
	for (int i = start; i < end; i++) {
		vertex_box(t->c, i, t->h, t->reach, t->still);
		t->c->escaped[i] = 0;
	}
}

static void triangle_box_range(int start, int end, int worker, void *ctx)
{
	(void)worker;
	const box_task *t = ctx;
	for (int i = start; i < end; i++)
		triangle_box(t->c, i);
}

static void edge_box_range(int start, int end, int worker, void *ctx)
{
	(void)worker;
	const box_task *t = ctx;
	for (int i = start; i < end; i++)
		edge_box(t->c, i);
}

/* The boxes of a refresh, in the same ranges: the escaped vertices', then in one loop the
 * dirty triangles' (list[0, nd)) and the dirty edges' (items nd on: edge item - nd). */
typedef struct refresh_task {
	box_task b;
	const int *list;
	int nd;
	const unsigned char *dirty;
} refresh_task;

static void escaped_box_range(int start, int end, int worker, void *ctx)
{
	(void)worker;
	const box_task *t = ctx;
	for (int i = start; i < end; i++) {
		if (t->c->escaped[i]) {
			vertex_box(t->c, i, t->h, t->reach, t->still);
			t->c->escaped[i] = 0;
		}
	}
}

static void dirty_box_range(int start, int end, int worker, void *ctx)
{
	(void)worker;
	const refresh_task *t = ctx;
	const tri_own *own = t->b.c->own.data;
	for (int k = start; k < end; k++) {
		/* the edges whose box changed are those of a dirty triangle (every triangle with
		 * an escaped vertex is dirty), each once through the triangle that owns it */
		const tri_own *o = &own[t->list[k]];
		triangle_box(t->b.c, t->list[k]);
		for (int j = 0; j < o->ne; j++)
			edge_box(t->b.c, o->e[j]);
	}
}

/* Every candidate is to be tested in the next sweep, and its start distance is unknown:
 * after a broad phase, and when a new substep reuses the candidates. */
static void forget_results(sim_collide *c, bool keep_bounds)
{
	int *vs = c->vf_state.data, *es = c->ee_state.data;
	double *vl = c->vf_lb.data, *el = c->ee_lb.data;
	/* -1 is all bytes 0xff; a loop storing through int pointers reloaded the counts at
	 * every store (they might alias), about 1 % of the pile's time */
	if (c->vf.count > 0)
		memset(vs, 0xff, sizeof(int) * (size_t)c->vf.count);
	if (c->ee.count > 0)
		memset(es, 0xff, sizeof(int) * (size_t)c->ee.count);
	if (keep_bounds)
		return;
	c->lb_carry = false;
	if (c->vf.count > 0) /* 0.0 is all bytes 0 */
		memset(vl, 0, sizeof(double) * (size_t)c->vf.count);
	if (c->ee.count > 0)
		memset(el, 0, sizeof(double) * (size_t)c->ee.count);
}

/* Gives every new candidate that was an old one its old start-distance bound (the
 * others keep 0): the old pairs are indexed by their first primitive (counting sort),
 * and each new pair looks among the few old ones with the same first primitive.  The
 * old list's run of neighbour-list candidates (old_lo to old_hi) is left out of the
 * index: its pairs, like the new list's from adj_first on, are in the list's order,
 * which sorts them by their first triangle (entry_triangle), so a new one is looked for
 * in the run from the place the last one was found at, among the pairs of its own first
 * triangle (a few); only those the run does not hold (found again by a refresh since,
 * or new) go to the index.  The lookups read the index and the run only, so ranges of
 * new pairs run in parallel. */
typedef struct carry_task {
	const sim_collide *c;
	bool ee;       /* edge-edge pairs (else vertex-face) */
	const pair *cur, *old;
	int old_count;
	int adj_first, adj_last; /* cur's run of neighbour-list candidates */
	int old_lo, old_hi; /* old's run of them */
	const double *old_lb;
	double *lb;
	int *state;
	const int *start;
	const pair *items; /* per old pair outside the run, by first primitive: {second primitive, old index} */
} carry_task;

/* The neighbour-list entry's first triangle (build_adjacency: ta < tb, the list in
 * increasing ta): an edge pair's first edge is ta's, a vertex-face pair's vertex is
 * owned by one of the two triangles and its triangle is the other. */
static inline int entry_triangle(const sim_collide *c, bool ee, pair p)
{
	if (ee)
		return ((const int *)c->edge_tri.data)[p.a];
	int o = c->vert_tri[p.a];
	return o < p.b ? o : p.b;
}

static void carry_range(int first, int last, int worker, void *ctx)
{
	(void)worker;
	const carry_task *t = ctx;
	const sim_collide *c = t->c;
	const bool ee = t->ee;
	const pair *old = t->old;
	const int lo = t->old_lo, hi = t->old_hi;
	/* The traversal runs in the order of a tree that was mostly only refitted, so a new
	 * pair is most often the old pair after the last one found: that one is tried first
	 * (a pair is listed once, so a match is the match), the index otherwise. */
	int next = t->old_count;
	int j = -1; /* the run's cursor: no pair before it can be a later new pair's */
	for (int q = first; q < last; q++) {
		int a = t->cur[q].a, b = t->cur[q].b;
		/* forget_results' part, here rather than in its own serial pass */
		t->state[q] = -1;
		t->lb[q] = 0.0;
		if (q >= t->adj_first && q < t->adj_last && lo < hi) {
			pair x = t->cur[q];
			if (j >= 0 && j < hi && old[j].a == a && old[j].b == b) {
				t->lb[q] = t->old_lb[j++];
				continue;
			}
			int tx = entry_triangle(c, ee, x);
			if (j < 0) {
				/* the first place in the run whose triangle is not below x's */
				int l = lo, r = hi;
				while (l < r) {
					int m = l + (r - l) / 2;
					if (entry_triangle(c, ee, old[m]) < tx)
						l = m + 1;
					else
						r = m;
				}
				j = l;
			}
			while (j < hi && entry_triangle(c, ee, old[j]) < tx)
				j++;
			int k = j;
			for (; k < hi && entry_triangle(c, ee, old[k]) == tx; k++)
				if (old[k].a == a && old[k].b == b)
					break;
			if (k < hi && old[k].a == a && old[k].b == b) {
				t->lb[q] = t->old_lb[k];
				j = k + 1;
				continue;
			}
		}
		if (next < t->old_count && old[next].a == a && old[next].b == b) {
			t->lb[q] = t->old_lb[next++];
			continue;
		}
		/* the run of a's old pairs is contiguous, so the scan streams */
		for (int i = a ? t->start[a - 1] : 0; i < t->start[a]; i++) {
			if (t->items[i].a == b) {
				next = t->items[i].b;
				t->lb[q] = t->old_lb[next++];
				break;
			}
		}
	}
}

/* old, old_lb: the set-aside pairs with their bounds, and [old_lo, old_hi) their run of
 * the neighbour list's; cur: the new pairs, [adj_first, adj_last) their run of the
 * neighbour list's; lb: their bounds (0: none); state: their test states, all -1 (to be
 * tested); keys: the first primitives' count. */
static bool carry_bounds(sim_collide *c, const sim_world *w, bool ee, const darray *old, const double *old_lb,
                         int old_lo, int old_hi, const darray *cur, int adj_first, int adj_last, double *lb,
                         int *state, int keys)
{
	if (cur->count == 0)
		return true;
	if (old->count == 0) {
		memset(state, 0xff, sizeof(int) * (size_t)cur->count);
		memset(lb, 0, sizeof(double) * (size_t)cur->count);
		return true;
	}
	if (!reserve(&c->key_start, sizeof(int), keys + 1) || !reserve(&c->key_items, sizeof(pair), old->count))
		return false;
	int *start = c->key_start.data;
	pair *items = c->key_items.data;
	const pair *op = old->data;
	/* the count in a local: the stores through start and items might alias old->count,
	 * which the loops would otherwise load again at every pair */
	const int n_old = old->count;
	const int seg[2][2] = {{0, old_lo}, {old_hi, n_old}};
	memset(start, 0, sizeof(int) * ((size_t)keys + 1));
	for (int s = 0; s < 2; s++)
		for (int q = seg[s][0]; q < seg[s][1]; q++)
			start[op[q].a + 1]++;
	for (int k = 0; k < keys; k++)
		start[k + 1] += start[k];
	for (int s = 0; s < 2; s++)
		for (int q = seg[s][0]; q < seg[s][1]; q++)
			items[start[op[q].a]++] = (pair){op[q].b, q};
	/* start[k] is now the end of key k's run, and its start is start[k - 1] */
	carry_task task = {c, ee, cur->data, old->data, n_old, adj_first, adj_last, old_lo, old_hi,
	                   old_lb, lb, state, start, items};
	sim_parallel_for(w, carry_range, cur->count, 4096, &task);
	return true;
}

/* Whether the broad phase pairs the triangles of owners a and b (a < b; a == b: a tree
 * with itself): cloth with itself and other cloth only with self collisions on, cloth
 * with obstacles always, obstacles with obstacles never. */
static bool owners_meet(const sim_collide *c, const sim_world *w, int a, int b)
{
	if (c->owner_rigid[a])
		return false;
	if (a == b)
		return w->def.self_collisions;
	return c->owner_rigid[b] || w->def.self_collisions;
}

/* Whether the loops below go through the world's task callbacks; without them (or with
 * one worker) they run inline and write straight into the candidate lists. */
static bool parallel(const sim_world *w) { return w->def.enqueue_task && w->def.worker_count > 1; }

/* The traversals of the full broad phase, in jobs (sim_bvh_split): block k runs job k
 * over the trees of owners job_trees[2 k] and [2 k + 1]. */
typedef struct traverse_task {
	sim_collide *c;
	bool direct; /* inline: every job writes straight into c->vf and c->ee, in order */
} traverse_task;

static void traverse_range(int start, int end, int worker, void *ctx)
{
	(void)worker;
	traverse_task *t = ctx;
	sim_collide *c = t->c;
	const sim_bvh_job *jobs = c->jobs.data;
	const int *trees = c->job_trees.data;
	for (int k = start; k < end; k++) {
		block_out *out = &c->blocks[k];
		int a = trees[2 * k], b = trees[2 * k + 1];
		broad_ctx bc = {c, t->direct ? &c->vf : &out->vf, t->direct ? &c->ee : &out->ee, c->owner_first_tri[a],
		                c->owner_first_tri[b], 0, false};
		sim_bvh_run_job_masks(c->trees[a], c->trees[b], jobs[k], on_triangle_pairs, &bc);
		out->failed |= bc.failed;
		out->tested += bc.tested;
	}
}

/* Blocks per range of merge_candidates' copies. */
#define MERGE_RANGE 8

static void merge_range(int start, int end, int worker, void *ctx)
{
	(void)worker;
	sim_collide *c = ctx;
	for (int k = start; k < end; k++) {
		const block_out *b = &c->blocks[k];
		if (b->vf.count > 0)
			memcpy((pair *)c->vf.data + b->vf_at, b->vf.data, sizeof(pair) * (size_t)b->vf.count);
		if (b->ee.count > 0)
			memcpy((pair *)c->ee.data + b->ee_at, b->ee.data, sizeof(pair) * (size_t)b->ee.count);
	}
}

/* Appends every block's candidates to the lists, in block order: each block's place
 * first, then the copies, shared out (on the caller they were a tenth of the drape's
 * serial broad phase). */
static bool merge_candidates(sim_collide *c, const sim_world *w, int blocks)
{
	int nvf = c->vf.count, nee = c->ee.count;
	for (int k = 0; k < blocks; k++) {
		block_out *b = &c->blocks[k];
		if (b->failed)
			return false;
		b->vf_at = nvf, b->ee_at = nee;
		nvf += b->vf.count, nee += b->ee.count;
	}
	if (!reserve(&c->vf, sizeof(pair), nvf) || !reserve(&c->ee, sizeof(pair), nee))
		return false;
	sim_parallel_for(w, merge_range, blocks, MERGE_RANGE, c);
	c->vf.count = nvf, c->ee.count = nee;
	return true;
}

/* Jobs per pair of trees when the traversal runs in parallel: enough that two to four
 * workers share the uneven work evenly. */
#define BROAD_JOBS 64

/* A tree's groups: for a cloth's, its patches' (patch.h) while certified; else none. */
static const int *tree_groups(const sim_collide *c, int owner)
{
	return c->patched && !c->owner_rigid[owner] ? sim_patches_groups(c->patches) + c->owner_first_tri[owner] : NULL;
}

/* Fits every tree to its triangles' boxes, with a gap more: the broad phase keeps a
 * primitive pair only when the primitives' own boxes overlap, and the gap absorbs any
 * rounding between the two tests. */
static bool fit_trees(sim_collide *c, const sim_world *w)
{
	const fbox *tb = c->tri_box.data;
	const int *tri = c->tris.data;
	for (int o = 0; o < c->owner_count; o++) {
		/* with the triangles' vertices, the trees leave out the pairs that share one (the
		 * neighbour list's): most overlapping pairs of a cloth are neighbours */
		int first = c->owner_first_tri[o];
		if (!sim_bvh_update_boxes_on(c->trees[o], tb + first, tri + 3 * (size_t)first, tree_groups(c, o),
		                             c->owner_tri_count[o], (float)CCD_GAP, w))
			return false;
	}
	return true;
}

/* fit_trees for an in-place refresh: only the dirty triangles' boxes have changed, so
 * only the leaves holding one are refitted, and the trees are left marked with them for
 * the marked traversal (sim_bvh_update_marked): the trees of fit_trees. */
static bool fit_dirty_trees(sim_collide *c, const sim_world *w, const unsigned char *dirty)
{
	const fbox *tb = c->tri_box.data;
	const int *tri = c->tris.data;
	for (int o = 0; o < c->owner_count; o++) {
		int first = c->owner_first_tri[o];
		if (!sim_bvh_update_marked(c->trees[o], tb + first, tri + 3 * (size_t)first, tree_groups(c, o),
		                           c->owner_tri_count[o], (float)CCD_GAP, dirty + first, w))
			return false;
	}
	return true;
}

/* The traversal jobs of a broad phase: every pair of trees that meet, each cut into up to
 * `target` jobs whose outputs, concatenated in order, are the whole traversal's
 * (sim_bvh_split): the same list for any number of jobs and workers.  Returns how many,
 * or -1 when out of memory. */
static int make_jobs(sim_collide *c, const sim_world *w, int target)
{
	int room = 4 * BROAD_JOBS, njobs = 0;
	c->jobs.count = 0;
	for (int a = 0; a < c->owner_count; a++) {
		for (int b = a; b < c->owner_count; b++) {
			if (!owners_meet(c, w, a, b))
				continue;
			if (!reserve(&c->jobs, sizeof(sim_bvh_job), njobs + room) ||
			    !reserve(&c->job_scratch, sizeof(sim_bvh_job), room) ||
			    !reserve(&c->job_trees, 2 * sizeof(int), njobs + room))
				return -1;
			int n = sim_bvh_split(c->trees[a], c->trees[b], (sim_bvh_job *)c->jobs.data + njobs, c->job_scratch.data,
			                      room, target);
			int *trees = c->job_trees.data;
			for (int k = njobs; k < njobs + n; k++)
				trees[2 * k] = a, trees[2 * k + 1] = b;
			njobs += n;
		}
	}
	return njobs;
}

/* Runs jobs [first, last), appending their candidates to vf and ee in job order. */
static bool run_jobs(sim_collide *c, const sim_world *w, int first, int last)
{
	int n = last - first;
	if (n <= 0)
		return true;
	bool par = parallel(w);
	if (!reserve_blocks(c, n))
		return false;
	/* the jobs loop reads job k at jobs[k]: the range's are presented from its first on */
	void *jobs = c->jobs.data, *trees = c->job_trees.data;
	c->jobs.data = (sim_bvh_job *)jobs + first;
	c->job_trees.data = (int *)trees + 2 * first;
	traverse_task task = {c, !par};
	sim_parallel_for(w, traverse_range, n, 1, &task);
	c->jobs.data = jobs;
	c->job_trees.data = trees;
	bool ok = true;
	for (int k = 0; k < n; k++) {
		ok &= !c->blocks[k].failed;
		c->broad_tested += c->blocks[k].tested;
	}
	return ok && (!par || merge_candidates(c, w, n));
}

/* Every vertex's, triangle's and edge's box for a window from the current substep, and
 * the trees fitted to them. */
static bool new_boxes(sim_collide *c, const sim_world *w, float h, float pad, box_task *boxes)
{
	int nt = c->tris.count, ne = c->edges.count;
	if (!reserve(&c->tri_box, sizeof(fbox), nt) ||
	    !reserve(&c->tri_kin, sizeof(kbox), nt) || !reserve(&c->edge_kin, sizeof(kbox), ne))
		return false;
	new_window(c, h);
	*boxes = (box_task){c, h, (0.5f + slack(c)) * pad, BROAD_STILL * slack(c) * pad};
	sim_parallel_for(w, vertex_box_range, c->nv, BOX_RANGE, boxes);
	c->patched = w->def.self_collisions && sim_patches_any(c->patches) && c->patch_rest == 0;
	c->patch_rest -= c->patch_rest > 0;
	if (c->patched) {
		sim_patches_certify(c->patches, w, c->vaxis, NULL, 0, NULL);
		if (!sim_patches_cover_entries(c->patches))
			c->patch_rest = PATCH_REST;
	}
	sim_parallel_for(w, triangle_box_range, nt, BOX_RANGE, boxes);
	sim_parallel_for(w, edge_box_range, ne, BOX_RANGE, boxes);
	return fit_trees(c, w);
}

/* Sets the candidates aside with their bounds (the buffers swap), so that the pairs a
 * broad phase finds again keep their bounds (valid only over the same topology);
 * returns whether there are bounds to carry. */
static bool set_aside(sim_collide *c)
{
	bool carry = c->lb_carry && c->have_candidates;
	darray tmp;
	tmp = c->old_vf, c->old_vf = c->vf, c->vf = tmp;
	tmp = c->old_ee, c->old_ee = c->ee, c->ee = tmp;
	tmp = c->old_vf_lb, c->old_vf_lb = c->vf_lb, c->vf_lb = tmp;
	tmp = c->old_ee_lb, c->old_ee_lb = c->ee_lb, c->ee_lb = tmp;
	for (int k = 0; k < 2; k++) {
		c->old_adj_lo[k] = c->adj_lo[k], c->old_adj_hi[k] = c->adj_hi[k];
		c->adj_lo[k] = c->adj_hi[k] = 0;
	}
	c->lb_carry = false;
	c->have_candidates = false;
	return carry;
}

/* After the traversal: the neighbour list's pairs, fresh test states, and the bounds
 * of the pairs found again (carry). */
static bool complete_candidates(sim_collide *c, const sim_world *w, bool carry)
{
	c->adj_lo[0] = c->vf.count, c->adj_lo[1] = c->ee.count;
	if (w->def.self_collisions && !adjacent_candidates(c, w, NULL, 0))
		return false;
	c->adj_hi[0] = c->vf.count, c->adj_hi[1] = c->ee.count;
	if (!reserve(&c->vf_state, sizeof(int), c->vf.count) || !reserve(&c->ee_state, sizeof(int), c->ee.count) ||
	    !reserve(&c->vf_lb, sizeof(double), c->vf.count) || !reserve(&c->ee_lb, sizeof(double), c->ee.count))
		return false;
	c->have_candidates = true;
	c->candidates_self = w->def.self_collisions;
	if (!carry) {
		forget_results(c, false);
		return true;
	}
	/* carry_bounds does forget_results' work on the way */
	c->lb_carry = false;
	if (!carry_bounds(c, w, false, &c->old_vf, c->old_vf_lb.data, c->old_adj_lo[0], c->old_adj_hi[0], &c->vf,
	                  c->adj_lo[0], c->adj_hi[0], c->vf_lb.data, c->vf_state.data, c->nv) ||
	    !carry_bounds(c, w, true, &c->old_ee, c->old_ee_lb.data, c->old_adj_lo[1], c->old_adj_hi[1], &c->ee,
	                  c->adj_lo[1], c->adj_hi[1], c->ee_lb.data, c->ee_state.data, c->edges.count)) {
		forget_results(c, false);
		return false;
	}
	c->lb_carry = true;
	return true;
}

/* Candidate pairs for the motion from x0 at the current vbar: every vertex gets its box
 * (its path inflated by reach = (1/2 + slack) pad), the hierarchies are refitted to the
 * triangles' boxes (rebuilt when they have degraded), traversed in a fixed order, and the
 * primitive pairs culled by their own boxes.  Run when the candidates cannot be
 * refreshed in place (refresh_candidates). */
static bool broad_phase(sim_collide *c, const sim_world *w, float h, float pad, sim_stats *st)
{
	int64_t t0 = sim_now_ns();
	box_task boxes;
	c->pending = false;
	st->broad_phases++;
	if (!new_boxes(c, w, h, pad, &boxes))
		return false;
	int64_t t1 = sim_now_ns();
	st->stage_us[SIM_STAGE_REFIT] += (double)(t1 - t0) * 1e-3;
	bool carry = set_aside(c);
	c->vf.count = c->ee.count = 0;
	c->broad_tested = 0;
	int njobs = make_jobs(c, w, parallel(w) ? BROAD_JOBS : 1);
	if (njobs < 0 || !run_jobs(c, w, 0, njobs))
		return false;
	c->traversal_pairs = c->vf.count + c->ee.count;
	if (!complete_candidates(c, w, carry))
		return false;
	st->stage_us[SIM_STAGE_BROAD] += (double)(sim_now_ns() - t1) * 1e-3;
	return true;
}

/* Share of the traversal the window's last substep runs for the next window
 * (early_broad_phase), counted in the pairs the last traversal found: its jobs are
 * uneven (in the pile's fold the first 60 % of them held 90 % of the time), so a share of
 * the jobs was no measure of the work; the next substep runs the rest.  BROAD_BATCH: jobs
 * run at a time when in parallel, between looks at the count. */
#define EARLY_SHARE 0.6f
#define BROAD_BATCH 8

/* In a fold every moving box ends with its window, and the next substep would run the
 * whole broad phase, which took about half of that step.  So the window's last substep,
 * once done, starts the next window's: every vertex's box from its end position (the
 * next substep's start) and its velocity, the trees fitted to them, and the traversal
 * jobs in order until they have found EARLY_SHARE of the pairs the last traversal found;
 * their candidates wait in old_vf and old_ee.  The next substep runs the other jobs
 * (finish_broad_phase; where the jobs are cut changes nothing but the time), then
 * checks every vertex against its new box as after any broad phase (boxes are only a
 * guess about the motion: mark_escaped decides whether the candidates hold).  Only
 * when the next substep would run the whole broad phase anyway (more than
 * BROAD_REFRESH_MAX of the triangles with a moving box), and with windows of several
 * substeps. */
static bool early_broad_phase(sim_collide *c, const sim_world *w, float h, float pad, sim_stats *st)
{
	c->pending = false;
	if (!c->have_candidates || c->candidates_self != w->def.self_collisions || c->window < 2 ||
	    c->tau + 1 != c->window)
		return true;
	int64_t t0 = sim_now_ns();
	const int nt = c->tris.count, *tri = c->tris.data;
	/* per vertex first (a box that stands still has the same corners at both ends, and
	 * lane 3 is 0 in both), then per triangle: a third of the compares */
	unsigned char *vm = c->vmoving;
	for (int i = 0; i < c->nv; i++) {
		const kbox *kb = &c->vkin[i];
#if defined(__SSE2__)
		__m128 ne = _mm_or_ps(_mm_cmpneq_ps(_mm_loadu_ps(kb->lo0), _mm_loadu_ps(kb->lo1)),
		                      _mm_cmpneq_ps(_mm_loadu_ps(kb->hi0), _mm_loadu_ps(kb->hi1)));
		vm[i] = _mm_movemask_ps(ne) != 0;
#else
		bool m = false;
		for (int k = 0; k < 3; k++)
			m |= (kb->lo0[k] != kb->lo1[k]) | (kb->hi0[k] != kb->hi1[k]);
		vm[i] = m;
#endif
	}
	int moving = 0;
	for (int t = 0; t < nt; t++)
		moving += vm[tri[3 * t]] | vm[tri[3 * t + 1]] | vm[tri[3 * t + 2]];
	if (!((float)moving > BROAD_REFRESH_MAX * (float)nt))
		return true;
	st->broad_phases++;
	/* the next substep starts where this one ends: x0 + h vbar, as the world writes it */
	for (int i = 0; i < c->nv; i++)
		for (int k = 0; k < 3; k++)
			c->x0[i][k] = c->x0[i][k] + h * c->vbar[i][k];
	box_task boxes;
	if (!new_boxes(c, w, h, pad, &boxes))
		return false;
	c->tau = -1; /* the next substep's clock makes it the window's first */
	c->broad_tested = 0;
	int64_t t1 = sim_now_ns();
	st->stage_us[SIM_STAGE_REFIT] += (double)(t1 - t0) * 1e-3;
	int njobs = make_jobs(c, w, BROAD_JOBS);
	if (njobs < 0)
		return false;
	/* the jobs append to vf and ee: the current candidates wait in old_vf and old_ee */
	darray tmp;
	c->old_vf.count = c->old_ee.count = 0;
	tmp = c->old_vf, c->old_vf = c->vf, c->vf = tmp;
	tmp = c->old_ee, c->old_ee = c->ee, c->ee = tmp;
	/* the jobs are uneven: they run until they have found EARLY_SHARE of the pairs the
	 * last traversal found (batches of BROAD_BATCH when in parallel) */
	const int target = (int)(EARLY_SHARE * (float)c->traversal_pairs + 0.5f);
	const int batch = parallel(w) ? BROAD_BATCH : 1;
	int first = 0;
	bool ok = true;
	while (ok && first < njobs && c->vf.count + c->ee.count < target) {
		int last = first + batch < njobs ? first + batch : njobs;
		ok = run_jobs(c, w, first, last);
		first = last;
	}
	tmp = c->old_vf, c->old_vf = c->vf, c->vf = tmp;
	tmp = c->old_ee, c->old_ee = c->ee, c->ee = tmp;
	if (!ok)
		return false;
	c->pending = true;
	c->pending_first = first;
	c->pending_jobs = njobs;
	st->stage_us[SIM_STAGE_BROAD] += (double)(sim_now_ns() - t1) * 1e-3;
	return true;
}

/* The rest of the broad phase early_broad_phase started: its candidates so far (in
 * old_vf and old_ee) become the list, the current one goes aside for its bounds. */
static bool finish_broad_phase(sim_collide *c, const sim_world *w, sim_stats *st)
{
	int64_t t1 = sim_now_ns();
	c->pending = false;
	bool carry = set_aside(c);
	/* set_aside swapped the early jobs' candidates in */
	if (!run_jobs(c, w, c->pending_first, c->pending_jobs))
		return false;
	c->traversal_pairs = c->vf.count + c->ee.count;
	if (!complete_candidates(c, w, carry))
		return false;
	c->early_windows++;
	st->stage_us[SIM_STAGE_BROAD] += (double)(sim_now_ns() - t1) * 1e-3;
	return true;
}

/* The in-place refresh's triangle pairs.  Each tree's dirty triangles are marked and one
 * traversal per pair of trees that meet reports every overlapping pair with a dirty
 * triangle (sim_bvh_marked_pairs): the pairs one query per dirty triangle would find,
 * without walking down from the root once per triangle, each once, and in the
 * traversal's fixed order, which the candidates keep.  (They were once sorted into the
 * order of those queries, to keep the bits of the queries they replaced; that sort was a
 * tenth of a large refresh in the pile's fold.) */
typedef struct marked_ctx {
	sim_collide *c;
	int first_a, first_b; /* the trees' first triangles (owner a <= owner b) */
	bool failed;
	darray *out;          /* the hits: c->hits, or a block's */
} marked_ctx;

static void on_marked_pair(void *user, int ta, int tb)
{
	marked_ctx *m = user;
	darray *out = m->out;
	if (out->count == out->capacity && !reserve(out, sizeof(pair), out->count + 1)) {
		m->failed = true;
		return;
	}
	/* the pair, lower owner (within one tree: lower index) first */
	((pair *)out->data)[out->count++] = (pair){ta + m->first_a, tb + m->first_b};
}

/* The marked traversal in the full broad phase's jobs (make_jobs), block k running job k
 * into its own hits: concatenated in job order, the serial traversal's whatever the
 * jobs (sim_bvh_run_marked_job). */
static void marked_range(int start, int end, int worker, void *ctx)
{
	(void)worker;
	sim_collide *c = ctx;
	const sim_bvh_job *jobs = c->jobs.data;
	const int *trees = c->job_trees.data;
	for (int k = start; k < end; k++) {
		block_out *out = &c->blocks[k];
		int a = trees[2 * k], b = trees[2 * k + 1];
		out->hits.count = 0;
		marked_ctx m = {c, c->owner_first_tri[a], c->owner_first_tri[b], false, &out->hits};
		sim_bvh_run_marked_job(c->trees[a], c->trees[b], jobs[k], on_marked_pair, &m);
		out->failed |= m.failed;
	}
}

/* The hits of every tree pair that meets, into c->hits; false when out of memory. */
static bool marked_hits(sim_collide *c, const sim_world *w)
{
	c->hits.count = 0;
	if (parallel(w)) {
		int njobs = make_jobs(c, w, BROAD_JOBS);
		if (njobs < 0 || !reserve_blocks(c, njobs))
			return false;
		sim_parallel_for(w, marked_range, njobs, 1, c);
		for (int k = 0; k < njobs; k++)
			if (c->blocks[k].failed || !append(&c->hits, &c->blocks[k].hits, sizeof(pair)))
				return false;
		return true;
	}
	for (int a = 0; a < c->owner_count; a++) {
		for (int b = a; b < c->owner_count; b++) {
			if (!owners_meet(c, w, a, b))
				continue;
			marked_ctx m = {c, c->owner_first_tri[a], c->owner_first_tri[b], false, &c->hits};
			sim_bvh_marked_pairs(c->trees[a], c->trees[b], on_marked_pair, &m);
			if (m.failed)
				return false;
		}
	}
	return true;
}

/* Hits per block when they are expanded in parallel. */
#define HIT_BLOCK 256

typedef struct expand_task {
	sim_collide *c;
	bool direct; /* inline: straight into c->vf and c->ee */
} expand_task;

static void expand_range(int start, int end, int worker, void *ctx)
{
	(void)worker;
	expand_task *t = ctx;
	sim_collide *c = t->c;
	const pair *h = c->hits.data;
	for (int blk = start; blk < end; blk++) {
		block_out *out = &c->blocks[blk];
		darray *vf = t->direct ? &c->vf : &out->vf, *ee = t->direct ? &c->ee : &out->ee;
		int last = (blk + 1) * HIT_BLOCK < c->hits.count ? (blk + 1) * HIT_BLOCK : c->hits.count;
		for (int k = blk * HIT_BLOCK; k < last; k++)
			if (!triangle_pair(c, vf, ee, h[k].a, h[k].b))
				out->failed = true;
	}
}

/* The refresh's new triangle pairs, expanded into the candidate lists in the marked
 * traversal's order; false when out of memory. */
static bool dirty_pairs(sim_collide *c, const sim_world *w)
{
	/* the trees are marked with the dirty triangles (fit_dirty_trees): a tree pair with
	 * none returns at its roots' marks */
	if (!marked_hits(c, w))
		return false;

	bool par = parallel(w);
	int nblocks = (c->hits.count + HIT_BLOCK - 1) / HIT_BLOCK;
	if (!reserve_blocks(c, nblocks))
		return false;
	expand_task task = {c, !par};
	sim_parallel_for(w, expand_range, nblocks, 1, &task);

	bool ok = true;
	for (int k = 0; k < nblocks; k++)
		ok &= !c->blocks[k].failed;
	return ok && (!par || merge_candidates(c, w, nblocks));
}

/* One list's part of drop_dirty (ee: the edge-edge list, else the vertex-face one). */
static void drop_dirty_list(sim_collide *c, bool ee)
{
	const unsigned char *dirty = c->tri_dirty.data;
	const int *owner = ee ? c->edge_tri.data : c->vert_tri;
	darray *list = ee ? &c->ee : &c->vf, *old = ee ? &c->old_ee : &c->old_vf;
	pair *cur = list->data, *gone_to = old->data;
	int *state = ee ? c->ee_state.data : c->vf_state.data;
	double *lb = ee ? c->ee_lb.data : c->vf_lb.data, *old_lb = ee ? c->old_ee_lb.data : c->old_vf_lb.data;
	/* In a fold a quarter may go, at random: every candidate is written to both lists
	 * and kept by the counts alone, without a branch. */
	/* the neighbour list's run [adj_lo, adj_hi) keeps its order; its new bounds are the
	 * kept counts at its old ones */
	const int k = ee ? 1 : 0, count = list->count, lo = c->adj_lo[k], hi = c->adj_hi[k];
	int n = 0, m = 0;
	for (int q = 0; q < count; q++) {
		if (q == lo)
			c->adj_lo[k] = n;
		if (q == hi)
			c->adj_hi[k] = n;
		pair p = cur[q];
		int st = state[q];
		double b = lb[q];
		/* a vertex-face pair's triangles: the vertex's owner and the face; an edge pair's:
		 * the edges' owners */
		bool gone = dirty[owner[p.a]] | dirty[ee ? owner[p.b] : p.b];
		gone_to[m] = p, old_lb[m] = b;
		cur[n] = p, state[n] = st, lb[n] = b;
		m += gone;
		n += !gone;
	}
	if (hi == count)
		c->adj_hi[k] = n;
	if (lo == count)
		c->adj_lo[k] = n;
	list->count = n;
	old->count = m;
}

static void drop_dirty_range(int start, int end, int worker, void *ctx)
{
	(void)worker;
	for (int k = start; k < end; k++)
		drop_dirty_list(ctx, k == 1);
}

/* Keeps the candidates of triangle pairs with no dirty triangle (their boxes have not
 * changed, so neither has what they yield), in order, with their states and bounds; the
 * others go to old_vf and old_ee with their bounds, for the pairs found again
 * (carry_bounds).  The two lists at once, on two workers.  False when out of memory. */
static bool drop_dirty(sim_collide *c, const sim_world *w)
{
	if (!reserve(&c->old_vf, sizeof(pair), c->vf.count) || !reserve(&c->old_vf_lb, sizeof(double), c->vf.count) ||
	    !reserve(&c->old_ee, sizeof(pair), c->ee.count) || !reserve(&c->old_ee_lb, sizeof(double), c->ee.count))
		return false;
	sim_parallel_for(w, drop_dirty_range, 2, 1, c);
	c->old_adj_lo[0] = c->old_adj_hi[0] = c->old_adj_lo[1] = c->old_adj_hi[1] = 0; /* the dropped have no run */
	return true;
}

/* Triangles per block of the parallel scan for dirty triangles. */
#define SCAN_BLOCK 4096

/* scan_dirty in two loops over blocks of triangles: each block sets its triangles' flags
 * and counts the dirty ones; after a prefix sum in block order, each lists its own at
 * their place: the serial list for any worker count. */
typedef struct scan_task {
	sim_collide *c;
	int *counts; /* per block: its dirty triangles, then the dirty ones before it */
	bool write;
} scan_task;

static void scan_range(int start, int end, int worker, void *ctx)
{
	(void)worker;
	const scan_task *t = ctx;
	sim_collide *c = t->c;
	const int nt = c->tris.count, *tri = c->tris.data;
	const unsigned char *esc = c->escaped;
	unsigned char *dirty = c->tri_dirty.data;
	int *list = c->dirty_list.data;
	for (int blk = start; blk < end; blk++) {
		int first = blk * SCAN_BLOCK, last = first + SCAN_BLOCK < nt ? first + SCAN_BLOCK : nt;
		if (!t->write) {
			int n = 0;
			for (int k = first; k < last; k++) {
				const int *v = &tri[3 * k];
				dirty[k] = esc[v[0]] | esc[v[1]] | esc[v[2]];
				n += dirty[k];
			}
			t->counts[blk] = n;
		} else {
			/* a branch, not the serial loop's branch-free store: that store would reach
			 * the next block's first slot */
			for (int k = first, n = t->counts[blk]; k < last; k++)
				if (dirty[k])
					list[n++] = k;
		}
	}
}

/* Flags the triangles with a vertex whose box is new (escaped) in tri_dirty and lists
 * them in index order in dirty_list; returns how many, or -1 when out of memory. */
static int scan_dirty(sim_collide *c, const sim_world *w)
{
	const int nt = c->tris.count, *tri = c->tris.data, blocks = (nt + SCAN_BLOCK - 1) / SCAN_BLOCK;
	unsigned char *dirty = c->tri_dirty.data;
	int *list = c->dirty_list.data, nd = 0;
	if (!parallel(w) || blocks < 2) {
		for (int t = 0; t < nt; t++) {
			const int *v = &tri[3 * t];
			dirty[t] = c->escaped[v[0]] | c->escaped[v[1]] | c->escaped[v[2]];
			list[nd] = t;
			nd += dirty[t];
		}
		return nd;
	}
	if (!reserve(&c->scan_counts, sizeof(int), blocks))
		return -1;
	int *counts = c->scan_counts.data;
	scan_task task = {c, counts, false};
	sim_parallel_for(w, scan_range, blocks, 1, &task);
	for (int b = 0; b < blocks; b++) {
		int n = counts[b];
		counts[b] = nd;
		nd += n;
	}
	task.write = true;
	sim_parallel_for(w, scan_range, blocks, 1, &task);
	return nd;
}

/* Brings the candidates up to date with the current paths.  Vertices still inside their
 * boxes keep them; the others (mark_escaped) get new ones, and only the triangle pairs
 * with a triangle of theirs are looked at again: their old candidates are dropped and
 * the trees' pairs with a dirty triangle are found again (dirty_pairs), in the order of
 * one traversal per pair of trees that meet.  The result is the set a
 * full traversal over the same boxes would give (in another order).  When many
 * triangles change, or there are no candidates yet, the full broad phase runs instead.
 * start_margin: as for mark_escaped. */
static bool refresh_candidates(sim_collide *c, const sim_world *w, float h, float pad, float start_margin,
                               int since, sim_stats *st)
{
	bool valid = c->have_candidates && c->candidates_self == w->def.self_collisions;
	c->new_vf = c->new_ee = 0;
	if (c->pending)
		since = -1; /* the next window's boxes: every vertex is asked */
	if (c->pending && valid && !finish_broad_phase(c, w, st))
		return false;
	c->pending = false; /* otherwise the broad phase below starts afresh */
	if (valid && mark_escaped(c, w, h, start_margin, 0.0f, since) == 0) {
		c->new_vf = c->vf.count;
		c->new_ee = c->ee.count;
		return true;
	}
	if (!valid)
		return broad_phase(c, w, h, pad, st);
	/* Every vertex that has used up half its slack gets a new box too: a moving vertex
	 * would leave its box soon anyway, and one refresh for many is cheaper than many;
	 * vertices at rest keep theirs.  Only at the start of a substep (during the sweeps
	 * only those out), and not in the window's last one: there a new box would serve
	 * that substep alone, since every moving box is renewed when the window ends (in a
	 * fold that was the largest refresh of each window, for nothing).  (Both marks in one
	 * pass cost the pile 0.3 % more: most of its substeps have no vertex out, and stop at
	 * the first.) */
	if (start_margin >= 0.0f && c->tau + 1 < c->window)
		mark_escaped(c, w, h, start_margin, 0.5f * slack(c) * pad, -1);
	int64_t t0 = sim_now_ns();
	int nt = c->tris.count;
	unsigned char *dirty = c->tri_dirty.data;
	int *list = c->dirty_list.data, nd = scan_dirty(c, w);
	if (nd < 0)
		return false;
	if ((float)nd > BROAD_REFRESH_MAX * (float)nt) {
		if (nt > 0)
			memset(dirty, 0, (size_t)nt);
		return broad_phase(c, w, h, pad, st);
	}
	/* Past the window's end every moving box has left (mark_escaped): the boxes that
	 * stay stand still and mean the same in a new window from this substep. */
	if (c->tau + 1 > c->window)
		new_window(c, h);
	refresh_task rt = {{c, h, (0.5f + slack(c)) * pad, BROAD_STILL * slack(c) * pad}, list, nd, dirty};
	sim_parallel_for(w, escaped_box_range, c->nv, BOX_RANGE, &rt.b);
	/* The new balls' patches are certified again; a triangle whose holder changed is
	 * dirty too: the pairs its patch left out are to be found (and the trees take its new
	 * group with its leaf's refit). */
	if (c->patched && sim_patches_certify(c->patches, w, c->vaxis, list, nd, dirty) > 0) {
		nd = 0;
		for (int t = 0; t < nt; t++) {
			list[nd] = t;
			nd += dirty[t];
		}
		rt.nd = nd;
		if ((float)nd > BROAD_REFRESH_MAX * (float)nt) {
			memset(dirty, 0, (size_t)nt);
			return broad_phase(c, w, h, pad, st);
		}
	}
	st->refreshed_triangles += nd;
	sim_parallel_for(w, dirty_box_range, nd, BOX_RANGE, &rt);
	if (!fit_dirty_trees(c, w, dirty))
		return false;
	int64_t t1 = sim_now_ns();
	st->stage_us[SIM_STAGE_REFIT] += (double)(t1 - t0) * 1e-3;
	int old_vf = 0, old_ee = 0;
	if (!drop_dirty(c, w))
		return false;
	old_vf = c->new_vf = c->vf.count;
	old_ee = c->new_ee = c->ee.count;
	bool ok = dirty_pairs(c, w);
	ok = ok && (!w->def.self_collisions || adjacent_candidates(c, w, list, nd));
	if (nt > 0)
		memset(dirty, 0, (size_t)nt);
	if (!ok)
		return false;
	if (!reserve(&c->vf_state, sizeof(int), c->vf.count) || !reserve(&c->ee_state, sizeof(int), c->ee.count) ||
	    !reserve(&c->vf_lb, sizeof(double), c->vf.count) || !reserve(&c->ee_lb, sizeof(double), c->ee.count))
		return false;
	int *vs = c->vf_state.data, *es = c->ee_state.data;
	double *vl = c->vf_lb.data, *el = c->ee_lb.data;
	/* the new pairs are to be tested; a pair found again keeps its bound: a bound on its
	 * distance, wherever it came from */
	darray nvf = {(pair *)c->vf.data + old_vf, c->vf.count - old_vf, 0};
	darray nee = {(pair *)c->ee.data + old_ee, c->ee.count - old_ee, 0};
	/* the dropped pairs have no run: all go to the index */
	if (!carry_bounds(c, w, false, &c->old_vf, c->old_vf_lb.data, 0, 0, &nvf, 0, 0, vl + old_vf, vs + old_vf, c->nv) ||
	    !carry_bounds(c, w, true, &c->old_ee, c->old_ee_lb.data, 0, 0, &nee, 0, 0, el + old_ee, es + old_ee,
	                  c->edges.count))
		return false;
	st->stage_us[SIM_STAGE_BROAD] += (double)(sim_now_ns() - t1) * 1e-3;
	return true;
}

/* ---- impulses ------------------------------------------------------------------------------- */

/* A pair as up to four vertices with coefficients: the relative velocity is
 * sum c_k v_k, and an impulse J changes v_k by c_k w_k J (w_k the inverse mass). */
typedef struct stencil {
	int idx[4];
	double coef[4];
} stencil;

/* ---- debug log ------------------------------------------------------------------------------ */

/* A stencil's vertices are the pair's, in the order sim_debug_pair names them (the
 * vertex then the triangle, or the two edges), and collision vertex indices are the
 * debug ids (cloth first, then the triangle obstacles' vertices). */
static void log_stencil(sim_debug_log *log, int stage, bool vertex_face, const stencil *s)
{
	sim_debug_record(log, stage, vertex_face ? SIM_PAIR_VERTEX_TRIANGLE : SIM_PAIR_EDGE_EDGE, s->idx[0], s->idx[1],
	                 s->idx[2], s->idx[3]);
}

/* The candidates from first_vf and first_ee on. */
static void log_candidates(sim_collide *c, int stage, int first_vf, int first_ee)
{
	const pair *vf = c->vf.data, *ee = c->ee.data;
	const int *tri = c->tris.data;
	const int(*edges)[2] = c->edges.data;
	for (int q = first_vf; q < c->vf.count; q++) {
		const int *t = &tri[3 * vf[q].b];
		sim_debug_record(c->log, stage, SIM_PAIR_VERTEX_TRIANGLE, vf[q].a, t[0], t[1], t[2]);
	}
	for (int q = first_ee; q < c->ee.count; q++) {
		const int *a = edges[ee[q].a], *b = edges[ee[q].b];
		sim_debug_record(c->log, stage, SIM_PAIR_EDGE_EDGE, a[0], a[1], b[0], b[1]);
	}
}

int sim_collide_debug_boxes(const sim_collide *c, int depth_min, int depth_max, float (*out)[7], int capacity)
{
	int filled = 0;
	for (int o = 0; o < c->owner_count; o++)
		filled = sim_bvh_debug_boxes(c->trees[o], depth_min, depth_max, out, capacity, filled);
	return filled;
}

int sim_collide_debug_depth(const sim_collide *c)
{
	int deepest = -1;
	for (int o = 0; o < c->owner_count; o++) {
		int d = sim_bvh_debug_depth(c->trees[o]);
		deepest = d > deepest ? d : deepest;
	}
	return deepest;
}

int sim_collide_debug_early_windows(const sim_collide *c) { return c->early_windows; }

long sim_collide_debug_tested(const sim_collide *c) { return c->broad_tested; }

long sim_collide_debug_sweep_chunks(const sim_collide *c) { return c->sweep_chunks; }


typedef struct old_place {
	pair p;
	int k;
} old_place;

static int old_place_cmp(const void *pa, const void *pb)
{
	const old_place *a = pa, *b = pb;
	if (a->p.a != b->p.a)
		return a->p.a < b->p.a ? -1 : 1;
	return (a->p.b > b->p.b) - (a->p.b < b->p.b);
}

int sim_collide_debug_carry(sim_collide *c, const sim_world *w, int *from_run)
{
	*from_run = 0;
	if (c->pending || !c->have_candidates)
		return -1; /* old_vf and old_ee hold something else */
	int differ = 0;
	for (int k = 0; k < 2; k++) {
		const darray *old = k ? &c->old_ee : &c->old_vf, *cur = k ? &c->ee : &c->vf;
		const double *old_lb = k ? c->old_ee_lb.data : c->old_vf_lb.data;
		const pair *op = old->data, *cp = cur->data;
		const int n = cur->count, n_old = old->count;
		double *mine = calloc((size_t)n + 1, sizeof(double)), *brute = calloc((size_t)n + 1, sizeof(double));
		int *state = calloc((size_t)n + 1, sizeof(int));
		old_place *sorted = malloc(sizeof(old_place) * ((size_t)n_old + 1));
		bool ok = mine && brute && state && sorted &&
		          carry_bounds(c, w, k, old, old_lb, c->old_adj_lo[k], c->old_adj_hi[k], cur, c->adj_lo[k],
		                       c->adj_hi[k], mine, state, k ? c->edges.count : c->nv);
		if (ok) {
			for (int q = 0; q < n_old; q++)
				sorted[q] = (old_place){op[q], q};
			qsort(sorted, (size_t)n_old, sizeof(old_place), old_place_cmp);
			for (int q = 0; q < n; q++) {
				old_place key = {cp[q], 0};
				const old_place *f = bsearch(&key, sorted, (size_t)n_old, sizeof(old_place), old_place_cmp);
				if (f) {
					brute[q] = old_lb[f->k];
					*from_run += f->k >= c->old_adj_lo[k] && f->k < c->old_adj_hi[k];
				}
				differ += memcmp(&mine[q], &brute[q], sizeof(double)) != 0 || state[q] != -1;
			}
		}
		free(mine), free(brute), free(state), free(sorted);
		if (!ok)
			return -1;
	}
	return differ;
}

int sim_collide_debug_candidates(const sim_collide *c, int (*v)[4], double *lb, int capacity, int *vertex_faces)
{
	*vertex_faces = c->vf.count;
	const pair *vf = c->vf.data, *ee = c->ee.data;
	const int *tri = c->tris.data;
	const int(*edges)[2] = c->edges.data;
	const double *vl = c->vf_lb.data, *el = c->ee_lb.data;
	int n = 0;
	for (int q = 0; q < c->vf.count; q++, n++) {
		if (n >= capacity)
			continue;
		const int *t = &tri[3 * vf[q].b];
		v[n][0] = vf[q].a, v[n][1] = t[0], v[n][2] = t[1], v[n][3] = t[2];
		lb[n] = vl[q];
	}
	for (int q = 0; q < c->ee.count; q++, n++) {
		if (n >= capacity)
			continue;
		const int *a = edges[ee[q].a], *b = edges[ee[q].b];
		v[n][0] = a[0], v[n][1] = a[1], v[n][2] = b[0], v[n][3] = b[1];
		lb[n] = el[q];
	}
	return n;
}

static void vf_stencil(const sim_collide *c, const pair *p, const double wts[3], stencil *s)
{
	const int *t = &((const int *)c->tris.data)[3 * p->b];
	*s = (stencil){{p->a, t[0], t[1], t[2]}, {1.0, -wts[0], -wts[1], -wts[2]}};
}

static void ee_stencil(const sim_collide *c, const pair *p, double u, double v, stencil *s)
{
	const int(*e)[2] = c->edges.data;
	*s = (stencil){{e[p->a][0], e[p->a][1], e[p->b][0], e[p->b][1]}, {1.0 - u, u, -(1.0 - v), -v}};
}

static void relative_velocity(const sim_collide *c, const stencil *s, double out[3])
{
	out[0] = out[1] = out[2] = 0.0;
	for (int k = 0; k < 4; k++)
		for (int j = 0; j < 3; j++)
			out[j] += s->coef[k] * c->vbar[s->idx[k]][j];
}

/* sum c_k^2 w_k: how much a unit impulse changes the relative velocity; 0 when every
 * vertex of the pair has infinite mass. */
static double effective_inverse_mass(const sim_collide *c, const stencil *s)
{
	double m = 0.0;
	for (int k = 0; k < 4; k++)
		m += s->coef[k] * s->coef[k] * c->x0[s->idx[k]][3];
	return m;
}

/* Friction of the pair: its bodies' entry in the world's pair table, or else the
 * geometric mean of the two sides' coefficients. */
static double pair_friction(const sim_collide *c, const stencil *s)
{
	if (c->pair_mu) { /* the pair's own coefficient, if the world has one */
		const int *body = c->body.data;
		float m = body_pair_mu(c, body[s->idx[0]], body[s->idx[3]]);
		if (!isnan(m))
			return m;
	}
	float a = c->mu[s->idx[0]], b = c->mu[s->idx[3]];
	/* one material on both sides, as in most pairs: the square of a float is exact in
	 * double and the square root of an exact square is exact, so |a| is the same value
	 * without the root */
	if (a == b)
		return fabs((double)a);
	return sqrt((double)a * (double)b);
}

/* Vertex i's mean velocity changed: it takes the clock's stamp and its new displacement,
 * and so do the primitives' view and flags wherever they are kept (the clock only grows,
 * so the stamp is its primitives' new largest; the view's displacement stays at least
 * the largest). */
static void stamp_vertex(sim_collide *c, int i, float h)
{
	c->vstamp[i] = c->clock;
	track_motion(c, i, h);
	if (!c->prim_valid && !c->touch_valid)
		return;
	const int *start = c->vprim_start.data, *items = c->vprim_items.data;
	int *ps = c->prim_stamp.data;
	double *pd = c->prim_disp.data, d = c->disp[i];
	unsigned char *touched = c->prim_touched.data;
	for (int m = start[i]; m < start[i + 1]; m++) {
		if (c->prim_valid) {
			ps[items[m]] = c->clock;
			pd[items[m]] = d > pd[items[m]] ? d : pd[items[m]];
		}
		if (c->touch_valid)
			touched[items[m]] = 1;
	}
}

/* The velocity change dv of the relative velocity, as per-vertex changes. */
static void apply_now(sim_collide *c, const stencil *s, const double dv[3], double inv_m, float h)
{
	c->clock++;
	for (int k = 0; k < 4; k++) {
		int i = s->idx[k];
		double f = s->coef[k] * c->x0[i][3] / inv_m;
		for (int j = 0; j < 3; j++)
			c->vbar[i][j] += (float)(f * dv[j]);
		stamp_vertex(c, i, h);
	}
}

static void accumulate(sim_collide *c, const stencil *s, const double dv[3], double inv_m)
{
	for (int k = 0; k < 4; k++) {
		int i = s->idx[k];
		if (c->x0[i][3] == 0.0f)
			continue;
		double f = s->coef[k] * c->x0[i][3] / inv_m;
		for (int j = 0; j < 3; j++)
			c->acc[i][j] += (float)(f * dv[j]);
		c->acc[i][3] += 1.0f;
	}
}

/* fmin(x, 1.0) for every x, NaN included, inline: without -ffinite-math-only GCC calls
 * libm's fmin. */
static inline double min_one(double x) { return x < 1.0 ? x : 1.0; }

/* Repulsion and friction for a pair at distance d < separation along unit normal n
 * (pointing from the second side to the first): the normal relative velocity is raised
 * to separate at a tenth of the overlap per step, and friction takes up to mu times
 * that change off the tangential velocity. */
static bool cloth_only(const sim_collide *c, const stencil *s)
{
	return s->idx[0] < c->n_cloth && s->idx[1] < c->n_cloth && s->idx[2] < c->n_cloth && s->idx[3] < c->n_cloth;
}

typedef struct rigid_contact {
	stencil s;
	double n[3], d, sep;
	bool vertex_face; /* for the debug log */
} rigid_contact;

/* Whether one side of the pair cannot move (every vertex of it has inverse mass 0):
 * vertex-face, the vertex or the whole triangle; edge-edge, either edge. */
static bool rigid_side(const sim_collide *c, const stencil *s, bool vertex_face)
{
	const vec4 *x = c->x0;
	if (vertex_face)
		return x[s->idx[0]][3] == 0.0f || (x[s->idx[1]][3] == 0.0f && x[s->idx[2]][3] == 0.0f && x[s->idx[3]][3] == 0.0f);
	return (x[s->idx[0]][3] == 0.0f && x[s->idx[1]][3] == 0.0f) || (x[s->idx[2]][3] == 0.0f && x[s->idx[3]][3] == 0.0f);
}

static bool contact_impulse(sim_collide *c, const stencil *s, const double n[3], double d, double sep, float h)
{
	double inv_m = effective_inverse_mass(c, s);
	if (inv_m <= 0.0)
		return false;
	double vr[3];
	relative_velocity(c, s, vr);
	double vn = vr[0] * n[0] + vr[1] * n[1] + vr[2] * n[2];
	double target = 0.1 * (sep - d) / h;
	if (vn >= target)
		return false;
	double dvn = target - vn, dv[3];
	double vt[3] = {vr[0] - vn * n[0], vr[1] - vn * n[1], vr[2] - vn * n[2]};
	double vt_len = sqrt(vt[0] * vt[0] + vt[1] * vt[1] + vt[2] * vt[2]);
	double mu = pair_friction(c, s);
	double cut = vt_len > 0.0 ? min_one(mu * dvn / vt_len) : 0.0;
	for (int j = 0; j < 3; j++)
		dv[j] = dvn * n[j] - cut * vt[j];
	accumulate(c, s, dv, inv_m);
	c->self_hits += cloth_only(c, s);
	return true;
}

static void apply_accumulated(sim_collide *c)
{
	for (int i = 0; i < c->nv; i++) {
		if (c->acc[i][3] > 0.0f)
			for (int j = 0; j < 3; j++)
				c->vbar[i][j] += c->acc[i][j] / c->acc[i][3];
		glm_vec4_zero(c->acc[i]);
	}
}

static double max3(double a, double b, double d)
{
	double m = a > b ? a : b;
	return m > d ? m : d;
}

static double norm3(const double v[3]) { return sqrt(v[0] * v[0] + v[1] * v[1] + v[2] * v[2]); }

static void cross3(const double a[3], const double b[3], double out[3])
{
	out[0] = a[1] * b[2] - a[2] * b[1];
	out[1] = a[2] * b[0] - a[0] * b[2];
	out[2] = a[0] * b[1] - a[1] * b[0];
}

/* Normal of the closest-point direction, or of the given fallback when the points
 * coincide. */
static bool unit_or(const double d[3], const double fallback[3], double out[3])
{
	double l = norm3(d);
	if (l > 1e-12) {
		for (int k = 0; k < 3; k++)
			out[k] = d[k] / l;
		return true;
	}
	l = norm3(fallback);
	if (l > 1e-300) {
		for (int k = 0; k < 3; k++)
			out[k] = fallback[k] / l;
		return true;
	}
	return false;
}

/* A contact between two moving sides goes into this sweep's Jacobi average; one
 * against a side that cannot move waits for the second pass (rigid_contacts). */
static bool contact_or_defer(sim_collide *c, const stencil *s, bool vertex_face, const double n[3], double d,
                             double sep, float h)
{
	if (!rigid_side(c, s, vertex_face))
		return contact_impulse(c, s, n, d, sep, h);
	if (!reserve(&c->rigid_contacts, sizeof(rigid_contact), c->rigid_contacts.count + 1))
		return contact_impulse(c, s, n, d, sep, h); /* no room: in the first pass, still sound */
	rigid_contact *r = &((rigid_contact *)c->rigid_contacts.data)[c->rigid_contacts.count++];
	r->s = *s;
	memcpy(r->n, n, sizeof r->n);
	r->d = d;
	r->sep = sep;
	r->vertex_face = vertex_face;
	return false;
}

/* The square of the largest move since x0_prev of a vertex of one side relative to one
 * of the other (vertices [0, split) are one side): as for relative_reach, two
 * primitives lb apart at x0_prev are at least lb minus this move apart at x0, since
 * every point of either is the same convex combination of its vertices in both
 * configurations. */
static double relative_move2(const sim_collide *c, const int idx[4], int split)
{
	double m2 = 0.0;
	for (int i = 0; i < split; i++) {
		for (int j = split; j < 4; j++) {
			const double *a = c->movev[idx[i]], *b = c->movev[idx[j]];
			double r[3] = {a[0] - b[0], a[1] - b[1], a[2] - b[2]};
			double q = r[0] * r[0] + r[1] * r[1] + r[2] * r[2];
			m2 = q > m2 ? q : m2;
		}
	}
	return m2;
}

/* Whether the pair's bound lb0 (> thr) less its relative move still beats thr, and then
 * that bound in *lb: lb0 - sqrt(m2) > thr, rounded as written, but without the root
 * where m2 alone settles it (most pairs a fold brings here are not cleared).  Rounding
 * is monotone, so fl(lb0 - fl(sqrt(m2))) <= thr once fl(sqrt(m2)) >= lb0 - thr, which
 * holds when m2 >= k, k a bound from above of hi^2 with hi a double above lb0 - thr:
 * the 1e-12 margins exceed every rounding of lb0 - thr, hi and k by far, and hi above
 * 1e-100 keeps hi^2 clear of underflow.  Anything else takes the root as before. */
static inline bool moved_together(const sim_collide *c, const int idx[4], int split, double lb0, double thr,
                                  double *lb)
{
	double m2 = relative_move2(c, idx, split);
	double g = lb0 - thr, hi = g + g * 1e-12, k = hi * hi * (1.0 + 1e-12);
	if (hi > 1e-100 && m2 >= k)
		return false;
	*lb = lb0 - sqrt(m2);
	return *lb > thr;
}

/* Candidates per block of the contact search. */
#define PROXIMITY_BLOCK 1024

/* The contact search over the candidates, vertex-face pairs then edge-edge pairs as one
 * sequence: block k finds the pairs closer than their separation among candidates
 * [PROXIMITY_BLOCK k, PROXIMITY_BLOCK (k + 1)) and records them (with their weights,
 * normal and distance) in its output, and updates their start-distance bounds; the
 * impulses come after, in candidate order (proximity). */
typedef struct proximity_task {
	sim_collide *c;
	bool carry; /* bounds carried over from x0_prev, less the moves */
} proximity_task;

static void proximity_range(int start, int end, int worker, void *ctx)
{
	(void)worker;
	const proximity_task *pt = ctx;
	sim_collide *c = pt->c;
	bool carry = pt->carry;
	double *vf_lb = c->vf_lb.data, *ee_lb = c->ee_lb.data;
	const double *mv = c->move, *tmv = c->tri_move.data, *emv = c->edge_move.data;
	const float *tsep = c->tri_sep.data, *esep = c->edge_sep.data, *vsep = c->sep;
	const double(*xd)[3] = c->x0d.data;
	const pair *vf = c->vf.data, *ee = c->ee.data;
	const int *tri = c->tris.data;
	const int(*edges)[2] = c->edges.data;
	int nvf = c->vf.count, total = c->vf.count + c->ee.count;
	for (int blk = start; blk < end; blk++) {
		block_out *out = &c->blocks[blk];
		int first = blk * PROXIMITY_BLOCK, last = first + PROXIMITY_BLOCK < total ? first + PROXIMITY_BLOCK : total;
		/* at most one contact per candidate: the block's room once, not per contact */
		if (!reserve(&out->contacts, sizeof(rigid_contact), last - first)) {
			out->failed = true;
			return;
		}
		rigid_contact *rec = out->contacts.data;
		int nrec = 0;
		int vf_end = last < nvf ? last : nvf, ee_first = (first > nvf ? first : nvf) - nvf, ee_end = last - nvf;
		/* The carried bounds first, without branches (most candidates of a resting pile
		 * end here, taken or not at random): every candidate gets its carried bound, and
		 * those it does not clear are listed, with their old bound and threshold, for
		 * the tests below, which all write a bound of their own. */
		int keep[PROXIMITY_BLOCK], nkeep = 0;
		double keep_lb[PROXIMITY_BLOCK], keep_thr[PROXIMITY_BLOCK];
		for (int q = first; q < vf_end; q++) {
			int va = vf[q].a, tb = vf[q].b;
			double lb0 = vf_lb[q], thr = 0.0;
			if (carry) {
				double lb = lb0 - mv[va] - tmv[tb];
				thr = ((double)vsep[va] + (double)tsep[tb]) * (1.0 + 1e-6);
				vf_lb[q] = lb;
				keep[nkeep] = q, keep_lb[nkeep] = lb0, keep_thr[nkeep] = thr;
				nkeep += !(lb > thr);
			} else {
				keep[nkeep] = q, keep_lb[nkeep] = lb0, keep_thr[nkeep] = thr;
				nkeep++;
			}
		}
		for (int i = 0; i < nkeep; i++) {
			int q = keep[i], va = vf[q].a, tb = vf[q].b;
			double lb0 = keep_lb[i], thr = keep_thr[i];
			const int *t = &tri[3 * tb];
			if (carry && lb0 > thr) { /* moved far, but maybe together */
				const int idx[4] = {va, t[0], t[1], t[2]};
				double lb;
				if (moved_together(c, idx, 1, lb0, thr, &lb)) {
					vf_lb[q] = lb;
					continue;
				}
			}
			const double *p = xd[va], *a = xd[t[0]], *b = xd[t[1]], *cc = xd[t[2]];
			/* the pair's separation: the vertex's side and the triangle's */
			double sep = (double)vsep[va] + (double)vsep[t[2]], wts[3];
			/* The exact distance, also where a separating axis would clear the pair: it is
			 * the bound carried to the next substeps, and an axis's gap, often well below
			 * the distance, brought the same pairs back to be tested at every step of a
			 * fold (docs/benchmarks.md, "The fold's p99").  Off the triangle only the
			 * edges that can hold the closest point are measured; a pair that may be
			 * within its separation then gets sim_geom_point_triangle's answer (the
			 * margin is far above the two routines' rounding apart), so that the
			 * contacts are as they were. */
			double d2 = sim_geom_point_triangle_bound(p, a, b, cc, wts);
			if (d2 < sep * sep * (1.0 + 1e-6) && (wts[0] == 0.0 || wts[1] == 0.0 || wts[2] == 0.0))
				d2 = sim_geom_point_triangle(p, a, b, cc, wts);
			double d = sqrt(d2);
			vf_lb[q] = d;
			if (!(d2 < sep * sep))
				continue;
			double diff[3], e1[3], e2[3], fn[3], n[3];
			for (int k = 0; k < 3; k++) {
				diff[k] = p[k] - (wts[0] * a[k] + wts[1] * b[k] + wts[2] * cc[k]);
				e1[k] = b[k] - a[k];
				e2[k] = cc[k] - a[k];
			}
			cross3(e1, e2, fn);
			if (!unit_or(diff, fn, n))
				continue;
			rigid_contact *r = &rec[nrec++];
			vf_stencil(c, &vf[q], wts, &r->s);
			memcpy(r->n, n, sizeof r->n);
			r->d = d, r->sep = sep, r->vertex_face = true;
		}
		nkeep = 0;
		for (int q = ee_first; q < ee_end; q++) {
			int ka = ee[q].a, kb = ee[q].b;
			double lb0 = ee_lb[q], thr = 0.0;
			if (carry) {
				double lb = lb0 - emv[ka] - emv[kb];
				thr = ((double)esep[ka] + (double)esep[kb]) * (1.0 + 1e-6);
				ee_lb[q] = lb;
				keep[nkeep] = q, keep_lb[nkeep] = lb0, keep_thr[nkeep] = thr;
				nkeep += !(lb > thr);
			} else {
				keep[nkeep] = q, keep_lb[nkeep] = lb0, keep_thr[nkeep] = thr;
				nkeep++;
			}
		}
		for (int i = 0; i < nkeep; i++) {
			int q = keep[i], ka = ee[q].a, kb = ee[q].b;
			double lb0 = keep_lb[i], thr = keep_thr[i];
			const int *ea = edges[ka], *eb = edges[kb];
			if (carry && lb0 > thr) {
				const int idx[4] = {ea[0], ea[1], eb[0], eb[1]};
				double lb;
				if (moved_together(c, idx, 2, lb0, thr, &lb)) {
					ee_lb[q] = lb;
					continue;
				}
			}
			const double *p0 = xd[ea[0]], *p1 = xd[ea[1]], *q0 = xd[eb[0]], *q1 = xd[eb[1]];
			double sep = (double)vsep[ea[0]] + (double)vsep[eb[1]], u, v;
			double d2 = sim_geom_segment_segment_bound(p0, p1, q0, q1, &u, &v);
			double d = sqrt(d2);
			ee_lb[q] = d;
			if (!(d2 < sep * sep) || u <= 0.0 || u >= 1.0 || v <= 0.0 || v >= 1.0)
				continue; /* an end point: the vertex-face pairs cover it */
			double diff[3], da[3], db[3], cr[3], n[3];
			for (int k = 0; k < 3; k++) {
				diff[k] = (p0[k] + u * (p1[k] - p0[k])) - (q0[k] + v * (q1[k] - q0[k]));
				da[k] = p1[k] - p0[k];
				db[k] = q1[k] - q0[k];
			}
			cross3(da, db, cr);
			if (!unit_or(diff, cr, n))
				continue;
			rigid_contact *r = &rec[nrec++];
			ee_stencil(c, &ee[q], u, v, &r->s);
			memcpy(r->n, n, sizeof r->n);
			r->d = d, r->sep = sep, r->vertex_face = false;
		}
		out->contacts.count = nrec;
	}
}

/* The contact search's inputs, each item its own: every vertex's start in double and
 * its move since the candidates' positions (carry), then every triangle's and edge's
 * largest move and separation (items nt on: edges). */
typedef struct setup_task {
	sim_collide *c;
	bool carry;
} setup_task;

static void setup_vertex_range(int start, int end, int worker, void *ctx)
{
	(void)worker;
	const setup_task *t = ctx;
	sim_collide *c = t->c;
	double(*xd)[3] = c->x0d.data;
	for (int i = start; i < end; i++) {
		to_d(c->x0[i], xd[i]);
		if (!t->carry)
			continue;
		double d2 = 0.0;
		for (int k = 0; k < 3; k++) {
			double d = (double)c->x0[i][k] - (double)c->x0_prev[i][k];
			c->movev[i][k] = d;
			d2 += d * d;
		}
		c->move[i] = sqrt(d2);
	}
}

static void setup_primitive_range(int start, int end, int worker, void *ctx)
{
	(void)worker;
	const setup_task *t = ctx;
	sim_collide *c = t->c;
	const int nt = c->tris.count, *tri = c->tris.data;
	const int(*edges)[2] = c->edges.data;
	const double *mv = c->move;
	double *tmv = c->tri_move.data, *emv = c->edge_move.data;
	float *tsep = c->tri_sep.data, *esep = c->edge_sep.data;
	for (int k = start; k < end; k++) {
		if (k < nt) {
			const int *v = &tri[3 * k];
			tmv[k] = max3(mv[v[0]], mv[v[1]], mv[v[2]]);
			tsep[k] = c->sep[v[2]];
		} else {
			const int *v = edges[k - nt];
			emv[k - nt] = mv[v[0]] > mv[v[1]] ? mv[v[0]] : mv[v[1]];
			esep[k - nt] = c->sep[v[0]];
		}
	}
}

/* Returns the contacts that got an impulse, or -1 when out of memory. */
static int proximity(sim_collide *c, const sim_world *w, float h)
{
	int contacts = 0;
	c->rigid_contacts.count = 0;
	sim_debug_log *log = c->log;
	bool carry = c->lb_carry;
	if (!reserve(&c->x0d, sizeof(double[3]), c->nv))
		return -1;
	if (carry) { /* the same maxima and separations the per-vertex tests would take */
		int nt = c->tris.count, ne = c->edges.count;
		if (!reserve(&c->tri_move, sizeof(double), nt) || !reserve(&c->edge_move, sizeof(double), ne) ||
		    !reserve(&c->tri_sep, sizeof(float), nt) || !reserve(&c->edge_sep, sizeof(float), ne))
			return -1;
	}
	setup_task setup = {c, carry};
	sim_parallel_for(w, setup_vertex_range, c->nv, BOX_RANGE, &setup);
	if (carry)
		sim_parallel_for(w, setup_primitive_range, c->tris.count + c->edges.count, BOX_RANGE, &setup);
	int total = c->vf.count + c->ee.count, nblocks = (total + PROXIMITY_BLOCK - 1) / PROXIMITY_BLOCK;
	if (!reserve_blocks(c, nblocks))
		return -1;
	proximity_task task = {c, carry};
	sim_parallel_for(w, proximity_range, nblocks, 1, &task);
	/* the impulses of the contacts found, in candidate order (each reads vbar, which the
	 * sweep leaves alone until apply_accumulated, and adds to acc) */
	for (int k = 0; k < nblocks; k++) {
		const block_out *b = &c->blocks[k];
		if (b->failed)
			return -1;
		const rigid_contact *r = b->contacts.data;
		for (int q = 0; q < b->contacts.count; q++) {
			bool got = contact_or_defer(c, &r[q].s, r[q].vertex_face, r[q].n, r[q].d, r[q].sep, h);
			contacts += got;
			if (got && log)
				log_stencil(log, SIM_PAIR_PROXIMITY, r[q].vertex_face, &r[q].s);
		}
	}
	apply_accumulated(c);
	/* Contacts with a side that cannot move (the floor under a pile) act on the result
	 * of the others, so that the cloth resting on them is not averaged away by its many
	 * contacts with the layers above: otherwise the bottom layer sinks onto the obstacle
	 * until continuous detection has to stop it at the gap, every step. */
	const rigid_contact *rc = c->rigid_contacts.data;
	for (int k = 0; k < c->rigid_contacts.count; k++) {
		bool got = contact_impulse(c, &rc[k].s, rc[k].n, rc[k].d, rc[k].sep, h);
		contacts += got;
		if (got && log)
			log_stencil(log, SIM_PAIR_PROXIMITY, rc[k].vertex_face, &rc[k].s);
	}
	apply_accumulated(c);
	memcpy(c->x0_prev, c->x0, sizeof(vec4) * (size_t)c->nv);
	c->lb_carry = true;
	return contacts;
}

/* ---- continuous detection ------------------------------------------------------------------- */

/* Gathers the pair's start and end positions for the CCD routines. */
static void pair_positions(const sim_collide *c, const int idx[4], float h, double x0[4][3], double x1[4][3])
{
	for (int k = 0; k < 4; k++) {
		to_d(c->x0[idx[k]], x0[k]);
		end_position(c, idx[k], h, x1[k]);
	}
}

/* Cheapest exclusion: a separating axis.  Along any direction a, the projections of
 * the two sides' points move linearly over the step, so if at both ends every vertex of
 * one side lies more than 2 CCD_GAP (times |a|) beyond every vertex of the other,
 * every point of one convex primitive stays that far from the other's all step long:
 * no hit.  Tried along x, y and z (the swept boxes) and along the start normal (the
 * face normal, or the two edges' cross product), which separates stacked layers of
 * cloth.  Vertices [0, split) are one side. */
static bool separated_along(const double x0[4][3], const double x1[4][3], int split, const double a[3], double thr)
{
	double lo[2][2], hi[2][2]; /* [end][side] */
	for (int e = 0; e < 2; e++) {
		const double(*x)[3] = e ? x1 : x0;
		for (int k = 0; k < 4; k++) {
			double d = x[k][0] * a[0] + x[k][1] * a[1] + x[k][2] * a[2];
			int side = k >= split;
			if (k == 0 || k == split) {
				lo[e][side] = hi[e][side] = d;
			} else {
				lo[e][side] = d < lo[e][side] ? d : lo[e][side];
				hi[e][side] = d > hi[e][side] ? d : hi[e][side];
			}
		}
	}
	return (lo[0][1] - hi[0][0] > thr && lo[1][1] - hi[1][0] > thr) ||
	       (lo[0][0] - hi[0][1] > thr && lo[1][0] - hi[1][1] > thr);
}

static bool separated(const double x0[4][3], const double x1[4][3], int split)
{
	const double thr = 2.0 * CCD_GAP;
	for (int k = 0; k < 3; k++) {
		/* the swept boxes along axis k */
		double lo_a = x0[0][k], hi_a = x0[0][k], lo_b = x0[split][k], hi_b = x0[split][k];
		for (int i = 0; i < 4; i++) {
			double p = x0[i][k], q = x1[i][k];
			double l = p < q ? p : q, u = p < q ? q : p;
			if (i < split) {
				lo_a = l < lo_a ? l : lo_a;
				hi_a = u > hi_a ? u : hi_a;
			} else {
				lo_b = l < lo_b ? l : lo_b;
				hi_b = u > hi_b ? u : hi_b;
			}
		}
		if (lo_b - hi_a > thr || lo_a - hi_b > thr)
			return true;
	}
	double u[3], v[3], a[3];
	for (int k = 0; k < 3; k++) {
		if (split == 1) {
			u[k] = x0[2][k] - x0[1][k];
			v[k] = x0[3][k] - x0[1][k];
		} else {
			u[k] = x0[1][k] - x0[0][k];
			v[k] = x0[3][k] - x0[2][k];
		}
	}
	cross3(u, v, a);
	double len = norm3(a);
	return len > 0.0 && separated_along(x0, x1, split, a, thr * len);
}

static inline void pair_vertices(const sim_collide *c, bool vertex_face, const pair *p, int idx[4])
{
	if (vertex_face) {
		const int *t = &((const int *)c->tris.data)[3 * p->b];
		idx[0] = p->a, idx[1] = t[0], idx[2] = t[1], idx[3] = t[2];
	} else {
		const int(*e)[2] = c->edges.data;
		idx[0] = e[p->a][0], idx[1] = e[p->a][1], idx[2] = e[p->b][0], idx[3] = e[p->b][1];
	}
}

/* Tests one candidate over the substep; on an approaching hit fills the stencil and
 * the contact normal (from the second side to the first) at the time of impact.  Without
 * roots it stops before the root finder: true then means only that the cheaper tests
 * could not clear the pair. */
static bool detect(const sim_collide *c, bool vertex_face, const pair *p, float h, bool roots, stencil *s, double n[3])
{
	int idx[4];
	pair_vertices(c, vertex_face, p, idx);
	if (c->x0[idx[0]][3] + c->x0[idx[1]][3] + c->x0[idx[2]][3] + c->x0[idx[3]][3] == 0.0f)
		return false; /* nothing here can move */
	double x0[4][3], x1[4][3];
	pair_positions(c, idx, h, x0, x1);
	if (separated(x0, x1, vertex_face ? 1 : 2))
		return false;
	/* Then: the distance can shrink no faster than the largest relative
	 * displacement M of a vertex of one side against one of the other, so with d0 and d1
	 * at the ends it stays above (d0 + d1 - M) / 2 over the whole step.  Resting
	 * contacts (a few mm apart, moving microns per step) never reach the root finder. */
	double d0, d1, M = 0.0, wts[3], s0, s1;
	if (vertex_face) {
		d0 = sqrt(sim_geom_point_triangle(x0[0], x0[1], x0[2], x0[3], wts));
		d1 = sqrt(sim_geom_point_triangle(x1[0], x1[1], x1[2], x1[3], wts));
	} else {
		d0 = sqrt(sim_geom_segment_segment(x0[0], x0[1], x0[2], x0[3], &s0, &s1));
		d1 = sqrt(sim_geom_segment_segment(x1[0], x1[1], x1[2], x1[3], &s0, &s1));
	}
	int split = vertex_face ? 1 : 2; /* vertices [0, split) are one side */
	for (int i = 0; i < split; i++) {
		for (int j = split; j < 4; j++) {
			double r[3];
			for (int k = 0; k < 3; k++)
				r[k] = (x1[i][k] - x0[i][k]) - (x1[j][k] - x0[j][k]);
			double m = norm3(r);
			M = m > M ? m : M;
		}
	}
	if (0.5 * (d0 + d1 - M) > 2.0 * CCD_GAP)
		return false;
	if (!roots)
		return true; /* only the root finder can tell */
	sim_ccd_hit hit;
	bool found = vertex_face ? sim_ccd_vertex_face(x0, x1, CCD_GAP, &hit) : sim_ccd_edge_edge(x0, x1, CCD_GAP, &hit);
	if (!found)
		return false;
	double t = hit.toi, xt[4][3];
	for (int k = 0; k < 4; k++)
		for (int j = 0; j < 3; j++)
			xt[k][j] = x0[k][j] + t * (x1[k][j] - x0[k][j]);
	double diff[3], geo[3];
	if (vertex_face) {
		double u = hit.u, v = hit.v, a[3], b[3];
		*s = (stencil){{idx[0], idx[1], idx[2], idx[3]}, {1.0, -(1.0 - u - v), -u, -v}};
		for (int j = 0; j < 3; j++) {
			diff[j] = xt[0][j] - ((1.0 - u - v) * xt[1][j] + u * xt[2][j] + v * xt[3][j]);
			a[j] = xt[2][j] - xt[1][j];
			b[j] = xt[3][j] - xt[1][j];
		}
		cross3(a, b, geo);
	} else {
		double u = hit.u, v = hit.v, a[3], b[3];
		*s = (stencil){{idx[0], idx[1], idx[2], idx[3]}, {1.0 - u, u, -(1.0 - v), -v}};
		for (int j = 0; j < 3; j++) {
			diff[j] = (xt[0][j] + u * (xt[1][j] - xt[0][j])) - (xt[2][j] + v * (xt[3][j] - xt[2][j]));
			a[j] = xt[1][j] - xt[0][j];
			b[j] = xt[3][j] - xt[2][j];
		}
		cross3(a, b, geo);
	}
	/* At the gap the closest-point direction is the normal; when the primitives meet
	 * exactly (a crossing caught at its start) the face or edge-edge normal is. */
	double vr[3];
	relative_velocity(c, s, vr);
	if (!unit_or(diff, geo, n)) {
		if (!unit_or(vr, vr, n))
			return false;
		for (int j = 0; j < 3; j++)
			n[j] = -n[j];
	}
	double vn = vr[0] * n[0] + vr[1] * n[1] + vr[2] * n[2];
	if (norm3(diff) <= 1e-12) { /* no side known: the one they came from */
		if (vn > 0.0) {
			for (int j = 0; j < 3; j++)
				n[j] = -n[j];
			vn = -vn;
		}
	}
	return vn < -APPROACH_EPS;
}

/* Inelastic: the relative normal velocity becomes a small separation speed that keeps
 * the pair CCD_GAP apart. */
static bool collision_impulse(sim_collide *c, const stencil *s, const double n[3], float h)
{
	double inv_m = effective_inverse_mass(c, s);
	if (inv_m <= 0.0)
		return false;
	double vr[3];
	relative_velocity(c, s, vr);
	double vn = vr[0] * n[0] + vr[1] * n[1] + vr[2] * n[2];
	double target = 0.1 * CCD_GAP / h;
	if (vn >= target)
		return false;
	double dvn = target - vn;
	double vt[3] = {vr[0] - vn * n[0], vr[1] - vn * n[1], vr[2] - vn * n[2]};
	double vt_len = norm3(vt), mu = pair_friction(c, s);
	double cut = vt_len > 0.0 ? fmin(mu * dvn / vt_len, 1.0) : 0.0;
	double dv[3];
	for (int j = 0; j < 3; j++)
		dv[j] = dvn * n[j] - cut * vt[j];
	apply_now(c, s, dv, inv_m, h);
	c->self_hits += cloth_only(c, s);
	return true;
}

/* One sweep of detection over every candidate; with respond, each approaching hit gets
 * its impulse at once; otherwise hits are only reported to on_hit. */
typedef void (*hit_fn)(sim_collide *c, const stencil *s, void *user);

/* Whether a candidate must be tested again: a hit last time, never tested since the
 * broad phase, or one of its vertices took an impulse since it was found clear (the
 * result of detect depends only on the four vertices' x0 and vbar). */
static bool stale(const sim_collide *c, int state, int a, int b, int d, int e)
{
	if (state < 0)
		return true;
	const int *v = c->vstamp;
	return v[a] > state || v[b] > state || v[d] > state || v[e] > state;
}

/* Every point of a primitive moves at most its vertices' largest displacement (it is a
 * fixed convex combination of them), so two primitives at least lb apart at the start
 * stay at least lb - da - db apart all step. */
static bool apart(double lb, double da, double db)
{
	return lb - da - db > 2.0 * CCD_GAP;
}

/* The largest displacement of a vertex of one side relative to one of the other over the
 * substep (vertices [0, split) are one side).  Every point of a primitive is a fixed
 * convex combination of its vertices, so the two primitives' closest points approach by
 * at most this much: two primitives lb apart at the start stay lb - M apart.  Sheets that
 * slide along themselves (a cloth falling past its own folds) move far but together, so
 * this keeps them apart where the absolute displacements (apart) cannot.  Reads the
 * displacements track_motion keeps. */
static double relative_reach(const sim_collide *c, const int idx[4], int split)
{
	const double(*d)[3] = (const double(*)[3])c->dvec;
	double m2 = 0.0;
	for (int i = 0; i < split; i++) {
		for (int j = split; j < 4; j++) {
			const double *p = d[idx[i]], *q = d[idx[j]];
			double r[3] = {p[0] - q[0], p[1] - q[1], p[2] - q[2]};
			double v = r[0] * r[0] + r[1] * r[1] + r[2] * r[2];
			m2 = v > m2 ? v : m2;
		}
	}
	return sqrt(m2);
}

/* One candidate of a sweep, its vertices in idx (the first `split` on one side):
 * true on an approaching hit, which gets its impulse (respond) or goes to on_hit.  With
 * incremental, a candidate that cannot have changed since it was last found clear is
 * skipped (its result would be the same), and so is one the start distance and the
 * displacements keep apart; disp and dvec must be up to date (track_motion). */
static bool sweep_pair(sim_collide *c, bool vertex_face, const pair *p, const int idx[4], int *state, double lb,
                       float h, bool respond, bool incremental, hit_fn on_hit, void *user)
{
	if (incremental) {
		if (!stale(c, *state, idx[0], idx[1], idx[2], idx[3]))
			return false;
		int split = vertex_face ? 1 : 2;
		double da = 0.0, db = 0.0;
		for (int k = 0; k < 4; k++) {
			double d = c->disp[idx[k]];
			if (k < split)
				da = d > da ? d : da;
			else
				db = d > db ? d : db;
		}
		if (apart(lb, da, db) || lb - relative_reach(c, idx, split) > 2.0 * CCD_GAP) {
			*state = c->clock;
			return false;
		}
	} else if (lb - relative_reach(c, idx, vertex_face ? 1 : 2) > 2.0 * CCD_GAP) {
		/* every candidate tested whatever its state: the relative reach still clears
		 * what detect would clear */
		*state = c->clock;
		return false;
	}
	stencil s;
	double n[3];
	if (!detect(c, vertex_face, p, h, true, &s, n)) {
		*state = c->clock;
		return false;
	}
	*state = -1;
	if (respond) {
		if (collision_impulse(c, &s, n, h) && c->log)
			log_stencil(c->log, SIM_PAIR_COLLISION, vertex_face, &s);
	} else if (on_hit)
		on_hit(c, &s, user);
	return true;
}

/* sweep_pair's two cheapest outcomes, inline in the sweep loops (most candidates of a
 * resting pile end here): 1 when the candidate is not stale (skip it), 2 when the start
 * bound and the displacements keep it apart (clear), 0 when sweep_pair must decide. */
static inline int quick_outcome(const sim_collide *c, const int idx[4], int split, int state, double lb)
{
	const int *vs = c->vstamp;
	if (state >= 0 && vs[idx[0]] <= state && vs[idx[1]] <= state && vs[idx[2]] <= state && vs[idx[3]] <= state)
		return 1;
	const double *d = c->disp;
	double da = d[idx[0]], db = d[idx[3]];
	if (split == 1) {
		double m = d[idx[1]] > d[idx[2]] ? d[idx[1]] : d[idx[2]];
		db = m > db ? m : db;
	} else {
		da = d[idx[1]] > da ? d[idx[1]] : da;
		db = d[idx[2]] > db ? d[idx[2]] : db;
	}
	return apart(lb, da, db) ? 2 : 0;
}

/* The largest displacement of any vertex: a candidate to be tested (state < 0) whose
 * start bound clears twice it is clear by apart whatever its vertices, since
 * lb - D - D <= lb - da - db in floating point too (rounding is monotone): quick_outcome
 * would say 2 without the four vertices' reads.  (A NaN displacement is passed over: its
 * vertex ends the step non-finite, and the blow-up check rejects the step.) */
static double largest_disp(const sim_collide *c)
{
	double m = 0.0;
	for (int i = 0; i < c->nv; i++)
		m = c->disp[i] > m ? c->disp[i] : m;
	return m;
}

static inline bool clear_by_any(double lb, double dmax) { return apart(lb, dmax, dmax); }

/* After a pair's impulse (apply_now renews its vertices' disp), the largest displacement
 * covers them again. */
static inline double cover_disp(const sim_collide *c, const int idx[4], double dmax)
{
	for (int k = 0; k < 4; k++)
		dmax = c->disp[idx[k]] > dmax ? c->disp[idx[k]] : dmax;
	return dmax;
}

/* The CSR vertex -> the primitives it belongs to (triangle t, edge e as nt + e), once per
 * topology; false when out of memory. */
static bool vprim_index(sim_collide *c)
{
	int nv = c->nv, nt = c->tris.count, ne = c->edges.count;
	const int *tri = c->tris.data;
	const int(*edges)[2] = c->edges.data;
	if (c->prim_nv == nv && c->prim_nt == nt && c->prim_ne == ne)
		return true;
	if (!reserve(&c->vprim_start, sizeof(int), nv + 1) || !reserve(&c->vprim_items, sizeof(int), 3 * nt + 2 * ne))
		return false;
	int *start = c->vprim_start.data, *items = c->vprim_items.data;
	memset(start, 0, sizeof(int) * (size_t)(nv + 1));
	for (int k = 0; k < 3 * nt; k++)
		start[tri[k] + 1]++;
	for (int e = 0; e < ne; e++)
		start[edges[e][0] + 1]++, start[edges[e][1] + 1]++;
	for (int i = 0; i < nv; i++)
		start[i + 1] += start[i];
	/* filled from the back so that start[] ends as each vertex's first item */
	for (int e = ne - 1; e >= 0; e--)
		items[--start[edges[e][1] + 1]] = nt + e, items[--start[edges[e][0] + 1]] = nt + e;
	for (int k = 3 * nt - 1; k >= 0; k--)
		items[--start[tri[k] + 1]] = k / 3;
	/* start[i + 1] now holds vertex i's first item; shift it into place */
	memmove(start, start + 1, sizeof(int) * (size_t)nv);
	start[nv] = 3 * nt + 2 * ne;
	c->prim_nv = nv, c->prim_nt = nt, c->prim_ne = ne;
	return true;
}

/* Builds the primitives' stamps and displacements from the vertices' (and the index that
 * keeps them up to date); false when out of memory, and the sweep then reads the
 * vertices. */
static bool prim_view(sim_collide *c)
{
	int nt = c->tris.count, ne = c->edges.count, np = nt + ne;
	const int *tri = c->tris.data;
	const int(*edges)[2] = c->edges.data;
	if (!reserve(&c->prim_stamp, sizeof(int), np) || !reserve(&c->prim_disp, sizeof(double), np) || !vprim_index(c))
		return false;
	int *ps = c->prim_stamp.data;
	double *pd = c->prim_disp.data;
	const int *vs = c->vstamp;
	const double *d = c->disp;
	for (int t = 0; t < nt; t++) {
		const int *v = &tri[3 * t];
		int s = vs[v[0]] > vs[v[1]] ? vs[v[0]] : vs[v[1]];
		ps[t] = s > vs[v[2]] ? s : vs[v[2]];
		pd[t] = max3(d[v[0]], d[v[1]], d[v[2]]);
	}
	for (int e = 0; e < ne; e++) {
		const int *v = edges[e];
		ps[nt + e] = vs[v[0]] > vs[v[1]] ? vs[v[0]] : vs[v[1]];
		pd[nt + e] = d[v[0]] > d[v[1]] ? d[v[0]] : d[v[1]];
	}
	c->prim_valid = true;
	return true;
}

/* Every candidate once, vertex-face pairs first, in list order; returns the hits.  A
 * candidate that clear_by_any does not clear is first tried on the primitives' view: its
 * stamps are exact (not stale there is not stale) and its displacements at least the
 * vertices' (apart there is apart by quick_outcome too, rounding being monotone), so
 * what the view decides is what quick_outcome would, and the rest goes the same way as
 * without it. */
static int sweep_serial(sim_collide *c, float h, bool respond, bool incremental, hit_fn on_hit, void *user)
{
	int hits = 0;
	const pair *vf = c->vf.data, *ee = c->ee.data;
	int *vf_state = c->vf_state.data, *ee_state = c->ee_state.data;
	const double *vf_lb = c->vf_lb.data, *ee_lb = c->ee_lb.data;
	const int *tri = c->tris.data;
	const int(*edges)[2] = c->edges.data;
	double dmax = largest_disp(c);
	int clock = c->clock; /* in a register: the states' stores could alias c->clock */
	/* the view, built at the first candidate that needs it (none, on a resting pile) */
	bool view = false, tried = !incremental;
	const int *ps = NULL, *vs = c->vstamp;
	const double *pd = NULL, *disp = c->disp;
	int nt = c->tris.count;
	for (int q = 0; q < c->vf.count; q++) {
		if (view) { /* idle first, then both clearances without a branch between them (their
		             * outcomes come at random) */
			int v = vf[q].a, tb = vf[q].b, state = vf_state[q];
			double lb = vf_lb[q];
			if (state >= 0 && (vs[v] <= state) & (ps[tb] <= state))
				continue; /* idle: every candidate of a first sweep is stale, most of a later one idle */
			bool clear = ((state < 0) & clear_by_any(lb, dmax)) | apart(lb, disp[v], pd[tb]);
			vf_state[q] = clear ? clock : state;
			if (clear)
				continue;
		} else if (incremental && vf_state[q] < 0 && clear_by_any(vf_lb[q], dmax)) {
			vf_state[q] = clock;
			continue;
		} else if (!tried) {
			tried = true;
			view = c->prim_valid || prim_view(c);
			ps = c->prim_stamp.data, pd = c->prim_disp.data;
			if (view) {
				q--; /* again, through the view */
				continue;
			}
		}
		const int *t = &tri[3 * vf[q].b];
		const int idx[4] = {vf[q].a, t[0], t[1], t[2]};
		if (incremental) {
			int quick = quick_outcome(c, idx, 1, vf_state[q], vf_lb[q]);
			if (quick) {
				if (quick == 2)
					vf_state[q] = clock;
				continue;
			}
		}
		if (sweep_pair(c, true, &vf[q], idx, &vf_state[q], vf_lb[q], h, respond, incremental, on_hit, user)) {
			hits++;
			dmax = cover_disp(c, idx, dmax);
			clock = c->clock;
		}
	}
	for (int q = 0; q < c->ee.count; q++) {
		if (view) {
			int ka = nt + ee[q].a, kb = nt + ee[q].b, state = ee_state[q];
			double lb = ee_lb[q];
			if (state >= 0 && (ps[ka] <= state) & (ps[kb] <= state))
				continue;
			bool clear = ((state < 0) & clear_by_any(lb, dmax)) | apart(lb, pd[ka], pd[kb]);
			ee_state[q] = clear ? clock : state;
			if (clear)
				continue;
		} else if (incremental && ee_state[q] < 0 && clear_by_any(ee_lb[q], dmax)) {
			ee_state[q] = clock;
			continue;
		} else if (!tried) {
			tried = true;
			view = c->prim_valid || prim_view(c);
			ps = c->prim_stamp.data, pd = c->prim_disp.data;
			if (view) {
				q--;
				continue;
			}
		}
		const int *e0 = edges[ee[q].a], *e1 = edges[ee[q].b];
		const int idx[4] = {e0[0], e0[1], e1[0], e1[1]};
		if (incremental) {
			int quick = quick_outcome(c, idx, 2, ee_state[q], ee_lb[q]);
			if (quick) {
				if (quick == 2)
					ee_state[q] = clock;
				continue;
			}
		}
		if (sweep_pair(c, false, &ee[q], idx, &ee_state[q], ee_lb[q], h, respond, incremental, on_hit, user)) {
			hits++;
			dmax = cover_disp(c, idx, dmax);
			clock = c->clock;
		}
	}
	return hits;
}

typedef struct prepass_task {
	sim_collide *c;
	float h;
	bool incremental;
	bool flags;  /* prim_touched holds (touch_valid) */
	int clock0;  /* the clock at the start of the pre-pass (of its chunk) */
	double dmax; /* at least every vertex's displacement then */
	int base;    /* the chunk's first candidate: the loop's items are [base, base + count) */
} prepass_task;

/* Candidates per range of the pre-pass, and of its root finding, at least. */
#define PREPASS_RANGE 512
#define ROOTS_RANGE 16
/* c->pre: the pre-pass's mark per candidate (0: decided, clear or idle) */
#define PRE_HIT 1   /* an approaching hit from the sweep's start state */
#define PRE_ROOTS 2 /* needs the root finder */

/* sweep_pair's decision from the state at the sweep's start, over candidates
 * [start, end) of vertex-face then edge-edge pairs as one sequence: a candidate found
 * clear gets its state (clock0) at once; one that only the root finder can decide is
 * marked in c->pre (PRE_ROOTS). */
static void prepass_range(int start, int end, int worker, void *ctx)
{
	(void)worker;
	const prepass_task *pt = ctx;
	sim_collide *c = pt->c;
	const pair *vf = c->vf.data, *ee = c->ee.data;
	int *vf_state = c->vf_state.data, *ee_state = c->ee_state.data;
	const double *vf_lb = c->vf_lb.data, *ee_lb = c->ee_lb.data;
	const int *tri = c->tris.data;
	const int(*edges)[2] = c->edges.data;
	unsigned char *pre = c->pre.data;
	int nvf = c->vf.count, nt = c->tris.count;
	const int *vs = c->vstamp;
	const unsigned char *touched = c->prim_touched.data;
	/* in locals: the stores through pre (char) could alias the task */
	const int first = pt->base + start, last = pt->base + end, clock0 = pt->clock0;
	const bool flags = pt->flags, incremental = pt->incremental;
	const double dmax = pt->dmax;
	for (int k = first; k < last; k++) {
		bool vertex_face = k < nvf;
		int q = vertex_face ? k : k - nvf, idx[4], split = vertex_face ? 1 : 2;
		int *state = vertex_face ? &vf_state[q] : &ee_state[q];
		double lb;
		pre[k] = 0;
		/* idle by the flags: found clear this substep, nothing of it stamped since the
		 * substep began (quick_outcome's idle, without the pair's vertices) */
		if (flags && *state >= 0 &&
		    !(vertex_face ? (vs[vf[q].a] > 0) | touched[vf[q].b] : touched[nt + ee[q].a] | touched[nt + ee[q].b]))
			continue;
		if (vertex_face) {
			const int *t = &tri[3 * vf[q].b];
			idx[0] = vf[q].a, idx[1] = t[0], idx[2] = t[1], idx[3] = t[2];
			lb = vf_lb[q];
		} else {
			const int *e0 = edges[ee[q].a], *e1 = edges[ee[q].b];
			idx[0] = e0[0], idx[1] = e0[1], idx[2] = e1[0], idx[3] = e1[1];
			lb = ee_lb[q];
		}
		if (incremental && *state < 0 && clear_by_any(lb, dmax)) {
			*state = clock0;
			continue;
		}
		int quick = incremental ? quick_outcome(c, idx, split, *state, lb) : 0;
		if (quick == 1)
			continue;
		bool far = quick == 2 || lb - relative_reach(c, idx, split) > 2.0 * CCD_GAP;
		stencil s;
		double n[3];
		if (!far && detect(c, vertex_face, vertex_face ? &vf[q] : &ee[q], pt->h, false, &s, n))
			pre[k] = PRE_ROOTS;
		else
			*state = clock0;
	}
}

/* The root finder over the pre-pass's candidates listed in c->roots: a hit is marked for
 * the walk, a clear candidate gets its state at once. */
static void roots_range(int start, int end, int worker, void *ctx)
{
	(void)worker;
	const prepass_task *pt = ctx;
	sim_collide *c = pt->c;
	const int *roots = c->roots.data;
	unsigned char *pre = c->pre.data;
	int nvf = c->vf.count;
	for (int r = start; r < end; r++) {
		int k = roots[r];
		bool vertex_face = k < nvf;
		const pair *p = vertex_face ? &((const pair *)c->vf.data)[k] : &((const pair *)c->ee.data)[k - nvf];
		stencil s;
		double n[3];
		if (detect(c, vertex_face, p, pt->h, true, &s, n)) {
			pre[k] = PRE_HIT;
		} else {
			pre[k] = 0;
			(vertex_face ? (int *)c->vf_state.data : (int *)c->ee_state.data)[vertex_face ? k : k - nvf] = pt->clock0;
		}
	}
}

/* The first mark of the pre-pass at or after k (total when none), whole words of zeros
 * skipped at once. */
static inline int next_mark(const unsigned char *pre, int k, int total)
{
	while (k + 8 <= total) {
		uint64_t word;
		memcpy(&word, pre + k, sizeof word);
		if (word)
			break;
		k += 8;
	}
	while (k < total && !pre[k])
		k++;
	return k;
}

/* Which of the candidates the pre-pass left to the root finder get it in parallel: those
 * with no vertex in an earlier such candidate.  The others would be computed for nothing
 * whenever that earlier one hits, since its impulse stamps the shared vertex and the walk
 * then tests them again; in a fold pressed onto the ball most of them are (on the
 * 129 x 129 drape the pre-pass ran the root finder 2.7 times as often as the serial
 * sweep).  They stay marked, and the walk decides them in turn, as the serial sweep
 * would.  Returns false out of memory. */
static bool pick_roots(sim_collide *c, int first, int total)
{
	const unsigned char *pre = c->pre.data;
	unsigned char *seen = c->seen.data;
	c->roots.count = 0;
	int nvf = c->vf.count;
	for (int pass = 0; pass < 2; pass++) {
		for (int k = first; k < total; k++) {
			k = next_mark(pre, k, total);
			if (k >= total)
				break;
			if (pre[k] != PRE_ROOTS)
				continue;
			int idx[4];
			bool vertex_face = k < nvf;
			pair_vertices(c, vertex_face, vertex_face ? &((const pair *)c->vf.data)[k] : &((const pair *)c->ee.data)[k - nvf],
			              idx);
			if (pass == 1) { /* the marks cleared for the next sweep */
				seen[idx[0]] = seen[idx[1]] = seen[idx[2]] = seen[idx[3]] = 0;
				continue;
			}
			if (!(seen[idx[0]] | seen[idx[1]] | seen[idx[2]] | seen[idx[3]])) {
				if (!reserve(&c->roots, sizeof(int), c->roots.count + 1))
					return false;
				((int *)c->roots.data)[c->roots.count++] = k;
			}
			seen[idx[0]] = seen[idx[1]] = seen[idx[2]] = seen[idx[3]] = 1;
		}
	}
	return true;
}

/* sweep_serial, its time counted as the walk's (what a pre-pass before it did stays the
 * pre-pass's). */
static int timed_serial(sim_collide *c, float h, bool respond, bool incremental, hit_fn on_hit, void *user,
                        int64_t t0)
{
	const int64_t t1 = sim_now_ns();
	c->prepass_ns += t1 - t0;
	int hits = sweep_serial(c, h, respond, incremental, on_hit, user);
	c->walk_ns += sim_now_ns() - t1;
	return hits;
}

/* Candidates per chunk of a parallel sweep, at least, and chunks at most (below).  A
 * sweep of fewer than three chunks' candidates keeps one pre-pass: the 33 x 33 pile's
 * (8 000 a step) lost more to the second hand-out than its walk won. */
#define SWEEP_CHUNK 4096
#define SWEEP_CHUNKS 8

/* The serial sweep's result with the candidates tested in parallel first, a chunk at a
 * time.  detect and the skips read only the candidate's four vertices (x0, vbar, disp,
 * vstamp) and its own state, and a sweep changes vertices only through impulses, which
 * stamp them: so a candidate none of whose vertices took an impulse since its chunk's
 * pre-pass began gets the pre-pass's result, and the in-order walk re-runs only the others
 * and the hits (which need their impulses now).  A clear candidate's state is the clock at
 * the pre-pass's start rather than at its turn, which decides every later staleness test
 * the same way: none of its vertices is stamped in between.  Until the first impulse in a
 * chunk the walk jumps from hit to hit.  The chunks: in a fold the first impulses of a
 * sweep come early and stamp vertices that most later candidates share, and the walk ran
 * them again one by one (on the 129 x 129 drape 4 800 a frame, on the calling thread
 * alone); a chunk's pre-pass starts from what the walk of the chunks before it left, so
 * only the impulses of its own chunk send its candidates back to the walk.  Bit for bit
 * sweep_serial's result. */
static int sweep(sim_collide *c, const sim_world *w, float h, bool respond, bool incremental, hit_fn on_hit,
                 void *user)
{
	int nvf = c->vf.count, total = c->vf.count + c->ee.count;
	int64_t t0 = sim_now_ns();
	if (!parallel(w) || total < 2 * PREPASS_RANGE || !reserve(&c->pre, 1, total))
		return timed_serial(c, h, respond, incremental, on_hit, user, t0);
	if (c->seen.capacity < c->nv) { /* all 0, as pick_roots leaves it */
		free(c->seen.data);
		c->seen.data = calloc((size_t)c->nv, 1);
		c->seen.capacity = c->seen.data ? c->nv : 0;
	}
	if (c->seen.capacity < c->nv)
		return timed_serial(c, h, respond, incremental, on_hit, user, t0); /* the same result */
	int chunks = total / SWEEP_CHUNK < 3 ? 1 : (total / SWEEP_CHUNK > SWEEP_CHUNKS ? SWEEP_CHUNKS : total / SWEEP_CHUNK);
	const int size = (total + chunks - 1) / chunks;
	c->sweep_chunks += (total + size - 1) / size - 1;
	int hits = 0;
	prepass_task task = {c, h, incremental, incremental && c->touch_valid, c->clock, largest_disp(c), 0};
	const pair *vf = c->vf.data, *ee = c->ee.data;
	int *vf_state = c->vf_state.data, *ee_state = c->ee_state.data;
	const double *vf_lb = c->vf_lb.data, *ee_lb = c->ee_lb.data;
	unsigned char *pre = c->pre.data;
	const int *tri = c->tris.data, *vs = c->vstamp;
	const int(*edges)[2] = c->edges.data;
	const int nt = c->tris.count;
	const bool flags = c->touch_valid;
	const unsigned char *touched_prim = c->prim_touched.data;
	for (int first = 0; first < total; first += size) {
		const int last = first + size < total ? first + size : total;
		if (first > 0)
			t0 = sim_now_ns();
		const int clock0 = c->clock;
		task.clock0 = clock0;
		task.base = first;
		sim_parallel_for(w, prepass_range, last - first, PREPASS_RANGE, &task);
		if (!pick_roots(c, first, last)) {
			/* out of memory: the rest serially, each candidate decided by sweep_pair
			 * alone (the pre-pass only set states a test would set the same way) */
			for (int k = first; k < last; k++)
				pre[k] = 1;
			c->roots.count = 0;
		}
		if (c->roots.count > 0)
			sim_parallel_for(w, roots_range, c->roots.count, ROOTS_RANGE, &task);
		const int64_t t1 = sim_now_ns();
		c->prepass_ns += t1 - t0;
		/* Once an impulse has stamped vertices, every later candidate of the chunk must be
		 * asked whether one of its vertices is among them: first through the flags (two
		 * reads beside the pair itself; no flag, no stamp since the substep began, so none
		 * since this chunk began), then, for a flagged one, through its four vertices'
		 * stamps. */
		for (int k = first; k < last; k++) {
			if (c->clock == clock0) { /* nothing touched yet: on to the next hit */
				k = next_mark(pre, k, last);
				if (k >= last)
					break;
			}
			bool vertex_face = k < nvf;
			int q = vertex_face ? k : k - nvf, idx[4];
			if (flags && !pre[k] &&
			    !(vertex_face ? (vs[vf[q].a] > clock0) | touched_prim[vf[q].b]
			                  : touched_prim[nt + ee[q].a] | touched_prim[nt + ee[q].b]))
				continue;
			if (vertex_face) {
				const int *t = &tri[3 * vf[q].b];
				idx[0] = vf[q].a, idx[1] = t[0], idx[2] = t[1], idx[3] = t[2];
			} else {
				const int *e0 = edges[ee[q].a], *e1 = edges[ee[q].b];
				idx[0] = e0[0], idx[1] = e0[1], idx[2] = e1[0], idx[3] = e1[1];
			}
			bool touched =
			    (vs[idx[0]] > clock0) | (vs[idx[1]] > clock0) | (vs[idx[2]] > clock0) | (vs[idx[3]] > clock0);
			if (!touched && !pre[k])
				continue;
			bool hit = vertex_face ? sweep_pair(c, true, &vf[q], idx, &vf_state[q], vf_lb[q], h, respond,
			                                    incremental, on_hit, user)
			                       : sweep_pair(c, false, &ee[q], idx, &ee_state[q], ee_lb[q], h, respond,
			                                    incremental, on_hit, user);
			if (hit) {
				hits++;
				/* the next chunks' pre-pass clears by the largest displacement */
				task.dmax = cover_disp(c, idx, task.dmax);
			}
		}
		c->walk_ns += sim_now_ns() - t1;
	}
	return hits;
}

/* ---- impact zones --------------------------------------------------------------------------- */

static int zone_find(int *parent, int i)
{
	while (parent[i] != i) {
		parent[i] = parent[parent[i]];
		i = parent[i];
	}
	return i;
}

static void zone_union(int *parent, int a, int b)
{
	a = zone_find(parent, a);
	b = zone_find(parent, b);
	if (a != b) /* the smaller index is the root: deterministic */
		parent[a > b ? a : b] = a < b ? a : b;
}

/* A hit merges its vertices' zones, and counts (user: an int), unless all four already
 * move as one rigid body: the linear path of a rigid motion (rotation below 90 degrees)
 * is an invertible affine map, so such a zone cannot pass through itself, and rounding
 * in the rotation can leave a pair it holds within the gap and approaching for ever. */
static void merge_hit(sim_collide *c, const stencil *s, void *user)
{
	int root = zone_find(c->zone, s->idx[0]);
	bool inside = c->solid[root];
	for (int k = 1; k < 4; k++)
		inside = inside && zone_find(c->zone, s->idx[k]) == root;
	if (inside)
		return;
	for (int k = 1; k < 4; k++)
		zone_union(c->zone, s->idx[0], s->idx[k]);
	c->solid[zone_find(c->zone, s->idx[0])] = 0;
	(*(int *)user)++;
}

/* Makes every zone of two or more vertices move rigidly: with an infinite-mass member
 * the zone moves with it (the mean of such members' velocities); otherwise with the
 * zone's linear and angular momentum, rotating exactly about its centre of mass. */
static void rigidify(sim_collide *c, float h, int *zones, int *largest)
{
	int nv = c->nv;
	/* members of each root, in index order */
	int *count = calloc((size_t)nv, sizeof(int));
	if (!count)
		return;
	for (int i = 0; i < nv; i++)
		count[zone_find(c->zone, i)]++;
	/* every vertex whose vbar changes is stamped (and its displacement renewed), so that
	 * the next detection round tests again exactly the candidates it can change */
	c->clock++; /* one stamp for every vertex the zones move */
	*zones = 0;
	for (int root = 0; root < nv; root++) {
		if (count[root] < 2 || zone_find(c->zone, root) != root)
			continue;
		(*zones)++;
		*largest = count[root] > *largest ? count[root] : *largest;
		double M = 0.0, xc[3] = {0, 0, 0}, vc[3] = {0, 0, 0}, fixed_v[3] = {0, 0, 0};
		int fixed = 0;
		for (int i = root; i < nv; i++) {
			if (zone_find(c->zone, i) != root)
				continue;
			float w = c->x0[i][3];
			if (w == 0.0f) {
				fixed++;
				for (int k = 0; k < 3; k++)
					fixed_v[k] += c->vbar[i][k];
				continue;
			}
			double m = 1.0 / w;
			M += m;
			for (int k = 0; k < 3; k++) {
				xc[k] += m * c->x0[i][k];
				vc[k] += m * c->vbar[i][k];
			}
		}
		c->solid[root] = 0;
		if (fixed) {
			for (int i = root; i < nv; i++)
				if (zone_find(c->zone, i) == root && c->x0[i][3] != 0.0f) {
					for (int k = 0; k < 3; k++)
						c->vbar[i][k] = (float)(fixed_v[k] / fixed);
					stamp_vertex(c, i, h);
				}
			continue;
		}
		for (int k = 0; k < 3; k++) {
			xc[k] /= M;
			vc[k] /= M;
		}
		double L[3] = {0, 0, 0}, I[3][3] = {{0}};
		for (int i = root; i < nv; i++) {
			if (zone_find(c->zone, i) != root)
				continue;
			double m = 1.0 / c->x0[i][3], r[3], u[3], rxu[3];
			for (int k = 0; k < 3; k++) {
				r[k] = c->x0[i][k] - xc[k];
				u[k] = c->vbar[i][k] - vc[k];
			}
			cross3(r, u, rxu);
			double r2 = r[0] * r[0] + r[1] * r[1] + r[2] * r[2];
			for (int a = 0; a < 3; a++) {
				L[a] += m * rxu[a];
				for (int b = 0; b < 3; b++)
					I[a][b] += m * ((a == b ? r2 : 0.0) - r[a] * r[b]);
			}
		}
		/* omega = I^-1 L; a singular I (collinear members) turns about what it can:
		 * solve with a tiny regularisation relative to the trace. */
		double tr = I[0][0] + I[1][1] + I[2][2], eps = 1e-9 * (tr > 0.0 ? tr : 1.0);
		for (int a = 0; a < 3; a++)
			I[a][a] += eps;
		double det = I[0][0] * (I[1][1] * I[2][2] - I[1][2] * I[2][1]) - I[0][1] * (I[1][0] * I[2][2] - I[1][2] * I[2][0]) +
		             I[0][2] * (I[1][0] * I[2][1] - I[1][1] * I[2][0]);
		double omega[3] = {0, 0, 0};
		if (fabs(det) > 0.0) {
			double inv[3][3];
			inv[0][0] = (I[1][1] * I[2][2] - I[1][2] * I[2][1]) / det;
			inv[0][1] = (I[0][2] * I[2][1] - I[0][1] * I[2][2]) / det;
			inv[0][2] = (I[0][1] * I[1][2] - I[0][2] * I[1][1]) / det;
			inv[1][0] = (I[1][2] * I[2][0] - I[1][0] * I[2][2]) / det;
			inv[1][1] = (I[0][0] * I[2][2] - I[0][2] * I[2][0]) / det;
			inv[1][2] = (I[0][2] * I[1][0] - I[0][0] * I[1][2]) / det;
			inv[2][0] = (I[1][0] * I[2][1] - I[1][1] * I[2][0]) / det;
			inv[2][1] = (I[0][1] * I[2][0] - I[0][0] * I[2][1]) / det;
			inv[2][2] = (I[0][0] * I[1][1] - I[0][1] * I[1][0]) / det;
			for (int a = 0; a < 3; a++)
				omega[a] = inv[a][0] * L[0] + inv[a][1] * L[1] + inv[a][2] * L[2];
		}
		/* Rodrigues rotation by h omega: the end positions are a rigid motion of the
		 * start, and the linear path between them an invertible affine map for
		 * rotations below 180 degrees, so the zone cannot pass through itself. */
		double angle = h * norm3(omega), axis[3] = {0, 0, 0};
		if (angle > 0.0)
			for (int k = 0; k < 3; k++)
				axis[k] = omega[k] * h / angle;
		double cs = cos(angle), sn = sin(angle);
		c->solid[root] = angle < 1.5; /* below 90 degrees */
		for (int i = root; i < nv; i++) {
			if (zone_find(c->zone, i) != root)
				continue;
			double r[3], kxr[3], rot[3];
			for (int k = 0; k < 3; k++)
				r[k] = c->x0[i][k] - xc[k];
			cross3(axis, r, kxr);
			double kr = axis[0] * r[0] + axis[1] * r[1] + axis[2] * r[2];
			for (int k = 0; k < 3; k++)
				rot[k] = r[k] * cs + kxr[k] * sn + axis[k] * kr * (1.0 - cs);
			for (int k = 0; k < 3; k++)
				c->vbar[i][k] = (float)(vc[k] + (rot[k] - r[k]) / h);
			stamp_vertex(c, i, h);
		}
	}
	free(count);
}

/* ---- exact-distance obstacles --------------------------------------------------------------- */

/* One free cloth vertex against one obstacle (obstacle_pass); returns the changes made. */
typedef struct obstacle_motion {
	const sim_obstacle *ob;
	int index;
	vec3 p0, p1;
	versor q0, q1;
	double m0[3][3], m1[3][3]; /* the rotations at the start and the end */
	float h;
	bool still;       /* no velocity, no spin: every pose of the substep is the start's */
	bool plain_sphere; /* a sphere whose frames at both ends are exactly the identity */
	bool no_spin;     /* no spin: relative to the obstacle, a linear path stays linear */
} obstacle_motion;

/* The obstacle's distance at an intermediate pose: a static or purely translating
 * obstacle keeps its orientation, and then the start's rotation matrix serves (the same
 * bits as computing it again). */
static float distance_at(const obstacle_motion *om, const vec3 position, const versor orientation, const vec3 p,
                         vec3 out_normal)
{
	if (memcmp(orientation, om->q0, sizeof(versor)) == 0)
		return sim_obstacle_distance_in(om->ob, position, (const double(*)[3])om->m0, p, out_normal);
	return sim_obstacle_distance(om->ob, position, orientation, p, out_normal);
}

/* The obstacle's distance to p at time t h of the substep. */
static float distance_when(const obstacle_motion *om, float t, const vec3 p, vec3 out_normal)
{
	if (om->still)
		return sim_obstacle_distance_in(om->ob, om->p0, (const double(*)[3])om->m0, p, out_normal);
	vec3 pp;
	versor qt;
	sim_obstacle_pose_at(om->ob, t * om->h, pp, qt);
	return distance_at(om, pp, qt, p, out_normal);
}

/* For a sphere, the earliest t in [0, 1] at which the path a -> b comes within sep of its
 * surface, in closed form: its centre moves linearly over the substep (and its spin
 * does not change its distances), so relative to the centre the path is a line and the
 * time is the smaller root of a quadratic (the bisection below asks for 24 or more
 * distances, one after the other, and on a cloth resting on a ball that was most of the
 * contact search).  Returns false when it cannot tell (another shape, or rounding that
 * disagrees with the distances found at the ends: the bisection decides then); *t = -1
 * when the path stays out. */
static bool sphere_entry(const obstacle_motion *om, const vec3 a, const vec3 b, float sep, bool ends_below, float *t)
{
	if (om->ob->def.shape != SIM_SHAPE_SPHERE)
		return false;
	double p[3], d[3], R = (double)om->ob->def.radius + (double)sep;
	for (int k = 0; k < 3; k++) {
		p[k] = (double)a[k] - (double)om->p0[k];
		d[k] = ((double)b[k] - (double)om->p1[k]) - p[k];
	}
	/* |p + t d|^2 = R^2: A t^2 + 2 B t + C = 0, C > 0 outside at the start */
	double A = d[0] * d[0] + d[1] * d[1] + d[2] * d[2], B = p[0] * d[0] + p[1] * d[1] + p[2] * d[2];
	double C = p[0] * p[0] + p[1] * p[1] + p[2] * p[2] - R * R, disc = B * B - A * C;
	if (!(C > 0.0) || !(A > 0.0))
		return false;
	if (B >= 0.0 || disc < 0.0) { /* moving away, or passing by */
		if (ends_below)
			return false;
		*t = -1.0f;
		return true;
	}
	double root = C / (-B + sqrt(disc)); /* the smaller root, without cancellation */
	if (root > 1.0) {
		if (ends_below)
			return false;
		*t = -1.0f;
		return true;
	}
	*t = (float)root;
	return true;
}

static int obstacle_vertex(sim_collide *c, const obstacle_motion *om, int i)
{
	const sim_obstacle *ob = om->ob;
	const float h = om->h;
	const float *p0 = om->p0, *p1 = om->p1;
	int touched = 0;
	float sep = c->sep[i] + ob->def.thickness;
	vec3 a, b, n0, n1;
	glm_vec3_copy(c->x0[i], a);
	for (int j = 0; j < 3; j++)
		b[j] = c->x0[i][j] + h * c->vbar[i][j];
	float travel = glm_vec3_distance(a, b) + glm_vec3_distance((float *)p0, (float *)p1);
	/* A ball needs only the distances, not the normals and rotations (the same values):
	 * most of a cloth is far from it, and of a cloth lying on it the normal at the start
	 * is needed only where the start is too close, the one at the end not yet (it is
	 * taken again after the response). */
	float d0, d1;
	if (om->plain_sphere) {
		d0 = sim_obstacle_sphere_distance(ob, p0, a);
		d1 = sim_obstacle_sphere_distance(ob, p1, b);
		if (d0 < sep)
			sim_obstacle_distance_in(ob, p0, (const double(*)[3])om->m0, a, n0);
	} else {
		d0 = sim_obstacle_distance_in(ob, p0, (const double(*)[3])om->m0, a, n0);
		d1 = sim_obstacle_distance_in(ob, p1, (const double(*)[3])om->m1, b, n1);
	}
	if (d0 > sep + travel && d1 > sep)
		return 0; /* cannot have come near: distance is 1-Lipschitz */
	if (c->log)
		sim_debug_record(c->log, SIM_PAIR_BROAD_PROXIMITY, SIM_PAIR_VERTEX_OBSTACLE, i, om->index, -1, -1);
	/* earliest t with distance < sep: bisection on the pose-interpolated path */
	float t_hit = -1.0f;
	vec3 n;
	if (d0 < sep) {
		t_hit = 0.0f;
		glm_vec3_copy(n0, n);
	} else if (sphere_entry(om, a, b, sep, d1 < sep, &t_hit)) {
		if (t_hit < 0.0f)
			return 0;
		vec3 pt;
		for (int j = 0; j < 3; j++)
			pt[j] = a[j] + t_hit * (b[j] - a[j]);
		distance_when(om, t_hit, pt, n);
	} else {
		float lo = 0.0f, hi = 1.0f;
		bool below = d1 < sep;
		if (!below && om->no_spin && om->ob->def.shape == SIM_SHAPE_CAPSULE) {
			/* relative to a capsule that does not spin the path is a line, and the distance
			 * to a convex set is convex along a line: its minimum by golden section, and the
			 * path dips below sep inside the step exactly when it does */
			const float g = 0.381966f;
			float l = 0.0f, r = 1.0f, m1 = g, m2 = 1.0f - g;
			vec3 pt;
			for (int j = 0; j < 3; j++)
				pt[j] = a[j] + m1 * (b[j] - a[j]);
			float f1 = distance_when(om, m1, pt, n1);
			for (int j = 0; j < 3; j++)
				pt[j] = a[j] + m2 * (b[j] - a[j]);
			float f2 = distance_when(om, m2, pt, n1);
			for (int it = 0; it < 40 && f1 >= sep && f2 >= sep; it++) {
				if (f1 < f2) {
					r = m2, m2 = m1, f2 = f1, m1 = l + g * (r - l);
					for (int j = 0; j < 3; j++)
						pt[j] = a[j] + m1 * (b[j] - a[j]);
					f1 = distance_when(om, m1, pt, n1);
				} else {
					l = m1, m1 = m2, f1 = f2, m2 = r - g * (r - l);
					for (int j = 0; j < 3; j++)
						pt[j] = a[j] + m2 * (b[j] - a[j]);
					f2 = distance_when(om, m2, pt, n1);
				}
			}
			if (f1 < sep || f2 < sep) {
				below = true;
				hi = f1 < sep ? m1 : m2;
			} else {
				return 0;
			}
		}
		if (!below) { /* a spinning obstacle: coarse samples */
			for (int sample = 1; sample < 8 && !below; sample++) {
				float t = (float)sample / 8.0f;
				vec3 pt, nn;
				for (int j = 0; j < 3; j++)
					pt[j] = a[j] + t * (b[j] - a[j]);
				if (distance_when(om, t, pt, nn) < sep) {
					below = true;
					hi = t;
				}
			}
		}
		if (!below)
			return 0;
		for (int it = 0; it < 24; it++) {
			float mid = 0.5f * (lo + hi);
			vec3 pt, nn;
			for (int j = 0; j < 3; j++)
				pt[j] = a[j] + mid * (b[j] - a[j]);
			if (distance_when(om, mid, pt, nn) < sep)
				hi = mid;
			else
				lo = mid;
		}
		t_hit = lo;
		vec3 pt;
		for (int j = 0; j < 3; j++)
			pt[j] = a[j] + t_hit * (b[j] - a[j]);
		distance_when(om, t_hit, pt, n);
	}
	/* relative velocity at the hit, against the obstacle's material point */
	vec3 at, pp, vo;
	versor qt;
	for (int j = 0; j < 3; j++)
		at[j] = a[j] + t_hit * (b[j] - a[j]);
	sim_obstacle_pose_at(ob, t_hit * h, pp, qt);
	sim_obstacle_point_velocity(ob, pp, at, vo);
	vec3 vr;
	glm_vec3_sub(c->vbar[i], vo, vr);
	float vn = glm_vec3_dot(vr, n);
	if (vn < 0.0f) {
		vec3 vt;
		for (int j = 0; j < 3; j++)
			vt[j] = vr[j] - vn * n[j];
		float vt_len = glm_vec3_norm(vt);
		float mu = c->pair_mu ? body_pair_mu(c, ((const int *)c->body.data)[i], c->body_objects + om->index) : NAN;
		if (isnan(mu))
			mu = sqrtf(c->mu[i] * ob->def.friction);
		float cut = vt_len > 0.0f ? fminf(mu * -vn / vt_len, 1.0f) : 0.0f;
		for (int j = 0; j < 3; j++)
			c->vbar[i][j] = vo[j] + (1.0f - cut) * vt[j];
		touched++;
	}
	/* whatever remains, the vertex must end at least sep outside */
	for (int j = 0; j < 3; j++)
		b[j] = c->x0[i][j] + h * c->vbar[i][j];
	d1 = sim_obstacle_distance_in(ob, p1, (const double(*)[3])om->m1, b, n1);
	if (d1 < sep) {
		/* 1e-6 beyond, so float rounding of the end position cannot undo it */
		float push = sep - d1 + 1e-6f;
		for (int j = 0; j < 3; j++)
			c->vbar[i][j] += push * n1[j] / h;
		touched++;
	}
	if (touched && c->log)
		sim_debug_record(c->log, SIM_PAIR_PROXIMITY, SIM_PAIR_VERTEX_OBSTACLE, i, om->index, -1, -1);
	return touched;
}

/* Vertices per block of the obstacle pass. */
#define OBSTACLE_BLOCK 512

typedef struct obstacle_task {
	sim_collide *c;
	const obstacle_motion *om;
	int n;            /* cloth vertices */
	bool first, last; /* the pass's first and last obstacle */
	bool again;       /* an earlier pass of this substep left obst_clean and vbar_obst */
	bool save;        /* keep vbar in vbar_pre for the vertices not skipped (hold_obstacle_moves) */
	bool vertices;    /* test the vertices (a box leaves them to its triangles and surface_stage) */
	int *touched;     /* per block */
} obstacle_task;

/* One obstacle against cloth vertices [first, last).  A vertex the substep's last pass
 * left alone (obst_clean) whose mean velocity has not changed since is skipped: its
 * inputs are the same, so it would be left alone again; after the sweeps of the
 * 129 x 129 drape, most vertices of the cloth lying on the ball are. */
static int obstacle_block(const obstacle_task *t, int first, int last)
{
	sim_collide *c = t->c;
	int touched = 0;
	for (int i = first; i < last; i++) {
		if (t->first) {
			c->obst_skip[i] = t->again && c->obst_clean[i] &&
			                  memcmp(c->vbar[i], c->vbar_obst[i], sizeof(float) * 3) == 0;
			if (!c->obst_skip[i])
				c->obst_clean[i] = c->x0[i][3] != 0.0f;
		}
		if (c->obst_skip[i])
			continue;
		if (t->save && t->first)
			glm_vec4_copy(c->vbar[i], c->vbar_pre[i]);
		if (c->x0[i][3] != 0.0f && t->vertices) {
			int k = obstacle_vertex(c, t->om, i);
			c->obst_clean[i] &= k == 0;
			touched += k;
		}
		if (t->last)
			glm_vec4_copy(c->vbar[i], c->vbar_obst[i]);
	}
	return touched;
}

static void obstacle_range(int start, int end, int worker, void *ctx)
{
	(void)worker;
	obstacle_task *t = ctx;
	for (int blk = start; blk < end; blk++) {
		int first = blk * OBSTACLE_BLOCK, last = first + OBSTACLE_BLOCK < t->n ? first + OBSTACLE_BLOCK : t->n;
		t->touched[blk] = obstacle_block(t, first, last);
	}
}

/* The cloth's surface against a sphere, capsule or box: each triangle near it
 * (surface_stage) must keep its separation from it at its nearest point, not only at its
 * vertices, or a coarse cloth drapes over a small ball with the ball through its
 * triangles.  Like obstacle_vertex, but for the triangle's nearest point, whose velocity is
 * its vertices' interpolated with the weights w: a change dv of that point is given to
 * the vertices as dv_i = w_i m_i^-1 dv / sum_j w_j^2 m_j^-1 (the impulse that changes the
 * interpolated velocity by exactly dv), so pinned and held vertices take none. */

/* The triangle's distance to the obstacle at time t h of the substep (t = 0 or 1 use the
 * poses at the ends as obstacle_vertex does), its nearest point's weights and normal. */
static double surface_distance(const sim_collide *c, const obstacle_motion *om, const int v[3], float t, double w[3],
                               double n[3], vec3 at_position)
{
	double x[3][3];
	for (int j = 0; j < 3; j++)
		for (int k = 0; k < 3; k++)
			x[j][k] = t == 0.0f ? (double)c->x0[v[j]][k] : (double)(c->x0[v[j]][k] + t * om->h * c->vbar[v[j]][k]);
	if (om->still || t == 0.0f) {
		glm_vec3_copy((float *)om->p0, at_position);
		return sim_obstacle_triangle_distance(om->ob, om->p0, (const double(*)[3])om->m0, x, w, n);
	}
	if (t == 1.0f) {
		glm_vec3_copy((float *)om->p1, at_position);
		return sim_obstacle_triangle_distance(om->ob, om->p1, (const double(*)[3])om->m1, x, w, n);
	}
	versor q;
	double m[3][3];
	sim_obstacle_pose_at(om->ob, t * om->h, at_position, q);
	sim_obstacle_frame(q, m);
	return sim_obstacle_triangle_distance(om->ob, at_position, (const double(*)[3])m, x, w, n);
}

/* Whether the triangle at time t h is provably more than sep from the sphere, from its
 * vertices alone: for a point P = sum w_i x_i of the triangle and the centre c,
 * |P - c|^2 = sum w_i |x_i - c|^2 - sum_{i<j} w_i w_j |x_i - x_j|^2, at least the least
 * |x_i - c|^2 less a third of the longest edge squared.  Most of a fine cloth lying on a
 * ball is decided so, without the nearest point. */
static bool sphere_clear(const sim_collide *c, const obstacle_motion *om, const int v[3], float t, double sep)
{
	double x[3][3], ctr[3], least = INFINITY, edge = 0.0;
	vec3 p;
	versor q;
	if (t == 0.0f || om->still)
		glm_vec3_copy((float *)om->p0, p);
	else if (t == 1.0f)
		glm_vec3_copy((float *)om->p1, p);
	else
		sim_obstacle_pose_at(om->ob, t * om->h, p, q);
	for (int k = 0; k < 3; k++)
		ctr[k] = (double)p[k];
	for (int j = 0; j < 3; j++) {
		double d2 = 0.0;
		for (int k = 0; k < 3; k++) {
			x[j][k] = t == 0.0f ? (double)c->x0[v[j]][k] : (double)(c->x0[v[j]][k] + t * om->h * c->vbar[v[j]][k]);
			d2 += (x[j][k] - ctr[k]) * (x[j][k] - ctr[k]);
		}
		least = fmin(least, d2);
	}
	for (int j = 0; j < 3; j++) {
		double e2 = 0.0;
		for (int k = 0; k < 3; k++)
			e2 += (x[j][k] - x[(j + 1) % 3][k]) * (x[j][k] - x[(j + 1) % 3][k]);
		edge = fmax(edge, e2);
	}
	double reach = (double)om->ob->def.radius + sep;
	/* a relative 1e-9 to spare covers the rounding of these sums many times over */
	return least - edge / 3.0 > reach * reach * (1.0 + 1e-9);
}

/* Gives the triangle's nearest point (weights w) the velocity change dv; false when no
 * vertex of it can move. */
static bool surface_impulse(sim_collide *c, const obstacle_task *task, const int v[3], const double w[3],
                            const double dv[3], int *touched_vertices)
{
	double den = 0.0;
	for (int j = 0; j < 3; j++)
		den += w[j] * w[j] * (double)c->x0[v[j]][3];
	if (!(den > 0.0))
		return false;
	for (int j = 0; j < 3; j++) {
		int i = v[j];
		double s = w[j] * (double)c->x0[i][3] / den;
		if (s == 0.0)
			continue;
		if (c->obst_skip[i]) {
			/* its inputs were unchanged, so the vertex passes skipped it: from here on it is
			 * one the pass changes, for hold_obstacle_moves and the next pass */
			c->obst_skip[i] = 0;
			if (task->save)
				glm_vec4_copy(c->vbar[i], c->vbar_pre[i]);
		}
		for (int k = 0; k < 3; k++)
			c->vbar[i][k] += (float)(s * dv[k]);
		c->obst_clean[i] = 0;
		c->surf_out[i] = 0; /* its path changed and it is no longer skipped */
		glm_vec4_copy(c->vbar[i], c->vbar_obst[i]);
		(*touched_vertices)++;
	}
	return true;
}

/* One triangle against the obstacle; returns the changes made. */
static int surface_triangle_pass(sim_collide *c, const obstacle_task *task, const int v[3], double travel, int *moved)
{
	const obstacle_motion *om = task->om;
	const sim_obstacle *ob = om->ob;
	const float h = om->h;
	double sep = 0.0;
	for (int j = 0; j < 3; j++)
		sep = fmax(sep, (double)c->sep[v[j]]);
	sep += (double)ob->def.thickness;
	double w[3], n[3];
	vec3 pos;
	/* The first of N + 1 evenly spaced times at which the triangle is within sep, N such
	 * that between two of them it moves (relative to the obstacle) by at most R = sep plus
	 * the radius, so at any time it is within R / 2 of where it was at a sample: a
	 * triangle clear at every sample comes no nearer than R / 2 to the centre or the
	 * axis, and the obstacle cannot pass through it within the substep. */
	double reach = sep + (ob->def.shape == SIM_SHAPE_BOX ? 0.0 : (double)ob->def.radius);
	int samples = travel > reach ? (int)ceil(travel / reach) : 1;
	samples = samples > 16 ? 16 : samples;
	int hit = -1;
	double d = 0.0;
	for (int k = 0; k <= samples && hit < 0; k++) {
		float t = k == samples ? 1.0f : (float)k / (float)samples;
		if (ob->def.shape == SIM_SHAPE_SPHERE && sphere_clear(c, om, v, t, sep))
			continue;
		d = surface_distance(c, om, v, t, w, n, pos);
		if (d < sep)
			hit = k;
	}
	if (hit < 0)
		return 0;
	int changes = 0;
	float t_hit = hit == samples ? 1.0f : (float)hit / (float)samples;
	/* the nearest point's velocity relative to the obstacle's material point there */
	vec3 at, vo;
	for (int k = 0; k < 3; k++) {
		double p = 0.0;
		for (int j = 0; j < 3; j++)
			p += w[j] * (double)(c->x0[v[j]][k] + t_hit * h * c->vbar[v[j]][k]);
		at[k] = (float)p;
	}
	sim_obstacle_point_velocity(ob, pos, at, vo);
	double vr[3], vn = 0.0;
	for (int k = 0; k < 3; k++) {
		vr[k] = w[0] * (double)c->vbar[v[0]][k] + w[1] * (double)c->vbar[v[1]][k] +
		        w[2] * (double)c->vbar[v[2]][k] - (double)vo[k];
		vn += vr[k] * n[k];
	}
	if (vn < 0.0) {
		double vt[3], vt_len = 0.0;
		for (int k = 0; k < 3; k++) {
			vt[k] = vr[k] - vn * n[k];
			vt_len += vt[k] * vt[k];
		}
		vt_len = sqrt(vt_len);
		int owner_vertex = v[0];
		float mu = c->pair_mu ? body_pair_mu(c, ((const int *)c->body.data)[owner_vertex], c->body_objects + om->index)
		                      : NAN;
		if (isnan(mu))
			mu = sqrtf(c->mu[owner_vertex] * ob->def.friction);
		double cut = vt_len > 0.0 ? fmin((double)mu * -vn / vt_len, 1.0) : 0.0;
		double dv[3];
		for (int k = 0; k < 3; k++)
			dv[k] = -vn * n[k] - cut * vt[k];
		if (surface_impulse(c, task, v, w, dv, moved))
			changes++;
	}
	/* whatever remains, the nearest point must end at least sep outside (1e-6 beyond, as
	 * for a vertex, so that the rounding of the end positions cannot undo it) */
	d = surface_distance(c, om, v, 1.0f, w, n, pos);
	if (d < sep) {
		double dv[3];
		for (int k = 0; k < 3; k++)
			dv[k] = (sep - d + 1e-6) * n[k] / (double)h;
		if (surface_impulse(c, task, v, w, dv, moved))
			changes++;
	}
	return changes;
}

/* Sweeps over the cloth triangles near the obstacle, in triangle order (Gauss-Seidel: the
 * triangles share vertices), until one changes nothing or after SURFACE_SWEEPS.  A
 * triangle whose three vertices the vertex passes skip has the inputs it had when the
 * last pass left it alone, and is skipped too.  The candidates: the triangles whose box
 * over the substep meets the obstacle's, grown by the separation. */
static int surface_stage(sim_collide *c, const sim_world *w, const obstacle_task *task)
{
	const obstacle_motion *om = task->om;
	const sim_obstacle *ob = om->ob;
	const float h = om->h;
	float lo[3], hi[3], r = 0.0f;
	if (ob->def.shape == SIM_SHAPE_SPHERE)
		r = ob->def.radius;
	else if (ob->def.shape == SIM_SHAPE_CAPSULE)
		r = ob->def.half_height + ob->def.radius;
	else
		r = glm_vec3_norm((float *)ob->def.half_extents);
	float max_sep = 0.0f;
	for (int i = 0; i < w->n; i++)
		max_sep = c->sep[i] > max_sep ? c->sep[i] : max_sep;
	r += max_sep + ob->def.thickness;
	r *= 1.0f + 1e-5f; /* a ball about its position holds the solid and the separation */
	float spin = glm_vec3_norm((float *)ob->def.angular_velocity) * h * (r - max_sep - ob->def.thickness);
	for (int k = 0; k < 3; k++) {
		lo[k] = fminf(om->p0[k], om->p1[k]) - r;
		hi[k] = fmaxf(om->p0[k], om->p1[k]) + r;
	}
	double obstacle_travel = (double)glm_vec3_distance((float *)om->p0, (float *)om->p1) + (double)spin;
	/* A triangle's box misses the obstacle's exactly when all three of its vertices' paths
	 * lie beyond one same face of it: a mask per vertex, and an and per triangle, instead
	 * of a box per triangle (a fine cloth has twice as many triangles as vertices).  Two
	 * more bits leave out, the same way, the triangles of three kinematic or held vertices
	 * and those of three vertices the vertex passes skip. */
	bool any = false;
	for (int i = 0; i < w->n; i++) {
		const float *a = c->x0[i], *d = c->vbar[i];
		unsigned m = 0;
		for (int k = 0; k < 3; k++) {
			float b = a[k] + h * d[k];
			m |= (unsigned)(a[k] < lo[k] && b < lo[k]) << (2 * k);
			m |= (unsigned)(a[k] > hi[k] && b > hi[k]) << (2 * k + 1);
		}
		m |= (unsigned)(a[3] == 0.0f) << SURF_FIXED;
		m |= (unsigned)(c->obst_skip[i] != 0) << SURF_SKIPPED;
		any = any || !c->obst_skip[i];
		c->surf_out[i] = (unsigned char)m;
	}
	if (!any)
		return 0; /* every triangle has three skipped vertices */
	int changes = 0;
	for (int sweep_no = 0; sweep_no < SURFACE_SWEEPS; sweep_no++) {
		int moved = 0;
		for (int t = 0; t < w->triangle_count; t++) {
			const int *v = w->triangles + 3 * (size_t)t;
			if (c->surf_out[v[0]] & c->surf_out[v[1]] & c->surf_out[v[2]])
				continue;
			double disp = 0.0;
			for (int j = 0; j < 3; j++) {
				const float *a = c->x0[v[j]], *d = c->vbar[v[j]];
				double l2 = 0.0;
				for (int k = 0; k < 3; k++) {
					float b = a[k] + h * d[k];
					l2 += (double)(b - a[k]) * (double)(b - a[k]);
				}
				disp = fmax(disp, sqrt(l2));
			}
			changes += surface_triangle_pass(c, task, v, disp + obstacle_travel, &moved);
		}
		if (!moved)
			break;
	}
	return changes;
}

/* The obstacles whose solid the cloth's triangles are kept out of by surface_stage; a
 * plane needs no more than its triangles, since a triangle is nearest to it at a vertex,
 * and a mesh has only its triangles. */
static bool surface_shape(const sim_obstacle *ob)
{
	return ob->def.shape == SIM_SHAPE_SPHERE || ob->def.shape == SIM_SHAPE_CAPSULE ||
	       ob->def.shape == SIM_SHAPE_BOX;
}

/* Keeps every free cloth vertex outside spheres and capsules over its whole
 * path: the first time its distance falls below the separation, its velocity relative
 * to the obstacle loses the normal approach and friction acts on the rest; a vertex
 * that would end too close is moved out along the normal.  Each vertex is on its own,
 * so blocks of vertices run in parallel (but in order while the debug log records).
 * With again, only the vertices whose mean velocity changed since the substep's last
 * pass, or that it changed (obstacle_block).  Then, for spheres, capsules and boxes, the
 * triangles near them (surface_stage, on the calling thread).  Returns the number of
 * changes made. */
static int obstacle_pass(sim_collide *c, const sim_world *w, float h, bool again, bool save)
{
	int touched = 0;
	int nblocks = (w->n + OBSTACLE_BLOCK - 1) / OBSTACLE_BLOCK;
	int counts_local[64], *counts = nblocks <= 64 ? counts_local : malloc(sizeof(int) * (size_t)nblocks);
	int last_k = -1, first_k = -1;
	for (int k = 0; k < w->obstacle_count; k++) {
		if (surface_shape(&w->obstacles[k])) {
			first_k = first_k < 0 ? k : first_k;
			last_k = k;
		}
	}
	for (int k = 0; k < w->obstacle_count; k++) {
		const sim_obstacle *ob = &w->obstacles[k];
		if (!surface_shape(ob))
			continue;
		obstacle_motion om = {.ob = ob, .index = k, .h = h, .still = true, .no_spin = true};
		for (int j = 0; j < 3; j++)
			om.no_spin &= ob->def.angular_velocity[j] == 0.0f;
		for (int j = 0; j < 3; j++)
			om.still &= om.no_spin && ob->def.velocity[j] == 0.0f;
		glm_vec3_copy((float *)ob->position, om.p0);
		glm_vec4_copy((float *)ob->orientation, om.q0);
		sim_obstacle_pose_at(ob, h, om.p1, om.q1);
		sim_obstacle_frame(om.q0, om.m0);
		sim_obstacle_frame(om.q1, om.m1);
		static const double identity[3][3] = {{1.0, 0.0, 0.0}, {0.0, 1.0, 0.0}, {0.0, 0.0, 1.0}};
		om.plain_sphere = ob->def.shape == SIM_SHAPE_SPHERE && memcmp(om.m0, identity, sizeof identity) == 0 &&
		                  memcmp(om.m1, identity, sizeof identity) == 0;
		/* the debug log records every vertex that comes near, so it skips none */
		obstacle_task task = {c,    &om, w->n, k == first_k, k == last_k, again && !c->log, save,
		                      !sim_obstacle_has_triangles(ob), counts};
		if (c->log || !counts) {
			touched += obstacle_block(&task, 0, w->n);
		} else {
			sim_parallel_for(w, obstacle_range, nblocks, 1, &task);
			for (int blk = 0; blk < nblocks; blk++)
				touched += counts[blk];
		}
		/* the triangles after the vertices: a vertex the vertex test moved out is one
		 * corner fewer for the triangles to push */
		touched += surface_stage(c, w, &task);
	}
	if (counts != counts_local)
		free(counts);
	return touched;
}

/* The collision sweeps with responses, up to the world's iteration count, then a last
 * sweep that only looks, and the fail-safe (rigid impact zones, grown until nothing
 * collides) if it still finds a hit.  Each sweep tests the candidates whose vertices
 * took an impulse since they were found clear (the stamps), after a refresh for the
 * vertices whose paths left their boxes; the first refresh asks only the vertices stamped
 * after since (-1: all; mark_escaped), every later one those the sweep before it
 * stamped.  Returns the hits left (0 unless the fail-safe ran out of rounds), or -1 out
 * of memory. */
static int resolve_collisions(sim_collide *c, const sim_world *w, float h, float pad, int since, sim_stats *st)
{
	int hits = 0;
	for (int it = 0; it <= w->def.collision_iterations; it++) {
		if (!refresh_candidates(c, w, h, pad, -1.0f, since, st))
			return -1;
		since = c->clock; /* from here on the sweep's impulses stamp what they change */
		/* the first sweep tests the whole list, later ones what refreshes added too */
		if (c->log)
			log_candidates(c, SIM_PAIR_BROAD_COLLISION, it ? c->new_vf : 0, it ? c->new_ee : 0);
		int64_t t1 = sim_now_ns();
		bool respond = it < w->def.collision_iterations; /* the last sweep only looks */
		hits = sweep(c, w, h, respond, true, NULL, NULL);
		st->stage_us[SIM_STAGE_CCD] += (double)(sim_now_ns() - t1) * 1e-3;
		if (respond)
			st->collisions += hits;
		if (!hits)
			return 0;
	}
	int64_t t2 = sim_now_ns();
	for (int i = 0; i < c->nv; i++) {
		c->zone[i] = i;
		c->solid[i] = 0;
	}
	int zones = 0;
	for (int round = 0; round < FAILSAFE_ROUNDS && hits; round++) {
		hits = 0;
		/* incremental: a candidate found clear whose vertices rigidify has not
		 * touched since would be found clear again */
		sweep(c, w, h, false, true, merge_hit, &hits);
		if (!hits)
			break;
		rigidify(c, h, &zones, &st->largest_zone);
		if (!refresh_candidates(c, w, h, pad, -1.0f, -1, st))
			return -1;
	}
	st->impact_zones += zones;
	st->stage_us[SIM_STAGE_FAILSAFE] += (double)(sim_now_ns() - t2) * 1e-3;
	return hits;
}

/* The obstacles last: the sweeps and the fail-safe may have turned a vertex into a ball
 * or the floor, and the obstacle pass turns it out again; but that move is not one the
 * sweeps saw, and in a fold pressed onto the ball it can carry a vertex through the
 * layer above (the 129 x 129 drape at 1/90 s crossed itself so, from its 41st frame).
 * So every vertex the pass moves is held (infinite mass, as a pinned vertex: the
 * impulses and zones move only the others), stamped, and the candidates it touches are
 * swept and resolved again; then the pass runs again for what that moved.  The held set
 * only grows, so the rounds end; usually the first pass moves nothing the sweeps care
 * about and one incremental sweep, of the moved vertices' candidates alone, confirms it.
 * Returns the vertices the last pass moved, or -1 out of memory. */
static int hold_obstacle_moves(sim_collide *c, const sim_world *w, float h, float pad, sim_stats *st)
{
	const int n = w->n;
	int moved = 0;
	bool failed = false;
	for (int round = 0;; round++) {
		int64_t t0 = sim_now_ns();
		/* the pass keeps vbar_pre for the vertices it does not skip; a skipped one it
		 * leaves as it was */
		int touched = obstacle_pass(c, w, h, true, true);
		st->contacts += touched;
		moved = 0;
		/* what the last resolve_collisions left is in its ball and has not changed since:
		 * its first refresh asks only the vertices this pass moves */
		const int since = c->clock;
		if (touched) {
			c->clock++; /* one stamp for every vertex the pass moved */
			for (int i = 0; i < n; i++) {
				if (c->x0[i][3] == 0.0f || c->obst_skip[i] ||
				    memcmp(c->vbar_pre[i], c->vbar[i], sizeof(float) * 3) == 0)
					continue;
				c->held_w[i] = c->x0[i][3];
				c->x0[i][3] = 0.0f;
				stamp_vertex(c, i, h);
				moved++;
			}
		}
		st->stage_us[SIM_STAGE_PROXIMITY] += (double)(sim_now_ns() - t0) * 1e-3;
		if (!moved || round == OBSTACLE_ROUNDS)
			break;
		if (resolve_collisions(c, w, h, pad, since, st) < 0) {
			failed = true;
			break;
		}
	}
	for (int i = 0; i < n; i++) {
		if (c->held_w[i] != 0.0f) {
			c->x0[i][3] = c->held_w[i];
			c->held_w[i] = 0.0f;
		}
	}
	return failed ? -1 : moved;
}

/* ---- the substep ---------------------------------------------------------------------------- */

static void restamp_range(int start, int end, int worker, void *ctx)
{
	(void)worker;
	const vertex_task *t = ctx;
	for (int i = start; i < end; i++) {
		t->c->vstamp[i] = 0;
		track_motion(t->c, i, t->h);
	}
}

static void write_back_range(int start, int end, int worker, void *ctx)
{
	(void)worker;
	const vertex_task *t = ctx;
	const sim_collide *c = t->c;
	sim_world *w = t->w;
	for (int i = start; i < end; i++) {
		if (c->x0[i][3] == 0.0f)
			continue;
		for (int k = 0; k < 3; k++) {
			w->x[i][k] = c->x0[i][k] + t->h * c->vbar[i][k];
			w->v[i][k] += c->vbar[i][k] - c->vbar_in[i][k];
		}
	}
}

sim_result sim_collide_substep(sim_world *w, float h, sim_stats *st)
{
	sim_collide *c = w->collide;
	int nv = w->n + obstacle_vertex_total(w);
	if (!reserve_vertices(c, nv))
		return SIM_ERROR_OUT_OF_MEMORY;
	c->nv = nv;
	c->n_cloth = w->n;
	c->self_hits = 0;
	c->prepass_ns = c->walk_ns = 0;
	c->log = (w->debug & SIM_DEBUG_PAIRS) ? &w->debug_log : NULL;
	if (!build_topology(c, w, nv))
		return SIM_ERROR_OUT_OF_MEMORY;
	gather(c, w, h);
	if (!gather_bodies(c, w))
		return SIM_ERROR_OUT_OF_MEMORY;
	/* the boxes' clock: one substep on (a broad phase restarts it); past the window's end
	 * only still boxes remain, for which the clock no longer matters, so it stops there
	 * rather than run for weeks towards overflow */
	if (c->tau <= c->window)
		c->tau++;
	float max_sep = 0.0f;
	for (int i = 0; i < nv; i++)
		max_sep = c->sep[i] > max_sep ? c->sep[i] : max_sep;

	/* One broad phase serves the contacts (pairs within the separation at the start) and
	 * the collision sweeps, of this substep and of later ones, as long as every vertex
	 * stays inside the box it gave it. */
	float pad = 2.0f * max_sep > 4.0f * (float)CCD_GAP ? 2.0f * max_sep : 4.0f * (float)CCD_GAP;
	const float start_margin = 0.5f * pad + 4.0f * (float)CCD_GAP;

	/* The spheres and capsules first: their pass needs no candidates, and it moves what
	 * the integrator sent into them.  On the 129 x 129 drape that is about 7 800 vertices
	 * a frame, most by 1 to 10 mm (the solve does not see the ball, and the stretched
	 * sheet's tension pulls it in), beyond the boxes' reach of 1.7 mm: after the broad
	 * phase, that pass took about 4 000 vertices out of their new boxes at every frame,
	 * and the first sweep's refresh redid a fifth of the triangles. */
	int64_t t0 = sim_now_ns();
	st->contacts += obstacle_pass(c, w, h, false, false);
	st->stage_us[SIM_STAGE_PROXIMITY] += (double)(sim_now_ns() - t0) * 1e-3;
	if (!refresh_candidates(c, w, h, pad, start_margin, -1, st))
		return SIM_ERROR_OUT_OF_MEMORY;
	if (c->log)
		log_candidates(c, SIM_PAIR_BROAD_PROXIMITY, 0, 0);
	forget_results(c, true);
	t0 = sim_now_ns();
	int contacts = proximity(c, w, h);
	if (contacts < 0)
		return SIM_ERROR_OUT_OF_MEMORY;
	st->contacts += contacts;
	st->candidates += c->vf.count + c->ee.count;
	st->stage_us[SIM_STAGE_PROXIMITY] += (double)(sim_now_ns() - t0) * 1e-3;

	/* Later sweeps reuse the candidates, refreshed for the vertices whose paths the
	 * impulses took out of their boxes (refresh_candidates), and test again only the
	 * candidates whose vertices took an impulse since they were found clear. */
	c->prim_valid = false; /* new stamps and displacements */
	vertex_task task = {c, w, h};
	sim_parallel_for(w, restamp_range, nv, BOX_RANGE, &task);
	c->clock = 0;
	const int np = c->tris.count + c->edges.count;
	c->touch_valid = vprim_index(c) && reserve(&c->prim_touched, 1, np);
	if (c->touch_valid && np > 0)
		memset(c->prim_touched.data, 0, (size_t)np);
	int r = resolve_collisions(c, w, h, pad, -1, st);
	if (r < 0)
		return SIM_ERROR_OUT_OF_MEMORY;
	r = hold_obstacle_moves(c, w, h, pad, st);
	if (r < 0)
		return SIM_ERROR_OUT_OF_MEMORY;
	st->self_contacts += c->self_hits;
	/* write back the cloth: end positions and Bridson's velocity update */
	sim_parallel_for(w, write_back_range, w->n, BOX_RANGE, &task);
	if (!early_broad_phase(c, w, h, pad, st))
		return SIM_ERROR_OUT_OF_MEMORY;
	st->patches = c->patched ? sim_patches_certified(c->patches, &st->patch_blocks) : 0;
	if (!c->patched)
		st->patch_blocks = 0;
	st->prepass_us += (double)c->prepass_ns * 1e-3;
	st->walk_us += (double)c->walk_ns * 1e-3;
	return SIM_OK;
}
