/* `tela bench gpu` (issue 7): the seed thesis's comparison of the integrators on CPU and
 * GPU (bench_gpu.c), and the throughput cloth it shares with `tela bench integrators`. */
#ifndef TELA_BENCH_GPU_H
#define TELA_BENCH_GPU_H

#include "sim/sim.h"

#include <stdbool.h>

/* cmd_bench.c: an n x n cloth at the given spacing and structural stiffness, two corners
 * pinned, a standing wave of initial velocity (docs/benchmarks.md). */
sim_world *bench_cloth(int n, float spacing, float k_struct, sim_integrator integ, float tol, bool gravity);

int bench_gpu(int argc, char **argv);

#endif
