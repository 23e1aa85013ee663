/* test_event.c: the event heap (afd_event.h) against a stable sort. */
#include <config.h>

#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "afd_event.h"
#include "test_util.h"

/* A small LCG for test data only (the order of its draws is all that matters). */
static uint32_t lcg(uint32_t *s)
{
    *s = *s * 1664525u + 1013904223u;
    return *s >> 8;
}

struct rec {
    double time;
    uint64_t order; /* position in the push sequence */
};

/* Insertion sort: stable by construction, an independent reference. */
static void stable_sort(struct rec *r, size_t n)
{
    size_t i, j;
    for (i = 1; i < n; i++) {
        struct rec x = r[i];
        for (j = i; j > 0 && r[j - 1].time > x.time; j--)
            r[j] = r[j - 1];
        r[j] = x;
    }
}

/* Many ties: popping gives the stable sort of the pushes. */
static void test_ties_come_out_in_push_order(void **state)
{
    enum { N = 2000 };
    static struct rec ref[N];
    afd_event_heap h;
    afd_event ev;
    uint32_t s = 12345;
    size_t i;
    (void)state;
    assert_int_equal(afd_event_heap_init(&h, 0), AFD_OK); /* grows from empty */
    for (i = 0; i < N; i++) {
        ref[i].time = (double)(lcg(&s) % 37) * 0.25; /* 37 distinct times */
        ref[i].order = i;
        assert_int_equal(afd_event_heap_push(&h, ref[i].time, i, (unsigned)(i % 3)), AFD_OK);
    }
    assert_int_equal(h.n, N);
    stable_sort(ref, N);
    for (i = 0; i < N; i++) {
        assert_non_null(afd_event_heap_top(&h));
        assert_int_equal(afd_event_heap_pop(&h, &ev), AFD_OK);
        assert_true(ev.time == ref[i].time);
        assert_int_equal(ev.id, ref[i].order);
        assert_int_equal(ev.seq, ref[i].order); /* seq counts pushes from 0 */
        assert_int_equal(ev.kind, ref[i].order % 3);
    }
    assert_null(afd_event_heap_top(&h));
    assert_int_equal(afd_event_heap_pop(&h, &ev), AFD_EEMPTY);
    afd_event_heap_free(&h);
}

/* replace_top is pop + push: a c-server FCFS queue with every service time
 * equal to 1 and all customers present at time 0 serves customer n at time
 * floor(n / c), on server n mod c (ties go to the server freed first). */
static void test_replace_top_is_pop_then_push(void **state)
{
    const unsigned c = 5;
    afd_event_heap h;
    unsigned n;
    (void)state;
    assert_int_equal(afd_event_heap_init(&h, c), AFD_OK);
    for (n = 0; n < c; n++)
        assert_int_equal(afd_event_heap_push(&h, 0, n, 0), AFD_OK);
    for (n = 0; n < 103; n++) {
        const afd_event *top = afd_event_heap_top(&h);
        assert_true(top->time == floor((double)n / c));
        assert_int_equal(top->id, n % c);
        assert_int_equal(afd_event_heap_replace_top(&h, top->time + 1, top->id, 1), AFD_OK);
    }
    assert_int_equal(h.n, c);
    assert_int_equal(h.next_seq, c + 103);
    afd_event_heap_free(&h);
}

/* Shifting every time by the same amount and re-heapifying keeps the order;
 * a scrambled array is put back in order. */
static void test_heapify(void **state)
{
    enum { N = 500 };
    afd_event_heap h;
    afd_event ev, prev;
    uint32_t s = 99;
    size_t i;
    (void)state;
    assert_int_equal(afd_event_heap_init(&h, N), AFD_OK);
    for (i = 0; i < N; i++)
        assert_int_equal(afd_event_heap_push(&h, (double)(lcg(&s) % 1000), i, 0), AFD_OK);
    /* scramble: reverse the array (no longer a heap in general) */
    for (i = 0; i < N / 2; i++) {
        afd_event t = h.e[i];
        h.e[i] = h.e[N - 1 - i];
        h.e[N - 1 - i] = t;
    }
    for (i = 0; i < N; i++)
        h.e[i].time -= 500;
    afd_event_heap_heapify(&h);
    assert_int_equal(afd_event_heap_pop(&h, &prev), AFD_OK);
    for (i = 1; i < N; i++) {
        assert_int_equal(afd_event_heap_pop(&h, &ev), AFD_OK);
        assert_true(afd_event_before(&prev, &ev));
        assert_true(ev.time >= -500 && ev.time < 500);
        prev = ev;
    }
    afd_event_heap_free(&h);
}

static void test_errors(void **state)
{
    afd_event_heap h;
    (void)state;
    assert_int_equal(afd_event_heap_init(&h, 0), AFD_OK);
    assert_int_equal(afd_event_heap_push(&h, NAN, 0, 0), AFD_EINVAL);
    assert_int_equal(afd_event_heap_replace_top(&h, 1, 0, 0), AFD_EINVAL); /* empty */
    assert_int_equal(afd_event_heap_push(&h, INFINITY, 7, 0), AFD_OK);
    assert_int_equal(afd_event_heap_push(&h, -INFINITY, 8, 0), AFD_OK);
    assert_int_equal(afd_event_heap_replace_top(&h, NAN, 0, 0), AFD_EINVAL);
    assert_int_equal(h.n, 2);
    assert_int_equal(afd_event_heap_top(&h)->id, 8);
    assert_int_equal(afd_event_heap_pop(&h, NULL), AFD_OK);
    assert_int_equal(afd_event_heap_top(&h)->id, 7);
    afd_event_heap_free(&h);
    afd_event_heap_free(&h); /* safe twice */
    afd_event_heap_free(NULL);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_ties_come_out_in_push_order),
        cmocka_unit_test(test_replace_top_is_pop_then_push),
        cmocka_unit_test(test_heapify),
        cmocka_unit_test(test_errors),
    };
    RUN_TESTS(tests);
}
