/* test_prefix.c: the prefix cache of the serving simulator against
 * independent LRU replays, hand-computed timelines and Che's approximation
 * worked by hand. */
#include <config.h>

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "afd_prefix.h"
#include "afd_serve.h"
#include "afd_trace.h"
#include "afd_workload.h"
#include "hw_test_util.h"
#include "serve_internal.h"
#include "test_util.h"

/* ---- a brute-force LRU: an array in recency order, index 0 the most recent */

typedef struct brute {
    uint32_t *v;
    size_t n, cap;
} brute;

static long brute_find(const brute *b, uint32_t key)
{
    size_t i;
    for (i = 0; i < b->n; i++)
        if (b->v[i] == key)
            return (long)i;
    return -1;
}

static void brute_touch(brute *b, uint32_t key)
{
    long at = brute_find(b, key);
    size_t end = at >= 0 ? (size_t)at : b->n < b->cap ? b->n++ : b->n - 1;
    memmove(b->v + 1, b->v, end * sizeof *b->v);
    b->v[0] = key;
}

/* A small deterministic generator (Knuth's MMIX LCG, top bits). */
static uint32_t lcg(uint64_t *s)
{
    *s = *s * UINT64_C(6364136223846793005) + UINT64_C(1442695040888963407);
    return (uint32_t)(*s >> 33);
}

/* Random requests of 0 to 6 blocks over 40 ids, caches of 1 to 17 blocks:
 * the leading run found and the whole content agree with the brute force
 * after every request (evictions and the table's deletions included). */
static void cache_against_brute_force(void **state)
{
    uint64_t s = 2385;
    uint32_t cap;
    (void)state;
    for (cap = 1; cap <= 17; cap++) {
        serve_pcache c;
        brute b;
        int req;
        b.v = malloc(cap * sizeof *b.v);
        b.n = 0;
        b.cap = cap;
        assert_non_null(b.v);
        assert_int_equal(serve_pcache_init(&c, cap), 0);
        for (req = 0; req < 3000; req++) {
            uint32_t blocks[6], n = lcg(&s) % 7, k, run = 0, id;
            for (k = 0; k < n; k++)
                blocks[k] = lcg(&s) % 40;
            while (run < n && brute_find(&b, blocks[run]) >= 0)
                run++;
            assert_int_equal(serve_pcache_match(&c, blocks, n), run);
            serve_pcache_insert(&c, blocks, n);
            for (k = n; k-- > 0;) /* last to first: blocks[0] the most recent */
                brute_touch(&b, blocks[k]);
            for (id = 0; id < 40; id++)
                assert_int_equal(serve_pcache_match(&c, &id, 1), brute_find(&b, id) >= 0);
        }
        serve_pcache_free(&c);
        free(b.v);
    }
}

/* ---- the exact hit fraction of a trace replayed through one LRU, by stack
 * distances: a block is in an LRU cache of C blocks iff fewer than C distinct
 * blocks were touched after its last touch (Mattson et al. 1970).  The last
 * touches are marked in a Fenwick tree over touch times; the raw hash ids
 * are mapped to indices by sorting. */

typedef struct replay {
    uint64_t *ids;    /* every block reference, as read */
    uint64_t *start;  /* per request, offsets into ids */
    uint64_t *prompt;
    size_t n, refs;
} replay;

static int cmp_u64(const void *a, const void *b)
{
    uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;
    return x < y ? -1 : x > y;
}

static void read_replay(const char *path, replay *rp)
{
    afd_trace *t;
    afd_trace_row row;
    afd_error err;
    size_t cap = 1 << 18, rcap = 1 << 13;
    afd_status st;
    memset(rp, 0, sizeof *rp);
    rp->ids = malloc(cap * sizeof *rp->ids);
    rp->start = malloc((rcap + 1) * sizeof *rp->start);
    rp->prompt = malloc(rcap * sizeof *rp->prompt);
    assert_int_equal(afd_trace_open(path, NULL, &t, &err), AFD_OK);
    rp->start[0] = 0;
    while ((st = afd_trace_next(t, &row, &err)) == AFD_OK) {
        size_t k;
        assert_true(rp->n < rcap && rp->refs + row.n_hash <= cap);
        for (k = 0; k < row.n_hash; k++)
            rp->ids[rp->refs++] = row.hash_ids[k];
        rp->prompt[rp->n] = row.prompt;
        rp->start[++rp->n] = rp->refs;
    }
    assert_int_equal(st, AFD_EOF);
    afd_trace_close(t);
}

static void fen_add(int64_t *f, size_t n, size_t i, int64_t v)
{
    for (i++; i <= n; i += i & (~i + 1))
        f[i] += v;
}

static int64_t fen_sum(const int64_t *f, size_t i) /* marks at times < i */
{
    int64_t s = 0;
    for (; i > 0; i -= i & (~i + 1))
        s += f[i];
    return s;
}

static double replay_hit(const replay *rp, uint64_t cap, uint32_t block)
{
    uint64_t *sorted = malloc(rp->refs * sizeof *sorted);
    int64_t *fen = calloc(rp->refs + 1, sizeof *fen), marked = 0;
    size_t *last, n_u = 0, k, j, now = 0;
    double hit = 0, all = 0;
    memcpy(sorted, rp->ids, rp->refs * sizeof *sorted);
    qsort(sorted, rp->refs, sizeof *sorted, cmp_u64);
    for (k = 0; k < rp->refs; k++)
        if (k == 0 || sorted[k] != sorted[k - 1])
            sorted[n_u++] = sorted[k];
    last = malloc(n_u * sizeof *last);
    for (k = 0; k < n_u; k++)
        last[k] = SIZE_MAX;
    for (j = 0; j < rp->n; j++) {
        uint64_t run = 0, cached;
        for (k = rp->start[j]; k < rp->start[j + 1]; k++) {
            uint64_t *at = bsearch(&rp->ids[k], sorted, n_u, sizeof *sorted, cmp_u64);
            size_t u = (size_t)(at - sorted);
            /* distinct blocks touched after u's last touch */
            if (last[u] == SIZE_MAX || (uint64_t)(marked - fen_sum(fen, last[u] + 1)) >= cap)
                break;
            run++;
        }
        cached = run * block < rp->prompt[j] ? run * block : rp->prompt[j];
        hit += (double)cached;
        all += (double)rp->prompt[j];
        for (k = rp->start[j + 1]; k-- > rp->start[j];) { /* touches, last block first */
            uint64_t *at = bsearch(&rp->ids[k], sorted, n_u, sizeof *sorted, cmp_u64);
            size_t u = (size_t)(at - sorted);
            if (last[u] != SIZE_MAX)
                fen_add(fen, rp->refs, last[u], -1);
            else
                marked++;
            last[u] = now;
            fen_add(fen, rp->refs, now++, 1);
        }
    }
    free(sorted);
    free(fen);
    free(last);
    return hit / all;
}

/* One instance of arch with a cache of cap 512-token blocks, batches of one
 * prefill, replaying w's rows at times[]. */
static afd_serve_params one_instance(const char *arch, const afd_hw *hw, const afd_workload *w,
                                     const double *times, uint32_t cap, unsigned chunk)
{
    afd_serve_params p;
    memset(&p, 0, sizeof p);
    p.policy = afd_serve_policy_find(arch);
    p.hw = hw;
    p.config.instances = p.config.prefill = p.config.decode = 1;
    p.config.prefill_bmax = 1;
    p.config.decode_bmax = 16;
    p.config.chunk = chunk;
    p.config.prefix_blocks = cap;
    p.config.block_size = 512;
    p.workload = w;
    p.times = times;
    p.n_times = p.requests = w->n_kept;
    p.ttft_slo = p.tpot_slo = INFINITY;
    return p;
}

/* One instance, one prefill at a time, requests in trace order: its
 * prefix_hit is the LRU replay's exactly, for several capacities, whether
 * the instance batches (colloc, disagg with batch 1) or chunks (at a load so
 * light that each prefill ends before the next request comes). */
static void mooncake_replay_exact(void **state)
{
    static const uint32_t caps[] = {1, 700, 4000, 16000, 100000};
    const char *dir = getenv("NBDATA");
    char path[4096];
    afd_workload w;
    afd_workload_trace_options opt;
    afd_error err;
    replay rp;
    afd_hw hw = test_laws("s", 0.011, 7e-5, 6e-10, 0.02, 5e-5, 3e-8);
    double *times;
    size_t i, c;
    (void)state;
    if (dir == NULL)
        skip();
    snprintf(path, sizeof path, "%s/mooncake/synthetic_trace.jsonl.gz", dir);
    memset(&opt, 0, sizeof opt);
    opt.keep_rows = opt.keep_blocks = 1;
    assert_int_equal(afd_workload_from_trace(path, &opt, &w, &err), AFD_OK);
    assert_int_equal(w.n_kept, 3993);
    assert_non_null(w.block_start);
    assert_int_equal(w.block_start[w.n_kept], 121877);
    assert_int_equal(w.n_block_ids, 43924);
    read_replay(path, &rp);
    assert_int_equal(rp.n, w.n_kept);
    times = malloc(w.n_kept * sizeof *times);
    for (c = 0; c < sizeof caps / sizeof caps[0]; c++) {
        static const char *const arch[] = {"colloc", "disagg", "chunked"};
        double expect = replay_hit(&rp, caps[c], 512);
        size_t a;
        for (a = 0; a < 3; a++) {
            afd_serve_params p;
            afd_serve_result r;
            double stretch = a == 2 ? 1000 : 1; /* chunked: one prefill at a time */
            for (i = 0; i < w.n_kept; i++)
                times[i] = (w.time[i] - w.time[0]) * stretch;
            p = one_instance(arch[a], &hw, &w, times, caps[c], 2048);
            p.batches = 8;
            assert_int_equal(afd_serve_run(&p, &r, &err), AFD_OK);
            if (r.prefix_hit != expect)
                fail_msg("%s, %u blocks: prefix_hit %.17g, replay %.17g", arch[a], caps[c],
                         r.prefix_hit, expect);
            assert_true(r.prefix_hit_se > 0);
        }
        if (caps[c] == 16000) /* the figure the data's description gives */
            assert_close(expect, 0.54, 0, 0.005);
        if (caps[c] == 100000) /* more than the distinct blocks: no bound, 65% */
            assert_close(expect, 0.65, 0, 0.005);
    }
    free(times);
    free(rp.ids);
    free(rp.start);
    free(rp.prompt);
    afd_workload_free(&w);
}

/* ---- timelines by hand */

static void load_memory(const char *text, afd_workload *w)
{
    afd_trace *t;
    afd_error err;
    afd_workload_trace_options opt;
    memset(&opt, 0, sizeof opt);
    opt.keep_rows = opt.keep_blocks = 1;
    assert_int_equal(afd_trace_open_memory(text, strlen(text), NULL, &t, &err), AFD_OK);
    assert_int_equal(afd_workload_from_reader(t, &opt, w, &err), AFD_OK);
    afd_trace_close(t);
}

/* Three requests 10 s apart on an idle instance (laws in seconds: prefill
 * 0.2 + 1e-3 P + 1e-7 P^2, one output token), blocks of 512 tokens:
 *   1: P = 1300, blocks 5 6 7: nothing cached, 0.2 + 1.3 + 0.169 = 1.669;
 *   2: P = 1200, blocks 5 6 9: 5 and 6 cached (C = 1024), prefills 176
 *      tokens: 0.2 + 0.176 + 1e-7 (1200^2 - 1024^2) = 0.4151424;
 *   3: P = 1000, blocks 5 6: both cached, C = min(1024, 1000) = 1000; the
 *      last token is computed: 0.2 + 0.001 + 1e-7 (1000^2 - 999^2) = 0.2011999.
 * Hit = (0 + 1024 + 1000) / 3500.  With a cache of 2 blocks, request 1
 * leaves 5 and 6 (its first blocks, most recent), so the same; with 1 block
 * only 5: request 2 finds 512 and leaves 5 again, request 3 finds 512. */
static void hand_timeline(void **state)
{
    static const char trace[] =
        "{\"timestamp\": 0, \"input_length\": 1300, \"output_length\": 1, \"hash_ids\": [5, 6, 7]}\n"
        "{\"timestamp\": 10000, \"input_length\": 1200, \"output_length\": 1, \"hash_ids\": [5, 6, 9]}\n"
        "{\"timestamp\": 20000, \"input_length\": 1000, \"output_length\": 1, \"hash_ids\": [5, 6]}\n";
    static const char *const arch[] = {"colloc", "disagg", "chunked"};
    afd_workload w;
    afd_hw hw = test_laws("s", 0.2, 1e-3, 1e-7, 0.01, 0, 0);
    double times[3] = {0, 10, 20};
    size_t a;
    (void)state;
    load_memory(trace, &w);
    { /* hashes 5 6 7, 5 6 9, 5 6 become dense ids in order of first appearance */
        static const uint32_t ids[] = {0, 1, 2, 0, 1, 3, 0, 1};
        static const uint64_t start[] = {0, 3, 6, 8};
        assert_int_equal(w.n_block_ids, 4);
        assert_memory_equal(w.blocks, ids, sizeof ids);
        assert_memory_equal(w.block_start, start, sizeof start);
    }
    for (a = 0; a < 3; a++) {
        uint32_t cap;
        for (cap = 1; cap <= 3; cap++) {
            afd_serve_params p;
            afd_serve_result r;
            afd_error err;
            /* one chunk: the chunked iteration is the prefill */
            p = one_instance(arch[a], &hw, &w, times, cap, 4096);
            p.batches = 3;
            assert_int_equal(afd_serve_run(&p, &r, &err), AFD_OK);
            if (cap >= 2) {
                assert_close(r.prefix_hit, 2024.0 / 3500, 1e-15, 0);
                assert_close(r.ttft.mean, (1.669 + 0.4151424 + 0.2011999) / 3, 1e-12, 0);
            } else {
                assert_close(r.prefix_hit, 1024.0 / 3500, 1e-15, 0);
                /* 2: C = 512, 688 tokens: 0.2 + 0.688 + 1e-7 (1200^2 - 512^2) = 1.0057856;
                 * 3: C = 512, 488 tokens: 0.2 + 0.488 + 1e-7 (1000^2 - 512^2) = 0.7617856 */
                assert_close(r.ttft.mean, (1.669 + 1.0057856 + 0.7617856) / 3, 1e-12, 0);
            }
        }
    }
    afd_workload_free(&w);
}

/* A prefix cache in the KV memory: 60 tokens per instance, blocks of 10
 * tokens (cap 6), six requests 10 s apart, one output token each, so that
 * the only running request is the one being prefilled and the cache may
 * hold floor((60 - P) / 10) blocks from its prefill's start to the next
 * prefill (6 while the instance is idle).  Cache contents most recent
 * first:
 *   1: P 30, blocks 1 2 3: miss; limit 3; after: 1 2 3
 *   2: P 10, block 4: miss; limit 5; after: 4 1 2 3
 *   3: P 20, blocks 1 2: 20 cached; limit 4; after: 1 2 4 3
 *   4: P 40, blocks 5 6 7 8: miss; limit 2 evicts 3 and 4, then each
 *      insertion evicts the oldest: after: 5 6
 *   5: P 20, blocks 1 2: miss; limit 4; after: 1 2 5 6
 *   6: P 20, blocks 5 6: 20 cached.
 * Hit 40 / 140.  A fixed cache of 6 blocks keeps 1 and 2 through request 4
 * (after it: 5 6 7 8 1 2), so request 5 finds them: 60 / 140. */
static void kv_memory_by_hand(void **state)
{
    static const char trace[] =
        "{\"timestamp\": 0, \"input_length\": 30, \"output_length\": 1, \"hash_ids\": [1, 2, 3]}\n"
        "{\"timestamp\": 10000, \"input_length\": 10, \"output_length\": 1, \"hash_ids\": [4]}\n"
        "{\"timestamp\": 20000, \"input_length\": 20, \"output_length\": 1, \"hash_ids\": [1, 2]}\n"
        "{\"timestamp\": 30000, \"input_length\": 40, \"output_length\": 1, \"hash_ids\": [5, 6, "
        "7, 8]}\n"
        "{\"timestamp\": 40000, \"input_length\": 20, \"output_length\": 1, \"hash_ids\": [1, 2]}\n"
        "{\"timestamp\": 50000, \"input_length\": 20, \"output_length\": 1, \"hash_ids\": [5, "
        "6]}\n";
    static const struct {
        uint32_t blocks;
        double kv, hit;
    } runs[] = {
        {6, 0, 60.0 / 140},    /* the fixed cache */
        {6, 60, 40.0 / 140},   /* the memory of 60 tokens */
        {0, 60, 40.0 / 140},   /* no count of blocks: the memory's, 6 */
        {6, 1000, 60.0 / 140}, /* memory for 100 blocks but at most 6 kept */
        /* 45 tokens: limits 4 idle, 1, 3, 2, 0, 2, 2 during the prefills:
         * 1 leaves 1; 2 leaves 4 1; 3 finds 1 (10 tokens), and inserting 2
         * then 1 at a limit of 2 evicts 1 first, then 4: 1 2; 4 empties
         * the cache and keeps nothing; 5 leaves 1 2; 6 misses */
        {6, 45, 10.0 / 140},
    };
    static const char *const arch[] = {"colloc", "disagg", "chunked"};
    afd_workload w;
    afd_hw hw = test_laws("s", 0.2, 1e-3, 1e-7, 0.01, 0, 0);
    double times[6] = {0, 10, 20, 30, 40, 50};
    size_t a;
    (void)state;
    load_memory(trace, &w);
    for (a = 0; a < 3; a++) {
        afd_serve_params p = one_instance(arch[a], &hw, &w, times, 6, 4096);
        afd_serve_result r;
        afd_error err;
        size_t k;
        p.config.block_size = 10;
        p.batches = 2;
        for (k = 0; k < sizeof runs / sizeof runs[0]; k++) {
            p.config.prefix_blocks = runs[k].blocks;
            p.config.prefix_kv_tokens = runs[k].kv;
            assert_int_equal(afd_serve_run(&p, &r, &err), AFD_OK);
            assert_close(r.prefix_hit, runs[k].hit, 1e-15, 0);
        }
    }
    afd_workload_free(&w);
}

/* Two conversations, A (block 1) and B (block 2), alternate: twelve
 * one-block requests of 512 tokens, 10 s apart on four idle prefill
 * instances.  session and cache-aware keep each conversation on one
 * instance: only the first request of each misses, hit 10/12.  round-robin
 * sends A to instances 0 and 2, B to 1 and 3: four misses, hit 8/12. */
static void routers_keep_conversations(void **state)
{
    static const struct {
        afd_serve_router how;
        double hit;
    } want[] = {{AFD_SERVE_ROUTE_SESSION, 10.0 / 12},
                {AFD_SERVE_ROUTE_CACHE_AWARE, 10.0 / 12},
                {AFD_SERVE_ROUTE_ROUND_ROBIN, 8.0 / 12}};
    char trace[2048];
    double times[12];
    afd_workload w;
    afd_hw hw = test_laws("s", 0.2, 1e-3, 0, 0.01, 0, 0);
    size_t k, o = 0;
    (void)state;
    for (k = 0; k < 12; k++) {
        o += (size_t)snprintf(trace + o, sizeof trace - o,
                              "{\"input_length\": 512, \"output_length\": 2, \"hash_ids\": [%zu]}\n",
                              1 + k % 2);
        times[k] = 10.0 * (double)k;
    }
    load_memory(trace, &w);
    for (k = 0; k < sizeof want / sizeof want[0]; k++) {
        afd_serve_params p = one_instance("disagg", &hw, &w, times, 4, 512);
        afd_serve_result r;
        afd_error err;
        p.config.prefill = 4;
        p.config.router = want[k].how;
        p.batches = 2;
        assert_int_equal(afd_serve_run(&p, &r, &err), AFD_OK);
        assert_close(r.prefix_hit, want[k].hit, 1e-15, 0);
    }
    afd_workload_free(&w);
}

/* A run without block hashes cannot have a cache or the routers keyed by
 * them; cache-aware needs a cache. */
static void errors(void **state)
{
    static const char plain[] = "{\"input_length\": 10, \"output_length\": 2}\n";
    static const char hashed[] = "{\"input_length\": 10, \"output_length\": 2, \"hash_ids\": [1]}\n";
    afd_workload w, wh;
    afd_hw hw = test_laws("s", 0.2, 1e-3, 0, 0.01, 0, 0);
    afd_serve_params p;
    afd_serve_result r;
    afd_error err;
    (void)state;
    load_memory(plain, &w);
    load_memory(hashed, &wh);
    assert_null(w.block_start);
    memset(&p, 0, sizeof p);
    p.policy = afd_serve_policy_find("disagg");
    p.hw = &hw;
    p.config.prefill = p.config.decode = 2;
    p.config.prefill_bmax = p.config.decode_bmax = 1;
    p.config.block_size = 512;
    p.lambda = 1;
    p.requests = 10;
    p.batches = 2;
    p.workload = &w;
    p.config.prefix_blocks = 10;
    assert_int_equal(afd_serve_run(&p, &r, &err), AFD_EINVAL);
    assert_string_equal(err.text, "a prefix cache needs a trace kept with its block hashes");
    assert_true(isnan(r.prefix_hit));
    p.config.prefix_blocks = 0;
    p.config.router = AFD_SERVE_ROUTE_SESSION;
    assert_int_equal(afd_serve_run(&p, &r, &err), AFD_EINVAL);
    assert_string_equal(err.text, "this router needs a trace kept with its block hashes");
    p.workload = &wh;
    p.config.router = AFD_SERVE_ROUTE_CACHE_AWARE;
    assert_int_equal(afd_serve_run(&p, &r, &err), AFD_EINVAL);
    assert_string_equal(err.text, "the cache-aware router needs a prefix cache");
    p.config.prefix_blocks = 4;
    p.config.block_size = 0;
    assert_int_equal(afd_serve_run(&p, &r, &err), AFD_EINVAL);
    assert_string_equal(err.text, "the block size must be >= 1 token");
    p.config.block_size = 512;
    assert_int_equal(afd_serve_run(&p, &r, &err), AFD_OK);
    p.config.prefix_blocks = 0;
    p.config.router = AFD_SERVE_ROUTE_GLOBAL;
    assert_int_equal(afd_serve_run(&p, &r, &err), AFD_OK);
    assert_true(isnan(r.prefix_hit)); /* no cache */
    afd_workload_free(&w);
    afd_workload_free(&wh);
}

/* ---- Che's approximation worked by hand */

static void che_by_hand(void **state)
{
    /* Two requests of two blocks [0, 1], P = 1024, B = 512: two blocks fit
     * a cache of 2 (T infinite); each block's second reference hits:
     * h = 1024 / 2048 = 0.5. */
    static const uint32_t b1[] = {0, 1, 0, 1};
    static const uint64_t s1[] = {0, 2, 4}, p1[] = {1024, 1024};
    /* Four one-block requests: block 0 three times, block 1 once, C = 1:
     * q = 3/4, 1/4; x = exp(-T / 4) solves (1 - x^3) + (1 - x) = 1, i.e.
     * x^3 + x - 1 = 0, x = 0.68232780382801932 (its real root); h = 512 (3 - 1)
     * (1 - x^3) / 2048 = (1 - x^3) / 2 = x / 2.  The last request's block
     * holds 100 tokens (P = 100), so w_1 = 100 and h = 1024 x / 1636. */
    static const uint32_t b2[] = {0, 0, 0, 1};
    static const uint64_t s2[] = {0, 1, 2, 3, 4}, p2[] = {512, 512, 512, 100};
    afd_lru_che_params p = {b1, s1, p1, 2, 2, 512, 2};
    double h, x = 0.68232780382801932;
    afd_error err;
    (void)state;
    assert_int_equal(afd_lru_che_hit(&p, &h, &err), AFD_OK);
    assert_close(h, 0.5, 1e-15, 0);
    p.capacity = 1; /* T finite: both q = 1/2, 2 (1 - e^{-T/2}) = 1, held 1/2 */
    assert_int_equal(afd_lru_che_hit(&p, &h, &err), AFD_OK);
    assert_close(h, 0.25, 1e-9, 0);
    p = (afd_lru_che_params){b2, s2, p2, 4, 2, 512, 1};
    assert_int_equal(afd_lru_che_hit(&p, &h, &err), AFD_OK);
    assert_close(h, 1024 * x / 1636, 1e-9, 0);
    p.ids = 1; /* block id 1 out of range */
    assert_int_equal(afd_lru_che_hit(&p, &h, &err), AFD_EINVAL);
    assert_true(isnan(h));
    p.ids = 2;
    p.capacity = 0;
    assert_int_equal(afd_lru_che_hit(&p, &h, &err), AFD_EINVAL);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(cache_against_brute_force),
        cmocka_unit_test(mooncake_replay_exact),
        cmocka_unit_test(hand_timeline),
        cmocka_unit_test(kv_memory_by_hand),
        cmocka_unit_test(routers_keep_conversations),
        cmocka_unit_test(errors),
        cmocka_unit_test(che_by_hand),
    };
    RUN_TESTS(tests);
}
