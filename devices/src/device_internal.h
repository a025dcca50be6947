/* What every source implementation shares with device.c: the source struct, its vtable,
 * the recorder hook and the constructors that dev_open dispatches to.  Private to
 * tela_devices (and its tests); the public API is devices/device.h. */
#ifndef TELA_DEVICES_DEVICE_INTERNAL_H
#define TELA_DEVICES_DEVICE_INTERNAL_H

#include "devices/device.h"

#include <stdio.h>

/* One kind of source.  An implementation embeds `dev_source` as the FIRST member of its
 * own struct, so that device.c can hand the pointer back to it:
 *
 *     typedef struct my_source { dev_source base; ... } my_source;
 *     my_source *m = calloc(1, sizeof *m);
 *     dev_source_init(&m->base, &my_ops, DEV_REC_POLHEMUS);
 *
 * Threading: device.c calls the ops from the thread that calls dev_poll, and the public
 * getters read `state`, `health` and `describe` without locks, so an implementation with
 * a background thread must copy into those fields inside `poll`, never from its thread. */
typedef struct dev_ops {
	const char *kind; /* "polhemus", "synthetic", "replay": for messages */
	/* dev_poll's contract (device.h): at most `max` samples, never longer than
	 * timeout_ms, -1 once ended or failed.  Keep `state`, `health` and `describe`
	 * current, and pass raw bytes to dev_record_bytes as they arrive. */
	int (*poll)(dev_source *source, dev_sample *out, int max, int timeout_ms);
	/* Optional: stops the source's own threads and hands the recorder every byte still
	 * waiting for a poll (the last transfers, the command that stops the tracker).
	 * dev_close calls it before it closes the recording, then `close`. */
	void (*finish)(dev_source *source);
	/* Releases everything the implementation owns, including the struct itself.
	 * device.c has already stopped the recorder. */
	void (*close)(dev_source *source);
} dev_ops;

/* Which way a chunk's bytes went (docs/devices.md, "Recording format"; version 2 files
 * carry it, version 1 chunks are all DEV_REC_IN). */
typedef enum dev_rec_dir {
	DEV_REC_IN = 0,       /* device to host, streamed: the parser met these bytes */
	DEV_REC_IN_REPLY = 1, /* device to host, a reply read and discarded during initialisation */
	DEV_REC_OUT = 2,      /* host to device: a command */
} dev_rec_dir;

/* What a recording holds, named in its header line (docs/devices.md, "Recording
 * format"); both replay through pol_parse. */
typedef enum dev_rec_kind {
	DEV_REC_POLHEMUS,  /* "polhemus-binary": the raw USB IN traffic */
	DEV_REC_SYNTHETIC, /* "synthetic-samples": pol_encode'd samples */
	DEV_REC_WORLD,     /* "world-samples": pol_encode'd samples in the world frame */
} dev_rec_kind;

struct dev_source {
	const dev_ops *ops;
	dev_state state;
	dev_health health;
	dev_frame frame;
	char describe[160];
	/* What dev_describe returns: `describe` plus any recording failure (device.c). */
	char line[352];

	/* The recorder (device.c); NULL file when not recording.  Failures stop recording
	 * and are reported through `describe`, never by failing the source. */
	dev_rec_kind rec_kind;
	FILE *rec_file;
	int rec_version; /* 2 for polhemus-binary (directions), 1 for the sample kinds */
	char rec_path[512];
	char rec_error[160]; /* why recording stopped, "" while fine */
	uint64_t rec_bytes;
};

/* Zeroes the shared part and sets ops, the recording kind, DEV_WAITING and an empty
 * description. */
void dev_source_init(dev_source *source, const dev_ops *ops, dev_rec_kind rec_kind);

/* Sets source->describe printf-style (truncated to fit). */
void dev_set_describe(dev_source *source, const char *fmt, ...)
#if defined(__GNUC__)
	__attribute__((format(printf, 2, 3)))
#endif
	;

/* An open's failure message into the caller's buffer (nothing when it has none). */
void dev_set_error(char *error, int error_size, const char *fmt, ...)
#if defined(__GNUC__)
	__attribute__((format(printf, 3, 4)))
#endif
	;

/* vsnprintf into dst, for messages that may be truncated on purpose (long paths): the
 * compiler's truncation warning has no way to know that is intended. */
void dev_format(char *dst, size_t size, const char *fmt, ...)
#if defined(__GNUC__)
	__attribute__((format(printf, 3, 4)))
#endif
	;

/* Appends one chunk (bytes that arrived at host time t_ns) to the recording, if one is
 * running; a no-op otherwise.  Call it with every raw transfer, before parsing, so that
 * replay sees exactly what the parser saw. */
void dev_record_bytes(dev_source *source, int64_t t_ns, const uint8_t *bytes, size_t count);
/* The same with the direction: a driver that talks to a device records its commands
 * (DEV_REC_OUT) and the replies it discards (DEV_REC_IN_REPLY) too. */
void dev_record_chunk(dev_source *source, int64_t t_ns, dev_rec_dir dir, const uint8_t *bytes, size_t count);

/* The host's CLOCK_MONOTONIC in nanoseconds: the time base of every sample. */
int64_t dev_now_ns(void);

/* Sleeps until the monotonic time `deadline_ns` (returns at once if it has passed). */
void dev_sleep_until_ns(int64_t deadline_ns);

/* Constructors dev_open dispatches to.  Each returns NULL with a message in `error`
 * (NUL-terminated, at most error_size bytes) on failure. */

/* "polhemus" (bus_addr NULL) or "polhemus:BUS-ADDR" (bus_addr "1-2"): devices/src/polhemus_usb.c. */
dev_source *pol_usb_open(const char *bus_addr, char *error, int error_size);
/* "synthetic:ARGS", args after the colon: devices/src/synthetic.c. */
dev_source *dev_synthetic_open(const char *args, char *error, int error_size);
/* "push:NAME", args after the colon: devices/src/push.c. */
dev_source *dev_push_open_spec(const char *args, char *error, int error_size);
/* "replay:FILE[@SPEED]", args after the colon: devices/src/replay.c. */
dev_source *dev_replay_open(const char *args, char *error, int error_size);

/* The scripted poses of the synthetic device, as a pure function of the script time
 * (seconds since the script started), for tests: the pose a Polhemus would report for
 * station 1, in metres and x y z w, with the stylus in bit 0 of `buttons`.  t_ns and
 * frame are left 0.  False for an unknown script name. */
bool dev_synthetic_pose(const char *script, double t_s, dev_sample *out);

#endif
