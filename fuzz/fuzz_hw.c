/* fuzz_hw.c: libFuzzer target for the key=value hardware-file reader.
 * Invariants: an accepted file passes afd_hw_check and survives a
 * format/parse round trip bit for bit; a refused one leaves NaN and a
 * one-line message. */
#include <config.h>

#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "afdkit.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    afd_hw hw, back;
    afd_error err;
    char buf[2048];

    if (afd_hw_parse((const char *)data, size, &hw, &err) != AFD_OK) {
        if (!isnan(hw.alpha_a) || strchr(err.text, '\n') != NULL)
            abort();
        return 0;
    }
    if (afd_hw_check(&hw, NULL) != AFD_OK)
        abort();
    if (afd_hw_format(&hw, NULL, buf, sizeof buf) != AFD_OK)
        abort();
    if (afd_hw_parse(buf, strlen(buf), &back, &err) != AFD_OK)
        abort();
    if (memcmp(&hw.alpha_a, &back.alpha_a, 6 * sizeof(double)) != 0)
        abort();
    return 0;
}
