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

typedef struct dev_source dev_source;

/* Opens a source from a specification:
 *   polhemus                 the first Polhemus tracker found over USB
 *   polhemus:BUS-ADDR        that one (e.g. polhemus:1-2)
 *   synthetic:still|circle|grab   a scripted device (grab: approach, press, lift, release)
 *   replay:FILE[@SPEED]      a recording (SPEED 1 = real time, 0 = as fast as possible)
 * NULL with a message on failure (unknown kind, unreadable file). */
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

/* Records the raw traffic with host timestamps into `path` (docs/devices.md, format
 * "tela-rec 1"), from now until dev_close; false with a message when it cannot. */
bool dev_record(dev_source *source, const char *path, char *error, int error_size);

#endif
