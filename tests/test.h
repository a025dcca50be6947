/* A tiny test harness: every test file is one executable registered with ctest.
 * A check that fails prints file:line and the values, and the test exits 1. */
#ifndef TELA_TEST_H
#define TELA_TEST_H

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static int test_failures_;

#define CHECK(cond)                                                                        \
	do {                                                                                   \
		if (!(cond)) {                                                                     \
			fprintf(stderr, "%s:%d: CHECK failed: %s\n", __FILE__, __LINE__, #cond);        \
			test_failures_++;                                                              \
		}                                                                                  \
	} while (0)

#define CHECK_MSG(cond, ...)                                                               \
	do {                                                                                   \
		if (!(cond)) {                                                                     \
			fprintf(stderr, "%s:%d: CHECK failed: %s: ", __FILE__, __LINE__, #cond);        \
			fprintf(stderr, __VA_ARGS__);                                                  \
			fputc('\n', stderr);                                                           \
			test_failures_++;                                                              \
		}                                                                                  \
	} while (0)

/* |a - b| <= tol, with both values printed on failure. */
#define CHECK_NEAR(a, b, tol)                                                              \
	do {                                                                                   \
		double a_ = (double)(a), b_ = (double)(b), t_ = (double)(tol);                     \
		if (!(fabs(a_ - b_) <= t_)) {                                                      \
			fprintf(stderr, "%s:%d: CHECK_NEAR failed: %s = %.9g, %s = %.9g, tol %.3g\n",   \
			        __FILE__, __LINE__, #a, a_, #b, b_, t_);                               \
			test_failures_++;                                                              \
		}                                                                                  \
	} while (0)

/* Stops the current test function when a precondition for the rest fails. */
#define REQUIRE(cond)                                                                      \
	do {                                                                                   \
		if (!(cond)) {                                                                     \
			fprintf(stderr, "%s:%d: REQUIRE failed: %s\n", __FILE__, __LINE__, #cond);      \
			test_failures_++;                                                              \
			return;                                                                        \
		}                                                                                  \
	} while (0)

/* REQUIRE with a message (printf arguments). */
#define REQUIRE_MSG(cond, ...)                                                             \
	do {                                                                                   \
		if (!(cond)) {                                                                     \
			fprintf(stderr, "%s:%d: REQUIRE failed: %s: ", __FILE__, __LINE__, #cond);      \
			fprintf(stderr, __VA_ARGS__);                                                  \
			fputc('\n', stderr);                                                           \
			test_failures_++;                                                              \
			return;                                                                        \
		}                                                                                  \
	} while (0)

/* The folder for scratch files: $TMPDIR, or the system's. */
static inline const char *test_tmpdir(void)
{
	const char *t = getenv("TMPDIR");
	return t && *t ? t : "/tmp";
}

typedef struct test_case {
	const char *name;
	void (*fn)(void);
} test_case;

#define TEST(fn) {#fn, fn}

/* Runs every test of the table, or only the one named on the command line. */
static inline int test_run(int argc, char **argv, const test_case *cases, int count)
{
	int ran = 0;
	for (int i = 0; i < count; i++) {
		if (argc > 1 && strcmp(argv[1], cases[i].name) != 0)
			continue;
		int before = test_failures_;
		cases[i].fn();
		printf("%s %s\n", test_failures_ == before ? "PASS" : "FAIL", cases[i].name);
		fflush(stdout);
		ran++;
	}
	if (ran == 0) {
		fprintf(stderr, "no test named %s\n", argc > 1 ? argv[1] : "(none)");
		return 2;
	}
	return test_failures_ ? 1 : 0;
}

/* static const test_case tests[] = {TEST(a), TEST(b)};  TEST_MAIN(tests) */
#define TEST_MAIN(table)                                                                   \
	int main(int argc, char **argv)                                                        \
	{                                                                                      \
		return test_run(argc, argv, table, (int)(sizeof table / sizeof table[0]));         \
	}

#endif
