/* tela traj: writes a velocity-constraint file for a vertex set that moves along straight
 * segments with minimum-jerk profiles and rests (the seed's TrajectoryGenerator). */
#include "cli.h"

#include "scenes/velocities.h"

#include <limits.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

typedef struct traj_options {
	const char *out;
	int vertex_count, vertex_capacity;
	int *vertices;
	int segment_count, segment_capacity;
	scn_traj_segment *segments;
	scn_traj_def def;
} traj_options;

static int out_of_memory(void)
{
	fprintf(stderr, "tela traj: out of memory\n");
	return EXIT_TELA_IO;
}

/* Grows a list by one item; false when out of memory. */
static bool push(void **items, size_t item, int *count, int *capacity)
{
	if (*count == *capacity) {
		int cap = *capacity ? 2 * *capacity : 8;
		void *grown = *capacity < INT_MAX / 2 ? realloc(*items, (size_t)cap * item) : NULL;
		if (!grown)
			return false;
		*items = grown;
		*capacity = cap;
	}
	(*count)++;
	return true;
}

/* Splits "a,b,c" into at most `max` fields in buf; an empty field makes it fail. */
static int split_commas(const char *s, char *buf, size_t size, char **fields, int max)
{
	if (snprintf(buf, size, "%s", s) >= (int)size)
		return -1;
	int n = 0;
	for (char *p = buf;; p++) {
		char *comma = strchr(p, ',');
		if (n == max || comma == p || *p == '\0')
			return -1;
		fields[n++] = p;
		if (!comma)
			return n;
		*comma = '\0';
		p = comma;
	}
}

static int parse_vertices(const char *s, traj_options *o)
{
	char buf[4096];
	char *ids[1024];
	int n = split_commas(s, buf, sizeof buf, ids, 1024);
	if (n < 0)
		return cli_usage_error("traj", "--vertices: '%s' is not a list ID[,ID...] (at most 1024 per option)", s);
	for (int i = 0; i < n; i++) {
		long id;
		if (!cli_parse_int(ids[i], 0, INT_MAX, &id))
			return cli_usage_error("traj", "--vertices: '%s' is not a vertex id (an integer >= 0)", ids[i]);
		if (!push((void **)&o->vertices, sizeof *o->vertices, &o->vertex_count, &o->vertex_capacity))
			return out_of_memory();
		o->vertices[o->vertex_count - 1] = (int)id;
	}
	return EXIT_TELA_OK;
}

static int parse_segment(const char *s, traj_options *o)
{
	char buf[256];
	char *f[4];
	double v[4];
	bool ok = split_commas(s, buf, sizeof buf, f, 4) == 4;
	for (int k = 0; ok && k < 4; k++)
		ok = cli_parse_double(f[k], &v[k]) && fabs(v[k]) <= 1e6;
	if (!ok || !(v[3] > 0.0))
		return cli_usage_error("traj", "--segment: '%s' is not DX,DY,DZ,T (metres, and seconds > 0)", s);
	if (!push((void **)&o->segments, sizeof *o->segments, &o->segment_count, &o->segment_capacity))
		return cli_usage_error("traj", "out of memory");
	o->segments[o->segment_count - 1] = (scn_traj_segment){.displacement = {v[0], v[1], v[2]}, .duration = v[3]};
	return EXIT_TELA_OK;
}

/* A number option in [lo, hi] (lo excluded when open_lo). */
static int parse_number(const char *option, const char *s, double lo, bool open_lo, double hi, double *out)
{
	double v;
	if (!cli_parse_double(s, &v) || v < lo || (open_lo && v == lo) || v > hi)
		return cli_usage_error("traj", "%s: '%s' is not a number in %c%g, %g]", option, s, open_lo ? '(' : '[', lo,
		                       hi);
	*out = v;
	return EXIT_TELA_OK;
}

static int parse_option(const char *a, const char *val, traj_options *o)
{
	if (strcmp(a, "--vertices") == 0)
		return parse_vertices(val, o);
	if (strcmp(a, "--segment") == 0)
		return parse_segment(val, o);
	if (strcmp(a, "--rest") == 0)
		return parse_number(a, val, 0.0, false, SCN_VEL_MAX_TIME, &o->def.rest);
	if (strcmp(a, "--start") == 0)
		return parse_number(a, val, 0.0, false, SCN_VEL_MAX_TIME, &o->def.start);
	return parse_number(a, val, 0.0, true, 1e6, &o->def.rate); /* --rate */
}

static int parse_traj_options(int argc, char **argv, traj_options *o)
{
	static const char *const with_value[] = {"--vertices", "--segment", "--rest", "--start", "--rate"};
	for (int i = 1; i < argc; i++) {
		const char *a = argv[i];
		if (a[0] != '-') {
			if (o->out)
				return cli_usage_error("traj", "more than one output file given ('%s' and '%s')", o->out, a);
			o->out = a;
			continue;
		}
		if (strcmp(a, "--release") == 0) {
			o->def.release = true;
			continue;
		}
		bool known = false;
		for (size_t k = 0; k < sizeof with_value / sizeof with_value[0]; k++)
			known = known || strcmp(a, with_value[k]) == 0;
		if (!known)
			return cli_usage_error("traj", "unknown option '%s'", a);
		if (i + 1 >= argc)
			return cli_usage_error("traj", "option %s needs a value", a);
		int rc = parse_option(a, argv[++i], o);
		if (rc != EXIT_TELA_OK)
			return rc;
	}
	if (!o->out)
		return cli_usage_error("traj", "no output file given");
	if (o->vertex_count == 0)
		return cli_usage_error("traj", "no --vertices given");
	if (o->segment_count == 0)
		return cli_usage_error("traj", "no --segment given");
	return EXIT_TELA_OK;
}

static int write_trajectory(const traj_options *o)
{
	scn_traj_def def = o->def;
	def.vertices = o->vertices;
	def.vertex_count = o->vertex_count;
	def.segments = o->segments;
	def.segment_count = o->segment_count;
	scn_velocities vel;
	scn_error err = {0};
	if (scn_traj_generate(&def, &vel, &err) != SCN_OK) {
		if (err.status == SCN_ERROR_PARSE)
			return cli_usage_error("traj", "%s", err.message);
		fprintf(stderr, "tela traj: %s\n", err.message);
		return EXIT_TELA_IO;
	}
	int rc = EXIT_TELA_OK;
	if (scn_vel_write(o->out, &vel, &err) != SCN_OK) {
		fprintf(stderr, "tela traj: %s\n", err.message);
		rc = EXIT_TELA_IO;
	} else {
		printf("%s: %d blocks for %d %s, from %.15g s to %.15g s\n", o->out, vel.block_count, o->vertex_count,
		       o->vertex_count == 1 ? "vertex" : "vertices", vel.blocks[0].time, vel.blocks[vel.block_count - 1].time);
	}
	scn_vel_free(&vel);
	return rc;
}

static void traj_help(void)
{
	printf("usage: tela traj OUT --vertices ID[,ID...] --segment DX,DY,DZ,T [--segment ...]\n"
	       "                 [--rest S] [--start T] [--rate HZ] [--release]\n"
	       "Writes a velocity-constraint file OUT that moves the vertices rigidly along straight\n"
	       "segments with minimum-jerk profiles and rests at the ends (the seed's\n"
	       "TrajectoryGenerator.m; docs/tools.md).\n"
	       "\n"
	       "options:\n"
	       "  --vertices ID[,ID...]   object-local vertex ids (0-based, distinct) that move\n"
	       "                          together; repeated, the lists add up (required)\n"
	       "  --segment DX,DY,DZ,T    move by (DX, DY, DZ) metres in T seconds; repeat for more\n"
	       "                          segments, in order (at least one)\n"
	       "  --rest S                seconds at rest before, between and after the segments\n"
	       "                          (default 0.5)\n"
	       "  --start T               time of the first block, s (default 0)\n"
	       "  --rate HZ               blocks per second while moving (default 100)\n"
	       "  --release               free the vertices after the last rest instead of holding\n"
	       "  -h, --help              this text\n"
	       "\n"
	       "exit codes: 0 written; 2 bad command line; 3 the file could not be written (no\n"
	       "partial file is left).\n");
}

int cmd_traj(int argc, char **argv)
{
	if (cli_wants_help(argc, argv, 1)) {
		traj_help();
		return EXIT_TELA_OK;
	}
	traj_options o = {.def = scn_traj_def_default()};
	int rc = parse_traj_options(argc, argv, &o);
	if (rc == EXIT_TELA_OK)
		rc = write_trajectory(&o);
	free(o.vertices);
	free(o.segments);
	return rc;
}
