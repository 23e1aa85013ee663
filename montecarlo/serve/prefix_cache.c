/* prefix_cache.c: an instance's prefix cache of KV blocks (see
 * serve_internal.h).
 *
 * Blocks are the dense ids a trace's hash_ids were mapped to
 * (afd_workload.blocks).  The cache holds at most `cap` of them, each a node
 * of a doubly linked list in recency order (head = most recently used), found
 * through an open-addressing table of at least 2 cap slots with linear
 * probing and backward-shift deletion (Knuth, TAOCP vol. 3, 6.4, Algorithm
 * R), so that a lookup, a touch and an eviction are O(1) expected.
 *
 * A request's blocks are inserted from its last to its first, so that its
 * first block ends as the most recently used and the tail blocks of a
 * prompt are evicted before its head, as vLLM's prefix cache frees a
 * request's blocks (in reverse order, "so that the tail blocks are evicted
 * first"): a leading run, the only part a later request can use, outlives
 * the blocks behind it. */
#include <config.h>

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "serve_internal.h"

#define NIL UINT32_MAX

static size_t slot_of(const serve_pcache *c, uint32_t key)
{
    return (size_t)((key * UINT32_C(2654435761)) & c->mask); /* Knuth's multiplicative hash */
}

int serve_pcache_init(serve_pcache *c, uint32_t cap)
{
    size_t slots = 4;
    memset(c, 0, sizeof *c);
    c->head = c->tail = c->spare = NIL;
    if (cap == 0)
        return 0;
    c->limit = cap;
    while (slots < 2 * (size_t)cap)
        slots *= 2;
    c->cap = cap;
    c->mask = slots - 1;
    c->key = malloc((size_t)cap * sizeof *c->key);
    c->prev = malloc((size_t)cap * sizeof *c->prev);
    c->next = malloc((size_t)cap * sizeof *c->next);
    c->slot = malloc(slots * sizeof *c->slot);
    if (c->key == NULL || c->prev == NULL || c->next == NULL || c->slot == NULL)
        return -1;
    memset(c->slot, 0xff, slots * sizeof *c->slot); /* NIL: empty */
    return 0;
}

void serve_pcache_free(serve_pcache *c)
{
    free(c->key);
    free(c->prev);
    free(c->next);
    free(c->slot);
    memset(c, 0, sizeof *c);
}

/* The node holding key, or NIL. */
static uint32_t find(const serve_pcache *c, uint32_t key)
{
    size_t s = slot_of(c, key);
    for (;;) {
        uint32_t n = c->slot[s];
        if (n == NIL || c->key[n] == key)
            return n;
        s = (s + 1) & c->mask;
    }
}

static void unlink_node(serve_pcache *c, uint32_t n)
{
    if (c->prev[n] != NIL)
        c->next[c->prev[n]] = c->next[n];
    else
        c->head = c->next[n];
    if (c->next[n] != NIL)
        c->prev[c->next[n]] = c->prev[n];
    else
        c->tail = c->prev[n];
}

static void push_front(serve_pcache *c, uint32_t n)
{
    c->prev[n] = NIL;
    c->next[n] = c->head;
    if (c->head != NIL)
        c->prev[c->head] = n;
    c->head = n;
    if (c->tail == NIL)
        c->tail = n;
}

/* Remove key's slot from the table (it is there), shifting back the entries
 * of its probe run that would otherwise be cut off. */
static void table_remove(serve_pcache *c, uint32_t key)
{
    size_t i = slot_of(c, key), j;
    while (c->key[c->slot[i]] != key)
        i = (i + 1) & c->mask;
    j = i;
    for (;;) {
        size_t home;
        j = (j + 1) & c->mask;
        if (c->slot[j] == NIL)
            break;
        home = slot_of(c, c->key[c->slot[j]]);
        /* the entry at j may move to i unless its home lies cyclically in (i, j] */
        if (i <= j ? (i < home && home <= j) : (i < home || home <= j))
            continue;
        c->slot[i] = c->slot[j];
        i = j;
    }
    c->slot[i] = NIL;
}

uint32_t serve_pcache_match(const serve_pcache *c, const uint32_t *blocks, uint32_t n)
{
    uint32_t k;
    if (c->cap == 0)
        return 0;
    for (k = 0; k < n && find(c, blocks[k]) != NIL; k++)
        ;
    return k;
}

/* Evict the least recently used block; its node goes to the spare stack. */
static void evict(serve_pcache *c)
{
    uint32_t node = c->tail;
    unlink_node(c, node);
    table_remove(c, c->key[node]);
    c->next[node] = c->spare;
    c->spare = node;
    c->count--;
}

void serve_pcache_room(serve_pcache *c, double held)
{
    double free_blocks;
    if (c == NULL || !(c->kv > 0))
        return;
    free_blocks = held < c->kv ? floor((c->kv - held) / c->block) : 0;
    c->limit = free_blocks < c->cap ? (uint32_t)free_blocks : c->cap;
    while (c->count > c->limit)
        evict(c);
}

void serve_pcache_insert(serve_pcache *c, const uint32_t *blocks, uint32_t n)
{
    uint32_t k;
    if (c->limit == 0)
        return;
    for (k = n; k-- > 0;) {
        uint32_t key = blocks[k], node = find(c, key);
        size_t s;
        if (node != NIL) { /* a hit: most recently used */
            unlink_node(c, node);
            push_front(c, node);
            continue;
        }
        if (c->count == c->limit)
            evict(c); /* the least recently used */
        if (c->spare != NIL) {
            node = c->spare;
            c->spare = c->next[node];
        } else {
            node = c->used++;
        }
        c->count++;
        c->key[node] = key;
        push_front(c, node);
        for (s = slot_of(c, key); c->slot[s] != NIL; s = (s + 1) & c->mask)
            ;
        c->slot[s] = node;
    }
}

serve_pcache *serve_pcaches_new(const afd_serve_config *cfg, unsigned n, int *fail)
{
    serve_pcache *c;
    unsigned i;
    uint32_t cap = cfg->prefix_blocks;
    if (cfg->prefix_kv_tokens > 0) { /* the blocks of the whole memory, at most prefix_blocks */
        double whole = floor(cfg->prefix_kv_tokens / cfg->block_size);
        if (cap == 0 || whole < cap)
            cap = whole < UINT32_MAX - 1 ? (uint32_t)whole : UINT32_MAX - 1;
    } else if (cap == 0) {
        return NULL;
    }
    c = calloc(n, sizeof *c);
    if (c == NULL) {
        *fail = 1;
        return NULL;
    }
    for (i = 0; i < n; i++) {
        if (serve_pcache_init(&c[i], cap) != 0)
            *fail = 1;
        c[i].block = cfg->block_size;
        c[i].kv = cfg->prefix_kv_tokens;
    }
    return c;
}

void serve_pcaches_free(serve_pcache *c, unsigned n)
{
    unsigned i;
    if (c == NULL)
        return;
    for (i = 0; i < n; i++)
        serve_pcache_free(&c[i]);
    free(c);
}

void serve_prefix_start(const serve_pcache *c, afd_serve_engine *e, uint32_t r)
{
    afd_serve_request *q = afd_serve_req(e, r);
    uint64_t tokens;
    if (c == NULL)
        return;
    tokens = (uint64_t)serve_pcache_match(c, q->blocks, q->n_blocks) * c->block;
    q->cached = tokens < q->prompt ? (uint32_t)tokens : q->prompt;
}

void serve_prefix_done(serve_pcache *c, afd_serve_engine *e, uint32_t r)
{
    const afd_serve_request *q = afd_serve_req(e, r);
    if (c != NULL)
        serve_pcache_insert(c, q->blocks, q->n_blocks);
}
