/* The pool behind sim's task callbacks.  Every participant (the caller as worker 0, the
 * pool threads as 1 ... n - 1) takes the next range of a loop until none is left.  The
 * ranges shrink as the loop goes (guided scheduling): each is a 2n-th of the items still
 * left, at least min_range, so that the last ones are short and the participants finish
 * together.  With a fixed four ranges per worker, the last range of an uneven loop (the
 * neighbour list's blocks, the traversal's jobs) ran on one thread while the other
 * waited; these ranges took about 0.18 ms a frame of such waiting off the 129 x 129 drape
 * on two cores (benchmarks.md, "Guided ranges").  Which worker runs which range does not
 * matter: sim's results depend only on the items (docs/collisions.md, "Parallel work"). */
#define _POSIX_C_SOURCE 200809L /* clock_gettime */
#include "task_pool.h"

#include <pthread.h>
#include <sched.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdlib.h>
#include <time.h>

/* A thread that has finished its part of a loop, or the caller waiting for the others,
 * first polls for this long before it sleeps: sim hands out loops back to back (the
 * implicit solve one per CG iteration, 60 to 130 us of work each), and a sleeping
 * thread takes tens of microseconds to wake.  It yields the core at every poll, so that
 * on a machine with other work the poll costs that work little (benchmarks.md, "Balls in
 * closed form, a pool that polls").  A millisecond rather than 50 us: a collision step
 * has serial stretches of 0.1 to 0.5 ms (the forces before the solve's assembly, the
 * sweep's walk), after which the next loops ran on the caller alone while the worker
 * woke (benchmarks.md, "The pool's poll"). */
#define POLL_NS 1000000

struct task_pool {
	int workers;
	pthread_t *threads;
	int started;
	pthread_mutex_t lock;
	pthread_cond_t wake; /* a loop was posted, or the pool is closing */
	pthread_cond_t idle; /* a thread left the current loop */
	atomic_bool closing;
	atomic_uint generation; /* counts posted loops: a thread joins each one once */
	/* the current loop */
	sim_task_fn *task;
	void *context;
	int items, min_range;
	atomic_int next;     /* the first item not yet taken */
	bool open;           /* threads may still join the current loop (under lock) */
	atomic_int busy;     /* pool threads inside the current loop (changed under lock) */
	bool active;
};

/* Where the range of a loop of `items` that starts at `start` ends, on a pool of
 * `workers`: one part in 2 x workers of what is left (rounded up), at least min_range,
 * never past the end. */
static int range_end(int start, int items, int min_range, int workers)
{
	int left = items - start, share = 2 * workers;
	int len = (left + share - 1) / share;
	len = len < min_range ? min_range : len;
	return len < left ? start + len : items;
}

/* Takes ranges of the current loop until none is left.  A range's length follows from
 * its start alone, so the ranges are the same whoever takes them. */
static void run_ranges(task_pool *p, int worker)
{
	int start = atomic_load(&p->next);
	for (;;) {
		int end;
		do {
			if (start >= p->items)
				return;
			end = range_end(start, p->items, p->min_range, p->workers);
		} while (!atomic_compare_exchange_weak(&p->next, &start, end));
		p->task(start, end, worker, p->context);
		start = atomic_load(&p->next);
	}
}

static int64_t now_ns(void)
{
	struct timespec t;
	clock_gettime(CLOCK_MONOTONIC, &t);
	return (int64_t)t.tv_sec * 1000000000 + t.tv_nsec;
}

/* Polls (yielding) until done(p, arg) or POLL_NS have passed; the caller checks again
 * under the lock either way. */
static void poll_for(task_pool *p, bool (*done)(task_pool *, unsigned), unsigned arg)
{
	int64_t end = now_ns() + POLL_NS;
	while (!done(p, arg) && now_ns() <= end)
		sched_yield();
}

static bool posted(task_pool *p, unsigned seen)
{
	return atomic_load(&p->closing) || atomic_load(&p->generation) != seen;
}

static bool all_out(task_pool *p, unsigned unused)
{
	(void)unused;
	return atomic_load(&p->busy) == 0;
}

typedef struct thread_arg {
	task_pool *pool;
	int worker;
} thread_arg;

static void *thread_main(void *arg)
{
	thread_arg a = *(thread_arg *)arg;
	free(arg);
	task_pool *p = a.pool;
	unsigned seen = 0;
	pthread_mutex_lock(&p->lock);
	for (;;) {
		if (!posted(p, seen)) {
			pthread_mutex_unlock(&p->lock);
			poll_for(p, posted, seen);
			pthread_mutex_lock(&p->lock);
		}
		while (!posted(p, seen))
			pthread_cond_wait(&p->wake, &p->lock);
		if (p->closing)
			break;
		seen = atomic_load(&p->generation);
		/* a thread that wakes after the caller has taken every range and closed the
		 * loop stays out: it never reads a loop's fields outside of that loop */
		if (!p->open)
			continue;
		atomic_fetch_add(&p->busy, 1);
		pthread_mutex_unlock(&p->lock);
		run_ranges(p, a.worker);
		pthread_mutex_lock(&p->lock);
		if (atomic_fetch_sub(&p->busy, 1) == 1)
			pthread_cond_signal(&p->idle);
	}
	pthread_mutex_unlock(&p->lock);
	return NULL;
}

task_pool *task_pool_create(int workers)
{
	if (workers < 1 || workers > SIM_MAX_WORKERS)
		return NULL;
	task_pool *p = calloc(1, sizeof *p);
	if (!p)
		return NULL;
	p->workers = workers;
	atomic_init(&p->next, 0);
	atomic_init(&p->busy, 0);
	atomic_init(&p->generation, 0u);
	atomic_init(&p->closing, false);
	pthread_mutex_init(&p->lock, NULL);
	pthread_cond_init(&p->wake, NULL);
	pthread_cond_init(&p->idle, NULL);
	p->threads = calloc((size_t)workers, sizeof(pthread_t));
	if (!p->threads) {
		task_pool_destroy(&p);
		return NULL;
	}
	for (int i = 1; i < workers; i++) {
		thread_arg *a = malloc(sizeof *a);
		if (!a) {
			task_pool_destroy(&p);
			return NULL;
		}
		*a = (thread_arg){p, i};
		if (pthread_create(&p->threads[p->started], NULL, thread_main, a) != 0) {
			free(a);
			task_pool_destroy(&p);
			return NULL;
		}
		p->started++;
	}
	return p;
}

void task_pool_destroy(task_pool **pool)
{
	task_pool *p = *pool;
	if (!p)
		return;
	pthread_mutex_lock(&p->lock);
	atomic_store(&p->closing, true);
	pthread_cond_broadcast(&p->wake);
	pthread_mutex_unlock(&p->lock);
	for (int i = 0; i < p->started; i++)
		pthread_join(p->threads[i], NULL);
	pthread_cond_destroy(&p->idle);
	pthread_cond_destroy(&p->wake);
	pthread_mutex_destroy(&p->lock);
	free(p->threads);
	free(p);
	*pool = NULL;
}

int task_pool_workers(const task_pool *pool) { return pool ? pool->workers : 1; }

void task_pool_attach(task_pool *pool, sim_world_def *def)
{
	bool many = pool && pool->workers > 1;
	def->worker_count = many ? pool->workers : 1;
	def->enqueue_task = many ? task_pool_enqueue : NULL;
	def->finish_task = many ? task_pool_finish : NULL;
	def->user_task_context = many ? pool : NULL;
}

void *task_pool_enqueue(sim_task_fn *task, int item_count, int min_range, void *task_context, void *user_context)
{
	task_pool *p = user_context;
	if (item_count <= 0)
		return NULL;
	if (min_range < 1)
		min_range = 1;
	if (range_end(0, item_count, min_range, p->workers) == item_count || p->workers <= 1 || p->active) {
		/* nothing to share (or a loop inside a loop, which sim never starts): inline */
		task(0, item_count, 0, task_context);
		return NULL;
	}
	pthread_mutex_lock(&p->lock);
	p->task = task;
	p->context = task_context;
	p->items = item_count;
	p->min_range = min_range;
	atomic_store(&p->next, 0);
	p->active = true;
	p->open = true;
	atomic_fetch_add(&p->generation, 1);
	pthread_cond_broadcast(&p->wake);
	pthread_mutex_unlock(&p->lock);
	return p;
}

void task_pool_finish(void *user_task, void *user_context)
{
	(void)user_context;
	task_pool *p = user_task;
	run_ranges(p, 0);
	/* Every range is taken.  Closing the loop keeps late threads out, and waiting for
	 * the ones inside means none still runs a range or reads this loop's fields when the
	 * next loop is posted; a thread the scheduler has not woken yet costs nothing (on a
	 * loaded machine the caller may run every range itself). */
	pthread_mutex_lock(&p->lock);
	p->open = false;
	if (atomic_load(&p->busy) > 0) {
		pthread_mutex_unlock(&p->lock);
		poll_for(p, all_out, 0);
		pthread_mutex_lock(&p->lock);
	}
	while (atomic_load(&p->busy) > 0)
		pthread_cond_wait(&p->idle, &p->lock);
	p->active = false;
	pthread_mutex_unlock(&p->lock);
}
