/* stages_parse.c: the JSON stage list of a serving pipeline (afd_stages.h).
 *
 * jansson parses and reports syntax errors with their line and column; it
 * keeps no positions for the values, so a small scanner walks the (already
 * valid) text once and records where each value starts, by path
 * ("stages[2].service.const"), for the messages about values. */
#include <config.h>

#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <jansson.h>

#include "afd_parse.h"
#include "afd_stages.h"
#include "internal.h"

enum { MAX_STAGES = 64, PATH_CAP = 96 };

/* dst = path.key (key alone at the top), cut to PATH_CAP - 1 bytes. */
static void join(char *dst, const char *path, const char *key)
{
    size_t n = strlen(path), k = strlen(key);
    if (n > PATH_CAP - 1)
        n = PATH_CAP - 1;
    memmove(dst, path, n);
    if (n > 0 && n < PATH_CAP - 1)
        dst[n++] = '.';
    if (k > PATH_CAP - 1 - n)
        k = PATH_CAP - 1 - n;
    memcpy(dst + n, key, k);
    dst[n + k] = '\0';
}

typedef struct pos_entry {
    char path[PATH_CAP];
    long line, column;
} pos_entry;

typedef struct scan {
    const char *s;
    size_t len, i;
    long line, col;
    pos_entry *e;
    size_t n, cap;
    int oom;
} scan;

static void adv(scan *sc)
{
    if (sc->i < sc->len) {
        if (sc->s[sc->i] == '\n') {
            sc->line++;
            sc->col = 1;
        } else if ((sc->s[sc->i] & 0xC0) != 0x80) { /* count characters, not bytes */
            sc->col++;
        }
        sc->i++;
    }
}

static void skip_ws(scan *sc)
{
    while (sc->i < sc->len && strchr(" \t\r\n", sc->s[sc->i]) != NULL && sc->s[sc->i] != '\0')
        adv(sc);
}

static void record(scan *sc, const char *path)
{
    if (sc->n == sc->cap) {
        size_t cap = sc->cap ? 2 * sc->cap : 64;
        pos_entry *e = realloc(sc->e, cap * sizeof *e);
        if (e == NULL) {
            sc->oom = 1;
            return;
        }
        sc->e = e;
        sc->cap = cap;
    }
    snprintf(sc->e[sc->n].path, PATH_CAP, "%s", path);
    sc->e[sc->n].line = sc->line;
    sc->e[sc->n].column = sc->col;
    sc->n++;
}

/* Skip a string starting at '"'; copy its raw content (escapes kept) to key. */
static void skip_string(scan *sc, char *key, size_t cap)
{
    size_t k = 0;
    adv(sc); /* opening quote */
    while (sc->i < sc->len && sc->s[sc->i] != '"') {
        if (sc->s[sc->i] == '\\') {
            if (key != NULL && k + 1 < cap)
                key[k++] = sc->s[sc->i];
            adv(sc);
        }
        if (key != NULL && k + 1 < cap && sc->i < sc->len)
            key[k++] = sc->s[sc->i];
        adv(sc);
    }
    if (key != NULL)
        key[k] = '\0';
    adv(sc); /* closing quote */
}

static void scan_value(scan *sc, char *path, int depth)
{
    size_t plen = strlen(path);
    skip_ws(sc);
    if (sc->i >= sc->len)
        return;
    if (depth < 8)
        record(sc, path);
    if (sc->s[sc->i] == '{') {
        adv(sc);
        for (;;) {
            char key[48];
            skip_ws(sc);
            if (sc->i >= sc->len || sc->s[sc->i] == '}')
                break;
            if (sc->s[sc->i] != '"')
                break; /* cannot happen in valid JSON */
            skip_string(sc, key, sizeof key);
            join(path, path, key);
            skip_ws(sc);
            adv(sc); /* ':' */
            scan_value(sc, path, depth + 1);
            path[plen] = '\0';
            skip_ws(sc);
            if (sc->i < sc->len && sc->s[sc->i] == ',')
                adv(sc);
        }
        adv(sc);
    } else if (sc->s[sc->i] == '[') {
        size_t idx = 0;
        adv(sc);
        for (;;) {
            skip_ws(sc);
            if (sc->i >= sc->len || sc->s[sc->i] == ']')
                break;
            snprintf(path + plen, PATH_CAP - plen, "[%zu]", idx++);
            scan_value(sc, path, depth + 1);
            path[plen] = '\0';
            skip_ws(sc);
            if (sc->i < sc->len && sc->s[sc->i] == ',')
                adv(sc);
        }
        adv(sc);
    } else if (sc->s[sc->i] == '"') {
        skip_string(sc, NULL, 0);
    } else {
        while (sc->i < sc->len && strchr(",]} \t\r\n", sc->s[sc->i]) == NULL)
            adv(sc);
    }
}

typedef struct ctx {
    scan sc;
    afd_error *err;
} ctx;

static void where(const ctx *c, const char *path, long *line, long *col)
{
    size_t k;
    *line = *col = 0;
    for (k = 0; k < c->sc.n; k++)
        if (strcmp(c->sc.e[k].path, path) == 0) {
            *line = c->sc.e[k].line;
            *col = c->sc.e[k].column;
            return;
        }
}

static afd_status fail_at(const ctx *c, const char *path, afd_status st, const char *fmt, ...)
    AFD_PRINTF(4, 5);

static afd_status fail_at(const ctx *c, const char *path, afd_status st, const char *fmt, ...)
{
    char msg[200];
    long line, col;
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(msg, sizeof msg, fmt, ap);
    va_end(ap);
    where(c, path, &line, &col);
    return afd_priv_fail(c->err, st, line, col, "%s", msg);
}

static const char *type_name(const json_t *v)
{
    switch (json_typeof(v)) {
    case JSON_OBJECT:
        return "an object";
    case JSON_ARRAY:
        return "an array";
    case JSON_STRING:
        return "a string";
    case JSON_INTEGER:
    case JSON_REAL:
        return "a number";
    case JSON_TRUE:
    case JSON_FALSE:
        return "a boolean";
    default:
        return "null";
    }
}

/* A time in seconds: a number, or a string with a unit ("20ms"). */
static afd_status get_time(const ctx *c, const char *path, const json_t *v, const char *what,
                           double *out)
{
    if (json_is_number(v)) {
        *out = json_number_value(v);
    } else if (json_is_string(v)) {
        char shown[64];
        const char *s = json_string_value(v);
        if (afd_parse_time(s, "s", out) != AFD_OK) {
            afd_priv_show(s, strlen(s), shown, sizeof shown);
            return fail_at(c, path, AFD_EPARSE,
                           "%s: not a time: '%s' (a number of seconds, or e.g. \"20ms\")", what,
                           shown);
        }
    } else {
        return fail_at(c, path, AFD_EPARSE, "%s must be a time (seconds), not %s", what,
                       type_name(v));
    }
    if (!(*out >= 0) || !isfinite(*out))
        return fail_at(c, path, AFD_EINVAL, "%s must be >= 0: %g", what, *out);
    return AFD_OK;
}

static afd_status get_int(const ctx *c, const char *path, const json_t *v, const char *what,
                          long lo, long hi, int *out)
{
    double x;
    if (!json_is_number(v))
        return fail_at(c, path, AFD_EPARSE, "%s must be an integer, not %s", what, type_name(v));
    x = json_number_value(v);
    if (x != floor(x) || x < (double)lo || x > (double)hi)
        return fail_at(c, path, AFD_EINVAL, "%s must be an integer in [%ld, %ld]: %g", what, lo, hi,
                       x);
    *out = (int)x;
    return AFD_OK;
}

static afd_status get_tokens(const ctx *c, const char *path, const json_t *v, int *output)
{
    const char *s = json_is_string(v) ? json_string_value(v) : NULL;
    if (s != NULL && strcmp(s, "prompt") == 0)
        *output = 0;
    else if (s != NULL && strcmp(s, "output") == 0)
        *output = 1;
    else
        return fail_at(c, path, AFD_EINVAL, "tokens must be \"prompt\" or \"output\"");
    return AFD_OK;
}

/* Every key of obj must be in known (NULL-terminated). */
static afd_status check_keys(const ctx *c, const char *path, const json_t *obj,
                             const char *const *known, const char *what)
{
    const char *key;
    json_t *v;
    json_object_foreach((json_t *)obj, key, v)
    {
        size_t k;
        int ok = 0;
        char sub[PATH_CAP], shown[64], list[160] = "";
        for (k = 0; known[k] != NULL; k++) {
            ok |= strcmp(key, known[k]) == 0;
            snprintf(list + strlen(list), sizeof list - strlen(list), "%s%s", k ? ", " : "",
                     known[k]);
        }
        if (ok)
            continue;
        join(sub, path, key);
        afd_priv_show(key, strlen(key), shown, sizeof shown);
        return fail_at(c, sub, AFD_EINVAL, "unknown key '%s' in %s (known: %s)", shown, what, list);
    }
    return AFD_OK;
}

static afd_status parse_service(const ctx *c, const char *path, const json_t *v, afd_stage *st)
{
    static const char *const kinds[] = {"const", "exp", "affine", "latency", NULL};
    char sub[PATH_CAP];
    const char *key;
    json_t *x;
    afd_status s;
    if (!json_is_object(v))
        return fail_at(c, path, AFD_EPARSE, "service must be an object, not %s", type_name(v));
    if ((s = check_keys(c, path, v, kinds, "service")) != AFD_OK)
        return s;
    if (json_object_size(v) != 1)
        return fail_at(c, path, AFD_EINVAL,
                       "service must hold exactly one of const, exp, affine, latency (%zu given)",
                       json_object_size(v));
    json_object_foreach((json_t *)v, key, x)
    {
        join(sub, path, key);
        if (strcmp(key, "const") == 0) {
            st->kind = AFD_SERVICE_CONST;
            return get_time(c, sub, x, "const", &st->time);
        }
        if (strcmp(key, "exp") == 0) {
            st->kind = AFD_SERVICE_EXP;
            if ((s = get_time(c, sub, x, "exp", &st->time)) != AFD_OK)
                return s;
            if (!(st->time > 0))
                return fail_at(c, sub, AFD_EINVAL, "exp: the mean must be > 0");
            return AFD_OK;
        }
        if (strcmp(key, "affine") == 0) {
            static const char *const keys[] = {"a", "b", "tokens", NULL};
            char sub2[PATH_CAP];
            json_t *y;
            st->kind = AFD_SERVICE_AFFINE;
            if (!json_is_object(x))
                return fail_at(c, sub, AFD_EPARSE,
                               "affine must be an object {\"a\": s, \"b\": s per token}, not %s",
                               type_name(x));
            if ((s = check_keys(c, sub, x, keys, "affine")) != AFD_OK)
                return s;
            st->a = st->b = 0;
            if ((y = json_object_get(x, "a")) != NULL) {
                join(sub2, sub, "a");
                if ((s = get_time(c, sub2, y, "affine a", &st->a)) != AFD_OK)
                    return s;
            }
            if ((y = json_object_get(x, "b")) == NULL)
                return fail_at(c, sub, AFD_EINVAL, "affine needs b (seconds per token)");
            join(sub2, sub, "b");
            if ((s = get_time(c, sub2, y, "affine b", &st->b)) != AFD_OK)
                return s;
            if ((y = json_object_get(x, "tokens")) != NULL) {
                join(sub2, sub, "tokens");
                return get_tokens(c, sub2, y, &st->output_tokens);
            }
            return AFD_OK;
        }
        /* latency */
        st->kind = AFD_SERVICE_LATENCY;
        if (json_is_string(x) && strcmp(json_string_value(x), "prefill") == 0)
            st->decode_phase = 0;
        else if (json_is_string(x) && strcmp(json_string_value(x), "decode") == 0)
            st->decode_phase = 1;
        else
            return fail_at(c, sub, AFD_EINVAL, "latency must be \"prefill\" or \"decode\"");
        return AFD_OK;
    }
    return AFD_OK;
}

static afd_status parse_routing(const ctx *c, const char *path, const json_t *v, afd_stage *st)
{
    static const struct {
        const char *name;
        afd_routing r;
    } names[] = {{"fcfs", AFD_ROUTE_FCFS},
                 {"least-work", AFD_ROUTE_LEAST_WORK},
                 {"rr", AFD_ROUTE_RR},
                 {"jsq", AFD_ROUTE_JSQ}};
    size_t k;
    if (json_is_string(v)) {
        const char *s = json_string_value(v);
        char shown[64];
        for (k = 0; k < sizeof names / sizeof names[0]; k++)
            if (strcmp(s, names[k].name) == 0) {
                st->routing = names[k].r;
                return AFD_OK;
            }
        afd_priv_show(s, strlen(s), shown, sizeof shown);
        if (strcmp(s, "heavy-light") == 0)
            return fail_at(c, path, AFD_EINVAL,
                           "heavy-light needs its split: {\"heavy-light\": {\"split\": N, "
                           "\"light\": K}}");
        return fail_at(c, path, AFD_EINVAL,
                       "unknown routing '%s' (fcfs, least-work, rr, jsq, heavy-light)", shown);
    }
    if (json_is_object(v)) {
        static const char *const top[] = {"heavy-light", NULL};
        static const char *const keys[] = {"split", "light", "tokens", NULL};
        char sub[PATH_CAP], sub2[PATH_CAP];
        json_t *h, *y;
        afd_status s;
        int n;
        if ((s = check_keys(c, path, v, top, "routing")) != AFD_OK)
            return s;
        join(sub, path, "heavy-light");
        h = json_object_get(v, "heavy-light");
        if (h == NULL || !json_is_object(h))
            return fail_at(c, h ? sub : path, AFD_EINVAL,
                           "heavy-light must be an object {\"split\": N, \"light\": K}");
        if ((s = check_keys(c, sub, h, keys, "heavy-light")) != AFD_OK)
            return s;
        st->routing = AFD_ROUTE_HEAVY_LIGHT;
        if ((y = json_object_get(h, "split")) == NULL || !json_is_number(y) ||
            !(json_number_value(y) >= 0))
            return fail_at(c, y ? (join(sub2, sub, "split"), sub2) : sub, AFD_EINVAL,
                           "heavy-light needs split, a token count >= 0");
        st->split = json_number_value(y);
        if ((y = json_object_get(h, "light")) == NULL)
            return fail_at(c, sub, AFD_EINVAL,
                           "heavy-light needs light, the servers of the light pool");
        join(sub2, sub, "light");
        if (st->servers < 2)
            return fail_at(c, sub2, AFD_EINVAL, "heavy-light needs at least 2 servers");
        if ((s = get_int(c, sub2, y, "light", 1, (long)st->servers - 1, &n)) != AFD_OK)
            return s;
        st->light_servers = (unsigned)n;
        if ((y = json_object_get(h, "tokens")) != NULL) {
            join(sub2, sub, "tokens");
            return get_tokens(c, sub2, y, &st->split_output);
        }
        return AFD_OK;
    }
    return fail_at(c, path, AFD_EPARSE, "routing must be a string or an object, not %s",
                   type_name(v));
}

static afd_status parse_stage(const ctx *c, size_t i, const json_t *v, afd_stage *st)
{
    static const char *const keys[] = {"name", "servers", "service", "routing", "repeat", NULL};
    char path[PATH_CAP], sub[PATH_CAP];
    json_t *x;
    afd_status s;

    snprintf(path, sizeof path, "stages[%zu]", i);
    memset(st, 0, sizeof *st);
    st->servers = 1;
    st->repeat = 1;
    st->time = st->a = st->b = st->split = NAN;
    where(c, path, &st->line, &st->column);
    if (!json_is_object(v))
        return fail_at(c, path, AFD_EPARSE, "a stage must be an object, not %s", type_name(v));
    if ((s = check_keys(c, path, v, keys, "a stage")) != AFD_OK)
        return s;
    snprintf(st->name, sizeof st->name, "stage%zu", i + 1);
    if ((x = json_object_get(v, "name")) != NULL) {
        const char *nm = json_is_string(x) ? json_string_value(x) : NULL;
        size_t k;
        join(sub, path, "name");
        if (nm == NULL || nm[0] == '\0' || strlen(nm) >= sizeof st->name)
            return fail_at(c, sub, AFD_EINVAL, "name must be a string of 1 to %zu characters",
                           sizeof st->name - 1);
        for (k = 0; nm[k] != '\0'; k++)
            if ((unsigned char)nm[k] <= ' ' || (unsigned char)nm[k] >= 0x7f || nm[k] == ',')
                return fail_at(c, sub, AFD_EINVAL,
                               "name must be printable ASCII without blanks or commas");
        if (strcmp(nm, "total") == 0)
            return fail_at(c, sub, AFD_EINVAL, "'total' is the name of the end-to-end row");
        snprintf(st->name, sizeof st->name, "%s", nm);
    }
    if ((x = json_object_get(v, "servers")) != NULL) {
        join(sub, path, "servers");
        int n;
        if ((s = get_int(c, sub, x, "servers", 1, 100000, &n)) != AFD_OK)
            return s;
        st->servers = (unsigned)n;
    }
    if ((x = json_object_get(v, "repeat")) != NULL) {
        join(sub, path, "repeat");
        if ((s = get_int(c, sub, x, "repeat", 1, 10000, &st->repeat)) != AFD_OK)
            return s;
    }
    if ((x = json_object_get(v, "service")) == NULL)
        return fail_at(c, path, AFD_EINVAL, "stage '%s' has no service", st->name);
    join(sub, path, "service");
    if ((s = parse_service(c, sub, x, st)) != AFD_OK)
        return s;
    if ((x = json_object_get(v, "routing")) != NULL) {
        join(sub, path, "routing");
        if ((s = parse_routing(c, sub, x, st)) != AFD_OK)
            return s;
    }
    return AFD_OK;
}

afd_status afd_stages_parse(const char *text, size_t len, afd_stages *out, afd_error *err)
{
    static const char *const top[] = {"stages", NULL};
    json_error_t jerr;
    json_t *root, *arr;
    ctx c;
    char path[PATH_CAP] = "";
    afd_status st = AFD_OK;
    size_t i, k;

    out->n = 0;
    out->stage = NULL;
    afd_error_clear(err);
    root = json_loadb(text, len, JSON_REJECT_DUPLICATES, &jerr);
    if (root == NULL) {
        /* jansson's message already says what and where; keep it on one line */
        char msg[160];
        afd_priv_show(jerr.text, strlen(jerr.text), msg, sizeof msg);
        return afd_priv_fail(err, AFD_EPARSE, jerr.line > 0 ? jerr.line : 0,
                             jerr.column > 0 ? jerr.column : 0, "%s", jerr.text);
    }
    memset(&c, 0, sizeof c);
    c.err = err;
    c.sc.s = text;
    c.sc.len = len;
    c.sc.line = c.sc.col = 1;
    scan_value(&c.sc, path, 0);
    if (c.sc.oom) {
        st = AFD_ENOMEM;
        goto done;
    }
    if (!json_is_object(root)) {
        st = fail_at(&c, "", AFD_EPARSE, "the document must be an object {\"stages\": [...]}");
        goto done;
    }
    if ((st = check_keys(&c, "", root, top, "the document")) != AFD_OK)
        goto done;
    arr = json_object_get(root, "stages");
    if (arr == NULL || !json_is_array(arr) || json_array_size(arr) == 0 ||
        json_array_size(arr) > MAX_STAGES) {
        st = fail_at(&c, arr != NULL ? "stages" : "", AFD_EINVAL,
                     "stages must be a list of 1 to %d stages", MAX_STAGES);
        goto done;
    }
    out->stage = calloc(json_array_size(arr), sizeof *out->stage);
    if (out->stage == NULL) {
        st = AFD_ENOMEM;
        goto done;
    }
    for (i = 0; i < json_array_size(arr); i++) {
        if ((st = parse_stage(&c, i, json_array_get(arr, i), &out->stage[i])) != AFD_OK)
            goto done;
        for (k = 0; k < i; k++)
            if (strcmp(out->stage[k].name, out->stage[i].name) == 0) {
                snprintf(path, sizeof path, "stages[%zu].name", i);
                st = fail_at(&c, path, AFD_EINVAL, "two stages are named '%s'", out->stage[i].name);
                goto done;
            }
        out->n = i + 1;
    }
done:
    json_decref(root);
    free(c.sc.e);
    if (st != AFD_OK)
        afd_stages_free(out);
    return st;
}

afd_status afd_stages_read(const char *path, afd_stages *out, afd_error *err)
{
    FILE *f;
    char *buf;
    size_t n;
    afd_status st;
    out->n = 0;
    out->stage = NULL;
    afd_error_clear(err);
    f = fopen(path, "rb");
    if (f == NULL)
        return afd_priv_fail(err, AFD_EIO, 0, 0, "cannot open: %s", strerror(errno));
    buf = malloc((1u << 20) + 1);
    if (buf == NULL) {
        fclose(f);
        return AFD_ENOMEM;
    }
    n = fread(buf, 1, (1u << 20) + 1, f);
    if (ferror(f)) {
        st = afd_priv_fail(err, AFD_EIO, 0, 0, "cannot read: %s", strerror(errno));
    } else if (n > (1u << 20)) {
        st = afd_priv_fail(err, AFD_EINVAL, 0, 0, "larger than 1 MiB");
    } else {
        st = afd_stages_parse(buf, n, out, err);
    }
    fclose(f);
    free(buf);
    return st;
}

void afd_stages_free(afd_stages *s)
{
    if (s == NULL)
        return;
    free(s->stage);
    s->stage = NULL;
    s->n = 0;
}

int afd_stage_needs_tokens(const afd_stage *st)
{
    return st->kind == AFD_SERVICE_AFFINE || st->kind == AFD_SERVICE_LATENCY ||
           st->routing == AFD_ROUTE_HEAVY_LIGHT;
}

afd_status afd_stage_service(const afd_stage *st, const afd_hw *hw, double hw_sec, double P,
                             double D, double *seconds)
{
    *seconds = NAN;
    switch (st->kind) {
    case AFD_SERVICE_CONST:
    case AFD_SERVICE_EXP:
        *seconds = st->time;
        return AFD_OK;
    case AFD_SERVICE_AFFINE:
        *seconds = st->a + st->b * (st->output_tokens ? D : P);
        return AFD_OK;
    case AFD_SERVICE_LATENCY:
        if (hw == NULL || !(hw_sec > 0))
            return AFD_EINVAL;
        if (!st->decode_phase) {
            if (!afd_hw_has_prefill(hw))
                return AFD_EINVAL;
            *seconds = hw_sec * (hw->prefill_a + hw->prefill_b * P + hw->prefill_c * P * P);
        } else {
            if (!afd_hw_has_decode(hw))
                return AFD_EINVAL;
            *seconds = hw_sec * (D * (hw->decode_beta + hw->decode_gamma) +
                                 hw->decode_alpha * (D * P + D * (D - 1) / 2));
        }
        return AFD_OK;
    }
    return AFD_EINVAL;
}
