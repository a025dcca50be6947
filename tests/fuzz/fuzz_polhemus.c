/* libFuzzer target for the Polhemus record parser (pol_parse, issue 6).  The input is a
 * byte stream as USB would deliver it; the first byte chooses how the stream is cut into
 * transfers, because records split across calls are where a parser loses its place.
 * Beyond crashes and sanitizer reports it checks what polhemus.h promises of every
 * sample and of the health counters, and that the cuts do not change the result. */
#include "fuzz_check.h"

#include "devices/polhemus.h"

#include <math.h>
#include <stdbool.h>

typedef struct outcome {
	int samples;
	uint64_t checksum; /* over every delivered sample's fields */
	dev_health health;
	uint64_t overflow;
} outcome;

static void check_sample(const dev_sample *s, int64_t t_ns)
{
	FUZZ_REQUIRE(s->sensor >= 1 && s->sensor <= 16, "stations are 1..16");
	FUZZ_REQUIRE(s->t_ns == t_ns, "a sample carries its transfer's time");
	FUZZ_REQUIRE(s->buttons <= 1u, "only the stylus bit");
	double n2 = 0.0;
	for (int i = 0; i < 3; i++)
		FUZZ_REQUIRE(isfinite(s->position[i]), "finite positions");
	for (int i = 0; i < 4; i++) {
		FUZZ_REQUIRE(isfinite(s->orientation[i]), "finite quaternions");
		n2 += (double)s->orientation[i] * s->orientation[i];
	}
	FUZZ_REQUIRE(fabs(n2 - 1.0) < 1e-5, "unit quaternions");
}

static uint64_t mix(uint64_t h, const void *p, size_t n)
{
	const uint8_t *b = p;
	for (size_t i = 0; i < n; i++)
		h = (h ^ b[i]) * 0x100000001B3ull;
	return h;
}

/* Parses `data` in transfers of `cut` bytes (the whole at once when cut is 0), with a
 * sample buffer of `room` (0: always large enough). */
static outcome run(const uint8_t *data, size_t size, size_t cut, int room)
{
	pol_parser p;
	pol_parser_init(&p);
	outcome o = {0, 0xCBF29CE484222325ull, {0}, 0};
	dev_sample out[POL_MAX_SAMPLES(4096)];
	int64_t t = 0;
	for (size_t at = 0; at < size || (size == 0 && at == 0); t++) {
		size_t c = cut == 0 || size - at < cut ? size - at : cut;
		int max = POL_MAX_SAMPLES(c);
		if (room > 0 && room < max)
			max = room;
		FUZZ_REQUIRE(max <= (int)(sizeof out / sizeof out[0]), "the harness's buffer suffices");
		int n = pol_parse(&p, data + at, c, t, out, max);
		FUZZ_REQUIRE(n >= 0 && n <= max, "at most max samples");
		FUZZ_REQUIRE(p.pending_count < POL_RECORD_BYTES, "less than a record pending");
		for (int i = 0; i < n; i++) {
			check_sample(&out[i], t);
			dev_sample s = out[i];
			s.t_ns = 0; /* the cut decides the times; the content must not depend on it */
			o.checksum = mix(o.checksum, &s.sensor, sizeof s.sensor);
			o.checksum = mix(o.checksum, s.position, sizeof s.position);
			o.checksum = mix(o.checksum, s.orientation, sizeof s.orientation);
			o.checksum = mix(o.checksum, &s.buttons, sizeof s.buttons);
			o.checksum = mix(o.checksum, &s.frame, sizeof s.frame);
		}
		o.samples += n;
		at += c;
		if (size == 0)
			break;
	}
	o.health = p.health;
	o.overflow = p.overflow;
	const dev_health *h = &p.health;
	FUZZ_REQUIRE(h->samples == (uint64_t)o.samples, "samples counts what was delivered");
	FUZZ_REQUIRE(h->skipped_bytes <= size, "skipped bytes <= input bytes");
	FUZZ_REQUIRE(h->resyncs <= h->skipped_bytes, "a resync skips at least one byte");
	uint64_t records = h->samples + o.overflow + h->error_records;
	FUZZ_REQUIRE(records * POL_RECORD_BYTES + h->skipped_bytes + p.pending_count == size,
	             "every byte is in a record, skipped or pending");
	FUZZ_REQUIRE(h->reconnects == 0, "the parser never reconnects");
	return o;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	if (size == 0) {
		run(data, 0, 0, 0);
		return 0;
	}
	size_t cut = data[0] % 64; /* 0: one transfer */
	int room = data[0] >> 6;   /* 0: room for everything; 1..3: a small buffer */
	data++;
	size--;
	outcome whole = run(data, size, 0, 0);
	outcome cut_up = run(data, size, cut, 0);
	FUZZ_REQUIRE(whole.samples == cut_up.samples && whole.checksum == cut_up.checksum, "cuts do not change the samples");
	FUZZ_REQUIRE(whole.health.skipped_bytes == cut_up.health.skipped_bytes &&
	                 whole.health.resyncs == cut_up.health.resyncs &&
	                 whole.health.error_records == cut_up.health.error_records &&
	                 whole.health.dropped_frames == cut_up.health.dropped_frames,
	             "cuts do not change the counters");
	if (room > 0) {
		outcome small = run(data, size, cut, room);
		FUZZ_REQUIRE(small.samples + (int)small.overflow == whole.samples, "a small buffer only overflows");
	}
	return 0;
}
