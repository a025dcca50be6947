/* tela: real-time cloth for hands-on deformation demos.  Command dispatch. */
#define _POSIX_C_SOURCE 200809L
#include "cli.h"
#include "cmd_ccd.h"
#include "stop.h"

#include "scenes/scenes.h"
#include "sim/sim.h"

#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

void cli_print_help(void)
{
	printf(
	    "tela: real-time cloth and deformable objects\n"
	    "\n"
	    "usage:\n"
	    "  tela [SCENE] [options]    the interactive demo (default scene: hanging); with no\n"
	    "                            display, or --headless, a scripted grab offscreen that\n"
	    "                            writes a picture and a summary\n"
	    "  tela --xr [SCENE] [options]  the scene in an OpenXR headset (docs/vr.md)\n"
	    "  tela demo [SCENE] [options]  the demo, by name\n"
	    "  tela run SCENE [options]  run a scene headless and exit\n"
	    "  tela scenes               list the built-in scenes, one per line, name first\n"
	    "  tela bench integrators|collisions|gpu|latency [options]\n"
	    "                            speed figures (docs/benchmarks.md)\n"
	    "  tela ccd DIR...           continuous collision detection on benchmark queries\n"
	    "  tela mesh grid|move|info ...  write, move and check STL, OBJ and PLY meshes (docs/tools.md)\n"
	    "  tela traj OUT [options]   write a velocity-constraint file (docs/tools.md)\n"
	    "  tela --version            the version (also: tela version)\n"
	    "  tela --help               this text (also: tela help)\n"
	    "\n"
	    "Every command prints its own usage and options with --help (or -h), e.g.\n"
	    "'tela run --help', 'tela mesh grid --help', 'tela bench gpu --help', and the demo's\n"
	    "with 'tela demo --help'; 'tela help COMMAND' does the same.\n"
	    "\n"
	    "integrators (tela run --integrator, scene files): euler | symplectic | midpoint |\n"
	    "  rk4 | verlet | implicit | kang | mra (docs/integrators.md)\n"
	    "\n"
	    "exit codes:\n"
	    "  0  success\n"
	    "  1  the simulation blew up (the message names the object, vertex and reason, and\n"
	    "     what to try: options and scene keys; the world was rolled back to its last\n"
	    "     good state), or --check found an intersection or a triangle inside an obstacle\n"
	    "  2  bad command line (unknown option, scene or integrator, bad number)\n"
	    "  3  an input file (scene, mesh, velocity constraints, seed folder) is missing or\n"
	    "     malformed (the message names the file and line, or the byte offset), an output\n"
	    "     file could not be written (a path that cannot be is refused before the run), or\n"
	    "     out of memory; or the --device could not be opened: no Polhemus tracker found,\n"
	    "     one still showing its firmware loader's id (its firmware is not loaded), a\n"
	    "     polhemus:BUS-ADDR that is malformed or names no tracker, an unreadable or\n"
	    "     malformed replay:FILE, an unknown device (the message says which and what to do)\n"
	    "  4  no OpenGL 4.3 context could be made, not even offscreen (the demo only)\n"
	    "  5  --xr: no OpenXR runtime is installed (or XR_RUNTIME_JSON points nowhere), the\n"
	    "     runtime could not start or sees no headset, or the session was lost\n"
	    "  6  the simulation made no progress for 30 s (a step that never ended); the run\n"
	    "     was given up, with what it had written so far\n"
	    "  130, 143  stopped by SIGINT (Ctrl-C) or SIGTERM: every mode stops within a second,\n"
	    "     its files whole (CSV rows, recordings, meshes, pictures: none half-written); the\n"
	    "     headless demo then writes no picture; a second signal (0.25 s or more after\n"
	    "     the first) ends it at once\n"
	    "SCENE is a built-in name (tela scenes), a scene file (docs/scene-format.md) or a seed\n"
	    "simulator folder (one holding world_parameters/ and bodies/).\n");
}

static int cmd_scenes(int argc, char **argv)
{
	if (cli_wants_help(argc, argv, 1)) {
		printf("usage: tela scenes\n"
		       "Lists the built-in scenes, one per line: the name, then what the scene shows.\n"
		       "A name runs as 'tela NAME' (the demo) or 'tela run NAME'; the scene files behind\n"
		       "them are scenes/*.ini in the source tree (docs/scene-format.md).\n");
		return EXIT_TELA_OK;
	}
	if (argc > 1)
		return cli_usage_error("scenes", "takes no arguments");
	for (int i = 0; i < scn_builtin_count(); i++) {
		const scn_info *s = scn_builtin_info(i);
		printf("%-14s %s\n", s->name, s->description);
	}
	return EXIT_TELA_OK;
}

static bool is_command(const char *name)
{
	static const char *const commands[] = {"run", "scenes", "bench", "ccd", "mesh", "traj", "version", "demo"};
	for (size_t i = 0; i < sizeof commands / sizeof commands[0]; i++)
		if (strcmp(name, commands[i]) == 0)
			return true;
	return false;
}

/* Only records the signal: the loops poll it (stop.h).  A second one means "now", unless
 * it comes within a quarter second of the first: a terminal's Ctrl-C reaches the whole
 * process group, and a wrapper (timeout, a shell) that forwards it delivers it twice. */
static struct timespec first_signal;

static void on_stop_signal(int sig)
{
	struct timespec now;
	clock_gettime(CLOCK_MONOTONIC, &now); /* async-signal-safe */
	if (!stop_signal) {
		first_signal = now;
		stop_signal = sig;
		return;
	}
	double since = (double)(now.tv_sec - first_signal.tv_sec) + 1e-9 * (double)(now.tv_nsec - first_signal.tv_nsec);
	if (since >= 0.25)
		_exit(128 + sig);
}

static void install_stop_handlers(void)
{
	struct sigaction sa;
	memset(&sa, 0, sizeof sa);
	sa.sa_handler = on_stop_signal;
	/* one handler at a time: a SIGTERM does not interrupt the SIGINT's */
	sigemptyset(&sa.sa_mask);
	sigaddset(&sa.sa_mask, SIGINT);
	sigaddset(&sa.sa_mask, SIGTERM);
	/* restarted calls: no library's blocking call fails with EINTR because of a signal */
	sa.sa_flags = SA_RESTART;
	sigaction(SIGINT, &sa, NULL);
	sigaction(SIGTERM, &sa, NULL);
}

static int dispatch(int argc, char **argv);

int main(int argc, char **argv)
{
	sim_set_clock(cli_now_ns);
	/* before SDL starts: it installs its own handlers only where it finds the default */
	install_stop_handlers();
	int rc = dispatch(argc, argv);
	if (stop_requested() && rc != stop_exit_code()) {
		/* a command that ended before it looked (or has nothing to look at) still ends as
		 * stopped: its files are whole, as the handler interrupts no write */
		fflush(stdout);
		fprintf(stderr, "tela: stopped by %s\n", stop_signal_name());
		rc = stop_exit_code();
	}
	return rc;
}

static int dispatch(int argc, char **argv)
{
	if (argc < 2)
		return cmd_demo(0, argv + 1);
	if (strcmp(argv[1], "help") == 0 && argc == 3) {
		/* `tela help COMMAND` is `tela COMMAND --help` */
		static char help[] = "--help";
		if (!is_command(argv[2]))
			return cli_usage_error("help", "'%s' is not a command", argv[2]);
		argv[1] = argv[2];
		argv[2] = help;
	}
	const char *cmd = argv[1];
	if (strcmp(cmd, "--help") == 0 || strcmp(cmd, "-h") == 0 || strcmp(cmd, "help") == 0) {
		cli_print_help();
		return EXIT_TELA_OK;
	}
	if (strcmp(cmd, "--version") == 0 || strcmp(cmd, "version") == 0) {
		if (argc > 2 && !cli_wants_help(argc - 1, argv + 1, 1))
			return cli_usage_error("version", "takes no arguments");
		printf("tela %s\n", tela_version());
		return EXIT_TELA_OK;
	}
	if (strcmp(cmd, "demo") == 0)
		return cmd_demo(argc - 2, argv + 2);
	if (strcmp(cmd, "run") == 0)
		return cmd_run(argc - 1, argv + 1);
	if (strcmp(cmd, "scenes") == 0)
		return cmd_scenes(argc - 1, argv + 1);
	if (strcmp(cmd, "bench") == 0)
		return cmd_bench(argc - 1, argv + 1);
	if (strcmp(cmd, "ccd") == 0)
		return cmd_ccd(argc - 1, argv + 1);
	if (strcmp(cmd, "mesh") == 0)
		return cmd_mesh(argc - 1, argv + 1);
	if (strcmp(cmd, "traj") == 0)
		return cmd_traj(argc - 1, argv + 1);
	/* anything else is the demo's: a scene (name, file or folder) or a demo option */
	struct stat st;
	if (cmd[0] != '-' && !scn_builtin_text(cmd) && !strpbrk(cmd, "/.") && stat(cmd, &st) != 0) {
		fprintf(stderr, "tela: '%s' is neither a command nor a scene\n(see 'tela --help' and 'tela scenes')\n", cmd);
		return EXIT_TELA_USAGE;
	}
	return cmd_demo(argc - 1, argv + 1);
}
