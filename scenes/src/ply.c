/* PLY (Stanford polygon files): the header's elements and properties, then the data in
 * ASCII or binary of either byte order.  The vertex element's x, y and z and the face
 * element's vertex index list are read; every other property and element is skipped.
 * Faces of more than three vertices are fanned from their first vertex.  The rules a user
 * sees are in mesh.h and docs/tools.md. */
#include "mesh_internal.h"

#include <errno.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define SHOWN 40
#define MAX_ELEMENTS 16
#define MAX_PROPERTIES 64

typedef enum ply_type { T_NONE, T_CHAR, T_UCHAR, T_SHORT, T_USHORT, T_INT, T_UINT, T_FLOAT, T_DOUBLE } ply_type;

static const struct {
	const char *name, *alias;
	int size;
} types[] = {
	[T_CHAR] = {"char", "int8", 1},     [T_UCHAR] = {"uchar", "uint8", 1},   [T_SHORT] = {"short", "int16", 2},
	[T_USHORT] = {"ushort", "uint16", 2}, [T_INT] = {"int", "int32", 4},    [T_UINT] = {"uint", "uint32", 4},
	[T_FLOAT] = {"float", "float32", 4}, [T_DOUBLE] = {"double", "float64", 8},
};

enum { ROLE_SKIP, ROLE_X, ROLE_Y, ROLE_Z, ROLE_INDICES };
enum { KIND_OTHER, KIND_VERTEX, KIND_FACE };
enum { ASCII, LITTLE, BIG };

typedef struct ply_property {
	ply_type type;       /* of the value, or of a list's items */
	ply_type count_type; /* T_NONE: a scalar */
	int role;
	char name[24];
} ply_property;

typedef struct ply_element {
	int kind;
	int count;
	int line;
	char name[24];
	ply_property props[MAX_PROPERTIES];
	int prop_count;
} ply_element;

typedef struct token {
	const char *s;
	int len;
} token;

typedef struct ply_parser {
	const char *path;
	scn_error *err;
	const uint8_t *data;
	size_t size;
	int format; /* ASCII, LITTLE or BIG; -1 before the format line */
	ply_element elements[MAX_ELEMENTS];
	int element_count;
	size_t body; /* the offset of the data after the header */
	int header_end_line;
	/* the data: a byte offset (binary) or the text not yet read (ASCII) */
	size_t at;
	int line;      /* ASCII: the line at `at` */
	int last_line; /* ASCII: the last line with words */
	scn_indexed ix;
} ply_parser;

static int shown(token t)
{
	return t.len < SHOWN ? t.len : SHOWN;
}

static bool is(token t, const char *word)
{
	return (size_t)t.len == strlen(word) && memcmp(t.s, word, (size_t)t.len) == 0;
}

static void copy_name(char out[24], token t)
{
	int n = t.len < 23 ? t.len : 23;
	memcpy(out, t.s, (size_t)n);
	out[n] = '\0';
}

__attribute__((format(printf, 3, 4))) static scn_status fail_line(const ply_parser *p, int line, const char *fmt, ...)
{
	char what[400];
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(what, sizeof what, fmt, ap);
	va_end(ap);
	return scn_fail(p->err, SCN_ERROR_PARSE, "%s:%d: %s", p->path, line > 0 ? line : 1, what);
}

__attribute__((format(printf, 3, 4))) static scn_status fail_byte(const ply_parser *p, size_t at, const char *fmt,
                                                                   ...)
{
	char what[400];
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(what, sizeof what, fmt, ap);
	va_end(ap);
	return scn_fail(p->err, SCN_ERROR_PARSE, "%s: byte %zu: %s", p->path, at, what);
}

static scn_status out_of_memory(const ply_parser *p)
{
	return scn_fail(p->err, SCN_ERROR_MEMORY, "%s: out of memory", p->path);
}

/* Words of one line, at most n kept; returns how many there are. */
static int split(const char *s, const char *e, token *t, int n)
{
	int count = 0;
	for (const char *c = s; c < e;) {
		if (scn_is_blank((unsigned char)*c)) {
			c++;
			continue;
		}
		const char *w = c;
		while (c < e && !scn_is_blank((unsigned char)*c))
			c++;
		if (count < n)
			t[count] = (token){w, (int)(c - w)};
		count++;
	}
	return count;
}

static ply_type type_of(token t)
{
	for (int k = T_CHAR; k <= T_DOUBLE; k++)
		if (is(t, types[k].name) || is(t, types[k].alias))
			return (ply_type)k;
	return T_NONE;
}

static bool is_integer_type(ply_type t)
{
	return t != T_NONE && t != T_FLOAT && t != T_DOUBLE;
}

/* ---- Header ----------------------------------------------------------------------------------- */

static scn_status on_format(ply_parser *p, int line, const token *t, int n)
{
	if (p->format >= 0)
		return fail_line(p, line, "a second 'format' line");
	if (n != 3)
		return fail_line(p, line, "expected 'format ascii|binary_little_endian|binary_big_endian 1.0'");
	if (is(t[1], "ascii"))
		p->format = ASCII;
	else if (is(t[1], "binary_little_endian"))
		p->format = LITTLE;
	else if (is(t[1], "binary_big_endian"))
		p->format = BIG;
	else
		return fail_line(p, line, "unknown format '%.*s' (ascii, binary_little_endian or binary_big_endian)",
		                 shown(t[1]), t[1].s);
	if (!is(t[2], "1.0"))
		return fail_line(p, line, "PLY version '%.*s': tela reads 1.0", shown(t[2]), t[2].s);
	return SCN_OK;
}

static bool parse_count(token t, int *out)
{
	if (t.len < 1 || t.len > 10)
		return false;
	long long v = 0;
	for (int i = 0; i < t.len; i++) {
		if (t.s[i] < '0' || t.s[i] > '9')
			return false;
		v = 10 * v + (t.s[i] - '0');
	}
	if (v > SCN_MESH_MAX_ITEMS)
		return false;
	*out = (int)v;
	return true;
}

static scn_status close_element(const ply_parser *p)
{
	if (p->element_count == 0)
		return SCN_OK;
	const ply_element *el = &p->elements[p->element_count - 1];
	if (el->prop_count == 0)
		return fail_line(p, el->line, "element '%s' has no properties", el->name);
	return SCN_OK;
}

static scn_status on_element(ply_parser *p, int line, const token *t, int n)
{
	if (n != 3)
		return fail_line(p, line, "expected 'element NAME COUNT'");
	if (close_element(p) != SCN_OK)
		return SCN_ERROR_PARSE;
	if (p->element_count == MAX_ELEMENTS)
		return fail_line(p, line, "more than %d elements", MAX_ELEMENTS);
	ply_element *el = &p->elements[p->element_count];
	*el = (ply_element){.line = line};
	copy_name(el->name, t[1]);
	el->kind = is(t[1], "vertex") ? KIND_VERTEX : is(t[1], "face") ? KIND_FACE : KIND_OTHER;
	for (int k = 0; k < p->element_count; k++)
		if (el->kind != KIND_OTHER && p->elements[k].kind == el->kind)
			return fail_line(p, line, "a second 'element %s' (the first at line %d)", el->name, p->elements[k].line);
	if (el->kind == KIND_FACE) {
		bool vertices = false;
		for (int k = 0; k < p->element_count; k++)
			vertices |= p->elements[k].kind == KIND_VERTEX;
		if (!vertices)
			return fail_line(p, line, "'element face' before 'element vertex': tela reads the vertices first");
	}
	if (!parse_count(t[2], &el->count))
		return fail_line(p, line, "element %s: '%.*s' is not a count from 0 to %d", el->name, shown(t[2]), t[2].s,
		                 SCN_MESH_MAX_ITEMS);
	p->element_count++;
	return SCN_OK;
}

/* The role a property plays: x, y, z of a vertex, a face's index list, or none. */
static scn_status assign_role(ply_parser *p, int line, ply_element *el, ply_property *pr)
{
	int role = ROLE_SKIP;
	if (el->kind == KIND_VERTEX) {
		role = strcmp(pr->name, "x") == 0 ? ROLE_X : strcmp(pr->name, "y") == 0 ? ROLE_Y
		     : strcmp(pr->name, "z") == 0 ? ROLE_Z : ROLE_SKIP;
		if (role != ROLE_SKIP && pr->count_type != T_NONE)
			return fail_line(p, line, "vertex property '%s' is a list; a coordinate is one number", pr->name);
	} else if (el->kind == KIND_FACE &&
	           (strcmp(pr->name, "vertex_indices") == 0 || strcmp(pr->name, "vertex_index") == 0)) {
		role = ROLE_INDICES;
		if (pr->count_type == T_NONE)
			return fail_line(p, line, "face property '%s' is not a list ('property list uchar int %s')",
			                 pr->name, pr->name);
		if (!is_integer_type(pr->count_type) || !is_integer_type(pr->type))
			return fail_line(p, line, "face property '%s': the count and the indices must be integer types",
			                 pr->name);
	}
	for (int k = 0; k < el->prop_count - 1 && role != ROLE_SKIP; k++)
		if (el->props[k].role == role)
			return fail_line(p, line, "element %s: property '%s' plays the part of '%s' before it", el->name,
			                 pr->name, el->props[k].name);
	pr->role = role;
	return SCN_OK;
}

static scn_status on_property(ply_parser *p, int line, const token *t, int n)
{
	if (p->element_count == 0)
		return fail_line(p, line, "'property' before any 'element'");
	ply_element *el = &p->elements[p->element_count - 1];
	if (el->prop_count == MAX_PROPERTIES)
		return fail_line(p, line, "element %s: more than %d properties", el->name, MAX_PROPERTIES);
	ply_property *pr = &el->props[el->prop_count];
	*pr = (ply_property){0};
	bool list = n >= 2 && is(t[1], "list");
	if (list ? n != 5 : n != 3)
		return fail_line(p, line, "expected 'property TYPE NAME' or 'property list COUNT_TYPE TYPE NAME'");
	token type = t[list ? 3 : 1];
	if (list) {
		pr->count_type = type_of(t[2]);
		if (pr->count_type == T_NONE)
			return fail_line(p, line, "unknown property type '%.*s'", shown(t[2]), t[2].s);
		if (!is_integer_type(pr->count_type))
			return fail_line(p, line, "a list's count type must be an integer type, not '%.*s'", shown(t[2]),
			                 t[2].s);
	}
	pr->type = type_of(type);
	if (pr->type == T_NONE)
		return fail_line(p, line, "unknown property type '%.*s'", shown(type), type.s);
	copy_name(pr->name, t[n - 1]);
	el->prop_count++;
	return assign_role(p, line, el, pr);
}

/* The vertex and face elements have what tela reads. */
static scn_status check_header(const ply_parser *p, int line)
{
	if (p->format < 0)
		return fail_line(p, line, "no 'format' line in the header");
	const ply_element *vertex = NULL, *face = NULL;
	for (int k = 0; k < p->element_count; k++) {
		if (p->elements[k].kind == KIND_VERTEX)
			vertex = &p->elements[k];
		if (p->elements[k].kind == KIND_FACE)
			face = &p->elements[k];
	}
	if (!vertex)
		return fail_line(p, line, "no 'element vertex' in the header");
	if (!face)
		return fail_line(p, line, "no 'element face' in the header (tela reads triangle meshes, not point clouds)");
	static const char *const axes[] = {"x", "y", "z"};
	for (int role = ROLE_X; role <= ROLE_Z; role++) {
		bool found = false;
		for (int k = 0; k < vertex->prop_count; k++)
			found |= vertex->props[k].role == role;
		if (!found)
			return fail_line(p, vertex->line, "element vertex has no property '%s'", axes[role - ROLE_X]);
	}
	bool found = false;
	for (int k = 0; k < face->prop_count; k++)
		found |= face->props[k].role == ROLE_INDICES;
	if (!found)
		return fail_line(p, face->line, "element face has no 'vertex_indices' (or 'vertex_index') list");
	return SCN_OK;
}

/* Data too short for the counts the header gives is refused before anything is allocated
 * for it: each value takes at least its size in binary, or a character and a separator in
 * ASCII. */
static scn_status check_sizes(const ply_parser *p)
{
	uint64_t need = 0, have = p->size - p->body;
	for (int k = 0; k < p->element_count; k++) {
		const ply_element *el = &p->elements[k];
		uint64_t each = 0;
		for (int q = 0; q < el->prop_count; q++) {
			const ply_property *pr = &el->props[q];
			each += p->format == ASCII ? 2 : (uint64_t)types[pr->count_type != T_NONE ? pr->count_type : pr->type].size;
		}
		need += each * (uint64_t)el->count;
		if (need > have + (p->format == ASCII ? 1 : 0))
			return fail_line(p, el->line,
			                 "element %s: %d items: the data up to here needs at least %llu bytes, the file has %llu "
			                 "after the header (a wrong count, or a truncated file)",
			                 el->name, el->count, (unsigned long long)need, (unsigned long long)have);
	}
	return SCN_OK;
}

static scn_status parse_header(ply_parser *p)
{
	const char *text = (const char *)p->data, *end = text + p->size, *s = text;
	int line = 0;
	while (s < end) {
		const char *e = memchr(s, '\n', (size_t)(end - s));
		const char *next = e ? e + 1 : end;
		if (!e)
			e = end;
		line++;
		for (const char *c = s; c < e; c++)
			if (scn_is_control((unsigned char)*c))
				return fail_line(p, line, "control character 0x%02x in the header", (unsigned char)*c);
		token t[5];
		int n = split(s, e, t, 5);
		if (line == 1) {
			if (n != 1 || !is(t[0], "ply"))
				return fail_line(p, 1, "not PLY: the file does not begin with a line 'ply'");
		} else if (n == 0 || is(t[0], "comment") || is(t[0], "obj_info")) {
			/* free text */
		} else if (is(t[0], "format")) {
			if (on_format(p, line, t, n) != SCN_OK)
				return SCN_ERROR_PARSE;
		} else if (is(t[0], "element")) {
			if (on_element(p, line, t, n) != SCN_OK)
				return SCN_ERROR_PARSE;
		} else if (is(t[0], "property")) {
			if (on_property(p, line, t, n) != SCN_OK)
				return SCN_ERROR_PARSE;
		} else if (is(t[0], "end_header")) {
			if (n != 1)
				return fail_line(p, line, "unexpected '%.*s' after 'end_header'", shown(t[1]), t[1].s);
			if (close_element(p) != SCN_OK || check_header(p, line) != SCN_OK)
				return SCN_ERROR_PARSE;
			p->body = (size_t)(next - text);
			p->header_end_line = line;
			return check_sizes(p);
		} else {
			return fail_line(p, line, "unknown header line '%.*s'", shown(t[0]), t[0].s);
		}
		s = next;
	}
	if (p->size == 0)
		return scn_fail(p->err, SCN_ERROR_PARSE, "%s: empty file, not PLY", p->path);
	return fail_line(p, line, "the file ends in the header: no 'end_header'");
}

/* ---- Binary data ------------------------------------------------------------------------------- */

/* The value of type t at `at` (the caller checked the bytes are there). */
static double binary_value(const ply_parser *p, ply_type t, size_t at)
{
	const uint8_t *b = p->data + at;
	int size = types[t].size;
	uint64_t u = 0;
	for (int k = 0; k < size; k++) {
		int shift = p->format == LITTLE ? 8 * k : 8 * (size - 1 - k);
		u |= (uint64_t)b[k] << shift;
	}
	switch (t) {
	case T_CHAR: return (double)(int8_t)u;
	case T_UCHAR: return (double)(uint8_t)u;
	case T_SHORT: return (double)(int16_t)u;
	case T_USHORT: return (double)(uint16_t)u;
	case T_INT: return (double)(int32_t)u;
	case T_UINT: return (double)(uint32_t)u;
	case T_FLOAT: {
		uint32_t w = (uint32_t)u;
		float f;
		memcpy(&f, &w, sizeof f);
		return (double)f;
	}
	default: {
		double d;
		memcpy(&d, &u, sizeof d);
		return d;
	}
	}
}

/* Checks that `bytes` more are there, for item i of el. */
static scn_status need_bytes(const ply_parser *p, const ply_element *el, int i, uint64_t bytes)
{
	if (bytes <= p->size - p->at)
		return SCN_OK;
	return fail_byte(p, p->at, "the file ends inside %s %d of %d", el->name, i, el->count);
}

/* A coordinate as a float, or an error where it is (a byte offset, or the line in ASCII). */
static scn_status take_coord(const ply_parser *p, int i, const ply_property *pr, double v, size_t at, float *out)
{
	const char *why = !isfinite(v) ? "is not a finite number"
	                  : fabs(v) > SCN_STL_COORD_LIMIT ? "is beyond the coordinate limit of 1e6 m" : NULL;
	if (!why) {
		*out = (float)v;
		return SCN_OK;
	}
	if (p->format == ASCII)
		return fail_line(p, p->line, "vertex %d: %s %g %s", i, pr->name, v, why);
	if (!isfinite(v))
		return fail_byte(p, at, "vertex %d: %s %s", i, pr->name, why);
	return fail_byte(p, at, "vertex %d: %s %g %s", i, pr->name, v, why);
}

static const char *article(ply_type t)
{
	return t == T_INT ? "an" : "a";
}

/* A face's index: in range, or an error where it is (a line or a byte offset). */
static int face_index(ply_parser *p, double v, int face, size_t at, int line)
{
	if (v >= 0 && v < p->ix.vertex_count)
		return (int)v;
	if (p->format == ASCII)
		fail_line(p, line, "face %d: vertex index %.0f is out of range (%d vertices)", face, v, p->ix.vertex_count);
	else
		fail_byte(p, at, "face %d: vertex index %.0f is out of range (%d vertices)", face, v, p->ix.vertex_count);
	return -1;
}

/* The fan of a face's k-th index v: triangles (first, previous, v). */
static scn_status fan(ply_parser *p, int k, int v, int *first, int *prev, int where)
{
	if (k == 0)
		*first = v;
	if (k >= 2) {
		if (p->ix.triangle_count >= SCN_MESH_MAX_ITEMS)
			return scn_fail(p->err, SCN_ERROR_PARSE, "%s: more than %d triangles", p->path, SCN_MESH_MAX_ITEMS);
		if (!scn_indexed_add_triangle(&p->ix, *first, *prev, v, where))
			return out_of_memory(p);
	}
	*prev = v;
	return SCN_OK;
}

static scn_status binary_item(ply_parser *p, const ply_element *el, int i)
{
	float pos[3] = {0, 0, 0};
	size_t start = p->at;
	for (int q = 0; q < el->prop_count; q++) {
		const ply_property *pr = &el->props[q];
		if (pr->count_type == T_NONE) {
			if (need_bytes(p, el, i, (uint64_t)types[pr->type].size) != SCN_OK)
				return SCN_ERROR_PARSE;
			if (pr->role >= ROLE_X && pr->role <= ROLE_Z &&
			    take_coord(p, i, pr, binary_value(p, pr->type, p->at), p->at, &pos[pr->role - ROLE_X]) != SCN_OK)
				return SCN_ERROR_PARSE;
			p->at += (size_t)types[pr->type].size;
			continue;
		}
		if (need_bytes(p, el, i, (uint64_t)types[pr->count_type].size) != SCN_OK)
			return SCN_ERROR_PARSE;
		double count = binary_value(p, pr->count_type, p->at);
		size_t count_at = p->at;
		p->at += (size_t)types[pr->count_type].size;
		if (count < 0)
			return fail_byte(p, count_at, "%s %d: list '%s' has %.0f items", el->name, i, pr->name, count);
		uint64_t n = (uint64_t)count, item = (uint64_t)types[pr->type].size;
		if (need_bytes(p, el, i, n * item) != SCN_OK)
			return SCN_ERROR_PARSE;
		if (pr->role != ROLE_INDICES) {
			p->at += (size_t)(n * item);
			continue;
		}
		if (n < 3)
			return fail_byte(p, count_at, "face %d has %llu vertex indices; a face needs at least 3", i,
			                 (unsigned long long)n);
		int first = 0, prev = 0;
		for (uint64_t k = 0; k < n; k++) {
			int v = face_index(p, binary_value(p, pr->type, p->at), i, p->at, 0);
			if (v < 0 || fan(p, (int)(k < 3 ? k : 3), v, &first, &prev, (int)start) != SCN_OK)
				return p->err->status;
			p->at += (size_t)item;
		}
	}
	if (el->kind == KIND_VERTEX && !scn_indexed_add_vertex(&p->ix, pos))
		return out_of_memory(p);
	return SCN_OK;
}

/* ---- ASCII data -------------------------------------------------------------------------------- */

/* The next line with words, split into *t (up to cap words; *n says how many); false at
 * the end of the file. */
static bool ascii_line(ply_parser *p, token **t, int *n, int *cap, scn_status *st)
{
	const char *text = (const char *)p->data, *end = text + p->size;
	*st = SCN_OK;
	while (p->at < p->size) {
		const char *s = text + p->at, *e = memchr(s, '\n', (size_t)(end - s));
		if (!e)
			e = end;
		p->at = (size_t)(e < end ? e + 1 - text : e - text);
		p->line++;
		for (const char *c = s; c < e; c++) {
			if (scn_is_control((unsigned char)*c)) {
				*st = fail_line(p, p->line, "control character 0x%02x: not text (binary data in an ASCII PLY?)",
				                (unsigned char)*c);
				return false;
			}
		}
		int count = split(s, e, *t, *cap);
		if (count > *cap) {
			token *more = realloc(*t, (size_t)count * sizeof *more);
			if (!more) {
				*st = out_of_memory(p);
				return false;
			}
			*t = more;
			*cap = count;
			split(s, e, *t, *cap);
		}
		if (count > 0) {
			*n = count;
			p->last_line = p->line;
			return true;
		}
	}
	return false;
}

/* A whole token as an integer of type t (its range), or a number of a float type. */
static bool ascii_value(token t, ply_type type, double *out)
{
	char buf[64];
	if (t.len >= (int)sizeof buf)
		return false;
	memcpy(buf, t.s, (size_t)t.len);
	buf[t.len] = '\0';
	if (!is_integer_type(type)) {
		if (!scn_is_number(t.s, t.len))
			return false;
		*out = strtod(buf, NULL);
		return true;
	}
	static const long long lo[] = {[T_CHAR] = -128, [T_UCHAR] = 0, [T_SHORT] = -32768, [T_USHORT] = 0,
	                               [T_INT] = -2147483648LL, [T_UINT] = 0};
	static const long long hi[] = {[T_CHAR] = 127, [T_UCHAR] = 255, [T_SHORT] = 32767, [T_USHORT] = 65535,
	                               [T_INT] = 2147483647LL, [T_UINT] = 4294967295LL};
	int i = buf[0] == '-' || buf[0] == '+' ? 1 : 0;
	if (!buf[i])
		return false;
	for (int k = i; buf[k]; k++)
		if (buf[k] < '0' || buf[k] > '9')
			return false;
	errno = 0;
	long long v = strtoll(buf, NULL, 10);
	if (errno == ERANGE || v < lo[type] || v > hi[type])
		return false;
	*out = (double)v;
	return true;
}

static scn_status ascii_item(ply_parser *p, const ply_element *el, int i, token **words, int *cap)
{
	int n = 0;
	scn_status st;
	if (!ascii_line(p, words, &n, cap, &st)) {
		if (st != SCN_OK)
			return st;
		return fail_line(p, p->last_line ? p->last_line : p->header_end_line,
		                 "the file ends before %s %d of %d", el->name, i, el->count);
	}
	const token *t = *words;
	float pos[3] = {0, 0, 0};
	int w = 0;
	for (int q = 0; q < el->prop_count; q++) {
		const ply_property *pr = &el->props[q];
		ply_type type = pr->count_type != T_NONE ? pr->count_type : pr->type;
		if (w >= n)
			return fail_line(p, p->line, "%s %d: the line ends before property '%s'", el->name, i, pr->name);
		double v;
		if (pr->role >= ROLE_X && pr->role <= ROLE_Z && !is_integer_type(type)) {
			const char *why = scn_parse_coord(t[w].s, t[w].len, &pos[pr->role - ROLE_X]);
			if (why)
				return fail_line(p, p->line, "vertex %d: %s '%.*s' %s", i, pr->name, shown(t[w]), t[w].s, why);
			w++;
			continue;
		}
		if (!ascii_value(t[w], type, &v))
			return fail_line(p, p->line, "%s %d: %s '%.*s' is not %s %s", el->name, i, pr->name, shown(t[w]), t[w].s,
			                 article(type), types[type].name);
		w++;
		if (pr->count_type == T_NONE) {
			if (pr->role >= ROLE_X && pr->role <= ROLE_Z &&
			    take_coord(p, i, pr, v, 0, &pos[pr->role - ROLE_X]) != SCN_OK)
				return SCN_ERROR_PARSE;
			continue;
		}
		if (v < 0)
			return fail_line(p, p->line, "%s %d: list '%s' has %.0f items", el->name, i, pr->name, v);
		if (v > n - w)
			return fail_line(p, p->line, "%s %d: list '%s' announces %.0f items, the line has %d", el->name, i,
			                 pr->name, v, n - w);
		int items = (int)v;
		if (pr->role == ROLE_INDICES && items < 3)
			return fail_line(p, p->line, "face %d has %d vertex indices; a face needs at least 3", i, items);
		int first = 0, prev = 0;
		for (int k = 0; k < items; k++, w++) {
			double x;
			if (!ascii_value(t[w], pr->type, &x))
				return fail_line(p, p->line, "%s %d: %s item '%.*s' is not %s %s", el->name, i, pr->name,
				                 shown(t[w]), t[w].s, article(pr->type), types[pr->type].name);
			if (pr->role != ROLE_INDICES)
				continue;
			int vtx = face_index(p, x, i, 0, p->line);
			if (vtx < 0 || fan(p, k < 3 ? k : 3, vtx, &first, &prev, p->line) != SCN_OK)
				return p->err->status;
		}
	}
	if (w < n)
		return fail_line(p, p->line, "%s %d: unexpected '%.*s' after its last property", el->name, i, shown(t[w]),
		                 t[w].s);
	if (el->kind == KIND_VERTEX && !scn_indexed_add_vertex(&p->ix, pos))
		return out_of_memory(p);
	return SCN_OK;
}

/* ---- The whole file ---------------------------------------------------------------------------- */

static scn_status parse_data(ply_parser *p)
{
	p->at = p->body;
	p->line = p->header_end_line;
	int cap = 64;
	token *words = p->format == ASCII ? malloc((size_t)cap * sizeof *words) : NULL;
	if (p->format == ASCII && !words)
		return out_of_memory(p);
	scn_status st = SCN_OK;
	for (int k = 0; k < p->element_count && st == SCN_OK; k++) {
		const ply_element *el = &p->elements[k];
		for (int i = 0; i < el->count && st == SCN_OK; i++)
			st = p->format == ASCII ? ascii_item(p, el, i, &words, &cap) : binary_item(p, el, i);
	}
	if (st == SCN_OK && p->format == ASCII) {
		int n;
		if (ascii_line(p, &words, &n, &cap, &st))
			st = fail_line(p, p->line, "unexpected '%.*s' after the last element", shown(words[0]), words[0].s);
	} else if (st == SCN_OK && p->at < p->size) {
		st = fail_byte(p, p->at, "%zu bytes after the last element", p->size - p->at);
	}
	free(words);
	return st;
}

scn_status scn_ply_parse(const uint8_t *data, size_t size, const char *name, float weld_tolerance, scn_mesh *out,
                         scn_mesh_report *report, scn_error *err)
{
	*out = (scn_mesh){0};
	if (report)
		*report = (scn_mesh_report){.format = SCN_MESH_PLY};
	if (size > SCN_STL_MAX_BYTES)
		return scn_fail(err, SCN_ERROR_PARSE, "%s: larger than %zu bytes; not a PLY mesh?", name,
		                SCN_STL_MAX_BYTES);
	scn_error local = {0};
	if (!err) /* the readers below return err's status; keep one even when the caller has none */
		err = &local;
	ply_parser *p = calloc(1, sizeof *p);
	if (!p)
		return scn_fail(err, SCN_ERROR_MEMORY, "%s: out of memory", name);
	*p = (ply_parser){.path = name, .err = err, .data = data, .size = size, .format = -1};
	scn_status st = parse_header(p);
	if (st == SCN_OK)
		st = parse_data(p);
	scn_mesh_report rep = {.format = SCN_MESH_PLY, .binary = p->format == LITTLE || p->format == BIG,
	                       .big_endian = p->format == BIG};
	if (st == SCN_OK && p->ix.triangle_count == 0) { /* every face makes a triangle: the count is 0 */
		for (int k = 0; k < p->element_count; k++)
			if (p->elements[k].kind == KIND_FACE)
				st = fail_line(p, p->elements[k].line, "element face: no faces (a mesh needs triangles)");
	}
	if (st == SCN_OK)
		st = scn_indexed_finish(&p->ix, name, weld_tolerance, out, &rep, err);
	scn_indexed_free(&p->ix);
	free(p);
	if (st != SCN_OK)
		return st;
	if (report)
		*report = rep;
	return SCN_OK;
}
