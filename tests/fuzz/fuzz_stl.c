/* libFuzzer target for the STL reader (scn_stl_parse), then scn_mesh_analyse and
 * scn_mesh_orient on what it accepts.  Beyond crashes and sanitizer reports it checks
 * the promises of scenes/mesh.h, and for binary files it recomputes the welded mesh by
 * brute force, because a binary file's corners can be read back exactly here. */
#include "fuzz_check.h"

#include "scenes/mesh.h"

#include <float.h>
#include <math.h>
#include <stdbool.h>

static const char NAME[] = "fuzz.stl";

/* The reader's documented binary rule, restated so that a mismatch shows up. */
static bool is_binary(const uint8_t *data, size_t size, uint32_t *count)
{
	if (size < 84)
		return false;
	*count = (uint32_t)data[80] | (uint32_t)data[81] << 8 | (uint32_t)data[82] << 16 | (uint32_t)data[83] << 24;
	return (uint64_t)size == 84 + 50 * (uint64_t)*count;
}

static float read_float(const uint8_t *p)
{
	uint32_t bits = (uint32_t)p[0] | (uint32_t)p[1] << 8 | (uint32_t)p[2] << 16 | (uint32_t)p[3] << 24;
	float v;
	memcpy(&v, &bits, sizeof v);
	return v;
}

static double dist2(const float *a, const float *b)
{
	double dx = (double)a[0] - b[0], dy = (double)a[1] - b[1], dz = (double)a[2] - b[2];
	return dx * dx + dy * dy + dz * dz;
}

/* mesh.h: below 1e-12 (or NaN) only equal corners weld. */
static double weld_reach2(float tol)
{
	return tol >= 1e-12f ? (double)tol * tol : 0.0;
}

static void check_mesh(const scn_mesh *m, float tol)
{
	FUZZ_REQUIRE(m->vertex_count > 0 && m->triangle_count > 0, "a mesh with no triangles is an error");
	FUZZ_REQUIRE(m->positions && m->triangles, "the arrays exist");
	FUZZ_REQUIRE(m->vertex_count <= 3 * m->triangle_count, "every vertex belongs to a triangle");
	FUZZ_REQUIRE(memchr(m->name, '\0', sizeof m->name), "the solid name is NUL-terminated");
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
		FUZZ_REQUIRE(used[i], "vertices only degenerate facets used are dropped");
	free(used);
	/* Welding joins a corner to any vertex within the tolerance, so no two survive that close. */
	double reach2 = weld_reach2(tol);
	for (int i = 0; i < m->vertex_count; i++)
		for (int j = i + 1; j < m->vertex_count; j++)
			FUZZ_REQUIRE(dist2(m->positions + 3 * (size_t)i, m->positions + 3 * (size_t)j) > reach2,
			             "no two vertices lie within the welding tolerance");
}

/* The whole reader pipeline for a binary file that it accepted, done the slow and obvious
 * way: weld each corner to the earliest vertex within reach, drop facets with a repeated
 * vertex or zero area, number the vertices left in order of first appearance.  A facet
 * whose area is near the threshold may go either way, so such a file is not compared. */
static void check_binary_reference(const uint8_t *data, uint32_t facets, float tol, const scn_mesh *m,
                                   const scn_mesh_report *rep)
{
	int corners = 3 * (int)facets;
	float *pos = malloc((size_t)corners * 3 * sizeof *pos);
	int *index = malloc((size_t)corners * sizeof *index);
	int *number = malloc((size_t)corners * sizeof *number);
	bool *keep = malloc((size_t)facets * sizeof *keep);
	FUZZ_REQUIRE(pos && index && number && keep, "memory for the check");
	double reach2 = weld_reach2(tol);
	int count = 0;
	for (int c = 0; c < corners; c++) {
		const uint8_t *rec = data + 84 + 50 * (size_t)(c / 3) + 12 + 12 * (size_t)(c % 3);
		float p[3] = {read_float(rec), read_float(rec + 4), read_float(rec + 8)};
		int v = 0;
		while (v < count && !(dist2(pos + 3 * (size_t)v, p) <= reach2))
			v++;
		if (v == count)
			memcpy(pos + 3 * (size_t)count++, p, sizeof p);
		index[c] = v;
	}
	FUZZ_REQUIRE(rep->welded == corners - count, "the report counts the welded corners");
	int kept = 0, degenerate = 0;
	bool ambiguous = false;
	for (uint32_t f = 0; f < facets; f++) {
		const int *t = index + 3 * (size_t)f;
		double ratio = t[0] == t[1] || t[1] == t[2] || t[0] == t[2]
		                   ? 0.0
		                   : fuzz_area_ratio(pos + 3 * (size_t)t[0], pos + 3 * (size_t)t[1], pos + 3 * (size_t)t[2]);
		keep[f] = ratio > 8.0 * FLT_EPSILON;
		ambiguous |= ratio >= 2.0 * FLT_EPSILON && !keep[f];
		kept += keep[f];
		degenerate += ratio < 2.0 * FLT_EPSILON;
	}
	if (!ambiguous) {
		FUZZ_REQUIRE(kept == m->triangle_count, "the kept facets are those with non-zero area");
		FUZZ_REQUIRE(degenerate == rep->degenerate, "the report counts the removed facets");
		for (int v = 0; v < count; v++)
			number[v] = -1;
		for (uint32_t f = 0; f < facets; f++)
			for (int k = 0; keep[f] && k < 3; k++)
				number[index[3 * f + (uint32_t)k]] = 0;
		int vertices = 0;
		for (int v = 0; v < count; v++)
			if (number[v] == 0)
				number[v] = vertices++;
		FUZZ_REQUIRE(vertices == m->vertex_count, "the vertices are those the kept facets use");
		for (int v = 0; v < count; v++)
			if (number[v] >= 0)
				FUZZ_REQUIRE(memcmp(m->positions + 3 * (size_t)number[v], pos + 3 * (size_t)v, 3 * sizeof *pos) == 0,
				             "a vertex sits where its first corner is");
		int t = 0;
		for (uint32_t f = 0; f < facets; f++) {
			if (!keep[f])
				continue;
			for (int k = 0; k < 3; k++)
				FUZZ_REQUIRE(m->triangles[3 * t + k] == number[index[3 * f + (uint32_t)k]],
				             "facets keep their corners and order");
			t++;
		}
	}
	free(pos);
	free(index);
	free(number);
	free(keep);
}

/* Union-find with parity over manifold edges: whether each component can be oriented
 * consistently, which decides what scn_mesh_orient must achieve. */
static int find_root(int *parent, bool *parity, int t)
{
	bool p = false;
	int r = t;
	while (parent[r] != r) {
		p ^= parity[r];
		r = parent[r];
	}
	/* path compression keeps the parity to the root */
	while (parent[t] != r) {
		int next = parent[t];
		bool pt = parity[t];
		parent[t] = r;
		parity[t] = p;
		p ^= pt;
		t = next;
	}
	return r;
}

static bool parity_to_root(int *parent, bool *parity, int t)
{
	find_root(parent, parity, t);
	return parent[t] == t ? false : parity[t];
}

typedef struct edge_use {
	int lo, hi, tri;
	bool forward;
} edge_use;

static int compare_uses(const void *pa, const void *pb)
{
	const edge_use *a = pa, *b = pb;
	if (a->lo != b->lo)
		return a->lo < b->lo ? -1 : 1;
	if (a->hi != b->hi)
		return a->hi < b->hi ? -1 : 1;
	return (a->tri > b->tri) - (a->tri < b->tri);
}

/* Also says whether every component has a side without exactly one neighbour: closed
 * components are oriented by the sign of their volume, which a flat one leaves to rounding. */
static bool orientable(const scn_mesh *m, bool *all_open)
{
	int nt = m->triangle_count;
	edge_use *e = malloc(3 * (size_t)nt * sizeof *e);
	int *parent = malloc((size_t)nt * sizeof *parent);
	bool *parity = calloc((size_t)nt, sizeof *parity);
	bool *open = calloc((size_t)nt, sizeof *open);
	FUZZ_REQUIRE(e && parent && parity && open, "memory for the check");
	for (int t = 0; t < nt; t++) {
		parent[t] = t;
		for (int s = 0; s < 3; s++) {
			int a = m->triangles[3 * t + s], b = m->triangles[3 * t + (s + 1) % 3];
			e[3 * t + s] = (edge_use){a < b ? a : b, a < b ? b : a, t, a < b};
		}
	}
	size_t n = 3 * (size_t)nt;
	qsort(e, n, sizeof *e, compare_uses);
	bool ok = true;
	for (size_t i = 0; i < n;) {
		size_t j = i + 1;
		while (j < n && e[j].lo == e[i].lo && e[j].hi == e[i].hi)
			j++;
		if (j - i == 2) {
			/* neighbours that run the edge the same way need opposite flips */
			bool differ = e[i].forward == e[i + 1].forward;
			int a = e[i].tri, b = e[i + 1].tri;
			int ra = find_root(parent, parity, a), rb = find_root(parent, parity, b);
			bool pa = parity_to_root(parent, parity, a), pb = parity_to_root(parent, parity, b);
			if (ra == rb) {
				ok &= (pa ^ pb) == differ;
			} else {
				parent[ra] = rb;
				parity[ra] = pa ^ pb ^ differ;
			}
		} else {
			for (size_t k = i; k < j; k++)
				open[e[k].tri] = true;
		}
		i = j;
	}
	bool *root_open = calloc((size_t)nt, sizeof *root_open);
	FUZZ_REQUIRE(root_open, "memory for the check");
	for (int t = 0; t < nt; t++)
		root_open[find_root(parent, parity, t)] |= open[t];
	*all_open = true;
	for (int t = 0; t < nt; t++)
		*all_open &= parent[t] != t || root_open[t];
	free(root_open);
	free(e);
	free(parent);
	free(parity);
	free(open);
	return ok;
}

/* scn_mesh_orient only flips triangles, keeps the topology, and leaves an orientable mesh
 * consistent (and a closed one, outward). */
static void check_orient(scn_mesh *m, const scn_mesh_report *before)
{
	int *tris = malloc(3 * (size_t)m->triangle_count * sizeof *tris);
	FUZZ_REQUIRE(tris, "memory for the check");
	memcpy(tris, m->triangles, 3 * (size_t)m->triangle_count * sizeof *tris);
	bool all_open;
	bool can_orient = orientable(m, &all_open);
	int flipped = scn_mesh_orient(m);
	FUZZ_REQUIRE(flipped >= 0 && flipped <= m->triangle_count, "orient flips some of the triangles");
	int changed = 0;
	for (int t = 0; t < m->triangle_count; t++) {
		const int *a = tris + 3 * (size_t)t, *b = m->triangles + 3 * (size_t)t;
		bool same = a[0] == b[0] && a[1] == b[1] && a[2] == b[2];
		bool swapped = a[0] == b[0] && a[1] == b[2] && a[2] == b[1];
		FUZZ_REQUIRE(same || swapped, "orient only reverses triangles");
		changed += !same;
	}
	FUZZ_REQUIRE(changed == flipped, "orient returns the number of triangles it flipped");
	free(tris);
	scn_mesh_report after = *before;
	scn_mesh_analyse(m, &after);
	FUZZ_REQUIRE(after.boundary_edges == before->boundary_edges && after.nonmanifold_edges == before->nonmanifold_edges &&
	                 after.closed == before->closed,
	             "orient keeps the topology");
	if (!can_orient)
		return;
	FUZZ_REQUIRE(after.misoriented_edges == 0, "an orientable mesh ends up consistent");
	if (after.closed) {
		/* outward per component; the sum may round to a tiny negative for a flat one */
		double scale = 0.0;
		for (int i = 0; i < 3 * m->vertex_count; i++)
			scale = fmax(scale, fabs((double)m->positions[i]));
		FUZZ_REQUIRE(after.signed_volume >= -1e-9 * scale * scale * scale * m->triangle_count,
		             "a closed orientable mesh ends up pointing outwards");
	}
	if (all_open)
		FUZZ_REQUIRE(scn_mesh_orient(m) == 0, "orienting again changes nothing");
}

static void fuzz_one(const uint8_t *data, size_t size, float tol)
{
	scn_mesh mesh;
	scn_mesh_report rep;
	scn_error err = {0};
	scn_status st = scn_stl_parse(data, size, NAME, tol, &mesh, &rep, &err);
	if (st != SCN_OK) {
		fuzz_check_failure(st, &err, NAME);
		FUZZ_REQUIRE(mesh.vertex_count == 0 && mesh.triangle_count == 0 && !mesh.positions && !mesh.triangles,
		             "a failed read leaves the mesh empty");
		return;
	}
	fuzz_check_success(&err);
	check_mesh(&mesh, tol);
	uint32_t facets = 0;
	bool binary = is_binary(data, size, &facets);
	FUZZ_REQUIRE(rep.binary == binary, "binary exactly when the size matches the facet count");
	FUZZ_REQUIRE(rep.facets >= mesh.triangle_count && rep.degenerate == rep.facets - mesh.triangle_count,
	             "the report counts facets and removed facets");
	FUZZ_REQUIRE(rep.welded >= 0 && rep.welded <= 3 * rep.facets, "the report counts welded corners");
	if (binary)
		check_binary_reference(data, facets, tol, &mesh, &rep);
	scn_mesh_report again = rep;
	scn_mesh_analyse(&mesh, &again);
	FUZZ_REQUIRE(again.boundary_edges == rep.boundary_edges && again.nonmanifold_edges == rep.nonmanifold_edges &&
	                 again.misoriented_edges == rep.misoriented_edges && again.closed == rep.closed &&
	                 memcmp(&again.signed_volume, &rep.signed_volume, sizeof rep.signed_volume) == 0,
	             "the reader's report is what scn_mesh_analyse finds");
	FUZZ_REQUIRE(rep.boundary_edges >= 0 && rep.nonmanifold_edges >= 0 && rep.misoriented_edges >= 0,
	             "edge counts");
	FUZZ_REQUIRE(rep.closed == (rep.boundary_edges == 0 && rep.nonmanifold_edges == 0), "closed means no open edges");
	check_orient(&mesh, &rep);
	scn_mesh_free(&mesh);
	FUZZ_REQUIRE(mesh.vertex_count == 0 && !mesh.positions, "free leaves an empty mesh");
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	/* exact matching, the default tolerance, and one coarse enough to weld random data */
	fuzz_one(data, size, 0.0f);
	fuzz_one(data, size, SCN_WELD_TOLERANCE);
	fuzz_one(data, size, 0.05f);
	return 0;
}
