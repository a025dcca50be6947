/* The watchdog of app/stop.h, in child processes (it ends the process it watches): a run
 * that stops making progress is ended with exit 6, its file ending with a whole row and
 * the reason on stderr; a run that keeps going is left alone; one stuck after a signal is
 * ended with the signal's exit code once the grace period has passed. */
#define _POSIX_C_SOURCE 200809L
#include "test.h"

#include "stop.h"

#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

enum { STALL, STEADY, SIGNALLED };

static void nap(double s)
{
	struct timespec t = {(time_t)s, (long)((s - (double)(time_t)s) * 1e9)};
	nanosleep(&t, NULL);
}

/* The child: a run writing a row per step, with progress, then doing what `mode` says. */
static void child(int mode, const char *csv_path, int err_fd)
{
	dup2(err_fd, 2);
	FILE *csv = fopen(csv_path, "w");
	if (!csv)
		_exit(90);
	fprintf(csv, "step,value\n");
	stop_watch_set_limit(0.3);
	if (!stop_watch_start("test", csv))
		_exit(91);
	for (int step = 1; step <= 20; step++) {
		fprintf(csv, "%d,%d\n", step, step * step);
		stop_watch_progress(step);
		nap(0.05); /* a whole second of steps, each well within the limit */
	}
	if (mode == STEADY) {
		stop_watch_end();
		fclose(csv);
		_exit(0);
	}
	if (mode == SIGNALLED)
		stop_signal = SIGINT; /* as main.c's handler does */
	nap(30.0); /* stuck: only the watchdog ends this */
	_exit(92);
}

/* Runs the child; its exit status (-1 if it did not exit within 20 s, -2 or -3 if it
 * could not start) and its stderr. */
static int run_child(int mode, const char *csv_path, char *err, size_t err_size)
{
	int fds[2];
	if (pipe(fds) != 0)
		return -2;
	pid_t pid = fork();
	if (pid < 0)
		return -3;
	if (pid == 0) {
		close(fds[0]);
		child(mode, csv_path, fds[1]);
	}
	close(fds[1]);
	int status = 0, rc = -1;
	for (int i = 0; i < 2000; i++) {
		if (waitpid(pid, &status, WNOHANG) == pid) {
			rc = WIFEXITED(status) ? WEXITSTATUS(status) : 200 + WTERMSIG(status);
			break;
		}
		nap(0.01);
	}
	if (rc < 0) {
		kill(pid, SIGKILL);
		waitpid(pid, &status, 0);
	}
	ssize_t n = read(fds[0], err, err_size - 1);
	err[n > 0 ? n : 0] = '\0';
	close(fds[0]);
	return rc;
}

/* Every line of the file ends with a newline and has two fields; returns the rows. */
static int whole_rows(const char *path)
{
	FILE *f = fopen(path, "r");
	if (!f)
		return -1;
	char line[256];
	int rows = 0;
	while (fgets(line, sizeof line, f)) {
		size_t len = strlen(line);
		if (len == 0 || line[len - 1] != '\n' || !strchr(line, ',')) {
			fclose(f);
			return -2;
		}
		rows++;
	}
	fclose(f);
	return rows - 1;
}

static void test_stall_ends_the_run(void)
{
	char path[512], err[1024];
	snprintf(path, sizeof path, "%s/tela-stop-%d.csv", test_tmpdir(), (int)getpid());
	int rc = run_child(STALL, path, err, sizeof err);
	printf("  stalled child: exit %d, stderr: %s", rc, err);
	CHECK(rc == STOP_STALL_EXIT);
	CHECK(strstr(err, "tela test: the simulation made no progress for 0.3 s (stuck after 20 steps)") != NULL);
	CHECK_MSG(whole_rows(path) == 20, "%d whole rows", whole_rows(path));
	remove(path);
}

static void test_steady_run_is_left_alone(void)
{
	char path[512], err[1024];
	snprintf(path, sizeof path, "%s/tela-stop-steady-%d.csv", test_tmpdir(), (int)getpid());
	int rc = run_child(STEADY, path, err, sizeof err);
	CHECK_MSG(rc == 0, "exit %d: %s", rc, err);
	CHECK(err[0] == '\0');
	CHECK(whole_rows(path) == 20);
	remove(path);
}

static void test_stuck_after_signal(void)
{
	char path[512], err[1024];
	snprintf(path, sizeof path, "%s/tela-stop-signal-%d.csv", test_tmpdir(), (int)getpid());
	int rc = run_child(SIGNALLED, path, err, sizeof err);
	printf("  stuck after SIGINT: exit %d, stderr: %s", rc, err);
	CHECK(rc == 128 + SIGINT);
	CHECK(strstr(err, "SIGINT, and the simulation did not stop within 2 s") != NULL);
	CHECK(whole_rows(path) == 20);
	remove(path);
}

static const test_case tests[] = {
    TEST(test_stall_ends_the_run),
    TEST(test_steady_run_is_left_alone),
    TEST(test_stuck_after_signal),
};

TEST_MAIN(tests)
