/* The demo's list of recently opened scenes (files and seed folders), newest first, kept
 * in $XDG_CONFIG_HOME/tela/recent-scenes (~/.config/tela/ without it) so that it outlives
 * the window.  The file is one absolute path a line; whatever in it is not one (empty,
 * relative or overlong lines, control bytes) is skipped, a missing file is an empty list. */
#ifndef TELA_RECENT_SCENES_H
#define TELA_RECENT_SCENES_H

#include <stdbool.h>
#include <stddef.h>

enum { RECENT_SCENES_MAX = 10, RECENT_SCENE_PATH_MAX = 1024 };

typedef struct recent_scenes {
	int count;
	char paths[RECENT_SCENES_MAX][RECENT_SCENE_PATH_MAX];
} recent_scenes;

/* Where the list lives; false when neither XDG_CONFIG_HOME nor HOME is set (or the path
 * would not fit), and then the demo keeps the list in memory only. */
bool recent_scenes_file(char *out, size_t cap);
/* Reads the list; never fails (what cannot be read is not in it). */
void recent_scenes_load(recent_scenes *r, const char *file);
/* Puts `path` first (once: an older entry for it goes); false if it cannot be kept. */
bool recent_scenes_add(recent_scenes *r, const char *path);
/* Writes the list whole (a temporary file renamed over the old one), creating the
 * folder; 0 or the errno of the failed call. */
int recent_scenes_save(const recent_scenes *r, const char *file);

#endif
