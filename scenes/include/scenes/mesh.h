/* Triangle meshes and STL files: what `tela mesh`, mesh cloth and rigid meshes read and
 * write.  ASCII and binary STL are told apart by content, never by the file name (the
 * seed simulator's meshes have no extension). */
#ifndef TELA_SCENES_MESH_H
#define TELA_SCENES_MESH_H

#include "scenes/error.h"

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

typedef struct scn_mesh {
	int vertex_count;
	int triangle_count;
	float *positions; /* 3 per vertex */
	int *triangles;   /* 3 vertex indices per triangle */
	char name[64];    /* the ASCII STL solid name, or empty */
} scn_mesh;

/* What reading found and fixed, for warnings and `tela mesh info`. */
typedef struct scn_mesh_report {
	bool binary;             /* the file was binary STL */
	int facets;              /* facets in the file */
	int welded;              /* corner vertices merged into an earlier one (within the tolerance) */
	int degenerate;          /* zero-area facets removed (a warning) */
	int first_degenerate_line; /* ASCII: line of the first removed facet; binary: its byte offset */
	int boundary_edges;      /* edges with one triangle */
	int nonmanifold_edges;   /* edges with three or more triangles */
	int misoriented_edges;   /* interior edges whose two triangles disagree on orientation */
	bool closed;             /* every edge has exactly two triangles */
	double signed_volume;    /* closed meshes: > 0 when the normals point outwards */
} scn_mesh_report;

/* Default welding tolerance, m: corners closer than this are one vertex. */
#define SCN_WELD_TOLERANCE 1e-6f

/* Reads an STL file (ASCII or binary), welds corners within `weld_tolerance`, removes
 * degenerate facets and fills `report` (may be NULL).  A mesh left with no triangles is
 * an error.  On failure *out is empty and err says "path:line: ..." (ASCII) or
 * "path: byte N: ..." (binary). */
scn_status scn_stl_read(const char *path, float weld_tolerance, scn_mesh *out, scn_mesh_report *report,
                        scn_error *err);
/* The same from memory; `name` stands for the path in messages.  The fuzz target's entry. */
scn_status scn_stl_parse(const uint8_t *data, size_t size, const char *name, float weld_tolerance, scn_mesh *out,
                         scn_mesh_report *report, scn_error *err);

/* Writes ASCII (solid name = mesh->name, or "tela") or binary STL with facet normals from
 * the vertex order. */
scn_status scn_stl_write(const char *path, const scn_mesh *mesh, bool binary, scn_error *err);

/* Recounts the topology fields of report (edges, orientation, closedness, volume). */
void scn_mesh_analyse(const scn_mesh *mesh, scn_mesh_report *report);
/* Makes the orientation consistent across interior edges (flipping whole triangles,
 * component by component) and, for closed components, outward.  Returns the number of
 * triangles flipped, or -1 when out of memory. */
int scn_mesh_orient(scn_mesh *mesh);

/* A flat rectangular grid mesh (the seed's fabricCreator): width along x, length along
 * y, divisions_w by divisions_l cells, centred at center, in the z = center[2] plane,
 * normals +z. */
scn_status scn_mesh_grid(float width, float length, int divisions_w, int divisions_l, const float center[3],
                         scn_mesh *out, scn_error *err);

/* Applies x' = R(scale * x) + translate, R from Euler angles in degrees about x, then y,
 * then z (extrinsic). */
void scn_mesh_transform(scn_mesh *mesh, float scale, const float rotate_deg[3], const float translate[3]);

void scn_mesh_bounds(const scn_mesh *mesh, float lo[3], float hi[3]);
void scn_mesh_free(scn_mesh *mesh);

#endif
