/* Patches: pieces of a grid cloth that cannot meet themselves (patch.c), for the
 * collision broad phase (collide.c), which never pairs two primitives of one certified
 * patch.
 *
 * Over the rest coordinates of an nx x ny grid (vertex (i, j) at (i lx, j ly)) the
 * quads are grouped into a quadtree of blocks: level 1 is 2 x 2 quads, level k + 1 is
 * 2 x 2 blocks of level k, and the top level is one block over the whole grid.  Each
 * vertex's ball (sep_axis.h: a centre moving linearly over the broad phase's window,
 * radius r) makes, at every time of the window, a piecewise-linear map f from a block's
 * rest rectangle R into space; its gradient on a triangle is that triangle's deformation
 * gradient J(tau), linear in tau.  For any 3 x 2 matrix A, g = f - A u has gradient
 * J - A, and R is convex, so |g(u) - g(v)| <= L |u - v| with L the largest ||J - A||_2
 * over the block's triangles (and over the window: the norm of a matrix linear in tau
 * is convex in tau, so its largest value is at an end).  So
 *
 *     |f(u) - f(v)| >= (sigma_min(A) - L) |u - v|.
 *
 * Two primitives of the grid that share no vertex are at least a = lx ly / sqrt(lx^2 +
 * ly^2) apart in rest coordinates (a vertex and the diagonal of its quad: the least
 * altitude of the grid's right triangles).  A block is certified when (sigma_min(A) -
 * L) a > 2 r: then every two of its primitives that share no vertex keep their
 * centre-primitives more than 2 r apart over the whole window, so the hulls of their
 * vertices' balls never meet, which is exactly what a broad phase over those balls would
 * need to leave the pair out (collide.c: a pair left out cannot meet while its vertices
 * stay in their balls).  A is the mean of the block's gradients over both ends; L is
 * the Frobenius norm's bound (no smaller than the spectral norm) at level 1 and, above,
 * max over the children c of L_c + ||A_c - A||_2 (the triangle inequality); r is the
 * largest radius of the block's balls.  Everything is computed in double from the
 * float centres (their differences are exact in double), with a relative margin of
 * 2^-20 on 2 r for the roundings.
 *
 * A triangle's group is the highest certified block that holds it (-1: none), so that
 * two triangles lie in one certified block exactly when they have one group; the trees
 * take only the groups of the larger blocks (sim_patches_groups). */
#ifndef TELA_SIM_PATCH_H
#define TELA_SIM_PATCH_H

#include "sep_axis.h"
#include "sim_internal.h"

typedef struct sim_patches sim_patches;

sim_patches *sim_patches_create(void);
void sim_patches_destroy(sim_patches *p);
/* Lays the blocks over every grid object of w (at least 2 x 2 quads, triangulated as
 * sim_world_add_grid does it; anything else gets none).  tris: the collision
 * triangles, the cloth's first and in world order (collide.c), tri_count of them.  Every
 * group is -1 until the first certification.  false when out of memory (then there are
 * no patches). */
bool sim_patches_layout(sim_patches *p, const sim_world *w, const int *tris, int tri_count);
/* Whether any grid got blocks. */
bool sim_patches_any(const sim_patches *p);
/* Certifies the blocks for the balls (per collision vertex, the cloth's first) and
 * renews what follows: every block's highest certified holder (sim_patches_tops) and the
 * triangles' groups (sim_patches_groups).  list: the triangles with a new ball since the
 * last call (nd of them; NULL: every ball may be new, and every block is measured).
 * With a list only their blocks and those blocks' ancestors are measured again, and a
 * block can only lose its certificate (an in-place refresh then need not drop the pairs
 * of a block that would gain one: they are merely more than needed until the next call
 * without a list).  changed (NULL: not wanted): set to 1 for every triangle whose
 * level-1 block's holder changed (so did what its neighbour-list entries and tree pairs
 * may skip, and maybe its group).  Returns how many triangles' holders changed. */
int sim_patches_certify(sim_patches *p, const sim_world *w, const vsphere *balls, const int *list, int nd,
                        unsigned char *changed);
/* Whether the neighbour list should look for its entries' holders: only while a third
 * of the level-1 blocks or more have one.  A covered entry saves its boxes' test (about
 * 20 instructions; the entries a patch holds are nearly all rejected by it at once), the
 * look costs every entry about 4, so below about a fifth of the entries covered (a third
 * of the blocks held, on the 129 x 129 drape) it costs more than it saves.  Skipping an
 * entry is never needed, so either answer is safe. */
bool sim_patches_cover_entries(const sim_patches *p);
/* Per collision triangle, its group for the trees (-1: none): the highest certified block
 * that holds it, when that is a block of 8 x 8 quads or more (smaller ones hold too few
 * pairs that share no vertex to pay for the tests in the traversals). */
const int *sim_patches_groups(const sim_patches *p);
/* The smallest block that holds triangles ta and tb, -1 when none does (not one grid). */
int sim_patches_pair_block(const sim_patches *p, int ta, int tb);
/* Per block, the highest certified block that holds it (-1: none): a pair whose smallest
 * block has one lies in a certified block. */
const int *sim_patches_tops(const sim_patches *p);
/* Blocks certified at the last certification, in all, and blocks there are. */
int sim_patches_certified(const sim_patches *p, int *blocks);
/* For tests: block b's quads, [q0, q1) along x and y of its grid, whose first triangle is
 * first_tri and which has qx quads a row, and its last measure: A (3 x 2, row by row), L
 * and r (when measured: a block above level 1 is measured only when all its children are
 * certified, for it cannot be otherwise) and whether it is certified.  false when there
 * is no block b. */
typedef struct sim_patch_block_info {
	int first_tri, qx, q0[2], q1[2], level;
	double A[6], L, r;
	bool certified, measured;
} sim_patch_block_info;
bool sim_patches_debug_block(const sim_patches *p, int b, sim_patch_block_info *out);

#endif
