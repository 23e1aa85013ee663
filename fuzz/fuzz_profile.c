/* fuzz_profile.c: libFuzzer target for the measured-kernel readers of
 * afdkit calibrate --profile and --allreduce (afd_profile_read,
 * afd_allreduce_read; Vidur's CSV layout) and the fits that consume them.
 * The input is written to a file and read as both.  Invariants: a refused
 * file leaves an empty profile and a one-line message; an accepted one has
 * rows with the line they came from (increasing, after the header), counts
 * that are positive integers and times that are finite and > 0; the fits
 * refuse with a one-line message or give efficiencies in (0, 1], a latency
 * >= 0 and a finite root-mean-square error. */
#include <config.h>

#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "afdkit.h"
#include "fuzz_util.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static int count(double x)
{
    return x >= 1 && isfinite(x) && x == floor(x);
}

static int time_ms(double x)
{
    return x > 0 && isfinite(x);
}

static int efficiency(double x)
{
    return x > 0 && x <= 1;
}

/* 1 when the read was refused (checking that it left nothing and a
 * one-line message), 0 when it gave rows (checking that there are some). */
static int refused(afd_status st, size_t n, const void *row, const afd_error *err)
{
    if (st != AFD_OK) {
        if (n != 0 || row != NULL)
            abort();
        fuzz_check_error(err);
        return 1;
    }
    if (n == 0)
        abort();
    return 0;
}

static void compute(const char *path, const afd_device *dev)
{
    afd_profile p;
    afd_model m;
    afd_error err;
    double mfu, mbu, rms;
    long last = 1;
    size_t i, k;
    afd_status st = afd_profile_read(path, &p, &err);

    if (refused(st, p.n, p.row, &err))
        return;
    for (i = 0; i < p.n; i++) {
        const afd_profile_row *r = &p.row[i];
        if (r->line <= last || !count(r->heads) || !count(r->kv_heads) || !count(r->hidden) ||
            !count(r->intermediate) || !count(r->tokens) || !count(r->tp))
            abort();
        for (k = 0; k < AFD_PROFILE_NMOD; k++)
            if (!time_ms(r->ms[k]))
                abort();
        last = r->line;
    }
    /* the dense model the first row describes, fitted to every row */
    if (afd_model_preset_load("llama-3.1-8b", &m, &err) != AFD_OK)
        abort();
    m.hidden = p.row[0].hidden;
    m.heads = p.row[0].heads;
    m.kv_heads = p.row[0].kv_heads;
    m.intermediate = p.row[0].intermediate;
    m.head_dim = floor(m.hidden / m.heads);
    if (afd_profile_fit(&m, dev, &p, 0, &mfu, &mbu, &rms, &err) == AFD_OK) {
        if (!efficiency(mfu) || !efficiency(mbu) || !(rms >= 0) || !isfinite(rms))
            abort();
    } else {
        fuzz_check_error(&err);
    }
    afd_profile_free(&p);
}

static void allreduce(const char *path, const afd_device *dev)
{
    afd_allreduce_profile p;
    afd_error err;
    double eff, lat;
    long last = 1;
    size_t i;
    afd_status st = afd_allreduce_read(path, &p, &err);

    if (refused(st, p.n, p.row, &err))
        return;
    for (i = 0; i < p.n; i++) {
        const afd_allreduce_row *r = &p.row[i];
        if (r->line <= last || !count(r->workers) || !(r->bytes > 0) || !isfinite(r->bytes) ||
            !time_ms(r->ms))
            abort();
        last = r->line;
    }
    if (afd_profile_fit_allreduce(dev, &p, 0, &eff, &lat, &err) == AFD_OK) {
        if (!efficiency(eff) || !(lat >= 0) || !isfinite(lat))
            abort();
    } else {
        fuzz_check_error(&err);
    }
    afd_allreduce_free(&p);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    const char *path = fuzz_temp_file(data, size);
    afd_device dev;
    afd_error err;

    if (afd_device_preset_load("h100-sxm", &dev, &err) != AFD_OK)
        abort();
    compute(path, &dev);
    allreduce(path, &dev);
    return 0;
}
