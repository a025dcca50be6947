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

#include <stdbool.h>
#include <stddef.h>

/* Limits the reader enforces (and the writer and the trajectory generator respect), so a
 * typo or a corrupt file is an error rather than a cloth flung out of the scene. */
#define SCN_VEL_MAX_SPEED 1e3   /* m/s, the magnitude of one velocity */
#define SCN_VEL_MAX_TIME 1e7    /* s */
#define SCN_VEL_MAX_COUNT 10000000 /* constraint vectors one block may declare */
#define SCN_VEL_MAX_BYTES ((size_t)256 << 20) /* largest file scn_vel_read accepts */

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
/* Writes the seed's layout with the shortest numbers that read back bit-identical.  Refuses
 * a list scn_vel_check rejects (the reader would); on failure no file is left behind. */
scn_status scn_vel_write(const char *path, const scn_velocities *vel, scn_error *err);

/* Hands the blocks to the world for the object whose vertices start at first_vertex:
 * from each block's time on, its vertices move with its velocities, and vertices the
 * previous block named but this one does not are released.  `axes` maps file to world
 * coordinates (the identity, or the seed's z-up to tela's y-up).  Returns
 * SIM_ERROR_INVALID, having added nothing, when a vertex lies outside the world or the
 * list fails scn_vel_check; SIM_ERROR_OUT_OF_MEMORY may leave some blocks added. */
typedef enum scn_axes { SCN_AXES_Y_UP, SCN_AXES_Z_UP } scn_axes;
void scn_axes_to_world(scn_axes axes, const float in[3], float out[3]);
sim_result scn_vel_apply(sim_world *world, int first_vertex, const scn_velocities *vel, scn_axes axes);

void scn_vel_free(scn_velocities *vel);

/* Building in memory: appends a block at `time` with no entries, or an entry to the last
 * block (line numbers 0).  They check nothing but memory; scn_vel_check does the rest.
 * Only for a list that these functions or the reader built (they grow its arrays). */
scn_status scn_vel_add_block(scn_velocities *vel, double time, scn_error *err);
scn_status scn_vel_add_entry(scn_velocities *vel, int vertex, const float velocity[3], scn_error *err);

/* Checks what the reader checks: at least one block; times in [0, SCN_VEL_MAX_TIME] and
 * non-decreasing; speeds at most SCN_VEL_MAX_SPEED; vertex ids non-negative, below
 * vertex_count when it is > 0, and distinct within a block.  Messages read
 * "name: block K (time T): what is wrong", K counting from 1. */
scn_status scn_vel_check(const scn_velocities *vel, const char *name, int vertex_count, scn_error *err);

/* ---- trajectories (tela traj, the seed's TrajectoryGenerator) ---------------------------- */

/* One straight move of every vertex of the set by `displacement` metres in `duration`
 * seconds, with the minimum-jerk profile s(tau) = 10 tau^3 - 15 tau^4 + 6 tau^5. */
typedef struct scn_traj_segment {
	double displacement[3];
	double duration;
} scn_traj_segment;

typedef struct scn_traj_def {
	int vertex_count;
	const int *vertices; /* the set that moves rigidly; distinct, non-negative */
	int segment_count;
	const scn_traj_segment *segments;
	double rest;  /* s of zero velocity before, between and after the segments (default 0.5) */
	double start; /* s, time of the first block (default 0) */
	double rate;  /* blocks per second while moving (default 100, the seed's frame rate) */
	bool release; /* after the last rest: free the vertices (an empty block), not hold them */
} scn_traj_def;

scn_traj_def scn_traj_def_default(void);

/* Builds the blocks.  Durations and the rest are rounded to whole slots of 1/rate s (a
 * segment to at least one); each moving block carries the average velocity over its
 * slot, so the blocks integrate to exactly the requested displacements.  Fails with
 * SCN_ERROR_PARSE and a message naming the bad value ("segment 2: ...") for an invalid
 * definition, a speed over SCN_VEL_MAX_SPEED or more than 2,000,000 constraint vectors
 * in all (so the file stays readable); *out is then empty. */
scn_status scn_traj_generate(const scn_traj_def *def, scn_velocities *out, scn_error *err);

#endif
