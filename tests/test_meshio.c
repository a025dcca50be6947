/* OBJ and PLY: reading (every accepted form, every error with its line or byte offset),
 * the writers' round trips, exported frames and the choice of format by name.  Inputs are
 * written out here by hand (text, or bytes packed here rather than by the writer under
 * test), so that the expected vertices, triangles, lines and offsets are known
 * independently of the code. */
#include "scenes/mesh.h"
#include "scenes/scenes.h"
#include "sim/sim.h"

#include "test.h"

#include <stdarg.h>
#include <stdint.h>
#include <sys/stat.h>
#include <unistd.h>

/* ---- Expected meshes -------------------------------------------------------------------------- */

/* The unit cube, vertices in this order, faces as quads counter-clockwise from outside. */
static const float cube_vertices[8][3] = {{0, 0, 0}, {1, 0, 0}, {1, 1, 0}, {0, 1, 0},
                                          {0, 0, 1}, {1, 0, 1}, {1, 1, 1}, {0, 1, 1}};
static const int cube_quads[6][4] = {{0, 3, 2, 1}, {4, 5, 6, 7}, {0, 1, 5, 4},
                                     {3, 7, 6, 2}, {0, 4, 7, 3}, {1, 2, 6, 5}};

/* A quad a b c d fans into (a b c) and (a c d). */
static void cube_triangles(int out[36])
{
	for (int q = 0; q < 6; q++) {
		const int *f = cube_quads[q];
		const int t[6] = {f[0], f[1], f[2], f[0], f[2], f[3]};
		memcpy(out + 6 * q, t, sizeof t);
	}
}

static bool mesh_is_empty(const scn_mesh *m)
{
	return m->vertex_count == 0 && m->triangle_count == 0 && !m->positions && !m->triangles;
}

static bool same_mesh(const scn_mesh *a, const scn_mesh *b)
{
	return a->vertex_count == b->vertex_count && a->triangle_count == b->triangle_count &&
	       memcmp(a->positions, b->positions, 3 * sizeof(float) * (size_t)a->vertex_count) == 0 &&
	       memcmp(a->triangles, b->triangles, 3 * sizeof(int) * (size_t)a->triangle_count) == 0;
}

/* The cube exactly: its vertices in file order, the fanned quads, closed, outward. */
static void check_cube(const scn_mesh *m, const scn_mesh_report *r)
{
	int tris[36];
	cube_triangles(tris);
	REQUIRE(m->vertex_count == 8 && m->triangle_count == 12);
	CHECK(memcmp(m->positions, cube_vertices, sizeof cube_vertices) == 0);
	CHECK(memcmp(m->triangles, tris, sizeof tris) == 0);
	CHECK(r->facets == 12 && r->file_vertices == 8 && r->welded == 0 && r->unused == 0 && r->degenerate == 0);
	CHECK(r->closed && r->boundary_edges == 0 && r->nonmanifold_edges == 0 && r->misoriented_edges == 0);
	CHECK_NEAR(r->signed_volume, 1.0, 1e-12);
}

static scn_status obj(const char *s, scn_mesh *m, scn_mesh_report *r, scn_error *e)
{
	*e = (scn_error){0};
	return scn_obj_parse((const uint8_t *)s, strlen(s), "t.obj", SCN_WELD_TOLERANCE, m, r, e);
}

static scn_status ply(const void *d, size_t n, scn_mesh *m, scn_mesh_report *r, scn_error *e)
{
	*e = (scn_error){0};
	return scn_ply_parse(d, n, "t.ply", SCN_WELD_TOLERANCE, m, r, e);
}

static void expect_obj_error(const char *s, const char *message)
{
	scn_mesh m;
	scn_mesh_report r;
	scn_error e;
	scn_status st = obj(s, &m, &r, &e);
	CHECK_MSG(st == SCN_ERROR_PARSE, "status %d for '%s'", (int)st, message);
	CHECK_MSG(strcmp(e.message, message) == 0, "\n  got      '%s'\n  expected '%s'", e.message, message);
	CHECK(mesh_is_empty(&m));
	scn_mesh_free(&m);
}

static void expect_ply_error(const void *d, size_t n, const char *message)
{
	scn_mesh m;
	scn_mesh_report r;
	scn_error e;
	scn_status st = ply(d, n, &m, &r, &e);
	CHECK_MSG(st == SCN_ERROR_PARSE, "status %d for '%s'", (int)st, message);
	CHECK_MSG(strcmp(e.message, message) == 0, "\n  got      '%s'\n  expected '%s'", e.message, message);
	CHECK(mesh_is_empty(&m));
	scn_mesh_free(&m);
}

static void expect_ply_text_error(const char *s, const char *message)
{
	expect_ply_error(s, strlen(s), message);
}

/* ---- OBJ -------------------------------------------------------------------------------------- */

/* Every reference form, relative indices, w and colours, comments and the statements
 * skipped without a word, CRLF line ends. */
static void test_obj_cube_every_form(void)
{
	const char *s = "# a unit cube\r\n"
	                "mtllib cube.mtl\r\n"
	                "o unit cube  \r\n"
	                "v 0 0 0\r\n"
	                "v 1 0 0 1.0\r\n"                /* w */
	                "v 1 1 0\r\n"
	                "v 0 1 0 0.5 0.25 1\r\n"         /* a colour */
	                "v 0 0 1\n"
	                "v 1 0 1\n"
	                "\tv   1 1 1   # trailing comment\n"
	                "v 0 1 1 1 0 0 1\n"              /* a colour with alpha */
	                "vt 0 0\nvn 0 0 -1\nvp 0.5\ng sides\nusemtl red\ns off\n"
	                "\n"
	                "f 1 4 3 2\n"
	                "f 5/1 6/1 7/1 8/1\n"
	                "f 1//1 2//1 6//1 5//1\n"
	                "f 4/1/1 8/1/1 7/1/1 3/1/1\n"
	                "f -8 -4 -1 -5\n"                /* 1 5 8 4 */
	                "f 2 3 7 6 # the last\n"
	                "o second name\n";
	scn_mesh m;
	scn_mesh_report r;
	scn_error e;
	REQUIRE(obj(s, &m, &r, &e) == SCN_OK);
	check_cube(&m, &r);
	CHECK(r.format == SCN_MESH_OBJ && !r.binary);
	CHECK(r.ignored == 0);
	CHECK(strcmp(m.name, "unit cube") == 0);
	scn_mesh_free(&m);
}

/* A pentagon fans from its first vertex; negative indices count back from the last vertex
 * read so far, not from the end of the file. */
static void test_obj_fan_and_relative_indices(void)
{
	const char *s = "v 0 0 0\nv 2 0 0\nv 3 2 0\nv 1 3 0\nv -1 2 0\nf 1 2 3 4 5\n";
	scn_mesh m;
	scn_mesh_report r;
	scn_error e;
	REQUIRE(obj(s, &m, &r, &e) == SCN_OK);
	const int fan[9] = {0, 1, 2, 0, 2, 3, 0, 3, 4};
	REQUIRE(m.triangle_count == 3);
	CHECK(memcmp(m.triangles, fan, sizeof fan) == 0);
	CHECK(r.facets == 3 && r.boundary_edges == 5 && r.misoriented_edges == 0);
	scn_mesh_free(&m);
	s = "v 0 0 0\nv 1 0 0\nv 0 1 0\nf -3 -2 -1\nv 1 1 0\nf -3 -1 -2\n";
	REQUIRE(obj(s, &m, &r, &e) == SCN_OK);
	const int rel[6] = {0, 1, 2, 1, 3, 2};
	REQUIRE(m.triangle_count == 2);
	CHECK(memcmp(m.triangles, rel, sizeof rel) == 0);
	scn_mesh_free(&m);
}

/* The file's numbering stays, less a vertex welded into an earlier one and one no triangle
 * uses; a triangle that welding collapses is removed with its line. */
static void test_obj_numbering_weld_unused(void)
{
	const char *s = "v 5 5 5\n"    /* unused */
	                "v 0 0 0\n"    /* A */
	                "v 1 0 0\n"    /* B */
	                "v 0 1 0\n"    /* C */
	                "v 1e-7 0 0\n" /* A again, within the tolerance */
	                "v 1 1 0\n"    /* D */
	                "f 2 3 4\n"
	                "f 3 6 4\n"
	                "f 5 2 3\n"; /* line 9: A A B */
	scn_mesh m;
	scn_mesh_report r;
	scn_error e;
	REQUIRE(obj(s, &m, &r, &e) == SCN_OK);
	const float pos[12] = {0, 0, 0, 1, 0, 0, 0, 1, 0, 1, 1, 0};
	const int tris[6] = {0, 1, 2, 1, 3, 2};
	REQUIRE(m.vertex_count == 4 && m.triangle_count == 2);
	CHECK(memcmp(m.positions, pos, sizeof pos) == 0);
	CHECK(memcmp(m.triangles, tris, sizeof tris) == 0);
	CHECK(r.file_vertices == 6 && r.welded == 1 && r.unused == 1);
	CHECK(r.facets == 3 && r.degenerate == 1 && r.first_degenerate_line == 9);
	scn_mesh_free(&m);
}

/* Statements tela does not know are counted for a warning, not refused. */
static void test_obj_unknown_statements(void)
{
	const char *s = "v 0 0 0\nv 1 0 0\nv 0 1 0\nl 1 2\ncurv 0 1 1 2\nf 1 2 3\n";
	scn_mesh m;
	scn_mesh_report r;
	scn_error e;
	REQUIRE(obj(s, &m, &r, &e) == SCN_OK);
	CHECK(m.triangle_count == 1);
	CHECK(r.ignored == 2 && r.first_ignored_line == 4 && strcmp(r.first_ignored, "l") == 0);
	scn_mesh_free(&m);
}

#define TRI "v 0 0 0\nv 1 0 0\nv 0 1 0\n" /* lines 1-3 */

static void test_obj_errors_name_the_line(void)
{
	expect_obj_error("v 0 0\n", "t.obj:1: v needs 3 coordinates, found 2");
	expect_obj_error("v 0 0 0\nv 1 x 0\n", "t.obj:2: v: coordinate 'x' is not a number");
	expect_obj_error("v 0 0 0\n\nv 1.5x 0 0\n", "t.obj:3: v: coordinate '1.5x' is not a number");
	expect_obj_error("v 0 nan 0\n", "t.obj:1: v: coordinate 'nan' is not a finite number");
	expect_obj_error("v 0 0 -INF\n", "t.obj:1: v: coordinate '-INF' is not a finite number");
	expect_obj_error("v 2e6 0 0\n", "t.obj:1: v: coordinate '2e6' is beyond the coordinate limit of 1e6 m");
	expect_obj_error("v 0 0 0 1 2 3 4 5\n", "t.obj:1: v: more than 7 values (x y z, then w or a colour r g b [a])");
	expect_obj_error("v 0 0 0 red\n", "t.obj:1: v: 'red' is not a number");
	expect_obj_error(TRI "f 1 2\n", "t.obj:4: f: a face needs at least 3 vertices, found 2");
	expect_obj_error(TRI "f\n", "t.obj:4: f: a face needs at least 3 vertices, found 0");
	expect_obj_error(TRI "f 0 1 2\n", "t.obj:4: f: vertex index 0: OBJ counts vertices from 1 (or back from -1)");
	expect_obj_error(TRI "f 1 2 4\n",
	                 "t.obj:4: f: vertex index 4 is out of range (3 vertices so far: a face refers to earlier "
	                 "'v' lines)");
	expect_obj_error(TRI "f -4 1 2\n",
	                 "t.obj:4: f: vertex index -4 is out of range (3 vertices so far: a face refers to earlier "
	                 "'v' lines)");
	expect_obj_error("v 0 0 0\nf 1 2 3\nv 1 0 0\nv 0 1 0\n",
	                 "t.obj:2: f: vertex index 2 is out of range (1 vertices so far: a face refers to earlier "
	                 "'v' lines)");
	expect_obj_error(TRI "f 1 2 3/1/1/1\n",
	                 "t.obj:4: f: '3/1/1/1' is not a vertex reference (i, i/t, i//n or i/t/n)");
	expect_obj_error(TRI "f 1 2/ 3\n", "t.obj:4: f: '2/' is not a vertex reference (i, i/t, i//n or i/t/n)");
	expect_obj_error(TRI "f 1 2 3//\n", "t.obj:4: f: '3//' is not a vertex reference (i, i/t, i//n or i/t/n)");
	expect_obj_error(TRI "f 1 a 3\n", "t.obj:4: f: 'a' is not a vertex reference (i, i/t, i//n or i/t/n)");
	expect_obj_error(TRI "f 1.5 2 3\n", "t.obj:4: f: '1.5' is not a vertex reference (i, i/t, i//n or i/t/n)");
	expect_obj_error(TRI "f 1 2 3/x\n", "t.obj:4: f: '3/x' is not a vertex reference (i, i/t, i//n or i/t/n)");
	expect_obj_error(TRI "f 1 2 \x01 3\n", "t.obj:4: control character 0x01: not text (not an OBJ file?)");
	expect_obj_error(TRI "\n# no faces\n", "t.obj:5: no faces: an OBJ mesh needs 'f' lines (3 vertices, no triangles)");
	expect_obj_error("", "t.obj:1: no faces: an OBJ mesh needs 'f' lines (0 vertices, no triangles)");
	expect_obj_error("v 0 0 0\nv 1 0 0\nv 2 0 0\nf 1 2 3\n", "t.obj: no non-degenerate triangles (a zero-area mesh)");
	/* binary data: the first control character names its line */
	const char nul[] = "v 0 0 0\n\0\n";
	scn_mesh m;
	scn_error e = {0};
	CHECK(scn_obj_parse((const uint8_t *)nul, sizeof nul - 1, "t.obj", SCN_WELD_TOLERANCE, &m, NULL, &e) ==
	      SCN_ERROR_PARSE);
	CHECK_MSG(strcmp(e.message, "t.obj:2: control character 0x00: not text (not an OBJ file?)") == 0, "%s",
	          e.message);
	CHECK(mesh_is_empty(&m));
}

/* ---- PLY: building files ------------------------------------------------------------------------ */

typedef struct bytes {
	uint8_t b[4096];
	size_t n;
	bool big;
} bytes;

static void text(bytes *o, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static void text(bytes *o, const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	int got = vsnprintf((char *)o->b + o->n, sizeof o->b - o->n, fmt, ap);
	va_end(ap);
	if (got > 0)
		o->n += (size_t)got;
}

static void raw(bytes *o, uint64_t u, int size)
{
	for (int k = 0; k < size; k++)
		o->b[o->n++] = (uint8_t)(u >> (8 * (o->big ? size - 1 - k : k)));
}

static void f32(bytes *o, float f)
{
	uint32_t u;
	memcpy(&u, &f, 4);
	raw(o, u, 4);
}

static void f64(bytes *o, double d)
{
	uint64_t u;
	memcpy(&u, &d, 8);
	raw(o, u, 8);
}

/* The cube as binary PLY with mixed types: a material element first (skipped), vertices
 * with double x, float y, short z and a colour byte, faces with a ushort count and uint
 * indices, and a texture-coordinate list after them (skipped). */
static void binary_cube(bytes *o, bool big)
{
	*o = (bytes){.big = big};
	text(o, "ply\nformat %s 1.0\ncomment mixed types\nelement material 1\nproperty int id\n"
	        "property list uchar char name\nelement vertex 8\nproperty float64 x\nproperty float y\n"
	        "property short z\nproperty uchar red\nelement face 6\nproperty list ushort uint vertex_indices\n"
	        "property list uchar float texcoord\nend_header\n",
	     big ? "binary_big_endian" : "binary_little_endian");
	raw(o, 7, 4);
	raw(o, 2, 1);
	raw(o, 'a', 1);
	raw(o, 'b', 1);
	for (int v = 0; v < 8; v++) {
		f64(o, cube_vertices[v][0]);
		f32(o, cube_vertices[v][1]);
		raw(o, (uint64_t)(int)cube_vertices[v][2], 2);
		raw(o, 200, 1);
	}
	for (int q = 0; q < 6; q++) {
		raw(o, 4, 2);
		for (int k = 0; k < 4; k++)
			raw(o, (uint64_t)cube_quads[q][k], 4);
		raw(o, 2, 1);
		f32(o, 0.5f);
		f32(o, 0.25f);
	}
}

/* ---- PLY: reading ------------------------------------------------------------------------------- */

static void test_ply_ascii_cube(void)
{
	bytes o = {0};
	text(&o, "ply\r\nformat ascii 1.0\r\ncomment a unit cube\nobj_info by hand\n\nelement vertex 8\n"
	         "property float x\nproperty float y\nproperty float z\nproperty float nx\nproperty uint8 red\n"
	         "element face 6\nproperty uchar flags\nproperty list uchar int vertex_index\n"
	         "property list uchar float texcoord\nelement edge 2\nproperty int vertex1\nproperty int vertex2\n"
	         "end_header\n");
	for (int v = 0; v < 8; v++)
		text(&o, "%g %g %g -1 255\n", (double)cube_vertices[v][0], (double)cube_vertices[v][1],
		     (double)cube_vertices[v][2]);
	text(&o, "\n");
	for (int q = 0; q < 6; q++)
		text(&o, "7 4 %d %d %d %d 2 0.5 nan\n", cube_quads[q][0], cube_quads[q][1], cube_quads[q][2],
		     cube_quads[q][3]);
	text(&o, "0 1\n1 2\n\n");
	scn_mesh m;
	scn_mesh_report r;
	scn_error e;
	REQUIRE_MSG(ply(o.b, o.n, &m, &r, &e) == SCN_OK, "%s", e.message);
	check_cube(&m, &r);
	CHECK(r.format == SCN_MESH_PLY && !r.binary);
	CHECK(m.name[0] == '\0');
	scn_mesh_free(&m);
}

static void test_ply_binary_cube_both_byte_orders(void)
{
	for (int big = 0; big < 2; big++) {
		bytes o;
		binary_cube(&o, big);
		scn_mesh m;
		scn_mesh_report r;
		scn_error e;
		REQUIRE_MSG(ply(o.b, o.n, &m, &r, &e) == SCN_OK, "%s", e.message);
		check_cube(&m, &r);
		CHECK(r.format == SCN_MESH_PLY && r.binary && r.big_endian == (big == 1));
		scn_mesh_free(&m);
	}
}

/* A degenerate face is reported where it is: its line, or its record's byte offset. */
static void test_ply_degenerate_position(void)
{
	const char *s = "ply\nformat ascii 1.0\nelement vertex 4\nproperty float x\nproperty float y\nproperty float z\n"
	                "element face 2\nproperty list uchar int vertex_indices\nend_header\n"
	                "0 0 0\n1 0 0\n0 1 0\n2 0 0\n3 0 1 2\n3 0 1 3\n";
	scn_mesh m;
	scn_mesh_report r;
	scn_error e;
	REQUIRE_MSG(ply(s, strlen(s), &m, &r, &e) == SCN_OK, "%s", e.message);
	CHECK(r.degenerate == 1 && r.first_degenerate_line == 15);
	CHECK(m.vertex_count == 3 && r.unused == 1);
	scn_mesh_free(&m);
	bytes o = {0};
	text(&o, "ply\nformat binary_little_endian 1.0\nelement vertex 4\nproperty float x\nproperty float y\n"
	         "property float z\nelement face 2\nproperty list uchar int vertex_indices\nend_header\n");
	size_t body = o.n;
	const float p[4][3] = {{0, 0, 0}, {1, 0, 0}, {0, 1, 0}, {2, 0, 0}};
	for (int v = 0; v < 4; v++)
		for (int k = 0; k < 3; k++)
			f32(&o, p[v][k]);
	const int f[2][3] = {{0, 1, 2}, {0, 1, 3}};
	for (int t = 0; t < 2; t++) {
		raw(&o, 3, 1);
		for (int k = 0; k < 3; k++)
			raw(&o, (uint64_t)f[t][k], 4);
	}
	REQUIRE_MSG(ply(o.b, o.n, &m, &r, &e) == SCN_OK, "%s", e.message);
	CHECK(r.binary && r.degenerate == 1 && r.first_degenerate_line == (int)(body + 48 + 13));
	scn_mesh_free(&m);
}

#define PLY_HEAD "ply\nformat ascii 1.0\n" /* lines 1-2 */
#define XYZ "property float x\nproperty float y\nproperty float z\n"
#define FACE "element face 1\nproperty list uchar int vertex_indices\n"

static void test_ply_header_errors(void)
{
	expect_ply_error("", 0, "t.ply: empty file, not PLY");
	expect_ply_text_error("hello\n", "t.ply:1: not PLY: the file does not begin with a line 'ply'");
	expect_ply_text_error("ply\nformat ascii 2.0\n", "t.ply:2: PLY version '2.0': tela reads 1.0");
	expect_ply_text_error("ply\nformat utf8 1.0\n",
	                      "t.ply:2: unknown format 'utf8' (ascii, binary_little_endian or binary_big_endian)");
	expect_ply_text_error("ply\nformat ascii\n",
	                      "t.ply:2: expected 'format ascii|binary_little_endian|binary_big_endian 1.0'");
	expect_ply_text_error(PLY_HEAD "format ascii 1.0\n", "t.ply:3: a second 'format' line");
	expect_ply_text_error(PLY_HEAD "property float x\n", "t.ply:3: 'property' before any 'element'");
	expect_ply_text_error(PLY_HEAD "element vertex 3\nproperty float128 x\n",
	                      "t.ply:4: unknown property type 'float128'");
	expect_ply_text_error(PLY_HEAD "element vertex 3\nproperty float\n",
	                      "t.ply:4: expected 'property TYPE NAME' or 'property list COUNT_TYPE TYPE NAME'");
	expect_ply_text_error(PLY_HEAD "element vertex three\n",
	                      "t.ply:3: element vertex: 'three' is not a count from 0 to 715827882");
	expect_ply_text_error(PLY_HEAD "element vertex -1\n",
	                      "t.ply:3: element vertex: '-1' is not a count from 0 to 715827882");
	expect_ply_text_error(PLY_HEAD "element vertex 3\nelement face 1\n", "t.ply:3: element 'vertex' has no properties");
	expect_ply_text_error(PLY_HEAD "element vertex 3\nproperty float x\nproperty float z\n" FACE "end_header\n",
	                      "t.ply:3: element vertex has no property 'y'");
	expect_ply_text_error(PLY_HEAD "element vertex 3\n" XYZ "end_header\n",
	                      "t.ply:7: no 'element face' in the header (tela reads triangle meshes, not point clouds)");
	expect_ply_text_error(PLY_HEAD FACE "end_header\n",
	                      "t.ply:3: 'element face' before 'element vertex': tela reads the vertices first");
	expect_ply_text_error(PLY_HEAD "element vertex 3\n" XYZ "element vertex 3\n",
	                      "t.ply:7: a second 'element vertex' (the first at line 3)");
	expect_ply_text_error(PLY_HEAD "element vertex 3\n" XYZ "property double x\n",
	                      "t.ply:7: element vertex: property 'x' plays the part of 'x' before it");
	expect_ply_text_error(PLY_HEAD "element vertex 3\n" XYZ "element face 1\nproperty list uchar int vertex_indices\n"
	                               "property list uchar int vertex_index\n",
	                      "t.ply:9: element face: property 'vertex_index' plays the part of 'vertex_indices' "
	                      "before it");
	expect_ply_text_error(PLY_HEAD "element vertex 3\nproperty list uchar float x\n",
	                      "t.ply:4: vertex property 'x' is a list; a coordinate is one number");
	expect_ply_text_error(PLY_HEAD "element vertex 3\n" XYZ "element face 1\nproperty int vertex_indices\n",
	                      "t.ply:8: face property 'vertex_indices' is not a list ('property list uchar int "
	                      "vertex_indices')");
	expect_ply_text_error(PLY_HEAD "element vertex 3\n" XYZ "element face 1\nproperty list float int vertex_indices\n",
	                      "t.ply:8: a list's count type must be an integer type, not 'float'");
	expect_ply_text_error(PLY_HEAD "element vertex 3\n" XYZ
	                      "element face 1\nproperty list uchar float vertex_indices\n",
	                      "t.ply:8: face property 'vertex_indices': the count and the indices must be integer types");
	expect_ply_text_error(PLY_HEAD "element vertex 3\n" XYZ "element face 1\nproperty uchar flags\nend_header\n",
	                      "t.ply:7: element face has no 'vertex_indices' (or 'vertex_index') list");
	expect_ply_text_error(PLY_HEAD "element vertex 3\n" XYZ "vertices follow\n",
	                      "t.ply:7: unknown header line 'vertices'");
	expect_ply_text_error(PLY_HEAD "element vertex 3\n" XYZ FACE "end_header now\n",
	                      "t.ply:9: unexpected 'now' after 'end_header'");
	expect_ply_text_error(PLY_HEAD "element vertex 3\n" XYZ FACE,
	                      "t.ply:8: the file ends in the header: no 'end_header'");
	expect_ply_text_error("ply\nelement vertex 3\n" XYZ FACE "end_header\n", "t.ply:8: no 'format' line in the header");
	expect_ply_text_error(PLY_HEAD "comment \x02\n", "t.ply:3: control character 0x02 in the header");
}

/* A count far beyond the data is refused before anything is allocated for it. */
static void test_ply_counts_bounded_by_the_size(void)
{
	bytes o = {0};
	text(&o, "ply\nformat binary_little_endian 1.0\nelement vertex 700000000\n" XYZ FACE "end_header\n");
	raw(&o, 0, 4);
	expect_ply_error(o.b, o.n,
	                 "t.ply:3: element vertex: 700000000 items: the data up to here needs at least 8400000000 bytes, "
	                 "the file has 4 after the header (a wrong count, or a truncated file)");
	o = (bytes){0};
	text(&o, "ply\nformat binary_little_endian 1.0\nelement vertex 3\n" XYZ
	         "element face 100\nproperty list uint int vertex_indices\nend_header\n");
	for (int k = 0; k < 9; k++)
		f32(&o, 0.0f);
	expect_ply_error(o.b, o.n,
	                 "t.ply:7: element face: 100 items: the data up to here needs at least 436 bytes, the file has "
	                 "36 after the header (a wrong count, or a truncated file)");
	/* ASCII: a value takes at least a character and a separator */
	expect_ply_text_error(PLY_HEAD "element vertex 3\n" XYZ FACE "end_header\n0 0 0\n",
	                      "t.ply:3: element vertex: 3 items: the data up to here needs at least 18 bytes, the file "
	                      "has 6 after the header (a wrong count, or a truncated file)");
	/* a list count in binary is checked against what is left before its items are read */
	o = (bytes){0};
	text(&o, "ply\nformat binary_little_endian 1.0\nelement vertex 3\n" XYZ
	         "element face 1\nproperty list uint int vertex_indices\nend_header\n");
	size_t body = o.n;
	for (int k = 0; k < 9; k++)
		f32(&o, (float)(k == 3 || k == 7));
	raw(&o, 4000000000u, 4);
	raw(&o, 0, 4);
	char msg[128];
	snprintf(msg, sizeof msg, "t.ply: byte %zu: the file ends inside face 0 of 1", body + 40);
	expect_ply_error(o.b, o.n, msg);
}

#define ASCII_TRI PLY_HEAD "element vertex 3\n" XYZ FACE "end_header\n" /* data from line 10 */

static void test_ply_ascii_data_errors(void)
{
	expect_ply_text_error(ASCII_TRI "0 0 0\n1 0\n0 1 0\n3 0 1 2\n  ",
	                      "t.ply:11: vertex 1: the line ends before property 'z'");
	expect_ply_text_error(ASCII_TRI "0 0 0\n1 0 0 9\n0 1 0\n3 0 1 2\n",
	                      "t.ply:11: vertex 1: unexpected '9' after its last property");
	expect_ply_text_error(ASCII_TRI "0 x 0\n1 0 0\n0 1 0\n3 0 1 2\n", "t.ply:10: vertex 0: y 'x' is not a number");
	expect_ply_text_error(ASCII_TRI "0 0 0\n1 0 0\n0 nan 0\n3 0 1 2\n",
	                      "t.ply:12: vertex 2: y 'nan' is not a finite number");
	expect_ply_text_error(ASCII_TRI "0 0 0\n1 0 0\n0 1 -3e6\n3 0 1 2\n",
	                      "t.ply:12: vertex 2: z '-3e6' is beyond the coordinate limit of 1e6 m");
	expect_ply_text_error(ASCII_TRI "0 0 0\n1 0 0\n0 1 0\n2 0 1\n  ",
	                      "t.ply:13: face 0 has 2 vertex indices; a face needs at least 3");
	expect_ply_text_error(ASCII_TRI "0 0 0\n1 0 0\n0 1 0\n3 0 1 7\n",
	                      "t.ply:13: face 0: vertex index 7 is out of range (3 vertices)");
	expect_ply_text_error(ASCII_TRI "0 0 0\n1 0 0\n0 1 0\n3 0 -1 2\n",
	                      "t.ply:13: face 0: vertex index -1 is out of range (3 vertices)");
	expect_ply_text_error(ASCII_TRI "0 0 0\n1 0 0\n0 1 0\n3 0 1 1.5\n",
	                      "t.ply:13: face 0: vertex_indices item '1.5' is not an int");
	expect_ply_text_error(ASCII_TRI "0 0 0\n1 0 0\n0 1 0\n300 0 1 2\n",
	                      "t.ply:13: face 0: vertex_indices '300' is not a uchar");
	expect_ply_text_error(ASCII_TRI "0 0 0\n1 0 0\n0 1 0\n4 0 1 2\n",
	                      "t.ply:13: face 0: list 'vertex_indices' announces 4 items, the line has 3");
	expect_ply_text_error(ASCII_TRI "0 0 0\n\n1 0 0\n0 1 0\n\n\n",
	                      "t.ply:13: the file ends before face 0 of 1");
	expect_ply_text_error(ASCII_TRI "0 0 0\n1 0 0\n0 1 0\n3 0 1 2\n\nmore\n",
	                      "t.ply:15: unexpected 'more' after the last element");
	expect_ply_text_error(ASCII_TRI "0 0 0\n1 0 0\n0 1 0\n3 0 1 2\x01\n",
	                      "t.ply:13: control character 0x01: not text (binary data in an ASCII PLY?)");
	expect_ply_text_error(PLY_HEAD "element vertex 3\n" XYZ "element face 0\nproperty list uchar int vertex_indices\n"
	                               "end_header\n0 0 0\n1 0 0\n0 1 0\n",
	                      "t.ply:7: element face: no faces (a mesh needs triangles)");
	expect_ply_text_error(ASCII_TRI "0 0 0\n1 0 0\n2 0 0\n3 0 1 2\n",
	                      "t.ply: no non-degenerate triangles (a zero-area mesh)");
}

/* A binary triangle (x y z floats, a uchar count and int indices) with one value changed. */
static size_t binary_triangle(bytes *o, int bad_at, uint32_t bad)
{
	*o = (bytes){0};
	text(o, "ply\nformat binary_little_endian 1.0\nelement vertex 3\n" XYZ FACE "end_header\n");
	size_t body = o->n;
	const float p[9] = {0, 0, 0, 1, 0, 0, 0, 1, 0};
	for (int k = 0; k < 9; k++) {
		if (k == bad_at)
			raw(o, bad, 4);
		else
			f32(o, p[k]);
	}
	raw(o, bad_at == 9 ? bad : 3, 1);
	for (int k = 0; k < 3; k++)
		raw(o, bad_at == 10 + k ? bad : (uint32_t)k, 4);
	return body;
}

static void test_ply_binary_errors_name_the_byte(void)
{
	bytes o;
	char msg[200];
	scn_mesh m;
	scn_mesh_report r;
	scn_error e;
	size_t body = binary_triangle(&o, -1, 0);
	REQUIRE_MSG(ply(o.b, o.n, &m, &r, &e) == SCN_OK, "%s", e.message);
	CHECK(m.triangle_count == 1 && o.n == body + 36 + 13);
	scn_mesh_free(&m);

	binary_triangle(&o, 4, 0x7fc00000u); /* vertex 1, y: NaN */
	snprintf(msg, sizeof msg, "t.ply: byte %zu: vertex 1: y is not a finite number", body + 16);
	expect_ply_error(o.b, o.n, msg);
	float big = -2e6f;
	uint32_t bits;
	memcpy(&bits, &big, 4);
	binary_triangle(&o, 8, bits); /* vertex 2, z */
	snprintf(msg, sizeof msg, "t.ply: byte %zu: vertex 2: z -2e+06 is beyond the coordinate limit of 1e6 m", body + 32);
	expect_ply_error(o.b, o.n, msg);
	binary_triangle(&o, 12, 3); /* face 0, third index */
	snprintf(msg, sizeof msg, "t.ply: byte %zu: face 0: vertex index 3 is out of range (3 vertices)", body + 45);
	expect_ply_error(o.b, o.n, msg);
	binary_triangle(&o, 10, 0xffffffffu); /* face 0, first index: -1 as an int */
	snprintf(msg, sizeof msg, "t.ply: byte %zu: face 0: vertex index -1 is out of range (3 vertices)", body + 37);
	expect_ply_error(o.b, o.n, msg);
	binary_triangle(&o, 9, 2); /* a count of 2: the file then has 4 bytes too many */
	snprintf(msg, sizeof msg, "t.ply: byte %zu: face 0 has 2 vertex indices; a face needs at least 3", body + 36);
	expect_ply_error(o.b, o.n, msg);
	binary_triangle(&o, -1, 0);
	raw(&o, 0, 3);
	snprintf(msg, sizeof msg, "t.ply: byte %zu: 3 bytes after the last element", body + 49);
	expect_ply_error(o.b, o.n, msg);
	binary_triangle(&o, -1, 0);
	snprintf(msg, sizeof msg, "t.ply: byte %zu: the file ends inside face 0 of 1", body + 37);
	expect_ply_error(o.b, o.n - 2, msg);
	/* cut inside the vertices: shorter than the header's minimum, refused before reading */
	expect_ply_error(o.b, body + 30,
	                 "t.ply:3: element vertex: 3 items: the data up to here needs at least 36 bytes, the file has 30 "
	                 "after the header (a wrong count, or a truncated file)");
}

/* ---- Writing and round trips -------------------------------------------------------------------- */

static void scratch(char *out, size_t cap, const char *name)
{
	snprintf(out, cap, "%s/tela_test_meshio_%ld_%s", test_tmpdir(), (long)getpid(), name);
}

static void moved_grid(scn_mesh *m)
{
	scn_error e = {0};
	const float c[3] = {0.1f, -0.2f, 0.3f}, rot[3] = {10, 20, 30}, tr[3] = {0.01f, 0.02f, 0.03f};
	*m = (scn_mesh){0};
	if (scn_mesh_grid(1.3f, 0.7f, 5, 3, c, m, &e) == SCN_OK)
		scn_mesh_transform(m, 1.1f, rot, tr);
	snprintf(m->name, sizeof m->name, "moved grid");
}

static long file_size(const char *path, char *head, size_t head_cap)
{
	FILE *fp = fopen(path, "rb");
	if (!fp)
		return -1;
	size_t got = fread(head, 1, head_cap - 1, fp);
	head[got] = '\0';
	fseek(fp, 0, SEEK_END);
	long size = ftell(fp);
	fclose(fp);
	return size;
}

static bool same_file(const char *a, const char *b)
{
	FILE *fa = fopen(a, "rb"), *fb = fopen(b, "rb");
	bool same = fa && fb;
	while (same) {
		int ca = fgetc(fa), cb = fgetc(fb);
		same = ca == cb;
		if (ca == EOF)
			break;
	}
	if (fa)
		fclose(fa);
	if (fb)
		fclose(fb);
	return same;
}

/* Written and read back: the same vertices bit for bit, the same triangles in the same
 * order; and the mesh read is written again byte for byte. */
static void round_trip(scn_mesh_format format, const char *ext)
{
	char path[512], again[512];
	char name[32];
	snprintf(name, sizeof name, "round_trip.%s", ext);
	scratch(path, sizeof path, name);
	snprintf(name, sizeof name, "round_trip2.%s", ext);
	scratch(again, sizeof again, name);
	CHECK(scn_mesh_format_of(path) == format);
	scn_mesh g, a;
	scn_mesh_report r;
	scn_error e = {0};
	moved_grid(&g);
	REQUIRE(g.vertex_count == 24 && g.triangle_count == 30);
	/* a vertex numbering that is not the order of first appearance in the triangles */
	float keep[3];
	memcpy(keep, g.positions, sizeof keep);
	memcpy(g.positions, g.positions + 3 * 23, sizeof keep);
	memcpy(g.positions + 3 * 23, keep, sizeof keep);
	for (int i = 0; i < 3 * g.triangle_count; i++)
		g.triangles[i] = g.triangles[i] == 0 ? 23 : g.triangles[i] == 23 ? 0 : g.triangles[i];
	REQUIRE(scn_mesh_write(path, format, &g, false, &e) == SCN_OK);
	REQUIRE_MSG(scn_mesh_read(path, format, SCN_WELD_TOLERANCE, &a, &r, &e) == SCN_OK, "%s", e.message);
	CHECK(same_mesh(&g, &a));
	CHECK(r.format == format && r.welded == 0 && r.unused == 0 && r.degenerate == 0);
	CHECK(strcmp(a.name, format == SCN_MESH_OBJ ? "moved grid" : "") == 0);
	REQUIRE(scn_mesh_write(again, format, &a, false, &e) == SCN_OK);
	char h1[256];
	long s1 = file_size(path, h1, sizeof h1);
	CHECK(s1 > 0 && same_file(path, again));
	if (format == SCN_MESH_PLY) {
		CHECK(r.binary && !r.big_endian);
		const char *head = "ply\nformat binary_little_endian 1.0\n";
		CHECK(strncmp(h1, head, strlen(head)) == 0);
		const char *end = strstr(h1, "end_header\n");
		REQUIRE(end);
		long header = (long)(end - h1) + (long)strlen("end_header\n");
		CHECK(s1 == header + 12 * 24 + 13 * 30);
	} else {
		CHECK(!r.binary);
		CHECK(strncmp(h1, "# written by tela", 17) == 0);
	}
	remove(path);
	remove(again);
	scn_mesh_free(&g);
	scn_mesh_free(&a);
}

static void test_round_trip_obj(void)
{
	round_trip(SCN_MESH_OBJ, "obj");
}

static void test_round_trip_ply(void)
{
	round_trip(SCN_MESH_PLY, "ply");
}

/* OBJ's float text is the shortest that reads back: 0.1 rather than 0.100000001. */
static void test_obj_writes_short_exact_numbers(void)
{
	float pos[9] = {0.1f, -2.5f, 1e-7f, 1.0f / 3.0f, 0, 0, 0, 1, 16777215.0f / 32.0f};
	int tri[3] = {0, 1, 2};
	scn_mesh m = {.vertex_count = 3, .triangle_count = 1, .positions = pos, .triangles = tri};
	char path[512];
	scratch(path, sizeof path, "numbers.obj");
	scn_error e = {0};
	REQUIRE(scn_mesh_write(path, SCN_MESH_OBJ, &m, false, &e) == SCN_OK);
	char buf[512];
	long size = file_size(path, buf, sizeof buf);
	CHECK(size > 0);
	CHECK_MSG(strstr(buf, "\nv 0.1 -2.5 1e-07\nv 0.33333334 0 0\nv 0 1 524287.97\nf 1 2 3\n") != NULL, "%s", buf);
	scn_mesh back;
	REQUIRE(scn_mesh_read(path, SCN_MESH_OBJ, 0.0f, &back, NULL, &e) == SCN_OK);
	CHECK(memcmp(back.positions, pos, sizeof pos) == 0);
	scn_mesh_free(&back);
	remove(path);
}

static void test_write_errors(void)
{
	float pos[9] = {0, 0, 0, 1, 0, 0, 0, 1, 0};
	int tri[3] = {0, 1, 3};
	scn_mesh m = {.vertex_count = 3, .triangle_count = 1, .positions = pos, .triangles = tri};
	scn_error e = {0};
	CHECK(scn_mesh_write("x.ply", SCN_MESH_PLY, &m, false, &e) == SCN_ERROR_PARSE);
	CHECK_MSG(strcmp(e.message, "x.ply: triangle 0 refers to vertex 3 of 3") == 0, "%s", e.message);
	tri[2] = 2;
	e = (scn_error){0};
	CHECK(scn_mesh_write("no-such-dir/x.obj", SCN_MESH_OBJ, &m, false, &e) == SCN_ERROR_IO);
	CHECK_MSG(strcmp(e.message, "no-such-dir/x.obj: cannot write: No such file or directory") == 0, "%s", e.message);
	e = (scn_error){0};
	CHECK(scn_mesh_read("no-such-dir/x.ply", SCN_MESH_PLY, SCN_WELD_TOLERANCE, &m, NULL, &e) == SCN_ERROR_IO);
	CHECK_MSG(strcmp(e.message, "no-such-dir/x.ply: cannot open: No such file or directory") == 0, "%s", e.message);
	CHECK(mesh_is_empty(&m));
}

/* Exported frames hold the world's positions exactly and its triangles in its order. */
static void test_export_frame_formats(void)
{
	sim_world_def def = sim_world_def_default();
	sim_world *w = sim_world_create(&def);
	REQUIRE(w);
	sim_grid_def g = sim_grid_def_default();
	g.name = "cloth";
	g.nx = 4, g.ny = 3;
	g.size_x = 0.3f, g.size_y = 0.2f;
	int obj_index = sim_world_add_grid(w, &g);
	REQUIRE(obj_index >= 0);
	REQUIRE(sim_world_step(w, 0.01f) == SIM_OK); /* positions off the grid's round numbers */
	char dir[512];
	scratch(dir, sizeof dir, "frames");
	REQUIRE(mkdir(dir, 0777) == 0);
	const vec4 *x = sim_world_positions(w) + sim_world_object_first_vertex(w, obj_index);
	const int *tri = sim_world_object_triangles(w, obj_index);
	const scn_mesh_format formats[3] = {SCN_MESH_STL, SCN_MESH_OBJ, SCN_MESH_PLY};
	for (int f = 0; f < 3; f++) {
		scn_error e = {0};
		REQUIRE(scn_export_frame_as(w, dir, 7, formats[f], &e) == SCN_OK);
		char path[1024];
		snprintf(path, sizeof path, "%s/frame000007_cloth.%s", dir, scn_mesh_format_name(formats[f]));
		scn_mesh m;
		REQUIRE_MSG(scn_mesh_read(path, scn_mesh_format_of(path), 0.0f, &m, NULL, &e) == SCN_OK, "%s", e.message);
		CHECK(m.vertex_count == 12 && m.triangle_count == sim_world_object_triangle_count(w, obj_index));
		for (int i = 0; i < 3 * m.triangle_count; i++)
			CHECK(memcmp(m.positions + 3 * m.triangles[i], x[tri[i]], 3 * sizeof(float)) == 0);
		if (formats[f] != SCN_MESH_STL) { /* indexed: the world's own numbering */
			CHECK(memcmp(m.triangles, tri, 3 * sizeof(int) * (size_t)m.triangle_count) == 0);
			for (int v = 0; v < m.vertex_count; v++)
				CHECK(memcmp(m.positions + 3 * v, x[v], 3 * sizeof(float)) == 0);
		}
		CHECK(strcmp(m.name, formats[f] == SCN_MESH_PLY ? "" : "cloth") == 0);
		scn_mesh_free(&m);
		remove(path);
	}
	rmdir(dir);
	sim_world_destroy(&w);
}

static void test_format_names(void)
{
	CHECK(scn_mesh_format_of("a/b.obj") == SCN_MESH_OBJ);
	CHECK(scn_mesh_format_of("B.OBJ") == SCN_MESH_OBJ);
	CHECK(scn_mesh_format_of("mesh.Ply") == SCN_MESH_PLY);
	CHECK(scn_mesh_format_of("mesh.stl") == SCN_MESH_STL);
	CHECK(scn_mesh_format_of("dpo_cloth") == SCN_MESH_STL);
	CHECK(scn_mesh_format_of("obj") == SCN_MESH_STL);
	CHECK(scn_mesh_format_of("x.obj.bak") == SCN_MESH_STL);
	scn_mesh_format f = SCN_MESH_STL;
	CHECK(scn_mesh_format_parse("ply", &f) && f == SCN_MESH_PLY);
	CHECK(scn_mesh_format_parse("obj", &f) && f == SCN_MESH_OBJ);
	CHECK(scn_mesh_format_parse("stl", &f) && f == SCN_MESH_STL);
	CHECK(!scn_mesh_format_parse("PLY", &f) && !scn_mesh_format_parse("off", &f));
	CHECK(strcmp(scn_mesh_format_name(SCN_MESH_OBJ), "obj") == 0);
}

static const test_case tests[] = {
	TEST(test_obj_cube_every_form),
	TEST(test_obj_fan_and_relative_indices),
	TEST(test_obj_numbering_weld_unused),
	TEST(test_obj_unknown_statements),
	TEST(test_obj_errors_name_the_line),
	TEST(test_ply_ascii_cube),
	TEST(test_ply_binary_cube_both_byte_orders),
	TEST(test_ply_degenerate_position),
	TEST(test_ply_header_errors),
	TEST(test_ply_counts_bounded_by_the_size),
	TEST(test_ply_ascii_data_errors),
	TEST(test_ply_binary_errors_name_the_byte),
	TEST(test_round_trip_obj),
	TEST(test_round_trip_ply),
	TEST(test_obj_writes_short_exact_numbers),
	TEST(test_write_errors),
	TEST(test_export_frame_formats),
	TEST(test_format_names),
};

TEST_MAIN(tests)
