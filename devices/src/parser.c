/* The Polhemus binary record parser: a pure function over bytes (no I/O, no clock), so
 * the USB driver, replay and the synthetic device all share it and tests and the fuzzer
 * can drive it directly.  Layout and protocol facts: ../shared/reference/polhemus-usb.md
 * sections 5-8; what tela configures: docs/devices.md, "The Polhemus record". */
#include "devices/polhemus.h"

#include <math.h>
#include <string.h>

/* Offsets inside one record of the output list O*,2,7,9,10,1. */
enum {
	OFF_STATION = 2,
	OFF_CMD = 3,
	OFF_ERROR = 4,
	OFF_SIZE = 6,
	OFF_POSITION = 8,
	OFF_QUAT = 20,
	OFF_FRAME = 36,
	OFF_STYLUS = 40,
	OFF_CRLF = 44,
};

enum { POL_MAX_STATION = 16 };

/* A backwards jump of the frame counter larger than this is a device restart, not a
 * wrap: counting it as four billion dropped frames would drown the real figure. */
#define POL_FRAME_RESET_GAP 0x80000000u

/* Quaternions whose squared norm is this close to 1 are left untouched, so that a unit
 * quaternion survives pol_encode + pol_parse bit-exact; anything further is rescaled. */
#define POL_UNIT_TOLERANCE 1e-6

/* Liveness probe, stop streaming, binary, centimetres, the hemisphere above a source on
 * the table, the output list, stream (reference section 5 "Recommended sequence"). */
const char *const pol_init_commands[] = {
	"\r", "P", "F1\r", "U1\r", "H*,0,0,-1\r", "O*,2,7,9,10,1\r", "C\r",
};
const int pol_init_command_count = (int)(sizeof pol_init_commands / sizeof pol_init_commands[0]);

void pol_parser_init(pol_parser *p)
{
	memset(p, 0, sizeof *p);
}

void pol_parser_restart(pol_parser *p)
{
	p->pending_count = 0;
	memset(p->have_frame, 0, sizeof p->have_frame);
}

static uint16_t get_u16(const uint8_t *b)
{
	return (uint16_t)(b[0] | (b[1] << 8));
}

static uint32_t get_u32(const uint8_t *b)
{
	return (uint32_t)b[0] | ((uint32_t)b[1] << 8) | ((uint32_t)b[2] << 16) | ((uint32_t)b[3] << 24);
}

/* The wire is little-endian whatever the host is, so floats go through their bits. */
static float get_f32(const uint8_t *b)
{
	uint32_t u = get_u32(b);
	float f;
	memcpy(&f, &u, sizeof f);
	return f;
}

static void put_u16(uint8_t *b, uint16_t v)
{
	b[0] = (uint8_t)v;
	b[1] = (uint8_t)(v >> 8);
}

static void put_u32(uint8_t *b, uint32_t v)
{
	for (int i = 0; i < 4; i++)
		b[i] = (uint8_t)(v >> (8 * i));
}

static void put_f32(uint8_t *b, float f)
{
	uint32_t u;
	memcpy(&u, &f, sizeof u);
	put_u32(b, u);
}

/* Could b (n bytes available) be the start of a record?  Checks only what is there, so
 * that a partial header already rules out most garbage. */
static bool plausible_start(const uint8_t *b, size_t n)
{
	if (n >= 1 && b[0] != 'P' && b[0] != 'L')
		return false;
	if (n >= 2) {
		uint16_t pre = get_u16(b);
		if (pre != 0x4150 && pre != 0x594C && pre != 0x554C) /* "PA", "LY", "LU" */
			return false;
	}
	if (n > OFF_STATION && (b[OFF_STATION] < 1 || b[OFF_STATION] > POL_MAX_STATION))
		return false;
	if (n > OFF_CMD && b[OFF_CMD] != 'P' && b[OFF_CMD] != 'C')
		return false;
	if (n >= OFF_SIZE + 2 && get_u16(b + OFF_SIZE) != POL_RECORD_SIZE_FIELD)
		return false;
	return true;
}

/* The one conversion from the wire's centimetres; pol_encode inverts exactly this. */
static float cm_to_m(float cm)
{
	return (float)((double)cm / 100.0);
}

/* Decodes the pose of a framed record (header and trailer checked).  False when it is
 * not a usable pose (non-finite or degenerate values): the caller treats the bytes as
 * garbage. */
static bool decode(const uint8_t *b, dev_sample *s)
{
	float pos[3], q[4];
	for (int i = 0; i < 3; i++)
		pos[i] = get_f32(b + OFF_POSITION + 4 * i);
	for (int i = 0; i < 4; i++)
		q[i] = get_f32(b + OFF_QUAT + 4 * i); /* w x y z on the wire */
	double n2 = 0.0;
	for (int i = 0; i < 3; i++)
		if (!isfinite(pos[i]))
			return false;
	for (int i = 0; i < 4; i++) {
		if (!isfinite(q[i]))
			return false;
		n2 += (double)q[i] * q[i];
	}
	/* A tracker reports unit quaternions to a few 1e-5; a norm this far off is a
	 * corrupted record, not a pose to renormalise. */
	if (!(n2 > 0.25 && n2 < 4.0))
		return false;
	s->sensor = b[OFF_STATION];
	for (int i = 0; i < 3; i++)
		s->position[i] = cm_to_m(pos[i]);
	if (!isfinite(s->position[0]) || !isfinite(s->position[1]) || !isfinite(s->position[2]))
		return false;
	double scale = fabs(n2 - 1.0) > POL_UNIT_TOLERANCE ? 1.0 / sqrt(n2) : 1.0;
	/* cglm stores x y z w; convert here so nothing downstream sees the wire order. */
	s->orientation[0] = (float)(q[1] * scale);
	s->orientation[1] = (float)(q[2] * scale);
	s->orientation[2] = (float)(q[3] * scale);
	s->orientation[3] = (float)(q[0] * scale);
	s->frame = get_u32(b + OFF_FRAME);
	s->buttons = get_u32(b + OFF_STYLUS) != 0 ? 1u : 0u;
	return true;
}

static void count_frames(pol_parser *p, int station, uint32_t frame)
{
	if (p->have_frame[station]) {
		uint32_t gap = frame - p->last_frame[station]; /* modulo 2^32: wraps for free */
		if (gap > 1 && gap < POL_FRAME_RESET_GAP)
			p->health.dropped_frames += gap - 1;
	}
	p->last_frame[station] = frame;
	p->have_frame[station] = true;
}

/* Drops the first pending byte and then every byte that cannot start a record, keeping
 * the rest: a record may begin anywhere inside the rejected window. */
static void skip_garbage(pol_parser *p)
{
	size_t drop = 1;
	while (drop < p->pending_count && !plausible_start(p->pending + drop, p->pending_count - drop))
		drop++;
	p->health.skipped_bytes += drop;
	p->lost = true;
	memmove(p->pending, p->pending + drop, p->pending_count - drop);
	p->pending_count -= drop;
}

int pol_parse(pol_parser *p, const uint8_t *bytes, size_t count, int64_t t_ns, dev_sample *out, int max)
{
	int n = 0;
	size_t used = 0;
	for (;;) {
		/* Reject a bad start as soon as its bytes show it, before filling a record. */
		if (p->pending_count > 0 && !plausible_start(p->pending, p->pending_count)) {
			skip_garbage(p);
			continue;
		}
		if (p->pending_count < POL_RECORD_BYTES) {
			if (used == count)
				break;
			size_t take = POL_RECORD_BYTES - p->pending_count;
			if (take > count - used)
				take = count - used;
			memcpy(p->pending + p->pending_count, bytes + used, take);
			p->pending_count += take;
			used += take;
			continue;
		}
		const uint8_t *b = p->pending;
		bool framed = b[OFF_CRLF] == '\r' && b[OFF_CRLF + 1] == '\n';
		dev_sample s = {0};
		/* A flagged record's pose may be anything (zeros, NaN), so the error byte is
		 * looked at before the pose: it is still a record, not garbage. */
		bool flagged = framed && b[OFF_ERROR] != 0;
		if (!framed || (!flagged && !decode(b, &s))) {
			skip_garbage(p);
			continue;
		}
		p->pending_count = 0;
		if (p->lost) {
			p->health.resyncs++;
			p->lost = false;
		}
		if (flagged) {
			/* The tracker says this pose is not to be trusted (reference section
			 * 12); the frame counter still advanced. */
			p->health.error_records++;
			count_frames(p, b[OFF_STATION], get_u32(b + OFF_FRAME));
			continue;
		}
		count_frames(p, s.sensor, s.frame);
		if (n >= max || out == NULL) {
			p->overflow++;
			continue;
		}
		s.t_ns = t_ns;
		out[n++] = s;
		p->health.samples++;
	}
	return n;
}

void pol_encode(const dev_sample *sample, uint8_t out[POL_RECORD_BYTES])
{
	memset(out, 0, POL_RECORD_BYTES);
	out[0] = 'P';
	out[1] = 'A';
	out[OFF_STATION] = (uint8_t)sample->sensor;
	out[OFF_CMD] = 'C';
	put_u16(out + OFF_SIZE, POL_RECORD_SIZE_FIELD);
	for (int i = 0; i < 3; i++) {
		float m = sample->position[i];
		float cm = (float)((double)m * 100.0);
		/* The nearest centimetre float does not always convert back to the same
		 * metres; one of its neighbours does whenever any float can. */
		if (isfinite(cm) && cm_to_m(cm) != m) {
			float lo = nextafterf(cm, -INFINITY), hi = nextafterf(cm, INFINITY);
			if (cm_to_m(lo) == m)
				cm = lo;
			else if (cm_to_m(hi) == m)
				cm = hi;
		}
		put_f32(out + OFF_POSITION + 4 * i, cm);
	}
	put_f32(out + OFF_QUAT, sample->orientation[3]);
	for (int i = 0; i < 3; i++)
		put_f32(out + OFF_QUAT + 4 + 4 * i, sample->orientation[i]);
	put_u32(out + OFF_FRAME, sample->frame);
	put_u32(out + OFF_STYLUS, sample->buttons & 1u);
	out[OFF_CRLF] = '\r';
	out[OFF_CRLF + 1] = '\n';
}
