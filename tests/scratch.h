/* A scratch folder for one test process, made on first use under test_tmpdir() and
 * removed with everything in it when the process exits.  Needs _XOPEN_SOURCE 700 (nftw,
 * mkdtemp) before the first include. */
#ifndef TELA_TEST_SCRATCH_H
#define TELA_TEST_SCRATCH_H

#include "test.h"

#include <ftw.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/stat.h>

static char scratch_dir[256];

static int scratch_remove_entry(const char *path, const struct stat *st, int flag, struct FTW *ftw)
{
	(void)st, (void)flag, (void)ftw;
	return remove(path);
}

static void scratch_remove(void) { nftw(scratch_dir, scratch_remove_entry, 16, FTW_DEPTH | FTW_PHYS); }

/* The folder, named tela-NAME-XXXXXX; the process ends if it cannot be made. */
static const char *scratch(const char *name)
{
	if (scratch_dir[0])
		return scratch_dir;
	snprintf(scratch_dir, sizeof scratch_dir, "%s/tela-%s-XXXXXX", test_tmpdir(), name);
	if (!mkdtemp(scratch_dir)) {
		perror(scratch_dir);
		exit(1);
	}
	atexit(scratch_remove);
	return scratch_dir;
}

#endif
