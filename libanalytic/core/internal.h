/* internal.h: helpers shared by libanalytic's translation units.
 * Not installed; nothing here is exported from the shared library. */
#ifndef AFD_INTERNAL_H
#define AFD_INTERNAL_H

#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>

#include "afd_status.h"

#if defined(__GNUC__)
#define AFD_PRINTF(f, a) __attribute__((format(printf, f, a)))
#else
#define AFD_PRINTF(f, a)
#endif

/* Fill err (if not NULL) with line, column and a formatted message; returns st. */
/* Select the columns names[0..n) of an open CSV (workload/csv.c), in that
 * order: names[j] for j < nreq must be there once; the first optional one
 * (j >= nreq) that is absent ends the selection.  *nsel: how many were
 * selected.  AFD_EPARSE on line 1 naming the column and the header. */
struct afd_csv;
/* The 1-based line of c's header row (after the blank lines before it). */
long afd_priv_csv_header_line(const struct afd_csv *c);
afd_status afd_priv_csv_select_names(struct afd_csv *c, const char *const *names, size_t n,
                                     size_t nreq, size_t *nsel, afd_error *err);

/* The array v of *cap elements of size bytes with room for need >= 1: v itself,
 * or v moved to a capacity doubled from `first` until it holds need
 * (*cap updated); NULL when out of memory (v, *cap unchanged). */
static inline void *afd_priv_grow(void *v, size_t *cap, size_t need, size_t size, size_t first)
{
    size_t c = *cap ? *cap : first;
    void *nv;
    if (need <= *cap)
        return v;
    while (c < need) {
        if (c > SIZE_MAX / 2 / size)
            return NULL;
        c *= 2;
    }
    if (c > SIZE_MAX / size || (nv = realloc(v, c * size)) == NULL)
        return NULL;
    *cap = c;
    return nv;
}

afd_status afd_priv_fail(afd_error *err, afd_status st, long line, long column,
                         const char *fmt, ...) AFD_PRINTF(5, 6);

/* Copy s[0..n) into out for an error message: at most 40 bytes, control and
 * non-ASCII bytes escaped as \xNN, so that the message stays on one line.
 * Returns out. */
const char *afd_priv_show(const char *s, size_t n, char *out, size_t cap);

/* 3 when p[0..n) starts with a UTF-8 byte-order mark, else 0. */
size_t afd_priv_bom(const char *p, size_t n);

/* Parse text[0..len) as one JSON value (a description file, a line of JSON
 * Lines) with jansson, refusing duplicate keys: a UTF-8 byte-order mark at
 * the start is skipped; a NUL byte is an error at its line and column ("NUL
 * byte in the line"); jansson's messages are told in afdkit's words, the
 * input's bytes in them escaped as by afd_priv_show, so that err->text is
 * one line.  Line and column count from the start of text (after the mark),
 * columns in characters.  Returns AFD_OK (*out: a new reference),
 * AFD_EPARSE or AFD_ENOMEM (*out NULL). */
struct json_t;
afd_status afd_priv_json_parse(const char *text, size_t len, struct json_t **out,
                               afd_error *err);
/* afd_priv_json_parse without the byte-order mark: one line of a stream
 * whose mark, if any, its reader skipped at the start of the input; a mark
 * anywhere else is text, and an error. */
afd_status afd_priv_json_parse_text(const char *text, size_t len, struct json_t **out,
                                    afd_error *err);

/* Integrate f over [a, b] (finite) to max(epsabs, epsrel*|I|) with GSL's
 * 21-point Gauss-Kronrod rule (gsl_integration_qk21), bisecting recursively
 * (24 levels at most) where its error estimate misses the tolerance.  Never
 * calls GSL's error handler.  Allocation-free and thread-safe.
 * Returns AFD_OK or AFD_ENUMERIC; *result and *abserr are always set. */
afd_status afd_priv_integrate(double (*f)(double, void *), void *params, double a, double b,
                              double epsabs, double epsrel, double *result, double *abserr);

/* E[(M_r - z)+] as afd_max_normal_excess_e, reusing kappa_r when the caller
 * has it (kappa may be NULL). */
afd_status afd_priv_max_normal_excess(double r, double z, const afd_result *kappa,
                                      afd_result *result);

/* ---- queues (queue_tail.c), shared by md1.c and mdc.c */

/* Poisson(mu) probability of k (k >= 0 integral, mu >= 0; mu = 0 is the
 * point mass at 0), exp(k log mu - mu - log k!) with relative error about
 * (mu + k) DBL_EPSILON. */
double afd_priv_poisson_pmf(double k, double mu);

/* Chernoff bounds on the stationary number waiting X of M/D/c with offered
 * load a = lambda D < c, given p0 >= P(X = 0) (1 is always valid):
 *   *tau    >= P(X > n)     = min_z p0 z^{-(n+1)} / (1 - phi(z)),
 *   *excess >= E[(X - n)+]  = min_z p0 z^{-n} / ((1 - phi(z)) (z - 1)),
 * phi(z) = e^{a (z-1)} z^{-c}, 1 < z < z0 (phi(z0) = 1); see afd_queue.h.
 * Either output pointer may be NULL.  Returns AFD_ENUMERIC if z0 cannot be
 * located (outputs then 1 and +inf). */
afd_status afd_priv_queue_tail(double a, double c, double n, double p0, double *tau,
                               double *excess);

/* Smallest n >= 0 with bound(n) <= target, where bound(n) is tau(n) or, with
 * with_mean, n tau / (1 - tau) + excess(n) (p0 = 1).  AFD_ELIMIT if no n <=
 * nmax qualifies. */
afd_status afd_priv_queue_truncation(double a, double c, double target, int with_mean,
                                     double nmax, double *n);

/* Root of f in [lo, hi] by GSL's Brent solver without allocation (the
 * solver state lives on the stack: gsl_root_fsolver_alloc would report a
 * failed malloc through GSL's error handler).  f(lo) and f(hi) must be of
 * opposite signs (else AFD_ENUMERIC: checked here, so that GSL's error
 * handler is never reached; infinite values are clamped, NaN fails).  Stops
 * when the bracket is below epsabs + epsrel |root|; AFD_ENUMERIC after 200
 * iterations. */
/* Minimum of a unimodal f on [lo, hi] by GSL's Brent minimizer
 * (gsl_min_fminimizer_brent), its state on the stack as for afd_priv_brent.
 * f_lo, f_hi are f at the ends (+inf allowed; not evaluated again).  The
 * bracket GSL needs, an interior point below both ends, is sought at the
 * golden-section points, shrinking toward the lower end while there is
 * none; a minimum at an end is returned as that end.  Stops when the
 * bracket is below epsrel |x| (or after 200 iterations, keeping the best
 * point).  *x_lower, *x_upper: the final bracket.  AFD_ENUMERIC when f is
 * NaN somewhere on the way or the interval is empty. */
afd_status afd_priv_fmin(double (*f)(double, void *), void *params, double lo, double f_lo,
                         double hi, double f_hi, double epsrel, double *x_min, double *f_min,
                         double *x_lower, double *x_upper);

afd_status afd_priv_brent(double (*f)(double, void *), void *params, double lo, double hi,
                          double epsabs, double epsrel, double *root);

/* ---- byte sources (source.c): a file, or standard input for "-", read as
 * it is or decompressed (gzip, Zstandard; recognised by magic bytes). */
typedef struct afd_priv_src afd_priv_src;
/* Errors: AFD_EIO (cannot open; a directory), AFD_ENOMEM. */
afd_status afd_priv_src_open(const char *path, afd_priv_src **out, afd_error *err);
/* Up to cap decoded bytes; *got == 0 at the end.  AFD_EIO, AFD_EPARSE
 * (corrupt or truncated compressed data), AFD_ENOMEM. */
afd_status afd_priv_src_read(afd_priv_src *s, char *buf, size_t cap, size_t *got,
                             afd_error *err);
/* Look at the first decoded bytes (up to want, fewer at the end) without
 * consuming them, after dropping the blank lines at the start (with a UTF-8
 * byte-order mark before them): lines of blanks (space, tab, CR) ended by
 * LF, however many, in bounded memory.  *p then starts on the line of the
 * first non-blank byte (or holds want bytes of one blank line); *lines and
 * *bytes count what was dropped.  Call once, before any afd_priv_src_read. */
afd_status afd_priv_src_peek(afd_priv_src *s, size_t want, const char **p, size_t *n,
                             long *lines, uint64_t *bytes, afd_error *err);
/* "plain", "gzip" or "zstd". */
const char *afd_priv_src_kind(const afd_priv_src *s);
void afd_priv_src_close(afd_priv_src *s);

/* "YYYY-MM-DD[ T]HH:MM[:SS[.frac]][Z|+HH:MM|-HH:MM]" (blanks around
 * ignored) to seconds since 1970-01-01 UTC; a time without an offset is
 * taken as UTC.  Returns 1, or 0 when p[0..n) is not of this form. */
int afd_priv_parse_datetime(const char *p, size_t n, double *out);

/* A CSV reader over an open source (taken over: closed with the reader,
 * also on error) whose first lines (lines of them, bytes bytes) were
 * dropped by afd_priv_src_peek. */
struct afd_csv;
afd_status afd_priv_csv_open_src(afd_priv_src *src, long lines, uint64_t bytes,
                                 struct afd_csv **out, afd_error *err);


/* Read a whole file of at most max bytes into a malloc'ed, NUL-terminated
 * buffer (*buf, *len).  AFD_EIO (open, read, a directory), AFD_EPARSE (too
 * large), AFD_ENOMEM; *buf is NULL on error. */
afd_status afd_priv_read_file(const char *path, size_t max, char **buf, size_t *len,
                              afd_error *err);

/* ---- key = value files (readfile.c): latency files (hw.c) and device
 * files (device.c) */

/* One key of a file kind: its name, whether its value is text (kept as it
 * is for the caller) or a number, and the plausible range of a number,
 * [lo, hi] or (lo, hi] with lo_open, in unit ("" if none; hi may be
 * INFINITY).  With scaled, the bounds are in seconds and the caller checks
 * them once it knows the file's time unit (afd_priv_kv_range). */
typedef struct afd_priv_kv_key {
    const char *name;
    int text;
    double lo, hi;
    int lo_open, scaled;
    const char *unit;
} afd_priv_kv_key;

/* A key's value as read: line 0 when the key is absent; s[0..n) the value's
 * text (blanks around it removed); v the number (NAN for text or absent). */
typedef struct afd_priv_kv_val {
    long line;
    const char *s;
    size_t n;
    double v;
} afd_priv_kv_val;

/* Read "key = value" lines of text[0..len) into vals[0..n_keys) (indexed
 * as keys): lines end at '\n'; blanks (space, tab, CR) around keys and
 * values are ignored; blank lines and lines starting with '#' are skipped.
 * Numbers are checked against their range as they are read unless scaled.
 * Errors name the line: NUL byte, no '=', unknown key (the message lists
 * expected), key given twice, not a number (AFD_EPARSE; AFD_ERANGE beyond a
 * double), outside the plausible range (AFD_EINVAL). */
afd_status afd_priv_kv_parse(const char *text, size_t len, const afd_priv_kv_key *keys,
                             int n_keys, const char *expected, afd_priv_kv_val *vals,
                             afd_error *err);

/* Check v against key's range, its bounds multiplied by scale and stated in
 * unit (NULL: key->unit); AFD_EINVAL naming key, value, range and line. */
afd_status afd_priv_kv_range(const afd_priv_kv_key *key, double v, double scale,
                             const char *unit, long line, afd_error *err);

/* The indices of the keys present in vals, in the order of their lines;
 * returns how many. */
int afd_priv_kv_order(const afd_priv_kv_val *vals, int n_keys, int *order);

/* The mean TPOT of a chunked-prefill instance (afd_serving.h (C1), the same
 * equation as afd_taichi.h's affine interference model): prompts arrive at
 * lam_p and decodes at lam_d per unit time per instance, prompts of mean P
 * and second moment P2, G output tokens (m = G - 1 steps).  A decoding
 * request's iteration holds it, the n = lam_d m T others (Little, PASTA) and
 * the prefill tokens arriving meanwhile, lam_p P T, so
 *     T = beta + c_own + n cd + lam_p P T cp
 *       = (beta + c_own) / (1 - lam_d m cd - lam_p P cp),
 *     c_own = gamma + alpha (P + G/2),  cd = gamma + alpha kv,
 *     cp = pb + pc P2 / P.
 * The request's own token holds, over its life, its own mean KV, P + G/2;
 * the others are the decodes running at a random instant, a time-stationary
 * sample that favours long outputs (a decode is in the batch for as many
 * steps as it has tokens), so each holds kv, the mean KV tokens over all
 * steps, afd_priv_chunked_kv: E[P] + E[G (G - 1)] / (2 (E[G] - 1)) (the
 * age of a length-biased life, Kleinrock 1975, Queueing Systems I, 5.2),
 * E[P] + E[G] for geometric outputs against the own E[P] + E[G] / 2, the
 * same for fixed outputs.  lam_d m cd is then the decode work per unit
 * time, lam_d E[sum over a request's steps of gamma + alpha KV], exactly
 * (the work conservation of the steps).  Fills *cd, *cp, *load = lam_d m cd + lam_p P cp and, when
 * load < 1, *tpot (0 for m = 0); returns 0, or -1 when load >= 1 (*tpot
 * NaN).  hw must hold both laws; the arguments are not checked. */
/* The mean KV tokens of a decode step, over all steps, from Lemma 4.1's
 * theta of the lengths (afd_workload.h): P + E[G] (theta - P) / (E[G] - 1);
 * P + G / 2 for G <= 1 or theta <= 0 (fixed outputs). */
double afd_priv_chunked_kv(double P, double G, double theta);
struct afd_hw;
int afd_priv_chunked_tpot(const struct afd_hw *hw, double lam_p, double lam_d, double P,
                          double P2, double G, double kv, double *cd, double *cp,
                          double *load, double *tpot);

#endif /* AFD_INTERNAL_H */
