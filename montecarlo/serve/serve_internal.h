/* serve_internal.h: the event heap shared by the serving engine and its
 * policies.  Not part of the API.
 *
 * A binary min-heap of events ordered by (time, insertion sequence): events
 * at the same time come out in the order they were pushed, so a run is
 * deterministic whatever the heap's internal layout.  Policies also use it
 * for "finishing step" queues (time = step number, exact in a double below
 * 2^53).
 */
#ifndef AFD_SERVE_INTERNAL_H
#define AFD_SERVE_INTERNAL_H

#include <stddef.h>
#include <stdint.h>

#include "afd_serve.h"

typedef struct serve_event {
    double t;
    uint64_t seq;
    uint64_t b;
    uint32_t a;
    int32_t kind;
} serve_event;

typedef struct serve_heap {
    serve_event *v;
    size_t n, cap;
    uint64_t seq;
} serve_heap;

static inline int serve_ev_less(const serve_event *x, const serve_event *y)
{
    return x->t < y->t || (x->t == y->t && x->seq < y->seq);
}

/* 0, or -1 when memory runs out (the heap is unchanged). */
int serve_heap_push(serve_heap *h, double t, int kind, uint32_t a, uint64_t b);
/* Remove the smallest event into *ev; h->n >= 1. */
void serve_heap_pop(serve_heap *h, serve_event *ev);
void serve_heap_free(serve_heap *h);

/* FIFO of request ids, growable. */
typedef struct serve_fifo {
    uint32_t *v;
    size_t head, n, cap; /* ring buffer */
} serve_fifo;

int serve_fifo_push(serve_fifo *q, uint32_t r);
static inline uint32_t serve_fifo_pop(serve_fifo *q)
{
    uint32_t r = q->v[q->head];
    q->head = q->head + 1 == q->cap ? 0 : q->head + 1;
    q->n--;
    return r;
}
static inline uint32_t serve_fifo_peek(const serve_fifo *q)
{
    return q->v[q->head];
}
void serve_fifo_free(serve_fifo *q);

/* The built-in policies. */
extern const afd_serve_policy afd_priv_serve_colloc;
extern const afd_serve_policy afd_priv_serve_chunked;
extern const afd_serve_policy afd_priv_serve_disagg;

/* Decode pool shared by the policies: one instance's running sequences, the
 * step counter and the KV tokens they hold (see policy notes). */
typedef struct serve_decoder {
    serve_heap finish; /* t = step count after which the sequence is done, a = request */
    uint64_t steps;    /* steps completed */
    double kv;         /* KV tokens held by the running sequences */
    unsigned running;
} serve_decoder;

/* Admit request r (after its first token) to the decoder: it needs
 * output - 1 steps and holds prompt + 1 tokens for its first step.  0 or -1 (memory). */
int serve_decoder_add(serve_decoder *d, const afd_serve_request *q, uint32_t r);
/* After a step: count it, grow the KV by one token per running sequence, and
 * finish (afd_serve_finish) every sequence whose last step it was. */
void serve_decoder_step_done(serve_decoder *d, afd_serve_engine *e);
void serve_decoder_free(serve_decoder *d);

#endif /* AFD_SERVE_INTERNAL_H */
