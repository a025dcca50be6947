/* Pose sources: every device tela can take a pointer from produces the same samples.
 * Nothing here knows the simulation or the window (docs/architecture.md). */
#ifndef TELA_DEVICES_DEVICE_H
#define TELA_DEVICES_DEVICE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* One pose of one sensor, in the device's own frame. */
typedef struct dev_sample {
	int64_t t_ns;          /* host CLOCK_MONOTONIC when the bytes arrived, ns */
	int sensor;            /* station number as the device counts them (Polhemus: 1-based) */
	float position[3];     /* metres */
	float orientation[4];  /* unit quaternion x, y, z, w (cglm's order) */
	uint32_t buttons;      /* bit 0: the stylus switch */
	uint32_t frame;        /* the device's frame counter (0 when it has none) */
} dev_sample;

/* What a source is doing, for the display ("the pointer freezes and the display says
 * why"). */
typedef enum dev_state {
	DEV_STREAMING,     /* samples are arriving */
	DEV_WAITING,       /* connected, no sample within the timeout */
	DEV_DISCONNECTED,  /* unplugged or not found; the source keeps trying to reconnect */
	DEV_ENDED,         /* a replay or script has no more samples */
	DEV_FAILED,        /* a permanent error (the message says which) */
} dev_state;

/* Counters every source keeps (the Polhemus driver fills all of them). */
typedef struct dev_health {
	uint64_t samples;        /* delivered */
	uint64_t dropped_frames; /* gaps in the device's frame counter */
	uint64_t error_records;  /* records the device flagged with a non-zero error byte */
	uint64_t skipped_bytes;  /* bytes dropped while resynchronising */
	uint64_t resyncs;        /* times the parser lost and found the record boundary */
	uint64_t reconnects;
} dev_health;

/* The frame a source's samples are in.  A tracker reports in its own frame, which the
 * calibration maps to the world (tracking.h); a source the application feeds with poses
 * it has already placed in the world (the demo's mouse pointer) says so, and the tracker
 * then takes them as they are. */
typedef enum dev_frame {
	DEV_FRAME_DEVICE, /* the device's own frame: calibrate */
	DEV_FRAME_WORLD,  /* tela's world frame already (metres, y up) */
} dev_frame;

typedef struct dev_source dev_source;

/* Room for any message dev_open or dev_record gives: an error buffer this large always
 * holds the whole text (the longest, the hint for a tracker whose firmware is not loaded,
 * is about 270 characters). */
enum { DEV_ERROR_MAX = 1024 };

/* Opens a source from a specification:
 *   polhemus                 the first Polhemus tracker found over USB
 *   polhemus:BUS-ADDR        that one (e.g. polhemus:1-2)
 *   synthetic:still|circle|grab   a scripted device (grab: approach, press, lift, release)
 *   replay:FILE[@SPEED]      a recording (SPEED 1 = real time, 0 = as fast as possible)
 *   push:NAME                samples the application pushes in (dev_push), e.g. an
 *                            OpenXR controller's; in the device frame
 * NULL with a message on failure (unknown kind, unreadable file); an error_size of
 * DEV_ERROR_MAX never cuts it short. */
dev_source *dev_open(const char *spec, char *error, int error_size);
void dev_close(dev_source **source);

/* Waits up to timeout_ms for samples and returns how many it wrote (at most max), 0 on
 * a timeout, or -1 when the source has ended or failed (dev_state says which).
 * Never blocks longer than the timeout. */
int dev_poll(dev_source *source, dev_sample *out, int max, int timeout_ms);

dev_state dev_get_state(const dev_source *source);
/* A line for the display: what the source is and, when not streaming, why. */
const char *dev_describe(const dev_source *source);
dev_health dev_get_health(const dev_source *source);
/* The frame of the samples (a replay reports its recording's). */
dev_frame dev_get_frame(const dev_source *source);

/* ---- Sources the application feeds (the mouse, an OpenXR controller) -------------------- */

/* Opens a source whose samples the application pushes in from any thread: they come out
 * of dev_poll in the order pushed, like any source's, through the Polhemus record encoding
 * (pol_encode, then pol_parse), so that a recording of them (--record) replays bit-exact
 * through the same parser.  `name` is for messages ("mouse", "openxr").  The source waits
 * (DEV_WAITING) until the first push, then streams. */
dev_source *dev_open_push(const char *name, dev_frame frame, char *error, int error_size);
/* Queues one sample (thread-safe).  t_ns 0 takes the host clock now (an earlier time
 * than the previous sample's is raised to it); frame 0 takes the sensor's own counter.
 * Sensors are 1..16 (the record's station byte); the stylus switch is bit 0 of buttons,
 * the only button a record carries.  A push makes the source stream again after a
 * dev_push_set_state.  When the queue is full (no dev_poll for a second at 1 kHz) the
 * oldest sample is dropped and counted in health.dropped_frames.  False, and nothing queued, for a source that is not a push source or
 * has been ended, a sensor out of range or a position or orientation that is not finite. */
bool dev_push(dev_source *source, const dev_sample *sample);
/* Sets what the source reports from the next dev_poll on, with a reason for the display
 * ("controller not tracked"): DEV_STREAMING, DEV_WAITING, DEV_DISCONNECTED, or DEV_ENDED
 * (the application will push no more: dev_poll returns -1 once the queue is empty).
 * Thread-safe; ignored for a source that is not a push source. */
void dev_push_set_state(dev_source *source, dev_state state, const char *why);

/* Records the raw traffic with host timestamps into `path` (docs/devices.md, format
 * "tela-rec 1"), from now until dev_close; false with a message when it cannot.  A push
 * source in the world frame records "world-samples", which replay in the world frame. */
bool dev_record(dev_source *source, const char *path, char *error, int error_size);
/* Why the recording stopped early ("recording to FILE stopped: No space left on
 * device"), or "" while it goes on, or when there is none. */
const char *dev_record_error(const dev_source *source);

#endif
