/* Tracking: calibration against hand-computed poses, the calibration file reader, the
 * clutch, the pose history, the one-euro filter and the pointer's freeze and recovery.
 * Expected values are worked out by hand in the comments, not by the code under test. */
#include "tracking/tracking.h"

#include "test.h"

#include <stdint.h>

#ifndef TRK_TEST_DATA
#error "TRK_TEST_DATA must name tests/data/tracking"
#endif

#define PI 3.14159265358979323846
#define MS 1000000LL
/* sqrt(1/2): the components of a quarter-turn quaternion */
#define H 0.70710678118654752

/* Float results of exact decimal inputs: a few float ulps. */
#define TOL 1e-6

static dev_sample sample(int64_t t_ns, double x, double y, double z, const double q[4], uint32_t buttons)
{
	dev_sample s;
	memset(&s, 0, sizeof s);
	s.t_ns = t_ns;
	s.sensor = 1;
	s.position[0] = (float)x;
	s.position[1] = (float)y;
	s.position[2] = (float)z;
	static const double identity[4] = {0, 0, 0, 1};
	if (!q)
		q = identity;
	for (int i = 0; i < 4; i++)
		s.orientation[i] = (float)q[i];
	s.buttons = buttons;
	return s;
}

static void check_vec3(const char *what, const float got[3], double x, double y, double z, double tol)
{
	CHECK_MSG(fabs(got[0] - x) <= tol && fabs(got[1] - y) <= tol && fabs(got[2] - z) <= tol,
	          "%s = (%.9g, %.9g, %.9g), expected (%.9g, %.9g, %.9g)", what, (double)got[0], (double)got[1],
	          (double)got[2], x, y, z);
}

/* Quaternions q and -q are the same rotation. */
static void check_quat(const char *what, const float got[4], double x, double y, double z, double w, double tol)
{
	double same = fabs(got[0] - x) + fabs(got[1] - y) + fabs(got[2] - z) + fabs(got[3] - w);
	double flip = fabs(got[0] + x) + fabs(got[1] + y) + fabs(got[2] + z) + fabs(got[3] + w);
	CHECK_MSG(same <= tol || flip <= tol, "%s = (%.9g, %.9g, %.9g, %.9g), expected +-(%.9g, %.9g, %.9g, %.9g)", what,
	          (double)got[0], (double)got[1], (double)got[2], (double)got[3], x, y, z, w);
}

/* ---- Calibration ------------------------------------------------------------------------ */

/* Seed 002: world = (x, -z, y).  Device (1, 2, 3) cm is world (0.01, -0.03, 0.02) m. */
static void calibration_default_mapping(void)
{
	trk_calibration cal = trk_calibration_default();
	trk_pose w;
	dev_sample s = sample(7, 0.01, 0.02, 0.03, NULL, 0);
	trk_calibrate(&cal, &s, &w);
	CHECK(w.t_ns == 7);
	check_vec3("device (1,2,3) cm", w.position, 0.01, -0.03, 0.02, 1e-9);

	/* each device axis on its own */
	s = sample(0, 1, 0, 0, NULL, 0);
	trk_calibrate(&cal, &s, &w);
	check_vec3("device +x", w.position, 1, 0, 0, 1e-7);
	s = sample(0, 0, 1, 0, NULL, 0);
	trk_calibrate(&cal, &s, &w);
	check_vec3("device +y", w.position, 0, 0, 1, 1e-7);
	s = sample(0, 0, 0, 1, NULL, 0);
	trk_calibrate(&cal, &s, &w);
	check_vec3("device +z", w.position, 0, -1, 0, 1e-7);

	/* a still sensor has the world orientation of the calibration: a quarter turn about x */
	check_quat("orientation", w.orientation, H, 0, 0, H, TOL);
	float axes[4];
	REQUIRE(trk_axes_to_quaternion("x -z y", axes));
	check_quat("'x -z y'", axes, H, 0, 0, H, TOL);
}

/* A sensor turned a quarter about device z holds a 10 cm tip along its x axis.
 *   q * tip        = (0, 0.1, 0)            (z quarter turn: x -> y)
 *   p + q * tip    = (0.01, 0.12, 0.03)
 *   R (default)    = (0.01, -0.03, 0.12)    world = (x, -z, y)
 *   scale 2        = (0.02, -0.06, 0.24)
 *   + (1, 2, 3)    = (1.02, 1.94, 3.24)
 * World orientation R q = (H,0,0,H)(0,0,H,H) = (1/2, -1/2, 1/2, 1/2) by the Hamilton
 * product; the tip direction: sensor x -> device y -> world z. */
static void calibration_rotated_tip(void)
{
	trk_calibration cal = trk_calibration_default();
	cal.tip[0] = 0.1f;
	cal.scale = 2.0f;
	cal.translation[0] = 1.0f;
	cal.translation[1] = 2.0f;
	cal.translation[2] = 3.0f;
	const double qz[4] = {0, 0, H, H};
	dev_sample s = sample(0, 0.01, 0.02, 0.03, qz, 0);
	trk_pose w;
	trk_calibrate(&cal, &s, &w);
	check_vec3("tip position", w.position, 1.02, 1.94, 3.24, TOL);
	check_quat("orientation", w.orientation, 0.5, -0.5, 0.5, 0.5, TOL);
	float dir[3];
	trk_tip_direction(&cal, w.orientation, dir);
	check_vec3("tip direction", dir, 0, 0, 1, TOL);

	/* with no tip the direction is the sensor's +x: here also world z */
	cal.tip[0] = 0.0f;
	trk_tip_direction(&cal, w.orientation, dir);
	check_vec3("boresight", dir, 0, 0, 1, TOL);
}

/* A calibration a quarter turn about world y (x -> -z, z -> x) after a sensor a quarter
 * turn about device x (y -> z): sensor y -> device z -> world x, sensor x -> world -z.
 * R q = (0,H,0,H)(H,0,0,H) = (1/2, 1/2, -1/2, 1/2). */
static void calibration_rotation_composition(void)
{
	trk_calibration cal = trk_calibration_default();
	cal.rotation[0] = 0.0f;
	cal.rotation[1] = (float)H;
	cal.rotation[2] = 0.0f;
	cal.rotation[3] = (float)H;
	const double qx[4] = {H, 0, 0, H};
	dev_sample s = sample(0, 0, 0, 0, qx, 0);
	trk_pose w;
	trk_calibrate(&cal, &s, &w);
	check_quat("R q", w.orientation, 0.5, 0.5, -0.5, 0.5, TOL);
	float dir[3];
	cal.tip[1] = 0.05f; /* along sensor y */
	trk_tip_direction(&cal, w.orientation, dir);
	check_vec3("sensor y", dir, 1, 0, 0, TOL);
	cal.tip[1] = 0.0f;
	cal.tip[0] = 0.05f;
	trk_tip_direction(&cal, w.orientation, dir);
	check_vec3("sensor x", dir, 0, 0, -1, TOL);
	/* and the tip offset moves the point the same way: 5 cm along world -z */
	s = sample(0, 0, 0, 0, qx, 0);
	trk_calibrate(&cal, &s, &w);
	check_vec3("tip point", w.position, 0, 0, -0.05, TOL);

	/* Axis mappings: a half turn about z, and the 120-degree turn x -> z -> y -> x about
	 * -(1,1,1) (world x = device y, world y = device z, world z = device x). */
	float q[4];
	REQUIRE(trk_axes_to_quaternion("-x -y z", q));
	check_quat("'-x -y z'", q, 0, 0, 1, 0, TOL);
	REQUIRE(trk_axes_to_quaternion("y z +x", q));
	check_quat("'y z +x'", q, -0.5, -0.5, -0.5, 0.5, TOL);
	cal = trk_calibration_default();
	memcpy(cal.rotation, q, sizeof q);
	s = sample(0, 0.1, 0.2, 0.3, NULL, 0);
	trk_calibrate(&cal, &s, &w);
	check_vec3("'y z x' mapping", w.position, 0.2, 0.3, 0.1, TOL);
	CHECK(!trk_axes_to_quaternion("x y -z", q)); /* a mirror */
	CHECK(!trk_axes_to_quaternion("x x y", q));
	CHECK(!trk_axes_to_quaternion("x w y", q));
	CHECK(!trk_axes_to_quaternion("x y", q));
	CHECK(!trk_axes_to_quaternion("x y z x", q));
}

/* Scale multiplies the rotated device position before the translation and leaves the
 * orientation alone: device (0.1, 0.2, 0.3) -> R -> (0.1, -0.3, 0.2) -> x1.5 ->
 * (0.15, -0.45, 0.3) -> + (0.5, 1, -2) = (0.65, 0.55, -1.7). */
static void calibration_scale(void)
{
	trk_calibration cal = trk_calibration_default();
	cal.scale = 1.5f;
	cal.translation[0] = 0.5f;
	cal.translation[1] = 1.0f;
	cal.translation[2] = -2.0f;
	dev_sample s = sample(0, 0.1, 0.2, 0.3, NULL, 0);
	trk_pose w;
	trk_calibrate(&cal, &s, &w);
	check_vec3("scaled", w.position, 0.65, 0.55, -1.7, TOL);
	check_quat("orientation", w.orientation, H, 0, 0, H, TOL);
}

/* ---- The calibration file --------------------------------------------------------------- */

/* desk.cal: a quarter turn about y ((x,y,z) -> (z, y, -x)), tip (0.1, 0, 0), scale 1.5,
 * translation (0.5, 1, -2).  A still sensor at (0.1, 0.2, 0.3): p + tip = (0.2, 0.2, 0.3)
 * -> (0.3, 0.2, -0.2) -> (0.45, 0.3, -0.3) -> (0.95, 1.3, -2.3). */
static void calibration_file_good(void)
{
	trk_calibration cal;
	char err[256] = "unset";
	REQUIRE_MSG(trk_calibration_load(TRK_TEST_DATA "/desk.cal", &cal, err, sizeof err), "%s", err);
	CHECK(err[0] == '\0');
	check_quat("rotation", cal.rotation, 0, H, 0, H, TOL);
	check_vec3("translation", cal.translation, 0.5, 1, -2, 0);
	CHECK(cal.scale == 1.5f);
	check_vec3("tip", cal.tip, 0.1, 0, 0, 1e-8);
	dev_sample s = sample(0, 0.1, 0.2, 0.3, NULL, 0);
	trk_pose w;
	trk_calibrate(&cal, &s, &w);
	check_vec3("desk pose", w.position, 0.95, 1.3, -2.3, TOL);

	/* CRLF lines, a mapping only: the other keys keep their defaults */
	REQUIRE_MSG(trk_calibration_load(TRK_TEST_DATA "/axes.cal", &cal, err, sizeof err), "%s", err);
	check_quat("'-x -y z'", cal.rotation, 0, 0, 1, 0, TOL);
	check_vec3("translation", cal.translation, 0, 0, 0, 0);
	CHECK(cal.scale == 1.0f);
	check_vec3("tip", cal.tip, 0, 0, 0, 0);

	/* an empty file is the default calibration */
	REQUIRE(trk_calibration_parse("# nothing\n\n", "empty.cal", &cal, err, sizeof err));
	trk_calibration def = trk_calibration_default();
	CHECK(memcmp(&cal, &def, sizeof cal) == 0);
}

/* Every bad input names its line and leaves the output as it was. */
static void calibration_file_bad(void)
{
	static const struct {
		const char *text, *message;
	} cases[] = {
		{"scale = 1\nfoo = 2\n", "bad.cal:2: unknown key 'foo'"},
		{"\n\nscale 2\n", "bad.cal:3: expected 'key = values'"},
		{" = 3", "bad.cal:1: no key before '='"},
		{"scale = 1\n# again\nscale = 2", "bad.cal:3: scale given twice (first on line 1)"},
		{"translation = 1 2", "bad.cal:1: translation: expected 3 numbers, got 2"},
		{"x=1\n", "bad.cal:1: unknown key 'x'"},
		{"tip = 1 2 3 4 5", "bad.cal:1: tip: expected 3 numbers, got more than 4"},
		{"scale =", "bad.cal:1: scale: expected 1 number, got 0"},
		{"\ntranslation = 1 abc 3", "bad.cal:2: translation: 'abc' is not a number"},
		{"translation = 1 nan 3", "bad.cal:1: translation: 'nan' is not a number"},
		{"translation = 0x10 0 0", "bad.cal:1: translation: '0x10' is not a number"},
		{"tip = 0 0 100", "bad.cal:1: tip: '100' is not a number within +-10"},
		{"scale = 0", "bad.cal:1: scale: must be positive"},
		{"scale = -1", "bad.cal:1: scale: must be positive"},
		{"rotation = 0 0 0 2", "bad.cal:1: rotation: not a unit quaternion"},
		{"rotation = 0 0 0 0", "bad.cal:1: rotation: not a unit quaternion"},
		{"rotation = x x y", "bad.cal:1: rotation: the axis mapping repeats an axis"},
		{"rotation = x y -z", "bad.cal:1: rotation: the axis mapping is a mirror"},
		{"rotation = x q y", "bad.cal:1: rotation: three values are an axis mapping"},
		{"rotation = 1 2", "bad.cal:1: rotation: expected an axis mapping"},
		{"rotation = 0 0 0 one", "bad.cal:1: rotation: 'one' is not a number"},
	};
	for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
		trk_calibration cal;
		memset(&cal, 0x5a, sizeof cal);
		trk_calibration before = cal;
		char err[256] = "";
		bool ok = trk_calibration_parse(cases[i].text, "bad.cal", &cal, err, sizeof err);
		CHECK_MSG(!ok, "accepted: %s", cases[i].text);
		CHECK_MSG(strstr(err, cases[i].message) != NULL, "'%s': got '%s', expected '%s'", cases[i].text, err,
		          cases[i].message);
		CHECK_MSG(memcmp(&cal, &before, sizeof cal) == 0, "'%s' changed the output", cases[i].text);
	}

	/* a line longer than the reader's buffer */
	char longline[2048];
	memset(longline, ' ', sizeof longline);
	memcpy(longline, "scale = 1\nscale", 15);
	longline[sizeof longline - 1] = '\0';
	char err[256] = "";
	trk_calibration cal = trk_calibration_default();
	CHECK(!trk_calibration_parse(longline, "long.cal", &cal, err, sizeof err));
	CHECK_MSG(strstr(err, "long.cal:2: line longer than") != NULL, "%s", err);

	/* the same from files: the path and line in front */
	static const struct {
		const char *file, *message;
	} files[] = {
		{"bad-key.cal", "/bad-key.cal:4: unknown key 'translaton'"},
		{"bad-mirror.cal", "/bad-mirror.cal:2: rotation: the axis mapping is a mirror"},
		{"bad-nul.cal", "/bad-nul.cal:2: a NUL byte"},
		{"no-such-file.cal", "/no-such-file.cal: cannot open"},
	};
	for (size_t i = 0; i < sizeof files / sizeof files[0]; i++) {
		char path[1024];
		snprintf(path, sizeof path, "%s/%s", TRK_TEST_DATA, files[i].file);
		memset(&cal, 0x5a, sizeof cal);
		trk_calibration before = cal;
		CHECK(!trk_calibration_load(path, &cal, err, sizeof err));
		CHECK_MSG(strstr(err, files[i].message) != NULL, "%s: got '%s'", files[i].file, err);
		CHECK(memcmp(&cal, &before, sizeof cal) == 0);
	}
}

/* ---- Clutch ----------------------------------------------------------------------------- */

static trk_tracker *new_tracker(const trk_tracker_config *cfg)
{
	static trk_tracker tracker; /* one at a time; 20 KB is kinder to the test's stack here */
	trk_tracker_init(&tracker, cfg);
	return &tracker;
}

static void update1(trk_tracker *t, dev_sample s, bool near_object, trk_pointer *p)
{
	trk_tracker_update(t, &s, 1, near_object, s.t_ns, p);
}

/* The clutch API alone: held while engaged, then relative. */
static void clutch_offset(void)
{
	trk_clutch c;
	trk_clutch_reset(&c);
	trk_pose cal = {.t_ns = 0, .position = {1, 2, 3}, .orientation = {0, 0, 0, 1}}, ptr;
	trk_clutch_apply(&c, &cal, &ptr);
	check_vec3("no offset", ptr.position, 1, 2, 3, 0);
	trk_clutch_engage(&c, cal.position);
	cal.position[0] = 0.0f; /* the hand moves back 1 m */
	trk_clutch_apply(&c, &cal, &ptr);
	check_vec3("held", ptr.position, 1, 2, 3, 0);
	check_vec3("offset while engaged", c.offset, 1, 0, 0, 0);
	trk_clutch_release(&c, cal.position);
	cal.position[1] = 2.5f; /* then up half a metre */
	trk_clutch_apply(&c, &cal, &ptr);
	check_vec3("relative after release", ptr.position, 1, 2.5, 3, 0);
	check_quat("orientation passes", ptr.orientation, 0, 0, 0, 1, 0);
}

/* Through the tracker with seed 002's mapping: device x is world x, device -z world y. */
static void clutch_keeps_pointer_continuous(void)
{
	trk_tracker_config cfg = trk_tracker_config_default();
	trk_tracker *t = new_tracker(&cfg);
	trk_pointer p;
	int64_t ms = 0;
	update1(t, sample(ms += 10 * MS, 0.00, 0, 0, NULL, 0), false, &p);
	check_vec3("start", p.position, 0, 0, 0, TOL);
	update1(t, sample(ms += 10 * MS, 0.10, 0, 0, NULL, 0), false, &p);
	check_vec3("moved", p.position, 0.10, 0, 0, TOL);

	/* press away from objects: the clutch engages where the pointer is */
	update1(t, sample(ms += 10 * MS, 0.10, 0, 0, NULL, 1), false, &p);
	CHECK(p.pressed && p.pressed_edge && p.clutched);
	/* the hand goes back and down (device +z is world -y) with the button held */
	for (int i = 1; i <= 10; i++) {
		update1(t, sample(ms += 10 * MS, 0.10 - 0.01 * i, 0, 0.002 * i, NULL, 1), false, &p);
		check_vec3("held while clutched", p.position, 0.10, 0, 0, TOL);
		CHECK(p.clutched && !p.pressed_edge);
	}
	/* release: no jump */
	update1(t, sample(ms += 10 * MS, 0.0, 0, 0.02, NULL, 0), false, &p);
	CHECK(p.released_edge && !p.clutched && !p.pressed);
	check_vec3("released", p.position, 0.10, 0, 0, TOL);
	/* motion resumes relative to the new origin: +5 cm device x, -3 cm device z */
	update1(t, sample(ms += 10 * MS, 0.05, 0, -0.01, NULL, 0), false, &p);
	check_vec3("relative", p.position, 0.15, 0.03, 0, TOL);

	/* a press near an object is a grab: no clutch, the pointer follows the hand */
	update1(t, sample(ms += 10 * MS, 0.05, 0, -0.01, NULL, 1), true, &p);
	CHECK(p.pressed_edge && !p.clutched);
	update1(t, sample(ms += 10 * MS, 0.07, 0, -0.01, NULL, 1), true, &p);
	check_vec3("grabbing", p.position, 0.17, 0.03, 0, TOL);
	update1(t, sample(ms += 10 * MS, 0.07, 0, -0.01, NULL, 0), true, &p);
	CHECK(p.released_edge);
	check_vec3("after the grab", p.position, 0.17, 0.03, 0, TOL);
}

/* A press that arrives with the first sample after a gap is a press (left to the caller:
 * a grab), whatever the caller's stale pick says; the next sample decides the clutch with
 * a pick made where the pointer is after the gap.  Seed 002's mapping throughout: device
 * x is world x. */
static void press_after_gap_is_a_press(void)
{
	trk_tracker_config cfg = trk_tracker_config_default();
	trk_tracker *t = new_tracker(&cfg);
	trk_pointer p;
	int64_t ms = 0;
	update1(t, sample(ms += 10 * MS, 0.00, 0, 0, NULL, 0), false, &p);
	update1(t, sample(ms += 10 * MS, 0.10, 0, 0, NULL, 0), false, &p);

	/* Unplugged (the device thread freezes the pointer with the driver's line); the
	 * hand moves onto an object and presses; the first sample back has the button down.
	 * The caller's pick is still the one from before the unplug: nothing near. */
	trk_tracker_freeze(t, "unplugged; waiting for it to return");
	update1(t, sample(ms += 2000 * MS, 0.30, 0, 0, NULL, 1), false, &p);
	CHECK(p.pressed && p.pressed_edge && !p.frozen);
	CHECK_MSG(!p.clutched, "a press with the first sample after the unplug engaged the clutch");
	check_vec3("after the unplug", p.position, 0.30, 0, 0, TOL);
	/* the caller grabbed with it: held, the pointer follows the hand */
	update1(t, sample(ms += 10 * MS, 0.32, 0, 0, NULL, 1), true, &p);
	CHECK(p.pressed && !p.pressed_edge && !p.clutched);
	check_vec3("grabbing", p.position, 0.32, 0, 0, TOL);
	update1(t, sample(ms += 10 * MS, 0.32, 0, 0, NULL, 0), true, &p);
	CHECK(p.released_edge && !p.clutched);

	/* A silence longer than the timeout with no update in between (the samples of one
	 * poll) is a gap too; here the caller grabs nothing with the press, so the next
	 * sample, button still down and still nothing near, engages the clutch where the
	 * pointer is then. */
	update1(t, sample(ms += cfg.timeout_ns + 10 * MS, 0.50, 0, 0, NULL, 1), false, &p);
	CHECK(p.pressed_edge && !p.clutched);
	check_vec3("after the silence", p.position, 0.50, 0, 0, TOL);
	update1(t, sample(ms += 10 * MS, 0.52, 0, 0, NULL, 1), false, &p);
	CHECK(p.clutched && !p.pressed_edge);
	check_vec3("clutched", p.position, 0.52, 0, 0, TOL);
	update1(t, sample(ms += 10 * MS, 0.60, 0, 0, NULL, 1), false, &p);
	check_vec3("held by the clutch", p.position, 0.52, 0, 0, TOL);
	update1(t, sample(ms += 10 * MS, 0.60, 0, 0, NULL, 0), false, &p);
	CHECK(p.released_edge && !p.clutched);

	/* Without a gap the caller's pick is one sample old and a press away from every
	 * object clutches at once, as before. */
	update1(t, sample(ms += 10 * MS, 0.60, 0, 0, NULL, 1), false, &p);
	CHECK(p.pressed_edge && p.clutched);
	update1(t, sample(ms += 10 * MS, 0.60, 0, 0, NULL, 0), false, &p);

	/* The very first sample has no pick before it at all: a press with it is a press. */
	t = new_tracker(&cfg);
	update1(t, sample(10 * MS, 0.30, 0, 0, NULL, 1), false, &p);
	CHECK(p.pressed_edge && !p.clutched);
}

/* ---- History ---------------------------------------------------------------------------- */

static trk_pose pose(int64_t t_ns, double x, double y, double z, const double q[4])
{
	trk_pose p = {.t_ns = t_ns, .position = {(float)x, (float)y, (float)z}, .orientation = {0, 0, 0, 1}};
	if (q)
		for (int i = 0; i < 4; i++)
			p.orientation[i] = (float)q[i];
	return p;
}

static trk_history history; /* 18 KB */

static bool push(trk_history *h, trk_pose p)
{
	return trk_history_push(h, &p);
}

static void filt(trk_filter *f, trk_pose in, trk_pose *out)
{
	trk_filter_apply(f, &in, out);
}

static void history_interpolation(void)
{
	trk_history *h = &history;
	trk_history_init(h, 50 * MS);
	trk_pose out;
	CHECK(trk_history_at(h, 0, &out) == TRK_HISTORY_EMPTY);
	CHECK(trk_history_newest(h) == NULL);
	/* linear motion at 1 m/s along x, 10 ms apart (0.01 m steps: 1 cm per sample) */
	for (int i = 0; i < 5; i++)
		CHECK(push(h, pose(100 * MS + i * 10 * MS, 0.01 * i, 1, 0, NULL)));
	for (int i = 0; i < 5; i++) {
		CHECK(trk_history_at(h, 100 * MS + i * 10 * MS, &out) == TRK_HISTORY_EXACT);
		CHECK(out.position[0] == (float)(0.01 * i) && out.position[1] == 1.0f);
		CHECK(out.t_ns == 100 * MS + i * 10 * MS);
	}
	/* the midpoint of a linear motion is exact: (0.01 + 0.02) / 2 */
	CHECK(trk_history_at(h, 115 * MS, &out) == TRK_HISTORY_INTERPOLATED);
	CHECK_NEAR(out.position[0], ((double)(float)0.01 + (double)(float)0.02) / 2, 1e-9);
	CHECK(out.t_ns == 115 * MS);
	/* a quarter of the way */
	CHECK(trk_history_at(h, 132500000, &out) == TRK_HISTORY_INTERPOLATED);
	CHECK_NEAR(out.position[0], 0.0325, 1e-8);

	/* prediction: 10 ms past the newest continues at 1 m/s; 200 ms past stops at 50 ms */
	CHECK(trk_history_at(h, 150 * MS, &out) == TRK_HISTORY_EXTRAPOLATED);
	CHECK_NEAR(out.position[0], 0.05, 1e-7);
	CHECK(trk_history_at(h, 340 * MS, &out) == TRK_HISTORY_EXTRAPOLATED);
	CHECK_NEAR(out.position[0], 0.09, 1e-7);
	CHECK(out.t_ns == 340 * MS);
	/* before the oldest: the oldest */
	CHECK(trk_history_at(h, 0, &out) == TRK_HISTORY_CLAMPED);
	CHECK(out.position[0] == 0.0f && out.t_ns == 100 * MS);

	/* duplicates and late samples are dropped and counted, and change nothing */
	CHECK(!push(h, pose(140 * MS, 9, 9, 9, NULL)));
	CHECK(!push(h, pose(125 * MS, 9, 9, 9, NULL)));
	CHECK(!push(h, pose(90 * MS, 9, 9, 9, NULL)));
	CHECK(h->dropped_duplicates == 1 && h->dropped_out_of_order == 2);
	CHECK(h->count == 5);
	CHECK(trk_history_at(h, 125 * MS, &out) == TRK_HISTORY_INTERPOLATED);
	CHECK_NEAR(out.position[0], 0.025, 1e-8);

	/* velocity over 20 ms of 1 m/s motion */
	float v[3];
	trk_history_velocity(h, 140 * MS, 20 * MS, v);
	check_vec3("velocity", v, 1, 0, 0, 1e-5);

	/* prediction off: hold the newest */
	h->max_extrapolation_ns = 0;
	CHECK(trk_history_at(h, 200 * MS, &out) == TRK_HISTORY_EXTRAPOLATED);
	CHECK(out.position[0] == (float)0.04);
}

/* Orientation: slerp between identity and a quarter turn about z is an eighth turn at the
 * midpoint, and the prediction keeps turning at the same rate (capped). */
static void history_orientation(void)
{
	trk_history *h = &history;
	trk_history_init(h, 50 * MS);
	const double qz[4] = {0, 0, H, H};
	push(h, pose(0, 0, 0, 0, NULL));
	push(h, pose(100 * MS, 0, 0, 0, qz));
	trk_pose out;
	trk_history_at(h, 50 * MS, &out);
	check_quat("eighth turn", out.orientation, 0, 0, sin(PI / 8), cos(PI / 8), TOL);
	/* 90 degrees per 100 ms: 50 ms more (the cap) is 135 degrees */
	trk_history_at(h, 400 * MS, &out);
	check_quat("predicted", out.orientation, 0, 0, sin(3 * PI / 8), cos(3 * PI / 8), TOL);
	/* the sign of a sample does not matter: -q is the same rotation */
	trk_history_init(h, 50 * MS);
	const double neg[4] = {0, 0, -H, -H};
	push(h, pose(0, 0, 0, 0, NULL));
	push(h, pose(100 * MS, 0, 0, 0, neg));
	trk_history_at(h, 50 * MS, &out);
	check_quat("shorter arc", out.orientation, 0, 0, sin(PI / 8), cos(PI / 8), TOL);
}

/* The ring keeps the newest TRK_HISTORY_CAPACITY poses. */
static void history_ring(void)
{
	trk_history *h = &history;
	trk_history_init(h, 50 * MS);
	int n = TRK_HISTORY_CAPACITY + 88;
	for (int i = 0; i < n; i++)
		push(h, pose(i * MS, i, 0, 0, NULL));
	CHECK(h->count == TRK_HISTORY_CAPACITY);
	trk_pose out;
	CHECK(trk_history_at(h, 0, &out) == TRK_HISTORY_CLAMPED);
	CHECK(out.position[0] == 88.0f);
	CHECK(trk_history_at(h, 300 * MS + MS / 2, &out) == TRK_HISTORY_INTERPOLATED);
	CHECK_NEAR(out.position[0], 300.5, 1e-4);
	CHECK(trk_history_newest(h)->position[0] == (float)(n - 1));
}

/* ---- One-euro filter -------------------------------------------------------------------- */

static trk_filter_params euro(double min_cutoff, double beta, double d_cutoff)
{
	trk_filter_params p = trk_filter_params_default();
	p.enabled = true;
	p.min_cutoff = (float)min_cutoff;
	p.beta = (float)beta;
	p.d_cutoff = (float)d_cutoff;
	return p;
}

/* alpha of a first-order low-pass with cutoff fc after dt, written out independently */
static double ref_alpha(double fc, double dt)
{
	double tau = 1.0 / (2.0 * PI * fc);
	return 1.0 / (1.0 + tau / dt);
}

static void filter_constant_passes(void)
{
	trk_filter_params prm = euro(1.0, 20.0, 1.0);
	prm.beta_rotation = 1.0f;
	trk_filter f;
	trk_filter_init(&f, &prm);
	const double q[4] = {0.1, 0.2, 0.3, 0.927361849549570};
	trk_pose in = pose(0, 0.123, -4.5, 6.75, q), out;
	for (int i = 0; i < 500; i++) {
		in.t_ns = i * 4 * MS + (i % 3) * MS; /* irregular intervals */
		trk_filter_apply(&f, &in, &out);
		CHECK(memcmp(out.position, in.position, sizeof out.position) == 0);
		check_quat("orientation", out.orientation, in.orientation[0], in.orientation[1], in.orientation[2],
		           in.orientation[3], 1e-6);
		CHECK(out.t_ns == in.t_ns);
	}
	/* disabled: a pass-through */
	prm.enabled = false;
	trk_filter_init(&f, &prm);
	trk_pose jump = pose(5, 1, 2, 3, NULL);
	trk_filter_apply(&f, &in, &out);
	trk_filter_apply(&f, &jump, &out);
	CHECK(memcmp(&out, &jump, sizeof out) == 0);
}

/* A step from 0 to 1 rises monotonically, never overshoots and settles; with irregular
 * intervals and beta = 0 it equals 1 - prod(1 - alpha(min_cutoff, dt_i)). */
static void filter_step_response(void)
{
	for (int run = 0; run < 2; run++) {
		double beta = run ? 20.0 : 0.0;
		trk_filter_params prm = euro(1.0, beta, 1.0);
		trk_filter f;
		trk_filter_init(&f, &prm);
		trk_pose out;
		filt(&f, pose(0, 0, 0, 0, NULL), &out);
		CHECK(out.position[0] == 0.0f); /* the first sample passes */
		double prev = 0.0, remaining = 1.0;
		int64_t t = 0;
		uint32_t seed = 12345;
		bool monotonic = true, bounded = true, matches = true;
		while (t < 4000 * MS) {
			seed = seed * 1664525u + 1013904223u;
			int64_t dt = 2 * MS + (int64_t)(seed >> 8) % (8 * MS); /* 2 to 10 ms */
			t += dt;
			filt(&f, pose(t, 1, 0, 0, NULL), &out);
			double y = out.position[0];
			monotonic &= y >= prev;
			bounded &= y <= 1.0;
			remaining *= 1.0 - ref_alpha(1.0, (double)dt * 1e-9);
			if (beta == 0.0)
				matches &= fabs(y - (1.0 - remaining)) < 1e-6;
			prev = y;
		}
		CHECK_MSG(monotonic && bounded, "beta %g", beta);
		CHECK_MSG(matches, "beta 0 differs from the closed form");
		CHECK_MSG(prev > 1.0 - 1e-6, "beta %g: settled at %.9g", beta, prev);
	}
	/* a repeated timestamp changes nothing */
	trk_filter_params prm = euro(1.0, 0.0, 1.0);
	trk_filter f;
	trk_filter_init(&f, &prm);
	trk_pose a, b;
	filt(&f, pose(0, 0, 0, 0, NULL), &a);
	filt(&f, pose(10 * MS, 1, 0, 0, NULL), &a);
	filt(&f, pose(10 * MS, 5, 0, 0, NULL), &b);
	CHECK(a.position[0] == b.position[0]);
	filt(&f, pose(5 * MS, 5, 0, 0, NULL), &b);
	CHECK(a.position[0] == b.position[0]);
}

/* White jitter on a still hand, beta = 0: the filter is y += a (x - y) with a constant
 * a = alpha(min_cutoff, dt), whose output variance is a / (2 - a) of the input's
 * (sum of (a (1-a)^k)^2).  At 240 Hz and 1 Hz that is about 0.013. */
static void filter_reduces_jitter(void)
{
	const double dt = 1.0 / 240.0, fc = 1.0;
	double a = ref_alpha(fc, dt);
	double bound = a / (2.0 - a);
	trk_filter_params prm = euro(fc, 0.0, 1.0);
	trk_filter f;
	trk_filter_init(&f, &prm);
	uint64_t s = 88172645463325252ull;
	double sum_in = 0, sum_in2 = 0, sum_out = 0, sum_out2 = 0;
	int n = 0;
	for (int i = 0; i < 60000; i++) {
		s ^= s << 13;
		s ^= s >> 7;
		s ^= s << 17;
		double noise = ((double)(s >> 11) / 9007199254740992.0 - 0.5) * 0.002; /* +-1 mm */
		trk_pose out;
		filt(&f, pose((int64_t)(i * dt * 1e9), 0.3 + noise, 1, 0, NULL), &out);
		if (i < 1000)
			continue; /* let the first sample's weight decay */
		double y = out.position[0] - 0.3;
		sum_in += noise;
		sum_in2 += noise * noise;
		sum_out += y;
		sum_out2 += y * y;
		n++;
	}
	double var_in = sum_in2 / n - (sum_in / n) * (sum_in / n);
	double var_out = sum_out2 / n - (sum_out / n) * (sum_out / n);
	double ratio = var_out / var_in;
	printf("jitter variance ratio %.5f, closed form %.5f\n", ratio, bound);
	CHECK_MSG(ratio < 1.25 * bound, "ratio %g, bound %g", ratio, bound);
	CHECK_MSG(ratio > 0.75 * bound, "ratio %g, bound %g (suspiciously low)", ratio, bound);

	/* with the default beta the still hand is still smoothed well below the input */
	prm = euro(fc, 20.0, 1.0);
	trk_filter_init(&f, &prm);
	sum_out = sum_out2 = 0;
	n = 0;
	s = 88172645463325252ull;
	for (int i = 0; i < 60000; i++) {
		s ^= s << 13;
		s ^= s >> 7;
		s ^= s << 17;
		double noise = ((double)(s >> 11) / 9007199254740992.0 - 0.5) * 0.002;
		trk_pose out;
		filt(&f, pose((int64_t)(i * dt * 1e9), 0.3 + noise, 1, 0, NULL), &out);
		if (i < 1000)
			continue;
		double y = out.position[0] - 0.3;
		sum_out += y;
		sum_out2 += y * y;
		n++;
	}
	var_out = sum_out2 / n - (sum_out / n) * (sum_out / n);
	CHECK_MSG(var_out / var_in < 0.25, "beta 20: ratio %g", var_out / var_in);
}

/* A ramp at v: the speed estimate settles at v, the cutoff at min_cutoff + beta v, and the
 * steady lag of y += a (x - y) behind x_n = x_{n-1} + v dt is v dt (1 - a) / a.
 * beta 20 Hz per m/s at 0.5 m/s lifts the cutoff from 1 to 11 Hz: lag 8 cm -> 7 mm. */
static void filter_beta_reduces_lag(void)
{
	const double dt = 1.0 / 240.0, v = 0.5, fc = 1.0;
	double lag[2];
	for (int run = 0; run < 2; run++) {
		double beta = run ? 20.0 : 0.0;
		trk_filter_params prm = euro(fc, beta, 1.0);
		trk_filter f;
		trk_filter_init(&f, &prm);
		trk_pose out;
		double x = 0;
		for (int i = 0; i <= 1200; i++) {
			x = v * dt * i;
			filt(&f, pose((int64_t)llround(i * dt * 1e9), x, 0, 0, NULL), &out);
		}
		lag[run] = x - out.position[0];
		double a = ref_alpha(fc + beta * v, dt);
		double expected = v * dt * (1.0 - a) / a;
		printf("beta %g: lag %.6f m, closed form %.6f m\n", beta, lag[run], expected);
		CHECK_NEAR(lag[run], expected, 2e-4 * expected + 1e-6);
	}
	CHECK(lag[1] < 0.2 * lag[0]);
}

/* ---- The pointer ------------------------------------------------------------------------ */

static void pointer_freezes_and_recovers(void)
{
	trk_tracker_config cfg = trk_tracker_config_default();
	trk_tracker *t = new_tracker(&cfg);
	trk_pointer p;
	trk_tracker_update(t, NULL, 0, false, 0, &p);
	CHECK(!p.valid && strstr(p.reason, "no sample yet"));

	/* 100 Hz at 0.5 m/s along device x up to 1 s */
	int64_t last = 0;
	for (int i = 0; i <= 100; i++) {
		last = i * 10 * MS;
		update1(t, sample(last, 0.005 * i, 0, 0, NULL, 1), true, &p);
	}
	CHECK(p.valid && !p.frozen && p.reason[0] == '\0');
	check_vec3("velocity", p.velocity, 0.5, 0, 0, 1e-4);
	check_vec3("position", p.position, 0.5, 0, 0, TOL);
	check_vec3("direction", p.direction, 1, 0, 0, TOL);
	CHECK(p.pressed && !p.pressed_edge);

	/* 200 ms without a sample: still live; 300 ms: frozen where it was, saying why */
	trk_tracker_update(t, NULL, 0, true, last + 200 * MS, &p);
	CHECK(!p.frozen);
	trk_tracker_update(t, NULL, 0, true, last + 300 * MS, &p);
	CHECK(p.valid && p.frozen);
	CHECK_MSG(strstr(p.reason, "no sample from the tracker for 300 ms") != NULL, "%s", p.reason);
	check_vec3("frozen position", p.position, 0.5, 0, 0, TOL);
	check_vec3("frozen velocity", p.velocity, 0, 0, 0, 0);
	CHECK(p.pressed); /* the button as last seen */

	/* a sample brings it back, with a fresh history (no motion invented across the gap) */
	update1(t, sample(last + 400 * MS, 0.8, 0, 0, NULL, 1), true, &p);
	CHECK(p.valid && !p.frozen && p.reason[0] == '\0');
	check_vec3("recovered", p.position, 0.8, 0, 0, TOL);
	check_vec3("velocity after the gap", p.velocity, 0, 0, 0, 0);
	CHECK(!p.pressed_edge && p.pressed);

	/* the app freezes it with the source's own reason; the next sample clears it */
	trk_tracker_freeze(t, "Polhemus PATRIOT at 1-2: unplugged");
	trk_tracker_update(t, NULL, 0, true, last + 410 * MS, &p);
	CHECK(p.frozen && strcmp(p.reason, "Polhemus PATRIOT at 1-2: unplugged") == 0);
	trk_tracker_update(t, NULL, 0, true, last + 900 * MS, &p);
	CHECK_MSG(strcmp(p.reason, "Polhemus PATRIOT at 1-2: unplugged") == 0, "%s", p.reason);
	update1(t, sample(last + 1000 * MS, 0.9, 0, 0, NULL, 1), true, &p);
	CHECK(!p.frozen && p.reason[0] == '\0');
}

/* Edges within one update, other stations, late samples. */
static void pointer_edges_and_sensors(void)
{
	trk_tracker_config cfg = trk_tracker_config_default();
	cfg.sensor = 1;
	trk_tracker *t = new_tracker(&cfg);
	trk_pointer p;
	dev_sample batch[4] = {
		sample(10 * MS, 0, 0, 0, NULL, 0),
		sample(20 * MS, 0, 0, 0, NULL, 1),
		sample(25 * MS, 5, 5, 5, NULL, 1),
		sample(30 * MS, 0, 0, 0, NULL, 0),
	};
	batch[2].sensor = 2; /* the camera station: ignored */
	trk_tracker_update(t, batch, 4, true, 30 * MS, &p);
	CHECK(p.pressed_edge && p.released_edge && !p.pressed); /* a click within one poll */
	check_vec3("station 2 ignored", p.position, 0, 0, 0, TOL);
	CHECK(t->other_sensors == 1);

	/* a late and a duplicate sample: dropped, counted, the button untouched */
	dev_sample late[2] = {sample(15 * MS, 1, 1, 1, NULL, 1), sample(30 * MS, 1, 1, 1, NULL, 1)};
	trk_tracker_update(t, late, 2, true, 31 * MS, &p);
	CHECK(!p.pressed && !p.pressed_edge);
	check_vec3("late ignored", p.position, 0, 0, 0, TOL);
	CHECK(t->history.dropped_out_of_order == 1 && t->history.dropped_duplicates == 1);

	/* a press held over several updates gives one edge */
	update1(t, sample(40 * MS, 0, 0, 0, NULL, 1), true, &p);
	CHECK(p.pressed && p.pressed_edge);
	update1(t, sample(50 * MS, 0, 0, 0, NULL, 1), true, &p);
	CHECK(p.pressed && !p.pressed_edge && !p.released_edge);
}

/* The filter in the tracker: the pointer lags a step and the clutch still holds it
 * exactly. */
static void pointer_with_filter(void)
{
	trk_tracker_config cfg = trk_tracker_config_default();
	cfg.filter.enabled = true;
	trk_tracker *t = new_tracker(&cfg);
	trk_pointer p;
	update1(t, sample(0, 0, 0, 0, NULL, 0), false, &p);
	update1(t, sample(10 * MS, 0.1, 0, 0, NULL, 0), false, &p);
	CHECK(p.position[0] > 0.0f && p.position[0] < 0.1f);
	float held = p.position[0];
	update1(t, sample(20 * MS, 0.1, 0, 0, NULL, 1), false, &p);
	held = p.position[0];
	for (int i = 3; i < 50; i++) {
		update1(t, sample(i * 10 * MS, 0.1 - 0.002 * i, 0, 0, NULL, 1), false, &p);
		CHECK(p.clutched && p.position[0] == held);
	}
}

static const test_case tests[] = {
	TEST(calibration_default_mapping),
	TEST(calibration_rotated_tip),
	TEST(calibration_rotation_composition),
	TEST(calibration_scale),
	TEST(calibration_file_good),
	TEST(calibration_file_bad),
	TEST(clutch_offset),
	TEST(clutch_keeps_pointer_continuous),
	TEST(press_after_gap_is_a_press),
	TEST(history_interpolation),
	TEST(history_orientation),
	TEST(history_ring),
	TEST(filter_constant_passes),
	TEST(filter_step_response),
	TEST(filter_reduces_jitter),
	TEST(filter_beta_reduces_lag),
	TEST(pointer_freezes_and_recovers),
	TEST(pointer_edges_and_sensors),
	TEST(pointer_with_filter),
};
TEST_MAIN(tests)
