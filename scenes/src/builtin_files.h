/* The built-in scene files, compiled in (see scenes/embed.cmake). */
#ifndef TELA_BUILTIN_FILES_H
#define TELA_BUILTIN_FILES_H

typedef struct scn_builtin_file {
	const char *name;
	const char *text;
} scn_builtin_file;

extern const scn_builtin_file scn_builtin_files[];
extern const int scn_builtin_file_count;

#endif
