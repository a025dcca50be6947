/* The renderer (issue 5) on Mesa's llvmpipe, with no GPU and no display: SDL's
 * offscreen driver (EGL) when DISPLAY is unset, GLX under Xvfb otherwise.  Layouts and
 * snapshots are built by hand, frames are drawn into an FBO and read back, and every
 * expectation is placed by projecting world points with cglm here, independently of the
 * renderer.  Colours are compared by dominance and thresholds, never exact values, so
 * that rasterisation and rounding differences between drivers do not matter. */
#define _POSIX_C_SOURCE 200809L /* setenv, getpid, access, rlimits */

#include "png_io.h"
#include "render.h"

#include "test.h"

#include <GL/glew.h>
#include <SDL.h>
#include <cglm/cglm.h>
#include <errno.h>
#include <png.h>
#include <signal.h>
#include <sys/resource.h>
#include <unistd.h>

#define W 256
#define H 192

static const float BACKGROUND[3] = {0.12f, 0.14f, 0.18f};
static uint8_t BG[3]; /* the background as it reads back */

static SDL_Window *window;
static SDL_GLContext context;
static GLuint fbo, color_buffer, depth_buffer;
static uint8_t image[W * H * 4];

/* ---- scene helpers -------------------------------------------------------------------- */

/* An n x n vertex grid of size x size metres centred at the origin in the plane y = 0,
 * counter-clockwise seen from +y (its front side is up).  Vertex (i, j) is at
 * x = -size/2 + i size/(n-1), z = -size/2 + j size/(n-1). */
typedef struct grid {
	int n;
	float size;
	vec4 positions[64];
	int triangles[2 * 3 * 49];
	int triangle_count;
} grid;

static void make_grid(grid *g, int n, float size)
{
	g->n = n;
	g->size = size;
	for (int j = 0; j < n; j++)
		for (int i = 0; i < n; i++) {
			float *p = g->positions[j * n + i];
			p[0] = -0.5f * size + size * (float)i / (float)(n - 1);
			p[1] = 0.0f;
			p[2] = -0.5f * size + size * (float)j / (float)(n - 1);
			p[3] = 1.0f;
		}
	g->triangle_count = 0;
	for (int j = 0; j + 1 < n; j++)
		for (int i = 0; i + 1 < n; i++) {
			int a = j * n + i, b = a + 1, c = a + n, d = c + 1;
			int tris[6] = {a, c, b, b, c, d};
			memcpy(g->triangles + 3 * g->triangle_count, tris, sizeof tris);
			g->triangle_count += 2;
		}
}

/* The point at parameters (s, t) in [0, 1]^2 of the flat grid. */
static void grid_point(const grid *g, float s, float t, vec3 out)
{
	out[0] = -0.5f * g->size + s * g->size;
	out[1] = 0.0f;
	out[2] = -0.5f * g->size + t * g->size;
}

static st_object cloth_object(const grid *g, float r, float gr, float b)
{
	st_object o = {.name = "cloth", .first_vertex = 0, .vertex_count = g->n * g->n,
	               .triangle_count = g->triangle_count, .triangles = g->triangles, .color = {r, gr, b}};
	return o;
}

static rd_frame frame_for(const st_snapshot *s, const float eye[3], rd_style style)
{
	rd_frame f = {.snapshot = s, .style = style, .floor_grid = false};
	memcpy(f.view.eye, eye, sizeof f.view.eye);
	f.view.target[0] = f.view.target[1] = f.view.target[2] = 0.0f;
	f.view.up[1] = 1.0f;
	f.view.fov_degrees = 45.0f;
	f.view.width = W;
	f.view.height = H;
	f.pointer.hover_vertex = -1;
	f.pointer.grabbed_vertex = -1;
	memcpy(f.background, BACKGROUND, sizeof f.background);
	return f;
}

static st_snapshot snapshot_for(vec4 *positions, int vertex_count)
{
	st_snapshot s = {.serial = 1, .vertex_count = vertex_count, .positions = positions, .grabbed_vertex = -1};
	return s;
}

/* ---- projection, done here with cglm independently of the renderer -------------------- */

static void projection_of(const rd_frame *f, mat4 mvp)
{
	mat4 view, projection;
	glm_lookat((float *)f->view.eye, (float *)f->view.target, (float *)f->view.up, view);
	/* The clip planes do not move a pixel; any valid pair will do. */
	glm_perspective(glm_rad(f->view.fov_degrees), (float)W / (float)H, 0.05f, 50.0f, projection);
	glm_mat4_mul(projection, view, mvp);
}

/* Pixel column and row (top row 0) of a world point; false when off screen. */
static bool project(const rd_frame *f, const vec3 world, int *x, int *y)
{
	mat4 mvp;
	projection_of(f, mvp);
	vec3 win;
	glm_project((float *)world, mvp, (vec4){0.0f, 0.0f, (float)W, (float)H}, win);
	*x = (int)floorf(win[0]);
	*y = H - 1 - (int)floorf(win[1]);
	return *x >= 0 && *x < W && *y >= 0 && *y < H;
}

static const uint8_t *pixel(const uint8_t *img, int x, int y)
{
	return img + 4 * ((size_t)y * W + (size_t)x);
}

static bool is_background(const uint8_t *p)
{
	for (int c = 0; c < 3; c++)
		if (abs((int)p[c] - (int)BG[c]) > 3)
			return false;
	return true;
}

/* Red clearly dominates: the cloth's hue (1, 0, 0) under white light. */
static bool is_red(const uint8_t *p)
{
	return p[0] > 60 && p[0] > 2 * p[1] + 10 && p[0] > 2 * p[2] + 10;
}

static bool dominant(const uint8_t *p, int channel)
{
	int a = p[(channel + 1) % 3], b = p[(channel + 2) % 3];
	return p[channel] > 60 && p[channel] > a + 40 && p[channel] > b + 40;
}

static int count_red(const uint8_t *img)
{
	int n = 0;
	for (int i = 0; i < W * H; i++)
		n += is_red(img + 4 * i);
	return n;
}

/* Some pixel within `radius` of (x, y) satisfies the predicate. */
static bool near_pixel(const uint8_t *img, int x, int y, int radius, bool (*pred)(const uint8_t *, int), int arg)
{
	for (int dy = -radius; dy <= radius; dy++)
		for (int dx = -radius; dx <= radius; dx++) {
			int px = x + dx, py = y + dy;
			if (px >= 0 && px < W && py >= 0 && py < H && pred(pixel(img, px, py), arg))
				return true;
		}
	return false;
}

/* ---- GL ------------------------------------------------------------------------------- */

static bool gl_setup(void)
{
	const char *display = getenv("DISPLAY");
	if (!display || !*display)
		setenv("SDL_VIDEODRIVER", "offscreen", 1);
	if (SDL_Init(SDL_INIT_VIDEO) != 0) {
		fprintf(stderr, "SDL_Init: %s\n", SDL_GetError());
		return false;
	}
	SDL_GL_SetAttribute(SDL_GL_CONTEXT_MAJOR_VERSION, 4);
	SDL_GL_SetAttribute(SDL_GL_CONTEXT_MINOR_VERSION, 3);
	SDL_GL_SetAttribute(SDL_GL_CONTEXT_PROFILE_MASK, SDL_GL_CONTEXT_PROFILE_CORE);
	/* A debug context, so that GL errors reach the renderer's debug callback. */
	SDL_GL_SetAttribute(SDL_GL_CONTEXT_FLAGS, SDL_GL_CONTEXT_DEBUG_FLAG);
	SDL_GL_SetAttribute(SDL_GL_DEPTH_SIZE, 24);
	window = SDL_CreateWindow("test_render", SDL_WINDOWPOS_UNDEFINED, SDL_WINDOWPOS_UNDEFINED, W, H,
	                          SDL_WINDOW_OPENGL | SDL_WINDOW_HIDDEN);
	if (!window) {
		fprintf(stderr, "SDL_CreateWindow: %s\n", SDL_GetError());
		return false;
	}
	context = SDL_GL_CreateContext(window);
	if (!context) {
		fprintf(stderr, "SDL_GL_CreateContext: %s\n", SDL_GetError());
		return false;
	}
	glewExperimental = GL_TRUE;
	GLenum glew = glewInit();
	if (glew != GLEW_OK && glew != GLEW_ERROR_NO_GLX_DISPLAY) {
		fprintf(stderr, "glewInit: %u\n", (unsigned)glew);
		return false;
	}
	printf("video driver %s, GL %s, renderer %s\n", SDL_GetCurrentVideoDriver(), glGetString(GL_VERSION),
	       glGetString(GL_RENDERER));
	/* An FBO rather than the hidden window's framebuffer: an unmapped window's pixels
	 * may fail the pixel ownership test under X. */
	glGenFramebuffers(1, &fbo);
	glGenRenderbuffers(1, &color_buffer);
	glGenRenderbuffers(1, &depth_buffer);
	glBindRenderbuffer(GL_RENDERBUFFER, color_buffer);
	glRenderbufferStorage(GL_RENDERBUFFER, GL_RGBA8, W, H);
	glBindRenderbuffer(GL_RENDERBUFFER, depth_buffer);
	glRenderbufferStorage(GL_RENDERBUFFER, GL_DEPTH_COMPONENT24, W, H);
	glBindFramebuffer(GL_FRAMEBUFFER, fbo);
	glFramebufferRenderbuffer(GL_FRAMEBUFFER, GL_COLOR_ATTACHMENT0, GL_RENDERBUFFER, color_buffer);
	glFramebufferRenderbuffer(GL_FRAMEBUFFER, GL_DEPTH_ATTACHMENT, GL_RENDERBUFFER, depth_buffer);
	if (glCheckFramebufferStatus(GL_FRAMEBUFFER) != GL_FRAMEBUFFER_COMPLETE) {
		fprintf(stderr, "the test framebuffer is incomplete\n");
		return false;
	}
	for (int c = 0; c < 3; c++)
		BG[c] = (uint8_t)lroundf(BACKGROUND[c] * 255.0f);
	return glGetError() == GL_NO_ERROR;
}

/* Frees what the test made.  The context, the window and SDL are left to the process's
 * exit on purpose: destroying them unloads Mesa's EGL and driver libraries, whose
 * remaining allocations LeakSanitizer then reports from an "unknown module" that no
 * suppression can name. */
static void gl_teardown(void)
{
	if (context) {
		glBindFramebuffer(GL_FRAMEBUFFER, 0);
		glDeleteFramebuffers(1, &fbo);
		glDeleteRenderbuffers(1, &color_buffer);
		glDeleteRenderbuffers(1, &depth_buffer);
	}
}

static rd_renderer *create(const st_layout *layout)
{
	char error[512];
	rd_renderer *r = rd_create(layout, error, (int)sizeof error);
	if (!r)
		fprintf(stderr, "rd_create: %s\n", error);
	return r;
}

/* Draws a frame and reads it into `out`. */
static bool draw(rd_renderer *r, const rd_frame *f, uint8_t *out)
{
	glBindFramebuffer(GL_FRAMEBUFFER, fbo);
	rd_draw(r, f);
	return rd_read_rgba(W, H, out);
}

/* With TELA_RENDER_DUMP=DIR set, every checked frame is also written to DIR/NAME.png,
 * for a person to look at. */
static void dump(const char *name, const uint8_t *img)
{
	const char *dir = getenv("TELA_RENDER_DUMP");
	if (!dir || !*dir)
		return;
	char path[512];
	snprintf(path, sizeof path, "%s/%s.png", dir, name);
	if (png_write_rgba(path, W, H, img) != 0)
		fprintf(stderr, "cannot write %s\n", path);
}

static st_layout cloth_layout(st_object *object, const grid *g)
{
	st_layout l = {.scene = "test", .vertex_count = g->n * g->n, .object_count = 1, .objects = object};
	return l;
}

/* ---- tests ---------------------------------------------------------------------------- */

static const float FRONT_EYE[3] = {0.0f, 1.0f, 1.4f};
static const float BELOW_EYE[3] = {0.0f, -1.0f, 1.4f};

/* Counts the red pixels at the grid's interior sample points (s, t in 0.1 .. 0.9) and
 * accumulates their mean colour. */
static int interior_red(const grid *g, const rd_frame *f, const uint8_t *img, int *samples, double mean[3])
{
	int red = 0;
	*samples = 0;
	if (mean)
		mean[0] = mean[1] = mean[2] = 0.0;
	for (int i = 1; i <= 9; i++)
		for (int j = 1; j <= 9; j++) {
			vec3 p;
			grid_point(g, 0.1f * (float)i, 0.1f * (float)j, p);
			int x, y;
			if (!project(f, p, &x, &y))
				continue;
			const uint8_t *px = pixel(img, x, y);
			red += is_red(px);
			(*samples)++;
			if (mean)
				for (int c = 0; c < 3; c++)
					mean[c] += px[c];
		}
	if (mean && *samples)
		for (int c = 0; c < 3; c++)
			mean[c] /= *samples;
	return red;
}

/* The projected bounding box of the grid's corners. */
static void grid_box(const grid *g, const rd_frame *f, int box[4])
{
	box[0] = W;
	box[1] = H;
	box[2] = -1;
	box[3] = -1;
	for (int k = 0; k < 4; k++) {
		vec3 p;
		grid_point(g, (float)(k & 1), (float)(k >> 1), p);
		int x, y;
		project(f, p, &x, &y);
		box[0] = x < box[0] ? x : box[0];
		box[1] = y < box[1] ? y : box[1];
		box[2] = x > box[2] ? x : box[2];
		box[3] = y > box[3] ? y : box[3];
	}
}

/* A red 1 m cloth seen from above: red at every interior sample point, background
 * everywhere well outside its projected box; the renderer's own matrices agree. */
static void test_solid_cloth_in_place(void)
{
	grid g;
	make_grid(&g, 3, 1.0f);
	st_object object = cloth_object(&g, 1.0f, 0.0f, 0.0f);
	st_layout layout = cloth_layout(&object, &g);
	st_snapshot s = snapshot_for(g.positions, g.n * g.n);
	rd_renderer *r = create(&layout);
	REQUIRE(r);
	rd_frame f = frame_for(&s, FRONT_EYE, RD_SOLID);
	REQUIRE(draw(r, &f, image));
	dump("solid", image);

	int samples = 0;
	int red = interior_red(&g, &f, image, &samples, NULL);
	CHECK_MSG(samples == 81, "%d samples on screen", samples);
	CHECK_MSG(red == samples, "%d of %d interior samples are red", red, samples);

	int box[4];
	grid_box(&g, &f, box);
	CHECK(box[0] > 10 && box[2] < W - 10 && box[1] > 10 && box[3] < H - 10);
	int outside = 0, not_background = 0;
	for (int y = 0; y < H; y += 2)
		for (int x = 0; x < W; x += 2) {
			if (x >= box[0] - 4 && x <= box[2] + 4 && y >= box[1] - 4 && y <= box[3] + 4)
				continue;
			outside++;
			if (!is_background(pixel(image, x, y)))
				not_background++;
		}
	CHECK(outside > 1000);
	CHECK_MSG(not_background == 0, "%d of %d pixels outside the cloth are not background", not_background,
	          outside);
	/* The cloth fills a good part of its box (a perspective quad, not a sliver). */
	int box_area = (box[2] - box[0] + 1) * (box[3] - box[1] + 1);
	CHECK_MSG(count_red(image) > box_area / 2, "%d red pixels in a box of %d", count_red(image), box_area);

	mat4 view, projection, mine, theirs;
	rd_view_matrices(&f.view, view, projection);
	glm_mat4_mul(projection, view, theirs);
	projection_of(&f, mine);
	vec3 corner, a, b;
	grid_point(&g, 0.0f, 1.0f, corner);
	glm_project(corner, mine, (vec4){0, 0, W, H}, a);
	glm_project(corner, theirs, (vec4){0, 0, W, H}, b);
	CHECK_NEAR(a[0], b[0], 1e-3);
	CHECK_NEAR(a[1], b[1], 1e-3);

	CHECK(rd_gl_error_count(r) == 0);
	rd_destroy(&r);
	CHECK(r == NULL);
}

static bool is_dark_line(const uint8_t *p, int unused)
{
	(void)unused;
	return p[0] < 110 && !is_background(p);
}

static bool is_red_pred(const uint8_t *p, int unused)
{
	(void)unused;
	return is_red(p);
}

/* The wireframe keeps a fraction of the solid's red pixels, along the edges; over the
 * solid, dark lines cross a still red surface. */
static void test_wireframe_styles(void)
{
	grid g;
	make_grid(&g, 3, 1.0f);
	st_object object = cloth_object(&g, 1.0f, 0.0f, 0.0f);
	st_layout layout = cloth_layout(&object, &g);
	st_snapshot s = snapshot_for(g.positions, g.n * g.n);
	rd_renderer *r = create(&layout);
	REQUIRE(r);
	static uint8_t solid[W * H * 4], wire[W * H * 4], both[W * H * 4];
	rd_frame f = frame_for(&s, FRONT_EYE, RD_SOLID);
	REQUIRE(draw(r, &f, solid));
	f.style = RD_WIREFRAME;
	REQUIRE(draw(r, &f, wire));
	f.style = RD_SOLID_WIREFRAME;
	REQUIRE(draw(r, &f, both));
	dump("wireframe", wire);
	dump("solid_wireframe", both);

	int red_solid = count_red(solid), red_wire = count_red(wire);
	CHECK_MSG(red_wire > 150, "only %d red line pixels", red_wire);
	CHECK_MSG(red_wire < red_solid / 4, "wireframe %d red pixels, solid %d", red_wire, red_solid);

	/* The cells are empty in the wireframe and red in both other styles; the middle line
	 * (s = 0.5) is drawn in both line styles. */
	for (int k = 0; k < 4; k++) {
		vec3 p;
		/* Off the cell's diagonal, which runs through its centre. */
		grid_point(&g, k & 1 ? 0.65f : 0.15f, k & 2 ? 0.65f : 0.15f, p);
		int x, y;
		REQUIRE(project(&f, p, &x, &y));
		CHECK_MSG(is_background(pixel(wire, x, y)), "cell %d centre not empty in the wireframe", k);
		CHECK_MSG(is_red(pixel(both, x, y)), "cell %d centre not red under the lines", k);
	}
	for (int k = 1; k <= 3; k++) {
		vec3 p;
		grid_point(&g, 0.5f, 0.25f * (float)k, p);
		int x, y;
		REQUIRE(project(&f, p, &x, &y));
		CHECK_MSG(near_pixel(wire, x, y, 1, is_red_pred, 0), "no red line at s = 0.5, t = %g", 0.25 * k);
		CHECK_MSG(near_pixel(both, x, y, 1, is_dark_line, 0), "no dark line at s = 0.5, t = %g", 0.25 * k);
	}
	int changed = 0;
	for (int i = 0; i < W * H; i++)
		changed += abs((int)both[4 * i] - (int)solid[4 * i]) > 40;
	CHECK_MSG(changed > 150 && changed < red_solid / 3, "%d pixels changed by the overlay", changed);
	CHECK(rd_gl_error_count(r) == 0);
	rd_destroy(&r);
}

/* Seen from below, the back side is lit with the flipped normal (red, not black) and
 * shaded differently from the front. */
static void test_back_side_lit(void)
{
	grid g;
	make_grid(&g, 3, 1.0f);
	st_object object = cloth_object(&g, 1.0f, 0.0f, 0.0f);
	st_layout layout = cloth_layout(&object, &g);
	st_snapshot s = snapshot_for(g.positions, g.n * g.n);
	rd_renderer *r = create(&layout);
	REQUIRE(r);
	rd_frame front = frame_for(&s, FRONT_EYE, RD_SOLID), below = frame_for(&s, BELOW_EYE, RD_SOLID);
	static uint8_t top[W * H * 4], bottom[W * H * 4];
	REQUIRE(draw(r, &front, top));
	REQUIRE(draw(r, &below, bottom));
	dump("back_side", bottom);
	int n_top, n_bottom;
	double mean_top[3], mean_bottom[3];
	int red_top = interior_red(&g, &front, top, &n_top, mean_top);
	int red_bottom = interior_red(&g, &below, bottom, &n_bottom, mean_bottom);
	CHECK(red_top == n_top);
	CHECK_MSG(red_bottom == n_bottom, "%d of %d back samples red", red_bottom, n_bottom);
	CHECK_MSG(mean_bottom[0] > 90.0, "the back side is dark: mean red %.1f", mean_bottom[0]);
	printf("  front mean %.1f %.1f %.1f, back mean %.1f %.1f %.1f\n", mean_top[0], mean_top[1], mean_top[2],
	       mean_bottom[0], mean_bottom[1], mean_bottom[2]);
	/* The same light rig sees both sides the same way, so the difference is the tint. */
	double diff = 0.0;
	for (int c = 0; c < 3; c++)
		diff = fmax(diff, fabs(mean_top[c] - mean_bottom[c]));
	CHECK_MSG(diff > 8.0, "front and back look alike (largest channel difference %.1f)", diff);
	CHECK(rd_gl_error_count(r) == 0);
	rd_destroy(&r);
}

/* The normals come from the current snapshot: a tilted cloth looks the same whether or
 * not a flat one was drawn before it, and differently from the flat one. */
static void test_normals_follow_snapshot(void)
{
	grid g;
	make_grid(&g, 5, 1.0f);
	vec4 tilted[25], flat[25];
	memcpy(flat, g.positions, sizeof flat);
	/* Rolled 40 degrees about z: the normal leans right, away from the key light. */
	for (int i = 0; i < 25; i++) {
		float x = g.positions[i][0], y = g.positions[i][1];
		float a = glm_rad(-40.0f);
		tilted[i][0] = cosf(a) * x - sinf(a) * y;
		tilted[i][1] = sinf(a) * x + cosf(a) * y;
		tilted[i][2] = g.positions[i][2];
		tilted[i][3] = 1.0f;
	}
	st_object object = cloth_object(&g, 1.0f, 0.0f, 0.0f);
	st_layout layout = cloth_layout(&object, &g);
	st_snapshot s = snapshot_for(tilted, 25);
	rd_renderer *r = create(&layout);
	REQUIRE(r);
	static uint8_t first[W * H * 4], second[W * H * 4], middle[W * H * 4];
	rd_frame f = frame_for(&s, FRONT_EYE, RD_SOLID);
	REQUIRE(draw(r, &f, first));
	s.positions = flat;
	REQUIRE(draw(r, &f, middle));
	s.positions = tilted;
	REQUIRE(draw(r, &f, second));
	dump("tilted", second);
	int worst = 0;
	for (int i = 0; i < W * H * 4; i++)
		worst = abs((int)first[i] - (int)second[i]) > worst ? abs((int)first[i] - (int)second[i]) : worst;
	CHECK_MSG(worst <= 1, "the same snapshot drew differently (largest difference %d)", worst);

	/* The centre stays in place; its shade changes with the normal. */
	vec3 center = {0.0f, 0.0f, 0.0f};
	int x, y;
	REQUIRE(project(&f, center, &x, &y));
	const uint8_t *a = pixel(first, x, y), *b = pixel(middle, x, y);
	printf("  tilted centre %d %d %d, flat centre %d %d %d\n", a[0], a[1], a[2], b[0], b[1], b[2]);
	CHECK(is_red(a) && is_red(b));
	CHECK_MSG(abs((int)a[0] - (int)b[0]) > 10, "tilting the cloth did not change its shading");
	CHECK(rd_gl_error_count(r) == 0);
	rd_destroy(&r);
}

/* Obstacles appear where their poses put them (not at their definitions' positions),
 * in their colours and lit from the front. */
static void test_obstacles_posed(void)
{
	st_obstacle obstacles[2];
	memset(obstacles, 0, sizeof obstacles);
	obstacles[0].def = sim_obstacle_def_default(SIM_SHAPE_SPHERE);
	obstacles[0].def.radius = 0.15f;
	memcpy(obstacles[0].color, (float[3]){0.1f, 0.9f, 0.1f}, sizeof obstacles[0].color);
	obstacles[1].def = sim_obstacle_def_default(SIM_SHAPE_BOX);
	glm_vec3_copy((vec3){0.12f, 0.12f, 0.12f}, obstacles[1].def.half_extents);
	memcpy(obstacles[1].color, (float[3]){0.1f, 0.2f, 0.95f}, sizeof obstacles[1].color);
	st_layout layout = {.scene = "obstacles", .obstacle_count = 2, .obstacles = obstacles};

	float poses[2][7] = {{0.35f, 0.15f, -0.1f, 0, 0, 0, 1}, {-0.4f, 0.1f, 0.0f, 0, 0, 0, 1}};
	versor q;
	glm_quatv(q, glm_rad(40.0f), (vec3){0.0f, 1.0f, 0.0f});
	memcpy(poses[1] + 3, q, sizeof q);
	st_snapshot s = {.serial = 1, .obstacle_count = 2, .obstacle_pose = poses, .grabbed_vertex = -1};
	rd_renderer *r = create(&layout);
	REQUIRE(r);
	rd_frame f = frame_for(&s, FRONT_EYE, RD_SOLID);
	REQUIRE(draw(r, &f, image));
	dump("obstacles", image);

	int x, y;
	REQUIRE(project(&f, poses[0], &x, &y));
	const uint8_t *p = pixel(image, x, y);
	CHECK_MSG(dominant(p, 1) && p[1] > 110, "sphere centre %d %d %d", p[0], p[1], p[2]);
	REQUIRE(project(&f, poses[1], &x, &y));
	p = pixel(image, x, y);
	CHECK_MSG(dominant(p, 2) && p[2] > 110, "box centre %d %d %d", p[0], p[1], p[2]);
	/* Nothing at the definitions' position (the origin), nor just beyond the sphere. */
	REQUIRE(project(&f, (vec3){0.0f, 0.0f, 0.0f}, &x, &y));
	CHECK(is_background(pixel(image, x, y)));
	REQUIRE(project(&f, (vec3){0.35f + 0.15f * 1.4f, 0.15f, -0.1f}, &x, &y));
	CHECK(is_background(pixel(image, x, y)));
	REQUIRE(project(&f, (vec3){0.35f - 0.15f * 0.7f, 0.15f, -0.1f}, &x, &y));
	CHECK(dominant(pixel(image, x, y), 1));

	/* A kinematic obstacle moves with its pose. */
	poses[0][0] = -0.05f;
	poses[0][1] = 0.45f;
	REQUIRE(draw(r, &f, image));
	REQUIRE(project(&f, poses[0], &x, &y));
	CHECK(dominant(pixel(image, x, y), 1));
	REQUIRE(project(&f, (vec3){0.35f, 0.15f, -0.1f}, &x, &y));
	CHECK(is_background(pixel(image, x, y)));
	CHECK(rd_gl_error_count(r) == 0);
	rd_destroy(&r);
}

/* A floor plane (with the grid on it), a capsule and a mesh obstacle, with the cloth. */
static void test_floor_capsule_mesh(void)
{
	static const float tetra_positions[] = {0, 0, 0, 0.2f, 0, 0, 0, 0.2f, 0, 0, 0, 0.2f};
	static const int tetra_triangles[] = {0, 2, 1, 0, 1, 3, 0, 3, 2, 1, 2, 3};
	st_obstacle obstacles[3];
	memset(obstacles, 0, sizeof obstacles);
	obstacles[0].def = sim_obstacle_def_default(SIM_SHAPE_PLANE);
	obstacles[0].def.position[1] = -0.3f;
	memcpy(obstacles[0].color, (float[3]){0.55f, 0.55f, 0.55f}, sizeof obstacles[0].color);
	obstacles[1].def = sim_obstacle_def_default(SIM_SHAPE_CAPSULE);
	obstacles[1].def.radius = 0.06f;
	obstacles[1].def.half_height = 0.12f;
	glm_vec3_copy((vec3){-0.45f, 0.0f, 0.3f}, obstacles[1].def.position);
	memcpy(obstacles[1].color, (float[3]){0.95f, 0.1f, 0.95f}, sizeof obstacles[1].color);
	obstacles[2].def = sim_obstacle_def_default(SIM_SHAPE_MESH);
	obstacles[2].def.vertex_count = 4;
	obstacles[2].def.positions = tetra_positions;
	obstacles[2].def.triangle_count = 4;
	obstacles[2].def.triangles = tetra_triangles;
	glm_vec3_copy((vec3){0.4f, -0.05f, 0.35f}, obstacles[2].def.position);
	memcpy(obstacles[2].color, (float[3]){0.1f, 0.2f, 0.95f}, sizeof obstacles[2].color);
	grid g;
	make_grid(&g, 3, 0.6f);
	st_object object = cloth_object(&g, 1.0f, 0.0f, 0.0f);
	st_layout layout = cloth_layout(&object, &g);
	layout.obstacle_count = 3;
	layout.obstacles = obstacles;
	/* No poses in the snapshot: the definitions place the obstacles. */
	st_snapshot s = snapshot_for(g.positions, 9);
	rd_renderer *r = create(&layout);
	REQUIRE(r);
	rd_frame f = frame_for(&s, FRONT_EYE, RD_SOLID);
	static uint8_t with_grid[W * H * 4];
	REQUIRE(draw(r, &f, image));
	f.floor_grid = true;
	REQUIRE(draw(r, &f, with_grid));
	dump("floor_capsule_mesh", with_grid);

	int x, y;
	REQUIRE(project(&f, obstacles[1].def.position, &x, &y));
	const uint8_t *p = pixel(image, x, y);
	CHECK_MSG(p[0] > 100 && p[2] > 100 && p[0] > p[1] + 50 && p[2] > p[1] + 50, "capsule centre %d %d %d", p[0],
	          p[1], p[2]);
	vec3 centroid = {0.4f + 0.05f, -0.05f + 0.05f, 0.35f + 0.05f};
	REQUIRE(project(&f, centroid, &x, &y));
	CHECK_MSG(dominant(pixel(image, x, y), 2), "mesh obstacle %d %d %d", pixel(image, x, y)[0],
	          pixel(image, x, y)[1], pixel(image, x, y)[2]);
	/* The floor: grey below the cloth's edge, under the grid's 5 cm cell centres. */
	vec3 floor_point = {0.05f, -0.3f, 0.45f};
	REQUIRE(project(&f, floor_point, &x, &y));
	p = pixel(image, x, y);
	CHECK_MSG(p[0] > 60 && abs(p[0] - p[1]) < 12 && abs(p[1] - p[2]) < 12, "floor %d %d %d", p[0], p[1], p[2]);
	/* The grid changes the floor along its lines (x = 0 is a major line) and leaves the
	 * cell centres alone. */
	vec3 on_line = {0.0f, -0.3f, 0.45f};
	REQUIRE(project(&f, on_line, &x, &y));
	int changed = 0;
	for (int dx = -1; dx <= 1; dx++)
		changed += abs((int)pixel(with_grid, x + dx, y)[0] - (int)pixel(image, x + dx, y)[0]) > 6;
	CHECK_MSG(changed > 0, "no grid line on the floor");
	REQUIRE(project(&f, floor_point, &x, &y));
	CHECK(abs((int)pixel(with_grid, x, y)[0] - (int)pixel(image, x, y)[0]) <= 2);
	CHECK(rd_gl_error_count(r) == 0);
	rd_destroy(&r);
}

static bool is_cone(const uint8_t *p, int unused)
{
	(void)unused;
	int lo = p[0] < p[1] ? p[0] : p[1];
	lo = lo < p[2] ? lo : p[2];
	int hi = p[0] > p[1] ? p[0] : p[1];
	hi = hi > p[2] ? hi : p[2];
	return lo > 90 && hi - lo < 70;
}

static bool is_hover(const uint8_t *p, int unused)
{
	(void)unused;
	return p[0] > 120 && p[1] > 100 && p[2] < p[1] - 50;
}

static bool is_grab(const uint8_t *p, int unused)
{
	(void)unused;
	return p[1] > 100 && p[2] > 100 && p[0] < p[1] - 50;
}

/* The pointer: the cone from its tip along `direction`, the bounding sphere around the
 * tip, and the hovered and grabbed vertices in their colours; and a grid with no plane
 * lies at y = 0. */
static void test_pointer_and_highlights(void)
{
	grid g;
	make_grid(&g, 3, 1.0f);
	st_object object = cloth_object(&g, 1.0f, 0.0f, 0.0f);
	st_layout layout = cloth_layout(&object, &g);
	st_snapshot s = snapshot_for(g.positions, 9);
	rd_renderer *r = create(&layout);
	REQUIRE(r);
	static uint8_t plain[W * H * 4], with_pointer[W * H * 4];
	rd_frame f = frame_for(&s, FRONT_EYE, RD_SOLID);
	REQUIRE(draw(r, &f, plain));
	f.pointer = (rd_pointer){.visible = true, .position = {0.3f, 0.3f, 0.2f}, .direction = {0.3f, 1.0f, 0.2f},
	                         .radius = 0.12f, .hover_vertex = 4, .grabbed_vertex = 0};
	REQUIRE(draw(r, &f, with_pointer));
	dump("pointer", with_pointer);

	vec3 dir = {0.3f, 1.0f, 0.2f}, along;
	glm_vec3_normalize(dir);
	glm_vec3_scale(dir, 0.05f, along);
	glm_vec3_add(f.pointer.position, along, along);
	int x, y;
	REQUIRE(project(&f, along, &x, &y));
	CHECK_MSG(near_pixel(with_pointer, x, y, 1, is_cone, 0), "no cone at 5 cm from the tip");
	REQUIRE(project(&f, g.positions[4], &x, &y));
	CHECK_MSG(near_pixel(with_pointer, x, y, 1, is_hover, 0), "the hovered vertex is not highlighted");
	CHECK(!near_pixel(plain, x, y, 1, is_hover, 0));
	REQUIRE(project(&f, g.positions[0], &x, &y));
	CHECK_MSG(near_pixel(with_pointer, x, y, 1, is_grab, 0), "the grabbed vertex is not highlighted");

	/* The sphere's circles: changed pixels around the tip out to its projected radius,
	 * none well beyond it. */
	int tx, ty, ex, ey;
	REQUIRE(project(&f, f.pointer.position, &tx, &ty));
	mat4 view;
	glm_lookat((float *)f.view.eye, (float *)f.view.target, (float *)f.view.up, view);
	vec3 right = {view[0][0], view[1][0], view[2][0]}, edge;
	glm_vec3_scale(right, f.pointer.radius, edge);
	glm_vec3_add(f.pointer.position, edge, edge);
	REQUIRE(project(&f, edge, &ex, &ey));
	float radius_px = hypotf((float)(ex - tx), (float)(ey - ty));
	int ring = 0, beyond = 0;
	for (int py = 0; py < H; py++)
		for (int px = 0; px < W; px++) {
			float d = hypotf((float)(px - tx), (float)(py - ty));
			bool differs = false;
			for (int c = 0; c < 3; c++)
				differs |= abs((int)pixel(with_pointer, px, py)[c] - (int)pixel(plain, px, py)[c]) > 8;
			if (!differs)
				continue;
			if (d > 0.8f * radius_px && d < 1.25f * radius_px)
				ring++;
			/* The highlights are far from the tip; leave them out. */
			if (d > 1.5f * radius_px && d < 2.2f * radius_px)
				beyond++;
		}
	CHECK_MSG(ring > 30, "%d pixels of the bounding sphere near %.1f px", ring, radius_px);
	CHECK_MSG(beyond == 0, "%d pixels changed beyond the bounding sphere", beyond);

	/* The floor grid without a plane obstacle lies at y = 0: the x = 0 line in front of
	 * the cloth. */
	f.pointer = (rd_pointer){.hover_vertex = -1, .grabbed_vertex = -1};
	f.floor_grid = true;
	REQUIRE(draw(r, &f, with_pointer));
	dump("floor_grid", with_pointer);
	REQUIRE(project(&f, (vec3){0.0f, 0.0f, 0.7f}, &x, &y));
	int changed = 0;
	for (int dx = -1; dx <= 1; dx++)
		changed += !is_background(pixel(with_pointer, x + dx, y));
	CHECK_MSG(changed > 0, "no grid line at x = 0 in front of the cloth");
	REQUIRE(project(&f, (vec3){0.05f, 0.0f, 0.75f}, &x, &y));
	CHECK(is_background(pixel(with_pointer, x, y)));
	CHECK(rd_gl_error_count(r) == 0);
	rd_destroy(&r);
}

/* A pointer sized to a small scene: a cone a quarter of the default length (2 cm) covers
 * the point 1.5 cm from its tip and not the one 5 cm from it, which the 8 cm cone does. */
static void test_pointer_sized(void)
{
	grid g;
	make_grid(&g, 3, 1.0f);
	st_object object = cloth_object(&g, 1.0f, 0.0f, 0.0f);
	st_layout layout = cloth_layout(&object, &g);
	st_snapshot s = snapshot_for(g.positions, 9);
	rd_renderer *r = create(&layout);
	REQUIRE(r);
	static uint8_t small[W * H * 4];
	rd_frame f = frame_for(&s, FRONT_EYE, RD_SOLID);
	f.pointer = (rd_pointer){.visible = true, .position = {0.3f, 0.3f, 0.2f}, .direction = {0.3f, 1.0f, 0.2f},
	                         .length = 0.02f, .hover_vertex = -1, .grabbed_vertex = -1};
	REQUIRE(draw(r, &f, small));
	dump("pointer_small", small);
	vec3 dir = {0.3f, 1.0f, 0.2f};
	glm_vec3_normalize(dir);
	int x, y;
	vec3 at;
	glm_vec3_scale(dir, 0.015f, at);
	glm_vec3_add(f.pointer.position, at, at);
	REQUIRE(project(&f, at, &x, &y));
	CHECK_MSG(near_pixel(small, x, y, 1, is_cone, 0), "no cone 1.5 cm from the tip");
	glm_vec3_scale(dir, 0.05f, at);
	glm_vec3_add(f.pointer.position, at, at);
	REQUIRE(project(&f, at, &x, &y));
	CHECK_MSG(!near_pixel(small, x, y, 2, is_cone, 0), "a 2 cm cone reaches 5 cm from its tip");
	CHECK(rd_gl_error_count(r) == 0);
	rd_destroy(&r);
}

/* An n x n grid in the xz plane with the quad diagonals alternating as the simulation's
 * grids have them (sim_world_add_grid), one unit per cell, counter-clockwise seen from +y. */
static int alternating_grid(int n, vec4 *x, unsigned *tri)
{
	for (int j = 0; j < n; j++)
		for (int i = 0; i < n; i++)
			glm_vec4_copy((vec4){(float)i, 0.0f, (float)j, 1.0f}, x[j * n + i]);
	int t = 0;
	for (int j = 0; j + 1 < n; j++)
		for (int i = 0; i + 1 < n; i++) {
			unsigned a = (unsigned)(j * n + i), b = a + 1, c = a + (unsigned)n + 1, d = a + (unsigned)n;
			unsigned q[6] = {a, d, b, b, d, c}, p[6] = {a, c, b, a, d, c};
			memcpy(tri + 3 * t, (i + j) & 1 ? q : p, sizeof q);
			t += 2;
		}
	return t;
}

/* The smoothing pass keeps a flat sheet's normals exact, and takes out the zig-zag a fold
 * draws across the alternating diagonals.  The cloth bent up along the line x = 2 z is
 * the same all along it: vertices at the same signed distance from the line (the same
 * x - 2 z, a step of (2, 1) apart) should get the same normal.  But one such step changes
 * the parity of x + z, and with it which diagonals meet at the vertex, so the piecewise
 * flat fold and its area-weighted normals alternate along the line. */
static void test_smoothed_normals(void)
{
	enum { N = 17 };
	static vec4 x[N * N];
	static unsigned tri[6 * N * N];
	static vec3 raw[N * N], smooth[N * N];
	int t = alternating_grid(N, x, tri);
	rd_vertex_normals(x, N * N, tri, t, raw);
	rd_smooth_normals(tri, t, (const vec3 *)raw, N * N, smooth);
	for (int v = 0; v < N * N; v++) {
		CHECK(raw[v][0] == 0.0f && raw[v][1] == 1.0f && raw[v][2] == 0.0f);
		CHECK(smooth[v][0] == 0.0f && smooth[v][1] == 1.0f && smooth[v][2] == 0.0f);
	}
	/* the fold: the side x > 2 z lifted, rising by 1 per unit of distance from the line */
	for (int v = 0; v < N * N; v++)
		x[v][1] = fmaxf(0.0f, (x[v][0] - 2.0f * x[v][2]) / sqrtf(5.0f));
	rd_vertex_normals(x, N * N, tri, t, raw);
	rd_smooth_normals(tri, t, (const vec3 *)raw, N * N, smooth);
	/* vertices near the line, away from the border, compared with the one a step on */
	float spread_raw = 0.0f, spread_smooth = 0.0f;
	for (int j = 2; j + 3 < N; j++)
		for (int i = 2; i + 4 < N; i++) {
			int s = i - 2 * j;
			if (s < -2 || s > 2)
				continue;
			int a = j * N + i, b = (j + 1) * N + i + 2;
			spread_raw = fmaxf(spread_raw, acosf(fminf(1.0f, glm_vec3_dot(raw[a], raw[b]))));
			spread_smooth = fmaxf(spread_smooth, acosf(fminf(1.0f, glm_vec3_dot(smooth[a], smooth[b]))));
		}
	fprintf(stderr, "normals along the fold differ by up to %.2f degrees, smoothed %.2f\n",
	        (double)glm_deg(spread_raw), (double)glm_deg(spread_smooth));
	CHECK_MSG(spread_raw > glm_rad(5.0f), "the fold shows no zig-zag to take out (%.2f degrees)",
	          (double)glm_deg(spread_raw));
	CHECK(spread_smooth < 0.5f * spread_raw);
	/* away from the fold both sides keep their exact normals: (-1, sqrt 5, 2) / sqrt 10
	 * on the lifted side (x = 10, z = 2), +y on the flat one (x = 2, z = 10) */
	float k = 1.0f / sqrtf(10.0f);
	CHECK_NEAR(smooth[2 * N + 10][0], -k, 1e-6);
	CHECK_NEAR(smooth[2 * N + 10][1], sqrtf(5.0f) * k, 1e-6);
	CHECK_NEAR(smooth[2 * N + 10][2], 2.0f * k, 1e-6);
	CHECK(smooth[10 * N + 2][0] == 0.0f && smooth[10 * N + 2][1] == 1.0f && smooth[10 * N + 2][2] == 0.0f);
}

/* rd_create refuses a layout whose triangles point outside their object. */
static void test_bad_layout_rejected(void)
{
	grid g;
	make_grid(&g, 3, 1.0f);
	g.triangles[4] = 9;
	st_object object = cloth_object(&g, 1.0f, 0.0f, 0.0f);
	st_layout layout = cloth_layout(&object, &g);
	char error[256] = "";
	rd_renderer *r = rd_create(&layout, error, (int)sizeof error);
	CHECK(r == NULL);
	CHECK_MSG(strstr(error, "out of range") != NULL, "message: %s", error);
	rd_destroy(&r);
	CHECK(glGetError() == GL_NO_ERROR);
}

/* The debug callback counts a real GL error, so "no errors" in the other tests means
 * something. */
static void test_gl_errors_counted(void)
{
	grid g;
	make_grid(&g, 3, 1.0f);
	st_object object = cloth_object(&g, 1.0f, 0.0f, 0.0f);
	st_layout layout = cloth_layout(&object, &g);
	rd_renderer *r = create(&layout);
	REQUIRE(r);
	CHECK(rd_gl_error_count(r) == 0);
	GLint flags = 0;
	glGetIntegerv(GL_CONTEXT_FLAGS, &flags);
	if (!(flags & GL_CONTEXT_FLAG_DEBUG_BIT))
		printf("  (not a debug context)\n");
	printf("  provoking one GL error on purpose:\n");
	fflush(stdout);
	/* Binding a name that glGenBuffers never returned is an error in a core profile. */
	glBindBuffer(GL_ARRAY_BUFFER, 4000000000u);
	CHECK_MSG(rd_gl_error_count(r) >= 1, "the debug callback saw %d errors", rd_gl_error_count(r));
	while (glGetError() != GL_NO_ERROR) {
	}
	rd_destroy(&r);
}

/* A frame written as PNG reads back identical; an unwritable path or a write that
 * fails midway returns an errno code and leaves no file. */
static void test_png_round_trip(void)
{
	grid g;
	make_grid(&g, 3, 1.0f);
	st_object object = cloth_object(&g, 1.0f, 0.0f, 0.0f);
	st_layout layout = cloth_layout(&object, &g);
	st_snapshot s = snapshot_for(g.positions, 9);
	rd_renderer *r = create(&layout);
	REQUIRE(r);
	rd_frame f = frame_for(&s, FRONT_EYE, RD_SOLID_WIREFRAME);
	f.floor_grid = true;
	REQUIRE(draw(r, &f, image));
	rd_destroy(&r);
	for (int i = 0; i < W * H; i++)
		CHECK(image[4 * i + 3] == 255);

	/* Named by process: the offscreen and the Xvfb runs may share a directory. */
	char path[64];
	snprintf(path, sizeof path, "test_render_%ld.png", (long)getpid());
	CHECK(png_write_rgba(path, W, H, image) == 0);
	png_image read = {.version = PNG_IMAGE_VERSION};
	REQUIRE(png_image_begin_read_from_file(&read, path));
	CHECK(read.width == W && read.height == H);
	read.format = PNG_FORMAT_RGBA;
	static uint8_t back[W * H * 4];
	REQUIRE(png_image_finish_read(&read, NULL, back, 0, NULL));
	CHECK(memcmp(back, image, sizeof image) == 0);
	remove(path);

	const char *missing = "no-such-directory-for-tela/shot.png";
	int code = png_write_rgba(missing, W, H, image);
	CHECK_MSG(code == ENOENT, "code %d", code);
	CHECK(access(missing, F_OK) != 0);
	CHECK(png_write_rgba(path, 0, H, image) == EINVAL);
	CHECK(access(path, F_OK) != 0);

	/* A file size limit makes the write fail midway, after the file was created. */
	struct rlimit old;
	REQUIRE(getrlimit(RLIMIT_FSIZE, &old) == 0);
	struct rlimit small = {.rlim_cur = 200, .rlim_max = old.rlim_max};
	void (*previous)(int) = signal(SIGXFSZ, SIG_IGN);
	REQUIRE(setrlimit(RLIMIT_FSIZE, &small) == 0);
	code = png_write_rgba(path, W, H, image);
	setrlimit(RLIMIT_FSIZE, &old);
	signal(SIGXFSZ, previous);
	CHECK_MSG(code == EFBIG, "code %d (%s)", code, strerror(code));
	CHECK_MSG(access(path, F_OK) != 0, "a partial file was left behind");
	remove(path);
}

static const test_case tests[] = {
	TEST(test_solid_cloth_in_place),
	TEST(test_wireframe_styles),
	TEST(test_back_side_lit),
	TEST(test_normals_follow_snapshot),
	TEST(test_obstacles_posed),
	TEST(test_floor_capsule_mesh),
	TEST(test_pointer_and_highlights),
	TEST(test_pointer_sized),
	TEST(test_smoothed_normals),
	TEST(test_bad_layout_rejected),
	TEST(test_gl_errors_counted),
	TEST(test_png_round_trip),
};

int main(int argc, char **argv)
{
	if (!gl_setup()) {
		fprintf(stderr, "no OpenGL 4.3 core context: the render tests need Mesa (llvmpipe) or a GPU\n");
		gl_teardown();
		return 1;
	}
	int rc = test_run(argc, argv, tests, (int)(sizeof tests / sizeof tests[0]));
	gl_teardown();
	return rc;
}
