/* Triangle meshes and STL files: what `tela mesh`, mesh cloth and rigid meshes read and
 * write.  ASCII and binary STL are told apart by content, never by the file name (the
 * seed simulator's meshes have no extension): a file is binary when it is at least 84
 * bytes long and its size is exactly 84 + 50 * (the facet count at byte 80), whatever
 * its header says (some exporters begin binary headers with "solid"); otherwise it must
 * be ASCII and begin with "solid".
 *
 * Vertex numbering: welded vertices are numbered in order of first appearance in the
 * file, the numbering the seed simulator's velocity-constraint files refer to. */
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
/* Limits of what the reader accepts, so that a wrong path or a corrupt file is an error
 * rather than an exhausted memory or a mesh flung out of the scene. */
#define SCN_STL_MAX_BYTES ((size_t)512 << 20) /* largest STL file */
#define SCN_STL_COORD_LIMIT 1e6               /* m, the largest |coordinate| */

/* Reads an STL file (ASCII or binary), welds corners within `weld_tolerance`, removes
 * degenerate facets and fills `report` (may be NULL).  A mesh left with no triangles is
 * an error.  On failure *out is empty and err says "path:line: ..." (ASCII) or
 * "path: byte N: ..." (binary).
 *
 * Welding: a corner joins the earliest vertex within `weld_tolerance` (Euclidean), else
 * starts a new one at its own position.  A tolerance of 0 (or below 1e-12, or NaN) welds
 * exactly equal corners only, as the seed simulator did.  Degenerate facets are those with
 * two corners welded together or with zero area at float precision (twice the area below
 * 4 * FLT_EPSILON times the square of the longest edge); vertices only they used are
 * dropped.  The file's facet normals are ignored: the vertex order is the orientation.
 *
 * The reader does NOT change the orientation: the report counts misoriented edges, and a
 * caller that needs consistent outward normals (the scene builder for rigid meshes) calls
 * scn_mesh_orient. */
scn_status scn_stl_read(const char *path, float weld_tolerance, scn_mesh *out, scn_mesh_report *report,
                        scn_error *err);
/* The same from memory; `name` stands for the path in messages.  The fuzz target's entry. */
scn_status scn_stl_parse(const uint8_t *data, size_t size, const char *name, float weld_tolerance, scn_mesh *out,
                         scn_mesh_report *report, scn_error *err);

/* Writes ASCII (solid name = mesh->name, or "tela") or binary STL with facet normals from
 * the vertex order. */
scn_status scn_stl_write(const char *path, const scn_mesh *mesh, bool binary, scn_error *err);

/* Recounts the topology fields of report (edges, orientation, closedness, volume);
 * signed_volume is 0 unless the mesh is closed.  Out of memory, the edge counts are -1. */
void scn_mesh_analyse(const scn_mesh *mesh, scn_mesh_report *report);
/* Makes the orientation consistent across interior edges (flipping whole triangles,
 * component by component) and, for closed components, outward.  Returns the number of
 * triangles flipped, or -1 when out of memory.  Components are connected through
 * manifold edges (two triangles); an open component keeps the orientation most of its
 * triangles already have; a non-orientable one (a Moebius strip) stays inconsistent
 * somewhere. */
int scn_mesh_orient(scn_mesh *mesh);

/* A flat rectangular grid mesh (the seed's fabricCreator): width along x, length along
 * y, divisions_w by divisions_l cells, centred at center, in the z = center[2] plane,
 * normals +z. */
scn_status scn_mesh_grid(float width, float length, int divisions_w, int divisions_l, const float center[3],
                         scn_mesh *out, scn_error *err);

/* Applies x' = R(scale * x) + translate, R from Euler angles in degrees about x, then y,
 * then z (extrinsic).  rotate_deg and translate may be NULL (none).  Multiples of 90
 * degrees rotate exactly.  A negative scale mirrors the mesh and so turns its normals
 * inside out. */
void scn_mesh_transform(scn_mesh *mesh, float scale, const float rotate_deg[3], const float translate[3]);

/* Axis-aligned bounds of the vertices; all zero for an empty mesh. */
/* The shortest decimal (7 to 9 significant digits) that reads back as the same float:
 * what the STL writer prints, so ASCII files round-trip exactly. */
void scn_format_float(char buf[32], float v);

void scn_mesh_bounds(const scn_mesh *mesh, float lo[3], float hi[3]);
/* Frees the arrays and leaves an empty mesh; safe on an empty or zeroed mesh. */
void scn_mesh_free(scn_mesh *mesh);

#endif
