/* How every reader in tela_scenes reports bad input: one message that names the file and
 * the line (text formats) or the byte offset (binary STL), and a status the command line
 * maps to its documented exit code.  A reader that fails leaves its output empty: there
 * is never a partial scene, mesh or constraint list. */
#ifndef TELA_SCENES_ERROR_H
#define TELA_SCENES_ERROR_H

#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>

typedef enum scn_status {
	SCN_OK = 0,
	SCN_ERROR_IO = 1,     /* a file could not be opened, read or written */
	SCN_ERROR_PARSE = 2,  /* the content is malformed or out of range */
	SCN_ERROR_MEMORY = 3, /* out of memory */
} scn_status;

typedef struct scn_error {
	scn_status status;
	char message[512]; /* "path:line: what is wrong" or "path: byte N: what is wrong" */
} scn_error;

/* Records the first error only (later ones are usually consequences of it) and returns
 * its status, so a reader can `return scn_fail(err, ...)`.  err may be NULL. */
scn_status scn_fail(scn_error *err, scn_status status, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));
scn_status scn_vfail(scn_error *err, scn_status status, const char *fmt, va_list ap);
/* A parse error at a line of a text file: "path:LINE: what" (line 1 at the least). */
scn_status scn_fail_line(scn_error *err, const char *path, int line, const char *fmt, ...)
    __attribute__((format(printf, 4, 5)));

/* Strict number parsing for every text reader: the whole token must be a finite number
 * within [-limit, limit] (limit > 0), or an integer within [lo, hi].  No locale, no
 * partial matches ("1.5x" is an error), no NaN or infinity. */
bool scn_parse_float(const char *token, double limit, float *out);
bool scn_parse_double(const char *token, double limit, double *out);
bool scn_parse_int(const char *token, long lo, long hi, int *out);

/* Reads a whole file into a NUL-terminated buffer (caller frees).  Refuses files larger
 * than max_bytes with a message, so a wrong path to a huge file cannot exhaust memory. */
scn_status scn_read_file(const char *path, size_t max_bytes, char **out_data, size_t *out_size, scn_error *err);

#endif
