/* libFuzzer target for the scene-file reader (scn_parse) and, on what it accepts, the
 * builder (scn_build).  The text is read as if it were TELA_FUZZ_ASSETS/fuzz.ini, so that
 * `file = cloth.stl` and `velocities = cloth.vel` in the seeds reach the small meshes and
 * constraint files there and the mesh and velocity paths of the scene are exercised too. */
#include "fuzz_check.h"

#include "scene_internal.h"
#include "scenes/scenes.h"

#include <math.h>
#include <stdbool.h>

#ifndef TELA_FUZZ_ASSETS
#error "TELA_FUZZ_ASSETS must name the folder of the files the seed scenes refer to"
#endif

static const char PATH[] = TELA_FUZZ_ASSETS "/fuzz.ini";

/* The reader's limits let a valid scene ask for a 4096 x 4096 grid or a million slots of
 * motion per vertex: correct, but gigabytes and seconds for one input, which would read
 * as an out-of-memory or a timeout.  Such scenes are read and checked, not built.  The
 * block limit is low because the world inserts velocity blocks in time order one by one
 * (quadratic): the twist scene's 19200 blocks take seconds under the sanitizers. */
static bool cheap_to_build(const scn_scene *s)
{
	double vertices = 0.0, blocks = 0.0;
	for (int i = 0; i < s->desc_count; i++) {
		const scn_desc *d = &s->descs[i];
		if (d->kind == SCN_K_GRID)
			vertices += (double)d->resolution[0] * d->resolution[1];
		if (d->kind == SCN_K_MESH || d->kind == SCN_K_RIGID)
			vertices += d->mesh.vertex_count;
		if (d->kind == SCN_K_MOTION && d->slot > 0.0f)
			blocks += (double)d->vertices.count * ceil(((double)d->stop - d->start) / d->slot + 1.0);
		blocks += d->velocities.entry_count + d->velocities.block_count;
	}
	return vertices <= 40000.0 && blocks <= 4000.0;
}

static void check_world(const scn_scene *scene, const sim_world *world)
{
	int n = sim_world_vertex_count(world);
	FUZZ_REQUIRE(n >= 0, "a vertex count");
	int objects = sim_world_object_count(world), sum = 0;
	for (int o = 0; o < objects; o++)
		sum += sim_world_object_vertex_count(world, o);
	FUZZ_REQUIRE(sum == n, "the objects' vertices are the world's");
	const vec4 *x = sim_world_positions(world);
	for (int v = 0; v < n; v++)
		for (int k = 0; k < 3; k++)
			FUZZ_REQUIRE(isfinite(x[v][k]), "a built world starts at finite positions");
	for (int o = 0; o < objects; o++) {
		float rgb[3];
		scn_scene_cloth_color(scene, o, rgb);
	}
	for (int o = 0; o < sim_world_obstacle_count(world); o++) {
		float rgb[3];
		scn_scene_obstacle_color(scene, o, rgb);
	}
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	scn_scene *scene = (scn_scene *)&scene; /* anything but NULL: the reader must clear it */
	scn_error err = {0};
	scn_status st = scn_parse((const char *)data, size, PATH, &scene, &err);
	if (st != SCN_OK) {
		fuzz_check_failure(st, &err, PATH);
		FUZZ_REQUIRE(scene == NULL, "a failed read leaves no scene");
		return 0;
	}
	fuzz_check_success(&err);
	FUZZ_REQUIRE(scene != NULL, "a scene");
	const scn_info *info = scn_scene_info(scene);
	FUZZ_REQUIRE(info && isfinite(info->dt) && info->dt > 0.0f, "a positive step");
	FUZZ_REQUIRE(isfinite(info->seconds) && info->seconds >= 0.0, "a length");
	float position[3], target[3], fov;
	scn_scene_view(scene, position, target, &fov);
	FUZZ_REQUIRE(isfinite(fov) && fov > 0.0f && fov < 180.0f, "a field of view");
	if (cheap_to_build(scene)) {
		sim_world *world = (sim_world *)&world;
		scn_error build_err = {0};
		st = scn_build(scene, &world, &build_err);
		if (st != SCN_OK) {
			fuzz_check_failure(st, &build_err, PATH);
			FUZZ_REQUIRE(world == NULL, "a failed build leaves no world");
		} else {
			fuzz_check_success(&build_err);
			FUZZ_REQUIRE(world != NULL, "a world");
			check_world(scene, world);
			sim_world_destroy(&world);
		}
	}
	scn_scene_free(&scene);
	FUZZ_REQUIRE(scene == NULL, "free clears the pointer");
	return 0;
}
