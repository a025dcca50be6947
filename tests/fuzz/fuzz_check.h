/* Shared by the fuzz targets: an invariant that fails must stop the run the way a
 * sanitizer report does, so that libFuzzer saves the input and the ctest run fails.
 * assert() would vanish under -DNDEBUG, hence abort(). */
#ifndef TELA_FUZZ_CHECK_H
#define TELA_FUZZ_CHECK_H

#include "scenes/error.h"

#include <math.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

#define FUZZ_REQUIRE(cond, what)                                                                            \
	do {                                                                                                    \
		if (!(cond))                                                                                        \
			fuzz_violated(__FILE__, __LINE__, #cond, what);                                                 \
	} while (0)

static inline _Noreturn void fuzz_violated(const char *file, int line, const char *cond, const char *what)
{
	fprintf(stderr, "%s:%d: invariant violated: %s (%s)\n", file, line, what, cond);
	abort();
}

/* The contract of every reader in tela_scenes (scenes/error.h): a failure has a known
 * status, recorded in err too, and a message that names the input (`name`).  A message
 * that filled the whole buffer may have lost the name to truncation, so it passes. */
static inline void fuzz_check_failure(scn_status st, const scn_error *err, const char *name)
{
	FUZZ_REQUIRE(st == SCN_ERROR_IO || st == SCN_ERROR_PARSE || st == SCN_ERROR_MEMORY, "a known failure status");
	FUZZ_REQUIRE(err->status == st, "err records the status returned");
	FUZZ_REQUIRE(memchr(err->message, '\0', sizeof err->message), "the message is NUL-terminated");
	size_t len = strlen(err->message);
	FUZZ_REQUIRE(len > 0, "a failure has a message");
	FUZZ_REQUIRE(strstr(err->message, name) || len == sizeof err->message - 1, "the message names the input");
}

/* A success leaves err as the caller zeroed it. */
static inline void fuzz_check_success(const scn_error *err)
{
	FUZZ_REQUIRE(err->status == SCN_OK && err->message[0] == '\0', "a success leaves err untouched");
}

/* Twice the area over the longest edge squared: mesh.h calls a facet degenerate below
 * 4 FLT_EPSILON.  The checks keep a factor of 2 clear of that threshold on either side,
 * so that this computation and the reader's may round differently near it. */
static inline double fuzz_area_ratio(const float *a, const float *b, const float *c)
{
	double e1[3], e2[3], e3[3];
	for (int k = 0; k < 3; k++) {
		e1[k] = (double)b[k] - a[k];
		e2[k] = (double)c[k] - a[k];
		e3[k] = (double)c[k] - b[k];
	}
	double n[3] = {e1[1] * e2[2] - e1[2] * e2[1], e1[2] * e2[0] - e1[0] * e2[2], e1[0] * e2[1] - e1[1] * e2[0]};
	double twice_area = sqrt(n[0] * n[0] + n[1] * n[1] + n[2] * n[2]);
	double l1 = e1[0] * e1[0] + e1[1] * e1[1] + e1[2] * e1[2];
	double l2 = e2[0] * e2[0] + e2[1] * e2[1] + e2[2] * e2[2];
	double l3 = e3[0] * e3[0] + e3[1] * e3[1] + e3[2] * e3[2];
	double longest2 = fmax(l1, fmax(l2, l3));
	return longest2 > 0.0 ? twice_area / longest2 : 0.0;
}

#endif
