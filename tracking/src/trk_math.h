/* Small vector and quaternion helpers in double precision: samples are floats, but the
 * compositions (calibration, slerp, filter state) are done in double so that exact
 * hand-computed values in the tests stay exact after rounding back to float.
 * Quaternions are x y z w, as in dev_sample and cglm. */
#ifndef TELA_TRACKING_MATH_H
#define TELA_TRACKING_MATH_H

#include <math.h>

static inline void tm_cross(const double a[3], const double b[3], double out[3])
{
	double x = a[1] * b[2] - a[2] * b[1];
	double y = a[2] * b[0] - a[0] * b[2];
	double z = a[0] * b[1] - a[1] * b[0];
	out[0] = x;
	out[1] = y;
	out[2] = z;
}

static inline double tm_dot3(const double a[3], const double b[3])
{
	return a[0] * b[0] + a[1] * b[1] + a[2] * b[2];
}

static inline double tm_dot4(const double a[4], const double b[4])
{
	return a[0] * b[0] + a[1] * b[1] + a[2] * b[2] + a[3] * b[3];
}

/* a * b: b's rotation first, then a's. */
static inline void tm_qmul(const double a[4], const double b[4], double out[4])
{
	double x = a[3] * b[0] + a[0] * b[3] + a[1] * b[2] - a[2] * b[1];
	double y = a[3] * b[1] - a[0] * b[2] + a[1] * b[3] + a[2] * b[0];
	double z = a[3] * b[2] + a[0] * b[1] - a[1] * b[0] + a[2] * b[3];
	double w = a[3] * b[3] - a[0] * b[0] - a[1] * b[1] - a[2] * b[2];
	out[0] = x;
	out[1] = y;
	out[2] = z;
	out[3] = w;
}

static inline void tm_qconj(const double q[4], double out[4])
{
	out[0] = -q[0];
	out[1] = -q[1];
	out[2] = -q[2];
	out[3] = q[3];
}

/* v' = v + w t + u x t with t = 2 u x v: the unit-quaternion sandwich q v q* without
 * building the matrix. */
static inline void tm_qrotate(const double q[4], const double v[3], double out[3])
{
	double u[3] = {q[0], q[1], q[2]}, t[3], ut[3];
	tm_cross(u, v, t);
	t[0] *= 2.0;
	t[1] *= 2.0;
	t[2] *= 2.0;
	tm_cross(u, t, ut);
	out[0] = v[0] + q[3] * t[0] + ut[0];
	out[1] = v[1] + q[3] * t[1] + ut[1];
	out[2] = v[2] + q[3] * t[2] + ut[2];
}

/* Normalises in place; a zero quaternion becomes the identity rather than NaN. */
static inline void tm_qnormalize(double q[4])
{
	double n = sqrt(tm_dot4(q, q));
	if (!(n > 0.0)) {
		q[0] = q[1] = q[2] = 0.0;
		q[3] = 1.0;
		return;
	}
	for (int i = 0; i < 4; i++)
		q[i] /= n;
}

/* The rotation angle (0..pi) from a to b along the shorter arc. */
static inline double tm_qangle(const double a[4], const double b[4])
{
	double d = fabs(tm_dot4(a, b));
	if (d > 1.0)
		d = 1.0;
	return 2.0 * acos(d);
}

/* a toward b by u along the shorter arc (q and -q are the same rotation).  u outside
 * [0, 1] extrapolates at the same angular velocity, which the history's prediction uses. */
static inline void tm_qslerp(const double a[4], const double b[4], double u, double out[4])
{
	double bb[4] = {b[0], b[1], b[2], b[3]};
	if (tm_dot4(a, bb) < 0.0)
		for (int i = 0; i < 4; i++)
			bb[i] = -bb[i];
	double ai[4], d[4];
	tm_qconj(a, ai);
	tm_qmul(ai, bb, d); /* the relative rotation, w >= 0 */
	double s = sqrt(d[0] * d[0] + d[1] * d[1] + d[2] * d[2]);
	double half = atan2(s, d[3]);
	if (s < 1e-12) {
		/* no measurable rotation: a linear blend is as good and avoids 0 / 0 */
		for (int i = 0; i < 4; i++)
			out[i] = a[i] + u * (bb[i] - a[i]);
		tm_qnormalize(out);
		return;
	}
	double k = sin(u * half) / s;
	double p[4] = {d[0] * k, d[1] * k, d[2] * k, cos(u * half)};
	tm_qmul(a, p, out);
	tm_qnormalize(out);
}

static inline void tm_from_float3(const float f[3], double out[3])
{
	out[0] = f[0];
	out[1] = f[1];
	out[2] = f[2];
}

static inline void tm_from_float4(const float f[4], double out[4])
{
	out[0] = f[0];
	out[1] = f[1];
	out[2] = f[2];
	out[3] = f[3];
}

static inline void tm_to_float3(const double d[3], float out[3])
{
	out[0] = (float)d[0];
	out[1] = (float)d[1];
	out[2] = (float)d[2];
}

static inline void tm_to_float4(const double d[4], float out[4])
{
	out[0] = (float)d[0];
	out[1] = (float)d[1];
	out[2] = (float)d[2];
	out[3] = (float)d[3];
}

#endif
