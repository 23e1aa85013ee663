/* source.c: byte sources for the readers: a file or standard input, read
 * as it is or decompressed on the fly (gzip through zlib, Zstandard through
 * libzstd).  The compression is recognised by the magic bytes, never by the
 * file name, so a compressed trace on standard input works as well.
 *
 * Memory is constant: one input chunk plus the decoder's state (zlib's 32 KiB
 * window, Zstandard's window as the frame declares it, refused above
 * 2^27 bytes).
 */
#include <config.h>

#include <errno.h>
#include <fcntl.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <zlib.h>
#include <zstd.h>

#include "internal.h"

#define IN_CHUNK (1u << 16)
/* Largest Zstandard window accepted: 128 MiB (zstd --long=27). */
#define ZSTD_WINDOW_LOG_MAX 27

enum mode { PLAIN, GZIP, ZSTD };

struct afd_priv_src {
    int fd;
    int own_fd;
    enum mode mode;
    unsigned char *in; /* compressed input (or sniffed plain bytes) */
    size_t in_pos, in_end;
    int in_eof;
    int stream_end; /* gzip: the last member ended */
    z_stream z;
    int z_init;
    ZSTD_DCtx *zd;
    size_t zret; /* last ZSTD_decompressStream result: 0 at a frame end */
    char *peek;  /* decoded bytes read ahead by afd_priv_src_peek */
    size_t peek_pos, peek_n;
    /* An error met after a read had decoded some bytes: those bytes are
     * delivered first, so that the reader blames the line where the bad
     * data starts, and the error comes with the next read. */
    afd_status pend_st;
    afd_error pend_err;
};

/* Read more raw bytes into in[in_end..IN_CHUNK); in_eof at end of file. */
static afd_status raw_fill(afd_priv_src *s, afd_error *err)
{
    if (s->in_pos == s->in_end)
        s->in_pos = s->in_end = 0;
    for (;;) {
        ssize_t n = read(s->fd, s->in + s->in_end, IN_CHUNK - s->in_end);
        if (n < 0 && errno == EINTR)
            continue;
        if (n < 0)
            return afd_priv_fail(err, AFD_EIO, 0, 0, "read error: %s", strerror(errno));
        if (n == 0)
            s->in_eof = 1;
        s->in_end += (size_t)n;
        return AFD_OK;
    }
}

afd_status afd_priv_src_open(const char *path, afd_priv_src **out, afd_error *err)
{
    afd_priv_src *s;
    struct stat sb;
    afd_status st;

    *out = NULL;
    s = calloc(1, sizeof *s);
    if (s == NULL)
        return afd_priv_fail(err, AFD_ENOMEM, 0, 0, "out of memory");
    if (strcmp(path, "-") == 0) {
        s->fd = STDIN_FILENO;
    } else {
        s->fd = open(path, O_RDONLY | O_CLOEXEC);
        if (s->fd < 0) {
            int e = errno;
            free(s);
            return afd_priv_fail(err, AFD_EIO, 0, 0, "cannot open: %s", strerror(e));
        }
        s->own_fd = 1;
    }
    if (fstat(s->fd, &sb) == 0 && S_ISDIR(sb.st_mode)) {
        afd_priv_src_close(s);
        return afd_priv_fail(err, AFD_EIO, 0, 0, "cannot read: is a directory");
    }
#ifdef POSIX_FADV_SEQUENTIAL
    if (s->own_fd)
        (void)posix_fadvise(s->fd, 0, 0, POSIX_FADV_SEQUENTIAL);
#endif
    s->in = malloc(IN_CHUNK);
    if (s->in == NULL) {
        afd_priv_src_close(s);
        return afd_priv_fail(err, AFD_ENOMEM, 0, 0, "out of memory");
    }
    /* Sniff the magic bytes: 1f 8b (gzip), 28 b5 2f fd (Zstandard). */
    while (s->in_end < 4 && !s->in_eof)
        if ((st = raw_fill(s, err)) != AFD_OK) {
            afd_priv_src_close(s);
            return st;
        }
    if (s->in_end >= 2 && s->in[0] == 0x1f && s->in[1] == 0x8b) {
        s->mode = GZIP;
        if (inflateInit2(&s->z, 15 + 16) != Z_OK) {
            afd_priv_src_close(s);
            return afd_priv_fail(err, AFD_ENOMEM, 0, 0, "cannot start the gzip decoder");
        }
        s->z_init = 1;
    } else if (s->in_end >= 4 && s->in[0] == 0x28 && s->in[1] == 0xb5 && s->in[2] == 0x2f &&
               s->in[3] == 0xfd) {
        s->mode = ZSTD;
        s->zd = ZSTD_createDCtx();
        if (s->zd == NULL ||
            ZSTD_isError(ZSTD_DCtx_setParameter(s->zd, ZSTD_d_windowLogMax,
                                                ZSTD_WINDOW_LOG_MAX))) {
            afd_priv_src_close(s);
            return afd_priv_fail(err, AFD_ENOMEM, 0, 0, "cannot start the zstd decoder");
        }
        s->zret = 0;
    }
    *out = s;
    return AFD_OK;
}

/* Both decoders: *got = bytes decoded into buf, also when an error is
 * returned (decode() delivers them and defers the error). */
static afd_status read_gzip(afd_priv_src *s, char *buf, size_t cap, size_t *got, afd_error *err)
{
    afd_status st;
    *got = 0;
    s->z.next_out = (Bytef *)buf;
    s->z.avail_out = (uInt)(cap > UINT32_MAX ? UINT32_MAX : cap);
    while (s->z.avail_out > 0) {
        uInt before = s->z.avail_out;
        int r;
        *got = cap - s->z.avail_out;
        if (s->in_pos == s->in_end && !s->in_eof) {
            if ((st = raw_fill(s, err)) != AFD_OK)
                return st;
            continue;
        }
        if (s->stream_end) {
            /* Concatenated members (gzip a; gzip b; cat) are one stream. */
            if (s->in_pos == s->in_end)
                break;
            if (inflateReset(&s->z) != Z_OK)
                return afd_priv_fail(err, AFD_EPARSE, 0, 0, "corrupt gzip data");
            s->stream_end = 0;
        }
        s->z.next_in = s->in + s->in_pos;
        s->z.avail_in = (uInt)(s->in_end - s->in_pos);
        r = inflate(&s->z, Z_NO_FLUSH);
        s->in_pos = s->in_end - s->z.avail_in;
        *got = cap - s->z.avail_out;
        if (r == Z_STREAM_END) {
            s->stream_end = 1;
        } else if (r == Z_MEM_ERROR) {
            return afd_priv_fail(err, AFD_ENOMEM, 0, 0, "out of memory in the gzip decoder");
        } else if (r != Z_OK && r != Z_BUF_ERROR) {
            return afd_priv_fail(err, AFD_EPARSE, 0, 0, "corrupt gzip data: %s",
                                 s->z.msg != NULL ? s->z.msg : "inflate failed");
        } else if (s->in_pos == s->in_end && s->in_eof && s->z.avail_out == before) {
            /* No input left, nothing more comes out, and the member has
             * not ended. */
            if ((size_t)s->z.avail_out < cap)
                break; /* deliver what we have; the error comes next time */
            return afd_priv_fail(err, AFD_EPARSE, 0, 0,
                                 "truncated gzip data (the input ends inside a member)");
        }
    }
    *got = cap - s->z.avail_out;
    return AFD_OK;
}

static afd_status read_zstd(afd_priv_src *s, char *buf, size_t cap, size_t *got, afd_error *err)
{
    ZSTD_outBuffer ob = {buf, cap, 0};
    afd_status st;
    *got = 0;
    while (ob.pos < ob.size) {
        ZSTD_inBuffer ib;
        size_t before = ob.pos, r;
        *got = ob.pos;
        if (s->in_pos == s->in_end && !s->in_eof) {
            if ((st = raw_fill(s, err)) != AFD_OK)
                return st;
            continue;
        }
        ib.src = s->in + s->in_pos;
        ib.size = s->in_end - s->in_pos;
        ib.pos = 0;
        r = ZSTD_decompressStream(s->zd, &ob, &ib);
        s->in_pos += ib.pos;
        *got = ob.pos;
        if (ZSTD_isError(r))
            return afd_priv_fail(err, AFD_EPARSE, 0, 0, "corrupt zstd data: %s",
                                 ZSTD_getErrorName(r));
        /* 0 means a frame ended and everything is flushed; a call that made
         * no progress returns the next frame's header size instead. */
        if (ib.pos > 0 || ob.pos > before)
            s->zret = r;
        if (s->in_pos == s->in_end && s->in_eof && ob.pos == before) {
            if (s->zret != 0 && ob.pos == 0)
                return afd_priv_fail(err, AFD_EPARSE, 0, 0,
                                     "truncated zstd data (the input ends inside a frame)");
            break;
        }
    }
    *got = ob.pos;
    return AFD_OK;
}

static afd_status decode(afd_priv_src *s, char *buf, size_t cap, size_t *got, afd_error *err);

afd_status afd_priv_src_read(afd_priv_src *s, char *buf, size_t cap, size_t *got,
                             afd_error *err)
{
    *got = 0;
    if (cap == 0)
        return AFD_OK;
    if (s->peek_pos < s->peek_n) {
        size_t n = s->peek_n - s->peek_pos;
        if (n > cap)
            n = cap;
        memcpy(buf, s->peek + s->peek_pos, n);
        s->peek_pos += n;
        *got = n;
        return AFD_OK;
    }
    return decode(s, buf, cap, got, err);
}

afd_status afd_priv_src_peek(afd_priv_src *s, size_t want, const char **p, size_t *n,
                             afd_error *err)
{
    afd_status st;
    if (s->peek == NULL) {
        s->peek = malloc(want);
        if (s->peek == NULL)
            return afd_priv_fail(err, AFD_ENOMEM, 0, 0, "out of memory");
        while (s->peek_n < want) {
            size_t got;
            afd_error e;
            afd_error_clear(&e);
            if ((st = decode(s, s->peek + s->peek_n, want - s->peek_n, &got, &e)) != AFD_OK) {
                if (s->peek_n > 0) { /* the bytes first, the error on the next read */
                    s->pend_st = st;
                    s->pend_err = e;
                    break;
                }
                if (err != NULL)
                    *err = e;
                return st;
            }
            if (got == 0)
                break;
            s->peek_n += got;
        }
    }
    *p = s->peek;
    *n = s->peek_n;
    return AFD_OK;
}

static afd_status decode(afd_priv_src *s, char *buf, size_t cap, size_t *got, afd_error *err)
{
    *got = 0; /* also on the early return at the end of a plain file */
    if (s->pend_st != AFD_OK) {
        if (err != NULL)
            *err = s->pend_err;
        return s->pend_st;
    }
    if (s->mode != PLAIN) {
        afd_error e;
        afd_status st;
        afd_error_clear(&e);
        st = s->mode == GZIP ? read_gzip(s, buf, cap, got, &e) : read_zstd(s, buf, cap, got, &e);
        if (st != AFD_OK && *got > 0) {
            s->pend_st = st;
            s->pend_err = e;
            return AFD_OK;
        }
        if (st != AFD_OK) {
            if (err != NULL)
                *err = e;
            *got = 0;
        }
        return st;
    }
    /* Plain: first the sniffed bytes, then straight from the file. */
    if (s->in_pos < s->in_end) {
        size_t n = s->in_end - s->in_pos;
        if (n > cap)
            n = cap;
        memcpy(buf, s->in + s->in_pos, n);
        s->in_pos += n;
        *got = n;
        return AFD_OK;
    }
    if (s->in_eof)
        return AFD_OK;
    for (;;) {
        ssize_t n = read(s->fd, buf, cap);
        if (n < 0 && errno == EINTR)
            continue;
        if (n < 0)
            return afd_priv_fail(err, AFD_EIO, 0, 0, "read error: %s", strerror(errno));
        if (n == 0)
            s->in_eof = 1;
        *got = (size_t)n;
        return AFD_OK;
    }
}

const char *afd_priv_src_kind(const afd_priv_src *s)
{
    return s->mode == GZIP ? "gzip" : s->mode == ZSTD ? "zstd" : "plain";
}

void afd_priv_src_close(afd_priv_src *s)
{
    if (s == NULL)
        return;
    if (s->own_fd)
        close(s->fd);
    if (s->z_init)
        inflateEnd(&s->z);
    ZSTD_freeDCtx(s->zd);
    free(s->peek);
    free(s->in);
    free(s);
}
