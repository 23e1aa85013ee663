/* merge_part.c: the table of one part of a run split by --shard K/N, as
 * afdkit merge reads it (cli.h: cli_part_parse).  Messages go into the
 * part, so that the reader prints nothing and can be fuzzed. */
#include <config.h>

#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <jansson.h>

#include "cli.h"

#define MAX_META CLI_PART_MAX_META

/* Format the message into p->msg; return rc. */
static int part_fail(cli_part *p, int rc, const char *fmt, ...) CLI_PRINTF(3, 4);
static int part_fail(cli_part *p, int rc, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(p->msg, sizeof p->msg, fmt, ap);
    va_end(ap);
    return rc;
}

static int add_row(cli_part *p, char *line, size_t lineno)
{
    if (p->n_rows == p->cap_rows) {
        size_t cap = p->cap_rows ? 2 * p->cap_rows : 256;
        char **rows = realloc(p->rows, cap * sizeof *rows);
        size_t *lines;
        if (rows == NULL)
            return part_fail(p, 1, "out of memory");
        p->rows = rows;
        lines = realloc(p->row_line, cap * sizeof *lines);
        if (lines == NULL)
            return part_fail(p, 1, "out of memory");
        p->row_line = lines;
        p->cap_rows = cap;
    }
    p->rows[p->n_rows] = line;
    p->row_line[p->n_rows++] = lineno;
    return 0;
}

/* "K/N" of a shard marker; 0 or -1. */
static int parse_shard(const char *s, unsigned *k, unsigned *n)
{
    char *end;
    unsigned long kv, nv;
    if (*s < '1' || *s > '9')
        return -1;
    errno = 0;
    kv = strtoul(s, &end, 10);
    if (*end != '/' || end[1] < '1' || end[1] > '9')
        return -1;
    nv = strtoul(end + 1, &end, 10);
    if (*end != '\0' || errno != 0 || nv > CLI_SHARD_MAX || kv < 1 || kv > nv)
        return -1;
    *k = (unsigned)kv;
    *n = (unsigned)nv;
    return 0;
}

/* A provenance entry; shard and order are kept apart. */
static int add_meta(cli_part *p, char *key, char *value, size_t lineno)
{
    if (strcmp(key, "shard") == 0) {
        if (p->n > 0)
            return part_fail(p, 2, "%s:%zu: a second shard line", p->path, lineno);
        if (parse_shard(value, &p->k, &p->n) != 0)
            return part_fail(p, 2, "%s:%zu: shard is not K/N with 1 <= K <= N: '%s'", p->path,
                                   lineno, value);
        p->shard_line = lineno;
        return 0;
    }
    if (strcmp(key, "order") == 0) {
        p->order = value;
        return 0;
    }
    if (strcmp(key, "unit") == 0) {
        if (p->unit != NULL)
            return part_fail(p, 2, "%s:%zu: a second unit line", p->path, lineno);
        p->unit = value;
        p->unit_line = lineno;
        return 0;
    }
    if (p->n_meta == MAX_META)
        return part_fail(p, 2, "%s:%zu: more than %d provenance entries", p->path, lineno,
                               MAX_META);
    p->meta[p->n_meta].key = key;
    p->meta[p->n_meta].value = value;
    p->meta[p->n_meta++].line = lineno;
    return 0;
}

static int parse_tsv(cli_part *p)
{
    char *line = p->text, *next, *eq;
    size_t lineno = 0;
    int blank = 0, rc;
    for (; *line != '\0'; line = next) {
        next = strchr(line, '\n');
        if (next != NULL)
            *next++ = '\0';
        else
            next = line + strlen(line);
        lineno++;
        if (strchr(line, '\r') != NULL)
            return part_fail(p, 2,
                                   "%s:%zu: a carriage return: merge reads afdkit's "
                                   "tab-separated tables or JSON Lines, not CSV",
                                   p->path, lineno);
        if (line[0] == '\0') {
            blank = 1;
            continue;
        }
        if (blank)
            return part_fail(p, 2, "%s:%zu: a second block: merge joins one-block tables",
                                   p->path, lineno);
        if (strncmp(line, "## ", 3) == 0) {
            if (p->header != NULL)
                return part_fail(p, 2, "%s:%zu: a provenance line after the header", p->path,
                                       lineno);
            if ((eq = strchr(line + 3, '=')) == NULL)
                return part_fail(p, 2, "%s:%zu: a '## ' line without '='", p->path, lineno);
            *eq = '\0';
            if ((rc = add_meta(p, line + 3, eq + 1, lineno)) != 0)
                return rc;
        } else if (strncmp(line, "# ", 2) == 0) {
            if (p->header != NULL)
                return part_fail(p, 2,
                                       "%s:%zu: a second header: merge joins one-block "
                                       "tables",
                                       p->path, lineno);
            p->header = line + 2;
            p->header_line = lineno;
        } else {
            if (p->header == NULL)
                return part_fail(p, 2, "%s:%zu: a row before the '# ' header line", p->path,
                                       lineno);
            if ((rc = add_row(p, line, lineno)) != 0)
                return rc;
        }
    }
    if (p->header == NULL)
        return part_fail(p, 2, "%s: no '# ' header line: not an afdkit table", p->path);
    return 0;
}

/* The text of a JSON provenance value, as "## key=value" would show it. */
static char *json_value_text(const json_t *v)
{
    if (json_is_string(v))
        return strdup(json_string_value(v));
    return json_dumps(v, JSON_ENCODE_ANY | JSON_COMPACT | JSON_REAL_PRECISION(17));
}

static int parse_json(cli_part *p)
{
    char *line = p->text, *next;
    size_t lineno = 0, cap = 0;
    json_error_t jerr;
    int rc;
    for (; *line != '\0'; line = next) {
        json_t *v;
        next = strchr(line, '\n');
        if (next != NULL)
            *next++ = '\0';
        else
            next = line + strlen(line);
        lineno++;
        v = json_loads(line, JSON_REJECT_DUPLICATES, &jerr);
        if (v == NULL)
            return part_fail(p, 2, "%s:%zu: not JSON: %s", p->path, lineno, jerr.text);
        if (!json_is_object(v)) {
            json_decref(v);
            return part_fail(p, 2, "%s:%zu: not a JSON object", p->path, lineno);
        }
        if (lineno == 1 && json_object_size(v) == 1 && json_object_get(v, "provenance")) {
            json_t *prov = json_object_get(v, "provenance"), *val;
            const char *key;
            if (!json_is_object(prov)) {
                json_decref(v);
                return part_fail(p, 2, "%s:1: provenance is not an object", p->path);
            }
            json_object_foreach(prov, key, val)
            {
                /* The part owns the copies (part_free); shard is parsed,
                 * order kept as p->order. */
                char *k = strdup(key), *text = json_value_text(val);
                int shard = strcmp(key, "shard") == 0;
                int order = strcmp(key, "order") == 0 || strcmp(key, "unit") == 0;
                if (k == NULL || text == NULL) {
                    free(k);
                    free(text);
                    json_decref(v);
                    return part_fail(p, 1, "out of memory");
                }
                rc = add_meta(p, k, text, 1);
                if (shard || order || rc != 0)
                    free(k);
                if (shard || (rc != 0 && !order))
                    free(text);
                if (rc != 0) {
                    json_decref(v);
                    return rc;
                }
            }
            json_decref(v);
            continue;
        }
        if ((rc = add_row(p, line, lineno)) != 0) {
            json_decref(v);
            return rc;
        }
        if (p->n_rows > cap) {
            json_t **grown = realloc(p->objs, p->cap_rows * sizeof *grown);
            if (grown == NULL) {
                json_decref(v);
                return part_fail(p, 1, "out of memory");
            }
            p->objs = grown;
            cap = p->cap_rows;
        }
        p->objs[p->n_rows - 1] = v;
    }
    return 0;
}

void cli_part_free(cli_part *p)
{
    size_t k;
    free(p->text);
    free(p->rows);
    free(p->row_line);
    if (p->json) {
        for (k = 0; k < p->n_meta; k++) {
            free(p->meta[k].key);
            free(p->meta[k].value);
        }
        free(p->order);
        free(p->unit);
        for (k = 0; k < p->n_rows; k++)
            json_decref(p->objs[k]);
    }
    free(p->objs);
}

int cli_part_parse(cli_part *p)
{
    const char *s;
    for (s = p->text; *s == ' ' || *s == '\t' || *s == '\n'; s++)
        ;
    p->json = *s == '{';
    return p->json ? parse_json(p) : parse_tsv(p);
}
