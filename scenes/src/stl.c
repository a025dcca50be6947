/* Mesh output.  ASCII STL, one facet per triangle with its geometric normal. */
#include "scenes/scenes.h"

#include <errno.h>
#include <math.h>
#include <stdio.h>

int scn_write_stl(const sim_world *w, int object, const char *path)
{
	FILE *fp = fopen(path, "w");
	if (!fp)
		return errno ? errno : EIO;
	const vec4 *x = sim_world_positions(w) + sim_world_object_first_vertex(w, object);
	const int *tri = sim_world_object_triangles(w, object);
	int nt = sim_world_object_triangle_count(w, object);
	const char *name = sim_world_object_name(w, object);
	fprintf(fp, "solid %s\n", name);
	for (int t = 0; t < nt; t++) {
		const float *a = x[tri[3 * t]], *b = x[tri[3 * t + 1]], *c = x[tri[3 * t + 2]];
		float e1[3] = {b[0] - a[0], b[1] - a[1], b[2] - a[2]};
		float e2[3] = {c[0] - a[0], c[1] - a[1], c[2] - a[2]};
		float n[3] = {e1[1] * e2[2] - e1[2] * e2[1], e1[2] * e2[0] - e1[0] * e2[2], e1[0] * e2[1] - e1[1] * e2[0]};
		float len = sqrtf(n[0] * n[0] + n[1] * n[1] + n[2] * n[2]);
		if (len > 0.0f)
			n[0] /= len, n[1] /= len, n[2] /= len;
		fprintf(fp, "  facet normal %.7g %.7g %.7g\n    outer loop\n", n[0], n[1], n[2]);
		const float *v[3] = {a, b, c};
		for (int k = 0; k < 3; k++)
			fprintf(fp, "      vertex %.9g %.9g %.9g\n", v[k][0], v[k][1], v[k][2]);
		fprintf(fp, "    endloop\n  endfacet\n");
	}
	fprintf(fp, "endsolid %s\n", name);
	int err = ferror(fp) ? (errno ? errno : EIO) : 0;
	if (fclose(fp) != 0 && !err)
		err = errno ? errno : EIO;
	return err;
}
