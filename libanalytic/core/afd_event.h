/* afd_event.h: an event heap for discrete-event simulation.
 *
 * A binary min-heap of events ordered by (time, insertion sequence): the
 * earliest time comes first, and events with equal times come out in the
 * order they were pushed, so a simulation driven by it is deterministic
 * whatever the ties (the order libuv's timer heap uses).  Each event carries
 * two payload fields the heap does not read (id, kind: a request or server
 * index and an event type, say).
 *
 * Push and pop cost O(log n); replace_top (pop, then push) costs one sift.
 * The heap grows by doubling as needed.  Not thread-safe: one heap per
 * thread.  Times must not be NaN (push refuses them).
 */
#ifndef AFD_EVENT_H
#define AFD_EVENT_H

#include <stddef.h>
#include <stdint.h>

#include "afd_status.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef struct afd_event {
    double time;   /* when it happens */
    uint64_t seq;  /* set by the heap: pushes before this one (the tie-break) */
    uint64_t id;   /* caller's payload */
    unsigned kind; /* caller's payload */
} afd_event;

/* e[0..n) is the heap, e[0] the earliest event; read it, do not reorder it
 * except through afd_event_heap_heapify. */
typedef struct afd_event_heap {
    afd_event *e;
    size_t n, cap;
    uint64_t next_seq; /* seq of the next push */
} afd_event_heap;

/* An empty heap with room for cap events (cap may be 0).  AFD_ENOMEM; the
 * heap is then empty and afd_event_heap_free is still safe. */
AFD_API afd_status afd_event_heap_init(afd_event_heap *h, size_t cap);
AFD_API void afd_event_heap_free(afd_event_heap *h);

/* Add an event.  AFD_EINVAL for a NaN time, AFD_ENOMEM if it cannot grow. */
AFD_API afd_status afd_event_heap_push(afd_event_heap *h, double time, uint64_t id,
                                       unsigned kind);

/* Remove the earliest event into *out (out may be NULL).  AFD_EEMPTY if the
 * heap is empty (*out untouched). */
AFD_API afd_status afd_event_heap_pop(afd_event_heap *h, afd_event *out);

/* Pop the earliest event and push (time, id, kind) in one sift (the new
 * event gets the next sequence number, as with a push).  The heap must not
 * be empty and time must not be NaN; otherwise AFD_EINVAL and no change. */
AFD_API afd_status afd_event_heap_replace_top(afd_event_heap *h, double time, uint64_t id,
                                              unsigned kind);

/* Restore the order after the caller changed the times of e[0..n) in place
 * (e.g. shifting the time origin), in O(n). */
AFD_API void afd_event_heap_heapify(afd_event_heap *h);

/* The earliest event, or NULL if the heap is empty. */
static inline const afd_event *afd_event_heap_top(const afd_event_heap *h)
{
    return h->n > 0 ? &h->e[0] : NULL;
}

/* Nonzero if a comes before b: a.time < b.time, or equal times and
 * a.seq < b.seq. */
static inline int afd_event_before(const afd_event *a, const afd_event *b)
{
    return a->time < b->time || (a->time == b->time && a->seq < b->seq);
}

#ifdef __cplusplus
}
#endif

#endif /* AFD_EVENT_H */
