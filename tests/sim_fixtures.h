/* Small worlds several tests build the same way. */
#ifndef TELA_TEST_SIM_FIXTURES_H
#define TELA_TEST_SIM_FIXTURES_H

#include "sim/sim.h"

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

#endif
