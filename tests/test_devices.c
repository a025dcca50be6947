/* The device core without USB (issue 6): the Polhemus record parser on hand-built bytes,
 * pol_encode, the synthetic scripts, recording and replay ("tela-rec 1"). */
#define _POSIX_C_SOURCE 200809L

#include "test.h"

#include "device_internal.h"
#include "devices/device.h"
#include "devices/polhemus.h"

#include <pthread.h>
#include <stdatomic.h>
#include <stdint.h>
#include <time.h>
#include <unistd.h>

/* ---- hand-built records ------------------------------------------------------------- */

static void put32(uint8_t *b, uint32_t v)
{
	for (int i = 0; i < 4; i++)
		b[i] = (uint8_t)(v >> (8 * i));
}

static void putf(uint8_t *b, float f)
{
	uint32_t u;
	memcpy(&u, &f, sizeof u);
	put32(b, u);
}

static uint32_t bits(float f)
{
	uint32_t u;
	memcpy(&u, &f, sizeof u);
	return u;
}

static float from_bits(uint32_t u)
{
	float f;
	memcpy(&f, &u, sizeof f);
	return f;
}

/* The worked example of reference section 7 in tela's layout O*,2,7,9,10,1: x 10, y 2,
 * z -3.5 cm; w 0.7071 (0x3F3504F3), x 0, y 0, z 0.7071; then the frame count. */
static void make_record(uint8_t rec[POL_RECORD_BYTES], int station, uint32_t frame, uint32_t stylus)
{
	static const uint8_t example[POL_RECORD_BYTES] = {
		0x50, 0x41, 0x01, 0x50, 0x00, 0x00, 0x26, 0x00,                         /* PA 1 'P' 0 0 38 */
		0x00, 0x00, 0x20, 0x41, 0x00, 0x00, 0x00, 0x40, 0x00, 0x00, 0x60, 0xC0, /* 10, 2, -3.5 */
		0xF3, 0x04, 0x35, 0x3F, 0x00, 0x00, 0x00, 0x00,                         /* w, x */
		0x00, 0x00, 0x00, 0x00, 0xF3, 0x04, 0x35, 0x3F,                         /* y, z */
		0x00, 0x00, 0x00, 0x00,                                                 /* frame */
		0x01, 0x00, 0x00, 0x00,                                                 /* stylus */
		0x0D, 0x0A,
	};
	memcpy(rec, example, sizeof example);
	rec[2] = (uint8_t)station;
	put32(rec + 36, frame);
	put32(rec + 40, stylus);
}

static void check_example_sample(const dev_sample *s, int station, uint32_t frame, int64_t t)
{
	CHECK(s->sensor == station);
	CHECK(s->frame == frame);
	CHECK(s->t_ns == t);
	CHECK(s->buttons == 1u);
	/* Exact: the parser's conversion is the correctly rounded cm / 100. */
	CHECK(s->position[0] == 0.1f);
	CHECK(s->position[1] == 0.02f);
	CHECK(s->position[2] == -0.035f);
	float h = from_bits(0x3F3504F3u);
	CHECK(s->orientation[0] == 0.0f);
	CHECK(s->orientation[1] == 0.0f);
	CHECK(s->orientation[2] == h);
	CHECK(s->orientation[3] == h);
}

static void test_worked_example(void)
{
	uint8_t rec[POL_RECORD_BYTES];
	make_record(rec, 1, 7, 1);
	pol_parser p;
	pol_parser_init(&p);
	dev_sample s[4];
	int n = pol_parse(&p, rec, sizeof rec, 12345, s, 4);
	REQUIRE(n == 1);
	check_example_sample(&s[0], 1, 7, 12345);
	CHECK(p.health.samples == 1 && p.health.skipped_bytes == 0 && p.health.resyncs == 0);
	CHECK(p.health.error_records == 0 && p.health.dropped_frames == 0);
	CHECK(p.pending_count == 0);

	/* The stylus flag is a 32-bit 0/1 on the wire; tela keeps bit 0. */
	make_record(rec, 1, 8, 0);
	n = pol_parse(&p, rec, sizeof rec, 0, s, 4);
	REQUIRE(n == 1);
	CHECK(s[0].buttons == 0u);
}

static void test_split_everywhere(void)
{
	uint8_t two[2 * POL_RECORD_BYTES];
	make_record(two, 1, 1, 1);
	make_record(two + POL_RECORD_BYTES, 1, 2, 1);
	/* Every cut of the two-record stream, including inside the header. */
	for (size_t cut = 0; cut <= sizeof two; cut++) {
		pol_parser p;
		pol_parser_init(&p);
		dev_sample s[4];
		int n = pol_parse(&p, two, cut, 10, s, 4);
		n += pol_parse(&p, two + cut, sizeof two - cut, 20, s + n, 4 - n);
		CHECK_MSG(n == 2, "cut at %zu: %d samples", cut, n);
		CHECK_MSG(p.health.skipped_bytes == 0 && p.health.dropped_frames == 0, "cut at %zu", cut);
		if (n == 2) {
			check_example_sample(&s[0], 1, 1, cut >= POL_RECORD_BYTES ? 10 : 20);
			check_example_sample(&s[1], 1, 2, cut == sizeof two ? 10 : 20);
		}
	}
	/* One byte at a time. */
	pol_parser p;
	pol_parser_init(&p);
	dev_sample s[4];
	int n = 0;
	for (size_t i = 0; i < sizeof two; i++)
		n += pol_parse(&p, two + i, 1, (int64_t)i, s + n, 4 - n);
	CHECK(n == 2);
	CHECK(p.health.skipped_bytes == 0);
}

static void test_two_stations(void)
{
	uint8_t two[2 * POL_RECORD_BYTES];
	make_record(two, 1, 40, 1);
	make_record(two + POL_RECORD_BYTES, 2, 40, 0);
	pol_parser p;
	pol_parser_init(&p);
	dev_sample s[4];
	int n = pol_parse(&p, two, sizeof two, 5, s, 4);
	REQUIRE(n == 2);
	CHECK(s[0].sensor == 1 && s[0].buttons == 1);
	CHECK(s[1].sensor == 2 && s[1].buttons == 0);
	CHECK(s[1].t_ns == 5);
	/* Both stations at frame 41 next: no drop, whatever the other station's counter. */
	make_record(two, 1, 41, 1);
	make_record(two + POL_RECORD_BYTES, 2, 41, 0);
	n = pol_parse(&p, two, sizeof two, 6, s, 4);
	CHECK(n == 2);
	CHECK(p.health.dropped_frames == 0);
}

/* A corrupted record followed by a good one: the bad one's 46 bytes are skipped exactly
 * (the example's payload holds no 'P' or 'L'), the good one survives. */
static void check_bad_then_good(const uint8_t bad[POL_RECORD_BYTES], const char *what)
{
	uint8_t buf[2 * POL_RECORD_BYTES];
	memcpy(buf, bad, POL_RECORD_BYTES);
	make_record(buf + POL_RECORD_BYTES, 1, 3, 1);
	pol_parser p;
	pol_parser_init(&p);
	dev_sample s[4];
	int n = pol_parse(&p, buf, sizeof buf, 1, s, 4);
	CHECK_MSG(n == 1, "%s: %d samples", what, n);
	if (n == 1)
		check_example_sample(&s[0], 1, 3, 1);
	CHECK_MSG(p.health.skipped_bytes == POL_RECORD_BYTES, "%s: skipped %llu", what,
	          (unsigned long long)p.health.skipped_bytes);
	CHECK_MSG(p.health.resyncs == 1, "%s: resyncs %llu", what, (unsigned long long)p.health.resyncs);
	CHECK(p.health.error_records == 0);
}

static void test_bad_records(void)
{
	uint8_t rec[POL_RECORD_BYTES];
	make_record(rec, 1, 2, 1);
	rec[6] = 34; /* the worked example's size, for a list without the frame count */
	check_bad_then_good(rec, "wrong size field");

	make_record(rec, 1, 2, 1);
	rec[1] = 'B';
	check_bad_then_good(rec, "bad preamble");

	make_record(rec, 17, 2, 1);
	check_bad_then_good(rec, "station 17");

	make_record(rec, 0, 2, 1);
	check_bad_then_good(rec, "station 0");

	make_record(rec, 1, 2, 1);
	rec[3] = 'X';
	check_bad_then_good(rec, "unknown init command");

	make_record(rec, 1, 2, 1);
	rec[45] = ' ';
	check_bad_then_good(rec, "missing CR LF");

	make_record(rec, 1, 2, 1);
	putf(rec + 12, from_bits(0x7FC00000u)); /* NaN y */
	check_bad_then_good(rec, "NaN position");

	make_record(rec, 1, 2, 1);
	putf(rec + 20, from_bits(0x7F800000u)); /* infinite w */
	check_bad_then_good(rec, "infinite quaternion");

	make_record(rec, 1, 2, 1);
	memset(rec + 20, 0, 16); /* zero quaternion: no orientation to normalise */
	check_bad_then_good(rec, "zero quaternion");

	/* The other preambles are accepted. */
	static const char *pre[] = {"LY", "LU"};
	for (int i = 0; i < 2; i++) {
		make_record(rec, 16, 0, 0);
		memcpy(rec, pre[i], 2);
		pol_parser p;
		pol_parser_init(&p);
		dev_sample s[1];
		CHECK_MSG(pol_parse(&p, rec, sizeof rec, 0, s, 1) == 1, "preamble %s", pre[i]);
		CHECK(s[0].sensor == 16);
	}
}

static void test_normalises(void)
{
	uint8_t rec[POL_RECORD_BYTES];
	make_record(rec, 1, 0, 0);
	putf(rec + 20, 0.0f);
	putf(rec + 24, 0.0f);
	putf(rec + 28, 1.2f); /* y, 20 % long */
	putf(rec + 32, 0.0f);
	pol_parser p;
	pol_parser_init(&p);
	dev_sample s[1];
	REQUIRE(pol_parse(&p, rec, sizeof rec, 0, s, 1) == 1);
	CHECK_NEAR(s[0].orientation[1], 1.0, 1e-7);
	CHECK(s[0].orientation[0] == 0.0f && s[0].orientation[2] == 0.0f && s[0].orientation[3] == 0.0f);
}

static void test_garbage(void)
{
	/* The ASCII reply to the CR probe, a fake preamble with a bad station, and a lone
	 * 'L' before the first record; more garbage between two records. */
	static const char before[] = "Invalid Command\r\nxxPA\x7fyL";
	static const char between[] = "\x01\x02PA\x01\x50\x00\x00\x22\x00zz"; /* a header with size 34 */
	uint8_t buf[256];
	size_t len = 0;
	memcpy(buf + len, before, sizeof before - 1);
	len += sizeof before - 1;
	make_record(buf + len, 1, 1, 1);
	len += POL_RECORD_BYTES;
	memcpy(buf + len, between, sizeof between - 1);
	len += sizeof between - 1;
	make_record(buf + len, 2, 1, 0);
	len += POL_RECORD_BYTES;
	make_record(buf + len, 1, 2, 1);
	len += POL_RECORD_BYTES;
	uint64_t garbage = (sizeof before - 1) + (sizeof between - 1);

	/* Whole, and in chunks of every size: the same samples and the same counts. */
	for (size_t chunk = 1; chunk <= len; chunk++) {
		pol_parser p;
		pol_parser_init(&p);
		dev_sample s[8];
		int n = 0;
		for (size_t at = 0; at < len; at += chunk) {
			size_t c = len - at < chunk ? len - at : chunk;
			n += pol_parse(&p, buf + at, c, 0, s + n, 8 - n);
		}
		CHECK_MSG(n == 3, "chunk %zu: %d samples", chunk, n);
		if (n == 3) {
			CHECK(s[0].sensor == 1 && s[0].frame == 1);
			CHECK(s[1].sensor == 2 && s[1].frame == 1);
			CHECK(s[2].sensor == 1 && s[2].frame == 2);
		}
		CHECK_MSG(p.health.skipped_bytes == garbage, "chunk %zu: skipped %llu of %llu", chunk,
		          (unsigned long long)p.health.skipped_bytes, (unsigned long long)garbage);
		CHECK_MSG(p.health.resyncs == 2, "chunk %zu: resyncs %llu", chunk, (unsigned long long)p.health.resyncs);
		CHECK(p.health.dropped_frames == 0);
	}
}

static void test_error_records(void)
{
	uint8_t buf[3 * POL_RECORD_BYTES];
	make_record(buf, 1, 1, 1);
	make_record(buf + POL_RECORD_BYTES, 1, 2, 1);
	buf[POL_RECORD_BYTES + 4] = 49; /* real-time out of map */
	memset(buf + POL_RECORD_BYTES + 20, 0, 16); /* a flagged pose may be anything */
	make_record(buf + 2 * POL_RECORD_BYTES, 1, 3, 1);
	pol_parser p;
	pol_parser_init(&p);
	dev_sample s[4];
	int n = pol_parse(&p, buf, sizeof buf, 0, s, 4);
	CHECK(n == 2);
	CHECK(n == 2 && s[0].frame == 1 && s[1].frame == 3);
	CHECK(p.health.error_records == 1);
	CHECK(p.health.skipped_bytes == 0 && p.health.resyncs == 0);
	/* It was a record, so its frame is not a gap. */
	CHECK(p.health.dropped_frames == 0);
	CHECK(p.health.samples == 2);
}

static uint64_t drops_between(uint32_t a, uint32_t b)
{
	uint8_t buf[2 * POL_RECORD_BYTES];
	make_record(buf, 3, a, 0);
	make_record(buf + POL_RECORD_BYTES, 3, b, 0);
	pol_parser p;
	pol_parser_init(&p);
	dev_sample s[2];
	pol_parse(&p, buf, sizeof buf, 0, s, 2);
	return p.health.dropped_frames;
}

static void test_dropped_frames(void)
{
	CHECK(drops_between(10, 11) == 0);
	CHECK(drops_between(10, 13) == 2); /* a gap of 3: frames 11 and 12 are missing */
	CHECK(drops_between(10, 10) == 0);
	CHECK(drops_between(0xFFFFFFFFu, 0) == 0); /* wrap */
	CHECK(drops_between(0xFFFFFFFEu, 1) == 2);
	CHECK(drops_between(500, 3) == 0); /* counter reset (device restarted), not 2^32 drops */

	/* Per station: interleaved stations with their own counters. */
	uint8_t buf[4 * POL_RECORD_BYTES];
	make_record(buf, 1, 100, 0);
	make_record(buf + POL_RECORD_BYTES, 2, 7, 0);
	make_record(buf + 2 * POL_RECORD_BYTES, 1, 101, 0);
	make_record(buf + 3 * POL_RECORD_BYTES, 2, 9, 0);
	pol_parser p;
	pol_parser_init(&p);
	dev_sample s[4];
	CHECK(pol_parse(&p, buf, sizeof buf, 0, s, 4) == 4);
	CHECK(p.health.dropped_frames == 1);
}

static void test_overflow(void)
{
	uint8_t buf[3 * POL_RECORD_BYTES];
	for (int i = 0; i < 3; i++)
		make_record(buf + i * POL_RECORD_BYTES, 1, (uint32_t)i, 0);
	CHECK(POL_MAX_SAMPLES(sizeof buf) >= 3);
	pol_parser p;
	pol_parser_init(&p);
	dev_sample s[2];
	CHECK(pol_parse(&p, buf, sizeof buf, 0, s, 2) == 2);
	CHECK(p.overflow == 1);
	CHECK(p.health.samples == 2);
}

/* Deterministic pseudo-random numbers for the round trip. */
static uint64_t rng_state = 0x9E3779B97F4A7C15ull;
static double rnd(void)
{
	rng_state ^= rng_state << 13;
	rng_state ^= rng_state >> 7;
	rng_state ^= rng_state << 17;
	return (double)(rng_state >> 11) / 9007199254740992.0;
}

static bool round_trips(const dev_sample *in)
{
	uint8_t rec[POL_RECORD_BYTES];
	pol_encode(in, rec);
	pol_parser p;
	pol_parser_init(&p);
	dev_sample out;
	if (pol_parse(&p, rec, sizeof rec, in->t_ns, &out, 1) != 1)
		return false;
	for (int i = 0; i < 3; i++)
		if (bits(out.position[i]) != bits(in->position[i]))
			return false;
	for (int i = 0; i < 4; i++)
		if (bits(out.orientation[i]) != bits(in->orientation[i]))
			return false;
	return out.sensor == in->sensor && out.buttons == in->buttons && out.frame == in->frame &&
	       out.t_ns == in->t_ns;
}

static void test_encode_round_trip(void)
{
	dev_sample s = {.t_ns = 77, .sensor = 1, .buttons = 1, .frame = 123456789u};
	const float positions[][3] = {
		{0.1f, 0.02f, -0.035f}, {0.0f, -0.0f, 1.0f}, {0.3f, 0.0f, -0.2f}, {1e-6f, -1e-3f, 2.5f}, {-1.5f, 0.7f, 0.123456f},
	};
	for (size_t i = 0; i < sizeof positions / sizeof positions[0]; i++) {
		memcpy(s.position, positions[i], sizeof s.position);
		const float q[4] = {0.0f, 0.0f, from_bits(0x3F3504F3u), from_bits(0x3F3504F3u)};
		memcpy(s.orientation, q, sizeof q);
		CHECK_MSG(round_trips(&s), "position %zu", i);
	}
	/* Many workspace positions and random unit quaternions, every station.  The
	 * positions are ones a tracker can report (a float number of centimetres over 100):
	 * about one metre float in six has no float centimetre value that converts back to
	 * it, since 100 is not a power of two. */
	int failures = 0;
	for (int k = 0; k < 200000; k++) {
		for (int i = 0; i < 3; i++)
			s.position[i] = (float)((double)(float)(rnd() * 400.0 - 200.0) / 100.0);
		double q[4], n2 = 0.0;
		for (int i = 0; i < 4; i++) {
			q[i] = rnd() * 2.0 - 1.0;
			n2 += q[i] * q[i];
		}
		if (n2 < 1e-3)
			continue;
		for (int i = 0; i < 4; i++)
			s.orientation[i] = (float)(q[i] / sqrt(n2));
		s.sensor = 1 + k % 16;
		s.buttons = (uint32_t)(k & 1);
		s.frame = (uint32_t)k * 2654435761u;
		if (!round_trips(&s) && failures++ < 5)
			CHECK_MSG(false, "sample %d does not round-trip", k);
	}
	CHECK(failures == 0);

	/* Any other metres come back within one float step. */
	for (int k = 0; k < 100000; k++) {
		memset(&s, 0, sizeof s);
		s.sensor = 1;
		s.orientation[3] = 1.0f;
		for (int i = 0; i < 3; i++)
			s.position[i] = (float)(rnd() * 4.0 - 2.0);
		uint8_t rec[POL_RECORD_BYTES];
		pol_encode(&s, rec);
		pol_parser p;
		pol_parser_init(&p);
		dev_sample out;
		REQUIRE(pol_parse(&p, rec, sizeof rec, 0, &out, 1) == 1);
		for (int i = 0; i < 3; i++)
			if (out.position[i] != s.position[i] && nextafterf(s.position[i], out.position[i]) != out.position[i]) {
				CHECK_MSG(false, "%.9g came back as %.9g", s.position[i], out.position[i]);
				return;
			}
	}
}

static void test_init_commands(void)
{
	static const char *want[] = {"\r", "P", "F1\r", "U1\r", "H*,0,0,-1\r", "O*,2,7,9,10,1\r", "C\r"};
	REQUIRE(pol_init_command_count == 7);
	for (int i = 0; i < 7; i++)
		CHECK_MSG(strcmp(pol_init_commands[i], want[i]) == 0, "command %d", i);
}

/* ---- sources ----------------------------------------------------------------------- */

static void test_open_errors(void)
{
	char err[256];
	CHECK(dev_open("joystick", err, sizeof err) == NULL);
	CHECK(strstr(err, "unknown device 'joystick'") != NULL);
	CHECK(dev_open("synthetic:wave", err, sizeof err) == NULL);
	CHECK(strstr(err, "unknown script") != NULL);
	CHECK(dev_open("synthetic:grab@0", err, sizeof err) == NULL);
	CHECK(dev_open("synthetic:grab,slow", err, sizeof err) == NULL);
	CHECK(dev_open("replay:", err, sizeof err) == NULL);
	CHECK(dev_open("replay:/nonexistent/tela.rec", err, sizeof err) == NULL);
	CHECK(strstr(err, "/nonexistent/tela.rec") != NULL);
	CHECK(dev_open("replay:x.rec@-1", err, sizeof err) == NULL);
	CHECK(strstr(err, "SPEED") != NULL);
	dev_close(NULL);
	dev_source *none = NULL;
	dev_close(&none);
}

/* The grab script's shape: approach with the button up, press exactly at the target,
 * lift 10 cm (up is -z) with it down, hold, release at 2.5 s, then stay. */
static void test_grab_script(void)
{
	const double target = -0.05;
	dev_sample s;
	REQUIRE(dev_synthetic_pose("grab", 0.0, &s));
	CHECK_NEAR(s.position[2], target - 0.20, 1e-6);
	CHECK(s.buttons == 0);
	dev_synthetic_pose("grab", 1.0, &s);
	CHECK_NEAR(s.position[2], target, 1e-6);
	CHECK(s.buttons == 1);
	dev_synthetic_pose("grab", 2.0, &s);
	CHECK_NEAR(s.position[2], target - 0.10, 1e-6);
	CHECK(s.buttons == 1);
	dev_synthetic_pose("grab", 2.49, &s);
	CHECK(s.buttons == 1);
	dev_synthetic_pose("grab", 2.5, &s);
	CHECK(s.buttons == 0);
	dev_synthetic_pose("grab", 10.0, &s);
	CHECK_NEAR(s.position[2], target - 0.10, 1e-6);
	CHECK(s.buttons == 0);

	/* Through the device (encode + parse), at 60 Hz on the virtual clock. */
	char err[256];
	dev_source *d = dev_open("synthetic:grab,fast,seconds=4", err, sizeof err);
	REQUIRE_MSG(d, "%s", err);
	dev_sample buf[300];
	int n = 0, got;
	while ((got = dev_poll(d, buf + n, 300 - n, 100)) > 0)
		n += got;
	CHECK(got == -1 && dev_get_state(d) == DEV_ENDED);
	REQUIRE(n == 240);
	float prev_z = buf[0].position[2];
	for (int i = 0; i < n; i++) {
		double t = i / 60.0;
		CHECK(buf[i].sensor == 1 && buf[i].frame == (uint32_t)i);
		CHECK_MSG(buf[i].buttons == (i >= 60 && i < 150 ? 1u : 0u), "sample %d (t %.3f)", i, t);
		CHECK_NEAR(buf[i].t_ns - buf[0].t_ns, llround(t * 1e9), 1);
		float z = buf[i].position[2];
		/* Going down before the press, up only while pressed, still afterwards. */
		if (i > 0 && i <= 60)
			CHECK_MSG(z > prev_z, "sample %d approaches", i);
		if (i > 60 && i <= 120)
			CHECK_MSG(z < prev_z && buf[i - 1].buttons == 1, "sample %d lifts", i);
		if (i > 120)
			CHECK(z == prev_z);
		CHECK(buf[i].position[0] == buf[0].position[0] && buf[i].position[1] == buf[0].position[1]);
		prev_z = z;
	}
	dev_health h = dev_get_health(d);
	CHECK(h.samples == 240 && h.skipped_bytes == 0 && h.dropped_frames == 0);
	dev_close(&d);
	CHECK(d == NULL);
}

static void test_circle_realtime(void)
{
	char err[256];
	dev_source *d = dev_open("synthetic:circle", err, sizeof err);
	REQUIRE_MSG(d, "%s", err);
	dev_sample buf[16];
	int n = 0;
	int64_t start = dev_now_ns();
	while (n < 6 && dev_now_ns() - start < 2000000000) {
		int64_t before = dev_now_ns();
		int got = dev_poll(d, buf + n, 16 - n, 5);
		/* Never longer than the timeout (plus scheduling slack on a busy machine). */
		CHECK((dev_now_ns() - before) < 200000000);
		REQUIRE(got >= 0);
		n += got;
	}
	REQUIRE(n >= 6);
	CHECK(dev_get_state(d) == DEV_STREAMING);
	for (int i = 1; i < n; i++) {
		CHECK_NEAR(buf[i].t_ns - buf[i - 1].t_ns, 1e9 / 60.0, 1.0);
		double dx = buf[i].position[0] - 0.30, dy = buf[i].position[1];
		CHECK_NEAR(sqrt(dx * dx + dy * dy), 0.10, 1e-5);
		CHECK_NEAR(buf[i].position[2], -0.20, 1e-6);
	}
	CHECK(strstr(dev_describe(d), "synthetic:circle") != NULL);
	dev_close(&d);
}

/* A real-time script's clock starts at its first poll, as a replay's does: the 0.3 s
 * between open and that poll (a window opening) is not a burst of 18 overdue samples,
 * and the first sample is due no earlier than the poll. */
static void test_script_starts_at_first_poll(void)
{
	char err[256];
	dev_source *d = dev_open("synthetic:grab", err, sizeof err);
	REQUIRE_MSG(d, "%s", err);
	struct timespec nap = {0, 300000000};
	nanosleep(&nap, NULL);
	dev_sample buf[64];
	int64_t before = dev_now_ns();
	int got = 0;
	while (got == 0 && dev_now_ns() - before < 1000000000)
		got = dev_poll(d, buf, 64, 50);
	REQUIRE(got > 0);
	/* the first sample, due at the poll; a second one only if the poll was late by 1/60 s */
	CHECK_MSG(got <= 2, "%d samples at the first poll", got);
	CHECK_MSG(buf[0].t_ns >= before, "the first sample was due %.3f s before the poll",
	          (double)(before - buf[0].t_ns) * 1e-9);
	CHECK(buf[0].frame == 0);
	dev_close(&d);
}

/* ---- recording and replay ----------------------------------------------------------- */

static char tmpdir[256];

static void tmp_path(char *out, size_t size, const char *name)
{
	snprintf(out, size, "%s/%s", tmpdir, name);
}

static int collect(dev_source *d, dev_sample *buf, int cap)
{
	int n = 0, got;
	while (n < cap && (got = dev_poll(d, buf + n, cap - n, 2000)) >= 0)
		n += got;
	return n;
}

static bool same_pose(const dev_sample *a, const dev_sample *b)
{
	for (int i = 0; i < 3; i++)
		if (bits(a->position[i]) != bits(b->position[i]))
			return false;
	for (int i = 0; i < 4; i++)
		if (bits(a->orientation[i]) != bits(b->orientation[i]))
			return false;
	return a->buttons == b->buttons && a->sensor == b->sensor && a->frame == b->frame;
}

static void test_record_replay(void)
{
	char path[512], spec[600], err[512];
	tmp_path(path, sizeof path, "grab.rec");
	dev_source *d = dev_open("synthetic:grab,fast,seconds=3", err, sizeof err);
	REQUIRE_MSG(d, "%s", err);
	REQUIRE_MSG(dev_record(d, path, err, sizeof err), "%s", err);
	CHECK(!dev_record(d, path, err, sizeof err) && strstr(err, "already recording"));
	static dev_sample a[400], b[400];
	int na = collect(d, a, 400);
	CHECK(na == 180);
	dev_close(&d);

	FILE *f = fopen(path, "rb");
	REQUIRE(f);
	char line[64] = {0};
	CHECK(fgets(line, sizeof line, f) && strcmp(line, "tela-rec 1 synthetic-samples\n") == 0);
	fseek(f, 0, SEEK_END);
	long size = ftell(f);
	fclose(f);
	CHECK(size == (long)strlen("tela-rec 1 synthetic-samples\n") + 180 * (12 + POL_RECORD_BYTES));

	/* Speed 0 and 1: the same samples, the same spacing. */
	const char *speeds[] = {"@0", ""};
	for (int k = 0; k < 2; k++) {
		snprintf(spec, sizeof spec, "replay:%s%s", path, speeds[k]);
		d = dev_open(spec, err, sizeof err);
		REQUIRE_MSG(d, "%s", err);
		int64_t start = dev_now_ns();
		int nb = collect(d, b, 400);
		double took = (double)(dev_now_ns() - start) * 1e-9;
		CHECK_MSG(nb == na, "%s: %d of %d samples", spec, nb, na);
		CHECK(dev_get_state(d) == DEV_ENDED);
		CHECK(strstr(dev_describe(d), "ended") != NULL);
		for (int i = 0; i < nb && i < na; i++) {
			CHECK_MSG(same_pose(&a[i], &b[i]), "%s: sample %d differs", spec, i);
			CHECK_MSG(b[i].t_ns - b[0].t_ns == a[i].t_ns - a[0].t_ns, "%s: sample %d's time", spec, i);
		}
		if (k == 0)
			CHECK_MSG(took < 1.0, "as fast as possible took %.2f s", took);
		else
			CHECK_MSG(took > 2.9 && took < 8.0, "real time took %.2f s for 3 s", took);
		dev_health h = dev_get_health(d);
		CHECK(h.samples == (uint64_t)na && h.skipped_bytes == 0);
		dev_close(&d);
	}

	/* Twice as fast: half the spacing. */
	snprintf(spec, sizeof spec, "replay:%s@2", path);
	d = dev_open(spec, err, sizeof err);
	REQUIRE_MSG(d, "%s", err);
	int nb = collect(d, b, 20);
	REQUIRE(nb == 20);
	for (int i = 1; i < nb; i++)
		CHECK_NEAR(b[i].t_ns - b[0].t_ns, (a[i].t_ns - a[0].t_ns) / 2, 1);
	dev_close(&d);

	/* A replay re-recorded replays the same again. */
	char again[512];
	tmp_path(again, sizeof again, "again.rec");
	snprintf(spec, sizeof spec, "replay:%s@0", path);
	d = dev_open(spec, err, sizeof err);
	REQUIRE_MSG(d, "%s", err);
	REQUIRE(dev_record(d, again, err, sizeof err));
	collect(d, b, 400);
	dev_close(&d);
	snprintf(spec, sizeof spec, "replay:%s@0", again);
	d = dev_open(spec, err, sizeof err);
	REQUIRE_MSG(d, "%s", err);
	nb = collect(d, b, 400);
	CHECK(nb == na);
	for (int i = 0; i < nb && i < na; i++)
		CHECK(same_pose(&a[i], &b[i]) && b[i].t_ns - b[0].t_ns == a[i].t_ns - a[0].t_ns);
	dev_close(&d);
}

static void write_file(const char *path, const void *data, size_t size)
{
	FILE *f = fopen(path, "wb");
	if (!f)
		return;
	fwrite(data, 1, size, f);
	fclose(f);
}

static void check_rejected(const char *path, const char *want)
{
	char spec[600], err[512];
	snprintf(spec, sizeof spec, "replay:%s", path);
	dev_source *d = dev_open(spec, err, sizeof err);
	CHECK(d == NULL);
	CHECK_MSG(strstr(err, want) != NULL, "message \"%s\" lacks \"%s\"", err, want);
	CHECK_MSG(strstr(err, path) != NULL, "message \"%s\" does not name the file", err);
	dev_close(&d);
}

static void test_bad_recordings(void)
{
	char path[512];
	tmp_path(path, sizeof path, "bad.rec");
	static const char not_rec[] = "hello world\n";
	write_file(path, not_rec, sizeof not_rec - 1);
	check_rejected(path, "byte offset 0");
	write_file(path, "", 0);
	check_rejected(path, "byte offset 0");
	static const char v3[] = "tela-rec 3 polhemus-binary\n";
	write_file(path, v3, sizeof v3 - 1);
	check_rejected(path, "version");
	static const char kind[] = "tela-rec 1 fastrak\n";
	write_file(path, kind, sizeof kind - 1);
	check_rejected(path, "unknown recording kind");

	/* Two good chunks, then damage in the third. */
	static const char head[] = "tela-rec 1 polhemus-binary\n";
	uint8_t buf[256];
	size_t len = sizeof head - 1;
	memcpy(buf, head, len);
	for (int c = 0; c < 3; c++) {
		uint8_t chunk[12];
		for (int i = 0; i < 8; i++)
			chunk[i] = (uint8_t)(((uint64_t)(1000 + c * 16666667)) >> (8 * i));
		put32(chunk + 8, POL_RECORD_BYTES);
		memcpy(buf + len, chunk, 12);
		make_record(buf + len + 12, 1, (uint32_t)c, 0);
		len += 12 + POL_RECORD_BYTES;
	}
	size_t third = (sizeof head - 1) + 2 * (12 + POL_RECORD_BYTES);
	char want[64];

	write_file(path, buf, len);
	char spec[600], err[512];
	snprintf(spec, sizeof spec, "replay:%s@0", path);
	dev_source *d = dev_open(spec, err, sizeof err);
	REQUIRE_MSG(d, "the intact file: %s", err);
	dev_sample s[8];
	CHECK(collect(d, s, 8) == 3);
	dev_close(&d);

	write_file(path, buf, len - 5); /* the third record cut short */
	snprintf(want, sizeof want, "truncated chunk at byte offset %zu", third);
	check_rejected(path, want);

	write_file(path, buf, third + 5); /* the third chunk's header cut short */
	snprintf(want, sizeof want, "truncated chunk header at byte offset %zu", third);
	check_rejected(path, want);

	/* Time going backwards. */
	uint8_t back[256];
	memcpy(back, buf, len);
	memset(back + third, 0, 8);
	write_file(path, back, len);
	snprintf(want, sizeof want, "byte offset %zu", third);
	check_rejected(path, want);

	/* A header with no chunks is a recording that ends at once. */
	write_file(path, head, sizeof head - 1);
	snprintf(spec, sizeof spec, "replay:%s", path);
	d = dev_open(spec, err, sizeof err);
	REQUIRE_MSG(d, "%s", err);
	CHECK(dev_poll(d, s, 8, 10) == -1 && dev_get_state(d) == DEV_ENDED);
	dev_close(&d);
}

/* Appends a version 2 chunk (time, count, direction, bytes) to buf at *len. */
static void chunk_v2(uint8_t *buf, size_t *len, int64_t t, dev_rec_dir dir, const void *bytes, size_t count)
{
	for (int i = 0; i < 8; i++)
		buf[*len + (size_t)i] = (uint8_t)((uint64_t)t >> (8 * i));
	put32(buf + *len + 8, (uint32_t)count);
	buf[*len + 12] = (uint8_t)dir;
	memcpy(buf + *len + 13, bytes, count);
	*len += 13 + count;
}

/* Version 2: commands and initialisation replies are kept but not parsed, and a command
 * restarts the parser as the driver's re-initialisation does; re-recording keeps every
 * chunk and its direction; a bad direction is refused with its offset. */
static void test_replay_version2(void)
{
	static const char head[] = "tela-rec 2 polhemus-binary\n";
	static uint8_t buf[1024];
	size_t len = sizeof head - 1;
	memcpy(buf, head, len);
	uint8_t rec[POL_RECORD_BYTES];
	int64_t ms = 1000000;
	chunk_v2(buf, &len, 1 * ms, DEV_REC_OUT, "\r", 1);
	static const char probe_reply[] = "\r\n00I Invalid Command\r\n";
	chunk_v2(buf, &len, 2 * ms, DEV_REC_IN_REPLY, probe_reply, sizeof probe_reply - 1);
	chunk_v2(buf, &len, 3 * ms, DEV_REC_OUT, "P", 1);
	/* the reply to P of a tracker left in binary mode: a good record the driver threw
	 * away, so a replay must not deliver it */
	make_record(rec, 1, 900, 1);
	chunk_v2(buf, &len, 4 * ms, DEV_REC_IN_REPLY, rec, sizeof rec);
	chunk_v2(buf, &len, 5 * ms, DEV_REC_OUT, "C\r", 2);
	make_record(rec, 1, 10, 0);
	chunk_v2(buf, &len, 20 * ms, DEV_REC_IN, rec, sizeof rec);
	/* unplugged half way through a record; the re-initialisation restarts the parser,
	 * so the half is dropped, and the new session's frame 3 after frame 10 is no gap */
	make_record(rec, 1, 11, 0);
	chunk_v2(buf, &len, 37 * ms, DEV_REC_IN, rec, 20);
	chunk_v2(buf, &len, 900 * ms, DEV_REC_OUT, "\r", 1);
	chunk_v2(buf, &len, 901 * ms, DEV_REC_IN_REPLY, probe_reply, sizeof probe_reply - 1);
	chunk_v2(buf, &len, 902 * ms, DEV_REC_OUT, "C\r", 2);
	make_record(rec, 1, 3, 1);
	chunk_v2(buf, &len, 920 * ms, DEV_REC_IN, rec, sizeof rec);
	make_record(rec, 1, 4, 1);
	chunk_v2(buf, &len, 937 * ms, DEV_REC_IN, rec, sizeof rec);
	chunk_v2(buf, &len, 940 * ms, DEV_REC_OUT, "P", 1);

	char path[512], again[512], spec[600], err[512];
	tmp_path(path, sizeof path, "v2.rec");
	tmp_path(again, sizeof again, "v2again.rec");
	write_file(path, buf, len);
	snprintf(spec, sizeof spec, "replay:%s@0", path);
	dev_source *d = dev_open(spec, err, sizeof err);
	REQUIRE_MSG(d, "%s", err);
	REQUIRE_MSG(dev_record(d, again, err, sizeof err), "%s", err);
	dev_sample s[8];
	int n = collect(d, s, 8);
	CHECK_MSG(n == 3, "%d samples", n);
	if (n == 3) {
		CHECK(s[0].frame == 10 && s[0].buttons == 0);
		CHECK(s[1].frame == 3 && s[1].buttons == 1);
		CHECK(s[2].frame == 4 && s[2].buttons == 1);
		/* the recorded spacing from the first streamed record */
		CHECK(s[1].t_ns - s[0].t_ns == 900 * ms && s[2].t_ns - s[1].t_ns == 17 * ms);
	}
	dev_health h = dev_get_health(d);
	CHECK(h.dropped_frames == 0 && h.skipped_bytes == 0 && h.resyncs == 0 && h.error_records == 0);
	dev_close(&d);

	/* re-recorded: the same header and the same chunks, directions included, at times
	 * shifted by one constant */
	FILE *f = fopen(again, "rb");
	REQUIRE(f);
	static uint8_t got[1024];
	size_t got_len = fread(got, 1, sizeof got, f);
	fclose(f);
	CHECK_MSG(got_len == len, "re-recorded %zu bytes of %zu", got_len, len);
	int64_t shift = 0;
	for (size_t off = sizeof head - 1; got_len == len && off < len;) {
		int64_t t0 = 0, t1 = 0;
		for (int i = 7; i >= 0; i--) {
			t0 = (int64_t)(((uint64_t)t0 << 8) | buf[off + (size_t)i]);
			t1 = (int64_t)(((uint64_t)t1 << 8) | got[off + (size_t)i]);
		}
		if (off == sizeof head - 1)
			shift = t1 - t0;
		CHECK(t1 - t0 == shift);
		uint32_t count = (uint32_t)buf[off + 8] | (uint32_t)buf[off + 9] << 8;
		CHECK(memcmp(buf + off + 8, got + off + 8, 5 + count) == 0);
		off += 13 + count;
	}
	CHECK(got_len == len && memcmp(got, head, sizeof head - 1) == 0);

	/* a direction that is none of the three */
	size_t first = sizeof head - 1;
	buf[first + 12] = 7;
	write_file(path, buf, len);
	char want[64];
	snprintf(want, sizeof want, "direction 7 at byte offset %zu", first + 12);
	check_rejected(path, want);
	/* a version 2 chunk header is 13 bytes */
	write_file(path, buf, first + 12);
	snprintf(want, sizeof want, "truncated chunk header at byte offset %zu", first);
	check_rejected(path, want);
	remove(path);
	remove(again);
}

/* A recording that cannot be written stops, says so, and leaves the source running. */
static void test_record_failure(void)
{
	char err[512];
	dev_source *d = dev_open("synthetic:still,fast", err, sizeof err);
	REQUIRE_MSG(d, "%s", err);
	CHECK(!dev_record(d, "/nonexistent-dir/x.rec", err, sizeof err));
	CHECK(strstr(err, "/nonexistent-dir/x.rec") != NULL);
	if (access("/dev/full", W_OK) == 0) {
		REQUIRE_MSG(dev_record(d, "/dev/full", err, sizeof err), "%s", err);
		static dev_sample buf[64];
		int total = 0;
		for (int i = 0; i < 100; i++) {
			int got = dev_poll(d, buf, 64, 10);
			REQUIRE(got > 0);
			total += got;
		}
		CHECK(total == 6400);
		CHECK_MSG(strstr(dev_describe(d), "recording to /dev/full stopped") != NULL, "%s", dev_describe(d));
		CHECK(dev_get_state(d) == DEV_STREAMING);
	}
	dev_close(&d);
}

/* ---- push sources ---------------------------------------------------------------------- */

static dev_sample pushed(int sensor, float x, float y, float z, uint32_t buttons)
{
	dev_sample s = {.sensor = sensor, .position = {x, y, z}, .orientation = {0.0f, 0.0f, 0.6f, 0.8f}, .buttons = buttons};
	return s;
}

/* One float step of the centimetre round trip (pol_encode's contract). */
static bool near_float(float a, float b)
{
	return a == b || nextafterf(a, b) == b;
}

static void test_push_basic(void)
{
	char err[256];
	dev_source *d = dev_open("push:hand", err, sizeof err);
	REQUIRE_MSG(d, "%s", err);
	CHECK(dev_get_frame(d) == DEV_FRAME_DEVICE);
	dev_sample out[8];
	CHECK(dev_poll(d, out, 8, 0) == 0);
	CHECK(dev_get_state(d) == DEV_WAITING);
	CHECK(strstr(dev_describe(d), "hand") != NULL);

	dev_sample in[3] = {pushed(1, 0.1f, 0.2f, -0.3f, 1), pushed(2, -0.5f, 0.25f, 0.125f, 0), pushed(1, 0.11f, 0.2f, -0.3f, 0)};
	in[0].t_ns = 1000, in[1].t_ns = 2000, in[2].t_ns = 3000;
	for (int i = 0; i < 3; i++)
		CHECK(dev_push(d, &in[i]));
	int n = dev_poll(d, out, 8, 0);
	REQUIRE(n == 3);
	CHECK(dev_get_state(d) == DEV_STREAMING);
	for (int i = 0; i < 3; i++) {
		CHECK(out[i].sensor == in[i].sensor && out[i].t_ns == in[i].t_ns && out[i].buttons == in[i].buttons);
		for (int k = 0; k < 3; k++)
			CHECK_MSG(near_float(out[i].position[k], in[i].position[k]), "sample %d axis %d: %.9g for %.9g", i, k,
			          out[i].position[k], in[i].position[k]);
		for (int k = 0; k < 4; k++)
			CHECK(out[i].orientation[k] == in[i].orientation[k]);
	}
	/* each sensor counts its own frames, so two sensors show no gap */
	CHECK(out[0].frame == 1 && out[1].frame == 1 && out[2].frame == 2);
	CHECK(dev_get_health(d).dropped_frames == 0 && dev_get_health(d).samples == 3);

	/* Bad samples are refused and leave nothing queued. */
	dev_sample bad = pushed(0, 0, 0, 0, 0);
	CHECK(!dev_push(d, &bad));
	bad = pushed(17, 0, 0, 0, 0);
	CHECK(!dev_push(d, &bad));
	bad = pushed(1, NAN, 0, 0, 0);
	CHECK(!dev_push(d, &bad));
	bad = pushed(1, 0, 0, 0, 0);
	bad.orientation[3] = INFINITY;
	CHECK(!dev_push(d, &bad));
	CHECK(dev_poll(d, out, 8, 0) == 0);
	/* A time before the previous sample's is raised to it: recordings never go back. */
	dev_sample early = pushed(1, 0, 0, 0, 0);
	early.t_ns = 10;
	CHECK(dev_push(d, &early));
	CHECK(dev_poll(d, out, 8, 0) == 1 && out[0].t_ns == 3000);
	dev_close(&d);

	/* Only push sources take pushes; a push source needs a name. */
	d = dev_open("synthetic:still", err, sizeof err);
	REQUIRE_MSG(d, "%s", err);
	dev_sample ok = pushed(1, 0, 0, 0, 0);
	CHECK(!dev_push(d, &ok));
	dev_push_set_state(d, DEV_ENDED, "no");
	CHECK(dev_get_state(d) != DEV_ENDED);
	dev_close(&d);
	CHECK(dev_open("push:", err, sizeof err) == NULL && strstr(err, "name") != NULL);
	CHECK(!dev_push(NULL, &ok));
}

typedef struct pusher {
	dev_source *d;
	int count;
	/* with `paced`, the samples the poller has taken: the pusher keeps at most half the
	 * queue outstanding, so that a poller descheduled on a loaded machine costs time, not
	 * samples (overflow has its own test) */
	atomic_int taken;
	bool paced;
} pusher;

static void *push_thread(void *arg)
{
	pusher *p = arg;
	for (int i = 0; i < p->count; i++) {
		while (p->paced && i - atomic_load(&p->taken) >= 512)
			nanosleep(&(struct timespec){.tv_nsec = 100000}, NULL);
		dev_sample s = pushed(1, 0.001f * (float)i, 0.0f, 0.0f, (uint32_t)(i & 1));
		dev_push(p->d, &s);
		if (i % 64 == 0) /* give the poller a chance to wait, not only to drain */
			nanosleep(&(struct timespec){.tv_nsec = 1000000}, NULL);
	}
	dev_push_set_state(p->d, DEV_ENDED, "done");
	return NULL;
}

/* Another thread pushes while this one polls: every sample arrives once, in order, and
 * the end comes after the last one. */
static void test_push_threaded(void)
{
	char err[256];
	dev_source *d = dev_open_push("mouse", DEV_FRAME_WORLD, err, sizeof err);
	REQUIRE_MSG(d, "%s", err);
	CHECK(dev_get_frame(d) == DEV_FRAME_WORLD);
	pusher p = {.d = d, .count = 3000, .paced = true};
	pthread_t t;
	REQUIRE(pthread_create(&t, NULL, push_thread, &p) == 0);
	static dev_sample got[4000];
	int n = 0, more;
	while (n < 4000 && (more = dev_poll(d, got + n, 4000 - n, 2000)) >= 0)
		atomic_store(&p.taken, n += more);
	pthread_join(t, NULL);
	CHECK(n == 3000);
	CHECK(dev_get_state(d) == DEV_ENDED);
	for (int i = 0; i < n; i++) {
		CHECK_MSG(got[i].frame == (uint32_t)i + 1, "sample %d has frame %u", i, got[i].frame);
		CHECK(near_float(got[i].position[0], 0.001f * (float)i) && got[i].buttons == (uint32_t)(i & 1));
		if (i > 0)
			CHECK(got[i].t_ns >= got[i - 1].t_ns);
	}
	CHECK(dev_get_health(d).dropped_frames == 0);
	dev_sample late = pushed(1, 0, 0, 0, 0);
	CHECK(!dev_push(d, &late));
	dev_close(&d);
}

/* A poller that stalls loses the oldest samples, counted as a gap in the frames; a
 * waiting poll wakes as soon as a sample comes; a stated reason reaches the display. */
static void test_push_overflow_and_state(void)
{
	char err[256];
	dev_source *d = dev_open_push("openxr", DEV_FRAME_DEVICE, err, sizeof err);
	REQUIRE_MSG(d, "%s", err);
	for (int i = 0; i < 1024 + 10; i++) {
		dev_sample s = pushed(1, 0.0f, 0.0f, 0.0f, 0);
		CHECK(dev_push(d, &s));
	}
	static dev_sample got[2048];
	int n = dev_poll(d, got, 2048, 0);
	CHECK(n == 1024);
	CHECK(got[0].frame == 11 && got[n - 1].frame == 1034);
	CHECK(dev_get_health(d).dropped_frames == 10);

	dev_push_set_state(d, DEV_DISCONNECTED, "left controller not tracked");
	CHECK(dev_poll(d, got, 4, 0) == 0);
	CHECK(dev_get_state(d) == DEV_DISCONNECTED);
	CHECK(strstr(dev_describe(d), "left controller not tracked") != NULL);
	pusher p = {.d = d, .count = 1};
	pthread_t t;
	REQUIRE(pthread_create(&t, NULL, push_thread, &p) == 0);
	int64_t start = dev_now_ns();
	n = dev_poll(d, got, 4, 5000);
	double waited = (double)(dev_now_ns() - start) * 1e-9;
	pthread_join(t, NULL);
	CHECK(n == 1);
	CHECK_MSG(waited < 2.0, "the poll waited %.2f s for a sample pushed at once", waited);
	CHECK(dev_poll(d, got, 4, 0) == -1 && dev_get_state(d) == DEV_ENDED);
	dev_close(&d);
}

/* A world-frame source records "world-samples"; the replay gives back exactly what the
 * live poll gave, and says it is in the world frame. */
static void test_push_record_replay(void)
{
	char path[512], spec[600], err[512];
	tmp_path(path, sizeof path, "mouse.rec");
	dev_source *d = dev_open_push("mouse", DEV_FRAME_WORLD, err, sizeof err);
	REQUIRE_MSG(d, "%s", err);
	REQUIRE_MSG(dev_record(d, path, err, sizeof err), "%s", err);
	static dev_sample live[200], again[200];
	for (int i = 0; i < 150; i++) {
		dev_sample s = pushed(1, 0.3f * sinf(0.05f * (float)i), 0.4f + 0.001f * (float)i, 0.01f * (float)i,
		                      i >= 50 && i < 100);
		s.t_ns = 1000000000LL + (int64_t)i * 4000000;
		CHECK(dev_push(d, &s));
	}
	dev_push_set_state(d, DEV_ENDED, NULL);
	int n = collect(d, live, 200);
	CHECK(n == 150);
	dev_close(&d);

	FILE *f = fopen(path, "rb");
	REQUIRE(f);
	char line[64] = {0};
	CHECK(fgets(line, sizeof line, f) && strcmp(line, "tela-rec 1 world-samples\n") == 0);
	fclose(f);
	snprintf(spec, sizeof spec, "replay:%s@0", path);
	d = dev_open(spec, err, sizeof err);
	REQUIRE_MSG(d, "%s", err);
	CHECK(dev_get_frame(d) == DEV_FRAME_WORLD);
	int m = collect(d, again, 200);
	CHECK(m == n);
	for (int i = 0; i < m && i < n; i++)
		CHECK_MSG(same_pose(&live[i], &again[i]) && again[i].t_ns - again[0].t_ns == live[i].t_ns - live[0].t_ns,
		          "sample %d differs", i);
	dev_close(&d);
	remove(path);
}

int main(int argc, char **argv)
{
	const char *base = getenv("TMPDIR");
	snprintf(tmpdir, sizeof tmpdir, "%s/tela-devices-XXXXXX", base && base[0] ? base : "/tmp");
	if (!mkdtemp(tmpdir)) {
		perror("mkdtemp");
		return 1;
	}
	static const test_case cases[] = {
		TEST(test_worked_example),
		TEST(test_split_everywhere),
		TEST(test_two_stations),
		TEST(test_bad_records),
		TEST(test_normalises),
		TEST(test_garbage),
		TEST(test_error_records),
		TEST(test_dropped_frames),
		TEST(test_overflow),
		TEST(test_encode_round_trip),
		TEST(test_init_commands),
		TEST(test_open_errors),
		TEST(test_grab_script),
		TEST(test_circle_realtime),
		TEST(test_script_starts_at_first_poll),
		TEST(test_record_replay),
		TEST(test_bad_recordings),
		TEST(test_replay_version2),
		TEST(test_record_failure),
		TEST(test_push_basic),
		TEST(test_push_threaded),
		TEST(test_push_overflow_and_state),
		TEST(test_push_record_replay),
	};
	int rc = test_run(argc, argv, cases, (int)(sizeof cases / sizeof cases[0]));
	const char *names[] = {"grab.rec", "again.rec", "bad.rec"};
	for (int i = 0; i < 3; i++) {
		char p[512];
		tmp_path(p, sizeof p, names[i]);
		remove(p);
	}
	rmdir(tmpdir);
	return rc;
}
