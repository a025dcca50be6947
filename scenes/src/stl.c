/* STL files: reading ASCII and binary STL (told apart by content), welding corners into
 * vertices, removing degenerate facets, and writing both forms.  The rules a user sees
 * are in mesh.h and docs/tools.md. */
#include "mesh_internal.h"
#include "scenes/mesh.h"
#include "scenes/scenes.h"

#include <errno.h>
#include <float.h>
#include <limits.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

/* Triangle indices are int, three per facet. */
#define MAX_FACETS (INT_MAX / 3)
#define BINARY_HEADER 84
#define BINARY_RECORD 50

/* ---- Facets as the file lists them ---------------------------------------------------------- */

typedef struct raw_facets {
	float *corners; /* 9 per facet */
	int *where;     /* ASCII: the line of 'facet'; binary: the byte offset of the record */
	int count, cap;
} raw_facets;

static bool raw_reserve(raw_facets *r, int n)
{
	if (n <= r->cap)
		return true;
	if (n > MAX_FACETS)
		return false;
	int cap = r->cap ? r->cap : 64;
	while (cap < n)
		cap = cap > MAX_FACETS / 2 ? MAX_FACETS : cap * 2;
	float *corners = realloc(r->corners, (size_t)cap * 9 * sizeof *corners);
	if (!corners)
		return false;
	r->corners = corners;
	int *where = realloc(r->where, (size_t)cap * sizeof *where);
	if (!where)
		return false;
	r->where = where;
	r->cap = cap;
	return true;
}

static void raw_free(raw_facets *r)
{
	free(r->corners);
	free(r->where);
	*r = (raw_facets){0};
}

/* ---- ASCII ------------------------------------------------------------------------------------ */

#define MAX_TOKENS 6 /* the longest statement, "facet normal x y z", has 5 */
#define SHOWN 40     /* at most this many characters of a bad token go into a message */

typedef struct token {
	const char *s;
	int len;
} token;

typedef struct text_line {
	int number;
	int count; /* words on the line; only the first MAX_TOKENS are kept */
	token tok[MAX_TOKENS];
	const char *end;
} text_line;

typedef enum ascii_state { WANT_SOLID, WANT_FACET, WANT_LOOP, WANT_VERTEX, WANT_ENDFACET, AFTER_SOLID } ascii_state;

typedef struct ascii_parser {
	const char *path;
	const char *p, *end; /* the text not yet split into lines */
	int next_line;       /* the number of the line at p */
	int last_line;       /* the last line with words: where a truncated file is reported */
	ascii_state state;
	bool named;
	char *name; /* 64 bytes: the first solid's name */
	raw_facets *raw;
	float facet[9];
	int corners; /* vertices read in the current facet */
	int facet_line;
	scn_error *err;
} ascii_parser;

static bool is_blank(unsigned char c)
{
	return c == ' ' || c == '\t' || c == '\r' || c == '\v' || c == '\f';
}

static bool is_control(unsigned char c)
{
	return (c < 0x20 && !is_blank(c)) || c == 0x7f;
}

/* Keywords are case-insensitive: some exporters write FACET NORMAL. */
static bool is_word(token t, const char *word)
{
	size_t n = strlen(word);
	if ((size_t)t.len != n)
		return false;
	for (size_t i = 0; i < n; i++) {
		char c = t.s[i];
		if (c >= 'A' && c <= 'Z')
			c = (char)(c - 'A' + 'a');
		if (c != word[i])
			return false;
	}
	return true;
}

static int shown(token t)
{
	return t.len < SHOWN ? t.len : SHOWN;
}

__attribute__((format(printf, 3, 4))) static scn_status fail_at(const ascii_parser *a, int line, const char *fmt,
                                                                 ...)
{
	char what[400];
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(what, sizeof what, fmt, ap);
	va_end(ap);
	return scn_fail(a->err, SCN_ERROR_PARSE, "%s:%d: %s", a->path, line, what);
}

/* Splits one line into words.  A control character means binary data, which no ASCII STL
 * holds: most likely a binary STL whose size does not match its facet count. */
static scn_status split_line(ascii_parser *a, const char *s, const char *e, text_line *l)
{
	l->count = 0;
	l->end = e;
	for (const char *c = s; c < e;) {
		if (is_blank((unsigned char)*c)) {
			c++;
			continue;
		}
		if (is_control((unsigned char)*c))
			return fail_at(a, l->number,
			               "control character 0x%02x: not text (a binary STL whose size does not match "
			               "its facet count?)",
			               (unsigned char)*c);
		const char *t = c;
		while (c < e && !is_blank((unsigned char)*c) && !is_control((unsigned char)*c))
			c++;
		if (l->count < MAX_TOKENS)
			l->tok[l->count] = (token){t, (int)(c - t)};
		l->count++;
	}
	return SCN_OK;
}

/* The next line with words: 1, or 0 at the end of the text, or -1 on an error. */
static int next_line(ascii_parser *a, text_line *l)
{
	while (a->p < a->end) {
		const char *s = a->p;
		const char *e = memchr(s, '\n', (size_t)(a->end - s));
		if (!e)
			e = a->end;
		a->p = e < a->end ? e + 1 : e;
		l->number = a->next_line++;
		if (split_line(a, s, e, l) != SCN_OK)
			return -1;
		if (l->count > 0) {
			a->last_line = l->number;
			return 1;
		}
	}
	return 0;
}

/* Exactly n words, or a message naming the first extra or the missing ones. */
static scn_status want_words(const ascii_parser *a, const text_line *l, int n, const char *statement)
{
	if (l->count > n)
		return fail_at(a, l->number, "unexpected '%.*s' after '%s'", shown(l->tok[n]), l->tok[n].s, statement);
	if (l->count < n)
		return fail_at(a, l->number, "'%s' is incomplete", statement);
	return SCN_OK;
}

/* Why token t is not an acceptable coordinate, or NULL when *out holds it. */
static const char *parse_coord(token t, float *out)
{
	char buf[128];
	if (t.len >= (int)sizeof buf)
		return "is not a number";
	memcpy(buf, t.s, (size_t)t.len);
	buf[t.len] = '\0';
	if (scn_parse_float(buf, SCN_STL_COORD_LIMIT, out))
		return NULL;
	/* scn_parse_float says only no; a user needs to know which rule the value broke */
	char lower[128];
	for (int i = 0; i <= t.len; i++)
		lower[i] = (buf[i] >= 'A' && buf[i] <= 'Z') ? (char)(buf[i] - 'A' + 'a') : buf[i];
	char *end = NULL;
	double v = strtod(buf, &end);
	if (end == buf || *end != '\0')
		return "is not a number";
	if (strstr(lower, "nan") || strstr(lower, "inf"))
		return "is not a finite number";
	if (!(fabs(v) <= SCN_STL_COORD_LIMIT))
		return "is beyond the coordinate limit of 1e6 m";
	return "is out of range or not a plain decimal number";
}

/* Normals are ignored (the vertex order decides), so any number will do, even the NaN some
 * exporters write for degenerate facets; but the words must be numbers. */
static bool is_number(token t)
{
	char buf[128];
	if (t.len >= (int)sizeof buf)
		return false;
	memcpy(buf, t.s, (size_t)t.len);
	buf[t.len] = '\0';
	char *end = NULL;
	(void)strtod(buf, &end);
	return end != buf && *end == '\0';
}

static void take_name(ascii_parser *a, const text_line *l)
{
	if (a->named || l->count < 2)
		return;
	const char *s = l->tok[1].s, *e = l->end;
	while (e > s && is_blank((unsigned char)e[-1]))
		e--;
	size_t n = (size_t)(e - s);
	if (n > 63)
		n = 63;
	memcpy(a->name, s, n);
	a->name[n] = '\0';
	a->named = true;
}

static scn_status on_facet(ascii_parser *a, const text_line *l)
{
	if (is_word(l->tok[0], "endsolid")) {
		a->state = AFTER_SOLID;
		return SCN_OK;
	}
	if (!is_word(l->tok[0], "facet"))
		return fail_at(a, l->number, "expected 'facet' or 'endsolid', found '%.*s'", shown(l->tok[0]),
		               l->tok[0].s);
	if (l->count < 2 || !is_word(l->tok[1], "normal"))
		return fail_at(a, l->number, "expected 'facet normal NX NY NZ'");
	scn_status st = want_words(a, l, 5, "facet normal NX NY NZ");
	if (st != SCN_OK)
		return st;
	for (int k = 2; k < 5; k++)
		if (!is_number(l->tok[k]))
			return fail_at(a, l->number, "facet normal: '%.*s' is not a number", shown(l->tok[k]), l->tok[k].s);
	if (a->raw->count >= MAX_FACETS)
		return fail_at(a, l->number, "more than %d facets", MAX_FACETS);
	a->facet_line = l->number;
	a->corners = 0;
	a->state = WANT_LOOP;
	return SCN_OK;
}

static scn_status on_loop(ascii_parser *a, const text_line *l)
{
	if (!is_word(l->tok[0], "outer") || l->count < 2 || !is_word(l->tok[1], "loop"))
		return fail_at(a, l->number, "expected 'outer loop', found '%.*s'", shown(l->tok[0]), l->tok[0].s);
	a->state = WANT_VERTEX;
	return want_words(a, l, 2, "outer loop");
}

static scn_status on_vertex(ascii_parser *a, const text_line *l)
{
	if (is_word(l->tok[0], "endloop")) {
		if (a->corners != 3)
			return fail_at(a, l->number, "the facet has %d vertices, expected 3", a->corners);
		a->state = WANT_ENDFACET;
		return want_words(a, l, 1, "endloop");
	}
	if (!is_word(l->tok[0], "vertex"))
		return fail_at(a, l->number, "expected 'vertex' or 'endloop', found '%.*s'", shown(l->tok[0]),
		               l->tok[0].s);
	if (a->corners == 3)
		return fail_at(a, l->number, "a fourth vertex: a facet has 3");
	if (l->count != 4)
		return fail_at(a, l->number, "vertex needs 3 coordinates, found %d", l->count - 1);
	for (int k = 0; k < 3; k++) {
		const char *why = parse_coord(l->tok[k + 1], &a->facet[3 * a->corners + k]);
		if (why)
			return fail_at(a, l->number, "vertex coordinate '%.*s' %s", shown(l->tok[k + 1]), l->tok[k + 1].s,
			               why);
	}
	a->corners++;
	return SCN_OK;
}

static scn_status on_endfacet(ascii_parser *a, const text_line *l)
{
	if (!is_word(l->tok[0], "endfacet"))
		return fail_at(a, l->number, "expected 'endfacet', found '%.*s'", shown(l->tok[0]), l->tok[0].s);
	scn_status st = want_words(a, l, 1, "endfacet");
	if (st != SCN_OK)
		return st;
	raw_facets *r = a->raw;
	if (!raw_reserve(r, r->count + 1))
		return scn_fail(a->err, SCN_ERROR_MEMORY, "%s: out of memory", a->path);
	memcpy(r->corners + 9 * (size_t)r->count, a->facet, sizeof a->facet);
	r->where[r->count++] = a->facet_line;
	a->state = WANT_FACET;
	return SCN_OK;
}

/* 'solid' opens the file and, in files that hold several solids, each further one. */
static scn_status on_solid(ascii_parser *a, const text_line *l)
{
	if (!is_word(l->tok[0], "solid")) {
		if (a->state == WANT_SOLID)
			return fail_at(a, l->number, "expected 'solid', found '%.*s'", shown(l->tok[0]), l->tok[0].s);
		return fail_at(a, l->number, "unexpected '%.*s' after 'endsolid'", shown(l->tok[0]), l->tok[0].s);
	}
	take_name(a, l);
	a->state = WANT_FACET;
	return SCN_OK;
}

static scn_status at_end(const ascii_parser *a)
{
	static const char *const expected[] = {
		[WANT_SOLID] = "'solid'",      [WANT_FACET] = "'facet' or 'endsolid'",
		[WANT_LOOP] = "'outer loop'",  [WANT_VERTEX] = "'vertex' or 'endloop'",
		[WANT_ENDFACET] = "'endfacet'", [AFTER_SOLID] = "",
	};
	if (a->state != AFTER_SOLID)
		return fail_at(a, a->last_line, "truncated: the file ends here, expected %s", expected[a->state]);
	if (a->raw->count == 0)
		return fail_at(a, a->last_line, "no facets");
	return SCN_OK;
}

static scn_status parse_ascii(const char *text, size_t size, const char *path, raw_facets *raw, char name[64],
                              scn_error *err)
{
	ascii_parser a = {.path = path, .p = text, .end = text + size, .next_line = 1, .state = WANT_SOLID,
	                  .name = name, .raw = raw, .err = err};
	if (size >= 3 && memcmp(text, "\xEF\xBB\xBF", 3) == 0) /* a UTF-8 byte order mark */
		a.p += 3;
	text_line l;
	int got;
	while ((got = next_line(&a, &l)) > 0) {
		scn_status st;
		switch (a.state) {
		case WANT_FACET: st = on_facet(&a, &l); break;
		case WANT_LOOP: st = on_loop(&a, &l); break;
		case WANT_VERTEX: st = on_vertex(&a, &l); break;
		case WANT_ENDFACET: st = on_endfacet(&a, &l); break;
		default: st = on_solid(&a, &l); break;
		}
		if (st != SCN_OK)
			return st;
	}
	if (got < 0)
		return SCN_ERROR_PARSE;
	return at_end(&a);
}

/* ---- Binary ----------------------------------------------------------------------------------- */

static uint32_t le32(const uint8_t *p)
{
	return (uint32_t)p[0] | (uint32_t)p[1] << 8 | (uint32_t)p[2] << 16 | (uint32_t)p[3] << 24;
}

static float le_float(const uint8_t *p)
{
	uint32_t u = le32(p);
	float f;
	memcpy(&f, &u, sizeof f);
	return f;
}

static void put_le32(uint8_t *p, uint32_t u)
{
	for (int k = 0; k < 4; k++)
		p[k] = (uint8_t)(u >> (8 * k));
}

static void put_le_float(uint8_t *p, float f)
{
	uint32_t u;
	memcpy(&u, &f, sizeof u);
	put_le32(p, u);
}

/* The caller has matched the size to the facet count. */
static scn_status parse_binary(const uint8_t *data, const char *path, raw_facets *raw, scn_error *err)
{
	uint32_t count = le32(data + 80);
	if (count == 0)
		return scn_fail(err, SCN_ERROR_PARSE, "%s: byte 80: no facets (the header's facet count is 0)", path);
	if (count > MAX_FACETS || count > (uint32_t)(INT_MAX - BINARY_HEADER) / BINARY_RECORD)
		return scn_fail(err, SCN_ERROR_PARSE, "%s: byte 80: %u facets are more than tela reads", path, count);
	if (!raw_reserve(raw, (int)count))
		return scn_fail(err, SCN_ERROR_MEMORY, "%s: out of memory", path);
	for (uint32_t i = 0; i < count; i++) {
		size_t record = BINARY_HEADER + (size_t)i * BINARY_RECORD;
		for (int k = 0; k < 9; k++) { /* the record's normal (12 bytes) is ignored */
			size_t at = record + 12 + 4 * (size_t)k;
			float v = le_float(data + at);
			if (!isfinite(v))
				return scn_fail(err, SCN_ERROR_PARSE, "%s: byte %zu: vertex coordinate is not a finite number",
				                path, at);
			if (fabsf(v) > SCN_STL_COORD_LIMIT)
				return scn_fail(err, SCN_ERROR_PARSE,
				                "%s: byte %zu: vertex coordinate %g is beyond the coordinate limit of 1e6 m", path,
				                at, (double)v);
			raw->corners[9 * (size_t)i + (size_t)k] = v;
		}
		raw->where[i] = (int)record;
	}
	raw->count = (int)count;
	return SCN_OK;
}

/* ---- Telling the forms apart -------------------------------------------------------------------- */

static bool starts_with_solid(const uint8_t *data, size_t size)
{
	size_t i = 0;
	if (size >= 3 && memcmp(data, "\xEF\xBB\xBF", 3) == 0)
		i = 3;
	while (i < size && (is_blank(data[i]) || data[i] == '\n'))
		i++;
	if (size - i < 5)
		return false;
	token t = {(const char *)data + i, 5};
	return is_word(t, "solid") && (size - i == 5 || is_blank(data[i + 5]) || data[i + 5] == '\n');
}

static bool binary_size_matches(const uint8_t *data, size_t size)
{
	return size >= BINARY_HEADER &&
	       (uint64_t)size == BINARY_HEADER + (uint64_t)le32(data + 80) * BINARY_RECORD;
}

/* Neither form: a binary file of the wrong size, or not STL at all. */
static scn_status not_stl(const uint8_t *data, size_t size, const char *path, scn_error *err)
{
	if (size == 0)
		return scn_fail(err, SCN_ERROR_PARSE, "%s: empty file, not STL", path);
	if (size < BINARY_HEADER)
		return scn_fail(err, SCN_ERROR_PARSE,
		                "%s: not STL: it does not begin with 'solid' (ASCII) and is shorter than the 84-byte "
		                "binary header",
		                path);
	uint32_t count = le32(data + 80);
	uint64_t expected = BINARY_HEADER + (uint64_t)count * BINARY_RECORD;
	if (expected > SCN_STL_MAX_BYTES) /* text, or some other kind of file */
		return scn_fail(err, SCN_ERROR_PARSE,
		                "%s: not STL: it does not begin with 'solid' (ASCII) and the binary facet count at "
		                "byte 80 (%u) does not match its size",
		                path, count);
	if ((uint64_t)size > expected)
		return scn_fail(err, SCN_ERROR_PARSE,
		                "%s: byte %llu: %llu bytes after the last of the %u facets the binary header announces "
		                "(or not STL: an ASCII STL begins with 'solid')",
		                path, (unsigned long long)expected, (unsigned long long)(size - expected), count);
	size_t whole = (size - BINARY_HEADER) / BINARY_RECORD;
	return scn_fail(err, SCN_ERROR_PARSE,
	                "%s: byte %zu: truncated in facet %zu of the %u the binary header announces (%llu bytes, the "
	                "file has %zu)",
	                path, BINARY_HEADER + whole * BINARY_RECORD, whole + 1, count, (unsigned long long)expected,
	                size);
}

/* ---- Welding ------------------------------------------------------------------------------------- */

/* A spatial hash over cubic cells a little larger than the tolerance, so that a vertex within
 * the tolerance of a corner is always in the corner's cell or one of its 26 neighbours,
 * whatever the rounding of the cell index.  Each slot holds the newest vertex of one cell;
 * `next` chains the cell's older ones.  Vertices in the table are pairwise further apart than
 * the tolerance, so a cell holds only a handful and welding stays linear. */
typedef struct welder {
	double inv_cell; /* 0: exact matching (cells are the coordinates' bit patterns) */
	double tol2;
	const float *pos; /* the vertices so far, 3 floats each */
	int *next;
	int *slots; /* -1: empty */
	size_t mask;
	size_t used;
} welder;

static void cell_of(const welder *w, const float p[3], int64_t c[3])
{
	for (int k = 0; k < 3; k++) {
		if (w->inv_cell > 0.0) {
			c[k] = (int64_t)floor((double)p[k] * w->inv_cell);
		} else {
			float v = p[k] == 0.0f ? 0.0f : p[k]; /* -0 and +0 are the same place */
			uint32_t bits;
			memcpy(&bits, &v, sizeof bits);
			c[k] = bits;
		}
	}
}

static size_t cell_hash(const int64_t c[3])
{
	uint64_t h = (uint64_t)c[0] * 0x9E3779B97F4A7C15u ^ (uint64_t)c[1] * 0xC2B2AE3D27D4EB4Fu ^
	             (uint64_t)c[2] * 0x165667B19E3779F9u;
	h ^= h >> 32;
	h *= 0xD6E8FEB86659FD93u;
	h ^= h >> 32;
	return (size_t)h;
}

/* The slot of cell c in `slots`, or the empty slot where it would go. */
static size_t find_slot(const welder *w, const int *slots, size_t mask, const int64_t c[3])
{
	size_t i = cell_hash(c) & mask;
	while (slots[i] >= 0) {
		int64_t o[3];
		cell_of(w, w->pos + 3 * (size_t)slots[i], o);
		if (o[0] == c[0] && o[1] == c[1] && o[2] == c[2])
			return i;
		i = (i + 1) & mask;
	}
	return i;
}

static double dist2(const float *a, const float *b)
{
	double dx = (double)a[0] - b[0], dy = (double)a[1] - b[1], dz = (double)a[2] - b[2];
	return dx * dx + dy * dy + dz * dz;
}

/* The earliest vertex within the tolerance of p, or -1. */
static int find_vertex(const welder *w, const float p[3])
{
	int64_t c[3];
	cell_of(w, p, c);
	int reach = w->inv_cell > 0.0 ? 1 : 0, best = -1;
	for (int dz = -reach; dz <= reach; dz++)
		for (int dy = -reach; dy <= reach; dy++)
			for (int dx = -reach; dx <= reach; dx++) {
				int64_t n[3] = {c[0] + dx, c[1] + dy, c[2] + dz};
				for (int v = w->slots[find_slot(w, w->slots, w->mask, n)]; v >= 0; v = w->next[v])
					if ((best < 0 || v < best) && dist2(w->pos + 3 * (size_t)v, p) <= w->tol2)
						best = v;
			}
	return best;
}

static bool grow_table(welder *w)
{
	size_t mask = 2 * (w->mask + 1) - 1;
	int *slots = malloc((mask + 1) * sizeof *slots);
	if (!slots)
		return false;
	memset(slots, 0xff, (mask + 1) * sizeof *slots);
	for (size_t i = 0; i <= w->mask; i++) {
		if (w->slots[i] < 0)
			continue;
		int64_t c[3];
		cell_of(w, w->pos + 3 * (size_t)w->slots[i], c);
		slots[find_slot(w, slots, mask, c)] = w->slots[i];
	}
	free(w->slots);
	w->slots = slots;
	w->mask = mask;
	return true;
}

static bool insert_vertex(welder *w, int v)
{
	if (2 * (w->used + 1) > w->mask + 1 && !grow_table(w))
		return false;
	int64_t c[3];
	cell_of(w, w->pos + 3 * (size_t)v, c);
	size_t s = find_slot(w, w->slots, w->mask, c);
	if (w->slots[s] < 0)
		w->used++;
	w->next[v] = w->slots[s];
	w->slots[s] = v;
	return true;
}

/* Gives every corner a vertex: positions (3 per vertex, in order of first appearance) and
 * index (one per corner).  False when out of memory. */
bool scn_weld_points(const float *corners, int n, float tol, float **out_pos, int *out_count, int **out_index)
{
	welder w = {.mask = 1023};
	if (tol >= 1e-12f) { /* below, cell indices could overflow: exact matching */
		w.inv_cell = 1.0 / (1.01 * (double)tol);
		w.tol2 = (double)tol * tol;
	}
	float *pos = malloc((size_t)n * 3 * sizeof *pos);
	int *index = malloc((size_t)n * sizeof *index);
	w.next = malloc((size_t)n * sizeof *w.next);
	w.slots = malloc((w.mask + 1) * sizeof *w.slots);
	w.pos = pos;
	bool ok = pos && index && w.next && w.slots;
	int count = 0;
	if (ok)
		memset(w.slots, 0xff, (w.mask + 1) * sizeof *w.slots);
	for (int i = 0; ok && i < n; i++) {
		const float *p = corners + 3 * (size_t)i;
		int v = find_vertex(&w, p);
		if (v < 0) {
			v = count++;
			memcpy(pos + 3 * (size_t)v, p, 3 * sizeof *p);
			ok = insert_vertex(&w, v);
		}
		index[i] = v;
	}
	free(w.next);
	free(w.slots);
	if (!ok) {
		free(pos);
		free(index);
		return false;
	}
	*out_pos = pos;
	*out_count = count;
	*out_index = index;
	return true;
}

/* ---- Degenerate facets and the final mesh ------------------------------------------------------- */

/* Zero area at float precision: the height is below 4 float epsilons of the longest edge,
 * which is what rounding leaves of collinear corners. */
bool scn_zero_area(const float *a, const float *b, const float *c)
{
	double e1[3], e2[3], e3[3];
	for (int k = 0; k < 3; k++) {
		e1[k] = (double)b[k] - a[k];
		e2[k] = (double)c[k] - a[k];
		e3[k] = (double)c[k] - b[k];
	}
	double n[3] = {e1[1] * e2[2] - e1[2] * e2[1], e1[2] * e2[0] - e1[0] * e2[2], e1[0] * e2[1] - e1[1] * e2[0]};
	double cross2 = n[0] * n[0] + n[1] * n[1] + n[2] * n[2];
	double l1 = e1[0] * e1[0] + e1[1] * e1[1] + e1[2] * e1[2];
	double l2 = e2[0] * e2[0] + e2[1] * e2[1] + e2[2] * e2[2];
	double l3 = e3[0] * e3[0] + e3[1] * e3[1] + e3[2] * e3[2];
	double longest2 = fmax(l1, fmax(l2, l3));
	double eps = 4.0 * FLT_EPSILON;
	return cross2 <= eps * eps * longest2 * longest2;
}

/* Keeps the non-degenerate facets of `index` in place; returns how many remain. */
static int drop_degenerate(const raw_facets *raw, const float *pos, int *index, scn_mesh_report *rep)
{
	int kept = 0;
	for (int f = 0; f < raw->count; f++) {
		const int *t = index + 3 * (size_t)f;
		bool bad = t[0] == t[1] || t[1] == t[2] || t[0] == t[2] ||
		           scn_zero_area(pos + 3 * (size_t)t[0], pos + 3 * (size_t)t[1], pos + 3 * (size_t)t[2]);
		if (bad) {
			if (rep->degenerate++ == 0)
				rep->first_degenerate_line = raw->where[f];
			continue;
		}
		memmove(index + 3 * (size_t)kept, t, 3 * sizeof *t);
		kept++;
	}
	return kept;
}

/* Drops the vertices only degenerate facets used, keeping the others' order. */
int scn_drop_unused(float *pos, int count, int *tris, int triangle_count)
{
	int *map = malloc((size_t)count * sizeof *map);
	if (!map)
		return -1;
	for (int v = 0; v < count; v++)
		map[v] = -1;
	for (int i = 0; i < 3 * triangle_count; i++)
		map[tris[i]] = 0;
	int kept = 0;
	for (int v = 0; v < count; v++) {
		if (map[v] < 0)
			continue;
		map[v] = kept;
		memmove(pos + 3 * (size_t)kept, pos + 3 * (size_t)v, 3 * sizeof *pos);
		kept++;
	}
	for (int i = 0; i < 3 * triangle_count; i++)
		tris[i] = map[tris[i]];
	free(map);
	return kept;
}

static scn_status build_mesh(const raw_facets *raw, const char *path, float tol, scn_mesh *out,
                             scn_mesh_report *rep, scn_error *err)
{
	float *pos = NULL;
	int *index = NULL, count = 0;
	if (!scn_weld_points(raw->corners, 3 * raw->count, tol, &pos, &count, &index))
		return scn_fail(err, SCN_ERROR_MEMORY, "%s: out of memory", path);
	rep->welded = 3 * raw->count - count;
	int kept = drop_degenerate(raw, pos, index, rep);
	return scn_mesh_finish(pos, count, index, kept, path, out, rep, err);
}

scn_status scn_mesh_finish(float *pos, int count, int *tris, int kept, const char *path, scn_mesh *out,
                           scn_mesh_report *rep, scn_error *err)
{
	if (kept == 0) {
		free(pos);
		free(tris);
		return scn_fail(err, SCN_ERROR_PARSE, "%s: no non-degenerate triangles (a zero-area mesh)", path);
	}
	int used = scn_drop_unused(pos, count, tris, kept);
	if (used < 0) {
		free(pos);
		free(tris);
		return scn_fail(err, SCN_ERROR_MEMORY, "%s: out of memory", path);
	}
	rep->unused = count - used;
	/* shrinking never fails in practice; if it does, the larger block is still good */
	float *p = realloc(pos, (size_t)used * 3 * sizeof *pos);
	int *t = realloc(tris, (size_t)kept * 3 * sizeof *tris);
	*out = (scn_mesh){.vertex_count = used, .triangle_count = kept, .positions = p ? p : pos,
	                  .triangles = t ? t : tris};
	scn_mesh_analyse(out, rep);
	if (rep->boundary_edges < 0) {
		scn_mesh_free(out);
		return scn_fail(err, SCN_ERROR_MEMORY, "%s: out of memory", path);
	}
	return SCN_OK;
}

scn_status scn_stl_parse(const uint8_t *data, size_t size, const char *name, float weld_tolerance, scn_mesh *out,
                         scn_mesh_report *report, scn_error *err)
{
	*out = (scn_mesh){0};
	if (report)
		*report = (scn_mesh_report){0};
	if (size > SCN_STL_MAX_BYTES)
		return scn_fail(err, SCN_ERROR_PARSE, "%s: larger than %zu bytes; not an STL mesh?", name,
		                SCN_STL_MAX_BYTES);
	scn_mesh_report rep = {0};
	raw_facets raw = {0};
	char solid[64] = "";
	scn_status st;
	if (binary_size_matches(data, size)) {
		rep.binary = true;
		st = parse_binary(data, name, &raw, err);
	} else if (starts_with_solid(data, size)) {
		st = parse_ascii((const char *)data, size, name, &raw, solid, err);
	} else {
		st = not_stl(data, size, name, err);
	}
	rep.facets = raw.count;
	if (st == SCN_OK)
		st = build_mesh(&raw, name, weld_tolerance, out, &rep, err);
	raw_free(&raw);
	if (st != SCN_OK)
		return st;
	memcpy(out->name, solid, sizeof solid);
	if (report)
		*report = rep;
	return SCN_OK;
}

scn_status scn_stl_read(const char *path, float weld_tolerance, scn_mesh *out, scn_mesh_report *report,
                        scn_error *err)
{
	*out = (scn_mesh){0};
	if (report)
		*report = (scn_mesh_report){0};
	char *data = NULL;
	size_t size = 0;
	scn_status st = scn_read_file(path, SCN_STL_MAX_BYTES, &data, &size, err);
	if (st != SCN_OK)
		return st;
	st = scn_stl_parse((const uint8_t *)data, size, path, weld_tolerance, out, report, err);
	free(data);
	return st;
}

/* ---- Writing ------------------------------------------------------------------------------------- */

/* What a writer needs, so that world objects (vec4 positions) and meshes share one writer. */
typedef struct stl_source {
	const char *name;
	const float *positions;
	int stride; /* floats from one vertex to the next */
	const int *triangles;
	int triangle_count;
} stl_source;

static const float *corner(const stl_source *s, int t, int k)
{
	return s->positions + (size_t)s->stride * (size_t)s->triangles[3 * (size_t)t + (size_t)k];
}

static void facet_normal(const stl_source *s, int t, float n[3])
{
	const float *a = corner(s, t, 0), *b = corner(s, t, 1), *c = corner(s, t, 2);
	double e1[3], e2[3];
	for (int k = 0; k < 3; k++) {
		e1[k] = (double)b[k] - a[k];
		e2[k] = (double)c[k] - a[k];
	}
	double m[3] = {e1[1] * e2[2] - e1[2] * e2[1], e1[2] * e2[0] - e1[0] * e2[2], e1[0] * e2[1] - e1[1] * e2[0]};
	double len = sqrt(m[0] * m[0] + m[1] * m[1] + m[2] * m[2]);
	for (int k = 0; k < 3; k++)
		n[k] = len > 0.0 ? (float)(m[k] / len) : 0.0f;
}

/* Exact ASCII round trips, and 0.1 rather than 0.100000001. */
void scn_format_float(char buf[32], float v)
{
	for (int digits = 7; digits < 9; digits++) {
		snprintf(buf, 32, "%.*g", digits, (double)v);
		if (strtof(buf, NULL) == v)
			return;
	}
	snprintf(buf, 32, "%.9g", (double)v);
}

/* The solid name up to its first control character (a newline would break the file). */
static void clean_name(const char *name, char out[64])
{
	size_t n = 0;
	while (name && n < 63 && name[n] && !is_control((unsigned char)name[n]) && name[n] != '\n')
		n++;
	memcpy(out, name ? name : "", n);
	out[n] = '\0';
	if (n == 0)
		strcpy(out, "tela");
}

static void write_ascii(FILE *fp, const stl_source *s)
{
	char name[64];
	clean_name(s->name, name);
	fprintf(fp, "solid %s\n", name);
	for (int t = 0; t < s->triangle_count; t++) {
		float n[3];
		facet_normal(s, t, n);
		fprintf(fp, "  facet normal %.7g %.7g %.7g\n    outer loop\n", (double)n[0], (double)n[1], (double)n[2]);
		for (int k = 0; k < 3; k++) {
			const float *p = corner(s, t, k);
			char x[32], y[32], z[32];
			scn_format_float(x, p[0]);
			scn_format_float(y, p[1]);
			scn_format_float(z, p[2]);
			fprintf(fp, "      vertex %s %s %s\n", x, y, z);
		}
		fprintf(fp, "    endloop\n  endfacet\n");
	}
	fprintf(fp, "endsolid %s\n", name);
}

static void write_binary(FILE *fp, const stl_source *s)
{
	/* The header must not begin with "solid": readers that trust it would take the file
	 * for ASCII. */
	uint8_t head[BINARY_HEADER] = {0};
	char name[64];
	clean_name(s->name, name);
	char text[128];
	int len = snprintf(text, sizeof text, "binary STL from tela: %s", name);
	memcpy(head, text, len < 80 ? (size_t)len : 80);
	put_le32(head + 80, (uint32_t)s->triangle_count);
	fwrite(head, 1, sizeof head, fp);
	for (int t = 0; t < s->triangle_count; t++) {
		uint8_t rec[BINARY_RECORD] = {0};
		float n[3];
		facet_normal(s, t, n);
		for (int k = 0; k < 3; k++)
			put_le_float(rec + 4 * k, n[k]);
		for (int c = 0; c < 3; c++)
			for (int k = 0; k < 3; k++)
				put_le_float(rec + 12 + 12 * c + 4 * k, corner(s, t, c)[k]);
		fwrite(rec, 1, sizeof rec, fp);
	}
}

/* Returns 0 or the errno of the failed call.  A file is written beside its name and
 * renamed into place, so that no reader (and no run ended halfway, by a second Ctrl-C)
 * ever sees it half written; a device or other special file is written in place. */
int scn_write_file(const char *path, void (*write)(FILE *fp, const void *source, int form), const void *source,
                   int form)
{
	char part[4096];
	struct stat st;
	bool in_place = stat(path, &st) == 0 && !S_ISREG(st.st_mode);
	if (!in_place && snprintf(part, sizeof part, "%s.part", path) >= (int)sizeof part)
		return ENAMETOOLONG;
	const char *target = in_place ? path : part;
	errno = 0;
	FILE *fp = fopen(target, "wb");
	if (!fp)
		return errno ? errno : EIO;
	write(fp, source, form);
	int e = ferror(fp) ? (errno ? errno : EIO) : 0;
	if (fclose(fp) != 0 && !e)
		e = errno ? errno : EIO;
	if (!e && !in_place && rename(part, path) != 0)
		e = errno ? errno : EIO;
	if (e && !in_place)
		remove(part);
	return e;
}

static void write_stl_form(FILE *fp, const void *source, int binary)
{
	if (binary)
		write_binary(fp, source);
	else
		write_ascii(fp, source);
}

static int write_stl(const char *path, const stl_source *s, bool binary)
{
	return scn_write_file(path, write_stl_form, s, binary);
}

scn_status scn_stl_write(const char *path, const scn_mesh *mesh, bool binary, scn_error *err)
{
	for (int i = 0; i < 3 * mesh->triangle_count; i++)
		if (mesh->triangles[i] < 0 || mesh->triangles[i] >= mesh->vertex_count)
			return scn_fail(err, SCN_ERROR_PARSE, "%s: triangle %d refers to vertex %d of %d", path, i / 3,
			                mesh->triangles[i], mesh->vertex_count);
	stl_source s = {mesh->name, mesh->positions, 3, mesh->triangles, mesh->triangle_count};
	int e = write_stl(path, &s, binary);
	if (e)
		return scn_fail(err, SCN_ERROR_IO, "%s: cannot write: %s", path, strerror(e));
	return SCN_OK;
}

int scn_write_stl(const sim_world *w, int object, const char *path)
{
	const vec4 *x = sim_world_positions(w) + sim_world_object_first_vertex(w, object);
	stl_source s = {sim_world_object_name(w, object), (const float *)x, 4, sim_world_object_triangles(w, object),
	                sim_world_object_triangle_count(w, object)};
	return write_stl(path, &s, false);
}

scn_status scn_export_frame(const sim_world *w, const char *dir, long step, scn_error *err)
{
	return scn_export_frame_as(w, dir, step, SCN_MESH_STL, err);
}
