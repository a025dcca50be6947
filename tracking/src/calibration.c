/* Calibration: the device-to-world transform, the axis-mapping notation and the
 * calibration file reader. */
#include "tracking/tracking.h"

#include "trk_math.h"

#include <ctype.h>
#include <errno.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* A calibration file is a handful of lines; anything bigger is the wrong file. */
#define MAX_FILE_BYTES 65536
/* Positions beyond these are typing mistakes, not rooms. */
#define LIMIT_TRANSLATION 1.0e4
#define LIMIT_TIP 10.0
#define LIMIT_SCALE 1.0e4
/* How far from unit a typed quaternion may be: four decimals of sqrt(1/2) are 1e-5 off. */
#define UNIT_TOLERANCE 1.0e-3

trk_calibration trk_calibration_default(void)
{
	trk_calibration c;
	memset(&c, 0, sizeof c);
	/* world = (x, -z, y): a quarter turn about +x sends device y to world z and device z
	 * to world -y */
	float h = (float)sqrt(0.5);
	c.rotation[0] = h;
	c.rotation[1] = 0.0f;
	c.rotation[2] = 0.0f;
	c.rotation[3] = h;
	c.scale = 1.0f;
	return c;
}

/* The calibration rotation as a unit quaternion in double: float storage leaves sqrt(1/2)
 * slightly short, and renormalising makes the axis mappings exact again. */
static void cal_rotation(const trk_calibration *cal, double r[4])
{
	tm_from_float4(cal->rotation, r);
	tm_qnormalize(r);
}

void trk_calibrate(const trk_calibration *cal, const dev_sample *sample, trk_pose *out)
{
	double r[4], q[4], p[3], tip[3], tip_dev[3], v[3], w[3], qw[4];
	cal_rotation(cal, r);
	tm_from_float4(sample->orientation, q);
	tm_qnormalize(q);
	tm_from_float3(sample->position, p);
	tm_from_float3(cal->tip, tip);

	tm_qrotate(q, tip, tip_dev);
	for (int i = 0; i < 3; i++)
		v[i] = p[i] + tip_dev[i];
	tm_qrotate(r, v, w);
	for (int i = 0; i < 3; i++)
		w[i] = (double)cal->translation[i] + (double)cal->scale * w[i];

	tm_qmul(r, q, qw);
	tm_qnormalize(qw);
	out->t_ns = sample->t_ns;
	tm_to_float3(w, out->position);
	tm_to_float4(qw, out->orientation);
}

void trk_tip_direction(const trk_calibration *cal, const float world_orientation[4], float out[3])
{
	double d[3], q[4], w[3];
	tm_from_float3(cal->tip, d);
	double n = sqrt(tm_dot3(d, d));
	if (n > 0.0) {
		for (int i = 0; i < 3; i++)
			d[i] /= n;
	} else {
		d[0] = 1.0;
		d[1] = d[2] = 0.0;
	}
	tm_from_float4(world_orientation, q);
	tm_qnormalize(q);
	tm_qrotate(q, d, w);
	tm_to_float3(w, out);
}

/* ---- Axis mappings ---------------------------------------------------------------------- */

/* One signed axis token: "x", "+y", "-z". */
static bool parse_axis(const char *s, size_t n, int *axis, int *sign)
{
	*sign = 1;
	if (n == 2 && (s[0] == '+' || s[0] == '-')) {
		*sign = s[0] == '-' ? -1 : 1;
		s++;
		n--;
	}
	if (n != 1)
		return false;
	char c = (char)tolower((unsigned char)s[0]);
	if (c < 'x' || c > 'z')
		return false;
	*axis = c - 'x';
	return true;
}

/* The rotation matrix m (world = m * device) as a unit quaternion, branching on the
 * largest diagonal term so that the square root is never of a small number. */
static void matrix_to_quaternion(const double m[3][3], double q[4])
{
	double trace = m[0][0] + m[1][1] + m[2][2];
	if (trace > 0.0) {
		double s = 2.0 * sqrt(trace + 1.0);
		q[3] = 0.25 * s;
		q[0] = (m[2][1] - m[1][2]) / s;
		q[1] = (m[0][2] - m[2][0]) / s;
		q[2] = (m[1][0] - m[0][1]) / s;
	} else if (m[0][0] >= m[1][1] && m[0][0] >= m[2][2]) {
		double s = 2.0 * sqrt(1.0 + m[0][0] - m[1][1] - m[2][2]);
		q[3] = (m[2][1] - m[1][2]) / s;
		q[0] = 0.25 * s;
		q[1] = (m[0][1] + m[1][0]) / s;
		q[2] = (m[0][2] + m[2][0]) / s;
	} else if (m[1][1] >= m[2][2]) {
		double s = 2.0 * sqrt(1.0 + m[1][1] - m[0][0] - m[2][2]);
		q[3] = (m[0][2] - m[2][0]) / s;
		q[0] = (m[0][1] + m[1][0]) / s;
		q[1] = 0.25 * s;
		q[2] = (m[1][2] + m[2][1]) / s;
	} else {
		double s = 2.0 * sqrt(1.0 + m[2][2] - m[0][0] - m[1][1]);
		q[3] = (m[1][0] - m[0][1]) / s;
		q[0] = (m[0][2] + m[2][0]) / s;
		q[1] = (m[1][2] + m[2][1]) / s;
		q[2] = 0.25 * s;
	}
	/* q and -q are the same rotation: keep w >= 0 so equal mappings compare equal */
	if (q[3] < 0.0)
		for (int i = 0; i < 4; i++)
			q[i] = -q[i];
	tm_qnormalize(q);
}

typedef enum axes_status { AXES_OK, AXES_SYNTAX, AXES_REPEAT, AXES_MIRROR } axes_status;

static axes_status axes_from_tokens(const char *const tok[3], const size_t len[3], double q[4])
{
	double m[3][3] = {{0}};
	bool used[3] = {false, false, false};
	for (int i = 0; i < 3; i++) {
		int axis, sign;
		if (!parse_axis(tok[i], len[i], &axis, &sign))
			return AXES_SYNTAX;
		if (used[axis])
			return AXES_REPEAT;
		used[axis] = true;
		m[i][axis] = sign;
	}
	double det = m[0][0] * (m[1][1] * m[2][2] - m[1][2] * m[2][1]) -
	             m[0][1] * (m[1][0] * m[2][2] - m[1][2] * m[2][0]) +
	             m[0][2] * (m[1][0] * m[2][1] - m[1][1] * m[2][0]);
	if (det < 0.0)
		return AXES_MIRROR;
	matrix_to_quaternion(m, q);
	return AXES_OK;
}

/* Splits s at blanks into at most max tokens (pointers into s, with lengths); returns the
 * count, or max + 1 when there are more. */
static int split_blanks(const char *s, const char **tok, size_t *len, int max)
{
	int n = 0;
	while (*s) {
		while (*s == ' ' || *s == '\t' || *s == '\r')
			s++;
		if (!*s)
			break;
		const char *start = s;
		while (*s && *s != ' ' && *s != '\t' && *s != '\r')
			s++;
		if (n == max)
			return max + 1;
		tok[n] = start;
		len[n] = (size_t)(s - start);
		n++;
	}
	return n;
}

bool trk_axes_to_quaternion(const char *axes, float out[4])
{
	const char *tok[3];
	size_t len[3];
	double q[4];
	if (split_blanks(axes, tok, len, 3) != 3 || axes_from_tokens(tok, len, q) != AXES_OK)
		return false;
	tm_to_float4(q, out);
	return true;
}

/* ---- The file reader -------------------------------------------------------------------- */

static bool fail(char *error, int error_size, const char *fmt, ...) __attribute__((format(printf, 3, 4)));
static bool fail(char *error, int error_size, const char *fmt, ...)
{
	if (error && error_size > 0) {
		va_list ap;
		va_start(ap, fmt);
		vsnprintf(error, (size_t)error_size, fmt, ap);
		va_end(ap);
	}
	return false;
}

/* A plain decimal number, all of the token: strtod alone would also take "nan", "inf",
 * hexadecimal and a leading blank, none of which belongs in a calibration. */
static bool parse_number(const char *s, size_t n, double limit, double *out)
{
	char buf[64];
	if (n == 0 || n >= sizeof buf)
		return false;
	for (size_t i = 0; i < n; i++)
		if (!strchr("0123456789+-.eE", s[i]))
			return false;
	memcpy(buf, s, n);
	buf[n] = '\0';
	char *end;
	errno = 0;
	double v = strtod(buf, &end);
	if (end != buf + n || errno == ERANGE || !isfinite(v) || fabs(v) > limit)
		return false;
	*out = v;
	return true;
}

enum { KEY_ROTATION, KEY_TRANSLATION, KEY_SCALE, KEY_TIP, KEY_COUNT };
static const char *const key_names[KEY_COUNT] = {"rotation", "translation", "scale", "tip"};

/* Reads `count` numbers for `key` into out, or says what is wrong. */
static bool numbers(const char *name, int line, const char *key, const char *const *tok, const size_t *len,
                    int got, int count, double limit, double *out, char *error, int error_size)
{
	if (got != count)
		return fail(error, error_size, "%s:%d: %s: expected %d number%s, got %s%d", name, line, key, count,
		            count == 1 ? "" : "s", got > 4 ? "more than " : "", got > 4 ? 4 : got);
	for (int i = 0; i < count; i++)
		if (!parse_number(tok[i], len[i], limit, &out[i]))
			return fail(error, error_size, "%s:%d: %s: '%.*s' is not a number within +-%g", name, line, key,
			            (int)(len[i] > 40 ? 40 : len[i]), tok[i], limit);
	return true;
}

static bool parse_line(const char *name, int line, char *text, trk_calibration *cal, int seen[KEY_COUNT],
                       char *error, int error_size)
{
	char *hash = strchr(text, '#');
	if (hash)
		*hash = '\0';
	char *s = text;
	while (*s == ' ' || *s == '\t' || *s == '\r')
		s++;
	if (!*s)
		return true;
	char *eq = strchr(s, '=');
	if (!eq)
		return fail(error, error_size, "%s:%d: expected 'key = values'", name, line);
	char *kend = eq;
	while (kend > s && (kend[-1] == ' ' || kend[-1] == '\t'))
		kend--;
	size_t klen = (size_t)(kend - s);
	if (klen == 0)
		return fail(error, error_size, "%s:%d: no key before '='", name, line);
	int key = -1;
	for (int k = 0; k < KEY_COUNT; k++)
		if (strlen(key_names[k]) == klen && strncmp(s, key_names[k], klen) == 0)
			key = k;
	if (key < 0)
		return fail(error, error_size,
		            "%s:%d: unknown key '%.*s' (expected rotation, translation, scale or tip)", name, line,
		            (int)(klen > 40 ? 40 : klen), s);
	if (seen[key])
		return fail(error, error_size, "%s:%d: %s given twice (first on line %d)", name, line, key_names[key],
		            seen[key]);
	seen[key] = line;

	const char *tok[5];
	size_t len[5];
	int got = split_blanks(eq + 1, tok, len, 4);
	const char *kn = key_names[key];
	double v[4];
	switch (key) {
	case KEY_ROTATION:
		if (got == 3) {
			double q[4];
			switch (axes_from_tokens(tok, len, q)) {
			case AXES_OK:
				break;
			case AXES_SYNTAX:
				return fail(error, error_size,
				            "%s:%d: rotation: three values are an axis mapping such as 'x -z y' "
				            "(each x, y or z with an optional sign)",
				            name, line);
			case AXES_REPEAT:
				return fail(error, error_size, "%s:%d: rotation: the axis mapping repeats an axis", name,
				            line);
			case AXES_MIRROR:
				return fail(error, error_size,
				            "%s:%d: rotation: the axis mapping is a mirror, not a rotation (flip one sign)",
				            name, line);
			}
			tm_to_float4(q, cal->rotation);
			return true;
		}
		if (got != 4)
			return fail(error, error_size,
			            "%s:%d: rotation: expected an axis mapping such as 'x -z y' or a quaternion 'x y z w'",
			            name, line);
		if (!numbers(name, line, kn, tok, len, got, 4, 2.0, v, error, error_size))
			return false;
		double norm = sqrt(tm_dot4(v, v));
		if (fabs(norm - 1.0) > UNIT_TOLERANCE)
			return fail(error, error_size, "%s:%d: rotation: not a unit quaternion (its length is %g)", name,
			            line, norm);
		tm_qnormalize(v);
		tm_to_float4(v, cal->rotation);
		return true;
	case KEY_TRANSLATION:
		if (!numbers(name, line, kn, tok, len, got, 3, LIMIT_TRANSLATION, v, error, error_size))
			return false;
		tm_to_float3(v, cal->translation);
		return true;
	case KEY_SCALE:
		if (!numbers(name, line, kn, tok, len, got, 1, LIMIT_SCALE, v, error, error_size))
			return false;
		if (!(v[0] > 0.0))
			return fail(error, error_size, "%s:%d: scale: must be positive, got %g", name, line, v[0]);
		cal->scale = (float)v[0];
		return true;
	default:
		if (!numbers(name, line, kn, tok, len, got, 3, LIMIT_TIP, v, error, error_size))
			return false;
		tm_to_float3(v, cal->tip);
		return true;
	}
}

bool trk_calibration_parse(const char *text, const char *name, trk_calibration *out, char *error, int error_size)
{
	trk_calibration cal = trk_calibration_default();
	int seen[KEY_COUNT] = {0};
	char buf[512];
	int line = 0;
	const char *p = text;
	while (*p) {
		line++;
		const char *end = strchr(p, '\n');
		size_t n = end ? (size_t)(end - p) : strlen(p);
		if (n >= sizeof buf)
			return fail(error, error_size, "%s:%d: line longer than %d characters", name, line,
			            (int)sizeof buf - 1);
		memcpy(buf, p, n);
		buf[n] = '\0';
		if (!parse_line(name, line, buf, &cal, seen, error, error_size))
			return false;
		p += n;
		if (*p == '\n')
			p++;
	}
	*out = cal;
	if (error && error_size > 0)
		error[0] = '\0';
	return true;
}

bool trk_calibration_load(const char *path, trk_calibration *out, char *error, int error_size)
{
	FILE *f = fopen(path, "rb");
	if (!f)
		return fail(error, error_size, "%s: cannot open: %s", path, strerror(errno));
	char *data = malloc(MAX_FILE_BYTES + 1);
	if (!data) {
		fclose(f);
		return fail(error, error_size, "%s: out of memory", path);
	}
	size_t n = fread(data, 1, MAX_FILE_BYTES + 1, f);
	bool read_error = ferror(f) != 0;
	fclose(f);
	if (read_error) {
		free(data);
		return fail(error, error_size, "%s: cannot read", path);
	}
	if (n > MAX_FILE_BYTES) {
		free(data);
		return fail(error, error_size, "%s: larger than %d bytes, not a calibration file", path, MAX_FILE_BYTES);
	}
	data[n] = '\0';
	/* a NUL would silently end the text early: name its line instead */
	size_t text_len = strlen(data);
	if (text_len < n) {
		int line = 1;
		for (size_t i = 0; i < text_len; i++)
			line += data[i] == '\n';
		free(data);
		return fail(error, error_size, "%s:%d: a NUL byte: not a text file", path, line);
	}
	bool ok = trk_calibration_parse(data, path, out, error, error_size);
	free(data);
	return ok;
}
