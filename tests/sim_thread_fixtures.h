/* What the simulation-thread tests (test_sim_thread.c, test_gpu_ring.c) share. */
#ifndef TELA_TEST_SIM_THREAD_FIXTURES_H
#define TELA_TEST_SIM_THREAD_FIXTURES_H

#include "scenes/scenes.h"

#include <stdio.h>
#include <time.h>

/* How long to wait for a condition that should hold in well under a second. */
#define WAIT_S 30.0

static inline double now_s(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

/* A built-in scene, or NULL with the loader's message on stderr. */
static inline scn_scene *load(const char *name)
{
	scn_scene *s = NULL;
	scn_error err = {0};
	if (scn_load(name, &s, &err) != SCN_OK)
		fprintf(stderr, "load %s: %s\n", name, err.message);
	return s;
}

#endif
