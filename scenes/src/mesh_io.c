/* Mesh files whatever their format: choosing the reader, finishing an indexed mesh (OBJ,
 * PLY) by STL's welding and degenerate rules, and the OBJ and PLY writers, for meshes and
 * for the objects of a world (exported frames).  The rules a user sees are in mesh.h and
 * docs/tools.md. */
#include "mesh_internal.h"
#include "scenes/scenes.h"

#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* ---- Formats ---------------------------------------------------------------------------------- */

static const char *const format_names[] = {[SCN_MESH_STL] = "stl", [SCN_MESH_OBJ] = "obj", [SCN_MESH_PLY] = "ply"};

const char *scn_mesh_format_name(scn_mesh_format format)
{
	return (unsigned)format < 3 ? format_names[format] : "stl";
}

bool scn_mesh_format_parse(const char *name, scn_mesh_format *out)
{
	for (int f = 0; f < 3; f++) {
		if (name && strcmp(name, format_names[f]) == 0) {
			*out = (scn_mesh_format)f;
			return true;
		}
	}
	return false;
}

static bool ends_with_nocase(const char *s, const char *suffix)
{
	size_t n = strlen(s), m = strlen(suffix);
	if (n < m)
		return false;
	for (size_t i = 0; i < m; i++) {
		char c = s[n - m + i];
		if (c >= 'A' && c <= 'Z')
			c = (char)(c - 'A' + 'a');
		if (c != suffix[i])
			return false;
	}
	return true;
}

scn_mesh_format scn_mesh_format_of(const char *path)
{
	if (ends_with_nocase(path, ".obj"))
		return SCN_MESH_OBJ;
	if (ends_with_nocase(path, ".ply"))
		return SCN_MESH_PLY;
	return SCN_MESH_STL;
}

scn_status scn_mesh_read(const char *path, scn_mesh_format format, float weld_tolerance, scn_mesh *out,
                         scn_mesh_report *report, scn_error *err)
{
	if (format == SCN_MESH_STL)
		return scn_stl_read(path, weld_tolerance, out, report, err);
	*out = (scn_mesh){0};
	if (report)
		*report = (scn_mesh_report){.format = format};
	char *data = NULL;
	size_t size = 0;
	scn_status st = scn_read_file(path, SCN_STL_MAX_BYTES, &data, &size, err);
	if (st != SCN_OK)
		return st;
	if (format == SCN_MESH_OBJ)
		st = scn_obj_parse((const uint8_t *)data, size, path, weld_tolerance, out, report, err);
	else
		st = scn_ply_parse((const uint8_t *)data, size, path, weld_tolerance, out, report, err);
	free(data);
	return st;
}

/* ---- Numbers in text formats --------------------------------------------------------------------- */

const char *scn_parse_coord(const char *s, int len, float *out)
{
	char buf[128];
	if (len >= (int)sizeof buf)
		return "is not a number";
	memcpy(buf, s, (size_t)len);
	buf[len] = '\0';
	if (scn_parse_float(buf, SCN_STL_COORD_LIMIT, out))
		return NULL;
	/* scn_parse_float says only no; a user needs to know which rule the value broke */
	char *end = NULL;
	double v = strtod(buf, &end);
	if (end == buf || *end != '\0')
		return "is not a number";
	for (char *c = buf; *c; c++)
		*c = (*c >= 'A' && *c <= 'Z') ? (char)(*c - 'A' + 'a') : *c;
	if (strstr(buf, "nan") || strstr(buf, "inf"))
		return "is not a finite number";
	if (!(fabs(v) <= SCN_STL_COORD_LIMIT))
		return "is beyond the coordinate limit of 1e6 m";
	return "is out of range or not a plain decimal number";
}

bool scn_is_number(const char *s, int len)
{
	char buf[128];
	if (len <= 0 || len >= (int)sizeof buf)
		return false;
	memcpy(buf, s, (size_t)len);
	buf[len] = '\0';
	char *end = NULL;
	(void)strtod(buf, &end);
	return end != buf && *end == '\0';
}

/* ---- Indexed meshes ---------------------------------------------------------------------------- */

static bool grow(void **p, int *cap, int need, size_t item)
{
	if (need <= *cap)
		return true;
	if (need > SCN_MESH_MAX_ITEMS)
		return false;
	int c = *cap ? *cap : 64;
	while (c < need)
		c = c > SCN_MESH_MAX_ITEMS / 2 ? SCN_MESH_MAX_ITEMS : 2 * c;
	void *q = realloc(*p, (size_t)c * item);
	if (!q)
		return false;
	*p = q;
	*cap = c;
	return true;
}

bool scn_indexed_add_vertex(scn_indexed *ix, const float p[3])
{
	void *pos = ix->positions;
	int cap = ix->vertex_cap;
	if (!grow(&pos, &cap, ix->vertex_count + 1, 3 * sizeof(float)))
		return false;
	ix->positions = pos;
	ix->vertex_cap = cap;
	memcpy(ix->positions + 3 * (size_t)ix->vertex_count++, p, 3 * sizeof(float));
	return true;
}

bool scn_indexed_add_triangle(scn_indexed *ix, int a, int b, int c, int where)
{
	void *tris = ix->triangles, *at = ix->where;
	int cap = ix->triangle_cap, cap2 = ix->triangle_cap;
	bool ok = grow(&tris, &cap, ix->triangle_count + 1, 3 * sizeof(int));
	ix->triangles = tris;
	ok = ok && grow(&at, &cap2, ix->triangle_count + 1, sizeof(int));
	ix->where = at;
	if (!ok)
		return false;
	ix->triangle_cap = cap;
	int *t = ix->triangles + 3 * (size_t)ix->triangle_count;
	t[0] = a, t[1] = b, t[2] = c;
	ix->where[ix->triangle_count++] = where;
	return true;
}

void scn_indexed_free(scn_indexed *ix)
{
	free(ix->positions);
	free(ix->triangles);
	free(ix->where);
	*ix = (scn_indexed){0};
}

scn_status scn_indexed_finish(const scn_indexed *ix, const char *path, float tol, scn_mesh *out,
                              scn_mesh_report *rep, scn_error *err)
{
	*out = (scn_mesh){0};
	rep->file_vertices = ix->vertex_count;
	rep->facets = ix->triangle_count;
	float *pos = NULL;
	int *index = NULL, count = 0;
	if (ix->vertex_count < 1 || ix->triangle_count < 1) /* the readers report these with a line */
		return scn_fail(err, SCN_ERROR_PARSE, "%s: no triangles", path);
	if (!scn_weld_points(ix->positions, ix->vertex_count, tol, &pos, &count, &index))
		return scn_fail(err, SCN_ERROR_MEMORY, "%s: out of memory", path);
	rep->welded = ix->vertex_count - count;
	int *tris = malloc((size_t)ix->triangle_count * 3 * sizeof *tris);
	if (!tris) {
		free(pos);
		free(index);
		return scn_fail(err, SCN_ERROR_MEMORY, "%s: out of memory", path);
	}
	int kept = 0;
	for (int t = 0; t < ix->triangle_count; t++) {
		const int *f = ix->triangles + 3 * (size_t)t;
		int a = index[f[0]], b = index[f[1]], c = index[f[2]];
		if (a == b || b == c || a == c ||
		    scn_zero_area(pos + 3 * (size_t)a, pos + 3 * (size_t)b, pos + 3 * (size_t)c)) {
			if (rep->degenerate++ == 0)
				rep->first_degenerate_line = ix->where[t];
			continue;
		}
		int *k = tris + 3 * (size_t)kept++;
		k[0] = a, k[1] = b, k[2] = c;
	}
	free(index);
	return scn_mesh_finish(pos, count, tris, kept, path, out, rep, err);
}

/* ---- Writing ------------------------------------------------------------------------------------ */

/* A mesh or a world object (vec4 positions), for one writer of each format. */
typedef struct mesh_source {
	const char *name;
	const float *positions;
	int stride; /* floats from one vertex to the next */
	int vertex_count;
	const int *triangles;
	int triangle_count;
} mesh_source;

/* The name up to its first control character (a newline would break the file). */
static void clean_name(const char *name, char out[64])
{
	size_t n = 0;
	while (name && n < 63 && name[n] && !scn_is_control((unsigned char)name[n]))
		n++;
	memcpy(out, name ? name : "", n);
	out[n] = '\0';
}

static void write_obj(FILE *fp, const mesh_source *s)
{
	char name[64];
	clean_name(s->name, name);
	fprintf(fp, "# written by tela: %d vertices, %d triangles\n", s->vertex_count, s->triangle_count);
	if (name[0])
		fprintf(fp, "o %s\n", name);
	for (int v = 0; v < s->vertex_count; v++) {
		const float *p = s->positions + (size_t)s->stride * (size_t)v;
		char x[32], y[32], z[32];
		scn_format_float(x, p[0]);
		scn_format_float(y, p[1]);
		scn_format_float(z, p[2]);
		fprintf(fp, "v %s %s %s\n", x, y, z);
	}
	for (int t = 0; t < s->triangle_count; t++) {
		const int *f = s->triangles + 3 * (size_t)t;
		fprintf(fp, "f %d %d %d\n", f[0] + 1, f[1] + 1, f[2] + 1);
	}
}

static void put_le32(uint8_t *p, uint32_t u)
{
	for (int k = 0; k < 4; k++)
		p[k] = (uint8_t)(u >> (8 * k));
}

static void write_ply(FILE *fp, const mesh_source *s)
{
	fprintf(fp,
	        "ply\nformat binary_little_endian 1.0\ncomment written by tela\nelement vertex %d\n"
	        "property float x\nproperty float y\nproperty float z\nelement face %d\n"
	        "property list uchar int vertex_indices\nend_header\n",
	        s->vertex_count, s->triangle_count);
	for (int v = 0; v < s->vertex_count; v++) {
		uint8_t rec[12];
		for (int k = 0; k < 3; k++) {
			uint32_t u;
			memcpy(&u, s->positions + (size_t)s->stride * (size_t)v + k, sizeof u);
			put_le32(rec + 4 * k, u);
		}
		fwrite(rec, 1, sizeof rec, fp);
	}
	for (int t = 0; t < s->triangle_count; t++) {
		uint8_t rec[13] = {3};
		for (int k = 0; k < 3; k++)
			put_le32(rec + 1 + 4 * k, (uint32_t)s->triangles[3 * (size_t)t + (size_t)k]);
		fwrite(rec, 1, sizeof rec, fp);
	}
}

static void write_form(FILE *fp, const void *source, int format)
{
	if (format == SCN_MESH_OBJ)
		write_obj(fp, source);
	else
		write_ply(fp, source);
}

static int write_file(const char *path, const mesh_source *s, scn_mesh_format format)
{
	return scn_write_file(path, write_form, s, (int)format);
}

scn_status scn_mesh_write(const char *path, scn_mesh_format format, const scn_mesh *mesh, bool binary,
                          scn_error *err)
{
	if (format != SCN_MESH_OBJ && format != SCN_MESH_PLY)
		return scn_stl_write(path, mesh, binary, err);
	for (int i = 0; i < 3 * mesh->triangle_count; i++)
		if (mesh->triangles[i] < 0 || mesh->triangles[i] >= mesh->vertex_count)
			return scn_fail(err, SCN_ERROR_PARSE, "%s: triangle %d refers to vertex %d of %d", path, i / 3,
			                mesh->triangles[i], mesh->vertex_count);
	mesh_source s = {mesh->name, mesh->positions, 3, mesh->vertex_count, mesh->triangles, mesh->triangle_count};
	int e = write_file(path, &s, format);
	if (e)
		return scn_fail(err, SCN_ERROR_IO, "%s: cannot write: %s", path, strerror(e));
	return SCN_OK;
}

scn_status scn_export_frame_as(const sim_world *w, const char *dir, long step, scn_mesh_format format,
                               scn_error *err)
{
	const char *ext = scn_mesh_format_name(format);
	for (int obj = 0; obj < sim_world_object_count(w); obj++) {
		char path[4096];
		if (snprintf(path, sizeof path, "%s/frame%06ld_%s.%s", dir, step, sim_world_object_name(w, obj), ext) >=
		    (int)sizeof path)
			return scn_fail(err, SCN_ERROR_IO, "%s: path too long", dir);
		int e;
		if (format == SCN_MESH_OBJ || format == SCN_MESH_PLY) {
			const vec4 *x = sim_world_positions(w) + sim_world_object_first_vertex(w, obj);
			mesh_source s = {sim_world_object_name(w, obj), (const float *)x, 4,
			                 sim_world_object_vertex_count(w, obj), sim_world_object_triangles(w, obj),
			                 sim_world_object_triangle_count(w, obj)};
			e = write_file(path, &s, format);
		} else {
			e = scn_write_stl(w, obj, path);
		}
		if (e)
			return scn_fail(err, SCN_ERROR_IO, "%s: %s", path, strerror(e));
	}
	return SCN_OK;
}
