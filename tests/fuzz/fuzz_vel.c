/* libFuzzer target for the velocity-constraint reader (scn_vel_parse).  Beyond crashes and
 * sanitizer reports it checks what scenes/velocities.h promises of an accepted list, that
 * a bound on the vertex ids only ever turns acceptance into refusal, that scn_vel_check
 * agrees with the reader, and that the writer's file reads back bit for bit. */
#include "fuzz_check.h"

#include "scenes/velocities.h"

#include <math.h>
#include <stdbool.h>
#include <unistd.h>

static const char NAME[] = "fuzz.vel";

/* The vertex bound of the second read: small, so that seeds and mutants cross it. */
enum { BOUND = 8 };

static void check_list(const scn_velocities *v, int vertex_count)
{
	FUZZ_REQUIRE(v->block_count > 0 && v->blocks, "an accepted file has a block");
	FUZZ_REQUIRE(v->entry_count >= 0 && (v->entry_count == 0 || v->entries), "the entries exist");
	int next = 0;
	for (int k = 0; k < v->block_count; k++) {
		const scn_vel_block *b = &v->blocks[k];
		FUZZ_REQUIRE(b->first == next && b->count >= 0, "blocks own consecutive runs of entries");
		next += b->count;
		FUZZ_REQUIRE(next <= v->entry_count, "blocks stay within the entries");
		FUZZ_REQUIRE(isfinite(b->time) && b->time >= 0.0 && b->time <= SCN_VEL_MAX_TIME, "times are in range");
		FUZZ_REQUIRE(k == 0 || b->time >= v->blocks[k - 1].time, "times do not decrease");
		FUZZ_REQUIRE(b->line > 0 && (k == 0 || b->line > v->blocks[k - 1].line), "blocks name their lines in order");
		for (int e = b->first; e < b->first + b->count; e++) {
			const scn_vel_entry *x = &v->entries[e];
			FUZZ_REQUIRE(x->vertex >= 0 && (vertex_count == 0 || x->vertex < vertex_count), "vertex ids are in range");
			FUZZ_REQUIRE(x->line > b->line, "an entry comes after its block's Time line");
			double speed2 = 0.0;
			for (int c = 0; c < 3; c++) {
				FUZZ_REQUIRE(isfinite(x->velocity[c]), "velocities are finite");
				speed2 += (double)x->velocity[c] * x->velocity[c];
			}
			FUZZ_REQUIRE(sqrt(speed2) <= SCN_VEL_MAX_SPEED, "speeds are within the limit");
			for (int o = b->first; o < e; o++)
				FUZZ_REQUIRE(v->entries[o].vertex != x->vertex, "a block names a vertex once");
		}
	}
	FUZZ_REQUIRE(next == v->entry_count, "every entry belongs to a block");
}

/* Times, counts, ids and velocities, bit for bit; line numbers are not compared. */
static bool same_list(const scn_velocities *a, const scn_velocities *b)
{
	if (a->block_count != b->block_count || a->entry_count != b->entry_count)
		return false;
	for (int k = 0; k < a->block_count; k++)
		if (memcmp(&a->blocks[k].time, &b->blocks[k].time, sizeof(double)) != 0 ||
		    a->blocks[k].first != b->blocks[k].first || a->blocks[k].count != b->blocks[k].count)
			return false;
	for (int e = 0; e < a->entry_count; e++)
		if (a->entries[e].vertex != b->entries[e].vertex ||
		    memcmp(a->entries[e].velocity, b->entries[e].velocity, sizeof a->entries[e].velocity) != 0)
			return false;
	return true;
}

static bool is_empty(const scn_velocities *v)
{
	return v->block_count == 0 && v->entry_count == 0 && !v->blocks && !v->entries;
}

static scn_status parse(const uint8_t *data, size_t size, int vertex_count, scn_velocities *out)
{
	scn_error err = {0};
	scn_status st = scn_vel_parse((const char *)data, size, NAME, vertex_count, out, &err);
	if (st != SCN_OK) {
		fuzz_check_failure(st, &err, NAME);
		FUZZ_REQUIRE(is_empty(out), "a failed read leaves the list empty");
		return st;
	}
	fuzz_check_success(&err);
	check_list(out, vertex_count);
	scn_error check = {0};
	FUZZ_REQUIRE(scn_vel_check(out, NAME, vertex_count, &check) == SCN_OK,
	             "scn_vel_check accepts what the reader accepts");
	return st;
}

/* One scratch file per process, so that parallel runs (-jobs) do not share it. */
static const char *scratch_path(void)
{
	static char path[512];
	if (!path[0]) {
		const char *dir = getenv("TMPDIR");
		snprintf(path, sizeof path, "%s/tela-fuzz-vel-%ld.vel", dir && dir[0] ? dir : "/tmp", (long)getpid());
	}
	return path;
}

static void check_round_trip(const scn_velocities *v)
{
	const char *path = scratch_path();
	scn_error err = {0};
	scn_status st = scn_vel_write(path, v, &err);
	if (st == SCN_ERROR_IO) /* a full or read-only disk says nothing about the writer */
		return;
	FUZZ_REQUIRE(st == SCN_OK, "the writer takes what the reader accepted");
	scn_velocities back;
	scn_error read_err = {0};
	st = scn_vel_read(path, 0, &back, &read_err);
	unlink(path);
	if (st != SCN_OK)
		fprintf(stderr, "reading the written file back: %s\n", read_err.message);
	FUZZ_REQUIRE(st == SCN_OK, "the written file reads back");
	FUZZ_REQUIRE(same_list(v, &back), "the written file reads back bit for bit");
	scn_vel_free(&back);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	scn_velocities any, bounded;
	scn_status st_any = parse(data, size, 0, &any);
	scn_status st_bounded = parse(data, size, BOUND, &bounded);
	if (st_any != SCN_OK) {
		FUZZ_REQUIRE(st_bounded != SCN_OK, "a bound on the ids never makes a bad file good");
		return 0;
	}
	int highest = -1;
	for (int e = 0; e < any.entry_count; e++)
		highest = any.entries[e].vertex > highest ? any.entries[e].vertex : highest;
	FUZZ_REQUIRE((st_bounded == SCN_OK) == (highest < BOUND), "the bound refuses exactly the ids beyond it");
	if (st_bounded == SCN_OK)
		FUZZ_REQUIRE(same_list(&any, &bounded), "a bound that holds changes nothing");
	check_round_trip(&any);
	scn_vel_free(&any);
	scn_vel_free(&bounded);
	FUZZ_REQUIRE(is_empty(&any), "free leaves an empty list");
	return 0;
}
