/*
 * tela ccd DIR...
 *
 * Runs the vertex-face and edge-edge CCD (zero thickness, t in [0, 1]) on every
 * query file of the Wang et al. 2021 benchmark layout found under each DIR and
 * compares with the ground truth.  On success stdout gets exactly one line:
 *   queries=N positives=P false_negatives=FN false_positives=FP ns_per_query=X
 * P counts ground-truth positives; X is the mean time of the CCD calls alone
 * (CLOCK_MONOTONIC around each file's batch, parsing excluded).
 *
 * Exit codes:
 *   0  every query evaluated, no false negatives
 *   1  at least one false negative
 *   2  usage error (no DIR given)
 *   3  bad input: unreadable path, no query files under a DIR, malformed CSV
 *      (message "FILE:LINE: what is wrong" on stderr)
 *
 * File format (one query = 8 rows of 7 integer columns): x numerator, x
 * denominator, y num, y den, z num, z den, ground truth 0/1.  Rows are the 4
 * points at t = 0 then the same 4 at t = 1; whether they are vertex-face
 * (v, f0, f1, f2) or edge-edge (a0, a1, b0, b1) comes from a folder named
 * "vertex-face" or "edge-edge" in the path.
 */
#define _POSIX_C_SOURCE 200809L

#include "cli.h"
#include "cmd_ccd.h"
#include "stop.h"

#include "sim/sim_geom.h"

#include <dirent.h>
#include <errno.h>
#include <float.h>
#include <math.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>

enum {
	CCD_EXIT_OK = 0,
	CCD_EXIT_FALSE_NEGATIVE = 1,
	CCD_EXIT_USAGE = 2,
	CCD_EXIT_BAD_INPUT = 3,
};

/* Symbolic-link loops would otherwise recurse forever. */
#define CCD_MAX_DEPTH 64
#define CCD_COLUMNS 7

static const char ccd_usage[] =
	"usage: tela ccd DIR...\n"
	"Runs continuous collision detection on every *.csv query file under each DIR\n"
	"(folders named vertex-face / edge-edge, Wang et al. 2021 benchmark format) and\n"
	"prints: queries=N positives=P false_negatives=FN false_positives=FP ns_per_query=X\n"
	"-h, --help: this text.\n"
	"Exit status: 0 no false negatives, 1 false negatives found, 2 usage error,\n"
	"3 bad input (unreadable path, no query files, malformed CSV).\n";

typedef struct bench_query {
	double x[8][3]; /* 4 points at t = 0, then the same 4 at t = 1 */
	/* Extra thickness covering the rounding of inexact inputs (0 when every
	 * coordinate converted exactly, as in the published data). */
	double margin;
	int truth;
	bool hit;
} bench_query;

typedef struct bench_totals {
	long queries, positives, false_negatives, false_positives;
	long files;
	double ns;
} bench_totals;

/* Which primitive pair a file holds: +1 vertex-face, 0 edge-edge, -1 unknown.  The
 * innermost matching folder wins. */
static int query_kind(const char *path)
{
	int kind = -1;
	const char *p = path;
	while (*p) {
		const char *end = strchr(p, '/');
		size_t len = end ? (size_t)(end - p) : strlen(p);
		if (end) { /* the file name itself does not count */
			if (len == 11 && strncmp(p, "vertex-face", 11) == 0)
				kind = 1;
			else if (len == 9 && strncmp(p, "edge-edge", 9) == 0)
				kind = 0;
		}
		p += len;
		while (*p == '/')
			p++;
	}
	return kind;
}

static bool ends_with(const char *s, const char *suffix)
{
	size_t n = strlen(s), m = strlen(suffix);
	return n >= m && strcmp(s + n - m, suffix) == 0;
}

/* Parses a decimal integer column [ +-]digits into the nearest double and tells
 * whether that double is the exact value.  Returns false on anything else. */
static bool parse_integer(const char *s, size_t len, double *out, bool *exact)
{
	while (len > 0 && (*s == ' ' || *s == '\t')) {
		s++;
		len--;
	}
	while (len > 0 && (s[len - 1] == ' ' || s[len - 1] == '\t'))
		len--;
	char buf[400];
	size_t i = 0, n = 0;
	if (len > 0 && (s[0] == '-' || s[0] == '+'))
		i = 1;
	if (i == len || len >= sizeof buf)
		return false;
	for (size_t j = i; j < len; j++)
		if (s[j] < '0' || s[j] > '9')
			return false;
	memcpy(buf, s, len);
	buf[len] = '\0';
	double x = strtod(buf, NULL);
	/* Digits beyond the leading zeros; up to 15 always convert exactly. */
	const char *digits = buf + i;
	while (*digits == '0' && digits[1] != '\0')
		digits++;
	n = strlen(digits);
	bool ok = n <= 15;
	if (!ok && isfinite(x)) {
		/* glibc and every IEEE printf print the exact value of a double with %.0f. */
		char back[400];
		int w = snprintf(back, sizeof back, "%.0f", fabs(x));
		ok = w > 0 && (size_t)w < sizeof back && strcmp(back, digits) == 0;
	}
	*out = x;
	*exact = ok;
	return true;
}

static void print_field_error(const char *file, long line, int column, const char *what,
                              const char *s, size_t len)
{
	fprintf(stderr, "%s:%ld: column %d %s: \"%.*s\"\n", file, line, column, what,
	        len > 40 ? 40 : (int)len, s);
}

/* Parses one row into xyz and the truth flag; *margin grows by the rounding of
 * inexact coordinates.  Returns false after printing the error. */
static bool parse_row(const char *file, long line, char *text, double xyz[3], int *truth,
                      double *margin)
{
	const char *field[CCD_COLUMNS];
	size_t flen[CCD_COLUMNS];
	int count = 0;
	const char *p = text;
	for (;;) {
		const char *end = strchr(p, ',');
		size_t len = end ? (size_t)(end - p) : strlen(p);
		if (count < CCD_COLUMNS) {
			field[count] = p;
			flen[count] = len;
		}
		count++;
		if (!end)
			break;
		p = end + 1;
	}
	if (count != CCD_COLUMNS) {
		fprintf(stderr, "%s:%ld: expected %d comma-separated columns, found %d\n", file, line,
		        CCD_COLUMNS, count);
		return false;
	}
	double v[CCD_COLUMNS];
	bool exact[CCD_COLUMNS];
	for (int c = 0; c < CCD_COLUMNS; c++) {
		if (!parse_integer(field[c], flen[c], &v[c], &exact[c])) {
			print_field_error(file, line, c + 1, "is not an integer", field[c], flen[c]);
			return false;
		}
		if (!isfinite(v[c])) {
			print_field_error(file, line, c + 1, "is out of range", field[c], flen[c]);
			return false;
		}
	}
	for (int k = 0; k < 3; k++) {
		double num = v[2 * k], den = v[2 * k + 1];
		if (!(den > 0.0)) {
			print_field_error(file, line, 2 * k + 2, "is not a positive denominator",
			                  field[2 * k + 1], flen[2 * k + 1]);
			return false;
		}
		double x = num / den;
		if (!isfinite(x)) {
			print_field_error(file, line, 2 * k + 1, "gives a coordinate out of range",
			                  field[2 * k], flen[2 * k]);
			return false;
		}
		int e;
		bool is_exact = exact[2 * k] && exact[2 * k + 1] && frexp(den, &e) == 0.5 &&
		                (x == 0.0 || fabs(x) >= DBL_MIN);
		if (!is_exact) {
			/* Two conversions and a division, each within half an ulp: 2^-50 relative
			 * is a safe bound; DBL_MIN covers underflow. */
			double err = fabs(x) * 0x1p-50 + DBL_MIN;
			if (err > *margin)
				*margin = err;
		}
		xyz[k] = x;
	}
	if (v[6] != 0.0 && v[6] != 1.0) {
		print_field_error(file, line, 7, "is not a ground truth of 0 or 1", field[6], flen[6]);
		return false;
	}
	*truth = (int)v[6];
	return true;
}

static bool blank(const char *s)
{
	for (; *s; s++)
		if (*s != ' ' && *s != '\t')
			return false;
	return true;
}

/* Reads all queries of a file.  Returns 0 or CCD_EXIT_BAD_INPUT (message printed). */
static int read_queries(const char *path, bench_query **out, long *out_count)
{
	FILE *f = fopen(path, "r");
	if (!f) {
		fprintf(stderr, "%s: cannot open: %s\n", path, strerror(errno));
		return CCD_EXIT_BAD_INPUT;
	}
	bench_query *qs = NULL;
	long count = 0, cap = 0, line_no = 0;
	int row = 0;
	char *line = NULL;
	size_t line_cap = 0;
	int rc = 0;
	bench_query cur = {0};
	for (;;) {
		errno = 0;
		ssize_t got = getline(&line, &line_cap, f);
		if (got < 0)
			break;
		line_no++;
		while (got > 0 && (line[got - 1] == '\n' || line[got - 1] == '\r'))
			line[--got] = '\0';
		if (blank(line))
			continue;
		int truth;
		if (!parse_row(path, line_no, line, cur.x[row], &truth, &cur.margin)) {
			rc = CCD_EXIT_BAD_INPUT;
			break;
		}
		if (row == 0) {
			cur.truth = truth;
		} else if (truth != cur.truth) {
			fprintf(stderr, "%s:%ld: ground truth %d differs from %d on the query's first row\n",
			        path, line_no, truth, cur.truth);
			rc = CCD_EXIT_BAD_INPUT;
			break;
		}
		if (++row == 8) {
			if (count == cap) {
				long ncap = cap ? 2 * cap : 256;
				bench_query *nq = realloc(qs, (size_t)ncap * sizeof *nq);
				if (!nq) {
					fprintf(stderr, "%s:%ld: out of memory\n", path, line_no);
					rc = CCD_EXIT_BAD_INPUT;
					break;
				}
				qs = nq;
				cap = ncap;
			}
			/* Moving each point by at most `margin` per axis moves the distance
			 * between the primitives by at most 2 sqrt(3) margin < 4 margin. */
			cur.margin *= 4.0;
			qs[count++] = cur;
			cur = (bench_query){0};
			row = 0;
		}
	}
	if (rc == 0 && ferror(f)) {
		fprintf(stderr, "%s:%ld: read error: %s\n", path, line_no + 1, strerror(errno));
		rc = CCD_EXIT_BAD_INPUT;
	}
	if (rc == 0 && row != 0) {
		fprintf(stderr, "%s:%ld: incomplete query at end of file (%d of 8 rows)\n", path,
		        line_no, row);
		rc = CCD_EXIT_BAD_INPUT;
	}
	free(line);
	fclose(f);
	if (rc != 0) {
		free(qs);
		return rc;
	}
	*out = qs;
	*out_count = count;
	return 0;
}

static double elapsed_ns(const struct timespec *a, const struct timespec *b)
{
	return (double)(b->tv_sec - a->tv_sec) * 1e9 + (double)(b->tv_nsec - a->tv_nsec);
}

static int run_file(const char *path, bench_totals *tot)
{
	int kind = query_kind(path);
	if (kind < 0) {
		fprintf(stderr, "%s: not under a vertex-face or edge-edge folder\n", path);
		return CCD_EXIT_BAD_INPUT;
	}
	bench_query *qs = NULL;
	long n = 0;
	int rc = read_queries(path, &qs, &n);
	if (rc != 0)
		return rc;
	struct timespec t0, t1;
	clock_gettime(CLOCK_MONOTONIC, &t0);
	for (long i = 0; i < n; i++) {
		const double(*x0)[3] = (const double(*)[3])qs[i].x;
		const double(*x1)[3] = (const double(*)[3])(qs[i].x + 4);
		qs[i].hit = kind ? sim_ccd_vertex_face(x0, x1, qs[i].margin, NULL)
		                 : sim_ccd_edge_edge(x0, x1, qs[i].margin, NULL);
	}
	clock_gettime(CLOCK_MONOTONIC, &t1);
	tot->ns += elapsed_ns(&t0, &t1);
	for (long i = 0; i < n; i++) {
		tot->positives += qs[i].truth;
		if (qs[i].truth && !qs[i].hit)
			tot->false_negatives++;
		if (!qs[i].truth && qs[i].hit)
			tot->false_positives++;
	}
	tot->queries += n;
	tot->files++;
	free(qs);
	return 0;
}

static int compare_names(const void *a, const void *b)
{
	return strcmp(*(char *const *)a, *(char *const *)b);
}

static char *join_path(const char *dir, const char *name)
{
	size_t n = strlen(dir), m = strlen(name);
	bool slash = n > 0 && dir[n - 1] == '/';
	char *s = malloc(n + m + 2);
	if (s) {
		memcpy(s, dir, n);
		if (!slash)
			s[n++] = '/';
		memcpy(s + n, name, m + 1);
	}
	return s;
}

static int walk(const char *path, int depth, bench_totals *tot)
{
	DIR *dir = opendir(path);
	if (!dir) {
		fprintf(stderr, "%s: cannot open directory: %s\n", path, strerror(errno));
		return CCD_EXIT_BAD_INPUT;
	}
	char **names = NULL;
	size_t count = 0, cap = 0;
	int rc = 0;
	for (;;) {
		errno = 0;
		struct dirent *ent = readdir(dir);
		if (!ent) {
			if (errno) {
				fprintf(stderr, "%s: cannot read directory: %s\n", path, strerror(errno));
				rc = CCD_EXIT_BAD_INPUT;
			}
			break;
		}
		if (strcmp(ent->d_name, ".") == 0 || strcmp(ent->d_name, "..") == 0)
			continue;
		if (count == cap) {
			size_t ncap = cap ? 2 * cap : 32;
			char **nn = realloc(names, ncap * sizeof *nn);
			if (!nn) {
				rc = CCD_EXIT_BAD_INPUT;
				break;
			}
			names = nn;
			cap = ncap;
		}
		names[count] = malloc(strlen(ent->d_name) + 1);
		if (!names[count]) {
			rc = CCD_EXIT_BAD_INPUT;
			break;
		}
		strcpy(names[count++], ent->d_name);
	}
	closedir(dir);
	if (rc == 0 && count > 1)
		qsort(names, count, sizeof *names, compare_names);
	for (size_t i = 0; i < count && rc == 0 && !stop_requested(); i++) {
		char *child = join_path(path, names[i]);
		struct stat st;
		if (!child) {
			fprintf(stderr, "%s: out of memory\n", path);
			rc = CCD_EXIT_BAD_INPUT;
		} else if (stat(child, &st) != 0) {
			fprintf(stderr, "%s: %s\n", child, strerror(errno));
			rc = CCD_EXIT_BAD_INPUT;
		} else if (S_ISDIR(st.st_mode)) {
			if (depth >= CCD_MAX_DEPTH) {
				fprintf(stderr, "%s: directories nested too deeply (link loop?)\n", child);
				rc = CCD_EXIT_BAD_INPUT;
			} else {
				rc = walk(child, depth + 1, tot);
			}
		} else if (S_ISREG(st.st_mode) && ends_with(names[i], ".csv")) {
			rc = run_file(child, tot);
		}
		free(child);
	}
	for (size_t i = 0; i < count; i++)
		free(names[i]);
	free(names);
	return rc;
}

int cmd_ccd(int argc, char **argv)
{
	if (cli_wants_help(argc, argv, 1)) {
		fputs(ccd_usage, stdout);
		return CCD_EXIT_OK;
	}
	if (argc < 2) {
		fputs(ccd_usage, stderr);
		return CCD_EXIT_USAGE;
	}
	bench_totals tot = {0};
	for (int i = 1; i < argc; i++) {
		const char *path = argv[i];
		struct stat st;
		if (stat(path, &st) != 0) {
			fprintf(stderr, "%s: %s\n", path, strerror(errno));
			return CCD_EXIT_BAD_INPUT;
		}
		long files_before = tot.files;
		int rc;
		if (S_ISDIR(st.st_mode)) {
			rc = walk(path, 0, &tot);
		} else if (S_ISREG(st.st_mode) && ends_with(path, ".csv")) {
			rc = run_file(path, &tot);
		} else {
			fprintf(stderr, "%s: not a directory or a .csv file\n", path);
			rc = CCD_EXIT_BAD_INPUT;
		}
		if (rc != 0)
			return rc;
		/* a signal: no totals of the queries read so far (main.c gives the exit code) */
		if (stop_requested())
			return CCD_EXIT_OK;
		/* An empty or mistyped folder must not pass as "no false negatives". */
		if (tot.files == files_before) {
			fprintf(stderr, "%s: no *.csv query files found\n", path);
			return CCD_EXIT_BAD_INPUT;
		}
	}
	double ns = tot.queries > 0 ? tot.ns / (double)tot.queries : 0.0;
	printf("queries=%ld positives=%ld false_negatives=%ld false_positives=%ld ns_per_query=%.1f\n",
	       tot.queries, tot.positives, tot.false_negatives, tot.false_positives, ns);
	return tot.false_negatives > 0 ? CCD_EXIT_FALSE_NEGATIVE : CCD_EXIT_OK;
}
