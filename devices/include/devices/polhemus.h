/* The Polhemus PATRIOT / LIBERTY binary protocol (../shared/reference/polhemus-usb.md):
 * a record parser that is a pure function over bytes, and the USB driver on top of it. */
#ifndef TELA_DEVICES_POLHEMUS_H
#define TELA_DEVICES_POLHEMUS_H

#include "devices/device.h"

/* The output list tela configures: O*,2,7,9,10,1 (position, quaternion w x y z, frame
 * count, stylus flag, CR LF) in centimetres (U1), binary (F1): 8 + 12 + 16 + 4 + 4 + 2 =
 * 46 bytes a record, size field 38. */
enum { POL_RECORD_BYTES = 46, POL_RECORD_SIZE_FIELD = 38 };

typedef struct pol_parser {
	uint8_t pending[2 * POL_RECORD_BYTES]; /* bytes of an incomplete record */
	size_t pending_count;
	uint32_t last_frame[17]; /* per station (1..16), for dropped-frame counting */
	bool have_frame[17];
	dev_health health;
	/* Additions (issue 6 device core): */
	bool lost;         /* bytes were skipped since the last good record (for `resyncs`) */
	uint64_t overflow; /* good records parsed while `out` was full: lost (see POL_MAX_SAMPLES) */
} pol_parser;

/* Enough room in `out` for every record `count` new bytes can complete (the pending
 * bytes hold less than one record), so that pol_parse never has to drop one. */
#define POL_MAX_SAMPLES(count) ((int)((count) / POL_RECORD_BYTES) + 1)

void pol_parser_init(pol_parser *p);
/* The tracker starts over (it was initialised again, after a reconnect): no half record
 * and no frame counter to compare with, the counters kept.  The driver calls it after
 * each initialisation, and replay at each command the driver sent, so that a replay's
 * parser meets the stream in the state the live one did. */
void pol_parser_restart(pol_parser *p);

/* Feeds bytes that arrived at host time t_ns; writes up to `max` samples (complete,
 * error-free records, converted to metres and x y z w) and returns how many.  Records
 * split across calls are joined; garbage is skipped (counted in health) without losing
 * the records after it; records with a non-zero error byte are counted, not returned. */
int pol_parse(pol_parser *p, const uint8_t *bytes, size_t count, int64_t t_ns, dev_sample *out, int max);

/* Encodes a sample as the record the tracker would send for it (preamble "PA", init
 * command 'C', error 0, centimetres, w x y z, frame counter, stylus = bit 0 of buttons,
 * CR LF).  For a station in 1..16 and a unit quaternion, pol_parse gives back the same
 * sample (t_ns aside) bit-exact whenever its metres are ones the parser can produce (any
 * sample that came out of pol_parse); other metres come back within one float step,
 * since not every float in metres is a float number of centimetres over 100. */
void pol_encode(const dev_sample *sample, uint8_t out[POL_RECORD_BYTES]);

/* The initialisation commands, in order (each a byte string; "P" has no CR). */
extern const char *const pol_init_commands[];
extern const int pol_init_command_count;

#endif
