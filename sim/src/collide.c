/* The collision pipeline after Bridson, Fedkiw and Anderson 2002, once per substep.
 *
 * The integrator has moved every particle from x_start to x.  The motion over the
 * substep is taken as linear at the mean velocity vbar = (x - x_start) / h, and the
 * collision response only changes vbar:
 *
 *   1. contacts (proximity): vertex-face and edge-edge pairs closer than their
 *      separation at the start get a repulsion impulse that makes them separate at a
 *      tenth of the overlap per step, and Coulomb friction on the tangential motion;
 *      the impulses of one sweep are averaged per vertex (Jacobi), so the order of the
 *      pairs does not matter;
 *   2. obstacles with an exact distance (plane, sphere, capsule): every cloth vertex is
 *      kept outside them along its whole path (the distance to a convex set is convex
 *      along a line, so its minimum over the step is found by a few bisections);
 *   3. collisions (continuous detection): every pair that comes within CCD_GAP during
 *      the step, approaching, gets an inelastic impulse that stops the approach;
 *      impulses are applied at once (Gauss-Seidel) and the detection repeats, up to
 *      def.collision_iterations sweeps;
 *   4. fail-safe: pairs still colliding after that are merged into impact zones that
 *      move rigidly (Bridson section 7.4, preserving linear and angular momentum), and
 *      the detection repeats with the zones grown until none is left;
 *   5. obstacles again, so no vertex ends inside one;
 *   6. x = x_start + h vbar, and v changes by what vbar changed (Bridson's velocity
 *      update).
 *
 * Boxes and rigid meshes take part in 1, 3 and 4 through their triangles, with
 * infinite mass (inverse mass 0), moving with their prescribed velocities.  Kinematic
 * cloth vertices (pinned, prescribed, grabbed) have inverse mass 0 too.  Pairs whose
 * primitives share a vertex are never tested.
 *
 * Geometry runs in double on the exact float positions the step will write, so what
 * the detection has cleared is what the world ends up with. */
#include "sim_internal.h"

#include "sim/sim_geom.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

/* Continuous detection reports pairs that come within this distance (m): a positive gap
 * keeps resolved pairs from ending the step exactly touching, and it is far above the
 * rounding of float positions near the origin (1e-7 m). */
#define CCD_GAP 1e-5
/* A pair approaching slower than this (m/s) along its normal is not a collision. */
#define APPROACH_EPS 1e-9
/* The fail-safe gives up after this many detection rounds (each one grows the zones). */
#define FAILSAFE_ROUNDS 64

typedef struct pair {
	int a, b; /* vertex-face: vertex, triangle; edge-edge: edge, edge */
} pair;

typedef struct darray {
	void *data;
	int count, capacity;
} darray;

struct sim_collide {
	/* collision vertices: the cloth particles first, then every triangle obstacle's */
	int nv, nv_capacity;
	int n_cloth;     /* the first n_cloth are cloth particles */
	int self_hits;   /* impulses between cloth vertices only, this substep */
	vec4 *x0;        /* positions at the start of the substep; w = inverse mass */
	vec4 *vbar;      /* mean velocity over the substep */
	vec4 *vbar_in;   /* vbar as the integrator left it, for the velocity update */
	vec4 *acc;       /* contact impulses of one sweep (xyz) and their count (w) */
	float *sep;      /* half the separation this vertex's owner keeps (cloth t / 2, obstacle t) */
	vec3 *box_lo, *box_hi; /* each vertex's swept box, for culling primitive pairs */
	float *mu;       /* friction coefficient of the owner */
	int *zone;       /* union-find parent for the impact zones */

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
	int owner_count;  /* cloth objects, then triangle obstacles */
	int *owner_first_tri, *owner_tri_count;
	bool *owner_rigid;
	sim_bvh **trees;
	int tree_capacity;

	darray vf, ee;    /* candidate pairs */
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

static bool push_pair(darray *a, int x, int y)
{
	if (!reserve(a, sizeof(pair), a->count + 1))
		return false;
	((pair *)a->data)[a->count++] = (pair){x, y};
	return true;
}

sim_collide *sim_collide_create(void) { return calloc(1, sizeof(sim_collide)); }

void sim_collide_destroy(sim_collide *c)
{
	if (!c)
		return;
	void *arrays[] = {c->x0, c->vbar, c->vbar_in, c->acc, c->sep, c->mu, c->zone, c->box_lo, c->box_hi, c->tris.data, c->tri_owner.data,
	                  c->edges.data, c->edge_owner.data, c->tri_edges.data, c->own_vert_start.data, c->own_vert.data,
	                  c->own_edge_start.data, c->own_edge.data, c->owner_first_tri, c->owner_tri_count,
	                  c->owner_rigid, c->vf.data, c->ee.data};
	for (size_t i = 0; i < sizeof arrays / sizeof arrays[0]; i++)
		free(arrays[i]);
	for (int i = 0; i < c->tree_capacity; i++)
		sim_bvh_destroy(c->trees[i]);
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
	vec4 **v4[] = {&c->x0, &c->vbar, &c->vbar_in, &c->acc};
	for (size_t i = 0; i < sizeof v4 / sizeof v4[0]; i++) {
		void *q = realloc(*v4[i], sizeof(vec4) * (size_t)cap);
		if (!q)
			return false;
		*v4[i] = q;
	}
	float **f1[] = {&c->sep, &c->mu};
	for (size_t i = 0; i < sizeof f1 / sizeof f1[0]; i++) {
		void *q = realloc(*f1[i], sizeof(float) * (size_t)cap);
		if (!q)
			return false;
		*f1[i] = q;
	}
	vec3 **b3[] = {&c->box_lo, &c->box_hi};
	for (size_t i = 0; i < sizeof b3 / sizeof b3[0]; i++) {
		void *q = realloc(*b3[i], sizeof(vec3) * (size_t)cap);
		if (!q)
			return false;
		*b3[i] = q;
	}
	void *q = realloc(c->zone, sizeof(int) * (size_t)cap);
	if (!q)
		return false;
	c->zone = q;
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

/* Gives each vertex and edge to the first triangle (in index order) that has it. */
static bool assign_owners(sim_collide *c, int nv, int nt, int ne)
{
	if (!reserve(&c->own_vert_start, sizeof(int), nt + 1) || !reserve(&c->own_vert, sizeof(int), nv) ||
	    !reserve(&c->own_edge_start, sizeof(int), nt + 1) || !reserve(&c->own_edge, sizeof(int), ne))
		return false;
	int *vs = c->own_vert_start.data, *vl = c->own_vert.data, *es = c->own_edge_start.data, *el = c->own_edge.data;
	const int *tri = c->tris.data, *te = c->tri_edges.data;
	int *taken = calloc((size_t)(nv > ne ? nv : ne) + 1, sizeof(int));
	if (!taken)
		return false;
	int nvl = 0;
	for (int t = 0; t < nt; t++) {
		vs[t] = nvl;
		for (int j = 0; j < 3; j++)
			if (!taken[tri[3 * t + j]]) {
				taken[tri[3 * t + j]] = 1;
				vl[nvl++] = tri[3 * t + j];
			}
	}
	vs[nt] = nvl;
	memset(taken, 0, sizeof(int) * ((size_t)(nv > ne ? nv : ne) + 1));
	int nel = 0;
	for (int t = 0; t < nt; t++) {
		es[t] = nel;
		for (int j = 0; j < 3; j++)
			if (!taken[te[3 * t + j]]) {
				taken[te[3 * t + j]] = 1;
				el[nel++] = te[3 * t + j];
			}
	}
	es[nt] = nel;
	free(taken);
	return true;
}

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
	if (!assign_owners(c, nv, nt, ne))
		return false;
	c->topology_vertices = nv;
	c->topology_triangles = nt;
	return true;
}

/* Fills x0, vbar, the inverse masses, separations and friction of every collision
 * vertex for this substep. */
static void gather(sim_collide *c, const sim_world *w, float h)
{
	for (int i = 0; i < w->n; i++) {
		const sim_object *o = &w->objects[w->owner[i]];
		glm_vec4_copy(w->x_start[i], c->x0[i]);
		c->x0[i][3] = w->x[i][3]; /* the inverse mass this substep used */
		for (int k = 0; k < 3; k++)
			c->vbar[i][k] = (w->x[i][k] - w->x_start[i][k]) / h;
		c->vbar[i][3] = 0.0f;
		c->sep[i] = 0.5f * o->material.thickness;
		c->mu[i] = o->material.friction;
	}
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
	memcpy(c->vbar_in, c->vbar, sizeof(vec4) * (size_t)c->nv);
}

/* The end position the step will write, x0 + h vbar, in float as the world computes it. */
static void end_position(const sim_collide *c, int i, float h, double out[3])
{
	for (int k = 0; k < 3; k++)
		out[k] = (double)(c->x0[i][k] + h * c->vbar[i][k]);
}

/* ---- broad phase ---------------------------------------------------------------------------- */

/* Each collision vertex's box over the substep (start and current end position),
 * inflated by `pad`; primitives are tested only when their boxes overlap. */
static void vertex_boxes(sim_collide *c, float h, float pad)
{
	for (int i = 0; i < c->nv; i++) {
		for (int k = 0; k < 3; k++) {
			float a = c->x0[i][k], b = c->x0[i][k] + h * c->vbar[i][k];
			c->box_lo[i][k] = (a < b ? a : b) - pad;
			c->box_hi[i][k] = (a < b ? b : a) + pad;
		}
	}
}

static bool boxes_overlap(const sim_collide *c, const int *pa, int na, const int *pb, int nb)
{
	for (int k = 0; k < 3; k++) {
		float lo_a = c->box_lo[pa[0]][k], hi_a = c->box_hi[pa[0]][k];
		for (int i = 1; i < na; i++) {
			float lo = c->box_lo[pa[i]][k], hi = c->box_hi[pa[i]][k];
			lo_a = lo < lo_a ? lo : lo_a;
			hi_a = hi > hi_a ? hi : hi_a;
		}
		float lo_b = c->box_lo[pb[0]][k], hi_b = c->box_hi[pb[0]][k];
		for (int i = 1; i < nb; i++) {
			float lo = c->box_lo[pb[i]][k], hi = c->box_hi[pb[i]][k];
			lo_b = lo < lo_b ? lo : lo_b;
			hi_b = hi > hi_b ? hi : hi_b;
		}
		if (hi_a < lo_b || hi_b < lo_a)
			return false;
	}
	return true;
}

typedef struct broad_ctx {
	sim_collide *c;
	int owner_a, owner_b; /* owners of the trees being traversed */
	bool failed;
} broad_ctx;

static bool shares_vertex(const int *t, int v) { return t[0] == v || t[1] == v || t[2] == v; }

/* A pair of overlapping triangles yields the vertex-face pairs of the vertices each
 * owns against the other triangle, and the edge-edge pairs of the edges each owns,
 * minus those whose primitives share a vertex or whose own boxes are apart. */
static void on_triangle_pair(void *user, int ta, int tb)
{
	broad_ctx *ctx = user;
	sim_collide *c = ctx->c;
	ta += c->owner_first_tri[ctx->owner_a];
	tb += c->owner_first_tri[ctx->owner_b];
	const int *tri = c->tris.data;
	const int(*edges)[2] = c->edges.data;
	const int *vs = c->own_vert_start.data, *vl = c->own_vert.data, *es = c->own_edge_start.data,
	          *el = c->own_edge.data;
	const int *A = &tri[3 * ta], *B = &tri[3 * tb];
	bool ok = true;
	for (int k = vs[ta]; k < vs[ta + 1]; k++)
		if (!shares_vertex(B, vl[k]) && boxes_overlap(c, &vl[k], 1, B, 3))
			ok = ok && push_pair(&c->vf, vl[k], tb);
	for (int k = vs[tb]; k < vs[tb + 1]; k++)
		if (!shares_vertex(A, vl[k]) && boxes_overlap(c, &vl[k], 1, A, 3))
			ok = ok && push_pair(&c->vf, vl[k], ta);
	for (int i = es[ta]; i < es[ta + 1]; i++) {
		for (int j = es[tb]; j < es[tb + 1]; j++) {
			const int *p = edges[el[i]], *q = edges[el[j]];
			if (p[0] == q[0] || p[0] == q[1] || p[1] == q[0] || p[1] == q[1] || !boxes_overlap(c, p, 2, q, 2))
				continue;
			ok = ok && push_pair(&c->ee, el[i], el[j]);
		}
	}
	if (!ok)
		ctx->failed = true;
}

/* Candidate pairs for the motion from x0 at the current vbar: the hierarchies are
 * refitted to the swept triangles inflated by pad (rebuilt when they have degraded),
 * traversed in a fixed order, and the primitive pairs culled by their own boxes.  Run
 * again whenever impulses have changed the paths. */
static bool broad_phase(sim_collide *c, const sim_world *w, float h, float pad, sim_stats *st)
{
	int64_t t0 = sim_now_ns();
	vertex_boxes(c, h, 0.5f * pad);
	for (int i = 0; i < c->nv; i++) {
		for (int k = 0; k < 3; k++)
			c->acc[i][k] = c->x0[i][k] + h * c->vbar[i][k]; /* end positions; acc is free here */
		c->acc[i][3] = 0.0f;
	}
	const int *tri = c->tris.data;
	for (int o = 0; o < c->owner_count; o++) {
		if (!sim_bvh_update(c->trees[o], tri + 3 * c->owner_first_tri[o], c->owner_tri_count[o], c->x0, c->acc, pad))
			return false;
	}
	for (int i = 0; i < c->nv; i++)
		glm_vec4_zero(c->acc[i]);
	int64_t t1 = sim_now_ns();
	st->stage_us[SIM_STAGE_REFIT] += (double)(t1 - t0) * 1e-3;
	c->vf.count = c->ee.count = 0;
	broad_ctx ctx = {c, 0, 0, false};
	for (int a = 0; a < c->owner_count; a++) {
		if (c->owner_rigid[a])
			continue;
		if (w->def.self_collisions) {
			ctx.owner_a = ctx.owner_b = a;
			sim_bvh_self_pairs(c->trees[a], on_triangle_pair, &ctx);
		}
		for (int b = a + 1; b < c->owner_count; b++) {
			if (!c->owner_rigid[b] && !w->def.self_collisions)
				continue;
			ctx.owner_a = a;
			ctx.owner_b = b;
			sim_bvh_pairs(c->trees[a], c->trees[b], on_triangle_pair, &ctx);
		}
	}
	if (ctx.failed)
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

/* Friction of the pair: the geometric mean of the two sides' coefficients. */
static double pair_friction(const sim_collide *c, const stencil *s)
{
	return sqrt((double)c->mu[s->idx[0]] * (double)c->mu[s->idx[3]]);
}

static double pair_separation(const sim_collide *c, const stencil *s)
{
	/* the first vertex belongs to one side, the last to the other */
	return (double)c->sep[s->idx[0]] + (double)c->sep[s->idx[3]];
}

/* The velocity change dv of the relative velocity, as per-vertex changes. */
static void apply_now(sim_collide *c, const stencil *s, const double dv[3], double inv_m)
{
	for (int k = 0; k < 4; k++) {
		int i = s->idx[k];
		double f = s->coef[k] * c->x0[i][3] / inv_m;
		for (int j = 0; j < 3; j++)
			c->vbar[i][j] += (float)(f * dv[j]);
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

/* Repulsion and friction for a pair at distance d < separation along unit normal n
 * (pointing from the second side to the first): the normal relative velocity is raised
 * to separate at a tenth of the overlap per step, and friction takes up to mu times
 * that change off the tangential velocity. */
static bool cloth_only(const sim_collide *c, const stencil *s)
{
	return s->idx[0] < c->n_cloth && s->idx[1] < c->n_cloth && s->idx[2] < c->n_cloth && s->idx[3] < c->n_cloth;
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
	double cut = vt_len > 0.0 ? fmin(mu * dvn / vt_len, 1.0) : 0.0;
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

static int proximity(sim_collide *c, float h)
{
	int contacts = 0;
	const pair *vf = c->vf.data, *ee = c->ee.data;
	const int *tri = c->tris.data;
	const int(*edges)[2] = c->edges.data;
	for (int q = 0; q < c->vf.count; q++) {
		const int *t = &tri[3 * vf[q].b];
		double p[3], a[3], b[3], cc[3], wts[3];
		to_d(c->x0[vf[q].a], p), to_d(c->x0[t[0]], a), to_d(c->x0[t[1]], b), to_d(c->x0[t[2]], cc);
		stencil s;
		vf_stencil(c, &vf[q], (double[3]){1, 0, 0}, &s);
		double sep = pair_separation(c, &s);
		double d2 = sim_geom_point_triangle(p, a, b, cc, wts);
		if (!(d2 < sep * sep))
			continue;
		double d = sqrt(d2), diff[3], e1[3], e2[3], fn[3], n[3];
		for (int k = 0; k < 3; k++) {
			diff[k] = p[k] - (wts[0] * a[k] + wts[1] * b[k] + wts[2] * cc[k]);
			e1[k] = b[k] - a[k];
			e2[k] = cc[k] - a[k];
		}
		cross3(e1, e2, fn);
		if (!unit_or(diff, fn, n))
			continue;
		vf_stencil(c, &vf[q], wts, &s);
		contacts += contact_impulse(c, &s, n, d, sep, h);
	}
	for (int q = 0; q < c->ee.count; q++) {
		const int *ea = edges[ee[q].a], *eb = edges[ee[q].b];
		double p0[3], p1[3], q0[3], q1[3], u, v;
		to_d(c->x0[ea[0]], p0), to_d(c->x0[ea[1]], p1), to_d(c->x0[eb[0]], q0), to_d(c->x0[eb[1]], q1);
		stencil s;
		ee_stencil(c, &ee[q], 0.5, 0.5, &s);
		double sep = pair_separation(c, &s);
		double d2 = sim_geom_segment_segment(p0, p1, q0, q1, &u, &v);
		if (!(d2 < sep * sep) || u <= 0.0 || u >= 1.0 || v <= 0.0 || v >= 1.0)
			continue; /* an end point: the vertex-face pairs cover it */
		double d = sqrt(d2), diff[3], da[3], db[3], cr[3], n[3];
		for (int k = 0; k < 3; k++) {
			diff[k] = (p0[k] + u * (p1[k] - p0[k])) - (q0[k] + v * (q1[k] - q0[k]));
			da[k] = p1[k] - p0[k];
			db[k] = q1[k] - q0[k];
		}
		cross3(da, db, cr);
		if (!unit_or(diff, cr, n))
			continue;
		ee_stencil(c, &ee[q], u, v, &s);
		contacts += contact_impulse(c, &s, n, d, sep, h);
	}
	apply_accumulated(c);
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

/* Tests one candidate over the substep; on an approaching hit fills the stencil and
 * the contact normal (from the second side to the first) at the time of impact. */
static bool detect(const sim_collide *c, bool vertex_face, const pair *p, float h, stencil *s, double n[3])
{
	int idx[4];
	if (vertex_face) {
		const int *t = &((const int *)c->tris.data)[3 * p->b];
		idx[0] = p->a, idx[1] = t[0], idx[2] = t[1], idx[3] = t[2];
	} else {
		const int(*e)[2] = c->edges.data;
		idx[0] = e[p->a][0], idx[1] = e[p->a][1], idx[2] = e[p->b][0], idx[3] = e[p->b][1];
	}
	if (c->x0[idx[0]][3] + c->x0[idx[1]][3] + c->x0[idx[2]][3] + c->x0[idx[3]][3] == 0.0f)
		return false; /* nothing here can move */
	double x0[4][3], x1[4][3];
	pair_positions(c, idx, h, x0, x1);
	/* Cheap exclusion first: the distance can shrink no faster than the largest relative
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
	apply_now(c, s, dv, inv_m);
	c->self_hits += cloth_only(c, s);
	return true;
}

/* One sweep of detection over every candidate; with respond, each approaching hit gets
 * its impulse at once; otherwise hits are only reported to on_hit. */
typedef void (*hit_fn)(sim_collide *c, const stencil *s, void *user);

static int sweep(sim_collide *c, float h, bool respond, hit_fn on_hit, void *user)
{
	int hits = 0;
	const pair *vf = c->vf.data, *ee = c->ee.data;
	stencil s;
	double n[3];
	for (int q = 0; q < c->vf.count; q++) {
		if (!detect(c, true, &vf[q], h, &s, n))
			continue;
		hits++;
		if (respond)
			collision_impulse(c, &s, n, h);
		else if (on_hit)
			on_hit(c, &s, user);
	}
	for (int q = 0; q < c->ee.count; q++) {
		if (!detect(c, false, &ee[q], h, &s, n))
			continue;
		hits++;
		if (respond)
			collision_impulse(c, &s, n, h);
		else if (on_hit)
			on_hit(c, &s, user);
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

static void merge_hit(sim_collide *c, const stencil *s, void *user)
{
	(void)user;
	for (int k = 1; k < 4; k++)
		zone_union(c->zone, s->idx[0], s->idx[k]);
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
		if (fixed) {
			for (int i = root; i < nv; i++)
				if (zone_find(c->zone, i) == root && c->x0[i][3] != 0.0f)
					for (int k = 0; k < 3; k++)
						c->vbar[i][k] = (float)(fixed_v[k] / fixed);
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
		}
	}
	free(count);
}

/* ---- exact-distance obstacles --------------------------------------------------------------- */

/* Keeps every free cloth vertex outside planes, spheres and capsules over its whole
 * path: the first time its distance falls below the separation, its velocity relative
 * to the obstacle loses the normal approach and friction acts on the rest; a vertex
 * that would end too close is moved out along the normal.  Returns the number of
 * vertices changed. */
static int obstacle_pass(sim_collide *c, const sim_world *w, float h)
{
	int touched = 0;
	for (int k = 0; k < w->obstacle_count; k++) {
		const sim_obstacle *ob = &w->obstacles[k];
		if (sim_obstacle_has_triangles(ob))
			continue;
		vec3 p0, p1;
		versor q0, q1;
		glm_vec3_copy((float *)ob->position, p0);
		glm_vec4_copy((float *)ob->orientation, q0);
		sim_obstacle_pose_at(ob, h, p1, q1);
		for (int i = 0; i < w->n; i++) {
			if (c->x0[i][3] == 0.0f)
				continue;
			float sep = c->sep[i] + ob->def.thickness;
			vec3 a, b, n0, n1;
			glm_vec3_copy(c->x0[i], a);
			for (int j = 0; j < 3; j++)
				b[j] = c->x0[i][j] + h * c->vbar[i][j];
			float d0 = sim_obstacle_distance(ob, p0, q0, a, n0);
			float d1 = sim_obstacle_distance(ob, p1, q1, b, n1);
			float travel = glm_vec3_distance(a, b) + glm_vec3_distance(p0, p1);
			if (d0 > sep + travel && d1 > sep)
				continue; /* cannot have come near: distance is 1-Lipschitz */
			/* earliest t with distance < sep: bisection on the pose-interpolated path */
			float t_hit = -1.0f;
			vec3 n;
			if (d0 < sep) {
				t_hit = 0.0f;
				glm_vec3_copy(n0, n);
			} else {
				float lo = 0.0f, hi = 1.0f;
				bool below = d1 < sep;
				if (!below) { /* a minimum below sep inside the step? coarse samples */
					for (int sample = 1; sample < 8 && !below; sample++) {
						float t = (float)sample / 8.0f;
						vec3 pt, pp, nn;
						versor qt;
						for (int j = 0; j < 3; j++)
							pt[j] = a[j] + t * (b[j] - a[j]);
						sim_obstacle_pose_at(ob, t * h, pp, qt);
						if (sim_obstacle_distance(ob, pp, qt, pt, nn) < sep) {
							below = true;
							hi = t;
						}
					}
				}
				if (!below)
					continue;
				for (int it = 0; it < 24; it++) {
					float mid = 0.5f * (lo + hi);
					vec3 pt, pp, nn;
					versor qt;
					for (int j = 0; j < 3; j++)
						pt[j] = a[j] + mid * (b[j] - a[j]);
					sim_obstacle_pose_at(ob, mid * h, pp, qt);
					if (sim_obstacle_distance(ob, pp, qt, pt, nn) < sep)
						hi = mid;
					else
						lo = mid;
				}
				t_hit = lo;
				vec3 pt, pp;
				versor qt;
				for (int j = 0; j < 3; j++)
					pt[j] = a[j] + t_hit * (b[j] - a[j]);
				sim_obstacle_pose_at(ob, t_hit * h, pp, qt);
				sim_obstacle_distance(ob, pp, qt, pt, n);
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
				float mu = sqrtf(c->mu[i] * ob->def.friction);
				float cut = vt_len > 0.0f ? fminf(mu * -vn / vt_len, 1.0f) : 0.0f;
				for (int j = 0; j < 3; j++)
					c->vbar[i][j] = vo[j] + (1.0f - cut) * vt[j];
				touched++;
			}
			/* whatever remains, the vertex must end at least sep outside */
			for (int j = 0; j < 3; j++)
				b[j] = c->x0[i][j] + h * c->vbar[i][j];
			d1 = sim_obstacle_distance(ob, p1, q1, b, n1);
			if (d1 < sep) {
				/* 1e-6 beyond, so float rounding of the end position cannot undo it */
				float push = sep - d1 + 1e-6f;
				for (int j = 0; j < 3; j++)
					c->vbar[i][j] += push * n1[j] / h;
				touched++;
			}
		}
	}
	return touched;
}

/* ---- the substep ---------------------------------------------------------------------------- */

sim_result sim_collide_substep(sim_world *w, float h, sim_stats *st)
{
	sim_collide *c = w->collide;
	int nv = w->n + obstacle_vertex_total(w);
	if (!reserve_vertices(c, nv))
		return SIM_ERROR_OUT_OF_MEMORY;
	c->nv = nv;
	c->n_cloth = w->n;
	c->self_hits = 0;
	if (!build_topology(c, w, nv))
		return SIM_ERROR_OUT_OF_MEMORY;
	gather(c, w, h);
	float max_sep = 0.0f;
	for (int i = 0; i < nv; i++)
		max_sep = c->sep[i] > max_sep ? c->sep[i] : max_sep;

	/* One broad phase serves the contacts (pairs within the separation at the start) and
	 * the first collision sweep; later sweeps look again only after impulses changed
	 * the paths. */
	float pad = 2.0f * max_sep > 4.0f * (float)CCD_GAP ? 2.0f * max_sep : 4.0f * (float)CCD_GAP;
	if (!broad_phase(c, w, h, pad, st))
		return SIM_ERROR_OUT_OF_MEMORY;
	int64_t t0 = sim_now_ns();
	st->contacts += proximity(c, h);
	int pushed = obstacle_pass(c, w, h);
	st->contacts += pushed;
	st->stage_us[SIM_STAGE_PROXIMITY] += (double)(sim_now_ns() - t0) * 1e-3;

	int hits = 0;
	bool moved = pushed > 0; /* the obstacles changed paths after the candidates were found */
	for (int it = 0; it <= w->def.collision_iterations; it++) {
		if (moved && !broad_phase(c, w, h, pad, st))
			return SIM_ERROR_OUT_OF_MEMORY;
		int64_t t1 = sim_now_ns();
		bool respond = it < w->def.collision_iterations; /* the last sweep only looks */
		hits = sweep(c, h, respond, NULL, NULL);
		st->stage_us[SIM_STAGE_CCD] += (double)(sim_now_ns() - t1) * 1e-3;
		if (respond)
			st->collisions += hits;
		if (!hits)
			break;
		moved = respond;
	}

	/* fail-safe: rigid impact zones, grown until nothing collides */
	if (hits) {
		int64_t t2 = sim_now_ns();
		for (int i = 0; i < nv; i++)
			c->zone[i] = i;
		int zones = 0;
		for (int round = 0; round < FAILSAFE_ROUNDS && hits; round++) {
			hits = sweep(c, h, false, merge_hit, NULL);
			if (!hits)
				break;
			rigidify(c, h, &zones, &st->largest_zone);
			if (!broad_phase(c, w, h, pad, st))
				return SIM_ERROR_OUT_OF_MEMORY;
		}
		st->impact_zones += zones;
		st->stage_us[SIM_STAGE_FAILSAFE] += (double)(sim_now_ns() - t2) * 1e-3;
	}

	int64_t t3 = sim_now_ns();
	st->contacts += obstacle_pass(c, w, h);
	st->stage_us[SIM_STAGE_PROXIMITY] += (double)(sim_now_ns() - t3) * 1e-3;

	st->self_contacts += c->self_hits;
	/* write back the cloth: end positions and Bridson's velocity update */
	for (int i = 0; i < w->n; i++) {
		if (c->x0[i][3] == 0.0f)
			continue;
		for (int k = 0; k < 3; k++) {
			w->x[i][k] = c->x0[i][k] + h * c->vbar[i][k];
			w->v[i][k] += c->vbar[i][k] - c->vbar_in[i][k];
		}
	}
	return SIM_OK;
}
