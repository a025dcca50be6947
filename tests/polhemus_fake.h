/* An emulated Polhemus PATRIOT (0f44:ef12, bulk OUT 0x02, IN 0x82) for the driver test:
 * a umockdev testbed device whose usbdevfs ioctls are answered by a small device model,
 * so that the real driver runs through unmodified libusb.  The process must run under
 * libumockdev-preload (test_polhemus_usb re-executes itself under umockdev-wrapper).
 * docs/devices.md, "Polhemus over USB", describes how it works. */
#ifndef TELA_TESTS_POLHEMUS_FAKE_H
#define TELA_TESTS_POLHEMUS_FAKE_H

#include "devices/device.h"

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

typedef struct pol_fake pol_fake;

/* A testbed with no device on it yet; NULL (with a message on stderr) on failure. */
pol_fake *pol_fake_new(void);
void pol_fake_free(pol_fake *f);

/* Plugs a tracker in at USB bus 1, address `devnum`, showing `product` (0xef12 for a
 * PATRIOT with its firmware, 0xef11 for one without).  A post-firmware device gets the
 * device model; each plug starts a fresh one, as a power-cycled tracker would. */
bool pol_fake_plug(pol_fake *f, int devnum, uint16_t product);
/* Unplugs the current device: its pending transfers end with ENODEV, every further
 * ioctl fails with ENODEV, a "remove" uevent is sent and its sysfs entry and node go. */
void pol_fake_unplug(pol_fake *f);

/* The model's controls (all thread-safe). */
void pol_fake_set_stylus(pol_fake *f, bool pressed);
/* From the next record on, reports poses[0], poses[1], ... (position, orientation and
 * buttons; the frame numbers stay the model's), one per record, and then holds the last
 * one, as a hand would stay where a script ends; the stylus set above is or'ed in.  The
 * poses are copied.  NULL or 0 goes back to pol_fake_position's circle. */
void pol_fake_play(pol_fake *f, const dev_sample *poses, int count);
/* How many of the played poses have been reported (the count once it holds the last). */
int pol_fake_played(pol_fake *f);
/* Stops (or resumes) emitting records while staying connected: a read timeout. */
void pol_fake_set_mute(pol_fake *f, bool mute);
/* Sends `count` raw bytes just before the next record. */
void pol_fake_inject(pol_fake *f, const uint8_t *bytes, size_t count);
/* Sends, before the next record, one record (frame number of its own) whose error byte
 * is `error` and whose position is `marker_m` metres on every axis. */
void pol_fake_inject_error_record(pol_fake *f, uint8_t error, float marker_m);

/* The commands the current device has received, in order (each with its terminator as
 * sent: "F1\r", "P"); returns how many, copies at most `max`, each truncated to 31
 * characters. */
int pol_fake_commands(pol_fake *f, char (*out)[32], int max);
/* Bytes every device of the testbed has handed the host in IN transfers, and received
 * from it in OUT transfers, since the testbed was made: what a recording of everything
 * must hold. */
uint64_t pol_fake_bytes_to_host(pol_fake *f);
uint64_t pol_fake_bytes_from_host(pol_fake *f);
/* Records the current device has emitted in continuous mode (error records included). */
uint32_t pol_fake_frames(pol_fake *f);
/* Whether the current device is streaming (after "C\r", until "P"). */
bool pol_fake_streaming(pol_fake *f);
/* How many ioctl handlers the fake has attached: each holds a listening socket open in
 * this process, which a test counting descriptors must allow for. */
int pol_fake_handler_count(pol_fake *f);
/* The position the model reports for a frame number (metres), so that a test can check
 * the poses it receives. */
void pol_fake_position(uint32_t frame, float out[3]);

#endif
