/* Triangle meshes and their files (STL, OBJ, PLY): what `tela mesh`, mesh cloth and rigid
 * meshes read and write.  The format of a file is chosen by its extension (`.obj`, `.ply`;
 * anything else, no extension included, is STL: the seed simulator's meshes have none),
 * or forced by the caller.  ASCII and binary STL are told apart by content, never by the
 * file name: a file is binary when it is at least 84 bytes long and its size is exactly
 * 84 + 50 * (the facet count at byte 80), whatever its header says (some exporters begin
 * binary headers with "solid"); otherwise it must be ASCII and begin with "solid".
 *
 * Vertex numbering: STL welded vertices are numbered in order of first appearance in the
 * file, the numbering the seed simulator's velocity-constraint files refer to.  OBJ and
 * PLY list their vertices: the file's order is kept, less the vertices welded into an
 * earlier one and those no kept triangle uses (a file with neither keeps its numbering
 * exactly, from 0). */
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

typedef enum scn_mesh_format { SCN_MESH_STL, SCN_MESH_OBJ, SCN_MESH_PLY } scn_mesh_format;

/* What reading found and fixed, for warnings and `tela mesh info`. */
typedef struct scn_mesh_report {
	scn_mesh_format format;
	bool binary;             /* binary STL or binary PLY: positions below are byte offsets */
	bool big_endian;         /* binary PLY: binary_big_endian */
	int facets;              /* STL: facets in the file; OBJ, PLY: triangles its faces make */
	int welded;              /* STL: corners merged into an earlier vertex; OBJ, PLY: vertices merged
	                          * into an earlier one (within the tolerance) */
	int degenerate;          /* zero-area facets removed (a warning) */
	int first_degenerate_line; /* text: line of the first removed facet; binary: its byte offset */
	int file_vertices;       /* OBJ, PLY: vertices the file lists */
	int unused;              /* OBJ, PLY: vertices no kept triangle uses, dropped */
	int ignored;             /* OBJ: statements tela does not know, skipped (a warning) */
	int first_ignored_line;
	char first_ignored[24];  /* the first one's keyword, cut to 23 bytes */
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
#define SCN_STL_MAX_BYTES ((size_t)512 << 20) /* largest mesh file (STL, OBJ or PLY) */
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

/* Wavefront OBJ and PLY, read with the same welding, degenerate-facet removal and report
 * as STL (the weld tolerance applies to the file's vertices).  OBJ: `v` and `f` lines,
 * faces of more than 3 vertices fan-triangulated from their first vertex; the rules are in
 * docs/tools.md.  PLY: ASCII, binary little- or big-endian; errors name the header line,
 * the data line (ASCII) or the byte offset (binary).  The mesh name is OBJ's first `o`
 * name, or empty. */
scn_status scn_obj_parse(const uint8_t *data, size_t size, const char *name, float weld_tolerance, scn_mesh *out,
                         scn_mesh_report *report, scn_error *err);
scn_status scn_ply_parse(const uint8_t *data, size_t size, const char *name, float weld_tolerance, scn_mesh *out,
                         scn_mesh_report *report, scn_error *err);

/* The format a path names by its extension, case-insensitively: ".obj", ".ply", else STL. */
scn_mesh_format scn_mesh_format_of(const char *path);
/* "stl", "obj", "ply" (lower case) to a format; false for any other name. */
bool scn_mesh_format_parse(const char *name, scn_mesh_format *out);
/* "stl", "obj" or "ply". */
const char *scn_mesh_format_name(scn_mesh_format format);

/* Reads a mesh file in the given format (scn_mesh_format_of(path) for the usual choice). */
scn_status scn_mesh_read(const char *path, scn_mesh_format format, float weld_tolerance, scn_mesh *out,
                         scn_mesh_report *report, scn_error *err);
/* Writes a mesh: STL (ASCII, or binary when `binary`), OBJ (text: `o NAME` when the mesh
 * has a name, `v X Y Z` per vertex, `f A B C` per triangle, 1-based) or PLY (always
 * binary little-endian, float x y z and `list uchar int vertex_indices`).  Coordinates
 * are written so that they read back as the same floats, and the vertices and triangles
 * in the mesh's order, so reading the file gives the same mesh.  A file that cannot be
 * finished is removed. */
scn_status scn_mesh_write(const char *path, scn_mesh_format format, const scn_mesh *mesh, bool binary,
                          scn_error *err);

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
