/* What the mesh readers and writers share inside tela_scenes: STL's welding and
 * degenerate-facet rules, so that OBJ and PLY meshes come out by the same rules, and the
 * finishing of an indexed mesh (OBJ, PLY). */
#ifndef TELA_SCENES_MESH_INTERNAL_H
#define TELA_SCENES_MESH_INTERNAL_H

#include "scenes/mesh.h"

#include <limits.h>
#include <stdbool.h>
#include <stdio.h>

/* Triangle indices are int, three per triangle; positions three floats per vertex. */
#define SCN_MESH_MAX_ITEMS (INT_MAX / 3)

/* stl.c: gives each of n points a vertex (the earliest within tol, else a new one at its
 * own position): out_pos holds the vertices in order of first appearance, out_index one
 * per point.  False when out of memory. */
bool scn_weld_points(const float *points, int n, float tol, float **out_pos, int *out_count, int **out_index);
/* stl.c: zero area at float precision (mesh.h). */
bool scn_zero_area(const float *a, const float *b, const float *c);
/* stl.c: drops the vertices no triangle uses, keeping the others' order; returns how many
 * remain, or -1 when out of memory. */
int scn_drop_unused(float *pos, int count, int *tris, int triangle_count);
/* stl.c: the mesh from welded positions (count of them) and its kept non-degenerate
 * triangles: refuses none kept, drops the vertices no triangle uses (counted in
 * rep->unused), and fills *out and the report's topology.  Takes pos and tris, freed on
 * failure. */
scn_status scn_mesh_finish(float *pos, int count, int *tris, int kept, const char *path, scn_mesh *out,
                           scn_mesh_report *rep, scn_error *err);

/* An indexed mesh as a file lists it: `positions` (3 floats per file vertex) and
 * `triangles` (3 file indices each, already checked against vertex_count), with `where`
 * each triangle came from (a line or a byte offset). */
typedef struct scn_indexed {
	float *positions;
	int vertex_count, vertex_cap;
	int *triangles;
	int *where;
	int triangle_count, triangle_cap;
} scn_indexed;

bool scn_indexed_add_vertex(scn_indexed *ix, const float p[3]);
bool scn_indexed_add_triangle(scn_indexed *ix, int a, int b, int c, int where);
void scn_indexed_free(scn_indexed *ix);
/* Welds, removes degenerate triangles and unused vertices, and fills *out and the report's
 * counts and topology.  On failure *out is empty and err names `path`. */
scn_status scn_indexed_finish(const scn_indexed *ix, const char *path, float tol, scn_mesh *out,
                              scn_mesh_report *report, scn_error *err);

/* stl.c: opens `path`, has `write` fill it from `source` (in `form`, the writer's choice
 * of variant), closes it; 0 or the errno of the failed call, and a failed file is removed
 * rather than left half written. */
int scn_write_file(const char *path, void (*write)(FILE *fp, const void *source, int form), const void *source,
                   int form);

/* A coordinate token of len bytes: NULL when *out holds it, else why it is refused ("is
 * not a number", "is not a finite number", "is beyond the coordinate limit of 1e6 m"). */
const char *scn_parse_coord(const char *s, int len, float *out);
/* Any number strtod reads whole (values tela skips may be NaN). */
bool scn_is_number(const char *s, int len);

/* A text line's bytes for the OBJ and PLY readers: a control character other than blanks
 * means binary data. */
static inline bool scn_is_blank(unsigned char c)
{
	return c == ' ' || c == '\t' || c == '\r' || c == '\v' || c == '\f';
}

static inline bool scn_is_control(unsigned char c)
{
	return (c < 0x20 && !scn_is_blank(c)) || c == 0x7f;
}

#endif
