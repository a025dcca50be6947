#include "scenes/error.h"

#include <errno.h>
#include <limits.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

scn_status scn_vfail(scn_error *err, scn_status status, const char *fmt, va_list ap)
{
	if (err && err->status == SCN_OK) {
		err->status = status;
		vsnprintf(err->message, sizeof err->message, fmt, ap);
	}
	return status;
}

scn_status scn_fail(scn_error *err, scn_status status, const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	scn_vfail(err, status, fmt, ap);
	va_end(ap);
	return status;
}

scn_status scn_fail_line(scn_error *err, const char *path, int line, const char *fmt, ...)
{
	char what[400];
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(what, sizeof what, fmt, ap);
	va_end(ap);
	return scn_fail(err, SCN_ERROR_PARSE, "%s:%d: %s", path, line > 0 ? line : 1, what);
}

bool scn_parse_double(const char *token, double limit, double *out)
{
	if (!token || !*token)
		return false;
	/* strtod skips leading blanks and reads "nan", "inf" and hexadecimal: a scene value
	 * is a plain decimal, so allow only its characters */
	for (const char *c = token; *c; c++)
		if (!strchr("0123456789+-.eE", *c))
			return false;
	char *end = NULL;
	errno = 0;
	double v = strtod(token, &end);
	if (end == token || *end != '\0' || errno == ERANGE || !isfinite(v) || fabs(v) > limit)
		return false;
	*out = v;
	return true;
}

bool scn_parse_float(const char *token, double limit, float *out)
{
	double v;
	if (limit > 3.0e38)
		limit = 3.0e38;
	if (!scn_parse_double(token, limit, &v))
		return false;
	*out = (float)v;
	return true;
}

bool scn_parse_int(const char *token, long lo, long hi, int *out)
{
	if (!token || !*token)
		return false;
	for (const char *c = token; *c; c++)
		if (!strchr("0123456789+-", *c))
			return false;
	char *end = NULL;
	errno = 0;
	long v = strtol(token, &end, 10);
	if (end == token || *end != '\0' || errno == ERANGE || v < lo || v > hi || v < INT_MIN || v > INT_MAX)
		return false;
	*out = (int)v;
	return true;
}

scn_status scn_read_file(const char *path, size_t max_bytes, char **out_data, size_t *out_size, scn_error *err)
{
	*out_data = NULL;
	*out_size = 0;
	FILE *f = fopen(path, "rb");
	if (!f)
		return scn_fail(err, SCN_ERROR_IO, "%s: cannot open: %s", path, strerror(errno));
	size_t cap = 4096, n = 0;
	char *buf = malloc(cap + 1);
	if (!buf) {
		fclose(f);
		return scn_fail(err, SCN_ERROR_MEMORY, "%s: out of memory", path);
	}
	for (;;) {
		if (n == cap) {
			if (cap >= max_bytes) {
				free(buf);
				fclose(f);
				return scn_fail(err, SCN_ERROR_PARSE, "%s: larger than %zu bytes; not a tela input file?", path,
				                max_bytes);
			}
			size_t grown = cap * 2 > max_bytes ? max_bytes : cap * 2;
			char *more = realloc(buf, grown + 1);
			if (!more) {
				free(buf);
				fclose(f);
				return scn_fail(err, SCN_ERROR_MEMORY, "%s: out of memory", path);
			}
			buf = more;
			cap = grown;
		}
		size_t got = fread(buf + n, 1, cap - n, f);
		n += got;
		if (got == 0) {
			if (ferror(f)) {
				int e = errno;
				free(buf);
				fclose(f);
				return scn_fail(err, SCN_ERROR_IO, "%s: cannot read: %s", path, strerror(e));
			}
			break;
		}
	}
	fclose(f);
	buf[n] = '\0';
	*out_data = buf;
	*out_size = n;
	return SCN_OK;
}
