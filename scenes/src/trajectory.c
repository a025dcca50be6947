/* Velocity blocks for a vertex set moving along straight segments, the job of the seed's
 * TrajectoryGenerator.m: no jerks (minimum-jerk profiles), rests at the ends, and blocks
 * that add up to exactly the requested displacements. */
#include "scenes/velocities.h"

#include <math.h>
#include <stdlib.h>

/* At most this many constraint vectors in all: at under 80 bytes a line the file stays
 * well inside what scn_vel_read accepts (SCN_VEL_MAX_BYTES), so whatever `tela traj`
 * writes can be read back.  100 vertices at 100 Hz for 200 s fit. */
#define TRAJ_MAX_VECTORS 2000000

scn_traj_def scn_traj_def_default(void)
{
	return (scn_traj_def){.rest = 0.5, .start = 0.0, .rate = 100.0};
}

/* Fraction of a segment covered at tau in [0, 1]: zero velocity and acceleration at both
 * ends, so joining a rest causes no jump in acceleration. */
static double min_jerk(double tau)
{
	return tau * tau * tau * (10.0 + tau * (-15.0 + 6.0 * tau));
}

static int compare_ints(const void *a, const void *b)
{
	int x = *(const int *)a, y = *(const int *)b;
	return (x > y) - (x < y);
}

static scn_status check_vertices(const scn_traj_def *def, scn_error *err)
{
	if (def->vertex_count <= 0 || !def->vertices)
		return scn_fail(err, SCN_ERROR_PARSE, "no vertices to move");
	for (int i = 0; i < def->vertex_count; i++)
		if (def->vertices[i] < 0)
			return scn_fail(err, SCN_ERROR_PARSE, "vertex id %d is negative", def->vertices[i]);
	/* A vertex twice in one block is an error for the reader, so it is one here. */
	int *sorted = malloc(sizeof *sorted * (size_t)def->vertex_count);
	if (!sorted)
		return scn_fail(err, SCN_ERROR_MEMORY, "out of memory");
	for (int i = 0; i < def->vertex_count; i++)
		sorted[i] = def->vertices[i];
	qsort(sorted, (size_t)def->vertex_count, sizeof *sorted, compare_ints);
	int twice = -1;
	for (int i = 1; i < def->vertex_count && twice < 0; i++)
		if (sorted[i] == sorted[i - 1])
			twice = sorted[i];
	free(sorted);
	if (twice >= 0)
		return scn_fail(err, SCN_ERROR_PARSE, "vertex %d is listed twice", twice);
	return SCN_OK;
}

static scn_status check_def(const scn_traj_def *def, scn_error *err)
{
	if (!(def->rate > 0.0 && def->rate <= 1e6))
		return scn_fail(err, SCN_ERROR_PARSE, "rate %g Hz is not in (0, 1e6]", def->rate);
	if (!(def->rest >= 0.0 && def->rest <= SCN_VEL_MAX_TIME))
		return scn_fail(err, SCN_ERROR_PARSE, "rest %g s is not in [0, %g]", def->rest, SCN_VEL_MAX_TIME);
	if (!(def->start >= 0.0 && def->start <= SCN_VEL_MAX_TIME))
		return scn_fail(err, SCN_ERROR_PARSE, "start %g s is not in [0, %g]", def->start, SCN_VEL_MAX_TIME);
	if (def->segment_count <= 0 || !def->segments)
		return scn_fail(err, SCN_ERROR_PARSE, "no segments");
	for (int k = 0; k < def->segment_count; k++) {
		const scn_traj_segment *s = &def->segments[k];
		if (!(s->duration > 0.0 && s->duration <= SCN_VEL_MAX_TIME))
			return scn_fail(err, SCN_ERROR_PARSE, "segment %d: duration %g s is not in (0, %g]", k + 1,
			                s->duration, SCN_VEL_MAX_TIME);
		for (int c = 0; c < 3; c++)
			if (!isfinite(s->displacement[c]))
				return scn_fail(err, SCN_ERROR_PARSE, "segment %d: the displacement is not finite", k + 1);
	}
	return check_vertices(def, err);
}

/* Whole slots of 1/rate s in `seconds`; a segment gets at least one. */
static double slots_of(double seconds, double rate, double at_least)
{
	double n = round(seconds * rate);
	return n < at_least ? at_least : n;
}

/* The plan in slots, checked against the reader's limits before anything is allocated. */
typedef struct plan {
	long rest_slots;
	long *segment_slots;
} plan;

static scn_status make_plan(const scn_traj_def *def, plan *p, scn_error *err)
{
	double rest = slots_of(def->rest, def->rate, 0.0);
	double slots = rest * (def->segment_count + 1), blocks = 2.0 + (rest > 0.0 ? def->segment_count + 1 : 0);
	for (int k = 0; k < def->segment_count; k++) {
		double n = slots_of(def->segments[k].duration, def->rate, 1.0);
		slots += n;
		blocks += n;
	}
	if (def->start + slots / def->rate > SCN_VEL_MAX_TIME)
		return scn_fail(err, SCN_ERROR_PARSE, "the trajectory ends after %g s, the limit of a velocity file",
		                SCN_VEL_MAX_TIME);
	if (blocks * def->vertex_count > TRAJ_MAX_VECTORS)
		return scn_fail(err, SCN_ERROR_PARSE,
		                "%.0f blocks of %d vertices are more than %d constraint vectors; lower the rate",
		                blocks, def->vertex_count, TRAJ_MAX_VECTORS);
	p->rest_slots = (long)rest;
	p->segment_slots = malloc(sizeof *p->segment_slots * (size_t)def->segment_count);
	if (!p->segment_slots)
		return scn_fail(err, SCN_ERROR_MEMORY, "out of memory");
	for (int k = 0; k < def->segment_count; k++)
		p->segment_slots[k] = (long)slots_of(def->segments[k].duration, def->rate, 1.0);
	return SCN_OK;
}

/* One block at slot `slot` giving every vertex of the set velocity v (NULL: no vertex,
 * which releases them all). */
static scn_status emit(scn_velocities *out, const scn_traj_def *def, long slot, const float *v, scn_error *err)
{
	/* Times from the slot index, never accumulated, so the thousandth block is not late. */
	scn_status st = scn_vel_add_block(out, def->start + (double)slot / def->rate, err);
	for (int i = 0; v && i < def->vertex_count && st == SCN_OK; i++)
		st = scn_vel_add_entry(out, def->vertices[i], v, err);
	return st;
}

/* Each slot carries the average velocity over it, d (s(tau1) - s(tau0)) / slot: the
 * blocks then integrate to d exactly, where sampling the profile would drift. */
static scn_status emit_segment(scn_velocities *out, const scn_traj_def *def, int k, long first_slot, long n,
                               scn_error *err)
{
	const double *d = def->segments[k].displacement;
	scn_status st = SCN_OK;
	for (long i = 0; i < n && st == SCN_OK; i++) {
		double ds = min_jerk((double)(i + 1) / (double)n) - min_jerk((double)i / (double)n);
		float v[3];
		for (int c = 0; c < 3; c++)
			v[c] = (float)(d[c] * ds * def->rate);
		double speed = sqrt((double)v[0] * v[0] + (double)v[1] * v[1] + (double)v[2] * v[2]);
		if (speed > SCN_VEL_MAX_SPEED)
			return scn_fail(err, SCN_ERROR_PARSE,
			                "segment %d: speed %.4g m/s is over the limit of %g m/s; make it longer", k + 1, speed,
			                SCN_VEL_MAX_SPEED);
		st = emit(out, def, first_slot + i, v, err);
	}
	return st;
}

static scn_status emit_plan(scn_velocities *out, const scn_traj_def *def, const plan *p, scn_error *err)
{
	static const float zero[3] = {0.0f, 0.0f, 0.0f};
	long slot = 0;
	scn_status st = SCN_OK;
	for (int k = 0; k < def->segment_count && st == SCN_OK; k++) {
		if (p->rest_slots > 0) {
			st = emit(out, def, slot, zero, err);
			slot += p->rest_slots;
		}
		if (st == SCN_OK)
			st = emit_segment(out, def, k, slot, p->segment_slots[k], err);
		slot += p->segment_slots[k];
	}
	if (st != SCN_OK)
		return st;
	/* The final zero block is the last rest and holds the set there for good; with
	 * release, an empty block after the rest frees it. */
	if (!def->release)
		return emit(out, def, slot, zero, err);
	if (p->rest_slots > 0) {
		if ((st = emit(out, def, slot, zero, err)))
			return st;
		slot += p->rest_slots;
	}
	return emit(out, def, slot, NULL, err);
}

scn_status scn_traj_generate(const scn_traj_def *def, scn_velocities *out, scn_error *err)
{
	*out = (scn_velocities){0};
	if (!def)
		return scn_fail(err, SCN_ERROR_PARSE, "no trajectory");
	scn_status st = check_def(def, err);
	plan p = {0};
	if (st == SCN_OK)
		st = make_plan(def, &p, err);
	if (st == SCN_OK)
		st = emit_plan(out, def, &p, err);
	free(p.segment_slots);
	if (st)
		scn_vel_free(out);
	return st;
}
