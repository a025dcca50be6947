/* Built-in scenes: each builds a world through sim's public API and says how it wants to
 * be stepped.  Scene files and the seed simulator's folders come with issue 4. */
#ifndef TELA_SCENES_H
#define TELA_SCENES_H

#include "sim/sim.h"

typedef struct scn_info {
	const char *name;
	const char *description;
	float dt;          /* fixed simulation step, s */
	double seconds;    /* default length of `tela run` */
} scn_info;

/* Number of built-in scenes and their descriptions, in listing order. */
int scn_builtin_count(void);
const scn_info *scn_builtin_info(int index);
const scn_info *scn_find(const char *name);

/* Builds the named scene; NULL for an unknown name or when out of memory. */
sim_world *scn_create(const char *name);

/* Writes object `object` of the world as an ASCII STL file.  Returns 0 on success or
 * errno of the failed I/O call. */
int scn_write_stl(const sim_world *world, int object, const char *path);

#endif
