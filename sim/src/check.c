/* sim_world_check: the intersection-free audit behind `tela run --check` and the tests.
 *
 * It must not trust the collision pipeline it audits, so it shares only the hierarchy
 * (whose output the tests compare with brute force) and decides with exact predicates
 * on the positions as stored: every float converts to double exactly, and
 * sim_geom_triangles_intersect is exact on doubles, so a reported intersection is a
 * real one of the stored triangles, touching included. */
#include "sim_internal.h"
#include "sim/sim_geom.h"

#include <math.h>
#include <stdlib.h>

typedef struct check_ctx {
	const int *tris;
	const vec4 *x;
	int intersections;
} check_ctx;

static bool share_vertex(const int *a, const int *b)
{
	for (int i = 0; i < 3; i++)
		for (int j = 0; j < 3; j++)
			if (a[i] == b[j])
				return true;
	return false;
}

static void load_triangle(const vec4 *x, const int *t, double out[3][3])
{
	for (int v = 0; v < 3; v++)
		for (int a = 0; a < 3; a++)
			out[v][a] = (double)x[t[v]][a];
}

static void check_pair(void *user, int a, int b)
{
	check_ctx *c = user;
	const int *ta = c->tris + 3 * (size_t)a, *tb = c->tris + 3 * (size_t)b;
	/* Triangles that share a vertex or an edge touch by construction: not a collision. */
	if (share_vertex(ta, tb))
		return;
	double pa[3][3], pb[3][3];
	load_triangle(c->x, ta, pa);
	load_triangle(c->x, tb, pb);
	if (sim_geom_triangles_intersect(pa, pb))
		c->intersections++;
}

/* Every pair, with a box test first: the answer when the hierarchy cannot be allocated
 * (slow, but the check must not report a clean state it did not examine). */
static void check_all_pairs(check_ctx *c, int count)
{
	for (int a = 0; a < count; a++) {
		const int *ta = c->tris + 3 * (size_t)a;
		float lo[3], hi[3];
		for (int k = 0; k < 3; k++) {
			lo[k] = hi[k] = c->x[ta[0]][k];
			for (int v = 1; v < 3; v++) {
				float p = c->x[ta[v]][k];
				lo[k] = p < lo[k] ? p : lo[k];
				hi[k] = p > hi[k] ? p : hi[k];
			}
		}
		for (int b = a + 1; b < count; b++) {
			const int *tb = c->tris + 3 * (size_t)b;
			bool apart = false;
			for (int k = 0; k < 3 && !apart; k++) {
				float p0 = c->x[tb[0]][k], p1 = c->x[tb[1]][k], p2 = c->x[tb[2]][k];
				apart = (p0 < lo[k] && p1 < lo[k] && p2 < lo[k]) || (p0 > hi[k] && p1 > hi[k] && p2 > hi[k]);
			}
			if (!apart)
				check_pair(c, a, b);
		}
	}
}

static int count_intersections(const sim_world *w)
{
	check_ctx c = {w->triangles, w->x, 0};
	/* One tree over every cloth triangle of the world: its self pairs cover pairs
	 * within one object and across objects alike. */
	sim_bvh *bvh = sim_bvh_create();
	if (bvh && sim_bvh_update(bvh, w->triangles, w->triangle_count, w->x, w->x, 0.0f))
		sim_bvh_self_pairs(bvh, check_pair, &c);
	else
		check_all_pairs(&c, w->triangle_count);
	sim_bvh_destroy(bvh);
	return c.intersections;
}

static int count_inside(const sim_world *w)
{
	int inside = 0;
	for (int i = 0; i < w->n; i++)
		for (int k = 0; k < w->obstacle_count; k++) {
			const sim_obstacle *o = &w->obstacles[k];
			vec3 p = {w->x[i][0], w->x[i][1], w->x[i][2]}, normal;
			/* The tolerance lets a vertex resting exactly on a surface (as contact
			 * handling leaves it, up to rounding of the distance) count as outside. */
			if (sim_obstacle_distance(o, o->position, o->orientation, p, normal) < -1e-6f) {
				inside++;
				break;
			}
		}
	return inside;
}

void sim_world_check(const sim_world *w, int *out_intersections, int *out_vertices_inside)
{
	if (out_intersections)
		*out_intersections = count_intersections(w);
	if (out_vertices_inside)
		*out_vertices_inside = count_inside(w);
}

/* ---- the cloth's surface against obstacles -------------------------------------------------- */

typedef struct mesh_check {
	const int *cloth_tris, *mesh_tris;
	const vec4 *x, *mx;
	unsigned char *flag;
} mesh_check;

static void mesh_pair(void *user, int a, int b)
{
	mesh_check *m = user;
	const int *ta = m->cloth_tris + 3 * (size_t)a, *tb = m->mesh_tris + 3 * (size_t)b;
	if (m->flag[a])
		return;
	double pa[3][3], pb[3][3];
	load_triangle(m->x, ta, pa);
	load_triangle(m->mx, tb, pb);
	if (sim_geom_triangles_intersect(pa, pb))
		m->flag[a] = 1;
}

/* Cloth triangles that cross a mesh obstacle's triangles (exact), flagged; false out of
 * memory. */
static bool flag_mesh_crossings(const sim_world *w, const sim_obstacle *o, unsigned char *flag)
{
	vec4 *mx = malloc(sizeof(vec4) * (size_t)o->vertex_count);
	sim_bvh *cloth = sim_bvh_create(), *mesh = sim_bvh_create();
	bool ok = mx && cloth && mesh;
	if (ok) {
		sim_obstacle_world_vertices(o, o->position, o->orientation, mx);
		ok = sim_bvh_update(cloth, w->triangles, w->triangle_count, w->x, w->x, 0.0f) &&
		     sim_bvh_update(mesh, o->local_triangles, o->triangle_count, mx, mx, 0.0f);
	}
	if (ok) {
		mesh_check m = {w->triangles, o->local_triangles, w->x, mx, flag};
		sim_bvh_pairs(cloth, mesh, mesh_pair, &m);
	}
	sim_bvh_destroy(cloth);
	sim_bvh_destroy(mesh);
	free(mx);
	return ok;
}

/* A radius about the obstacle's position that holds its solid. */
static double bounding_radius(const sim_obstacle *o)
{
	const sim_obstacle_def *d = &o->def;
	switch (d->shape) {
	case SIM_SHAPE_SPHERE: return d->radius;
	case SIM_SHAPE_CAPSULE: return (double)d->half_height + (double)d->radius;
	case SIM_SHAPE_BOX: {
		double h0 = d->half_extents[0], h1 = d->half_extents[1], h2 = d->half_extents[2];
		return sqrt(h0 * h0 + h1 * h1 + h2 * h2);
	}
	default: return INFINITY;
	}
}

int sim_world_check_surface(const sim_world *w, double tolerance, double *out_min_clearance)
{
	double least = INFINITY;
	int count = 0;
	unsigned char *flag = calloc((size_t)w->triangle_count + 1, 1);
	if (!flag)
		return -1;
	for (int k = 0; k < w->obstacle_count; k++) {
		const sim_obstacle *o = &w->obstacles[k];
		if (o->def.shape == SIM_SHAPE_MESH) {
			/* a mesh has no closed-form distance to a triangle: a crossing is the failure */
			if (!flag_mesh_crossings(w, o, flag)) {
				free(flag);
				return -1;
			}
			continue;
		}
		if (o->def.shape == SIM_SHAPE_PLANE)
			continue; /* a triangle is nearest a plane at a vertex: count_inside has it */
		double m[3][3], bound = bounding_radius(o);
		sim_obstacle_frame(o->orientation, m);
		for (int t = 0; t < w->triangle_count; t++) {
			const int *tri = w->triangles + 3 * (size_t)t;
			double p[3][3];
			load_triangle(w->x, tri, p);
			double sep = 0.5 * (double)w->objects[w->owner[tri[0]]].material.thickness + (double)o->def.thickness;
			/* the triangle's ball (about its first corner) against the obstacle's */
			double reach = 0.0, gap2 = 0.0;
			for (int v = 1; v < 3; v++) {
				double e2 = 0.0;
				for (int a = 0; a < 3; a++)
					e2 += (p[v][a] - p[0][a]) * (p[v][a] - p[0][a]);
				reach = fmax(reach, sqrt(e2));
			}
			for (int a = 0; a < 3; a++)
				gap2 += (p[0][a] - (double)o->position[a]) * (p[0][a] - (double)o->position[a]);
			/* (a micron to spare for the rounding of these sums) */
			if (sqrt(gap2) > reach + bound + sep + fmax(tolerance, 0.0) + 1e-6)
				continue;
			double wt[3], n[3];
			double clearance = sim_obstacle_triangle_distance(o, o->position, (const double(*)[3])m, p, wt, n) - sep;
			least = clearance < least ? clearance : least;
			if (clearance < -tolerance)
				flag[t] = 1;
		}
	}
	for (int t = 0; t < w->triangle_count; t++)
		count += flag[t];
	free(flag);
	if (out_min_clearance)
		*out_min_clearance = least;
	return count;
}
