/* The coarse levels of the implicit solve's multilevel preconditioner (multilevel.c):
 * one hierarchy per grid object: level 1 aggregates the cloth's vertices 2 x 2, and each
 * level below interpolates the one above bilinearly (multilevel.c).  The
 * finest level (the cloth itself) stays in implicit.c, which owns its product and
 * smoother; this file takes the fine residual, restricts it to level 1 and adds level
 * 1's correction, prolonged, to the cloth's.  Level 1's work (its assembly, its part of
 * the cycle) can run in fixed blocks through the world's task callbacks; the levels below
 * it stay on the caller. */
#ifndef TELA_SIM_MULTILEVEL_H
#define TELA_SIM_MULTILEVEL_H

#include <stdbool.h>
#include <stdint.h>

typedef struct ml_grid ml_grid;

/* One spring family of the fine grid as implicit.c stores it: springs a + m -> a + m +
 * dj nx + di for m < count (object-local a), block beta I + w wᵀ at index m of the four
 * planes; spring m is real when column (a + m) mod nx lies in [i0, i1). */
typedef struct ml_fine_run {
	int di, dj, a, count, i0, i1;
	const float *wx, *wy, *wz, *beta;
} ml_fine_run;

ml_grid *ml_create(void);
void ml_destroy(ml_grid *g);
/* Sizes the hierarchy for an nx x ny fine grid (nx, ny >= 2); false when out of memory. */
bool ml_reserve(ml_grid *g, int nx, int ny);
/* Level 1's vertex count (the aggregates of the fine grid): its vectors are indexed
 * (i / 2) + (j / 2) * ((nx + 1) / 2) for fine vertex (i, j). */
int ml_level1_count(const ml_grid *g);
struct sim_world;
/* The Galerkin operators Pᵀ A P of every coarse level, P for level 1 the
 * piecewise-constant prolongation with kinematic fine vertices filtered out (mask 0) and
 * below it the bilinear interpolation of each level from the next: diag (the scalar
 * diagonal d) and mask are the object's, runs its spring families.  With w, level 1's
 * operator on a large hierarchy is assembled in fixed blocks of rows through w's task
 * callbacks, with the same result bit for bit (w NULL: all on the caller). */
void ml_assemble(ml_grid *g, const float *diag, const float *mask, const ml_fine_run *runs, int run_count,
                 const struct sim_world *w);
/* Computes q = A z (the fine operator, unfiltered) over the object-local vertices [lo,
 * hi) for ml_apply, with the scratch of `worker`; the same values whatever the range. */
typedef void ml_product_fn(void *ctx, int lo, int hi, int worker);
/* z += P e, e level 1's correction for the fine residual r - q and P the prolongation
 * with kinematic vertices filtered out (mask 0): level 1's right-hand side b_I = sum over
 * the aggregate of mask_i (r_i - q_i) (r, q and z three planes `stride` apart,
 * object-local pointers), then one symmetric V-cycle (damped block Jacobi before and
 * after, the coarsest level solved exactly), a fixed symmetric positive definite linear
 * map.  With `product`, q is first computed as A z by it, row by row as the restriction
 * needs it (NULL: q is given).  With w, level 1's work (the product's rows and the
 * prolongation with it) on a large hierarchy runs in fixed blocks through w's task
 * callbacks, with the same result bit for bit (w NULL: all on the caller). */
void ml_apply(ml_grid *g, const float *r, float *q, const float *mask, int stride, float *z,
              ml_product_fn *product, void *product_ctx, const struct sim_world *w);
/* The time ml_apply spent in the levels below level 1 since the last call (0 without a
 * clock, sim_set_clock); resets it. */
int64_t ml_take_coarse_ns(ml_grid *g);

/* The range length, in items, that splits `count` items over `workers` workers most
 * evenly when ranges go to workers as they come free: every item weighs `unit`, the last
 * `last` (a partial block).  Only the split depends on it, never a result. */
int ml_even_range(int count, int unit, int last, int workers);

/* For tests: the number of coarse levels, level l's grid (l = 1 for level 1, up to
 * ml_levels), and y = A_l x with level l's operator as the cycle applies it (its
 * scratch planes overwritten), x and y three planes of nx ny floats each. */
int ml_levels(const ml_grid *g);
void ml_level_size(const ml_grid *g, int l, int *nx, int *ny);
void ml_level_multiply(ml_grid *g, int l, const float *x, float *y);
/* For tests (implicit.c): */
#include "sim/sim.h"
typedef struct sim_implicit sim_implicit;
/* When the solve uses the multilevel preconditioner: by the iterations of the last
 * step (the default), always, or never (block Jacobi everywhere). */
typedef enum ml_mode { ML_AUTO, ML_ALWAYS, ML_NEVER } ml_mode;
/* ML_AUTO's switch (see implicit.c): a solve on block Jacobi that has not converged after
 * ML_ENTER_ITERATIONS iterations goes on with the multilevel preconditioner, and the next
 * step starts with it; a step that started with it and needed at most
 * ML_LEAVE_ITERATIONS iterations makes the next one start on block Jacobi again. */
#define ML_ENTER_ITERATIONS 20
#define ML_LEAVE_ITERATIONS 3
void sim_implicit_set_multilevel(sim_implicit *im, ml_mode mode);
/* z = M S r for the system of a step of length h from the world's current state, S the
 * kinematic filter and M the preconditioner a step would use; r and z hold three floats
 * per vertex.  false when out of memory. */
bool sim_implicit_apply_preconditioner(sim_world *w, float h, const float *r, float *z);
/* The hierarchy of object `object` (NULL if it has none, or before a step assembled it). */
ml_grid *sim_implicit_grid(sim_implicit *im, int object);

#endif
