/* Forces of the mass-spring model and its potential energy.
 *
 * Sign conventions (the implicit solver's Jacobians follow them exactly):
 *   spring a-b:  d = x_b - x_a, l = |d|, u = d / l
 *                f_a += k (l - L) u + kd ((v_b - v_a) . u) u,   f_b -= the same
 *   anchor:      f_i += -k_a (x_i - rest_i) - kd_a v_i
 *   air:         f_i += -c m_i v_i
 *   gravity:     f_i += m_i g
 */
#include "sim_internal.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

/* The tiny bias keeps the square root and the division defined for coincident ends
 * (the direction is then 0/1e-15 = 0) without a branch, which would stop the loop from
 * being vectorised; it is far below an ulp of any real squared length. */
#define LENGTH2_BIAS 1e-30f

/* Forces of springs a_i -> a_i + offset for i < blocks * SIM_BLOCK, with shared
 * constants, on structure-of-arrays planes; ox/oy/oz receive the force on a_i (b_i gets
 * its negation).  Whole blocks only, so no scalar remainder loop: callers compute a
 * little past the end of a run and clear what has no spring. */
SIM_VECTOR_CLONES
static void row_forces(const float *restrict px, const float *restrict py, const float *restrict pz,
                       const float *restrict vx, const float *restrict vy, const float *restrict vz, int offset,
                       float *restrict ox, float *restrict oy, float *restrict oz, int blocks, float k, float kd,
                       float rest)
{
	for (int blk = 0; blk < blocks; blk++) {
		for (int lane = 0; lane < SIM_BLOCK; lane++) {
			int i = blk * SIM_BLOCK + lane;
			float dx = px[i + offset] - px[i], dy = py[i + offset] - py[i], dz = pz[i + offset] - pz[i];
			float l = sqrtf(dx * dx + dy * dy + dz * dz + LENGTH2_BIAS);
			float inv_l = 1.0f / l;
			float ux = dx * inv_l, uy = dy * inv_l, uz = dz * inv_l;
			float rel = (vx[i + offset] - vx[i]) * ux + (vy[i + offset] - vy[i]) * uy + (vz[i + offset] - vz[i]) * uz;
			float mag = k * (l - rest) + kd * rel;
			ox[i] = mag * ux;
			oy[i] = mag * uy;
			oz[i] = mag * uz;
		}
	}
}

/* Length deviations d = l - rest of one run: sums of d^2 and |d| and the largest d,
 * accumulated in eight fixed lanes (so the vectorised and the scalar build add in the
 * same order) and folded into doubles per run, which keeps the energy exact enough for
 * conservation checks on large cloths. */
#define MEASURE_LANES 8

SIM_VECTOR_CLONES
static void row_measure(const float *restrict px, const float *restrict py, const float *restrict pz, int offset,
                        int count, float rest, double *sum_d2, double *sum_abs, float *max_d)
{
	float s2[MEASURE_LANES] = {0}, sa[MEASURE_LANES] = {0}, mx[MEASURE_LANES] = {0};
	int i = 0;
	for (; i + MEASURE_LANES <= count; i += MEASURE_LANES) {
		for (int j = 0; j < MEASURE_LANES; j++) {
			int q = i + j;
			float dx = px[q + offset] - px[q], dy = py[q + offset] - py[q], dz = pz[q + offset] - pz[q];
			float d = sqrtf(dx * dx + dy * dy + dz * dz) - rest;
			s2[j] += d * d;
			sa[j] += fabsf(d);
			mx[j] = d > mx[j] ? d : mx[j];
		}
	}
	for (int j = 0; i < count; i++, j++) {
		float dx = px[i + offset] - px[i], dy = py[i + offset] - py[i], dz = pz[i + offset] - pz[i];
		float d = sqrtf(dx * dx + dy * dy + dz * dz) - rest;
		s2[j] += d * d;
		sa[j] += fabsf(d);
		mx[j] = d > mx[j] ? d : mx[j];
	}
	for (int j = 0; j < MEASURE_LANES; j++) {
		*sum_d2 += s2[j];
		*sum_abs += sa[j];
		*max_d = mx[j] > *max_d ? mx[j] : *max_d;
	}
}

/* The largest (l / rest)^2 of one row's springs a_i -> a_i + offset, i in [i0, i1),
 * computed over whole blocks from column 0 with the columns outside the run masked. */
SIM_VECTOR_CLONES
static float row_stretch2(const float *restrict px, const float *restrict py, const float *restrict pz, int offset,
                          int blocks, int i0, int i1, float inv_rest2)
{
	float top[SIM_BLOCK] = {0};
	for (int blk = 0; blk < blocks; blk++) {
		for (int lane = 0; lane < SIM_BLOCK; lane++) {
			int i = blk * SIM_BLOCK + lane;
			float dx = px[i + offset] - px[i], dy = py[i + offset] - py[i], dz = pz[i + offset] - pz[i];
			float r2 = (dx * dx + dy * dy + dz * dz) * inv_rest2;
			r2 = (i >= i0 && i < i1) ? r2 : 0.0f;
			top[lane] = r2 > top[lane] ? r2 : top[lane];
		}
	}
	float m = 0.0f;
	for (int lane = 0; lane < SIM_BLOCK; lane++)
		m = top[lane] > m ? top[lane] : m;
	return m;
}

/* vec4 -> three planes of n floats. */
SIM_VECTOR_CLONES
void sim_to_planes(const vec4 *restrict src, float *restrict px, float *restrict py, float *restrict pz, int n)
{
	for (int i = 0; i < n; i++) {
		px[i] = src[i][0];
		py[i] = src[i][1];
		pz[i] = src[i][2];
	}
}

/* The run of family fam in grid row j: first a-vertex (object-local) and length. */
static int family_run(const sim_object *o, const sim_grid_family *fam, int j, int *a)
{
	int i0 = fam->di < 0 ? -fam->di : 0, i1 = o->grid_nx - (fam->di > 0 ? fam->di : 0);
	*a = j * o->grid_nx + i0;
	return i1 - i0;
}

/* out[i] = sum over the six families of a[f][i] - b[f][i]: the force of every spring
 * that starts at vertex i minus that of every spring that ends there. */
SIM_VECTOR_CLONES
static void row_combine(float *restrict out, const float *restrict a0, const float *restrict a1,
                        const float *restrict a2, const float *restrict a3, const float *restrict a4,
                        const float *restrict a5, const float *restrict b0, const float *restrict b1,
                        const float *restrict b2, const float *restrict b3, const float *restrict b4,
                        const float *restrict b5, int n)
{
	for (int i = 0; i < n; i++)
		out[i] = ((a0[i] - b0[i]) + (a1[i] - b1[i])) + ((a2[i] - b2[i]) + (a3[i] - b3[i])) +
		         ((a4[i] - b4[i]) + (a5[i] - b5[i]));
}

/* f = m g - c m v + point force + the spring planes, for one grid row. */
SIM_VECTOR_CLONES
static void row_finish(vec4 *restrict f, const float *restrict mass, const vec4 *restrict v,
                       const vec4 *restrict ext, const float *restrict sx, const float *restrict sy,
                       const float *restrict sz, int n, float gx, float gy, float gz, float c)
{
	for (int i = 0; i < n; i++) {
		float m = mass[i];
		f[i][0] = m * gx - c * m * v[i][0] + ext[i][0] + sx[i];
		f[i][1] = m * gy - c * m * v[i][1] + ext[i][1] + sy[i];
		f[i][2] = m * gz - c * m * v[i][2] + ext[i][2] + sz[i];
		f[i][3] = 0.0f;
	}
}

/* The same when no vertex has a point force (the usual case): one stream fewer.  The
 * sum is the one above with a zero point force, so the result is the same. */
SIM_VECTOR_CLONES
static void row_finish_no_point(vec4 *restrict f, const float *restrict mass, const vec4 *restrict v,
                                const float *restrict sx, const float *restrict sy, const float *restrict sz, int n,
                                float gx, float gy, float gz, float c)
{
	for (int i = 0; i < n; i++) {
		float m = mass[i];
		f[i][0] = m * gx - c * m * v[i][0] + 0.0f + sx[i];
		f[i][1] = m * gy - c * m * v[i][1] + 0.0f + sy[i];
		f[i][2] = m * gz - c * m * v[i][2] + 0.0f + sz[i];
		f[i][3] = 0.0f;
	}
}

/* Padding either side of a ring row (see grid_forces). */
#define GRID_PAD 2

/* Rows [j0, j1) of a grid's forces from the planes of x and v (already filled, with their
 * zero tails), ring being this call's own buffers (world.c's row layout).  The springs of
 * the two rows before j0 are computed too, into the ring, for the vertices of rows j0 and
 * j0 + 1 they end at (bend springs reach two rows): each row's springs are the same
 * arithmetic whichever call computes them, so any split of the rows gives the bits of
 * the whole grid in one call. */
static void grid_rows(const sim_world *w, const sim_object *o, const vec4 *v, vec4 *f, float c, float *ring, int j0,
                      int j1)
{
	int nx = o->grid_nx, ny = o->grid_ny, ps = w->plane_stride;
	int blocks = (nx + SIM_BLOCK - 1) / SIM_BLOCK;
	int stride = blocks * SIM_BLOCK + 2 * GRID_PAD; /* floats per buffer row */
	float *p = w->planes;
	float *px = p, *py = p + ps, *pz = p + 2 * ps, *pvx = p + 3 * ps, *pvy = p + 4 * ps, *pvz = p + 5 * ps;
	/* ring[slot][family][component] rows, the three output planes, and a zero row
	 * standing for the rows before the first */
	float *out = ring + 3 * SIM_GRID_FAMILIES * 3 * stride;
	float *zero = out + 3 * nx + GRID_PAD;
#define BUF(slot, fam, comp) (ring + (((slot) * SIM_GRID_FAMILIES + (fam)) * 3 + (comp)) * stride + GRID_PAD)
	memset(ring, 0, sizeof(float) * 3 * SIM_GRID_FAMILIES * 3 * (size_t)stride);
	memset(zero - GRID_PAD, 0, sizeof(float) * (size_t)stride);
	const float *g = w->def.gravity;
	int first = o->first_vertex;
	for (int j = j0 - 2 > 0 ? j0 - 2 : 0; j < j1; j++) {
		int slot = j % 3;
		for (int k = 0; k < SIM_GRID_FAMILIES; k++) {
			const sim_grid_family *fam = &o->families[k];
			float *b[3] = {BUF(slot, k, 0), BUF(slot, k, 1), BUF(slot, k, 2)};
			int i0 = fam->di < 0 ? -fam->di : 0, i1 = nx - (fam->di > 0 ? fam->di : 0);
			if (j + fam->dj >= ny || (fam->k == 0.0f && fam->kd == 0.0f)) {
				for (int comp = 0; comp < 3; comp++)
					memset(b[comp], 0, sizeof(float) * (size_t)nx);
				continue;
			}
			/* From column 0 over whole blocks: columns outside [i0, i1) get values of
			 * springs that do not exist (finite: neighbouring vertices or the zero tail),
			 * cleared right after. */
			int a = j * nx, offset = fam->dj * nx + fam->di;
			row_forces(px + a, py + a, pz + a, pvx + a, pvy + a, pvz + a, offset, b[0], b[1], b[2], blocks, fam->k,
			           fam->kd, fam->rest);
			for (int comp = 0; comp < 3; comp++) {
				for (int i = 0; i < i0; i++)
					b[comp][i] = 0.0f;
				for (int i = i1; i < blocks * SIM_BLOCK + GRID_PAD; i++)
					b[comp][i] = 0.0f;
			}
		}
		if (j < j0)
			continue;
		for (int comp = 0; comp < 3; comp++) {
			const float *bs[SIM_GRID_FAMILIES];
			for (int k = 0; k < SIM_GRID_FAMILIES; k++) {
				const sim_grid_family *fam = &o->families[k];
				int from = j - fam->dj;
				bs[k] = (from < 0 ? zero : BUF(from % 3, k, comp)) - fam->di;
			}
			row_combine(out + comp * nx, BUF(slot, 0, comp), BUF(slot, 1, comp), BUF(slot, 2, comp),
			            BUF(slot, 3, comp), BUF(slot, 4, comp), BUF(slot, 5, comp), bs[0], bs[1], bs[2], bs[3], bs[4],
			            bs[5], nx);
		}
		int row0 = first + j * nx;
		if (w->has_point_forces)
			row_finish(f + row0, w->mass + row0, v + row0, w->ext_force + row0, out, out + nx, out + 2 * nx, nx, g[0],
			           g[1], g[2], c);
		else
			row_finish_no_point(f + row0, w->mass + row0, v + row0, out, out + nx, out + 2 * nx, nx, g[0], g[1], g[2], c);
	}
#undef BUF
}

/* The planes of x and v with the kernel's zero tails. */
static void grid_planes(const sim_world *w, const sim_object *o, const vec4 *x, const vec4 *v, int lo, int hi)
{
	int n = o->vertex_count, ps = w->plane_stride;
	float *p = w->planes;
	const vec4 *xo = x + o->first_vertex, *vo = v + o->first_vertex;
	sim_to_planes(xo + lo, p + lo, p + ps + lo, p + 2 * ps + lo, hi - lo);
	sim_to_planes(vo + lo, p + 3 * ps + lo, p + 4 * ps + lo, p + 5 * ps + lo, hi - lo);
	if (hi == n)
		for (int k = 0; k < 6; k++) /* the kernel reads up to 2 + SIM_BLOCK floats past a plane */
			memset(p + k * ps + n, 0, sizeof(float) * SIM_PLANE_TAIL);
}

/* A grid's forces, row by row.  Each family's spring forces for row j go to a buffer
 * indexed by the column of the spring's first vertex, zero where no spring starts, with
 * two zero columns on each side.  Three rows of buffers are kept, so once row j is
 * computed every spring touching row j is known: vertex (i, j) gets +B_f[j][i] from the
 * springs it starts and -B_f[j - dj][i - di] from those it ends, with no scattered
 * read-modify-write and every access contiguous. */
static void grid_forces(const sim_world *w, const sim_object *o, const vec4 *x, const vec4 *v, vec4 *f, float c)
{
	grid_planes(w, o, x, v, 0, o->vertex_count);
	grid_rows(w, o, v, f, c, w->row, 0, o->grid_ny);
}

/* A large grid's forces through the world's task callbacks: the planes in ranges of
 * vertices, then the rows in as many ranges as workers, each with its worker's own ring
 * (grid_rows).  Below this many vertices the grid stays on the caller: the 33 x 33 pile's
 * forces take about 13 us, a hand-out a few. */
#define PARALLEL_FORCES_MIN 4096

typedef struct grid_task {
	const sim_world *w;
	const sim_object *o;
	const vec4 *x, *v;
	vec4 *f;
	float c;
	float *rings;
	size_t ring_floats;
} grid_task;

static void planes_range(int start, int end, int worker, void *ctx)
{
	(void)worker;
	const grid_task *t = ctx;
	grid_planes(t->w, t->o, t->x, t->v, start, end);
}

static void rows_range(int start, int end, int worker, void *ctx)
{
	const grid_task *t = ctx;
	grid_rows(t->w, t->o, t->v, t->f, t->c, t->rings + (size_t)worker * t->ring_floats, start, end);
}

/* world.c's ring size for grids up to nx wide. */
static size_t ring_floats(int nx)
{
	size_t blocks = ((size_t)nx + SIM_BLOCK - 1) / SIM_BLOCK * SIM_BLOCK;
	size_t stride = blocks + 4;
	return 54 * stride + 3 * (size_t)nx + stride;
}

static void list_spring_forces(const sim_world *w, int first, int end, const vec4 *restrict x,
                               const vec4 *restrict v, vec4 *restrict f)
{
	const sim_spring *sp = w->springs;
	for (int s = first; s < end; s++) {
		int a = sp[s].a, b = sp[s].b;
		float dx = x[b][0] - x[a][0], dy = x[b][1] - x[a][1], dz = x[b][2] - x[a][2];
		float l = sqrtf(dx * dx + dy * dy + dz * dz + LENGTH2_BIAS);
		float inv_l = 1.0f / l;
		float ux = dx * inv_l, uy = dy * inv_l, uz = dz * inv_l;
		float rel = (v[b][0] - v[a][0]) * ux + (v[b][1] - v[a][1]) * uy + (v[b][2] - v[a][2]) * uz;
		float mag = sp[s].k * (l - sp[s].rest) + sp[s].kd * rel;
		float fx = mag * ux, fy = mag * uy, fz = mag * uz;
		f[a][0] += fx, f[a][1] += fy, f[a][2] += fz;
		f[b][0] -= fx, f[b][1] -= fy, f[b][2] -= fz;
	}
}

static void add_strain(float l, float rest, int kind, float k, double *energy, float *max_strain, double *sum,
                       int *counted)
{
	double d = (double)l - rest;
	*energy += 0.5 * (double)k * d * d;
	if (kind == SIM_SPRING_BEND || rest <= 0.0f)
		return;
	float e = (l - rest) / rest;
	*max_strain = e > *max_strain ? e : *max_strain;
	*sum += fabs((double)e);
	(*counted)++;
}

void sim_measure_springs(const sim_world *w, const vec4 *x, double *energy, float *max_strain, double *sum_strain,
                         int *counted)
{
	for (int i = 0; i < w->object_count; i++) {
		const sim_object *o = &w->objects[i];
		if (!o->grid_nx) {
			for (int s = o->first_spring; s < o->first_spring + o->spring_count; s++) {
				const sim_spring *sp = &w->springs[s];
				float l = glm_vec3_distance((float *)x[sp->a], (float *)x[sp->b]);
				add_strain(l, sp->rest, sp->kind, sp->k, energy, max_strain, sum_strain, counted);
			}
			continue;
		}
		float *px = w->planes, *py = px + w->plane_stride, *pz = py + w->plane_stride;
		sim_to_planes(x + o->first_vertex, px, py, pz, o->vertex_count);
		double d2[SIM_GRID_FAMILIES] = {0}, abs_sum[SIM_GRID_FAMILIES] = {0};
		float max_d[SIM_GRID_FAMILIES] = {0};
		int runs[SIM_GRID_FAMILIES] = {0};
		for (int j = 0; j < o->grid_ny; j++) { /* row-major, as in the force kernel */
			for (int k = 0; k < SIM_GRID_FAMILIES; k++) {
				const sim_grid_family *fam = &o->families[k];
				if (j + fam->dj >= o->grid_ny)
					continue;
				int a;
				int count = family_run(o, fam, j, &a);
				if (count <= 0)
					continue;
				row_measure(px + a, py + a, pz + a, fam->dj * o->grid_nx + fam->di, count, fam->rest, &d2[k],
				            &abs_sum[k], &max_d[k]);
				runs[k] += count;
			}
		}
		for (int k = 0; k < SIM_GRID_FAMILIES; k++) {
			const sim_grid_family *fam = &o->families[k];
			*energy += 0.5 * (double)fam->k * d2[k];
			if (fam->kind == SIM_SPRING_BEND || fam->rest <= 0.0f)
				continue;
			float e = max_d[k] / fam->rest;
			*max_strain = e > *max_strain ? e : *max_strain;
			*sum_strain += abs_sum[k] / fam->rest;
			*counted += runs[k];
		}
	}
}

/* Gravity, air damping and point forces for every vertex, all four lanes of each vec4
 * (the w lanes of g, v and the point force are 0, so f.w stays 0). */
SIM_VECTOR_CLONES
static void body_kernel(const float *restrict mass, const vec4 *restrict v, const vec4 *restrict ext,
                        vec4 *restrict f, int n, float gx, float gy, float gz, float c)
{
	const float g[4] = {gx, gy, gz, 0.0f};
	for (int i = 0; i < n; i++) {
		float m = mass[i];
		for (int k = 0; k < 4; k++)
			f[i][k] = m * g[k] - c * m * v[i][k] + ext[i][k];
	}
}

/* Gravity, air damping, point forces and springs for every object, then anchors.  A
 * grid computes all of it in its row pass; a mesh gets the body forces, then its
 * spring list scattered on top. */
static void object_forces(const sim_world *w, const vec4 *restrict x, const vec4 *restrict v, vec4 *restrict f,
                          bool anchors_and_air, float *rings)
{
	const float *g = w->def.gravity;
	float c = anchors_and_air ? w->def.air_damping : 0.0f;
	for (int i = 0; i < w->object_count; i++) {
		const sim_object *o = &w->objects[i];
		if (o->grid_nx && rings && o->vertex_count >= PARALLEL_FORCES_MIN) {
			grid_task t = {w, o, x, v, f, c, rings, ring_floats(w->row_capacity)};
			const int workers = w->def.worker_count;
			sim_parallel_for(w, planes_range, o->vertex_count, (o->vertex_count + workers - 1) / workers, &t);
			sim_parallel_for(w, rows_range, o->grid_ny, (o->grid_ny + workers - 1) / workers, &t);
			continue;
		}
		if (o->grid_nx) {
			grid_forces(w, o, x, v, f, c);
			continue;
		}
		int first = o->first_vertex;
		body_kernel(w->mass + first, v + first, w->ext_force + first, f + first, o->vertex_count, g[0], g[1], g[2], c);
		list_spring_forces(w, o->first_spring, o->first_spring + o->spring_count, x, v, f);
	}
	if (!anchors_and_air || !w->has_anchors)
		return;
	for (int i = 0; i < w->n; i++) {
		float ka = w->rest[i][3], kd = w->anchor_kd[i];
		if (ka == 0.0f && kd == 0.0f)
			continue;
		for (int k = 0; k < 3; k++)
			f[i][k] += -ka * (x[i][k] - w->rest[i][k]) - kd * v[i][k];
	}
}

static bool wind_active(const sim_world *w)
{
	const float *u = w->def.wind;
	return (u[0] != 0.0f || u[1] != 0.0f || u[2] != 0.0f) && w->def.air_density > 0.0f &&
	       (w->def.drag_coefficient != 0.0f || w->def.lift_coefficient != 0.0f);
}

/* Per triangle, with u the air velocity relative to the triangle (wind minus the mean
 * vertex velocity), A the area and theta the angle between u and the normal n (oriented
 * so u . n >= 0):
 *   drag = 1/2 rho C_d A |u|^2 cos(theta)            along u
 *   lift = 1/2 rho C_l A |u|^2 cos(theta) sin(theta) along n's component normal to u
 * The projected area A cos(theta) meets the flow; lift vanishes face-on and edge-on.
 * A third of the triangle's force goes to each vertex.  Still air (zero wind) exerts no
 * aerodynamic force; air_damping models that. */
void sim_add_wind_forces(const sim_world *w, const vec4 *x, const vec4 *v, vec4 *f)
{
	if (!wind_active(w))
		return;
	const float half_rho = 0.5f * w->def.air_density;
	for (int t = 0; t < w->triangle_count; t++) {
		const int *tri = &w->triangles[3 * t];
		vec3 e1, e2, n, u;
		glm_vec3_sub((float *)x[tri[1]], (float *)x[tri[0]], e1);
		glm_vec3_sub((float *)x[tri[2]], (float *)x[tri[0]], e2);
		glm_vec3_cross(e1, e2, n);
		float n_len = glm_vec3_norm(n);
		for (int k = 0; k < 3; k++)
			u[k] = w->def.wind[k] - (v[tri[0]][k] + v[tri[1]][k] + v[tri[2]][k]) / 3.0f;
		float speed = glm_vec3_norm(u);
		if (n_len <= 0.0f || speed <= 0.0f)
			continue;
		float area = 0.5f * n_len;
		glm_vec3_scale(n, 1.0f / n_len, n);
		float cos_t = glm_vec3_dot(n, u) / speed;
		if (cos_t < 0.0f) {
			glm_vec3_negate(n);
			cos_t = -cos_t;
		}
		float sin_t = sqrtf(fmaxf(0.0f, 1.0f - cos_t * cos_t));
		float q = half_rho * area * speed * speed;
		vec3 force;
		float drag = q * w->def.drag_coefficient * cos_t / speed; /* times u gives |u| direction */
		for (int k = 0; k < 3; k++)
			force[k] = drag * u[k];
		if (sin_t > 1e-6f && w->def.lift_coefficient != 0.0f) {
			vec3 l;
			for (int k = 0; k < 3; k++)
				l[k] = n[k] - cos_t * u[k] / speed;
			glm_vec3_scale(l, 1.0f / glm_vec3_norm(l), l);
			float lift = q * w->def.lift_coefficient * cos_t * sin_t;
			for (int k = 0; k < 3; k++)
				force[k] += lift * l[k];
		}
		for (int j = 0; j < 3; j++)
			for (int k = 0; k < 3; k++)
				f[tri[j]][k] += force[k] / 3.0f;
	}
}

void sim_compute_forces(const sim_world *w, const vec4 *x, const vec4 *v, vec4 *f)
{
	object_forces(w, x, v, f, true, NULL);
	sim_add_wind_forces(w, x, v, f);
}

void sim_compute_forces_no_anchor(const sim_world *w, const vec4 *x, const vec4 *v, vec4 *f)
{
	object_forces(w, x, v, f, false, NULL);
	sim_add_wind_forces(w, x, v, f);
}

void sim_update_incidence(sim_world *w)
{
	if (w->incidence_valid)
		return;
	free(w->inc_start);
	free(w->inc_spring);
	w->inc_start = calloc((size_t)w->n + 1, sizeof(int));
	w->inc_spring = malloc(sizeof(int) * 2 * (size_t)(w->spring_count ? w->spring_count : 1));
	if (!w->inc_start || !w->inc_spring)
		abort(); /* out of memory in set-up: nothing sensible to continue with */
	for (int s = 0; s < w->spring_count; s++) {
		w->inc_start[w->springs[s].a + 1]++;
		w->inc_start[w->springs[s].b + 1]++;
	}
	for (int i = 0; i < w->n; i++)
		w->inc_start[i + 1] += w->inc_start[i];
	int *fill = calloc((size_t)w->n + 1, sizeof(int));
	if (!fill)
		abort();
	for (int s = 0; s < w->spring_count; s++) {
		int a = w->springs[s].a, b = w->springs[s].b;
		w->inc_spring[w->inc_start[a] + fill[a]++] = s;
		w->inc_spring[w->inc_start[b] + fill[b]++] = s;
	}
	free(fill);
	for (int i = 0; i < w->n; i++) {
		float k = 0.0f, kd = 0.0f;
		for (int e = w->inc_start[i]; e < w->inc_start[i + 1]; e++) {
			k += w->springs[w->inc_spring[e]].k;
			kd += w->springs[w->inc_spring[e]].kd;
		}
		w->kang_k[i] = k;
		w->kang_kd[i] = kd;
	}
	w->incidence_valid = true;
}

void sim_vertex_force(sim_world *w, int i, const vec4 *x, const vec4 *v, vec3 out)
{
	sim_update_incidence(w);
	float m = w->mass[i], c = w->def.air_damping, ka = w->rest[i][3], kd = w->anchor_kd[i];
	for (int k = 0; k < 3; k++)
		out[k] = m * w->def.gravity[k] - c * m * v[i][k] + w->ext_force[i][k] - ka * (x[i][k] - w->rest[i][k]) -
		         kd * v[i][k];
	for (int e = w->inc_start[i]; e < w->inc_start[i + 1]; e++) {
		const sim_spring *s = &w->springs[w->inc_spring[e]];
		vec3 d;
		glm_vec3_sub((float *)x[s->b], (float *)x[s->a], d);
		float l = glm_vec3_norm(d);
		if (l <= 1e-12f)
			continue;
		glm_vec3_scale(d, 1.0f / l, d);
		vec3 dv;
		glm_vec3_sub((float *)v[s->b], (float *)v[s->a], dv);
		float mag = s->k * (l - s->rest) + s->kd * glm_vec3_dot(dv, d);
		float sign = s->a == i ? 1.0f : -1.0f;
		for (int k = 0; k < 3; k++)
			out[k] += sign * mag * d[k];
	}
}

/* The per-worker rings of the parallel grid forces, or NULL where they would not be used
 * (or could not be had: the serial kernel then does the same work). */
static float *worker_rings(sim_world *w)
{
	if (!w->def.enqueue_task || w->def.worker_count <= 1 || w->row_capacity <= 0)
		return NULL;
	const size_t need = ring_floats(w->row_capacity) * (size_t)w->def.worker_count;
	if (need > w->worker_rows_floats) {
		float *q = realloc(w->worker_rows, sizeof(float) * need);
		if (!q)
			return NULL;
		w->worker_rows = q;
		w->worker_rows_floats = need;
	}
	return w->worker_rows;
}

void sim_forces_timed(sim_world *w, const vec4 *x, const vec4 *v, vec4 *f)
{
	int64_t t0 = sim_now_ns();
	object_forces(w, x, v, f, true, worker_rings(w));
	sim_add_wind_forces(w, x, v, f);
	w->stats.stage_us[SIM_STAGE_FORCES] += (double)(sim_now_ns() - t0) * 1e-3;
}

/* Positions to planes, and per lane a finiteness probe (any NaN or infinity makes the
 * sum non-finite) and the largest v^2; whole blocks, then the remainder in lanes 0... */
static inline void probe_one(const vec4 *restrict x, const vec4 *restrict v, float *restrict px, float *restrict py,
                             float *restrict pz, int i, float *restrict probe, float *restrict top)
{
	px[i] = x[i][0];
	py[i] = x[i][1];
	pz[i] = x[i][2];
	float v2 = v[i][0] * v[i][0] + v[i][1] * v[i][1] + v[i][2] * v[i][2];
	*probe += x[i][0] + x[i][1] + x[i][2] + v2;
	*top = v2 > *top ? v2 : *top;
}

SIM_VECTOR_CLONES
static void probe_to_planes(const vec4 *restrict x, const vec4 *restrict v, float *restrict px, float *restrict py,
                            float *restrict pz, int n, float *restrict probe_out, float *restrict top_out)
{
	float probe[SIM_BLOCK] = {0}, top[SIM_BLOCK] = {0};
	int blocks = n / SIM_BLOCK;
	for (int blk = 0; blk < blocks; blk++)
		for (int lane = 0; lane < SIM_BLOCK; lane++)
			probe_one(x, v, px, py, pz, blk * SIM_BLOCK + lane, &probe[lane], &top[lane]);
	for (int i = blocks * SIM_BLOCK, lane = 0; i < n; i++, lane++)
		probe_one(x, v, px, py, pz, i, &probe[lane], &top[lane]);
	for (int lane = 0; lane < SIM_BLOCK; lane++) {
		*probe_out += probe[lane];
		*top_out = top[lane] > *top_out ? top[lane] : *top_out;
	}
}

sim_probe sim_probe_state(const sim_world *w)
{
	sim_probe pr = {0.0f, 0.0f, 0.0f};
	const vec4 *x = w->x, *v = w->v;
	for (int i = 0; i < w->object_count; i++) {
		const sim_object *o = &w->objects[i];
		int first = o->first_vertex;
		if (!o->grid_nx) {
			for (int q = first; q < first + o->vertex_count; q++) {
				float v2 = glm_vec3_norm2((float *)v[q]);
				pr.sum += x[q][0] + x[q][1] + x[q][2] + v2;
				pr.top_v2 = v2 > pr.top_v2 ? v2 : pr.top_v2;
			}
			for (int s = o->first_spring; s < o->first_spring + o->spring_count; s++) {
				const sim_spring *sp = &w->springs[s];
				if (sp->kind == SIM_SPRING_BEND || sp->rest <= 0.0f)
					continue;
				float r2 = glm_vec3_distance2((float *)x[sp->a], (float *)x[sp->b]) / (sp->rest * sp->rest);
				pr.top_stretch2 = r2 > pr.top_stretch2 ? r2 : pr.top_stretch2;
			}
			continue;
		}
		int nx = o->grid_nx, ps = w->plane_stride, blocks = (nx + SIM_BLOCK - 1) / SIM_BLOCK;
		float *px = w->planes, *py = px + ps, *pz = py + ps;
		probe_to_planes(x + first, v + first, px, py, pz, o->vertex_count, &pr.sum, &pr.top_v2);
		for (int k = 0; k < 3; k++)
			memset(w->planes + k * ps + o->vertex_count, 0, sizeof(float) * SIM_PLANE_TAIL);
		for (int k = 0; k < SIM_GRID_FAMILIES; k++) {
			const sim_grid_family *fam = &o->families[k];
			if (fam->kind == SIM_SPRING_BEND || fam->rest <= 0.0f)
				continue;
			int i0 = fam->di < 0 ? -fam->di : 0, i1 = nx - (fam->di > 0 ? fam->di : 0);
			float inv_rest2 = 1.0f / (fam->rest * fam->rest);
			for (int j = 0; j + fam->dj < o->grid_ny; j++) {
				int a = j * nx;
				float r2 = row_stretch2(px + a, py + a, pz + a, fam->dj * nx + fam->di, blocks, i0, i1, inv_rest2);
				pr.top_stretch2 = r2 > pr.top_stretch2 ? r2 : pr.top_stretch2;
			}
		}
	}
	return pr;
}
