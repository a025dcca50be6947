/* tela bench gpu: the integrators on the CPU and on the GPU (issue 7, seed 003's
 * comparison), written as a CSV and three SVG charts, and (--only draw) what the demo's
 * drawing straight from the GPU costs against drawing from the CPU's copy.  A benchmark,
 * not a test: it prints what it measured and the command behind it. */
#define _POSIX_C_SOURCE 200809L
#ifndef GLEW_NO_GLU
#define GLEW_NO_GLU /* app/CMakeLists.txt defines it too */
#endif
#include <GL/glew.h>

#include "bench_gpu.h"

#include "cli.h"
#include "gpu_session.h"
#include "progress.h"
#include "render.h"
#include "stop.h"
#include "svg_plot.h"

#include "scenes/scenes.h"

#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define MAX_SIZES 16
#define NI SIM_INTEGRATOR_COUNT

/* The three parts of the comparison; --only picks some.  The draw hand-over runs only
 * when --only names it. */
enum { PART_THROUGHPUT = 1, PART_STABILITY = 2, PART_ELONGATION = 4, PART_ALL = 7, PART_DRAW = 8 };

typedef struct gpu_bench_options {
	const char *csv_path, *svg_prefix;
	int sizes[MAX_SIZES];
	int size_count;
	long steps;
	unsigned parts;
	bool quiet; /* --quiet: no progress line */
} gpu_bench_options;

static int parse_options(int argc, char **argv, gpu_bench_options *o)
{
	*o = (gpu_bench_options){.sizes = {16, 32, 64, 128, 256}, .size_count = 5, .steps = 20, .parts = PART_ALL};
	for (int i = 1; i < argc; i += 2) {
		const char *a = argv[i], *val = i + 1 < argc ? argv[i + 1] : NULL;
		if (strcmp(a, "--quiet") == 0) {
			o->quiet = true;
			i--; /* it takes no value: the loop's step of two moves on by one */
			continue;
		}
		if (strcmp(a, "--csv") != 0 && strcmp(a, "--svg") != 0 && strcmp(a, "--sizes") != 0 &&
		    strcmp(a, "--steps") != 0 && strcmp(a, "--only") != 0)
			return cli_usage_error("bench", "unknown option '%s'", a);
		if (!val)
			return cli_usage_error("bench", "option %s needs a value", a);
		if (strcmp(a, "--csv") == 0) {
			o->csv_path = val;
		} else if (strcmp(a, "--svg") == 0) {
			o->svg_prefix = val;
		} else if (strcmp(a, "--only") == 0) {
			char buf[128];
			if (snprintf(buf, sizeof buf, "%s", val) >= (int)sizeof buf)
				return cli_usage_error("bench", "--only: '%s' is too long", val);
			o->parts = 0;
			char *save = NULL;
			for (char *tok = strtok_r(buf, ",", &save); tok; tok = strtok_r(NULL, ",", &save)) {
				unsigned part = strcmp(tok, "throughput") == 0   ? PART_THROUGHPUT
				                : strcmp(tok, "stability") == 0  ? PART_STABILITY
				                : strcmp(tok, "elongation") == 0 ? PART_ELONGATION
				                : strcmp(tok, "draw") == 0       ? PART_DRAW
				                                                 : 0;
				if (!part)
					return cli_usage_error("bench", "--only: '%s' is not throughput, stability, elongation or draw",
					                       tok);
				o->parts |= part;
			}
			if (!o->parts)
				return cli_usage_error("bench", "--only: '%s' names no part", val);
		} else if (strcmp(a, "--steps") == 0) {
			if (!cli_parse_int(val, 1, 1000000, &o->steps))
				return cli_usage_error("bench", "--steps: '%s' is not an integer in [1, 1e6]", val);
		} else {
			char buf[256];
			if (snprintf(buf, sizeof buf, "%s", val) >= (int)sizeof buf)
				return cli_usage_error("bench", "--sizes: '%s' is too long", val);
			o->size_count = 0;
			char *save = NULL;
			for (char *tok = strtok_r(buf, ",", &save); tok; tok = strtok_r(NULL, ",", &save)) {
				long v;
				if (o->size_count == MAX_SIZES || !cli_parse_int(tok, 2, 1024, &v))
					return cli_usage_error("bench", "--sizes: '%s' is not a list of up to 16 sizes in [2, 1024]",
					                       val);
				o->sizes[o->size_count++] = (int)v;
			}
			if (o->size_count == 0)
				return cli_usage_error("bench", "--sizes: '%s' is empty", val);
		}
	}
	return EXIT_TELA_OK;
}

/* One step on either side. */
static sim_result step(gpu_session *gpu, sim_world *w, float dt)
{
	if (stop_requested()) /* a signal: every measurement ends at once, and is not reported */
		return SIM_ERROR_INVALID;
	return gpu ? gpu_backend_step(gpu->backend, w, dt) : sim_world_step(w, dt);
}

static double seconds_since(int64_t t0) { return (double)(cli_now_ns() - t0) * 1e-9; }

/* ---- throughput ---------------------------------------------------------------------------- */

typedef struct throughput {
	double cpu, gpu, resident;   /* steps per second; NAN where not measured or blown up */
	double up_us, gpu_us, down_us; /* hand-over per substep of the gpu figure */
} throughput;

static double time_steps(gpu_session *gpu, sim_world *w, float dt, long steps)
{
	for (int k = 0; k < 3; k++) /* warm-up: caches, programs, uploads, Kang/Verlet memory */
		if (step(gpu, w, dt) != SIM_OK)
			return NAN;
	int64_t t0 = cli_now_ns();
	for (long k = 0; k < steps; k++)
		if (step(gpu, w, dt) != SIM_OK)
			return NAN;
	return (double)steps / seconds_since(t0);
}

static throughput measure_throughput(gpu_session *gpu, int n, sim_integrator integ, long steps, float dt)
{
	throughput t = {NAN, NAN, NAN, NAN, NAN, NAN};
	sim_world *w = bench_cloth(n, 0.01f, 2.0f, integ, 1e-4f, false);
	if (w)
		t.cpu = time_steps(NULL, w, dt, steps);
	sim_world_destroy(&w);
	if (!gpu || !gpu_backend_supports(integ))
		return t;
	w = bench_cloth(n, 0.01f, 2.0f, integ, 1e-4f, false);
	if (!w)
		return t;
	step(gpu, w, dt);
	gpu_timing t0 = gpu_backend_timing(gpu->backend);
	t.gpu = time_steps(gpu, w, dt, steps);
	gpu_timing t1 = gpu_backend_timing(gpu->backend);
	double subs = (double)(t1.substeps - t0.substeps);
	if (subs > 0) {
		t.up_us = (t1.upload_us - t0.upload_us) / subs;
		t.gpu_us = (t1.gpu_us - t0.gpu_us) / subs;
		t.down_us = (t1.download_us - t0.download_us) / subs;
	}
	/* the compute alone: the same steps with no hand-over between them (one warm-up run) */
	if (gpu_backend_run_resident(gpu->backend, w, dt, 3) == SIM_OK) {
		int64_t s0 = cli_now_ns();
		if (gpu_backend_run_resident(gpu->backend, w, dt, (int)steps) == SIM_OK)
			t.resident = (double)steps / seconds_since(s0);
	}
	sim_world_destroy(&w);
	return t;
}

/* ---- the demo's draw hand-over ------------------------------------------------------------- */

/* Per published state, wall clock on the calling thread, us: "gpu" is what the simulation
 * thread does with the GPU integrator on (gpu_backend_fill_draw_buffer and a fence: the
 * upload of the final positions, the normals kernel, two copies), queued and then waited
 * for; "cpu" is what the window does per frame without it (rd_vertex_normals, the
 * interleaving and the upload of 24 bytes per vertex), queued and waited for likewise. */
typedef struct draw_cost {
	double gpu_queue_us, gpu_done_us, cpu_queue_us, cpu_done_us;
} draw_cost;

static void wait_all(void)
{
	GLsync f = glFenceSync(GL_SYNC_GPU_COMMANDS_COMPLETE, 0);
	glClientWaitSync(f, GL_SYNC_FLUSH_COMMANDS_BIT, UINT64_MAX);
	glDeleteSync(f);
}

static draw_cost measure_draw(gpu_session *gpu, int n, long steps, float dt)
{
	draw_cost c = {NAN, NAN, NAN, NAN};
	sim_world *w = bench_cloth(n, 0.01f, 2.0f, SIM_SYMPLECTIC, 1e-4f, false);
	int vertices = w ? sim_world_vertex_count(w) : 0, triangles = w ? sim_world_triangle_total(w) : 0;
	unsigned *tri = malloc(sizeof(unsigned) * 3 * (size_t)(triangles > 0 ? triangles : 1));
	vec3 *normals = malloc(sizeof(vec3) * (size_t)(vertices > 0 ? vertices : 1));
	float *interleaved = malloc(sizeof(float) * 6 * (size_t)(vertices > 0 ? vertices : 1));
	if (!w || !tri || !normals || !interleaved || gpu_backend_step(gpu->backend, w, dt) != SIM_OK) {
		free(tri), free(normals), free(interleaved);
		sim_world_destroy(&w);
		return c;
	}
	const int *wt = sim_world_triangles(w);
	for (int k = 0; k < 3 * triangles; k++)
		tri[k] = (unsigned)wt[k];
	GLuint buffer[2];
	glGenBuffers(2, buffer);
	glBindBuffer(GL_COPY_WRITE_BUFFER, buffer[0]);
	glBufferData(GL_COPY_WRITE_BUFFER, (GLsizeiptr)(2 * sizeof(vec4)) * vertices, NULL, GL_DYNAMIC_COPY);
	glBindBuffer(GL_ARRAY_BUFFER, buffer[1]);
	glBufferData(GL_ARRAY_BUFFER, (GLsizeiptr)(6 * sizeof(float)) * vertices, NULL, GL_DYNAMIC_DRAW);
	double gq = 0, gd = 0, cq = 0, cd = 0;
	long done = 0;
	bool ok = true;
	for (long k = -3; k < steps && ok && !stop_requested(); k++) { /* 3 warm-up rounds */
		ok = gpu_backend_step(gpu->backend, w, dt) == SIM_OK;
		wait_all();
		int64_t t0 = cli_now_ns();
		ok = ok && gpu_backend_fill_draw_buffer(gpu->backend, w, buffer[0]);
		GLsync f = glFenceSync(GL_SYNC_GPU_COMMANDS_COMPLETE, 0);
		glFlush();
		int64_t t1 = cli_now_ns();
		glClientWaitSync(f, GL_SYNC_FLUSH_COMMANDS_BIT, UINT64_MAX);
		glDeleteSync(f);
		int64_t t2 = cli_now_ns();
		const vec4 *x = sim_world_positions(w);
		rd_vertex_normals(x, vertices, tri, triangles, normals);
		for (int i = 0; i < vertices; i++) {
			memcpy(interleaved + 6 * i, x[i], 3 * sizeof(float));
			memcpy(interleaved + 6 * i + 3, normals[i], 3 * sizeof(float));
		}
		glBindBuffer(GL_ARRAY_BUFFER, buffer[1]);
		glBufferSubData(GL_ARRAY_BUFFER, 0, (GLsizeiptr)(6 * sizeof(float)) * vertices, interleaved);
		f = glFenceSync(GL_SYNC_GPU_COMMANDS_COMPLETE, 0);
		glFlush();
		int64_t t3 = cli_now_ns();
		glClientWaitSync(f, GL_SYNC_FLUSH_COMMANDS_BIT, UINT64_MAX);
		glDeleteSync(f);
		int64_t t4 = cli_now_ns();
		if (k >= 0) {
			gq += (double)(t1 - t0), gd += (double)(t2 - t0), cq += (double)(t3 - t2), cd += (double)(t4 - t2);
			done++;
		}
	}
	glBindBuffer(GL_ARRAY_BUFFER, 0);
	glDeleteBuffers(2, buffer);
	ok = ok && glGetError() == GL_NO_ERROR;
	if (ok && done > 0)
		c = (draw_cost){gq * 1e-3 / (double)done, gd * 1e-3 / (double)done, cq * 1e-3 / (double)done,
		                cd * 1e-3 / (double)done};
	free(tri), free(normals), free(interleaved);
	sim_world_destroy(&w);
	return c;
}

/* ---- stability ----------------------------------------------------------------------------- */

/* The stiff cloth of the implicit target, 16 x 16 (1 m, 500 / 200 / 20 N/m, gravity),
 * with the library's default blow-up thresholds: stable means 0.2 s without a blow-up. */
static bool stable_at(gpu_session *gpu, sim_integrator integ, float dt)
{
	sim_world *w = bench_cloth(16, 1.0f / 15.0f, 500.0f, integ, 1e-4f, true);
	if (!w)
		return false;
	sim_world_def d = *sim_world_get_def(w);
	sim_world_def defaults = sim_world_def_default();
	d.blowup_strain = defaults.blowup_strain;
	d.blowup_speed = defaults.blowup_speed;
	sim_world_set_def(w, &d);
	long steps = (long)ceil(0.2 / dt);
	bool ok = true;
	for (long k = 0; k < steps && ok; k++)
		ok = step(gpu, w, dt) == SIM_OK;
	sim_world_destroy(&w);
	return ok;
}

#define DT_LO 1e-5
#define DT_HI 0.05

/* Bisection in log(dt) over [1e-5, 0.05] s to 2 %: the largest step found stable (NAN if
 * even 1e-5 s is not; DT_HI if every step is). */
static double largest_stable(gpu_session *gpu, sim_integrator integ)
{
	if (stable_at(gpu, integ, (float)DT_HI))
		return DT_HI;
	double lo = log(DT_LO), hi = log(DT_HI);
	if (!stable_at(gpu, integ, (float)DT_LO))
		return NAN;
	while (hi - lo > 0.02) {
		double mid = 0.5 * (lo + hi);
		if (stable_at(gpu, integ, (float)exp(mid)))
			lo = mid;
		else
			hi = mid;
	}
	return exp(lo);
}

/* ---- elongation ---------------------------------------------------------------------------- */

/* The hanging scene (1 m, 20 x 20, 100 N/m, pinned at two corners) for 1.5 s: the peak
 * over the run of the largest structural or shear strain, without and with Provot's
 * limit at 10 %.  Schemes unstable at its 1 ms step get substeps. */
static int elongation_substeps(sim_integrator integ) { return integ == SIM_EULER ? 10 : 1; }

static double peak_strain(gpu_session *gpu, sim_integrator integ, bool provot, bool strain_on_gpu)
{
	scn_scene *scene = NULL;
	sim_world *w = NULL;
	scn_error err = {0};
	if (scn_load("hanging", &scene, &err) != SCN_OK || scn_build(scene, &w, &err) != SCN_OK) {
		scn_scene_free(&scene);
		return NAN;
	}
	float dt = scn_scene_info(scene)->dt;
	scn_scene_free(&scene);
	sim_world_def d = *sim_world_get_def(w);
	d.integrator = integ;
	d.substeps = elongation_substeps(integ);
	d.strain_limit = provot;
	d.strain_tau = 0.1f;
	sim_world_set_def(w, &d);
	double peak = 0.0;
	long steps = (long)lround(1.5 / dt);
	if (gpu)
		gpu_backend_set_strain_on_gpu(gpu->backend, strain_on_gpu);
	for (long k = 0; k < steps; k++) {
		if (step(gpu, w, dt) != SIM_OK) {
			peak = NAN;
			break;
		}
		peak = fmax(peak, sim_world_stats(w)->max_strain);
	}
	if (gpu)
		gpu_backend_set_strain_on_gpu(gpu->backend, false);
	sim_world_destroy(&w);
	return peak;
}

/* ---- output -------------------------------------------------------------------------------- */

/* One right-aligned table cell: a figure that was not measured (a scheme the GPU lacks,
 * no GPU) reads "n/a", not "nan". */
static void cell(const char *fmt, int width, double v)
{
	if (isnan(v))
		printf(" %*s", width, "n/a");
	else
		printf(fmt, width, v);
}

static void csv_row(FILE *csv, const char *part, sim_integrator integ, const char *backend, const char *variant,
                    int n, double dt, double value, long steps)
{
	if (csv)
		fprintf(csv, "%s,%s,%s,%s,%d,%d,%g,%.6g,%ld\n", part, sim_integrator_name(integ), backend, variant, n, n * n, dt,
		        value, steps);
}

static void plot_error(const char *path, int err)
{
	if (err)
		fprintf(stderr, "tela bench: %s: %s\n", path, strerror(err));
}

static int write_plots(const gpu_bench_options *o, const char *renderer, throughput (*tp)[NI], const double *stable,
                       const double *elong)
{
	char path[1024];
	int bad = 0;
	/* steps/s against vertices: colour per integrator, solid CPU, dashed GPU with the
	 * hand-over, dotted GPU alone */
	double xs[MAX_SIZES], ys[3][NI][MAX_SIZES];
	char labels[3][NI][64];
	svg_series series[3 * NI];
	int count = 0;
	for (int s = 0; s < o->size_count; s++)
		xs[s] = (double)o->sizes[s] * o->sizes[s];
	for (int v = 0; v < 3; v++) {
		for (int k = 0; k < NI; k++) {
			bool any = false;
			for (int s = 0; s < o->size_count; s++) {
				const throughput *t = &tp[s][k];
				ys[v][k][s] = v == 0 ? t->cpu : v == 1 ? t->gpu : t->resident;
				any = any || isfinite(ys[v][k][s]);
			}
			if (!any)
				continue;
			snprintf(labels[v][k], sizeof labels[v][k], "%s %s", sim_integrator_name((sim_integrator)k),
			         v == 0 ? "CPU" : v == 1 ? "GPU" : "GPU only");
			series[count++] = (svg_series){labels[v][k], xs, ys[v][k], o->size_count, k, v};
		}
	}
	char title[256];
	snprintf(title, sizeof title, "Steps per second (GPU: %s)", renderer);
	snprintf(path, sizeof path, "%s-throughput.svg", o->svg_prefix);
	svg_chart c1 = {title, "vertices (n x n cloth)", "steps per second", true, true};
	int err = 0;
	if (o->parts & PART_THROUGHPUT) {
		err = svg_line_chart(path, &c1, series, count);
		plot_error(path, err);
		bad |= err;
	}
	const char *names[NI];
	for (int k = 0; k < NI; k++)
		names[k] = sim_integrator_name((sim_integrator)k);
	static const char *const sides[] = {"CPU", "GPU"};
	snprintf(path, sizeof path, "%s-stability.svg", o->svg_prefix);
	svg_chart c2 = {"Largest stable step, 16 x 16 stiff cloth (500 N/m), 0.2 s (search up to 0.05 s)", "integrator",
	                "dt (s)", false, true};
	if (o->parts & PART_STABILITY) {
		err = svg_bar_chart(path, &c2, names, NI, sides, 2, stable);
		plot_error(path, err);
		bad |= err;
	}
	static const char *const variants[] = {"CPU", "CPU + Provot 10%", "GPU", "GPU + Provot (CPU)",
	                                       "GPU + Provot (GPU)"};
	snprintf(path, sizeof path, "%s-elongation.svg", o->svg_prefix);
	svg_chart c3 = {"Peak elongation, hanging scene, 1.5 s", "integrator", "max strain (l - L) / L", false, false};
	if (o->parts & PART_ELONGATION) {
		err = svg_bar_chart(path, &c3, names, NI, variants, 5, elong);
		plot_error(path, err);
		bad |= err;
	}
	return bad ? EXIT_TELA_IO : EXIT_TELA_OK;
}

int bench_gpu(int argc, char **argv)
{
	gpu_bench_options o;
	int rc = parse_options(argc, argv, &o);
	if (rc != EXIT_TELA_OK)
		return rc;
	/* refused before anything runs */
	if ((o.csv_path && (rc = cli_check_output("bench", "--csv", o.csv_path, CLI_OUT_FILE))) ||
	    (o.svg_prefix && (rc = cli_check_output("bench", "--svg", o.svg_prefix, CLI_OUT_PREFIX))))
		return rc;
	FILE *csv = NULL;
	if (o.csv_path) {
		csv = fopen(o.csv_path, "w");
		if (!csv) {
			fprintf(stderr, "tela bench: %s: %s\n", o.csv_path, strerror(errno));
			return EXIT_TELA_IO;
		}
		fprintf(csv, "part,integrator,backend,variant,n,vertices,dt,value,steps\n");
	}
	gpu_session session, *gpu = &session;
	char error[4096];
	if (!gpu_session_open(&session, error, sizeof error)) {
		fprintf(stderr, "tela bench gpu: %s; CPU figures only\n", error);
		gpu = NULL;
	}
	const char *renderer = gpu ? session.renderer : "none";
	printf("GPU: %s%s\n", renderer,
	       gpu && gpu_backend_timing(gpu->backend).persistent ? ", persistent mapped buffers" : "");

	throughput(*tp)[NI] = calloc((size_t)o.size_count, sizeof *tp);
	double stable[NI * 2], elong[NI * 5];
	if (!tp) {
		fprintf(stderr, "tela bench: out of memory\n");
		if (csv)
			fclose(csv);
		if (gpu)
			gpu_session_close(gpu);
		return EXIT_TELA_IO;
	}
	const float dt = 1e-3f;
	for (int k = 0; k < NI * 2; k++)
		stable[k] = NAN;
	for (int k = 0; k < NI * 5; k++)
		elong[k] = NAN;
	for (int s = 0; s < o.size_count; s++)
		for (int k = 0; k < NI; k++)
			tp[s][k] = (throughput){NAN, NAN, NAN, NAN, NAN, NAN};
	if (o.parts & PART_THROUGHPUT)
		printf("\nsteps per second, %ld timed steps after 3 warm-up, dt 1 ms (docs/benchmarks.md, GPU)\n", o.steps);
	if (o.parts & PART_THROUGHPUT)
		printf("%-10s %5s %8s %11s %11s %11s %9s %9s %9s\n", "integrator", "n", "vertices", "cpu", "gpu",
		       "gpu-only", "up-us", "gpu-us", "down-us");
	progress prog;
	progress_start(&prog, "tela bench", 0.0, o.quiet);
	prog.label = "gpu";
	int rows = ((o.parts & PART_THROUGHPUT) ? o.size_count * NI : 0) + ((o.parts & PART_STABILITY) ? NI : 0) +
	           ((o.parts & PART_ELONGATION) ? NI : 0), row = 0;
	char what[64];
	fflush(stdout);
	for (int s = 0; s < o.size_count && (o.parts & PART_THROUGHPUT) && !stop_requested(); s++) {
		int n = o.sizes[s];
		for (int k = 0; k < NI; k++) {
			snprintf(what, sizeof what, "throughput %s n = %d", sim_integrator_name((sim_integrator)k), n);
			progress_count(&prog, row++, rows, what);
			throughput t = measure_throughput(gpu, n, (sim_integrator)k, o.steps, dt);
			if (stop_requested())
				break;
			tp[s][k] = t;
			progress_clear(&prog);
			printf("%-10s %5d %8d", sim_integrator_name((sim_integrator)k), n, n * n);
			const double figures[6] = {t.cpu, t.gpu, t.resident, t.up_us, t.gpu_us, t.down_us};
			for (int c = 0; c < 6; c++)
				cell(" %*.1f", c < 3 ? 11 : 9, figures[c]);
			printf("\n");
			fflush(stdout);
			csv_row(csv, "throughput", (sim_integrator)k, "cpu", "step", n, dt, t.cpu, o.steps);
			csv_row(csv, "throughput", (sim_integrator)k, "gpu", "step", n, dt, t.gpu, o.steps);
			csv_row(csv, "throughput", (sim_integrator)k, "gpu", "resident", n, dt, t.resident, o.steps);
			csv_row(csv, "handover_us", (sim_integrator)k, "gpu", "up", n, dt, t.up_us, o.steps);
			csv_row(csv, "handover_us", (sim_integrator)k, "gpu", "gpu", n, dt, t.gpu_us, o.steps);
			csv_row(csv, "handover_us", (sim_integrator)k, "gpu", "down", n, dt, t.down_us, o.steps);
		}
	}
	if (o.parts & PART_STABILITY) {
		printf("\nlargest stable step (s), 16 x 16 stiff cloth, 500 N/m, 0.2 s, search over [%g, %g]\n", DT_LO,
		       DT_HI);
		printf("%-10s %11s %11s\n", "integrator", "cpu", "gpu");
	}
	for (int k = 0; k < NI && (o.parts & PART_STABILITY); k++) {
		sim_integrator integ = (sim_integrator)k;
		snprintf(what, sizeof what, "stability %s", sim_integrator_name(integ));
		progress_count(&prog, row++, rows, what);
		stable[2 * k] = largest_stable(NULL, integ);
		stable[2 * k + 1] = gpu && gpu_backend_supports(integ) ? largest_stable(gpu, integ) : NAN;
		if (stop_requested())
			break;
		progress_clear(&prog);
		printf("%-10s", sim_integrator_name(integ));
		cell(" %*.3g", 11, stable[2 * k]);
		cell(" %*.3g", 11, stable[2 * k + 1]);
		printf("\n");
		fflush(stdout);
		csv_row(csv, "stable_dt", integ, "cpu", "bisection", 16, NAN, stable[2 * k], 0);
		csv_row(csv, "stable_dt", integ, "gpu", "bisection", 16, NAN, stable[2 * k + 1], 0);
	}
	if (o.parts & PART_ELONGATION) {
		printf("\npeak elongation (max strain), hanging scene 1.5 s, without / with Provot at 10%% (on the GPU:\n"
		       "the CPU's Gauss-Seidel sweeps, or coloured Gauss-Seidel sweeps on the GPU)\n");
		printf("%-10s %9s %11s %11s %11s %11s %11s\n", "integrator", "substeps", "cpu", "cpu+provot", "gpu",
		       "gpu+provot", "provot-gpu");
	}
	for (int k = 0; k < NI && (o.parts & PART_ELONGATION); k++) {
		sim_integrator integ = (sim_integrator)k;
		bool on_gpu = gpu && gpu_backend_supports(integ);
		snprintf(what, sizeof what, "elongation %s", sim_integrator_name(integ));
		progress_count(&prog, row++, rows, what);
		for (int v = 0; v < 5; v++)
			elong[5 * k + v] = v < 2 || on_gpu ? peak_strain(v < 2 ? NULL : gpu, integ, v % 2 == 1 || v == 4, v == 4)
			                                   : NAN;
		if (stop_requested())
			break;
		progress_clear(&prog);
		printf("%-10s %9d", sim_integrator_name(integ), elongation_substeps(integ));
		for (int v = 0; v < 5; v++)
			cell(" %*.4f", 11, elong[5 * k + v]);
		printf("\n");
		fflush(stdout);
		static const char *const vn[5] = {"no-provot", "provot", "no-provot", "provot", "provot-on-gpu"};
		for (int v = 0; v < 5; v++)
			csv_row(csv, "peak_strain", integ, v < 2 ? "cpu" : "gpu", vn[v], 20, 0.001, elong[5 * k + v], 1500);
	}
	progress_end(&prog);
	if ((o.parts & PART_DRAW) && gpu) {
		printf("\nthe demo's cloth per published state, us (docs/gpu.md, \"The demo draws from the GPU\"): the\n"
		       "simulation thread's fill of a draw buffer (upload, normals kernel, copies) against the window's\n"
		       "CPU normals and upload; queued, and until a fence signalled; %ld states after 3 warm-up\n",
		       o.steps);
		printf("%5s %8s %11s %11s %11s %11s\n", "n", "vertices", "gpu-queue", "gpu-done", "cpu-queue", "cpu-done");
	} else if (o.parts & PART_DRAW) {
		fprintf(stderr, "tela bench gpu: no GPU, so no draw hand-over figures\n");
	}
	for (int s = 0; s < o.size_count && (o.parts & PART_DRAW) && gpu; s++) {
		int n = o.sizes[s];
		draw_cost c = measure_draw(gpu, n, o.steps, dt);
		if (stop_requested())
			break;
		printf("%5d %8d %11.1f %11.1f %11.1f %11.1f\n", n, n * n, c.gpu_queue_us, c.gpu_done_us, c.cpu_queue_us,
		       c.cpu_done_us);
		fflush(stdout);
		csv_row(csv, "draw_us", SIM_SYMPLECTIC, "gpu", "queue", n, dt, c.gpu_queue_us, o.steps);
		csv_row(csv, "draw_us", SIM_SYMPLECTIC, "gpu", "done", n, dt, c.gpu_done_us, o.steps);
		csv_row(csv, "draw_us", SIM_SYMPLECTIC, "cpu", "queue", n, dt, c.cpu_queue_us, o.steps);
		csv_row(csv, "draw_us", SIM_SYMPLECTIC, "cpu", "done", n, dt, c.cpu_done_us, o.steps);
	}
	if (o.svg_prefix && !stop_requested())
		rc = write_plots(&o, renderer, tp, stable, elong);
	free(tp);
	if (gpu)
		gpu_session_close(gpu);
	if (csv) {
		bool bad = ferror(csv) != 0;
		if (fclose(csv) != 0 || bad) {
			fprintf(stderr, "tela bench: %s: write failed\n", o.csv_path);
			rc = EXIT_TELA_IO;
		}
	}
	return rc;
}
