/* sim_world_check: the intersection-free audit behind `tela run --check` and the tests.
 *
 * It must not trust the collision pipeline it audits, so it shares only the hierarchy
 * (whose output the tests compare with brute force) and decides with exact predicates
 * on the positions as stored: every float converts to double exactly, and
 * sim_geom_triangles_intersect is exact on doubles, so a reported intersection is a
 * real one of the stored triangles, touching included. */
#include "sim_internal.h"
#include "sim/sim_geom.h"

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
