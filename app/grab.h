/* A grab: the picked vertex, or a small patch of cloth around it, held by the pointer.
 *
 * Each held vertex is an attachment (sim's force-capped velocity coupling) whose target is
 * the pointer plus the vertex's offset from the picked one at the moment of the grab, so
 * the patch moves as a rigid piece with the pointer while the cloth around it stretches.
 * The patch is the vertices reachable from the picked one along the cloth's edges without
 * leaving a sphere of the given radius around it: a fold lying against the picked layer is
 * not picked up with it.  Pinned vertices stay pinned.  The coupling's force cap is the
 * whole grab's: each of the N vertices is capped at max_force / N, so a patch pulls no
 * harder than a single vertex can.
 *
 * Shared by the simulation thread (the demo) and `tela run --device` (lock step). */
#ifndef TELA_GRAB_H
#define TELA_GRAB_H

#include "sim/sim.h"

#include <stdbool.h>

/* Vertices one grab holds at most (a 2 cm patch of a 129 x 129 metre cloth is about 13). */
#define GRAB_MAX_VERTICES 64

typedef struct grab {
	int vertex;  /* the picked vertex; -1: nothing held */
	int count;   /* vertices held, the picked one first */
	int vertices[GRAB_MAX_VERTICES];
	int attachments[GRAB_MAX_VERTICES];
	float offset[GRAB_MAX_VERTICES][3]; /* from the picked vertex, at the grab */
} grab;

void grab_init(grab *g);
/* Lets go of whatever is held and holds `vertex` and, with radius > 0, the patch around
 * it, with the coupling's hertz and max_force (0: sim's defaults).  The targets stay
 * where the vertices are until grab_set_target.  A negative sim_result (nothing held) when
 * the picked vertex cannot be attached; vertices of the patch that cannot (pinned, or
 * already attached) are left out. */
int grab_start(grab *g, sim_world *world, int vertex, float radius, float hertz, float max_force);
/* The picked vertex's target (and velocity, NULL: at rest); the others follow at their
 * offsets. */
void grab_set_target(grab *g, sim_world *world, const float position[3], const float velocity[3]);
/* The coupling force on the held vertices in the last step, summed (what the pointer
 * feels, negated), N; zero when nothing is held. */
void grab_force(const grab *g, const sim_world *world, float out[3]);
void grab_release(grab *g, sim_world *world);

#endif
