/* The grabbing pointer (issue 6, seed 002): what the tracked stylus picks, grabs and
 * pulls, and where it is drawn.  Pure: no threads, no clocks, no SDL, no sim; the caller
 * (the device thread, `tela run`) turns its decisions into sim_world_attach,
 * attachment targets and detach (or ST_GRAB / st_set_pointer / ST_RELEASE).
 * docs/devices.md, "The stylus in tela".
 *
 * One sty_update per pointer update (per sample, ideally), oldest first:
 *
 *   trk_pointer ─► jump limit ─► drawn position (stopped at surfaces) ─► pick ─► grab /
 *                                                                              release ─► target */
#ifndef TELA_STYLUS_H
#define TELA_STYLUS_H

#include "tracking/tracking.h"

#include <stdbool.h>
#include <stdint.h>

typedef struct sty_config {
	/* The pointer is a cone whose bounding sphere (centred on the tip) is tested against
	 * a small sphere around every vertex first, as in seed 002; only those vertices
	 * are then tried with the pointer's ray. */
	float sphere_radius; /* m, the pointer's bounding sphere (default 0.03) */
	float vertex_radius; /* m, the spheres around vertices (default 0.01) */
	/* When the ray misses every candidate, the nearest one within this distance of the
	 * tip is picked instead (0: the ray only). */
	float grab_radius;   /* m (default 0.02) */
	/* target = vertex at the grab + gain * the pointer's displacement since the grab.
	 * Seed 002 used 0.5; tela's default is 1, so that a calibrated pointer and the
	 * vertex it holds move together (the workspace scale is the calibration's job). */
	float gain;
	/* An update whose pointer moved farther than this from the previous one is a jump
	 * (a tracker glitch, a hand knocked): its displacement is dropped, so the grabbed
	 * vertex does not follow it.  0: no limit.  Default 0.05 m (3 m/s at 60 Hz). */
	float jump_limit;
	/* The drawn pointer stops this far short of a surface it would cross, so that the
	 * next segment starts on the near side (default 0.002 m). */
	float surface_margin;
} sty_config;

sty_config sty_config_default(void);

/* Triangles that stop the drawn pointer: indices into `positions` (xyz used). */
typedef struct sty_mesh {
	const float (*positions)[4];
	const int *triangles; /* 3 per triangle */
	int triangle_count;
} sty_mesh;

typedef struct sty_sphere {
	float center[3];
	float radius;
} sty_sphere;

/* A rigid obstacle, as sim_obstacle_def describes it (the fields mirror it, so that the
 * caller copies them over; this header stays free of sim).  Obstacles are solids: only
 * entering one stops the pointer, so a pointer already inside one (the obstacle moved
 * onto it) moves freely until it is out, and is stopped from then on. */
typedef enum sty_shape {
	STY_SHAPE_PLANE,   /* the half-space below the plane through position, normal local +y */
	STY_SHAPE_SPHERE,  /* radius */
	STY_SHAPE_BOX,     /* half_extents, in the local frame */
	STY_SHAPE_CAPSULE, /* radius around the segment from -half_height to +half_height on local y */
	STY_SHAPE_MESH,    /* triangles counter-clockwise seen from outside, in the local frame */
} sty_shape;

typedef struct sty_obstacle {
	sty_shape shape;
	/* The pose: pose[0..2] the position, pose[3..6] the orientation quaternion xyzw, as
	 * st_snapshot.obstacle_pose holds it (the current pose, not the scene's initial one).
	 * NULL: position and orientation below. */
	const float *pose;
	float position[3];
	float orientation[4]; /* quaternion xyzw; all zero is taken as the identity */
	float half_extents[3];
	float radius;
	float half_height;
	int vertex_count;
	const float *positions; /* mesh: 3 floats per vertex */
	int triangle_count;
	const int *triangles;   /* mesh: 3 indices per triangle */
} sty_obstacle;

/* What the pointer meets this update. */
typedef struct sty_scene {
	/* Grabbable vertices: those with w (the inverse mass) > 0 and not `driven`; pinned,
	 * scripted or already constrained vertices are skipped. */
	const float (*positions)[4];
	int vertex_count;
	/* 1 for a vertex the scene moves itself at any time (sim_world_driven_vertices): w
	 * alone shows it only during a step, and every vertex looks free before the first;
	 * NULL: none */
	const uint8_t *driven;
	const sty_mesh *meshes; /* cloth and obstacle triangles; may be NULL */
	int mesh_count;
	const sty_sphere *spheres; /* sphere obstacles; may be NULL */
	int sphere_count;
	const sty_obstacle *obstacles; /* every obstacle shape; may be NULL */
	int obstacle_count;
} sty_scene;

typedef struct sty_stylus {
	sty_config config;
	bool have_last;
	float last_position[3];  /* the tracker's pointer at the previous update */
	bool have_drawn;
	float drawn[3];
	int grabbed;             /* -1: none */
	float grab_origin[3];    /* the vertex where it was grabbed */
	double displacement[3];  /* accepted pointer displacement since the grab */
	float target[3];
	uint64_t ignored_jumps;
} sty_stylus;

typedef struct sty_output {
	int hover;               /* the vertex the pointer picks now, -1: none */
	int grabbed;             /* the vertex held after this update, -1: none */
	bool grab;               /* this update grabbed `grabbed` (attach it) */
	bool release;            /* this update let `released` go (detach); before any grab */
	int released;
	float drawn[3];          /* where to draw the pointer (the target while grabbing) */
	bool blocked;            /* a surface stopped the drawn pointer this update */
	bool jump_ignored;       /* this update's displacement was over the jump limit */
	float target[3];         /* while grabbing: the attachment's target */
	float target_velocity[3];/* m/s: gain * the pointer's velocity (0 when frozen or a jump) */
} sty_output;

void sty_init(sty_stylus *stylus, const sty_config *config);
/* Lets go without an update (the scene was reset); the caller detaches. */
void sty_drop(sty_stylus *stylus);
/* One pointer update.  `scene` may be NULL (nothing to pick or to stop at). */
void sty_update(sty_stylus *stylus, const trk_pointer *pointer, const sty_scene *scene, sty_output *out);
/* Whether sty_update would report a hover: for trk_tracker_update's near_object. */
static inline bool sty_near_object(const sty_output *out) { return out->hover >= 0 || out->grabbed >= 0; }

/* The pick on its own: sphere-sphere, then the ray from `tip` along unit `direction`
 * (nearest hit along it, lower index on a tie), else the nearest candidate within
 * grab_radius.  Skips vertices with w 0 and those `driven` marks (may be NULL).  -1 if
 * none. */
int sty_pick(const sty_config *config, const float tip[3], const float direction[3], const float (*positions)[4],
             const uint8_t *driven, int count);
/* The first surface the segment from a to b crosses, as a fraction of the way in [0, 1];
 * false when it crosses none.  Cloth triangles stop it from either side (except one it
 * starts on); spheres and obstacles only when it enters their open interior from a point
 * outside or on the surface, so touching or sliding along a surface is not a hit
 * (except at a mesh obstacle's edges and corners, which may count). */
bool sty_segment_hit(const sty_scene *scene, const float a[3], const float b[3], float *out_s);
/* The same against one obstacle at its pose (the per-shape test behind sty_segment_hit). */
bool sty_obstacle_segment_hit(const sty_obstacle *obstacle, const float a[3], const float b[3], float *out_s);

#endif
