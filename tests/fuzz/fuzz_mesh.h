/* What the OBJ and PLY fuzz targets check of an accepted mesh, beyond crashes and
 * sanitizer reports: the promises of scenes/mesh.h, the report's counts, and that the
 * writers' files (OBJ and PLY) read back as the same mesh bit for bit. */
#ifndef TELA_FUZZ_MESH_H
#define TELA_FUZZ_MESH_H

#include "fuzz_check.h"

#include "scenes/mesh.h"

#include <float.h>
#include <math.h>
#include <stdbool.h>
#include <unistd.h>

typedef scn_status (*fuzz_mesh_parser)(const uint8_t *, size_t, const char *, float, scn_mesh *, scn_mesh_report *,
                                       scn_error *);

static void fuzz_check_mesh(const scn_mesh *m, const scn_mesh_report *r, scn_mesh_format format, float tol)
{
	FUZZ_REQUIRE(m->vertex_count > 0 && m->triangle_count > 0 && m->positions && m->triangles,
	             "a mesh with no triangles is an error");
	FUZZ_REQUIRE(memchr(m->name, '\0', sizeof m->name), "the name is NUL-terminated");
	FUZZ_REQUIRE(r->format == format, "the report names the format");
	FUZZ_REQUIRE(r->facets - r->degenerate == m->triangle_count && r->degenerate >= 0, "triangles kept and removed");
	FUZZ_REQUIRE(r->welded >= 0 && r->unused >= 0 && r->file_vertices - r->welded - r->unused == m->vertex_count,
	             "vertices listed, welded, unused and kept add up");
	for (int i = 0; i < 3 * m->vertex_count; i++)
		FUZZ_REQUIRE(isfinite(m->positions[i]) && fabsf(m->positions[i]) <= SCN_STL_COORD_LIMIT,
		             "coordinates are finite and within the limit");
	bool *used = calloc((size_t)m->vertex_count, sizeof *used);
	FUZZ_REQUIRE(used, "memory for the check");
	for (int t = 0; t < m->triangle_count; t++) {
		const int *v = m->triangles + 3 * (size_t)t;
		for (int k = 0; k < 3; k++) {
			FUZZ_REQUIRE(v[k] >= 0 && v[k] < m->vertex_count, "triangle indices are in range");
			used[v[k]] = true;
		}
		FUZZ_REQUIRE(v[0] != v[1] && v[1] != v[2] && v[0] != v[2], "no triangle has a corner twice");
		const float *p = m->positions;
		FUZZ_REQUIRE(fuzz_area_ratio(p + 3 * (size_t)v[0], p + 3 * (size_t)v[1], p + 3 * (size_t)v[2]) >=
		                 2.0 * FLT_EPSILON,
		             "zero-area triangles are removed");
	}
	for (int i = 0; i < m->vertex_count; i++)
		FUZZ_REQUIRE(used[i], "vertices no triangle uses are dropped");
	free(used);
	double reach2 = tol >= 1e-12f ? (double)tol * tol : 0.0;
	for (int i = 0; i < m->vertex_count; i++)
		for (int j = i + 1; j < m->vertex_count; j++) {
			const float *a = m->positions + 3 * (size_t)i, *b = m->positions + 3 * (size_t)j;
			double dx = (double)a[0] - b[0], dy = (double)a[1] - b[1], dz = (double)a[2] - b[2];
			FUZZ_REQUIRE(dx * dx + dy * dy + dz * dz > reach2, "no two vertices lie within the welding tolerance");
		}
	scn_mesh_report again = *r;
	scn_mesh_analyse(m, &again);
	FUZZ_REQUIRE(again.boundary_edges == r->boundary_edges && again.nonmanifold_edges == r->nonmanifold_edges &&
	                 again.misoriented_edges == r->misoriented_edges && again.closed == r->closed,
	             "the reader's report is what scn_mesh_analyse finds");
}

/* Written as OBJ and as PLY and read back without welding: the same mesh, bit for bit. */
static void fuzz_check_round_trips(const scn_mesh *m)
{
	static char path[2][512];
	const scn_mesh_format formats[2] = {SCN_MESH_OBJ, SCN_MESH_PLY};
	for (int f = 0; f < 2; f++) {
		if (!path[f][0]) { /* one scratch file per process, so that parallel runs do not share it */
			const char *dir = getenv("TMPDIR");
			snprintf(path[f], sizeof path[f], "%s/tela-fuzz-mesh-%ld.%s", dir && dir[0] ? dir : "/tmp",
			         (long)getpid(), scn_mesh_format_name(formats[f]));
		}
		scn_error err = {0};
		scn_status st = scn_mesh_write(path[f], formats[f], m, false, &err);
		if (st == SCN_ERROR_IO) /* a full or read-only disk says nothing about the writer */
			continue;
		FUZZ_REQUIRE(st == SCN_OK, "the writer takes what the reader accepted");
		scn_mesh back;
		scn_mesh_report r;
		st = scn_mesh_read(path[f], formats[f], 0.0f, &back, &r, &err);
		unlink(path[f]);
		if (st != SCN_OK)
			fprintf(stderr, "reading the written file back: %s\n", err.message);
		FUZZ_REQUIRE(st == SCN_OK, "the written file reads back");
		FUZZ_REQUIRE(back.vertex_count == m->vertex_count && back.triangle_count == m->triangle_count &&
		                 memcmp(back.positions, m->positions, 3 * sizeof(float) * (size_t)m->vertex_count) == 0 &&
		                 memcmp(back.triangles, m->triangles, 3 * sizeof(int) * (size_t)m->triangle_count) == 0,
		             "the written file reads back bit for bit, in the same order");
		FUZZ_REQUIRE(r.welded == 0 && r.unused == 0 && r.degenerate == 0, "nothing of it is welded or dropped");
		if (formats[f] == SCN_MESH_OBJ)
			FUZZ_REQUIRE(strcmp(back.name, m->name) == 0, "OBJ keeps the name");
		scn_mesh_free(&back);
	}
}

static void fuzz_mesh_one(fuzz_mesh_parser parse, scn_mesh_format format, const char *name, const uint8_t *data,
                          size_t size, float tol, bool round_trip)
{
	scn_mesh mesh;
	scn_mesh_report rep;
	scn_error err = {0};
	scn_status st = parse(data, size, name, tol, &mesh, &rep, &err);
	if (st != SCN_OK) {
		fuzz_check_failure(st, &err, name);
		FUZZ_REQUIRE(mesh.vertex_count == 0 && mesh.triangle_count == 0 && !mesh.positions && !mesh.triangles,
		             "a failed read leaves the mesh empty");
		return;
	}
	fuzz_check_success(&err);
	fuzz_check_mesh(&mesh, &rep, format, tol);
	if (round_trip)
		fuzz_check_round_trips(&mesh);
	scn_mesh_free(&mesh);
}

#endif
