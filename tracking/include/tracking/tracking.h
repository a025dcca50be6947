/* Device samples to the grabbing pointer in the world frame: calibration, the clutch,
 * the stylus-tip offset, a timestamped pose history and an optional one-euro filter.
 * Depends on devices' sample type only, never on sim (docs/architecture.md).
 *
 * The pipeline, one sample at a time (trk_tracker_update):
 *
 *   dev_sample ─► calibrate ─► one-euro filter ─► clutch ─► history ─► trk_pointer
 *   (device)      (world)      (optional)         (offset)   (ring)
 *
 * Nothing here takes a lock: one thread owns a tracker (the app copies the pointer, or
 * the poses it needs, to the simulation thread).  Nothing allocates. */
#ifndef TELA_TRACKING_H
#define TELA_TRACKING_H

#include "devices/device.h"

#include <stdbool.h>
#include <stdint.h>

/* A pose in the world frame (metres, y up) at a host CLOCK_MONOTONIC time. */
typedef struct trk_pose {
	int64_t t_ns;
	float position[3];
	float orientation[4]; /* unit quaternion x y z w */
} trk_pose;

/* ---- Calibration ------------------------------------------------------------------------ */

/* Device frame to world.  For a sample with position p and orientation q (device frame):
 *
 *   world position    = translation + scale * R * (p + q * tip)
 *   world orientation = R * q
 *
 * where R is `rotation` and "q * v" rotates the vector v by q.  The tip offset lives in
 * the sensor's own frame, so it turns with the stylus; it is scaled with the workspace
 * (the drawn pointer keeps the proportions of the hand's motion).  Orientation is not
 * scaled.  docs/devices.md, "Calibration and the pointer". */
typedef struct trk_calibration {
	float rotation[4];    /* device-to-world rotation as a unit quaternion x y z w */
	float translation[3]; /* metres, world */
	float scale;          /* workspace scale: world metres per device metre, > 0 */
	float tip[3];         /* stylus tip in the sensor's own frame, metres */
} trk_calibration;

/* Seed 002's mapping: device x to world x, device y to world z, minus device z to world y,
 * i.e. world = (x, -z, y), a quarter turn about x; no translation, scale 1, no tip. */
trk_calibration trk_calibration_default(void);

/* Applies the calibration to one sample; out->t_ns is the sample's timestamp. */
void trk_calibrate(const trk_calibration *cal, const dev_sample *sample, trk_pose *out);

/* The tip direction in the world: the sensor's tip offset direction (its +x axis, the
 * Polhemus stylus boresight, when tip is zero) turned by the world orientation. */
void trk_tip_direction(const trk_calibration *cal, const float world_orientation[4], float out[3]);

/* An axis mapping as three signed device axes, one for each world axis in turn:
 * "x -z y" means world x = device x, world y = -device z, world z = device y (seed 002's
 * mapping).  Writes the rotation as a quaternion; false when the text is not three
 * distinct signed axes or the mapping is a mirror rather than a rotation. */
bool trk_axes_to_quaternion(const char *axes, float out[4]);

/* Reads a calibration file (format in docs/devices.md):
 *
 *   # comments start with '#', anywhere on a line
 *   rotation    = x -z y        # three axes, or a quaternion: x y z w
 *   translation = 0 0.8 0       # metres
 *   scale       = 1.5
 *   tip         = 0.12 0 0      # metres, in the sensor frame
 *
 * Keys left out keep trk_calibration_default()'s values.  On failure it returns false,
 * writes "path:LINE: what" (or "path: what") into error, and leaves *out untouched. */
bool trk_calibration_load(const char *path, trk_calibration *out, char *error, int error_size);
/* The same over text already in memory; `name` stands for the path in messages. */
bool trk_calibration_parse(const char *text, const char *name, trk_calibration *out, char *error, int error_size);

/* ---- Clutch ----------------------------------------------------------------------------- */

/* Seed 002: pressing the button away from every object sets a new origin.  As a clutch:
 * while engaged the pointer stays where it is in the world and the hand may reposition;
 * after release the pointer follows the hand again, relative to where it was held.
 *
 *   pointer position = calibrated position + offset
 *
 * While engaged, the offset follows the hand so that this sum stays at the held point.
 * Only position is clutched: the orientation always follows the stylus, so what the hand
 * feels and what the screen shows keep the same directions. */
typedef struct trk_clutch {
	bool engaged;
	float offset[3]; /* world metres */
	float held[3];   /* the world position kept while engaged */
} trk_clutch;

void trk_clutch_reset(trk_clutch *clutch);
/* `calibrated` is the current calibrated (and filtered) position. */
void trk_clutch_engage(trk_clutch *clutch, const float calibrated[3]);
void trk_clutch_release(trk_clutch *clutch, const float calibrated[3]);
/* pointer = calibrated + offset (refreshing the offset first while engaged). */
void trk_clutch_apply(trk_clutch *clutch, const trk_pose *calibrated, trk_pose *pointer);

/* ---- Pose history ----------------------------------------------------------------------- */

/* At 240 Hz a little over two seconds. */
#define TRK_HISTORY_CAPACITY 512

typedef struct trk_history {
	trk_pose poses[TRK_HISTORY_CAPACITY]; /* a ring: oldest at `first` */
	int first, count;
	int64_t max_extrapolation_ns;
	uint64_t dropped_duplicates;   /* a timestamp equal to the newest */
	uint64_t dropped_out_of_order; /* a timestamp older than the newest */
} trk_history;

typedef enum trk_history_result {
	TRK_HISTORY_EMPTY = 0,     /* no pose yet; *out is untouched */
	TRK_HISTORY_EXACT,         /* t is a sample's time */
	TRK_HISTORY_INTERPOLATED,  /* between two samples */
	TRK_HISTORY_EXTRAPOLATED,  /* after the newest, predicted (at most the cap ahead) */
	TRK_HISTORY_CLAMPED,       /* before the oldest: the oldest pose */
} trk_history_result;

/* max_extrapolation_ns: how far past the newest sample trk_history_at predicts (0: it
 * holds the newest pose). */
void trk_history_init(trk_history *history, int64_t max_extrapolation_ns);
/* Forgets the poses, keeps the settings and counters. */
void trk_history_clear(trk_history *history);
/* Appends a pose; a timestamp not after the newest is dropped and counted (false).
 * The oldest pose goes when the ring is full. */
bool trk_history_push(trk_history *history, const trk_pose *pose);
/* The pose at time t: positions are interpolated linearly, orientations by slerp.  Past
 * the newest, both are extrapolated from the last two samples at constant linear and
 * angular velocity, for at most max_extrapolation_ns (then held); before the oldest, the
 * oldest pose.  out->t_ns is the time the pose describes (t, or the clamp). */
trk_history_result trk_history_at(const trk_history *history, int64_t t_ns, trk_pose *out);
/* Average velocity (m/s) over [t - window, t], from trk_history_at at both ends (the start
 * clamped to the oldest sample); zero with fewer than two samples. */
void trk_history_velocity(const trk_history *history, int64_t t_ns, int64_t window_ns, float out[3]);
/* The newest pose, or NULL when empty. */
const trk_pose *trk_history_newest(const trk_history *history);

/* ---- One-euro filter -------------------------------------------------------------------- */

/* Casiez, Roussel and Vogel (CHI 2012): a first-order low-pass whose cutoff rises with
 * speed, so a still hand loses its jitter and a fast one its lag.
 *
 *   alpha(fc, dt) = 1 / (1 + 1 / (2 pi fc dt))          dt from the timestamps
 *   speed         = |low-pass(d_cutoff) of (x - x_previous) / dt|
 *   fc            = min_cutoff + beta * speed
 *   x_hat        += alpha(fc, dt) * (x - x_hat)
 *
 * Position uses beta (Hz per m/s).  Orientation has its own instance: its speed is the
 * angle between successive samples over dt (rad/s), its cutoff min_cutoff + beta_rotation
 * * that speed, and the step an nlerp toward the new sample by its alpha. */
typedef struct trk_filter_params {
	bool enabled;
	float min_cutoff;    /* Hz, the cutoff at rest (> 0) */
	float beta;          /* Hz per m/s of position speed (>= 0) */
	float d_cutoff;      /* Hz, the cutoff of the speed estimate (> 0) */
	float beta_rotation; /* Hz per rad/s of angular speed (>= 0) */
} trk_filter_params;

/* Disabled, with starting values for a hand-held stylus: min_cutoff 1 Hz, beta 20 Hz per
 * m/s, d_cutoff 1 Hz, beta_rotation 0.5 Hz per rad/s. */
trk_filter_params trk_filter_params_default(void);

typedef struct trk_filter {
	trk_filter_params params;
	bool started;
	int64_t t_prev_ns;
	double x_hat[3], x_prev[3], dx_hat[3];
	double q_hat[4], q_prev[4], w_hat;
} trk_filter;

void trk_filter_init(trk_filter *filter, const trk_filter_params *params);
/* Forgets the state: the next sample passes unchanged (as the first one does). */
void trk_filter_reset(trk_filter *filter);
/* Filters one pose (a pass-through when disabled).  A timestamp not after the previous
 * one changes nothing and returns the current estimate. */
void trk_filter_apply(trk_filter *filter, const trk_pose *in, trk_pose *out);

/* ---- The pointer ------------------------------------------------------------------------ */

/* What the app feeds the simulation thread and the display. */
typedef struct trk_pointer {
	int64_t t_ns;          /* the time of the newest sample used */
	float position[3];     /* world metres: the stylus tip */
	float orientation[4];  /* world, x y z w */
	float direction[3];    /* unit tip direction, world */
	float velocity[3];     /* m/s, world, from the history (zero while frozen) */
	bool pressed;          /* the button as of the newest sample */
	bool pressed_edge;     /* it went down during this update */
	bool released_edge;    /* it went up during this update (both: a click within one update) */
	bool clutched;         /* the clutch is engaged: the pointer is held, not grabbing */
	bool valid;            /* a pose exists (a sample has been seen) */
	bool frozen;           /* the pose is stale: held where it was; `reason` says why */
	char reason[96];       /* empty while live */
} trk_pointer;

typedef struct trk_tracker_config {
	trk_calibration calibration;
	trk_filter_params filter;
	int sensor;                   /* the station that is the stylus; < 0: any */
	uint32_t button_mask;         /* the button bits that mean "pressed" (default bit 0) */
	int64_t timeout_ns;           /* no sample for longer than this: frozen (default 250 ms) */
	int64_t max_extrapolation_ns; /* history prediction cap (default 50 ms) */
	int64_t velocity_window_ns;   /* velocity averaging window (default 20 ms) */
} trk_tracker_config;

trk_tracker_config trk_tracker_config_default(void);

typedef struct trk_tracker {
	trk_tracker_config config;
	trk_filter filter;
	trk_clutch clutch;
	trk_history history;
	trk_pose pose;          /* the newest pointer pose */
	bool have_pose;
	bool pressed;           /* button state after the last sample */
	/* The button went down with the first sample after a gap, when the caller's pick
	 * (near_object) was still the one from before the gap: the next sample decides the
	 * clutch, with a pick made where the pointer is now. */
	bool press_undecided;
	bool frozen;
	char reason[96];
	int64_t last_sample_ns; /* host time of the newest accepted sample */
	uint64_t other_sensors; /* samples ignored because they came from another station */
} trk_tracker;

void trk_tracker_init(trk_tracker *tracker, const trk_tracker_config *config);

/* Feeds the samples of one poll (oldest first) and writes the pointer as of now_ns.
 * near_object: whether the pointer is near an object that it could grab (the caller's
 * picking, from the previous update); a press away from every object engages the clutch,
 * a press near one is left to the caller (a grab) and the clutch stays off.  A press that
 * comes with the first sample after a gap (the first sample of all, one after a freeze,
 * or one more than the timeout after the previous sample: an unplug, a silence) is left
 * to the caller too, since its pick was made before the gap; if the caller grabs nothing
 * with it (near_object still false at the next sample, the button still down) the clutch
 * engages then.  Samples from
 * other stations are ignored; samples whose timestamp is not after the newest are
 * dropped (counted by the history).  If no sample arrived for longer than the timeout
 * before now_ns, the pointer is frozen where it was, with its button state, until a
 * sample arrives; after such a gap the filter and history start afresh, so the gap shows
 * no motion.  now_ns is on the samples' clock (a replay passes its own time). */
void trk_tracker_update(trk_tracker *tracker, const dev_sample *samples, int count, bool near_object,
                        int64_t now_ns, trk_pointer *out);

/* Freezes the pointer now with a reason for the display (e.g. dev_describe's line when
 * the source reports it is disconnected); the next sample unfreezes it. */
void trk_tracker_freeze(trk_tracker *tracker, const char *reason);

#endif
