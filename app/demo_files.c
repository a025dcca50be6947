/* Opening and saving scenes from the window (app/demo_files.h). */
#define _XOPEN_SOURCE 700
#include "demo_files.h"

#include <errno.h>
#include <limits.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

struct demo_files {
	char open_path[PANEL_PATH_SIZE];
	char save_path[PANEL_PATH_SIZE];
	recent_scenes recent;
	const char *recent_names[RECENT_SCENES_MAX];
	char list_file[RECENT_SCENE_PATH_MAX]; /* "" when there is nowhere to keep the list */
	char message[600];
	bool message_is_error;
};

demo_files *demo_files_create(void)
{
	demo_files *f = calloc(1, sizeof *f);
	if (!f)
		return NULL;
	if (!recent_scenes_file(f->list_file, sizeof f->list_file))
		f->list_file[0] = '\0';
	recent_scenes_load(&f->recent, f->list_file[0] ? f->list_file : NULL);
	return f;
}

void demo_files_destroy(demo_files **f)
{
	if (!f)
		return;
	free(*f);
	*f = NULL;
}

static void say(demo_files *f, bool error, const char *fmt, ...) __attribute__((format(printf, 3, 4)));
static void say(demo_files *f, bool error, const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(f->message, sizeof f->message, fmt, ap);
	va_end(ap);
	f->message_is_error = error;
	fprintf(stderr, "tela: %s\n", f->message);
}

bool demo_open_scene(demo *d, const char *path)
{
	demo_files *f = demo_files_of(d);
	char held[PANEL_PATH_SIZE];
	snprintf(held, sizeof held, "%s", path); /* `path` may be one of f's own buffers */
	char error[512];
	if (!held[0]) {
		if (f)
			say(f, true, "open: no file named");
		return false;
	}
	if (!demo_switch_scene(d, held, error, sizeof error)) {
		if (f)
			say(f, true, "%s", error);
		else
			fprintf(stderr, "tela: %s\n", error);
		return false;
	}
	if (!f)
		return true;
	say(f, false, "opened %s", held);
	/* a built-in name is no file to come back to */
	char full[PATH_MAX];
	if (realpath(held, full) && recent_scenes_add(&f->recent, full) && f->list_file[0]) {
		int e = recent_scenes_save(&f->recent, f->list_file);
		if (e)
			fprintf(stderr, "tela: %s: %s (the recent scenes are not kept)\n", f->list_file, strerror(e));
	}
	return true;
}

bool demo_save_scene(demo *d, const char *path)
{
	demo_files *f = demo_files_of(d);
	char held[PANEL_PATH_SIZE];
	snprintf(held, sizeof held, "%s", path);
	if (!held[0]) {
		if (f)
			say(f, true, "save: no file named");
		return false;
	}
	sim_world_def def;
	float dt;
	const sim_material *materials;
	int count;
	demo_settings(d, &def, &dt, &materials, &count);
	scn_overrides o = {.def = &def, .dt = dt, .materials = materials, .material_count = count};
	scn_error err = {0};
	bool ok = scn_scene_write(demo_scene(d), &o, held, &err) == SCN_OK;
	if (f && ok)
		say(f, false, "saved %s", held);
	else if (f)
		say(f, true, "save: %s", err.message);
	else if (!ok)
		fprintf(stderr, "tela: save: %s\n", err.message);
	return ok;
}

const char *demo_files_message(const demo *d, bool *is_error)
{
	demo_files *f = demo_files_of(d);
	if (is_error)
		*is_error = f && f->message_is_error;
	return f ? f->message : "";
}

void demo_files_fill_model(demo *d, panel_model *m)
{
	demo_files *f = demo_files_of(d);
	m->open_recent = -1;
	m->open_requested = m->save_requested = false;
	if (!f)
		return;
	m->open_path = f->open_path;
	m->save_path = f->save_path;
	for (int i = 0; i < f->recent.count; i++)
		f->recent_names[i] = f->recent.paths[i];
	m->recent = f->recent_names;
	m->recent_count = f->recent.count;
	m->files_message = f->message;
	m->files_error = f->message_is_error;
}

void demo_files_apply(demo *d, const panel_model *m)
{
	demo_files *f = demo_files_of(d);
	if (!f)
		return;
	/* the model's paths are f's own buffers (or a test's copies of them) */
	if (m->open_path && m->open_path != f->open_path)
		snprintf(f->open_path, sizeof f->open_path, "%s", m->open_path);
	if (m->save_path && m->save_path != f->save_path)
		snprintf(f->save_path, sizeof f->save_path, "%s", m->save_path);
	if (m->save_requested)
		demo_save_scene(d, f->save_path);
	if (m->open_recent >= 0 && m->open_recent < f->recent.count) {
		char path[RECENT_SCENE_PATH_MAX];
		memcpy(path, f->recent.paths[m->open_recent], sizeof path);
		demo_open_scene(d, path);
	} else if (m->open_requested) {
		demo_open_scene(d, f->open_path);
	}
}
