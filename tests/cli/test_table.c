/* test_table.c: the table writer of the command-line contract. */
#include <config.h>

#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "test_util.h"

#include "cli.h"

/* Run cli_table_finish with stdout redirected to a temporary file and
 * return what it wrote (caller frees). */
/* Read back and remove a capture file. */
static char *slurp(int fd, const char *path)
{
    FILE *f = fdopen(fd, "r");
    char *buf;
    long n;
    assert_non_null(f);
    fseek(f, 0, SEEK_END);
    n = ftell(f);
    rewind(f);
    buf = calloc(1, (size_t)n + 1);
    assert_true(fread(buf, 1, (size_t)n, f) == (size_t)n);
    fclose(f);
    unlink(path);
    return buf;
}

/* cli_table_finish with stdout and stderr captured: stdout returned,
 * stderr in *err. */
static char *finish_captured_err(cli_table *t, int *rc, char **err)
{
    char opath[] = "/tmp/afdkit-test-table-XXXXXX", epath[] = "/tmp/afdkit-test-table-XXXXXX";
    int ofd = mkstemp(opath), efd = mkstemp(epath), so, se;
    assert_true(ofd >= 0 && efd >= 0);
    fflush(stdout);
    fflush(stderr);
    so = dup(1);
    se = dup(2);
    dup2(ofd, 1);
    dup2(efd, 2);
    *rc = cli_table_finish(t, "test");
    fflush(stdout);
    fflush(stderr);
    dup2(so, 1);
    dup2(se, 2);
    close(so);
    close(se);
    *err = slurp(efd, epath);
    return slurp(ofd, opath);
}

static char *finish_captured(cli_table *t, int *rc)
{
    char path[] = "/tmp/afdkit-test-table-XXXXXX";
    int fd = mkstemp(path), saved;
    assert_true(fd >= 0);
    fflush(stdout);
    saved = dup(1);
    dup2(fd, 1);
    *rc = cli_table_finish(t, "test");
    fflush(stdout);
    dup2(saved, 1);
    close(saved);
    return slurp(fd, path);
}

static void format_real(void **state)
{
    char b[64];
    (void)state;
    cli_format_real(b, sizeof b, 599, 10);
    assert_string_equal(b, "599");
    cli_format_real(b, sizeof b, 509.31326312987002, 10);
    assert_string_equal(b, "509.3132631");
    cli_format_real(b, sizeof b, 1.0 / 3.0, 3);
    assert_string_equal(b, "0.333");
    cli_format_real(b, sizeof b, NAN, 10);
    assert_string_equal(b, "nan");
    cli_format_real(b, sizeof b, -INFINITY, 10);
    assert_string_equal(b, "nan");
    cli_format_real(b, sizeof b, -0.0, 10);
    assert_string_equal(b, "0");
    cli_format_real(b, sizeof b, 1e-300, 10);
    assert_string_equal(b, "1e-300");
}

static void tsv_blocks(void **state)
{
    cli_output o;
    cli_table *t;
    char *s;
    int rc;
    (void)state;
    cli_output_init(&o);
    t = cli_table_new(&o);
    cli_table_meta(t, "seed", "%d", 1); /* dropped: provenance off */
    cli_table_begin(t, "r", "kappa");
    cli_table_int(t, 2);
    cli_table_real(t, 0.5641895835477563);
    cli_table_end_row(t);
    cli_table_int(t, -3);
    cli_table_real(t, NAN);
    cli_table_end_row(t);
    cli_table_begin(t, "rule", "r");
    cli_table_str(t, "mf\tx");
    cli_table_uint(t, 18446744073709551615ULL);
    cli_table_end_row(t);
    s = finish_captured(t, &rc);
    assert_int_equal(rc, 0);
    assert_string_equal(s, "# r\tkappa\n"
                           "2\t0.5641895835\n"
                           "-3\tnan\n"
                           "\n\n"
                           "# rule\tr\n"
                           "mf x\t18446744073709551615\n");
    free(s);
}

static void csv_and_provenance(void **state)
{
    cli_output o;
    cli_table *t;
    char *s, *err;
    int rc;
    (void)state;
    cli_output_init(&o);
    o.csv = 1;
    o.precision = 4;
    o.provenance = 1; /* the '##' lines go to stderr: stdout is the CSV alone */
    t = cli_table_new(&o);
    cli_table_meta(t, "seed", "%d", 42);
    cli_table_unit(t, "%s", "ms");
    cli_table_begin(t, "name", "x");
    cli_table_str(t, "a,\"b\"");
    cli_table_real(t, 3.14159);
    cli_table_end_row(t);
    s = finish_captured_err(t, &rc, &err);
    assert_int_equal(rc, 0);
    assert_string_equal(s, "name,x\r\n\"a,\"\"b\"\"\",3.142\r\n");
    assert_string_equal(err, "## seed=42\n## unit=ms\n");
    free(s);
    free(err);

    /* without --provenance: the unit alone on stderr, and nothing at all
     * for a table without one */
    o.provenance = 0;
    t = cli_table_new(&o);
    cli_table_meta(t, "seed", "%d", 42);
    cli_table_unit(t, "%s", "ms");
    cli_table_begin(t, "x");
    s = finish_captured_err(t, &rc, &err);
    assert_string_equal(s, "x\r\n");
    assert_string_equal(err, "## unit=ms\n");
    free(s);
    free(err);
    t = cli_table_new(&o);
    cli_table_begin(t, "x");
    s = finish_captured_err(t, &rc, &err);
    assert_string_equal(s, "x\r\n");
    assert_string_equal(err, "");
    free(s);
    free(err);

    cli_output_init(&o);
    o.provenance = 1;
    t = cli_table_new(&o);
    cli_table_meta(t, "seed", "%d", 42);
    cli_table_begin(t, "x");
    s = finish_captured(t, &rc);
    assert_string_equal(s, "## seed=42\n# x\n");
    free(s);
}

static void output_options(void **state)
{
    cli_output o;
    const cli_option *opt = cli_output_group.options;
    (void)state;
    cli_output_init(&o);
    while (opt->name != NULL && strcmp(opt->name, "precision") != 0)
        opt++;
    assert_non_null(opt->name);
    assert_int_equal(cli_output_option("test", &o, opt, "17"), 0);
    assert_int_equal(o.precision, 17);
    assert_int_equal(cli_output_option("test", &o, opt, "0"), EXIT_USAGE);
    assert_int_equal(cli_output_option("test", &o, opt, "18"), EXIT_USAGE);
    assert_int_equal(cli_output_option("test", &o, opt, "x"), EXIT_USAGE);
    assert_int_equal(o.precision, 17);
}

/* --json: the record text is fixed by hand from the JSON grammar. */
static void json_lines(void **state)
{
    cli_output o;
    cli_table *t;
    char name[8], *s;
    int rc;
    (void)state;
    cli_output_init(&o);
    o.json = 1;
    o.precision = 4;
    o.provenance = 1;
    t = cli_table_new(&o);
    strcpy(name, "r");
    cli_table_begin(t, name, "x", "s");
    strcpy(name, "zz");                 /* the writer kept its own copy of the name */
    cli_table_meta(t, "seed", "%d", 7); /* after the header: still first */
    cli_table_meta(t, "unit", "%s", "ms");
    cli_table_int(t, -3);
    cli_table_real(t, 1.0 / 3.0);
    cli_table_str(t, "a\"b\tc\xff");
    cli_table_end_row(t);
    cli_table_uint(t, 18446744073709551615ULL);
    cli_table_real(t, -0.0);
    cli_table_real(t, -INFINITY);
    cli_table_end_row(t);
    cli_table_begin(t, "rule");
    cli_table_real(t, 2.5e-7);
    cli_table_real(t, 99); /* more cells than columns */
    cli_table_end_row(t);
    s = finish_captured(t, &rc);
    assert_int_equal(rc, 0);
    /* two blocks: every row begins with its block's number */
    assert_string_equal(s, "{\"provenance\":{\"seed\":7,\"unit\":\"ms\"}}\n"
                           "{\"block\":1,\"r\":-3,\"x\":0.3333,\"s\":\"a\\\"b\\tc?\"}\n"
                           "{\"block\":1,\"r\":1.845e19,\"x\":0.0,\"s\":null}\n"
                           "{\"block\":2,\"rule\":2.5e-7,\"_2\":99.0}\n");
    free(s);
}

/* --json: a count is an integer when it is one; one block has no "block". */
static void json_counts(void **state)
{
    cli_output o;
    cli_table *t;
    char *s;
    int rc;
    (void)state;
    cli_output_init(&o);
    o.json = 1;
    t = cli_table_new(&o);
    cli_table_begin(t, "a", "b", "c", "d");
    cli_table_count(t, 36.0);
    cli_table_count(t, NAN);
    cli_table_count(t, 2.5);
    cli_table_count(t, 1e300);
    cli_table_end_row(t);
    s = finish_captured(t, &rc);
    assert_int_equal(rc, 0);
    assert_string_equal(s, "{\"a\":36,\"b\":null,\"c\":2.5,\"d\":1e300}\n");
    free(s);
    /* the default format prints it as a real */
    cli_output_init(&o);
    t = cli_table_new(&o);
    cli_table_begin(t, "a");
    cli_table_count(t, 36.0);
    cli_table_end_row(t);
    s = finish_captured(t, &rc);
    assert_string_equal(s, "# a\n36\n");
    free(s);
}

/* --shard K/N: parsing and the round robin. */
static void shards(void **state)
{
    cli_output o;
    cli_list l;
    unsigned k = 0, n = 0;
    size_t i;
    (void)state;
    assert_int_equal(cli_shard_parse("test", "3/7", &k, &n), 0);
    assert_int_equal(k, 3);
    assert_int_equal(n, 7);
    assert_int_equal(cli_shard_parse("test", "8/7", &k, &n), EXIT_USAGE);
    assert_int_equal(cli_shard_parse("test", "0/7", &k, &n), EXIT_USAGE);
    assert_int_equal(cli_shard_parse("test", "1/0", &k, &n), EXIT_USAGE);
    assert_int_equal(cli_shard_parse("test", "7", &k, &n), EXIT_USAGE);
    assert_int_equal(cli_shard_parse("test", "1/2/3", &k, &n), EXIT_USAGE);
    cli_output_init(&o);
    for (i = 0; i < 5; i++)
        assert_true(cli_shard_take(&o, i)); /* no --shard: every item */
    o.shard_k = 2;
    o.shard_n = 3;
    {
        char msg[128];
        assert_int_equal(cli_list_parse_quiet("10:17", 1, 0, 100, &l, msg, sizeof msg), 0);
    }
    cli_shard_list(&o, &l);
    assert_int_equal(l.n, 3); /* items 1, 4, 7 */
    assert_true(l.v[0] == 11 && l.v[1] == 14 && l.v[2] == 17);
    cli_list_free(&l);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(format_real),
        cmocka_unit_test(tsv_blocks),
        cmocka_unit_test(csv_and_provenance),
        cmocka_unit_test(output_options),
        cmocka_unit_test(json_lines),
        cmocka_unit_test(json_counts),
        cmocka_unit_test(shards),
    };
    RUN_TESTS(tests);
}
