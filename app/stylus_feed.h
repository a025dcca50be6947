/* The tracked stylus wired to a pose source: dev_poll -> trk_tracker -> sty_stylus.
 *
 * sty_feed is the lock-step driver (no thread): before each simulation step the caller
 * asks for every sample due at or before the step's start time, and gets the stylus's
 * decisions one sample at a time (`tela run --device`, the headless demo, the latency
 * bench).  docs/devices.md, "The stylus in tela", states the time rule. */
#ifndef TELA_STYLUS_FEED_H
#define TELA_STYLUS_FEED_H

#include "device_events.h"
#include "sim_thread.h"
#include "stylus.h"

#include "devices/device.h"
#include "tracking/tracking.h"

#include <stdbool.h>
#include <stdint.h>

typedef struct sty_feed_options {
	const char *spec;        /* dev_open's specification */
	const char *calibration; /* a calibration file, or NULL for the default */
	const char *record;      /* record the raw traffic here, or NULL */
	sty_config stylus;
	/* Issue 8 (OpenXR): a source already open (the session's push source for its
	 * controllers), used instead of opening `spec` and left open for the caller to close
	 * after the device thread (dt_start; not sty_feed) that uses it has stopped; and
	 * a calibration used as it is instead of the file's (the stage-to-world mapping,
	 * composed with the file's by the caller). */
	dev_source *source;
	const trk_calibration *calibration_value;
} sty_feed_options;

typedef struct sty_feed {
	dev_source *source;
	trk_tracker tracker;
	sty_stylus stylus;
	/* The source's clock at simulated time 0: its first sample for a source that runs
	 * ahead of the host clock (replay at speed 0, synthetic ",fast"), else the host's
	 * CLOCK_MONOTONIC at the first sty_feed_advance, and the simulation waits for it. */
	bool lock_to_source;
	bool have_origin;
	int64_t origin_ns;
	dev_sample pending[256]; /* polled, not yet due */
	int pending_first, pending_count;
	bool ended;
	trk_pointer pointer;     /* after the newest sample */
	sty_output output;       /* the stylus after the newest sample */
	uint64_t delivered;
	dve_watch watch;         /* the source's troubles, posted as events (events.h) */
} sty_feed;

/* Called once per delivered sample, oldest first, with the stylus's decision. */
typedef void (*sty_feed_fn)(void *context, const dev_sample *sample, const trk_pointer *pointer,
                            const sty_output *output);

/* Opens the source, its recording and the calibration, and fills the tracker's and the
 * stylus's configuration.  A source in the world frame (a recording of the demo's mouse)
 * is taken as it is, with no calibration unless a file is given.  NULL with a message. */
dev_source *sty_source_open(const sty_feed_options *options, trk_tracker_config *tracker, sty_config *stylus,
                            char *error, int error_size);
/* Opens the source (and the recording, and the calibration); false with a message. */
bool sty_feed_open(sty_feed *feed, const sty_feed_options *options, char *error, int error_size);
void sty_feed_close(sty_feed *feed);
/* Delivers every sample whose time, mapped to simulated time, is at or before t_s;
 * `scene` is what the pointer meets now (may be NULL).  Returns how many.  The source's
 * losses, returns and error counters are posted as events at t_s (device_events.h, paced
 * on simulated time), and an unplugged source freezes the pointer with its reason. */
int sty_feed_advance(sty_feed *feed, double t_s, const sty_scene *scene, sty_feed_fn fn, void *context);
/* Posts the error counters the pacing held back, at t_s (before the run's last drain). */
void sty_feed_flush_events(sty_feed *feed, double t_s);
/* Simulated time of a sample (valid once the origin is set). */
double sty_feed_sample_time(const sty_feed *feed, const dev_sample *sample);
/* What the pointer meets in a published state: every cloth's triangles (meshes: room for
 * layout->object_count) and every obstacle at its current pose (obstacles: room for
 * obstacle_count; obstacle_pose NULL: the scene's initial poses).  The scene points into
 * both and into `positions`. */
void sty_scene_from_layout(const st_layout *layout, const float (*positions)[4], const float (*obstacle_pose)[7],
                           sty_mesh *meshes, sty_obstacle *obstacles, sty_scene *out);
/* One obstacle as the stylus sees it; `pose` (7 floats, may be NULL) overrides the
 * definition's position and orientation. */
void sty_obstacle_from_def(const sim_obstacle_def *def, const float *pose, sty_obstacle *out);
/* Whether a specification names a source that runs ahead of the host clock. */
bool sty_spec_is_fast(const char *spec);
/* Whether it names a scripted source (synthetic or replay), whose time starts at its
 * first poll, rather than a device that moves on its own. */
bool sty_spec_is_scripted(const char *spec);

#endif
