/* PNG output for screenshots and frame sequences (libpng). */
#ifndef TELA_PNG_IO_H
#define TELA_PNG_IO_H

#include <stdint.h>

/* Writes RGBA8 pixels, top row first.  Returns 0 or an errno-style code; the file is
 * removed when it could not be written completely. */
int png_write_rgba(const char *path, int width, int height, const uint8_t *rgba);

#endif
