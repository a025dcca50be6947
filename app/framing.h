/* The default view: a box around everything of the scene that the picture must show,
 * and a camera that fits it into (a part of) the viewport.  Pure math over the layout,
 * so it is tested without a window. */
#ifndef TELA_FRAMING_H
#define TELA_FRAMING_H

#include "sim_thread.h"

#include <stdbool.h>

/* The world box of the cloth at `positions` (xyz of vertex_count vec4) and of every
 * bounded obstacle at its pose in `poses` (position xyz, quaternion xyzw, as snapshots
 * carry them; NULL: the definitions' poses).  An infinite plane has no box; a plane under
 * the rest with gravity pulling towards it extends the box down to it, since that is
 * where falling cloth ends.  False (and lo, hi zero) when there is nothing to frame. */
bool frame_scene_bounds(const st_layout *layout, const float (*positions)[4], int vertex_count,
                        const float (*poses)[7], const float gravity[3], float lo[3], float hi[3]);

/* The eye and target that look along the scene camera's direction (from `eye` towards
 * `target`) and fit the box into the pixel rectangle `rect` (x, y, width, height,
 * origin top-left) of a width x height viewport with a vertical field of view of
 * fov_degrees.  `margin` is the fraction of the rectangle's half size left free on each
 * side (0.1: the box spans at most 90 % of it).  The box's centre projects to the
 * rectangle's centre.  False, with eye and target unchanged, for an empty box or a
 * degenerate rectangle. */
bool frame_fit(const float lo[3], const float hi[3], float fov_degrees, int width, int height, const float rect[4],
               float margin, float eye[3], float target[3]);

/* A length for the pointer's cone from the scene's scale: a twentieth of the box's
 * diagonal, kept between 5 mm and 8 cm (the size for a metre of cloth). */
float frame_pointer_length(const float lo[3], const float hi[3]);

#endif
