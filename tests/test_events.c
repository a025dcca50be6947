/* The event queue behind the message line and the headless runs' stderr (app/events.h):
 * order, repeats counted, the bound, several posting threads at once, the line's
 * expiry and fade against given clock readings, and the printer's lines. */
#define _POSIX_C_SOURCE 200809L
#include "test.h"

#include "events.h"

#include <pthread.h>
#include <stdint.h>

static void test_order_and_repeats(void)
{
	ev_clear();
	ev_post(EV_INFO, 0.5, NULL, "first %d", 1);
	ev_post(EV_WARNING, 0.75, "blow-up", "blow-up in vertex %d", 3);
	ev_post(EV_WARNING, 1.25, "blow-up", "blow-up in vertex %d", 4);
	ev_post(EV_ERROR, -1.0, NULL, "last");
	ev_event e[8];
	uint64_t dropped = 99;
	int n = ev_drain(e, 8, &dropped);
	REQUIRE(n == 3);
	CHECK(dropped == 0);
	CHECK(strcmp(e[0].text, "first 1") == 0 && e[0].count == 1 && e[0].sim_time == 0.5);
	/* the repeat: counted, with the newer text and time */
	CHECK(strcmp(e[1].text, "blow-up in vertex 4") == 0);
	CHECK(e[1].count == 2 && e[1].sim_time == 1.25 && e[1].level == EV_WARNING);
	CHECK(strcmp(e[2].text, "last") == 0 && e[2].level == EV_ERROR);
	CHECK(ev_drain(e, 8, NULL) == 0);

	char line[400];
	ev_format(&e[0], line, sizeof line);
	CHECK_MSG(strcmp(line, "first 1 (at t = 0.500 s)") == 0, "%s", line);
	ev_format(&e[1], line, sizeof line);
	CHECK_MSG(strcmp(line, "blow-up in vertex 4 (at t = 1.250 s; 2 times)") == 0, "%s", line);
	ev_format(&e[2], line, sizeof line);
	CHECK_MSG(strcmp(line, "last") == 0, "%s", line);
}

static void test_bound_drops_oldest(void)
{
	ev_clear();
	for (int i = 0; i < EV_QUEUE + 10; i++)
		ev_post(EV_INFO, (double)i, NULL, "event %d", i);
	ev_event e[EV_QUEUE + 10];
	uint64_t dropped = 0;
	int n = ev_drain(e, EV_QUEUE + 10, &dropped);
	CHECK(n == EV_QUEUE);
	CHECK(dropped == 10);
	/* the newest kept, oldest first */
	CHECK(strcmp(e[0].text, "event 10") == 0);
	char want[32];
	snprintf(want, sizeof want, "event %d", EV_QUEUE + 9);
	CHECK(strcmp(e[n - 1].text, want) == 0);
	ev_drain(e, 1, &dropped);
	CHECK(dropped == 0); /* said once */
}

enum { POSTERS = 4, POSTS = 2000 };

static void *poster(void *arg)
{
	int id = (int)(intptr_t)arg;
	for (int i = 0; i < POSTS; i++)
		ev_post(EV_INFO, (double)i, NULL, "poster %d event %d", id, i);
	return NULL;
}

/* Every event posted by concurrent threads is either drained, in each thread's own
 * order, or counted as dropped: none is lost or torn. */
static void test_threads(void)
{
	ev_clear();
	pthread_t t[POSTERS];
	for (int k = 0; k < POSTERS; k++)
		REQUIRE(pthread_create(&t[k], NULL, poster, (void *)(intptr_t)k) == 0);
	uint64_t got = 0, dropped_total = 0;
	int last[POSTERS] = {-1, -1, -1, -1};
	bool ordered = true, whole = true;
	int running = POSTERS;
	for (;;) {
		ev_event e[16];
		uint64_t dropped = 0;
		int n = ev_drain(e, 16, &dropped);
		dropped_total += dropped;
		for (int i = 0; i < n; i++) {
			int id = -1, seq = -1;
			if (sscanf(e[i].text, "poster %d event %d", &id, &seq) != 2 || id < 0 || id >= POSTERS ||
			    seq != (int)e[i].sim_time) {
				whole = false;
				continue;
			}
			ordered &= seq > last[id];
			last[id] = seq;
			got++;
		}
		if (running == 0 && n == 0)
			break;
		if (running > 0 && n == 0) {
			for (int k = 0; k < POSTERS; k++)
				pthread_join(t[k], NULL);
			running = 0;
		}
	}
	CHECK(whole);
	CHECK(ordered);
	CHECK_MSG(got + dropped_total == (uint64_t)POSTERS * POSTS, "%llu drained + %llu dropped",
	          (unsigned long long)got, (unsigned long long)dropped_total);
}

static ev_event make(const char *text, int64_t wall_ns)
{
	ev_event e = {.level = EV_INFO, .sim_time = 1.0, .wall_ns = wall_ns, .count = 1};
	snprintf(e.text, sizeof e.text, "%s", text);
	snprintf(e.key, sizeof e.key, "%s", text);
	return e;
}

static void test_line_stacks_counts_and_fades(void)
{
	ev_line line = {0};
	const int64_t s = 1000000000LL;
	ev_event a = make("a", 10 * s), b = make("b", 11 * s), b2 = make("b", 12 * s);
	ev_line_add(&line, &a);
	ev_line_add(&line, &b);
	ev_line_add(&line, &b2);
	REQUIRE(line.count == 2);
	CHECK(strcmp(line.events[0].text, "a") == 0);
	CHECK(strcmp(line.events[1].text, "b") == 0 && line.events[1].count == 2 && line.events[1].wall_ns == 12 * s);
	/* full opacity until the fade, then linear down to 0 at EV_LINE_SHOW_NS */
	int64_t fade_start = 10 * s + EV_LINE_SHOW_NS - EV_LINE_FADE_NS;
	CHECK(ev_line_alpha(&line, 0, 10 * s) == 1.0f);
	CHECK(ev_line_alpha(&line, 0, fade_start) == 1.0f);
	CHECK_NEAR(ev_line_alpha(&line, 0, fade_start + EV_LINE_FADE_NS / 2), 0.5, 1e-6);
	CHECK(ev_line_alpha(&line, 0, 10 * s + EV_LINE_SHOW_NS) == 0.0f);
	/* expiry drops the older one only; the repeat's newer time keeps b */
	ev_line_expire(&line, 10 * s + EV_LINE_SHOW_NS);
	REQUIRE(line.count == 1);
	CHECK(strcmp(line.events[0].text, "b") == 0);
	ev_line_expire(&line, 12 * s + EV_LINE_SHOW_NS);
	CHECK(line.count == 0);
	/* more than it shows: the oldest go, newest last */
	for (int i = 0; i < EV_LINE_EVENTS + 2; i++) {
		char text[8];
		snprintf(text, sizeof text, "%d", i);
		ev_event e = make(text, 20 * s);
		ev_line_add(&line, &e);
	}
	CHECK(line.count == EV_LINE_EVENTS);
	CHECK(strcmp(line.events[0].text, "2") == 0);
	CHECK(atoi(line.events[EV_LINE_EVENTS - 1].text) == EV_LINE_EVENTS + 1);
}

static void test_printer(void)
{
	FILE *f = tmpfile();
	REQUIRE(f);
	ev_printer p;
	ev_printer_init(&p, f, "tela run");
	ev_event a = make("blow-up", 0), b = make("other", 0);
	a.sim_time = 0.25;
	ev_printer_add(&p, &a);
	ev_printer_add(&p, &a); /* held: within a second of the first */
	ev_printer_add(&p, &a);
	ev_printer_add(&p, &b); /* says the held repeat first */
	ev_printer_flush(&p);    /* nothing held back */
	rewind(f);
	char text[1024] = "";
	size_t n = fread(text, 1, sizeof text - 1, f);
	text[n] = '\0';
	fclose(f);
	const char *want = "tela run: blow-up (at t = 0.250 s)\n"
	                   "tela run: blow-up (at t = 0.250 s; 3 times)\n"
	                   "tela run: other (at t = 1.000 s)\n";
	CHECK_MSG(strcmp(text, want) == 0, "printed:\n%s", text);
}

static const test_case tests[] = {
    TEST(test_order_and_repeats),
    TEST(test_bound_drops_oldest),
    TEST(test_threads),
    TEST(test_line_stacks_counts_and_fades),
    TEST(test_printer),
};

TEST_MAIN(tests)
