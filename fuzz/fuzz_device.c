/* fuzz_device.c: libFuzzer target for the device-file reader
 * (afd_device_parse, afd_device_read) and writer (afd_device_format).
 * Invariants: the file gives what the text gives; a refused text leaves a
 * one-line message; an accepted one passes afd_device_check, and what
 * afd_device_format writes of it (with a comment of several lines) reads
 * back to the same numbers, bit for bit: parse -> write -> parse is the
 * identity. */
#include <config.h>

#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "afdkit.h"
#include "fuzz_util.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

/* The numbers of a device, in one array (every field but the name). */
static size_t numbers(const afd_device *d, double *v)
{
    size_t n = 0, k;
    v[n++] = d->peak_tflops;
    v[n++] = d->hbm_tbps;
    v[n++] = d->hbm_gb;
    v[n++] = d->net_gbps;
    for (k = 0; k < 2; k++) {
        v[n++] = d->mfu[k];
        v[n++] = d->mbu[k];
        v[n++] = d->comm_eff[k];
    }
    for (k = 0; k < 3; k++)
        v[n++] = d->dispatch_ms[k];
    v[n++] = d->comm_latency_ms;
    v[n++] = d->mem_util;
    v[n++] = d->price_per_hour;
    v[n++] = d->power_w;
    v[n++] = d->kernel_us;
    v[n++] = d->roofline_p;
    return n;
}

static int same_numbers(const afd_device *a, const afd_device *b)
{
    double x[32], y[32];
    size_t n = numbers(a, x);
    return numbers(b, y) == n && memcmp(x, y, n * sizeof x[0]) == 0;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    afd_device d, f, back;
    afd_error err, ferr;
    afd_status st, fst;
    char text[4096];

    st = afd_device_parse((const char *)data, size, "fuzz", &d, &err);
    fst = afd_device_read(fuzz_temp_file(data, size), &f, &ferr);
    if (st != AFD_OK) {
        fuzz_check_error(&err);
        fuzz_same_error(st, &err, fst, &ferr);
        return 0;
    }
    if (fst != AFD_OK || !same_numbers(&d, &f))
        abort();
    if (afd_device_check(&d, &err) != AFD_OK)
        abort();
    if (afd_device_format(&d, "written back\nby the fuzzer", text, sizeof text) != AFD_OK)
        abort();
    if (afd_device_parse(text, strlen(text), "fuzz", &back, &err) != AFD_OK)
        abort();
    if (!same_numbers(&d, &back))
        abort();
    return 0;
}
