/* STL reading and writing, welding, degenerate facets, orientation, and the grid and
 * transform helpers.  Inputs are written out by hand (ASCII text, or binary bytes packed
 * here rather than by the writer under test) so that the expected counts, line numbers
 * and byte offsets are known independently of the code. */
#include "scenes/mesh.h"
#include "sim/sim.h"

#include "scenes/scenes.h"
#include "test.h"

#include <stdarg.h>
#include <stdint.h>

#define PI 3.14159265358979323846

#ifndef TELA_STL_DATA
#error "TELA_STL_DATA must name tests/data/stl"
#endif

/* ---- Building inputs ------------------------------------------------------------------------ */

typedef struct text {
	char s[16384];
	size_t n;
} text;

static void put(text *t, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static void put(text *t, const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	int got = vsnprintf(t->s + t->n, sizeof t->s - t->n, fmt, ap);
	va_end(ap);
	if (got > 0)
		t->n += (size_t)got;
	if (t->n >= sizeof t->s)
		t->n = sizeof t->s - 1;
}

/* Facets of 9 floats each, as ASCII STL, one statement per line. */
static void ascii_stl(text *t, const float *facets, int count)
{
	put(t, "solid test\n");
	for (int f = 0; f < count; f++) {
		const float *c = facets + 9 * f;
		put(t, "  facet normal 0 0 0\n    outer loop\n");
		for (int k = 0; k < 3; k++)
			put(t, "      vertex %.9g %.9g %.9g\n", (double)c[3 * k], (double)c[3 * k + 1], (double)c[3 * k + 2]);
		put(t, "    endloop\n  endfacet\n");
	}
	put(t, "endsolid test\n");
}

static void put_u32(uint8_t *p, uint32_t u)
{
	p[0] = (uint8_t)u, p[1] = (uint8_t)(u >> 8), p[2] = (uint8_t)(u >> 16), p[3] = (uint8_t)(u >> 24);
}

static void put_f32(uint8_t *p, float f)
{
	uint32_t u;
	memcpy(&u, &f, 4);
	put_u32(p, u);
}

/* Binary STL bytes (little-endian), header text first; returns the size. */
static size_t binary_stl(uint8_t *out, const char *header, const float *facets, int count)
{
	memset(out, 0, 84);
	memcpy(out, header, strlen(header));
	put_u32(out + 80, (uint32_t)count);
	for (int f = 0; f < count; f++) {
		uint8_t *r = out + 84 + 50 * f;
		memset(r, 0, 50);
		put_f32(r + 8, 1.0f); /* a normal the reader must ignore */
		for (int k = 0; k < 9; k++)
			put_f32(r + 12 + 4 * k, facets[9 * f + k]);
	}
	return 84 + 50 * (size_t)count;
}

/* The unit cube [0,1]^3, each face counter-clockwise seen from outside. */
static const int cube_quads[6][4][3] = {
	{{0, 0, 0}, {0, 1, 0}, {1, 1, 0}, {1, 0, 0}}, {{0, 0, 1}, {1, 0, 1}, {1, 1, 1}, {0, 1, 1}},
	{{0, 0, 0}, {1, 0, 0}, {1, 0, 1}, {0, 0, 1}}, {{0, 1, 0}, {0, 1, 1}, {1, 1, 1}, {1, 1, 0}},
	{{0, 0, 0}, {0, 0, 1}, {0, 1, 1}, {0, 1, 0}}, {{1, 0, 0}, {1, 1, 0}, {1, 1, 1}, {1, 0, 1}},
};

static void cube_facets(float out[12 * 9])
{
	static const int split[2][3] = {{0, 1, 2}, {0, 2, 3}};
	for (int q = 0; q < 6; q++)
		for (int h = 0; h < 2; h++)
			for (int c = 0; c < 3; c++)
				for (int k = 0; k < 3; k++)
					out[(2 * q + h) * 9 + 3 * c + k] = (float)cube_quads[q][split[h][c]][k];
}

static scn_status parse(const void *data, size_t size, scn_mesh *m, scn_mesh_report *r, scn_error *e)
{
	*e = (scn_error){0};
	return scn_stl_parse(data, size, "t.stl", SCN_WELD_TOLERANCE, m, r, e);
}

static scn_status parse_text(const char *s, scn_mesh *m, scn_mesh_report *r, scn_error *e)
{
	return parse(s, strlen(s), m, r, e);
}

static bool mesh_is_empty(const scn_mesh *m)
{
	return m->vertex_count == 0 && m->triangle_count == 0 && !m->positions && !m->triangles;
}

/* Parsing must fail with exactly `message` and leave the mesh empty. */
static void expect_error(const void *data, size_t size, scn_status status, const char *message)
{
	scn_mesh m;
	scn_mesh_report r;
	scn_error e;
	scn_status st = parse(data, size, &m, &r, &e);
	CHECK_MSG(st == status, "status %d, expected %d for '%s'", (int)st, (int)status, message);
	CHECK_MSG(strcmp(e.message, message) == 0, "\n  got      '%s'\n  expected '%s'", e.message, message);
	CHECK(mesh_is_empty(&m));
	scn_mesh_free(&m);
}

static void expect_text_error(const char *s, const char *message)
{
	expect_error(s, strlen(s), SCN_ERROR_PARSE, message);
}

static bool same_mesh(const scn_mesh *a, const scn_mesh *b)
{
	return a->vertex_count == b->vertex_count && a->triangle_count == b->triangle_count &&
	       memcmp(a->positions, b->positions, 3 * sizeof(float) * (size_t)a->vertex_count) == 0 &&
	       memcmp(a->triangles, b->triangles, 3 * sizeof(int) * (size_t)a->triangle_count) == 0;
}

/* The same triangles corner by corner, bit for bit, whatever the vertex numbering. */
static bool same_geometry(const scn_mesh *a, const scn_mesh *b)
{
	if (a->triangle_count != b->triangle_count)
		return false;
	for (int i = 0; i < 3 * a->triangle_count; i++)
		if (memcmp(a->positions + 3 * a->triangles[i], b->positions + 3 * b->triangles[i], 3 * sizeof(float)) != 0)
			return false;
	return true;
}

/* ---- Reading ---------------------------------------------------------------------------------- */

static void test_ascii_and_binary_read_identically(void)
{
	float f[12 * 9];
	cube_facets(f);
	text t = {0};
	ascii_stl(&t, f, 12);
	uint8_t bin[84 + 50 * 12];
	size_t size = binary_stl(bin, "some exporter", f, 12);
	scn_mesh a, b;
	scn_mesh_report ra, rb;
	scn_error e;
	REQUIRE(parse_text(t.s, &a, &ra, &e) == SCN_OK);
	REQUIRE(parse(bin, size, &b, &rb, &e) == SCN_OK);
	CHECK(!ra.binary && rb.binary);
	CHECK(ra.facets == 12 && rb.facets == 12);
	CHECK(a.vertex_count == 8 && a.triangle_count == 12);
	CHECK(ra.welded == 36 - 8 && rb.welded == 36 - 8);
	CHECK(same_mesh(&a, &b));
	CHECK(strcmp(a.name, "test") == 0);
	CHECK(ra.closed && ra.boundary_edges == 0 && ra.nonmanifold_edges == 0 && ra.misoriented_edges == 0);
	CHECK_NEAR(ra.signed_volume, 1.0, 1e-12);
	scn_mesh_free(&a);
	scn_mesh_free(&b);
}

/* Some exporters begin binary headers with "solid": the size decides. */
static void test_binary_header_starting_with_solid(void)
{
	float f[12 * 9];
	cube_facets(f);
	uint8_t bin[84 + 50 * 12];
	size_t size = binary_stl(bin, "solid cube exported by a CAD program", f, 12);
	scn_mesh m;
	scn_mesh_report r;
	scn_error e;
	REQUIRE(parse(bin, size, &m, &r, &e) == SCN_OK);
	CHECK(r.binary);
	CHECK(m.vertex_count == 8 && m.triangle_count == 12);
	CHECK(m.name[0] == '\0');
	scn_mesh_free(&m);
	/* the same file truncated is no longer binary by size, and is not text either */
	scn_status st = parse(bin, size - 7, &m, &r, &e);
	CHECK(st == SCN_ERROR_PARSE);
	CHECK_MSG(strstr(e.message, "t.stl:1: control character 0x00: not text") == e.message, "%s", e.message);
	CHECK(mesh_is_empty(&m));
}

/* Whitespace, CRLF, upper case, a byte order mark, blank lines, NaN normals and two solids. */
static void test_ascii_tolerance(void)
{
	const char *s = "\xEF\xBB\xBF  SOLID  My Part  \r\n"
	                "\r\n"
	                "\tFacet Normal nan nan nan\r\n"
	                "  OUTER   LOOP\r\n"
	                "vertex 0 0 0\r\n"
	                "   VERTEX\t1.0E0 0 0\r\n"
	                "vertex 0 +1 -0\r\n"
	                "endloop\r\n"
	                "ENDFACET\r\n"
	                "endsolid My Part\r\n"
	                "solid second\n"
	                "facet normal 0 0 1\nouter loop\nvertex 1 0 0\nvertex 1 1 0\nvertex 0 1 0\nendloop\nendfacet\n"
	                "endsolid";
	scn_mesh m;
	scn_mesh_report r;
	scn_error e;
	REQUIRE(parse_text(s, &m, &r, &e) == SCN_OK);
	CHECK(strcmp(m.name, "My Part") == 0);
	CHECK(r.facets == 2 && m.triangle_count == 2 && m.vertex_count == 4);
	CHECK(m.positions[3] == 1.0f && m.positions[7] == 1.0f);
	CHECK(r.boundary_edges == 4 && r.misoriented_edges == 0);
	scn_mesh_free(&m);
}

/* A 2 x 2-cell grid as 8 facets: 24 corners, 9 distinct points. */
static void test_welding_counts_and_order(void)
{
	float f[8 * 9];
	int n = 0;
	for (int j = 0; j < 2; j++) {
		for (int i = 0; i < 2; i++) {
			float q[4][3] = {{(float)i, (float)j, 0}, {(float)i + 1, (float)j, 0}, {(float)i + 1, (float)j + 1, 0},
			                 {(float)i, (float)j + 1, 0}};
			const int tri[2][3] = {{0, 1, 2}, {0, 2, 3}};
			for (int h = 0; h < 2; h++, n++)
				for (int c = 0; c < 3; c++)
					memcpy(f + 9 * n + 3 * c, q[tri[h][c]], sizeof q[0]);
		}
	}
	text t = {0};
	ascii_stl(&t, f, 8);
	scn_mesh m;
	scn_mesh_report r;
	scn_error e;
	REQUIRE(parse_text(t.s, &m, &r, &e) == SCN_OK);
	CHECK(r.facets == 8);
	CHECK(m.vertex_count == 9);
	CHECK(m.triangle_count == 8);
	CHECK(r.welded == 15);
	CHECK(r.degenerate == 0);
	/* numbered in order of first appearance: (0,0) (1,0) (1,1) (0,1) (2,0) (2,1) ... */
	const int first[6] = {0, 1, 2, 0, 2, 3};
	CHECK(memcmp(m.triangles, first, sizeof first) == 0);
	CHECK(m.positions[3 * 3] == 0.0f && m.positions[3 * 3 + 1] == 1.0f);
	CHECK(m.positions[3 * 4] == 2.0f && m.positions[3 * 4 + 1] == 0.0f);
	CHECK(m.triangles[6] == 1 && m.triangles[7] == 4 && m.triangles[8] == 5);
	/* V - E + F = 1 for a disc: 16 edges, 8 on the border */
	CHECK(r.boundary_edges == 8 && r.nonmanifold_edges == 0 && r.misoriented_edges == 0 && !r.closed);
	CHECK(r.signed_volume == 0.0);
	scn_mesh_free(&m);
}

/* Two triangles along the edge (1,0,0)-(0,1,0); the second's copies of those corners sit
 * off by (dx, dy); returns the vertex count after welding with tolerance tol. */
static int welded_vertices(float dx, float dy, float tol, float *kept_x)
{
	const float f[18] = {0, 0, 0, 1, 0, 0, 0, 1, 0, /* */ 1 + dx, dy, 0, 1, 1, 0, dx, 1 + dy, 0};
	uint8_t bin[84 + 100];
	size_t size = binary_stl(bin, "", f, 2);
	scn_mesh m;
	scn_error e = {0};
	if (scn_stl_parse(bin, size, "t.stl", tol, &m, NULL, &e) != SCN_OK)
		return -1;
	int n = m.vertex_count;
	*kept_x = m.positions[3];
	scn_mesh_free(&m);
	return n;
}

static void test_weld_tolerance(void)
{
	float x = 0.0f;
	CHECK(welded_vertices(0.5e-6f, 0.0f, SCN_WELD_TOLERANCE, &x) == 4);
	CHECK(x == 1.0f); /* the first occurrence wins */
	CHECK(welded_vertices(2e-6f, 0.0f, SCN_WELD_TOLERANCE, &x) == 6);
	CHECK(welded_vertices(0.0f, -0.9e-6f, SCN_WELD_TOLERANCE, &x) == 4);
	/* 0.8e-6 along two axes is 1.1e-6 away: Euclidean, not per axis */
	CHECK(welded_vertices(0.8e-6f, 0.8e-6f, SCN_WELD_TOLERANCE, &x) == 6);
	CHECK(welded_vertices(2e-6f, 0.0f, 1e-5f, &x) == 4);
	/* a corner within reach of two vertices joins the earlier, not the nearer */
	const float f[27] = {0, 0, 0, 1, 0, 0, 0, 1, 0, /* */ 1.5e-6f, 0, 0, 1, 1, 0, 0, 2, 0,
	                     /* */ 0.8e-6f, 0, 0, 2, 0, 0, 2, 2, 0};
	uint8_t bin[84 + 150];
	size_t size = binary_stl(bin, "", f, 3);
	scn_mesh m;
	scn_error e;
	REQUIRE(parse(bin, size, &m, NULL, &e) == SCN_OK);
	CHECK(m.vertex_count == 8);
	CHECK(m.triangles[3] == 3 && m.triangles[6] == 0);
	scn_mesh_free(&m);
	/* tolerance 0: only exact copies, as in the seed simulator */
	CHECK(welded_vertices(0.5e-6f, 0.0f, 0.0f, &x) == 6);
	CHECK(welded_vertices(0.0f, 0.0f, 0.0f, &x) == 4);
}

/* Around cell borders the spatial hash must still find neighbours in the next cell. */
static void test_weld_across_cells(void)
{
	enum { N = 200 };
	static float f[N * 9];
	uint32_t state = 12345u;
	for (int i = 0; i < N; i++) {
		for (int k = 0; k < 9; k++) {
			state = state * 1664525u + 1013904223u;
			f[9 * i + k] = (float)(state >> 8) * 0x1p-24f; /* in [0, 1) */
		}
		if (i % 2 == 1) /* a copy of the previous facet, moved by 0.7 um along x */
			for (int c = 0; c < 3; c++) {
				memcpy(f + 9 * i + 3 * c, f + 9 * (i - 1) + 3 * c, 3 * sizeof(float));
				f[9 * i + 3 * c] += 0.7e-6f;
			}
	}
	static uint8_t bin[84 + 50 * N];
	size_t size = binary_stl(bin, "", f, N);
	scn_mesh m;
	scn_mesh_report r;
	scn_error e;
	REQUIRE(parse(bin, size, &m, &r, &e) == SCN_OK);
	CHECK(m.vertex_count == 3 * N / 2);
	CHECK(r.welded == 3 * N / 2);
	/* each copy lands on its original, so every second triangle repeats the one before */
	for (int i = 1; i < N; i += 2)
		CHECK(memcmp(m.triangles + 3 * i, m.triangles + 3 * (i - 1), 3 * sizeof(int)) == 0);
	CHECK(r.nonmanifold_edges == 0 && r.misoriented_edges == 3 * N / 2 && r.boundary_edges == 0);
	scn_mesh_free(&m);
}

static void test_degenerate_removal(void)
{
	const char *s = "solid d\n"                                                         /* 1 */
	                "facet normal 0 0 1\nouter loop\n"                                  /* 2, 3 */
	                "vertex 0 0 0\nvertex 1 0 0\nvertex 0 1 0\nendloop\nendfacet\n"     /* 4-8 */
	                "facet normal 0 0 1\nouter loop\n"                                  /* 9: a repeated corner */
	                "vertex 0 0 0\nvertex 2 0 0\nvertex 2 0 0\nendloop\nendfacet\n"     /* 11-15 */
	                "facet normal 0 0 1\nouter loop\n"                                  /* 16: collinear */
	                "vertex 0 0 0\nvertex 0.5 0.5 0\nvertex 1 1 0\nendloop\nendfacet\n" /* 18-22 */
	                "endsolid d\n";
	scn_mesh m;
	scn_mesh_report r;
	scn_error e;
	REQUIRE(parse_text(s, &m, &r, &e) == SCN_OK);
	CHECK(r.facets == 3);
	CHECK(r.degenerate == 2);
	CHECK(r.first_degenerate_line == 9);
	CHECK(m.triangle_count == 1);
	CHECK(r.welded == 3);       /* 9 corners, 6 distinct points */
	CHECK(m.vertex_count == 3); /* (2,0,0) and (0.5,0.5,0) served only degenerate facets */
	const float kept[9] = {0, 0, 0, 1, 0, 0, 0, 1, 0};
	CHECK(memcmp(m.positions, kept, sizeof kept) == 0);
	scn_mesh_free(&m);
}

/* A sliver whose two corners weld together is degenerate; binary reports the byte offset. */
static void test_degenerate_after_welding_binary(void)
{
	const float f[27] = {0, 0, 0, 1, 0, 0, 0, 1, 0, /* */ 1, 1, 0, 0, 1, 0, 1, 0, 0,
	                     /* */ 0, 0, 0, 1, 0.5e-6f, 0, 1, 0, 0};
	uint8_t bin[84 + 150];
	size_t size = binary_stl(bin, "", f, 3);
	scn_mesh m;
	scn_mesh_report r;
	scn_error e;
	REQUIRE(parse(bin, size, &m, &r, &e) == SCN_OK);
	CHECK(r.degenerate == 1);
	CHECK(r.first_degenerate_line == 84 + 2 * 50);
	CHECK(m.triangle_count == 2 && m.vertex_count == 4);
	scn_mesh_free(&m);
	/* collinear once rounded to float: the area is not exactly zero, but below precision */
	const float near[18] = {0, 0, 0, 1, 0, 0, 0, 1, 0, /* */ 0.1f, 0.2f, 0.3f, 0.3f, 0.6f, 0.9f, 0.7f, 1.4f, 2.1f};
	double u[3], v[3];
	for (int k = 0; k < 3; k++) {
		u[k] = (double)near[12 + k] - near[9 + k];
		v[k] = (double)near[15 + k] - near[9 + k];
	}
	REQUIRE(u[1] * v[2] - u[2] * v[1] != 0.0 || u[2] * v[0] - u[0] * v[2] != 0.0 || u[0] * v[1] - u[1] * v[0] != 0.0);
	size = binary_stl(bin, "", near, 2);
	REQUIRE(parse(bin, size, &m, &r, &e) == SCN_OK);
	CHECK(r.degenerate == 1 && r.first_degenerate_line == 84 + 50);
	CHECK(m.triangle_count == 1 && m.vertex_count == 3);
	scn_mesh_free(&m);
	const float flat[9] = {0, 0, 0, 1, 2, 3, 2, 4, 6};
	size = binary_stl(bin, "", flat, 1);
	expect_error(bin, size, SCN_ERROR_PARSE, "t.stl: no non-degenerate triangles (a zero-area mesh)");
}

/* ---- Bad input --------------------------------------------------------------------------------- */

#define HEAD "solid t\nfacet normal 0 0 1\nouter loop\n" /* lines 1-3 */

static void test_ascii_errors_name_the_line(void)
{
	expect_text_error(HEAD "vertex 0 0 0\nvertex 1 0 0\nvertex 0 1 0\n",
	                  "t.stl:6: truncated: the file ends here, expected 'vertex' or 'endloop'");
	expect_text_error(HEAD "vertex 0 0 0\nvertex 1 0 0\nvertex 0 1 0\nendloop\n\n\n",
	                  "t.stl:7: truncated: the file ends here, expected 'endfacet'");
	expect_text_error(HEAD "vertex 0 0 0\nvertex 1 0 0\nvertex 0 1 0\nendloop\nendfacet",
	                  "t.stl:8: truncated: the file ends here, expected 'facet' or 'endsolid'");
	expect_text_error("solid t\nfacet normal 0 0 1\n", "t.stl:2: truncated: the file ends here, expected 'outer loop'");
	expect_text_error(HEAD "vertex 0 0 0\nvertex 1 0 0\nendloop\nendfacet\nendsolid\n",
	                  "t.stl:6: the facet has 2 vertices, expected 3");
	expect_text_error(HEAD "vertex 0 0 0\nvertex 1 0 0\nvertex 0 1 0\nvertex 1 1 0\nendloop\n",
	                  "t.stl:7: a fourth vertex: a facet has 3");
	expect_text_error(HEAD "vertex 0 0 0\nvertex 1 0\nvertex 0 1 0\n", "t.stl:5: vertex needs 3 coordinates, found 2");
	expect_text_error(HEAD "vertex 0 0 0\nvertex 1 0 0 0\n", "t.stl:5: vertex needs 3 coordinates, found 4");
	expect_text_error(HEAD "vertex 0 0 0\nvertex 1 NaN 0\n", "t.stl:5: vertex coordinate 'NaN' is not a finite number");
	expect_text_error(HEAD "vertex 0 0 -inf\n", "t.stl:4: vertex coordinate '-inf' is not a finite number");
	expect_text_error(HEAD "vertex 0 0 0\nvertex 1e30 0 0\n",
	                  "t.stl:5: vertex coordinate '1e30' is beyond the coordinate limit of 1e6 m");
	expect_text_error(HEAD "vertex 0 0 0\nvertex 1 0 -1000001\n",
	                  "t.stl:5: vertex coordinate '-1000001' is beyond the coordinate limit of 1e6 m");
	expect_text_error(HEAD "vertex 0 0 0\nvertex 1.5x 0 0\n", "t.stl:5: vertex coordinate '1.5x' is not a number");
	expect_text_error(HEAD "vertex 0 zero 0\n", "t.stl:4: vertex coordinate 'zero' is not a number");
	expect_text_error("solid t\nfacet normal 0 0 one\n", "t.stl:2: facet normal: 'one' is not a number");
	expect_text_error("solid t\nfacet 0 0 1\n", "t.stl:2: expected 'facet normal NX NY NZ'");
	expect_text_error("solid t\nfacet normal 0 0\n", "t.stl:2: 'facet normal NX NY NZ' is incomplete");
	expect_text_error("solid t\nfacet normal 0 0 1\ninner loop\n", "t.stl:3: expected 'outer loop', found 'inner'");
	expect_text_error(HEAD "vertex 0 0 0\nvertex 1 0 0\nvertex 0 1 0\nendloop now\n",
	                  "t.stl:7: unexpected 'now' after 'endloop'");
	expect_text_error(HEAD "vertex 0 0 0\nvertex 1 0 0\nvertex 0 1 0\nendloop\nendsolid\n",
	                  "t.stl:8: expected 'endfacet', found 'endsolid'");
	expect_text_error("solid t\nvertex 0 0 0\n", "t.stl:2: expected 'facet' or 'endsolid', found 'vertex'");
	expect_text_error("solid empty\n\nendsolid empty\n", "t.stl:3: no facets");
	expect_text_error(HEAD "vertex 0 0 0\nvertex 1 0 0\nvertex 0 1 0\nendloop\nendfacet\nendsolid t\njunk\n",
	                  "t.stl:10: unexpected 'junk' after 'endsolid'");
	const char nul[] = "solid t\nfacet normal 0 0 1\n\0\n";
	expect_error(nul, sizeof nul - 1, SCN_ERROR_PARSE,
	             "t.stl:3: control character 0x00: not text (a binary STL whose size does not match its facet "
	             "count?)");
}

static void test_binary_errors_name_the_byte(void)
{
	float f[18] = {0, 0, 0, 1, 0, 0, 0, 1, 0, 1, 0, 0, 1, 1, 0, 0, 1, 0};
	uint8_t bin[84 + 100 + 16];
	size_t size = binary_stl(bin, "binary", f, 2);
	REQUIRE(size == 184);
	expect_error(bin, 150, SCN_ERROR_PARSE,
	             "t.stl: byte 134: truncated in facet 2 of the 2 the binary header announces (184 bytes, the file "
	             "has 150)");
	expect_error(bin, 134, SCN_ERROR_PARSE,
	             "t.stl: byte 134: truncated in facet 2 of the 2 the binary header announces (184 bytes, the file "
	             "has 134)");
	expect_error(bin, 100, SCN_ERROR_PARSE,
	             "t.stl: byte 84: truncated in facet 1 of the 2 the binary header announces (184 bytes, the file "
	             "has 100)");
	memset(bin + 184, 0, 6);
	expect_error(bin, 190, SCN_ERROR_PARSE,
	             "t.stl: byte 184: 6 bytes after the last of the 2 facets the binary header announces (or not STL: "
	             "an ASCII STL begins with 'solid')");
	f[10] = NAN; /* facet 2, first vertex, y: 84 + 50 + 12 + 4 */
	binary_stl(bin, "binary", f, 2);
	expect_error(bin, 184, SCN_ERROR_PARSE, "t.stl: byte 150: vertex coordinate is not a finite number");
	f[10] = 0.0f;
	f[17] = -2e6f; /* facet 2, third vertex, z: 84 + 50 + 12 + 32 */
	binary_stl(bin, "binary", f, 2);
	expect_error(bin, 184, SCN_ERROR_PARSE,
	             "t.stl: byte 178: vertex coordinate -2e+06 is beyond the coordinate limit of 1e6 m");
	size = binary_stl(bin, "binary", f, 0);
	expect_error(bin, size, SCN_ERROR_PARSE, "t.stl: byte 80: no facets (the header's facet count is 0)");
}

static void test_neither_ascii_nor_binary(void)
{
	expect_error("", 0, SCN_ERROR_PARSE, "t.stl: empty file, not STL");
	expect_text_error("hello", "t.stl: not STL: it does not begin with 'solid' (ASCII) and is shorter than the "
	                           "84-byte binary header");
	expect_text_error("solidus\nfacet normal 0 0 1\n",
	                  "t.stl: not STL: it does not begin with 'solid' (ASCII) and is shorter than the 84-byte "
	                  "binary header");
	text t = {0};
	for (int i = 0; i < 10; i++)
		put(&t, "[section]\nkey = value\n");
	expect_error(t.s, t.n, SCN_ERROR_PARSE,
	             "t.stl: not STL: it does not begin with 'solid' (ASCII) and the binary facet count at byte 80 "
	             "(1635131453) does not match its size");
	/* the size check comes before any byte is read, so a short buffer can stand for a huge file */
	scn_mesh m;
	scn_error e;
	CHECK(parse("solid", SCN_STL_MAX_BYTES + 1, &m, NULL, &e) == SCN_ERROR_PARSE);
	CHECK(strstr(e.message, "t.stl: larger than 536870912 bytes") == e.message);
	CHECK(mesh_is_empty(&m));
}

static void test_file_errors(void)
{
	scn_mesh m;
	scn_mesh_report r;
	scn_error e = {0};
	CHECK(scn_stl_read(TELA_STL_DATA "/no-such-file", SCN_WELD_TOLERANCE, &m, &r, &e) == SCN_ERROR_IO);
	CHECK_MSG(strcmp(e.message, TELA_STL_DATA "/no-such-file: cannot open: No such file or directory") == 0, "%s",
	          e.message);
	CHECK(mesh_is_empty(&m));
	e = (scn_error){0};
	CHECK(scn_stl_read(TELA_STL_DATA, SCN_WELD_TOLERANCE, &m, &r, &e) == SCN_ERROR_IO);
	CHECK_MSG(strcmp(e.message, TELA_STL_DATA ": cannot read: Is a directory") == 0, "%s", e.message);
	CHECK(mesh_is_empty(&m));
	e = (scn_error){0};
	CHECK(scn_stl_read(TELA_STL_DATA "/truncated.stl", SCN_WELD_TOLERANCE, &m, &r, &e) == SCN_ERROR_PARSE);
	CHECK_MSG(strcmp(e.message, TELA_STL_DATA
	                 "/truncated.stl:6: truncated: the file ends here, expected 'vertex' or 'endloop'") == 0,
	          "%s", e.message);
	CHECK(mesh_is_empty(&m));
}

/* The seed's meshes have no extension: content decides. */
static void test_read_file_without_extension(void)
{
	scn_mesh m;
	scn_mesh_report r;
	scn_error e = {0};
	REQUIRE(scn_stl_read(TELA_STL_DATA "/cube", SCN_WELD_TOLERANCE, &m, &r, &e) == SCN_OK);
	CHECK(!r.binary && r.facets == 12 && m.vertex_count == 8 && m.triangle_count == 12);
	CHECK(strcmp(m.name, "unit cube") == 0);
	CHECK(r.closed && r.misoriented_edges == 0);
	CHECK_NEAR(r.signed_volume, 1.0, 1e-12);
	float lo[3], hi[3];
	scn_mesh_bounds(&m, lo, hi);
	CHECK(lo[0] == 0 && lo[1] == 0 && lo[2] == 0 && hi[0] == 1 && hi[1] == 1 && hi[2] == 1);
	scn_mesh_free(&m);
}

/* ---- Orientation -------------------------------------------------------------------------------- */

static void read_cube(scn_mesh *m)
{
	float f[12 * 9];
	cube_facets(f);
	uint8_t bin[84 + 50 * 12];
	size_t size = binary_stl(bin, "", f, 12);
	scn_error e;
	*m = (scn_mesh){0};
	parse(bin, size, m, NULL, &e);
}

static void flip(scn_mesh *m, int t)
{
	int keep = m->triangles[3 * t + 1];
	m->triangles[3 * t + 1] = m->triangles[3 * t + 2];
	m->triangles[3 * t + 2] = keep;
}

static void test_orient_one_flipped_facet(void)
{
	scn_mesh m;
	read_cube(&m);
	REQUIRE(m.triangle_count == 12);
	flip(&m, 7);
	scn_mesh_report r = {0};
	scn_mesh_analyse(&m, &r);
	CHECK(r.misoriented_edges == 3);
	CHECK(r.closed && r.boundary_edges == 0 && r.nonmanifold_edges == 0);
	CHECK(r.signed_volume < 1.0); /* the flipped facet's cone counts the wrong way */
	CHECK(scn_mesh_orient(&m) == 1);
	scn_mesh_analyse(&m, &r);
	CHECK(r.misoriented_edges == 0);
	CHECK_NEAR(r.signed_volume, 1.0, 1e-12);
	scn_mesh_free(&m);
}

static void test_orient_inside_out(void)
{
	scn_mesh m;
	read_cube(&m);
	REQUIRE(m.triangle_count == 12);
	for (int t = 0; t < 12; t++)
		flip(&m, t);
	scn_mesh_report r = {0};
	scn_mesh_analyse(&m, &r);
	CHECK(r.misoriented_edges == 0 && r.closed);
	CHECK_NEAR(r.signed_volume, -1.0, 1e-12);
	CHECK(scn_mesh_orient(&m) == 12);
	scn_mesh_analyse(&m, &r);
	CHECK_NEAR(r.signed_volume, 1.0, 1e-12);
	/* already consistent and outward: nothing to do */
	CHECK(scn_mesh_orient(&m) == 0);
	scn_mesh_free(&m);
}

/* An open sheet keeps the orientation most of its triangles have, even when the first is
 * the odd one out; a second, separate sheet is settled on its own. */
static void test_orient_open_sheets(void)
{
	scn_mesh a, b;
	scn_error e = {0};
	const float c0[3] = {0, 0, 0}, c1[3] = {0, 0, 5};
	REQUIRE(scn_mesh_grid(1, 1, 3, 3, c0, &a, &e) == SCN_OK);
	REQUIRE(scn_mesh_grid(1, 1, 2, 2, c1, &b, &e) == SCN_OK);
	/* both sheets in one mesh */
	scn_mesh m = {.vertex_count = a.vertex_count + b.vertex_count, .triangle_count = a.triangle_count + b.triangle_count};
	m.positions = malloc(3 * sizeof(float) * (size_t)m.vertex_count);
	m.triangles = malloc(3 * sizeof(int) * (size_t)m.triangle_count);
	REQUIRE(m.positions && m.triangles);
	memcpy(m.positions, a.positions, 3 * sizeof(float) * (size_t)a.vertex_count);
	memcpy(m.positions + 3 * a.vertex_count, b.positions, 3 * sizeof(float) * (size_t)b.vertex_count);
	memcpy(m.triangles, a.triangles, 3 * sizeof(int) * (size_t)a.triangle_count);
	for (int i = 0; i < 3 * b.triangle_count; i++)
		m.triangles[3 * a.triangle_count + i] = b.triangles[i] + a.vertex_count;
	flip(&m, 0);
	flip(&m, 5);
	for (int t = a.triangle_count; t < m.triangle_count - 1; t++) /* most of the second sheet */
		flip(&m, t);
	scn_mesh_report r = {0};
	scn_mesh_analyse(&m, &r);
	CHECK(r.misoriented_edges > 0 && !r.closed);
	CHECK(scn_mesh_orient(&m) == 2 + 1);
	scn_mesh_analyse(&m, &r);
	CHECK(r.misoriented_edges == 0);
	/* the first sheet is back to +z, the second now faces -z like most of it did */
	CHECK(memcmp(m.triangles, a.triangles, 3 * sizeof(int) * (size_t)a.triangle_count) == 0);
	CHECK(m.triangles[3 * (m.triangle_count - 1) + 1] == b.triangles[3 * (b.triangle_count - 1) + 2] + a.vertex_count);
	scn_mesh_free(&a);
	scn_mesh_free(&b);
	scn_mesh_free(&m);
}

/* Three triangles on one edge: non-manifold, counted and left alone by orient. */
static void test_nonmanifold_edge(void)
{
	const float f[27] = {0, 0, 0, 1, 0, 0, 0, 1, 0, /* */ 1, 0, 0, 0, 0, 0, 0, -1, 0,
	                     /* */ 0, 0, 0, 1, 0, 0, 0, 0, 1};
	uint8_t bin[84 + 150];
	size_t size = binary_stl(bin, "", f, 3);
	scn_mesh m;
	scn_mesh_report r;
	scn_error e;
	REQUIRE(parse(bin, size, &m, &r, &e) == SCN_OK);
	CHECK(r.nonmanifold_edges == 1);
	CHECK(r.boundary_edges == 6);
	CHECK(!r.closed);
	CHECK(scn_mesh_orient(&m) == 0);
	scn_mesh_free(&m);
}

/* ---- Writing ------------------------------------------------------------------------------------- */

static void moved_grid(scn_mesh *m)
{
	scn_error e = {0};
	const float c[3] = {0.1f, -0.2f, 0.3f}, rot[3] = {10, 20, 30}, tr[3] = {0.01f, 0.02f, 0.03f};
	*m = (scn_mesh){0};
	if (scn_mesh_grid(1.3f, 0.7f, 5, 3, c, m, &e) == SCN_OK)
		scn_mesh_transform(m, 1.1f, rot, tr);
	snprintf(m->name, sizeof m->name, "moved grid");
}

static void round_trip(bool binary)
{
	const char *path = binary ? "test_stl_round_trip.bin.stl" : "test_stl_round_trip.stl";
	scn_mesh g, a, b;
	scn_mesh_report r;
	scn_error e = {0};
	moved_grid(&g);
	REQUIRE(g.triangle_count == 30);
	REQUIRE(scn_stl_write(path, &g, binary, &e) == SCN_OK);
	REQUIRE(scn_stl_read(path, SCN_WELD_TOLERANCE, &a, &r, &e) == SCN_OK);
	CHECK(r.binary == binary);
	CHECK(a.vertex_count == g.vertex_count && r.welded == 3 * 30 - 24);
	CHECK(same_geometry(&g, &a)); /* every corner bit for bit; the numbering follows the file */
	CHECK(strcmp(a.name, binary ? "" : "moved grid") == 0);
	/* a mesh read from a file is numbered as the file is: writing it back changes nothing */
	REQUIRE(scn_stl_write(path, &a, binary, &e) == SCN_OK);
	REQUIRE(scn_stl_read(path, SCN_WELD_TOLERANCE, &b, &r, &e) == SCN_OK);
	CHECK(same_mesh(&a, &b));
	FILE *fp = fopen(path, "rb");
	REQUIRE(fp);
	char head[6] = {0};
	CHECK(fread(head, 1, 5, fp) == 5);
	fseek(fp, 0, SEEK_END);
	long size = ftell(fp);
	fclose(fp);
	if (binary) {
		CHECK(size == 84 + 50 * 30);
		CHECK(strcmp(head, "solid") != 0);
	} else {
		CHECK(strcmp(head, "solid") == 0);
	}
	remove(path);
	scn_mesh_free(&g);
	scn_mesh_free(&a);
	scn_mesh_free(&b);
}

static void test_round_trip_ascii(void)
{
	round_trip(false);
}

static void test_round_trip_binary(void)
{
	round_trip(true);
}

/* Facet normals come from the vertex order, unit length. */
static void test_written_normals(void)
{
	scn_mesh m;
	read_cube(&m);
	REQUIRE(m.triangle_count == 12);
	scn_error e = {0};
	REQUIRE(scn_stl_write("test_stl_normals.stl", &m, true, &e) == SCN_OK);
	FILE *fp = fopen("test_stl_normals.stl", "rb");
	REQUIRE(fp);
	uint8_t bin[84 + 50 * 12];
	CHECK(fread(bin, 1, sizeof bin, fp) == sizeof bin);
	fclose(fp);
	remove("test_stl_normals.stl");
	/* the facets of cube_quads in order: -z, -z, +z, +z, -y, -y, +y, +y, -x, -x, +x, +x */
	for (int t = 0; t < 12; t++) {
		float n[3];
		for (int k = 0; k < 3; k++) {
			uint8_t *p = bin + 84 + 50 * t + 4 * k;
			uint32_t u = (uint32_t)p[0] | (uint32_t)p[1] << 8 | (uint32_t)p[2] << 16 | (uint32_t)p[3] << 24;
			memcpy(&n[k], &u, 4);
		}
		int axis = 2 - t / 4, sign = (t / 2) % 2 ? 1 : -1;
		for (int k = 0; k < 3; k++)
			CHECK_NEAR(n[k], k == axis ? sign : 0, 1e-7);
	}
	scn_mesh_free(&m);
}

static void test_write_errors(void)
{
	scn_mesh m;
	read_cube(&m);
	scn_error e = {0};
	CHECK(scn_stl_write("no-such-dir/x.stl", &m, false, &e) == SCN_ERROR_IO);
	CHECK_MSG(strcmp(e.message, "no-such-dir/x.stl: cannot write: No such file or directory") == 0, "%s", e.message);
	m.triangles[5] = 8;
	e = (scn_error){0};
	CHECK(scn_stl_write("test_stl_bad.stl", &m, false, &e) == SCN_ERROR_PARSE);
	CHECK_MSG(strcmp(e.message, "test_stl_bad.stl: triangle 1 refers to vertex 8 of 8") == 0, "%s", e.message);
	scn_mesh_free(&m);
}

/* The world exporter (tela run --export-stl) writes what the reader reads back. */
static void test_world_export_reads_back(void)
{
	sim_world_def def = sim_world_def_default();
	sim_world *w = sim_world_create(&def);
	REQUIRE(w);
	sim_grid_def g = sim_grid_def_default();
	g.name = "cloth";
	g.nx = 4, g.ny = 3;
	g.size_x = 0.3f, g.size_y = 0.2f;
	int obj = sim_world_add_grid(w, &g);
	REQUIRE(obj >= 0);
	REQUIRE(scn_write_stl(w, obj, "test_stl_world.stl") == 0);
	scn_mesh m;
	scn_mesh_report r;
	scn_error e = {0};
	REQUIRE(scn_stl_read("test_stl_world.stl", SCN_WELD_TOLERANCE, &m, &r, &e) == SCN_OK);
	remove("test_stl_world.stl");
	CHECK(strcmp(m.name, "cloth") == 0);
	CHECK(m.vertex_count == 12 && m.triangle_count == sim_world_object_triangle_count(w, obj));
	CHECK(r.boundary_edges == 2 * (3 + 2) && r.misoriented_edges == 0);
	const vec4 *x = sim_world_positions(w) + sim_world_object_first_vertex(w, obj);
	const int *tri = sim_world_object_triangles(w, obj);
	for (int i = 0; i < 3 * m.triangle_count; i++)
		CHECK(memcmp(m.positions + 3 * m.triangles[i], x[tri[i]], 3 * sizeof(float)) == 0);
	scn_mesh_free(&m);
	sim_world_destroy(&w);
}

/* ---- Grid and transform ------------------------------------------------------------------------- */

static void test_grid(void)
{
	scn_mesh m;
	scn_error e = {0};
	const float c[3] = {1.0f, -1.0f, 0.5f};
	REQUIRE(scn_mesh_grid(2.0f, 1.0f, 4, 2, c, &m, &e) == SCN_OK);
	CHECK(m.vertex_count == 5 * 3);
	CHECK(m.triangle_count == 2 * 4 * 2);
	float lo[3], hi[3];
	scn_mesh_bounds(&m, lo, hi);
	CHECK(lo[0] == 0.0f && lo[1] == -1.5f && lo[2] == 0.5f);
	CHECK(hi[0] == 2.0f && hi[1] == -0.5f && hi[2] == 0.5f);
	/* row by row along x: vertex 1 is one cell along x, vertex 5 one along y */
	CHECK(m.positions[3] == 0.5f && m.positions[4] == -1.5f);
	CHECK(m.positions[15] == 0.0f && m.positions[16] == -1.0f);
	for (int t = 0; t < m.triangle_count; t++) { /* every normal +z */
		const float *a = m.positions + 3 * m.triangles[3 * t], *b = m.positions + 3 * m.triangles[3 * t + 1],
		            *d = m.positions + 3 * m.triangles[3 * t + 2];
		double z = ((double)b[0] - a[0]) * ((double)d[1] - a[1]) - ((double)b[1] - a[1]) * ((double)d[0] - a[0]);
		CHECK_NEAR(z, 0.5 * 0.5, 1e-12); /* twice the area of half a 0.5 x 0.5 cell */
	}
	scn_mesh_report r = {0};
	scn_mesh_analyse(&m, &r);
	CHECK(r.boundary_edges == 2 * (4 + 2) && r.nonmanifold_edges == 0 && r.misoriented_edges == 0 && !r.closed);
	scn_mesh_free(&m);
	CHECK(scn_mesh_grid(0.0f, 1.0f, 4, 2, c, &m, &e) == SCN_ERROR_PARSE);
	CHECK(mesh_is_empty(&m));
	e = (scn_error){0};
	CHECK(scn_mesh_grid(1.0f, 1.0f, 0, 2, c, &m, &e) == SCN_ERROR_PARSE);
	CHECK(strcmp(e.message, "grid: 0 x 2 divisions; at least 1 x 1") == 0);
	CHECK(mesh_is_empty(&m));
}

static void transformed(const float p[3], float scale, const float rot[3], const float tr[3], float out[3])
{
	float pos[9] = {p[0], p[1], p[2], 0, 0, 0, 0, 0, 0};
	int tri[3] = {0, 1, 2};
	scn_mesh m = {.vertex_count = 3, .triangle_count = 1, .positions = pos, .triangles = tri};
	scn_mesh_transform(&m, scale, rot, tr);
	memcpy(out, pos, 3 * sizeof(float));
}

static void test_transform(void)
{
	const float x[3] = {1, 0, 0}, y[3] = {0, 1, 0}, zero[3] = {0, 0, 0};
	float out[3];
	const float about_z[3] = {0, 0, 90};
	transformed(x, 1.0f, about_z, zero, out);
	CHECK_NEAR(out[0], 0.0, 1e-6);
	CHECK_NEAR(out[1], 1.0, 1e-6);
	CHECK_NEAR(out[2], 0.0, 1e-6);
	/* about x first, then y: y -> z -> x (the other order would give z) */
	const float xy[3] = {90, 90, 0};
	transformed(y, 1.0f, xy, zero, out);
	CHECK_NEAR(out[0], 1.0, 1e-6);
	CHECK_NEAR(out[1], 0.0, 1e-6);
	CHECK_NEAR(out[2], 0.0, 1e-6);
	/* scale first, then rotate, then translate */
	const float thirty[3] = {0, 0, 30}, tr[3] = {1, 2, 3};
	transformed(x, 2.0f, thirty, tr, out);
	CHECK_NEAR(out[0], 1.0 + 2.0 * cos(PI / 6), 1e-6);
	CHECK_NEAR(out[1], 2.0 + 2.0 * sin(PI / 6), 1e-6);
	CHECK_NEAR(out[2], 3.0, 1e-6);
	/* NULL rotation and translation: scale only */
	float pos[3] = {1.5f, -2.0f, 0.25f}, tri_pos[9];
	memcpy(tri_pos, pos, sizeof pos);
	int tri[3] = {0, 0, 0};
	scn_mesh m = {.vertex_count = 1, .triangle_count = 0, .positions = tri_pos, .triangles = tri};
	scn_mesh_transform(&m, 4.0f, NULL, NULL);
	CHECK(tri_pos[0] == 6.0f && tri_pos[1] == -8.0f && tri_pos[2] == 1.0f);
}

static void test_bounds_and_free(void)
{
	scn_mesh m = {0};
	float lo[3] = {9, 9, 9}, hi[3] = {9, 9, 9};
	scn_mesh_bounds(&m, lo, hi);
	CHECK(lo[0] == 0 && hi[2] == 0);
	scn_mesh_free(&m); /* an empty mesh is fine */
	read_cube(&m);
	scn_mesh_free(&m);
	CHECK(mesh_is_empty(&m));
}

static const test_case tests[] = {
	TEST(test_ascii_and_binary_read_identically),
	TEST(test_binary_header_starting_with_solid),
	TEST(test_ascii_tolerance),
	TEST(test_welding_counts_and_order),
	TEST(test_weld_tolerance),
	TEST(test_weld_across_cells),
	TEST(test_degenerate_removal),
	TEST(test_degenerate_after_welding_binary),
	TEST(test_ascii_errors_name_the_line),
	TEST(test_binary_errors_name_the_byte),
	TEST(test_neither_ascii_nor_binary),
	TEST(test_file_errors),
	TEST(test_read_file_without_extension),
	TEST(test_orient_one_flipped_facet),
	TEST(test_orient_inside_out),
	TEST(test_orient_open_sheets),
	TEST(test_nonmanifold_edge),
	TEST(test_round_trip_ascii),
	TEST(test_round_trip_binary),
	TEST(test_written_normals),
	TEST(test_write_errors),
	TEST(test_world_export_reads_back),
	TEST(test_grid),
	TEST(test_transform),
	TEST(test_bounds_and_free),
};

TEST_MAIN(tests)
