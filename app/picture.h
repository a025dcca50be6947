/* A picture of a world that no thread steps: the end of `tela run --screenshot`. */
#ifndef TELA_PICTURE_H
#define TELA_PICTURE_H

#include "scenes/scenes.h"
#include "sim/sim.h"

/* Renders the world offscreen from the scene's start view and writes a PNG.  Returns 0,
 * 3 (the file could not be written) or 4 (no OpenGL 4.3 context), with a message. */
int picture_write(const scn_scene *scene, const sim_world *world, const char *path, int width, int height,
                  char *error, int error_size);

#endif
