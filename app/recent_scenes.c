/* The recent-scenes file: read leniently (a list of conveniences must never stop the
 * demo), written whole so that two demos closing at once leave one list or the other. */
#define _POSIX_C_SOURCE 200809L
#include "recent_scenes.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

bool recent_scenes_file(char *out, size_t cap)
{
	const char *xdg = getenv("XDG_CONFIG_HOME"), *home = getenv("HOME");
	int n;
	/* the XDG rule: a relative XDG_CONFIG_HOME is to be ignored */
	if (xdg && xdg[0] == '/')
		n = snprintf(out, cap, "%s/tela/recent-scenes", xdg);
	else if (home && home[0])
		n = snprintf(out, cap, "%s/.config/tela/recent-scenes", home);
	else
		return false;
	return n > 0 && (size_t)n < cap;
}

/* An absolute path with no control bytes: all the demo ever writes. */
static bool usable(const char *line)
{
	if (line[0] != '/')
		return false;
	for (const unsigned char *c = (const unsigned char *)line; *c; c++)
		if (*c < 0x20 || *c == 0x7f)
			return false;
	return true;
}

void recent_scenes_load(recent_scenes *r, const char *file)
{
	r->count = 0;
	FILE *f = file ? fopen(file, "rb") : NULL;
	if (!f)
		return;
	/* a full list is never longer: more is not a list this demo wrote */
	enum { MAX_BYTES = RECENT_SCENES_MAX * (RECENT_SCENE_PATH_MAX + 1) };
	char *data = malloc(MAX_BYTES);
	size_t size = data ? fread(data, 1, MAX_BYTES, f) : 0;
	bool ended = feof(f) != 0;
	fclose(f);
	size_t start = 0;
	for (size_t i = 0; i <= size && r->count < RECENT_SCENES_MAX; i++) {
		if (i < size && data[i] != '\n')
			continue;
		const char *line = data + start;
		size_t n = i - start;
		start = i + 1;
		if (i == size && !ended)
			break; /* cut off by the limit */
		if (n > 0 && line[n - 1] == '\r')
			n--; /* a list edited where lines end in CR LF */
		if (n == 0 || n >= RECENT_SCENE_PATH_MAX || memchr(line, '\0', n))
			continue;
		char path[RECENT_SCENE_PATH_MAX];
		memcpy(path, line, n);
		path[n] = '\0';
		bool seen = false;
		for (int k = 0; k < r->count && !seen; k++)
			seen = strcmp(r->paths[k], path) == 0;
		if (!seen && usable(path))
			memcpy(r->paths[r->count++], path, n + 1);
	}
	free(data);
}

bool recent_scenes_add(recent_scenes *r, const char *path)
{
	size_t n = strlen(path);
	if (n == 0 || n >= RECENT_SCENE_PATH_MAX || !usable(path))
		return false;
	int at = r->count < RECENT_SCENES_MAX ? r->count : RECENT_SCENES_MAX - 1;
	for (int i = 0; i < r->count; i++)
		if (strcmp(r->paths[i], path) == 0) {
			at = i;
			break;
		}
	memmove(r->paths[1], r->paths[0], (size_t)at * sizeof r->paths[0]);
	memcpy(r->paths[0], path, n + 1);
	if (at == r->count)
		r->count++;
	return true;
}

/* mkdir -p of the folder that holds `file`. */
static int make_parents(const char *file)
{
	char dir[RECENT_SCENE_PATH_MAX + 64];
	if (snprintf(dir, sizeof dir, "%s", file) >= (int)sizeof dir)
		return ENAMETOOLONG;
	char *slash = strrchr(dir, '/');
	if (!slash || slash == dir)
		return 0;
	*slash = '\0';
	for (char *p = dir + 1; *p; p++) {
		if (*p != '/')
			continue;
		*p = '\0';
		if (mkdir(dir, 0777) != 0 && errno != EEXIST)
			return errno;
		*p = '/';
	}
	if (mkdir(dir, 0777) != 0 && errno != EEXIST)
		return errno;
	return 0;
}

int recent_scenes_save(const recent_scenes *r, const char *file)
{
	int e = make_parents(file);
	if (e)
		return e;
	char tmp[RECENT_SCENE_PATH_MAX + 64];
	if (snprintf(tmp, sizeof tmp, "%s.%ld", file, (long)getpid()) >= (int)sizeof tmp)
		return ENAMETOOLONG;
	FILE *f = fopen(tmp, "w");
	if (!f)
		return errno;
	for (int i = 0; i < r->count; i++)
		fprintf(f, "%s\n", r->paths[i]);
	bool ok = !ferror(f);
	e = errno;
	if (fclose(f) != 0 && ok)
		ok = false, e = errno;
	if (ok && rename(tmp, file) != 0)
		ok = false, e = errno;
	if (!ok) {
		remove(tmp);
		return e ? e : EIO;
	}
	return 0;
}
