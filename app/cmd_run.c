/* tela run: steps a scene headless at its fixed rate, writes statistics and meshes. */
#define _POSIX_C_SOURCE 200809L
#include "cli.h"
#include "grab.h"
#include "stylus_feed.h"
#include "picture.h"
#include "stop.h"
#include "task_pool.h"
#include "gpu_session.h"
#include "events.h"
#include "progress.h"

#include "scenes/scenes.h"
#include "sim/sim.h"

#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

/* --check: how far (m) a cloth triangle may come inside an obstacle's separation before
 * the step fails.  The obstacle passes leave it at the separation up to the rounding of
 * float end positions (about 1e-7 m a metre from the origin); the chord of a 9 mm
 * triangle lying on a 35 cm ball between vertices at the separation dips 30 to 60
 * micrometres below it, which this must see. */
#define CHECK_SURFACE_TOLERANCE 1e-5

typedef struct run_options {
	const char *scene;
	bool have_integrator;
	sim_integrator integrator;
	double dt;            /* 0: the scene's */
	long substeps;        /* 0: the scene's */
	long threads;         /* workers for sim's parallel loops (1: inline) */
	long steps;           /* -1: from seconds */
	double seconds;       /* -1: the scene's */
	const char *stats_path;
	const char *stl_dir;         /* --export-stl or --export */
	bool export_any;            /* --export: any format; --format chooses */
	const char *format_name;    /* --format, or NULL */
	scn_mesh_format export_format;
	const char *screenshot;
	const char *save_scene; /* writes the scene with the options applied, and steps nothing */
	long every;
	int strain_limit;     /* -1 keep, 0 off, 1 on */
	double tau;
	bool verlet_drag;
	bool have_air, have_wind, have_gravity, have_cg;
	double air;
	float wind[3], gravity[3];
	double cg_tolerance;
	bool quiet;
	bool check;
	bool no_collisions, no_self_collisions;
	const char *device, *calibration, *record;
	bool have_gain;
	double gain;
	double grab_radius; /* m; 0: the picked vertex alone */
	bool gpu;        /* --backend gpu */
	bool gpu_strain; /* --gpu-strain-limit */
} run_options;

static bool parse_vec3(const char *s, float out[3])
{
	char buf[128];
	if (snprintf(buf, sizeof buf, "%s", s) >= (int)sizeof buf)
		return false;
	char *save = NULL, *tok = strtok_r(buf, ",", &save);
	for (int k = 0; k < 3; k++) {
		double v;
		if (!tok || !cli_parse_double(tok, &v) || fabs(v) > 1e6)
			return false;
		out[k] = (float)v;
		tok = strtok_r(NULL, ",", &save);
	}
	return tok == NULL;
}

/* Options that take a value, so that an unknown option is reported as unknown even when
 * it is the last argument (not as one that "needs a value"). */
static bool takes_value(const char *a)
{
	static const char *const names[] = {
		"--integrator", "--dt", "--substeps", "--steps", "--seconds", "--stats", "--export-stl", "--export", "--format",
		"--every", "--strain-limit", "--air-damping", "--wind", "--gravity", "--cg-tolerance", "--screenshot",
		"--save-scene",
		"--device", "--calibration", "--record", "--gain", "--grab-radius", "--threads", "--backend",
	};
	for (size_t k = 0; k < sizeof names / sizeof names[0]; k++)
		if (strcmp(a, names[k]) == 0)
			return true;
	return false;
}

static void run_help(void)
{
	printf(
	    "usage: tela run SCENE [options]\n"
	    "Runs SCENE headless for its own duration (or --seconds / --steps), prints a summary and\n"
	    "exits.  SCENE is a built-in name (tela scenes), a scene file (docs/scene-format.md) or\n"
	    "a seed simulator folder (one holding world_parameters/ and bodies/).\n"
	    "\n"
	    "options:\n"
	    "  --integrator NAME   euler | symplectic | midpoint | rk4 | verlet | implicit | kang | mra\n"
	    "                      (default: the scene's; implicit for a scene file that names\n"
	    "                      none, symplectic for the built-in scenes and seed folders)\n"
	    "  --dt S              fixed simulation step in seconds (default: the scene's, 0.001)\n"
	    "  --substeps N        integrator steps per simulation step (default 1)\n"
	    "  --threads N         run the simulation's parallel loops on N threads (default 1;\n"
	    "                      the results are the same bits for every N)\n"
	    "  --steps N           number of steps to run\n"
	    "  --seconds T         simulated time to run (default: the scene's); not with --steps\n"
	    "  --stats FILE.csv    one row per step: step,t,kinetic,potential,total,max_strain,\n"
	    "                      mean_strain,cg_iterations,strain_iterations,step_us\n"
	    "  --export-stl DIR    write every object as DIR/frameNNNNNN_<object>.stl\n"
	    "  --export DIR --format stl|obj|ply   the same in a chosen format (.stl, .obj, .ply)\n"
	    "  --every N           with --export(-stl): every N steps (default 1; step 0 included)\n"
	    "  --screenshot FILE.png  render the final state offscreen (960x600, the scene's view)\n"
	    "  --save-scene FILE.ini  write the scene with the world options given here applied\n"
	    "                      (integrator, dt, gravity...) as a scene file that runs the\n"
	    "                      same, and step nothing (docs/scene-format.md)\n"
	    "  --strain-limit TAU  Provot strain limiting to relative elongation TAU (e.g. 0.1)\n"
	    "  --no-strain-limit   turn strain limiting off\n"
	    "  --verlet-drag       Verlet's 1.99/0.99 drag form\n"
	    "  --air-damping C     air damping, 1/s\n"
	    "  --wind X,Y,Z        wind velocity, m/s\n"
	    "  --gravity X,Y,Z     gravity, m/s^2\n"
	    "  --cg-tolerance E    implicit Euler: relative CG residual (default 1e-4)\n"
	    "  --quiet             no summary on success and no progress line (on a terminal,\n"
	    "                      stderr shows one: simulated time, percent, rate against real time)\n"
	    "  --check             after every step count intersecting triangle pairs, vertices\n"
	    "                      inside obstacles, and triangles closer to a sphere, capsule or\n"
	    "                      box than their separation less 0.01 mm (measured from the whole\n"
	    "                      triangle) or crossing a mesh obstacle; exit 1 if any step had\n"
	    "                      one; adds the stats columns contacts,collisions,impact_zones,\n"
	    "                      self_contacts,intersections,vertices_inside,triangles_inside,\n"
	    "                      min_clearance (the least triangle distance less separation, m)\n"
	    "  --no-collisions     turn the collision pipeline off\n"
	    "  --no-self-collisions  cloth against obstacles only\n"
	    "  --device SPEC       a tracked stylus grabs the cloth, in lock step: polhemus[:BUS-ADDR],\n"
	    "                      synthetic:SCRIPT[@HZ][,fast][,seconds=S], replay:FILE[@SPEED]\n"
	    "                      (docs/devices.md)\n"
	    "  --calibration FILE  device-to-world calibration for --device\n"
	    "  --record FILE       record the device's raw traffic, both ways (tela-rec)\n"
	    "  --gain G            the stylus's displacement gain (default 1; the seed's: 0.5)\n"
	    "  --grab-radius R     the stylus's grab holds the cloth within R m of the picked\n"
	    "                      vertex (default 0: the vertex alone)\n"
	    "  --backend cpu|gpu   where the integrator runs (default cpu); gpu: OpenGL 4.3 compute\n"
	    "                      shaders, collisions still on the CPU; without a 4.3 context, or\n"
	    "                      for mra, it says so and the CPU runs (docs/gpu.md)\n"
	    "  --gpu-strain-limit  with --backend gpu: Provot's limit on the GPU (coloured sweeps)\n"
	    "                      (default: the CPU's Gauss-Seidel sweeps between GPU and collisions)\n"
	    "  -h, --help          this text\n"
	    "\n"
	    "exit codes: 0 success; 1 the simulation blew up (rolled back to its last good state)\n"
	    "or --check found an intersection; 2 bad command line; 3 a missing or malformed input\n"
	    "file, an unwritable output, out of memory, or a --device that cannot be opened (no\n"
	    "tracker, its firmware not loaded, a bad polhemus:BUS-ADDR) (tela --help has the full\n"
	    "list).\n");
}

static int parse_run_options(int argc, char **argv, run_options *o)
{
	*o = (run_options){.steps = -1, .seconds = -1.0, .every = 1, .strain_limit = -1, .threads = 1};
	for (int i = 1; i < argc; i++) {
		const char *a = argv[i];
		const char *val = i + 1 < argc ? argv[i + 1] : NULL;
		bool takes = true;
		if (a[0] != '-') {
			if (o->scene)
				return cli_usage_error("run", "more than one scene given ('%s' and '%s')", o->scene, a);
			o->scene = a;
			continue;
		}
		if (strcmp(a, "--no-strain-limit") == 0) {
			o->strain_limit = 0;
			takes = false;
		} else if (strcmp(a, "--verlet-drag") == 0) {
			o->verlet_drag = true;
			takes = false;
		} else if (strcmp(a, "--quiet") == 0) {
			o->quiet = true;
			takes = false;
		} else if (strcmp(a, "--check") == 0) {
			o->check = true;
			takes = false;
		} else if (strcmp(a, "--no-collisions") == 0) {
			o->no_collisions = true;
			takes = false;
		} else if (strcmp(a, "--gpu-strain-limit") == 0) {
			o->gpu_strain = true;
			takes = false;
		} else if (strcmp(a, "--no-self-collisions") == 0) {
			o->no_self_collisions = true;
			takes = false;
		} else if (!takes_value(a)) {
			return cli_usage_error("run", "unknown option '%s'", a);
		} else if (!val) {
			return cli_usage_error("run", "option %s needs a value", a);
		} else if (strcmp(a, "--integrator") == 0) {
			if (!sim_integrator_from_name(val, &o->integrator))
				return cli_usage_error("run",
				                       "unknown integrator '%s' (one of euler, symplectic, midpoint, rk4, "
				                       "verlet, implicit, kang, mra)",
				                       val);
			o->have_integrator = true;
		} else if (strcmp(a, "--dt") == 0) {
			if (!cli_parse_double(val, &o->dt) || o->dt <= 0.0 || o->dt > 1.0)
				return cli_usage_error("run", "--dt: '%s' is not a step in (0, 1] seconds", val);
		} else if (strcmp(a, "--substeps") == 0) {
			if (!cli_parse_int(val, 1, 10000, &o->substeps))
				return cli_usage_error("run", "--substeps: '%s' is not an integer in [1, 10000]", val);
		} else if (strcmp(a, "--steps") == 0) {
			if (!cli_parse_int(val, 0, 1000000000L, &o->steps))
				return cli_usage_error("run", "--steps: '%s' is not an integer in [0, 1e9]", val);
		} else if (strcmp(a, "--seconds") == 0) {
			if (!cli_parse_double(val, &o->seconds) || o->seconds < 0.0 || o->seconds > 1e6)
				return cli_usage_error("run", "--seconds: '%s' is not a duration in [0, 1e6]", val);
		} else if (strcmp(a, "--stats") == 0) {
			o->stats_path = val;
		} else if (strcmp(a, "--export-stl") == 0 || strcmp(a, "--export") == 0) {
			if (o->stl_dir)
				return cli_usage_error("run", "give --export or --export-stl once");
			o->stl_dir = val;
			o->export_any = strcmp(a, "--export") == 0;
		} else if (strcmp(a, "--format") == 0) {
			if (!scn_mesh_format_parse(val, &o->export_format))
				return cli_usage_error("run", "--format: '%s' is not stl, obj or ply", val);
			o->format_name = val;
		} else if (strcmp(a, "--screenshot") == 0) {
			o->screenshot = val;
		} else if (strcmp(a, "--save-scene") == 0) {
			o->save_scene = val;
		} else if (strcmp(a, "--device") == 0) {
			o->device = val;
		} else if (strcmp(a, "--calibration") == 0) {
			o->calibration = val;
		} else if (strcmp(a, "--record") == 0) {
			o->record = val;
		} else if (strcmp(a, "--gain") == 0) {
			if (!cli_parse_double(val, &o->gain) || o->gain <= 0.0 || o->gain > 100.0)
				return cli_usage_error("run", "--gain: '%s' is not a gain in (0, 100]", val);
			o->have_gain = true;
		} else if (strcmp(a, "--grab-radius") == 0) {
			if (!cli_parse_double(val, &o->grab_radius) || o->grab_radius < 0.0 || o->grab_radius > 1.0)
				return cli_usage_error("run", "--grab-radius: '%s' is not a radius in [0, 1] m", val);
		} else if (strcmp(a, "--backend") == 0) {
			if (strcmp(val, "cpu") != 0 && strcmp(val, "gpu") != 0)
				return cli_usage_error("run", "--backend: '%s' is neither cpu nor gpu", val);
			o->gpu = strcmp(val, "gpu") == 0;
		} else if (strcmp(a, "--every") == 0) {
			if (!cli_parse_int(val, 1, 1000000000L, &o->every))
				return cli_usage_error("run", "--every: '%s' is not a positive integer", val);
		} else if (strcmp(a, "--strain-limit") == 0) {
			if (!cli_parse_double(val, &o->tau) || o->tau <= 0.0 || o->tau > 10.0)
				return cli_usage_error("run", "--strain-limit: '%s' is not a strain in (0, 10]", val);
			o->strain_limit = 1;
		} else if (strcmp(a, "--air-damping") == 0) {
			if (!cli_parse_double(val, &o->air) || o->air < 0.0 || o->air > 1e4)
				return cli_usage_error("run", "--air-damping: '%s' is not a rate in [0, 1e4]", val);
			o->have_air = true;
		} else if (strcmp(a, "--wind") == 0) {
			if (!parse_vec3(val, o->wind))
				return cli_usage_error("run", "--wind: '%s' is not X,Y,Z", val);
			o->have_wind = true;
		} else if (strcmp(a, "--gravity") == 0) {
			if (!parse_vec3(val, o->gravity))
				return cli_usage_error("run", "--gravity: '%s' is not X,Y,Z", val);
			o->have_gravity = true;
		} else if (strcmp(a, "--threads") == 0) {
			if (!cli_parse_int(val, 1, SIM_MAX_WORKERS, &o->threads))
				return cli_usage_error("run", "--threads: '%s' is not a count in [1, %d]", val, SIM_MAX_WORKERS);
		} else if (strcmp(a, "--cg-tolerance") == 0) {
			if (!cli_parse_double(val, &o->cg_tolerance) || o->cg_tolerance <= 0.0 || o->cg_tolerance >= 1.0)
				return cli_usage_error("run", "--cg-tolerance: '%s' is not in (0, 1)", val);
			o->have_cg = true;
		} else {
			return cli_usage_error("run", "unknown option '%s'", a);
		}
		if (takes)
			i++;
	}
	if (!o->scene)
		return cli_usage_error("run", "no scene given (try 'tela scenes')");
	if (o->steps >= 0 && o->seconds >= 0.0)
		return cli_usage_error("run", "give --steps or --seconds, not both");
	if (o->format_name && !o->export_any)
		return cli_usage_error("run", "--format goes with --export DIR (--export-stl always writes STL)");
	if (o->gpu_strain && !o->gpu)
		return cli_usage_error("run", "--gpu-strain-limit needs --backend gpu");
	if (!o->device && (o->calibration || o->record || o->have_gain || o->grab_radius > 0.0))
		return cli_usage_error("run", "--calibration, --record, --gain and --grab-radius need --device");
	return EXIT_TELA_OK;
}

static int export_meshes(const sim_world *w, const char *dir, scn_mesh_format format, long step, progress *prog)
{
	scn_error err = {0};
	if (scn_export_frame_as(w, dir, step, format, &err) == SCN_OK)
		return EXIT_TELA_OK;
	if (prog)
		progress_clear(prog);
	fprintf(stderr, "tela run: %s\n", err.message);
	return EXIT_TELA_IO;
}

static void write_stats_row(FILE *fp, long step, const sim_world *w, double step_us, const int *check,
                            double clearance)
{
	const sim_stats *s = sim_world_stats(w);
	fprintf(fp, "%ld,%.9g,%.9g,%.9g,%.9g,%.7g,%.7g,%d,%d,%.3f", step, sim_world_time(w), s->kinetic, s->potential,
	        s->kinetic + s->potential, s->max_strain, s->mean_strain, s->cg_iterations, s->strain_iterations, step_us);
	if (check)
		fprintf(fp, ",%d,%d,%d,%d,%d,%d,%d,%.9g", s->contacts, s->collisions, s->impact_zones, s->self_contacts,
		        check[0], check[1], check[2], clearance);
	fputc('\n', fp);
}

/* The stylus's decisions applied to the world in lock step (docs/devices.md, "The
 * stylus in tela"): a grab attaches the picked vertex, every sample after it moves the
 * attachment's target, a release detaches it. */
typedef struct run_stylus {
	sim_world *w;
	double t_now;
	float radius; /* --grab-radius */
	grab grab;
	int vertex, held; /* the picked vertex, and how many the grab held with it */
	int grabs, releases;
	float grabbed_at[3], moved[3];
	double t_grab, t_release;
	bool failed;
	char message[256];
} run_stylus;

/* The longest step an explicit scheme takes on this world's springs and damping, from
 * the bounds of docs/integrators.md ("Stability limits in practice"): omega_max^2 <=
 * 2 max_i (sum_j k_ij / m_i), h < 2 / omega_max (2.83 for rk4), and h sum_j kd_ij / m_i
 * < 1, h c < 2 for the damping.  Sufficient, so somewhat short.  0 where the scheme has
 * no limit (implicit, kang) or no stable step without damping (euler, midpoint). */
static double explicit_step_limit(const sim_world *w, const sim_world_def *def)
{
	double reach;
	switch (def->integrator) {
	case SIM_SYMPLECTIC:
	case SIM_VERLET:
	case SIM_MRA:
		reach = 2.0;
		break;
	case SIM_RK4:
		reach = 2.0 * sqrt(2.0);
		break;
	default:
		return 0.0;
	}
	int n = sim_world_vertex_count(w), springs = sim_world_spring_total(w);
	double *k = calloc((size_t)n, sizeof *k), *kd = calloc((size_t)n, sizeof *kd);
	sim_spring_desc *s = malloc(sizeof *s * (size_t)(springs > 0 ? springs : 1));
	if (!k || !kd || !s) {
		free(k), free(kd), free(s);
		return 0.0;
	}
	sim_world_get_springs(w, s);
	for (int i = 0; i < springs; i++) {
		k[s[i].a] += s[i].k, k[s[i].b] += s[i].k;
		kd[s[i].a] += s[i].kd, kd[s[i].b] += s[i].kd;
	}
	/* mra treats the anchors implicitly; the other schemes feel them as springs */
	for (int o = 0; def->integrator != SIM_MRA && o < sim_world_object_count(w); o++) {
		const sim_material *m = sim_world_object_material(w, o);
		int first = sim_world_object_first_vertex(w, o), count = sim_world_object_vertex_count(w, o);
		for (int v = first; m && v < first + count; v++)
			k[v] += m->anchor_stiffness, kd[v] += m->anchor_damping;
	}
	double h = def->air_damping > 0.0f ? 2.0 / def->air_damping : INFINITY;
	for (int v = 0; v < n; v++) {
		double m = sim_world_vertex_mass(w, v);
		if (sim_world_is_pinned(w, v) || !(m > 0.0))
			continue;
		if (k[v] > 0.0)
			h = fmin(h, reach / sqrt(2.0 * k[v] / m));
		if (kd[v] > 0.0)
			h = fmin(h, m / kd[v]);
	}
	free(k), free(kd), free(s);
	return isfinite(h) ? h : 0.0;
}

/* What to try after a blow-up, for this run's scheme, step and springs: each option with
 * its scene-file key, so that the fix can go on the command line or into the file. */
static void print_blowup_advice(const char *scene, const sim_world *w, const sim_world_def *def, float dt,
                                const char *object)
{
	const char *scheme = sim_integrator_name(def->integrator);
	double h = (double)dt / def->substeps, limit = explicit_step_limit(w, def);
	int substeps = def->substeps * 2;
	if (limit > 0.0 && h > limit)
		substeps = (int)ceil((double)dt / limit);
	/* the same substep as a step of its own, two digits, rounded down */
	double step = (double)dt * def->substeps / substeps;
	double unit = pow(10.0, floor(log10(step)) - 1.0);
	step = floor(step / unit) * unit;
	fprintf(stderr, "tela run: %s: to keep it stable, try one of:\n", scene);
	if (def->integrator != SIM_IMPLICIT)
		fprintf(stderr,
		        "  --integrator implicit    (integrator = implicit in [world]): backward Euler, stable at any "
		        "step%s\n",
		        def->integrator == SIM_KANG ? "; kang's lagged prediction is not" : "");
	if (def->integrator == SIM_EULER || def->integrator == SIM_MIDPOINT)
		fprintf(stderr,
		        "  --integrator symplectic  (integrator = symplectic in [world]): %s gains energy at every step, "
		        "whatever its length\n",
		        scheme);
	if (limit > 0.0 && h > limit)
		fprintf(stderr,
		        "  --substeps %d or --dt %g (substeps = %d or dt = %g in [world]): %s is stable on these springs "
		        "for steps up to about %.3g s, and the step is %.3g s\n",
		        substeps, step, substeps, step, scheme, limit, h);
	else
		fprintf(stderr,
		        "  --substeps %d or --dt %g (substeps = %d or dt = %g in [world]): a shorter step%s\n", substeps,
		        step, substeps, step,
		        limit > 0.0 ? " (the springs alone allow this one: large stretch or fast contacts may not)" : "");
	if (!def->strain_limit)
		fprintf(stderr, "  --strain-limit 0.1       (strain_limit = true, strain_tau = 0.1 in [world]): no spring "
		                "stretches more than 10 %%\n");
	if (def->integrator == SIM_IMPLICIT)
		fprintf(stderr, "  --cg-tolerance 1e-6      (cg_tolerance = 1e-6 in [world]): a more exact linear solve\n");
	fprintf(stderr, "  softer springs: smaller structural, shear, bend (N/m) for '%s', or a larger density\n",
	        object ? object : "?");
}

static void run_on_sample(void *context, const dev_sample *sample, const trk_pointer *pointer, const sty_output *out)
{
	(void)sample, (void)pointer;
	run_stylus *r = context;
	if (out->release && r->grab.vertex >= 0) {
		const float *x = sim_world_positions(r->w)[r->vertex];
		for (int k = 0; k < 3; k++)
			r->moved[k] = x[k] - r->grabbed_at[k];
		grab_release(&r->grab, r->w);
		r->releases++;
		r->t_release = r->t_now;
	}
	if (out->grab && r->grab.vertex < 0) {
		int id = grab_start(&r->grab, r->w, out->grabbed, r->radius, 0.0f, 0.0f);
		if (id < 0) {
			snprintf(r->message, sizeof r->message, "cannot grab vertex %d: %s", out->grabbed,
			         sim_result_string((sim_result)id));
			r->failed = true;
			return;
		}
		r->vertex = out->grabbed;
		r->held = r->grab.count;
		memcpy(r->grabbed_at, sim_world_positions(r->w)[out->grabbed], sizeof r->grabbed_at);
		memset(r->moved, 0, sizeof r->moved);
		r->grabs++;
		r->t_grab = r->t_now;
	}
	if (r->grab.vertex >= 0)
		grab_set_target(&r->grab, r->w, out->target, out->target_velocity);
}

/* What the pointer meets: every cloth's triangles and the sphere obstacles. */
typedef struct run_surfaces {
	sty_mesh *meshes;
	int mesh_count;
	sty_obstacle *obstacles;
	float (*poses)[7]; /* each obstacle's current pose */
	int obstacle_count;
	uint8_t *driven; /* the vertices the scene moves itself, as built */
} run_surfaces;

static bool run_surfaces_build(run_surfaces *s, const sim_world *w)
{
	int objects = sim_world_object_count(w), obstacles = sim_world_obstacle_count(w);
	s->meshes = calloc((size_t)objects + 1, sizeof *s->meshes);
	s->obstacles = calloc((size_t)obstacles + 1, sizeof *s->obstacles);
	s->poses = calloc((size_t)obstacles + 1, sizeof *s->poses);
	s->driven = malloc((size_t)sim_world_vertex_count(w) + 1);
	s->obstacle_count = obstacles;
	if (!s->meshes || !s->obstacles || !s->poses || !s->driven)
		return false;
	sim_world_driven_vertices(w, s->driven);
	for (int o = 0; o < obstacles; o++)
		sty_obstacle_from_def(sim_world_obstacle(w, o), s->poses[o], &s->obstacles[o]);
	return true;
}

/* Positions and obstacle poses move every step; the triangles do not. */
static void run_surfaces_scene(run_surfaces *s, const sim_world *w, sty_scene *scene)
{
	const float(*x)[4] = (const float(*)[4])sim_world_positions(w);
	s->mesh_count = 0;
	for (int o = 0; o < sim_world_object_count(w); o++) {
		int tris = sim_world_object_triangle_count(w, o);
		if (tris <= 0)
			continue;
		s->meshes[s->mesh_count++] = (sty_mesh){.positions = x + sim_world_object_first_vertex(w, o),
		                                        .triangles = sim_world_object_triangles(w, o),
		                                        .triangle_count = tris};
	}
	for (int o = 0; o < s->obstacle_count; o++) {
		vec3 p;
		versor q;
		sim_world_obstacle_pose(w, o, p, q);
		memcpy(s->poses[o], p, sizeof p);
		memcpy(s->poses[o] + 3, q, sizeof q);
	}
	*scene = (sty_scene){.positions = x,
	                     .vertex_count = sim_world_vertex_count(w),
	                     .driven = s->driven,
	                     .meshes = s->meshes,
	                     .mesh_count = s->mesh_count,
	                     .obstacles = s->obstacles,
	                     .obstacle_count = s->obstacle_count};
}

int cmd_run(int argc, char **argv)
{
	if (cli_wants_help(argc, argv, 1)) {
		run_help();
		return EXIT_TELA_OK;
	}
	run_options o;
	int rc = parse_run_options(argc, argv, &o);
	if (rc != EXIT_TELA_OK)
		return rc;
	/* every output refused before anything runs, so that a bad one costs no run */
	if ((o.stats_path && (rc = cli_check_output("run", "--stats", o.stats_path, CLI_OUT_FILE))) ||
	    (o.stl_dir && (rc = cli_check_output("run", "--export-stl", o.stl_dir, CLI_OUT_DIR))) ||
	    (o.screenshot && (rc = cli_check_output("run", "--screenshot", o.screenshot, CLI_OUT_FILE))) ||
	    (o.record && (rc = cli_check_output("run", "--record", o.record, CLI_OUT_FILE))))
		return rc;
	struct stat st;
	if (!scn_builtin_text(o.scene) && !strpbrk(o.scene, "/.") && stat(o.scene, &st) != 0)
		return cli_usage_error("run", "unknown scene '%s' (try 'tela scenes')", o.scene);
	scn_scene *scene = NULL;
	sim_world *w = NULL;
	scn_error load_error = {0};
	if (scn_load(o.scene, &scene, &load_error) != SCN_OK || scn_build(scene, &w, &load_error) != SCN_OK) {
		fprintf(stderr, "tela run: %s\n", load_error.message);
		scn_scene_free(&scene);
		return EXIT_TELA_INPUT;
	}
	/* the step and length outlive the scene; its strings do not */
	scn_info info_copy = *scn_scene_info(scene);
	/* the summary names the scene as the demo and the scene list do, its file beside it */
	char scene_name[96];
	if (strcmp(info_copy.name, o.scene) == 0)
		snprintf(scene_name, sizeof scene_name, "%s", o.scene);
	else
		snprintf(scene_name, sizeof scene_name, "%s (%s)", info_copy.name, o.scene);
	info_copy.name = info_copy.description = NULL;
	const scn_info *info = &info_copy;
	sim_world_def def = *sim_world_get_def(w);
	if (o.have_integrator)
		def.integrator = o.integrator;
	if (o.substeps > 0)
		def.substeps = (int)o.substeps;
	if (o.strain_limit >= 0)
		def.strain_limit = o.strain_limit == 1;
	if (o.strain_limit == 1)
		def.strain_tau = (float)o.tau;
	if (o.verlet_drag)
		def.verlet_drag = true;
	if (o.have_air)
		def.air_damping = (float)o.air;
	if (o.have_wind)
		memcpy(def.wind, o.wind, sizeof def.wind);
	if (o.have_gravity)
		memcpy(def.gravity, o.gravity, sizeof def.gravity);
	if (o.have_cg)
		def.cg_tolerance = (float)o.cg_tolerance;
	if (o.no_collisions)
		def.collisions = false;
	if (o.no_self_collisions)
		def.self_collisions = false;
	/* --threads N: sim's parallel loops share a pool of N (the results do not change) */
	task_pool *pool = NULL;
	if (o.threads > 1 && !(pool = task_pool_create((int)o.threads))) {
		sim_world_destroy(&w);
		scn_scene_free(&scene);
		fprintf(stderr, "tela run: cannot start %ld threads\n", o.threads);
		return EXIT_TELA_IO;
	}
	task_pool_attach(pool, &def);
	if (sim_world_set_def(w, &def) != SIM_OK) {
		sim_world_destroy(&w);
		task_pool_destroy(&pool);
		scn_scene_free(&scene);
		return cli_usage_error("run", "the options give an invalid world definition");
	}
	float dt = o.dt > 0.0 ? (float)o.dt : info->dt;
	if (o.save_scene) {
		scn_overrides changed = {.def = &def, .dt = dt};
		scn_error write_error = {0};
		rc = scn_scene_write(scene, &changed, o.save_scene, &write_error) == SCN_OK ? EXIT_TELA_OK : EXIT_TELA_IO;
		if (rc != EXIT_TELA_OK)
			fprintf(stderr, "tela run: --save-scene: %s\n", write_error.message);
		else if (!o.quiet)
			printf("scene: %s\n", o.save_scene);
		sim_world_destroy(&w);
		task_pool_destroy(&pool);
		scn_scene_free(&scene);
		return rc;
	}
	long steps = o.steps >= 0 ? o.steps : (long)llround((o.seconds >= 0.0 ? o.seconds : info->seconds) / dt);

	FILE *stats = NULL;
	rc = EXIT_TELA_OK;
	if (o.stats_path) {
		stats = fopen(o.stats_path, "w");
		if (!stats) {
			fprintf(stderr, "tela run: %s: %s\n", o.stats_path, strerror(errno));
			sim_world_destroy(&w);
			task_pool_destroy(&pool);
			scn_scene_free(&scene);
			return EXIT_TELA_IO;
		}
		fprintf(stats, "step,t,kinetic,potential,total,max_strain,mean_strain,cg_iterations,strain_iterations,"
		               "step_us%s\n",
		        o.check ? ",contacts,collisions,impact_zones,self_contacts,intersections,vertices_inside,"
		                  "triangles_inside,min_clearance"
		                : "");
	}
	if (o.stl_dir) {
		int err = cli_mkdirs(o.stl_dir);
		if (err) {
			fprintf(stderr, "tela run: %s: %s\n", o.stl_dir, strerror(err));
			rc = EXIT_TELA_IO;
		} else {
			rc = export_meshes(w, o.stl_dir, o.export_format, 0, NULL);
		}
	}

	sty_feed feed;
	run_stylus stylus = {.w = w, .vertex = -1, .radius = (float)o.grab_radius};
	grab_init(&stylus.grab);
	run_surfaces surfaces = {0};
	bool have_feed = false;
	if (o.device && rc == EXIT_TELA_OK) {
		sty_feed_options fo = {.spec = o.device, .calibration = o.calibration, .record = o.record,
		                       .stylus = sty_config_default()};
		if (o.have_gain)
			fo.stylus.gain = (float)o.gain;
		char error[512];
		if (!sty_feed_open(&feed, &fo, error, sizeof error)) {
			fprintf(stderr, "tela run: --device %s: %s\n", o.device, error);
			rc = EXIT_TELA_INPUT;
		} else if (!run_surfaces_build(&surfaces, w)) {
			fprintf(stderr, "tela run: out of memory\n");
			sty_feed_close(&feed);
			rc = EXIT_TELA_IO;
		} else {
			have_feed = true;
		}
	}

	/* --backend gpu (issue 7): the integrator on the GPU, the rest of the step on the CPU;
	 * without a GL 4.3 context, or for a scheme the GPU lacks, the CPU runs it all. */
	gpu_session gpu = {0};
	bool on_gpu = false;
	if (o.gpu && rc == EXIT_TELA_OK) {
		char error[4096];
		if (!gpu_backend_supports(def.integrator))
			ev_post(EV_WARNING, sim_world_time(w), "gpu",
			        "--backend gpu: the GPU has no %s integrator; the CPU runs instead",
			        sim_integrator_name(def.integrator));
		else if (!gpu_session_open(&gpu, error, sizeof error))
			ev_post(EV_WARNING, sim_world_time(w), "gpu", "--backend gpu: %.180s; the CPU runs instead", error);
		else
			on_gpu = true;
		if (on_gpu)
			gpu_backend_set_strain_on_gpu(gpu.backend, o.gpu_strain);
	}

	progress prog;
	progress_start(&prog, "tela run", (double)steps * (double)dt, o.quiet);
	bool said_record = false;
	int64_t wall0 = cli_now_ns();
	long done = 0;
	double max_strain_seen = 0.0;
	long contacts = 0, collisions = 0, zones = 0, self = 0, bad_steps = 0, first_bad = -1;
	int worst[3] = {0, 0, 0};
	bool watched = stop_watch_start("run", stats);
	for (; done < steps && rc == EXIT_TELA_OK; done++) {
		stop_watch_progress(done);
		if (stop_requested()) {
			/* every row written so far is whole: the file is closed below */
			fprintf(stderr, "tela run: %s: stopped by %s after %ld steps (t = %.6f s)\n", o.scene,
			        stop_signal_name(), done, sim_world_time(w));
			rc = stop_exit_code();
			break;
		}
		if (have_feed) {
			/* every sample due at or before the time this step starts from */
			sty_scene sc;
			run_surfaces_scene(&surfaces, w, &sc);
			stylus.t_now = (double)done * (double)dt;
			sty_feed_advance(&feed, stylus.t_now, &sc, run_on_sample, &stylus);
			/* the source goes on without its recording: said once, when it stops */
			if (!said_record && dev_record_error(feed.source)[0]) {
				ev_post(EV_ERROR, stylus.t_now, NULL, "--record: %s", dev_record_error(feed.source));
				said_record = true;
			}
			if (stylus.failed) {
				progress_clear(&prog);
				fprintf(stderr, "tela run: %s: %s\n", o.scene, stylus.message);
				rc = EXIT_TELA_BLOWUP;
				break;
			}
		}
		int64_t t0 = cli_now_ns();
		sim_result r = on_gpu ? gpu_backend_step(gpu.backend, w, dt) : sim_world_step(w, dt);
		double us = (double)(cli_now_ns() - t0) * 1e-3;
		if (r == SIM_ERROR_BLOWUP) {
			const sim_blowup *b = sim_world_last_blowup(w);
			ev_post(EV_ERROR, sim_world_time(w) + dt, "blow-up",
			        "%s: step %ld blew up with %s: object '%s' vertex %d: %s = %g; "
			        "the world was rolled back to its last good state",
			        o.scene, done + 1, sim_integrator_name(def.integrator), sim_world_object_name(w, b->object),
			        b->vertex, b->reason, (double)b->value);
			progress_end(&prog); /* the event's line first, then what to try */
			print_blowup_advice(o.scene, w, &def, dt, sim_world_object_name(w, b->object));
			rc = EXIT_TELA_BLOWUP;
			break;
		}
		if (r != SIM_OK) {
			progress_clear(&prog);
			fprintf(stderr, "tela run: %s: %s\n", o.scene,
			        on_gpu && r == SIM_ERROR_INVALID ? "the GPU step failed (an OpenGL error)" : sim_result_string(r));
			rc = EXIT_TELA_BLOWUP;
			break;
		}
		if (sim_world_stats(w)->max_strain > max_strain_seen)
			max_strain_seen = sim_world_stats(w)->max_strain;
		contacts += sim_world_stats(w)->contacts;
		collisions += sim_world_stats(w)->collisions;
		zones += sim_world_stats(w)->impact_zones;
		self += sim_world_stats(w)->self_contacts;
		int check[3] = {0, 0, 0};
		double clearance = INFINITY;
		if (o.check) {
			sim_world_check(w, &check[0], &check[1]);
			check[2] = sim_world_check_surface(w, CHECK_SURFACE_TOLERANCE, &clearance);
			if (check[2] < 0) {
				fprintf(stderr, "tela run: %s: out of memory\n", o.scene);
				rc = EXIT_TELA_IO;
				break;
			}
			if (check[0] || check[1] || check[2]) {
				bad_steps++;
				if (first_bad < 0) {
					first_bad = done + 1;
					worst[0] = check[0], worst[1] = check[1], worst[2] = check[2];
				}
			}
		}
		if (stats)
			write_stats_row(stats, done + 1, w, us, o.check ? check : NULL, clearance);
		if (o.stl_dir && (done + 1) % o.every == 0)
			rc = export_meshes(w, o.stl_dir, o.export_format, done + 1, &prog);
		progress_update(&prog, sim_world_time(w));
	}
	if (have_feed)
		sty_feed_flush_events(&feed, sim_world_time(w));
	progress_end(&prog);
	if (watched)
		stop_watch_end();
	double wall_s = (double)(cli_now_ns() - wall0) * 1e-9;
	if (stats) {
		bool bad = ferror(stats) != 0;
		if (fclose(stats) != 0 || bad) {
			fprintf(stderr, "tela run: %s: write failed\n", o.stats_path);
			if (rc == EXIT_TELA_OK)
				rc = EXIT_TELA_IO;
		}
	}
	if (rc == EXIT_TELA_OK && o.check && bad_steps) {
		fprintf(stderr,
		        "tela run: %s: --check failed in %ld of %ld steps; first at step %ld: %d intersecting triangle "
		        "pairs, %d vertices inside obstacles, %d triangles inside obstacles' thickness\n",
		        o.scene, bad_steps, done, first_bad, worst[0], worst[1], worst[2]);
		rc = EXIT_TELA_BLOWUP;
	}
	if (rc == EXIT_TELA_OK && !o.quiet) {
		const sim_stats *s = sim_world_stats(w);
		printf("scene %s: %s, dt %g s x %d substeps, %ld steps (%.3f s simulated) in %.3f s wall\n", scene_name,
		       sim_integrator_name(def.integrator), (double)dt, def.substeps, done, sim_world_time(w), wall_s);
		printf("vertices %d, kinetic %.6g J, potential %.6g J, max strain %.4f (peak %.4f), mean strain %.4f\n",
		       sim_world_vertex_count(w), s->kinetic, s->potential, (double)s->max_strain, max_strain_seen,
		       (double)s->mean_strain);
		/* the cloth-with-cloth count is a part of both sums, not of the collisions alone */
		printf("impulses: contacts %ld, collisions %ld (%ld of these cloth with cloth), impact zones %ld%s\n",
		       contacts, collisions, self, zones,
		       o.check ? "; --check: no intersections, no vertex inside an obstacle, no triangle within an obstacle's "
		                 "thickness, at every step"
		               : "");
		printf("state hash %016llx\n", (unsigned long long)sim_world_state_hash(w));
		if (on_gpu) {
			gpu_timing t = gpu_backend_timing(gpu.backend);
			double n = t.substeps > 0 ? (double)t.substeps : 1.0;
			printf("backend gpu (%s, %s): per substep %.1f us up, %.1f us on the GPU, %.1f us down\n",
			       gpu.renderer, t.persistent ? "persistent mapped buffers" : "buffer copies", t.upload_us / n,
			       t.gpu_us / n, t.download_us / n);
		}
	}
	if (on_gpu)
		gpu_session_close(&gpu);
	if (have_feed && rc == EXIT_TELA_OK && !o.quiet) {
		if (stylus.grab.vertex >= 0) {
			const float *x = sim_world_positions(w)[stylus.vertex];
			for (int k = 0; k < 3; k++)
				stylus.moved[k] = x[k] - stylus.grabbed_at[k];
		}
		printf("stylus: %s: %llu samples, %d grabs, %d releases, %llu jumps ignored%s%s\n", dev_describe(feed.source),
		       (unsigned long long)feed.delivered, stylus.grabs, stylus.releases,
		       (unsigned long long)feed.stylus.ignored_jumps, feed.pointer.frozen ? "; pointer frozen: " : "",
		       feed.pointer.frozen ? feed.pointer.reason : "");
		if (stylus.grabs > 0) {
			printf("stylus: vertex %d grabbed at %.3f s from (%.4f, %.4f, %.4f), ", stylus.vertex, stylus.t_grab,
			       (double)stylus.grabbed_at[0], (double)stylus.grabbed_at[1], (double)stylus.grabbed_at[2]);
			if (stylus.held > 1)
				printf("with %d vertices around it, ", stylus.held - 1);
			if (stylus.grab.vertex >= 0)
				printf("still held: ");
			else
				printf("released at %.3f s: ", stylus.t_release);
			printf("moved %.4f %.4f %.4f m\n", (double)stylus.moved[0], (double)stylus.moved[1],
			       (double)stylus.moved[2]);
		}
	}
	if (have_feed) {
		sty_feed_close(&feed);
		free(surfaces.meshes);
		free(surfaces.obstacles);
		free(surfaces.poses);
		free(surfaces.driven);
	}
	if (o.screenshot && (rc == EXIT_TELA_OK || rc == EXIT_TELA_BLOWUP)) {
		char error[512];
		int pic = picture_write(scene, w, o.screenshot, 960, 600, error, sizeof error);
		if (pic != 0) {
			fprintf(stderr, "tela run: --screenshot: %s\n", error);
			if (rc == EXIT_TELA_OK)
				rc = pic == 4 ? EXIT_TELA_DISPLAY : EXIT_TELA_IO;
		} else if (!o.quiet) {
			printf("picture: %s (960x600)\n", o.screenshot);
		}
	}
	sim_world_destroy(&w);
	task_pool_destroy(&pool);
	scn_scene_free(&scene);
	return rc;
}
