/* Shared pieces of the command-line front end. */
#ifndef TELA_CLI_H
#define TELA_CLI_H

#include <stdbool.h>
#include <stdint.h>

/* Exit codes, documented in `tela --help` and docs/architecture.md. */
enum {
	EXIT_TELA_OK = 0,
	EXIT_TELA_BLOWUP = 1,   /* the simulation diverged (or a check failed) */
	EXIT_TELA_USAGE = 2,    /* bad command line */
	EXIT_TELA_IO = 3,       /* a file could not be read or written */
	EXIT_TELA_INPUT = 3,    /* an input file (scene, mesh, constraints) is missing or malformed */
	EXIT_TELA_DISPLAY = 4,  /* no OpenGL 4.3 context, not even offscreen */
	EXIT_TELA_XR = 5,       /* --xr: no OpenXR runtime or headset, or the runtime failed or lost the session */
	EXIT_TELA_STALL = 6,    /* the simulation made no progress for STOP_STALL_SECONDS (stop.h) */
	/* a run ended by SIGINT or SIGTERM returns 128 + the signal: 130, 143 (stop.h) */
};

int64_t cli_now_ns(void);

/* Strict number parsing: the whole string must be a finite number in range. */
bool cli_parse_double(const char *s, double *out);
bool cli_parse_int(const char *s, long min, long max, long *out);

/* Prints "tela CMD: message" to stderr and returns EXIT_TELA_USAGE. */
int cli_usage_error(const char *cmd, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

/* True when "--help" or "-h" is among argv[first..argc-1]: the command prints its own
 * help then, whatever else was given, so that a half-typed command line still gets it. */
bool cli_wants_help(int argc, char **argv, int first);

/* The CMake project version, with `git describe --always --dirty` appended when built
 * from a git checkout (app/version.c, written at build time). */
const char *tela_version(void);

/* Creates a directory and its parents; returns 0 or errno. */
int cli_mkdirs(const char *path);

/* What an output option names: a file, a folder (created with its parents when missing)
 * or a prefix of file names (PREFIX-xxx.svg: its folder must be there). */
typedef enum cli_output { CLI_OUT_FILE, CLI_OUT_DIR, CLI_OUT_PREFIX } cli_output;
/* Refuses an output path that cannot be written, before the run: says
 * "tela CMD: OPTION PATH: why" on stderr and returns EXIT_TELA_IO, or EXIT_TELA_OK.  It
 * creates and changes nothing, so that a refused run leaves no file behind. */
int cli_check_output(const char *cmd, const char *option, const char *path, cli_output kind);

int cmd_run(int argc, char **argv);
int cmd_bench(int argc, char **argv);
int cmd_mesh(int argc, char **argv); /* cmd_mesh.c: tela mesh grid|move|info */
int cmd_traj(int argc, char **argv); /* cmd_traj.c: tela traj */
int cmd_demo(int argc, char **argv); /* cmd_demo.c: tela [SCENE]: the interactive demo */
void cli_print_help(void);

#endif
