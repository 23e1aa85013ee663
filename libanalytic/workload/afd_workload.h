/* libanalytic/workload/: what the requests look like.  Byte sources (plain,
 * gzip, zstd) and the CSV and JSON Lines trace readers (afd_csv.h,
 * afd_trace.h); the workload every command takes, with its statistics theta
 * and nu and the stationary slot load of Lemma 4.1 (afd_workload.h,
 * afd_renewal.h); the arrival rate and dispersion (afd_arrivals.h), the tail
 * index of the decode length (afd_tail.h) and length histograms
 * (afd_hist.h). */

/* afd_workload.h: the one workload abstraction every afdkit command uses.
 *
 * A workload is a request trace, the geometric model of Corollary 4.5, or
 * the statistics theta and nu given directly.  Each carries the renewal
 * statistics of Lemma 4.1 (afd_renewal_stats); a trace can also keep its
 * requests in memory for samplers and simulators.
 */
#ifndef AFD_WORKLOAD_H
#define AFD_WORKLOAD_H

#include <stddef.h>
#include <stdint.h>

#include "afd_arrivals.h"
#include "afd_renewal.h"
#include "afd_status.h"
#include "afd_trace.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef enum afd_workload_kind {
    AFD_WORKLOAD_TRACE = 1,
    AFD_WORKLOAD_GEOMETRIC,
    AFD_WORKLOAD_GIVEN
} afd_workload_kind;

/* One distinct (P, D) of a trace with the number of used requests that have
 * it (see keep_pairs). */
typedef struct afd_workload_pair {
    uint64_t prompt; /* P */
    uint64_t decode; /* D >= 1 */
    uint64_t count;  /* requests with this (P, D), >= 1 */
} afd_workload_pair;

typedef struct afd_workload {
    afd_workload_kind kind;
    afd_renewal_stats stats; /* theta, nu and their standard errors */
    double mu_p, mu_d;       /* GEOMETRIC: the two means; NaN otherwise */
    /* TRACE only */
    uint64_t rows;           /* data rows read */
    uint64_t skipped;        /* rows with D <= 0 after the decode offset */
    uint64_t filtered;       /* rows dropped by the row filters (not in rows) */
    long first_skipped_line; /* line of the first skipped row (0 if none) */
    uint64_t max_d;          /* largest D used */
    double tail_alpha;       /* Hill tail index of D (Appendix A.7); +inf: no
                                power-law tail; NaN if not estimated */
    double tail_alpha_se;    /* its standard error */
    size_t tail_k;           /* order statistics used (0 if not estimated) */
    size_t n_kept;           /* requests kept (keep_rows), D >= 1 each */
    uint64_t *prompt;        /* P of the kept requests, or NULL */
    uint64_t *decode;        /* D of the kept requests, or NULL */
    double *time;            /* arrival times (s) of the kept requests, or NULL
                                when the trace has no time column */
    /* The arrival process of the requests used (afd_arrivals.h); n = 0 and
       NaN when the trace has no time column or the workload is no trace. */
    afd_arrival_stats arrivals;
    size_t n_pairs;          /* distinct (P, D) of the used requests (keep_pairs) */
    afd_workload_pair *pairs; /* those pairs with their counts, sorted by P then
                                 D (the counts sum to stats.n), or NULL */
    /* keep_blocks: the prompt blocks of the kept requests, from the trace's
       block-hash column (afd_trace.h), each hash replaced by a dense id
       0 .. n_block_ids - 1 in order of first appearance (4 bytes a block):
       request j's blocks are blocks[block_start[j] .. block_start[j + 1]).
       NULL when not kept or the trace has no hash column. */
    uint32_t *blocks;
    uint64_t *block_start;   /* n_kept + 1 offsets */
    size_t n_block_ids;      /* distinct hashes */
} afd_workload;

typedef struct afd_workload_trace_options {
    afd_trace_options columns;
    uint64_t decode_offset;  /* D = output tokens - decode_offset */
    int keep_rows;           /* keep (P, D) of every used request in memory */
    size_t max_rows;         /* refuse to keep more than this many (0: no limit) */
    /* Called about every 2^16 rows with rows and bytes read so far; may be NULL. */
    void (*progress)(void *ctx, uint64_t rows, uint64_t bytes);
    void *progress_ctx;
    int keep_pairs;          /* keep the distinct (P, D) with their counts: memory
                                of 24 bytes per distinct pair (plus a fixed 12 MiB
                                while reading), whatever the number of rows */
    size_t max_pairs;        /* refuse more distinct pairs than this (0: no limit) */
    int keep_blocks;         /* with keep_rows: keep each row's prompt blocks too
                                (afd_workload.blocks) when the trace has them;
                                otherwise afd_workload_from_trace does not read
                                the block-hash column (columns.hash_col "") */
    int no_moments;          /* for readers of the rows or pairs only: no theta,
                                nu or tail index (stats NaN but n, tail_alpha
                                NaN), so no length is too large (up to 2^64 - 1) */
} afd_workload_trace_options;

/* Read a trace in one streaming pass and estimate theta and nu (eq. 15-16),
 * an empty prompt counted as one token (afd_workload_prompt_tokens),
 * and the tail index of D over the top floor(sqrt(n)) (10 to
 * AFD_HILL_KMAX) lifetimes (afd_tail.h).
 * Rows whose D = output - decode_offset is <= 0 are skipped and counted.
 * Errors: those of afd_trace_open/afd_trace_next; AFD_ERANGE when a row's
 * values are too large for the exact accumulator (never with no_moments); AFD_EEMPTY when no data
 * row or no usable row remains; AFD_ELIMIT when keep_rows exceeds max_rows
 * or keep_pairs max_pairs;
 * AFD_ELIMIT also when keep_blocks meets more than 2^32 - 1 distinct
 * hashes; AFD_ENOMEM when memory runs out.  err->line is the offending line (0 when no single line is to
 * blame).  On error *out holds no memory. */
AFD_API afd_status afd_workload_from_trace(const char *path,
                                           const afd_workload_trace_options *opt,
                                           afd_workload *out, afd_error *err);

/* As afd_workload_from_trace, reading an open trace reader to its end. */
AFD_API afd_status afd_workload_from_reader(afd_trace *reader,
                                            const afd_workload_trace_options *opt,
                                            afd_workload *out, afd_error *err);

/* Geometric model (Corollary 4.5; see afd_renewal_geometric). */
AFD_API afd_status afd_workload_geometric(double mu_p, double mu_d, afd_workload *out);

/* theta and nu given directly. */
AFD_API afd_status afd_workload_given(double theta, double nu, afd_workload *out);

/* The kept requests as weighted entries, whichever way they were kept:
 * the distinct pairs when there are any (entry j is pairs[j]), else the rows
 * (entry j is row j with count 1).  Every sampler that draws a kept request
 * goes through these, so that the two forms give the same law: drawing an
 * entry with probability proportional to count (times any weight that is a
 * function of (P, D)) is drawing a row uniformly (with that weight), since
 * the rows holding one pair are exactly count of them. */
static inline size_t afd_workload_entries(const afd_workload *w)
{
    return w->pairs != NULL ? w->n_pairs : w->n_kept;
}
static inline afd_workload_pair afd_workload_entry(const afd_workload *w, size_t j)
{
    afd_workload_pair e;
    if (w->pairs != NULL)
        return w->pairs[j];
    e.prompt = w->prompt[j];
    e.decode = w->decode[j];
    e.count = 1;
    return e;
}

/* The prompt tokens of an entry as every afdkit model counts them: an empty
 * prompt (P = 0) is one token.  A request still takes a prefill step to
 * produce its first token, and the simulator prefills it as one token
 * (montecarlo/serve/engine.c), so the closed forms read the same length, and
 * so do a trace's theta, nu and mean_p (Lemma 4.1: its one token is in the
 * KV cache at every decode step). */
static inline uint64_t afd_workload_prompt_tokens(afd_workload_pair e)
{
    return e.prompt ? e.prompt : 1;
}
/* Entry j with its prompt as afd_workload_prompt_tokens counts it: the
 * request every model draws (the slot-load samplers of Lemma 4.1 read these,
 * as the trace's theta and nu do). */
static inline afd_workload_pair afd_workload_request(const afd_workload *w, size_t j)
{
    afd_workload_pair e = afd_workload_entry(w, j);
    e.prompt = afd_workload_prompt_tokens(e);
    return e;
}

/* Release the kept rows and pairs; w may be NULL.  The statistics stay valid. */
AFD_API void afd_workload_free(afd_workload *w);

/* "trace", "geometric" or "given". */
AFD_API const char *afd_workload_kind_name(afd_workload_kind kind);

#ifdef __cplusplus
}
#endif

#endif /* AFD_WORKLOAD_H */
