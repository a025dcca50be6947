/* tela bench: speed figures for docs/benchmarks.md.  Benchmarks, never tests: nothing
 * here passes or fails on time; it prints what it measured and the command to redo it. */
#define _POSIX_C_SOURCE 200809L
#include "cli.h"
#include "device_thread.h"
#include "progress.h"
#include "stop.h"
#include "bench_gpu.h"
#include "stylus_feed.h"
#include "task_pool.h"

#include "scenes/scenes.h"
#include "sim/sim.h"

#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

/* The throughput cloth keeps its spacing (1 cm) at every size so that each vertex sees
 * the same dynamics and every explicit scheme is stable at 1 ms: what changes with the
 * size is only the amount of work.  No gravity (a 2 N/m cloth would hang as a string);
 * instead a standing wave of initial velocity keeps every spring working. */
sim_world *bench_cloth(int n, float spacing, float k_struct, sim_integrator integ, float tol, bool gravity)
{
	sim_world_def def = sim_world_def_default();
	def.integrator = integ;
	def.air_damping = 0.5f;
	def.cg_tolerance = tol;
	def.blowup_strain = 1e3f;
	def.blowup_speed = 1e4f;
	def.collisions = false; /* the integrators alone; `tela bench collisions` times the rest */
	def.gravity[1] = gravity ? -9.81f : 0.0f;
	sim_world *w = sim_world_create(&def);
	if (!w)
		return NULL;
	sim_grid_def g = sim_grid_def_default();
	g.nx = g.ny = n;
	g.size_x = g.size_y = spacing * (float)(n - 1);
	g.origin[0] = -0.5f * g.size_x, g.origin[1] = 1.0f, g.origin[2] = 0.0f;
	g.axis_v[0] = 0.0f, g.axis_v[1] = 0.0f, g.axis_v[2] = 1.0f;
	g.material.stiffness[SIM_SPRING_STRUCTURAL] = k_struct;
	g.material.stiffness[SIM_SPRING_SHEAR] = 0.4f * k_struct;
	g.material.stiffness[SIM_SPRING_BEND] = 0.04f * k_struct;
	/* Spring damping must stay below the explicit limit h kd / m < 1 at 20 mg per vertex. */
	g.material.damping[SIM_SPRING_STRUCTURAL] = 1e-3f;
	g.material.damping[SIM_SPRING_SHEAR] = 5e-4f;
	g.material.damping[SIM_SPRING_BEND] = 1e-4f;
	if (sim_world_add_grid(w, &g) < 0) {
		sim_world_destroy(&w);
		return NULL;
	}
	sim_world_pin(w, 0, true);
	sim_world_pin(w, n - 1, true);
	for (int j = 0; j < n; j++) {
		for (int i = 0; i < n; i++) {
			int id = j * n + i;
			float wave = 0.1f * sinf(3.14159265f * (float)i / (float)(n - 1)) * sinf(3.14159265f * (float)j / (float)(n - 1));
			vec3 vel = {0.0f, wave, 0.0f};
			sim_world_set_vertex(w, id, sim_world_positions(w)[id], vel);
		}
	}
	return w;
}

typedef struct bench_row {
	double us_per_step;
	double ns_per_vertex_step;
	double forces_ns;          /* force evaluation, per vertex-step */
	double integrator_ns;      /* the update and linear solve, forces excluded */
	double check_ns;           /* the blow-up check inside the step, per vertex-step */
	double stats_ns;           /* energies and strains when read, per vertex-step */
	double cg_iterations;
	long steps;
	bool blew_up;
} bench_row;

static bench_row time_world(sim_world *w, float dt, double min_seconds)
{
	bench_row row = {0};
	for (int i = 0; i < 5; i++) { /* warm caches and the Kang / Verlet histories */
		if (sim_world_step(w, dt) != SIM_OK) {
			row.blew_up = true;
			return row;
		}
	}
	int64_t limit = (int64_t)(min_seconds * 1e9), stepping = 0, measuring = 0;
	long steps = 0;
	double cg = 0.0, forces_us = 0.0, solve_us = 0.0, check_us = 0.0;
	/* The step and the statistics (energies and strains, computed when read) are timed
	 * apart: a real-time loop steps every time and reads statistics only to show them. */
	while ((steps < 10 || stepping + measuring < limit) && !stop_requested()) {
		int64_t t0 = cli_now_ns();
		sim_result r = sim_world_step(w, dt);
		int64_t t1 = cli_now_ns();
		if (r != SIM_OK) {
			row.blew_up = true;
			break;
		}
		const sim_stats *st = sim_world_stats(w);
		int64_t t2 = cli_now_ns();
		stepping += t1 - t0;
		measuring += t2 - t1;
		cg += st->cg_iterations;
		forces_us += st->stage_us[SIM_STAGE_FORCES];
		solve_us += st->stage_us[SIM_STAGE_SOLVE];
		check_us += st->stage_us[SIM_STAGE_CHECK];
		steps++;
	}
	double elapsed = (double)stepping;
	row.steps = steps;
	row.us_per_step = steps ? elapsed * 1e-3 / (double)steps : 0.0;
	row.ns_per_vertex_step = steps ? elapsed / ((double)steps * sim_world_vertex_count(w)) : 0.0;
	row.cg_iterations = steps ? cg / (double)steps : 0.0;
	double vertex_steps = (double)steps * sim_world_vertex_count(w);
	row.forces_ns = steps ? forces_us * 1e3 / vertex_steps : 0.0;
	row.integrator_ns = steps ? solve_us * 1e3 / vertex_steps : 0.0;
	row.check_ns = steps ? check_us * 1e3 / vertex_steps : 0.0;
	row.stats_ns = steps ? (double)measuring / vertex_steps : 0.0;
	return row;
}

static int parse_sizes(const char *s, int *sizes, int max)
{
	int count = 0;
	char buf[256];
	if (snprintf(buf, sizeof buf, "%s", s) >= (int)sizeof buf)
		return -1;
	char *save = NULL;
	for (char *tok = strtok_r(buf, ",", &save); tok; tok = strtok_r(NULL, ",", &save)) {
		long v;
		if (count == max || !cli_parse_int(tok, 2, 2048, &v))
			return -1;
		sizes[count++] = (int)v;
	}
	return count;
}

/* `tela bench collisions --drops N`: at most this many drape runs. */
#define BENCH_MAX_DROPS 64
/* Drop k starts this much higher than drop 0 (the recorded scenario). */
#define DROP_STEP_M 1e-4f

typedef struct bench_options {
	const char *csv_path;
	const char *steps_path; /* --steps FILE: one row per step (bench collisions) */
	double seconds, dt;
	int sizes[16];
	int size_count;
	bool allow_threads; /* --threads N and --clock are accepted */
	int threads;
	bool cpu_clock;     /* --clock cpu */
	bool allow_case;    /* --case NAME and --drops N are accepted */
	const char *only;   /* --case NAME: that case alone */
	int drops;          /* --drops N: the drape from N heights */
	bool quiet;         /* --quiet: no progress line */
} bench_options;

/* --quiet of the collision benchmark, whose cases draw their own progress line. */
static bool bench_quiet;

/* --csv FILE and --seconds T for every benchmark; --sizes and --dt where allowed. */
static int parse_bench_options(int argc, char **argv, bench_options *o, bool sizes_and_dt)
{
	for (int i = 1; i < argc; i++) {
		const char *a = argv[i], *val = i + 1 < argc ? argv[i + 1] : NULL;
		if (strcmp(a, "--quiet") == 0) {
			o->quiet = true;
			continue;
		}
		if (!val)
			return cli_usage_error("bench", "option %s needs a value", a);
		if (strcmp(a, "--csv") == 0) {
			o->csv_path = val;
		} else if (strcmp(a, "--seconds") == 0) {
			if (!cli_parse_double(val, &o->seconds) || o->seconds <= 0.0 || o->seconds > 600.0)
				return cli_usage_error("bench", "--seconds: '%s' is not in (0, 600]", val);
		} else if (sizes_and_dt && strcmp(a, "--sizes") == 0) {
			o->size_count = parse_sizes(val, o->sizes, 16);
			if (o->size_count <= 0)
				return cli_usage_error("bench", "--sizes: '%s' is not a list of sizes in [2, 2048]", val);
		} else if (o->allow_threads && strcmp(a, "--clock") == 0) {
			if (strcmp(val, "wall") != 0 && strcmp(val, "cpu") != 0)
				return cli_usage_error("bench", "--clock: '%s' is not wall or cpu", val);
			o->cpu_clock = strcmp(val, "cpu") == 0;
		} else if (o->allow_threads && strcmp(a, "--threads") == 0) {
			long v;
			if (!cli_parse_int(val, 1, SIM_MAX_WORKERS, &v))
				return cli_usage_error("bench", "--threads: '%s' is not a count in [1, %d]", val, SIM_MAX_WORKERS);
			o->threads = (int)v;
		} else if (o->allow_case && strcmp(a, "--case") == 0) {
			o->only = val;
		} else if (o->allow_case && strcmp(a, "--steps") == 0) {
			o->steps_path = val;
		} else if (o->allow_case && strcmp(a, "--drops") == 0) {
			long v;
			if (!cli_parse_int(val, 1, BENCH_MAX_DROPS, &v))
				return cli_usage_error("bench", "--drops: '%s' is not a count in [1, %d]", val, BENCH_MAX_DROPS);
			o->drops = (int)v;
		} else if (sizes_and_dt && strcmp(a, "--dt") == 0) {
			if (!cli_parse_double(val, &o->dt) || o->dt <= 0.0 || o->dt > 1.0)
				return cli_usage_error("bench", "--dt: '%s' is not a step in (0, 1]", val);
		} else {
			return cli_usage_error("bench", "unknown option '%s'", a);
		}
		i++;
	}
	/* refused before anything runs (the CSV is opened first, so it must not be left) */
	int rc;
	if ((o->csv_path && (rc = cli_check_output("bench", "--csv", o->csv_path, CLI_OUT_FILE))) ||
	    (o->steps_path && (rc = cli_check_output("bench", "--steps", o->steps_path, CLI_OUT_FILE))))
		return rc;
	return EXIT_TELA_OK;
}

/* Opens the CSV and writes its header; no file when path is NULL. */
static int open_csv(const char *path, const char *header, FILE **out)
{
	*out = NULL;
	if (!path)
		return EXIT_TELA_OK;
	*out = fopen(path, "w");
	if (!*out) {
		fprintf(stderr, "tela bench: %s: %s\n", path, strerror(errno));
		return EXIT_TELA_IO;
	}
	fprintf(*out, "%s\n", header);
	return EXIT_TELA_OK;
}

static int bench_integrators(int argc, char **argv)
{
	bench_options o = {.seconds = 0.3, .dt = 1e-3, .sizes = {16, 32, 64, 128, 256}, .size_count = 5};
	int rc = parse_bench_options(argc, argv, &o, true);
	if (rc != EXIT_TELA_OK)
		return rc;
	const int *sizes = o.sizes;
	int size_count = o.size_count;
	double dt = o.dt, seconds = o.seconds;
	FILE *csv = NULL;
	rc = open_csv(o.csv_path, "case,integrator,n,vertices,dt,us_per_step,ns_per_vertex_step,forces_ns,update_ns,"
	                          "check_ns,stats_ns,cg_iterations,steps,blew_up",
	              &csv);
	if (rc != EXIT_TELA_OK)
		return rc;
	printf("%-10s %5s %8s %10s %14s %10s %10s %9s %9s %8s\n", "integrator", "n", "vertices", "us/step",
	       "ns/vertex-step", "forces-ns", "update-ns", "check-ns", "stats-ns", "cg-iter");
	fflush(stdout);
	progress prog;
	progress_start(&prog, "tela bench", 0.0, o.quiet);
	prog.label = "integrators";
	int cases = size_count * SIM_INTEGRATOR_COUNT + 1;
	for (int s = 0; s < size_count && !stop_requested(); s++) {
		for (int k = 0; k < SIM_INTEGRATOR_COUNT; k++) {
			char what[64];
			snprintf(what, sizeof what, "%s n = %d", sim_integrator_name((sim_integrator)k), sizes[s]);
			progress_count(&prog, s * SIM_INTEGRATOR_COUNT + k, cases, what);
			sim_world *w = bench_cloth(sizes[s], 0.01f, 2.0f, (sim_integrator)k, 1e-4f, false);
			if (!w) {
				fprintf(stderr, "tela bench: out of memory at n = %d\n", sizes[s]);
				return EXIT_TELA_IO;
			}
			bench_row r = time_world(w, (float)dt, seconds);
			progress_clear(&prog);
			if (stop_requested()) { /* a row cut short is not a measurement */
				sim_world_destroy(&w);
				break;
			}
			printf("%-10s %5d %8d %10.1f %14.2f %10.2f %10.2f %9.2f %9.2f %8.1f%s\n",
			       sim_integrator_name((sim_integrator)k), sizes[s], sim_world_vertex_count(w), r.us_per_step,
			       r.ns_per_vertex_step, r.forces_ns, r.integrator_ns, r.check_ns, r.stats_ns, r.cg_iterations,
			       r.blew_up ? "  (blew up)" : "");
			if (csv)
				fprintf(csv, "throughput,%s,%d,%d,%g,%.3f,%.3f,%.3f,%.3f,%.3f,%.3f,%.2f,%ld,%d\n",
				        sim_integrator_name((sim_integrator)k), sizes[s], sim_world_vertex_count(w), dt,
				        r.us_per_step, r.ns_per_vertex_step, r.forces_ns, r.integrator_ns, r.check_ns, r.stats_ns,
				        r.cg_iterations, r.steps, r.blew_up);
			sim_world_destroy(&w);
			fflush(stdout);
		}
	}
	progress_count(&prog, cases - 1, cases, "implicit target");
	/* The implicit target: a stiff 1 m, 64 x 64 cloth (500 N/m structural springs) at the
	 * 240 Hz step where explicit schemes fail, CG tolerance 1e-4. */
	sim_world *w = stop_requested() ? NULL : bench_cloth(64, 1.0f / 63.0f, 500.0f, SIM_IMPLICIT, 1e-4f, true);
	if (!w && !stop_requested())
		return EXIT_TELA_IO;
	bench_row r = w ? time_world(w, 1.0f / 240.0f, seconds) : (bench_row){0};
	progress_end(&prog);
	if (stop_requested()) { /* main.c says so and gives the exit code */
		sim_world_destroy(&w);
		if (csv && fclose(csv) != 0)
			fprintf(stderr, "tela bench: %s: write failed\n", o.csv_path);
		return EXIT_TELA_OK;
	}
	printf("implicit target: 64x64 stiff cloth, dt 1/240, CG tolerance 1e-4: %.3f ms/step, %.1f CG iterations%s\n",
	       r.us_per_step * 1e-3, r.cg_iterations, r.blew_up ? " (blew up)" : "");
	if (csv)
		fprintf(csv, "implicit-target,implicit,64,%d,%g,%.3f,%.3f,%.3f,%.3f,%.3f,%.3f,%.2f,%ld,%d\n",
		        sim_world_vertex_count(w), 1.0 / 240.0, r.us_per_step, r.ns_per_vertex_step, r.forces_ns,
		        r.integrator_ns, r.check_ns, r.stats_ns, r.cg_iterations, r.steps, r.blew_up);
	sim_world_destroy(&w);
	if (csv && fclose(csv) != 0) {
		fprintf(stderr, "tela bench: %s: write failed\n", o.csv_path);
		return EXIT_TELA_IO;
	}
	return EXIT_TELA_OK;
}

/* The stepping thread's CPU time: what a step costs on one core whatever else the
 * machine runs (wall-clock figures on a shared machine include the time other jobs
 * held the core); it cannot see the pool's threads, so it goes with one thread only. */
static int64_t thread_cpu_ns(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
	return (int64_t)ts.tv_sec * 1000000000 + ts.tv_nsec;
}

static int64_t (*bench_now)(void) = cli_now_ns;

static int cmp_double(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;
	return x < y ? -1 : (x > y);
}

static double mean_of(const double *x, int n)
{
	double sum = 0.0;
	for (int i = 0; i < n; i++)
		sum += x[i];
	return n ? sum / n : 0.0;
}

/* The mean, p50 and p99 of n times (sorted in place); 0 for none.  The percentiles are
 * nearest-rank: p99 is the least time that 99 % of the steps do not exceed, so with under
 * 100 steps it is the slowest one.  A mean above the p99 is still possible with 100 steps
 * or more (a handful of very slow steps, such as the first one's set-up), which is why the
 * reports give the max beside them. */
static void time_summary(double *t, int n, double *mean, double *p50, double *p99)
{
	*mean = mean_of(t, n);
	qsort(t, (size_t)n, sizeof(double), cmp_double);
	*p50 = n ? t[(n + 1) / 2 - 1] : 0.0;
	*p99 = n ? t[(int)ceil(0.99 * n) - 1] : 0.0;
}

/* Step times gathered over several runs of a case (`--drops`). */
typedef struct time_pool {
	double *all, *touching; /* every step's time, and those of the steps with contacts */
	int all_count, touching_count;
	double means[BENCH_MAX_DROPS], touching_means[BENCH_MAX_DROPS], candidates[BENCH_MAX_DROPS];
	int runs;
} time_pool;

/* The files a collision benchmark writes: one row per case, one row per step. */
typedef struct bench_files {
	FILE *csv, *steps;
} bench_files;

/* `--steps`: the step's time and what it did, so that single frames (a drape's crumple)
 * can be told apart from the means. */
static void write_step_row(FILE *f, const char *name, int step, double us, const sim_stats *st)
{
	fprintf(f, "%s,%d,%.4f", name, step, us * 1e-3);
	for (int k = 0; k < SIM_STAGE_COUNT; k++)
		fprintf(f, ",%.4f", st->stage_us[k] * 1e-3);
	fprintf(f, ",%.4f,%.4f,%.4f,%d,%d,%d,%d,%d,%d,%.4f\n", st->coarse_us * 1e-3, st->prepass_us * 1e-3,
	        st->walk_us * 1e-3, st->cg_iterations, st->candidates, st->contacts, st->collisions, st->broad_phases,
	        st->refreshed_triangles, st->patch_blocks > 0 ? (double)st->patches / st->patch_blocks : 0.0);
}

/* Steps a world n times and prints the mean, p50 and p99 step time, the same over the
 * steps that had contacts, and the mean time of each collision stage; one CSV row per
 * case, and with `--steps` one per step.  With `gather`, the run's step times are
 * appended to it (room for n more). */
static int time_collisions(const char *name, sim_world *w, float dt, int n, const bench_files *files,
                           task_pool *pool, time_pool *gather)
{
	FILE *csv = files->csv;
	sim_world_def def = *sim_world_get_def(w);
	task_pool_attach(pool, &def);
	if (sim_world_set_def(w, &def) != SIM_OK)
		return EXIT_TELA_IO;
	/* all steps, then (from n on) those that had contacts: a drape's frames on the ball
	 * cost several times its falling ones, which a mean over both hides */
	double *times = malloc(sizeof(double) * 2 * (size_t)n);
	if (!times)
		return EXIT_TELA_IO;
	double *touching = times + n;
	int ntouching = 0;
	double stage[SIM_STAGE_COUNT] = {0}, touching_stage[SIM_STAGE_COUNT] = {0}, coarse = 0.0, prepass = 0.0,
	       walk = 0.0;
	long touching_cg = 0;
	long contacts = 0, collisions = 0, zones = 0, cg_iterations = 0, broad_phases = 0, refreshed = 0;
	double candidates = 0.0, patches = 0.0;
	int done = 0;
	/* outside the timed step; per case, the bench's own line */
	progress prog;
	progress_start(&prog, "tela bench", (double)n * (double)dt, bench_quiet);
	prog.label = name;
	for (; done < n && !stop_requested(); done++) {
		progress_update(&prog, (double)done * (double)dt);
		int64_t t0 = bench_now();
		sim_result r = sim_world_step(w, dt);
		times[done] = (double)(bench_now() - t0) * 1e-3;
		if (r != SIM_OK) {
			progress_clear(&prog);
			fprintf(stderr, "tela bench: %s: step %d: %s\n", name, done + 1, sim_result_string(r));
			break;
		}
		const sim_stats *st = sim_world_stats(w);
		if (files->steps)
			write_step_row(files->steps, name, done + 1, times[done], st);
		if (st->contacts > 0) {
			touching[ntouching++] = times[done];
			for (int k = 0; k < SIM_STAGE_COUNT; k++)
				touching_stage[k] += st->stage_us[k];
			touching_cg += st->cg_iterations;
		}
		for (int k = 0; k < SIM_STAGE_COUNT; k++)
			stage[k] += st->stage_us[k];
		coarse += st->coarse_us;
		prepass += st->prepass_us;
		walk += st->walk_us;
		contacts += st->contacts;
		collisions += st->collisions;
		zones += st->impact_zones;
		candidates += st->candidates;
		broad_phases += st->broad_phases;
		refreshed += st->refreshed_triangles;
		patches += st->patch_blocks > 0 ? (double)st->patches / st->patch_blocks : 0.0;
		cg_iterations += st->cg_iterations;
	}
	progress_end(&prog);
	if (gather) { /* before the summaries sort them */
		memcpy(gather->all + gather->all_count, times, sizeof(double) * (size_t)done);
		memcpy(gather->touching + gather->touching_count, touching, sizeof(double) * (size_t)ntouching);
		gather->all_count += done;
		gather->touching_count += ntouching;
	}
	double mean, p50, p99, touch_mean, touch_p50, touch_p99;
	time_summary(times, done, &mean, &p50, &p99);
	time_summary(touching, ntouching, &touch_mean, &touch_p50, &touch_p99);
	if (gather) {
		gather->means[gather->runs] = mean;
		gather->touching_means[gather->runs] = touch_mean;
		gather->candidates[gather->runs] = done ? candidates / done : 0.0;
		gather->runs++;
	}
	static const char *const stage_names[SIM_STAGE_COUNT] = {"forces", "solve", "strain", "check", "refit",
	                                                        "broad", "proximity", "ccd", "failsafe"};
	printf("%s: %d steps of %g s, %d vertices, %d thread%s%s: mean %.3f ms, p50 %.3f ms, p99 %.3f ms, max %.3f ms "
	       "per step\n",
	       name, done, (double)dt, sim_world_vertex_count(w), def.worker_count, def.worker_count > 1 ? "s" : "",
	       bench_now == thread_cpu_ns ? " (CPU time)" : "", mean * 1e-3, p50 * 1e-3, p99 * 1e-3,
	       done ? times[done - 1] * 1e-3 : 0.0);
	printf("  steps with contacts %d: mean %.3f ms, p50 %.3f ms, p99 %.3f ms, max %.3f ms\n", ntouching,
	       touch_mean * 1e-3, touch_p50 * 1e-3, touch_p99 * 1e-3, ntouching ? touching[ntouching - 1] * 1e-3 : 0.0);
	printf("  per step (ms):");
	for (int k = 0; k < SIM_STAGE_COUNT; k++)
		printf(" %s %.3f", stage_names[k], done ? stage[k] * 1e-3 / done : 0.0);
	if (cg_iterations > 0) /* the implicit solve's share of the solve stage */
		printf(", CG iterations %.1f", done ? (double)cg_iterations / done : 0.0);
	printf("\n  per step with contacts (ms):");
	for (int k = 0; k < SIM_STAGE_COUNT; k++)
		printf(" %s %.3f", stage_names[k], ntouching ? touching_stage[k] * 1e-3 / ntouching : 0.0);
	if (touching_cg > 0)
		printf(", CG iterations %.1f", (double)touching_cg / ntouching);
	printf("\n  candidates %.0f per step, contacts %ld, collisions %ld, impact zones %ld, state hash %016llx\n",
	       done ? candidates / done : 0.0, contacts, collisions, zones, (unsigned long long)sim_world_state_hash(w));
	printf("  full broad phases %ld, triangles refreshed in place %ld, patches certified %.1f %%\n", broad_phases,
	       refreshed, done ? 100.0 * patches / done : 0.0);
	/* the pieces that keep a second worker waiting (sim_stats) */
	printf("  inside them (ms per step): solve's coarse levels %.3f (calling thread), sweeps' pre-pass %.3f, "
	       "sweeps' walk %.3f (calling thread)\n",
	       done ? coarse * 1e-3 / done : 0.0, done ? prepass * 1e-3 / done : 0.0, done ? walk * 1e-3 / done : 0.0);
	if (csv) {
		fprintf(csv, "%s,%d,%g,%d,%.4f,%.4f,%.4f", name, done, (double)dt, sim_world_vertex_count(w), mean * 1e-3,
		        p50 * 1e-3, p99 * 1e-3);
		for (int k = 0; k < SIM_STAGE_COUNT; k++)
			fprintf(csv, ",%.4f", done ? stage[k] * 1e-3 / done : 0.0);
		fprintf(csv, ",%ld,%ld,%ld,%d\n", contacts, collisions, zones, def.worker_count);
	}
	free(times);
	return done == n ? EXIT_TELA_OK : EXIT_TELA_BLOWUP;
}

/* The pile scene: 33 x 33, self-colliding, dt = 1 ms, `seconds` simulated. */
static int bench_pile(double seconds, const bench_files *files, task_pool *pool)
{
	sim_world *w = scn_create("pile");
	if (!w)
		return EXIT_TELA_IO;
	int rc = time_collisions("pile 33x33", w, 1e-3f, (int)(seconds / 1e-3), files, pool, NULL);
	sim_world_destroy(&w);
	return rc;
}

/* A 1.2 m, 129 x 129 cloth dropped onto a 0.35 m ball on the floor from `lift` above 1 m,
 * one implicit step per 1/90 s frame, a third of `seconds` simulated. */
static int bench_drape(double seconds, float lift, const char *name, const bench_files *files, task_pool *pool,
                       time_pool *gather)
{
	sim_world_def def = sim_world_def_default();
	def.integrator = SIM_IMPLICIT;
	def.air_damping = 0.1f;
	sim_world *w = sim_world_create(&def);
	if (!w)
		return EXIT_TELA_IO;
	sim_obstacle_def ball = sim_obstacle_def_default(SIM_SHAPE_SPHERE);
	ball.radius = 0.35f;
	ball.position[1] = 0.35f;
	sim_obstacle_def floor = sim_obstacle_def_default(SIM_SHAPE_PLANE);
	sim_grid_def g = sim_grid_def_default();
	g.nx = g.ny = 129;
	g.size_x = g.size_y = 1.2f;
	g.origin[0] = -0.6f, g.origin[1] = 1.0f + lift, g.origin[2] = -0.6f;
	g.axis_v[0] = 0.0f, g.axis_v[1] = 0.0f, g.axis_v[2] = 1.0f;
	g.material.stiffness[0] = 100.0f, g.material.stiffness[1] = 50.0f, g.material.stiffness[2] = 2.0f;
	int rc = EXIT_TELA_IO;
	if (sim_world_add_obstacle(w, &floor) >= 0 && sim_world_add_obstacle(w, &ball) >= 0 && sim_world_add_grid(w, &g) >= 0)
		rc = time_collisions(name, w, 1.0f / 90.0f, (int)(seconds * 30.0), files, pool, gather);
	sim_world_destroy(&w);
	return rc;
}

static void min_max(const double *x, int n, double *lo, double *hi)
{
	*lo = n ? x[0] : 0.0, *hi = *lo;
	for (int i = 1; i < n; i++)
		*lo = x[i] < *lo ? x[i] : *lo, *hi = x[i] > *hi ? x[i] : *hi;
}

/* The drape from `drops` heights, 0.1 mm apart, drop 0 the recorded scenario.  The
 * crumple on the ball is chaotic: a tenth of a millimetre gives other folds (eight drops:
 * 9 800 to 13 000 candidates a frame), so one drop's figures are one sample of the
 * scenario's, and a change that alters the bits also changes the folds it is timed on;
 * the summary pools the frames of all the drops. */
static int bench_drapes(double seconds, int drops, const bench_files *files, task_pool *pool)
{
	if (drops == 1)
		return bench_drape(seconds, 0.0f, "sphere 129x129 implicit", files, pool, NULL);
	int frames = (int)(seconds * 30.0);
	time_pool tp = {.all = malloc(sizeof(double) * (size_t)frames * (size_t)drops),
	                .touching = malloc(sizeof(double) * (size_t)frames * (size_t)drops)};
	int rc = tp.all && tp.touching ? EXIT_TELA_OK : EXIT_TELA_IO;
	for (int k = 0; k < drops && rc == EXIT_TELA_OK && !stop_requested(); k++) {
		char name[64];
		snprintf(name, sizeof name, "sphere 129x129 implicit drop %d (+%.1f mm)", k, (double)(k * DROP_STEP_M) * 1e3);
		rc = bench_drape(seconds, (float)k * DROP_STEP_M, name, files, pool, &tp);
	}
	if (rc == EXIT_TELA_OK) {
		double mean, p50, p99, tmean, tp50, tp99, lo, hi, tlo, thi, clo, chi;
		min_max(tp.means, tp.runs, &lo, &hi);
		min_max(tp.touching_means, tp.runs, &tlo, &thi);
		min_max(tp.candidates, tp.runs, &clo, &chi);
		double cmean = mean_of(tp.candidates, tp.runs);
		time_summary(tp.all, tp.all_count, &mean, &p50, &p99);
		time_summary(tp.touching, tp.touching_count, &tmean, &tp50, &tp99);
		printf("%d drops, %d steps pooled: mean %.3f ms (drops %.3f to %.3f), p50 %.3f ms, p99 %.3f ms, max %.3f ms "
		       "per step\n",
		       tp.runs, tp.all_count, mean * 1e-3, lo * 1e-3, hi * 1e-3, p50 * 1e-3, p99 * 1e-3,
		       tp.all_count ? tp.all[tp.all_count - 1] * 1e-3 : 0.0);
		printf("  steps with contacts %d: mean %.3f ms (drops %.3f to %.3f), p50 %.3f ms, p99 %.3f ms, max %.3f ms\n",
		       tp.touching_count, tmean * 1e-3, tlo * 1e-3, thi * 1e-3, tp50 * 1e-3, tp99 * 1e-3,
		       tp.touching_count ? tp.touching[tp.touching_count - 1] * 1e-3 : 0.0);
		printf("  candidates %.0f per step (drops %.0f to %.0f)\n", cmean, clo, chi);
	}
	free(tp.all);
	free(tp.touching);
	return rc;
}

/* The issue 3 figures: the pile scene (33 x 33, self-colliding, 1 ms) and a 129 x 129
 * cloth draped on a ball at one implicit step per 1/90 s frame. */
static int bench_collisions(int argc, char **argv)
{
	/* 3 s simulated for the pile; the 129 x 129 drape runs a third of it */
	bench_options o = {.seconds = 3.0, .allow_threads = true, .threads = 1, .allow_case = true, .drops = 1};
	int rc = parse_bench_options(argc, argv, &o, false);
	if (rc != EXIT_TELA_OK)
		return rc;
	if (o.only && strcmp(o.only, "pile") != 0 && strcmp(o.only, "drape") != 0)
		return cli_usage_error("bench", "--case: '%s' is not pile or drape", o.only);
	if (o.drops > 1 && o.only && strcmp(o.only, "pile") == 0)
		return cli_usage_error("bench", "--drops: the drape's heights, not with --case pile");
	bool pile = !o.only || strcmp(o.only, "pile") == 0, drape = !o.only || strcmp(o.only, "drape") == 0;
	double seconds = o.seconds;
	if (o.cpu_clock && o.threads > 1)
		return cli_usage_error("bench", "--clock cpu measures one thread: not with --threads");
	if (o.cpu_clock) { /* the steps and sim's stage timings both on the thread's CPU clock */
		bench_now = thread_cpu_ns;
		sim_set_clock(thread_cpu_ns);
	}
	/* --threads N: sim's parallel loops run on a pool of N (the caller and N - 1 threads) */
	task_pool *pool = NULL;
	if (o.threads > 1 && !(pool = task_pool_create(o.threads))) {
		fprintf(stderr, "tela bench: cannot start %d threads\n", o.threads);
		return EXIT_TELA_IO;
	}
	bench_quiet = o.quiet;
	bench_files files = {0};
	rc = open_csv(o.csv_path, "case,steps,dt,vertices,mean_ms,p50_ms,p99_ms,forces_ms,solve_ms,strain_ms,check_ms,"
	                          "refit_ms,broad_ms,proximity_ms,ccd_ms,failsafe_ms,contacts,collisions,impact_zones,threads",
	              &files.csv);
	if (rc == EXIT_TELA_OK)
		rc = open_csv(o.steps_path,
		              "case,step,ms,forces_ms,solve_ms,strain_ms,check_ms,refit_ms,broad_ms,proximity_ms,ccd_ms,"
		              "failsafe_ms,coarse_ms,prepass_ms,walk_ms,cg_iterations,candidates,contacts,collisions,"
		              "broad_phases,refreshed_triangles,patches_certified",
		              &files.steps);
	if (rc == EXIT_TELA_OK && pile)
		rc = bench_pile(seconds, &files, pool);
	if (drape && rc == EXIT_TELA_OK && !stop_requested())
		rc = bench_drapes(seconds, o.drops, &files, pool);
	task_pool_destroy(&pool);
	if (files.csv && fclose(files.csv) != 0 && rc == EXIT_TELA_OK)
		rc = EXIT_TELA_IO;
	if (files.steps && fclose(files.steps) != 0 && rc == EXIT_TELA_OK)
		rc = EXIT_TELA_IO;
	return rc;
}

/* ---- latency: a sample's arrival to the step that uses it ---------------------------------------- */

typedef struct latency_batch {
	int64_t t_ns[512]; /* the samples delivered before the coming step */
	int count;
} latency_batch;

static void latency_on_sample(void *context, const dev_sample *sample, const trk_pointer *pointer,
                              const sty_output *out)
{
	(void)pointer, (void)out;
	latency_batch *b = context;
	if (b->count < (int)(sizeof b->t_ns / sizeof b->t_ns[0]))
		b->t_ns[b->count++] = sample->t_ns;
}

/* p50, p99 and the worst of n latencies (sorted in place), and the line that reports them. */
static void report_latency(const char *path, double *lat, size_t n, uint64_t lost, double dt)
{
	double mean, p50, p99;
	time_summary(lat, (int)n, &mean, &p50, &p99);
	double worst = lat[n - 1];
	double target = dt * 1e3 + 0.2;
	printf("%-9s samples %zu, p50 %.3f ms, p99 %.3f ms, max %.3f ms", path, n, p50, p99, worst);
	if (lost)
		printf(" (%llu not timed)", (unsigned long long)lost);
	printf("; target p99 <= %.3f ms (one step + 0.2 ms): %s\n", target, p99 <= target ? "met" : "NOT met");
}

/* The lock-step path (`tela run --device`, the headless demo): before each step every
 * sample due at or before the step's start is delivered; a sample's latency is the host
 * time at the start of the step it is delivered before, minus its arrival time. */
static bool latency_lockstep(const char *replay, const scn_scene *scene, double seconds, double rate, double **out,
                             size_t *count)
{
	scn_error err = {0};
	sim_world *w = NULL;
	if (scn_build(scene, &w, &err) != SCN_OK) {
		fprintf(stderr, "tela bench: %s\n", err.message);
		return false;
	}
	float dt = scn_scene_info(scene)->dt;
	sty_feed feed;
	sty_feed_options fo = {.spec = replay, .stylus = sty_config_default()};
	char error[512];
	if (!sty_feed_open(&feed, &fo, error, sizeof error)) {
		fprintf(stderr, "tela bench: %s: %s\n", replay, error);
		sim_world_destroy(&w);
		return false;
	}
	long steps = (long)ceil((seconds + 0.1) / dt);
	size_t cap = (size_t)(seconds * rate) + 1024, n = 0;
	double *lat = malloc(cap * sizeof *lat);
	latency_batch batch;
	for (long k = 0; k < steps && lat && !stop_requested(); k++) {
		batch.count = 0;
		sty_feed_advance(&feed, (double)k * (double)dt, NULL, latency_on_sample, &batch);
		int64_t now = cli_now_ns();
		for (int i = 0; i < batch.count && n < cap; i++)
			lat[n++] = (double)(now - batch.t_ns[i]) * 1e-6;
		sim_world_step(w, dt);
	}
	sty_feed_close(&feed);
	sim_world_destroy(&w);
	*out = lat;
	*count = lat ? n : 0;
	return lat != NULL;
}

/* The window's path (the interactive demo): the device thread turns each sample into a
 * pointer as it arrives (app/device_thread.c) and the simulation thread, stepping at its
 * fixed rate on the host clock, reads the pointer before each step (app/sim_thread.c); a
 * sample's latency is the start of the first step after its pointer was set, minus its
 * arrival.  The main thread hands the device thread a snapshot at 60 Hz, as a window's
 * frames would. */
static bool latency_window(const char *replay, const scn_scene *scene, double seconds, double **out, size_t *count,
                           uint64_t *lost)
{
	scn_error err = {0};
	st_options so = st_options_default();
	st_thread *sim = st_start(scene, &so, &err);
	if (!sim) {
		fprintf(stderr, "tela bench: %s\n", err.message);
		return false;
	}
	st_measure_latency(sim, true);
	sty_feed_options fo = {.spec = replay, .stylus = sty_config_default()};
	char error[512];
	dt_thread *dev = dt_start_attached(&fo, 0, sim, st_get_layout(sim), error, sizeof error);
	if (!dev) {
		fprintf(stderr, "tela bench: %s: %s\n", replay, error);
		st_stop(&sim);
		return false;
	}
	int64_t start = cli_now_ns(), limit = start + (int64_t)((seconds + 5.0) * 1e9);
	dt_status status;
	do {
		struct timespec frame = {.tv_nsec = 16666667};
		nanosleep(&frame, NULL);
		dt_set_scene(dev, st_latest(sim));
		dt_get_status(dev, &status);
	} while (status.state != DEV_ENDED && cli_now_ns() < limit && !stop_requested());
	/* until the step after the last sample has run (a slow machine's simulation thread
	 * may be running behind in slow motion), at most a second */
	size_t cap = (size_t)status.samples + 16;
	double *lat = malloc(cap * sizeof *lat);
	*count = 0;
	for (int wait = 0; lat && wait < 100 && !stop_requested(); wait++) {
		*count = st_latencies(sim, lat, cap, lost);
		if (*count + *lost >= status.samples)
			break;
		struct timespec nap = {.tv_nsec = 10000000};
		nanosleep(&nap, NULL);
	}
	dt_attach(dev, NULL, NULL);
	/* every sample the stylus took became a pointer; those no step read are untimed */
	*lost = status.samples > *count ? status.samples - *count : 0;
	dt_stop(&dev);
	st_stop(&sim);
	*out = lat;
	if (status.state != DEV_ENDED && !stop_requested())
		fprintf(stderr, "tela bench: latency: the replay did not end within %.0f s\n", seconds + 5.0);
	return lat != NULL && status.state == DEV_ENDED;
}

/* Records the synthetic grab script at `rate` Hz, replays it in real time into the
 * "hanging" scene along each path, and times each sample from its arrival (its t_ns,
 * when the replay makes it due) to the start of the step that uses it. */
static int bench_latency(int argc, char **argv)
{
	double seconds = 3.0, rate = 240.0;
	bool lockstep = true, window = true;
	for (int i = 1; i < argc; i++) {
		const char *val = i + 1 < argc ? argv[i + 1] : NULL;
		if ((strcmp(argv[i], "--seconds") == 0 || strcmp(argv[i], "--rate") == 0) && val) {
			double v;
			if (!cli_parse_double(val, &v) || v <= 0.0 || v > 1e4)
				return cli_usage_error("bench", "%s: '%s' is not a positive number", argv[i], val);
			*(argv[i][2] == 's' ? &seconds : &rate) = v;
			i++;
		} else if (strcmp(argv[i], "--path") == 0 && val) {
			lockstep = strcmp(val, "lockstep") == 0 || strcmp(val, "both") == 0;
			window = strcmp(val, "window") == 0 || strcmp(val, "both") == 0;
			if (!lockstep && !window)
				return cli_usage_error("bench", "--path: '%s' is not lockstep, window or both", val);
			i++;
		} else {
			return cli_usage_error("bench", "latency: unknown option or missing value '%s'", argv[i]);
		}
	}
	/* a scratch recording, where the user keeps scratch files */
	const char *tmp = getenv("TMPDIR");
	char path[512];
	snprintf(path, sizeof path, "%s/tela-latency-XXXXXX", tmp && *tmp ? tmp : "/tmp");
	int fd = mkstemp(path);
	if (fd < 0) {
		fprintf(stderr, "tela bench: %s: %s\n", path, strerror(errno));
		return EXIT_TELA_IO;
	}
	close(fd);
	char spec[128], error[512];
	snprintf(spec, sizeof spec, "synthetic:grab@%g,fast,seconds=%g", rate, seconds);
	dev_source *src = dev_open(spec, error, sizeof error);
	if (!src || !dev_record(src, path, error, sizeof error)) {
		fprintf(stderr, "tela bench: %s: %s\n", spec, error);
		dev_close(&src);
		unlink(path);
		return EXIT_TELA_IO;
	}
	dev_sample scratch[256];
	while (dev_poll(src, scratch, 256, 0) >= 0 && !stop_requested()) {
	}
	dev_close(&src);

	scn_scene *scene = NULL;
	scn_error err = {0};
	if (scn_load("hanging", &scene, &err) != SCN_OK) {
		fprintf(stderr, "tela bench: %s\n", err.message);
		unlink(path);
		return EXIT_TELA_INPUT;
	}
	float dt = scn_scene_info(scene)->dt;
	char replay[600];
	snprintf(replay, sizeof replay, "replay:%s@1", path);
	printf("# tela bench latency --seconds %g --rate %g --path %s\n", seconds, rate,
	       lockstep && window ? "both" : lockstep ? "lockstep" : "window");
	printf("latency from a sample's arrival to the step that uses it: replay at %g Hz, real time, "
	       "scene hanging at dt %g ms\n",
	       rate, (double)dt * 1e3);
	int rc = EXIT_TELA_OK;
	double *lat = NULL;
	size_t n = 0;
	uint64_t lost = 0;
	/* stopped by a signal: no figures from a cut-short replay (main.c gives the exit code) */
	if (lockstep && !stop_requested()) {
		if (!latency_lockstep(replay, scene, seconds, rate, &lat, &n) || n == 0) {
			fprintf(stderr, "tela bench: latency: no samples were delivered in lock step\n");
			rc = EXIT_TELA_IO;
		} else if (!stop_requested()) {
			report_latency("lockstep", lat, n, 0, dt);
		}
		free(lat);
		lat = NULL;
	}
	if (window && !stop_requested()) {
		if (!latency_window(replay, scene, seconds, &lat, &n, &lost) || n == 0) {
			fprintf(stderr, "tela bench: latency: no samples were timed on the window's path\n");
			rc = EXIT_TELA_IO;
		} else if (!stop_requested()) {
			report_latency("window", lat, n, lost, dt);
		}
		free(lat);
	}
	unlink(path);
	scn_scene_free(&scene);
	return rc;
}

static const char *const bench_usage[][2] = {
    {"integrators",
     "  tela bench integrators [--csv FILE] [--sizes N,N,...] [--dt S] [--seconds T] [--quiet]\n"
     "      time every integrator on square cloths of N x N vertices (default 16, 32, 64,\n"
     "      128, 256), one core, T simulated seconds each (default 0.3), step S (default\n"
     "      0.001); --csv FILE: one row per integrator and size\n"},
    {"collisions",
     "  tela bench collisions [--csv FILE] [--seconds T] [--threads N | --clock cpu]\n"
     "                        [--case pile|drape] [--drops N] [--steps FILE] [--quiet]\n"
     "      collision pipeline stage timings, p50/p99 per step, on the pile scene and a\n"
     "      129 x 129 drape (T: default 3 s for the pile, a third of it for the drape);\n"
     "      --threads N: on N threads; --clock cpu: the thread's CPU time instead of\n"
     "      wall-clock time; --case: one case; --drops N: the drape from N heights 0.1 mm\n"
     "      apart, and their steps pooled; --steps FILE: one CSV row per step (its time,\n"
     "      stages and counts)\n"},
    {"gpu",
     "  tela bench gpu [--csv FILE] [--svg PREFIX] [--sizes N,N,...] [--steps N]\n"
     "                 [--only throughput,stability,elongation,draw] [--quiet]\n"
     "      CPU against GPU integrators: steps/s by cloth size, largest stable step,\n"
     "      elongation with and without Provot; draw (only when named): the demo's GPU\n"
     "      draw buffer against the CPU's normals and upload; --svg PREFIX: the charts as\n"
     "      PREFIX-*.svg\n"},
    {"latency",
     "  tela bench latency [--seconds T] [--rate HZ] [--path lockstep|window|both]\n"
     "      stylus sample arrival to the step that uses it, p50/p99, for a synthetic grab\n"
     "      at HZ (default 240) replayed in real time for T seconds (default 3)\n"},
};

/* `which`: one benchmark's name, or NULL for all of them. */
static void bench_help(const char *which)
{
	printf("usage:\n");
	for (size_t k = 0; k < sizeof bench_usage / sizeof bench_usage[0]; k++)
		if (!which || strcmp(which, bench_usage[k][0]) == 0)
			fputs(bench_usage[k][1], stdout);
	printf("Speed figures, printed as tables (docs/benchmarks.md has measured ones and the\n"
	       "commands behind them).  On a terminal a progress line shows on stderr; --quiet:\n"
	       "none.  -h, --help: this text.\n"
	       "exit codes: 0 success; 2 bad command line; 3 an output file could not be written\n"
	       "(tela --help has the full list).\n");
}

int cmd_bench(int argc, char **argv)
{
	if (cli_wants_help(argc, argv, 1)) {
		bool one = false;
		for (size_t k = 0; argc >= 2 && k < sizeof bench_usage / sizeof bench_usage[0]; k++)
			one = one || strcmp(argv[1], bench_usage[k][0]) == 0;
		bench_help(one ? argv[1] : NULL);
		return EXIT_TELA_OK;
	}
	if (argc < 2)
		return cli_usage_error("bench", "which benchmark? (integrators, collisions, latency, gpu)");
	if (strcmp(argv[1], "integrators") == 0)
		return bench_integrators(argc - 1, argv + 1);
	if (strcmp(argv[1], "collisions") == 0)
		return bench_collisions(argc - 1, argv + 1);
	if (strcmp(argv[1], "latency") == 0)
		return bench_latency(argc - 1, argv + 1);
	if (strcmp(argv[1], "gpu") == 0)
		return bench_gpu(argc - 1, argv + 1);
	return cli_usage_error("bench", "unknown benchmark '%s' (integrators, collisions, latency, gpu)", argv[1]);
}
