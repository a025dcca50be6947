/* The windowed demo's tracked stylus on a thread of its own: dev_poll -> trk_tracker ->
 * sty_stylus -> the simulation thread, one sample at a time, as the samples arrive.
 *
 * Latency: a sample's pointer is handed to the simulation thread (st_set_pointer, and
 * ST_GRAB / ST_RELEASE via st_send) by this thread as soon as dev_poll returns it, so it
 * reaches the simulation before the next step, within one step, whatever the frame rate.
 * Only what the pointer meets (the vertex positions for picking and the cloth and sphere
 * obstacles for surface blocking) comes from the main thread: it hands over a copy of
 * each new snapshot once per frame (dt_set_scene), since st_latest has one reader.  The
 * pick and the blocking therefore see the cloth as it was up to one frame ago.
 *
 * A second station may move the camera: its samples go through the same calibration (the
 * tip left out: it is the stylus's) and only the newest pose, with the first one seen, is
 * handed over; the main thread moves the view by the difference once a frame, where the
 * camera lives.  The stylus follows the first other station that reports.
 *
 * A source that runs ahead of the host clock (replay:FILE@0, synthetic:...,fast) is paced
 * here to its own timestamps: a window shows real time.  docs/devices.md, "The stylus in
 * tela". */
#ifndef TELA_DEVICE_THREAD_H
#define TELA_DEVICE_THREAD_H

#include "sim_thread.h"
#include "stylus.h"
#include "stylus_feed.h"

#include "devices/device.h"
#include "tracking/tracking.h"

#include <stdbool.h>
#include <stdint.h>

/* The camera station's poses, world frame: the view follows `pose` relative to `first`. */
typedef struct dt_camera {
	int station;              /* 0: no camera station */
	uint64_t samples;         /* its samples so far; 0: `first` and `pose` are not set */
	trk_pose first, pose;     /* calibrated: the first sample seen and the newest */
	dev_sample first_sample, newest_sample; /* the same in the device frame, as they came */
} dt_camera;

/* What the display shows, as of the newest sample (or the newest poll without one). */
typedef struct dt_status {
	dev_state state;
	char line[256];       /* dev_describe */
	trk_pointer pointer;  /* frozen with its reason when the source is quiet, gone or ended */
	sty_output output;    /* drawn position, hover, grabbed vertex */
	float sphere_radius;  /* the stylus's bounding sphere, m (for drawing it) */
	uint64_t samples;     /* delivered to the stylus */
	uint64_t ignored_jumps;
	int grabs, releases;
	int stylus_station;   /* the station the stylus follows; 0 until one reports */
	uint64_t other_samples; /* from stations that are neither the stylus's nor the camera's */
	dt_camera camera;
} dt_status;

typedef struct dt_thread dt_thread;

/* Opens the source (and the recording and the calibration) and starts polling it; it
 * drives nothing until dt_attach.  camera_station: the station whose samples move the
 * camera (dt_status.camera), 0 for none; the stylus then follows the first other station
 * that reports.  NULL with a message on failure. */
dt_thread *dt_start(const sty_feed_options *options, int camera_station, char *error, int error_size);
/* The same, driving `sim` from the first sample on (dt_attach before the thread starts):
 * no sample can arrive before the simulation is there to use it. */
dt_thread *dt_start_attached(const sty_feed_options *options, int camera_station, st_thread *sim,
                             const st_layout *layout, char *error, int error_size);
/* Stops the thread and closes the source (and the recording). */
void dt_stop(dt_thread **thread);

/* The simulation thread to drive and its layout (NULL, NULL: none, e.g. while a scene
 * switch replaces it).  Either way a held vertex is let go: it belonged to the old
 * thread.  Returns once the device thread no longer touches the old one. */
void dt_attach(dt_thread *thread, st_thread *sim, const st_layout *layout);
/* Copies what the pointer meets from a snapshot of the attached thread (positions and
 * obstacle poses), unless it is the one already copied. */
void dt_set_scene(dt_thread *thread, const st_snapshot *snapshot);
/* Lets go of a held vertex without telling the simulation, and sends `then` (e.g.
 * ST_RESET, which drops the simulation's grab; may be NULL) to the attached thread in
 * the same breath, so that no sample's grab falls between the two. */
void dt_drop(dt_thread *thread, const st_command *then);
void dt_get_status(dt_thread *thread, dt_status *out);

#endif
