/* readfile.c: read a small text file whole, and the key = value reader of
 * the description files (latency files, device files). */
#include <config.h>

#include <errno.h>
#include <fcntl.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "afd_parse.h"
#include "internal.h"

afd_status afd_priv_read_file(const char *path, size_t max, char **buf, size_t *len,
                              afd_error *err)
{
    char *b;
    ssize_t n;
    size_t used = 0;
    int fd;
    struct stat sb;

    *buf = NULL;
    *len = 0;
    fd = open(path, O_RDONLY | O_CLOEXEC);
    if (fd < 0)
        return afd_priv_fail(err, AFD_EIO, 0, 0, "cannot open: %s", strerror(errno));
    if (fstat(fd, &sb) == 0 && S_ISDIR(sb.st_mode)) {
        close(fd);
        return afd_priv_fail(err, AFD_EIO, 0, 0, "cannot read: is a directory");
    }
    b = malloc(max + 2);
    if (b == NULL) {
        close(fd);
        return afd_priv_fail(err, AFD_ENOMEM, 0, 0, "out of memory");
    }
    while ((n = read(fd, b + used, max + 1 - used)) != 0) {
        if (n < 0 && errno == EINTR)
            continue;
        if (n < 0) {
            int e = errno;
            free(b);
            close(fd);
            return afd_priv_fail(err, AFD_EIO, 0, 0, "read error: %s", strerror(e));
        }
        used += (size_t)n;
        if (used > max) {
            free(b);
            close(fd);
            return afd_priv_fail(err, AFD_EPARSE, 0, 0, "larger than %zu bytes", max);
        }
    }
    close(fd);
    b[used] = '\0';
    *buf = b;
    *len = used;
    return AFD_OK;
}

static int is_space(char c)
{
    return c == ' ' || c == '\t' || c == '\r';
}

afd_status afd_priv_kv_range(const afd_priv_kv_key *key, double v, double scale,
                             const char *unit, long line, afd_error *err)
{
    double lo = key->lo * scale, hi = key->hi * scale;
    const char *u = unit != NULL ? unit : key->unit;
    if (isfinite(v) && (key->lo_open ? v > lo : v >= lo) && v <= hi)
        return AFD_OK;
    if (isinf(hi))
        return afd_priv_fail(err, AFD_EINVAL, line, 0,
                             "%s = %.10g is outside the plausible range %s%g, inf)%s%s", key->name,
                             v, key->lo_open ? "(" : "[", lo, *u ? " " : "", u);
    return afd_priv_fail(err, AFD_EINVAL, line, 0,
                         "%s = %.10g is outside the plausible range %s%g, %g]%s%s", key->name, v,
                         key->lo_open ? "(" : "[", lo, hi, *u ? " " : "", u);
}

afd_status afd_priv_kv_parse(const char *text, size_t len, const afd_priv_kv_key *keys,
                             int n_keys, const char *expected, afd_priv_kv_val *vals,
                             afd_error *err)
{
    size_t pos = 0;
    long line = 0;
    afd_status st;
    int k;

    afd_error_clear(err);
    for (k = 0; k < n_keys; k++) {
        vals[k].line = 0;
        vals[k].s = NULL;
        vals[k].n = 0;
        vals[k].v = NAN;
    }
    while (pos < len) {
        const char *s = text + pos, *nl = memchr(s, '\n', len - pos);
        size_t n = nl != NULL ? (size_t)(nl - s) : len - pos;
        size_t a = 0, b = n, eq, ke;
        char shown[64];
        pos += n + (nl != NULL);
        line++;
        while (a < b && is_space(s[a]))
            a++;
        while (b > a && is_space(s[b - 1]))
            b--;
        if (a == b || s[a] == '#')
            continue;
        if (memchr(s + a, '\0', b - a) != NULL)
            return afd_priv_fail(err, AFD_EPARSE, line, 0, "NUL byte in the line");
        for (eq = a; eq < b && s[eq] != '='; eq++)
            ;
        if (eq == b) {
            afd_priv_show(s + a, b - a, shown, sizeof shown);
            return afd_priv_fail(err, AFD_EPARSE, line, 0, "expected key = value: '%s'", shown);
        }
        ke = eq;
        while (ke > a && is_space(s[ke - 1]))
            ke--;
        for (eq++; eq < b && is_space(s[eq]); eq++)
            ;
        for (k = 0; k < n_keys; k++)
            if (strlen(keys[k].name) == ke - a && memcmp(keys[k].name, s + a, ke - a) == 0)
                break;
        if (k == n_keys) {
            afd_priv_show(s + a, ke - a, shown, sizeof shown);
            return afd_priv_fail(err, AFD_EPARSE, line, 0, "unknown key '%s' (expected %s)",
                                 shown, expected);
        }
        if (vals[k].line)
            return afd_priv_fail(err, AFD_EPARSE, line, 0, "key '%s' given twice (line %ld)",
                                 keys[k].name, vals[k].line);
        vals[k].line = line;
        vals[k].s = s + eq;
        vals[k].n = b - eq;
        if (keys[k].text)
            continue;
        st = afd_parse_double_n(s + eq, b - eq, &vals[k].v);
        if (st != AFD_OK) {
            afd_priv_show(s + eq, b - eq, shown, sizeof shown);
            return afd_priv_fail(err, st == AFD_ERANGE ? AFD_ERANGE : AFD_EPARSE, line, 0,
                                 "%s: %s: '%s'", keys[k].name,
                                 st == AFD_ERANGE ? "out of range" : "not a number", shown);
        }
        if (!keys[k].scaled && (st = afd_priv_kv_range(&keys[k], vals[k].v, 1, NULL, line,
                                                       err)) != AFD_OK)
            return st;
    }
    return AFD_OK;
}

int afd_priv_kv_order(const afd_priv_kv_val *vals, int n_keys, int *order)
{
    int k, j, n = 0;
    for (k = 0; k < n_keys; k++) {
        if (vals[k].line == 0)
            continue;
        /* insertion by line: a file kind has a few dozen keys at most */
        for (j = n; j > 0 && vals[order[j - 1]].line > vals[k].line; j--)
            order[j] = order[j - 1];
        order[j] = k;
        n++;
    }
    return n;
}
