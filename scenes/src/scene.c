/* Scenes after reading: checking what needs the whole file (references, vertex ranges,
 * referenced files), building the world, and finding a scene by name, file or folder. */
#define _POSIX_C_SOURCE 200809L
#include "scene_internal.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>


/* ---- storage ------------------------------------------------------------------------------------ */

scn_scene *scn_scene_alloc(void)
{
	scn_scene *s = calloc(1, sizeof *s);
	if (!s)
		return NULL;
	s->world = sim_world_def_default();
	/* A scene file's defaults must hold for any cloth a person is likely to write.  An
	 * explicit scheme's limit h < 2/omega_max shrinks with the edge length L (omega_max
	 * grows as sqrt(k / (rho L^2))): with the default material 1 ms needs edges of 85 mm
	 * or more, a 1 m sheet of at most 12 x 12.  Backward Euler has no such limit
	 * (docs/scene-format.md, "Defaults that hold"). */
	s->world.integrator = SIM_IMPLICIT;
	s->info.dt = 1e-3f;
	s->info.seconds = 5.0;
	s->up = SCN_AXES_Y_UP;
	s->camera = (scn_camera_def){{0.0f, 1.2f, 2.8f}, {0.0f, 0.7f, 0.0f}, 45.0f};
	return s;
}

void scn_desc_defaults(scn_desc *d)
{
	d->material = sim_material_default();
	bool cloth = (SCN_CLOTH_KINDS | (1u << SCN_K_MATERIAL)) & (1u << d->kind);
	float grey[3] = {0.62f, 0.60f, 0.58f}, blue[3] = {0.25f, 0.42f, 0.78f};
	memcpy(d->color, cloth ? blue : grey, sizeof d->color);
	d->resolution[0] = d->resolution[1] = 20;
	d->size[0] = d->size[1] = 1.0f;
	d->scale = 1.0f;
	d->weld = SCN_WELD_TOLERANCE;
	d->edge = 0.2f;
	sim_obstacle_def o = sim_obstacle_def_default(SIM_SHAPE_SPHERE);
	d->friction = o.friction;
	d->thickness = o.thickness;
	d->radius = d->kind == SCN_K_CAPSULE ? 0.1f : 0.5f;
	d->half_height = 0.5f;
	d->slot = 0.01f;
	d->velocities_axes = SCN_AXES_Y_UP;
}

scn_desc *scn_scene_add_desc(scn_scene *s, scn_kind kind, const char *name, const char *file, int line)
{
	if (s->desc_count == s->desc_capacity) {
		int cap = s->desc_capacity ? 2 * s->desc_capacity : 8;
		scn_desc *grown = realloc(s->descs, sizeof *grown * (size_t)cap);
		if (!grown)
			return NULL;
		s->descs = grown;
		s->desc_capacity = cap;
	}
	scn_desc *d = &s->descs[s->desc_count++];
	memset(d, 0, sizeof *d);
	d->kind = kind;
	snprintf(d->name, sizeof d->name, "%s", name);
	d->file = file;
	d->line = line;
	scn_desc_defaults(d);
	return d;
}

const scn_desc *scn_scene_find_desc(const scn_scene *s, unsigned kinds, const char *name)
{
	for (int i = 0; i < s->desc_count; i++)
		if ((kinds & (1u << s->descs[i].kind)) && strcmp(s->descs[i].name, name) == 0)
			return &s->descs[i];
	return NULL;
}

bool scn_ids_push(scn_ids *ids, int id)
{
	if (ids->count == ids->capacity) {
		int cap = ids->capacity ? 2 * ids->capacity : 16;
		int *grown = realloc(ids->ids, sizeof *grown * (size_t)cap);
		if (!grown)
			return false;
		ids->ids = grown;
		ids->capacity = cap;
	}
	ids->ids[ids->count++] = id;
	return true;
}

void scn_scene_free(scn_scene **sp)
{
	scn_scene *s = sp ? *sp : NULL;
	if (!s)
		return;
	for (int i = 0; i < s->desc_count; i++) {
		scn_desc *d = &s->descs[i];
		scn_mesh_free(&d->mesh);
		scn_vel_free(&d->velocities);
		free(d->pins.ids);
		free(d->vertices.ids);
		free(d->vertex_velocities);
		free(d->frictions);
	}
	free(s->descs);
	free(s);
	*sp = NULL;
}

/* ---- checks that need the whole scene ------------------------------------------------------------ */

/* Vertex count and grid shape of a cloth section, once its mesh is known. */
static int cloth_vertices(const scn_desc *d, int *nx, int *ny)
{
	*nx = *ny = 0;
	switch (d->kind) {
	case SCN_K_GRID:
		*nx = d->resolution[0], *ny = d->resolution[1];
		return d->resolution[0] * d->resolution[1];
	case SCN_K_MESH: return d->mesh.vertex_count;
	case SCN_K_TETRAHEDRON: return 4;
	default: return 0;
	}
}

/* A vertex selection: ids, `row J` and `column I` (grids), `all`. */
static scn_status select_vertices(const scn_desc *d, const char *key, const char *text, int line, int n, int nx,
                                  int ny, scn_ids *out, scn_error *err)
{
	char buf[512];
	snprintf(buf, sizeof buf, "%s", text);
	char *save = NULL;
	for (char *tok = strtok_r(buf, " \t,", &save); tok; tok = strtok_r(NULL, " \t,", &save)) {
		int id, k;
		bool ok = true;
		if (strcmp(tok, "all") == 0) {
			for (int i = 0; i < n && ok; i++)
				ok = scn_ids_push(out, i);
		} else if (strcmp(tok, "row") == 0 || strcmp(tok, "column") == 0) {
			bool row = tok[0] == 'r';
			const char *arg = strtok_r(NULL, " \t,", &save);
			if (!nx)
				return scn_fail(err, SCN_ERROR_PARSE, "%s:%d: %s: '%s' needs a grid", d->file, line, key, tok);
			if (!arg || !scn_parse_int(arg, 0, (row ? ny : nx) - 1, &k))
				return scn_fail(err, SCN_ERROR_PARSE, "%s:%d: %s: '%s' needs an index in [0, %d]", d->file, line,
				                key, tok, (row ? ny : nx) - 1);
			for (int i = 0; i < (row ? nx : ny) && ok; i++)
				ok = scn_ids_push(out, row ? k * nx + i : i * nx + k);
		} else if (scn_parse_int(tok, 0, 2000000000L, &id)) {
			if (id >= n)
				return scn_fail(err, SCN_ERROR_PARSE, "%s:%d: %s: vertex %d out of range ('%s' has %d vertices)",
				                d->file, line, key, id, d->name, n);
			ok = scn_ids_push(out, id);
		} else {
			return scn_fail(err, SCN_ERROR_PARSE,
			                "%s:%d: %s: '%s' is not a vertex id, 'row J', 'column I' or 'all'", d->file, line, key,
			                tok);
		}
		if (!ok)
			return scn_fail(err, SCN_ERROR_MEMORY, "%s:%d: out of memory", d->file, line);
	}
	if (out->count == 0)
		return scn_fail(err, SCN_ERROR_PARSE, "%s:%d: %s: no vertices selected", d->file, line, key);
	return SCN_OK;
}

/* Referenced files are relative to the scene file's folder. */
static void resolve_path(const scn_scene *s, const char *name, char *out, size_t cap)
{
	const char *slash = strrchr(s->path, '/');
	if (name[0] == '/' || !slash)
		snprintf(out, cap, "%s", name);
	else
		snprintf(out, cap, "%.*s/%s", (int)(slash - s->path), s->path, name);
}

static bool unit_vector(float v[3])
{
	double l = sqrt((double)v[0] * v[0] + (double)v[1] * v[1] + (double)v[2] * v[2]);
	if (!(l > 1e-6))
		return false;
	for (int k = 0; k < 3; k++)
		v[k] = (float)(v[k] / l);
	return true;
}

static scn_status check_grid(scn_desc *d, scn_error *err)
{
	int lc = scn_desc_key_line(d, "corner"), lz = scn_desc_key_line(d, "center");
	if (lc && lz)
		return scn_fail(err, SCN_ERROR_PARSE, "%s:%d: give corner or center, not both (center at line %d)", d->file,
		                lc, lz);
	int lu = scn_desc_key_line(d, "axis_u"), lv = scn_desc_key_line(d, "axis_v");
	memcpy(d->written.axis_u, d->axis_u, sizeof d->written.axis_u);
	memcpy(d->written.axis_v, d->axis_v, sizeof d->written.axis_v);
	if (lu && !unit_vector(d->axis_u))
		return scn_fail(err, SCN_ERROR_PARSE, "%s:%d: axis_u is zero", d->file, lu);
	if (lv && !unit_vector(d->axis_v))
		return scn_fail(err, SCN_ERROR_PARSE, "%s:%d: axis_v is zero", d->file, lv);
	if ((lu != 0) != (lv != 0))
		return scn_fail(err, SCN_ERROR_PARSE, "%s:%d: give both axis_u and axis_v (or neither)", d->file,
		                lu ? lu : lv);
	if (lu) {
		double dot = (double)d->axis_u[0] * d->axis_v[0] + (double)d->axis_u[1] * d->axis_v[1] +
		             (double)d->axis_u[2] * d->axis_v[2];
		if (fabs(dot) > 1e-3)
			return scn_fail(err, SCN_ERROR_PARSE, "%s:%d: axis_u and axis_v are not perpendicular (cosine %.4f)",
			                d->file, lv, dot);
	}
	return SCN_OK;
}

static scn_status check_cloth(const scn_scene *s, scn_desc *d, scn_error *err)
{
	int lm = scn_desc_key_line(d, "mass"), ld = scn_desc_key_line(d, "density");
	if (lm && ld)
		return scn_fail(err, SCN_ERROR_PARSE, "%s:%d: give mass or density, not both (density at line %d)", d->file,
		                lm, ld);
	if (d->kind == SCN_K_GRID && check_grid(d, err) != SCN_OK)
		return err->status;
	if (d->kind == SCN_K_MESH) {
		int lf = scn_desc_key_line(d, "file");
		if (!lf)
			return scn_fail(err, SCN_ERROR_PARSE, "%s:%d: [mesh %s] needs file = MESH.stl", d->file, d->line, d->name);
	}
	int nx, ny, n = cloth_vertices(d, &nx, &ny);
	if (d->pins_text[0] &&
	    select_vertices(d, "pins", d->pins_text, scn_desc_key_line(d, "pins"), n, nx, ny, &d->pins, err) != SCN_OK)
		return err->status;
	for (int i = 0; i < d->vertex_velocity_count; i++)
		if (d->vertex_velocities[i].vertex >= n)
			return scn_fail(err, SCN_ERROR_PARSE, "%s:%d: vertex_velocity: vertex %d out of range ('%s' has %d vertices)",
			                d->file, d->vertex_velocities[i].line, d->vertex_velocities[i].vertex, d->name, n);
	if (d->velocities_file[0] && !d->velocities.block_count) {
		char path[SCN_PATH_MAX + 64];
		resolve_path(s, d->velocities_file, path, sizeof path);
		scn_error inner = {0};
		if (scn_vel_read(path, n, &d->velocities, &inner) != SCN_OK)
			return scn_fail(err, inner.status, "%s (velocities of '%s', %s:%d)", inner.message, d->name, d->file,
			                scn_desc_key_line(d, "velocities"));
		d->velocities_axes = s->up;
	}
	return SCN_OK;
}

/* An obstacle's velocity file moves it as the seed moves a rigid body: by its one
 * constrained vertex, 0, whose velocity becomes the body's. */
static scn_status check_obstacle(const scn_scene *s, scn_desc *d, scn_error *err)
{
	if (d->velocities_file[0] && !d->velocities.block_count) {
		char path[SCN_PATH_MAX + 64];
		resolve_path(s, d->velocities_file, path, sizeof path);
		scn_error inner = {0};
		if (scn_vel_read(path, 1, &d->velocities, &inner) != SCN_OK)
			return scn_fail(err, inner.status, "%s (velocities of '%s', %s:%d; a rigid body has one vertex, 0)",
			                inner.message, d->name, d->file, scn_desc_key_line(d, "velocities"));
		d->velocities_axes = s->up;
	}
	if (d->kind == SCN_K_RIGID && !scn_desc_key_line(d, "file"))
		return scn_fail(err, SCN_ERROR_PARSE, "%s:%d: [rigid %s] needs file = MESH.stl", d->file, d->line, d->name);
	if (d->kind == SCN_K_BOX) {
		int ls = scn_desc_key_line(d, "size"), lh = scn_desc_key_line(d, "half_extents");
		if (ls && lh)
			return scn_fail(err, SCN_ERROR_PARSE, "%s:%d: give size or half_extents, not both", d->file, ls);
		if (ls)
			for (int k = 0; k < 3; k++)
				d->half_extents[k] = 0.5f * d->box_size[k];
		else if (!lh)
			d->half_extents[0] = d->half_extents[1] = d->half_extents[2] = 0.5f;
	}
	if (d->kind == SCN_K_CAPSULE && scn_desc_key_line(d, "rotate") && scn_desc_key_line(d, "axis"))
		return scn_fail(err, SCN_ERROR_PARSE, "%s:%d: give rotate or axis, not both", d->file,
		                scn_desc_key_line(d, "rotate"));
	int ln = scn_desc_key_line(d, "normal"), la = scn_desc_key_line(d, "axis");
	memcpy(d->written.normal, d->normal, sizeof d->written.normal);
	memcpy(d->written.axis, d->axis, sizeof d->written.axis);
	if (ln && !unit_vector(d->normal))
		return scn_fail(err, SCN_ERROR_PARSE, "%s:%d: normal is zero", d->file, ln);
	if (la && !unit_vector(d->axis))
		return scn_fail(err, SCN_ERROR_PARSE, "%s:%d: axis is zero", d->file, la);
	return SCN_OK;
}

static scn_status check_motion(const scn_scene *s, scn_desc *d, scn_error *err)
{
	if (!scn_desc_key_line(d, "object"))
		return scn_fail(err, SCN_ERROR_PARSE, "%s:%d: [motion %s] needs object = CLOTH", d->file, d->line, d->name);
	const scn_desc *o = scn_scene_find_desc(s, SCN_CLOTH_KINDS, d->object);
	if (!o)
		return scn_fail(err, SCN_ERROR_PARSE, "%s:%d: object: no cloth named '%s' in this scene", d->file,
		                scn_desc_key_line(d, "object"), d->object);
	if (!scn_desc_key_line(d, "vertices"))
		return scn_fail(err, SCN_ERROR_PARSE, "%s:%d: [motion %s] needs vertices = ...", d->file, d->line, d->name);
	if (!scn_desc_key_line(d, "stop") || !(d->stop > d->start))
		return scn_fail(err, SCN_ERROR_PARSE, "%s:%d: [motion %s] needs stop later than start (%g s)", d->file,
		                scn_desc_key_line(d, "stop") ? scn_desc_key_line(d, "stop") : d->line, d->name,
		                (double)d->start);
	if ((double)(d->stop - d->start) / (double)d->slot > 1e6)
		return scn_fail(err, SCN_ERROR_PARSE, "%s:%d: more than a million slots of %g s", d->file,
		                scn_desc_key_line(d, "stop"), (double)d->slot);
	int nx, ny, n = cloth_vertices(o, &nx, &ny);
	return select_vertices(d, "vertices", d->vertices_text, scn_desc_key_line(d, "vertices"), n, nx, ny,
	                       &d->vertices, err);
}

static scn_status load_mesh(const scn_scene *s, scn_desc *d, scn_error *err)
{
	if (!d->mesh_file[0] || d->mesh.triangle_count)
		return SCN_OK;
	char path[SCN_PATH_MAX + 64];
	resolve_path(s, d->mesh_file, path, sizeof path);
	scn_error inner = {0};
	if (scn_mesh_read(path, scn_mesh_format_of(path), d->weld, &d->mesh, NULL, &inner) != SCN_OK)
		return scn_fail(err, inner.status, "%s (mesh of '%s', %s:%d)", inner.message, d->name, d->file,
		                scn_desc_key_line(d, "file"));
	if (d->kind == SCN_K_RIGID && scn_mesh_orient(&d->mesh) < 0)
		return scn_fail(err, SCN_ERROR_MEMORY, "%s: out of memory", path);
	return SCN_OK;
}

/* friction_with: each NAME is a material, a cloth object or an obstacle (one of them),
 * two obstacles have no friction to set (they never touch), and a pair is given once,
 * from either side. */
static void check_frictions(scn_scene *s, scn_error *err)
{
	const unsigned bodies = SCN_CLOTH_KINDS | SCN_OBSTACLE_KINDS;
	for (int i = 0; i < s->desc_count && err->status == SCN_OK; i++) {
		scn_desc *d = &s->descs[i];
		for (int k = 0; k < d->friction_count && err->status == SCN_OK; k++) {
			scn_friction *f = &d->frictions[k];
			const scn_desc *body = scn_scene_find_desc(s, bodies, f->name);
			const scn_desc *mat = scn_scene_find_desc(s, 1u << SCN_K_MATERIAL, f->name);
			if (body && mat) {
				scn_fail(err, SCN_ERROR_PARSE,
				         "%s:%d: friction_with: '%s' names both a material (line %d) and an object (line %d)", d->file,
				         f->line, f->name, mat->line, body->line);
				break;
			}
			if (!body && !mat) {
				scn_fail(err, SCN_ERROR_PARSE,
				         "%s:%d: friction_with: no material, cloth or obstacle section is named '%s'", d->file, f->line,
				         f->name);
				break;
			}
			const scn_desc *t = body ? body : mat;
			f->target = (int)(t - s->descs);
			if ((SCN_OBSTACLE_KINDS & (1u << d->kind)) && (SCN_OBSTACLE_KINDS & (1u << t->kind))) {
				scn_fail(err, SCN_ERROR_PARSE, "%s:%d: friction_with: '%s' and '%s' are both obstacles, which never touch",
				         d->file, f->line, d->name, t->name);
				break;
			}
			for (int j = 0; j <= i && err->status == SCN_OK; j++) {
				const scn_desc *e = &s->descs[j];
				for (int q = 0; q < (j == i ? k : e->friction_count); q++) {
					int other = e->frictions[q].target;
					if ((j == i && other == f->target) || (j == f->target && other == i)) {
						scn_fail(err, SCN_ERROR_PARSE,
						         "%s:%d: friction between '%s' and '%s' given twice (first at line %d)", d->file,
						         f->line, d->name, t->name, e->frictions[q].line);
						break;
					}
				}
			}
		}
	}
}

scn_status scn_scene_finish(scn_scene *s, scn_error *err)
{
	int ldt = scn_scene_key_line(s, "dt", SCN_K_WORLD), lrate = scn_scene_key_line(s, "rate", SCN_K_WORLD);
	if (ldt && lrate)
		return scn_fail(err, SCN_ERROR_PARSE, "%s:%d: give dt or rate, not both (dt at line %d)", s->path, lrate,
		                ldt);
	if (!s->name[0]) {
		const char *base = strrchr(s->path, '/');
		base = base ? base + 1 : s->path;
		size_t n = strcspn(base, ".");
		snprintf(s->name, sizeof s->name, "%.*s", (int)(n < SCN_NAME_MAX ? n : SCN_NAME_MAX - 1), base);
	}
	s->info.name = s->name;
	s->info.description = s->description;
	bool any = false;
	for (int i = 0; i < s->desc_count && err->status == SCN_OK; i++) {
		scn_desc *d = &s->descs[i];
		unsigned bit = 1u << d->kind;
		if (bit & ((1u << SCN_K_MESH) | (1u << SCN_K_RIGID)))
			load_mesh(s, d, err);
		if (err->status == SCN_OK && (bit & SCN_CLOTH_KINDS))
			check_cloth(s, d, err);
		else if (err->status == SCN_OK && (bit & SCN_OBSTACLE_KINDS))
			check_obstacle(s, d, err);
		any |= (bit & (SCN_CLOTH_KINDS | SCN_OBSTACLE_KINDS)) != 0;
	}
	for (int i = 0; i < s->desc_count && err->status == SCN_OK; i++)
		if (s->descs[i].kind == SCN_K_MOTION)
			check_motion(s, &s->descs[i], err);
	if (err->status == SCN_OK)
		check_frictions(s, err);
	if (err->status == SCN_OK && !any)
		scn_fail(err, SCN_ERROR_PARSE, "%s: no objects (add a [grid NAME], [mesh NAME], [tetrahedron NAME] or an "
		                               "obstacle section)",
		         s->path);
	return err->status;
}

/* ---- queries ------------------------------------------------------------------------------------ */

const scn_info *scn_scene_info(const scn_scene *s) { return &s->info; }

void scn_scene_view(const scn_scene *s, float position[3], float target[3], float *fov_degrees)
{
	scn_axes_to_world(s->up, s->camera.position, position);
	scn_axes_to_world(s->up, s->camera.target, target);
	*fov_degrees = s->camera.fov_degrees;
}

static void color_of(const scn_scene *s, unsigned kinds, int index, float rgb[3])
{
	for (int i = 0, k = 0; i < s->desc_count; i++) {
		if (!(kinds & (1u << s->descs[i].kind)))
			continue;
		if (k++ == index) {
			memcpy(rgb, s->descs[i].color, 3 * sizeof(float));
			return;
		}
	}
	rgb[0] = rgb[1] = rgb[2] = 0.6f;
}

void scn_scene_cloth_color(const scn_scene *s, int object, float rgb[3]) { color_of(s, SCN_CLOTH_KINDS, object, rgb); }

void scn_scene_obstacle_color(const scn_scene *s, int obstacle, float rgb[3])
{
	color_of(s, SCN_OBSTACLE_KINDS, obstacle, rgb);
}

/* ---- finding a scene ------------------------------------------------------------------------------ */

scn_status scn_load(const char *arg, scn_scene **out, scn_error *err)
{
	*out = NULL;
	scn_error local = {0};
	if (!err)
		err = &local;
	const char *text = scn_builtin_text(arg);
	if (text) {
		char path[SCN_PATH_MAX];
		snprintf(path, sizeof path, "scenes/%s.ini", arg);
		return scn_parse(text, strlen(text), path, out, err);
	}
	struct stat st;
	if (stat(arg, &st) != 0) {
		if (!strchr(arg, '/') && !strchr(arg, '.'))
			return scn_fail(err, SCN_ERROR_IO, "%s: no such built-in scene or file (try 'tela scenes')", arg);
		return scn_fail(err, SCN_ERROR_IO, "%s: no such file or folder", arg);
	}
	if (S_ISDIR(st.st_mode))
		return scn_load_seed(arg, out, err);
	char *data;
	size_t size;
	if (scn_read_file(arg, 16u << 20, &data, &size, err) != SCN_OK)
		return err->status;
	scn_status rc = scn_parse(data, size, arg, out, err);
	free(data);
	return rc;
}

sim_world *scn_create(const char *name)
{
	scn_scene *s = NULL;
	sim_world *w = NULL;
	if (scn_load(name, &s, NULL) == SCN_OK)
		scn_build(s, &w, NULL);
	scn_scene_free(&s);
	return w;
}
