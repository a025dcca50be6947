/* Scenes: the files a user writes and shares (docs/scene-format.md), the seed simulator's
 * scene folders, and the built-in scenes (the same files, compiled into the program).
 * A scene is read completely and checked before any world exists, so a bad file never
 * leaves a partial scene behind. */
#ifndef TELA_SCENES_H
#define TELA_SCENES_H

#include "scenes/error.h"
#include "scenes/mesh.h"
#include "sim/sim.h"

typedef struct scn_info {
	const char *name;
	const char *description;
	float dt;       /* fixed simulation step, s */
	double seconds; /* default length of `tela run` */
} scn_info;

typedef struct scn_scene scn_scene;

/* The built-in scenes, in listing order. */
int scn_builtin_count(void);
const scn_info *scn_builtin_info(int index);
const scn_info *scn_find(const char *name);
/* The text of a built-in scene file (NULL for an unknown name). */
const char *scn_builtin_text(const char *name);

/* Reads a scene named by the user: a built-in name, a scene file, or a seed simulator
 * folder (one holding world_parameters/ and bodies/).  Referenced files (meshes,
 * velocity constraints) are read now, relative to the scene file's folder. */
scn_status scn_load(const char *arg, scn_scene **out, scn_error *err);
/* Reads scene text; `path` names it in messages and anchors relative file names. */
scn_status scn_parse(const char *text, size_t size, const char *path, scn_scene **out, scn_error *err);
/* Reads a seed simulator `environment` folder (z up). */
scn_status scn_load_seed(const char *dir, scn_scene **out, scn_error *err);

/* Builds the world the scene describes.  On failure *out is NULL and err names the file
 * and line of the value the world refused. */
scn_status scn_build(const scn_scene *scene, sim_world **out, scn_error *err);

const scn_info *scn_scene_info(const scn_scene *scene);
/* The camera's start view, in world coordinates. */
void scn_scene_view(const scn_scene *scene, float position[3], float target[3], float *fov_degrees);
/* Display colours of the scene's cloth objects and obstacles, in world index order. */
void scn_scene_cloth_color(const scn_scene *scene, int object, float rgb[3]);
void scn_scene_obstacle_color(const scn_scene *scene, int obstacle, float rgb[3]);
void scn_scene_free(scn_scene **scene);

/* What a running demo (its panel) or `tela run`'s options changed on top of a scene. */
typedef struct scn_overrides {
	const sim_world_def *def;      /* world settings in world axes (sim_world_get_def); NULL: the scene's */
	float dt;                      /* the simulation step, s; 0: the scene's */
	const sim_material *materials; /* one per cloth object, in world order; NULL: the scene's */
	int material_count;
} scn_overrides;

/* The scene as scene-file text (docs/scene-format.md) that reads back into the same world,
 * step and settings, with `o`'s changes (o may be NULL).  `path` is where the text is meant
 * to go: the files the scene names (meshes, velocity constraints) are written relative to
 * its folder when they lie under it, by absolute path otherwise.  The caller frees the
 * text; NULL with err set when the scene cannot be written (a file it names is gone, a
 * line would be longer than a scene file allows). */
char *scn_scene_text(const scn_scene *scene, const scn_overrides *o, const char *path, scn_error *err);
/* Writes scn_scene_text to `path`, whole or not at all (through a temporary file beside it). */
scn_status scn_scene_write(const scn_scene *scene, const scn_overrides *o, const char *path, scn_error *err);

/* Loads and builds in one go (tests, benchmarks); NULL on any failure. */
sim_world *scn_create(const char *name);

/* Writes object `object` of the world as an ASCII STL file.  Returns 0 on success or
 * errno of the failed I/O call. */
int scn_write_stl(const sim_world *world, int object, const char *path);

/* Writes every object of the world as DIR/frameNNNNNN_<object>.stl (`tela run
 * --export-stl`, the demo's mesh recording). */
scn_status scn_export_frame(const sim_world *world, const char *dir, long step, scn_error *err);
/* The same in a format of mesh.h (`tela run --export DIR --format F`): ASCII STL, OBJ or
 * binary PLY, as DIR/frameNNNNNN_<object>.stl, .obj or .ply. */
scn_status scn_export_frame_as(const sim_world *world, const char *dir, long step, scn_mesh_format format,
                               scn_error *err);

#endif
