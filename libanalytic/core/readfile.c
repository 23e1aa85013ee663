/* readfile.c: read a small text file whole, for the description parsers. */
#include <config.h>

#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

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
