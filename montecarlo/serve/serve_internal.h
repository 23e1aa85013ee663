/* serve_internal.h: helpers shared by the serving engine and its policies
 * (queues of requests, the decode batch).  Not part of the API.  Events and
 * the decode batch's finishing steps live in afd_event heaps (time = step
 * number there, exact in a double below 2^53). */
#ifndef AFD_SERVE_INTERNAL_H
#define AFD_SERVE_INTERNAL_H

#include <stddef.h>
#include <stdint.h>

#include "afd_event.h"
#include "afd_serve.h"

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

/* afd_serve_run with exact percentiles when p->requests <= exact_max, else
 * from histograms (afd_serve_run: exact_max = AFD_SERVE_EXACT_REQUESTS). */
afd_status afd_priv_serve_run(const afd_serve_params *p, uint64_t exact_max,
                              afd_serve_result *out, afd_error *err);

/* The built-in policies. */
extern const afd_serve_policy afd_priv_serve_colloc;
extern const afd_serve_policy afd_priv_serve_chunked;
extern const afd_serve_policy afd_priv_serve_disagg;
extern const afd_serve_policy afd_priv_serve_taichi;
extern const afd_serve_policy afd_priv_serve_twotier;

/* An instance's prefix cache (prefix_cache.c): at most limit <= cap KV
 * blocks of block tokens each, least recently used evicted first.  With kv
 * > 0 (afd_serve_config.prefix_kv_tokens) the limit follows the memory the
 * instance's running requests leave free (serve_pcache_room); else it is
 * cap. */
typedef struct serve_pcache {
    uint32_t cap, used, block;
    uint32_t limit, count;      /* blocks it may hold now, blocks it holds */
    uint32_t spare;             /* stack of evicted nodes (linked by next) */
    double kv;                  /* KV tokens of the instance, or 0 */
    uint32_t head, tail;        /* most and least recently used node */
    uint32_t *key, *prev, *next; /* per node: block id, recency list */
    uint32_t *slot;             /* hash table of node indices (UINT32_MAX: empty) */
    size_t mask;
} serve_pcache;

/* A cache of cap blocks (cap 0: an empty cache that never holds one).
 * 0, or -1 when out of memory (serve_pcache_free frees what was taken). */
int serve_pcache_init(serve_pcache *c, uint32_t cap);
void serve_pcache_free(serve_pcache *c);
/* The longest run of leading blocks[0 .. n) the cache holds. */
uint32_t serve_pcache_match(const serve_pcache *c, const uint32_t *blocks, uint32_t n);
/* Put blocks[0 .. n) in the cache as its most recently used, blocks[0]
 * the most recent of them (inserted last to first), evicting the least
 * recently used beyond the limit. */
void serve_pcache_insert(serve_pcache *c, const uint32_t *blocks, uint32_t n);
/* Cache c (NULL: none) of an instance whose running requests hold `held`
 * KV tokens: with c->kv > 0 its limit becomes the blocks they leave free,
 * floor((kv - held) / block) (0 when held >= kv, at most cap), the least
 * recently used evicted beyond it; without kv nothing changes. */
void serve_pcache_room(serve_pcache *c, double held);

/* The caches of n instances as cfg asks (prefix_blocks, block_size), or
 * NULL without a cache (*fail set when out of memory). */
serve_pcache *serve_pcaches_new(const afd_serve_config *cfg, unsigned n, int *fail);
void serve_pcaches_free(serve_pcache *c, unsigned n);
/* Request r starts its prefill on the instance of cache c (NULL: none):
 * its cached tokens are its leading blocks held, times the block size, at
 * most its prompt. */
void serve_prefix_start(const serve_pcache *c, afd_serve_engine *e, uint32_t r);
/* Its prefill is done: its blocks enter c (NULL: none). */
void serve_prefix_done(serve_pcache *c, afd_serve_engine *e, uint32_t r);
/* The prompt tokens that r's prefill computes: those not cached, at least
 * the last one (which gives the first output token, as vLLM recomputes on
 * a full hit). */
static inline uint32_t serve_prefill_from(const afd_serve_request *q)
{
    return q->cached < q->prompt ? q->cached : q->prompt - 1;
}

/* Static prefill batches (BestServe's BATCH), one per instance of the
 * policies that form them (colloc, disagg): instance i's batch is
 * req[i bmax .. i bmax + n[i]). */
typedef struct serve_batches {
    uint32_t *req;
    unsigned *n;
    unsigned bmax;
    serve_pcache *pc; /* per instance, or NULL (serve_batches_init) */
    unsigned instances;
} serve_batches;

/* AFD_EINVAL with the message in err unless cfg's prefill and decode batch
 * limits are both in 1..65536. */
afd_status serve_batch_limits(const afd_serve_config *cfg, afd_error *err);
/* Room for the batches of `instances` instances of at most cfg's
 * prefill_bmax requests, with the prefix caches cfg asks for: 0, or -1
 * when out of memory (serve_batches_free frees what was taken). */
int serve_batches_init(serve_batches *b, unsigned instances, const afd_serve_config *cfg);
void serve_batches_free(serve_batches *b);
/* Instance i's batch: up to bmax requests from the front of q, in order,
 * each looked up in i's prefix cache.  Returns its prefill time
 * a + b sum (P - C) + c sum (P^2 - C^2), C the tokens cached. */
double serve_batches_form(serve_batches *b, unsigned i, serve_fifo *q, afd_serve_engine *e);
/* Instance i's batch is prefilled: its requests' blocks enter i's cache. */
void serve_batches_done(serve_batches *b, unsigned i, afd_serve_engine *e);
static inline uint32_t *serve_batch(const serve_batches *b, unsigned i)
{
    return b->req + (size_t)i * b->bmax;
}
/* Instance i's cache, or NULL. */
static inline serve_pcache *serve_batches_pc(const serve_batches *b, unsigned i)
{
    return b->pc != NULL ? &b->pc[i] : NULL;
}
/* The prompt tokens of instance i's batch (the last formed). */
double serve_batch_prompts(const serve_batches *b, unsigned i, afd_serve_engine *e);

/* Decode pool shared by the policies: one instance's running sequences, the
 * step counter and the KV tokens they hold (see policy notes). */
typedef struct serve_decoder {
    afd_event_heap finish; /* time = step count after which the sequence is done, id = request */
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

/* Prefills chunked on one instance (chunked prefill, shared by the policies
 * that chunk): the requests being prefilled in order (word = prompt tokens
 * done), their prompt tokens not yet prefilled, and the requests whose
 * prefill ends with the iteration under way. */
typedef struct serve_chunker {
    serve_fifo pre;
    uint64_t pending;
    uint64_t held;  /* the prompt tokens of the requests in pre */
    uint32_t *done; /* room for bmax requests */
    unsigned n_done;
    serve_pcache *pc; /* the instance's prefix cache, or NULL (set by the policy) */
} serve_chunker;

/* 0, or -1 when out of memory; bmax bounds the prefills of one iteration. */
int serve_chunker_init(serve_chunker *c, unsigned bmax);
void serve_chunker_free(serve_chunker *c);
/* Add request r after the prefills already here, its cached prompt tokens
 * (pc) already prefilled; its blocks enter pc when its prefill ends.
 * 0 or -1 (memory). */
int serve_chunker_admit(serve_chunker *c, afd_serve_engine *e, uint32_t r);
/* Give an iteration's budget of prompt tokens to the prefills in order and
 * return the time of those chunks (the iteration's fixed cost excluded);
 * finished prefills move to done[].  *any is set when a token was given. */
double serve_chunker_spend(serve_chunker *c, afd_serve_engine *e, unsigned budget, int *any);

/* Uniform k of the routers' draws for the request in slot r: k = 0, 1 the
 * arrival router's (stream 3), 2, 3 the decode router's (stream 4);
 * addressed by its arrival number, so independent of the event order. */
double serve_route_u01(const afd_serve_engine *e, uint32_t r, unsigned k);

/* The request in slot r, as a router reads it. */
const afd_serve_request *serve_route_req(const afd_serve_engine *e, uint32_t r);

/* What a router sees of instance i when request r arrives: the requests it
 * queues and runs, and the prompt tokens of those not yet prefilled. */
typedef struct serve_route_load {
    const unsigned *requests;
    const uint64_t *tokens;
    const serve_pcache *caches; /* per instance, or NULL (cache-aware needs them) */
    unsigned draws;             /* 0: the arrival router's uniforms (stream 3); 2: the
                                   decode router's (stream 4) */
} serve_route_load;

/* The two routed pools whose balance the result reports: the pool requests
 * reach at arrival (colloc, chunked, disagg's prefill pool: imbalance), and
 * disagg's decode pool (decode_imbalance). */
enum { SERVE_POOL_ARRIVAL = 0, SERVE_POOL_DECODE = 1, SERVE_POOLS };

/* The router of pool `which` gave request r instance i of n: counted for
 * the pool's imbalance (serve_pool_route calls it). */
void serve_routed(afd_serve_engine *e, uint32_t r, unsigned which, unsigned i, unsigned n);

/* AFD_OK, or AFD_EINVAL with err set when cfg->router names no router, or
 * cfg->decode_router no router of a decode pool (GLOBAL to POWER_OF_TWO:
 * the keyed ones read prefix caches, which decode instances do not keep). */
afd_status serve_router_check(const afd_serve_config *cfg, afd_error *err);

/* The instance (0 .. n - 1) that router `how` (not GLOBAL) gives request r;
 * *rr is the round-robin counter kept by the caller. */
unsigned serve_route(afd_serve_router how, const afd_serve_engine *e, uint32_t r, unsigned n,
                     const serve_route_load *load, uint64_t *rr);

/* A routed pool of n instances, each queueing its own requests: the queues,
 * the prompt tokens each queue holds (the policy takes a request's prompt
 * off when it leaves the count), and what the router sees of each
 * instance, requests[] and tokens[], which the policy fills before routing. */
typedef struct serve_pool {
    afd_serve_router how;
    unsigned n, which; /* which: SERVE_POOL_ARRIVAL or SERVE_POOL_DECODE */
    uint64_t rr;       /* the round-robin counter */
    serve_fifo *queue;
    uint64_t *queued, *tokens;
    unsigned *requests;
    const serve_pcache *caches; /* per instance, or NULL (cache-aware needs them) */
} serve_pool;

/* 0, or -1 when out of memory (serve_pool_free frees what was taken). */
int serve_pool_init(serve_pool *p, afd_serve_router how, unsigned n, unsigned which,
                    const serve_pcache *caches);
void serve_pool_free(serve_pool *p);
/* Route request r (the router of p, not GLOBAL): it joins the queue of the
 * instance chosen, its prompt adds to that queue's tokens, and the choice
 * counts for the pool's imbalance.  The instance, or n when memory ran out
 * (the run has failed). */
unsigned serve_pool_route(serve_pool *p, afd_serve_engine *e, uint32_t r);

#endif /* AFD_SERVE_INTERNAL_H */
