/* tela mesh grid|move|info: the seed's fabricCreator and meshMover, and a mesh checker.
 * docs/tools.md describes the commands, their output and exit codes. */
#include "cli.h"

#include "scenes/mesh.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

enum { GRID = 1, MOVE = 2, INFO = 4 };

#define MAX_DIVISIONS 100000
#define MAX_CELLS 5000000 /* 10 million triangles: a 500 MB binary file, under the reader's limit */

typedef struct mesh_options {
	const char *command; /* "mesh grid" ...: the prefix of usage messages */
	const char *files[2];
	int file_count;
	bool have_size, have_divisions;
	double size[2], center[3], translate[3], rotate[3], scale;
	long divisions[2];
	bool binary;
	const char *name;
	bool have_format; /* --format: the output's (grid, move) or the input's (info) */
	scn_mesh_format format;
} mesh_options;

typedef struct option_spec {
	const char *name;
	int values;
	int commands; /* the subcommands that take it */
} option_spec;

static const option_spec option_specs[] = {
	{"--size", 2, GRID},      {"--divisions", 2, GRID}, {"--center", 3, GRID}, {"--name", 1, GRID},
	{"--translate", 3, MOVE}, {"--rotate", 3, MOVE},    {"--scale", 1, MOVE},  {"--binary", 0, GRID | MOVE},
	{"--format", 1, GRID | MOVE | INFO},
};

/* Numbers within +-limit; `positive` also refuses zero and below. */
static bool parse_numbers(const mesh_options *o, const char *opt, char **vals, int n, double limit, bool positive,
                          double *out, int *rc)
{
	for (int k = 0; k < n; k++) {
		double v;
		if (!cli_parse_double(vals[k], &v)) {
			*rc = cli_usage_error(o->command, "%s: '%s' is not a number", opt, vals[k]);
			return false;
		}
		if (positive && !(v > 0.0)) {
			*rc = cli_usage_error(o->command, "%s: '%s' is not positive", opt, vals[k]);
			return false;
		}
		if (fabs(v) > limit) {
			*rc = cli_usage_error(o->command, "%s: '%s' is beyond %g", opt, vals[k], limit);
			return false;
		}
		out[k] = v;
	}
	return true;
}

static bool parse_divisions(mesh_options *o, char **vals, int *rc)
{
	for (int k = 0; k < 2; k++) {
		if (!cli_parse_int(vals[k], 1, MAX_DIVISIONS, &o->divisions[k])) {
			*rc = cli_usage_error(o->command, "--divisions: '%s' is not a whole number from 1 to %d", vals[k],
			                      MAX_DIVISIONS);
			return false;
		}
	}
	if (o->divisions[0] * o->divisions[1] > MAX_CELLS) {
		*rc = cli_usage_error(o->command, "--divisions: %ld x %ld cells are more than %d", o->divisions[0],
		                      o->divisions[1], MAX_CELLS);
		return false;
	}
	o->have_divisions = true;
	return true;
}

static bool parse_name(mesh_options *o, const char *name, int *rc)
{
	bool printable = strlen(name) <= 63;
	for (const char *c = name; *c && printable; c++)
		printable = (unsigned char)*c >= 0x20 && *c != 0x7f;
	if (!printable) {
		*rc = cli_usage_error(o->command, "--name: at most 63 printable characters");
		return false;
	}
	o->name = name;
	return true;
}

/* Stores one option's values; false with *rc set on a bad value. */
static bool take_option(mesh_options *o, const char *opt, char **vals, int *rc)
{
	if (strcmp(opt, "--size") == 0)
		return (o->have_size = parse_numbers(o, opt, vals, 2, 2e6, true, o->size, rc));
	if (strcmp(opt, "--divisions") == 0)
		return parse_divisions(o, vals, rc);
	if (strcmp(opt, "--center") == 0)
		return parse_numbers(o, opt, vals, 3, SCN_STL_COORD_LIMIT, false, o->center, rc);
	if (strcmp(opt, "--translate") == 0)
		return parse_numbers(o, opt, vals, 3, SCN_STL_COORD_LIMIT, false, o->translate, rc);
	if (strcmp(opt, "--rotate") == 0)
		return parse_numbers(o, opt, vals, 3, 1e6, false, o->rotate, rc);
	if (strcmp(opt, "--scale") == 0)
		return parse_numbers(o, opt, vals, 1, 1e6, true, &o->scale, rc);
	if (strcmp(opt, "--name") == 0)
		return parse_name(o, vals[0], rc);
	if (strcmp(opt, "--format") == 0) {
		if (!scn_mesh_format_parse(vals[0], &o->format)) {
			*rc = cli_usage_error(o->command, "--format: '%s' is not stl, obj or ply", vals[0]);
			return false;
		}
		o->have_format = true;
		return true;
	}
	o->binary = true; /* --binary, the only one left */
	return true;
}

static const option_spec *find_option(const char *name, int command)
{
	for (size_t k = 0; k < sizeof option_specs / sizeof option_specs[0]; k++)
		if (strcmp(option_specs[k].name, name) == 0 && (option_specs[k].commands & command))
			return &option_specs[k];
	return NULL;
}

/* argv[0] is the subcommand.  Returns -1 when the options are good, else the exit code. */
static int parse_options(int argc, char **argv, int command, int files, mesh_options *o)
{
	for (int i = 1; i < argc; i++) {
		const char *a = argv[i];
		if (strncmp(a, "--", 2) != 0) {
			if (o->file_count == files)
				return cli_usage_error(o->command, "unexpected argument '%s'", a);
			o->files[o->file_count++] = a;
			continue;
		}
		const option_spec *spec = find_option(a, command);
		if (!spec)
			return cli_usage_error(o->command, "unknown option '%s'", a);
		for (int k = 1; k <= spec->values; k++)
			if (i + k >= argc || strncmp(argv[i + k], "--", 2) == 0)
				return cli_usage_error(o->command, "option %s needs %d value%s", a, spec->values,
				                       spec->values > 1 ? "s" : "");
		int rc = EXIT_TELA_USAGE;
		if (!take_option(o, a, argv + i + 1, &rc))
			return rc;
		i += spec->values;
	}
	if (o->file_count < files)
		return cli_usage_error(o->command, "%s", command == MOVE ? "needs an input and an output file"
		                                          : command == GRID ? "needs an output file"
		                                                            : "needs a mesh file");
	return -1;
}

static int io_error(const scn_error *err)
{
	fprintf(stderr, "tela mesh: %s\n", err->message);
	return EXIT_TELA_IO;
}

/* Reads a mesh, warning about removed degenerate facets and skipped statements. */
static int read_mesh(const char *path, scn_mesh_format format, scn_mesh *mesh, scn_mesh_report *report)
{
	scn_error err = {0};
	if (scn_mesh_read(path, format, SCN_WELD_TOLERANCE, mesh, report, &err) != SCN_OK)
		return io_error(&err);
	if (report->ignored > 0)
		fprintf(stderr, "tela mesh: warning: %s:%d: skipped %d statements tela does not read (the first: '%s')\n",
		        path, report->first_ignored_line, report->ignored, report->first_ignored);
	if (report->degenerate > 0) {
		if (report->binary)
			fprintf(stderr, "tela mesh: warning: %s: byte %d: removed %d degenerate triangles\n", path,
			        report->first_degenerate_line, report->degenerate);
		else
			fprintf(stderr, "tela mesh: warning: %s:%d: removed %d degenerate triangles\n", path,
			        report->first_degenerate_line, report->degenerate);
	}
	return EXIT_TELA_OK;
}

/* The format of a file: --format when given, else the file's extension. */
static scn_mesh_format format_for(const mesh_options *o, const char *path)
{
	return o->have_format ? o->format : scn_mesh_format_of(path);
}

/* OBJ is text only; PLY is written binary anyway, so --binary is only refused for OBJ. */
static int check_output(const mesh_options *o, const char *path)
{
	if (o->binary && format_for(o, path) == SCN_MESH_OBJ)
		return cli_usage_error(o->command, "--binary: OBJ is text only (--binary is for STL; PLY is always binary)");
	return -1;
}

static int write_mesh(const mesh_options *o, const char *path, const scn_mesh *mesh)
{
	scn_error err = {0};
	if (scn_mesh_write(path, format_for(o, path), mesh, o->binary, &err) != SCN_OK)
		return io_error(&err);
	return EXIT_TELA_OK;
}

static int mesh_grid(int argc, char **argv)
{
	mesh_options o = {.command = "mesh grid"};
	int rc = parse_options(argc, argv, GRID, 1, &o);
	if (rc >= 0)
		return rc;
	if (!o.have_size || !o.have_divisions)
		return cli_usage_error(o.command, "%s is required", o.have_size ? "--divisions NW NL" : "--size W L");
	if ((rc = check_output(&o, o.files[0])) >= 0)
		return rc;
	for (int k = 0; k < 2; k++)
		if (fabs(o.center[k]) + 0.5 * o.size[k] > SCN_STL_COORD_LIMIT)
			return cli_usage_error(o.command, "the grid would reach beyond the coordinate limit of 1e6 m");
	float center[3] = {(float)o.center[0], (float)o.center[1], (float)o.center[2]};
	scn_mesh mesh;
	scn_error err = {0};
	if (scn_mesh_grid((float)o.size[0], (float)o.size[1], (int)o.divisions[0], (int)o.divisions[1], center, &mesh,
	                  &err) != SCN_OK)
		return io_error(&err);
	snprintf(mesh.name, sizeof mesh.name, "%s", o.name ? o.name : "");
	rc = write_mesh(&o, o.files[0], &mesh);
	scn_mesh_free(&mesh);
	return rc;
}

static bool within_limit(const scn_mesh *mesh)
{
	float lo[3], hi[3];
	scn_mesh_bounds(mesh, lo, hi);
	for (int k = 0; k < 3; k++)
		if (!(fabsf(lo[k]) <= SCN_STL_COORD_LIMIT && fabsf(hi[k]) <= SCN_STL_COORD_LIMIT))
			return false;
	return true;
}

static int mesh_move(int argc, char **argv)
{
	mesh_options o = {.command = "mesh move", .scale = 1.0};
	int rc = parse_options(argc, argv, MOVE, 2, &o);
	if (rc >= 0 || (rc = check_output(&o, o.files[1])) >= 0)
		return rc;
	scn_mesh mesh;
	scn_mesh_report report;
	rc = read_mesh(o.files[0], scn_mesh_format_of(o.files[0]), &mesh, &report);
	if (rc != EXIT_TELA_OK)
		return rc;
	float rotate[3], translate[3];
	for (int k = 0; k < 3; k++) {
		rotate[k] = (float)o.rotate[k];
		translate[k] = (float)o.translate[k];
	}
	scn_mesh_transform(&mesh, (float)o.scale, rotate, translate);
	if (within_limit(&mesh))
		rc = write_mesh(&o, o.files[1], &mesh);
	else
		rc = cli_usage_error(o.command, "the moved mesh would reach beyond the coordinate limit of 1e6 m");
	scn_mesh_free(&mesh);
	return rc;
}

static int mesh_info(int argc, char **argv)
{
	mesh_options o = {.command = "mesh info"};
	int rc = parse_options(argc, argv, INFO, 1, &o);
	if (rc >= 0)
		return rc;
	scn_mesh mesh;
	scn_mesh_report r;
	rc = read_mesh(o.files[0], format_for(&o, o.files[0]), &mesh, &r);
	if (rc != EXIT_TELA_OK)
		return rc;
	float lo[3], hi[3];
	scn_mesh_bounds(&mesh, lo, hi);
	const char *format = r.binary ? "binary" : "ascii";
	if (r.format == SCN_MESH_OBJ)
		format = "obj";
	else if (r.format == SCN_MESH_PLY)
		format = !r.binary ? "ply ascii" : r.big_endian ? "ply binary_big_endian" : "ply binary_little_endian";
	printf("format %s\nfacets %d\nvertices %d\ntriangles %d\nwelded %d\ndegenerate %d\n", format, r.facets,
	       mesh.vertex_count, mesh.triangle_count, r.welded, r.degenerate);
	if (r.format != SCN_MESH_STL)
		printf("unused %d\n", r.unused);
	printf("bounds");
	for (int k = 0; k < 6; k++) {
		char buf[32];
		scn_format_float(buf, k < 3 ? lo[k] : hi[k - 3]);
		printf(" %s", buf);
	}
	printf("\nboundary_edges %d\nnonmanifold_edges %d\nmisoriented_edges %d\nclosed %s\n", r.boundary_edges,
	       r.nonmanifold_edges, r.misoriented_edges, r.closed ? "yes" : "no");
	if (r.closed)
		printf("volume %.9g\n", r.signed_volume);
	scn_mesh_free(&mesh);
	return EXIT_TELA_OK;
}

static const char *const mesh_usage[][2] = {
    {"grid",
     "  tela mesh grid OUT --size W L --divisions NW NL [--center X Y Z] [--binary] [--name NAME]\n"
     "                    [--format stl|obj|ply]\n"
     "      write a flat grid: W m along x, L along y, NW x NL cells, centred at X Y Z\n"
     "      (default 0 0 0) in the plane z = Z, as STL, OBJ or PLY by OUT's extension (or\n"
     "      --format); STL is ASCII (solid NAME, default tela) or --binary (the seed's\n"
     "      fabricCreator), OBJ is text and PLY binary\n"},
    {"move",
     "  tela mesh move IN OUT [--translate X Y Z] [--rotate RX RY RZ] [--scale S] [--binary]\n"
     "                    [--format stl|obj|ply]\n"
     "      weld a mesh, then scale it about the origin, rotate it (degrees about the fixed\n"
     "      x, y, z axes) and move it, and write it (the seed's meshMover)\n"},
    {"info",
     "  tela mesh info FILE [--format stl|obj|ply]\n"
     "      vertices, triangles, bounds, welded duplicates, boundary and non-manifold edges\n"
     "      of an STL (ASCII or binary), OBJ or PLY mesh (by FILE's extension, or --format)\n"},
};

/* `which`: one subcommand's name, or NULL for all of them. */
static void mesh_help(const char *which)
{
	printf("usage:\n");
	for (size_t k = 0; k < sizeof mesh_usage / sizeof mesh_usage[0]; k++)
		if (!which || strcmp(which, mesh_usage[k][0]) == 0)
			fputs(mesh_usage[k][1], stdout);
	printf("docs/tools.md describes the output.  -h, --help: this text.\n"
	       "exit codes: 0 done; 2 bad command line; 3 the input cannot be read or is not a valid\n"
	       "mesh, or the output cannot be written.\n");
}

int cmd_mesh(int argc, char **argv)
{
	if (cli_wants_help(argc, argv, 1)) {
		bool one = false;
		for (size_t k = 0; argc >= 2 && k < sizeof mesh_usage / sizeof mesh_usage[0]; k++)
			one = one || strcmp(argv[1], mesh_usage[k][0]) == 0;
		mesh_help(one ? argv[1] : NULL);
		return EXIT_TELA_OK;
	}
	if (argc < 2)
		return cli_usage_error("mesh", "needs a subcommand: grid, move or info");
	const char *sub = argv[1];
	if (strcmp(sub, "grid") == 0)
		return mesh_grid(argc - 1, argv + 1);
	if (strcmp(sub, "move") == 0)
		return mesh_move(argc - 1, argv + 1);
	if (strcmp(sub, "info") == 0)
		return mesh_info(argc - 1, argv + 1);
	return cli_usage_error("mesh", "unknown subcommand '%s' (grid, move or info)", sub);
}
