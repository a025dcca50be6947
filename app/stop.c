/* Ending a run on a signal or for want of progress (stop.h). */
#define _POSIX_C_SOURCE 200809L
#include "stop.h"

#include <errno.h>
#include <pthread.h>
#include <stdatomic.h>
#include <time.h>
#include <unistd.h>

volatile sig_atomic_t stop_signal = 0;

const char *stop_signal_name(void)
{
	switch (stop_signal) {
	case SIGINT: return "SIGINT";
	case SIGTERM: return "SIGTERM";
	default: return "a signal";
	}
}

static struct {
	pthread_t thread;
	pthread_mutex_t lock;
	pthread_cond_t wake;
	bool running, quit;
	const char *what;
	FILE *flush;
	_Atomic int64_t progress;
} watch = {.lock = PTHREAD_MUTEX_INITIALIZER, .wake = PTHREAD_COND_INITIALIZER};

static double stall_seconds = STOP_STALL_SECONDS;

void stop_watch_set_limit(double seconds) { stall_seconds = seconds > 0.0 ? seconds : STOP_STALL_SECONDS; }

static int64_t mono_ns(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (int64_t)ts.tv_sec * 1000000000 + ts.tv_nsec;
}

/* Flushes f unless another thread holds it (the stuck one may): better a file that ends
 * at its last flush than a process that never ends. */
static void try_flush(FILE *f)
{
	if (f && ftrylockfile(f) == 0) {
		fflush(f);
		funlockfile(f);
	}
}

static void *watch_main(void *arg)
{
	(void)arg;
	int64_t seen = atomic_load(&watch.progress), since = mono_ns(), stopped_at = -1;
	const int64_t limit = (int64_t)(stall_seconds * 1e9);
	pthread_mutex_lock(&watch.lock);
	while (!watch.quit) {
		/* a coarse tick: the limit is seconds, and the wait ends early on stop_watch_end */
		struct timespec due;
		clock_gettime(CLOCK_REALTIME, &due);
		due.tv_nsec += 200000000;
		if (due.tv_nsec >= 1000000000)
			due.tv_sec++, due.tv_nsec -= 1000000000;
		int rc = pthread_cond_timedwait(&watch.wake, &watch.lock, &due);
		if (watch.quit || (rc != 0 && rc != ETIMEDOUT))
			continue;
		int64_t now = mono_ns(), p = atomic_load(&watch.progress);
		if (stop_requested()) {
			/* the run ends at its next poll; one stuck in a step would not */
			if (stopped_at < 0)
				stopped_at = now;
			if (now - stopped_at < (int64_t)(STOP_GRACE_SECONDS * 1e9))
				continue;
			try_flush(watch.flush);
			try_flush(stdout);
			fprintf(stderr, "tela %s: %s, and the simulation did not stop within %.0f s; ending now\n", watch.what,
			        stop_signal_name(), STOP_GRACE_SECONDS);
			_exit(stop_exit_code());
		}
		if (p != seen) {
			seen = p, since = now;
			continue;
		}
		if (now - since < limit)
			continue;
		try_flush(watch.flush);
		try_flush(stdout);
		fprintf(stderr, "tela %s: the simulation made no progress for %.3g s (stuck after %lld steps); giving up\n",
		        watch.what, stall_seconds, (long long)p);
		_exit(STOP_STALL_EXIT);
	}
	pthread_mutex_unlock(&watch.lock);
	return NULL;
}

bool stop_watch_start(const char *what, FILE *flush)
{
	pthread_mutex_lock(&watch.lock);
	watch.what = what;
	watch.flush = flush;
	watch.quit = false;
	atomic_store(&watch.progress, 0);
	bool ok = !watch.running && pthread_create(&watch.thread, NULL, watch_main, NULL) == 0;
	if (ok)
		watch.running = true;
	pthread_mutex_unlock(&watch.lock);
	return ok;
}

void stop_watch_progress(int64_t progress) { atomic_store_explicit(&watch.progress, progress, memory_order_relaxed); }

void stop_watch_end(void)
{
	pthread_mutex_lock(&watch.lock);
	bool running = watch.running;
	watch.quit = true;
	watch.running = false;
	pthread_cond_broadcast(&watch.wake);
	pthread_mutex_unlock(&watch.lock);
	if (running)
		pthread_join(watch.thread, NULL);
}
