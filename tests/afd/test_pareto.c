/* test_pareto.c: the frontier against a brute-force filter of the
 * definition (a point is dropped iff another is no dearer, no worse and
 * strictly better in one), on random point sets with many ties. */
#include <config.h>

#include <stdlib.h>

#include "test_util.h"

#include "afd_pareto.h"

static int dominated(const double *c, const double *v, size_t n, size_t i)
{
    size_t j;
    if (isnan(c[i]) || isnan(v[i]))
        return 1;
    for (j = 0; j < n; j++)
        if (j != i && !isnan(c[j]) && !isnan(v[j]) && c[j] <= c[i] && v[j] >= v[i] &&
            (c[j] < c[i] || v[j] > v[i]))
            return 1;
    return 0;
}

static void brute_force(void **state)
{
    enum { N = 60 };
    double c[N], v[N];
    int front[N];
    unsigned long s = 12345;
    int trial;
    size_t i;
    (void)state;
    for (trial = 0; trial < 500; trial++) {
        size_t n = 1 + (size_t)trial % N, on = 0;
        for (i = 0; i < n; i++) {
            /* coarse grids (ties) for some trials, fine for others */
            s = (1103515245 * s + 12345) % 2147483648UL;
            c[i] = trial % 2 ? (double)(s % 7) : (double)s / 2147483648.0;
            s = (1103515245 * s + 12345) % 2147483648UL;
            v[i] = trial % 3 ? (double)(s % 5) : (double)s / 2147483648.0;
            if (trial % 11 == 0 && i % 9 == 4)
                v[i] = NAN;
        }
        assert_int_equal(afd_pareto_front(c, v, n, front), AFD_OK);
        for (i = 0; i < n; i++) {
            assert_int_equal(front[i], !dominated(c, v, n, i));
            on += (size_t)front[i];
        }
        /* the cheapest point with the best value among the cheapest is
         * never dominated unless every point is NAN */
        if (trial % 11 != 0)
            assert_true(on >= 1);
    }
}

/* By hand: (1, 1) (2, 3) (2, 2) (3, 3) (4, 5) (4, 5) (0.5, 0.5): every point
 * but (2, 2) (beaten by (2, 3)) and (3, 3) (beaten by (2, 3)) is on it; the
 * equal pair (4, 5) is kept twice. */
static void by_hand(void **state)
{
    double c[] = {1, 2, 2, 3, 4, 4, 0.5}, v[] = {1, 3, 2, 3, 5, 5, 0.5};
    int f[7], expect[] = {1, 1, 0, 0, 1, 1, 1};
    size_t i;
    (void)state;
    assert_int_equal(afd_pareto_front(c, v, 7, f), AFD_OK);
    for (i = 0; i < 7; i++)
        assert_int_equal(f[i], expect[i]);
    assert_int_equal(afd_pareto_front(NULL, v, 7, f), AFD_EINVAL);
    assert_int_equal(afd_pareto_front(NULL, NULL, 0, NULL), AFD_OK);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(brute_force),
        cmocka_unit_test(by_hand),
    };
    RUN_TESTS(tests);
}
