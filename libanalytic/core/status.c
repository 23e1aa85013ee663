/* status.c: status codes and error reports. */
#include <config.h>

#include <string.h>

#include "afd_status.h"

const char *afd_strerror(afd_status status)
{
    switch (status) {
    case AFD_OK: return "success";
    case AFD_EOF: return "end of input";
    case AFD_EINVAL: return "argument out of range";
    case AFD_EPARSE: return "malformed input";
    case AFD_ERANGE: return "value too large";
    case AFD_EEMPTY: return "no usable data";
    case AFD_EIO: return "input/output error";
    case AFD_ENOMEM: return "out of memory";
    case AFD_ENUMERIC: return "numerical method failed to converge";
    case AFD_EUNSTABLE: return "unstable system";
    case AFD_EINFINITE: return "infinite value";
    case AFD_ELIMIT: return "size limit exceeded";
    }
    return "unknown status";
}

void afd_error_clear(afd_error *err)
{
    if (err == NULL)
        return;
    err->line = 0;
    err->column = 0;
    err->text[0] = '\0';
}

#include "afdkit.h"

const char *afd_version(void)
{
    return PACKAGE_VERSION;
}
