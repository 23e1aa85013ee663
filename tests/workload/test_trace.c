/* test_trace.c: the streaming CSV reader, every dialect and error path. */
#include <config.h>

#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "test_util.h"

#include "afd_trace.h"

/* Read a whole in-memory trace; returns the status that ended it and fills
 * up to cap rows. */
static afd_status read_all(const char *csv, const afd_trace_options *opt, afd_trace_row *rows,
                           size_t cap, size_t *n, afd_error *err)
{
    afd_trace *t;
    afd_status st = afd_trace_open_memory(csv, strlen(csv), opt, &t, err);
    *n = 0;
    if (st != AFD_OK)
        return st;
    for (;;) {
        afd_trace_row r;
        st = afd_trace_next(t, &r, err);
        if (st != AFD_OK)
            break;
        if (*n < cap)
            rows[*n] = r;
        (*n)++;
    }
    afd_trace_close(t);
    return st;
}

static void expect_rows(const char *csv, const afd_trace_options *opt, const uint64_t *pd,
                        const long *lines, size_t n)
{
    afd_trace_row rows[16];
    afd_error err;
    size_t got, k;
    afd_status st = read_all(csv, opt, rows, 16, &got, &err);
    if (st != AFD_EOF)
        fail_msg("status %d at line %ld: %s", (int)st, err.line, err.text);
    assert_int_equal(got, n);
    for (k = 0; k < n; k++) {
        assert_true(rows[k].prompt == pd[2 * k]);
        assert_true(rows[k].output == pd[2 * k + 1]);
        if (lines != NULL)
            assert_int_equal(rows[k].line, lines[k]);
    }
}

static void expect_error(const char *csv, const afd_trace_options *opt, afd_status want,
                         long line, const char *text)
{
    afd_trace_row rows[16];
    afd_error err;
    size_t got;
    afd_status st = read_all(csv, opt, rows, 16, &got, &err);
    if (st != want)
        fail_msg("status %d, expected %d (%s)", (int)st, (int)want, err.text);
    assert_int_equal(err.line, line);
    if (strcmp(err.text, text) != 0)
        fail_msg("message '%s', expected '%s'", err.text, text);
}

static void azure_dialect(void **state)
{
    /* CRLF, no final newline, the Azure header. */
    static const char csv[] = "TIMESTAMP,ContextTokens,GeneratedTokens\r\n"
                              "2023-11-16 18:15:46.6805900,374,44\r\n"
                              "2023-11-16 18:15:50.9951690,396,109";
    static const uint64_t pd[] = {374, 44, 396, 109};
    static const long lines[] = {2, 3};
    (void)state;
    expect_rows(csv, NULL, pd, lines, 2);
}

static void bom_lf_final_newline(void **state)
{
    static const char csv[] = "\xEF\xBB\xBFprompt_tokens,output_tokens\n7,1\n0,3\n";
    static const uint64_t pd[] = {7, 1, 0, 3};
    static const long lines[] = {2, 3};
    (void)state;
    expect_rows(csv, NULL, pd, lines, 2);
}

static void quoting(void **state)
{
    /* Quoted header names with blanks, a quoted number, a text column with
     * commas, escaped quotes and a newline inside quotes (record 2 spans
     * lines 3-4, so record 3 starts on line 5). */
    static const char csv[] = "id,\"Request tokens\",\"Response tokens\",note\n"
                              "1,\"10\",20,\"plain\"\n"
                              "2,11,21,\"a, \"\"quoted\"\"\nsecond line\"\n"
                              "3, 12 ,\"22\" ,x\n";
    static const uint64_t pd[] = {10, 20, 11, 21, 12, 22};
    static const long lines[] = {2, 3, 5};
    (void)state;
    expect_rows(csv, NULL, pd, lines, 3);
}

static void line_endings_and_blank_lines(void **state)
{
    /* lone CR, CRLF and LF mixed; blank and whitespace-only lines skipped */
    static const char csv[] = "input_length,output_length\r"
                              "1,2\r\n"
                              "\n"
                              "3,4\n"
                              "   \r\n"
                              "5,6\r";
    static const uint64_t pd[] = {1, 2, 3, 4, 5, 6};
    static const long lines[] = {2, 4, 6};
    (void)state;
    expect_rows(csv, NULL, pd, lines, 3);
}

static void column_detection(void **state)
{
    static const uint64_t pd[] = {5, 6};
    afd_trace_options opt = {.prompt_col = "b", .output_col = "a"};
    afd_trace_options ci = {.prompt_col = "PROMPT", .output_col = NULL};
    (void)state;
    expect_rows("num_prefill_tokens,num_decode_tokens\n5,6\n", NULL, pd, NULL, 1);
    /* case-insensitive recognition */
    expect_rows("contexttokens,GENERATEDTOKENS\n5,6\n", NULL, pd, NULL, 1);
    /* explicit names, in any order */
    expect_rows("a,b\n6,5\n", &opt, pd, NULL, 1);
    /* explicit prompt name matched case-insensitively, output recognised */
    expect_rows("Prompt,output_tokens\n5,6\n", &ci, pd, NULL, 1);
}

static void column_errors(void **state)
{
    afd_trace_options unknown = {.prompt_col = "Tokens", .output_col = NULL};
    afd_trace_options same = {.prompt_col = "a", .output_col = "a"};
    (void)state;
    expect_error("a,b\n1,2\n", NULL, AFD_EPARSE, 1,
                 "no prompt-token column recognised (header has 'a', 'b'); "
                 "name it with --prompt-col");
    expect_error("ContextTokens,x\n1,2\n", NULL, AFD_EPARSE, 1,
                 "no output-token column recognised (header has 'ContextTokens', 'x'); "
                 "name it with --output-col");
    expect_error("ContextTokens,GeneratedTokens\n1,2\n", &unknown, AFD_EPARSE, 1,
                 "unknown column 'Tokens' (header has 'ContextTokens', 'GeneratedTokens')");
    expect_error("ContextTokens,GeneratedTokens,GeneratedTokens\n1,2,3\n", NULL, AFD_EPARSE, 1,
                 "column 'GeneratedTokens' appears more than once in the header");
    expect_error("a,b\n1,2\n", &same, AFD_EPARSE, 1,
                 "the prompt-token and output-token columns are both 'a'");
}

static void value_errors(void **state)
{
    static const char hdr[] = "TIMESTAMP,ContextTokens,GeneratedTokens\n";
    char csv[512];
    (void)state;
    snprintf(csv, sizeof csv, "%s0,1,2\n0,3,12x\n", hdr);
    expect_error(csv, NULL, AFD_EPARSE, 3, "column 'GeneratedTokens' is not an integer: '12x'");
    snprintf(csv, sizeof csv, "%s0,-3,2\n", hdr);
    expect_error(csv, NULL, AFD_EPARSE, 2, "column 'ContextTokens' is negative: '-3'");
    snprintf(csv, sizeof csv, "%s0,2.5,2\n", hdr);
    expect_error(csv, NULL, AFD_EPARSE, 2, "column 'ContextTokens' is not an integer: '2.5'");
    snprintf(csv, sizeof csv, "%s0,,2\n", hdr);
    expect_error(csv, NULL, AFD_EPARSE, 2, "column 'ContextTokens' is empty");
    snprintf(csv, sizeof csv, "%s0,1\n", hdr);
    expect_error(csv, NULL, AFD_EPARSE, 2, "row has 2 fields, header has 3");
    snprintf(csv, sizeof csv, "%s0,1,2,3\n", hdr);
    expect_error(csv, NULL, AFD_EPARSE, 2, "row has 4 fields, header has 3");
    snprintf(csv, sizeof csv, "%s0,18446744073709551616,2\n", hdr);
    expect_error(csv, NULL, AFD_ERANGE, 2,
                 "column 'ContextTokens' is too large (>= 2^64): '18446744073709551616'");
    snprintf(csv, sizeof csv, "%s0,1,2\n\"0,3,4\n", hdr);
    expect_error(csv, NULL, AFD_EPARSE, 3, "unterminated quoted field");
    snprintf(csv, sizeof csv, "%s0,\"1\"x,2\n", hdr);
    expect_error(csv, NULL, AFD_EPARSE, 2, "unexpected text after a closing quote: 'x,2\\x0a'");
    snprintf(csv, sizeof csv, "%s0,\"1\"\"2\",2\n", hdr);
    expect_error(csv, NULL, AFD_EPARSE, 2,
                 "column 'ContextTokens' is not an integer: '1\"\"2'");
    /* control bytes in a value are escaped so the message stays one line */
    snprintf(csv, sizeof csv, "%s0,\"1\r\n2\",2\n", hdr);
    expect_error(csv, NULL, AFD_EPARSE, 2,
                 "column 'ContextTokens' is not an integer: '1\\x0d\\x0a2'");
}

static void empty_inputs(void **state)
{
    afd_trace_row rows[4];
    afd_error err;
    size_t n;
    (void)state;
    expect_error("", NULL, AFD_EEMPTY, 1, "empty file: expected a header row");
    expect_error("\xEF\xBB\xBF\r\n\n", NULL, AFD_EEMPTY, 1, "empty file: expected a header row");
    /* header only: the reader simply ends; the caller decides it is empty */
    assert_int_equal(read_all("ContextTokens,GeneratedTokens\r\n", NULL, rows, 4, &n, &err),
                     AFD_EOF);
    assert_int_equal(n, 0);
}

static void sticky_error(void **state)
{
    static const char csv[] = "ContextTokens,GeneratedTokens\nx,1\n2,3\n";
    afd_trace *t;
    afd_trace_row r;
    afd_error err;
    (void)state;
    assert_int_equal(afd_trace_open_memory(csv, strlen(csv), NULL, &t, &err), AFD_OK);
    assert_int_equal(afd_trace_next(t, &r, &err), AFD_EPARSE);
    assert_int_equal(afd_trace_next(t, &r, &err), AFD_EPARSE);
    assert_int_equal(err.line, 2);
    afd_trace_close(t);
}

/* What a reader gave for a whole input: the final status and error, and
 * the rows. */
struct outcome {
    afd_status st;
    afd_error err;
    afd_trace_row rows[8];
    size_t n;
};

/* Read data[0..len) from memory and from a file and check that both readers
 * give the same rows and the same error; *mem gets the memory reader's. */
static void read_both(const char *data, size_t len, const afd_trace_options *opt,
                      struct outcome *mem)
{
    char path[] = "/tmp/afdkit-test-both-XXXXXX";
    int fd = mkstemp(path);
    struct outcome o[2];
    int k;
    size_t i;
    assert_true(fd >= 0);
    assert_true(write(fd, data, len) == (ssize_t)len);
    assert_int_equal(close(fd), 0);
    for (k = 0; k < 2; k++) {
        afd_trace *t;
        afd_trace_row r;
        o[k].n = 0;
        o[k].st = k == 0 ? afd_trace_open_memory(data, len, opt, &t, &o[k].err)
                         : afd_trace_open(path, opt, &t, &o[k].err);
        if (o[k].st != AFD_OK)
            continue;
        while ((o[k].st = afd_trace_next(t, &r, &o[k].err)) == AFD_OK)
            if (o[k].n < 8)
                o[k].rows[o[k].n++] = r;
        afd_trace_close(t);
    }
    unlink(path);
    if (o[0].st != o[1].st)
        fail_msg("memory: status %d (%s), file: status %d (%s)", (int)o[0].st, o[0].err.text,
                 (int)o[1].st, o[1].err.text);
    if (o[0].st != AFD_EOF) {
        if (strcmp(o[0].err.text, o[1].err.text) != 0)
            fail_msg("memory: '%s', file: '%s'", o[0].err.text, o[1].err.text);
        assert_int_equal(o[0].err.line, o[1].err.line);
        assert_int_equal(o[0].err.column, o[1].err.column);
    }
    assert_int_equal(o[0].n, o[1].n);
    for (i = 0; i < o[0].n; i++) {
        assert_true(o[0].rows[i].prompt == o[1].rows[i].prompt);
        assert_true(o[0].rows[i].output == o[1].rows[i].output);
        assert_int_equal(o[0].rows[i].line, o[1].rows[i].line);
    }
    *mem = o[0];
}

/* Only the byte-order mark at the start of the input is one: a second mark
 * is text, in the memory reader and in the file reader alike, and a NUL
 * byte is an error at its line and column. */
static void second_bom_and_nul(void **state)
{
    /* Two marks, then a header whose first field holds NUL bytes: the first
     * NUL follows the mark (one character) and "promp\xc9" (six: 0xC9
     * starts a character), so it is in column 8. */
    static const char crash[] = "\xEF\xBB\xBF\xEF\xBB\xBFpromp\xC9\0\0\0\0\0\0\0"
                                ",outp\xBFpromp\xC9\0\0\0\0\0\0\0,ou";
    static const char two_boms[] = "\xEF\xBB\xBF\xEF\xBB\xBFp,o\n7,1\n";
    static const char json2[] = "\xEF\xBB\xBF\xEF\xBB\xBF{\"input_length\": 1, "
                                "\"output_length\": 2}\n";
    static const char json_late[] = "{\"input_length\": 1, \"output_length\": 2}\n"
                                    "\xEF\xBB\xBF{\"input_length\": 3, \"output_length\": 4}\n";
    static const char blank_bom[] = "\n\xEF\xBB\xBFp,o\n7,1\n";
    static const char nul_row[] = "p,o\n7,1\n8,\0" "2\n";
    static const char nul_quoted[] = "p,o\n7,\"x\ny\0\"\n";
    const afd_trace_options marked = {.prompt_col = "\xEF\xBB\xBFp", .output_col = "o"};
    const afd_trace_options plain = {.prompt_col = "p", .output_col = "o"};
    struct outcome o;
    (void)state;

    read_both(crash, sizeof crash - 1, NULL, &o);
    assert_int_equal(o.st, AFD_EPARSE);
    assert_int_equal(o.err.line, 1);
    assert_int_equal(o.err.column, 8);
    assert_string_equal(o.err.text, "NUL byte in the line");

    /* the second mark belongs to the first column's name */
    read_both(two_boms, sizeof two_boms - 1, &marked, &o);
    assert_int_equal(o.st, AFD_EOF);
    assert_int_equal(o.n, 1);
    assert_true(o.rows[0].prompt == 7 && o.rows[0].output == 1);
    assert_int_equal(o.rows[0].line, 2);
    read_both(two_boms, sizeof two_boms - 1, &plain, &o);
    assert_int_equal(o.st, AFD_EPARSE);
    assert_int_equal(o.err.line, 1);

    /* a mark after a blank line is text too */
    read_both(blank_bom, sizeof blank_bom - 1, &marked, &o);
    assert_int_equal(o.st, AFD_EOF);
    assert_int_equal(o.n, 1);
    assert_int_equal(o.rows[0].line, 3);

    /* a second mark before '{' makes the input CSV, not JSON Lines: its
     * header has no token column */
    read_both(json2, sizeof json2 - 1, NULL, &o);
    assert_int_equal(o.st, AFD_EPARSE);
    assert_int_equal(o.err.line, 1);
    assert_non_null(strstr(o.err.text, "no prompt-token column recognised"));

    /* JSON Lines: a mark on line 2 is not skipped */
    read_both(json_late, sizeof json_late - 1, NULL, &o);
    assert_int_equal(o.st, AFD_EPARSE);
    assert_int_equal(o.n, 1);
    assert_int_equal(o.err.line, 2);

    /* NUL in a data row (line 3, after "8,") and inside a quoted field that
     * starts on line 2 (after "y" on line 3) */
    read_both(nul_row, sizeof nul_row - 1, &plain, &o);
    assert_int_equal(o.st, AFD_EPARSE);
    assert_int_equal(o.n, 1);
    assert_int_equal(o.err.line, 3);
    assert_int_equal(o.err.column, 3);
    assert_string_equal(o.err.text, "NUL byte in the line");
    read_both(nul_quoted, sizeof nul_quoted - 1, &plain, &o);
    assert_int_equal(o.st, AFD_EPARSE);
    assert_int_equal(o.err.line, 3);
    assert_int_equal(o.err.column, 2);
}

static void missing_file(void **state)
{
    afd_trace *t = (afd_trace *)1;
    afd_error err;
    (void)state;
    assert_int_equal(afd_trace_open("/nonexistent/afdkit/trace.csv", NULL, &t, &err), AFD_EIO);
    assert_null(t);
    assert_string_equal(err.text, "cannot open: No such file or directory");
    assert_int_equal(afd_trace_open(".", NULL, &t, &err), AFD_EIO);
    assert_string_equal(err.text, "cannot read: is a directory");
}

/* A file of several megabytes crosses many read-chunk boundaries; records
 * with quoted multi-line text and CRLF land on every kind of boundary.  The
 * expected sums are accumulated while writing. */
static void streaming_file(void **state)
{
    char path[] = "/tmp/afdkit-test-trace-XXXXXX";
    int fd = mkstemp(path);
    FILE *f;
    afd_trace *t;
    afd_trace_row r;
    afd_error err;
    uint64_t sum_p = 0, sum_o = 0, got_p = 0, got_o = 0, rows = 0;
    long line = 2, k;
    afd_status st;
    (void)state;
    assert_true(fd >= 0);
    f = fdopen(fd, "w");
    assert_non_null(f);
    fputs("note,Request tokens,Response tokens\r\n", f);
    for (k = 0; k < 120000; k++) {
        uint64_t p = (uint64_t)(k * 7919 % 100003), o = (uint64_t)(k * 104729 % 4099);
        if (k % 3 == 0) {
            fprintf(f, "\"row %ld\r\nhas \"\"two\"\" lines\",%llu,%llu\r\n", k,
                    (unsigned long long)p, (unsigned long long)o);
        } else {
            fprintf(f, "%*ld,%llu,\"%llu\"\n", (int)(k % 17), k, (unsigned long long)p,
                    (unsigned long long)o);
        }
        sum_p += p;
        sum_o += o;
    }
    fputs("last,1,2", f); /* no final newline */
    sum_p += 1;
    sum_o += 2;
    assert_int_equal(fclose(f), 0);

    assert_int_equal(afd_trace_open(path, NULL, &t, &err), AFD_OK);
    while ((st = afd_trace_next(t, &r, &err)) == AFD_OK) {
        if (r.line != line)
            fail_msg("row %llu: line %ld, expected %ld", (unsigned long long)rows, r.line, line);
        line += rows % 3 == 0 && rows < 120000 ? 2 : 1;
        got_p += r.prompt;
        got_o += r.output;
        rows++;
    }
    if (st != AFD_EOF)
        fail_msg("status %d at line %ld: %s", (int)st, err.line, err.text);
    assert_true(rows == 120001);
    assert_true(got_p == sum_p);
    assert_true(got_o == sum_o);
    assert_true(afd_trace_bytes(t) > 3000000);
    afd_trace_close(t);
    unlink(path);
}

static void record_too_long(void **state)
{
    char path[] = "/tmp/afdkit-test-long-XXXXXX";
    int fd = mkstemp(path);
    FILE *f;
    afd_trace *t;
    afd_trace_row r;
    afd_error err;
    size_t k;
    (void)state;
    assert_true(fd >= 0);
    f = fdopen(fd, "w");
    fputs("ContextTokens,GeneratedTokens\n1,2\n\"", f);
    for (k = 0; k < AFD_TRACE_MAX_RECORD + 10; k++)
        fputc('x', f);
    fputs("\",3\n", f);
    fclose(f);
    assert_int_equal(afd_trace_open(path, NULL, &t, &err), AFD_OK);
    assert_int_equal(afd_trace_next(t, &r, &err), AFD_OK);
    assert_int_equal(afd_trace_next(t, &r, &err), AFD_ELIMIT);
    assert_int_equal(err.line, 3);
    afd_trace_close(t);
    unlink(path);
}

static void json_lines(void **state)
{
    /* Keys in any order, blank lines, a string number, an integral real. */
    static const char js[] = "\xEF\xBB\xBF{\"output_length\": 2, \"input_length\": 10, "
                             "\"timestamp\": 1500}\n\n"
                             "{\"input_length\": \"3\", \"output_length\": 4.0, "
                             "\"timestamp\": 2500.5}";
    static const uint64_t pd[] = {10, 2, 3, 4};
    static const long lines[] = {1, 3};
    afd_trace_row rows[4];
    afd_error err;
    size_t n;
    (void)state;
    expect_rows(js, NULL, pd, lines, 2);
    assert_int_equal(read_all(js, NULL, rows, 4, &n, &err), AFD_EOF);
    /* timestamp is Mooncake's, in milliseconds */
    assert_true(rows[0].time == 1.5);
    assert_true(rows[1].time == 2.5005);
}

static void json_errors(void **state)
{
    (void)state;
    expect_error("{\"input_length\": 1, \"output_length\": 2}\n{\"input_length\": 1,}\n",
                 NULL, AFD_EPARSE, 2, "malformed JSON: expected a quoted key or '}' near '}'");
    expect_error("{\"input_length\": 1, \"output_length\": null}\n", NULL, AFD_EPARSE, 1,
                 "column 'output_length' is not a number (JSON null)");
    expect_error("{\"input_length\": 1, \"input_length\": 2}\n", NULL, AFD_EPARSE, 1,
                 "malformed JSON: a key appears twice in one object near '\"input_length\"'");
    /* Bytes of the input in a message are escaped: it stays one line. */
    expect_error("{\"input_length\": 1, \"output_length\": 2\xc3\xa9}\n", NULL, AFD_EPARSE, 1,
                 "malformed JSON: expected ',' or '}' near '\\xc3\\xa9'");
    expect_error("{\"input_length\": \"\\u0000\", \"output_length\": 2}\n", NULL, AFD_EPARSE, 1,
                 "malformed JSON: \\u0000 (a NUL character) in a string near '\"\\x5cu0000\"'");
    {
        afd_trace_options opt = {.prompt_col = "p", .output_col = "o\nx"};
        expect_error("{\"p\": 1, \"o\\nx\": 2}\n{\"p\": 1, \"o\\nx\": -2}\n", &opt, AFD_EPARSE, 2,
                     "column 'o\\x0ax' is negative: '-2'");
    }
}

static void row_filters(void **state)
{
    static const char csv[] = "Model,input_length,output_length\n"
                              " A ,1,2\n"
                              "B,x,y\n" /* filtered rows are never converted */
                              "\"A\",3,4\n";
    static const afd_trace_filter where[] = {{"model", "A"}};
    afd_trace_options opt = {.where = where, .n_where = 1};
    static const uint64_t pd[] = {1, 2, 3, 4};
    static const long lines[] = {2, 4};
    (void)state;
    expect_rows(csv, &opt, pd, lines, 2);
}

/* Block hashes: a JSON array, or in text (CSV, a JSON string) integers
 * separated by blanks, commas or semicolons, optionally in brackets. */
static void block_hashes(void **state)
{
    static const char *const inputs[] = {
        "prompt_tokens,output_tokens,hash_ids\n3,1,\"[7, 0, 18446744073709551615]\"\n",
        "prompt_tokens,output_tokens,Hash_IDs\n3,1, 7 0;18446744073709551615 \n",
        "{\"input_length\": 3, \"output_length\": 1, \"hash_ids\": \"7,0,18446744073709551615\"}\n",
    };
    const uint64_t want[3] = {7, 0, UINT64_MAX};
    afd_trace_options opt;
    afd_trace *t;
    afd_trace_row r;
    afd_error err;
    size_t k;
    (void)state;
    for (k = 0; k < sizeof inputs / sizeof inputs[0]; k++) {
        assert_int_equal(afd_trace_open_memory(inputs[k], strlen(inputs[k]), NULL, &t, &err),
                         AFD_OK);
        assert_non_null(afd_trace_hash_name(t));
        assert_int_equal(afd_trace_next(t, &r, &err), AFD_OK);
        assert_int_equal(r.n_hash, 3);
        assert_memory_equal(r.hash_ids, want, sizeof want);
        afd_trace_close(t);
    }
    { /* JSON integers stop at 2^63 - 1 */
        static const char js[] =
            "{\"input_length\": 3, \"output_length\": 1, \"hash_ids\": [7, 0, 9223372036854775807]}";
        assert_int_equal(afd_trace_open_memory(js, strlen(js), NULL, &t, &err), AFD_OK);
        assert_int_equal(afd_trace_next(t, &r, &err), AFD_OK);
        assert_int_equal(r.n_hash, 3);
        assert_true(r.hash_ids[0] == 7 && r.hash_ids[1] == 0 && r.hash_ids[2] == INT64_MAX);
        afd_trace_close(t);
    }
    /* an empty list, then no list; a named column; hashes ignored */
    {
        static const char csv[] = "a,b,h\n3,1,[]\n4,1,\n5,1,9\n";
        afd_trace_row rows[3];
        size_t n;
        memset(&opt, 0, sizeof opt);
        opt.prompt_col = "a";
        opt.output_col = "b";
        opt.hash_col = "h";
        assert_int_equal(read_all(csv, &opt, rows, 3, &n, &err), AFD_EOF);
        assert_int_equal(n, 3);
        assert_int_equal(rows[0].n_hash, 0);
        assert_int_equal(rows[1].n_hash, 0);
        assert_int_equal(rows[2].n_hash, 1);
        opt.hash_col = "";
        assert_int_equal(afd_trace_open_memory(csv, strlen(csv), &opt, &t, &err), AFD_OK);
        assert_null(afd_trace_hash_name(t));
        assert_int_equal(afd_trace_next(t, &r, &err), AFD_OK);
        assert_null(r.hash_ids);
        afd_trace_close(t);
        opt.hash_col = "blocks";
        assert_int_equal(afd_trace_open_memory(csv, strlen(csv), &opt, &t, &err), AFD_EPARSE);
        assert_string_equal(err.text, "unknown hash column 'blocks' (header has 'a', 'b', 'h')");
    }
    /* errors name the line and the value */
    expect_error("prompt_tokens,output_tokens,hash_ids\n3,1,1 -2\n", NULL, AFD_EPARSE, 2,
                 "column 'hash_ids' is not a list of non-negative integers: '1 -2'");
    expect_error("prompt_tokens,output_tokens,hash_ids\n3,1,[1 2\n", NULL, AFD_EPARSE, 2,
                 "column 'hash_ids' is not a list of non-negative integers: '[1 2'");
    expect_error("{\"input_length\": 3, \"output_length\": 1, \"hash_ids\": [1]}\n"
                 "{\"input_length\": 3, \"output_length\": 1, \"hash_ids\": [1, -1]}\n",
                 NULL, AFD_EPARSE, 2, "column 'hash_ids': entry 2 is not a non-negative integer");
    expect_error("{\"input_length\": 3, \"output_length\": 1, \"hash_ids\": 5}\n", NULL,
                 AFD_EPARSE, 1, "column 'hash_ids' is not a list of block hashes");
    expect_error("{\"input_length\": 3, \"output_length\": 1, \"hash_ids\": [1]}\n"
                 "{\"input_length\": 3, \"output_length\": 1}\n",
                 NULL, AFD_EPARSE, 2, "key 'hash_ids' is missing");
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(azure_dialect),
        cmocka_unit_test(json_lines),
        cmocka_unit_test(json_errors),
        cmocka_unit_test(row_filters),
        cmocka_unit_test(block_hashes),
        cmocka_unit_test(bom_lf_final_newline),
        cmocka_unit_test(quoting),
        cmocka_unit_test(line_endings_and_blank_lines),
        cmocka_unit_test(column_detection),
        cmocka_unit_test(column_errors),
        cmocka_unit_test(value_errors),
        cmocka_unit_test(empty_inputs),
        cmocka_unit_test(sticky_error),
        cmocka_unit_test(second_bom_and_nul),
        cmocka_unit_test(missing_file),
        cmocka_unit_test(streaming_file),
        cmocka_unit_test(record_too_long),
    };
    RUN_TESTS(tests);
}
