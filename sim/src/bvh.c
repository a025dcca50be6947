/* Axis-aligned bounding box tree over triangles: the collision broad phase.
 *
 * Layout.  Nodes live in one array in the order the top-down build creates them
 * (pre-order): a node's left child is the node right after it and its right child is
 * named by index, so every child comes after its parent and one backward sweep over
 * the array refits the whole tree bottom-up, with no stack and no pointers.  A subtree is
 * a contiguous range of the array, so the refit sweeps the subtrees below depth 4 apart
 * (in parallel, given a world) and then the 15 nodes above them, and the build builds the
 * root's two halves apart, each at the offsets the serial pre-order gives it.  Node boxes
 * (32 bytes, vector aligned) are kept apart from the links so that the traversal's
 * overlap tests stream through boxes only.
 *
 * Leaves hold up to four triangles, their boxes stored lane by lane (structure of
 * arrays) so that one box is tested against a whole leaf with one vector compare per
 * coordinate, and a leaf pair's 16 outcomes are gathered into a bit mask before any
 * pair is reported (no branch per outcome).  On a 33 x 33 cloth (2048 triangles, 3 mm
 * margin) four per leaf measured about twice as fast as one or two for refit plus self
 * traversal; the reported pairs are the exact set of overlapping triangle boxes either
 * way, since every lane is tested.  Where the processor has AVX-512 (asked once, at run
 * time) a leaf pair's sixteen lane pairs fill one register: lane i of one leaf repeated
 * four times against the other's four lanes tiled, so the six box compares and the nine
 * vertex compares give the mask with one instruction each; without it, where it has AVX2,
 * two registers of eight take them (the SSE path takes four rows of them).  The compares
 * are exact, so every path gives the same masks bit for bit, and tests/bvh.cmake runs
 * test_bvh again on the AVX2, the SSE and the scalar paths.
 *
 * Build.  Top-down: a node's triangles are split at the median of their box centres
 * along the longest axis of the centres' bounds (ties: x before y before z).  The median
 * is taken under the total order (centre coordinate, triangle index), so the split is
 * unique even when many centres coincide (all identical centres still split in halves),
 * and the tree depends only on the input, never on the selection algorithm's path.
 * Halving keeps the height below 30 for any int count.
 *
 * Boxes.  Each triangle's box encloses its three vertices at x0 and at x1 (the swept
 * box of linear motion between them, as continuous detection needs) inflated by the
 * margin on every side, or is given (sim_bvh_update_boxes: the collision pipeline's
 * union of its vertices' boxes) and inflated by the margin.  Boxes are closed: touching
 * boxes overlap.  sim_bvh_query reports the triangles whose boxes overlap one given
 * box, by a depth-first walk (the pipeline's in-place refresh of a few triangles).
 *
 * Neighbours.  Given the triangles' vertices (sim_bvh_update_boxes with tris), the
 * leaves keep them lane by lane, refreshed at every fit, and the traversals and the
 * queries (given the asking triangle's vertices) drop the pairs of triangles that share
 * one, in the leaf tests, before any report: a mesh's neighbours always overlap and are
 * most of its overlapping pairs, and the collision pipeline lists them apart.  The
 * other reports keep their order.
 *
 * Rebuild rule.  Refitting keeps the tree correct but not tight: triangles that were
 * close when it was built drift apart and their parents' boxes swell.  The summed
 * surface area of the internal boxes measures that (it is what a traversal pays for,
 * roughly, under the usual surface-area argument); sim_bvh_update rebuilds once it
 * exceeds twice its value right after the last build.  A rigid translation of the whole
 * set leaves it unchanged, so a falling cloth is only refitted; crumpling or
 * stretching it past the rule's factor rebuilds.  A tree of one leaf has no internal
 * box and never rebuilds (it cannot get worse); one whose internal area was 0 at build
 * time (every triangle at one point) rebuilds at any growth.
 *
 * Marked pairs.  For the pipeline's in-place refresh, a few triangles are marked and
 * the traversal reports only the pairs with a marked one: a mark per leaf lane and per
 * node (its subtree holds a marked triangle, set bottom-up) lets it skip every node pair
 * of two unmarked subtrees, so the upper levels are walked once for all marked triangles
 * instead of once per triangle, as a query each would.  sim_bvh_update_marked sets the
 * marks while it refits, and refits only the leaves with a marked lane: the refresh has
 * changed only the marked triangles' boxes, so every other leaf already holds its own.
 *
 * Groups.  An update may give a group per triangle (sim_bvh_update_boxes_on,
 * sim_bvh_update_marked): the pairs of triangles in one group (a non-negative id) are
 * never reported by the tree's traversals with itself.  The leaves take their lanes'
 * groups as they are fitted, and each node the group all its triangles share (-1 when
 * they do not) in the sweep that fits the internal boxes, so a node pair within one
 * group is dropped when a walk takes it off the stack, and a leaf pair drops its lanes
 * in one group with a few integer compares, after the AVX-512 or SSE masks (so both
 * paths keep their masks as they were).  The collision pipeline gives a sheet's
 * certified patches, which cannot meet themselves, a group each (patch.h).
 *
 * Traversal.  A node pair of one tree with itself splits into both children with
 * themselves and the two children with each other, so every unordered triangle pair
 * is reached exactly once, under the node where the two part.  Pairs of distinct
 * internal nodes open both at once (on a median-split tree the two are of one size;
 * this measured faster than opening only the bigger one).  Only overlapping pairs are
 * pushed.  The order of the reports depends only on the tree and the boxes.
 * sim_bvh_run_job_masks hands over a leaf pair's mask and triangles in one call, the
 * same pairs in the same order (bits low first) for one call per leaf pair instead of
 * one per triangle pair. */
#include "sim_internal.h"

#include <assert.h>
#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#if defined(__SSE2__) && !defined(BVH_NO_SSE)
#include <emmintrin.h>
#define BVH_SSE 1
#else
#define BVH_SSE 0
#endif

/* A leaf pair's sixteen lane pairs in one AVX-512 register each, where the processor
 * has it (chosen at run time; the compares are exact, so either path gives the same
 * masks). */
#if BVH_SSE && defined(__x86_64__) && defined(__GNUC__) && !defined(BVH_NO_AVX512)
#include <immintrin.h>
#define BVH_AVX512 1
#else
#define BVH_AVX512 0
#endif

/* Without AVX-512, in two AVX2 registers (eight lane pairs each), where the processor has
 * AVX2: on a Zen 3 without AVX-512 the SSE rows were about a tenth of the drape's
 * instructions. */
#if BVH_SSE && defined(__x86_64__) && defined(__GNUC__) && !defined(BVH_NO_AVX2)
#include <immintrin.h>
#define BVH_AVX2 1
#else
#define BVH_AVX2 0
#endif

/* Triangles per leaf at most; the leaf layout below is four lanes wide. */
#define BVH_LEAF_SIZE 4

/* The internal nodes are refitted as the subtrees below this depth, apart and in
 * parallel, then the few above them (at most 15): on the 129 x 129 drape the sweep of its
 * 8 191 internal nodes, four times a frame, was about 0.5 ms a frame on the calling
 * thread alone (docs/benchmarks.md). */
#define BVH_CUT_DEPTH 4
/* Nodes from which that refit goes to the workers: the 33 x 33 pile's 1 023 stay on the
 * caller, where a wake-up costs more than the sweep. */
#define BVH_PARALLEL_NODES 2048

/* Height of a median-split tree of at most INT_MAX triangles, rounded up. */
#define BVH_MAX_HEIGHT 32

/* Traversal stacks live on the C stack and have a fixed size, so the traversals take
 * a const tree, allocate nothing and cannot fail.  The bound: a traversal is a
 * depth-first walk.  Visiting a node with itself pushes three entries and goes one level
 * down (two left pending); visiting two internal nodes pushes four and goes one level
 * down in both (three pending); an internal node and a leaf push two and go one level
 * down in one of them (one pending).  Along any walk from the root that is at most
 * 2 d + 3 (H - d) + 1 <= 3 H + 1 entries for d self visits and height H. */
#define BVH_STACK (3 * BVH_MAX_HEIGHT + 1)

/* A node's box.  Lane 3 pads it to four floats (lo = hi = 0, neutral in the overlap
 * test) so that refits and overlap tests are whole-vector operations.  The vector loads
 * are unaligned ones (no cost on aligned data), so nothing depends on what alignment
 * malloc gives. */
typedef struct bvh_box {
	_Alignas(16) float lo[4];
	float hi[4];
} bvh_box;

/* A leaf's triangle boxes, one per lane (structure of arrays), so that one box is tested
 * against all four at once.  Unused lanes hold NaN, which fails every comparison. */
typedef struct bvh_leaf {
	_Alignas(16) float lo[3][4];
	float hi[3][4];
	int tri[4];  /* triangle index per lane (-1 when unused) */
	int count;   /* lanes in use, 1 to 4 */
	int node;    /* the leaf's node */
	int group[4]; /* the triangle's group per lane (the update's groups; -1: none, and unused lanes) */
	int grouped;  /* some lane has a group */
	/* the triangles' vertices, lane by lane, when the tree knows them (sim_bvh_update_boxes
	 * with tris): a leaf pair then drops the pairs that share one with a few vector
	 * compares, before any is reported */
	_Alignas(16) int vert[3][4];
} bvh_leaf;

/* A triangle as the build sorts it: its key (box centre) next to its index, so that
 * the selection compares and moves 16 contiguous bytes instead of chasing indices. */
typedef struct bvh_item {
	float c[3];
	int tri;
} bvh_item;

typedef struct bvh_link {
	int index; /* internal: the right child (the left one is this node + 1); leaf: the leaf */
	int leaf;  /* 1 for a leaf, 0 for an internal node */
	int group; /* the group every triangle of the subtree is in (the update's groups), or -1 */
} bvh_link;

struct sim_bvh {
	int count;       /* triangles of the current tree; -1 before the first build */
	int node_count, leaf_count;
	int capacity;    /* triangles the buffers below can hold */
	bvh_box *node_box; /* capacity (a tree of n >= 2 triangles has at most n - 1 nodes) */
	bvh_link *link;    /* capacity */
	bvh_leaf *leaves;  /* capacity / 2 + 1 (every leaf but a lone root holds two or more) */
	bvh_item *items;   /* build scratch: the triangles with their keys */
	double build_area; /* summed internal half-areas right after the last build */
	int builds;
	unsigned char *node_mark; /* capacity: the subtree holds a marked triangle (sim_bvh_mark) */
	unsigned char *leaf_mark; /* capacity / 2 + 1: the leaf's marked lanes, a bit each */
	bool grouped;      /* some triangle has a group: the self traversals test them */
	bool verts;        /* the leaves hold their triangles' vertices: pairs sharing one are left out */
	/* The internal refit's cut (set by the build): the subtrees at depth BVH_CUT_DEPTH (or
	 * leaves above it), each a contiguous node range [cut[k], cut_end[k]) in pre-order,
	 * refitted apart; then the nodes above them, in the reverse of their order. */
	int cut_count, top_count;
	int cut[1 << BVH_CUT_DEPTH], cut_end[1 << BVH_CUT_DEPTH], top[1 << BVH_CUT_DEPTH];
	double cut_area[1 << BVH_CUT_DEPTH];
	int cut_grouped[1 << BVH_CUT_DEPTH];
};

sim_bvh *sim_bvh_create(void)
{
	sim_bvh *b = calloc(1, sizeof *b);
	if (b)
		b->count = -1;
	return b;
}

void sim_bvh_destroy(sim_bvh *b)
{
	if (!b)
		return;
	free(b->node_box);
	free(b->link);
	free(b->leaves);
	free(b->items);
	free(b->node_mark);
	free(b->leaf_mark);
	free(b);
}

int sim_bvh_build_count(const sim_bvh *b)
{
	return b->builds;
}

/* Grows every buffer to hold count triangles.  realloc keeps the contents, so a failure
 * part way leaves the current tree intact (some buffers merely larger). */
static bool reserve(sim_bvh *b, int count)
{
	if (count <= b->capacity)
		return true;
	size_t n = (size_t)count;
	bvh_box *node_box = realloc(b->node_box, n * sizeof *node_box);
	if (!node_box)
		return false;
	b->node_box = node_box;
	bvh_link *link = realloc(b->link, n * sizeof *link);
	if (!link)
		return false;
	b->link = link;
	bvh_leaf *leaves = realloc(b->leaves, (n / 2 + 1) * sizeof *leaves);
	if (!leaves)
		return false;
	b->leaves = leaves;
	bvh_item *items = realloc(b->items, n * sizeof *items);
	if (!items)
		return false;
	b->items = items;
	unsigned char *node_mark = realloc(b->node_mark, n);
	if (!node_mark)
		return false;
	b->node_mark = node_mark;
	unsigned char *leaf_mark = realloc(b->leaf_mark, n / 2 + 1);
	if (!leaf_mark)
		return false;
	b->leaf_mark = leaf_mark;
	b->capacity = count;
	return true;
}

/* The box of triangle t over x0 and x1, inflated by margin.  The loop runs over all four
 * lanes of the vec4s (w included, then overwritten) so that it compiles to vector min
 * and max. */
static inline void triangle_box(const int *t, const vec4 *x0, const vec4 *x1, float margin, bvh_box *out)
{
	const float *p0 = x0[t[0]], *p1 = x0[t[1]], *p2 = x0[t[2]];
	const float *q0 = x1[t[0]], *q1 = x1[t[1]], *q2 = x1[t[2]];
	bvh_box box;
	for (int a = 0; a < 4; a++) {
		float l = p0[a], h = p0[a];
		l = p1[a] < l ? p1[a] : l;
		h = p1[a] > h ? p1[a] : h;
		l = p2[a] < l ? p2[a] : l;
		h = p2[a] > h ? p2[a] : h;
		l = q0[a] < l ? q0[a] : l;
		h = q0[a] > h ? q0[a] : h;
		l = q1[a] < l ? q1[a] : l;
		h = q1[a] > h ? q1[a] : h;
		l = q2[a] < l ? q2[a] : l;
		h = q2[a] > h ? q2[a] : h;
		box.lo[a] = l - margin;
		box.hi[a] = h + margin;
	}
	box.lo[3] = 0.0f;
	box.hi[3] = 0.0f;
	*out = box;
}

static inline void box_union(const bvh_box *a, const bvh_box *b, bvh_box *out)
{
	bvh_box u;
	for (int k = 0; k < 4; k++) {
		u.lo[k] = b->lo[k] < a->lo[k] ? b->lo[k] : a->lo[k];
		u.hi[k] = b->hi[k] > a->hi[k] ? b->hi[k] : a->hi[k];
	}
	*out = u;
}

static inline void set_lane(bvh_leaf *leaf, int k, const bvh_box *box)
{
	for (int a = 0; a < 3; a++) {
		leaf->lo[a][k] = box->lo[a];
		leaf->hi[a][k] = box->hi[a];
	}
}

/* A given box inflated by margin. */
static inline void given_box(const sim_box *in, float margin, bvh_box *out)
{
	bvh_box box;
	for (int a = 0; a < 3; a++) {
		box.lo[a] = in->lo[a] - margin;
		box.hi[a] = in->hi[a] + margin;
	}
	box.lo[3] = 0.0f;
	box.hi[3] = 0.0f;
	*out = box;
}

/* Where the triangles' boxes come from: their vertices at x0 and x1, or given boxes;
 * verts: the leaves take the triangles' vertices from tris. */
typedef struct bvh_src {
	const int *tris;
	const vec4 *x0, *x1;
	const sim_box *boxes;
	const int *groups; /* per triangle, or NULL: none */
	bool verts;
} bvh_src;

static inline void src_box(const bvh_src *s, int t, float margin, bvh_box *out)
{
	if (s->boxes)
		given_box(&s->boxes[t], margin, out);
	else
		triangle_box(s->tris + 3 * (size_t)t, s->x0, s->x1, margin, out);
}

/* Every leaf's lanes and its node's box; with marked (a flag per triangle), each leaf's
 * marks as sim_bvh_mark sets them, and only the leaves with a marked lane refitted. */
static void fit_leaf_range(sim_bvh *b, const bvh_src *s, float margin, const unsigned char *marked, int first,
                           int last)
{
	for (int l = first; l < last; l++) {
		bvh_leaf *leaf = &b->leaves[l];
		if (marked) {
			unsigned m = 0;
			for (int k = 0; k < 4; k++)
				m |= (unsigned)(k < leaf->count && marked[leaf->tri[k]]) << k;
			b->leaf_mark[l] = (unsigned char)m;
			b->node_mark[leaf->node] = m != 0;
			if (!m)
				continue;
		}
		bvh_box u, box;
		src_box(s, leaf->tri[0], margin, &u);
		set_lane(leaf, 0, &u);
		for (int k = 1; k < leaf->count; k++) {
			src_box(s, leaf->tri[k], margin, &box);
			set_lane(leaf, k, &box);
			box_union(&u, &box, &u);
		}
		b->node_box[leaf->node] = u;
		if (s->verts)
			for (int k = 0; k < 4; k++)
				for (int a = 0; a < 3; a++)
					leaf->vert[a][k] = k < leaf->count ? s->tris[3 * (size_t)leaf->tri[k] + a] : -1;
		int lanes = 0, common = -1;
		for (int k = 0; k < 4; k++) {
			int g = s->groups && k < leaf->count ? s->groups[leaf->tri[k]] : -1;
			leaf->group[k] = g < 0 ? -1 : g;
			lanes |= g >= 0;
			common = k == 0 ? leaf->group[0] : (k < leaf->count && leaf->group[k] != common ? -1 : common);
		}
		leaf->grouped = lanes;
		b->link[leaf->node].group = common;
	}
}

typedef struct fit_task {
	sim_bvh *b;
	const bvh_src *s;
	float margin;
	const unsigned char *marked;
} fit_task;

static void fit_leaf_task(int start, int end, int worker, void *ctx)
{
	(void)worker;
	const fit_task *t = ctx;
	fit_leaf_range(t->b, t->s, t->margin, t->marked, start, end);
}

/* Leaves per range of a parallel refit: each leaf writes only its own lanes and its own
 * node's box, so any split gives the same tree.  A 33 x 33 cloth (512 leaves) stays on
 * the caller, where a wake-up costs more than the refit; the 129 x 129 drape (8192
 * leaves) is cut into 16 ranges. */
#define FIT_RANGE 512

static void fit_leaves_on(sim_bvh *b, const bvh_src *s, float margin, const unsigned char *marked,
                          const sim_world *w)
{
	if (w)
		sim_parallel_for(w, fit_leaf_task, b->leaf_count, FIT_RANGE, &(fit_task){b, s, margin, marked});
	else
		fit_leaf_range(b, s, margin, marked, 0, b->leaf_count);
}

/* Half the surface area of a box, the quantity the rebuild rule sums. */
static double half_area(const bvh_box *box)
{
	double dx = (double)box->hi[0] - box->lo[0], dy = (double)box->hi[1] - box->lo[1];
	double dz = (double)box->hi[2] - box->lo[2];
	return dx * dy + dy * dz + dz * dx;
}

/* Internal boxes from their children, children before parents (the reverse of build
 * order), over the nodes [first, end); returns the summed half-area of their internal
 * boxes and ORs the leaves' groupedness into *grouped.  marks: the internal nodes' marks
 * too, from their children's, in the same sweep; and the groups. */
static double fit_node_range(sim_bvh *b, int first, int end, bool marks, int *grouped)
{
	bvh_box *nb = b->node_box;
	bvh_link *link = b->link;
	unsigned char *nm = b->node_mark;
	double area = 0.0;
	int g = 0;
	for (int i = end - 1; i >= first; i--) {
		if (link[i].leaf) {
			g |= b->leaves[link[i].index].grouped;
			continue;
		}
		box_union(&nb[i + 1], &nb[link[i].index], &nb[i]);
		area += half_area(&nb[i]);
		if (marks)
			nm[i] = nm[i + 1] | nm[link[i].index];
		int gl = link[i + 1].group, gr = link[link[i].index].group;
		link[i].group = gl == gr ? gl : -1;
	}
	*grouped |= g;
	return area;
}

typedef struct fit_nodes_task {
	sim_bvh *b;
	bool marks;
} fit_nodes_task;

static void fit_cut_task(int start, int end, int worker, void *ctx)
{
	(void)worker;
	const fit_nodes_task *t = ctx;
	sim_bvh *b = t->b;
	for (int k = start; k < end; k++) {
		b->cut_grouped[k] = 0;
		b->cut_area[k] = fit_node_range(b, b->cut[k], b->cut_end[k], t->marks, &b->cut_grouped[k]);
	}
}

/* The cut's subtrees (workers, with w), then the nodes above them on the caller.  The
 * area is each subtree's sum, and the top nodes', added in the reverse of their order:
 * one order whatever the workers, so the rebuild rule decides alike on any count. */
static double fit_nodes_marks(sim_bvh *b, bool marks, const sim_world *w)
{
	fit_nodes_task task = {b, marks};
	if (w && b->node_count >= BVH_PARALLEL_NODES)
		sim_parallel_for(w, fit_cut_task, b->cut_count, 1, &task);
	else
		fit_cut_task(0, b->cut_count, 0, &task);
	double area = 0.0;
	int grouped = 0, top = b->top_count - 1;
	for (int k = b->cut_count - 1; k >= 0; k--) {
		/* the top nodes after subtree k in pre-order come before it here */
		for (; top >= 0 && b->top[top] > b->cut[k]; top--)
			area += fit_node_range(b, b->top[top], b->top[top] + 1, marks, &grouped);
		area += b->cut_area[k];
		grouped |= b->cut_grouped[k];
	}
	for (; top >= 0; top--)
		area += fit_node_range(b, b->top[top], b->top[top] + 1, marks, &grouped);
	b->grouped = grouped != 0;
	return area;
}

/* The cut below depth BVH_CUT_DEPTH of the subtree at node i (depth d). */
static void cut_tree(sim_bvh *b, int i, int d)
{
	if (b->link[i].leaf || d == BVH_CUT_DEPTH) {
		int k = b->cut_count++, j = i;
		while (!b->link[j].leaf)
			j = b->link[j].index; /* the subtree's last node in pre-order: its rightmost leaf */
		b->cut[k] = i;
		b->cut_end[k] = j + 1;
		return;
	}
	b->top[b->top_count++] = i;
	cut_tree(b, i + 1, d + 1);
	cut_tree(b, b->link[i].index, d + 1);
}


/* The build's total order: centre coordinate, then triangle index, as one integer.
 * Flipping the float's bits (all of them for a negative number, the sign for a
 * positive one) makes unsigned order agree with float order (-0 just below +0), and
 * the index below breaks ties, so no two triangles compare equal and the median split
 * is unique.  One integer compare also keeps the partition loop free of branches. */
static inline uint64_t item_key(const bvh_item *it, int axis)
{
	uint32_t bits;
	memcpy(&bits, &it->c[axis], sizeof bits);
	bits ^= (0u - (bits >> 31)) | 0x80000000u;
	return (uint64_t)bits << 32 | (uint32_t)it->tri;
}

static inline void swap_item(bvh_item *a, bvh_item *b)
{
	bvh_item t = *a;
	*a = *b;
	*b = t;
}

/* Rearranges v[0, n) so that v[k] is the element of rank k and everything before it
 * ranks lower, everything after it higher: quickselect with a median-of-three pivot
 * (sorted input, common for grids, stays linear) and a branch-free Lomuto partition
 * (the keys' comparisons are unpredictable, so a branching partition mispredicts about
 * every other element). */
static void select_rank(bvh_item *v, int n, int k, int axis)
{
	int lo = 0, hi = n - 1;
	while (lo < hi) {
		int mid = lo + (hi - lo) / 2;
		if (item_key(&v[mid], axis) < item_key(&v[lo], axis))
			swap_item(&v[mid], &v[lo]);
		if (item_key(&v[hi], axis) < item_key(&v[lo], axis))
			swap_item(&v[hi], &v[lo]);
		if (item_key(&v[mid], axis) < item_key(&v[hi], axis))
			swap_item(&v[mid], &v[hi]);
		/* v[hi] is now the median of the three: the pivot. */
		uint64_t pivot = item_key(&v[hi], axis);
		int store = lo;
		for (int i = lo; i < hi; i++) {
			/* v[lo, store) < pivot < v[store, i); x joins the lower part or stays
			 * above it, by the swap and the increment, never by a branch. */
			bvh_item x = v[i];
			int below = item_key(&x, axis) < pivot;
			v[i] = v[store];
			v[store] = x;
			store += below;
		}
		swap_item(&v[store], &v[hi]);
		if (k == store)
			return;
		if (k < store)
			hi = store - 1;
		else
			lo = store + 1;
	}
}

/* Where a subtree's build writes its nodes and leaves: the next of each. */
typedef struct build_at {
	int node, leaf;
} build_at;

/* Splits items[first, first + count) (count > BVH_LEAF_SIZE) at the median along the
 * longest axis of their centres' bounds; returns the size of the lower half. */
static int split_items(sim_bvh *b, int first, int count)
{
	bvh_item *v = b->items + first;
	float lo[3], hi[3];
	for (int a = 0; a < 3; a++)
		lo[a] = hi[a] = v[0].c[a];
	for (int k = 1; k < count; k++)
		for (int a = 0; a < 3; a++) {
			float c = v[k].c[a];
			lo[a] = c < lo[a] ? c : lo[a];
			hi[a] = c > hi[a] ? c : hi[a];
		}
	int axis = 0;
	for (int a = 1; a < 3; a++)
		if (hi[a] - lo[a] > hi[axis] - lo[axis])
			axis = a;
	int half = count / 2;
	select_rank(v, count, half, axis);
	return half;
}

/* Builds the subtree over items[first, first + count) at *at; returns its height. */
static int build_node(sim_bvh *b, build_at *at, int first, int count)
{
	int self = at->node++;
	if (count <= BVH_LEAF_SIZE) {
		int l = at->leaf++;
		bvh_leaf *leaf = &b->leaves[l];
		for (int a = 0; a < 3; a++)
			for (int k = 0; k < 4; k++)
				leaf->lo[a][k] = leaf->hi[a][k] = NAN;
		for (int k = 0; k < 4; k++) {
			leaf->tri[k] = k < count ? b->items[first + k].tri : -1;
			leaf->group[k] = -1;
		}
		leaf->count = count;
		leaf->node = self;
		leaf->grouped = 0;
		b->link[self] = (bvh_link){l, 1, -1};
		return 0;
	}
	int half = split_items(b, first, count);
	int hl = build_node(b, at, first, half);
	int right = at->node;
	int hr = build_node(b, at, first + half, count - half);
	b->link[self] = (bvh_link){right, 0, -1};
	return 1 + (hl > hr ? hl : hr);
}

/* The leaves of a tree over s and over s + 1 items (s >= 1): the halves of s and s + 1
 * are of two sizes, t = s / 2 and t + 1, so the counts follow from t's in O(log s). */
static void leaves_of(long s, long *ls, long *ls1)
{
	if (s < BVH_LEAF_SIZE) {
		*ls = *ls1 = 1;
		return;
	}
	if (s == BVH_LEAF_SIZE) {
		*ls = 1;
		*ls1 = 2;
		return;
	}
	long a, a1;
	leaves_of(s / 2, &a, &a1);
	if (s % 2 == 0)
		*ls = 2 * a, *ls1 = a + a1;
	else
		*ls = a + a1, *ls1 = 2 * a1;
}

/* The leaves of a tree over n >= 1 items. */
static long leaves(long n)
{
	long ln, ln1;
	leaves_of(n, &ln, &ln1);
	return ln;
}

typedef struct build_task {
	sim_bvh *b;
	int first[2], count[2];
	build_at at[2];
	int height[2];
} build_task;

static void build_half_task(int start, int end, int worker, void *ctx)
{
	(void)worker;
	build_task *t = ctx;
	for (int k = start; k < end; k++)
		t->height[k] = build_node(t->b, &t->at[k], t->first[k], t->count[k]);
}

/* The whole tree: the root's split, then its two halves apart (on the workers, with w),
 * each at the nodes and leaves the serial pre-order gives it (a tree of n items has
 * leaves(n) leaves and one node fewer inside), so the tree is the same either way.
 * Returns its height. */
static int build_tree(sim_bvh *b, int count, const sim_world *w)
{
	if (count <= BVH_LEAF_SIZE) {
		build_at at = {0, 0};
		int height = build_node(b, &at, 0, count);
		b->node_count = at.node, b->leaf_count = at.leaf;
		return height;
	}
	int half = split_items(b, 0, count);
	const long left = leaves(half), all = leaves(count);
	build_task t = {b, {0, half}, {half, count - half}, {{1, 0}, {(int)(2 * left), (int)left}}, {0, 0}};
	b->link[0] = (bvh_link){(int)(2 * left), 0, -1};
	if (w)
		sim_parallel_for(w, build_half_task, 2, 1, &t);
	else
		build_half_task(0, 2, 0, &t);
	assert(t.at[0].node == 2 * left && t.at[1].node == 2 * all - 1 && t.at[1].leaf == all);
	b->node_count = (int)(2 * all - 1), b->leaf_count = (int)all;
	return 1 + (t.height[0] > t.height[1] ? t.height[0] : t.height[1]);
}

/* Builds over tris[0, count); the buffers must hold count triangles.  Cannot fail. */
static void build(sim_bvh *b, const bvh_src *s, int count, float margin, const sim_world *w)
{
	b->count = count;
	/* The key is the centre of the triangle's box; the margin moves both sides
	 * equally, so it is left out. */
	for (int t = 0; t < count; t++) {
		bvh_box box;
		src_box(s, t, 0.0f, &box);
		for (int a = 0; a < 3; a++) {
			float c = 0.5f * (box.lo[a] + box.hi[a]);
			/* NaN would break the total order the selection relies on. */
			b->items[t].c[a] = c == c ? c : 0.0f;
		}
		b->items[t].tri = t;
	}
	b->node_count = b->leaf_count = 0;
	if (count > 0) {
		int height = build_tree(b, count, w);
		assert(height <= BVH_MAX_HEIGHT);
		(void)height;
	}
	b->cut_count = b->top_count = 0;
	if (b->node_count > 0)
		cut_tree(b, 0, 0);
	memset(b->node_mark, 0, (size_t)b->node_count);
	memset(b->leaf_mark, 0, (size_t)b->leaf_count);
	fit_leaves_on(b, s, margin, NULL, w);
	b->build_area = fit_nodes_marks(b, false, w);
	b->builds++;
}

static bool update(sim_bvh *b, const bvh_src *s, int count, float margin, const sim_world *w)
{
	if (count < 0)
		count = 0;
	b->verts = s->verts;
	if (count != b->count) {
		if (!reserve(b, count < 2 ? 2 : count)) {
			/* The old tree indexes a different triangle set: empty it rather than let
			 * a traversal report triangles that may not exist.  A later call builds. */
			b->count = -1;
			b->node_count = 0;
			b->leaf_count = 0;
			b->cut_count = b->top_count = 0;
			return false;
		}
		build(b, s, count, margin, w);
		return true;
	}
	fit_leaves_on(b, s, margin, NULL, w);
	double area = fit_nodes_marks(b, false, w);
	if (area > 2.0 * b->build_area)
		build(b, s, count, margin, w);
	return true;
}

bool sim_bvh_update(sim_bvh *b, const int *tris, int count, const vec4 *x0, const vec4 *x1, float margin)
{
	bvh_src s = {tris, x0, x1, NULL, NULL, false};
	return update(b, &s, count, margin, NULL);
}

bool sim_bvh_update_boxes(sim_bvh *b, const sim_box *boxes, const int *tris, int count, float margin)
{
	return sim_bvh_update_boxes_on(b, boxes, tris, NULL, count, margin, NULL);
}

bool sim_bvh_update_boxes_on(sim_bvh *b, const sim_box *boxes, const int *tris, const int *groups, int count,
                             float margin, const sim_world *w)
{
	bvh_src s = {tris, NULL, NULL, boxes, groups, tris != NULL};
	return update(b, &s, count, margin, w);
}

bool sim_bvh_update_marked(sim_bvh *b, const sim_box *boxes, const int *tris, const int *groups, int count,
                           float margin, const unsigned char *marked, const sim_world *w)
{
	bvh_src s = {tris, NULL, NULL, boxes, groups, tris != NULL};
	/* a build, leaves that would need their vertices, or groups to clear from every
	 * leaf: the whole update */
	if (count != b->count || s.verts != b->verts || b->node_count == 0 || (!groups && b->grouped)) {
		if (!update(b, &s, count, margin, w))
			return false;
		sim_bvh_mark(b, marked);
		return true;
	}
	/* A leaf with no marked triangle would get the lanes and node box it has (the same
	 * boxes, margin and vertices): only the others are refitted, each leaf's marks set on
	 * the way.  The internal nodes are all swept, since the rebuild rule needs their whole
	 * area, summed in the same order; their marks come in the same sweep. */
	fit_leaves_on(b, &s, margin, marked, w);
	if (fit_nodes_marks(b, true, w) > 2.0 * b->build_area) {
		build(b, &s, count, margin, w);
		sim_bvh_mark(b, marked); /* the build cleared the marks */
	}
	return true;
}

/* Closed boxes overlap: all eight lane tests at once, one well-predicted branch for
 * the caller instead of a chain of six that mispredict on cluttered input.  The vector
 * compare is the same IEEE <= as the scalar one (false with NaN), so both paths agree. */
static inline bool overlap(const bvh_box *a, const bvh_box *b)
{
#if BVH_SSE
	__m128 in = _mm_and_ps(_mm_cmple_ps(_mm_loadu_ps(a->lo), _mm_loadu_ps(b->hi)),
	                       _mm_cmple_ps(_mm_loadu_ps(b->lo), _mm_loadu_ps(a->hi)));
	return _mm_movemask_ps(in) == 0xf;
#else
	int r = 1;
	for (int k = 0; k < 4; k++)
		r &= (a->lo[k] <= b->hi[k]) & (b->lo[k] <= a->hi[k]);
	return r != 0;
#endif
}

/* Bit k set when lane i of leaf a overlaps lane k of leaf b (unused lanes never do). */
static inline unsigned lane_overlaps(const bvh_leaf *a, int i, const bvh_leaf *b)
{
#if BVH_SSE
	__m128 in = _mm_and_ps(_mm_cmple_ps(_mm_set1_ps(a->lo[0][i]), _mm_loadu_ps(b->hi[0])),
	                       _mm_cmple_ps(_mm_loadu_ps(b->lo[0]), _mm_set1_ps(a->hi[0][i])));
	for (int c = 1; c < 3; c++)
		in = _mm_and_ps(in, _mm_and_ps(_mm_cmple_ps(_mm_set1_ps(a->lo[c][i]), _mm_loadu_ps(b->hi[c])),
		                               _mm_cmple_ps(_mm_loadu_ps(b->lo[c]), _mm_set1_ps(a->hi[c][i]))));
	return (unsigned)_mm_movemask_ps(in);
#else
	unsigned m = 0;
	for (int k = 0; k < 4; k++) {
		int r = 1;
		for (int c = 0; c < 3; c++)
			r &= (a->lo[c][i] <= b->hi[c][k]) & (b->lo[c][k] <= a->hi[c][i]);
		m |= (unsigned)r << k;
	}
	return m;
#endif
}

/* Bit k set when lane k of the leaf has one of the three vertices v. */
static inline unsigned vert_lanes(const int *v, const bvh_leaf *leaf)
{
#if BVH_SSE
	__m128i l0 = _mm_loadu_si128((const __m128i *)leaf->vert[0]), l1 = _mm_loadu_si128((const __m128i *)leaf->vert[1]);
	__m128i l2 = _mm_loadu_si128((const __m128i *)leaf->vert[2]), eq = _mm_setzero_si128();
	for (int c = 0; c < 3; c++) {
		__m128i x = _mm_set1_epi32(v[c]);
		eq = _mm_or_si128(eq, _mm_or_si128(_mm_cmpeq_epi32(x, l0), _mm_or_si128(_mm_cmpeq_epi32(x, l1),
		                                                                        _mm_cmpeq_epi32(x, l2))));
	}
	return (unsigned)_mm_movemask_ps(_mm_castsi128_ps(eq));
#else
	unsigned m = 0;
	for (int k = 0; k < 4; k++) {
		int r = 0;
		for (int c = 0; c < 3; c++)
			for (int d = 0; d < 3; d++)
				r |= v[c] == leaf->vert[d][k];
		m |= (unsigned)r << k;
	}
	return m;
#endif
}

/* Bit k set when lane i of leaf a and lane k of leaf b share a vertex (both leaves must
 * hold their vertices; unused lanes hold -1 and may match each other, which their
 * overlap bits, always clear, make harmless). */
static inline unsigned lane_shares(const bvh_leaf *a, int i, const bvh_leaf *b)
{
	const int v[3] = {a->vert[0][i], a->vert[1][i], a->vert[2][i]};
	return vert_lanes(v, b);
}

/* Whether node pair (i, j) of a tree with itself lies within one group, so that it has
 * no pair to report.  The walks ask when they take a pair off the stack, where they
 * read its links anyway, rather than at every push. */
static inline bool grouped(const sim_bvh *b, int i, int j)
{
	return (b->link[i].group >= 0) & (b->link[i].group == b->link[j].group);
}

/* Bit 4 i + k set when lane i of leaf a and lane k of leaf b are in one group. */
static inline unsigned group_mask(const bvh_leaf *a, const bvh_leaf *b)
{
	unsigned m = 0;
#if BVH_SSE
	const __m128i bg = _mm_loadu_si128((const __m128i *)b->group);
	for (int i = 0; i < 4; i++)
		if (a->group[i] >= 0)
			m |= (unsigned)_mm_movemask_ps(_mm_castsi128_ps(_mm_cmpeq_epi32(_mm_set1_epi32(a->group[i]), bg)))
			     << (4 * i);
#else
	for (int i = 0; i < 4; i++)
		for (int k = 0; k < 4; k++)
			m |= (unsigned)((a->group[i] >= 0) & (a->group[i] == b->group[k])) << (4 * i + k);
#endif
	return m;
}

#if BVH_AVX512
/* Bit 4 i + k set when lane i of leaf a overlaps lane k of leaf b and, with verts, the
 * two share no vertex: lane i of a repeated over four lanes against b's four lanes
 * tiled, the same IEEE <= (ordered: false with NaN) and integer == as the SSE path. */
__attribute__((target("avx512f"))) static unsigned leaf_mask_avx512(const bvh_leaf *a, const bvh_leaf *b,
                                                                    bool verts)
{
	const __m512i rep = _mm512_set_epi32(3, 3, 3, 3, 2, 2, 2, 2, 1, 1, 1, 1, 0, 0, 0, 0);
	__mmask16 m = 0xffff;
	for (int c = 0; c < 3; c++) {
		__m512 alo = _mm512_permutexvar_ps(rep, _mm512_castps128_ps512(_mm_loadu_ps(a->lo[c])));
		__m512 ahi = _mm512_permutexvar_ps(rep, _mm512_castps128_ps512(_mm_loadu_ps(a->hi[c])));
		__m512 blo = _mm512_broadcast_f32x4(_mm_loadu_ps(b->lo[c]));
		__m512 bhi = _mm512_broadcast_f32x4(_mm_loadu_ps(b->hi[c]));
		m = _mm512_mask_cmp_ps_mask(m, alo, bhi, _CMP_LE_OQ);
		m = _mm512_mask_cmp_ps_mask(m, blo, ahi, _CMP_LE_OQ);
	}
	if (verts && m) {
		__m512i b0 = _mm512_broadcast_i32x4(_mm_loadu_si128((const __m128i *)b->vert[0]));
		__m512i b1 = _mm512_broadcast_i32x4(_mm_loadu_si128((const __m128i *)b->vert[1]));
		__m512i b2 = _mm512_broadcast_i32x4(_mm_loadu_si128((const __m128i *)b->vert[2]));
		for (int c = 0; c < 3; c++) {
			__m512i v = _mm512_permutexvar_epi32(rep, _mm512_castsi128_si512(_mm_loadu_si128((const __m128i *)a->vert[c])));
			m &= (__mmask16)~(_mm512_cmpeq_epi32_mask(v, b0) | _mm512_cmpeq_epi32_mask(v, b1) |
			                  _mm512_cmpeq_epi32_mask(v, b2));
		}
	}
	return m;
}

#endif

#if BVH_AVX2
/* leaf_mask_avx512's masks in two halves: lanes 0 and 1 of a, each repeated over four
 * lanes, against b's four lanes twice (bits 0-7), then lanes 2 and 3 (bits 8-15); the
 * same IEEE <= (ordered: false with NaN) and integer ==. */
__attribute__((target("avx2"))) static unsigned leaf_mask_avx2(const bvh_leaf *a, const bvh_leaf *b, bool verts)
{
	const __m256i rep[2] = {_mm256_setr_epi32(0, 0, 0, 0, 1, 1, 1, 1), _mm256_setr_epi32(2, 2, 2, 2, 3, 3, 3, 3)};
	__m256 in[2] = {_mm256_castsi256_ps(_mm256_set1_epi32(-1)), _mm256_castsi256_ps(_mm256_set1_epi32(-1))};
	for (int c = 0; c < 3; c++) {
		const __m256 alo = _mm256_castps128_ps256(_mm_loadu_ps(a->lo[c]));
		const __m256 ahi = _mm256_castps128_ps256(_mm_loadu_ps(a->hi[c]));
		const __m256 blo = _mm256_broadcast_ps((const __m128 *)b->lo[c]);
		const __m256 bhi = _mm256_broadcast_ps((const __m128 *)b->hi[c]);
		for (int h = 0; h < 2; h++) {
			__m256 l = _mm256_permutevar8x32_ps(alo, rep[h]), u = _mm256_permutevar8x32_ps(ahi, rep[h]);
			in[h] = _mm256_and_ps(in[h], _mm256_and_ps(_mm256_cmp_ps(l, bhi, _CMP_LE_OQ),
			                                           _mm256_cmp_ps(blo, u, _CMP_LE_OQ)));
		}
	}
	unsigned m = (unsigned)_mm256_movemask_ps(in[0]) | (unsigned)_mm256_movemask_ps(in[1]) << 8;
	if (verts && m) {
		const __m256i b0 = _mm256_broadcastsi128_si256(_mm_loadu_si128((const __m128i *)b->vert[0]));
		const __m256i b1 = _mm256_broadcastsi128_si256(_mm_loadu_si128((const __m128i *)b->vert[1]));
		const __m256i b2 = _mm256_broadcastsi128_si256(_mm_loadu_si128((const __m128i *)b->vert[2]));
		unsigned shared = 0;
		for (int h = 0; h < 2; h++) {
			__m256i eq = _mm256_setzero_si256();
			for (int c = 0; c < 3; c++) {
				__m256i v = _mm256_permutevar8x32_epi32(
					_mm256_castsi128_si256(_mm_loadu_si128((const __m128i *)a->vert[c])), rep[h]);
				eq = _mm256_or_si256(eq, _mm256_or_si256(_mm256_cmpeq_epi32(v, b0),
				                                         _mm256_or_si256(_mm256_cmpeq_epi32(v, b1),
				                                                         _mm256_cmpeq_epi32(v, b2))));
			}
			shared |= (unsigned)_mm256_movemask_ps(_mm256_castsi256_ps(eq)) << (8 * h);
		}
		m &= ~shared;
	}
	return m;
}

#endif

#if BVH_AVX512 || BVH_AVX2
/* What the processor has: asked once (the answer cannot change; a race only asks
 * twice).  1, plus 2 with AVX2 and 4 with AVX-512F. */
static unsigned cpu_features(void)
{
	static unsigned known; /* 0: not asked yet */
	unsigned k = __atomic_load_n(&known, __ATOMIC_RELAXED);
	if (k == 0) {
		__builtin_cpu_init();
		k = 1u | (__builtin_cpu_supports("avx2") ? 2u : 0u) | (__builtin_cpu_supports("avx512f") ? 4u : 0u);
		__atomic_store_n(&known, k, __ATOMIC_RELAXED);
	}
	return k;
}
#endif
#if BVH_AVX512
static bool have_avx512(void) { return (cpu_features() & 4u) != 0; }
#endif
#if BVH_AVX2
static bool have_avx2(void) { return (cpu_features() & 2u) != 0; }
#endif

/* Reports the pairs of mask bits (bit 4 i + k: lane i of a with lane k of b); the tests
 * are all made before any report, so their unpredictable outcomes cost no branches.
 * sorted: the smaller triangle first (one tree); otherwise a's triangle first.  With
 * mfn, the whole mask in one call instead (when it has a pair). */
static inline void report_mask(unsigned m, const bvh_leaf *a, const bvh_leaf *b, bool sorted,
                               sim_bvh_pair_fn fn, sim_bvh_mask_fn mfn, void *user)
{
	if (mfn) {
		if (m)
			mfn(user, a->tri, b->tri, m, sorted);
		return;
	}
	while (m) {
		int bit = __builtin_ctz(m);
		m &= m - 1;
		int ta = a->tri[bit >> 2], tb = b->tri[bit & 3];
		if (sorted && tb < ta)
			fn(user, tb, ta);
		else
			fn(user, ta, tb);
	}
}

/* The overlapping triangle pairs inside one leaf as a mask (bit 4 i + k, i < k); with
 * verts, those that share no vertex. */
static inline unsigned self_mask(const bvh_leaf *a, bool verts)
{
#if BVH_AVX512
	if (have_avx512())
		return leaf_mask_avx512(a, a, verts) & 0x08ceu; /* i < k: bits 1-3, 6-7 and 11 */
#endif
#if BVH_AVX2
	if (have_avx2())
		return leaf_mask_avx2(a, a, verts) & 0x08ceu;
#endif
	unsigned m = 0;
	for (int i = 0; i + 1 < a->count; i++) {
		unsigned r = lane_overlaps(a, i, a) & (0xeu << i) & 0xfu;
		if (verts)
			r &= ~lane_shares(a, i, a);
		m |= r << (4 * i);
	}
	return m;
}

/* The overlapping triangle pairs between two leaves as a mask (bit 4 i + k: lane i of a
 * with lane k of b); with verts, those that share no vertex. */
static inline unsigned pair_mask(const bvh_leaf *a, const bvh_leaf *b, bool verts)
{
#if BVH_AVX512
	if (have_avx512())
		return leaf_mask_avx512(a, b, verts);
#endif
#if BVH_AVX2
	if (have_avx2())
		return leaf_mask_avx2(a, b, verts);
#endif
	unsigned m = 0;
	for (int i = 0; i < a->count; i++) {
		unsigned r = lane_overlaps(a, i, b);
		if (verts)
			r &= ~lane_shares(a, i, b);
		m |= r << (4 * i);
	}
	return m;
}

/* Overlapping triangle pairs inside one leaf; with verts, those that share no vertex;
 * with groups, those not in one group. */
static inline void leaf_self(const bvh_leaf *a, bool verts, bool groups, sim_bvh_pair_fn fn, sim_bvh_mask_fn mfn,
                             void *user)
{
	unsigned m = self_mask(a, verts);
	if (groups && m && a->grouped)
		m &= ~group_mask(a, a);
	report_mask(m, a, a, true, fn, mfn, user);
}

/* Overlapping triangle pairs between two leaves; with verts, those that share no vertex;
 * with groups (two leaves of one tree), those not in one group. */
static inline void leaf_pair(const bvh_leaf *a, const bvh_leaf *b, bool sorted, bool verts, bool groups,
                             sim_bvh_pair_fn fn, sim_bvh_mask_fn mfn, void *user)
{
	unsigned m = pair_mask(a, b, verts);
	if (groups && m && (a->grouped & b->grouped))
		m &= ~group_mask(a, b);
	report_mask(m, a, b, sorted, fn, mfn, user);
}

typedef struct bvh_walk {
	int top;
	int pair[BVH_STACK][2];
} bvh_walk;

static inline void push(bvh_walk *s, int i, int j)
{
	assert(s->top < BVH_STACK);
	s->pair[s->top][0] = i;
	s->pair[s->top][1] = j;
	s->top++;
}

static inline void push_if(bvh_walk *s, const bvh_box *pb, int i, const bvh_box *qb, int j)
{
	if (overlap(&pb[i], &qb[j]))
		push(s, i, j);
}

/* Whether a traversal of p with q tests groups: q is p, and p has some. */
static inline bool groups_of(const sim_bvh *p, const sim_bvh *q) { return p == q && p->grouped; }

/* One visit of an overlapping pair of distinct nodes, i of p and j of q: reports the
 * pairs of two leaves, otherwise pushes the overlapping child pairs (inlined into the
 * walks, as GCC did before the groups made it larger: a call per visit cost the drape's
 * traversal a tenth more instructions).  Both internal
 * nodes are opened at once: on a median-split tree the two sides of a pair are of one
 * size, and opening both measured faster than opening the bigger one (fewer visits for
 * the same tests). */
static inline __attribute__((always_inline)) void visit_pair(const sim_bvh *p, int i, const sim_bvh *q, int j,
                                                             bool sorted, bool groups, bvh_walk *s,
                                                             sim_bvh_pair_fn fn, sim_bvh_mask_fn mfn, void *user)
{
	bvh_link ni = p->link[i], nj = q->link[j];
	const bvh_box *pb = p->node_box, *qb = q->node_box;
	if (ni.leaf && nj.leaf) {
		leaf_pair(&p->leaves[ni.index], &q->leaves[nj.index], sorted, p->verts && q->verts, groups, fn, mfn, user);
	} else if (nj.leaf) {
		push_if(s, pb, ni.index, qb, j);
		push_if(s, pb, i + 1, qb, j);
	} else if (ni.leaf) {
		push_if(s, pb, i, qb, nj.index);
		push_if(s, pb, i, qb, j + 1);
	} else {
		push_if(s, pb, ni.index, qb, nj.index);
		push_if(s, pb, ni.index, qb, j + 1);
		push_if(s, pb, i + 1, qb, nj.index);
		push_if(s, pb, i + 1, qb, j + 1);
	}
}

/* The walk from node pair (i0, j0) of p with q (the whole traversal from the roots, or
 * one job of sim_bvh_split's); self: a tree with itself (q is p), each unordered pair
 * once; groups: and it has groups, so that a pair within one is dropped when it comes off
 * the stack.  Inlined with groups constant, so that a walk without them is the one it
 * was before there were groups. */
static inline __attribute__((always_inline)) void walk(const sim_bvh *p, const sim_bvh *q, int i0, int j0,
                                                       bool self, bool groups, sim_bvh_pair_fn fn,
                                                       sim_bvh_mask_fn mfn, void *user)
{
	bvh_walk s;
	s.top = 0;
	push(&s, i0, j0);
	while (s.top > 0) {
		s.top--;
		int i = s.pair[s.top][0], j = s.pair[s.top][1];
		if (groups && grouped(p, i, j))
			continue;
		if (!self || i != j) {
			visit_pair(p, i, q, j, self, groups, &s, fn, mfn, user);
			continue;
		}
		/* A subtree against itself: both halves against themselves and each other; every
		 * unordered triangle pair lies under exactly one such split. */
		bvh_link n = p->link[i];
		if (n.leaf) {
			leaf_self(&p->leaves[n.index], p->verts, groups, fn, mfn, user);
			continue;
		}
		int l = i + 1, r = n.index;
		push_if(&s, p->node_box, l, p->node_box, r);
		push(&s, r, r);
		push(&s, l, l);
	}
}

static void walk_from(const sim_bvh *p, const sim_bvh *q, int i0, int j0, bool self, sim_bvh_pair_fn fn,
                      sim_bvh_mask_fn mfn, void *user)
{
	if (self && p->grouped)
		walk(p, q, i0, j0, true, true, fn, mfn, user);
	else if (self)
		walk(p, q, i0, j0, true, false, fn, mfn, user);
	else
		walk(p, q, i0, j0, false, false, fn, mfn, user);
}

void sim_bvh_self_pairs(const sim_bvh *b, sim_bvh_pair_fn fn, void *user)
{
	if (b->node_count > 0)
		walk_from(b, b, 0, 0, true, fn, NULL, user);
}

void sim_bvh_pairs(const sim_bvh *p, const sim_bvh *q, sim_bvh_pair_fn fn, void *user)
{
	if (p->node_count > 0 && q->node_count > 0 && overlap(&p->node_box[0], &q->node_box[0]))
		walk_from(p, q, 0, 0, false, fn, NULL, user);
}

/* ---- traversal in pieces (parallel broad phase) ---------------------------------------------- */

/* The traversals above pop one stack entry at a time and finish everything it pushes
 * before the entries below it, so each entry's reports form one contiguous run of the
 * output, in the order the entries are popped.  Splitting therefore replaces an entry by
 * the entries its visit pushes, in pop order (the reverse of the push order), and the
 * runs of the resulting jobs, concatenated in job order, are the whole traversal's. */

/* Writes to out (room for 4) the entries the visit of job pushes, in pop order; returns
 * how many, or -1 when the visit reports pairs itself (a leaf, or two leaves). */
static int expand_job(const sim_bvh *p, const sim_bvh *q, bool self, sim_bvh_job job, sim_bvh_job *out)
{
	int i = job.i, j = job.j;
	bvh_link ni = p->link[i], nj = q->link[j];
	if (groups_of(p, q) && grouped(p, i, j))
		return 0; /* within one group: the job has nothing to report */
	bvh_walk s;
	s.top = 0;
	if (self && i == j) {
		if (ni.leaf)
			return -1;
		int l = i + 1, r = ni.index;
		push_if(&s, p->node_box, l, p->node_box, r);
		push(&s, r, r);
		push(&s, l, l);
	} else {
		if (ni.leaf && nj.leaf)
			return -1;
		const bvh_box *pb = p->node_box, *qb = q->node_box;
		if (nj.leaf) {
			push_if(&s, pb, ni.index, qb, j);
			push_if(&s, pb, i + 1, qb, j);
		} else if (ni.leaf) {
			push_if(&s, pb, i, qb, nj.index);
			push_if(&s, pb, i, qb, j + 1);
		} else {
			push_if(&s, pb, ni.index, qb, nj.index);
			push_if(&s, pb, ni.index, qb, j + 1);
			push_if(&s, pb, i + 1, qb, nj.index);
			push_if(&s, pb, i + 1, qb, j + 1);
		}
	}
	for (int k = 0; k < s.top; k++)
		out[k] = (sim_bvh_job){s.pair[s.top - 1 - k][0], s.pair[s.top - 1 - k][1]};
	return s.top;
}

int sim_bvh_split(const sim_bvh *p, const sim_bvh *q, sim_bvh_job *jobs, sim_bvh_job *scratch, int capacity,
                  int target)
{
	bool self = p == q;
	if (p->node_count == 0 || q->node_count == 0 || capacity < 1)
		return 0;
	if (!self && !overlap(&p->node_box[0], &q->node_box[0]))
		return 0;
	if (groups_of(p, q) && grouped(p, 0, 0))
		return 0;
	jobs[0] = (sim_bvh_job){0, 0};
	int count = 1;
	/* rounds of expanding every job that can be, while the result fits */
	while (count > 0 && count < target) {
		sim_bvh_job kids[4];
		int total = 0;
		bool changed = false;
		for (int k = 0; k < count; k++) {
			int m = expand_job(p, q, self, jobs[k], kids);
			if (m < 0) {
				if (total < capacity)
					scratch[total] = jobs[k];
				total++;
				continue;
			}
			changed = true;
			for (int t = 0; t < m; t++, total++)
				if (total < capacity)
					scratch[total] = kids[t];
		}
		if (!changed || total > capacity)
			break;
		memcpy(jobs, scratch, sizeof *jobs * (size_t)total);
		count = total;
	}
	return count;
}

void sim_bvh_run_job(const sim_bvh *p, const sim_bvh *q, sim_bvh_job job, sim_bvh_pair_fn fn, void *user)
{
	walk_from(p, q, job.i, job.j, p == q, fn, NULL, user);
}

void sim_bvh_run_job_masks(const sim_bvh *p, const sim_bvh *q, sim_bvh_job job, sim_bvh_mask_fn fn, void *user)
{
	walk_from(p, q, job.i, job.j, p == q, NULL, fn, user);
}

/* Bit k set when lane k of the leaf overlaps box q (unused lanes never do). */
static inline unsigned box_lanes(const bvh_box *q, const bvh_leaf *leaf)
{
#if BVH_SSE
	__m128 in = _mm_and_ps(_mm_cmple_ps(_mm_set1_ps(q->lo[0]), _mm_loadu_ps(leaf->hi[0])),
	                       _mm_cmple_ps(_mm_loadu_ps(leaf->lo[0]), _mm_set1_ps(q->hi[0])));
	for (int c = 1; c < 3; c++)
		in = _mm_and_ps(in, _mm_and_ps(_mm_cmple_ps(_mm_set1_ps(q->lo[c]), _mm_loadu_ps(leaf->hi[c])),
		                               _mm_cmple_ps(_mm_loadu_ps(leaf->lo[c]), _mm_set1_ps(q->hi[c]))));
	return (unsigned)_mm_movemask_ps(in);
#else
	unsigned m = 0;
	for (int k = 0; k < 4; k++) {
		int r = 1;
		for (int c = 0; c < 3; c++)
			r &= (q->lo[c] <= leaf->hi[c][k]) & (leaf->lo[c][k] <= q->hi[c]);
		m |= (unsigned)r << k;
	}
	return m;
#endif
}

void sim_bvh_query(const sim_bvh *b, const sim_box *query, const int *verts, float margin, sim_bvh_hit_fn fn,
                   void *user)
{
	const bool skip = verts && b->verts;
	if (b->node_count == 0)
		return;
	bvh_box q;
	given_box(query, margin, &q);
	/* a depth-first walk keeps at most one pending sibling per level, plus two */
	int stack[BVH_MAX_HEIGHT + 2], top = 0;
	if (overlap(&b->node_box[0], &q))
		stack[top++] = 0;
	while (top > 0) {
		int i = stack[--top];
		bvh_link n = b->link[i];
		if (n.leaf) {
			const bvh_leaf *leaf = &b->leaves[n.index];
			unsigned m = box_lanes(&q, leaf);
			if (skip)
				m &= ~vert_lanes(verts, leaf);
			while (m) {
				int k = __builtin_ctz(m);
				m &= m - 1;
				fn(user, leaf->tri[k]);
			}
			continue;
		}
		/* the left child first: pushed last */
		if (overlap(&b->node_box[n.index], &q)) {
			assert(top < BVH_MAX_HEIGHT + 2);
			stack[top++] = n.index;
		}
		if (overlap(&b->node_box[i + 1], &q)) {
			assert(top < BVH_MAX_HEIGHT + 2);
			stack[top++] = i + 1;
		}
	}
}

/* ---- traversal of the marked triangles' pairs (in-place refresh) ------------------------------ */

bool sim_bvh_mark(sim_bvh *b, const unsigned char *marked)
{
	if (b->node_count == 0)
		return false;
	for (int l = 0; l < b->leaf_count; l++) {
		const bvh_leaf *leaf = &b->leaves[l];
		unsigned m = 0;
		for (int k = 0; k < 4; k++)
			m |= (unsigned)(k < leaf->count && marked[leaf->tri[k]]) << k;
		b->leaf_mark[l] = (unsigned char)m;
		b->node_mark[leaf->node] = m != 0;
	}
	/* children come after their parents: one backward sweep */
	for (int i = b->node_count - 1; i >= 0; i--)
		if (!b->link[i].leaf)
			b->node_mark[i] = b->node_mark[i + 1] | b->node_mark[b->link[i].index];
	return b->node_mark[0] != 0;
}

/* Lane pairs (bit 4 i + k) of which at least one side is marked. */
static inline unsigned marked_lanes(unsigned ma, unsigned mb)
{
	unsigned m = 0;
	for (int i = 0; i < 4; i++)
		m |= ((ma >> i) & 1u ? 0xfu : mb) << (4 * i);
	return m;
}

static inline void push_marked(bvh_walk *s, const sim_bvh *p, int i, const sim_bvh *q, int j)
{
	if ((p->node_mark[i] | q->node_mark[j]) && overlap(&p->node_box[i], &q->node_box[j]))
		push(s, i, j);
}

/* The marked walk from node pair (i0, j0): the whole traversal from the roots, or one
 * job of sim_bvh_split's (the plain walk's pieces, so the marked walk's too); groups as
 * for walk. */
static inline __attribute__((always_inline)) void marked_walk_groups(const sim_bvh *p, const sim_bvh *q, int i0,
                                                                     int j0, bool groups, sim_bvh_pair_fn fn,
                                                                     void *user)
{
	const bool self = p == q, verts = p->verts && q->verts;
	bvh_walk s;
	s.top = 0;
	if (self && i0 == j0) {
		if (p->node_mark[i0])
			push(&s, i0, i0);
	} else {
		push_marked(&s, p, i0, q, j0);
	}
	/* the plain traversals' walk, with every node pair of two unmarked subtrees left out
	 * (the stack bound holds: only fewer entries are pushed) */
	while (s.top > 0) {
		s.top--;
		int i = s.pair[s.top][0], j = s.pair[s.top][1];
		if (groups && grouped(p, i, j))
			continue;
		bvh_link ni = p->link[i], nj = q->link[j];
		if (self && i == j) {
			if (ni.leaf) {
				const bvh_leaf *a = &p->leaves[ni.index];
				unsigned ma = p->leaf_mark[ni.index], m = self_mask(a, verts) & marked_lanes(ma, ma);
				if (groups && m && a->grouped)
					m &= ~group_mask(a, a);
				report_mask(m, a, a, true, fn, NULL, user);
				continue;
			}
			int l = i + 1, r = ni.index;
			push_marked(&s, p, l, p, r);
			if (p->node_mark[r])
				push(&s, r, r);
			if (p->node_mark[l])
				push(&s, l, l);
			continue;
		}
		if (ni.leaf && nj.leaf) {
			const bvh_leaf *a = &p->leaves[ni.index], *b = &q->leaves[nj.index];
			unsigned m = pair_mask(a, b, verts) & marked_lanes(p->leaf_mark[ni.index], q->leaf_mark[nj.index]);
			if (groups && m && (a->grouped & b->grouped))
				m &= ~group_mask(a, b);
			report_mask(m, a, b, self, fn, NULL, user);
		} else if (nj.leaf) {
			push_marked(&s, p, ni.index, q, j);
			push_marked(&s, p, i + 1, q, j);
		} else if (ni.leaf) {
			push_marked(&s, p, i, q, nj.index);
			push_marked(&s, p, i, q, j + 1);
		} else {
			push_marked(&s, p, ni.index, q, nj.index);
			push_marked(&s, p, ni.index, q, j + 1);
			push_marked(&s, p, i + 1, q, nj.index);
			push_marked(&s, p, i + 1, q, j + 1);
		}
	}
}

static void marked_walk(const sim_bvh *p, const sim_bvh *q, int i0, int j0, sim_bvh_pair_fn fn, void *user)
{
	if (p->node_count == 0 || q->node_count == 0)
		return;
	if (groups_of(p, q))
		marked_walk_groups(p, q, i0, j0, true, fn, user);
	else
		marked_walk_groups(p, q, i0, j0, false, fn, user);
}

void sim_bvh_marked_pairs(const sim_bvh *p, const sim_bvh *q, sim_bvh_pair_fn fn, void *user)
{
	marked_walk(p, q, 0, 0, fn, user);
}

void sim_bvh_run_marked_job(const sim_bvh *p, const sim_bvh *q, sim_bvh_job job, sim_bvh_pair_fn fn, void *user)
{
	marked_walk(p, q, job.i, job.j, fn, user);
}

/* ---- debug views ---------------------------------------------------------------------------- */

/* Walks the tree depth-first, left before right, so that the boxes come in pre-order (a
 * parent before its children): a reader can find each box's parent as the last box one
 * level up before it.  Returns filled plus the boxes in range; *deepest gets the depth
 * of the deepest triangle box. */
static int walk_boxes(const sim_bvh *b, int depth_min, int depth_max, float (*out)[7], int capacity, int filled,
                      int *deepest)
{
	if (b->node_count == 0)
		return filled;
	/* one pending right child per level, plus the root */
	int stack_node[BVH_MAX_HEIGHT + 2], stack_depth[BVH_MAX_HEIGHT + 2], sp = 0;
	stack_node[sp] = 0;
	stack_depth[sp++] = 0;
	while (sp > 0) {
		sp--;
		int i = stack_node[sp], d = stack_depth[sp];
		if (d >= depth_min && d <= depth_max) {
			if (filled < capacity) {
				const bvh_box *box = &b->node_box[i];
				for (int a = 0; a < 3; a++) {
					out[filled][a] = box->lo[a];
					out[filled][3 + a] = box->hi[a];
				}
				out[filled][6] = (float)d;
			}
			filled++;
		}
		if (b->link[i].leaf) {
			const bvh_leaf *leaf = &b->leaves[b->link[i].index];
			*deepest = d + 1 > *deepest ? d + 1 : *deepest;
			if (d + 1 < depth_min || d + 1 > depth_max)
				continue;
			for (int k = 0; k < leaf->count; k++, filled++) {
				if (filled >= capacity)
					continue;
				for (int a = 0; a < 3; a++) {
					out[filled][a] = leaf->lo[a][k];
					out[filled][3 + a] = leaf->hi[a][k];
				}
				out[filled][6] = (float)(d + 1);
			}
			continue;
		}
		stack_node[sp] = b->link[i].index;
		stack_depth[sp++] = d + 1;
		stack_node[sp] = i + 1;
		stack_depth[sp++] = d + 1;
	}
	return filled;
}

int sim_bvh_debug_boxes(const sim_bvh *b, int depth_min, int depth_max, float (*out)[7], int capacity, int filled)
{
	int deepest = -1;
	return walk_boxes(b, depth_min, depth_max, out, capacity, filled, &deepest);
}

int sim_bvh_debug_depth(const sim_bvh *b)
{
	int deepest = -1;
	walk_boxes(b, 1, 0, NULL, 0, 0, &deepest);
	return deepest;
}
