/* Scenes in and out of the running demo: a file or seed folder dropped on the window or
 * named in the panel (its path field or its list of recent scenes) replaces the running
 * scene through demo_switch_scene, and "Save scene" writes what runs, with the panel's
 * settings, as a scene file (scn_scene_write).  A scene that cannot be read leaves the
 * running one as it was; its file:line message is shown in the panel and on stderr. */
#ifndef TELA_DEMO_FILES_H
#define TELA_DEMO_FILES_H

#include "demo.h"
#include "panel.h"
#include "recent_scenes.h"

#include "scenes/scenes.h"

typedef struct demo_files demo_files;

/* The state behind the panel's Files section: the typed paths, the recent scenes and the
 * last outcome.  NULL only when out of memory (the demo then has no Files section). */
demo_files *demo_files_create(void);
void demo_files_destroy(demo_files **f);

/* Opens a scene the user named (a dropped path, the panel's path field, a recent entry):
 * true when it runs now.  On success it goes first in the recent list (by absolute path);
 * on failure the message says why and the old scene keeps running. */
bool demo_open_scene(demo *d, const char *path);
/* Writes the running scene with the panel's current settings to `path`. */
bool demo_save_scene(demo *d, const char *path);
/* The outcome of the last open or save ("" before any); *is_error says which kind. */
const char *demo_files_message(const demo *d, bool *is_error);

/* Every frame: the Files section's part of the model, and what the user did in it. */
void demo_files_fill_model(demo *d, panel_model *m);
void demo_files_apply(demo *d, const panel_model *m);

/* What demo.c gives this file (defined there, where the demo's state is). */
demo_files *demo_files_of(const demo *d);
const scn_scene *demo_scene(const demo *d);
/* The settings the panel shows now: world settings, step and each cloth's material. */
void demo_settings(const demo *d, sim_world_def *def, float *dt, const sim_material **materials,
                   int *material_count);

#endif
