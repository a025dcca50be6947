/* PNG output with libpng.  libpng reports errors by longjmp from inside its calls, so
 * everything the error path touches is set up before setjmp or is volatile, and the
 * error path alone closes and removes a partial file. */
#define _POSIX_C_SOURCE 200809L
#include "png_io.h"

#include <errno.h>
#include <png.h>
#include <setjmp.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/stat.h>

/* libpng's default handlers print to stderr; the caller reports the failure instead. */
static void png_error_quiet(png_structp png, png_const_charp message)
{
	(void)message;
	png_longjmp(png, 1);
}

static void png_warning_quiet(png_structp png, png_const_charp message)
{
	(void)png;
	(void)message;
}

int png_write_rgba(const char *path, int width, int height, const uint8_t *rgba)
{
	/* libpng's own limit is 2^31 - 1 per side; a screenshot is far below this one. */
	if (!path || !rgba || width <= 0 || height <= 0 || width > (1 << 16) || height > (1 << 16))
		return EINVAL;
	png_bytep *rows = malloc((size_t)height * sizeof *rows);
	if (!rows)
		return ENOMEM;
	for (int y = 0; y < height; y++)
		rows[y] = (png_bytep)(rgba + 4 * (size_t)width * (size_t)y);

	/* written beside its name and renamed into place, so that nobody (and no run ended
	 * halfway) ever sees half a picture; a device or other special file is written in place */
	char part[4096];
	struct stat st;
	bool in_place = stat(path, &st) == 0 && !S_ISREG(st.st_mode);
	if (!in_place && snprintf(part, sizeof part, "%s.part", path) >= (int)sizeof part) {
		free(rows);
		return ENAMETOOLONG;
	}
	const char *target = in_place ? path : part;
	errno = 0;
	FILE *file = fopen(target, "wb");
	if (!file) {
		int code = errno ? errno : EIO;
		free(rows);
		return code;
	}
	png_structp png = png_create_write_struct(PNG_LIBPNG_VER_STRING, NULL, png_error_quiet, png_warning_quiet);
	png_infop info = png ? png_create_info_struct(png) : NULL;
	/* volatile: read after a longjmp back into this frame. */
	volatile int code = 0;
	if (!info) {
		code = ENOMEM;
	} else if (setjmp(png_jmpbuf(png))) {
		/* A short write sets errno (ENOSPC, EIO); a libpng error does not. */
		code = errno ? errno : EIO;
	} else {
		errno = 0;
		png_init_io(png, file);
		png_set_IHDR(png, info, (png_uint_32)width, (png_uint_32)height, 8, PNG_COLOR_TYPE_RGB_ALPHA,
		             PNG_INTERLACE_NONE, PNG_COMPRESSION_TYPE_DEFAULT, PNG_FILTER_TYPE_DEFAULT);
		/* Screenshots are written while the demo runs: speed over the last few percent. */
		png_set_compression_level(png, 3);
		png_write_info(png, info);
		png_write_image(png, rows);
		png_write_end(png, info);
	}
	png_destroy_write_struct(png ? &png : NULL, info ? &info : NULL);
	free(rows);
	errno = 0;
	/* fclose flushes the last buffer: a full disk shows up here. */
	if (fclose(file) != 0 && code == 0)
		code = errno ? errno : EIO;
	if (code == 0 && !in_place && rename(part, path) != 0)
		code = errno ? errno : EIO;
	if (code != 0 && !in_place)
		remove(part);
	return code;
}
