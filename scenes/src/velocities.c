/* The seed simulator's velocity-constraint files (vel_*): a strict reader whose every
 * complaint names a line, a writer whose numbers read back bit for bit, and the hand-over
 * of the blocks to a world. */
#include "scenes/velocities.h"

#include <ctype.h>
#include <errno.h>
#include <limits.h>
#include <math.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* ---- building ------------------------------------------------------------------------------- */

/* Makes room for item number `count` of an array that holds exactly `count` items.  The
 * capacity is implied by the count (16, then the next power of two), so the public struct
 * needs no capacity fields and appending stays amortised O(1). */
static bool make_room(void **array, size_t item, int count)
{
	if (count > 0 && (count < 16 || (count & (count - 1)) != 0))
		return true;
	if (count > INT_MAX / 2)
		return false;
	size_t cap = count == 0 ? 16 : 2 * (size_t)count;
	if (cap > SIZE_MAX / item)
		return false;
	void *grown = realloc(*array, cap * item);
	if (!grown)
		return false;
	*array = grown;
	return true;
}

scn_status scn_vel_add_block(scn_velocities *vel, double time, scn_error *err)
{
	if (!make_room((void **)&vel->blocks, sizeof *vel->blocks, vel->block_count))
		return scn_fail(err, SCN_ERROR_MEMORY, "out of memory for velocity blocks");
	vel->blocks[vel->block_count++] = (scn_vel_block){.time = time, .first = vel->entry_count};
	return SCN_OK;
}

scn_status scn_vel_add_entry(scn_velocities *vel, int vertex, const float velocity[3], scn_error *err)
{
	if (vel->block_count == 0)
		return scn_fail(err, SCN_ERROR_PARSE, "a constraint vector needs a block to belong to");
	if (!make_room((void **)&vel->entries, sizeof *vel->entries, vel->entry_count))
		return scn_fail(err, SCN_ERROR_MEMORY, "out of memory for constraint vectors");
	vel->entries[vel->entry_count++] =
	    (scn_vel_entry){.vertex = vertex, .velocity = {velocity[0], velocity[1], velocity[2]}};
	vel->blocks[vel->block_count - 1].count++;
	return SCN_OK;
}

void scn_vel_free(scn_velocities *vel)
{
	if (!vel)
		return;
	free(vel->blocks);
	free(vel->entries);
	*vel = (scn_velocities){0};
}

/* ---- checks shared by the reader and scn_vel_check ------------------------------------------ */

/* Vertices named so far in the current block, to catch a vertex named twice.  Slots carry
 * the block they were filled in, so starting a block costs nothing even after a huge one,
 * and ids up to INT_MAX need no table sized by the id. */
typedef struct id_slot {
	int entry; /* index into the entries */
	int block; /* generation: the slot is empty unless it equals id_set.block */
} id_slot;

typedef struct id_set {
	id_slot *slots;
	int capacity; /* a power of two, or 0 */
	int used;
	int block;
} id_set;

static void id_set_next_block(id_set *s)
{
	s->block++;
	s->used = 0;
}

static unsigned id_hash(int vertex, int capacity)
{
	uint32_t h = (uint32_t)vertex * 2654435761u;
	return (h ^ (h >> 15)) & (uint32_t)(capacity - 1);
}

/* Returns the slot for `vertex`: the one holding it, or the empty one where it belongs. */
static id_slot *id_set_find(id_set *s, const scn_vel_entry *entries, int vertex)
{
	unsigned i = id_hash(vertex, s->capacity);
	while (s->slots[i].block == s->block && entries[s->slots[i].entry].vertex != vertex)
		i = (i + 1) & (unsigned)(s->capacity - 1);
	return &s->slots[i];
}

static bool id_set_grow(id_set *s, const scn_vel_entry *entries)
{
	if (s->capacity > INT_MAX / 4)
		return false;
	id_set bigger = {.capacity = s->capacity ? 2 * s->capacity : 64, .block = s->block};
	bigger.slots = calloc((size_t)bigger.capacity, sizeof *bigger.slots);
	if (!bigger.slots)
		return false;
	/* Generation 0 marks every calloc'ed slot empty; blocks count from 1. */
	for (int i = 0; i < s->capacity; i++)
		if (s->slots[i].block == s->block) {
			*id_set_find(&bigger, entries, entries[s->slots[i].entry].vertex) = s->slots[i];
			bigger.used++;
		}
	free(s->slots);
	*s = bigger;
	return true;
}

/* Adds entries[e] to the current block.  Returns the entry that named the same vertex
 * earlier in the block, -1 if none, or -2 when out of memory. */
static int id_set_add(id_set *s, const scn_vel_entry *entries, int e)
{
	if (2 * (s->used + 1) > s->capacity && !id_set_grow(s, entries))
		return -2;
	id_slot *slot = id_set_find(s, entries, entries[e].vertex);
	if (slot->block == s->block)
		return slot->entry;
	*slot = (id_slot){.entry = e, .block = s->block};
	s->used++;
	return -1;
}

/* Each check writes why a value is bad into `why` and returns false. */
static bool time_ok(double t, const scn_vel_block *previous, char *why, size_t size)
{
	if (!isfinite(t) || t < 0.0 || t > SCN_VEL_MAX_TIME) {
		snprintf(why, size, "time %.15g is not in [0, %g] s", t, SCN_VEL_MAX_TIME);
		return false;
	}
	if (previous && t < previous->time) {
		snprintf(why, size, "time %.15g is before the previous block's time %.15g", t, previous->time);
		if (previous->line > 0)
			snprintf(why + strlen(why), size - strlen(why), " (line %d)", previous->line);
		return false;
	}
	return true;
}

static bool vertex_ok(int vertex, int vertex_count, char *why, size_t size)
{
	if (vertex < 0) {
		snprintf(why, size, "vertex id %d is negative", vertex);
		return false;
	}
	if (vertex_count > 0 && vertex >= vertex_count) {
		snprintf(why, size, "vertex id %d is out of range: the object has %d vertices (0 to %d)", vertex,
		         vertex_count, vertex_count - 1);
		return false;
	}
	return true;
}

static bool velocity_ok(const float v[3], char *why, size_t size)
{
	double speed = sqrt((double)v[0] * v[0] + (double)v[1] * v[1] + (double)v[2] * v[2]);
	if (!(speed <= SCN_VEL_MAX_SPEED)) {
		snprintf(why, size, "speed %.9g m/s is over the limit of %g m/s", speed, SCN_VEL_MAX_SPEED);
		return false;
	}
	return true;
}

/* ---- reader --------------------------------------------------------------------------------- */

enum {
	LINE_CHARS = 512, /* longest line; the seed's lines are under 80 characters */
	MAX_TOKENS = 8,
	NO_BLOCK = -2,     /* reader.declared before the first Time line */
	AWAITING_COUNT = -1 /* reader.declared between a Time line and its Number line */
};

typedef struct reader {
	const char *name;
	int vertex_count;
	scn_velocities *out;
	id_set ids;
	int declared; /* constraint vectors the open block declares, or NO_BLOCK / AWAITING_COUNT */
	int line;
	scn_error *err;
} reader;

static scn_status fail(reader *r, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

static scn_status fail(reader *r, const char *fmt, ...)
{
	char what[400];
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(what, sizeof what, fmt, ap);
	va_end(ap);
	return scn_fail_line(r->err, r->name, r->line, "%s", what);
}

static bool keyword(const char *token, const char *word)
{
	for (; *token && *word; token++, word++)
		if (tolower((unsigned char)*token) != tolower((unsigned char)*word))
			return false;
	return *token == *word;
}

static scn_vel_block *open_block(reader *r)
{
	return &r->out->blocks[r->out->block_count - 1];
}

/* The open block must be complete before another begins or the file ends. */
static scn_status close_block(reader *r, const char *where)
{
	if (r->declared == NO_BLOCK)
		return SCN_OK;
	const scn_vel_block *b = open_block(r);
	if (r->declared == AWAITING_COUNT)
		return fail(r, "%sblock at line %d has no 'Number of constraint vectors' line", where, b->line);
	if (b->count < r->declared)
		return fail(r, "%sblock at line %d declares %d constraint vectors, found %d", where, b->line, r->declared,
		            b->count);
	return SCN_OK;
}

static scn_status read_time(reader *r, char **tok, int ntok)
{
	if (ntok != 2)
		return fail(r, "expected 'Time t'");
	scn_status st = close_block(r, "");
	if (st)
		return st;
	double t;
	if (!scn_parse_double(tok[1], SCN_VEL_MAX_TIME, &t))
		return fail(r, "time '%.40s' is not a number in [0, %g] s", tok[1], SCN_VEL_MAX_TIME);
	t += 0.0; /* "-0" is time 0, and is written back so */
	char why[200];
	const scn_vel_block *previous = r->out->block_count > 0 ? open_block(r) : NULL;
	if (!time_ok(t, previous, why, sizeof why))
		return fail(r, "%s", why);
	if ((st = scn_vel_add_block(r->out, t, r->err)))
		return st;
	open_block(r)->line = r->line;
	r->declared = AWAITING_COUNT;
	id_set_next_block(&r->ids);
	return SCN_OK;
}

static scn_status read_count(reader *r, char **tok, int ntok)
{
	if (ntok != 5 || !keyword(tok[1], "of") || !keyword(tok[2], "constraint") || !keyword(tok[3], "vectors"))
		return fail(r, "expected 'Number of constraint vectors N'");
	if (r->declared == NO_BLOCK)
		return fail(r, "'Number of constraint vectors' before any 'Time' line");
	if (r->declared != AWAITING_COUNT)
		return fail(r, "a second 'Number of constraint vectors' line for the block at line %d", open_block(r)->line);
	if (!scn_parse_int(tok[4], 0, SCN_VEL_MAX_COUNT, &r->declared)) {
		r->declared = AWAITING_COUNT;
		return fail(r, "'%.40s' is not a number of constraint vectors in [0, %d]", tok[4], SCN_VEL_MAX_COUNT);
	}
	return SCN_OK;
}

static scn_status read_entry(reader *r, char **tok, int ntok)
{
	if (ntok != 6 || !keyword(tok[2], "Vector"))
		return fail(r, "expected 'VertexId i Vector x y z'");
	if (r->declared == NO_BLOCK)
		return fail(r, "'VertexId' before any 'Time' line");
	const scn_vel_block *b = open_block(r);
	if (r->declared == AWAITING_COUNT)
		return fail(r, "'VertexId' before the 'Number of constraint vectors' line of the block at line %d", b->line);
	if (b->count >= r->declared)
		return fail(r, "block at line %d declares %d constraint vectors, found more", b->line, r->declared);
	int vertex;
	float v[3];
	char why[200];
	if (!scn_parse_int(tok[1], INT_MIN, INT_MAX, &vertex))
		return fail(r, "vertex id '%.40s' is not an integer", tok[1]);
	if (!vertex_ok(vertex, r->vertex_count, why, sizeof why))
		return fail(r, "%s", why);
	for (int k = 0; k < 3; k++)
		if (!scn_parse_float(tok[3 + k], SCN_VEL_MAX_SPEED, &v[k]))
			return fail(r, "velocity component '%.40s' is not a number in [-%g, %g] m/s", tok[3 + k],
			            SCN_VEL_MAX_SPEED, SCN_VEL_MAX_SPEED);
	if (!velocity_ok(v, why, sizeof why))
		return fail(r, "%s", why);
	scn_status st = scn_vel_add_entry(r->out, vertex, v, r->err);
	if (st)
		return st;
	scn_vel_entry *entries = r->out->entries;
	int e = r->out->entry_count - 1;
	entries[e].line = r->line;
	int earlier = id_set_add(&r->ids, entries, e);
	if (earlier == -2)
		return scn_fail(r->err, SCN_ERROR_MEMORY, "%s:%d: out of memory", r->name, r->line);
	if (earlier >= 0)
		return fail(r, "vertex %d appears twice in the block at line %d (first at line %d)", vertex, b->line,
		            entries[earlier].line);
	return SCN_OK;
}

/* Splits a line at blanks (CR included, for files from Windows). */
static int tokenize(char *line, char **tok)
{
	int n = 0;
	char *p = line;
	for (;;) {
		while (*p == ' ' || *p == '\t' || *p == '\r' || *p == '\v' || *p == '\f')
			p++;
		if (!*p || n == MAX_TOKENS)
			return *p ? MAX_TOKENS + 1 : n;
		tok[n++] = p;
		while (*p && !strchr(" \t\r\v\f", *p))
			p++;
		if (*p)
			*p++ = '\0';
	}
}

static scn_status read_line(reader *r, const char *text, size_t length)
{
	char line[LINE_CHARS + 1];
	char *tok[MAX_TOKENS];
	if (length > LINE_CHARS)
		return fail(r, "line longer than %d characters", LINE_CHARS);
	if (memchr(text, '\0', length))
		return fail(r, "a NUL byte: not a text file");
	memcpy(line, text, length);
	line[length] = '\0';
	int ntok = tokenize(line, tok);
	if (ntok == 0)
		return SCN_OK;
	if (ntok > MAX_TOKENS)
		return fail(r, "too many words on the line");
	if (keyword(tok[0], "Time"))
		return read_time(r, tok, ntok);
	if (keyword(tok[0], "Number"))
		return read_count(r, tok, ntok);
	if (keyword(tok[0], "VertexId"))
		return read_entry(r, tok, ntok);
	return fail(r, "unknown line starting with '%.40s' (expected 'Time', 'Number of constraint vectors' or "
	               "'VertexId')",
	            tok[0]);
}

static scn_status read_all(reader *r, const char *text, size_t size)
{
	const char *p = text, *end = text + size;
	while (p < end) {
		const char *newline = memchr(p, '\n', (size_t)(end - p));
		const char *stop = newline ? newline : end;
		if (r->line == INT_MAX)
			return fail(r, "too many lines");
		r->line++;
		scn_status st = read_line(r, p, (size_t)(stop - p));
		if (st)
			return st;
		p = newline ? newline + 1 : end;
	}
	scn_status st = close_block(r, "end of file: ");
	if (st)
		return st;
	if (r->out->block_count == 0)
		return fail(r, "no blocks: the file is empty (expected 'Time t' blocks)");
	return SCN_OK;
}

scn_status scn_vel_parse(const char *text, size_t size, const char *name, int vertex_count, scn_velocities *out,
                         scn_error *err)
{
	*out = (scn_velocities){0};
	reader r = {.name = name ? name : "(velocities)",
	            .vertex_count = vertex_count > 0 ? vertex_count : 0,
	            .out = out,
	            .declared = NO_BLOCK,
	            .err = err};
	scn_status st = read_all(&r, text ? text : "", text ? size : 0);
	free(r.ids.slots);
	if (st)
		scn_vel_free(out);
	return st;
}

scn_status scn_vel_read(const char *path, int vertex_count, scn_velocities *out, scn_error *err)
{
	*out = (scn_velocities){0};
	char *text;
	size_t size;
	scn_status st = scn_read_file(path, SCN_VEL_MAX_BYTES, &text, &size, err);
	if (st)
		return st;
	st = scn_vel_parse(text, size, path, vertex_count, out, err);
	free(text);
	return st;
}

/* ---- check and writer ----------------------------------------------------------------------- */

static scn_status check_block(const scn_velocities *vel, int k, id_set *ids, const char *name, int vertex_count,
                              scn_error *err)
{
	const scn_vel_block *b = &vel->blocks[k];
	char why[300];
	if (b->count < 0 || b->first < 0 || b->first > vel->entry_count - b->count)
		return scn_fail(err, SCN_ERROR_PARSE, "%s: block %d: its entries %d to %d lie outside the %d entries",
		                name, k + 1, b->first, b->first + b->count - 1, vel->entry_count);
	if (!time_ok(b->time, k > 0 ? &vel->blocks[k - 1] : NULL, why, sizeof why))
		return scn_fail(err, SCN_ERROR_PARSE, "%s: block %d: %s", name, k + 1, why);
	id_set_next_block(ids);
	for (int e = b->first; e < b->first + b->count; e++) {
		const scn_vel_entry *entry = &vel->entries[e];
		bool ok = vertex_ok(entry->vertex, vertex_count, why, sizeof why) &&
		          velocity_ok(entry->velocity, why, sizeof why);
		int earlier = ok ? id_set_add(ids, vel->entries, e) : -1;
		if (earlier == -2)
			return scn_fail(err, SCN_ERROR_MEMORY, "%s: out of memory", name);
		if (earlier >= 0) {
			snprintf(why, sizeof why, "vertex %d appears twice", entry->vertex);
			ok = false;
		}
		if (!ok)
			return scn_fail(err, SCN_ERROR_PARSE, "%s: block %d (time %.15g): %s", name, k + 1, b->time, why);
	}
	return SCN_OK;
}

scn_status scn_vel_check(const scn_velocities *vel, const char *name, int vertex_count, scn_error *err)
{
	if (!vel || vel->block_count <= 0 || !vel->blocks || vel->entry_count < 0 ||
	    (vel->entry_count > 0 && !vel->entries))
		return scn_fail(err, SCN_ERROR_PARSE, "%s: no blocks", name);
	id_set ids = {0};
	scn_status st = SCN_OK;
	for (int k = 0; k < vel->block_count && st == SCN_OK; k++)
		st = check_block(vel, k, &ids, name, vertex_count, err);
	free(ids.slots);
	return st;
}

/* The shortest %g form that the reader turns back into exactly v.  Shorter numbers keep
 * "Time 0.01" readable; the loop ends at the precision that always round-trips. */
static void format_float(float v, char *buf, size_t size)
{
	for (int digits = 6; digits <= 9; digits++) {
		snprintf(buf, size, "%.*g", digits, (double)v);
		float back;
		if (scn_parse_float(buf, 3.0e38, &back) && memcmp(&back, &v, sizeof v) == 0)
			return;
	}
}

static void format_double(double v, char *buf, size_t size)
{
	for (int digits = 15; digits <= 17; digits++) {
		snprintf(buf, size, "%.*g", digits, v);
		double back;
		if (scn_parse_double(buf, 1.0e308, &back) && memcmp(&back, &v, sizeof v) == 0)
			return;
	}
}

static void write_blocks(FILE *f, const scn_velocities *vel)
{
	char t[40], x[32], y[32], z[32];
	for (int k = 0; k < vel->block_count; k++) {
		const scn_vel_block *b = &vel->blocks[k];
		format_double(b->time, t, sizeof t);
		fprintf(f, "Time %s\nNumber of constraint vectors %d\n", t, b->count);
		for (int e = b->first; e < b->first + b->count; e++) {
			const scn_vel_entry *entry = &vel->entries[e];
			format_float(entry->velocity[0], x, sizeof x);
			format_float(entry->velocity[1], y, sizeof y);
			format_float(entry->velocity[2], z, sizeof z);
			fprintf(f, "VertexId %d Vector %s %s %s\n", entry->vertex, x, y, z);
		}
	}
}

scn_status scn_vel_write(const char *path, const scn_velocities *vel, scn_error *err)
{
	scn_status st = scn_vel_check(vel, path, 0, err);
	if (st)
		return st;
	FILE *f = fopen(path, "w");
	if (!f)
		return scn_fail(err, SCN_ERROR_IO, "%s: cannot open for writing: %s", path, strerror(errno));
	errno = 0;
	write_blocks(f, vel);
	int failed = ferror(f) ? (errno ? errno : EIO) : 0;
	if (fclose(f) != 0 && !failed)
		failed = errno ? errno : EIO;
	if (failed) {
		remove(path);
		return scn_fail(err, SCN_ERROR_IO, "%s: cannot write: %s", path, strerror(failed));
	}
	return SCN_OK;
}

/* ---- axes and the world --------------------------------------------------------------------- */

void scn_axes_to_world(scn_axes axes, const float in[3], float out[3])
{
	float x = in[0], y = in[1], z = in[2];
	if (axes == SCN_AXES_Z_UP) {
		/* A quarter turn about x: the seed's up (+z) becomes tela's up (+y), and its +y
		 * (away from the viewer) becomes -z, keeping the frame right-handed. */
		out[0] = x;
		out[1] = z;
		out[2] = -y;
	} else {
		out[0] = x;
		out[1] = y;
		out[2] = z;
	}
}

/* Adds one block's velocities, then releases the vertices the previous block named and
 * this one does not.  named[v] is the 1-based index of the last block that named v. */
static sim_result apply_block(sim_world *world, int first_vertex, const scn_velocities *vel, int k, scn_axes axes,
                              int *named)
{
	const scn_vel_block *b = &vel->blocks[k];
	for (int e = b->first; e < b->first + b->count; e++) {
		const scn_vel_entry *entry = &vel->entries[e];
		vec3 v;
		scn_axes_to_world(axes, entry->velocity, v);
		sim_result r = sim_world_add_velocity_block(world, b->time, first_vertex + entry->vertex, v);
		if (r != SIM_OK)
			return r;
		named[entry->vertex] = k + 1;
	}
	if (k == 0)
		return SIM_OK;
	const scn_vel_block *previous = &vel->blocks[k - 1];
	vec3 release = {NAN, NAN, NAN};
	for (int e = previous->first; e < previous->first + previous->count; e++) {
		int vertex = vel->entries[e].vertex;
		if (named[vertex] == k + 1)
			continue;
		sim_result r = sim_world_add_velocity_block(world, b->time, first_vertex + vertex, release);
		if (r != SIM_OK)
			return r;
	}
	return SIM_OK;
}

sim_result scn_vel_apply(sim_world *world, int first_vertex, const scn_velocities *vel, scn_axes axes)
{
	if (!world || !vel || first_vertex < 0)
		return SIM_ERROR_INVALID;
	int room = sim_world_vertex_count(world) - first_vertex;
	scn_error err = {0};
	if (room <= 0 || scn_vel_check(vel, "", room, &err) != SCN_OK)
		return err.status == SCN_ERROR_MEMORY ? SIM_ERROR_OUT_OF_MEMORY : SIM_ERROR_INVALID;
	int highest = 0;
	for (int k = 0; k < vel->block_count; k++)
		for (int e = vel->blocks[k].first; e < vel->blocks[k].first + vel->blocks[k].count; e++)
			if (vel->entries[e].vertex > highest)
				highest = vel->entries[e].vertex;
	int *named = calloc((size_t)highest + 1, sizeof *named);
	if (!named)
		return SIM_ERROR_OUT_OF_MEMORY;
	sim_result r = SIM_OK;
	for (int k = 0; k < vel->block_count && r == SIM_OK; k++)
		r = apply_block(world, first_vertex, vel, k, axes, named);
	free(named);
	return r;
}
