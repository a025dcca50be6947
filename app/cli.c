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
#include <unistd.h>

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

/* The folder a path's last component lives in: "." for a bare name. */
static void parent_of(const char *path, char *out, size_t size)
{
	snprintf(out, size, "%s", path);
	size_t n = strlen(out);
	while (n > 1 && out[n - 1] == '/')
		out[--n] = '\0';
	char *slash = strrchr(out, '/');
	if (!slash)
		snprintf(out, size, ".");
	else if (slash == out)
		out[1] = '\0';
	else
		*slash = '\0';
}

/* 0 when `dir` is a folder new files can be made in, else an errno. */
static int writable_folder(const char *dir)
{
	struct stat st;
	if (stat(dir, &st) != 0)
		return errno;
	if (!S_ISDIR(st.st_mode))
		return ENOTDIR;
	return access(dir, W_OK | X_OK) == 0 ? 0 : errno;
}

static int refuse(const char *cmd, const char *option, const char *path, const char *why)
{
	fprintf(stderr, "tela %s: %s %s: %s\n", cmd, option, path, why);
	return EXIT_TELA_IO;
}

int cli_check_output(const char *cmd, const char *option, const char *path, cli_output kind)
{
	if (!path || !path[0])
		return refuse(cmd, option, "''", "an empty path");
	char dir[4096], why[4200];
	if (strlen(path) >= sizeof dir)
		return refuse(cmd, option, "(a path)", strerror(ENAMETOOLONG));
	struct stat st;
	if (kind == CLI_OUT_PREFIX) {
		parent_of(path, dir, sizeof dir);
		int err = writable_folder(dir);
		if (!err)
			return EXIT_TELA_OK;
		snprintf(why, sizeof why, "cannot write into %s: %s", dir, strerror(err));
		return refuse(cmd, option, path, why);
	}
	if (stat(path, &st) == 0) {
		if (kind == CLI_OUT_FILE && S_ISDIR(st.st_mode))
			return refuse(cmd, option, path, "is a folder, not a file");
		if (kind == CLI_OUT_DIR && !S_ISDIR(st.st_mode))
			return refuse(cmd, option, path, "is not a folder");
		if (access(path, kind == CLI_OUT_DIR ? W_OK | X_OK : W_OK) != 0)
			return refuse(cmd, option, path, strerror(errno));
		return EXIT_TELA_OK;
	}
	if (errno != ENOENT)
		return refuse(cmd, option, path, strerror(errno));
	/* a new file needs its folder; a new folder, its nearest existing ancestor */
	parent_of(path, dir, sizeof dir);
	if (kind == CLI_OUT_DIR) {
		while (stat(dir, &st) != 0 && errno == ENOENT && strcmp(dir, ".") != 0 && strcmp(dir, "/") != 0) {
			char up[4096];
			parent_of(dir, up, sizeof up);
			memcpy(dir, up, sizeof dir);
		}
	}
	int err = writable_folder(dir);
	if (!err)
		return EXIT_TELA_OK;
	if (err == ENOENT)
		snprintf(why, sizeof why, "the folder %s does not exist", dir);
	else
		snprintf(why, sizeof why, "cannot create it in %s: %s", dir, strerror(err));
	return refuse(cmd, option, path, why);
}
