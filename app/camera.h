/* The demo's orbit camera and the mouse pointer's geometry: orbit, pan and zoom about a
 * target, seek (orbit about a clicked point), and rays from the cursor into the world.
 * Pure math (cglm), so it is tested without a window. */
#ifndef TELA_CAMERA_H
#define TELA_CAMERA_H

#include <stdbool.h>

typedef struct cam_orbit {
	float target[3];
	float distance;    /* m, eye to target */
	float yaw, pitch;  /* radians; yaw about world y, pitch above the horizon */
	float fov_degrees; /* vertical */
	float home_eye[3], home_target[3]; /* for reset */
} cam_orbit;

void cam_init(cam_orbit *c, const float eye[3], const float target[3], float fov_degrees);
void cam_reset(cam_orbit *c);
void cam_eye(const cam_orbit *c, float eye[3]);
/* Mouse motion in pixels over a viewport `height` pixels tall. */
void cam_rotate(cam_orbit *c, float dx, float dy);
void cam_pan(cam_orbit *c, float dx, float dy, int height);
void cam_zoom(cam_orbit *c, float wheel_steps);
/* Keeps the eye where it is and looks at (orbits about) `point`. */
void cam_seek(cam_orbit *c, const float point[3]);

/* The ray through pixel (x, y) (origin top-left) of a width x height viewport. */
void cam_ray(const cam_orbit *c, float x, float y, int width, int height, float origin[3], float direction[3]);

/* The first vertex a ray passes within `radius` of (seed 002's pick spheres), nearest
 * along the ray; -1 if none.  Vertices are vec4 (xyz used). */
int cam_pick_vertex(const float origin[3], const float direction[3], const float (*positions)[4], int count,
                    float radius, float *out_t);

/* Where a ray first meets a triangle mesh (object-local `triangles`, 3 per triangle, over
 * `positions` from `first_vertex`): the hit triangle's vertex nearest the hit point (a
 * global index), -1 if the ray meets none.  A press between vertices of a moving cloth
 * still lands on its surface, where the vertex pick alone would miss. */
int cam_pick_surface(const float origin[3], const float direction[3], const float (*positions)[4], int first_vertex,
                     const int *triangles, int triangle_count, float *out_t);

#endif
