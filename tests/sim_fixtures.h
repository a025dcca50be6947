/* Small worlds several tests build the same way. */
#ifndef TELA_TEST_SIM_FIXTURES_H
#define TELA_TEST_SIM_FIXTURES_H

#include "sim/sim.h"

/* A clock for sim_set_clock that advances one microsecond a reading: an elapsed time
 * counts the readings in between. */
static inline int64_t tick_clock(void)
{
	static int64_t ticks;
	return ticks += 1000;
}

/* A single triangle object; its vertices get the given velocity (NULL: at rest). */
static inline int add_triangle(sim_world *w, const char *name, const float p[9], const float *vel)
{
	static const int tri[3] = {0, 1, 2};
	sim_mesh_def m = {.name = name, .vertex_count = 3, .positions = p, .triangle_count = 1, .triangles = tri};
	m.material = sim_material_default();
	m.material.total_mass = 0.03f;
	int obj = sim_world_add_mesh(w, &m);
	if (obj >= 0 && vel) {
		int first = sim_world_object_first_vertex(w, obj);
		for (int i = 0; i < 3; i++)
			sim_world_set_vertex(w, first + i, &p[3 * i], vel);
	}
	return obj;
}

/* A pair of the debug log in canonical form: vertex-triangle with the triangle sorted,
 * edge-edge with each edge and then the two edges sorted, so that pairs compare whatever
 * order the pipeline keeps its primitives in. */
typedef struct pair_key {
	int kind, v[4];
} pair_key;

static inline void pair_key_sort2(int *a, int *b)
{
	if (*a > *b) {
		int t = *a;
		*a = *b;
		*b = t;
	}
}

static inline pair_key pair_key_of(int kind, const int v[4])
{
	pair_key k = {kind, {v[0], v[1], v[2], v[3]}};
	if (kind == SIM_PAIR_VERTEX_TRIANGLE) {
		pair_key_sort2(&k.v[1], &k.v[2]);
		pair_key_sort2(&k.v[2], &k.v[3]);
		pair_key_sort2(&k.v[1], &k.v[2]);
	} else if (kind == SIM_PAIR_EDGE_EDGE) {
		pair_key_sort2(&k.v[0], &k.v[1]);
		pair_key_sort2(&k.v[2], &k.v[3]);
		if (k.v[0] > k.v[2] || (k.v[0] == k.v[2] && k.v[1] > k.v[3])) {
			int a = k.v[0], b = k.v[1];
			k.v[0] = k.v[2], k.v[1] = k.v[3], k.v[2] = a, k.v[3] = b;
		}
	}
	return k;
}

/* For qsort and bsearch: kind first, then the four vertices. */
static inline int pair_key_cmp(const void *pa, const void *pb)
{
	const pair_key *a = pa, *b = pb;
	if (a->kind != b->kind)
		return a->kind < b->kind ? -1 : 1;
	for (int i = 0; i < 4; i++)
		if (a->v[i] != b->v[i])
			return a->v[i] < b->v[i] ? -1 : 1;
	return 0;
}

/* An n x n cloth of the given side released hanging above the floor, its top edge at
 * height top, tilted a little as the pile scene's, so that it folds onto itself; the
 * pile's material.  NULL when the world cannot be built. */
static inline sim_world *hanging_pile(sim_integrator integ, int n, float side, float top)
{
	sim_world_def def = sim_world_def_default();
	def.integrator = integ;
	def.air_damping = 0.1f;
	sim_world *w = sim_world_create(&def);
	if (!w)
		return NULL;
	sim_obstacle_def floor = sim_obstacle_def_default(SIM_SHAPE_PLANE);
	sim_grid_def g = sim_grid_def_default();
	g.nx = g.ny = n;
	g.size_x = g.size_y = side;
	g.origin[0] = -0.5f * side, g.origin[1] = top, g.origin[2] = 0.0f;
	g.axis_u[0] = 1.0f, g.axis_u[1] = 0.0f, g.axis_u[2] = 0.0f;
	g.axis_v[0] = 0.0f, g.axis_v[1] = -0.995f, g.axis_v[2] = 0.0998f;
	g.material.stiffness[0] = 100.0f, g.material.stiffness[1] = 50.0f, g.material.stiffness[2] = 2.0f;
	g.material.friction = 0.4f;
	g.material.areal_density = 0.4f; /* as the pile: symplectic Euler stays stable at 1 ms */
	if (sim_world_add_obstacle(w, &floor) < 0 || sim_world_add_grid(w, &g) < 0)
		sim_world_destroy(&w);
	return w;
}

#endif
