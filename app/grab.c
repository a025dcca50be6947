/* A grab of one vertex or a patch (grab.h). */
#include "grab.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

void grab_init(grab *g)
{
	memset(g, 0, sizeof *g);
	g->vertex = -1;
}

/* The cloth object that owns a vertex, or -1. */
static int object_of(const sim_world *w, int vertex)
{
	for (int o = 0; o < sim_world_object_count(w); o++) {
		int first = sim_world_object_first_vertex(w, o);
		if (vertex >= first && vertex < first + sim_world_object_vertex_count(w, o))
			return o;
	}
	return -1;
}

static float distance(const float *a, const float *b)
{
	float d[3] = {a[0] - b[0], a[1] - b[1], a[2] - b[2]};
	return sqrtf(d[0] * d[0] + d[1] * d[1] + d[2] * d[2]);
}

/* Up to `max` vertices reachable from `vertex` along triangle edges inside the sphere,
 * nearest-first in breadth; the picked vertex first.  Returns how many. */
static int patch(const sim_world *w, int vertex, float radius, int *out, int max)
{
	out[0] = vertex;
	int o = object_of(w, vertex);
	if (radius <= 0.0f || o < 0)
		return 1;
	int first = sim_world_object_first_vertex(w, o), nv = sim_world_object_vertex_count(w, o);
	int nt = sim_world_object_triangle_count(w, o);
	const int *tri = sim_world_object_triangles(w, o);
	const vec4 *x = sim_world_positions(w);
	unsigned char *seen = calloc((size_t)nv, 1);
	if (!seen || !tri)
		return free(seen), 1;
	seen[vertex - first] = 1;
	int n = 1;
	/* Breadth first; each round scans the triangles for edges leaving the set.  A patch
	 * has a handful of rings, so a few scans of the object's triangles at a grab. */
	for (int head = 0; head < n && n < max;) {
		int end = n;
		for (int t = 0; t < nt && n < max; t++) {
			const int *v = tri + 3 * t;
			bool touches = false;
			for (int k = 0; k < 3; k++)
				for (int i = head; i < end; i++)
					touches |= first + v[k] == out[i];
			if (!touches)
				continue;
			for (int k = 0; k < 3 && n < max; k++) {
				int g = first + v[k];
				if (!seen[v[k]] && distance(x[g], x[vertex]) <= radius) {
					seen[v[k]] = 1;
					out[n++] = g;
				}
			}
		}
		head = end;
	}
	free(seen);
	return n;
}

int grab_start(grab *g, sim_world *w, int vertex, float radius, float hertz, float max_force)
{
	grab_release(g, w);
	int vertices[GRAB_MAX_VERTICES];
	int n = patch(w, vertex, radius, vertices, GRAB_MAX_VERTICES);
	sim_attachment_def d = sim_attachment_def_default(vertex);
	if (hertz > 0.0f)
		d.hertz = hertz;
	if (max_force > 0.0f)
		d.max_force = max_force;
	/* pinned vertices stay pinned, and out of the share of the cap */
	int kept = 1;
	for (int i = 1; i < n; i++)
		if (!sim_world_is_pinned(w, vertices[i]))
			vertices[kept++] = vertices[i];
	n = kept;
	float cap = d.max_force;
	const vec4 *x = sim_world_positions(w);
	for (int i = 0; i < n; i++) {
		d.vertex = vertices[i];
		d.max_force = cap / (float)n;
		int id = sim_world_attach(w, &d);
		if (id < 0) {
			if (i == 0)
				return id;
			continue;
		}
		g->vertices[g->count] = vertices[i];
		g->attachments[g->count] = id;
		for (int k = 0; k < 3; k++)
			g->offset[g->count][k] = x[vertices[i]][k] - x[vertex][k];
		g->count++;
	}
	g->vertex = vertex;
	return g->count;
}

void grab_set_target(grab *g, sim_world *w, const float p[3], const float v[3])
{
	const float zero[3] = {0.0f, 0.0f, 0.0f};
	for (int i = 0; i < g->count; i++) {
		float target[3] = {p[0] + g->offset[i][0], p[1] + g->offset[i][1], p[2] + g->offset[i][2]};
		float vel[3];
		memcpy(vel, v ? v : zero, sizeof vel);
		sim_world_attachment_set_target(w, g->attachments[i], target, vel);
	}
}

void grab_force(const grab *g, const sim_world *w, float out[3])
{
	out[0] = out[1] = out[2] = 0.0f;
	for (int i = 0; i < g->count; i++) {
		float f[3];
		if (sim_world_attachment_force(w, g->attachments[i], f) == SIM_OK)
			for (int k = 0; k < 3; k++)
				out[k] += f[k];
	}
}

void grab_release(grab *g, sim_world *w)
{
	for (int i = 0; i < g->count; i++)
		sim_world_detach(w, g->attachments[i]);
	grab_init(g);
}
