/* tela: real-time cloth for hands-on deformation demos.  Command dispatch. */
#define _POSIX_C_SOURCE 200809L
#include "cli.h"
#include "cmd_ccd.h"

#include "scenes/scenes.h"
#include "sim/sim.h"

#include <stdio.h>
#include <string.h>
#include <sys/stat.h>

void cli_print_help(void)
{
	printf(
	    "tela: real-time cloth and deformable objects\n"
	    "\n"
	    "usage:\n"
	    "  tela [SCENE] [--headless] [--out FILE.png] [--seconds T] [--size WxH] [--paused]\n"
	    "       [--panel | --no-panel] [--record FILE] [--device SPEC [--calibration FILE]\n"
	    "       [--gain G] [--camera-station N]] [--grab-radius R] [--backend cpu|gpu]\n"
	    "                            the interactive demo (default scene: hanging; keys and mouse\n"
	    "                            in docs/user-guide.md).  With no display, or --headless, it\n"
	    "                            runs offscreen: a scripted grab pulls the cloth, then it\n"
	    "                            writes FILE.png (default tela-SCENE.png) and a summary.\n"
	    "                            --backend gpu: start with the panel's GPU integrator on.\n"
	    "                            --device SPEC: a tracked stylus drives the pointer (in a\n"
	    "                            window from a device thread in real time, the mouse keeping\n"
	    "                            the camera; headless in lock step): polhemus[:BUS-ADDR],\n"
	    "                            synthetic:grab[+orbit][@HZ][,fast][,seconds=S],\n"
	    "                            replay:FILE[@SPEED] (docs/devices.md).  In a window,\n"
	    "                            station N (default 2; 0: none) moves the camera.\n"
	    "  tela --xr [SCENE] [--hand left|right] [--seconds T] [--size WxH] [--no-panel]\n"
	    "       [--paused] [--grab-radius R] [--device SPEC [--calibration STAGE.cal] [--gain G]]\n"
	    "       [--record FILE]\n"
	    "                            the scene in an OpenXR headset (docs/vr.md); a controller's\n"
	    "                            trigger grabs (default the right hand) and it vibrates with\n"
	    "                            the pull; the window mirrors the left eye.  --device: a\n"
	    "                            tracked stylus grabs instead, its calibration mapping the\n"
	    "                            tracker into the headset's stage.\n"
	    "                            --record FILE: records the device's traffic or, without\n"
	    "                            --device, the mouse's pointer, for --device replay:FILE.\n"
	    "                            --grab-radius R: a grab holds the cloth within R metres of\n"
	    "                            the picked vertex (default 0: the vertex alone).\n"
	    "  tela run SCENE [options]  run a scene headless and exit\n"
	    "  tela scenes               list the built-in scenes, one per line, name first\n"
	    "  tela bench integrators [--csv FILE] [--sizes N,N,...] [--dt S] [--seconds T]\n"
	    "                            time every integrator on square cloths (one core)\n"
	    "  tela bench collisions [--csv FILE] [--seconds T] [--threads N | --clock cpu]\n"
	    "                        [--case pile|drape] [--drops N] [--steps FILE]\n"
	    "                            collision pipeline stage timings, p50/p99 per step;\n"
	    "                            --threads N: on N threads; --clock cpu: the thread's\n"
	    "                            CPU time instead of wall-clock time; --case: one case;\n"
	    "                            --drops N: the drape from N heights 0.1 mm apart, and\n"
	    "                            their steps pooled; --steps FILE: one CSV row per step\n"
	    "                            (its time, stages and counts)\n"
	    "  tela bench gpu [--csv FILE] [--svg PREFIX] [--sizes N,N,...] [--steps N]\n"
	    "                 [--only throughput,stability,elongation,draw]\n"
	    "                            CPU against GPU integrators: steps/s by cloth size, largest\n"
	    "                            stable step, elongation with and without Provot; draw\n"
	    "                            (only when named): the demo's GPU draw buffer against\n"
	    "                            the CPU's normals and upload\n"
	    "  tela bench latency [--seconds T] [--rate HZ]\n"
	    "                            stylus sample arrival to the step that uses it, p50/p99\n"
	    "  tela ccd DIR...           continuous collision detection on benchmark queries\n"
	    "                            (vertex-face / edge-edge CSV folders); exit 1 on a\n"
	    "                            false negative, 3 on unreadable or malformed input\n"
	    "  tela mesh grid OUT --size W L --divisions NW NL --center X Y Z [--binary] [--name NAME]\n"
	    "                            write a flat W x L grid mesh as STL (the seed's fabricCreator)\n"
	    "  tela mesh move IN OUT --translate X Y Z [--rotate RX RY RZ] [--scale S] [--binary]\n"
	    "                            scale, rotate (degrees about x, y, z) and move a mesh\n"
	    "  tela mesh info FILE       vertices, triangles, bounds, welded duplicates, boundary and\n"
	    "                            non-manifold edges of an STL mesh (ASCII or binary)\n"
	    "  tela traj OUT --vertices ID[,ID...] --segment DX,DY,DZ,T [--segment ...]\n"
	    "            [--rest S] [--start T] [--rate HZ] [--release]\n"
	    "                            write a velocity-constraint file: straight segments with\n"
	    "                            minimum-jerk profiles and rests at the ends\n"
	    "  tela --help               this text\n"
	    "\n"
	    "run options:\n"
	    "  --integrator NAME   euler | symplectic | midpoint | rk4 | verlet | implicit | kang | mra\n"
	    "                      (default: the scene's, symplectic for the built-in scenes)\n"
	    "  --dt S              fixed simulation step in seconds (default: the scene's, 0.001)\n"
	    "  --substeps N        integrator steps per simulation step (default 1)\n"
	    "  --threads N         run the simulation's parallel loops on N threads (default 1;\n"
	    "                      the results are the same bits for every N)\n"
	    "  --steps N           number of steps to run\n"
	    "  --seconds T         simulated time to run (default: the scene's); not with --steps\n"
	    "  --stats FILE.csv    one row per step: step,t,kinetic,potential,total,max_strain,\n"
	    "                      mean_strain,cg_iterations,strain_iterations,step_us\n"
	    "  --export-stl DIR    write every object as DIR/frameNNNNNN_<object>.stl\n"
	    "  --every N           with --export-stl: every N steps (default 1; step 0 included)\n"
	    "  --screenshot FILE.png  render the final state offscreen (960x600, the scene's view)\n"
	    "  --strain-limit TAU  Provot strain limiting to relative elongation TAU (e.g. 0.1)\n"
	    "  --no-strain-limit   turn strain limiting off\n"
	    "  --verlet-drag       Verlet's 1.99/0.99 drag form\n"
	    "  --air-damping C     air damping, 1/s\n"
	    "  --wind X,Y,Z        wind velocity, m/s\n"
	    "  --gravity X,Y,Z     gravity, m/s^2\n"
	    "  --cg-tolerance E    implicit Euler: relative CG residual (default 1e-4)\n"
	    "  --quiet             no summary on success\n"
	    "  --check             after every step count intersecting triangle pairs, vertices\n"
	    "                      inside obstacles, and triangles closer to a sphere, capsule or\n"
	    "                      box than their separation less 0.01 mm (measured from the whole\n"
	    "                      triangle) or crossing a mesh obstacle; exit 1 if any step had\n"
	    "                      one; adds the stats columns contacts,collisions,impact_zones,\n"
	    "                      self_contacts,intersections,vertices_inside,triangles_inside,\n"
	    "                      min_clearance (the least triangle distance less separation, m)\n"
	    "  --no-collisions     turn the collision pipeline off\n"
	    "  --no-self-collisions  cloth against obstacles only\n"
	    "  --device SPEC       a tracked stylus grabs the cloth, in lock step (docs/devices.md)\n"
	    "  --calibration FILE  device-to-world calibration for --device\n"
	    "  --record FILE       record the device's raw traffic (tela-rec 1)\n"
	    "  --gain G            the stylus's displacement gain (default 1; seed 002: 0.5)\n"
	    "  --grab-radius R     the stylus's grab holds the cloth within R m of the picked\n"
	    "                      vertex (default 0: the vertex alone)\n"
	    "  --backend cpu|gpu   where the integrator runs (default cpu); gpu: OpenGL 4.3 compute\n"
	    "                      shaders, collisions still on the CPU; without a 4.3 context, or\n"
	    "                      for mra, it says so and the CPU runs (docs/gpu.md)\n"
	    "  --gpu-strain-limit  with --backend gpu: Provot's limit on the GPU (coloured sweeps)\n"
	    "                      (default: the CPU's Gauss-Seidel sweeps between GPU and collisions)\n"
	    "\n"
	    "exit codes:\n"
	    "  0  success\n"
	    "  1  the simulation blew up (the message names the object, vertex and reason; the\n"
	    "     world was rolled back to its last good state), or --check found an\n"
	    "     intersection\n"
	    "  2  bad command line (unknown option, scene or integrator, bad number)\n"
	    "  3  an input file (scene, mesh, velocity constraints, seed folder) is missing or\n"
	    "     malformed (the message names the file and line, or the byte offset), an output\n"
	    "     file could not be written, or out of memory\n"
	    "  4  no OpenGL 4.3 context could be made, not even offscreen (the demo only)\n"
	    "  5  --xr: no OpenXR runtime is installed (or XR_RUNTIME_JSON points nowhere), the\n"
	    "     runtime could not start or sees no headset, or the session was lost\n"
	    "SCENE is a built-in name (tela scenes), a scene file (docs/scene-format.md) or a seed\n"
	    "simulator folder (one holding world_parameters/ and bodies/).\n");
}

static int cmd_scenes(int argc, char **argv)
{
	(void)argv;
	if (argc > 1)
		return cli_usage_error("scenes", "takes no arguments");
	for (int i = 0; i < scn_builtin_count(); i++) {
		const scn_info *s = scn_builtin_info(i);
		printf("%-14s %s\n", s->name, s->description);
	}
	return EXIT_TELA_OK;
}

int main(int argc, char **argv)
{
	sim_set_clock(cli_now_ns);
	if (argc < 2)
		return cmd_demo(0, argv + 1);
	const char *cmd = argv[1];
	if (strcmp(cmd, "--help") == 0 || strcmp(cmd, "-h") == 0 || strcmp(cmd, "help") == 0) {
		cli_print_help();
		return EXIT_TELA_OK;
	}
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
