/* The built-in scenes: the scene files under scenes/, compiled in.  Their names,
 * descriptions and steps come from the files themselves, read once. */
#include "builtin_files.h"
#include "scene_internal.h"

#include <stdio.h>
#include <string.h>

enum { MAX_BUILTINS = 32 };

typedef struct builtin_entry {
	scn_info info;
	char description[256];
} builtin_entry;

static builtin_entry entries[MAX_BUILTINS];
static int entry_count = -1;

/* Reads every built-in once.  A built-in that does not parse is a build defect the test
 * suite catches (test_scene_file); it is listed with its error as description. */
static void read_builtins(void)
{
	if (entry_count >= 0)
		return;
	int n = scn_builtin_file_count < MAX_BUILTINS ? scn_builtin_file_count : MAX_BUILTINS;
	for (int i = 0; i < n; i++) {
		builtin_entry *e = &entries[i];
		const scn_builtin_file *f = &scn_builtin_files[i];
		scn_scene *s = NULL;
		scn_error err = {0};
		e->info.name = f->name;
		e->info.description = e->description;
		if (scn_parse(f->text, strlen(f->text), f->name, &s, &err) == SCN_OK) {
			snprintf(e->description, sizeof e->description, "%s", s->description);
			e->info.dt = s->info.dt;
			e->info.seconds = s->info.seconds;
		} else {
			snprintf(e->description, sizeof e->description, "(broken: %.200s)", err.message);
		}
		scn_scene_free(&s);
	}
	entry_count = n;
}

int scn_builtin_count(void)
{
	read_builtins();
	return entry_count;
}

const scn_info *scn_builtin_info(int index)
{
	read_builtins();
	return index >= 0 && index < entry_count ? &entries[index].info : NULL;
}

const scn_info *scn_find(const char *name)
{
	read_builtins();
	for (int i = 0; i < entry_count; i++)
		if (strcmp(entries[i].info.name, name) == 0)
			return &entries[i].info;
	return NULL;
}

const char *scn_builtin_text(const char *name)
{
	for (int i = 0; i < scn_builtin_file_count; i++)
		if (strcmp(scn_builtin_files[i].name, name) == 0)
			return scn_builtin_files[i].text;
	return NULL;
}
