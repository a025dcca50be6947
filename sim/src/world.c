/* World life cycle, objects, constraints, the fixed step and its safety net. */
#include "sim_internal.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static sim_clock_fn sim_clock;

/* Revisions come from one counter for the whole process, so two worlds never share one
 * (an external integrator that caches a world's data cannot mistake a new world at a
 * recycled address for the old one). */
static _Atomic uint64_t revision_counter;

static void bump_revision(sim_world *w) { w->revision = ++revision_counter; }

void sim_set_clock(sim_clock_fn clock) { sim_clock = clock; }

int64_t sim_now_ns(void) { return sim_clock ? sim_clock() : 0; }

static const char *const integrator_names[SIM_INTEGRATOR_COUNT] = {
	"euler", "symplectic", "midpoint", "rk4", "verlet", "implicit", "kang", "mra",
};

const char *sim_integrator_name(sim_integrator integrator)
{
	return (unsigned)integrator < SIM_INTEGRATOR_COUNT ? integrator_names[integrator] : "unknown";
}

bool sim_integrator_from_name(const char *name, sim_integrator *out)
{
	for (int i = 0; i < SIM_INTEGRATOR_COUNT; i++) {
		if (strcmp(name, integrator_names[i]) == 0) {
			*out = (sim_integrator)i;
			return true;
		}
	}
	return false;
}

const char *sim_result_string(sim_result result)
{
	switch (result) {
	case SIM_OK: return "ok";
	case SIM_ERROR_BLOWUP: return "simulation blew up";
	case SIM_ERROR_INVALID: return "invalid argument";
	case SIM_ERROR_OUT_OF_MEMORY: return "out of memory";
	}
	return "unknown result";
}

sim_material sim_material_default(void)
{
	return (sim_material){
		.total_mass = 0.0f,
		.areal_density = 0.2f,
		.stiffness = {500.0f, 200.0f, 20.0f},
		.damping = {0.05f, 0.02f, 0.005f},
		.anchor_stiffness = 0.0f,
		.anchor_damping = 0.0f,
		.thickness = 0.003f,
		.friction = 0.3f,
	};
}

sim_world_def sim_world_def_default(void)
{
	return (sim_world_def){
		.gravity = {0.0f, -9.81f, 0.0f},
		.air_damping = 0.0f,
		.wind = {0.0f, 0.0f, 0.0f},
		.air_density = 1.2f,
		.drag_coefficient = 1.0f,
		.lift_coefficient = 0.5f,
		.integrator = SIM_SYMPLECTIC,
		.substeps = 1,
		.verlet_drag = false,
		.strain_limit = false,
		.strain_tau = 0.10f,
		.strain_iterations = 200,
		.cg_tolerance = 1e-4f,
		.cg_max_iterations = 200,
		.blowup_strain = 5.0f,
		.blowup_speed = 200.0f,
		.collisions = true,
		.self_collisions = true,
		.collision_iterations = 8,
		.worker_count = 1,
	};
}

sim_grid_def sim_grid_def_default(void)
{
	return (sim_grid_def){
		.name = "cloth",
		.nx = 16,
		.ny = 16,
		.size_x = 1.0f,
		.size_y = 1.0f,
		.origin = {-0.5f, 1.0f, 0.5f},
		.axis_u = {1.0f, 0.0f, 0.0f},
		.axis_v = {0.0f, 0.0f, -1.0f},
		.material = sim_material_default(),
	};
}

sim_attachment_def sim_attachment_def_default(int vertex)
{
	return (sim_attachment_def){.vertex = vertex, .hertz = 20.0f, .max_force = 50.0f};
}

static bool finite3(const float *p) { return isfinite(p[0]) && isfinite(p[1]) && isfinite(p[2]); }

static bool def_valid(const sim_world_def *d)
{
	return finite3(d->gravity) && finite3(d->wind) && isfinite(d->air_damping) && d->air_damping >= 0.0f &&
	       isfinite(d->air_density) && d->air_density >= 0.0f && isfinite(d->drag_coefficient) &&
	       isfinite(d->lift_coefficient) && (unsigned)d->integrator < SIM_INTEGRATOR_COUNT && d->substeps >= 1 &&
	       isfinite(d->strain_tau) && d->strain_tau > 0.0f && d->strain_iterations >= 0 &&
	       isfinite(d->cg_tolerance) && d->cg_tolerance > 0.0f && d->cg_max_iterations >= 1 &&
	       d->blowup_strain > 0.0f && d->blowup_speed > 0.0f && d->collision_iterations >= 0 &&
	       d->collision_iterations <= 1000 && d->worker_count >= 1 && d->worker_count <= SIM_MAX_WORKERS &&
	       (d->enqueue_task == NULL) == (d->finish_task == NULL);
}

/* ---- parallel work -------------------------------------------------------------------------- */

void sim_parallel_for(const sim_world *w, sim_task_fn *task, int count, int min_range, void *ctx)
{
	if (count <= 0)
		return;
	const sim_world_def *d = &w->def;
	if (!d->enqueue_task || d->worker_count <= 1 || count <= min_range) {
		task(0, count, 0, ctx);
		return;
	}
	void *handle = d->enqueue_task(task, count, min_range < 1 ? 1 : min_range, ctx, d->user_task_context);
	if (handle)
		d->finish_task(handle, d->user_task_context);
}

/* ---- storage -------------------------------------------------------------------------------- */

static bool grow(void **p, size_t elem, int *capacity, int needed)
{
	if (needed <= *capacity)
		return true;
	int cap = *capacity ? *capacity : 16;
	while (cap < needed)
		cap *= 2;
	void *q = realloc(*p, elem * (size_t)cap);
	if (!q)
		return false;
	*p = q;
	*capacity = cap;
	return true;
}

/* Every per-vertex array grows together so an index is valid in all of them. */
static bool reserve_vertices(sim_world *w, int needed)
{
	if (needed <= w->capacity)
		return true;
	int cap = w->capacity ? w->capacity : 64;
	while (cap < needed)
		cap *= 2;
	vec4 **v4[] = {&w->x, &w->v, &w->x_prev, &w->rest, &w->ext_force, &w->vc, &w->presc_v, &w->f,
	               &w->tmp_x, &w->tmp_v, &w->acc_x, &w->acc_v, &w->kang_dv, &w->save_x, &w->save_v,
	               &w->save_presc_v, &w->x_start};
	for (size_t i = 0; i < sizeof v4 / sizeof v4[0]; i++) {
		void *q = realloc(*v4[i], sizeof(vec4) * (size_t)cap);
		if (!q)
			return false;
		*v4[i] = q;
	}
	float **f1[] = {&w->mass, &w->inv_mass, &w->anchor_kd, &w->kang_k, &w->kang_kd};
	for (size_t i = 0; i < sizeof f1 / sizeof f1[0]; i++) {
		void *q = realloc(*f1[i], sizeof(float) * (size_t)cap);
		if (!q)
			return false;
		*f1[i] = q;
	}
	void *q = realloc(w->planes, sizeof(float) * 6 * ((size_t)cap + SIM_PLANE_TAIL));
	if (!q)
		return false;
	w->planes = q;
	w->plane_stride = cap + SIM_PLANE_TAIL;
	q = realloc(w->flags, (size_t)cap);
	if (!q)
		return false;
	w->flags = q;
	q = realloc(w->save_flags, (size_t)cap);
	if (!q)
		return false;
	w->save_flags = q;
	q = realloc(w->owner, sizeof(int) * (size_t)cap);
	if (!q)
		return false;
	w->owner = q;
	q = realloc(w->constrained, sizeof(int) * (size_t)cap);
	if (!q)
		return false;
	w->constrained = q;
	w->capacity = cap;
	return true;
}

sim_world *sim_world_create(const sim_world_def *def)
{
	sim_world_def d = def ? *def : sim_world_def_default();
	if (!def_valid(&d))
		return NULL;
	sim_world *w = calloc(1, sizeof *w);
	if (!w)
		return NULL;
	w->def = d;
	bump_revision(w);
	w->implicit = sim_implicit_create();
	w->collide = sim_collide_create();
	if (!w->implicit || !w->collide) {
		sim_implicit_destroy(w->implicit);
		sim_collide_destroy(w->collide);
		free(w);
		return NULL;
	}
	w->blowup.object = -1;
	w->blowup.vertex = -1;
	w->blowup.reason = "";
	return w;
}

void sim_world_destroy(sim_world **world)
{
	if (!world || !*world)
		return;
	sim_world *w = *world;
	void *arrays[] = {w->x, w->v, w->x_prev, w->rest, w->ext_force, w->vc, w->presc_v, w->f, w->tmp_x,
	                  w->tmp_v, w->acc_x, w->acc_v, w->kang_dv, w->save_x, w->save_v, w->planes,
	                  w->row, w->worker_rows, w->save_presc_v, w->mass, w->inv_mass, w->anchor_kd, w->kang_k, w->kang_kd, w->flags,
	                  w->save_flags, w->owner, w->constrained, w->springs, w->triangles, w->local_triangles, w->objects,
	                  w->blocks, w->attachments, w->inc_start, w->inc_spring};
	for (size_t i = 0; i < sizeof arrays / sizeof arrays[0]; i++)
		free(arrays[i]);
	sim_implicit_destroy(w->implicit);
	sim_collide_destroy(w->collide);
	for (int k = 0; k < w->obstacle_count; k++)
		sim_obstacle_fini(&w->obstacles[k]);
	free(w->obstacles);
	free(w->pair_mu);
	free(w->x_start);
	free(w->pose_save);
	free(w->debug_log.pairs);
	free(w->debug_predicted);
	free(w);
	*world = NULL;
}

const sim_world_def *sim_world_get_def(const sim_world *world) { return &world->def; }

sim_result sim_world_set_def(sim_world *w, const sim_world_def *def)
{
	if (!def_valid(def))
		return SIM_ERROR_INVALID;
	sim_integrator old = w->def.integrator;
	w->def = *def;
	w->def.integrator = old;
	bump_revision(w);
	return sim_world_set_integrator(w, def->integrator);
}

sim_result sim_world_set_integrator(sim_world *w, sim_integrator integrator)
{
	if ((unsigned)integrator >= SIM_INTEGRATOR_COUNT)
		return SIM_ERROR_INVALID;
	if (integrator != w->def.integrator) {
		/* Verlet and MRA carry x_prev; Kang carries the last dv.  Both are rebuilt from
		 * the current state on the next step, so the switch does not kick it. */
		w->history_valid = false;
	}
	w->def.integrator = integrator;
	return SIM_OK;
}

/* ---- objects -------------------------------------------------------------------------------- */

static int begin_object(sim_world *w, const char *name, int vertex_count, const sim_material *m)
{
	if (vertex_count <= 0 || !grow((void **)&w->objects, sizeof(sim_object), &w->object_capacity,
	                               w->object_count + 1))
		return -1;
	if (!reserve_vertices(w, w->n + vertex_count))
		return -1;
	sim_object *o = &w->objects[w->object_count];
	memset(o, 0, sizeof *o);
	snprintf(o->name, sizeof o->name, "%s", name && name[0] ? name : "object");
	o->first_vertex = w->n;
	o->vertex_count = vertex_count;
	o->first_triangle = w->triangle_count;
	o->first_spring = w->spring_count;
	o->material = *m;
	if (m->anchor_stiffness > 0.0f || m->anchor_damping > 0.0f)
		w->has_anchors = true;
	for (int i = w->n; i < w->n + vertex_count; i++) {
		glm_vec4_zero(w->x[i]);
		glm_vec4_zero(w->v[i]);
		glm_vec4_zero(w->x_prev[i]);
		glm_vec4_zero(w->rest[i]);
		glm_vec4_zero(w->ext_force[i]);
		glm_vec4_zero(w->vc[i]);
		glm_vec4_zero(w->presc_v[i]);
		glm_vec4_zero(w->kang_dv[i]);
		w->mass[i] = 0.0f;
		w->inv_mass[i] = 0.0f;
		w->anchor_kd[i] = m->anchor_damping;
		w->flags[i] = 0;
		w->owner[i] = w->object_count;
	}
	return w->object_count;
}

static bool add_spring(sim_world *w, int a, int b, int kind)
{
	if (!grow((void **)&w->springs, sizeof(sim_spring), &w->spring_capacity, w->spring_count + 1))
		return false;
	const sim_material *m = &w->objects[w->object_count].material;
	sim_spring *s = &w->springs[w->spring_count++];
	s->a = a;
	s->b = b;
	s->rest = glm_vec3_distance(w->x[a], w->x[b]);
	s->k = m->stiffness[kind];
	s->kd = m->damping[kind];
	s->kind = kind;
	w->objects[w->object_count].springs_of_kind[kind]++;
	return true;
}

static bool add_triangle(sim_world *w, int first, int a, int b, int c)
{
	int need = w->triangle_count + 1;
	int cap = w->triangle_capacity;
	if (!grow((void **)&w->triangles, sizeof(int) * 3, &cap, need))
		return false;
	if (!grow((void **)&w->local_triangles, sizeof(int) * 3, &w->triangle_capacity, need))
		return false;
	int *t = &w->triangles[3 * w->triangle_count];
	int *lt = &w->local_triangles[3 * w->triangle_count];
	t[0] = first + a, t[1] = first + b, t[2] = first + c;
	lt[0] = a, lt[1] = b, lt[2] = c;
	w->triangle_count++;
	return true;
}

/* Masses from the area each vertex owns (a third of each incident triangle), or, for a
 * grid, the same mass for every vertex (the seed's rule, density * area / vertices):
 * area shares would give a corner a quarter of an interior vertex's mass and so twice
 * its spring frequency, halving the stable explicit step for no visible gain. */
static void finish_object(sim_world *w, bool uniform)
{
	sim_object *o = &w->objects[w->object_count];
	const sim_material *m = &o->material;
	o->triangle_count = w->triangle_count - o->first_triangle;
	o->spring_count = w->spring_count - o->first_spring;
	int first = o->first_vertex, count = o->vertex_count;
	double area_total = 0.0;
	for (int t = o->first_triangle; t < w->triangle_count; t++) {
		const int *tri = &w->triangles[3 * t];
		vec3 e1, e2, c;
		glm_vec3_sub(w->x[tri[1]], w->x[tri[0]], e1);
		glm_vec3_sub(w->x[tri[2]], w->x[tri[0]], e2);
		glm_vec3_cross(e1, e2, c);
		float a = 0.5f * glm_vec3_norm(c);
		area_total += a;
		for (int k = 0; k < 3; k++)
			w->mass[tri[k]] += a / 3.0f;
	}
	double scale;
	if (m->total_mass > 0.0f)
		scale = area_total > 0.0 ? m->total_mass / area_total : 0.0;
	else
		scale = m->areal_density;
	if (uniform)
		for (int i = first; i < first + count; i++)
			w->mass[i] = (float)(area_total / count);
	for (int i = first; i < first + count; i++) {
		float mass = (float)(w->mass[i] * scale);
		if (!(mass > 0.0f)) /* isolated vertex or no area: share the mass equally */
			mass = m->total_mass > 0.0f ? m->total_mass / (float)count : 1e-3f;
		w->mass[i] = mass;
		w->inv_mass[i] = 1.0f / mass;
		w->x[i][3] = w->inv_mass[i];
		glm_vec3_copy(w->x[i], w->rest[i]);
		w->rest[i][3] = m->anchor_stiffness;
	}
	w->n += count;
	w->object_count++;
	bump_revision(w);
	w->incidence_valid = false;
	w->constraints_dirty = true;
	w->history_valid = false;
}

static bool material_valid(const sim_material *m)
{
	bool ok = isfinite(m->total_mass) && m->total_mass >= 0.0f && isfinite(m->areal_density) &&
	          m->areal_density >= 0.0f && (m->total_mass > 0.0f || m->areal_density > 0.0f) &&
	          isfinite(m->anchor_stiffness) && m->anchor_stiffness >= 0.0f && isfinite(m->anchor_damping) &&
	          m->anchor_damping >= 0.0f && isfinite(m->thickness) && m->thickness >= 0.0f &&
	          isfinite(m->friction) && m->friction >= 0.0f;
	for (int k = 0; k < SIM_SPRING_KIND_COUNT; k++)
		ok = ok && isfinite(m->stiffness[k]) && m->stiffness[k] >= 0.0f && isfinite(m->damping[k]) &&
		     m->damping[k] >= 0.0f;
	return ok;
}

int sim_world_add_grid(sim_world *w, const sim_grid_def *def)
{
	if (def->nx < 2 || def->ny < 2 || def->nx > 4096 || def->ny > 4096 || !(def->size_x > 0.0f) ||
	    !(def->size_y > 0.0f) || !isfinite(def->size_x) || !isfinite(def->size_y) || !finite3(def->origin) ||
	    !finite3(def->axis_u) || !finite3(def->axis_v) || !material_valid(&def->material))
		return SIM_ERROR_INVALID;
	int nx = def->nx, ny = def->ny;
	int obj = begin_object(w, def->name, nx * ny, &def->material);
	if (obj < 0)
		return SIM_ERROR_OUT_OF_MEMORY;
	int first = w->n;
	for (int j = 0; j < ny; j++) {
		for (int i = 0; i < nx; i++) {
			float u = def->size_x * (float)i / (float)(nx - 1);
			float v = def->size_y * (float)j / (float)(ny - 1);
			float *p = w->x[first + j * nx + i];
			for (int c = 0; c < 3; c++)
				p[c] = def->origin[c] + u * def->axis_u[c] + v * def->axis_v[c];
		}
	}
	if (nx > w->row_capacity) {
		/* the grid kernel's ring of family rows (3 rows x 6 families x 3 components, each
		 * padded by 2 on both sides), 3 output rows, a run of forces and a zero row */
		size_t blocks = ((size_t)nx + SIM_BLOCK - 1) / SIM_BLOCK * SIM_BLOCK;
		size_t stride = blocks + 4;
		void *row = realloc(w->row, sizeof(float) * (54 * stride + 3 * (size_t)nx + stride));
		if (!row)
			return SIM_ERROR_OUT_OF_MEMORY;
		w->row = row;
		w->row_capacity = nx;
	}
	/* Every spring of a family has exactly the family's rest length, so the row kernel
	 * and the spring list (strain limiting, implicit solver) agree to the bit. */
	sim_object *o = &w->objects[obj];
	float lx = def->size_x / (float)(nx - 1), ly = def->size_y / (float)(ny - 1);
	const sim_material *m = &def->material;
	const struct {
		int di, dj, kind;
		float rest;
	} fam[SIM_GRID_FAMILIES] = {
		{1, 0, SIM_SPRING_STRUCTURAL, lx},
		{0, 1, SIM_SPRING_STRUCTURAL, ly},
		{1, 1, SIM_SPRING_SHEAR, sqrtf(lx * lx + ly * ly)},
		{-1, 1, SIM_SPRING_SHEAR, sqrtf(lx * lx + ly * ly)},
		{2, 0, SIM_SPRING_BEND, 2.0f * lx},
		{0, 2, SIM_SPRING_BEND, 2.0f * ly},
	};
	o->grid_nx = nx;
	o->grid_ny = ny;
	for (int k = 0; k < SIM_GRID_FAMILIES; k++)
		o->families[k] = (sim_grid_family){fam[k].di, fam[k].dj, fam[k].kind, m->stiffness[fam[k].kind],
		                                   m->damping[fam[k].kind], fam[k].rest};
#define ID(i, j) (first + (j) * nx + (i))
	bool ok = true;
	/* Springs in row order keep the force loop's memory access nearly sequential. */
	for (int j = 0; j < ny && ok; j++) {
		for (int i = 0; i < nx && ok; i++) {
			if (i + 1 < nx)
				ok = ok && add_spring(w, ID(i, j), ID(i + 1, j), SIM_SPRING_STRUCTURAL);
			if (j + 1 < ny)
				ok = ok && add_spring(w, ID(i, j), ID(i, j + 1), SIM_SPRING_STRUCTURAL);
			if (i + 1 < nx && j + 1 < ny) {
				ok = ok && add_spring(w, ID(i, j), ID(i + 1, j + 1), SIM_SPRING_SHEAR);
				ok = ok && add_spring(w, ID(i + 1, j), ID(i, j + 1), SIM_SPRING_SHEAR);
			}
			if (i + 2 < nx)
				ok = ok && add_spring(w, ID(i, j), ID(i + 2, j), SIM_SPRING_BEND);
			if (j + 2 < ny)
				ok = ok && add_spring(w, ID(i, j), ID(i, j + 2), SIM_SPRING_BEND);
		}
	}
#undef ID
	for (int s = o->first_spring; s < w->spring_count; s++) {
		sim_spring *sp = &w->springs[s];
		int di = (sp->b - first) % nx - (sp->a - first) % nx, dj = (sp->b - first) / nx - (sp->a - first) / nx;
		for (int k = 0; k < SIM_GRID_FAMILIES; k++)
			if (o->families[k].di == di && o->families[k].dj == dj)
				sp->rest = o->families[k].rest;
	}
	/* Alternate the quad diagonal so the triangulation has no preferred direction. */
	for (int j = 0; j + 1 < ny && ok; j++) {
		for (int i = 0; i + 1 < nx && ok; i++) {
			int a = j * nx + i, b = a + 1, c = a + nx + 1, d = a + nx;
			if ((i + j) & 1) {
				ok = add_triangle(w, first, a, b, d) && add_triangle(w, first, b, c, d);
			} else {
				ok = add_triangle(w, first, a, b, c) && add_triangle(w, first, a, c, d);
			}
		}
	}
	if (!ok)
		return SIM_ERROR_OUT_OF_MEMORY;
	finish_object(w, true);
	return obj;
}

typedef struct edge_ref {
	int a, b;    /* a < b, object-local */
	int tri;     /* triangle index within the object */
	int opposite;/* vertex of tri not on the edge */
} edge_ref;

static int edge_cmp(const void *pa, const void *pb)
{
	const edge_ref *x = pa, *y = pb;
	if (x->a != y->a)
		return x->a < y->a ? -1 : 1;
	if (x->b != y->b)
		return x->b < y->b ? -1 : 1;
	return x->tri < y->tri ? -1 : (x->tri > y->tri);
}

int sim_world_add_mesh(sim_world *w, const sim_mesh_def *def)
{
	if (def->vertex_count <= 0 || def->triangle_count <= 0 || !def->positions || !def->triangles ||
	    !material_valid(&def->material))
		return SIM_ERROR_INVALID;
	for (int i = 0; i < 3 * def->vertex_count; i++)
		if (!isfinite(def->positions[i]))
			return SIM_ERROR_INVALID;
	for (int t = 0; t < def->triangle_count; t++) {
		const int *tri = &def->triangles[3 * t];
		for (int k = 0; k < 3; k++)
			if (tri[k] < 0 || tri[k] >= def->vertex_count)
				return SIM_ERROR_INVALID;
		if (tri[0] == tri[1] || tri[1] == tri[2] || tri[0] == tri[2])
			return SIM_ERROR_INVALID;
	}
	edge_ref *edges = malloc(sizeof(edge_ref) * 3 * (size_t)def->triangle_count);
	if (!edges)
		return SIM_ERROR_OUT_OF_MEMORY;
	int obj = begin_object(w, def->name, def->vertex_count, &def->material);
	if (obj < 0) {
		free(edges);
		return SIM_ERROR_OUT_OF_MEMORY;
	}
	int first = w->n;
	for (int i = 0; i < def->vertex_count; i++)
		glm_vec3_copy((float *)&def->positions[3 * i], w->x[first + i]);
	bool ok = true;
	int ne = 0;
	for (int t = 0; t < def->triangle_count && ok; t++) {
		const int *tri = &def->triangles[3 * t];
		ok = add_triangle(w, first, tri[0], tri[1], tri[2]);
		for (int k = 0; k < 3; k++) {
			int a = tri[k], b = tri[(k + 1) % 3];
			edges[ne++] = (edge_ref){a < b ? a : b, a < b ? b : a, t, tri[(k + 2) % 3]};
		}
	}
	qsort(edges, (size_t)ne, sizeof *edges, edge_cmp);
	/* An interior edge whose two opposite vertices are as far apart as the edge is long is
	 * the diagonal of a near-rectangular quad: both diagonals become shear springs, as on a
	 * grid.  Across any other interior edge a bend spring joins the opposite vertices. */
	for (int e = 0; e < ne && ok;) {
		int run = 1;
		while (e + run < ne && edges[e + run].a == edges[e].a && edges[e + run].b == edges[e].b)
			run++;
		int a = first + edges[e].a, b = first + edges[e].b;
		int kind = SIM_SPRING_STRUCTURAL;
		if (run == 2) {
			int c = first + edges[e].opposite, d = first + edges[e + 1].opposite;
			float len_ab = glm_vec3_distance(w->x[a], w->x[b]);
			float len_cd = glm_vec3_distance(w->x[c], w->x[d]);
			if (c != d && fabsf(len_ab - len_cd) <= 0.05f * len_ab) {
				kind = SIM_SPRING_SHEAR;
				ok = add_spring(w, c, d, SIM_SPRING_SHEAR);
			} else if (c != d) {
				ok = add_spring(w, c, d, SIM_SPRING_BEND);
			}
		}
		ok = ok && add_spring(w, a, b, kind);
		e += run;
	}
	free(edges);
	if (!ok)
		return SIM_ERROR_OUT_OF_MEMORY;
	finish_object(w, false);
	return obj;
}

int sim_world_add_tetrahedron(sim_world *w, const char *name, const vec3 center, float edge,
                              const sim_material *material)
{
	if (!finite3(center) || !(edge > 0.0f) || !isfinite(edge) || !material_valid(material))
		return SIM_ERROR_INVALID;
	/* Regular tetrahedron: base triangle in the horizontal plane around center, apex above. */
	float r = edge / sqrtf(3.0f);            /* circumradius of the base */
	float height = edge * sqrtf(2.0f / 3.0f);
	float pos[12];
	for (int k = 0; k < 3; k++) {
		float a = (float)(2.0 * GLM_PI * k / 3.0);
		pos[3 * k + 0] = center[0] + r * cosf(a);
		pos[3 * k + 1] = center[1];
		pos[3 * k + 2] = center[2] - r * sinf(a);
	}
	pos[9] = center[0], pos[10] = center[1] + height, pos[11] = center[2];
	/* Faces wound counter-clockwise seen from outside. */
	static const int faces[12] = {0, 1, 3, 1, 2, 3, 2, 0, 3, 0, 2, 1};
	int obj = begin_object(w, name, 4, material);
	if (obj < 0)
		return SIM_ERROR_OUT_OF_MEMORY;
	int first = w->n;
	for (int i = 0; i < 4; i++)
		glm_vec3_copy(&pos[3 * i], w->x[first + i]);
	bool ok = true;
	for (int t = 0; t < 4 && ok; t++)
		ok = add_triangle(w, first, faces[3 * t], faces[3 * t + 1], faces[3 * t + 2]);
	for (int a = 0; a < 4 && ok; a++)
		for (int b = a + 1; b < 4 && ok; b++)
			ok = add_spring(w, first + a, first + b, SIM_SPRING_STRUCTURAL);
	if (!ok)
		return SIM_ERROR_OUT_OF_MEMORY;
	finish_object(w, false);
	return obj;
}

/* ---- queries -------------------------------------------------------------------------------- */

int sim_world_object_count(const sim_world *w) { return w->object_count; }

static const sim_object *object_at(const sim_world *w, int object)
{
	return object >= 0 && object < w->object_count ? &w->objects[object] : NULL;
}

const char *sim_world_object_name(const sim_world *w, int object)
{
	const sim_object *o = object_at(w, object);
	return o ? o->name : NULL;
}

int sim_world_object_first_vertex(const sim_world *w, int object)
{
	const sim_object *o = object_at(w, object);
	return o ? o->first_vertex : -1;
}

int sim_world_object_vertex_count(const sim_world *w, int object)
{
	const sim_object *o = object_at(w, object);
	return o ? o->vertex_count : 0;
}

int sim_world_object_triangle_count(const sim_world *w, int object)
{
	const sim_object *o = object_at(w, object);
	return o ? o->triangle_count : 0;
}

const int *sim_world_object_triangles(const sim_world *w, int object)
{
	const sim_object *o = object_at(w, object);
	return o ? &w->local_triangles[3 * o->first_triangle] : NULL;
}

int sim_world_object_spring_count(const sim_world *w, int object, sim_spring_kind kind)
{
	const sim_object *o = object_at(w, object);
	return o && (unsigned)kind < SIM_SPRING_KIND_COUNT ? o->springs_of_kind[kind] : 0;
}

int sim_world_vertex_count(const sim_world *w) { return w->n; }
const vec4 *sim_world_positions(const sim_world *w) { return w->x; }
const vec4 *sim_world_velocities(const sim_world *w) { return w->v; }
double sim_world_time(const sim_world *w) { return w->time; }
int64_t sim_world_step_count(const sim_world *w) { return w->steps; }
/* Energies and strains cost a pass over every spring with a square root each, as much
 * as a force evaluation: they are computed when somebody asks, once per state. */
const sim_stats *sim_world_stats(const sim_world *w)
{
	if (!w->stats_fresh) {
		sim_world *mw = (sim_world *)w; /* a cache: the world itself is not changed */
		sim_world_measure(w, &mw->stats);
		mw->stats_fresh = true;
	}
	return &w->stats;
}
const sim_blowup *sim_world_last_blowup(const sim_world *w) { return &w->blowup; }

sim_result sim_world_set_material(sim_world *w, int object, const sim_material *m)
{
	if (object < 0 || object >= w->object_count || !m || !material_valid(m))
		return SIM_ERROR_INVALID;
	sim_object *o = &w->objects[object];
	for (int s = o->first_spring; s < o->first_spring + o->spring_count; s++) {
		w->springs[s].k = m->stiffness[w->springs[s].kind];
		w->springs[s].kd = m->damping[w->springs[s].kind];
	}
	if (o->grid_nx)
		for (int k = 0; k < SIM_GRID_FAMILIES; k++) {
			o->families[k].k = m->stiffness[o->families[k].kind];
			o->families[k].kd = m->damping[o->families[k].kind];
		}
	/* Each vertex keeps its share of the object's mass (its share of the rest area, or
	 * an equal one); only the total follows the new mass or density. */
	double old_total = 0.0, area = 0.0;
	int first = o->first_vertex, count = o->vertex_count;
	for (int i = first; i < first + count; i++)
		old_total += w->mass[i];
	for (int t = o->first_triangle; t < o->first_triangle + o->triangle_count; t++) {
		const int *tri = &w->triangles[3 * t];
		vec3 e1, e2, c;
		glm_vec3_sub(w->rest[tri[1]], w->rest[tri[0]], e1);
		glm_vec3_sub(w->rest[tri[2]], w->rest[tri[0]], e2);
		glm_vec3_cross(e1, e2, c);
		area += 0.5 * glm_vec3_norm(c);
	}
	double new_total = m->total_mass > 0.0f ? m->total_mass : m->areal_density * area;
	if (!(new_total > 0.0) || !(old_total > 0.0))
		return SIM_ERROR_INVALID;
	for (int i = first; i < first + count; i++) {
		w->mass[i] = (float)(w->mass[i] * (new_total / old_total));
		w->inv_mass[i] = 1.0f / w->mass[i];
		w->rest[i][3] = m->anchor_stiffness;
		w->anchor_kd[i] = m->anchor_damping;
	}
	if (m->anchor_stiffness > 0.0f || m->anchor_damping > 0.0f)
		w->has_anchors = true;
	o->material = *m;
	bump_revision(w);
	w->incidence_valid = false;
	w->constraints_dirty = true;
	return SIM_OK;
}

const sim_material *sim_world_object_material(const sim_world *w, int object)
{
	return object >= 0 && object < w->object_count ? &w->objects[object].material : NULL;
}

float sim_world_vertex_mass(const sim_world *w, int vertex)
{
	return vertex >= 0 && vertex < w->n ? w->mass[vertex] : 0.0f;
}

sim_result sim_world_set_vertex(sim_world *w, int vertex, const vec3 position, const vec3 velocity)
{
	if (vertex < 0 || vertex >= w->n || !finite3(position) || !finite3(velocity))
		return SIM_ERROR_INVALID;
	glm_vec3_copy((float *)position, w->x[vertex]);
	glm_vec3_copy((float *)velocity, w->v[vertex]);
	w->history_valid = false;
	return SIM_OK;
}

/* ---- constraints ---------------------------------------------------------------------------- */

sim_result sim_world_set_point_force(sim_world *w, int vertex, const vec3 force)
{
	if (vertex < 0 || vertex >= w->n || !finite3(force))
		return SIM_ERROR_INVALID;
	glm_vec3_copy((float *)force, w->ext_force[vertex]);
	bump_revision(w);
	if (force[0] != 0.0f || force[1] != 0.0f || force[2] != 0.0f)
		w->has_point_forces = true;
	return SIM_OK;
}

sim_result sim_world_pin(sim_world *w, int vertex, bool pinned)
{
	if (vertex < 0 || vertex >= w->n)
		return SIM_ERROR_INVALID;
	if (pinned)
		w->flags[vertex] |= SIM_VERTEX_PINNED;
	else
		w->flags[vertex] &= (uint8_t)~SIM_VERTEX_PINNED;
	w->constraints_dirty = true;
	return SIM_OK;
}

bool sim_world_is_pinned(const sim_world *w, int vertex)
{
	return vertex >= 0 && vertex < w->n && (w->flags[vertex] & SIM_VERTEX_PINNED);
}

void sim_world_driven_vertices(const sim_world *w, uint8_t *out)
{
	for (int i = 0; i < w->n; i++)
		out[i] = (w->flags[i] & SIM_VERTEX_CONSTRAINED) != 0;
	/* every block, not only those still ahead of the cursor: a script that has ended
	 * (or is rewound by a reset) still owns its vertex */
	for (int b = 0; b < w->block_count; b++)
		if (w->blocks[b].vertex >= 0)
			out[w->blocks[b].vertex] = 1;
}

/* Vertex and obstacle blocks share one time-ordered list, so one cursor walks both. */
static sim_result insert_block(sim_world *w, double t, int vertex, int obstacle, const vec3 velocity)
{
	if (!grow((void **)&w->blocks, sizeof(sim_velocity_block), &w->block_capacity, w->block_count + 1))
		return SIM_ERROR_OUT_OF_MEMORY;
	/* Insertion keeps blocks sorted by time and stable for equal times. */
	int at = w->block_count;
	while (at > w->block_cursor && w->blocks[at - 1].t > t)
		at--;
	memmove(&w->blocks[at + 1], &w->blocks[at], sizeof(sim_velocity_block) * (size_t)(w->block_count - at));
	w->blocks[at] = (sim_velocity_block){.t = t, .vertex = vertex, .obstacle = obstacle};
	glm_vec3_copy((float *)velocity, w->blocks[at].velocity);
	w->block_count++;
	return SIM_OK;
}

sim_result sim_world_add_velocity_block(sim_world *w, double t, int vertex, const vec3 velocity)
{
	if (vertex < 0 || vertex >= w->n || !isfinite(t))
		return SIM_ERROR_INVALID;
	bool end = isnan(velocity[0]);
	if (!end && !finite3(velocity))
		return SIM_ERROR_INVALID;
	return insert_block(w, t, vertex, -1, velocity);
}

sim_result sim_world_add_obstacle_velocity_block(sim_world *w, double t, int obstacle, const vec3 velocity)
{
	if (obstacle < 0 || obstacle >= w->obstacle_count || !isfinite(t) || !finite3(velocity))
		return SIM_ERROR_INVALID;
	return insert_block(w, t, -1, obstacle, velocity);
}

void sim_world_clear_velocity_blocks(sim_world *w)
{
	w->block_count = 0;
	w->block_cursor = 0;
	for (int i = 0; i < w->n; i++)
		w->flags[i] &= (uint8_t)~SIM_VERTEX_PRESCRIBED;
	w->constraints_dirty = true;
}

int sim_world_attach(sim_world *w, const sim_attachment_def *def)
{
	if (def->vertex < 0 || def->vertex >= w->n || !(def->hertz > 0.0f) || !isfinite(def->hertz) ||
	    !(def->max_force > 0.0f) || isnan(def->max_force))
		return SIM_ERROR_INVALID;
	int id = 0;
	while (id < w->attachment_count && w->attachments[id].active)
		id++;
	if (id == w->attachment_count &&
	    !grow((void **)&w->attachments, sizeof(sim_attachment), &w->attachment_capacity, id + 1))
		return SIM_ERROR_OUT_OF_MEMORY;
	if (id == w->attachment_count)
		w->attachment_count++;
	sim_attachment *a = &w->attachments[id];
	memset(a, 0, sizeof *a);
	a->active = true;
	a->vertex = def->vertex;
	a->hertz = def->hertz;
	a->max_force = def->max_force;
	glm_vec3_copy(w->x[def->vertex], a->target);
	w->flags[def->vertex] |= SIM_VERTEX_ATTACHED;
	w->constraints_dirty = true;
	return id;
}

static sim_attachment *attachment_at(const sim_world *w, int id)
{
	return id >= 0 && id < w->attachment_count && w->attachments[id].active ? &w->attachments[id] : NULL;
}

sim_result sim_world_attachment_set_target(sim_world *w, int id, const vec3 position, const vec3 velocity)
{
	sim_attachment *a = attachment_at(w, id);
	if (!a || !finite3(position) || !finite3(velocity))
		return SIM_ERROR_INVALID;
	glm_vec3_copy((float *)position, a->target);
	glm_vec3_copy((float *)velocity, a->target_velocity);
	return SIM_OK;
}

sim_result sim_world_attachment_force(const sim_world *w, int id, vec3 out_force)
{
	sim_attachment *a = attachment_at(w, id);
	if (!a)
		return SIM_ERROR_INVALID;
	glm_vec3_copy(a->force, out_force);
	return SIM_OK;
}

sim_result sim_world_detach(sim_world *w, int id)
{
	sim_attachment *a = attachment_at(w, id);
	if (!a)
		return SIM_ERROR_INVALID;
	a->active = false;
	bool still = false;
	for (int i = 0; i < w->attachment_count; i++)
		still = still || (w->attachments[i].active && w->attachments[i].vertex == a->vertex);
	if (!still)
		w->flags[a->vertex] &= (uint8_t)~SIM_VERTEX_ATTACHED;
	w->constraints_dirty = true;
	return SIM_OK;
}

/* The coupling is a critically damped spring between the vertex and its target, solved
 * implicitly for the relative velocity so any stiffness is stable at any step:
 *   u' = -w^2 e - 2 w u   =>   u1 = (u0 - h w^2 e0) / (1 + 2 w h + w^2 h^2).
 * The vertex would otherwise move under the cloth's own forces; the coupling force is
 * what it takes to reach the target velocity from there, capped at max_force, so a
 * held corner is supported against gravity and a hard pull lets the vertex slip. */
static void apply_attachment(sim_world *w, sim_attachment *a, float h)
{
	int i = a->vertex;
	float omega = 2.0f * (float)GLM_PI * a->hertz;
	vec3 e, u, u1, f_other, v_free, v_des, force;
	glm_vec3_sub(w->x[i], a->target, e);
	glm_vec3_sub(w->v[i], a->target_velocity, u);
	float denom = 1.0f + 2.0f * omega * h + omega * omega * h * h;
	for (int c = 0; c < 3; c++)
		u1[c] = (u[c] - h * omega * omega * e[c]) / denom;
	glm_vec3_add(a->target_velocity, u1, v_des);
	sim_vertex_force(w, i, w->x, w->v, f_other);
	float m = w->mass[i];
	for (int c = 0; c < 3; c++) {
		v_free[c] = w->v[i][c] + h * f_other[c] / m;
		force[c] = m * (v_des[c] - v_free[c]) / h;
	}
	float mag = glm_vec3_norm(force);
	if (mag > a->max_force)
		glm_vec3_scale(force, a->max_force / mag, force);
	glm_vec3_copy(force, a->force);
	for (int c = 0; c < 3; c++)
		w->vc[i][c] = v_free[c] + h * force[c] / m;
}

/* Applies velocity blocks due by time t and sets every vertex's inverse mass and
 * constraint velocity for the coming integrator step. */
static void apply_constraints(sim_world *w, double t, float h)
{
	/* Half a substep of slack so a block at t = k h lands on that step despite rounding. */
	double due = t + 0.5 * (double)h;
	while (w->block_cursor < w->block_count && w->blocks[w->block_cursor].t <= due) {
		const sim_velocity_block *b = &w->blocks[w->block_cursor++];
		if (b->vertex < 0) {
			glm_vec3_copy((float *)b->velocity, w->obstacles[b->obstacle].def.velocity);
			continue;
		}
		if (isnan(b->velocity[0])) {
			w->flags[b->vertex] &= (uint8_t)~SIM_VERTEX_PRESCRIBED;
		} else {
			w->flags[b->vertex] |= SIM_VERTEX_PRESCRIBED;
			glm_vec3_copy((float *)b->velocity, w->presc_v[b->vertex]);
		}
		w->constraints_dirty = true;
	}
	/* Constraints change rarely: the list of constrained vertices and every inverse
	 * mass are rebuilt only then, so a step costs O(constrained vertices) here. */
	if (w->constraints_dirty) {
		w->constrained_count = 0;
		for (int i = 0; i < w->n; i++) {
			if (w->flags[i] & SIM_VERTEX_CONSTRAINED) {
				w->x[i][3] = 0.0f;
				w->constrained[w->constrained_count++] = i;
			} else {
				w->x[i][3] = w->inv_mass[i];
			}
		}
		w->constraints_dirty = false;
	}
	for (int c = 0; c < w->constrained_count; c++) {
		int i = w->constrained[c];
		uint8_t fl = w->flags[i];
		/* Priority: the user's grab, then the script, then the pin. */
		if (fl & SIM_VERTEX_ATTACHED)
			continue; /* set below */
		if (fl & SIM_VERTEX_PRESCRIBED)
			glm_vec4_copy(w->presc_v[i], w->vc[i]);
		else
			glm_vec4_zero(w->vc[i]);
	}
	for (int k = 0; k < w->attachment_count; k++)
		if (w->attachments[k].active)
			apply_attachment(w, &w->attachments[k], h);
	for (int c = 0; c < w->constrained_count; c++) {
		int i = w->constrained[c];
		glm_vec3_copy(w->vc[i], w->v[i]);
		w->vc[i][3] = 0.0f;
	}
}

/* ---- measurement and the safety net --------------------------------------------------------- */

float sim_spring_strain(const sim_spring *s, const vec4 *x)
{
	float l = glm_vec3_distance((float *)x[s->a], (float *)x[s->b]);
	return s->rest > 0.0f ? (l - s->rest) / s->rest : 0.0f;
}

/* Per-vertex sums over one block of at most MEASURE_BLOCK vertices, in eight fixed
 * lanes (the vectorised and scalar builds add in the same order): m v^2 and m g.x. */
#define MEASURE_BLOCK 256
#define LANES 8

typedef struct vertex_sums {
	double mv2, mgx;
} vertex_sums;

SIM_VECTOR_CLONES
static void measure_block(const vec4 *restrict x, const vec4 *restrict v, const float *restrict mass, int n,
                          float gx, float gy, float gz, float out[2][LANES])
{
	float mv2[LANES] = {0}, mgx[LANES] = {0};
	int i = 0;
	for (; i + LANES <= n; i += LANES) {
		for (int j = 0; j < LANES; j++) {
			int q = i + j;
			float v2 = v[q][0] * v[q][0] + v[q][1] * v[q][1] + v[q][2] * v[q][2];
			mv2[j] += mass[q] * v2;
			mgx[j] += mass[q] * (gx * x[q][0] + gy * x[q][1] + gz * x[q][2]);
		}
	}
	for (int j = 0; i < n; i++, j++) {
		float v2 = v[i][0] * v[i][0] + v[i][1] * v[i][1] + v[i][2] * v[i][2];
		mv2[j] += mass[i] * v2;
		mgx[j] += mass[i] * (gx * x[i][0] + gy * x[i][1] + gz * x[i][2]);
	}
	for (int j = 0; j < LANES; j++) {
		out[0][j] = mv2[j];
		out[1][j] = mgx[j];
	}
}

static vertex_sums measure_vertices(const sim_world *w)
{
	vertex_sums s = {0.0, 0.0};
	const float *g = w->def.gravity;
	for (int first = 0; first < w->n; first += MEASURE_BLOCK) {
		int n = w->n - first < MEASURE_BLOCK ? w->n - first : MEASURE_BLOCK;
		float out[2][LANES];
		measure_block(w->x + first, w->v + first, w->mass + first, n, g[0], g[1], g[2], out);
		for (int j = 0; j < LANES; j++) {
			s.mv2 += out[0][j];
			s.mgx += out[1][j];
		}
	}
	return s;
}

void sim_world_measure(const sim_world *w, sim_stats *out)
{
	vertex_sums vs = measure_vertices(w);
	double anchors = 0.0;
	if (w->has_anchors) {
		for (int i = 0; i < w->n; i++) {
			float ka = w->rest[i][3];
			double dx = w->x[i][0] - w->rest[i][0], dy = w->x[i][1] - w->rest[i][1], dz = w->x[i][2] - w->rest[i][2];
			anchors += 0.5 * ka * (dx * dx + dy * dy + dz * dz);
		}
	}
	double springs = 0.0, sum_strain = 0.0;
	float max_strain = 0.0f;
	int counted = 0;
	sim_measure_springs(w, w->x, &springs, &max_strain, &sum_strain, &counted);
	out->kinetic = 0.5 * vs.mv2;
	out->potential = -vs.mgx + anchors + springs;
	out->max_strain = max_strain;
	out->mean_strain = counted ? (float)(sum_strain / counted) : 0.0f;
}

static void report(sim_world *w, int vertex, const char *reason, float value)
{
	int obj = w->owner[vertex];
	w->blowup.object = obj;
	w->blowup.vertex = vertex - w->objects[obj].first_vertex;
	w->blowup.reason = reason;
	w->blowup.value = value;
}

/* Returns true when the state is sane; otherwise fills w->blowup with the first bad
 * vertex.  The probe makes the common case one cheap pass; the culprit is searched for
 * only when something is wrong. */
static bool check_state(sim_world *w)
{
	sim_probe pr = sim_probe_state(w);
	float speed2_max = w->def.blowup_speed * w->def.blowup_speed;
	if (!isfinite(pr.sum) || !(pr.top_v2 <= speed2_max)) {
		for (int i = 0; i < w->n; i++) {
			if (!finite3(w->x[i])) {
				report(w, i, "non-finite position", NAN);
				return false;
			}
			if (!finite3(w->v[i])) {
				report(w, i, "non-finite velocity", NAN);
				return false;
			}
			float s2 = glm_vec3_norm2(w->v[i]);
			if (s2 > speed2_max) {
				report(w, i, "speed (m/s)", sqrtf(s2));
				return false;
			}
		}
		/* the probe overflowed on finite values: go on to the strain check */
	}
	float limit = 1.0f + w->def.blowup_strain;
	if (!(pr.top_stretch2 <= limit * limit)) {
		for (int s = 0; s < w->spring_count; s++) {
			if (w->springs[s].kind == SIM_SPRING_BEND)
				continue;
			float e = sim_spring_strain(&w->springs[s], w->x);
			if (!(e <= w->def.blowup_strain)) {
				report(w, w->springs[s].a, "strain", e);
				return false;
			}
		}
	}
	return true;
}

/* Rollback keeps x and v; the Verlet/MRA history and Kang's prediction are rebuilt
 * from them afterwards, and the constraint state is saved only while velocity blocks
 * are pending (nothing else changes it inside a step). */
/* Copies of per-vertex vec4 arrays in ranges of vertices: a large cloth's state is
 * several hundred kilobytes an array, copied at every step on the stepping thread. */
typedef struct copy_task {
	vec4 *dst[2];
	const vec4 *src[2];
	int arrays;
} copy_task;

static void copy_range(int start, int end, int worker, void *ctx)
{
	(void)worker;
	const copy_task *t = ctx;
	for (int a = 0; a < t->arrays; a++)
		memcpy(t->dst[a] + start, t->src[a] + start, sizeof(vec4) * (size_t)(end - start));
}

static void save_state(sim_world *w, bool constraints)
{
	copy_task t = {{w->save_x, w->save_v}, {w->x, w->v}, 2};
	sim_parallel_for(w, copy_range, w->n, 4096, &t);
	if (constraints) {
		memcpy(w->save_presc_v, w->presc_v, sizeof(vec4) * (size_t)w->n);
		memcpy(w->save_flags, w->flags, (size_t)w->n);
	}
}

static void restore_state(sim_world *w, bool constraints)
{
	size_t bytes = sizeof(vec4) * (size_t)w->n;
	memcpy(w->x, w->save_x, bytes);
	memcpy(w->v, w->save_v, bytes);
	if (constraints) {
		memcpy(w->presc_v, w->save_presc_v, bytes);
		memcpy(w->flags, w->save_flags, (size_t)w->n);
		w->constraints_dirty = true;
	}
	w->history_valid = false;
	sim_implicit_forget(w->implicit);
}

/* The pipeline runs when there is something to collide: an obstacle, or cloth that may
 * meet itself. */
static bool collisions_active(const sim_world *w)
{
	return w->def.collisions && (w->obstacle_count > 0 || (w->def.self_collisions && w->triangle_count > 0));
}

/* ---- debug recording ------------------------------------------------------------------------ */

void sim_debug_record(sim_debug_log *log, int stage, int kind, int a, int b, int c, int d)
{
	if (log->count == log->capacity) {
		/* grows by doubling up to the cap: a step that records much allocates a few
		 * times, and later steps reuse the buffer */
		int cap = log->capacity ? 2 * log->capacity : 4096;
		cap = cap > SIM_DEBUG_MAX_PAIRS ? SIM_DEBUG_MAX_PAIRS : cap;
		sim_debug_pair *grown = cap > log->capacity ? realloc(log->pairs, sizeof *grown * (size_t)cap) : NULL;
		if (!grown) {
			log->truncated = true;
			return;
		}
		log->pairs = grown;
		log->capacity = cap;
	}
	/* padding zeroed too, so that equal logs compare equal byte for byte */
	sim_debug_pair *p = &log->pairs[log->count++];
	memset(p, 0, sizeof *p);
	p->stage = (uint8_t)stage;
	p->kind = (uint8_t)kind;
	p->v[0] = a, p->v[1] = b, p->v[2] = c, p->v[3] = d;
}

/* Room for n predicted positions; false (nothing recorded) when out of memory. */
static bool reserve_predicted(sim_world *w)
{
	if (w->n <= w->debug_predicted_capacity)
		return true;
	vec4 *p = realloc(w->debug_predicted, sizeof(vec4) * (size_t)w->n);
	if (!p)
		return false;
	w->debug_predicted = p;
	w->debug_predicted_capacity = w->n;
	return true;
}

void sim_world_set_debug(sim_world *w, unsigned flags)
{
	w->debug = flags & (SIM_DEBUG_PAIRS | SIM_DEBUG_PREDICTED);
	if (!(w->debug & SIM_DEBUG_PAIRS)) {
		w->debug_log.count = 0;
		w->debug_log.truncated = false;
	}
	if (!(w->debug & SIM_DEBUG_PREDICTED))
		w->debug_predicted_valid = false;
}

unsigned sim_world_get_debug(const sim_world *w) { return w->debug; }

int sim_world_debug_pairs(const sim_world *w, const sim_debug_pair **out, bool *truncated)
{
	if (out)
		*out = w->debug_log.count > 0 ? w->debug_log.pairs : NULL;
	if (truncated)
		*truncated = w->debug_log.truncated;
	return w->debug_log.count;
}

const vec4 *sim_world_debug_predicted(const sim_world *w)
{
	return w->debug_predicted_valid ? w->debug_predicted : NULL;
}

int sim_world_debug_vertex_count(const sim_world *w)
{
	int n = w->n;
	for (int k = 0; k < w->obstacle_count; k++)
		if (sim_obstacle_has_triangles(&w->obstacles[k]))
			n += w->obstacles[k].vertex_count;
	return n;
}

int sim_world_debug_obstacle_vertices(const sim_world *w, vec4 *out, int capacity)
{
	int n = 0;
	for (int k = 0; k < w->obstacle_count; k++) {
		const sim_obstacle *ob = &w->obstacles[k];
		if (!sim_obstacle_has_triangles(ob))
			continue;
		/* as the pipeline places them, whole obstacles only */
		if (n + ob->vertex_count <= capacity)
			sim_obstacle_world_vertices(ob, ob->position, ob->orientation, out + n);
		n += ob->vertex_count;
	}
	return n;
}

int sim_world_debug_boxes(const sim_world *w, int depth_min, int depth_max, float (*out)[7], int capacity)
{
	/* the hierarchies are the pipeline's, fitted while it runs: none while it does not */
	if (!collisions_active(w) || w->n == 0)
		return 0;
	return sim_collide_debug_boxes(w->collide, depth_min, depth_max, out, capacity);
}

int sim_world_debug_tree_depth(const sim_world *w)
{
	if (!collisions_active(w) || w->n == 0)
		return -1;
	return sim_collide_debug_depth(w->collide);
}

/* The fixed step, with the integrator either built in (ext NULL) or run by the caller
 * (sim_world_step_external): everything else, constraints to commit, is shared, so the
 * two paths differ only in who integrates. */
static sim_result step_with(sim_world *w, float dt, sim_external_integrator ext, void *user)
{
	if (!(dt > 0.0f) || !isfinite(dt))
		return SIM_ERROR_INVALID;
	if (w->n == 0) { /* no cloth; time still passes and obstacles still move */
		apply_constraints(w, w->time, dt);
		for (int k = 0; k < w->obstacle_count; k++)
			sim_obstacle_advance(&w->obstacles[k], dt);
		w->time += (double)dt;
		w->steps++;
		return SIM_OK;
	}
	sim_update_incidence(w);
	bool blocks_pending = w->block_cursor < w->block_count;
	save_state(w, blocks_pending);
	double t0 = w->time;
	int cursor0 = w->block_cursor;

	int substeps = w->def.substeps;
	float h = dt / (float)substeps;
	sim_stats *st = &w->stats;
	for (int k = 0; k < SIM_STAGE_COUNT; k++)
		st->stage_us[k] = 0.0;
	st->coarse_us = st->prepass_us = st->walk_us = 0.0;
	st->cg_iterations = 0;
	st->cg_residual = 0.0f;
	st->strain_iterations = 0;

	st->contacts = st->collisions = st->impact_zones = st->largest_zone = st->self_contacts = st->candidates = 0;
	st->broad_phases = st->refreshed_triangles = st->patches = st->patch_blocks = 0;
	bool colliding = collisions_active(w);
	w->debug_log.count = 0;
	w->debug_log.truncated = false;
	w->debug_predicted_valid = false;
	bool predict = (w->debug & SIM_DEBUG_PREDICTED) && reserve_predicted(w);
	/* obstacle poses at the start, for a rollback (the array grows once per new obstacle) */
	if (w->obstacle_count > w->pose_save_capacity) {
		vec4 *q = realloc(w->pose_save, sizeof(vec4) * 2 * (size_t)w->obstacle_count);
		if (!q)
			return SIM_ERROR_OUT_OF_MEMORY;
		w->pose_save = q;
		w->pose_save_capacity = w->obstacle_count;
	}
	for (int k = 0; k < w->obstacle_count; k++) {
		glm_vec3_copy(w->obstacles[k].position, w->pose_save[2 * k]);
		glm_vec4_copy(w->obstacles[k].orientation, w->pose_save[2 * k + 1]);
	}
	sim_result result = SIM_OK;
	for (int s = 0; s < substeps && result == SIM_OK; s++) {
		int64_t t_start = sim_now_ns();
		double forces_before = st->stage_us[SIM_STAGE_FORCES];
		apply_constraints(w, t0 + (double)dt * s / substeps, h);
		if (colliding) {
			copy_task t = {{w->x_start}, {w->x}, 1};
			sim_parallel_for(w, copy_range, w->n, 4096, &t);
		}
		sim_integrator integ = w->def.integrator;
		bool strain_done = false; /* the external integrator limited the strain itself */
		if ((integ == SIM_VERLET || integ == SIM_MRA) && (!w->history_valid || w->history_h != h))
			sim_reset_history(w, h);
		if (ext) {
			sim_external_state es = {.x = w->x, .v = w->v, .x_prev = w->x_prev, .n = w->n, .substep = s,
			                         .history_valid = w->history_valid && w->history_h == h};
			result = ext(user, &es, h);
			strain_done = es.strain_limited;
			if (strain_done)
				st->strain_iterations = es.strain_iterations;
			/* Kang's memory (dv) lives with the external integrator, which now has it */
			if (integ == SIM_KANG) {
				w->history_valid = true;
				w->history_h = h;
			}
		} else if (integ == SIM_IMPLICIT) {
			result = sim_implicit_step(w, h, st);
		} else {
			sim_integrate(w, h);
		}
		int64_t t_solved = sim_now_ns();
		st->stage_us[SIM_STAGE_SOLVE] += (double)(t_solved - t_start) * 1e-3;
		/* the force evaluations inside the integrator were counted apart */
		st->stage_us[SIM_STAGE_SOLVE] -= st->stage_us[SIM_STAGE_FORCES] - forces_before;
		if (w->def.strain_limit && !strain_done) {
			st->strain_iterations = sim_strain_limit(w, h);
			st->stage_us[SIM_STAGE_STRAIN] += (double)(sim_now_ns() - t_solved) * 1e-3;
		}
		if (predict && s == substeps - 1) {
			memcpy(w->debug_predicted, w->x, sizeof(vec4) * (size_t)w->n);
			w->debug_predicted_valid = true;
		}
		if (colliding && result == SIM_OK)
			result = sim_collide_substep(w, h, st);
		for (int k = 0; k < w->obstacle_count; k++)
			sim_obstacle_advance(&w->obstacles[k], h);
	}
	int64_t t_check = sim_now_ns();
	w->stats_fresh = false;
	if (result == SIM_OK && !check_state(w))
		result = SIM_ERROR_BLOWUP;
	if (result != SIM_OK) {
		restore_state(w, blocks_pending);
		for (int k = 0; k < w->obstacle_count; k++) {
			glm_vec3_copy(w->pose_save[2 * k], w->obstacles[k].position);
			glm_vec4_copy(w->pose_save[2 * k + 1], w->obstacles[k].orientation);
		}
		w->block_cursor = cursor0;
		w->time = t0;
		return result;
	}
	w->time = t0 + (double)dt;
	w->steps++;
	st->stage_us[SIM_STAGE_CHECK] += (double)(sim_now_ns() - t_check) * 1e-3;
	return SIM_OK;
}

sim_result sim_world_step(sim_world *w, float dt) { return step_with(w, dt, NULL, NULL); }

sim_result sim_world_step_external(sim_world *w, float dt, sim_external_integrator integrate, void *user)
{
	if (!integrate)
		return SIM_ERROR_INVALID;
	return step_with(w, dt, integrate, user);
}

uint64_t sim_world_revision(const sim_world *w) { return w->revision; }

int sim_world_spring_total(const sim_world *w) { return w->spring_count; }

void sim_world_get_springs(const sim_world *w, sim_spring_desc *out)
{
	for (int s = 0; s < w->spring_count; s++) {
		const sim_spring *sp = &w->springs[s];
		out[s] = (sim_spring_desc){.a = sp->a, .b = sp->b, .rest = sp->rest, .k = sp->k, .kd = sp->kd,
		                           .kind = (sim_spring_kind)sp->kind};
	}
}

int sim_world_triangle_total(const sim_world *w) { return w->triangle_count; }

const int *sim_world_triangles(const sim_world *w) { return w->triangles; }

void sim_world_get_vertex_params(const sim_world *w, sim_vertex_params *out)
{
	for (int i = 0; i < w->n; i++) {
		sim_vertex_params *p = &out[i];
		glm_vec4_copy(w->rest[i], p->rest);
		glm_vec4_copy(w->ext_force[i], p->point_force);
		p->mass = w->mass[i];
		p->anchor_damping = w->anchor_kd[i];
	}
}

void sim_world_recover(sim_world *w, int object)
{
	const sim_object *o = object_at(w, object);
	if (!o)
		return;
	for (int i = o->first_vertex; i < o->first_vertex + o->vertex_count; i++)
		glm_vec4_zero(w->v[i]);
	w->history_valid = false; /* Verlet, MRA and Kang rebuild their memory from v = 0 */
	sim_implicit_forget(w->implicit);
}

uint64_t sim_world_state_hash(const sim_world *w)
{
	uint64_t h = 1469598103934665603ull;
	const vec4 *arrays[2] = {w->x, w->v};
	for (int a = 0; a < 2; a++) {
		const unsigned char *p = (const unsigned char *)arrays[a];
		for (size_t i = 0; i < sizeof(vec4) * (size_t)w->n; i++) {
			h ^= p[i];
			h *= 1099511628211ull;
		}
	}
	return h;
}
