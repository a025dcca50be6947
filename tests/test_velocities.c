/* Velocity-constraint files (the seed's vel_* format), their hand-over to a world, and
 * the trajectory generator behind `tela traj`.  Expected values come from the seed's
 * documented example, from closed forms of constant-velocity motion, and from the
 * minimum-jerk polynomial worked out by hand (peak speed 1.875 d/T, peak acceleration
 * 10/sqrt(3) d/T^2). */
#include "scenes/velocities.h"

#include "test.h"

#include <stdint.h>

#ifndef TELA_VEL_DATA
#error "TELA_VEL_DATA (tests/data/vel) must be defined by the build"
#endif
#ifndef TELA_VEL_SCRATCH
#error "TELA_VEL_SCRATCH (a writable folder) must be defined by the build"
#endif

/* Section 5.5 of the seed reference, verbatim. */
static const char seed_example[] = "Time 0\n"
                                   "Number of constraint vectors 1\n"
                                   "VertexId 0 Vector 0 0 0\n"
                                   "Time 1\n"
                                   "Number of constraint vectors 1\n"
                                   "VertexId 0 Vector 0 0 0.1\n"
                                   "Time 2\n"
                                   "Number of constraint vectors 0\n"
                                   "Time 2.5\n"
                                   "Number of constraint vectors 2\n"
                                   "VertexId 0 Vector 0.1 0.1 0\n"
                                   "VertexId 10 Vector 0.1 0.1 0\n";

static scn_status parse(const char *text, int vertex_count, scn_velocities *out, scn_error *err)
{
	*err = (scn_error){0};
	return scn_vel_parse(text, strlen(text), "bad.vel", vertex_count, out, err);
}

static void check_entry(const scn_velocities *v, int e, int vertex, float x, float y, float z, int line)
{
	CHECK_MSG(v->entries[e].vertex == vertex, "entry %d: vertex %d, expected %d", e, v->entries[e].vertex, vertex);
	CHECK_MSG(v->entries[e].velocity[0] == x && v->entries[e].velocity[1] == y && v->entries[e].velocity[2] == z,
	          "entry %d: velocity %g %g %g", e, v->entries[e].velocity[0], v->entries[e].velocity[1],
	          v->entries[e].velocity[2]);
	CHECK_MSG(v->entries[e].line == line, "entry %d: line %d, expected %d", e, v->entries[e].line, line);
}

static void check_block(const scn_velocities *v, int k, double time, int first, int count, int line)
{
	const scn_vel_block *b = &v->blocks[k];
	CHECK_MSG(b->time == time && b->first == first && b->count == count && b->line == line,
	          "block %d: time %g first %d count %d line %d", k, b->time, b->first, b->count, b->line);
}

/* Every field of the documented example, lines included. */
static void check_seed_example(const scn_velocities *v)
{
	REQUIRE(v->block_count == 4 && v->entry_count == 4);
	check_block(v, 0, 0.0, 0, 1, 1);
	check_block(v, 1, 1.0, 1, 1, 4);
	check_block(v, 2, 2.0, 2, 0, 7);
	check_block(v, 3, 2.5, 2, 2, 9);
	check_entry(v, 0, 0, 0.0f, 0.0f, 0.0f, 3);
	check_entry(v, 1, 0, 0.0f, 0.0f, 0.1f, 6);
	check_entry(v, 2, 0, 0.1f, 0.1f, 0.0f, 11);
	check_entry(v, 3, 10, 0.1f, 0.1f, 0.0f, 12);
}

static void parse_seed_example(void)
{
	scn_velocities v;
	scn_error err;
	REQUIRE(parse(seed_example, 11, &v, &err) == SCN_OK);
	check_seed_example(&v);
	scn_vel_free(&v);
	CHECK(v.block_count == 0 && v.blocks == NULL && v.entries == NULL);
}

static void read_seed_file(void)
{
	scn_velocities v;
	scn_error err = {0};
	REQUIRE(scn_vel_read(TELA_VEL_DATA "/vel_example", 0, &v, &err) == SCN_OK);
	check_seed_example(&v);
	scn_vel_free(&v);

	/* A short block in a file: the message names the file and the line of the next Time. */
	err = (scn_error){0};
	CHECK(scn_vel_read(TELA_VEL_DATA "/vel_short_block", 0, &v, &err) == SCN_ERROR_PARSE);
	CHECK_MSG(strcmp(err.message, TELA_VEL_DATA "/vel_short_block:5: block at line 1 declares 3 constraint "
	                              "vectors, found 2") == 0,
	          "%s", err.message);
	CHECK(v.block_count == 0 && v.blocks == NULL);

	err = (scn_error){0};
	CHECK(scn_vel_read(TELA_VEL_DATA "/no-such-file", 0, &v, &err) == SCN_ERROR_IO);
	CHECK_MSG(strncmp(err.message, TELA_VEL_DATA "/no-such-file: cannot open", strlen(TELA_VEL_DATA) + 26) == 0,
	          "%s", err.message);
}

/* CRLF, tabs, runs of blanks, blank lines, lower case, no final newline, "-0". */
static void parse_lenient_layout(void)
{
	const char *text = "\r\n  time\t0\r\n\r\nnumber OF constraint Vectors   1\r\n"
	                   "\tvertexid 0 vector 0 0 0\r\n"
	                   "TIME 1\r\nNumber of constraint vectors 1\r\nVertexId 0 Vector 0  0  0.1 \r\n"
	                   "\n\nTime 2\nNumber of constraint vectors 0\n"
	                   "Time 2.5\nNumber of constraint vectors 2\nVertexId 0 Vector 0.1 0.1 0\n"
	                   "VertexId 10 Vector 0.1 0.1 -0";
	scn_velocities v;
	scn_error err;
	REQUIRE(parse(text, 0, &v, &err) == SCN_OK);
	REQUIRE(v.block_count == 4 && v.entry_count == 4);
	check_block(&v, 0, 0.0, 0, 1, 2);
	check_block(&v, 1, 1.0, 1, 1, 6);
	check_block(&v, 3, 2.5, 2, 2, 13);
	check_entry(&v, 1, 0, 0.0f, 0.0f, 0.1f, 8);
	check_entry(&v, 3, 10, 0.1f, 0.1f, 0.0f, 16);
	CHECK(signbit(v.entries[3].velocity[2]));
	scn_vel_free(&v);

	/* Equal times are allowed (a zero-length block), and with vertex_count 0 any id is. */
	REQUIRE(parse("Time 1\nNumber of constraint vectors 1\nVertexId 2000000000 Vector 0 0 0\n"
	              "Time 1\nNumber of constraint vectors 0\n",
	              0, &v, &err) == SCN_OK);
	CHECK(v.block_count == 2 && v.entries[0].vertex == 2000000000);
	scn_vel_free(&v);
}

typedef struct bad_case {
	const char *text;
	int vertex_count;
	const char *message; /* the whole expected message */
} bad_case;

static const bad_case bad_cases[] = {
    {"", 0, "bad.vel:1: no blocks: the file is empty (expected 'Time t' blocks)"},
    {"\n \n\t\r\n", 0, "bad.vel:3: no blocks: the file is empty (expected 'Time t' blocks)"},
    {"Time 0\nNumber of constraint vectors 0\nHello 3\n", 0,
     "bad.vel:3: unknown line starting with 'Hello' (expected 'Time', 'Number of constraint vectors' or "
     "'VertexId')"},
    {"Time zero\n", 0, "bad.vel:1: time 'zero' is not a number in [0, 1e+07] s"},
    {"Time 1.5x\n", 0, "bad.vel:1: time '1.5x' is not a number in [0, 1e+07] s"},
    {"Time nan\n", 0, "bad.vel:1: time 'nan' is not a number in [0, 1e+07] s"},
    {"Time 2e7\n", 0, "bad.vel:1: time '2e7' is not a number in [0, 1e+07] s"},
    {"Time -1\n", 0, "bad.vel:1: time -1 is not in [0, 1e+07] s"},
    {"Time 0 s\n", 0, "bad.vel:1: expected 'Time t'"},
    {"Time 2\nNumber of constraint vectors 0\nTime 1\nNumber of constraint vectors 0\n", 0,
     "bad.vel:3: time 1 is before the previous block's time 2 (line 1)"},
    {"Time 0\nNumber of constraint vectors -1\n", 0,
     "bad.vel:2: '-1' is not a number of constraint vectors in [0, 10000000]"},
    {"Time 0\nNumber of constraint vectors 10000001\n", 0,
     "bad.vel:2: '10000001' is not a number of constraint vectors in [0, 10000000]"},
    {"Time 0\nNumber of constraint vectors 99999999999999999999999\n", 0,
     "bad.vel:2: '99999999999999999999999' is not a number of constraint vectors in [0, 10000000]"},
    /* A huge but allowed count reserves nothing: the mismatch shows at the end. */
    {"Time 0\nNumber of constraint vectors 10000000\nVertexId 0 Vector 0 0 0\n", 0,
     "bad.vel:3: end of file: block at line 1 declares 10000000 constraint vectors, found 1"},
    {"Time 0\nNumber of vectors 1\n", 0, "bad.vel:2: expected 'Number of constraint vectors N'"},
    {"Number of constraint vectors 1\n", 0, "bad.vel:1: 'Number of constraint vectors' before any 'Time' line"},
    {"Time 0\nNumber of constraint vectors 1\nNumber of constraint vectors 1\n", 0,
     "bad.vel:3: a second 'Number of constraint vectors' line for the block at line 1"},
    {"Time 0\nTime 1\n", 0, "bad.vel:2: block at line 1 has no 'Number of constraint vectors' line"},
    {"Time 0\n", 0, "bad.vel:1: end of file: block at line 1 has no 'Number of constraint vectors' line"},
    {"VertexId 0 Vector 0 0 0\n", 0, "bad.vel:1: 'VertexId' before any 'Time' line"},
    {"Time 0\nVertexId 0 Vector 0 0 0\n", 0,
     "bad.vel:2: 'VertexId' before the 'Number of constraint vectors' line of the block at line 1"},
    {"Time 0\nNumber of constraint vectors 3\nVertexId 0 Vector 0 0 0\nVertexId 1 Vector 0 0 0\n"
     "Time 1\nNumber of constraint vectors 0\n",
     0, "bad.vel:5: block at line 1 declares 3 constraint vectors, found 2"},
    {"Time 0\nNumber of constraint vectors 3\nVertexId 0 Vector 0 0 0\nVertexId 1 Vector 0 0 0\n\n", 0,
     "bad.vel:5: end of file: block at line 1 declares 3 constraint vectors, found 2"},
    {"Time 0\nNumber of constraint vectors 1\nVertexId 0 Vector 0 0 0\nVertexId 1 Vector 0 0 0\n", 0,
     "bad.vel:4: block at line 1 declares 1 constraint vectors, found more"},
    {"Time 0\nNumber of constraint vectors 1\nVertexId 0 0 0 0 0\n", 0,
     "bad.vel:3: expected 'VertexId i Vector x y z'"},
    {"Time 0\nNumber of constraint vectors 1\nVertexId 0 Vector 0 0\n", 0,
     "bad.vel:3: expected 'VertexId i Vector x y z'"},
    {"Time 0\nNumber of constraint vectors 1\nVertexId 1.5 Vector 0 0 0\n", 0,
     "bad.vel:3: vertex id '1.5' is not an integer"},
    {"Time 0\nNumber of constraint vectors 1\nVertexId -1 Vector 0 0 0\n", 0, "bad.vel:3: vertex id -1 is negative"},
    {"Time 0\nNumber of constraint vectors 1\nVertexId 9 Vector 0 0 0\n", 9,
     "bad.vel:3: vertex id 9 is out of range: the object has 9 vertices (0 to 8)"},
    {"Time 0\nNumber of constraint vectors 1\nVertexId 0 Vector nan 0 0\n", 0,
     "bad.vel:3: velocity component 'nan' is not a number in [-1000, 1000] m/s"},
    {"Time 0\nNumber of constraint vectors 1\nVertexId 0 Vector 0 -inf 0\n", 0,
     "bad.vel:3: velocity component '-inf' is not a number in [-1000, 1000] m/s"},
    {"Time 0\nNumber of constraint vectors 1\nVertexId 0 Vector 0 0 1e300\n", 0,
     "bad.vel:3: velocity component '1e300' is not a number in [-1000, 1000] m/s"},
    {"Time 0\nNumber of constraint vectors 1\nVertexId 0 Vector 800 0 800\n", 0,
     "bad.vel:3: speed 1131.37085 m/s is over the limit of 1000 m/s"},
    {"Time 0\nNumber of constraint vectors 3\nVertexId 5 Vector 0 0 0\nVertexId 6 Vector 0 0 0\n"
     "VertexId 5 Vector 1 0 0\n",
     0, "bad.vel:5: vertex 5 appears twice in the block at line 1 (first at line 3)"},
};

static void reject_bad_input(void)
{
	for (size_t i = 0; i < sizeof bad_cases / sizeof bad_cases[0]; i++) {
		const bad_case *c = &bad_cases[i];
		scn_velocities v = {.block_count = 99};
		scn_error err;
		scn_status st = parse(c->text, c->vertex_count, &v, &err);
		CHECK_MSG(st == SCN_ERROR_PARSE && err.status == SCN_ERROR_PARSE, "case %zu: status %d", i, (int)st);
		CHECK_MSG(strcmp(err.message, c->message) == 0, "case %zu:\n  got      %s\n  expected %s", i, err.message,
		          c->message);
		CHECK_MSG(v.block_count == 0 && v.entry_count == 0 && !v.blocks && !v.entries, "case %zu: output not empty",
		          i);
	}
}

/* What a text reader must survive: a NUL byte, an endless line, a huge block count. */
static void reject_binary_and_long_lines(void)
{
	static const char with_nul[] = "Time 0\nNumber of\0 constraint vectors 0\n";
	scn_velocities v;
	scn_error err = {0};
	CHECK(scn_vel_parse(with_nul, sizeof with_nul - 1, "bad.vel", 0, &v, &err) == SCN_ERROR_PARSE);
	CHECK_MSG(strcmp(err.message, "bad.vel:2: a NUL byte: not a text file") == 0, "%s", err.message);

	char long_line[2000];
	memset(long_line, '0', sizeof long_line);
	memcpy(long_line, "Time 0\nTime ", 12);
	long_line[sizeof long_line - 1] = '\0';
	CHECK(parse(long_line, 0, &v, &err) == SCN_ERROR_PARSE);
	CHECK_MSG(strcmp(err.message, "bad.vel:2: line longer than 512 characters") == 0, "%s", err.message);

	/* Many well-formed blocks grow the arrays past several doublings. */
	size_t cap = 400000, n = 0;
	char *text = malloc(cap);
	REQUIRE(text);
	for (int k = 0; k < 3000; k++)
		n += (size_t)snprintf(text + n, cap - n,
		                      "Time %d\nNumber of constraint vectors 2\nVertexId %d Vector 0 0 %d\n"
		                      "VertexId %d Vector 0 0 0\n",
		                      k, k, k % 100, k + 1);
	CHECK(scn_vel_parse(text, n, "many.vel", 0, &v, &err) == SCN_OK);
	CHECK(v.block_count == 3000 && v.entry_count == 6000);
	CHECK(v.block_count == 3000 && v.entries[5999].vertex == 3000 && v.entries[5998].velocity[2] == 99.0f &&
	      v.blocks[2999].line == 4 * 2999 + 1);
	scn_vel_free(&v);
	free(text);
}

static bool same_bits(const scn_velocities *a, const scn_velocities *b)
{
	if (a->block_count != b->block_count || a->entry_count != b->entry_count)
		return false;
	for (int k = 0; k < a->block_count; k++)
		if (memcmp(&a->blocks[k].time, &b->blocks[k].time, sizeof(double)) != 0 ||
		    a->blocks[k].count != b->blocks[k].count || a->blocks[k].first != b->blocks[k].first)
			return false;
	for (int e = 0; e < a->entry_count; e++)
		if (a->entries[e].vertex != b->entries[e].vertex ||
		    memcmp(a->entries[e].velocity, b->entries[e].velocity, sizeof(float[3])) != 0)
			return false;
	return true;
}

static uint64_t rng = 0x9e3779b97f4a7c15ull;

static uint32_t next_bits(void)
{
	rng ^= rng >> 12;
	rng ^= rng << 25;
	rng ^= rng >> 27;
	return (uint32_t)((rng * 0x2545f4914f6cdd1dull) >> 32);
}

/* A float from random bits, kept finite and under 500 m/s per component. */
static float random_component(void)
{
	for (;;) {
		uint32_t bits = next_bits();
		float f;
		memcpy(&f, &bits, sizeof f);
		if (isfinite(f) && fabsf(f) < 500.0f)
			return f;
	}
}

static char *slurp(const char *path)
{
	char *text;
	size_t size;
	scn_error err = {0};
	return scn_read_file(path, 1 << 20, &text, &size, &err) == SCN_OK ? text : NULL;
}

static void write_read_round_trip(void)
{
	/* The seed example comes back byte for byte: the writer keeps the seed's layout. */
	const char *path = TELA_VEL_SCRATCH "/test_velocities_seed.vel";
	scn_velocities v, back;
	scn_error err;
	REQUIRE(parse(seed_example, 0, &v, &err) == SCN_OK);
	REQUIRE(scn_vel_write(path, &v, &err) == SCN_OK);
	char *text = slurp(path);
	REQUIRE(text);
	CHECK_MSG(strcmp(text, seed_example) == 0, "written:\n%s", text);
	free(text);
	scn_vel_free(&v);

	/* Awkward values (random bit patterns, subnormals, thirds of a second) come back
	 * bit-identical. */
	path = TELA_VEL_SCRATCH "/test_velocities_random.vel";
	double time = 0.0;
	for (int k = 0; k < 200; k++) {
		time += k % 7 == 0 ? 0.0 : 1.0 / 3.0 + (double)(next_bits() % 1000) * 1e-9;
		REQUIRE(scn_vel_add_block(&v, time, &err) == SCN_OK);
		for (int e = 0; e < k % 5; e++) {
			float vel[3] = {random_component(), random_component(), random_component()};
			if (k == 3)
				vel[0] = 1e-42f;
			REQUIRE(scn_vel_add_entry(&v, 7 * e + k, vel, &err) == SCN_OK);
		}
	}
	REQUIRE(scn_vel_write(path, &v, &err) == SCN_OK);
	REQUIRE(scn_vel_read(path, 0, &back, &err) == SCN_OK);
	CHECK(same_bits(&v, &back));
	CHECK(back.entries[back.blocks[3].first].velocity[0] == 1e-42f);
	scn_vel_free(&back);
	scn_vel_free(&v);
}

static void writer_refuses(void)
{
	const char *path = TELA_VEL_SCRATCH "/test_velocities_refused.vel";
	remove(path);
	scn_velocities v = {0};
	scn_error err = {0};
	CHECK(scn_vel_write(path, &v, &err) == SCN_ERROR_PARSE); /* no blocks: unreadable */
	REQUIRE(scn_vel_add_block(&v, 2.0, &err) == SCN_OK);
	REQUIRE(scn_vel_add_block(&v, 1.0, &err) == SCN_OK);
	err = (scn_error){0};
	CHECK(scn_vel_write(path, &v, &err) == SCN_ERROR_PARSE);
	CHECK_MSG(strstr(err.message, "block 2: time 1 is before the previous block's time 2") != NULL, "%s",
	          err.message);
	FILE *f = fopen(path, "r");
	CHECK(f == NULL); /* nothing written */
	if (f)
		fclose(f);
	scn_vel_free(&v);

	const float twice[3] = {0.0f, 0.0f, 0.0f};
	REQUIRE(scn_vel_add_block(&v, 0.0, &err) == SCN_OK);
	REQUIRE(scn_vel_add_entry(&v, 4, twice, &err) == SCN_OK);
	REQUIRE(scn_vel_add_entry(&v, 4, twice, &err) == SCN_OK);
	err = (scn_error){0};
	CHECK(scn_vel_check(&v, "mem", 0, &err) == SCN_ERROR_PARSE);
	CHECK_MSG(strcmp(err.message, "mem: block 1 (time 0): vertex 4 appears twice") == 0, "%s", err.message);
	err = (scn_error){0};
	CHECK(scn_vel_write(TELA_VEL_SCRATCH "/no-such-dir/out.vel", &v, &err) == SCN_ERROR_PARSE);
	scn_vel_free(&v);

	REQUIRE(scn_vel_add_block(&v, 0.0, &err) == SCN_OK);
	err = (scn_error){0};
	CHECK(scn_vel_write(TELA_VEL_SCRATCH "/no-such-dir/out.vel", &v, &err) == SCN_ERROR_IO);
	CHECK_MSG(strstr(err.message, "/no-such-dir/out.vel: cannot open for writing") != NULL, "%s", err.message);
	scn_vel_free(&v);
}

static void axes_mapping(void)
{
	const float in[3] = {1.0f, 2.0f, 3.0f};
	float out[3];
	scn_axes_to_world(SCN_AXES_Y_UP, in, out);
	CHECK(out[0] == 1.0f && out[1] == 2.0f && out[2] == 3.0f);
	scn_axes_to_world(SCN_AXES_Z_UP, in, out);
	CHECK(out[0] == 1.0f && out[1] == 3.0f && out[2] == -2.0f);

	/* The images of the unit vectors are the columns of the map: the seed's up (+z)
	 * must become tela's up (+y), and the determinant +1 (a rotation, no mirror). */
	float m[3][3];
	for (int c = 0; c < 3; c++) {
		float e[3] = {0.0f, 0.0f, 0.0f}, col[3];
		e[c] = 1.0f;
		scn_axes_to_world(SCN_AXES_Z_UP, e, col);
		for (int r = 0; r < 3; r++)
			m[r][c] = col[r];
	}
	CHECK(m[0][2] == 0.0f && m[1][2] == 1.0f && m[2][2] == 0.0f);
	float det = m[0][0] * (m[1][1] * m[2][2] - m[1][2] * m[2][1]) - m[0][1] * (m[1][0] * m[2][2] - m[1][2] * m[2][0]) +
	            m[0][2] * (m[1][0] * m[2][1] - m[1][1] * m[2][0]);
	CHECK(det == 1.0f);
	for (int a = 0; a < 3; a++)
		for (int b = 0; b < 3; b++) {
			float dot = m[0][a] * m[0][b] + m[1][a] * m[1][b] + m[2][a] * m[2][b];
			CHECK(dot == (a == b ? 1.0f : 0.0f));
		}

	float same[3] = {1.0f, 2.0f, 3.0f};
	scn_axes_to_world(SCN_AXES_Z_UP, same, same); /* in place */
	CHECK(same[0] == 1.0f && same[1] == 3.0f && same[2] == -2.0f);
}

/* A world of `grids` 3 x 3 grids without gravity, collisions or (with springless) springs,
 * so every vertex either follows its prescription or coasts in a straight line. */
static sim_world *small_world(int grids, bool springless)
{
	sim_world_def def = sim_world_def_default();
	def.gravity[1] = 0.0f;
	def.collisions = false;
	sim_world *w = sim_world_create(&def);
	if (!w)
		return NULL;
	sim_grid_def g = sim_grid_def_default();
	g.nx = g.ny = 3;
	if (springless)
		for (int k = 0; k < SIM_SPRING_KIND_COUNT; k++)
			g.material.stiffness[k] = g.material.damping[k] = 0.0f;
	for (int i = 0; i < grids; i++) {
		g.origin[0] = (float)(2 * i);
		if (sim_world_add_grid(w, &g) < 0)
			sim_world_destroy(&w);
	}
	return w;
}

static void copy_positions(const sim_world *w, float (*out)[3])
{
	const vec4 *x = sim_world_positions(w);
	for (int i = 0; i < sim_world_vertex_count(w); i++)
		for (int c = 0; c < 3; c++)
			out[i][c] = x[i][c];
}

static bool step_until(sim_world *w, double t, float dt)
{
	while (sim_world_time(w) < t - 0.5 * dt)
		if (sim_world_step(w, dt) != SIM_OK)
			return false;
	return true;
}

/* Position error after n steps of float arithmetic: far below v * dt (1e-3 m here), the
 * error of one block applied a step early or late. */
#define POSITION_TOL 1e-4

static void check_moved(const sim_world *w, const float (*x0)[3], int vertex, double dx, double dy, double dz)
{
	const vec4 *x = sim_world_positions(w);
	CHECK_NEAR(x[vertex][0] - x0[vertex][0], dx, POSITION_TOL);
	CHECK_NEAR(x[vertex][1] - x0[vertex][1], dy, POSITION_TOL);
	CHECK_NEAR(x[vertex][2] - x0[vertex][2], dz, POSITION_TOL);
}

/* Vertex 0 moves at (0.1, 0, 0) for 1 s, then (0, 0.2, 0) for 1 s, then is released and
 * coasts at (0, 0.2, 0).  Vertex 4 moves at (0, 0.05, 0) in the first block only: the
 * second block does not name it, so it is released at t = 1 and coasts on. */
static const char apply_text[] = "Time 0\nNumber of constraint vectors 2\n"
                                 "VertexId 0 Vector 0.1 0 0\nVertexId 4 Vector 0 0.05 0\n"
                                 "Time 1\nNumber of constraint vectors 1\nVertexId 0 Vector 0 0.2 0\n"
                                 "Time 2\nNumber of constraint vectors 0\n";

static void apply_to_world(void)
{
	scn_velocities v;
	scn_error err;
	REQUIRE(parse(apply_text, 9, &v, &err) == SCN_OK);
	sim_world *w = small_world(2, true);
	REQUIRE(w);
	float x0[18][3];
	copy_positions(w, x0);
	/* The second grid (vertices 9..17) gets the file: vertex 0 is world vertex 9. */
	REQUIRE(scn_vel_apply(w, 9, &v, SCN_AXES_Y_UP) == SIM_OK);
	const float dt = 0.01f;
	REQUIRE(step_until(w, 1.0, dt));
	check_moved(w, x0, 9, 0.1, 0.0, 0.0);
	check_moved(w, x0, 13, 0.0, 0.05, 0.0);
	REQUIRE(step_until(w, 2.0, dt));
	check_moved(w, x0, 9, 0.1, 0.2, 0.0);
	check_moved(w, x0, 13, 0.0, 0.1, 0.0);
	REQUIRE(step_until(w, 3.0, dt));
	check_moved(w, x0, 9, 0.1, 0.4, 0.0);
	check_moved(w, x0, 13, 0.0, 0.15, 0.0);
	/* The others never moved: no springs, no gravity, and the first grid had no file. */
	for (int i = 0; i < 18; i++)
		if (i != 9 && i != 13)
			check_moved(w, x0, i, 0.0, 0.0, 0.0);
	/* Free again: inverse mass back in w. */
	CHECK(sim_world_positions(w)[9][3] > 0.0f && sim_world_positions(w)[13][3] > 0.0f);
	sim_world_destroy(&w);
	scn_vel_free(&v);
}

/* With springs pulling, a prescribed vertex still moves exactly as prescribed; z-up files
 * lift along +y. */
static void apply_z_up_with_springs(void)
{
	scn_velocities v;
	scn_error err;
	REQUIRE(parse("Time 0.5\nNumber of constraint vectors 1\nVertexId 8 Vector 0.1 0.2 0.3\n", 9, &v, &err) ==
	        SCN_OK);
	sim_world *w = small_world(1, false);
	REQUIRE(w);
	float x0[9][3];
	copy_positions(w, x0);
	REQUIRE(scn_vel_apply(w, 0, &v, SCN_AXES_Z_UP) == SIM_OK);
	/* 1 ms steps: the default springs are too stiff for explicit steps of 10 ms. */
	REQUIRE(step_until(w, 0.5, 0.001f));
	check_moved(w, x0, 8, 0.0, 0.0, 0.0); /* not before its block's time */
	REQUIRE(step_until(w, 1.5, 0.001f));
	check_moved(w, x0, 8, 0.1, 0.3, -0.2);
	sim_world_destroy(&w);
	scn_vel_free(&v);
}

static void apply_rejects_out_of_world(void)
{
	scn_velocities v;
	scn_error err;
	REQUIRE(parse(apply_text, 0, &v, &err) == SCN_OK);
	sim_world *w = small_world(1, true);
	REQUIRE(w);
	float x0[9][3];
	copy_positions(w, x0);
	/* Vertex 4 at offset 5 is world vertex 9: outside a 9-vertex world.  Nothing may be
	 * added, not even the blocks for vertex 0 that come first. */
	CHECK(scn_vel_apply(w, 5, &v, SCN_AXES_Y_UP) == SIM_ERROR_INVALID);
	CHECK(scn_vel_apply(w, 9, &v, SCN_AXES_Y_UP) == SIM_ERROR_INVALID);
	CHECK(scn_vel_apply(w, -1, &v, SCN_AXES_Y_UP) == SIM_ERROR_INVALID);
	REQUIRE(step_until(w, 0.5, 0.01f));
	for (int i = 0; i < 9; i++)
		check_moved(w, x0, i, 0.0, 0.0, 0.0);
	sim_world_destroy(&w);
	scn_vel_free(&v);
}

/* ---- trajectories ---------------------------------------------------------------------------- */

static const int traj_vertices[] = {3, 7};
static const scn_traj_segment traj_segments[] = {
    {{0.3, -0.1, 0.2}, 1.0},
    {{-0.1, 0.0, 0.05}, 0.374}, /* rounds to 37 slots of 10 ms */
};

static scn_traj_def traj_def(void)
{
	scn_traj_def def = scn_traj_def_default();
	def.vertices = traj_vertices;
	def.vertex_count = 2;
	def.segments = traj_segments;
	def.segment_count = 2;
	def.start = 1.0;
	return def;
}

static double norm3(const double *d)
{
	return sqrt(d[0] * d[0] + d[1] * d[1] + d[2] * d[2]);
}

static double speed_of(const scn_velocities *v, int k)
{
	const float *u = v->entries[v->blocks[k].first].velocity;
	return sqrt((double)u[0] * u[0] + (double)u[1] * u[1] + (double)u[2] * u[2]);
}

static bool zero_block(const scn_velocities *v, int k)
{
	const scn_vel_block *b = &v->blocks[k];
	bool zero = b->count == 2;
	for (int e = b->first; e < b->first + b->count; e++)
		for (int c = 0; c < 3; c++)
			zero = zero && v->entries[e].velocity[c] == 0.0f;
	return zero;
}

static void traj_layout(void)
{
	scn_traj_def def = traj_def();
	scn_velocities v;
	scn_error err = {0};
	REQUIRE(scn_traj_generate(&def, &v, &err) == SCN_OK);
	/* rest, 100 moving slots, rest, 37 moving slots, the final (holding) zero block */
	REQUIRE(v.block_count == 1 + 100 + 1 + 37 + 1);
	CHECK(v.blocks[0].time == 1.0 && zero_block(&v, 0));
	CHECK_NEAR(v.blocks[1].time, 1.5, 1e-12);
	CHECK_NEAR(v.blocks[100].time, 2.49, 1e-12);
	CHECK(zero_block(&v, 101));
	CHECK_NEAR(v.blocks[101].time, 2.5, 1e-12);
	CHECK_NEAR(v.blocks[102].time, 3.0, 1e-12);
	CHECK_NEAR(v.blocks[139].time, 3.37, 1e-12);
	CHECK(zero_block(&v, 139));
	for (int k = 0; k < v.block_count; k++) {
		CHECK(v.blocks[k].count == 2);
		if (v.blocks[k].count != 2)
			break;
		const scn_vel_entry *e = &v.entries[v.blocks[k].first];
		CHECK(e[0].vertex == 3 && e[1].vertex == 7);
		CHECK(memcmp(e[0].velocity, e[1].velocity, sizeof e[0].velocity) == 0); /* rigid */
		if (k > 0 && k != 101)
			CHECK_NEAR(v.blocks[k].time - v.blocks[k - 1].time, k == 1 || k == 102 ? 0.5 : 0.01, 1e-9);
		if (k > 0 && k < 101)
			CHECK(!zero_block(&v, k));
	}
	CHECK(scn_vel_check(&v, "traj", 8, &err) == SCN_OK);
	scn_vel_free(&v);

	/* With release: after the final rest an empty block frees the set; with no rest the
	 * segments follow each other directly. */
	def.release = true;
	def.rest = 0.0;
	REQUIRE(scn_traj_generate(&def, &v, &err) == SCN_OK);
	REQUIRE(v.block_count == 100 + 37 + 1);
	CHECK(v.blocks[0].time == 1.0 && !zero_block(&v, 0));
	CHECK(v.blocks[137].count == 0);
	CHECK_NEAR(v.blocks[137].time, 2.37, 1e-12);
	scn_vel_free(&v);
	def.rest = 0.25;
	REQUIRE(scn_traj_generate(&def, &v, &err) == SCN_OK);
	REQUIRE(v.block_count == 1 + 100 + 1 + 37 + 1 + 1);
	CHECK(zero_block(&v, 139) && v.blocks[140].count == 0);
	CHECK_NEAR(v.blocks[140].time - v.blocks[139].time, 0.25, 1e-12);
	scn_vel_free(&v);
}

/* The blocks, each holding until the next, add up to the requested displacement. */
static void traj_integrates_exactly(void)
{
	scn_traj_def def = traj_def();
	scn_velocities v;
	scn_error err = {0};
	REQUIRE(scn_traj_generate(&def, &v, &err) == SCN_OK);
	double sum[3] = {0.0, 0.0, 0.0};
	for (int k = 0; k + 1 < v.block_count; k++) {
		double hold = v.blocks[k + 1].time - v.blocks[k].time;
		for (int c = 0; c < 3; c++)
			sum[c] += v.entries[v.blocks[k].first].velocity[c] * hold;
	}
	CHECK_NEAR(sum[0], 0.2, 1e-6);
	CHECK_NEAR(sum[1], -0.1, 1e-6);
	CHECK_NEAR(sum[2], 0.25, 1e-6);
	scn_vel_free(&v);
}

/* Profile shape per segment, against the minimum-jerk closed forms. */
static void check_segment_profile(const scn_velocities *v, int first, int n, const double *d)
{
	const double slot = 0.01, T = n * slot, dist = norm3(d);
	/* The first slot's average speed is dist * s(1/n) / slot with s(t) = 10t^3 - 15t^4 + 6t^5. */
	double tau = 1.0 / n, s1 = 10 * pow(tau, 3) - 15 * pow(tau, 4) + 6 * pow(tau, 5);
	CHECK_NEAR(speed_of(v, first), dist * s1 / slot, 1e-6);
	CHECK_NEAR(speed_of(v, first + n - 1), dist * s1 / slot, 1e-6);
	double peak_speed = 1.875 * dist / T, peak_accel = 10.0 / sqrt(3.0) * dist / (T * T);
	CHECK(speed_of(v, first) < 0.01 * peak_speed);
	double peak = 0.0;
	for (int k = first; k < first + n; k++) {
		peak = fmax(peak, speed_of(v, k));
		double change = fabs(speed_of(v, k) - speed_of(v, k - 1));
		CHECK_MSG(change <= peak_accel * slot + 1e-6, "block %d: speed changes by %g, bound %g", k, change,
		          peak_accel * slot);
	}
	CHECK_MSG(fabs(speed_of(v, first + n) - speed_of(v, first + n - 1)) <= peak_accel * slot + 1e-6,
	          "block %d: stopping jump", first + n);
	CHECK(peak <= peak_speed + 1e-6);
	CHECK_NEAR(peak, peak_speed, peak_accel * slot);
	/* Every moving velocity points along d. */
	for (int k = first; k < first + n; k++) {
		const float *u = v->entries[v->blocks[k].first].velocity;
		double along = (u[0] * d[0] + u[1] * d[1] + u[2] * d[2]) / dist;
		CHECK_NEAR(along, speed_of(v, k), 1e-6);
	}
}

static void traj_min_jerk_profile(void)
{
	scn_traj_def def = traj_def();
	scn_velocities v;
	scn_error err = {0};
	REQUIRE(scn_traj_generate(&def, &v, &err) == SCN_OK);
	check_segment_profile(&v, 1, 100, traj_segments[0].displacement);
	check_segment_profile(&v, 102, 37, traj_segments[1].displacement);
	scn_vel_free(&v);
}

/* Generated, written, read back: bit-identical, and accepted by the strict reader. */
static void traj_round_trip(void)
{
	scn_traj_def def = traj_def();
	def.release = true;
	scn_velocities v, back;
	scn_error err = {0};
	REQUIRE(scn_traj_generate(&def, &v, &err) == SCN_OK);
	const char *path = TELA_VEL_SCRATCH "/test_velocities_traj.vel";
	REQUIRE(scn_vel_write(path, &v, &err) == SCN_OK);
	CHECK_MSG(scn_vel_read(path, 8, &back, &err) == SCN_OK, "%s", err.message);
	CHECK(same_bits(&v, &back));
	scn_vel_free(&back);
	scn_vel_free(&v);
}

/* End to end: the generated blocks move the vertices by the displacement in a world. */
static void traj_moves_world_vertices(void)
{
	scn_traj_def def = traj_def();
	def.release = false;
	scn_velocities v;
	scn_error err = {0};
	REQUIRE(scn_traj_generate(&def, &v, &err) == SCN_OK);
	sim_world *w = small_world(1, false);
	REQUIRE(w);
	float x0[9][3];
	copy_positions(w, x0);
	REQUIRE(scn_vel_apply(w, 0, &v, SCN_AXES_Y_UP) == SIM_OK);
	REQUIRE(step_until(w, 4.0, 0.001f));
	check_moved(w, x0, 3, 0.2, -0.1, 0.25);
	check_moved(w, x0, 7, 0.2, -0.1, 0.25);
	CHECK(sim_world_positions(w)[3][3] == 0.0f); /* still held */
	sim_world_destroy(&w);
	scn_vel_free(&v);
}

static void traj_rejects(void)
{
	struct {
		const char *what;
		scn_traj_def def;
	} cases[8];
	scn_traj_segment zero_time = {{0.1, 0.0, 0.0}, 0.0}, too_fast = {{100.0, 0.0, 0.0}, 0.05},
	                 long_slow = {{0.1, 0.0, 0.0}, 10.0};
	static const int negative[] = {3, -1}, twice[] = {3, 3};
	int n = 0;
	cases[n].what = "vertex id -1 is negative";
	cases[n].def = traj_def();
	cases[n++].def.vertices = negative;
	cases[n].what = "vertex 3 is listed twice";
	cases[n].def = traj_def();
	cases[n++].def.vertices = twice;
	cases[n].what = "segment 1: duration 0 s is not in (0, 1e+07]";
	cases[n].def = traj_def();
	cases[n].def.segments = &zero_time;
	cases[n++].def.segment_count = 1;
	cases[n].what = "segment 1: speed";
	cases[n].def = traj_def();
	cases[n].def.segments = &too_fast;
	cases[n++].def.segment_count = 1;
	cases[n].what = "rate 0 Hz is not in (0, 1e6]";
	cases[n].def = traj_def();
	cases[n++].def.rate = 0.0;
	cases[n].what = "rest -1 s is not in [0, 1e+07]";
	cases[n].def = traj_def();
	cases[n++].def.rest = -1.0;
	cases[n].what = "no segments";
	cases[n].def = traj_def();
	cases[n++].def.segment_count = 0;
	cases[n].what = "more than 2000000 constraint vectors";
	cases[n].def = traj_def(); /* 1e7 blocks of 2 vertices, refused before allocating */
	cases[n].def.segments = &long_slow;
	cases[n].def.segment_count = 1;
	cases[n++].def.rate = 1e6;
	for (int i = 0; i < n; i++) {
		scn_velocities v = {.block_count = 5};
		scn_error err = {0};
		CHECK_MSG(scn_traj_generate(&cases[i].def, &v, &err) == SCN_ERROR_PARSE, "case %d", i);
		CHECK_MSG(strstr(err.message, cases[i].what) != NULL, "case %d: '%s', expected '%s'", i, err.message,
		          cases[i].what);
		CHECK(v.block_count == 0 && v.blocks == NULL && v.entries == NULL);
	}
}

static const test_case tests[] = {
    TEST(parse_seed_example),
    TEST(read_seed_file),
    TEST(parse_lenient_layout),
    TEST(reject_bad_input),
    TEST(reject_binary_and_long_lines),
    TEST(write_read_round_trip),
    TEST(writer_refuses),
    TEST(axes_mapping),
    TEST(apply_to_world),
    TEST(apply_z_up_with_springs),
    TEST(apply_rejects_out_of_world),
    TEST(traj_layout),
    TEST(traj_integrates_exactly),
    TEST(traj_min_jerk_profile),
    TEST(traj_round_trip),
    TEST(traj_moves_world_vertices),
    TEST(traj_rejects),
};

TEST_MAIN(tests)
