/* A small pthread pool that implements sim's task callbacks (sim_world_def.enqueue_task
 * and finish_task): the calling thread and workers - 1 pool threads share each loop's
 * ranges.  One loop at a time (sim runs its loops one after another). */
#ifndef TELA_TASK_POOL_H
#define TELA_TASK_POOL_H

#include "sim/sim.h"

typedef struct task_pool task_pool;

/* A pool of `workers` (1 to SIM_MAX_WORKERS) including the caller: workers - 1 threads.
 * NULL when a thread cannot start or out of memory. */
task_pool *task_pool_create(int workers);
void task_pool_destroy(task_pool **pool);
int task_pool_workers(const task_pool *pool);

/* Points the def's task callbacks and worker count at the pool (one worker: inline, no
 * callbacks). */
void task_pool_attach(task_pool *pool, sim_world_def *def);

/* The callbacks themselves (user_context: the pool). */
void *task_pool_enqueue(sim_task_fn *task, int item_count, int min_range, void *task_context, void *user_context);
void task_pool_finish(void *user_task, void *user_context);

#endif
