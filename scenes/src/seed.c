/* The seed simulator's scene folder (dpoSimulator's `environment/`), read as it is:
 *
 *   world_parameters/world_parameters   gravity magnitude (m/s^2), frame rate (1/s)
 *   bodies/body_list                    mesh, parameter and velocity files, three per body
 *   bodies/dpo_NAME | rig_NAME          ASCII STL: cloth (deformable planar object) or rigid
 *   bodies/par_NAME                     density, mass, thickness, diffuse colour
 *   bodies/vel_NAME                     velocity constraints
 *
 * The seed's parameter files are prose with the values on their own lines, read in order;
 * here a line that starts like a number is a value and must be one, and any other line
 * is prose.  z is up in the seed, so the scene is marked z-up and the builder turns it. */
#define _POSIX_C_SOURCE 200809L
#include "scene_internal.h"

#include <ctype.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

enum { SEED_MAX_FILE = 1u << 20 };

/* Cloth constants the seed kept inside its solver (freecloth), not in its files: tela's
 * soft cloth, stable with symplectic Euler at the 1 ms substeps used below. */
static void seed_cloth_material(sim_material *m)
{
	*m = sim_material_default();
	m->stiffness[SIM_SPRING_STRUCTURAL] = 100.0f;
	m->stiffness[SIM_SPRING_SHEAR] = 50.0f;
	m->stiffness[SIM_SPRING_BEND] = 2.0f;
	m->friction = 0.4f;
}

typedef struct text_file {
	char path[SCN_PATH_MAX + 64];
	char *data;
	size_t size;
	char *cursor;
	int line;
} text_file;

static scn_status open_text(text_file *f, const char *dir, const char *sub, const char *name, scn_error *err)
{
	snprintf(f->path, sizeof f->path, "%s/%s%s", dir, sub, name);
	f->line = 0;
	if (scn_read_file(f->path, SEED_MAX_FILE, &f->data, &f->size, err) != SCN_OK)
		return err->status;
	if (memchr(f->data, '\0', f->size)) {
		free(f->data);
		f->data = NULL;
		return scn_fail(err, SCN_ERROR_PARSE, "%s:1: NUL byte: not a text file", f->path);
	}
	f->cursor = f->data;
	return SCN_OK;
}

/* The next line, without its end, or NULL at the end of the file. */
static char *next_line(text_file *f)
{
	if (!f->cursor || !*f->cursor)
		return NULL;
	char *line = f->cursor;
	char *end = strchr(line, '\n');
	f->cursor = end ? end + 1 : NULL;
	if (end)
		*end = '\0';
	size_t n = strlen(line);
	if (n && line[n - 1] == '\r')
		line[n - 1] = '\0';
	f->line++;
	return line;
}

/* A value line is one whose first word reads as a number to strtod, which takes "nan",
 * "inf" and "1x" too: such lines are values, and the strict parse then refuses them. */
static bool starts_like_number(const char *s)
{
	while (*s == ' ' || *s == '\t')
		s++;
	char *end = NULL;
	strtod(s, &end);
	return end != s;
}

/* The next value line with exactly `count` numbers within [lo, hi]; `what` names it. */
static scn_status next_values(text_file *f, const char *what, int count, double lo, double hi, float *out,
                              scn_error *err)
{
	for (char *line; (line = next_line(f));) {
		if (!starts_like_number(line))
			continue;
		char *save = NULL, *tok = strtok_r(line, " \t,", &save);
		for (int k = 0; k < count; k++) {
			double v;
			if (!tok || !scn_parse_double(tok, 1e30, &v) || v < lo || v > hi)
				return scn_fail(err, SCN_ERROR_PARSE, "%s:%d: %s: expected %d number%s in [%g, %g]", f->path, f->line,
				                what, count, count > 1 ? "s" : "", lo, hi);
			out[k] = (float)v;
			tok = strtok_r(NULL, " \t,", &save);
		}
		if (tok)
			return scn_fail(err, SCN_ERROR_PARSE, "%s:%d: %s: more than %d number%s", f->path, f->line, what, count,
			                count > 1 ? "s" : "");
		return SCN_OK;
	}
	return scn_fail(err, SCN_ERROR_PARSE, "%s:%d: missing %s (the file ends first)", f->path, f->line, what);
}

/* No further value lines: the seed's files are read by position, so an extra value means
 * the file is not what the reader thinks it is. */
static scn_status no_more_values(text_file *f, scn_error *err)
{
	for (char *line; (line = next_line(f));)
		if (starts_like_number(line))
			return scn_fail(err, SCN_ERROR_PARSE, "%s:%d: unexpected value line '%s'", f->path, f->line, line);
	return SCN_OK;
}

static scn_status read_world(scn_scene *s, const char *dir, scn_error *err)
{
	text_file f = {0};
	if (open_text(&f, dir, "world_parameters/", "world_parameters", err) != SCN_OK)
		return err->status;
	float g, fps;
	if (next_values(&f, "gravity (m/s^2)", 1, 0.0, 1e3, &g, err) == SCN_OK) {
		int gline = f.line;
		if (next_values(&f, "framerate (frames/second)", 1, 1.0, 1e5, &fps, err) == SCN_OK &&
		    no_more_values(&f, err) == SCN_OK) {
			/* A magnitude along -z, z being up in the seed. */
			s->world.gravity[0] = s->world.gravity[1] = 0.0f;
			s->world.gravity[2] = -g;
			scn_scene_mark_key(s, "gravity", SCN_K_WORLD, gline);
			/* The seed computes and shows a state every 1/fps; tela steps at that rate in
			 * substeps of at most 1 ms. */
			s->info.dt = 1.0f / fps;
			int sub = (int)(s->info.dt / 1e-3f + 0.999f);
			s->world.substeps = sub < 1 ? 1 : sub;
			/* the soft cloth below is within symplectic Euler's limit at those substeps,
			 * cheaper than a scene file's implicit default */
			s->world.integrator = SIM_SYMPLECTIC;
		}
	}
	free(f.data);
	return err->status;
}

/* par_NAME: density (kg/m^2, cloth), mass (kg, rigid: 0 = infinite), thickness (m), colour. */
static scn_status read_parameters(scn_desc *d, const char *dir, const char *file, scn_error *err)
{
	text_file f = {0};
	if (open_text(&f, dir, "bodies/", file, err) != SCN_OK)
		return err->status;
	float density, mass, thickness, color[3];
	if (next_values(&f, "density (kg/m^2)", 1, 1e-6, 1e4, &density, err) == SCN_OK &&
	    next_values(&f, "mass (kg)", 1, 0.0, 1e9, &mass, err) == SCN_OK &&
	    next_values(&f, "thickness (m)", 1, 0.0, 1.0, &thickness, err) == SCN_OK &&
	    next_values(&f, "diffuse colour (r g b)", 3, 0.0, 1.0, color, err) == SCN_OK && no_more_values(&f, err) == SCN_OK) {
		memcpy(d->color, color, sizeof color);
		if (d->kind == SCN_K_MESH) {
			d->material.areal_density = density;
			d->material.thickness = thickness;
		} else {
			/* rigid bodies have infinite mass whatever the file says */
			d->thickness = thickness;
		}
	}
	free(f.data);
	return err->status;
}

static scn_status read_body(scn_scene *s, const char *dir, const char *list_path, int line, char *names[3],
                            scn_error *err)
{
	bool cloth = strncmp(names[0], "dpo_", 4) == 0;
	if (!cloth && strncmp(names[0], "rig_", 4) != 0)
		return scn_fail(err, SCN_ERROR_PARSE, "%s:%d: '%s': a body starts with its mesh, dpo_NAME or rig_NAME",
		                list_path, line, names[0]);
	if (strncmp(names[1], "par_", 4) != 0 || strncmp(names[2], "vel_", 4) != 0)
		return scn_fail(err, SCN_ERROR_PARSE, "%s:%d: '%s' must be followed by its par_ and vel_ files", list_path,
		                line, names[0]);
	const char *name = names[0] + 4;
	if (!*name || strlen(name) >= SCN_NAME_MAX)
		return scn_fail(err, SCN_ERROR_PARSE, "%s:%d: '%s': bad body name", list_path, line, names[0]);
	if (scn_scene_find_desc(s, SCN_CLOTH_KINDS | SCN_OBSTACLE_KINDS, name))
		return scn_fail(err, SCN_ERROR_PARSE, "%s:%d: body '%s' listed twice", list_path, line, name);
	scn_desc *d = scn_scene_add_desc(s, cloth ? SCN_K_MESH : SCN_K_RIGID, name, list_path, line);
	if (!d)
		return scn_fail(err, SCN_ERROR_MEMORY, "%s: out of memory", list_path);
	if (cloth)
		seed_cloth_material(&d->material);
	snprintf(d->mesh_file, sizeof d->mesh_file, "%s/bodies/%s", dir, names[0]);
	snprintf(d->velocities_file, sizeof d->velocities_file, "%s/bodies/%s", dir, names[2]);
	scn_desc_mark_key(d, "file", line);
	scn_desc_mark_key(d, "velocities", line);
	scn_error inner = {0};
	if (scn_stl_read(d->mesh_file, d->weld, &d->mesh, NULL, &inner) != SCN_OK)
		return scn_fail(err, inner.status, "%s (listed at %s:%d)", inner.message, list_path, line);
	if (!cloth && scn_mesh_orient(&d->mesh) < 0)
		return scn_fail(err, SCN_ERROR_MEMORY, "%s: out of memory", d->mesh_file);
	if (read_parameters(d, dir, names[1], err) != SCN_OK)
		return err->status;
	if (scn_vel_read(d->velocities_file, cloth ? d->mesh.vertex_count : 1, &d->velocities, &inner) != SCN_OK)
		return scn_fail(err, inner.status, "%s (listed at %s:%d)", inner.message, list_path, line);
	d->velocities_axes = SCN_AXES_Z_UP;
	return SCN_OK;
}

static bool is_marker(const char *line)
{
	const char *m = "start the list from here";
	while (*line == ' ' || *line == '\t')
		line++;
	for (; *m; m++, line++)
		if (tolower((unsigned char)*line) != *m)
			return false;
	return true;
}

/* body_list: prose, then "Start the list from here", then the files, three per body, on
 * one line or several. */
static scn_status read_bodies(scn_scene *s, const char *dir, scn_error *err)
{
	text_file f = {0};
	if (open_text(&f, dir, "bodies/", "body_list", err) != SCN_OK)
		return err->status;
	bool marker = false;
	for (char *line; (line = next_line(&f));)
		marker |= is_marker(line);
	free(f.data);
	if (open_text(&f, dir, "bodies/", "body_list", err) != SCN_OK)
		return err->status;
	bool listing = !marker;
	char held[3][SCN_NAME_MAX + 8];
	char *names[3] = {held[0], held[1], held[2]};
	int have = 0, first_line = 0;
	for (char *line; err->status == SCN_OK && (line = next_line(&f));) {
		if (!listing) {
			listing = is_marker(line);
			continue;
		}
		char *save = NULL;
		for (char *tok = strtok_r(line, " \t", &save); tok && err->status == SCN_OK; tok = strtok_r(NULL, " \t", &save)) {
			if (strlen(tok) >= sizeof held[0] || strchr(tok, '/')) {
				scn_fail(err, SCN_ERROR_PARSE, "%s:%d: '%s' is not a file of bodies/", f.path, f.line, tok);
				break;
			}
			if (have == 0)
				first_line = f.line;
			snprintf(held[have++], sizeof held[0], "%s", tok);
			if (have == 3) {
				read_body(s, dir, f.path, first_line, names, err);
				have = 0;
			}
		}
	}
	if (err->status == SCN_OK && have)
		scn_fail(err, SCN_ERROR_PARSE, "%s:%d: '%s' has no par_ and vel_ files after it", f.path, first_line, held[0]);
	free(f.data);
	return err->status;
}

/* A folder given as a scene that has neither of the seed's folders is some other folder:
 * saying so beats naming the first file it lacks. */
static bool is_seed_folder(const char *dir, scn_error *err)
{
	char path[SCN_PATH_MAX];
	struct stat st;
	bool world = snprintf(path, sizeof path, "%s/world_parameters", dir) < (int)sizeof path &&
	             stat(path, &st) == 0 && S_ISDIR(st.st_mode);
	bool bodies = snprintf(path, sizeof path, "%s/bodies", dir) < (int)sizeof path && stat(path, &st) == 0 &&
	              S_ISDIR(st.st_mode);
	if (world || bodies)
		return true;
	scn_fail(err, SCN_ERROR_IO,
	         "%s: not a scene file or a seed simulator folder (such a folder holds world_parameters/ and bodies/)",
	         dir);
	return false;
}

scn_status scn_load_seed(const char *dir, scn_scene **out, scn_error *err)
{
	*out = NULL;
	scn_error local = {0};
	if (!err)
		err = &local;
	scn_scene *s = scn_scene_alloc();
	if (!s)
		return scn_fail(err, SCN_ERROR_MEMORY, "%s: out of memory", dir);
	snprintf(s->path, sizeof s->path, "%s", dir);
	s->up = SCN_AXES_Z_UP;
	s->seed = true;
	s->info.seconds = 5.0;
	/* the folder's own name */
	char buf[SCN_PATH_MAX];
	snprintf(buf, sizeof buf, "%s", dir);
	size_t n = strlen(buf);
	while (n > 1 && buf[n - 1] == '/')
		buf[--n] = '\0';
	char *base = strrchr(buf, '/');
	snprintf(s->name, sizeof s->name, "%s", base ? base + 1 : buf);
	snprintf(s->description, sizeof s->description, "seed simulator scene %s", dir);
	/* The seed's view looks at the scene from the front, z up. */
	s->camera = (scn_camera_def){{0.0f, -2.5f, 1.4f}, {0.0f, 0.0f, 0.8f}, 45.0f};
	if (is_seed_folder(dir, err) && read_world(s, dir, err) == SCN_OK && read_bodies(s, dir, err) == SCN_OK)
		scn_scene_finish(s, err);
	if (err->status != SCN_OK) {
		scn_scene_free(&s);
		return err->status;
	}
	*out = s;
	return SCN_OK;
}
