/* The one-euro filter (Casiez, Roussel and Vogel, CHI 2012) on position and orientation,
 * with dt taken from the samples' timestamps so that irregular intervals are handled. */
#include "tracking/tracking.h"

#include "trk_math.h"

#include <string.h>

#define TWO_PI 6.28318530717958647692

trk_filter_params trk_filter_params_default(void)
{
	return (trk_filter_params){
		.enabled = false,
		.min_cutoff = 1.0f,
		.beta = 20.0f,
		.d_cutoff = 1.0f,
		.beta_rotation = 0.5f,
	};
}

void trk_filter_init(trk_filter *filter, const trk_filter_params *params)
{
	memset(filter, 0, sizeof *filter);
	filter->params = *params;
}

void trk_filter_reset(trk_filter *filter)
{
	filter->started = false;
}

/* The smoothing factor of an exponential low-pass with cutoff fc sampled after dt: the
 * discrete form of tau dx/dt = u - x with tau = 1 / (2 pi fc).  Always in (0, 1), so the
 * output never overshoots the input. */
static double alpha(double cutoff_hz, double dt)
{
	double r = TWO_PI * cutoff_hz * dt;
	return r / (1.0 + r);
}

static void write_out(const trk_filter *f, int64_t t_ns, trk_pose *out)
{
	out->t_ns = t_ns;
	tm_to_float3(f->x_hat, out->position);
	tm_to_float4(f->q_hat, out->orientation);
}

void trk_filter_apply(trk_filter *filter, const trk_pose *in, trk_pose *out)
{
	const trk_filter_params *p = &filter->params;
	if (!p->enabled) {
		*out = *in;
		return;
	}
	double x[3], q[4];
	tm_from_float3(in->position, x);
	tm_from_float4(in->orientation, q);
	tm_qnormalize(q);
	if (!filter->started) {
		memcpy(filter->x_hat, x, sizeof x);
		memcpy(filter->x_prev, x, sizeof x);
		memset(filter->dx_hat, 0, sizeof filter->dx_hat);
		memcpy(filter->q_hat, q, sizeof q);
		memcpy(filter->q_prev, q, sizeof q);
		filter->w_hat = 0.0;
		filter->t_prev_ns = in->t_ns;
		filter->started = true;
		*out = *in;
		return;
	}
	if (in->t_ns <= filter->t_prev_ns) {
		/* no time has passed: there is no rate to adapt to, keep the estimate */
		write_out(filter, in->t_ns, out);
		return;
	}
	double dt = (double)(in->t_ns - filter->t_prev_ns) * 1e-9;
	double a_d = alpha(p->d_cutoff, dt);

	/* The speed comes from successive raw samples, not from the lagging estimate, so that
	 * the cutoff tracks the hand's speed rather than the filter's own error. */
	double speed2 = 0.0;
	for (int i = 0; i < 3; i++) {
		double dx = (x[i] - filter->x_prev[i]) / dt;
		filter->dx_hat[i] += a_d * (dx - filter->dx_hat[i]);
		speed2 += filter->dx_hat[i] * filter->dx_hat[i];
	}
	double a = alpha((double)p->min_cutoff + (double)p->beta * sqrt(speed2), dt);
	for (int i = 0; i < 3; i++) {
		filter->x_hat[i] += a * (x[i] - filter->x_hat[i]);
		filter->x_prev[i] = x[i];
	}

	double w = tm_qangle(filter->q_prev, q) / dt;
	filter->w_hat += a_d * (w - filter->w_hat);
	double a_r = alpha((double)p->min_cutoff + (double)p->beta_rotation * filter->w_hat, dt);
	double target[4];
	double sign = tm_dot4(filter->q_hat, q) < 0.0 ? -1.0 : 1.0; /* the shorter way round */
	for (int i = 0; i < 4; i++)
		target[i] = filter->q_hat[i] + a_r * (sign * q[i] - filter->q_hat[i]);
	tm_qnormalize(target);
	memcpy(filter->q_hat, target, sizeof target);
	memcpy(filter->q_prev, q, sizeof q);
	filter->t_prev_ns = in->t_ns;
	write_out(filter, in->t_ns, out);
}
