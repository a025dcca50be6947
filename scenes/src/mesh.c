/* Triangle meshes in memory: topology checks, orientation repair, the flat grid of the
 * seed's fabricCreator and the rigid moves of its meshMover. */
#include "scenes/mesh.h"

#include <limits.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

/* ---- Edges ------------------------------------------------------------------------------------ */

/* One triangle's side, with its vertices sorted so that the sides of neighbouring triangles
 * sort next to each other. */
typedef struct half_edge {
	int lo, hi;
	int tri;
	signed char side;    /* 0..2: the side from corner side to corner side + 1 */
	signed char forward; /* 1 when the triangle runs lo -> hi */
} half_edge;

static int compare_edges(const void *pa, const void *pb)
{
	const half_edge *a = pa, *b = pb;
	if (a->lo != b->lo)
		return a->lo < b->lo ? -1 : 1;
	if (a->hi != b->hi)
		return a->hi < b->hi ? -1 : 1;
	if (a->tri != b->tri) /* a total order: qsort is not stable, the result must not vary */
		return a->tri < b->tri ? -1 : 1;
	return a->side - b->side;
}

/* The sides of every triangle, grouped by edge; NULL when out of memory.  Sides that join a
 * vertex to itself (a degenerate triangle) are left out; *count says how many remain. */
static half_edge *sorted_edges(const scn_mesh *m, size_t *count)
{
	size_t n = 3 * (size_t)m->triangle_count, k = 0;
	half_edge *e = malloc((n ? n : 1) * sizeof *e);
	if (!e)
		return NULL;
	for (int t = 0; t < m->triangle_count; t++) {
		for (int s = 0; s < 3; s++) {
			int a = m->triangles[3 * t + s], b = m->triangles[3 * t + (s + 1) % 3];
			if (a == b)
				continue;
			e[k++] = (half_edge){a < b ? a : b, a < b ? b : a, t, (signed char)s, (signed char)(a < b)};
		}
	}
	qsort(e, k, sizeof *e, compare_edges);
	*count = k;
	return e;
}

/* The end of the group of sides that share edge e[i]. */
static size_t group_end(const half_edge *e, size_t count, size_t i)
{
	size_t j = i + 1;
	while (j < count && e[j].lo == e[i].lo && e[j].hi == e[i].hi)
		j++;
	return j;
}

/* Six times the signed volume a triangle's cone from the origin adds. */
static double cone6(const scn_mesh *m, int t)
{
	const float *a = m->positions + 3 * (size_t)m->triangles[3 * t];
	const float *b = m->positions + 3 * (size_t)m->triangles[3 * t + 1];
	const float *c = m->positions + 3 * (size_t)m->triangles[3 * t + 2];
	return (double)a[0] * ((double)b[1] * c[2] - (double)b[2] * c[1]) -
	       (double)a[1] * ((double)b[0] * c[2] - (double)b[2] * c[0]) +
	       (double)a[2] * ((double)b[0] * c[1] - (double)b[1] * c[0]);
}

void scn_mesh_analyse(const scn_mesh *mesh, scn_mesh_report *r)
{
	r->boundary_edges = r->nonmanifold_edges = r->misoriented_edges = 0;
	r->closed = false;
	r->signed_volume = 0.0;
	size_t count;
	half_edge *e = sorted_edges(mesh, &count);
	if (!e) {
		r->boundary_edges = r->nonmanifold_edges = r->misoriented_edges = -1;
		return;
	}
	for (size_t i = 0; i < count;) {
		size_t j = group_end(e, count, i);
		if (j - i == 1)
			r->boundary_edges++;
		else if (j - i >= 3)
			r->nonmanifold_edges++;
		else if (e[i].forward == e[i + 1].forward) /* consistent neighbours run a shared edge both ways */
			r->misoriented_edges++;
		i = j;
	}
	free(e);
	r->closed = mesh->triangle_count > 0 && r->boundary_edges == 0 && r->nonmanifold_edges == 0;
	if (r->closed) {
		double v6 = 0.0;
		for (int t = 0; t < mesh->triangle_count; t++)
			v6 += cone6(mesh, t);
		r->signed_volume = v6 / 6.0;
	}
}

/* ---- Orientation ------------------------------------------------------------------------------ */

/* Per triangle side: the triangle across it when the edge is manifold (else -1), and
 * whether that neighbour runs the edge the same way (so one of the two must flip). */
typedef struct adjacency {
	int *across;
	bool *same;
} adjacency;

static bool build_adjacency(const scn_mesh *m, adjacency *adj)
{
	size_t n = 3 * (size_t)m->triangle_count, count;
	adj->across = malloc((n ? n : 1) * sizeof *adj->across);
	adj->same = malloc((n ? n : 1) * sizeof *adj->same);
	half_edge *e = sorted_edges(m, &count);
	if (!adj->across || !adj->same || !e) {
		free(e);
		return false;
	}
	for (size_t i = 0; i < n; i++)
		adj->across[i] = -1;
	for (size_t i = 0; i < count;) {
		size_t j = group_end(e, count, i);
		if (j - i == 2 && e[i].tri != e[i + 1].tri) {
			bool same = e[i].forward == e[i + 1].forward;
			size_t a = 3 * (size_t)e[i].tri + (size_t)e[i].side, b = 3 * (size_t)e[i + 1].tri + (size_t)e[i + 1].side;
			adj->across[a] = e[i + 1].tri;
			adj->across[b] = e[i].tri;
			adj->same[a] = adj->same[b] = same;
		}
		i = j;
	}
	free(e);
	return true;
}

/* Visits the component of triangle seed breadth first, from queue[start], choosing each
 * triangle's flip relative to the seed's.  Returns the end of the component in queue and
 * says whether every side of it has a manifold neighbour (a closed component). */
static int visit_component(const adjacency *adj, int seed, int *queue, int start, bool *seen, bool *flip,
                           bool *closed)
{
	int end = start;
	queue[end++] = seed;
	seen[seed] = true;
	flip[seed] = false;
	*closed = true;
	for (int q = start; q < end; q++) {
		int t = queue[q];
		for (int s = 0; s < 3; s++) {
			int n = adj->across[3 * t + s];
			if (n < 0) {
				*closed = false;
				continue;
			}
			if (seen[n]) /* already decided; a mismatch means a non-orientable surface */
				continue;
			seen[n] = true;
			flip[n] = flip[t] != adj->same[3 * t + s];
			queue[end++] = n;
		}
	}
	return end;
}

/* Closed components point outwards; open ones keep the orientation most triangles have. */
static void settle_component(const scn_mesh *m, const int *tris, int count, bool closed, bool *flip)
{
	bool invert;
	if (closed) {
		double v6 = 0.0;
		for (int i = 0; i < count; i++)
			v6 += flip[tris[i]] ? -cone6(m, tris[i]) : cone6(m, tris[i]);
		invert = v6 < 0.0;
	} else {
		int flipped = 0;
		for (int i = 0; i < count; i++)
			flipped += flip[tris[i]];
		invert = 2 * flipped > count;
	}
	if (invert)
		for (int i = 0; i < count; i++)
			flip[tris[i]] = !flip[tris[i]];
}

int scn_mesh_orient(scn_mesh *mesh)
{
	int nt = mesh->triangle_count;
	adjacency adj = {0};
	int *queue = malloc((nt ? (size_t)nt : 1) * sizeof *queue);
	bool *seen = calloc(nt ? (size_t)nt : 1, sizeof *seen);
	bool *flip = calloc(nt ? (size_t)nt : 1, sizeof *flip);
	int flipped = -1;
	if (queue && seen && flip && build_adjacency(mesh, &adj)) {
		int done = 0;
		for (int seed = 0; seed < nt; seed++) {
			if (seen[seed])
				continue;
			bool closed;
			int end = visit_component(&adj, seed, queue, done, seen, flip, &closed);
			settle_component(mesh, queue + done, end - done, closed, flip);
			done = end;
		}
		flipped = 0;
		for (int t = 0; t < nt; t++) {
			if (!flip[t])
				continue;
			int *tri = mesh->triangles + 3 * (size_t)t, keep = tri[1];
			tri[1] = tri[2];
			tri[2] = keep;
			flipped++;
		}
	}
	free(adj.across);
	free(adj.same);
	free(queue);
	free(seen);
	free(flip);
	return flipped;
}

/* ---- Making and moving meshes ------------------------------------------------------------------ */

scn_status scn_mesh_grid(float width, float length, int divisions_w, int divisions_l, const float center[3],
                         scn_mesh *out, scn_error *err)
{
	*out = (scn_mesh){0};
	if (!(width > 0.0f) || !(length > 0.0f) || !isfinite(width) || !isfinite(length))
		return scn_fail(err, SCN_ERROR_PARSE, "grid: the size %g x %g is not positive", (double)width,
		                (double)length);
	if (divisions_w < 1 || divisions_l < 1)
		return scn_fail(err, SCN_ERROR_PARSE, "grid: %d x %d divisions; at least 1 x 1", divisions_w, divisions_l);
	long long columns = (long long)divisions_w + 1, rows = (long long)divisions_l + 1;
	if (columns * rows > INT_MAX || 6LL * divisions_w * divisions_l > INT_MAX)
		return scn_fail(err, SCN_ERROR_PARSE, "grid: %d x %d divisions are too many", divisions_w, divisions_l);
	for (int k = 0; k < 3; k++)
		if (!isfinite(center[k]))
			return scn_fail(err, SCN_ERROR_PARSE, "grid: the centre is not finite");
	out->positions = malloc((size_t)(columns * rows) * 3 * sizeof *out->positions);
	out->triangles = malloc((size_t)divisions_w * (size_t)divisions_l * 6 * sizeof *out->triangles);
	if (!out->positions || !out->triangles) {
		scn_mesh_free(out);
		return scn_fail(err, SCN_ERROR_MEMORY, "grid: out of memory");
	}
	out->vertex_count = (int)(columns * rows);
	out->triangle_count = 2 * divisions_w * divisions_l;
	float *p = out->positions;
	for (int j = 0; j < rows; j++) {
		for (int i = 0; i < columns; i++) {
			/* in double, so that the outer rows land exactly on centre +- size / 2 */
			*p++ = (float)((double)center[0] + (double)width * ((double)i / divisions_w - 0.5));
			*p++ = (float)((double)center[1] + (double)length * ((double)j / divisions_l - 0.5));
			*p++ = center[2];
		}
	}
	int *t = out->triangles;
	for (int j = 0; j < divisions_l; j++) {
		for (int i = 0; i < divisions_w; i++) {
			int v00 = j * (int)columns + i, v10 = v00 + 1, v01 = v00 + (int)columns, v11 = v01 + 1;
			/* counter-clockwise seen from +z: normals +z */
			*t++ = v00, *t++ = v10, *t++ = v11;
			*t++ = v00, *t++ = v11, *t++ = v01;
		}
	}
	return SCN_OK;
}

/* Sine and cosine of an angle in degrees, exact at multiples of 90 degrees so that quarter
 * turns move a mesh without rounding noise. */
static void sincos_deg(double deg, double *s, double *c)
{
	double r = fmod(deg, 360.0);
	if (r < 0.0)
		r += 360.0;
	if (r == 0.0 || r == 90.0 || r == 180.0 || r == 270.0) {
		int q = (int)(r / 90.0);
		static const double sq[4] = {0, 1, 0, -1}, cq[4] = {1, 0, -1, 0};
		*s = sq[q];
		*c = cq[q];
		return;
	}
	double rad = r * (3.14159265358979323846 / 180.0);
	*s = sin(rad);
	*c = cos(rad);
}

/* R = Rz Ry Rx: about x first, then y, then z, about the fixed axes. */
static void euler_matrix(const float deg[3], double m[3][3])
{
	double sx, cx, sy, cy, sz, cz;
	sincos_deg(deg ? deg[0] : 0.0, &sx, &cx);
	sincos_deg(deg ? deg[1] : 0.0, &sy, &cy);
	sincos_deg(deg ? deg[2] : 0.0, &sz, &cz);
	m[0][0] = cz * cy, m[0][1] = cz * sy * sx - sz * cx, m[0][2] = cz * sy * cx + sz * sx;
	m[1][0] = sz * cy, m[1][1] = sz * sy * sx + cz * cx, m[1][2] = sz * sy * cx - cz * sx;
	m[2][0] = -sy, m[2][1] = cy * sx, m[2][2] = cy * cx;
}

void scn_mesh_transform(scn_mesh *mesh, float scale, const float rotate_deg[3], const float translate[3])
{
	double m[3][3];
	euler_matrix(rotate_deg, m);
	for (int v = 0; v < mesh->vertex_count; v++) {
		float *p = mesh->positions + 3 * (size_t)v;
		double x[3] = {(double)scale * p[0], (double)scale * p[1], (double)scale * p[2]};
		for (int k = 0; k < 3; k++)
			p[k] = (float)(m[k][0] * x[0] + m[k][1] * x[1] + m[k][2] * x[2] + (translate ? translate[k] : 0.0f));
	}
}

void scn_mesh_bounds(const scn_mesh *mesh, float lo[3], float hi[3])
{
	for (int k = 0; k < 3; k++)
		lo[k] = hi[k] = mesh->vertex_count > 0 ? mesh->positions[k] : 0.0f;
	for (int v = 1; v < mesh->vertex_count; v++) {
		for (int k = 0; k < 3; k++) {
			float x = mesh->positions[3 * (size_t)v + k];
			lo[k] = x < lo[k] ? x : lo[k];
			hi[k] = x > hi[k] ? x : hi[k];
		}
	}
}

void scn_mesh_free(scn_mesh *mesh)
{
	free(mesh->positions);
	free(mesh->triangles);
	*mesh = (scn_mesh){0};
}
