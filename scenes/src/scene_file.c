/* The scene-file reader.  libinih splits the text into sections and key = value pairs
 * (comments, inline comments, blank lines, a byte-order mark); this file decides what
 * the keys mean.  inih's line reader is ours, so every message can name the line, and so
 * a section header is seen even when the section has no keys. */
#include "scene_internal.h"

#include <ini.h>

#include <ctype.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* ---- the keys ---------------------------------------------------------------------------------- */

typedef enum key_type {
	KT_FLOAT,
	KT_DOUBLE,
	KT_INT,
	KT_BOOL,
	KT_VEC2,
	KT_VEC3,
	KT_INT2,
	KT_NAME,      /* an identifier (material reference, object name) */
	KT_TEXT,      /* free text (descriptions, vertex selections) */
	KT_PATH,      /* a file name, relative to the scene file */
	KT_INTEGRATOR,
	KT_UP,
	KT_COLOR,
	KT_VERTEX_VELOCITY,
	KT_FRICTION_WITH, /* NAME MU: a pair's own friction */
	KT_THEN,
	KT_RATE,      /* world.rate: sets dt to its inverse */
} key_type;

typedef enum key_target { TG_SCENE, TG_WORLD, TG_CAMERA, TG_DESC } key_target;

typedef struct scn_key {
	const char *name;
	unsigned kinds;
	key_type type;
	key_target target;
	size_t offset;
	size_t size; /* strings: the buffer size */
	double lo, hi;
	bool repeat; /* may appear more than once (lists accumulate) */
} scn_key;

#define K(kind) (1u << SCN_K_##kind)
#define MATERIAL_KINDS (K(MATERIAL) | SCN_CLOTH_KINDS)
#define D(field) TG_DESC, offsetof(scn_desc, field), sizeof(((scn_desc *)0)->field)
#define W(field) TG_WORLD, offsetof(sim_world_def, field), sizeof(((sim_world_def *)0)->field)
#define S(field) TG_SCENE, offsetof(scn_scene, field), sizeof(((scn_scene *)0)->field)
#define C(field) TG_CAMERA, offsetof(scn_camera_def, field), sizeof(((scn_camera_def *)0)->field)

enum { BIG = 1000000 };

static const scn_key keys[] = {
	{"name", K(SCENE), KT_NAME, S(name), 0, 0, false},
	{"description", K(SCENE), KT_TEXT, S(description), 0, 0, false},
	{"seconds", K(SCENE), KT_DOUBLE, S(info.seconds), 0, 1e6, false},
	{"up", K(SCENE), KT_UP, S(up), 0, 0, false},

	{"gravity", K(WORLD), KT_VEC3, W(gravity), -1e3, 1e3, false},
	{"dt", K(WORLD), KT_FLOAT, S(info.dt), 1e-7, 1.0, false},
	{"rate", K(WORLD), KT_RATE, S(info.dt), 1.0, 1e7, false},
	{"substeps", K(WORLD), KT_INT, W(substeps), 1, 10000, false},
	{"integrator", K(WORLD), KT_INTEGRATOR, W(integrator), 0, 0, false},
	{"air_damping", K(WORLD), KT_FLOAT, W(air_damping), 0, 1e3, false},
	{"wind", K(WORLD), KT_VEC3, W(wind), -1e3, 1e3, false},
	{"air_density", K(WORLD), KT_FLOAT, W(air_density), 0, 1e3, false},
	{"drag_coefficient", K(WORLD), KT_FLOAT, W(drag_coefficient), 0, 100, false},
	{"lift_coefficient", K(WORLD), KT_FLOAT, W(lift_coefficient), 0, 100, false},
	{"verlet_drag", K(WORLD), KT_BOOL, W(verlet_drag), 0, 0, false},
	{"strain_limit", K(WORLD), KT_BOOL, W(strain_limit), 0, 0, false},
	{"strain_tau", K(WORLD), KT_FLOAT, W(strain_tau), 1e-4, 10, false},
	{"strain_iterations", K(WORLD), KT_INT, W(strain_iterations), 1, BIG, false},
	{"cg_tolerance", K(WORLD), KT_FLOAT, W(cg_tolerance), 1e-12, 1, false},
	{"cg_max_iterations", K(WORLD), KT_INT, W(cg_max_iterations), 1, BIG, false},
	{"blowup_strain", K(WORLD), KT_FLOAT, W(blowup_strain), 1e-2, 1e6, false},
	{"blowup_speed", K(WORLD), KT_FLOAT, W(blowup_speed), 1e-2, 1e9, false},
	{"collisions", K(WORLD), KT_BOOL, W(collisions), 0, 0, false},
	{"self_collisions", K(WORLD), KT_BOOL, W(self_collisions), 0, 0, false},
	{"collision_iterations", K(WORLD), KT_INT, W(collision_iterations), 0, 1000, false},

	{"position", K(CAMERA), KT_VEC3, C(position), -1e6, 1e6, false},
	{"target", K(CAMERA), KT_VEC3, C(target), -1e6, 1e6, false},
	{"fov", K(CAMERA), KT_FLOAT, C(fov_degrees), 1, 170, false},

	{"material", SCN_CLOTH_KINDS, KT_NAME, D(material_ref), 0, 0, false},
	{"mass", MATERIAL_KINDS, KT_FLOAT, D(material.total_mass), 1e-9, 1e6, false},
	{"density", MATERIAL_KINDS, KT_FLOAT, D(material.areal_density), 1e-9, 1e6, false},
	{"structural", MATERIAL_KINDS, KT_FLOAT, D(material.stiffness[SIM_SPRING_STRUCTURAL]), 0, 1e9, false},
	{"shear", MATERIAL_KINDS, KT_FLOAT, D(material.stiffness[SIM_SPRING_SHEAR]), 0, 1e9, false},
	{"bend", MATERIAL_KINDS, KT_FLOAT, D(material.stiffness[SIM_SPRING_BEND]), 0, 1e9, false},
	{"structural_damping", MATERIAL_KINDS, KT_FLOAT, D(material.damping[SIM_SPRING_STRUCTURAL]), 0, 1e6, false},
	{"shear_damping", MATERIAL_KINDS, KT_FLOAT, D(material.damping[SIM_SPRING_SHEAR]), 0, 1e6, false},
	{"bend_damping", MATERIAL_KINDS, KT_FLOAT, D(material.damping[SIM_SPRING_BEND]), 0, 1e6, false},
	{"anchor_stiffness", MATERIAL_KINDS, KT_FLOAT, D(material.anchor_stiffness), 0, 1e9, false},
	{"anchor_damping", MATERIAL_KINDS, KT_FLOAT, D(material.anchor_damping), 0, 1e6, false},
	{"thickness", MATERIAL_KINDS, KT_FLOAT, D(material.thickness), 0, 1, false},
	{"friction", MATERIAL_KINDS, KT_FLOAT, D(material.friction), 0, 10, false},
	{"color", MATERIAL_KINDS | SCN_OBSTACLE_KINDS, KT_COLOR, D(color), 0, 1, false},

	{"pins", SCN_CLOTH_KINDS, KT_TEXT, D(pins_text), 0, 0, true},
	{"velocity", SCN_CLOTH_KINDS | SCN_OBSTACLE_KINDS | K(MOTION), KT_VEC3, D(velocity), -1e3, 1e3, false},
	{"vertex_velocity", SCN_CLOTH_KINDS, KT_VERTEX_VELOCITY, TG_DESC, 0, 0, -1e3, 1e3, true},
	{"velocities", SCN_CLOTH_KINDS | SCN_OBSTACLE_KINDS, KT_PATH, D(velocities_file), 0, 0, false},

	{"resolution", K(GRID), KT_INT2, D(resolution), 2, 4096, false},
	{"size", K(GRID), KT_VEC2, D(size), 1e-4, 1e4, false},
	{"corner", K(GRID), KT_VEC3, D(corner), -1e6, 1e6, false},
	{"center", K(GRID) | K(TETRAHEDRON), KT_VEC3, D(center), -1e6, 1e6, false},
	{"axis_u", K(GRID), KT_VEC3, D(axis_u), -1e3, 1e3, false},
	{"axis_v", K(GRID), KT_VEC3, D(axis_v), -1e3, 1e3, false},

	{"file", K(MESH) | K(RIGID), KT_PATH, D(mesh_file), 0, 0, false},
	{"scale", K(MESH) | K(RIGID), KT_FLOAT, D(scale), 1e-9, 1e9, false},
	{"rotate", K(MESH) | K(RIGID) | K(BOX) | K(CAPSULE), KT_VEC3, D(rotate), -1e4, 1e4, false},
	{"translate", K(MESH) | K(RIGID), KT_VEC3, D(translate), -1e6, 1e6, false},
	{"weld", K(MESH) | K(RIGID), KT_FLOAT, D(weld), 0, 1, false},

	{"edge", K(TETRAHEDRON), KT_FLOAT, D(edge), 1e-4, 1e3, false},

	{"position", K(PLANE) | K(SPHERE) | K(BOX) | K(CAPSULE), KT_VEC3, D(position), -1e6, 1e6, false},
	{"normal", K(PLANE), KT_VEC3, D(normal), -1e3, 1e3, false},
	{"radius", K(SPHERE) | K(CAPSULE), KT_FLOAT, D(radius), 1e-6, 1e4, false},
	{"axis", K(CAPSULE), KT_VEC3, D(axis), -1e3, 1e3, false},
	{"half_height", K(CAPSULE), KT_FLOAT, D(half_height), 0, 1e4, false},
	{"size", K(BOX), KT_VEC3, D(box_size), 1e-6, 1e4, false},
	{"half_extents", K(BOX), KT_VEC3, D(half_extents), 1e-6, 1e4, false},
	{"friction", SCN_OBSTACLE_KINDS, KT_FLOAT, D(friction), 0, 10, false},
	{"friction_with", MATERIAL_KINDS | SCN_OBSTACLE_KINDS, KT_FRICTION_WITH, TG_DESC, 0, 0, 0, 10, true},
	{"thickness", SCN_OBSTACLE_KINDS, KT_FLOAT, D(thickness), 0, 1, false},
	{"angular_velocity", SCN_OBSTACLE_KINDS | K(MOTION), KT_VEC3, D(angular_velocity), -1e3, 1e3, false},

	{"object", K(MOTION), KT_NAME, D(object), 0, 0, false},
	{"vertices", K(MOTION), KT_TEXT, D(vertices_text), 0, 0, true},
	{"pivot", K(MOTION), KT_VEC3, D(pivot), -1e6, 1e6, false},
	{"start", K(MOTION), KT_FLOAT, D(start), 0, 1e7, false},
	{"stop", K(MOTION), KT_FLOAT, D(stop), 0, 1e7, false},
	{"slot", K(MOTION), KT_FLOAT, D(slot), 1e-5, 10, false},
	{"then", K(MOTION), KT_THEN, D(release), 0, 0, false},
};
enum { KEY_COUNT = sizeof keys / sizeof keys[0] };
_Static_assert((int)KEY_COUNT <= (int)SCN_KEYS_MAX, "scn_desc.key_line is too small for the key table");

static const char *const kind_names[SCN_K_COUNT] = {
	"scene", "world", "camera", "material", "grid", "mesh", "tetrahedron",
	"rigid", "plane", "sphere", "box", "capsule", "motion",
};

static bool kind_takes_name(scn_kind k) { return k != SCN_K_SCENE && k != SCN_K_WORLD && k != SCN_K_CAMERA; }

/* ---- nearest-name suggestions ------------------------------------------------------------------- */

static int edit_distance(const char *a, const char *b)
{
	enum { N = 64 };
	size_t la = strlen(a), lb = strlen(b);
	if (la >= N || lb >= N)
		return N;
	int row[N + 1];
	for (size_t j = 0; j <= lb; j++)
		row[j] = (int)j;
	for (size_t i = 1; i <= la; i++) {
		int diag = row[0];
		row[0] = (int)i;
		for (size_t j = 1; j <= lb; j++) {
			int up = row[j];
			int sub = diag + (a[i - 1] != b[j - 1]);
			int del = row[j] + 1, ins = row[j - 1] + 1;
			row[j] = sub < del ? (sub < ins ? sub : ins) : (del < ins ? del : ins);
			diag = up;
		}
	}
	return row[lb];
}

/* Appends " (did you mean 'x'?)" for the closest candidate within a few edits. */
static void suggest(char *buf, size_t cap, const char *word, const char *const *candidates, int count)
{
	int best = 4;
	const char *pick = NULL;
	for (int i = 0; i < count; i++) {
		int d = edit_distance(word, candidates[i]);
		if (d < best)
			best = d, pick = candidates[i];
	}
	if (pick)
		snprintf(buf, cap, " (did you mean '%s'?)", pick);
	else
		buf[0] = '\0';
}

/* ---- value parsing ------------------------------------------------------------------------------ */

/* Splits a value into at most `max` tokens at blanks and commas. */
static int tokens(char *text, char **tok, int max)
{
	int n = 0;
	for (char *p = strtok(text, " \t,"); p; p = strtok(NULL, " \t,")) {
		if (n == max)
			return max + 1;
		tok[n++] = p;
	}
	return n;
}

static bool parse_floats(const char *value, float *out, int count, double lo, double hi)
{
	char buf[256];
	char *tok[8];
	if (snprintf(buf, sizeof buf, "%s", value) >= (int)sizeof buf || tokens(buf, tok, 8) != count)
		return false;
	for (int i = 0; i < count; i++) {
		double v;
		if (!scn_parse_double(tok[i], 1e30, &v) || v < lo || v > hi)
			return false;
		out[i] = (float)v;
	}
	return true;
}

static bool parse_bool(const char *v, bool *out)
{
	static const char *const yes[] = {"true", "yes", "on", "1"}, *const no[] = {"false", "no", "off", "0"};
	for (int i = 0; i < 4; i++) {
		if (strcmp(v, yes[i]) == 0)
			return *out = true, true;
		if (strcmp(v, no[i]) == 0)
			return *out = false, true;
	}
	return false;
}

static bool valid_name(const char *v, size_t cap)
{
	size_t n = strlen(v);
	if (n == 0 || n >= cap)
		return false;
	for (const char *c = v; *c; c++)
		if (!isalnum((unsigned char)*c) && !strchr("_-.", *c))
			return false;
	return true;
}

/* ---- the reader state --------------------------------------------------------------------------- */

typedef struct reader {
	const char *path;
	const char *text;
	size_t size, pos;
	int line;
	scn_scene *scene;
	scn_desc *current;   /* the section being read; NULL before the first */
	bool in_meta;        /* inside [scene], [world] or [camera] */
	scn_kind meta_kind;
	int meta_line[3];    /* where [scene], [world], [camera] were opened */
	scn_error *err;
} reader;

static int fail(reader *r, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static int fail(reader *r, const char *fmt, ...)
{
	char msg[400];
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(msg, sizeof msg, fmt, ap);
	va_end(ap);
	scn_fail_line(r->err, r->path, r->line, "%s", msg);
	return 0;
}

static scn_kind kind_from_name(const char *word)
{
	for (int k = 0; k < SCN_K_COUNT; k++)
		if (strcmp(word, kind_names[k]) == 0)
			return (scn_kind)k;
	return SCN_K_COUNT;
}

/* A "[kind name]" line: opens the next section. */
static bool open_section(reader *r, const char *line)
{
	const char *close = strchr(line, ']');
	if (!close)
		return fail(r, "section header without ']'");
	char head[160];
	size_t n = (size_t)(close - (line + 1));
	if (n >= sizeof head)
		return fail(r, "section header too long");
	memcpy(head, line + 1, n);
	head[n] = '\0';
	char *tok[3];
	int count = tokens(head, tok, 2);
	if (count == 0)
		return fail(r, "empty section header");
	scn_kind kind = kind_from_name(tok[0]);
	if (kind == SCN_K_COUNT) {
		char hint[80];
		suggest(hint, sizeof hint, tok[0], kind_names, SCN_K_COUNT);
		return fail(r, "unknown section '%s'%s; sections are scene, world, camera, material, grid, mesh, "
		               "tetrahedron, rigid, plane, sphere, box, capsule and motion",
		            tok[0], hint);
	}
	if (!kind_takes_name(kind)) {
		if (count != 1)
			return fail(r, "[%s] takes no name", tok[0]);
		int slot = (int)kind;
		if (r->meta_line[slot])
			return fail(r, "second [%s] section (the first is at line %d)", tok[0], r->meta_line[slot]);
		r->meta_line[slot] = r->line;
		r->in_meta = true;
		r->meta_kind = kind;
		r->current = NULL;
		return true;
	}
	if (count != 2)
		return fail(r, "[%s] needs one name: [%s NAME]", tok[0], tok[0]);
	if (!valid_name(tok[1], SCN_NAME_MAX))
		return fail(r, "'%s' is not a name (letters, digits, '_', '-', '.'; at most %d characters)", tok[1],
		            SCN_NAME_MAX - 1);
	unsigned same = kind == SCN_K_MATERIAL ? K(MATERIAL) : kind == SCN_K_MOTION ? K(MOTION)
	                                                      : SCN_CLOTH_KINDS | SCN_OBSTACLE_KINDS;
	const scn_desc *dup = scn_scene_find_desc(r->scene, same, tok[1]);
	if (dup)
		return fail(r, "a second section named '%s' (the first is at line %d)", tok[1], dup->line);
	r->current = scn_scene_add_desc(r->scene, kind, tok[1], r->path, r->line);
	if (!r->current) {
		scn_fail(r->err, SCN_ERROR_MEMORY, "%s:%d: out of memory", r->path, r->line);
		return false;
	}
	r->in_meta = false;
	return true;
}

/* inih's line source: one line per call, counted, checked for length and for bytes a
 * text file does not hold; a section header also opens its section here. */
static char *read_line(char *str, int num, void *stream)
{
	reader *r = stream;
	if (r->err->status != SCN_OK || r->pos >= r->size)
		return NULL;
	r->line++;
	/* Leading blanks go: inih would read an indented line as the continuation of the
	 * previous value, and scene files are often indented. */
	while (r->pos < r->size && (r->text[r->pos] == ' ' || r->text[r->pos] == '\t'))
		r->pos++;
	size_t n = 0;
	while (r->pos < r->size && r->text[r->pos] != '\n') {
		char c = r->text[r->pos++];
		if (c == '\0') {
			fail(r, "NUL byte: not a text file");
			return NULL;
		}
		if (n + 2 >= (size_t)num) {
			fail(r, "line longer than %d characters", num - 2);
			return NULL;
		}
		str[n++] = c;
	}
	if (r->pos < r->size)
		r->pos++; /* the newline */
	str[n++] = '\n';
	str[n] = '\0';
	const char *p = str;
	while (*p == ' ' || *p == '\t' || *p == '\r')
		p++;
	if (r->line == 1 && (unsigned char)p[0] == 0xEF && (unsigned char)p[1] == 0xBB && (unsigned char)p[2] == 0xBF)
		p += 3;
	if (*p == '[' && !open_section(r, p))
		return NULL;
	return str;
}

static void *target_base(reader *r, key_target t)
{
	switch (t) {
	case TG_SCENE: return r->scene;
	case TG_WORLD: return &r->scene->world;
	case TG_CAMERA: return &r->scene->camera;
	case TG_DESC: return r->current;
	}
	return NULL;
}

static bool set_vertex_velocity(reader *r, const char *value)
{
	scn_desc *d = r->current;
	char buf[256];
	char *tok[6];
	int id;
	float v[3];
	if (snprintf(buf, sizeof buf, "%s", value) >= (int)sizeof buf || tokens(buf, tok, 5) != 4 ||
	    !scn_parse_int(tok[0], 0, 100000000, &id))
		return fail(r, "vertex_velocity: expected a vertex id and three numbers, got '%s'", value);
	for (int k = 0; k < 3; k++) {
		double x;
		if (!scn_parse_double(tok[k + 1], 1e3, &x))
			return fail(r, "vertex_velocity: '%s' is not a speed in [-1000, 1000] m/s", tok[k + 1]);
		v[k] = (float)x;
	}
	scn_vertex_velocity *grown =
	    realloc(d->vertex_velocities, (size_t)(d->vertex_velocity_count + 1) * sizeof *grown);
	if (!grown) {
		scn_fail(r->err, SCN_ERROR_MEMORY, "%s:%d: out of memory", r->path, r->line);
		return false;
	}
	d->vertex_velocities = grown;
	grown[d->vertex_velocity_count++] = (scn_vertex_velocity){id, {v[0], v[1], v[2]}, r->line};
	return true;
}

/* friction_with = NAME MU: kept with its line; NAME is resolved once the whole file is
 * read (scn_scene_finish), since it may name a section further down. */
static bool set_friction_with(reader *r, const scn_key *k, const char *value)
{
	scn_desc *d = r->current;
	char buf[256];
	char *tok[3];
	double mu;
	if (snprintf(buf, sizeof buf, "%s", value) >= (int)sizeof buf || tokens(buf, tok, 2) != 2)
		return fail(r, "friction_with: expected a material or body name and a coefficient, got '%s'", value);
	if (!valid_name(tok[0], SCN_NAME_MAX))
		return fail(r, "friction_with: '%s' is not a name (letters, digits, '_', '-', '.')", tok[0]);
	if (!scn_parse_double(tok[1], 1e30, &mu) || mu < k->lo || mu > k->hi)
		return fail(r, "friction_with: '%s' is not a number in [%g, %g]", tok[1], k->lo, k->hi);
	scn_friction *grown = realloc(d->frictions, (size_t)(d->friction_count + 1) * sizeof *grown);
	if (!grown) {
		scn_fail(r->err, SCN_ERROR_MEMORY, "%s:%d: out of memory", r->path, r->line);
		return false;
	}
	d->frictions = grown;
	scn_friction *f = &grown[d->friction_count++];
	memset(f, 0, sizeof *f);
	snprintf(f->name, sizeof f->name, "%s", tok[0]);
	f->mu = (float)mu;
	f->line = r->line;
	f->target = -1;
	return true;
}

static bool set_value(reader *r, const scn_key *k, const char *value)
{
	char *field = (char *)target_base(r, k->target) + k->offset;
	switch (k->type) {
	case KT_FLOAT:
	case KT_RATE: {
		float v;
		if (!parse_floats(value, &v, 1, k->lo, k->hi))
			return fail(r, "%s: '%s' is not a number in [%g, %g]", k->name, value, k->lo, k->hi);
		if (k->type == KT_RATE)
			v = (float)(1.0 / (double)v);
		memcpy(field, &v, sizeof v);
		return true;
	}
	case KT_DOUBLE: {
		double v;
		if (!scn_parse_double(value, 1e30, &v) || v < k->lo || v > k->hi)
			return fail(r, "%s: '%s' is not a number in [%g, %g]", k->name, value, k->lo, k->hi);
		memcpy(field, &v, sizeof v);
		return true;
	}
	case KT_INT: {
		int v;
		if (!scn_parse_int(value, (long)k->lo, (long)k->hi, &v))
			return fail(r, "%s: '%s' is not an integer in [%g, %g]", k->name, value, k->lo, k->hi);
		memcpy(field, &v, sizeof v);
		return true;
	}
	case KT_INT2: {
		char buf[128];
		char *tok[3];
		int v[2];
		if (snprintf(buf, sizeof buf, "%s", value) >= (int)sizeof buf || tokens(buf, tok, 2) != 2 ||
		    !scn_parse_int(tok[0], (long)k->lo, (long)k->hi, &v[0]) ||
		    !scn_parse_int(tok[1], (long)k->lo, (long)k->hi, &v[1]))
			return fail(r, "%s: '%s' is not two integers in [%g, %g]", k->name, value, k->lo, k->hi);
		memcpy(field, v, sizeof v);
		return true;
	}
	case KT_VEC2:
	case KT_VEC3:
	case KT_COLOR: {
		int n = k->type == KT_VEC2 ? 2 : 3;
		float v[3];
		if (!parse_floats(value, v, n, k->lo, k->hi))
			return fail(r, "%s: '%s' is not %d numbers in [%g, %g]", k->name, value, n, k->lo, k->hi);
		memcpy(field, v, (size_t)n * sizeof(float));
		return true;
	}
	case KT_BOOL: {
		bool v;
		if (!parse_bool(value, &v))
			return fail(r, "%s: '%s' is not true or false", k->name, value);
		memcpy(field, &v, sizeof v);
		return true;
	}
	case KT_NAME:
		if (!valid_name(value, k->size))
			return fail(r, "%s: '%s' is not a name (letters, digits, '_', '-', '.')", k->name, value);
		memcpy(field, value, strlen(value) + 1);
		return true;
	case KT_TEXT:
	case KT_PATH: {
		size_t used = k->repeat ? strlen(field) : 0;
		size_t n = strlen(value);
		if (n == 0)
			return fail(r, "%s: empty value", k->name);
		if (used + n + 2 > k->size)
			return fail(r, "%s: value too long (at most %zu characters)", k->name, k->size - 2);
		if (used)
			field[used++] = ' ';
		memcpy(field + used, value, n + 1);
		return true;
	}
	case KT_INTEGRATOR: {
		sim_integrator v;
		if (!sim_integrator_from_name(value, &v)) {
			const char *names[SIM_INTEGRATOR_COUNT];
			for (int i = 0; i < SIM_INTEGRATOR_COUNT; i++)
				names[i] = sim_integrator_name((sim_integrator)i);
			char hint[80];
			suggest(hint, sizeof hint, value, names, SIM_INTEGRATOR_COUNT);
			return fail(r, "integrator: unknown integrator '%s'%s; one of euler, symplectic, midpoint, rk4, "
			               "verlet, implicit, kang, mra",
			            value, hint);
		}
		memcpy(field, &v, sizeof v);
		return true;
	}
	case KT_UP: {
		scn_axes v;
		if (strcmp(value, "y") == 0)
			v = SCN_AXES_Y_UP;
		else if (strcmp(value, "z") == 0)
			v = SCN_AXES_Z_UP;
		else
			return fail(r, "up: '%s' is neither y nor z", value);
		memcpy(field, &v, sizeof v);
		return true;
	}
	case KT_THEN: {
		int v;
		if (strcmp(value, "hold") == 0)
			v = 0;
		else if (strcmp(value, "release") == 0)
			v = 1;
		else
			return fail(r, "then: '%s' is neither hold nor release", value);
		memcpy(field, &v, sizeof v);
		return true;
	}
	case KT_VERTEX_VELOCITY:
		return set_vertex_velocity(r, value);
	case KT_FRICTION_WITH:
		return set_friction_with(r, k, value);
	}
	return fail(r, "internal: unhandled key type");
}

static int on_pair(void *user, const char *section, const char *name, const char *value)
{
	reader *r = user;
	(void)section; /* the reader opened it already */
	if (r->err->status != SCN_OK)
		return 0;
	if (!r->current && !r->in_meta)
		return fail(r, "'%s' outside a section; put it under a [section] header", name);
	scn_kind kind = r->in_meta ? r->meta_kind : r->current->kind;
	int *lines = r->in_meta ? r->scene->world_key_line : r->current->key_line;
	for (int i = 0; i < KEY_COUNT; i++) {
		const scn_key *k = &keys[i];
		if (strcmp(k->name, name) != 0 || !(k->kinds & (1u << kind)))
			continue;
		if (lines[i] && !k->repeat)
			return fail(r, "'%s' given twice in this section (first at line %d)", name, lines[i]);
		lines[i] = r->line;
		return set_value(r, k, value);
	}
	const char *valid[KEY_COUNT];
	int n = 0;
	for (int i = 0; i < KEY_COUNT; i++)
		if (keys[i].kinds & (1u << kind))
			valid[n++] = keys[i].name;
	char hint[80];
	suggest(hint, sizeof hint, name, valid, n);
	return fail(r, "unknown key '%s' in [%s]%s", name, kind_names[kind], hint);
}

/* Index of a key for a kind, for the finishing checks. */
static int key_index(const char *name, scn_kind kind)
{
	for (int i = 0; i < KEY_COUNT; i++)
		if (strcmp(keys[i].name, name) == 0 && (keys[i].kinds & (1u << kind)))
			return i;
	return -1;
}

int scn_desc_key_line(const scn_desc *d, const char *name)
{
	int i = key_index(name, d->kind);
	return i < 0 ? 0 : d->key_line[i];
}

int scn_scene_key_line(const scn_scene *s, const char *name, scn_kind kind)
{
	int i = key_index(name, kind);
	return i < 0 ? 0 : s->world_key_line[i];
}

/* Material keys an object set itself override its base material's; the rest come from
 * the base (a [material NAME] section, or the defaults). */
static void resolve_material(scn_desc *d, const scn_desc *base)
{
	sim_material m = base ? base->material : sim_material_default();
	float color[3];
	memcpy(color, base ? base->color : d->color, sizeof color);
	for (int i = 0; i < KEY_COUNT; i++) {
		const scn_key *k = &keys[i];
		if (!d->key_line[i] || !(k->kinds & K(MATERIAL)) || k->target != TG_DESC)
			continue;
		if (k->offset >= offsetof(scn_desc, material) &&
		    k->offset < offsetof(scn_desc, material) + sizeof(sim_material))
			memcpy((char *)&m + (k->offset - offsetof(scn_desc, material)), (const char *)d + k->offset, k->size);
		else if (k->offset == offsetof(scn_desc, color))
			memcpy(color, d->color, sizeof color);
	}
	d->material = m;
	memcpy(d->color, color, sizeof color);
	d->thickness_by_edge =
	    !scn_desc_key_line(d, "thickness") && !(base && scn_desc_key_line(base, "thickness"));
}

scn_status scn_parse(const char *text, size_t size, const char *path, scn_scene **out, scn_error *err)
{
	*out = NULL;
	scn_error local = {0};
	if (!err)
		err = &local;
	scn_scene *s = scn_scene_alloc();
	if (!s)
		return scn_fail(err, SCN_ERROR_MEMORY, "%s: out of memory", path);
	snprintf(s->path, sizeof s->path, "%s", path);
	reader r = {.path = path, .text = text, .size = size, .scene = s, .err = err};
	int rc = ini_parse_stream(read_line, &r, on_pair, &r);
	if (err->status == SCN_OK && rc > 0) {
		r.line = rc;
		fail(&r, "not a 'key = value' line or a [section] header");
	} else if (err->status == SCN_OK && rc < 0) {
		scn_fail(err, SCN_ERROR_MEMORY, "%s: out of memory", path);
	}
	if (err->status == SCN_OK && r.line == 0)
		scn_fail(err, SCN_ERROR_PARSE, "%s:1: empty scene file", path);
	for (int i = 0; err->status == SCN_OK && i < s->desc_count; i++) {
		scn_desc *d = &s->descs[i];
		if (!(SCN_CLOTH_KINDS & (1u << d->kind)))
			continue;
		const scn_desc *base = NULL;
		if (d->material_ref[0]) {
			base = scn_scene_find_desc(s, K(MATERIAL), d->material_ref);
			if (!base) {
				scn_fail(err, SCN_ERROR_PARSE, "%s:%d: unknown material '%s' (no [material %s] section)", path,
				         scn_desc_key_line(d, "material"), d->material_ref, d->material_ref);
				break;
			}
		}
		resolve_material(d, base);
	}
	if (err->status == SCN_OK)
		scn_scene_finish(s, err);
	if (err->status != SCN_OK) {
		scn_scene_free(&s);
		return err->status;
	}
	*out = s;
	return SCN_OK;
}

/* For readers that fill a scene without text (the seed folder): records that a key was
 * given, and where, as the scene-file reader would have. */
void scn_desc_mark_key(scn_desc *d, const char *name, int line)
{
	int i = key_index(name, d->kind);
	if (i >= 0)
		d->key_line[i] = line;
}

void scn_scene_mark_key(scn_scene *s, const char *name, scn_kind kind, int line)
{
	int i = key_index(name, kind);
	if (i >= 0)
		s->world_key_line[i] = line;
}
