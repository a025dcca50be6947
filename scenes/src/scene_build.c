/* Scene to world.  Every coordinate of a scene is written in the file's axes (y up, or
 * the seed's z up); here they become world coordinates, tela's y up, and the defaults,
 * which are world-frame choices (a horizontal sheet, a floor facing up), fill in what
 * the file left out. */
#include "scene_internal.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>


typedef struct builder {
	const scn_scene *s;
	sim_world *w;
	scn_error *err;
} builder;

static bool has(const scn_desc *d, const char *key) { return scn_desc_key_line(d, key) != 0; }

static void to_world(const builder *b, const float in[3], float out[3]) { scn_axes_to_world(b->s->up, in, out); }

static scn_status refused(builder *b, const scn_desc *d, const char *key, int rc)
{
	int line = key ? scn_desc_key_line(d, key) : 0;
	return scn_fail(b->err, rc == SIM_ERROR_OUT_OF_MEMORY ? SCN_ERROR_MEMORY : SCN_ERROR_PARSE,
	                "%s:%d: [%s] refused by the simulation: %s", d->file, line ? line : d->line, d->name,
	                sim_result_string((sim_result)rc));
}

/* ---- rotations ---------------------------------------------------------------------------------- */

static void quat_mul(const double a[4], const double b[4], double out[4])
{
	double r[4] = {
	    a[3] * b[0] + a[0] * b[3] + a[1] * b[2] - a[2] * b[1],
	    a[3] * b[1] - a[0] * b[2] + a[1] * b[3] + a[2] * b[0],
	    a[3] * b[2] + a[0] * b[1] - a[1] * b[0] + a[2] * b[3],
	    a[3] * b[3] - a[0] * b[0] - a[1] * b[1] - a[2] * b[2],
	};
	memcpy(out, r, sizeof r);
}

static void quat_axis_angle(int axis, double degrees, double q[4])
{
	double h = 0.5 * degrees * 3.14159265358979323846 / 180.0;
	q[0] = q[1] = q[2] = 0.0;
	q[axis] = sin(h);
	q[3] = cos(h);
}

/* rotate = RX RY RZ: degrees about x, then y, then z (fixed axes), as `tela mesh move`. */
static void quat_euler(const float deg[3], double q[4])
{
	double qx[4], qy[4], qz[4], t[4];
	quat_axis_angle(0, deg[0], qx);
	quat_axis_angle(1, deg[1], qy);
	quat_axis_angle(2, deg[2], qz);
	quat_mul(qy, qx, t);
	quat_mul(qz, t, q);
}

/* The shortest rotation taking +y to the unit vector n. */
static void quat_from_up(const float n[3], double q[4])
{
	double x = n[0], y = n[1], z = n[2];
	if (y < -1.0 + 1e-12) { /* opposite: half a turn about x */
		q[0] = 1.0, q[1] = q[2] = q[3] = 0.0;
		return;
	}
	/* axis y x n = (z, 0, -x), angle acos(y): q = (axis sin, cos) of half the angle */
	double w = 1.0 + y, l = sqrt(z * z + x * x + w * w);
	q[0] = z / l, q[1] = 0.0, q[2] = -x / l, q[3] = w / l;
}

/* The file's axes as a rotation of the world's: identity, or z-up to y-up (-90 degrees
 * about x). */
static void quat_axes(scn_axes axes, double q[4])
{
	if (axes == SCN_AXES_Z_UP)
		quat_axis_angle(0, -90.0, q);
	else
		q[0] = q[1] = q[2] = 0.0, q[3] = 1.0;
}

static void set_orientation(sim_obstacle_def *o, const double q[4])
{
	for (int k = 0; k < 4; k++)
		o->orientation[k] = (float)q[k];
}

/* ---- cloth -------------------------------------------------------------------------------------- */

/* Contacts hold two layers of cloth a thickness apart, and a sheet's own primitives two
 * rings apart (a vertex and the diagonal across the next quad, L / sqrt 2 away on a
 * square grid) are such layers: a default thickness above that pushes a flat sheet
 * apart from within (docs/scene-format.md, "Defaults that hold").  Half the shortest
 * edge leaves room for the sheet's own compression. */
static float default_thickness(const scn_desc *d, float shortest_edge)
{
	float t = d->material.thickness;
	return d->thickness_by_edge && shortest_edge > 0.0f && 0.5f * shortest_edge < t ? 0.5f * shortest_edge : t;
}

static int add_grid(builder *b, const scn_desc *d)
{
	sim_grid_def g = sim_grid_def_default();
	g.name = d->name;
	g.nx = d->resolution[0], g.ny = d->resolution[1];
	g.size_x = d->size[0], g.size_y = d->size[1];
	g.material = d->material;
	g.material.thickness = default_thickness(d, fminf(g.size_x / (float)(g.nx - 1), g.size_y / (float)(g.ny - 1)));
	float u[3] = {1.0f, 0.0f, 0.0f}, v[3] = {0.0f, 0.0f, 1.0f};
	if (has(d, "axis_u")) {
		to_world(b, d->axis_u, u);
		to_world(b, d->axis_v, v);
	}
	memcpy(g.axis_u, u, sizeof u);
	memcpy(g.axis_v, v, sizeof v);
	if (has(d, "corner")) {
		to_world(b, d->corner, g.origin);
	} else {
		float c[3] = {0.0f, 1.0f, 0.0f};
		if (has(d, "center"))
			to_world(b, d->center, c);
		for (int k = 0; k < 3; k++)
			g.origin[k] = c[k] - 0.5f * g.size_x * u[k] - 0.5f * g.size_y * v[k];
	}
	return sim_world_add_grid(b->w, &g);
}

/* The section's mesh scaled, turned and moved (in the file's axes), then in world
 * axes: a copy in out->positions for the caller to free; the triangles are shared. */
static bool placed_mesh(const builder *b, const scn_desc *d, const float translate[3], scn_mesh *out)
{
	*out = d->mesh;
	size_t bytes = sizeof(float) * 3 * (size_t)out->vertex_count;
	out->positions = malloc(bytes);
	if (!out->positions)
		return false;
	memcpy(out->positions, d->mesh.positions, bytes);
	scn_mesh_transform(out, d->scale, d->rotate, translate);
	for (int i = 0; i < out->vertex_count; i++) {
		float p[3];
		to_world(b, &out->positions[3 * i], p);
		memcpy(&out->positions[3 * i], p, sizeof p);
	}
	return true;
}

static int add_mesh_cloth(builder *b, const scn_desc *d)
{
	scn_mesh m;
	if (!placed_mesh(b, d, d->translate, &m))
		return SIM_ERROR_OUT_OF_MEMORY;
	sim_mesh_def def = {
	    .name = d->name,
	    .vertex_count = m.vertex_count,
	    .positions = m.positions,
	    .triangle_count = m.triangle_count,
	    .triangles = m.triangles,
	    .material = d->material,
	};
	float shortest = INFINITY;
	for (int t = 0; t < m.triangle_count; t++)
		for (int e = 0; e < 3; e++) {
			const float *p = &m.positions[3 * m.triangles[3 * t + e]];
			const float *q = &m.positions[3 * m.triangles[3 * t + (e + 1) % 3]];
			float l = sqrtf((p[0] - q[0]) * (p[0] - q[0]) + (p[1] - q[1]) * (p[1] - q[1]) + (p[2] - q[2]) * (p[2] - q[2]));
			if (l > 0.0f && l < shortest)
				shortest = l;
		}
	def.material.thickness = default_thickness(d, shortest);
	int rc = sim_world_add_mesh(b->w, &def);
	free(m.positions);
	return rc;
}

static int add_tetrahedron(builder *b, const scn_desc *d)
{
	float c[3] = {0.0f, 1.0f, 0.0f};
	if (has(d, "center"))
		to_world(b, d->center, c);
	return sim_world_add_tetrahedron(b->w, d->name, c, d->edge, &d->material);
}

static scn_status set_initial_velocity(builder *b, const scn_desc *d, int first, int n, int vertex, const float v[3])
{
	const vec4 *x = sim_world_positions(b->w);
	float wv[3];
	to_world(b, v, wv);
	for (int i = vertex < 0 ? 0 : vertex; i < (vertex < 0 ? n : vertex + 1); i++) {
		vec3 p = {x[first + i][0], x[first + i][1], x[first + i][2]};
		int rc = sim_world_set_vertex(b->w, first + i, p, wv);
		if (rc != SIM_OK)
			return refused(b, d, vertex < 0 ? "velocity" : "vertex_velocity", rc);
	}
	return SCN_OK;
}

static scn_status add_cloth(builder *b, const scn_desc *d)
{
	int obj = d->kind == SCN_K_GRID ? add_grid(b, d) : d->kind == SCN_K_MESH ? add_mesh_cloth(b, d) : add_tetrahedron(b, d);
	if (obj < 0)
		return refused(b, d, NULL, obj);
	int first = sim_world_object_first_vertex(b->w, obj), n = sim_world_object_vertex_count(b->w, obj);
	for (int i = 0; i < d->pins.count; i++) {
		int rc = sim_world_pin(b->w, first + d->pins.ids[i], true);
		if (rc != SIM_OK)
			return refused(b, d, "pins", rc);
	}
	if (has(d, "velocity") && set_initial_velocity(b, d, first, n, -1, d->velocity) != SCN_OK)
		return b->err->status;
	for (int i = 0; i < d->vertex_velocity_count; i++)
		if (set_initial_velocity(b, d, first, n, d->vertex_velocities[i].vertex, d->vertex_velocities[i].velocity) !=
		    SCN_OK)
			return b->err->status;
	if (d->velocities.block_count) {
		int rc = scn_vel_apply(b->w, first, &d->velocities, d->velocities_axes);
		if (rc != SIM_OK)
			return refused(b, d, "velocities", rc);
	}
	return SCN_OK;
}

/* ---- obstacles ---------------------------------------------------------------------------------- */

static int add_rigid_mesh(builder *b, const scn_desc *d, sim_obstacle_def *o)
{
	/* Scaled and turned about the mesh's own origin, which `translate` puts in place: a
	 * spinning rigid mesh turns about that point. */
	const float zero[3] = {0.0f, 0.0f, 0.0f};
	scn_mesh m;
	if (!placed_mesh(b, d, zero, &m))
		return SIM_ERROR_OUT_OF_MEMORY;
	to_world(b, d->translate, o->position);
	o->vertex_count = m.vertex_count;
	o->positions = m.positions;
	o->triangle_count = m.triangle_count;
	o->triangles = m.triangles;
	int rc = sim_world_add_obstacle(b->w, o);
	free(m.positions);
	return rc;
}

static scn_status add_obstacle(builder *b, const scn_desc *d)
{
	static const sim_shape shapes[SCN_K_COUNT] = {
	    [SCN_K_RIGID] = SIM_SHAPE_MESH, [SCN_K_PLANE] = SIM_SHAPE_PLANE,     [SCN_K_SPHERE] = SIM_SHAPE_SPHERE,
	    [SCN_K_BOX] = SIM_SHAPE_BOX,    [SCN_K_CAPSULE] = SIM_SHAPE_CAPSULE,
	};
	sim_obstacle_def o = sim_obstacle_def_default(shapes[d->kind]);
	o.name = d->name;
	o.friction = d->friction;
	o.thickness = d->thickness;
	o.radius = d->radius;
	o.half_height = d->half_height;
	memcpy(o.half_extents, d->half_extents, sizeof o.half_extents);
	to_world(b, d->position, o.position);
	to_world(b, d->velocity, o.velocity);
	to_world(b, d->angular_velocity, o.angular_velocity);
	double q[4], axes[4], r[4];
	quat_axes(b->s->up, axes);
	if (d->kind == SCN_K_PLANE || (d->kind == SCN_K_CAPSULE && !has(d, "rotate"))) {
		const char *key = d->kind == SCN_K_PLANE ? "normal" : "axis";
		float n[3] = {0.0f, 1.0f, 0.0f};
		if (has(d, key))
			to_world(b, d->kind == SCN_K_PLANE ? d->normal : d->axis, n);
		quat_from_up(n, q);
		set_orientation(&o, q);
	} else if (d->kind == SCN_K_BOX || d->kind == SCN_K_CAPSULE) {
		quat_euler(d->rotate, r);
		quat_mul(axes, r, q);
		set_orientation(&o, q);
	}
	int index = d->kind == SCN_K_RIGID ? add_rigid_mesh(b, d, &o) : sim_world_add_obstacle(b->w, &o);
	if (index < 0)
		return refused(b, d, NULL, index);
	const scn_velocities *vel = &d->velocities;
	for (int k = 0; k < vel->block_count; k++) {
		const scn_vel_block *blk = &vel->blocks[k];
		float v[3] = {0.0f, 0.0f, 0.0f};
		/* A block that leaves vertex 0 out leaves the body at rest, as a rigid body in the
		 * seed has no free motion of its own. */
		for (int e = blk->first; e < blk->first + blk->count; e++)
			scn_axes_to_world(d->velocities_axes, vel->entries[e].velocity, v);
		int rc = sim_world_add_obstacle_velocity_block(b->w, blk->time, index, v);
		if (rc != SIM_OK)
			return refused(b, d, "velocities", rc);
	}
	return SCN_OK;
}

/* ---- motions ------------------------------------------------------------------------------------ */

/* Rodrigues: r turned by `angle` about the unit axis k. */
static void rotate_about(const double k[3], double angle, const double r[3], double out[3])
{
	double c = cos(angle), s = sin(angle);
	double kxr[3] = {k[1] * r[2] - k[2] * r[1], k[2] * r[0] - k[0] * r[2], k[0] * r[1] - k[1] * r[0]};
	double kdr = k[0] * r[0] + k[1] * r[1] + k[2] * r[2];
	for (int i = 0; i < 3; i++)
		out[i] = r[i] * c + kxr[i] * s + k[i] * kdr * (1.0 - c);
}

/* A rigid motion of a vertex set, as velocity blocks one slot apart: the set translates
 * with `velocity` and turns with `angular_velocity` about `pivot` (which moves with it).
 * Each block holds the velocity at the middle of its slot. */
static scn_status add_motion(builder *b, const scn_desc *d)
{
	const scn_desc *target = scn_scene_find_desc(b->s, SCN_CLOTH_KINDS, d->object);
	int obj = 0;
	for (int i = 0; i < b->s->desc_count && &b->s->descs[i] != target; i++)
		obj += (SCN_CLOTH_KINDS & (1u << b->s->descs[i].kind)) != 0;
	int first = sim_world_object_first_vertex(b->w, obj);
	float vel[3], omega_f[3], pivot[3];
	to_world(b, d->velocity, vel);
	to_world(b, d->angular_velocity, omega_f);
	to_world(b, d->pivot, pivot);
	double omega[3] = {omega_f[0], omega_f[1], omega_f[2]};
	double rate = sqrt(omega[0] * omega[0] + omega[1] * omega[1] + omega[2] * omega[2]);
	double axis[3] = {0.0, 0.0, 0.0};
	for (int k = 0; k < 3 && rate > 0.0; k++)
		axis[k] = omega[k] / rate;
	int slots = (int)ceil(((double)d->stop - d->start) / d->slot - 1e-9);
	int n = d->vertices.count;
	double (*r0)[3] = malloc(sizeof *r0 * (size_t)n);
	if (!r0)
		return refused(b, d, "vertices", SIM_ERROR_OUT_OF_MEMORY);
	const vec4 *x = sim_world_positions(b->w);
	for (int s = 0; s < n; s++) {
		int id = first + d->vertices.ids[s];
		for (int k = 0; k < 3; k++)
			r0[s][k] = x[id][k] - pivot[k];
	}
	/* Slot by slot, so that every block lands at the end of the world's time-ordered
	 * list (vertex by vertex would insert each one in the middle). */
	int rc = SIM_OK;
	for (int k = 0; k <= slots && rc == SIM_OK; k++) {
		for (int s = 0; s < n && rc == SIM_OK; s++) {
			int id = first + d->vertices.ids[s];
			if (k == slots) {
				vec3 end = {d->release ? NAN : 0.0f, 0.0f, 0.0f};
				rc = sim_world_add_velocity_block(b->w, d->stop, id, end);
				continue;
			}
			double r[3];
			rotate_about(axis, rate * ((double)k + 0.5) * d->slot, r0[s], r);
			vec3 v = {
			    (float)(vel[0] + omega[1] * r[2] - omega[2] * r[1]),
			    (float)(vel[1] + omega[2] * r[0] - omega[0] * r[2]),
			    (float)(vel[2] + omega[0] * r[1] - omega[1] * r[0]),
			};
			rc = sim_world_add_velocity_block(b->w, d->start + (double)k * d->slot, id, v);
		}
	}
	free(r0);
	return rc == SIM_OK ? SCN_OK : refused(b, d, "vertices", rc);
}

/* ---- the world ---------------------------------------------------------------------------------- */

/* The bodies section `desc` stands for in the world: a cloth object or an obstacle
 * itself, or every cloth object made of a material (they are added in section order). */
static int section_bodies(const scn_scene *s, int desc, sim_body *out)
{
	const scn_desc *d = &s->descs[desc];
	int n = 0, object = 0, obstacle = 0;
	for (int i = 0; i < s->desc_count; i++) {
		const scn_desc *e = &s->descs[i];
		unsigned bit = 1u << e->kind;
		if (bit & SCN_CLOTH_KINDS) {
			if (i == desc || (d->kind == SCN_K_MATERIAL && strcmp(e->material_ref, d->name) == 0))
				out[n++] = (sim_body){false, object};
			object++;
		} else if (bit & SCN_OBSTACLE_KINDS) {
			if (i == desc)
				out[n++] = (sim_body){true, obstacle};
			obstacle++;
		}
	}
	return n;
}

/* friction_with: every pair of the two sections' bodies gets the coefficient. */
static void add_frictions(builder *b)
{
	const scn_scene *s = b->s;
	sim_body *left = malloc(sizeof *left * (size_t)s->desc_count), *right = malloc(sizeof *right * (size_t)s->desc_count);
	if (!left || !right) {
		scn_fail(b->err, SCN_ERROR_MEMORY, "%s: out of memory", s->path);
		free(left);
		free(right);
		return;
	}
	for (int i = 0; i < s->desc_count && b->err->status == SCN_OK; i++) {
		const scn_desc *d = &s->descs[i];
		for (int k = 0; k < d->friction_count && b->err->status == SCN_OK; k++) {
			const scn_friction *f = &d->frictions[k];
			int nl = section_bodies(s, i, left), nr = section_bodies(s, f->target, right);
			for (int x = 0; x < nl && b->err->status == SCN_OK; x++) {
				for (int y = 0; y < nr; y++) {
					int rc = sim_world_set_pair_friction(b->w, left[x], right[y], f->mu);
					if (rc != SIM_OK) {
						scn_fail(b->err, rc == SIM_ERROR_OUT_OF_MEMORY ? SCN_ERROR_MEMORY : SCN_ERROR_PARSE,
						         "%s:%d: friction_with refused by the simulation: %s", d->file, f->line,
						         sim_result_string((sim_result)rc));
						break;
					}
				}
			}
		}
	}
	free(left);
	free(right);
}

scn_status scn_build(const scn_scene *s, sim_world **out, scn_error *err)
{
	*out = NULL;
	scn_error local = {0};
	if (!err)
		err = &local;
	builder b = {.s = s, .err = err};
	sim_world_def def = s->world;
	if (scn_scene_key_line(s, "gravity", SCN_K_WORLD))
		scn_axes_to_world(s->up, s->world.gravity, def.gravity);
	if (scn_scene_key_line(s, "wind", SCN_K_WORLD))
		scn_axes_to_world(s->up, s->world.wind, def.wind);
	b.w = sim_world_create(&def);
	if (!b.w)
		return scn_fail(err, SCN_ERROR_PARSE, "%s: the [world] settings were refused (or out of memory)", s->path);
	for (int i = 0; i < s->desc_count && err->status == SCN_OK; i++) {
		unsigned bit = 1u << s->descs[i].kind;
		if (bit & SCN_CLOTH_KINDS)
			add_cloth(&b, &s->descs[i]);
		else if (bit & SCN_OBSTACLE_KINDS)
			add_obstacle(&b, &s->descs[i]);
	}
	for (int i = 0; i < s->desc_count && err->status == SCN_OK; i++)
		if (s->descs[i].kind == SCN_K_MOTION)
			add_motion(&b, &s->descs[i]);
	if (err->status == SCN_OK)
		add_frictions(&b);
	if (err->status != SCN_OK) {
		sim_world_destroy(&b.w);
		return err->status;
	}
	*out = b.w;
	return SCN_OK;
}
