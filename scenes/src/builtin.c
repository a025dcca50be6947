/* The built-in scenes.  Values are chosen so that every scene is stable with the
 * default symplectic Euler integrator at its own step; the comment of each says why. */
#include "scenes/scenes.h"

#include <math.h>
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

/* ---- collision scenes (issue 3) -------------------------------------------------------------- */

/* A soft cloth material that symplectic Euler steps stably at 1 kHz down to about
 * 0.3 g per vertex (see hanging). */
static sim_material soft_cloth(void)
{
	sim_material m = sim_material_default();
	m.stiffness[SIM_SPRING_STRUCTURAL] = 100.0f;
	m.stiffness[SIM_SPRING_SHEAR] = 50.0f;
	m.stiffness[SIM_SPRING_BEND] = 2.0f;
	m.friction = 0.4f;
	return m;
}

/* A horizontal square cloth of n x n vertices and side `size` centred at (cx, y, cz). */
static int add_sheet(sim_world *w, const char *name, int n, float size, float cx, float y, float cz)
{
	sim_grid_def g = sim_grid_def_default();
	g.name = name;
	g.nx = g.ny = n;
	g.size_x = g.size_y = size;
	g.origin[0] = cx - 0.5f * size, g.origin[1] = y, g.origin[2] = cz - 0.5f * size;
	g.axis_u[0] = 1.0f, g.axis_u[1] = 0.0f, g.axis_u[2] = 0.0f;
	g.axis_v[0] = 0.0f, g.axis_v[1] = 0.0f, g.axis_v[2] = 1.0f;
	g.material = soft_cloth();
	return sim_world_add_grid(w, &g);
}

static bool add_floor(sim_world *w)
{
	sim_obstacle_def floor = sim_obstacle_def_default(SIM_SHAPE_PLANE);
	floor.name = "floor";
	floor.friction = 0.5f;
	return sim_world_add_obstacle(w, &floor) >= 0;
}

static sim_world *collision_world(void)
{
	sim_world_def def = sim_world_def_default();
	def.air_damping = 0.1f;
	return sim_world_create(&def);
}

/* A 1.2 m cloth dropped from 0.4 m above a 0.35 m ball on the floor: it drapes. */
static sim_world *sphere(void)
{
	sim_world *w = collision_world();
	if (!w)
		return NULL;
	sim_obstacle_def ball = sim_obstacle_def_default(SIM_SHAPE_SPHERE);
	ball.name = "ball";
	ball.radius = 0.35f;
	ball.position[1] = 0.35f;
	ball.friction = 0.3f;
	if (!add_floor(w) || sim_world_add_obstacle(w, &ball) < 0 || add_sheet(w, "cloth", 30, 1.2f, 0.0f, 1.1f, 0.0f) < 0)
		sim_world_destroy(&w);
	return w;
}

/* A 1 m cloth falling onto a table top (a box, 1.0 x 0.1 x 0.8 m, its top at 0.8 m)
 * with most of it over one edge, so it slides off that edge. */
static sim_world *table(void)
{
	sim_world *w = collision_world();
	if (!w)
		return NULL;
	sim_obstacle_def top = sim_obstacle_def_default(SIM_SHAPE_BOX);
	top.name = "table";
	top.half_extents[0] = 0.5f, top.half_extents[1] = 0.05f, top.half_extents[2] = 0.4f;
	top.position[1] = 0.75f;
	top.friction = 0.2f;
	if (!add_floor(w) || sim_world_add_obstacle(w, &top) < 0 || add_sheet(w, "cloth", 24, 1.0f, 0.75f, 0.95f, 0.0f) < 0)
		sim_world_destroy(&w);
	return w;
}

/* A 1 m, 33 x 33 cloth released hanging almost vertically just above the floor: it
 * crumples and folds onto itself (the collision benchmark's scene). */
static sim_world *pile(void)
{
	sim_world *w = collision_world();
	if (!w)
		return NULL;
	sim_grid_def g = sim_grid_def_default();
	g.name = "cloth";
	g.nx = g.ny = 33;
	g.origin[0] = -0.5f, g.origin[1] = 1.05f, g.origin[2] = 0.0f;
	g.axis_u[0] = 1.0f, g.axis_u[1] = 0.0f, g.axis_u[2] = 0.0f;
	/* down and slightly forward, so it does not land exactly on its own edge */
	g.axis_v[0] = 0.0f, g.axis_v[1] = -0.995f, g.axis_v[2] = 0.0998f;
	g.material = soft_cloth();
	/* 33 x 33 over 1 m is 0.18 g per vertex at the default density: twice the density
	 * keeps symplectic Euler at 1 ms inside its stability limit */
	g.material.areal_density = 0.4f;
	if (!add_floor(w) || sim_world_add_grid(w, &g) < 0)
		sim_world_destroy(&w);
	return w;
}

/* A 1 m square cloth held at two opposite edges that turn in opposite directions about
 * the axis between them, an eighth of a turn per second each (half a turn between them
 * in 4 s), while closing in at 7.5 cm/s each, so that the outermost fibres, which run
 * from edge to edge on a helix, stay within about 8 % of their length: the middle
 * twists into a rope and meets itself.  The edges follow seed 000's velocity blocks,
 * one every 10 ms, and stop after 4 s. */
static sim_world *twist(void)
{
	sim_world_def def = sim_world_def_default();
	def.air_damping = 0.5f;
	def.gravity[1] = 0.0f;
	def.strain_limit = true;
	sim_world *w = sim_world_create(&def);
	if (!w)
		return NULL;
	const int n = 24;
	int obj = add_sheet(w, "cloth", n, 1.0f, 0.0f, 1.0f, 0.0f);
	if (obj < 0) {
		sim_world_destroy(&w);
		return NULL;
	}
	const float omega = 0.125f * 3.14159265f, close_in = 0.075f, slot = 0.01f, seconds = 4.0f;
	const vec4 *x = sim_world_positions(w);
	for (int side = 0; side < 2; side++) {
		float sign = side ? -1.0f : 1.0f;
		for (int j = 0; j < n; j++) {
			int id = j * n + (side ? n - 1 : 0);
			/* the edge turns about the x axis through (., 1, 0): a vertex at height y,
			 * depth z relative to it moves with omega x r, r taken mid-slot */
			float r_y0 = x[id][1] - 1.0f, r_z0 = x[id][2];
			for (int k = 0; (float)k * slot < seconds; k++) {
				float t = ((float)k + 0.5f) * slot, a = sign * omega * t;
				float ry = r_y0 * cosf(a) - r_z0 * sinf(a), rz = r_y0 * sinf(a) + r_z0 * cosf(a);
				vec3 vel = {sign * close_in, -sign * omega * rz, sign * omega * ry};
				if (sim_world_add_velocity_block(w, (double)k * slot, id, vel) != SIM_OK) {
					sim_world_destroy(&w);
					return NULL;
				}
			}
			vec3 hold = {0.0f, 0.0f, 0.0f};
			if (sim_world_add_velocity_block(w, seconds, id, hold) != SIM_OK) {
				sim_world_destroy(&w);
				return NULL;
			}
		}
	}
	return w;
}

/* Two 0.8 m cloths, one above the other and crossed, falling onto the floor. */
static sim_world *two_cloths(void)
{
	sim_world *w = collision_world();
	if (!w)
		return NULL;
	if (!add_floor(w) || add_sheet(w, "lower", 20, 0.8f, 0.0f, 0.4f, 0.0f) < 0 ||
	    add_sheet(w, "upper", 20, 0.8f, 0.25f, 0.7f, 0.1f) < 0)
		sim_world_destroy(&w);
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
	{{"sphere", "a cloth draped on a ball", 1e-3f, 3.0}, sphere},
	{{"table", "a cloth falling onto a table and sliding off an edge", 1e-3f, 3.0}, table},
	{{"pile", "a cloth dropped onto the floor, folding onto itself", 1e-3f, 3.0}, pile},
	{{"twist", "a cloth twisted by turning two opposite edges", 1e-3f, 5.0}, twist},
	{{"two-cloths", "two cloths falling on each other", 1e-3f, 3.0}, two_cloths},
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
