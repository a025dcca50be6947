/* The Polhemus USB driver against an emulated PATRIOT (tests/polhemus_fake.c): the real
 * driver code, through unmodified libusb, talking to a umockdev device model.
 *
 * The cases share one testbed and one source and run in order (enumeration, the init
 * bytes, streaming, the stylus, garbage and error records, a read timeout, unplug,
 * replug, close), and then the whole chain once more from a fresh open: the PATRIOT
 * plays the synthetic "grab" script and the stylus lifts a cloth corner in real time; and
 * last a press made while the tracker was unplugged, which grabs when it is back.
 * The process needs libumockdev-preload; it re-executes itself under umockdev-wrapper,
 * guarded by an environment variable set before the exec (not by
 * umockdev_in_mock_environment(), which is true only once a testbed exists, so it would
 * loop). */
#define _POSIX_C_SOURCE 200809L /* setenv, readlink, clock_gettime */

#include "device_internal.h" /* dev_synthetic_pose: the script the PATRIOT plays */
#include "devices/device.h"
#include "devices/polhemus.h"
#include "events.h"
#include "polhemus_fake.h"
#include "scenes/scenes.h"
#include "sim/sim.h"
#include "stylus_feed.h"
#include "test.h"

#include <dirent.h>
#include <stdint.h>
#include <stdlib.h>
#include <time.h>
#include <unistd.h>

#define REEXEC_GUARD "TELA_TEST_POLHEMUS_USB_PRELOADED"

static pol_fake *fake;
static dev_source *src;
static int baseline_threads, baseline_fds, baseline_handlers;

/* What the driver must send, byte for byte (the hemisphere, the output list and the
 * units are what tela configures: docs/devices.md). */
static const char *const expected_init[] = {
	"\r", "P", "F1\r", "U1\r", "H*,0,0,-1\r", "O*,2,7,9,10,1\r", "C\r",
};
enum { EXPECTED_INIT = (int)(sizeof expected_init / sizeof expected_init[0]) };

/* How much longer than its timeout a dev_poll call may take on a loaded 2-core machine
 * before it counts as blocking.  A dev_poll that waited on the driver's own USB read
 * would overrun by that read's 100 ms timeout; scheduling delays under heavy load have
 * reached 70 ms. */
#define POLL_SLACK_NS (90 * 1000000LL)

static int64_t mono_ns(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (int64_t)ts.tv_sec * 1000000000 + ts.tv_nsec;
}

static int count_entries(const char *dir)
{
	DIR *d = opendir(dir);
	if (!d)
		return -1;
	int n = 0;
	struct dirent *e;
	while ((e = readdir(d)) != NULL)
		if (e->d_name[0] != '.')
			n++;
	closedir(d);
	return n;
}

/* Lists the open descriptors, for a failure message. */
static void dump_fds(void)
{
	DIR *d = opendir("/proc/self/fd");
	if (!d)
		return;
	struct dirent *e;
	while ((e = readdir(d)) != NULL) {
		if (e->d_name[0] == '.')
			continue;
		char path[300], target[256];
		snprintf(path, sizeof path, "/proc/self/fd/%s", e->d_name);
		ssize_t n = readlink(path, target, sizeof target - 1);
		target[n > 0 ? n : 0] = 0;
		fprintf(stderr, "  fd %s -> %s\n", e->d_name, target);
	}
	closedir(d);
}

static int64_t longest_poll_ns;
/* Samples delivered since the recording started (init_sequence), the first of them, and
 * its file; the testbed's byte counts when the source was opened. */
static uint64_t delivered;
enum { LIVE_CAP = 8192 };
static dev_sample live[LIVE_CAP];
static char rec_path[256];
static uint64_t to_host0, from_host0;

/* A version 2 recording's traffic, by direction (docs/devices.md, "Recording format"). */
typedef struct rec_totals {
	bool ok;
	uint64_t in, in_reply, out;
	char out_bytes[1024]; /* the commands, one after another */
	size_t out_len;
	int in_chunks;
} rec_totals;

static rec_totals read_recording(const char *path)
{
	rec_totals r = {0};
	FILE *f = fopen(path, "rb");
	if (!f)
		return r;
	static const char head[] = "tela-rec 2 polhemus-binary\n";
	char line[64];
	if (!fgets(line, sizeof line, f) || strcmp(line, head) != 0) {
		fprintf(stderr, "header: %s\n", line);
		fclose(f);
		return r;
	}
	r.ok = true;
	uint8_t h[13];
	static uint8_t bytes[1 << 16];
	while (fread(h, 1, 13, f) == 13) {
		uint32_t count = (uint32_t)h[8] | (uint32_t)h[9] << 8 | (uint32_t)h[10] << 16 | (uint32_t)h[11] << 24;
		if (count > sizeof bytes || fread(bytes, 1, count, f) != count) {
			r.ok = false;
			break;
		}
		if (h[12] == 0) {
			r.in += count;
			r.in_chunks++;
		} else if (h[12] == 1) {
			r.in_reply += count;
		} else if (h[12] == 2) {
			r.out += count;
			if (r.out_len + count < sizeof r.out_bytes) {
				memcpy(r.out_bytes + r.out_len, bytes, count);
				r.out_len += count;
			}
		} else {
			r.ok = false;
		}
	}
	fclose(f);
	return r;
}

/* One dev_poll, timed: the driver must never block past the timeout. */
static int poll_once(dev_sample *out, int max, int timeout_ms)
{
	int64_t t0 = mono_ns();
	int n = dev_poll(src, out, max, timeout_ms);
	for (int i = 0; i < n; i++, delivered++)
		if (delivered < LIVE_CAP)
			live[delivered] = out[i];
	int64_t over = mono_ns() - t0 - (int64_t)timeout_ms * 1000000;
	if (over > longest_poll_ns)
		longest_poll_ns = over;
	return n;
}

/* Polls for `ms` and keeps up to `cap` samples; returns how many arrived (all of them,
 * even past cap), or -1 if dev_poll said the source ended. */
static int gather(int ms, dev_sample *buf, int cap)
{
	int64_t end = mono_ns() + (int64_t)ms * 1000000;
	int total = 0;
	dev_sample chunk[64];
	while (mono_ns() < end) {
		int n = poll_once(chunk, 64, 20);
		if (n < 0)
			return -1;
		for (int i = 0; i < n; i++, total++)
			if (total < cap)
				buf[total] = chunk[i];
	}
	return total;
}

/* Polls (dropping samples) until the source reports `want` or `ms` pass. */
static bool wait_state(dev_state want, int ms)
{
	int64_t end = mono_ns() + (int64_t)ms * 1000000;
	dev_sample chunk[64];
	while (mono_ns() < end) {
		if (poll_once(chunk, 64, 20) < 0)
			return false;
		if (dev_get_state(src) == want)
			return true;
	}
	return dev_get_state(src) == want;
}

static bool commands_are_init(const char *when)
{
	char got[64][32];
	int n = pol_fake_commands(fake, got, 64);
	bool same = n == EXPECTED_INIT;
	for (int i = 0; same && i < n; i++)
		same = strcmp(got[i], expected_init[i]) == 0;
	if (!same) {
		fprintf(stderr, "%s: the device received %d commands:", when, n);
		for (int i = 0; i < n && i < 64; i++) {
			fputs(" \"", stderr);
			for (const char *c = got[i]; *c; c++)
				fprintf(stderr, *c == '\r' ? "\\r" : "%c", *c);
			fputc('"', stderr);
		}
		fputc('\n', stderr);
	}
	return same;
}

/* ---- before the PATRIOT is plugged in ------------------------------------------------ */

static void not_found(void)
{
	char error[512] = "";
	dev_source *s = dev_open("polhemus", error, sizeof error);
	CHECK(s == NULL);
	if (s)
		dev_close(&s);
	CHECK_MSG(strstr(error, "no Polhemus tracker found") != NULL, "message: %s", error);
}

static void firmware_loader_hint(void)
{
	/* A PATRIOT whose firmware was never loaded shows the EZ-USB loader's id. */
	REQUIRE(pol_fake_plug(fake, 5, 0xef11));
	char error[DEV_ERROR_MAX] = "";
	dev_source *s = dev_open("polhemus", error, sizeof error);
	CHECK(s == NULL);
	if (s)
		dev_close(&s);
	/* the whole text, to its last word */
	static const char whole[] =
		"polhemus: found a Polhemus PATRIOT at 1-5 still showing its firmware-loader id 0f44:ef11: its "
		"firmware (PatriotUSB.hex (fxload -t fx)) was not loaded; install the 90-Polhemus_trkr.rules udev "
		"rule and fxload, then replug the tracker (docs/devices.md, \"Polhemus over USB\")";
	CHECK_MSG(strcmp(error, whole) == 0, "message (%zu characters): %s", strlen(error), error);
	pol_fake_unplug(fake);
}

static void wrong_address(void)
{
	REQUIRE(pol_fake_plug(fake, 2, 0xef12));
	char error[512] = "";
	dev_source *s = dev_open("polhemus:1-9", error, sizeof error);
	CHECK(s == NULL);
	if (s)
		dev_close(&s);
	CHECK_MSG(strstr(error, "no Polhemus tracker at USB 1-9") != NULL, "message: %s", error);
	s = dev_open("polhemus:one-two", error, sizeof error);
	CHECK(s == NULL);
	if (s)
		dev_close(&s);
	CHECK_MSG(strstr(error, "bad USB address") != NULL, "message: %s", error);
	char got[4][32];
	CHECK(pol_fake_commands(fake, got, 4) == 0); /* nobody talked to the PATRIOT */
}

/* ---- the PATRIOT at 1-2 ------------------------------------------------------------- */

static void init_sequence(void)
{
	baseline_threads = count_entries("/proc/self/task");
	baseline_fds = count_entries("/proc/self/fd");
	baseline_handlers = pol_fake_handler_count(fake);
	if (getenv("TELA_TEST_DUMP_FDS"))
		dump_fds();
	char error[512] = "";
	to_host0 = pol_fake_bytes_to_host(fake);
	from_host0 = pol_fake_bytes_from_host(fake);
	src = dev_open("polhemus:1-2", error, sizeof error);
	REQUIRE_MSG(src != NULL, "dev_open: %s", error);
	CHECK(commands_are_init("after open"));
	/* The driver sends what the parser expects: the same list. */
	CHECK(pol_init_command_count == EXPECTED_INIT);
	for (int i = 0; i < pol_init_command_count && i < EXPECTED_INIT; i++)
		CHECK_MSG(strcmp(pol_init_commands[i], expected_init[i]) == 0, "command %d", i);
	CHECK(pol_fake_streaming(fake));
	/* Everything from the open to the close is recorded (started before the first poll,
	 * the recording gets the start-up too); close_clean replays it. */
	snprintf(rec_path, sizeof rec_path, "%s/tela_test_polhemus_usb_%ld.rec", test_tmpdir(), (long)getpid());
	CHECK_MSG(dev_record(src, rec_path, error, sizeof error), "dev_record: %s", error);
	delivered = 0;
	CHECK_MSG(strstr(dev_describe(src), "PATRIOT") != NULL, "describe: %s", dev_describe(src));
}

static void streaming_60hz(void)
{
	REQUIRE(src);
	REQUIRE_MSG(wait_state(DEV_STREAMING, 2000), "state %d: %s", (int)dev_get_state(src),
		    dev_describe(src));
	static dev_sample got[256];
	uint32_t frames0 = pol_fake_frames(fake);
	int64_t t0 = mono_ns();
	longest_poll_ns = 0;
	int n = gather(500, got, 256);
	int64_t t1 = mono_ns();
	uint32_t sent = pol_fake_frames(fake) - frames0;
	printf("  %d samples in %.3f s (the model sent %u)\n", n, (double)(t1 - t0) * 1e-9, sent);
	/* 60 Hz for 0.5 s is 30; the band allows a loaded machine. */
	CHECK_MSG(n >= 15 && n <= 45, "%d samples in 0.5 s", n);
	/* Nothing lost between the device and dev_poll (a record or two may straddle the
	 * window's edges). */
	CHECK_MSG(abs(n - (int)sent) <= 3, "%d samples for %u records sent", n, sent);
	CHECK_MSG(longest_poll_ns <= POLL_SLACK_NS, "dev_poll overran by %lld ns", (long long)longest_poll_ns);
	for (int i = 0; i < n && i < 256; i++) {
		float want[3];
		pol_fake_position(got[i].frame, want);
		CHECK(got[i].sensor == 1);
		/* To a micrometre: the wire carries centimetre floats, and some metre values
		 * have no float in centimetres that converts back to them exactly. */
		for (int k = 0; k < 3; k++)
			CHECK_NEAR(got[i].position[k], want[k], 1e-6);
		CHECK(got[i].orientation[0] == 0.0f && got[i].orientation[3] == 1.0f);
		CHECK(got[i].buttons == 0);
		CHECK(got[i].t_ns >= t0 - 100000000 && got[i].t_ns <= t1);
		if (i > 0) {
			CHECK_MSG(got[i].frame == got[i - 1].frame + 1, "frame %u after %u", got[i].frame,
				  got[i - 1].frame);
			CHECK(got[i].t_ns >= got[i - 1].t_ns);
		}
	}
	dev_health h = dev_get_health(src);
	CHECK(h.samples >= (uint64_t)n);
	CHECK(h.dropped_frames == 0);
	CHECK(h.error_records == 0);
	CHECK(h.reconnects == 0);
	CHECK(dev_get_state(src) == DEV_STREAMING);
}

static void stylus_button(void)
{
	REQUIRE(src);
	static dev_sample got[256];
	pol_fake_set_stylus(fake, true);
	int n = gather(400, got, 256);
	int first = -1;
	for (int i = 0; i < n && i < 256; i++)
		if (got[i].buttons & 1u) {
			first = i;
			break;
		}
	CHECK_MSG(first >= 0, "no pressed sample among %d", n);
	for (int i = first + 1; first >= 0 && i < n && i < 256; i++)
		CHECK(got[i].buttons == 1u);
	pol_fake_set_stylus(fake, false);
	n = gather(300, got, 256);
	CHECK(n > 0 && n <= 256 && got[n - 1].buttons == 0);
}

static void garbage_and_error_records(void)
{
	REQUIRE(src);
	dev_health h0 = dev_get_health(src);
	/* None of these bytes can start a record ('P' or 'L'), so exactly 7 are skipped. */
	static const uint8_t garbage[7] = {0x00, 0x13, 'x', 'y', 'z', 0xff, 0x0d};
	pol_fake_inject(fake, garbage, sizeof garbage);
	/* 49: "out of map" (reference section 12), with a pose that must not come out. */
	pol_fake_inject_error_record(fake, 49, 0.777f);
	static dev_sample got[256];
	int n = gather(400, got, 256);
	dev_health h1 = dev_get_health(src);
	CHECK_MSG(n >= 10, "%d samples", n);
	for (int i = 0; i < n && i < 256; i++)
		CHECK(got[i].position[0] != 0.777f);
	CHECK_MSG(h1.skipped_bytes - h0.skipped_bytes == sizeof garbage, "skipped %llu",
		  (unsigned long long)(h1.skipped_bytes - h0.skipped_bytes));
	CHECK_MSG(h1.resyncs - h0.resyncs == 1, "resyncs %llu", (unsigned long long)(h1.resyncs - h0.resyncs));
	CHECK_MSG(h1.error_records - h0.error_records == 1, "error records %llu",
		  (unsigned long long)(h1.error_records - h0.error_records));
	/* The error record had a frame number of its own: nothing counts as dropped. */
	CHECK(h1.dropped_frames == 0);
	CHECK(dev_get_state(src) == DEV_STREAMING);
}

static void read_timeout(void)
{
	REQUIRE(src);
	longest_poll_ns = 0;
	pol_fake_set_mute(fake, true);
	CHECK_MSG(wait_state(DEV_WAITING, 2000), "state %d: %s", (int)dev_get_state(src), dev_describe(src));
	CHECK_MSG(strstr(dev_describe(src), "read timeout") != NULL, "describe: %s", dev_describe(src));
	pol_fake_set_mute(fake, false);
	CHECK_MSG(wait_state(DEV_STREAMING, 2000), "state %d: %s", (int)dev_get_state(src), dev_describe(src));
	CHECK_MSG(longest_poll_ns <= POLL_SLACK_NS, "dev_poll overran by %lld ns", (long long)longest_poll_ns);
}

static void unplug(void)
{
	REQUIRE(src);
	longest_poll_ns = 0;
	pol_fake_unplug(fake);
	CHECK_MSG(wait_state(DEV_DISCONNECTED, 2000), "state %d: %s", (int)dev_get_state(src),
		  dev_describe(src));
	CHECK_MSG(strstr(dev_describe(src), "unplugged; waiting for it to return") != NULL, "describe: %s",
		  dev_describe(src));
	/* Still a source (it keeps looking), never blocking, no samples. */
	static dev_sample got[64];
	int n = gather(500, got, 64);
	CHECK(n == 0);
	CHECK(dev_get_state(src) == DEV_DISCONNECTED);
	CHECK_MSG(longest_poll_ns <= POLL_SLACK_NS, "dev_poll overran by %lld ns", (long long)longest_poll_ns);
}

static void replug(void)
{
	REQUIRE(src);
	/* Back in the same port, with the new address a re-enumerated device gets. */
	REQUIRE(pol_fake_plug(fake, 3, 0xef12));
	CHECK_MSG(wait_state(DEV_STREAMING, 4000), "state %d: %s", (int)dev_get_state(src), dev_describe(src));
	CHECK(commands_are_init("after the replug"));
	static dev_sample got[64];
	int n = gather(300, got, 64);
	CHECK_MSG(n >= 8, "%d samples after the replug", n);
	dev_health h = dev_get_health(src);
	CHECK_MSG(h.reconnects == 1, "reconnects %llu", (unsigned long long)h.reconnects);
	CHECK(h.dropped_frames == 0);
}

static void close_clean(void)
{
	REQUIRE(src);
	dev_close(&src);
	CHECK(src == NULL);
	char got[64][32];
	int n = pol_fake_commands(fake, got, 64);
	CHECK_MSG(n > 0 && strcmp(got[n < 64 ? n - 1 : 63], "P") == 0, "the last command was not P");
	CHECK(!pol_fake_streaming(fake));
	/* The reader thread and libusb's own are joined and every descriptor is closed. */
	CHECK_MSG(count_entries("/proc/self/task") == baseline_threads, "threads %d, before %d",
		  count_entries("/proc/self/task"), baseline_threads);
	/* Every byte each way since the open is in the recording: the start-up's commands
	 * and replies, the stream, the re-initialisation after the replug, the transfers
	 * that arrived after the last poll and the P that stopped the tracker. */
	rec_totals rt = read_recording(rec_path);
	CHECK_MSG(rt.ok, "%s is not a whole version 2 recording", rec_path);
	uint64_t to_host = pol_fake_bytes_to_host(fake) - to_host0, from_host = pol_fake_bytes_from_host(fake) - from_host0;
	printf("  recorded %llu bytes in (%d chunks), %llu of replies, %llu out; the devices sent %llu and got %llu\n",
	       (unsigned long long)rt.in, rt.in_chunks, (unsigned long long)rt.in_reply, (unsigned long long)rt.out,
	       (unsigned long long)to_host, (unsigned long long)from_host);
	CHECK_MSG(rt.in + rt.in_reply == to_host, "recorded %llu bytes from the tracker, it sent %llu",
		  (unsigned long long)(rt.in + rt.in_reply), (unsigned long long)to_host);
	CHECK_MSG(rt.out == from_host, "recorded %llu bytes to the tracker, it got %llu", (unsigned long long)rt.out,
		  (unsigned long long)from_host);
	/* the commands in order: the initialisation, again after the replug, and P */
	char want_out[256] = "";
	for (int pass = 0; pass < 2; pass++)
		for (int i = 0; i < EXPECTED_INIT; i++)
			strcat(want_out, expected_init[i]);
	strcat(want_out, "P");
	CHECK_MSG(rt.out_len == strlen(want_out) && memcmp(rt.out_bytes, want_out, rt.out_len) == 0,
		  "the recorded commands differ from what was sent (%zu bytes, expected %zu)", rt.out_len,
		  strlen(want_out));
	/* both probes' replies (and the text-mode P replies) are there, as replies */
	CHECK(rt.in_reply >= 2 * strlen("\r\n00I Invalid Command\r\n"));

	/* Replayed through the same parser, it gives back every sample that was delivered
	 * live, bit for bit and at the same spacing (garbage and error record included in
	 * the file, skipped again), and then those that arrived after the last poll. */
	char error[512] = "", spec[300];
	snprintf(spec, sizeof spec, "replay:%s@0", rec_path);
	dev_source *rep = dev_open(spec, error, sizeof error);
	CHECK_MSG(rep != NULL, "%s", error);
	uint64_t replayed = 0, same = 0;
	dev_sample chunk[64];
	int64_t t_live0 = live[0].t_ns, t_rep0 = 0;
	for (int guard = 0; rep && guard < 100000; guard++) {
		int got_n = dev_poll(rep, chunk, 64, 10);
		if (got_n < 0)
			break;
		for (int i = 0; i < got_n; i++, replayed++) {
			if (replayed == 0)
				t_rep0 = chunk[i].t_ns;
			if (replayed >= delivered || replayed >= LIVE_CAP)
				continue;
			const dev_sample *a = &live[replayed], *b = &chunk[i];
			if (a->sensor == b->sensor && a->frame == b->frame && a->buttons == b->buttons &&
			    memcmp(a->position, b->position, sizeof a->position) == 0 &&
			    memcmp(a->orientation, b->orientation, sizeof a->orientation) == 0 &&
			    a->t_ns - t_live0 == b->t_ns - t_rep0)
				same++;
		}
	}
	CHECK_MSG(delivered > 0 && delivered <= LIVE_CAP, "%llu delivered", (unsigned long long)delivered);
	CHECK_MSG(same == delivered, "%llu of the %llu live samples replayed identically", (unsigned long long)same,
		  (unsigned long long)delivered);
	CHECK_MSG(replayed >= delivered, "replayed %llu, delivered live %llu", (unsigned long long)replayed,
		  (unsigned long long)delivered);
	printf("  replayed %llu samples, %llu delivered live before the close\n", (unsigned long long)replayed,
	       (unsigned long long)delivered);
	if (rep) {
		dev_health rh = dev_get_health(rep);
		CHECK(rh.error_records == 1);
		dev_close(&rep);
	}
	unlink(rec_path);

	/* umockdev's worker (in this process) closes its end of a handler connection
	 * when it notices the client went: give it a moment. */
	int want = baseline_fds + pol_fake_handler_count(fake) - baseline_handlers;
	int fds = count_entries("/proc/self/fd");
	for (int i = 0; i < 100 && fds != want; i++) {
		struct timespec ms10 = {0, 10000000};
		nanosleep(&ms10, NULL);
		fds = count_entries("/proc/self/fd");
	}
	CHECK_MSG(fds == want, "fds %d, expected %d", fds, want);
	if (fds != want)
		dump_fds();
}

/* ---- the stylus end to end ---------------------------------------------------------- */

/* The synthetic "grab" script as the PATRIOT's hand: it comes down onto the press point
 * in 1 s, presses, lifts 10 cm in 1 s, holds 0.5 s and lets go at 2.5 s; then, with the
 * button up, it rises AFTER_LIFT more, which a corner that was really let go must not
 * follow.  tests/data/tracking/stylus-corner.cal puts the press point 5 mm above vertex
 * 80, the free corner of tests/data/scenes/stylus-corner.ini. */
#define SCRIPT_HZ 60
#define PRESS_S 1.0
#define RELEASE_S 2.5
#define AFTER_S 0.6
#define AFTER_LIFT 0.05
#define CORNER 80
enum { SCRIPT_COUNT = (int)((RELEASE_S + AFTER_S) * SCRIPT_HZ) + 1 };

static void build_script(dev_sample *poses)
{
	for (int i = 0; i < SCRIPT_COUNT; i++) {
		double t = (double)i / SCRIPT_HZ;
		dev_synthetic_pose("grab", t, &poses[i]);
		if (t > RELEASE_S) {
			/* eased like the script's own moves, so that no step is a jump */
			double u = (t - RELEASE_S) / AFTER_S;
			u = u >= 1.0 ? 1.0 : u * u * (3.0 - 2.0 * u);
			poses[i].position[2] -= (float)(AFTER_LIFT * u); /* up is device -z */
		}
	}
}

/* The stylus's decisions applied to the world as `tela run --device` applies them
 * (app/cmd_run.c), with what the checks need noted on the way. */
typedef struct e2e_run {
	sty_feed *feed;
	sim_world *w;
	double t_now;
	int attachment, vertex;
	int grabs, releases, detach_failures;
	uint64_t samples, pressed_before_grab;
	bool grab_on_first_press;
	double t_press_sample, t_grab, t_release;
	double max_lag_s, min_lag_s;
	float grabbed_at[3], released_at[3], press_pointer[3];
	bool failed;
} e2e_run;

static void e2e_on_sample(void *context, const dev_sample *sample, const trk_pointer *pointer,
			  const sty_output *out)
{
	e2e_run *r = context;
	r->samples++;
	double lag = r->t_now - sty_feed_sample_time(r->feed, sample);
	if (lag > r->max_lag_s)
		r->max_lag_s = lag;
	if (lag < r->min_lag_s)
		r->min_lag_s = lag;
	bool pressed = (sample->buttons & 1u) != 0;
	if (pressed && r->grabs == 0) {
		if (r->pressed_before_grab == 0) {
			r->t_press_sample = sty_feed_sample_time(r->feed, sample);
			memcpy(r->press_pointer, pointer->position, sizeof r->press_pointer);
			r->grab_on_first_press = out->grab;
		}
		r->pressed_before_grab++;
	}
	if (!pressed && out->grab)
		r->failed = true; /* a grab that no press asked for */
	if (out->release && r->attachment >= 0) {
		memcpy(r->released_at, sim_world_positions(r->w)[r->vertex], sizeof r->released_at);
		if (sim_world_detach(r->w, r->attachment) != SIM_OK)
			r->detach_failures++;
		r->attachment = -1;
		r->releases++;
		r->t_release = r->t_now;
	}
	if (out->grab && r->attachment < 0) {
		sim_attachment_def a = sim_attachment_def_default(out->grabbed);
		int id = sim_world_attach(r->w, &a);
		if (id < 0) {
			r->failed = true;
			return;
		}
		r->attachment = id;
		r->vertex = out->grabbed;
		memcpy(r->grabbed_at, sim_world_positions(r->w)[out->grabbed], sizeof r->grabbed_at);
		r->grabs++;
		r->t_grab = r->t_now;
	}
	if (r->attachment >= 0)
		sim_world_attachment_set_target(r->w, r->attachment, out->target, out->target_velocity);
}

static void stylus_lifts_corner(void)
{
	REQUIRE(!src);
	scn_scene *scene = NULL;
	sim_world *w = NULL;
	scn_error err = {0};
	REQUIRE_MSG(scn_load(TELA_TEST_DATA "/scenes/stylus-corner.ini", &scene, &err) == SCN_OK, "%s", err.message);
	float dt = scn_scene_info(scene)->dt;
	if (scn_build(scene, &w, &err) != SCN_OK) {
		scn_scene_free(&scene);
		REQUIRE_MSG(false, "%s", err.message);
	}
	scn_scene_free(&scene);
	int objects = sim_world_object_count(w), obstacles = sim_world_obstacle_count(w);
	sty_mesh *meshes = calloc((size_t)objects + 1, sizeof *meshes);
	sty_obstacle *shapes = calloc((size_t)obstacles + 1, sizeof *shapes);
	REQUIRE(meshes && shapes);
	/* the scene's obstacles do not move: their definitions' poses are current */
	for (int o = 0; o < obstacles; o++)
		sty_obstacle_from_def(sim_world_obstacle(w, o), NULL, &shapes[o]);

	/* Played from the first streamed record, so the pointer never jumps from the
	 * model's circle into the script. */
	static dev_sample poses[SCRIPT_COUNT];
	build_script(poses);
	pol_fake_play(fake, poses, SCRIPT_COUNT);

	sty_feed feed;
	sty_feed_options fo = {.spec = "polhemus",
			       .calibration = TELA_TEST_DATA "/tracking/stylus-corner.cal",
			       .stylus = sty_config_default()};
	char error[512] = "";
	bool opened = sty_feed_open(&feed, &fo, error, sizeof error);
	CHECK_MSG(opened, "sty_feed_open: %s", error);
	/* a device whose clock is the host's: the run must wait for real time */
	CHECK(opened && !feed.lock_to_source);
	e2e_run r = {.feed = &feed, .w = w, .attachment = -1, .vertex = -1, .min_lag_s = 1e9};
	float corner0[3];
	memcpy(corner0, sim_world_positions(w)[CORNER], sizeof corner0);
	int64_t wall0 = mono_ns();
	double t_played = -1.0;
	for (long step = 0; opened && !r.failed; step++) {
		r.t_now = (double)step * (double)dt;
		/* every sample due at or before the time this step starts from */
		const float(*x)[4] = (const float(*)[4])sim_world_positions(w);
		int nm = 0;
		for (int o = 0; o < objects; o++) {
			int tris = sim_world_object_triangle_count(w, o);
			if (tris > 0)
				meshes[nm++] = (sty_mesh){.positions = x + sim_world_object_first_vertex(w, o),
							  .triangles = sim_world_object_triangles(w, o),
							  .triangle_count = tris};
		}
		sty_scene sc = {.positions = x, .vertex_count = sim_world_vertex_count(w), .meshes = meshes,
				.mesh_count = nm, .obstacles = shapes, .obstacle_count = obstacles};
		sty_feed_advance(&feed, r.t_now, &sc, e2e_on_sample, &r);
		sim_result res = sim_world_step(w, dt);
		if (res != SIM_OK) {
			CHECK_MSG(false, "step %ld: %s", step, sim_result_string(res));
			break;
		}
		/* The script is over once the PATRIOT has sent its last pose and that has
		 * had a little while to arrive and be applied. */
		if (t_played < 0.0 && pol_fake_played(fake) == SCRIPT_COUNT)
			t_played = r.t_now;
		if (t_played >= 0.0 && r.t_now >= t_played + 0.15)
			break;
		/* a wedged device or a far too slow machine: fail, do not hang */
		if (r.t_now > 2.0 * (RELEASE_S + AFTER_S) + 1.0) {
			CHECK_MSG(false, "the script did not finish: %d of %d poses streamed by %.2f s",
				  pol_fake_played(fake), SCRIPT_COUNT, r.t_now);
			break;
		}
	}
	double wall_s = (double)(mono_ns() - wall0) * 1e-9;
	const float *corner = sim_world_positions(w)[CORNER];
	printf("  %llu samples in %.3f s simulated, %.3f s wall; press sample at %.3f s, grab at %.3f s, "
	       "release at %.3f s; sample lag %.4f..%.4f s\n",
	       (unsigned long long)r.samples, r.t_now, wall_s, r.t_press_sample, r.t_grab, r.t_release, r.min_lag_s,
	       r.max_lag_s);
	printf("  corner %d grabbed at (%.4f, %.4f, %.4f), released at (%.4f, %.4f, %.4f), now (%.4f, %.4f, %.4f)\n",
	       r.vertex, (double)r.grabbed_at[0], (double)r.grabbed_at[1], (double)r.grabbed_at[2],
	       (double)r.released_at[0], (double)r.released_at[1], (double)r.released_at[2], (double)corner[0],
	       (double)corner[1], (double)corner[2]);

	CHECK_MSG(!r.failed, "a grab without a press, or sim_world_attach refused it");
	/* Lock step with a real source: the run kept the host's pace (it waited for each
	 * sample rather than running ahead), and no sample was used before its time. */
	CHECK_MSG(wall_s >= r.t_now - 0.05, "%.3f s simulated in %.3f s wall: the run did not wait", r.t_now, wall_s);
	CHECK_MSG(r.min_lag_s >= 0.0, "a sample was used %.4f s before its time", -r.min_lag_s);
	CHECK_MSG(r.samples + 3 >= (uint64_t)SCRIPT_COUNT, "%llu samples for %d poses", (unsigned long long)r.samples,
		  SCRIPT_COUNT);
	/* The press grabs the corner, on the first sample that has the button down, and
	 * only once. */
	CHECK_MSG(r.grabs == 1 && r.vertex == CORNER, "%d grabs, vertex %d", r.grabs, r.vertex);
	CHECK_MSG(r.grab_on_first_press, "the grab came %llu pressed samples late",
		  (unsigned long long)r.pressed_before_grab);
	CHECK_MSG(r.t_grab >= r.t_press_sample, "grabbed at %.4f s, before the press sample's %.4f s", r.t_grab,
		  r.t_press_sample);
	/* The press point is 5 mm above the corner (the calibration's translation). */
	CHECK_NEAR(r.press_pointer[0], corner0[0], 0.005);
	CHECK_NEAR(r.press_pointer[1], corner0[1] + 0.005, 0.005);
	CHECK_NEAR(r.press_pointer[2], corner0[2], 0.005);
	for (int k = 0; k < 3; k++)
		CHECK_NEAR(r.grabbed_at[k], corner0[k], 0.002);
	/* Held from the press to the release, the corner rose with the hand's 10 cm (gain
	 * 1); the band allows for samples that arrived late on a loaded machine. */
	CHECK_MSG(r.releases == 1 && r.detach_failures == 0, "%d releases, %d detach failures", r.releases,
		  r.detach_failures);
	CHECK_MSG(r.t_release - r.t_grab >= (RELEASE_S - PRESS_S) - 0.1, "held %.3f s", r.t_release - r.t_grab);
	CHECK_NEAR(r.released_at[1] - r.grabbed_at[1], 0.10, 0.015);
	CHECK_NEAR(r.released_at[0], r.grabbed_at[0], 0.015);
	CHECK_NEAR(r.released_at[2], r.grabbed_at[2], 0.015);
	/* Let go: the hand rose AFTER_LIFT more and the corner did not go with it (it
	 * settles back a little as the bent cloth relaxes, so only rising counts). */
	CHECK_MSG(feed.output.grabbed < 0, "the stylus still holds %d", feed.output.grabbed);
	CHECK_MSG(corner[1] - r.released_at[1] < 0.2f * (float)AFTER_LIFT, "the corner rose %.4f m after the release",
		  (double)(corner[1] - r.released_at[1]));
	CHECK_NEAR(feed.pointer.position[1] - r.released_at[1], 0.005 + AFTER_LIFT, 0.01);
	CHECK(!feed.pointer.frozen);

	if (opened)
		sty_feed_close(&feed);
	pol_fake_play(fake, NULL, 0);
	char got[64][32];
	int n = pol_fake_commands(fake, got, 64);
	CHECK_MSG(n > 0 && strcmp(got[n < 64 ? n - 1 : 63], "P") == 0, "the last command was not P");
	CHECK(!pol_fake_streaming(fake));
	free(meshes);
	free(shapes);
	sim_world_destroy(&w);
}

/* ---- what `tela run --device polhemus` says on stderr -------------------------------------- */

/* Advances the lock-step feed by 5 ms steps (a live source: at the host's pace) until
 * `until` s or until `done` says so; returns the time reached. */
static double feed_until(sty_feed *feed, double t, double until, bool (*done)(const sty_feed *))
{
	while (t < until && !(done && done(feed))) {
		t += 0.005;
		sty_feed_advance(feed, t, NULL, NULL, NULL);
	}
	return t;
}

static bool feed_down(const sty_feed *feed)
{
	return dev_get_state(feed->source) == DEV_DISCONNECTED;
}

static bool feed_streaming(const sty_feed *feed)
{
	return dev_get_state(feed->source) == DEV_STREAMING && feed->pointer.valid && !feed->pointer.frozen;
}

/* The line of `text` that contains `what` from `from` on, or NULL. */
static const char *line_with(const char *text, const char *from, const char *what)
{
	const char *at = strstr(from ? from : text, what);
	if (!at)
		return NULL;
	while (at > text && at[-1] != '\n')
		at--;
	return at;
}

/* The time an event line says, "(at t = T s)" or "(at t = T s; N times)"; -1 if none. */
static double line_time(const char *line)
{
	const char *at = line ? strstr(line, "(at t = ") : NULL;
	const char *end = line ? strchr(line, '\n') : NULL;
	if (!at || (end && at > end))
		return -1.0;
	return strtod(at + 8, NULL);
}

/* The lock-step feed turns the tracker's troubles into events, printed as a headless run
 * prints them: error records and resyncs with their counts, at most once a second, and
 * the unplug and the return in order with their times; the pointer frozen meanwhile says
 * why. */
static void feed_reports_troubles(void)
{
	REQUIRE(!src);
	ev_clear();
	sty_feed feed;
	sty_feed_options fo = {.spec = "polhemus", .stylus = sty_config_default()};
	char error[512] = "";
	REQUIRE_MSG(sty_feed_open(&feed, &fo, error, sizeof error), "sty_feed_open: %s", error);
	double t = feed_until(&feed, 0.0, 3.0, feed_streaming);
	CHECK_MSG(feed_streaming(&feed), "not streaming after %.3f s: %s", t, dev_describe(feed.source));

	static const uint8_t garbage[7] = {0x00, 0x13, 'x', 'y', 'z', 0xff, 0x0d};
	pol_fake_inject(fake, garbage, sizeof garbage);
	pol_fake_inject_error_record(fake, 49, 0.777f);
	t = feed_until(&feed, t, t + 0.2, NULL);
	/* a second error record within the second: held back, then said with its count */
	pol_fake_inject_error_record(fake, 49, 0.777f);
	t = feed_until(&feed, t, t + 1.2, NULL);

	pol_fake_unplug(fake);
	t = feed_until(&feed, t, t + 2.0, feed_down);
	CHECK_MSG(feed_down(&feed), "not disconnected: %s", dev_describe(feed.source));
	t = feed_until(&feed, t, t + 0.1, NULL);
	CHECK(feed.pointer.frozen);
	CHECK_MSG(strstr(feed.pointer.reason, "unplugged") != NULL, "frozen pointer: %s", feed.pointer.reason);
	REQUIRE(pol_fake_plug(fake, 4, 0xef12));
	t = feed_until(&feed, t, t + 4.0, feed_streaming);
	CHECK_MSG(feed_streaming(&feed), "not back: %s", dev_describe(feed.source));
	sty_feed_flush_events(&feed, t);
	sty_feed_close(&feed);

	char *text = NULL;
	size_t size = 0;
	FILE *stream = open_memstream(&text, &size);
	REQUIRE(stream);
	ev_printer printer;
	ev_printer_init(&printer, stream, "tela run");
	ev_printer_drain(&printer);
	ev_printer_flush(&printer);
	fclose(stream);
	printf("%s", text);
	const char *err1 = line_with(text, NULL, "tela run: tracker: 1 error record (1 so far) (at t = ");
	const char *resync = line_with(text, NULL, "tela run: tracker: 1 resync, 7 bytes skipped (1 so far) (at t = ");
	const char *err2 = line_with(text, err1 ? err1 + 1 : NULL, "tela run: tracker: 1 error record (2 so far) (at t = ");
	const char *lost = line_with(text, NULL, "tela run: device lost: ");
	const char *back = line_with(text, NULL, "tela run: device back: ");
	CHECK_MSG(err1 && resync && err2, "error records and resyncs not said with their counts");
	const char *unplugged = lost ? strstr(lost, "unplugged") : NULL;
	CHECK_MSG(unplugged && unplugged < strchr(lost, '\n'), "no unplug event");
	CHECK_MSG(back, "no return event");
	CHECK_MSG(err1 && err2 && line_time(err2) - line_time(err1) >= 1.0 - 1e-9,
		  "error records said %.3f s apart, under a second", line_time(err2) - line_time(err1));
	CHECK_MSG(lost && back && lost < back && line_time(lost) >= 0.0 && line_time(back) > line_time(lost),
		  "lost at %.3f s, back at %.3f s", line_time(lost), line_time(back));
	CHECK(strstr(text, "dropped frame") == NULL);
	free(text);
}

/* ---- a press while unplugged --------------------------------------------------------- */

/* What the decision chain did with the samples (live and replayed alike). */
typedef struct gap_run {
	int phase; /* 0 streaming, 1 unplugged, 2 replugged */
	uint64_t samples;
	int64_t last_t, gap_ns;
	/* the first sample after the replug */
	bool seen_back;
	uint64_t back_index;
	uint32_t back_buttons;
	bool back_edge, back_clutched, back_grab;
	int back_grabbed;
	int grabs;
} gap_run;

static void gap_on_sample(void *context, const dev_sample *sample, const trk_pointer *pointer, const sty_output *out)
{
	gap_run *r = context;
	int64_t gap = r->samples > 0 ? sample->t_ns - r->last_t : 0;
	/* the stylus is pressed only while the tracker is unplugged: the first pressed
	 * sample is the first one back */
	if (!r->seen_back && (sample->buttons & 1u)) {
		r->seen_back = true;
		r->gap_ns = gap;
		r->back_index = r->samples;
		r->back_buttons = sample->buttons;
		r->back_edge = pointer->pressed_edge;
		r->back_clutched = pointer->clutched;
		r->back_grab = out->grab;
		r->back_grabbed = out->grabbed;
	}
	r->grabs += out->grab;
	r->last_t = sample->t_ns;
	r->samples++;
}

/* The hand hovers 20 cm above the cloth's corner; the tracker is unplugged; the hand
 * comes down onto the corner and presses; the tracker is plugged back in.  The first
 * sample after the replug has the button down: it must grab the corner (not engage the
 * clutch).  The session is recorded, and its replay makes the same decisions. */
static void press_across_unplug(void)
{
	REQUIRE(!src);
	scn_scene *scene = NULL;
	sim_world *w = NULL;
	scn_error err = {0};
	REQUIRE_MSG(scn_load(TELA_TEST_DATA "/scenes/stylus-corner.ini", &scene, &err) == SCN_OK, "%s", err.message);
	if (scn_build(scene, &w, &err) != SCN_OK) {
		scn_scene_free(&scene);
		REQUIRE_MSG(false, "%s", err.message);
	}
	scn_scene_free(&scene);
	/* the cloth stays where it is: only the decisions are under test */
	sty_scene sc = {.positions = (const float(*)[4])sim_world_positions(w), .vertex_count = sim_world_vertex_count(w)};

	dev_sample above, onto;
	REQUIRE(dev_synthetic_pose("grab", 0.0, &above) && dev_synthetic_pose("grab", 1.0, &onto));
	above.buttons = onto.buttons = 0; /* the stylus switch is the model's */
	pol_fake_set_stylus(fake, false);
	pol_fake_play(fake, &above, 1);

	char path[300], error[512] = "";
	snprintf(path, sizeof path, "%s/tela_test_polhemus_gap_%ld.rec", test_tmpdir(), (long)getpid());
	sty_feed feed;
	sty_feed_options fo = {.spec = "polhemus",
			       .calibration = TELA_TEST_DATA "/tracking/stylus-corner.cal",
			       .record = path,
			       .stylus = sty_config_default()};
	bool opened = sty_feed_open(&feed, &fo, error, sizeof error);
	CHECK_MSG(opened, "sty_feed_open: %s", error);
	gap_run live_run = {0};
	bool froze = false;
	double t_unplug = 0.0;
	for (long step = 0; opened; step++) {
		double t = (double)step * 0.005;
		sty_feed_advance(&feed, t, &sc, gap_on_sample, &live_run);
		if (live_run.phase == 0 && live_run.samples >= 20) {
			CHECK(feed.output.hover < 0 && !feed.pointer.clutched);
			pol_fake_unplug(fake);
			live_run.phase = 1;
			t_unplug = t;
		} else if (live_run.phase == 1 && t > t_unplug + 0.6) {
			froze = feed.pointer.frozen;
			pol_fake_set_stylus(fake, true);
			pol_fake_play(fake, &onto, 1);
			REQUIRE(pol_fake_plug(fake, 6, 0xef12));
			live_run.phase = 2;
		} else if (live_run.phase == 2 && live_run.seen_back && live_run.samples >= live_run.back_index + 10) {
			break;
		}
		if (t > 8.0) {
			CHECK_MSG(false, "no sample came back after the replug (phase %d, %llu samples)", live_run.phase,
				  (unsigned long long)live_run.samples);
			break;
		}
	}
	if (opened)
		sty_feed_close(&feed);
	pol_fake_set_stylus(fake, false);
	pol_fake_play(fake, NULL, 0);
	printf("  live: %llu samples; back after %.3f s at sample %llu: buttons %u, edge %d, clutched %d, grab %d "
	       "(vertex %d)\n",
	       (unsigned long long)live_run.samples, (double)live_run.gap_ns * 1e-9,
	       (unsigned long long)live_run.back_index, live_run.back_buttons, live_run.back_edge,
	       live_run.back_clutched, live_run.back_grab, live_run.back_grabbed);
	CHECK_MSG(froze, "the pointer was not frozen while the tracker was unplugged");
	CHECK(live_run.seen_back && live_run.back_buttons == 1u && live_run.back_edge);
	/* longer than the tracker's timeout: the pointer had frozen */
	CHECK_MSG(live_run.gap_ns > trk_tracker_config_default().timeout_ns, "the gap was %lld ns",
		  (long long)live_run.gap_ns);
	CHECK_MSG(!live_run.back_clutched, "the press that came back with the tracker engaged the clutch");
	CHECK_MSG(live_run.back_grab && live_run.back_grabbed == CORNER, "the press grabbed %d, not the corner",
		  live_run.back_grabbed);
	CHECK(live_run.grabs == 1);

	/* the recording holds the re-initialisation, and replays to the same decisions */
	rec_totals rt = read_recording(path);
	char want_out[256] = "";
	for (int pass = 0; pass < 2; pass++)
		for (int i = 0; i < EXPECTED_INIT; i++)
			strcat(want_out, expected_init[i]);
	strcat(want_out, "P");
	CHECK_MSG(rt.ok && rt.out_len == strlen(want_out) && memcmp(rt.out_bytes, want_out, rt.out_len) == 0,
		  "the recording's commands (%zu bytes) are not the two initialisations and P", rt.out_len);
	char spec[400];
	snprintf(spec, sizeof spec, "replay:%s@0", path);
	fo.spec = spec;
	fo.record = NULL;
	opened = sty_feed_open(&feed, &fo, error, sizeof error);
	CHECK_MSG(opened, "replay: %s", error);
	gap_run again = {0};
	for (long step = 0; opened && !feed.ended && step < 100000; step++)
		sty_feed_advance(&feed, (double)step * 0.005, &sc, gap_on_sample, &again);
	if (opened)
		sty_feed_close(&feed);
	CHECK_MSG(again.samples >= live_run.samples, "replayed %llu samples, live %llu", (unsigned long long)again.samples,
		  (unsigned long long)live_run.samples);
	CHECK(again.seen_back && again.back_index == live_run.back_index && again.gap_ns == live_run.gap_ns);
	CHECK(again.back_grab && again.back_grabbed == CORNER && !again.back_clutched && again.grabs == 1);
	unlink(path);
	sim_world_destroy(&w);
}

/* ---- running under the preload library ----------------------------------------------- */

/* Re-executes the test under umockdev-wrapper once; returns only when already under
 * it, false if that cannot be done (which fails the test: it must not pass unrun). */
static bool under_umockdev(int argc, char **argv)
{
	if (getenv(REEXEC_GUARD)) {
		const char *preload = getenv("LD_PRELOAD");
		if (!preload || !strstr(preload, "libumockdev-preload")) {
			fprintf(stderr, "LD_PRELOAD lacks libumockdev-preload after the re-exec\n");
			return false;
		}
		return true;
	}
	char self[4096];
	ssize_t len = readlink("/proc/self/exe", self, sizeof self - 1);
	if (len <= 0) {
		perror("readlink /proc/self/exe");
		return false;
	}
	self[len] = 0;
	setenv(REEXEC_GUARD, "1", 1);
	/* The preload library goes before AddressSanitizer's runtime, whose check of
	 * the library order would otherwise refuse to start. */
	const char *asan = getenv("ASAN_OPTIONS");
	char options[1024];
	snprintf(options, sizeof options, "%s%sverify_asan_link_order=0", asan ? asan : "",
		 asan && *asan ? ":" : "");
	setenv("ASAN_OPTIONS", options, 1);
	char *args[64];
	int n = 0;
	args[n++] = "umockdev-wrapper";
	args[n++] = self;
	for (int i = 1; i < argc && n < 63; i++)
		args[n++] = argv[i];
	args[n] = NULL;
	execvp(args[0], args);
	perror("cannot run umockdev-wrapper (package umockdev)");
	return false;
}

int main(int argc, char **argv)
{
	if (!under_umockdev(argc, argv))
		return 1;
	fake = pol_fake_new();
	if (!fake)
		return 1;
	static const test_case cases[] = {
		TEST(not_found),
		TEST(firmware_loader_hint),
		TEST(wrong_address),
		TEST(init_sequence),
		TEST(streaming_60hz),
		TEST(stylus_button),
		TEST(garbage_and_error_records),
		TEST(read_timeout),
		TEST(unplug),
		TEST(replug),
		TEST(close_clean),
		TEST(stylus_lifts_corner),
		TEST(feed_reports_troubles),
		TEST(press_across_unplug),
	};
	int rc = test_run(argc, argv, cases, (int)(sizeof cases / sizeof cases[0]));
	if (src)
		dev_close(&src);
	pol_fake_free(fake);
	return rc;
}
