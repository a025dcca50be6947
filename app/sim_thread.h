/* The simulation thread of the interactive demo: it owns the world, steps it at the
 * scene's fixed rate on a thread of its own and publishes a copy of the state after
 * every step, so the renderer never blocks it and it never waits for the display.
 * Everything else reaches the world through commands and the pointer, which the thread
 * reads before every step (so a pointer move reaches the cloth within one step).
 *
 * When the machine cannot keep up, the thread does not try to catch up (which would
 * spiral): it drops the backlog, runs in slow motion and reports the achieved rate. */
#ifndef TELA_SIM_THREAD_H
#define TELA_SIM_THREAD_H

#include "scenes/scenes.h"
#include "sim/sim.h"

#include <stdbool.h>
#include <stdint.h>

/* What does not change while a scene runs: the renderer builds its buffers from it. */
typedef struct st_object {
	char name[64];
	int first_vertex, vertex_count;
	int triangle_count;
	const int *triangles; /* object-local, 3 per triangle */
	float color[3];
	sim_material material; /* as the scene set it (ST_SET_MATERIAL changes the world's) */
} st_object;

typedef struct st_obstacle {
	sim_obstacle_def def; /* mesh arrays are owned by the layout */
	float color[3];
} st_obstacle;

typedef struct st_layout {
	char scene[64];
	int vertex_count;
	int object_count;
	st_object *objects;
	int obstacle_count;
	st_obstacle *obstacles;
	float camera_position[3], camera_target[3], camera_fov;
	float dt;
	/* vertex_count entries: 1 for a vertex the scene pins or scripts with velocity
	 * blocks (sim_world_driven_vertices, as built), which no pointer should pick */
	uint8_t *driven;
} st_layout;

/* Issue 7: where a publication's cloth also lies on the GPU, ready to draw (see
 * st_stepper.publish).  buffer 0: nowhere, the renderer draws `positions`. */
typedef struct st_gpu_draw {
	int slot;       /* the snapshot slot (0 .. ST_SLOTS - 1) the buffer belongs to; -1: none */
	unsigned buffer; /* a GL buffer name: vertex_count positions, then vertex_count normals (vec4 each) */
	void *fence;     /* a GLsync the reader waits on (server side) before drawing from it */
} st_gpu_draw;

/* Publications in flight: the writer's, the newest, the reader's (a triple buffer). */
#define ST_SLOTS 3

/* One published state. */
typedef struct st_snapshot {
	uint64_t serial;         /* increases with every publication */
	uint64_t commands;       /* st_send calls handled so far: the n-th has taken effect here
	                          * once commands >= n */
	int64_t steps;
	double time;             /* simulated, s */
	float dt;                /* the fixed step now in use (the scene's, unless ST_SET_DT changed it) */
	int vertex_count;
	vec4 *positions;         /* xyz, w = inverse mass as last stepped (0: constrained) */
	vec3 *velocities;
	int obstacle_count;
	float (*obstacle_pose)[7]; /* position xyz, orientation quaternion xyzw */
	/* Energies cost a force evaluation, so while running `stats` is refreshed at most
	 * every 10 ms (after every publication while paused); stats_steps is the step count
	 * it describes. */
	sim_stats stats;
	int64_t stats_steps;
	sim_world_def def;
	bool paused;
	double achieved_hz;      /* steps per wall-clock second over the last half second */
	double target_hz;        /* 0: as fast as possible (rate_scale 0) */
	double step_p50_us, step_p99_us; /* over the last 256 steps (refreshed as stats) */
	bool slow_motion;        /* the thread dropped a backlog in the last second */
	int grabbed_vertex;      /* -1: none */
	int grabbed_count;       /* vertices held: 1, or a patch (st_options.grab_radius) */
	vec3 grab_force;         /* N, the coupling force on the grabbed vertices, summed */
	char message[256];       /* the last event worth showing (blow-up and recovery, reset) */
	bool stepper_on;         /* issue 7: options.stepper made the last step */
	st_gpu_draw gpu_draw;    /* issue 7: the same state on the GPU, when the stepper published it */

	/* The seed's debug views (ST_SET_DEBUG), of the step this publication follows; every
	 * count is 0 (and debug_predicted NULL) for what is not on.  The arrays belong to the
	 * snapshot and are valid as long as it is. */
	unsigned debug_flags;         /* ST_DEBUG_* in effect for this publication */
	/* The collision pipeline's pairs of the last step (sim_world_debug_pairs): vertex
	 * ids below vertex_count index positions; the ids from vertex_count on name the
	 * triangle obstacles' vertices, at debug_obstacle_vertices[id - vertex_count]. */
	int debug_pair_count;
	bool debug_pairs_truncated;   /* more than SIM_DEBUG_MAX_PAIRS (or out of memory) */
	sim_debug_pair *debug_pairs;
	int debug_obstacle_vertex_count;
	vec4 *debug_obstacle_vertices; /* at the obstacles' current pose */
	vec4 *debug_predicted;        /* vertex_count: positions before collision response */
	/* Hierarchy boxes with depth in [debug_depth_min, debug_depth_max], each {min xyz,
	 * max xyz, depth} in pre-order per tree (sim_world_debug_boxes). */
	int debug_depth_min, debug_depth_max;
	int debug_tree_depth;         /* deepest level there is, -1: none (for the UI's range) */
	int debug_box_count;
	bool debug_boxes_truncated;   /* more than ST_DEBUG_MAX_BOXES (or out of memory) */
	float (*debug_boxes)[7];
	/* the writer's storage behind the arrays above (kept while the views are off) */
	int debug_pair_capacity, debug_obstacle_vertex_capacity, debug_box_capacity;
	vec4 *debug_predicted_store;
} st_snapshot;

/* What ST_SET_DEBUG turns on (command.debug_flags).  Pairs and predicted positions cost
 * the simulation some time while on (docs/collisions.md); boxes cost only the copy. */
enum {
	ST_DEBUG_PAIRS = SIM_DEBUG_PAIRS,
	ST_DEBUG_PREDICTED = SIM_DEBUG_PREDICTED,
	ST_DEBUG_BOXES = 1u << 8,
};
/* Boxes copied into a snapshot at most (a 129 x 129 cloth has about 16k at every depth). */
#define ST_DEBUG_MAX_BOXES 65536

typedef enum st_command_kind {
	ST_PLAY,
	ST_PAUSE,
	ST_STEP,      /* one step, then paused */
	ST_RESET,     /* rebuild the world from the scene (the seed's rewind) */
	ST_SET_DEF,   /* new world settings (integrator, gravity, wind, ...) */
	ST_GRAB,      /* attach `vertex` to the pointer */
	ST_RELEASE,   /* let go */
	ST_SET_MATERIAL, /* new material for cloth object `object` (sim_world_set_material) */
	ST_EXPORT,    /* write every step's meshes into folder `path` (which must exist); "" stops */
	ST_SET_DT,    /* a new fixed step `dt` (s); the real-time schedule follows it */
	ST_SET_DEBUG, /* debug views: debug_flags (ST_DEBUG_*, 0: off), box depths [debug_depth_min, debug_depth_max] */
	ST_SET_STEPPER, /* issue 7: use_stepper true steps with options.stepper, false with sim_world_step */
} st_command_kind;

typedef struct st_command {
	st_command_kind kind;
	int vertex;
	sim_world_def def;
	int object;
	sim_material material;
	char path[256];
	unsigned debug_flags;
	int debug_depth_min, debug_depth_max;
	float dt;
	bool use_stepper;
} st_command;

typedef struct st_thread st_thread;

/* Issue 7: another way to step the world, run on the simulation thread while
 * ST_SET_BACKEND selects it (the demo's GPU integrator, which needs a GL context current
 * on that thread; this file knows nothing of GL).  begin runs on the thread when the
 * stepper is first selected (false: unavailable, with the reason); step replaces
 * sim_world_step, and SIM_ERROR_INVALID from it means "not this world" (a scheme it
 * lacks): the thread then steps on the CPU; end runs when the thread stops. */
typedef struct st_stepper {
	const char *name; /* for messages: "GPU" */
	void *user;
	bool (*begin)(void *user, char *message, int message_size);
	sim_result (*step)(void *user, sim_world *world, float dt);
	void (*end)(void *user);
	/* Optional: called on the thread while the stepper is selected and made the last
	 * step, as the world's state is published into snapshot slot `slot`; what it fills
	 * in `out` reaches the reader as the snapshot's gpu_draw (false: nothing, the reader
	 * draws the copied positions).  The triple buffer's promise, which the stepper builds
	 * on: slot k is handed to publish only while the reader does not hold slot k, i.e.
	 * not between the st_latest call that returned the snapshot in slot k and the reader's
	 * next st_latest call, and everything the reader wrote before that next call
	 * happens before publish(k) (docs/gpu.md, "The demo draws from the GPU"). */
	bool (*publish)(void *user, const sim_world *world, int slot, st_gpu_draw *out);
} st_stepper;

typedef struct st_options {
	bool start_paused;
	/* Wall seconds per simulated second: step k is due rate_scale * k * dt after the
	 * start.  1 = real time; 0.5 = twice as fast; 0 = as fast as possible (tests). */
	double rate_scale;
	float grab_hertz;   /* attachment coupling, defaults from sim_attachment_def_default; */
	float grab_max_force; /* 0 in either also means the default */
	float grab_radius;  /* m: a grab holds the patch within it (grab.h); 0: the vertex alone */
	const st_stepper *stepper; /* issue 7; NULL: none (must outlive the thread) */
} st_options;

st_options st_options_default(void);

/* Builds the scene's world and starts stepping it (paused or not).  The scene stays the
 * caller's but must outlive the thread (reset rebuilds from it).  NULL with a message
 * in err when the world cannot be built or the thread cannot start. */
st_thread *st_start(const scn_scene *scene, const st_options *options, scn_error *err);
/* Stops the thread and frees everything. */
void st_stop(st_thread **thread);

/* What the renderer needs once; valid until st_stop. */
const st_layout *st_get_layout(st_thread *thread);

/* Queues a command; it takes effect before the next step. */
void st_send(st_thread *thread, const st_command *command);
/* How many commands st_send has queued so far: the last one has taken effect in a
 * snapshot whose `commands` has reached this. */
uint64_t st_sent(st_thread *thread);
/* The pointer's latest position and velocity (NULL: at rest) in world coordinates; the
 * grabbed vertex is driven toward it.  A grab's target starts at the vertex itself and
 * follows the pointer from the first st_set_pointer after the grab. */
void st_set_pointer(st_thread *thread, const float position[3], const float velocity[3]);

/* Latency (`tela bench latency`): the same, for a pointer made from a device sample that
 * arrived at host time arrived_ns (CLOCK_MONOTONIC; 0: unknown).  While measuring, each
 * such pointer is timed from its arrival to the start of the first step after it (the
 * step that reads it), whether or not a vertex is held. */
enum { ST_LATENCY_PENDING = 256 }; /* pointers per step that can be timed */
void st_set_pointer_at(st_thread *thread, const float position[3], const float velocity[3], int64_t arrived_ns);
void st_measure_latency(st_thread *thread, bool on);
/* Copies up to `capacity` of the times measured so far (ms, in the order of the steps);
 * `lost` (may be NULL): pointers that could not be timed or copied. */
size_t st_latencies(st_thread *thread, double *out, size_t capacity, uint64_t *lost);

/* The newest published state; the pointer stays valid until the next st_latest call
 * (a triple buffer: the thread never waits for the reader).  One reader thread only. */
const st_snapshot *st_latest(st_thread *thread);

/* The vertex the headless demo's scripted grab pulls: of the first cloth that has one,
 * the free vertex farthest from the cloth's centre (a corner, usually, the most visible
 * one to pull; the lowest index on a tie).  Free: neither driven by the scene (layout's
 * `driven`) nor constrained in the last step (w of `positions` 0).  -1 if no cloth has a
 * free vertex. */
int st_pick_free_corner(const st_layout *layout, const vec4 *positions);

/* The same layout and state for a world no thread steps (`tela run --screenshot`). */
bool st_layout_build(st_layout *layout, const scn_scene *scene, const sim_world *world);
void st_layout_free(st_layout *layout);
bool st_snapshot_alloc(st_snapshot *snapshot, const st_layout *layout);
/* Copies the world's state (positions, velocities, obstacle poses, time, settings). */
void st_snapshot_capture(st_snapshot *snapshot, const sim_world *world);
/* Copies the debug data `flags` asks for (ST_DEBUG_*; pairs and predicted positions only
 * where the world recorded them, see sim_world_set_debug) and empties the rest, growing
 * the snapshot's arrays as needed.  false when one could not grow (what fits is copied
 * and marked truncated). */
bool st_snapshot_capture_debug(st_snapshot *snapshot, const sim_world *world, unsigned flags, int depth_min,
                               int depth_max);
void st_snapshot_free(st_snapshot *snapshot);

#endif
