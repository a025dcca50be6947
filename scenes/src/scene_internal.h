/* A parsed scene before it becomes a world: what the scene-file reader and the seed-folder
 * reader both produce and the builder turns into a sim_world.  Keeping the two phases
 * apart is what makes "no partial scene" cheap: nothing touches a world until every file
 * has been read and every value checked. */
#ifndef TELA_SCENE_INTERNAL_H
#define TELA_SCENE_INTERNAL_H

#include "scenes/mesh.h"
#include "scenes/scenes.h"
#include "scenes/velocities.h"

enum { SCN_NAME_MAX = 64, SCN_PATH_MAX = 1024 };

typedef enum scn_kind {
	SCN_K_SCENE,
	SCN_K_WORLD,
	SCN_K_CAMERA,
	SCN_K_MATERIAL,
	SCN_K_GRID,
	SCN_K_MESH,
	SCN_K_TETRAHEDRON,
	SCN_K_RIGID,
	SCN_K_PLANE,
	SCN_K_SPHERE,
	SCN_K_BOX,
	SCN_K_CAPSULE,
	SCN_K_MOTION,
	SCN_K_COUNT
} scn_kind;

#define SCN_CLOTH_KINDS ((1u << SCN_K_GRID) | (1u << SCN_K_MESH) | (1u << SCN_K_TETRAHEDRON))
#define SCN_OBSTACLE_KINDS                                                                                  \
	((1u << SCN_K_RIGID) | (1u << SCN_K_PLANE) | (1u << SCN_K_SPHERE) | (1u << SCN_K_BOX) |                \
	 (1u << SCN_K_CAPSULE))

/* A growable list of object-local vertex ids. */
typedef struct scn_ids {
	int count, capacity;
	int *ids;
} scn_ids;

/* One vertex's initial velocity (vertex_velocity = ID VX VY VZ). */
typedef struct scn_vertex_velocity {
	int vertex;
	float velocity[3];
	int line;
} scn_vertex_velocity;

/* One friction_with = NAME MU of a material, cloth or obstacle section: the pair's own
 * friction coefficient (sim_world_set_pair_friction). */
typedef struct scn_friction {
	char name[SCN_NAME_MAX];
	float mu;
	int line;
	int target; /* the section NAME resolved to (index in descs), set by scn_scene_finish */
} scn_friction;

enum { SCN_KEYS_MAX = 96 };

/* One [kind name] section.  Which fields mean something depends on the kind. */
typedef struct scn_desc {
	scn_kind kind;
	char name[SCN_NAME_MAX];
	const char *file; /* where it was read, for messages */
	int line;         /* of the section header */
	/* per key of the kind's table: the line where it was set (0: not set) */
	int key_line[SCN_KEYS_MAX];

	/* materials and cloth */
	char material_ref[SCN_NAME_MAX];
	sim_material material;
	/* neither the section nor its material gives thickness: the builder caps the
	 * default at half the cloth's shortest edge */
	bool thickness_by_edge;
	float color[3];
	/* grid */
	int resolution[2];
	float size[2];
	float corner[3], center[3];
	float axis_u[3], axis_v[3];
	/* mesh cloth and rigid meshes */
	char mesh_file[SCN_PATH_MAX];
	float scale, rotate[3], translate[3], weld;
	scn_mesh mesh;
	/* tetrahedron */
	float edge;
	/* cloth: pins, initial velocities, velocity constraints */
	char pins_text[512];
	scn_ids pins;
	float velocity[3];
	int vertex_velocity_count;
	scn_vertex_velocity *vertex_velocities;
	char velocities_file[SCN_PATH_MAX];
	scn_velocities velocities;
	scn_axes velocities_axes;
	/* materials, cloth and obstacles: pair friction */
	int friction_count;
	scn_friction *frictions;
	/* obstacles */
	float position[3], normal[3], axis[3];
	float radius, half_height, half_extents[3], box_size[3];
	float friction, thickness;
	float angular_velocity[3];
	/* motion */
	char object[SCN_NAME_MAX];
	char vertices_text[512];
	scn_ids vertices;
	float pivot[3];
	float start, stop, slot;
	int release; /* then = release */
	/* the direction keys as the file gave them, before they were normalised: a scene
	 * written back (scn_scene_write) then reads into the same bits */
	struct {
		float axis_u[3], axis_v[3], normal[3], axis[3];
	} written;
} scn_desc;

typedef struct scn_camera_def {
	float position[3];
	float target[3];
	float fov_degrees;
} scn_camera_def;

struct scn_scene {
	scn_info info;
	char name[SCN_NAME_MAX];
	char description[256];
	char path[SCN_PATH_MAX]; /* file or folder it came from ("" for built-ins) */
	scn_axes up;             /* the axes every coordinate of the file is written in */
	bool seed;               /* from a seed folder: file names are paths as they were opened */
	sim_world_def world;
	scn_camera_def camera;
	int world_key_line[SCN_KEYS_MAX];
	int desc_count, desc_capacity;
	scn_desc *descs; /* materials, objects and motions in file order */
};

/* Finds a section of the given kinds by name; NULL when there is none. */
const scn_desc *scn_scene_find_desc(const scn_scene *s, unsigned kinds, const char *name);

/* Shared by the file reader and the seed-folder reader. */
scn_scene *scn_scene_alloc(void);
scn_desc *scn_scene_add_desc(scn_scene *s, scn_kind kind, const char *name, const char *file, int line);
void scn_desc_defaults(scn_desc *d);
bool scn_ids_push(scn_ids *ids, int id);

/* Where a key was set (0: not set), by key name and section kind. */
int scn_desc_key_line(const scn_desc *d, const char *name);
int scn_scene_key_line(const scn_scene *s, const char *name, scn_kind kind);
void scn_desc_mark_key(scn_desc *d, const char *name, int line);
void scn_scene_mark_key(scn_scene *s, const char *name, scn_kind kind, int line);
/* The checks and file loading that need the whole scene; then it can be built. */
scn_status scn_scene_finish(scn_scene *s, scn_error *err);

#endif
