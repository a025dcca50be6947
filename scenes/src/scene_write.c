/* The scene-file writer: a read scene (a file, a built-in or a seed folder), with what a
 * user changed since, as text that scn_parse reads back into the same world.  Every
 * setting the running demo can change is written out in full; the geometry keys are
 * written as the source gave them (only those it set), so that choices that depend on
 * which key was given (corner or center, axis or rotate, a grid's default axes) survive. */
#define _XOPEN_SOURCE 700
#include "scene_internal.h"

#include <errno.h>
#include <limits.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

/* The reader's limit on a line (docs/scene-format.md). */
enum { LINE_MAX_CHARS = 198 };

typedef struct writer {
	char *text;
	size_t length, capacity;
	const scn_scene *s;
	char out_dir[PATH_MAX]; /* the folder the text is meant for, absolute ("" if unknown) */
	scn_error *err;
} writer;

static bool ok(const writer *w) { return w->err->status == SCN_OK; }

static void put(writer *w, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static void put(writer *w, const char *fmt, ...)
{
	if (!ok(w))
		return;
	char line[1024];
	va_list ap;
	va_start(ap, fmt);
	int n = vsnprintf(line, sizeof line, fmt, ap);
	va_end(ap);
	/* a line is one key (or header) and its newline */
	if (n < 0 || n - 1 > LINE_MAX_CHARS) {
		char head[48];
		snprintf(head, sizeof head, "%.40s", line);
		scn_fail(w->err, SCN_ERROR_PARSE, "%s: cannot be written as a scene file: the line '%s...' would be longer "
		                                  "than %d characters",
		         w->s->name, head, LINE_MAX_CHARS);
		return;
	}
	if (w->length + (size_t)n + 1 > w->capacity) {
		size_t cap = w->capacity ? 2 * w->capacity : 4096;
		while (cap < w->length + (size_t)n + 1)
			cap *= 2;
		char *grown = realloc(w->text, cap);
		if (!grown) {
			scn_fail(w->err, SCN_ERROR_MEMORY, "%s: out of memory", w->s->name);
			return;
		}
		w->text = grown, w->capacity = cap;
	}
	memcpy(w->text + w->length, line, (size_t)n + 1);
	w->length += (size_t)n;
}

/* The shortest decimal that reads back (as the reader reads it: a double, then a float)
 * into exactly this float: files stay readable, and a value at a range's edge (0.0001)
 * is not written as one just outside it (9.99999975e-05). */
static const char *num(char buf[32], float v)
{
	/* whole numbers as such: "100", not "1e+02" */
	if (v == truncf(v) && fabsf(v) < 1e9f) {
		snprintf(buf, 32, "%.0f", (double)v);
		return buf;
	}
	for (int p = 1; p <= 9; p++) {
		snprintf(buf, 32, "%.*g", p, (double)v);
		float back = (float)strtod(buf, NULL);
		if (memcmp(&back, &v, sizeof v) == 0)
			break;
	}
	return buf;
}

static void key_float(writer *w, const char *key, float v)
{
	char a[32];
	put(w, "%s = %s\n", key, num(a, v));
}

static void key_vec(writer *w, const char *key, const float *v, int n)
{
	char a[32], b[32], c[32];
	if (n == 2)
		put(w, "%s = %s %s\n", key, num(a, v[0]), num(b, v[1]));
	else
		put(w, "%s = %s %s %s\n", key, num(a, v[0]), num(b, v[1]), num(c, v[2]));
}

static void key_bool(writer *w, const char *key, bool v) { put(w, "%s = %s\n", key, v ? "true" : "false"); }

/* A vertex selection, over as many lines as it needs (`pins` and `vertices` accumulate),
 * keeping `row J` and `column I` together. */
static void key_selection(writer *w, const char *key, const char *text)
{
	char buf[512], line[LINE_MAX_CHARS];
	snprintf(buf, sizeof buf, "%s", text);
	size_t used = 0;
	char *save = NULL;
	for (char *tok = strtok_r(buf, " \t,", &save); tok; tok = strtok_r(NULL, " \t,", &save)) {
		char item[80];
		if (strcmp(tok, "row") == 0 || strcmp(tok, "column") == 0) {
			const char *arg = strtok_r(NULL, " \t,", &save);
			snprintf(item, sizeof item, "%s %s", tok, arg ? arg : "");
		} else {
			snprintf(item, sizeof item, "%s", tok);
		}
		size_t n = strlen(item);
		if (used && used + 1 + n + strlen(key) + 3 > LINE_MAX_CHARS - 8) {
			put(w, "%s = %s\n", key, line);
			used = 0;
		}
		if (used)
			line[used++] = ' ';
		memcpy(line + used, item, n + 1);
		used += n;
	}
	if (used)
		put(w, "%s = %s\n", key, line);
}

/* World axes back into the file's (the inverse of scn_axes_to_world). */
static void from_world(scn_axes axes, const float in[3], float out[3])
{
	float v[3] = {in[0], in[1], in[2]};
	if (axes == SCN_AXES_Z_UP) {
		out[0] = v[0], out[1] = -v[2], out[2] = v[1];
	} else {
		memcpy(out, v, sizeof v);
	}
}

/* A file the scene names, as the written scene must name it. */
static void key_file(writer *w, const char *key, const char *name)
{
	if (!ok(w))
		return;
	char opened[SCN_PATH_MAX + 64], full[PATH_MAX];
	const char *slash = strrchr(w->s->path, '/');
	if (name[0] == '/' || w->s->seed || !slash)
		snprintf(opened, sizeof opened, "%s", name);
	else
		snprintf(opened, sizeof opened, "%.*s/%s", (int)(slash - w->s->path), w->s->path, name);
	if (!realpath(opened, full)) {
		scn_fail(w->err, SCN_ERROR_IO, "%s: %s (named by scene '%s'): %s", opened, key, w->s->name, strerror(errno));
		return;
	}
	size_t d = strlen(w->out_dir);
	if (d && strncmp(full, w->out_dir, d) == 0 && full[d] == '/')
		put(w, "%s = %s\n", key, full + d + 1);
	else
		put(w, "%s = %s\n", key, full);
}

static void key_frictions(writer *w, const scn_desc *d)
{
	char a[32];
	for (int i = 0; i < d->friction_count; i++)
		put(w, "friction_with = %s %s\n", d->frictions[i].name, num(a, d->frictions[i].mu));
}

static bool has(const scn_desc *d, const char *key) { return scn_desc_key_line(d, key) != 0; }

static void material_keys(writer *w, const sim_material *m)
{
	if (m->total_mass > 0.0f)
		key_float(w, "mass", m->total_mass);
	else
		key_float(w, "density", m->areal_density);
	static const char *const kinds[SIM_SPRING_KIND_COUNT] = {"structural", "shear", "bend"};
	char damping[32];
	for (int k = 0; k < SIM_SPRING_KIND_COUNT; k++) {
		key_float(w, kinds[k], m->stiffness[k]);
		snprintf(damping, sizeof damping, "%s_damping", kinds[k]);
		key_float(w, damping, m->damping[k]);
	}
	key_float(w, "anchor_stiffness", m->anchor_stiffness);
	key_float(w, "anchor_damping", m->anchor_damping);
	key_float(w, "thickness", m->thickness);
	key_float(w, "friction", m->friction);
}

static void mesh_keys(writer *w, const scn_desc *d)
{
	key_file(w, "file", d->mesh_file);
	key_float(w, "scale", d->scale);
	key_vec(w, "rotate", d->rotate, 3);
	key_vec(w, "translate", d->translate, 3);
	key_float(w, "weld", d->weld);
}

static void cloth(writer *w, const scn_desc *d, const sim_material *m)
{
	if (d->material_ref[0])
		put(w, "material = %s\n", d->material_ref);
	material_keys(w, m);
	key_vec(w, "color", d->color, 3);
	switch (d->kind) {
	case SCN_K_GRID:
		put(w, "resolution = %d %d\n", d->resolution[0], d->resolution[1]);
		key_vec(w, "size", d->size, 2);
		if (has(d, "corner"))
			key_vec(w, "corner", d->corner, 3);
		if (has(d, "center"))
			key_vec(w, "center", d->center, 3);
		if (has(d, "axis_u")) {
			key_vec(w, "axis_u", d->written.axis_u, 3);
			key_vec(w, "axis_v", d->written.axis_v, 3);
		}
		break;
	case SCN_K_MESH: mesh_keys(w, d); break;
	case SCN_K_TETRAHEDRON:
		if (has(d, "center"))
			key_vec(w, "center", d->center, 3);
		key_float(w, "edge", d->edge);
		break;
	default: break;
	}
	if (d->pins_text[0])
		key_selection(w, "pins", d->pins_text);
	if (has(d, "velocity")) /* given, it overrides every vertex's: even a zero has a sign */
		key_vec(w, "velocity", d->velocity, 3);
	char a[32], b[32], c[32];
	for (int i = 0; i < d->vertex_velocity_count; i++) {
		const scn_vertex_velocity *v = &d->vertex_velocities[i];
		put(w, "vertex_velocity = %d %s %s %s\n", v->vertex, num(a, v->velocity[0]), num(b, v->velocity[1]),
		    num(c, v->velocity[2]));
	}
	if (d->velocities_file[0])
		key_file(w, "velocities", d->velocities_file);
	key_frictions(w, d);
}

static void obstacle(writer *w, const scn_desc *d)
{
	switch (d->kind) {
	case SCN_K_PLANE:
		key_vec(w, "position", d->position, 3);
		if (has(d, "normal"))
			key_vec(w, "normal", d->written.normal, 3);
		break;
	case SCN_K_SPHERE:
		key_vec(w, "position", d->position, 3);
		key_float(w, "radius", d->radius);
		break;
	case SCN_K_BOX:
		key_vec(w, "position", d->position, 3);
		key_vec(w, "half_extents", d->half_extents, 3); /* what a given size became, exactly */
		key_vec(w, "rotate", d->rotate, 3);
		break;
	case SCN_K_CAPSULE:
		key_vec(w, "position", d->position, 3);
		key_float(w, "radius", d->radius);
		key_float(w, "half_height", d->half_height);
		if (has(d, "rotate"))
			key_vec(w, "rotate", d->rotate, 3);
		if (has(d, "axis"))
			key_vec(w, "axis", d->written.axis, 3);
		break;
	case SCN_K_RIGID: mesh_keys(w, d); break;
	default: break;
	}
	key_float(w, "friction", d->friction);
	key_float(w, "thickness", d->thickness);
	key_vec(w, "velocity", d->velocity, 3);
	key_vec(w, "angular_velocity", d->angular_velocity, 3);
	if (d->velocities_file[0])
		key_file(w, "velocities", d->velocities_file);
	key_vec(w, "color", d->color, 3);
	key_frictions(w, d);
}

static void motion(writer *w, const scn_desc *d)
{
	put(w, "object = %s\n", d->object);
	key_selection(w, "vertices", d->vertices_text);
	key_vec(w, "velocity", d->velocity, 3);
	key_vec(w, "angular_velocity", d->angular_velocity, 3);
	key_vec(w, "pivot", d->pivot, 3);
	key_float(w, "start", d->start);
	key_float(w, "stop", d->stop);
	key_float(w, "slot", d->slot);
	put(w, "then = %s\n", d->release ? "release" : "hold");
}

static void world(writer *w, const scn_overrides *o)
{
	const scn_scene *s = w->s;
	/* in world axes, as scn_build makes them: a file's own gravity and wind are in its axes */
	sim_world_def def = s->world;
	if (scn_scene_key_line(s, "gravity", SCN_K_WORLD))
		scn_axes_to_world(s->up, s->world.gravity, def.gravity);
	if (scn_scene_key_line(s, "wind", SCN_K_WORLD))
		scn_axes_to_world(s->up, s->world.wind, def.wind);
	if (o && o->def)
		def = *o->def;
	float g[3], wind[3];
	from_world(s->up, def.gravity, g);
	from_world(s->up, def.wind, wind);
	put(w, "\n[world]\n");
	key_float(w, "dt", o && o->dt > 0.0f ? o->dt : s->info.dt);
	put(w, "integrator = %s\n", sim_integrator_name(def.integrator));
	put(w, "substeps = %d\n", def.substeps);
	key_vec(w, "gravity", g, 3);
	key_float(w, "air_damping", def.air_damping);
	key_vec(w, "wind", wind, 3);
	key_float(w, "air_density", def.air_density);
	key_float(w, "drag_coefficient", def.drag_coefficient);
	key_float(w, "lift_coefficient", def.lift_coefficient);
	key_bool(w, "verlet_drag", def.verlet_drag);
	key_bool(w, "strain_limit", def.strain_limit);
	key_float(w, "strain_tau", def.strain_tau);
	put(w, "strain_iterations = %d\n", def.strain_iterations);
	key_float(w, "cg_tolerance", def.cg_tolerance);
	put(w, "cg_max_iterations = %d\n", def.cg_max_iterations);
	key_float(w, "blowup_strain", def.blowup_strain);
	key_float(w, "blowup_speed", def.blowup_speed);
	key_bool(w, "collisions", def.collisions);
	key_bool(w, "self_collisions", def.self_collisions);
	put(w, "collision_iterations = %d\n", def.collision_iterations);
}

static const char *kind_name(scn_kind k)
{
	static const char *const names[SCN_K_COUNT] = {
	    "scene", "world", "camera", "material", "grid", "mesh", "tetrahedron",
	    "rigid", "plane", "sphere", "box", "capsule", "motion",
	};
	return names[k];
}

/* The absolute folder of `path` (which need not exist yet; its folder must). */
static void folder_of(const char *path, char out[PATH_MAX])
{
	char dir[PATH_MAX];
	const char *slash = strrchr(path, '/');
	if (!slash)
		snprintf(dir, sizeof dir, ".");
	else if (slash == path)
		snprintf(dir, sizeof dir, "/");
	else
		snprintf(dir, sizeof dir, "%.*s", (int)(slash - path), path);
	if (!realpath(dir, out))
		out[0] = '\0';
	else if (strcmp(out, "/") == 0)
		out[0] = '\0'; /* every absolute path is then written as it is */
}

char *scn_scene_text(const scn_scene *s, const scn_overrides *o, const char *path, scn_error *err)
{
	scn_error local = {0};
	if (!err)
		err = &local;
	writer w = {.s = s, .err = err};
	folder_of(path, w.out_dir);
	char a[32];
	/* nothing about where it came from: a scene saved again reads the same */
	put(&w, "# a tela scene (docs/scene-format.md), written by tela\n");
	put(&w, "[scene]\n");
	if (scn_scene_key_line(s, "name", SCN_K_SCENE))
		put(&w, "name = %s\n", s->name);
	if (s->description[0])
		put(&w, "description = %s\n", s->description);
	char seconds[40];
	for (int p = 1; p <= 17; p++) {
		snprintf(seconds, sizeof seconds, "%.*g", p, s->info.seconds);
		if (strtod(seconds, NULL) == s->info.seconds)
			break;
	}
	put(&w, "seconds = %s\n", seconds);
	put(&w, "up = %s\n", s->up == SCN_AXES_Z_UP ? "z" : "y");
	world(&w, o);
	put(&w, "\n[camera]\n");
	key_vec(&w, "position", s->camera.position, 3);
	key_vec(&w, "target", s->camera.target, 3);
	put(&w, "fov = %s\n", num(a, s->camera.fov_degrees));
	int object = 0;
	for (int i = 0; i < s->desc_count && ok(&w); i++) {
		const scn_desc *d = &s->descs[i];
		unsigned bit = 1u << d->kind;
		put(&w, "\n[%s %s]\n", kind_name(d->kind), d->name);
		if (d->kind == SCN_K_MATERIAL) {
			material_keys(&w, &d->material);
			key_vec(&w, "color", d->color, 3);
			key_frictions(&w, d);
		} else if (bit & SCN_CLOTH_KINDS) {
			const sim_material *m = &d->material;
			if (o && o->materials && object < o->material_count)
				m = &o->materials[object];
			cloth(&w, d, m);
			object++;
		} else if (bit & SCN_OBSTACLE_KINDS) {
			obstacle(&w, d);
		} else if (d->kind == SCN_K_MOTION) {
			motion(&w, d);
		}
	}
	if (!ok(&w)) {
		free(w.text);
		return NULL;
	}
	/* A setting changed beyond what a scene file takes (a command line allows more) must
	 * not make a file that cannot be opened: read it back as it will be read. */
	scn_scene *back = NULL;
	scn_error inner = {0};
	if (scn_parse(w.text, w.length, path, &back, &inner) != SCN_OK) {
		scn_fail(err, inner.status == SCN_ERROR_MEMORY ? SCN_ERROR_MEMORY : SCN_ERROR_PARSE,
		         "%s: not written, since the scene would not read back: %s", path, inner.message);
		free(w.text);
		return NULL;
	}
	scn_scene_free(&back);
	return w.text;
}

scn_status scn_scene_write(const scn_scene *s, const scn_overrides *o, const char *path, scn_error *err)
{
	scn_error local = {0};
	if (!err)
		err = &local;
	char *text = scn_scene_text(s, o, path, err);
	if (!text)
		return err->status;
	char tmp[PATH_MAX + 16];
	if (snprintf(tmp, sizeof tmp, "%s.tmp%ld", path, (long)getpid()) >= (int)sizeof tmp) {
		free(text);
		return scn_fail(err, SCN_ERROR_IO, "%s: path too long", path);
	}
	FILE *f = fopen(tmp, "w");
	if (!f) {
		int e = errno;
		free(text);
		return scn_fail(err, SCN_ERROR_IO, "%s: %s", path, strerror(e));
	}
	size_t n = strlen(text);
	bool written = fwrite(text, 1, n, f) == n;
	int e = errno;
	if (fclose(f) != 0 && written)
		written = false, e = errno;
	free(text);
	if (!written || rename(tmp, path) != 0) {
		if (written)
			e = errno;
		remove(tmp);
		return scn_fail(err, SCN_ERROR_IO, "%s: %s", path, strerror(e));
	}
	return SCN_OK;
}
