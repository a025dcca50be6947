/* The default view and the debug overlays' selection, without a window.
 *
 * Framing: for every built-in scene, the home view (the scene file's direction, fitted to
 * the scene's box) is put through the orbit camera as the demo does, and every cloth
 * vertex and every obstacle's extreme points, projected with cglm's own lookat and
 * perspective, land inside the target rectangle: the whole window of a headless picture,
 * or the part of a 1280 x 800 window beside the panel.  The box also fills the rectangle
 * to within the margin in one direction, so a view from far away does not pass.
 *
 * Overlays: labels and segments are chosen inside the 3-D view, nearest the focus first,
 * capped, labels apart from each other; checked against brute force. */
#include "test.h"

#include "camera.h"
#include "framing.h"
#include "overlay.h"
#include "scenes/scenes.h"
#include "sim_thread.h"

#include <cglm/cglm.h>
#include <math.h>

typedef struct projector {
	mat4 vp;
	int w, h;
} projector;

static void projector_init(projector *p, const cam_orbit *c, int w, int h)
{
	float eye[3];
	cam_eye(c, eye);
	mat4 view, proj;
	vec3 up = {0.0f, 1.0f, 0.0f};
	glm_lookat(eye, (float *)c->target, up, view);
	glm_perspective(glm_rad(c->fov_degrees), (float)w / (float)h, 0.01f, 200.0f, proj);
	glm_mat4_mul(proj, view, p->vp);
	p->w = w, p->h = h;
}

/* Pixel of a world point; false behind the eye. */
static bool to_pixel(const projector *p, const float x[3], float *px, float *py)
{
	vec4 q = {x[0], x[1], x[2], 1.0f}, r;
	glm_mat4_mulv((vec4 *)p->vp, q, r);
	*px = (r[0] / r[3] * 0.5f + 0.5f) * (float)p->w;
	*py = (0.5f - r[1] / r[3] * 0.5f) * (float)p->h;
	return r[3] > 0.01f;
}

/* What must show, in the test's own terms: cloth vertices, box and sphere corners,
 * capsule ends, mesh vertices, each placed by its obstacle's pose. */
static int scene_points(const st_layout *l, const sim_world *w, float (*out)[3], int cap)
{
	int n = 0;
	const vec4 *x = sim_world_positions(w);
	for (int i = 0; i < sim_world_vertex_count(w) && n < cap; i++, n++)
		for (int k = 0; k < 3; k++)
			out[n][k] = x[i][k];
	for (int o = 0; o < l->obstacle_count; o++) {
		const sim_obstacle_def *d = &l->obstacles[o].def;
		float local[64][3];
		int m = 0;
		if (d->shape == SIM_SHAPE_BOX || d->shape == SIM_SHAPE_SPHERE) {
			for (int c = 0; c < 8; c++)
				for (int k = 0; k < 3; k++) {
					float e = d->shape == SIM_SHAPE_BOX ? d->half_extents[k] : d->radius;
					local[c][k] = (c >> k) & 1 ? e : -e;
				}
			m = 8;
		} else if (d->shape == SIM_SHAPE_CAPSULE) {
			for (int s = -1; s <= 1; s += 2) {
				float end[3] = {0.0f, (float)s * (d->half_height + d->radius), 0.0f};
				memcpy(local[m++], end, sizeof end);
			}
		} else if (d->shape == SIM_SHAPE_MESH) {
			for (int i = 0; i < d->vertex_count && m < 64; i++, m++)
				memcpy(local[m], &d->positions[3 * i], sizeof local[m]);
		}
		for (int i = 0; i < m && n < cap; i++, n++) {
			versor q = {d->orientation[0], d->orientation[1], d->orientation[2], d->orientation[3]};
			vec3 r;
			glm_quat_rotatev(q, local[i], r);
			for (int k = 0; k < 3; k++)
				out[n][k] = r[k] + d->position[k];
		}
	}
	return n;
}

/* One scene in one window shape: the view the demo would start with, checked. */
static void check_framing(const char *name, int w, int h, const float rect[4])
{
	scn_scene *scene = NULL;
	sim_world *world = NULL;
	scn_error err = {0};
	REQUIRE_MSG(scn_load(name, &scene, &err) == SCN_OK && scn_build(scene, &world, &err) == SCN_OK, "%s: %s", name,
	            err.message);
	st_layout l;
	REQUIRE(st_layout_build(&l, scene, world));
	float lo[3], hi[3], eye[3], target[3];
	memcpy(eye, l.camera_position, sizeof eye);
	memcpy(target, l.camera_target, sizeof target);
	CHECK(frame_scene_bounds(&l, (const float(*)[4])sim_world_positions(world), sim_world_vertex_count(world), NULL,
	                         sim_world_get_def(world)->gravity, lo, hi));
	CHECK(frame_fit(lo, hi, l.camera_fov, w, h, rect, 0.08f, eye, target));
	cam_orbit c;
	cam_init(&c, eye, target, l.camera_fov);
	projector p;
	projector_init(&p, &c, w, h);
	enum { CAP = 20000 };
	static float pts[CAP][3];
	int n = scene_points(&l, world, pts, CAP);
	CHECK(n > 0);
	int outside = 0;
	for (int i = 0; i < n; i++) {
		float x, y;
		bool front = to_pixel(&p, pts[i], &x, &y);
		if (!front || x < rect[0] - 0.5f || y < rect[1] - 0.5f || x > rect[0] + rect[2] + 0.5f ||
		    y > rect[1] + rect[3] + 0.5f) {
			if (outside++ < 3)
				fprintf(stderr, "%s %dx%d: point %d (%.3f %.3f %.3f) at pixel %.1f %.1f, outside\n", name, w, h, i,
				        (double)pts[i][0], (double)pts[i][1], (double)pts[i][2], (double)x, (double)y);
		}
	}
	CHECK_MSG(outside == 0, "%s %dx%d: %d of %d points out of the view", name, w, h, outside, n);
	/* a corner of the box reaches the margin (8 % of the half size) and none goes beyond */
	float reach = 0.0f, cx = rect[0] + 0.5f * rect[2], cy = rect[1] + 0.5f * rect[3];
	for (int corner = 0; corner < 8; corner++) {
		float q[3] = {corner & 1 ? hi[0] : lo[0], corner & 2 ? hi[1] : lo[1], corner & 4 ? hi[2] : lo[2]}, x, y;
		CHECK(to_pixel(&p, q, &x, &y));
		reach = fmaxf(reach, fmaxf(fabsf(x - cx) / (0.5f * rect[2]), fabsf(y - cy) / (0.5f * rect[3])));
	}
	CHECK_MSG(fabsf(reach - 0.92f) < 0.002f, "%s %dx%d: the box reaches %.4f of the half view", name, w, h,
	          (double)reach);
	/* its centre at the rectangle's centre */
	float mid[3] = {0.5f * (lo[0] + hi[0]), 0.5f * (lo[1] + hi[1]), 0.5f * (lo[2] + hi[2])}, mx, my;
	CHECK(to_pixel(&p, mid, &mx, &my));
	CHECK_NEAR(mx, rect[0] + 0.5f * rect[2], 0.5);
	CHECK_NEAR(my, rect[1] + 0.5f * rect[3], 0.5);
	st_layout_free(&l);
	sim_world_destroy(&world);
	scn_scene_free(&scene);
}

static void test_every_scene_framed(void)
{
	const float whole[4] = {0.0f, 0.0f, 960.0f, 600.0f};
	/* the window's default size with the panel's 356 pixels on the right */
	const float beside_panel[4] = {0.0f, 0.0f, 1280.0f - 356.0f, 800.0f};
	const float tall[4] = {0.0f, 0.0f, 400.0f, 900.0f};
	REQUIRE(scn_builtin_count() >= 10);
	for (int i = 0; i < scn_builtin_count(); i++) {
		const char *name = scn_builtin_info(i)->name;
		check_framing(name, 960, 600, whole);
		check_framing(name, 1280, 800, beside_panel);
		check_framing(name, 400, 900, tall);
	}
}

/* A unit cube at the origin, seen along -z with a 90 degree field of view in a square
 * window and no margin: its front face (z = 0.5) touches the view's edges when the eye
 * is at z = 1 (the near corners at 45 degrees: 0.5 / (1 - 0.5)). */
static void test_fit_closed_form(void)
{
	float lo[3] = {-0.5f, -0.5f, -0.5f}, hi[3] = {0.5f, 0.5f, 0.5f};
	float eye[3] = {0.0f, 0.0f, 7.0f}, target[3] = {0.0f, 0.0f, 0.0f}, rect[4] = {0.0f, 0.0f, 100.0f, 100.0f};
	CHECK(frame_fit(lo, hi, 90.0f, 100, 100, rect, 0.0f, eye, target));
	CHECK_NEAR(eye[0], 0.0, 1e-6);
	CHECK_NEAR(eye[1], 0.0, 1e-6);
	CHECK_NEAR(eye[2], 1.0, 1e-5);
	CHECK_NEAR(target[2], 0.0, 1e-5);
	/* the left half of a 200-wide window: the eye moves right by half the view's width at
	 * the cube's depth, so the cube appears centred in the left half */
	float rect_left[4] = {0.0f, 0.0f, 100.0f, 100.0f};
	float eye2[3] = {0.0f, 0.0f, 7.0f}, target2[3] = {0.0f, 0.0f, 0.0f};
	CHECK(frame_fit(lo, hi, 90.0f, 200, 100, rect_left, 0.0f, eye2, target2));
	cam_orbit c;
	cam_init(&c, eye2, target2, 90.0f);
	projector p;
	projector_init(&p, &c, 200, 100);
	float x, y;
	CHECK(to_pixel(&p, (const float[3]){0.0f, 0.0f, 0.0f}, &x, &y));
	CHECK_NEAR(x, 50.0, 0.01);
	CHECK_NEAR(y, 50.0, 0.01);
	/* nothing to fit: the view is left alone */
	float empty_lo[3] = {1.0f, 0.0f, 0.0f}, empty_hi[3] = {0.0f, 0.0f, 0.0f}, e3[3] = {1.0f, 2.0f, 3.0f}, t3[3] = {0};
	CHECK(!frame_fit(empty_lo, empty_hi, 45.0f, 100, 100, rect, 0.1f, e3, t3));
	CHECK(e3[0] == 1.0f && e3[1] == 2.0f && e3[2] == 3.0f);
}

/* The pointer's cone from the scene's size: the tetrahedron's 20 cm edges get a cone of
 * a twentieth of their box's diagonal; a table with a metre of cloth on it keeps the
 * 8 cm cone. */
static void test_pointer_scaled(void)
{
	const char *names[2] = {"tetrahedron", "table"};
	float length[2];
	for (int s = 0; s < 2; s++) {
		scn_scene *scene = NULL;
		sim_world *world = NULL;
		scn_error err = {0};
		REQUIRE(scn_load(names[s], &scene, &err) == SCN_OK && scn_build(scene, &world, &err) == SCN_OK);
		st_layout l;
		REQUIRE(st_layout_build(&l, scene, world));
		float lo[3], hi[3];
		CHECK(frame_scene_bounds(&l, (const float(*)[4])sim_world_positions(world), sim_world_vertex_count(world), NULL,
		                         sim_world_get_def(world)->gravity, lo, hi));
		length[s] = frame_pointer_length(lo, hi);
		float diagonal = sqrtf((hi[0] - lo[0]) * (hi[0] - lo[0]) + (hi[1] - lo[1]) * (hi[1] - lo[1]) +
		                       (hi[2] - lo[2]) * (hi[2] - lo[2]));
		if (s == 0)
			CHECK_NEAR(length[s], 0.05f * diagonal, 1e-6);
		st_layout_free(&l);
		sim_world_destroy(&world);
		scn_scene_free(&scene);
	}
	/* a regular tetrahedron of edge 0.2 spans at most 0.2 along any axis */
	CHECK_MSG(length[0] > 0.005f && length[0] <= 0.05f * sqrtf(3.0f) * 0.2f + 1e-6f, "tetrahedron: %.4f m",
	          (double)length[0]);
	CHECK_NEAR(length[1], 0.08, 1e-6);
	float point[3] = {0.3f, 0.3f, 0.3f};
	CHECK_NEAR(frame_pointer_length(point, point), 0.005, 1e-7);
}

/* The floor under a cloth dropped onto it is part of the box; with no gravity, it is not;
 * obstacles count where a snapshot's poses put them. */
static void test_floor_under_falling_cloth(void)
{
	scn_scene *scene = NULL;
	sim_world *world = NULL;
	scn_error err = {0};
	REQUIRE(scn_load("table", &scene, &err) == SCN_OK && scn_build(scene, &world, &err) == SCN_OK);
	st_layout l;
	REQUIRE(st_layout_build(&l, scene, world));
	float lo[3], hi[3];
	const float down[3] = {0.0f, -9.81f, 0.0f}, none[3] = {0.0f, 0.0f, 0.0f};
	CHECK(frame_scene_bounds(&l, (const float(*)[4])sim_world_positions(world), sim_world_vertex_count(world), NULL,
	                         down, lo, hi));
	CHECK_NEAR(lo[1], 0.0, 1e-6); /* table.ini's floor, at y = 0 */
	CHECK_NEAR(hi[1], 0.95, 1e-5); /* the cloth above the table */
	CHECK(frame_scene_bounds(&l, (const float(*)[4])sim_world_positions(world), sim_world_vertex_count(world), NULL,
	                         none, lo, hi));
	CHECK_NEAR(lo[1], 0.7, 1e-5); /* the table's underside: 0.75 - 0.05 */
	/* at a snapshot's poses: the table lifted by 1 m tops the box at 1.8 m */
	float poses[8][7];
	REQUIRE(l.obstacle_count <= 8);
	for (int i = 0; i < l.obstacle_count; i++) {
		memcpy(poses[i], l.obstacles[i].def.position, 3 * sizeof(float));
		memcpy(poses[i] + 3, l.obstacles[i].def.orientation, 4 * sizeof(float));
		if (l.obstacles[i].def.shape == SIM_SHAPE_BOX)
			poses[i][1] += 1.0f;
	}
	CHECK(frame_scene_bounds(&l, (const float(*)[4])sim_world_positions(world), sim_world_vertex_count(world),
	                         (const float(*)[7])poses, down, lo, hi));
	CHECK_NEAR(hi[1], 1.8, 1e-5);
	CHECK_NEAR(lo[1], 0.0, 1e-6);
	st_layout_free(&l);
	sim_world_destroy(&world);
	scn_scene_free(&scene);
}

/* A 33 x 33 lattice of labels 10 px apart: at most the cap, each inside the view, none
 * closer than the spacing to another, nearest to the focus first, and no label left out
 * that is nearer than the farthest kept one while being clear of all those kept. */
static void test_labels_picked(void)
{
	enum { N = 33 * 33 };
	static float xy[N][2];
	for (int i = 0; i < N; i++)
		xy[i][0] = 10.0f * (float)(i % 33), xy[i][1] = 10.0f * (float)(i / 33);
	const float rect[4] = {0.0f, 0.0f, 250.0f, 400.0f}, focus[2] = {100.0f, 100.0f};
	int chosen[OV_LABEL_CAP];
	int n = ov_pick_labels((const float(*)[2])xy, N, rect, focus, OV_LABEL_CAP, OV_LABEL_SPACING, chosen);
	CHECK_MSG(n > 10 && n <= OV_LABEL_CAP, "%d labels", n);
	CHECK(chosen[0] == 10 * 33 + 10); /* the label at the focus itself */
	float last = 0.0f;
	for (int i = 0; i < n; i++) {
		const float *p = xy[chosen[i]];
		CHECK(p[0] >= rect[0] && p[0] < rect[0] + rect[2] && p[1] >= rect[1] && p[1] < rect[1] + rect[3]);
		float d = hypotf(p[0] - focus[0], p[1] - focus[1]);
		CHECK(d >= last);
		last = d;
		for (int j = 0; j < i; j++)
			CHECK(hypotf(p[0] - xy[chosen[j]][0], p[1] - xy[chosen[j]][1]) >= OV_LABEL_SPACING);
	}
	if (n < OV_LABEL_CAP) {
		/* fewer than the cap: every label inside the view is then crowded out by a kept one */
		for (int i = 0; i < N; i++) {
			if (!(xy[i][0] < rect[2] && xy[i][1] < rect[3]))
				continue;
			bool crowded = false;
			for (int j = 0; j < n && !crowded; j++)
				crowded = hypotf(xy[i][0] - xy[chosen[j]][0], xy[i][1] - xy[chosen[j]][1]) < OV_LABEL_SPACING;
			CHECK(crowded);
		}
	}
	/* nothing inside: nothing drawn */
	const float away[4] = {1000.0f, 1000.0f, 50.0f, 50.0f};
	CHECK(ov_pick_labels((const float(*)[2])xy, N, away, focus, OV_LABEL_CAP, OV_LABEL_SPACING, chosen) == 0);
}

/* 2000 segments on a spiral around the focus, some off the view: those kept cross the
 * view, number the cap, keep their order, and are all nearer the focus than any dropped
 * one that crosses the view. */
static void test_segments_picked(void)
{
	enum { N = 2000 };
	static float g[N][5], original[N][5];
	for (int i = 0; i < N; i++) {
		float a = 0.05f * (float)i, r = 2.0f + 0.5f * (float)i;
		g[i][0] = 300.0f + r * cosf(a), g[i][1] = 300.0f + r * sinf(a);
		g[i][2] = g[i][0] + 8.0f, g[i][3] = g[i][1] + 3.0f;
		g[i][4] = (float)i; /* the colour slot carries the index, to follow it */
	}
	memcpy(original, g, sizeof g);
	const float rect[4] = {0.0f, 0.0f, 600.0f, 500.0f}, focus[2] = {300.0f, 300.0f};
	int n = ov_pick_segments(g, N, rect, focus, OV_SEGMENT_CAP);
	CHECK(n == OV_SEGMENT_CAP);
	static bool kept[N];
	float farthest_kept = 0.0f;
	for (int i = 0; i < n; i++) {
		int k = (int)g[i][4];
		CHECK(memcmp(g[i], original[k], sizeof g[i]) == 0);
		if (i > 0)
			CHECK(g[i][4] > g[i - 1][4]);
		kept[k] = true;
		float ax = original[k][0] - focus[0], ay = original[k][1] - focus[1];
		float bx = original[k][2] - focus[0], by = original[k][3] - focus[1];
		farthest_kept = fmaxf(farthest_kept, fminf(hypotf(ax, ay), hypotf(bx, by)));
	}
	/* the spiral grows outwards, so a dropped segment's nearer end is farther than the
	 * kept ones' (an end-point bound: the segments are short and do not point inwards) */
	for (int k = 0; k < N; k++) {
		if (kept[k])
			continue;
		float ax = original[k][0] - focus[0], ay = original[k][1] - focus[1];
		CHECK(hypotf(ax, ay) > farthest_kept - 9.0f);
	}
	/* entirely outside: all dropped, without a cap to reach */
	float off[3][5] = {{-50, -50, -10, -20, 0}, {700, 10, 800, 30, 0}, {10, 600, 20, 700, 0}};
	CHECK(ov_pick_segments(off, 3, rect, focus, OV_SEGMENT_CAP) == 0);
	/* one that crosses the view with both ends outside it is kept */
	float across[1][5] = {{-100.0f, 250.0f, 700.0f, 250.0f, 0.0f}};
	CHECK(ov_pick_segments(across, 1, rect, focus, OV_SEGMENT_CAP) == 1);
}

static const test_case tests[] = {
    TEST(test_fit_closed_form),   TEST(test_every_scene_framed), TEST(test_pointer_scaled),
    TEST(test_floor_under_falling_cloth), TEST(test_labels_picked), TEST(test_segments_picked),
};

TEST_MAIN(tests)
