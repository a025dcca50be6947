/* Velocity constraints in the seed simulator's format (vel_* files):
 *
 *     Time 0
 *     Number of constraint vectors 2
 *     VertexId 0 Vector 0 0 0.1
 *     VertexId 10 Vector 0 0 0.1
 *     Time 2
 *     Number of constraint vectors 0
 *
 * Blocks are piecewise constant and in non-decreasing time: a block holds from its time
 * until the next block's; vertices it does not name are free; the last block holds
 * forever. */
#ifndef TELA_SCENES_VELOCITIES_H
#define TELA_SCENES_VELOCITIES_H

#include "scenes/error.h"
#include "sim/sim.h"

#include <stddef.h>

typedef struct scn_vel_entry {
	int vertex;
	float velocity[3];
	int line; /* where it was read (0 when built in memory) */
} scn_vel_entry;

typedef struct scn_vel_block {
	double time;
	int first; /* index of its first entry in scn_velocities.entries */
	int count;
	int line;
} scn_vel_block;

typedef struct scn_velocities {
	int block_count;
	scn_vel_block *blocks;
	int entry_count;
	scn_vel_entry *entries;
} scn_velocities;

/* Reads a file.  vertex_count > 0 bounds the vertex ids (an id >= vertex_count is an
 * error naming its line); 0 accepts any non-negative id.  On failure *out is empty. */
scn_status scn_vel_read(const char *path, int vertex_count, scn_velocities *out, scn_error *err);
scn_status scn_vel_parse(const char *text, size_t size, const char *name, int vertex_count, scn_velocities *out,
                         scn_error *err);
scn_status scn_vel_write(const char *path, const scn_velocities *vel, scn_error *err);

/* Hands the blocks to the world for the object whose vertices start at first_vertex:
 * from each block's time on, its vertices move with its velocities, and vertices the
 * previous block named but this one does not are released.  `axes` maps file to world
 * coordinates (the identity, or the seed's z-up to tela's y-up). */
typedef enum scn_axes { SCN_AXES_Y_UP, SCN_AXES_Z_UP } scn_axes;
void scn_axes_to_world(scn_axes axes, const float in[3], float out[3]);
sim_result scn_vel_apply(sim_world *world, int first_vertex, const scn_velocities *vel, scn_axes axes);

void scn_vel_free(scn_velocities *vel);

#endif
