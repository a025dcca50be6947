/* Ending a run on a signal or when its simulation stops making progress.
 *
 * main.c installs handlers for SIGINT and SIGTERM that only record the signal
 * (stop_signal); every loop of a long run polls stop_requested() and, when it is set,
 * ends as it would at its natural end, minus what is still ahead: threads stopped and
 * joined, files closed whole.  The command then returns stop_exit_code() (128 + the
 * signal: 130 for SIGINT, 143 for SIGTERM).  A second signal ends the process at once.
 *
 * A simulation that makes no progress for STOP_STALL_SECONDS (a step that never returns,
 * a simulation thread that never answers) is reported and the process exits with
 * EXIT_TELA_STALL: stop_watch_* is a watchdog thread for loops that step on the caller's
 * thread, where nothing else could notice. */
#ifndef TELA_STOP_H
#define TELA_STOP_H

#include <signal.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>

/* 0, or the number of the first SIGINT or SIGTERM received (set by main.c's handler) */
extern volatile sig_atomic_t stop_signal;

static inline bool stop_requested(void) { return stop_signal != 0; }
/* 128 + the signal, the shell's convention; 0 when none was received. */
static inline int stop_exit_code(void) { return stop_signal ? 128 + (int)stop_signal : 0; }
/* "SIGINT", "SIGTERM" (or "a signal") */
const char *stop_signal_name(void);

/* Seconds without progress after which a run gives up.  A step of the largest scenes
 * takes well under a second, even under the sanitizers on a loaded machine. */
#define STOP_STALL_SECONDS 30.0
/* A run told to stop that has not ended this long after the signal (stuck in a step)
 * is ended by the watchdog, with the signal's exit code. */
#define STOP_GRACE_SECONDS 2.0
/* The exit code of a run given up for want of progress (cli.h's EXIT_TELA_STALL). */
#define STOP_STALL_EXIT 6

/* Starts the watchdog: unless the progress changes at least every STOP_STALL_SECONDS, it
 * writes "tela WHAT: the simulation made no progress for N s (stuck after P steps)" to
 * stderr, flushes `flush` (may be NULL; the caller writes whole rows between progress
 * calls, so the file ends with a whole row) and ends the process with STOP_STALL_EXIT;
 * and a run that has not ended STOP_GRACE_SECONDS after a signal it ends the same way,
 * with stop_exit_code().  A stuck step can be neither stopped nor joined.
 * false if the thread cannot start (the run goes on unwatched). */
bool stop_watch_start(const char *what, FILE *flush);
/* The run's progress so far (steps, frames); any change counts as progress. */
void stop_watch_progress(int64_t progress);
/* The seconds without progress after which the watchdog gives up (default
 * STOP_STALL_SECONDS; 0 or less: the default).  Set before stop_watch_start. */
void stop_watch_set_limit(double seconds);
/* Stops and joins the watchdog. */
void stop_watch_end(void);

#endif
