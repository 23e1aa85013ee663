#!/usr/bin/env python3
"""--json on every table command: the JSON Lines parse (Python's json module)
and carry exactly the values of the tab-separated table.

Every case also states the unit its table must print ("## unit=U", without
--provenance too; "unit" in the JSON provenance with --provenance, while
without it the JSON Lines are the rows alone), by the rule of docs/cli.md
("Table output"), in UNITS: a command without an entry fails, so a new
command that prints times cannot leave its unit out.

Every command and subcommand that 'afdkit --help' lists needs an entry in
CASES below (arguments that make it print a table) or in NO_TABLE; a command
without one fails this test, so a new command cannot ship without --json
being checked.

Usage: check_json.py AFDKIT NBDATA
"""
import json
import math
import os
import re
import subprocess
import sys
import tempfile

GEO = ["--geometric", "--mu-p", "100", "--mu-d", "500"]
HW = ["--hw", "paper-910c"]

# Commands that print no table of their own.
NO_TABLE = {"help"}


def cases(nbdata, tmp):
    code = os.path.join(nbdata, "AzureLLMInferenceTrace_code.csv")
    return {
        "theta": ["--trace", code],
        "kappa": ["--r", "1:8,100"],
        "ratio": GEO + HW + ["-B", "256"],
        "sweep": GEO + HW + ["-B", "256", "--r", "1:16,0.5"],
        "hw": ["--hbm-bw", "3.2", "--mem-eff", "0.8", "--peak-tflops", "1000",
               "--compute-eff", "0.5", "--net-bw", "40", "--experts-per-card", "8"],
        "calibrate": ["--attention", os.path.join(tmp, "att.csv"),
                      "--ffn", os.path.join(tmp, "ffn.csv"),
                      "--comm", os.path.join(tmp, "comm.csv")],
        "sim": GEO + HW + ["-B", "64", "--r", "2,4", "--requests", "300"],
        "mc barrier": GEO + ["-B", "64", "--r", "1:4", "--trials", "2000"],
        "mc slot": GEO + ["--steps", "20000", "--batches", "4"],
        "mc mdc": ["--lambda", "2", "--service", "1", "--c", "3,4", "--customers", "20000"],
        "mdc": ["--lambda", "2", "--service", "1", "--c", "3,4"],
        "pd": ["--lambda", "10,20"] + GEO + ["--prefill-b", "1e-4", "--prefill-a", "0.01",
                                          "--ttft-slo", "0.5", "--decode-step", "0.03",
                                          "--tpot-slo", "0.05"],
        "goodput": GEO + ["--prefill-b", "1e-4", "--ttft-slo", "0.5", "--decode-step",
                          "0.03", "--tpot-slo", "0.05", "--slots-per-instance", "64",
                          "--total", "3"],
        "serve": ["--arch", "colloc", "--hw", os.path.join(tmp, "lat.hw"), "--lambda", "2/s",
                  "--lengths", "1000,11", "--requests", "200", "--batches", "2",
                  "--ttft-slo", "0.2s", "--tpot-slo", "30ms"],
        "hist": ["--trace", code, "--bins", "10"],
        "model": ["--model", "llama-3.1-8b"],
        "kvretrieve": ["--tier", "platform,0.6,5us,32", "--tier", "rack,0.8,50us,2",
                       "--kv-bytes-per-token", "327680", "--recompute-a", "20ms",
                       "--recompute-b", "1e-4", "--recompute-c", "1e-9",
                       "--tokens", "1024,4096,24576"],
        "pareto": ["--model", "llama-3.1-8b", "--device", "h100-sxm,a100-80g", "--devices", "2",
                   "--tp", "1", "--lengths", "1000,100", "--ttft-slo", "500ms",
                   "--tpot-slo", "50ms", "--all"],
        "strategies": ["--devices", "8", "--model", "codellama-34b", "--device", "ascend-910b3",
                       "--lengths", "op2", "--ttft-slo", "1500ms", "--tpot-slo", "70ms",
                       "--method", "closed"],
        "plan": ["--model", "llama-3.1-70b", "--device", "h100-sxm", "--gpus", "8", "--tp", "4",
                 "--lengths", "1024,128", "--ttft-slo", "2s", "--tpot-slo", "50ms",
                 "--method", "closed"],
        "regime": ["--instances", "2", "--hw", os.path.join(tmp, "lat.hw"), "--lengths",
                   "1000,11", "--ttft-slo", "300ms,1s", "--tpot-slo", "40ms", "--chunks", "256"],
        "pipeline": ["--stages", os.path.join(nbdata, "pipelines", "five-stage.json"),
                     "--lambda", "8", "--trace", os.path.join(nbdata,
                                                               "AzureLLMInferenceTrace_conv.csv")],
        "offload": ["--lambda", "0.8", "--deadline", "2.385", "--service-exp", "1"],
        "twotier": ["--instances", "3", "--ttft-slo", "1s", "--threshold", "400ms",
                    "--service", "300ms", "--lambda", "6/s", "--slo-scale", "0.5,1,2"],
        "estimate": ["--model", "codellama-34b", "--device", "ascend-910b3", "--tp", "4",
                     "--phase", "decode", "-s", "2111"],
        "plot": ["--list"],
        # merge: the parts are written by prepare(); see MERGE_PARTS.
        "merge": [],
    }


# The unit each case's table states (None: no times or rates, or a unit the
# command cannot know), from the rule, not from the program's output:
# paper-910c is Table 3, in cycles; lat.hw says "unit = ms"; without a latency
# file times are seconds (hw's --unit, mdc's --unit default to s); the
# estimator works in ms; theta's lambda and span_s come from the Azure
# trace's timestamps in seconds; calibrate without --unit or a base and the
# tables of counts, tokens, bytes and relative errors state none.
UNITS = {
    "theta": "s",
    "kappa": None,
    "ratio": "cycles",
    "sweep": "cycles",
    "hw": "s",
    "calibrate": None,
    "sim": "cycles",
    "mc barrier": None,
    "mc slot": None,
    "mc mdc": "s",
    "mdc": "s",
    "pd": "s",
    "goodput": "s",
    "serve": "ms; throughput in requests/s",
    "hist": None,
    "model": None,
    "kvretrieve": "s",
    "pareto": "requests/s (goodput), dollars/h (price_per_hour), "
              "requests/dollar (goodput_per_dollar)",
    "strategies": "requests/s (goodput, goodput_sim), requests/s per device "
                  "(goodput_per_device, goodput_sim_per_device), requests/dollar "
                  "(goodput_per_dollar, goodput_sim_per_dollar)",
    "plan": "requests/s (goodput, goodput_se), tokens/s (tokens_per_s_per_gpu, "
            "tokens_per_s_per_user), ms (ttft_p90, tpot_p90), dollars per million generated "
            "tokens (usd_per_mtok)",
    "regime": "ms (SLOs), requests/s (goodput), requests/dollar (goodput_per_dollar)",
    "pipeline": "s",
    "offload": "s",
    "twotier": "s",
    "estimate": "ms",
    "plot": None,
    "merge": "cycles",  # the parts are sweep's with paper-910c
    "calibrate --profile": "ms",
    "calibrate --prefill": "ms",
    "calibrate --profile --summary": None,  # relative errors
}


def extra_cases(nbdata):
    """Second modes of commands already in cases(): (path, arguments)."""
    prof = os.path.join(nbdata, os.pardir, "data", "profiling")
    return [
        ("calibrate", ["--profile", os.path.join(prof, "h100.llama-2-70b.csv"),
                       "--allreduce", os.path.join(prof, "h100.all_reduce.csv"),
                       "--model", "llama-3.1-70b", "--device", "h100-sxm", "--tp", "4"]),
        ("calibrate", ["--profile", os.path.join(prof, "a100.codellama-34b.csv"),
                       "--model", "codellama-34b", "--device", "a100-80g", "--summary"]),
        ("calibrate", ["--prefill", os.path.join(nbdata, "measured", "prefill.csv"),
                       "--decode", os.path.join(nbdata, "measured", "decode.csv"),
                       "--unit", "ms"]),
    ]


def write_calibration_data(tmp):
    """Noisy straight lines, as tests/cli/hw.cases draws them."""
    for name, seed, n, x0, dx, a, b in (("att", 12345, 200, 1000, 1500, 0.00165, 50),
                                         ("ffn", 777, 100, 32, 40, 0.083, 100),
                                         ("comm", 99, 100, 32, 40, 0.022, 20)):
        s = seed
        with open(os.path.join(tmp, name + ".csv"), "w") as f:
            f.write("x,t\n")
            for i in range(n):
                s = (1103515245 * s + 12345) % 2147483648
                x = x0 + i * dx
                f.write("%d,%.9f\n" % (x, a * x + b + 4 * s / 2147483648 - 2))


def write_latency_file(tmp):
    """A latency file with the serving laws, as tests/cli/serve.cases writes it."""
    with open(os.path.join(tmp, "lat.hw"), "w") as f:
        f.write("alpha_a = 1\nbeta_a = 0\nalpha_f = 1\nbeta_f = 0\nalpha_c = 0\nbeta_c = 0\n"
                "unit = ms\nprefill_a = 20\nprefill_b = 0.1\nprefill_c = 1e-5\n"
                "decode_beta = 30\ndecode_gamma = 0.1\ndecode_alpha = 1e-4\n")


def command_paths(afdkit):
    """Every command and subcommand in the --help listings."""
    def listed(args, title):
        out = subprocess.run([afdkit] + args, capture_output=True, text=True).stdout
        names, inside = [], False
        for line in out.splitlines():
            if line.strip() == title:
                inside = True
                continue
            if inside:
                m = re.match(r"^  (\S+)\s", line)
                if not m:
                    break
                names.append(m.group(1))
        return names

    paths = []
    for name in listed(["--help"], "Commands:"):
        if name in NO_TABLE:
            continue
        subs = listed([name, "--help"], "Subcommands:")
        paths += [name + " " + s for s in subs] if subs else [name]
    return paths


def run(afdkit, path, args, extra):
    p = subprocess.run([afdkit] + path.split() + args + extra, capture_output=True, text=True)
    if p.returncode != 0:
        raise AssertionError("%s %s: exit %d: %s" % (path, " ".join(args + extra),
                                                     p.returncode, p.stderr.strip()))
    return p.stdout


# Columns that count (instances, GPUs, sequences): JSON integers, not reals.
COUNTS = {
    "pd": ("prefill", "prefill_md", "decode_slots_p99", "decode_instances", "gpus", "c",
           "prefill_replay"),
    "goodput": ("prefill", "decode", "total", "gpus"),
    "kvretrieve": ("tokens",),
}


def parse_table(text):
    """Provenance dict, a list of (columns, row cells) from the default format,
    and the block number (from 1) of each row."""
    meta, rows, blocks, cols, block = {}, [], [], None, 0
    for line in text.split("\n"):
        if line.startswith("## "):
            k, _, v = line[3:].partition("=")
            meta[k] = v
        elif line.startswith("# "):
            cols = line[2:].split("\t")
            block += 1
        elif line:
            rows.append((cols, line.split("\t")))
            blocks.append(block)
    return meta, rows, blocks


def same_cell(text, value):
    """A table cell against the JSON value: equal numbers (nan is null),
    equal strings."""
    if value is None:
        return text == "nan"
    if isinstance(value, bool):
        return False
    if isinstance(value, (int, float)):
        try:
            x = float(text)
        except ValueError:
            return False
        return not math.isnan(x) and x == float(value) and (
            not isinstance(value, int) or re.fullmatch(r"-?[0-9]+", text) is not None)
    return isinstance(value, str) and text == value


def check(afdkit, path, args, failures, unit_key=None):
    table = run(afdkit, path, args, ["--provenance"])
    key = unit_key or path
    if key not in UNITS:
        failures.append("%s: no entry in UNITS (tests/check_json.py): give the unit its "
                        "table states, or None" % key)
    else:
        plain_meta, _, _ = parse_table(run(afdkit, path, args, []))
        if plain_meta.get("unit") != UNITS[key]:
            failures.append("%s: '## unit=%s' without --provenance, expected %s" %
                            (key, plain_meta.get("unit"), UNITS[key]))
        units = [l for l in table.split("\n") if l.startswith("## unit=")]
        lines = table.split("\n")
        first = next((i for i, l in enumerate(lines) if l.startswith("# ")), None)
        if units and (len(units) != 1 or first is None or lines[first - 1] != units[0]):
            failures.append("%s: the unit line is not the one line right before the first "
                            "header" % key)
    lines = run(afdkit, path, args, ["--provenance", "--json"]).split("\n")
    if lines[-1] != "":
        failures.append("%s: the JSON output does not end with a newline" % path)
        return
    objs = []
    for i, line in enumerate(lines[:-1], 1):
        try:
            objs.append(json.loads(line))
        except ValueError as e:
            failures.append("%s: line %d is not JSON (%s): %s" % (path, i, e, line[:80]))
            return
    meta, rows, blocks = parse_table(table)
    if not objs or list(objs[0].keys()) != ["provenance"]:
        failures.append("%s: the first object is not the provenance" % path)
        return
    prov = objs[0]["provenance"]
    if set(prov) != set(meta):
        failures.append("%s: provenance keys %s, table has %s" % (path, sorted(prov),
                                                                  sorted(meta)))
    for k, v in meta.items():
        if k in prov and not (same_cell(v, prov[k]) or (k == "command")):
            failures.append("%s: provenance %s = %r, table has %r" % (path, k, prov[k], v))
    if not prov.get("command", "").startswith("afdkit " + path):
        failures.append("%s: provenance command %r" % (path, prov.get("command")))
    objs = objs[1:]
    if len(objs) != len(rows) or not rows:
        failures.append("%s: %d JSON rows, %d table rows" % (path, len(objs), len(rows)))
        return
    # several blocks: each row names its block first, "block": N
    several = blocks and blocks[-1] > 1
    for i, (obj, (cols, cells), b) in enumerate(zip(objs, rows, blocks), 1):
        if several:
            if list(obj)[:1] != ["block"] or obj["block"] != b or type(obj["block"]) is not int:
                failures.append("%s: row %d of block %d begins %s" % (path, i, b,
                                                                     list(obj.items())[:1]))
                return
            del obj["block"]
        if list(obj.keys()) != cols:
            failures.append("%s: row %d keys %s, columns %s" % (path, i, list(obj), cols))
            return
        for c, text in zip(cols, cells):
            if c in COUNTS.get(path, ()) and text != "nan" and type(obj[c]) is not int:
                failures.append("%s: row %d column %s is a count: JSON %r" % (path, i, c,
                                                                             obj[c]))
            if not same_cell(text, obj[c]):
                failures.append("%s: row %d column %s: JSON %r, table %r" % (path, i, c,
                                                                            obj[c], text))
    # Without --provenance: the rows alone, one object per row (the unit is
    # in the provenance object only with --provenance); the digits follow
    # --precision.
    plain = run(afdkit, path, args,
                ["--json"] + (["--precision", "17"] if path != "merge" else [])).split("\n")[:-1]
    if len(plain) != len(rows) or "provenance" in json.loads(plain[0]):
        failures.append("%s: --json without --provenance is not the rows alone" % path)
    return len(rows)


def check_merge(afdkit, tmp, failures):
    """merge's own output in both formats, from the parts of a sweep."""
    args = GEO + HW + ["-B", "256", "--r", "1:9"]
    for fmt, ext in (([], "tsv"), (["--json"], "jsonl")):
        parts = []
        for k in (1, 2, 3):
            p = os.path.join(tmp, "part%d.%s" % (k, ext))
            with open(p, "w") as f:
                f.write(run(afdkit, "sweep", args, fmt + ["--shard", "%d/3" % k]))
            parts.append(p)
        whole = run(afdkit, "sweep", args, fmt)
        merged = run(afdkit, "merge", parts[::-1], [])
        if merged != whole:
            failures.append("merge %s: not the unsharded table" % ext)
    check(afdkit, "merge", parts_tsv(tmp), failures)


def parts_tsv(tmp):
    return [os.path.join(tmp, "part%d.tsv" % k) for k in (1, 2, 3)]


def main():
    afdkit, nbdata = sys.argv[1], sys.argv[2]
    failures = []
    with tempfile.TemporaryDirectory(prefix="afdkit-json.") as tmp:
        write_calibration_data(tmp)
        write_latency_file(tmp)
        table = cases(nbdata, tmp)
        paths = command_paths(afdkit)
        if len(paths) < 10:
            print("FAIL: only %d commands found in 'afdkit --help'" % len(paths))
            return 1
        for path in paths:
            if path not in table:
                failures.append("%s: no case in tests/check_json.py (add the arguments of a "
                                "run that prints a table to cases())" % path)
                continue
            try:
                if path == "merge":
                    check_merge(afdkit, tmp, failures)
                    print("ok   merge")
                else:
                    n = check(afdkit, path, table[path], failures)
                    print("ok   %s (%s rows)" % (path, n))
            except AssertionError as e:
                failures.append(str(e))
        for path, args in extra_cases(nbdata):
            key = path + " " + args[0] + (" --summary" if "--summary" in args else "")
            n = check(afdkit, path, args, failures, key)
            print("ok   %s %s (%s rows)" % (path, args[0], n))
    for f in failures:
        print("FAIL " + f)
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
