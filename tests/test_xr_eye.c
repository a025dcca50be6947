/* Does the test runtime's read-back of the left eye (tests/xr.cmake) show the cloth where
 * the geometry puts it?  The expectation is computed here from the script's poses, not
 * from tela: the square of tests/data/scenes/stylus-corner.ini (world y = 1, x and z in
 * [-0.2, 0.2], the free corner (0.2, 0.2) lifted 10 cm when the picture is taken), seen
 * from the script's head (stage (0, 1.6, 0), looking along -z) whose stage tela puts at
 * world (0, 0, 1.2), through the runtime's left eye (32 mm to the left, field of view
 * tangents of -0.8, 0.7, 0.75 and -0.8 rad).
 *
 * The cloth is drawn blue (its pixels are bluer than they are red or green by a margin
 * that the grey background and floor grid never reach): at least half of the projected
 * quadrilateral must be cloth-coloured, and almost every cloth-coloured pixel must lie in
 * it (a few pixels' margin for the lifted corner's curved edges). */
#include "test.h"

#include <stdbool.h>
#include <stdint.h>

typedef struct image {
	int w, h;
	unsigned char *rgb;
} image;

static const char *path_arg;

static bool read_ppm(const char *path, image *im)
{
	FILE *f = fopen(path, "rb");
	if (!f)
		return false;
	int max = 0;
	bool ok = fscanf(f, "P6 %d %d %d", &im->w, &im->h, &max) == 3 && max == 255 && fgetc(f) == '\n' && im->w > 0 &&
	          im->h > 0 && im->w < 10000 && im->h < 10000;
	im->rgb = ok ? malloc((size_t)im->w * (size_t)im->h * 3) : NULL;
	ok = ok && im->rgb && fread(im->rgb, 3, (size_t)im->w * (size_t)im->h, f) == (size_t)im->w * (size_t)im->h;
	fclose(f);
	return ok;
}

/* Pixel (x right, y down) of a world point in the left eye. */
static void project(const double world[3], double *px, double *py, int w, int h)
{
	double eye[3] = {-0.032, 1.6, 1.2};
	double d[3] = {world[0] - eye[0], world[1] - eye[1], world[2] - eye[2]};
	double tx = d[0] / -d[2], ty = d[1] / -d[2];
	double l = tan(-0.8), r = tan(0.7), u = tan(0.75), dn = tan(-0.8);
	*px = (tx - l) / (r - l) * w;
	*py = (u - ty) / (u - dn) * h;
}

/* Signed distance (pixels, negative inside) from a point to a convex quadrilateral. */
static double quad_distance(const double q[4][2], double x, double y)
{
	double worst = -1e9;
	double area = 0.0;
	for (int i = 0; i < 4; i++)
		area += q[i][0] * q[(i + 1) % 4][1] - q[(i + 1) % 4][0] * q[i][1];
	double sign = area > 0.0 ? 1.0 : -1.0;
	for (int i = 0; i < 4; i++) {
		double ex = q[(i + 1) % 4][0] - q[i][0], ey = q[(i + 1) % 4][1] - q[i][1];
		double len = sqrt(ex * ex + ey * ey);
		/* outward distance from the edge's line */
		double dd = -sign * (ex * (y - q[i][1]) - ey * (x - q[i][0])) / len;
		if (dd > worst)
			worst = dd;
	}
	return worst;
}

static void test_eye_shows_the_cloth(void)
{
	image im = {0};
	REQUIRE_MSG(read_ppm(path_arg, &im), "cannot read the eye image %s", path_arg);
	const double corners[4][3] = {{-0.2, 1.0, -0.2}, {0.2, 1.0, -0.2}, {0.2, 1.1, 0.2}, {-0.2, 1.0, 0.2}};
	double q[4][2];
	for (int i = 0; i < 4; i++)
		project(corners[i], &q[i][0], &q[i][1], im.w, im.h);
	long inside = 0, inside_cloth = 0, cloth = 0, cloth_far = 0;
	for (int y = 0; y < im.h; y++)
		for (int x = 0; x < im.w; x++) {
			const unsigned char *p = im.rgb + 3 * ((size_t)y * (size_t)im.w + (size_t)x);
			bool blue = p[2] >= p[0] + 25 && p[2] >= p[1] + 15;
			double dist = quad_distance((const double(*)[2])q, x + 0.5, y + 0.5);
			if (dist < 0.0) {
				inside++;
				inside_cloth += blue;
			}
			if (blue) {
				cloth++;
				cloth_far += dist > 6.0;
			}
		}
	printf("eye %dx%d: quadrilateral %ld px, %ld of them cloth; %ld cloth px in all, %ld far outside\n", im.w, im.h,
	       inside, inside_cloth, cloth, cloth_far);
	CHECK(inside > 500); /* the geometry itself: the cloth is well in view */
	CHECK_MSG(inside_cloth * 2 >= inside, "%ld of %ld", inside_cloth, inside);
	CHECK_MSG(cloth_far * 50 <= cloth, "%ld of %ld", cloth_far, cloth);
	free(im.rgb);
}

int main(int argc, char **argv)
{
	if (argc < 2) {
		fprintf(stderr, "usage: test_xr_eye EYE.ppm\n");
		return 2;
	}
	path_arg = argv[1];
	test_eye_shows_the_cloth();
	return test_failures_ ? 1 : 0;
}
