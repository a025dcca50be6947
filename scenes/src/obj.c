/* Wavefront OBJ: the `v` and `f` lines of a polygon mesh, every other statement skipped.
 * Faces of more than three vertices are fanned from their first vertex, which is right for
 * the convex polygons exporters write.  The rules a user sees are in mesh.h and
 * docs/tools.md. */
#include "mesh_internal.h"

#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define SHOWN 40 /* at most this many characters of a bad token go into a message */

typedef struct token {
	const char *s;
	int len;
} token;

typedef struct obj_parser {
	const char *path;
	scn_error *err;
	scn_indexed ix;
	scn_mesh_report *rep;
	char name[64];
	bool named;
	int line;
} obj_parser;

__attribute__((format(printf, 2, 3))) static scn_status fail(const obj_parser *o, const char *fmt, ...)
{
	char what[400];
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(what, sizeof what, fmt, ap);
	va_end(ap);
	return scn_fail(o->err, SCN_ERROR_PARSE, "%s:%d: %s", o->path, o->line, what);
}

static int shown(token t)
{
	return t.len < SHOWN ? t.len : SHOWN;
}

/* The next word of [*c, e), or false at the end. */
static bool next_word(const char **c, const char *e, token *t)
{
	const char *p = *c;
	while (p < e && scn_is_blank((unsigned char)*p))
		p++;
	if (p == e)
		return false;
	const char *s = p;
	while (p < e && !scn_is_blank((unsigned char)*p))
		p++;
	*t = (token){s, (int)(p - s)};
	*c = p;
	return true;
}

static bool is(token t, const char *word)
{
	return (size_t)t.len == strlen(word) && memcmp(t.s, word, (size_t)t.len) == 0;
}

/* `v x y z [w | r g b [a]]`: w and colours are read as numbers and dropped. */
static scn_status on_vertex(obj_parser *o, const char *c, const char *e)
{
	token t[8];
	int n = 0;
	token extra;
	while (n < 8 && next_word(&c, e, &t[n]))
		n++;
	if (n < 3)
		return fail(o, "v needs 3 coordinates, found %d", n);
	if (n > 7 || next_word(&c, e, &extra))
		return fail(o, "v: more than 7 values (x y z, then w or a colour r g b [a])");
	float p[3];
	for (int k = 0; k < 3; k++) {
		const char *why = scn_parse_coord(t[k].s, t[k].len, &p[k]);
		if (why)
			return fail(o, "v: coordinate '%.*s' %s", shown(t[k]), t[k].s, why);
	}
	for (int k = 3; k < n; k++)
		if (!scn_is_number(t[k].s, t[k].len))
			return fail(o, "v: '%.*s' is not a number", shown(t[k]), t[k].s);
	if (o->ix.vertex_count >= SCN_MESH_MAX_ITEMS)
		return fail(o, "more than %d vertices", SCN_MESH_MAX_ITEMS);
	if (!scn_indexed_add_vertex(&o->ix, p))
		return scn_fail(o->err, SCN_ERROR_MEMORY, "%s: out of memory", o->path);
	return SCN_OK;
}

/* A whole token as a non-zero integer (OBJ counts from 1; negative counts back). */
static bool parse_index(const char *s, int len, long *out)
{
	char buf[24];
	if (len < 1 || len >= (int)sizeof buf)
		return false;
	memcpy(buf, s, (size_t)len);
	buf[len] = '\0';
	int digits = buf[0] == '-' || buf[0] == '+' ? 1 : 0;
	if (!buf[digits])
		return false;
	for (int i = digits; buf[i]; i++)
		if (buf[i] < '0' || buf[i] > '9')
			return false;
	errno = 0;
	long v = strtol(buf, NULL, 10);
	if (errno == ERANGE)
		return false;
	*out = v;
	return true;
}

/* One `i`, `i/t`, `i//n` or `i/t/n`: the vertex's 0-based index, or -1 with the error set. */
static int vertex_of(obj_parser *o, token t)
{
	const char *part[3];
	int len[3], parts = 0;
	const char *s = t.s, *e = t.s + t.len;
	for (;;) {
		const char *slash = memchr(s, '/', (size_t)(e - s));
		if (parts == 3) {
			fail(o, "f: '%.*s' is not a vertex reference (i, i/t, i//n or i/t/n)", shown(t), t.s);
			return -1;
		}
		part[parts] = s;
		len[parts++] = (int)((slash ? slash : e) - s);
		if (!slash)
			break;
		s = slash + 1;
	}
	long v;
	for (int k = 1; k < parts; k++) {
		long ignored;
		if ((len[k] > 0 || k == 2 || parts == 2) && !(parse_index(part[k], len[k], &ignored) && ignored != 0)) {
			fail(o, "f: '%.*s' is not a vertex reference (i, i/t, i//n or i/t/n)", shown(t), t.s);
			return -1;
		}
	}
	if (!parse_index(part[0], len[0], &v)) {
		fail(o, "f: '%.*s' is not a vertex reference (i, i/t, i//n or i/t/n)", shown(t), t.s);
		return -1;
	}
	int count = o->ix.vertex_count;
	if (v == 0) {
		fail(o, "f: vertex index 0: OBJ counts vertices from 1 (or back from -1)");
		return -1;
	}
	if (v > count || v < -(long)count) {
		fail(o, "f: vertex index %ld is out of range (%d vertices so far: a face refers to earlier 'v' lines)", v,
		     count);
		return -1;
	}
	return v > 0 ? (int)(v - 1) : (int)(count + v);
}

/* `f` with three or more vertices: triangles (first, previous, current). */
static scn_status on_face(obj_parser *o, const char *c, const char *e)
{
	token t;
	int n = 0, first = -1, prev = -1;
	while (next_word(&c, e, &t)) {
		int v = vertex_of(o, t);
		if (v < 0)
			return SCN_ERROR_PARSE;
		if (n == 0)
			first = v;
		if (n >= 2) {
			if (o->ix.triangle_count >= SCN_MESH_MAX_ITEMS)
				return fail(o, "more than %d triangles", SCN_MESH_MAX_ITEMS);
			if (!scn_indexed_add_triangle(&o->ix, first, prev, v, o->line))
				return scn_fail(o->err, SCN_ERROR_MEMORY, "%s: out of memory", o->path);
		}
		prev = v;
		n++;
	}
	if (n < 3)
		return fail(o, "f: a face needs at least 3 vertices, found %d", n);
	return SCN_OK;
}

static void on_name(obj_parser *o, const char *c, const char *e)
{
	if (o->named)
		return;
	while (c < e && scn_is_blank((unsigned char)*c))
		c++;
	if (e - c > 63)
		e = c + 63;
	while (e > c && scn_is_blank((unsigned char)e[-1])) /* cut after cutting, so the writer's `o` line reads back */
		e--;
	memcpy(o->name, c, (size_t)(e - c));
	o->name[e - c] = '\0';
	o->named = true;
}

/* Statements that carry nothing tela uses and are skipped without a word: groups, smoothing,
 * materials, texture coordinates and normals. */
static bool tolerated(token t)
{
	static const char *const words[] = {"g", "s", "usemtl", "mtllib", "vt", "vn", "vp"};
	for (size_t k = 0; k < sizeof words / sizeof words[0]; k++)
		if (is(t, words[k]))
			return true;
	return false;
}

static scn_status on_line(obj_parser *o, const char *s, const char *e)
{
	for (const char *c = s; c < e; c++) {
		if (*c == '#') { /* a comment runs to the end of the line */
			e = c;
			break;
		}
		if (scn_is_control((unsigned char)*c))
			return fail(o, "control character 0x%02x: not text (not an OBJ file?)", (unsigned char)*c);
	}
	const char *c = s;
	token k;
	if (!next_word(&c, e, &k))
		return SCN_OK;
	if (is(k, "v"))
		return on_vertex(o, c, e);
	if (is(k, "f"))
		return on_face(o, c, e);
	if (is(k, "o")) {
		on_name(o, c, e);
		return SCN_OK;
	}
	if (tolerated(k))
		return SCN_OK;
	scn_mesh_report *r = o->rep;
	if (r->ignored++ == 0) {
		r->first_ignored_line = o->line;
		int n = k.len < (int)sizeof r->first_ignored - 1 ? k.len : (int)sizeof r->first_ignored - 1;
		memcpy(r->first_ignored, k.s, (size_t)n);
		r->first_ignored[n] = '\0';
	}
	return SCN_OK;
}

scn_status scn_obj_parse(const uint8_t *data, size_t size, const char *name, float weld_tolerance, scn_mesh *out,
                         scn_mesh_report *report, scn_error *err)
{
	*out = (scn_mesh){0};
	if (report)
		*report = (scn_mesh_report){.format = SCN_MESH_OBJ};
	if (size > SCN_STL_MAX_BYTES)
		return scn_fail(err, SCN_ERROR_PARSE, "%s: larger than %zu bytes; not an OBJ mesh?", name,
		                SCN_STL_MAX_BYTES);
	scn_mesh_report rep = {.format = SCN_MESH_OBJ};
	obj_parser o = {.path = name, .err = err, .rep = &rep};
	const char *p = (const char *)data, *end = p + size;
	if (size >= 3 && memcmp(p, "\xEF\xBB\xBF", 3) == 0) /* a UTF-8 byte order mark */
		p += 3;
	int last = 1; /* the last line with words: where "no faces" is reported */
	scn_status st = SCN_OK;
	while (p < end && st == SCN_OK) {
		const char *e = memchr(p, '\n', (size_t)(end - p));
		if (!e)
			e = end;
		o.line++;
		for (const char *c = p; c < e; c++)
			if (!scn_is_blank((unsigned char)*c)) {
				last = o.line;
				break;
			}
		st = on_line(&o, p, e);
		p = e < end ? e + 1 : e;
	}
	if (st == SCN_OK && o.ix.triangle_count == 0) {
		o.line = last;
		st = fail(&o, "no faces: an OBJ mesh needs 'f' lines (%d vertices, no triangles)", o.ix.vertex_count);
	}
	if (st == SCN_OK)
		st = scn_indexed_finish(&o.ix, name, weld_tolerance, out, &rep, err);
	scn_indexed_free(&o.ix);
	if (st != SCN_OK)
		return st;
	memcpy(out->name, o.name, sizeof o.name);
	if (report)
		*report = rep;
	return SCN_OK;
}
