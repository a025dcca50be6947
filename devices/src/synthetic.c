/* The scripted device: "synthetic:SCRIPT[+SCRIPT2][@HZ][,fast][,seconds=S]".  It reports
 * what a Polhemus would (station 1, device frame, the stylus in bit 0; SCRIPT2, if any, on
 * station 2 in the same frame, as a tracker with two sensors sends them) and sends every
 * sample through pol_encode + pol_parse, so the scripts exercise the parser and a
 * recording of them replays through it like the real traffic.
 *
 * The script's time is the sample index over the rate, never the host clock: the poses
 * (and a recording) are the same on every run.  The host clock only decides when a
 * sample is due; with "fast" nothing waits and the timestamps are the due times on a
 * virtual clock that starts at open. */
#define _POSIX_C_SOURCE 200809L

#include "device_internal.h"
#include "devices/polhemus.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

/* The scripts' geometry, in the device frame with the source on the table and the
 * hemisphere H*,0,0,-1: up is -z (seed 002 maps device -z to world y). */
#define SYN_X 0.30  /* metres in front of the source */
#define SYN_Z -0.20 /* 20 cm above it */
#define CIRCLE_RADIUS 0.10
#define CIRCLE_HZ 0.5
#define GRAB_TARGET_Z -0.05 /* the point the grab script presses on */
#define GRAB_APPROACH 0.20
#define GRAB_LIFT 0.10
#define GRAB_APPROACH_S 1.0
#define GRAB_LIFT_S 1.0
#define GRAB_HOLD_S 0.5
/* "orbit": a second sensor (the head, or a hand holding the view) circling slowly, high
 * above the source on the user's side (+y), turning a little as it goes; slow, so that a
 * camera it drives moves as a head would. */
#define ORBIT_X 0.0
#define ORBIT_Y 0.30
#define ORBIT_Z -0.40
#define ORBIT_RADIUS 0.10
#define ORBIT_HZ 0.1
#define ORBIT_YAW 0.1 /* radians either way */

static const double pi = 3.14159265358979323846;

typedef struct syn_source {
	dev_source base;
	char script[16];      /* as given: "grab" or "grab+orbit" */
	char scripts[2][16];  /* station 1's and station 2's */
	int stations;         /* 1, or 2 with SCRIPT2 */
	int station;          /* the next sample's station - 1, within the frame `index` */
	double rate_hz;
	bool fast;
	int64_t limit; /* frames before DEV_ENDED; -1: forever */
	int64_t start_ns;
	bool started;         /* polled once: a real-time script's clock runs from then */
	int64_t index; /* next frame (one sample per station) */
	pol_parser parser;
} syn_source;

/* Eases in and out so the scripted hand starts and stops without a velocity jump, as
 * a hand does (a jump would kick a grabbed cloth). */
static double smooth(double u)
{
	if (u <= 0.0)
		return 0.0;
	if (u >= 1.0)
		return 1.0;
	return u * u * (3.0 - 2.0 * u);
}

static void set_pose(dev_sample *out, double x, double y, double z, double yaw)
{
	out->position[0] = (float)x;
	out->position[1] = (float)y;
	out->position[2] = (float)z;
	out->orientation[0] = 0.0f;
	out->orientation[1] = 0.0f;
	out->orientation[2] = (float)sin(yaw / 2.0);
	out->orientation[3] = (float)cos(yaw / 2.0);
}

bool dev_synthetic_pose(const char *script, double t_s, dev_sample *out)
{
	memset(out, 0, sizeof *out);
	out->sensor = 1;
	if (strcmp(script, "still") == 0) {
		set_pose(out, SYN_X, 0.0, SYN_Z, 0.0);
	} else if (strcmp(script, "circle") == 0) {
		double a = 2.0 * pi * CIRCLE_HZ * t_s;
		/* Yawing with the circle makes the orientation move too. */
		set_pose(out, SYN_X + CIRCLE_RADIUS * cos(a), CIRCLE_RADIUS * sin(a), SYN_Z, fmod(a, 2.0 * pi));
	} else if (strcmp(script, "grab") == 0) {
		double t_press = GRAB_APPROACH_S, t_top = t_press + GRAB_LIFT_S, t_release = t_top + GRAB_HOLD_S;
		double z;
		if (t_s < t_press)
			z = GRAB_TARGET_Z - GRAB_APPROACH * (1.0 - smooth(t_s / GRAB_APPROACH_S));
		else
			z = GRAB_TARGET_Z - GRAB_LIFT * smooth((t_s - t_press) / GRAB_LIFT_S);
		set_pose(out, SYN_X, 0.0, z, 0.0);
		out->buttons = (t_s >= t_press && t_s < t_release) ? 1u : 0u;
	} else if (strcmp(script, "orbit") == 0) {
		double a = 2.0 * pi * ORBIT_HZ * t_s;
		set_pose(out, ORBIT_X + ORBIT_RADIUS * cos(a), ORBIT_Y + ORBIT_RADIUS * sin(a), ORBIT_Z, ORBIT_YAW * sin(a));
	} else {
		return false;
	}
	return true;
}

static int64_t due_ns(const syn_source *s, int64_t index)
{
	return s->start_ns + (int64_t)llround((double)index * 1e9 / s->rate_hz);
}

static int syn_poll(dev_source *base, dev_sample *out, int max, int timeout_ms)
{
	syn_source *s = (syn_source *)base;
	if (s->limit >= 0 && s->index >= s->limit) {
		base->state = DEV_ENDED;
		dev_set_describe(base, "synthetic:%s ended after %lld samples", s->script, (long long)s->index);
		return -1;
	}
	int64_t deadline = dev_now_ns() + (int64_t)timeout_ms * 1000000;
	if (!s->started && !s->fast) {
		/* As a replay does: the set-up between open and the first poll (a window, a
		 * scene) must not turn into a burst of overdue samples, the script's press among
		 * them. */
		s->start_ns = dev_now_ns();
	}
	s->started = true;
	if (!s->fast) {
		int64_t next = due_ns(s, s->index);
		/* Still DEV_STREAMING: the next sample is on its way, and a caller that polls
		 * faster than the rate must not see the source flicker to waiting. */
		if (next > deadline) {
			dev_sleep_until_ns(deadline);
			return 0;
		}
		dev_sleep_until_ns(next);
	}
	int64_t now = dev_now_ns();
	int n = 0;
	while (n < max && (s->limit < 0 || s->index < s->limit)) {
		int64_t t = due_ns(s, s->index);
		if (!s->fast && t > now)
			break;
		dev_sample pose;
		dev_synthetic_pose(s->scripts[s->station], (double)s->index / s->rate_hz, &pose);
		pose.sensor = s->station + 1;
		pose.frame = (uint32_t)s->index;
		uint8_t rec[POL_RECORD_BYTES];
		pol_encode(&pose, rec);
		dev_record_bytes(base, t, rec, sizeof rec);
		n += pol_parse(&s->parser, rec, sizeof rec, t, out + n, max - n);
		/* a frame's stations one sample at a time, so that a caller taking one sample
		 * per poll gets them all, in the tracker's order */
		if (++s->station == s->stations) {
			s->station = 0;
			s->index++;
		}
	}
	base->health = s->parser.health;
	base->state = DEV_STREAMING;
	dev_set_describe(base, "synthetic:%s at %g Hz%s", s->script, s->rate_hz, s->fast ? ", fast" : "");
	return n;
}

static void syn_close(dev_source *base)
{
	free(base);
}

static const dev_ops syn_ops = {.kind = "synthetic", .poll = syn_poll, .close = syn_close};

static void fail(char *error, int error_size, const char *args, const char *why)
{
	if (error && error_size > 0)
		dev_format(error, (size_t)error_size, "synthetic:%s: %s (expected synthetic:SCRIPT[+SCRIPT2][@HZ][,fast][,seconds=S], "
		           "SCRIPT: still|circle|grab|orbit)",
		         args, why);
}

dev_source *dev_synthetic_open(const char *args, char *error, int error_size)
{
	char buf[128];
	if (strlen(args) >= sizeof buf) {
		fail(error, error_size, "...", "specification too long");
		return NULL;
	}
	strcpy(buf, args);
	double rate = 60.0, seconds = -1.0;
	bool fast = false;
	char *opts = strchr(buf, ',');
	if (opts)
		*opts++ = '\0';
	char *at = strchr(buf, '@');
	if (at) {
		*at++ = '\0';
		char *end;
		rate = strtod(at, &end);
		if (end == at || *end || !(rate >= 1.0 && rate <= 10000.0)) {
			fail(error, error_size, args, "the rate must be 1 to 10000 Hz");
			return NULL;
		}
	}
	while (opts && *opts) {
		char *next = strchr(opts, ',');
		if (next)
			*next++ = '\0';
		if (strcmp(opts, "fast") == 0) {
			fast = true;
		} else if (strncmp(opts, "seconds=", 8) == 0) {
			char *end;
			seconds = strtod(opts + 8, &end);
			if (end == opts + 8 || *end || !(seconds >= 0.0 && seconds <= 1e6)) {
				fail(error, error_size, args, "seconds must be 0 to 1e6");
				return NULL;
			}
		} else {
			fail(error, error_size, args, "unknown option");
			return NULL;
		}
		opts = next;
	}
	char *second = strchr(buf, '+');
	if (second)
		*second++ = '\0';
	dev_sample probe;
	if (!dev_synthetic_pose(buf, 0.0, &probe) || (second && !dev_synthetic_pose(second, 0.0, &probe))) {
		fail(error, error_size, args, "unknown script");
		return NULL;
	}
	syn_source *s = calloc(1, sizeof *s);
	if (!s) {
		fail(error, error_size, args, "out of memory");
		return NULL;
	}
	dev_source_init(&s->base, &syn_ops, DEV_REC_SYNTHETIC);
	/* both names fit: dev_synthetic_pose knows none longer than 6 characters */
	dev_format(s->scripts[0], sizeof s->scripts[0], "%s", buf);
	dev_format(s->scripts[1], sizeof s->scripts[1], "%s", second ? second : "");
	s->stations = second ? 2 : 1;
	dev_format(s->script, sizeof s->script, "%s%s%s", buf, second ? "+" : "", second ? second : "");
	s->rate_hz = rate;
	s->fast = fast;
	s->limit = seconds < 0.0 ? -1 : (int64_t)llround(seconds * rate);
	s->start_ns = dev_now_ns();
	pol_parser_init(&s->parser);
	s->base.state = DEV_STREAMING;
	dev_set_describe(&s->base, "synthetic:%s at %g Hz%s", s->script, rate, fast ? ", fast" : "");
	return &s->base;
}
