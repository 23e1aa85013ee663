/* workload.c: workloads from traces, the geometric model, or given statistics. */
#include <config.h>

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "afd_tail.h"
#include "afd_workload.h"
#include "internal.h"

#define PROGRESS_EVERY (1u << 16)

static void init(afd_workload *w, afd_workload_kind kind)
{
    memset(w, 0, sizeof *w);
    w->kind = kind;
    w->mu_p = w->mu_d = NAN;
    w->tail_alpha = w->tail_alpha_se = NAN;
    afd_arrivals_none(&w->arrivals);
}

const char *afd_workload_kind_name(afd_workload_kind kind)
{
    switch (kind) {
    case AFD_WORKLOAD_TRACE: return "trace";
    case AFD_WORKLOAD_GEOMETRIC: return "geometric";
    case AFD_WORKLOAD_GIVEN: return "given";
    }
    return "unknown";
}

void afd_workload_free(afd_workload *w)
{
    if (w == NULL)
        return;
    free(w->prompt);
    free(w->decode);
    free(w->time);
    free(w->pairs);
    free(w->blocks);
    free(w->block_start);
    w->blocks = NULL;
    w->block_start = NULL;
    w->n_block_ids = 0;
    w->prompt = w->decode = NULL;
    w->time = NULL;
    w->pairs = NULL;
    w->n_kept = 0;
    w->n_pairs = 0;
}

/* ------------------------------------------------ distinct (P, D) pairs */

/* The distinct pairs are counted in a fixed open-addressing hash table of
 * PAIR_SLOTS slots (12 MiB), which absorbs the repeats of frequent pairs;
 * when it is half full its pairs are sorted and merged into the sorted array
 * of all distinct pairs so far, and it starts empty again.  Memory: the
 * table plus 24 bytes per distinct pair, however many rows there are; time:
 * O(1) per row plus O(n_pairs) per merge. */
#define PAIR_BITS 19
#define PAIR_SLOTS ((size_t)1 << PAIR_BITS)

typedef struct pair_acc {
    afd_workload_pair *v; /* sorted distinct pairs (count >= 1) */
    size_t n, cap;
    afd_workload_pair *tab; /* hash table; count == 0: empty slot */
    size_t used;
    size_t max; /* 0: no limit */
} pair_acc;

static int pair_cmp(const void *a, const void *b)
{
    const afd_workload_pair *x = a, *y = b;
    if (x->prompt != y->prompt)
        return x->prompt < y->prompt ? -1 : 1;
    return (x->decode > y->decode) - (x->decode < y->decode);
}

/* Merge the table into the sorted array and empty it.  Pass 1 adds the
 * counts of pairs already present (both sides sorted, one linear walk);
 * pass 2 merges the new ones from the back, in place. */
static afd_status pair_flush(pair_acc *a)
{
    afd_workload_pair *b = a->tab;
    size_t k = 0, j, i, o;
    for (j = 0; j < PAIR_SLOTS; j++)
        if (b[j].count != 0)
            b[k++] = b[j];
    qsort(b, k, sizeof *b, pair_cmp);
    for (i = 0, j = 0; i < a->n && j < k;) {
        int c = pair_cmp(&a->v[i], &b[j]);
        if (c < 0) {
            i++;
        } else if (c > 0) {
            j++;
        } else {
            a->v[i++].count += b[j].count;
            b[j++].count = 0;
        }
    }
    for (i = 0, j = 0; j < k; j++)
        if (b[j].count != 0)
            b[i++] = b[j];
    k = i;
    if (a->max != 0 && a->n + k > a->max)
        return AFD_ELIMIT;
    if (a->n + k > a->cap) {
        size_t ncap = a->cap + a->cap / 2 > a->n + k ? a->cap + a->cap / 2 : a->n + k;
        afd_workload_pair *nv;
        if (ncap > SIZE_MAX / sizeof *nv)
            return AFD_ENOMEM;
        nv = realloc(a->v, ncap * sizeof *nv);
        if (nv == NULL)
            return AFD_ENOMEM;
        a->v = nv;
        a->cap = ncap;
    }
    for (o = a->n + k, i = a->n, j = k; j > 0;) {
        if (i > 0 && pair_cmp(&a->v[i - 1], &b[j - 1]) > 0)
            a->v[--o] = a->v[--i];
        else
            a->v[--o] = b[--j];
    }
    a->n += k;
    memset(b, 0, PAIR_SLOTS * sizeof *b);
    a->used = 0;
    return AFD_OK;
}

static afd_status pair_add(pair_acc *a, uint64_t p, uint64_t d)
{
    /* splitmix64's finaliser of a combination of the two */
    uint64_t h = p * UINT64_C(0x9e3779b97f4a7c15) ^ d;
    size_t s;
    h = (h ^ (h >> 30)) * UINT64_C(0xbf58476d1ce4e5b9);
    h = (h ^ (h >> 27)) * UINT64_C(0x94d049bb133111eb);
    h ^= h >> 31;
    for (s = (size_t)(h >> (64 - PAIR_BITS));; s = (s + 1) & (PAIR_SLOTS - 1)) {
        afd_workload_pair *e = &a->tab[s];
        if (e->count == 0)
            break;
        if (e->prompt == p && e->decode == d) {
            e->count++;
            return AFD_OK;
        }
    }
    if (a->used == PAIR_SLOTS / 2) {
        afd_status st = pair_flush(a);
        if (st != AFD_OK)
            return st;
        return pair_add(a, p, d);
    }
    a->tab[s] = (afd_workload_pair){p, d, 1};
    a->used++;
    return AFD_OK;
}

/* Append (p, d) to the kept rows, doubling the arrays as needed. */
static afd_status keep(afd_workload *w, size_t *cap, size_t max_rows, uint64_t p, uint64_t d,
                       int timed, double t)
{
    if (max_rows != 0 && w->n_kept >= max_rows)
        return AFD_ELIMIT;
    if (w->n_kept == *cap) {
        size_t ncap = *cap ? 2 * *cap : 4096;
        uint64_t *np, *nd;
        if (ncap > SIZE_MAX / sizeof(uint64_t))
            return AFD_ENOMEM;
        np = realloc(w->prompt, ncap * sizeof *np);
        if (np == NULL)
            return AFD_ENOMEM;
        w->prompt = np;
        nd = realloc(w->decode, ncap * sizeof *nd);
        if (nd == NULL)
            return AFD_ENOMEM;
        w->decode = nd;
        if (timed) {
            double *nt = realloc(w->time, ncap * sizeof *nt);
            if (nt == NULL)
                return AFD_ENOMEM;
            w->time = nt;
        }
        *cap = ncap;
    }
    w->prompt[w->n_kept] = p;
    w->decode[w->n_kept] = d;
    if (timed)
        w->time[w->n_kept] = t;
    w->n_kept++;
    return AFD_OK;
}

/* ------------------------------------------------------ prompt blocks */

/* The kept requests' blocks: an arena of dense ids, and while reading an
 * open-addressing table (linear probing, load <= 1/2) from a trace's hash to
 * its dense id. */
typedef struct block_acc {
    uint64_t *hash;  /* table keys */
    uint32_t *id;    /* table values + 1 (0: empty slot) */
    size_t slots, used;
    size_t n, cap;   /* arena length and capacity */
    size_t n_start, cap_start;
} block_acc;

static size_t block_slot(uint64_t h, size_t slots)
{
    h ^= h >> 33; /* the finalizer of MurmurHash3 (Appleby) */
    h *= UINT64_C(0xff51afd7ed558ccd);
    h ^= h >> 33;
    return (size_t)h & (slots - 1);
}

static afd_status block_grow(block_acc *a)
{
    size_t slots = a->slots ? 2 * a->slots : 1 << 12, k, s;
    uint64_t *hash = malloc(slots * sizeof *hash);
    uint32_t *id = calloc(slots, sizeof *id);
    if (hash == NULL || id == NULL) {
        free(hash);
        free(id);
        return AFD_ENOMEM;
    }
    for (k = 0; k < a->slots; k++)
        if (a->id[k] != 0) {
            for (s = block_slot(a->hash[k], slots); id[s] != 0; s = (s + 1) & (slots - 1))
                ;
            hash[s] = a->hash[k];
            id[s] = a->id[k];
        }
    free(a->hash);
    free(a->id);
    a->hash = hash;
    a->id = id;
    a->slots = slots;
    return AFD_OK;
}

/* Append the blocks of the next kept request to w. */
static afd_status block_keep(block_acc *a, afd_workload *w, const uint64_t *h, size_t n)
{
    size_t k, s;
    afd_status st;
    uint64_t *starts = afd_priv_grow(w->block_start, &a->cap_start, a->n_start + 2,
                                     sizeof *starts, 4096);
    uint32_t *ids;
    if (starts == NULL)
        return AFD_ENOMEM;
    w->block_start = starts;
    if (a->n_start == 0)
        w->block_start[a->n_start++] = 0;
    if (n > 0) {
        if (n > SIZE_MAX / 8 - a->n ||
            (ids = afd_priv_grow(w->blocks, &a->cap, a->n + n, sizeof *ids, 1 << 16)) == NULL)
            return AFD_ENOMEM;
        w->blocks = ids;
    }
    for (k = 0; k < n; k++) {
        if (2 * (a->used + 1) > a->slots && (st = block_grow(a)) != AFD_OK)
            return st;
        for (s = block_slot(h[k], a->slots); a->id[s] != 0 && a->hash[s] != h[k];
             s = (s + 1) & (a->slots - 1))
            ;
        if (a->id[s] == 0) {
            if (a->used >= UINT32_MAX - 1)
                return AFD_ELIMIT;
            a->hash[s] = h[k];
            a->id[s] = (uint32_t)++a->used;
        }
        w->blocks[a->n++] = a->id[s] - 1;
    }
    w->block_start[a->n_start++] = a->n;
    return AFD_OK;
}

static void pair_fail(afd_error *err, afd_status st, long line, size_t max)
{
    if (st == AFD_ELIMIT)
        afd_priv_fail(err, st, line, 0,
                      "trace has more than %zu distinct (P, D) pairs, the limit for keeping "
                      "them in memory",
                      max);
    else
        afd_priv_fail(err, st, line, 0, "out of memory keeping the distinct (P, D) pairs");
}

/* The statistics of a trace read with no_moments: only the count is known. */
static void no_moments(afd_renewal_stats *s, uint64_t n)
{
    s->n = n;
    s->theta = s->nu = s->theta_se = s->nu_se = s->cov_theta_nu = s->ey2 = NAN;
    s->mean_p = s->mean_d = NAN;
}

afd_status afd_workload_from_reader(afd_trace *reader, const afd_workload_trace_options *opt,
                                    afd_workload *out, afd_error *err)
{
    static const afd_workload_trace_options defaults;
    afd_renewal_acc *acc;
    afd_hill *hill;
    afd_arrivals_acc *arr = NULL;
    afd_trace_row row;
    int timed;
    afd_status st;
    size_t cap = 0;
    long last_line = 1;
    uint64_t used = 0;
    pair_acc pairs = {0};
    block_acc blocks = {0};
    int keep_blocks = opt != NULL && opt->keep_rows && opt->keep_blocks &&
                      afd_trace_hash_name(reader) != NULL;
    char shown[168]; /* a column name in a message */

    if (opt == NULL)
        opt = &defaults;
    init(out, AFD_WORKLOAD_TRACE);
    afd_error_clear(err);
    acc = afd_renewal_acc_alloc();
    hill = afd_hill_alloc(AFD_HILL_KMAX);
    timed = afd_trace_time_name(reader) != NULL;
    if (timed)
        arr = afd_arrivals_acc_alloc();
    if (opt->keep_pairs) {
        pairs.tab = calloc(PAIR_SLOTS, sizeof *pairs.tab);
        pairs.max = opt->max_pairs;
    }
    if (acc == NULL || hill == NULL || (timed && arr == NULL) ||
        (opt->keep_pairs && pairs.tab == NULL)) {
        afd_renewal_acc_free(acc);
        afd_hill_free(hill);
        afd_arrivals_acc_free(arr);
        free(pairs.tab);
        return afd_priv_fail(err, AFD_ENOMEM, 0, 0, "out of memory");
    }

    while ((st = afd_trace_next(reader, &row, err)) == AFD_OK) {
        uint64_t d;
        out->rows++;
        last_line = row.line;
        if (opt->progress != NULL && out->rows % PROGRESS_EVERY == 0)
            opt->progress(opt->progress_ctx, out->rows, afd_trace_bytes(reader));
        if (row.output <= opt->decode_offset) {
            if (out->skipped++ == 0)
                out->first_skipped_line = row.line;
            continue;
        }
        d = row.output - opt->decode_offset;
        used++;
        if (!opt->no_moments) {
            /* an empty prompt is one token, as every model reads it */
            afd_workload_pair e = {row.prompt, d, 1};
            st = afd_renewal_acc_add(acc, afd_workload_prompt_tokens(e), d);
        } else {
            st = AFD_OK;
        }
        if (st == AFD_ERANGE) {
            const char *nm = afd_trace_prompt_name(reader);
            afd_priv_fail(err, st, row.line, 0,
                          "values too large for the exact accumulator: %s=%llu, D=%llu",
                          afd_priv_show(nm, strlen(nm), shown, sizeof shown),
                          (unsigned long long)row.prompt, (unsigned long long)d);
            break;
        }
        if (d > out->max_d)
            out->max_d = d;
        if (!opt->no_moments)
            afd_hill_add(hill, (double)d);
        if (timed && afd_arrivals_add(arr, row.time, row.line) != AFD_OK) {
            const char *nm = afd_trace_time_name(reader);
            st = afd_priv_fail(err, AFD_EPARSE, row.line, 0, "time '%s' is not finite",
                               afd_priv_show(nm, strlen(nm), shown, sizeof shown));
            break;
        }
        if (opt->keep_rows &&
            (st = keep(out, &cap, opt->max_rows, row.prompt, d, timed, row.time)) != AFD_OK) {
            afd_priv_fail(err, st, row.line, 0,
                          opt->max_rows && out->n_kept >= opt->max_rows
                              ? "trace has more than %zu usable rows, the limit for keeping "
                                "them in memory"
                              : "out of memory keeping %zu rows",
                          opt->max_rows && out->n_kept >= opt->max_rows ? opt->max_rows
                                                                         : out->n_kept);
            break;
        }
        if (keep_blocks && (st = block_keep(&blocks, out, row.hash_ids, row.n_hash)) != AFD_OK) {
            afd_priv_fail(err, st, row.line, 0,
                          st == AFD_ELIMIT ? "more than 2^32 - 2 distinct block hashes"
                                           : "out of memory keeping the block hashes");
            break;
        }
        if (opt->keep_pairs && (st = pair_add(&pairs, row.prompt, d)) != AFD_OK) {
            pair_fail(err, st, row.line, opt->max_pairs);
            break;
        }
    }
    out->filtered = afd_trace_filtered(reader);
    if (st == AFD_EOF && opt->keep_pairs) {
        st = pair_flush(&pairs);
        if (st != AFD_OK) {
            pair_fail(err, st, 0, opt->max_pairs);
        } else {
            /* give back the spare capacity (shrinking: cannot fail for long) */
            afd_workload_pair *v = pairs.n > 0 ? realloc(pairs.v, pairs.n * sizeof *v) : NULL;
            out->pairs = v != NULL ? v : pairs.v;
            out->n_pairs = pairs.n;
            pairs.v = NULL;
            st = AFD_EOF;
        }
    }
    free(pairs.tab);
    free(pairs.v);
    free(blocks.hash);
    free(blocks.id);
    out->n_block_ids = blocks.used;
    if (keep_blocks && st == AFD_EOF && blocks.n_start == 0) {
        /* no kept row: an empty arena */
        out->block_start = calloc(1, sizeof *out->block_start);
        if (out->block_start == NULL)
            st = afd_priv_fail(err, AFD_ENOMEM, 0, 0, "out of memory");
    }
    if (st == AFD_EOF) {
        st = AFD_OK;
        if (timed)
            afd_arrivals_stats(arr, &out->arrivals);
        if (out->rows == 0 && out->filtered > 0)
            st = afd_priv_fail(err, AFD_EEMPTY, 0, 0, "no row matches the filters (%llu rows "
                                                      "read)",
                               (unsigned long long)out->filtered);
        else if (out->rows == 0)
            st = afd_priv_fail(err, AFD_EEMPTY, last_line, 0, "no data rows after the header");
        else if (used == 0)
            st = afd_priv_fail(err, AFD_EEMPTY, 0, 0,
                               "no usable rows: all %llu data rows have D = %s - %llu <= 0 "
                               "(first on line %ld)",
                               (unsigned long long)out->rows,
                               afd_priv_show(afd_trace_output_name(reader),
                                             strlen(afd_trace_output_name(reader)), shown,
                                             sizeof shown),
                               (unsigned long long)opt->decode_offset, out->first_skipped_line);
        else if (opt->no_moments)
            no_moments(&out->stats, used);
        else
            st = afd_renewal_acc_stats(acc, &out->stats);
        if (st == AFD_OK && !opt->no_moments && out->stats.n >= 11) {
            out->tail_k = afd_hill_default_k(out->stats.n, AFD_HILL_KMAX);
            afd_hill_estimate(hill, out->tail_k, &out->tail_alpha, &out->tail_alpha_se);
        }
    }
    afd_renewal_acc_free(acc);
    afd_hill_free(hill);
    afd_arrivals_acc_free(arr);
    if (st != AFD_OK)
        afd_workload_free(out);
    return st;
}

afd_status afd_workload_from_trace(const char *path, const afd_workload_trace_options *opt,
                                   afd_workload *out, afd_error *err)
{
    afd_trace *reader;
    afd_trace_options columns;
    afd_status st;

    init(out, AFD_WORKLOAD_TRACE);
    memset(&columns, 0, sizeof columns);
    if (opt != NULL)
        columns = opt->columns;
    if (opt == NULL || !(opt->keep_rows && opt->keep_blocks))
        columns.hash_col = ""; /* block hashes unread unless kept */
    st = afd_trace_open(path, &columns, &reader, err);
    if (st != AFD_OK)
        return st;
    st = afd_workload_from_reader(reader, opt, out, err);
    afd_trace_close(reader);
    return st;
}

afd_status afd_workload_geometric(double mu_p, double mu_d, afd_workload *out)
{
    init(out, AFD_WORKLOAD_GEOMETRIC);
    out->mu_p = mu_p;
    out->mu_d = mu_d;
    return afd_renewal_geometric(mu_p, mu_d, &out->stats);
}

afd_status afd_workload_given(double theta, double nu, afd_workload *out)
{
    init(out, AFD_WORKLOAD_GIVEN);
    return afd_renewal_given(theta, nu, &out->stats);
}
