#define _POSIX_C_SOURCE 200809L
#include "cli.h"

#include <errno.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>

int64_t cli_now_ns(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (int64_t)ts.tv_sec * 1000000000 + ts.tv_nsec;
}

bool cli_parse_double(const char *s, double *out)
{
	if (!s || !*s)
		return false;
	char *end = NULL;
	errno = 0;
	double v = strtod(s, &end);
	if (errno || *end || !isfinite(v))
		return false;
	*out = v;
	return true;
}

bool cli_parse_int(const char *s, long min, long max, long *out)
{
	if (!s || !*s)
		return false;
	char *end = NULL;
	errno = 0;
	long v = strtol(s, &end, 10);
	if (errno || *end || v < min || v > max)
		return false;
	*out = v;
	return true;
}

int cli_usage_error(const char *cmd, const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	fprintf(stderr, "tela %s: ", cmd);
	vfprintf(stderr, fmt, ap);
	fprintf(stderr, "\n(see 'tela %s --help')\n", cmd);
	va_end(ap);
	return EXIT_TELA_USAGE;
}

bool cli_wants_help(int argc, char **argv, int first)
{
	for (int i = first; i < argc; i++)
		if (strcmp(argv[i], "--help") == 0 || strcmp(argv[i], "-h") == 0)
			return true;
	return false;
}

int cli_mkdirs(const char *path)
{
	char buf[4096];
	if (snprintf(buf, sizeof buf, "%s", path) >= (int)sizeof buf)
		return ENAMETOOLONG;
	for (char *p = buf + 1; *p; p++) {
		if (*p != '/')
			continue;
		*p = '\0';
		if (mkdir(buf, 0777) != 0 && errno != EEXIST)
			return errno;
		*p = '/';
	}
	if (mkdir(buf, 0777) != 0 && errno != EEXIST)
		return errno;
	struct stat st;
	if (stat(buf, &st) != 0)
		return errno;
	return S_ISDIR(st.st_mode) ? 0 : ENOTDIR;
}
