#include "picture.h"

#include "framing.h"
#include "gl_window.h"
#include "png_io.h"
#include "render.h"

#include <GL/glew.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

int picture_write(const scn_scene *scene, const sim_world *world, const char *path, int width, int height,
                  char *error, int error_size)
{
	gl_window win;
	if (!gl_window_open(&win, true, width, height, false, error, error_size))
		return 4;
	int rc = 3;
	st_layout layout;
	st_snapshot snap;
	bool have_layout = st_layout_build(&layout, scene, world);
	bool have_snap = have_layout && st_snapshot_alloc(&snap, &layout);
	uint8_t *rgba = malloc((size_t)width * (size_t)height * 4);
	rd_renderer *r = NULL;
	if (!have_snap || !rgba) {
		snprintf(error, (size_t)error_size, "out of memory");
	} else if (!(r = rd_create(&layout, error, error_size))) {
		rc = 4;
	} else {
		st_snapshot_capture(&snap, world);
		snap.grabbed_vertex = -1;
		rd_frame f = {.snapshot = &snap, .style = RD_SOLID, .floor_grid = true};
		f.background[0] = 0.16f, f.background[1] = 0.17f, f.background[2] = 0.19f;
		memcpy(f.view.eye, layout.camera_position, sizeof f.view.eye);
		memcpy(f.view.target, layout.camera_target, sizeof f.view.target);
		/* the demo's home view: the scene's box fitted into the picture */
		float lo[3], hi[3], rect[4] = {0.0f, 0.0f, (float)width, (float)height};
		if (frame_scene_bounds(&layout, (const float(*)[4])snap.positions, snap.vertex_count,
		                       (const float(*)[7])snap.obstacle_pose, snap.def.gravity, lo, hi))
			frame_fit(lo, hi, layout.camera_fov, width, height, rect, 0.08f, f.view.eye, f.view.target);
		f.view.up[1] = 1.0f;
		f.view.fov_degrees = layout.camera_fov;
		f.view.width = width, f.view.height = height;
		f.pointer.hover_vertex = f.pointer.grabbed_vertex = -1;
		glViewport(0, 0, width, height);
		rd_draw(r, &f);
		int err = rd_read_rgba(width, height, rgba) ? png_write_rgba(path, width, height, rgba) : -1;
		if (err == 0)
			rc = 0;
		else
			snprintf(error, (size_t)error_size, "%s: %s", path, err > 0 ? strerror(err) : "could not read the frame");
	}
	rd_destroy(&r);
	free(rgba);
	if (have_snap)
		st_snapshot_free(&snap);
	if (have_layout)
		st_layout_free(&layout);
	gl_window_close(&win);
	return rc;
}
