/* The built-in scenes.  Values are chosen so that every scene is stable with the
 * default symplectic Euler integrator at its own step; the comment of each says why. */
#include "scenes/scenes.h"

#include <stddef.h>
#include <string.h>

/* A 1 m square sheet of 20 x 20 vertices pinned at the two corners of one edge.  Soft
 * enough (100 N/m) that the corners visibly stretch without strain limiting, stable at
 * 1 kHz with symplectic Euler: the grid's highest mode at rest is about 1.1e3 rad/s
 * (power iteration on its stiffness matrix, 0.5 g per vertex) against the limit
 * 2 / h = 2e3 rad/s. */
static sim_world *hanging(void)
{
	sim_world_def def = sim_world_def_default();
	def.air_damping = 0.05f;
	sim_world *w = sim_world_create(&def);
	if (!w)
		return NULL;
	sim_grid_def g = sim_grid_def_default();
	g.name = "cloth";
	g.nx = g.ny = 20;
	g.origin[0] = -0.5f, g.origin[1] = 1.5f, g.origin[2] = 0.0f;
	g.axis_u[0] = 1.0f, g.axis_u[1] = 0.0f, g.axis_u[2] = 0.0f;
	g.axis_v[0] = 0.0f, g.axis_v[1] = 0.0f, g.axis_v[2] = 1.0f; /* horizontal, falls and swings */
	g.material.stiffness[SIM_SPRING_STRUCTURAL] = 100.0f;
	g.material.stiffness[SIM_SPRING_SHEAR] = 50.0f;
	g.material.stiffness[SIM_SPRING_BEND] = 2.0f;
	int obj = sim_world_add_grid(w, &g);
	if (obj < 0) {
		sim_world_destroy(&w);
		return NULL;
	}
	int first = sim_world_object_first_vertex(w, obj);
	sim_world_pin(w, first, true);
	sim_world_pin(w, first + g.nx - 1, true);
	return w;
}

/* A horizontal 1 m sheet, 20 x 20, released from rest with no pins, no damping and no
 * air: it falls with exactly g until something (issue 3) catches it. */
static sim_world *free_fall(void)
{
	sim_world_def def = sim_world_def_default();
	sim_world *w = sim_world_create(&def);
	if (!w)
		return NULL;
	sim_grid_def g = sim_grid_def_default();
	g.name = "sheet";
	g.nx = g.ny = 20;
	g.origin[0] = -0.5f, g.origin[1] = 2.0f, g.origin[2] = -0.5f;
	g.axis_u[0] = 1.0f, g.axis_u[1] = 0.0f, g.axis_u[2] = 0.0f;
	g.axis_v[0] = 0.0f, g.axis_v[1] = 0.0f, g.axis_v[2] = 1.0f;
	g.material.stiffness[SIM_SPRING_STRUCTURAL] = 100.0f;
	g.material.stiffness[SIM_SPRING_SHEAR] = 50.0f;
	g.material.stiffness[SIM_SPRING_BEND] = 2.0f;
	if (sim_world_add_grid(w, &g) < 0)
		sim_world_destroy(&w);
	return w;
}

/* Seed 002's tetrahedron: 20 cm edges, 0.1 kg, edge springs and springs to the rest
 * shape, no gravity (it floats in the pointer's workspace as in the seed).  The apex
 * starts with a push so a headless run shows it deform and return to rest. */
static sim_world *tetrahedron(void)
{
	sim_world_def def = sim_world_def_default();
	def.gravity[1] = 0.0f;
	sim_world *w = sim_world_create(&def);
	if (!w)
		return NULL;
	sim_material m = sim_material_default();
	m.total_mass = 0.1f;
	m.stiffness[SIM_SPRING_STRUCTURAL] = 40.0f;
	m.damping[SIM_SPRING_STRUCTURAL] = 0.2f;
	m.anchor_stiffness = 10.0f;
	m.anchor_damping = 0.05f;
	vec3 center = {0.0f, 1.0f, 0.0f};
	int obj = sim_world_add_tetrahedron(w, "tetrahedron", center, 0.2f, &m);
	if (obj < 0) {
		sim_world_destroy(&w);
		return NULL;
	}
	int apex = sim_world_object_first_vertex(w, obj) + 3;
	vec3 push = {0.6f, 0.0f, 0.0f};
	sim_world_set_vertex(w, apex, sim_world_positions(w)[apex], push);
	return w;
}

typedef struct builtin {
	scn_info info;
	sim_world *(*create)(void);
} builtin;

static const builtin builtins[] = {
	{{"hanging", "a 1 m cloth pinned at two corners, falling and swinging", 1e-3f, 5.0}, hanging},
	{{"free-fall", "a free-falling 1 m sheet", 1e-3f, 1.0}, free_fall},
	{{"tetrahedron", "seed 002's mass-spring tetrahedron, pushed and returning to rest", 1e-3f, 3.0}, tetrahedron},
};

int scn_builtin_count(void) { return (int)(sizeof builtins / sizeof builtins[0]); }

const scn_info *scn_builtin_info(int index)
{
	return index >= 0 && index < scn_builtin_count() ? &builtins[index].info : NULL;
}

const scn_info *scn_find(const char *name)
{
	for (int i = 0; i < scn_builtin_count(); i++)
		if (strcmp(builtins[i].info.name, name) == 0)
			return &builtins[i].info;
	return NULL;
}

sim_world *scn_create(const char *name)
{
	for (int i = 0; i < scn_builtin_count(); i++)
		if (strcmp(builtins[i].info.name, name) == 0)
			return builtins[i].create();
	return NULL;
}
