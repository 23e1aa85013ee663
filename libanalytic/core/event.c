/* event.c: binary min-heap of events ordered by (time, sequence); see
 * afd_event.h. */
#include <config.h>

#include <math.h>
#include <stdint.h>
#include <stdlib.h>

#include "afd_event.h"

afd_status afd_event_heap_init(afd_event_heap *h, size_t cap)
{
    h->e = NULL;
    h->n = h->cap = 0;
    h->next_seq = 0;
    if (cap == 0)
        return AFD_OK;
    if (cap > SIZE_MAX / sizeof *h->e)
        return AFD_ENOMEM;
    h->e = malloc(cap * sizeof *h->e);
    if (h->e == NULL)
        return AFD_ENOMEM;
    h->cap = cap;
    return AFD_OK;
}

void afd_event_heap_free(afd_event_heap *h)
{
    if (h == NULL)
        return;
    free(h->e);
    h->e = NULL;
    h->n = h->cap = 0;
}

/* Put ev at hole i and move it down to its place among e[0..n). */
static void sift_down(afd_event *e, size_t n, size_t i, afd_event ev)
{
    for (;;) {
        size_t l = 2 * i + 1, m = l;
        if (l >= n)
            break;
        if (l + 1 < n && afd_event_before(&e[l + 1], &e[l]))
            m = l + 1;
        if (!afd_event_before(&e[m], &ev))
            break;
        e[i] = e[m];
        i = m;
    }
    e[i] = ev;
}

afd_status afd_event_heap_push(afd_event_heap *h, double time, uint64_t id, unsigned kind)
{
    afd_event ev;
    size_t i;
    if (isnan(time))
        return AFD_EINVAL;
    if (h->n == h->cap) {
        size_t ncap = h->cap ? 2 * h->cap : 16;
        afd_event *ne;
        if (ncap > SIZE_MAX / sizeof *ne)
            return AFD_ENOMEM;
        ne = realloc(h->e, ncap * sizeof *ne);
        if (ne == NULL)
            return AFD_ENOMEM;
        h->e = ne;
        h->cap = ncap;
    }
    ev.time = time;
    ev.seq = h->next_seq++;
    ev.id = id;
    ev.kind = kind;
    i = h->n++;
    while (i > 0 && afd_event_before(&ev, &h->e[(i - 1) / 2])) {
        h->e[i] = h->e[(i - 1) / 2];
        i = (i - 1) / 2;
    }
    h->e[i] = ev;
    return AFD_OK;
}

afd_status afd_event_heap_pop(afd_event_heap *h, afd_event *out)
{
    if (h->n == 0)
        return AFD_EEMPTY;
    if (out != NULL)
        *out = h->e[0];
    h->n--;
    if (h->n > 0)
        sift_down(h->e, h->n, 0, h->e[h->n]);
    return AFD_OK;
}

afd_status afd_event_heap_replace_top(afd_event_heap *h, double time, uint64_t id,
                                      unsigned kind)
{
    afd_event ev;
    if (h->n == 0 || isnan(time))
        return AFD_EINVAL;
    ev.time = time;
    ev.seq = h->next_seq++;
    ev.id = id;
    ev.kind = kind;
    sift_down(h->e, h->n, 0, ev);
    return AFD_OK;
}

void afd_event_heap_heapify(afd_event_heap *h)
{
    size_t i;
    if (h->n < 2)
        return;
    for (i = h->n / 2; i-- > 0;)
        sift_down(h->e, h->n, i, h->e[i]);
}
