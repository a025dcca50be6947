/* The demo's recent-scenes file: where it lives, newest first without repeats and at most
 * RECENT_SCENES_MAX, written whole and read back the same, and a missing or corrupt file
 * read as what can be read of it (never an error, never a bad entry). */
#define _XOPEN_SOURCE 700
#include "scratch.h"
#include "test.h"

#include "recent_scenes.h"

#include <sys/stat.h>
#include <unistd.h>

static char tmp[256];

static void make_tmp(void)
{
	if (!tmp[0])
		snprintf(tmp, sizeof tmp, "%s", scratch("recent"));
}

static void test_file_location(void)
{
	char path[512];
	setenv("XDG_CONFIG_HOME", "/x/config", 1);
	setenv("HOME", "/home/someone", 1);
	CHECK(recent_scenes_file(path, sizeof path) && strcmp(path, "/x/config/tela/recent-scenes") == 0);
	setenv("XDG_CONFIG_HOME", "relative/config", 1); /* to be ignored, says the XDG rule */
	CHECK(recent_scenes_file(path, sizeof path) && strcmp(path, "/home/someone/.config/tela/recent-scenes") == 0);
	unsetenv("XDG_CONFIG_HOME");
	CHECK(recent_scenes_file(path, sizeof path) && strcmp(path, "/home/someone/.config/tela/recent-scenes") == 0);
	unsetenv("HOME");
	CHECK(!recent_scenes_file(path, sizeof path));
	setenv("HOME", "/home/someone", 1);
	CHECK(!recent_scenes_file(path, 10)); /* does not fit */
}

static void test_add_order_and_cap(void)
{
	recent_scenes r = {0};
	char p[64];
	for (int i = 0; i < RECENT_SCENES_MAX + 3; i++) {
		snprintf(p, sizeof p, "/s/%d.ini", i);
		CHECK(recent_scenes_add(&r, p));
	}
	CHECK(r.count == RECENT_SCENES_MAX);
	snprintf(p, sizeof p, "/s/%d.ini", RECENT_SCENES_MAX + 2);
	CHECK(strcmp(r.paths[0], p) == 0);
	snprintf(p, sizeof p, "/s/%d.ini", 3); /* the oldest kept */
	CHECK(strcmp(r.paths[RECENT_SCENES_MAX - 1], p) == 0);
	/* an entry opened again moves to the front, once */
	snprintf(p, sizeof p, "/s/%d.ini", 7);
	CHECK(recent_scenes_add(&r, p));
	CHECK(r.count == RECENT_SCENES_MAX && strcmp(r.paths[0], p) == 0);
	int seen = 0;
	for (int i = 0; i < r.count; i++)
		seen += strcmp(r.paths[i], p) == 0;
	CHECK(seen == 1);
	snprintf(p, sizeof p, "/s/%d.ini", RECENT_SCENES_MAX + 2);
	CHECK(strcmp(r.paths[1], p) == 0);
	/* what cannot be a line of the file is refused */
	CHECK(!recent_scenes_add(&r, ""));
	CHECK(!recent_scenes_add(&r, "/a\nb"));
	CHECK(!recent_scenes_add(&r, "relative.ini"));
	char longer[RECENT_SCENE_PATH_MAX + 8];
	memset(longer, 'a', sizeof longer - 1);
	longer[sizeof longer - 1] = '\0';
	CHECK(!recent_scenes_add(&r, longer));
	CHECK(r.count == RECENT_SCENES_MAX);
}

static void test_save_and_load(void)
{
	make_tmp();
	char file[512];
	snprintf(file, sizeof file, "%s/config/tela/recent-scenes", tmp); /* folders made on saving */
	recent_scenes r = {0}, back;
	CHECK(recent_scenes_add(&r, "/scenes/b.ini"));
	CHECK(recent_scenes_add(&r, "/scenes/with space/a.ini"));
	CHECK(recent_scenes_save(&r, file) == 0);
	recent_scenes_load(&back, file);
	REQUIRE(back.count == 2);
	CHECK(strcmp(back.paths[0], "/scenes/with space/a.ini") == 0 && strcmp(back.paths[1], "/scenes/b.ini") == 0);
	/* missing: empty */
	char missing[600];
	snprintf(missing, sizeof missing, "%s/none", tmp);
	recent_scenes_load(&back, missing);
	CHECK(back.count == 0);
	recent_scenes_load(&back, NULL);
	CHECK(back.count == 0);
	/* a folder where the file should be: nothing read, and saving says why */
	char dir[600];
	snprintf(dir, sizeof dir, "%s/dir", tmp);
	REQUIRE(mkdir(dir, 0777) == 0);
	recent_scenes_load(&back, dir);
	CHECK(back.count == 0);
	CHECK(recent_scenes_save(&r, dir) != 0);
}

static void test_corrupt_file(void)
{
	make_tmp();
	char file[512];
	snprintf(file, sizeof file, "%s/corrupt", tmp);
	FILE *f = fopen(file, "wb");
	REQUIRE(f);
	fputs("/good/one.ini\n\n   \n", f);
	fputs("/has\ttab\n", f);
	fwrite("/nul\0inside\n", 1, 12, f);
	for (int i = 0; i < RECENT_SCENE_PATH_MAX + 10; i++)
		fputc('x', f);
	fputs("\n/good/one.ini\n\x01\x02\x03\n/good/two\r\n/good/three.ini", f);
	fclose(f);
	recent_scenes r;
	recent_scenes_load(&r, file);
	REQUIRE(r.count == 3);
	CHECK(strcmp(r.paths[0], "/good/one.ini") == 0);
	CHECK(strcmp(r.paths[1], "/good/two") == 0); /* a CR LF line end is a line end */
	CHECK(strcmp(r.paths[2], "/good/three.ini") == 0); /* the last line needs no newline */
	for (int i = 0; i < r.count; i++)
		CHECK_MSG(strchr(r.paths[i], '\r') == NULL && strchr(r.paths[i], 'x') == NULL, "%s", r.paths[i]);
	/* a file of random bytes, and one far longer than any list */
	f = fopen(file, "wb");
	REQUIRE(f);
	unsigned x = 12345;
	for (int i = 0; i < 200000; i++) {
		x = x * 1103515245u + 12345u;
		fputc((int)(x >> 16) & 0xff, f);
	}
	fclose(f);
	recent_scenes_load(&r, file);
	CHECK(r.count <= RECENT_SCENES_MAX);
	for (int i = 0; i < r.count; i++)
		for (const unsigned char *c = (const unsigned char *)r.paths[i]; *c; c++)
			CHECK(*c >= 0x20 && *c != 0x7f);
}

static const test_case tests[] = {
    TEST(test_file_location),
    TEST(test_add_order_and_cap),
    TEST(test_save_and_load),
    TEST(test_corrupt_file),
};

TEST_MAIN(tests)
