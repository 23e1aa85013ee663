"""The serving commands from Python: plan, pd, goodput, serve, strategies,
regime and pareto run the afdkit program (their sizing and simulation live in the
command line, not in the libraries) with --json and return its tables.

Options are keyword arguments named as the command's long options with '_'
for '-' (ttft_slo= is --ttft-slo; rate= is --lambda, a word Python reserves);
True gives a flag, None or False leaves the option out, a list or tuple is
joined with commas.  Times and rates are strings with their unit, as on the
command line ("2s", "50ms", "5/s"): a bare number is passed as it is, so it
is refused exactly where the command refuses it (against a latency file or
a model's laws in ms, whose reading, per second or per millisecond, it
cannot tell).
"""

import json
import os
import shutil
import subprocess
import warnings

import numpy as np

class Table(dict):
    """One block of a command's table: a dict of columns (numpy arrays of
    floats for numbers, with NaN for null; lists for text), so that
    pandas.DataFrame(t) is the block.  .unit is the table's `## unit=` line
    (None without one), .meta the other `## key=value` lines."""

    unit = None
    meta = None


def _program():
    """The afdkit program: AFDKIT, else the build tree of AFDKIT_BUILD_DIR,
    else pkg-config's afdkit exec_prefix, else PATH."""
    p = os.environ.get("AFDKIT")
    if p:
        return p
    build = os.environ.get("AFDKIT_BUILD_DIR")
    if build and os.access(os.path.join(build, "afdkit"), os.X_OK):
        return os.path.join(build, "afdkit")
    try:
        out = subprocess.run(["pkg-config", "--variable=exec_prefix", "afdkit"],
                             capture_output=True, text=True, check=False)
        cand = os.path.join(out.stdout.strip(), "bin", "afdkit")
        if out.returncode == 0 and out.stdout.strip() and os.access(cand, os.X_OK):
            return cand
    except OSError:
        pass
    found = shutil.which("afdkit")
    if found:
        return found
    from . import AfdkitError
    raise AfdkitError("the afdkit program was not found: set AFDKIT to it, or "
                      "AFDKIT_BUILD_DIR to a build tree, or put it on PATH", "ENOENT")


def _arg(value):
    if isinstance(value, (list, tuple, range)):
        return ",".join(_arg(v) for v in value)
    if isinstance(value, float):
        return repr(value)
    return str(value)


def _argv(command, options):
    argv = list(command)
    for key, value in options.items():
        if value is None or value is False:
            continue
        name = "lambda" if key in ("rate", "lambda_") else key.rstrip("_")
        argv.append("--" + name.replace("_", "-"))
        if value is not True:
            argv.append(_arg(value))
    return argv


def _columns(rows):
    t = Table()
    for row in rows:
        for k in row:
            t.setdefault(k, [])
    for k in t:
        values = [row.get(k) for row in rows]
        if all(v is None or isinstance(v, (int, float)) and not isinstance(v, bool)
               for v in values):
            t[k] = np.array([np.nan if v is None else v for v in values], dtype=float)
        else:
            t[k] = values
    return t


def _exec(argv):
    """Run argv and return its standard output.  Warnings go to Python's
    warnings; a failure (exit 1 or 2) raises AfdkitError with the command's
    message, .status "EUSAGE" for exit 2 and "ERUNTIME" for exit 1."""
    from . import AfdkitError
    env = dict(os.environ)
    env.setdefault("AFDKIT_PROGRESS", "off")
    out = subprocess.run(argv, capture_output=True, text=True, env=env, check=False)
    errors = []
    for line in out.stderr.splitlines():
        if ": warning: " in line:
            warnings.warn(line.split(": warning: ", 1)[1], stacklevel=4)
        elif line.startswith("afdkit: "):
            errors.append(line)
    if out.returncode != 0:
        text = errors[-1] if errors else out.stderr.strip() or "exit %d" % out.returncode
        raise AfdkitError(text, "EUSAGE" if out.returncode == 2 else "ERUNTIME")
    return out.stdout


def run(command, *args, **options):
    """Run `afdkit COMMAND ARGS --OPTION VALUE ... --json --provenance` and
    return its table: a Table for a table of one block, a list of Tables (in
    block order) for several.  Warnings go to Python's warnings; a failure
    (exit 1 or 2) raises AfdkitError with the command's message, .status
    "EUSAGE" for exit 2 and "ERUNTIME" for exit 1."""
    argv = [_program()] + _argv(command.split() + [str(a) for a in args], options)
    argv += ["--json", "--provenance"]
    if "precision" not in options:
        argv += ["--precision", "17"]  # every double exactly
    meta, blocks = {}, {}
    for line in _exec(argv).splitlines():
        obj = json.loads(line)
        if list(obj) == ["provenance"]:
            meta = obj["provenance"]
            continue
        blocks.setdefault(obj.pop("block", 1), []).append(obj)
    tables = []
    for b in sorted(blocks):
        t = _columns(blocks[b])
        t.unit = meta.get("unit")
        t.meta = {k: v for k, v in meta.items() if k != "unit"}
        tables.append(t)
    if not tables:
        t = Table()
        t.unit, t.meta = meta.get("unit"), {k: v for k, v in meta.items() if k != "unit"}
        return t
    return tables[0] if len(tables) == 1 else tables


def plan(rate=None, emit=None, **options):
    """afdkit plan: the best configuration of each serving architecture on
    at most gpus= N devices, e.g. plan(model="llama-3.1-70b",
    device="h100-sxm", gpus=8, trace=FILE, ttft_slo="2s", tpot_slo="50ms").
    A Table, one row per architecture, best first.  rate="5/s" is plan's
    --rate (each row also simulated at that rate), not --lambda.  With
    emit="afdkit", "vllm" or "sglang" the commands that launch each row:
    a list of strings, the command lines plan prints (its '#' lines left
    out)."""
    args = [] if rate is None else ["--rate", _arg(rate)]
    if emit is None:
        return run("plan", *args, **options)
    argv = [_program()] + _argv(["plan"] + args + ["--emit", _arg(emit)], options)
    return [line for line in _exec(argv).splitlines()
            if line.strip() and not line.startswith("#")]


def pd(**options):
    """afdkit pd: the prefill and decode pools for an arrival rate under the
    SLOs, e.g. pd(model="llama-3.1-70b", device="h100-sxm", tp=4,
    trace=FILE, rate="5/s", ttft_slo="2s", tpot_slo="50ms").  A list of
    Tables: the sizes (block 1), the prefill curve, and with a timestamped
    trace the replay of its arrivals."""
    return run("pd", **options)


def goodput(**options):
    """afdkit goodput: the largest rate each prefill:decode split sustains,
    e.g. goodput(model=..., device=..., tp=4, trace=FILE, total=8,
    ttft_slo="2s", tpot_slo="50ms")."""
    return run("goodput", **options)


def serve(arch, **options):
    """afdkit serve --arch ARCH: one deployment simulated request by request,
    e.g. serve("colloc", model=..., device=..., lengths=(1000, 100),
    rate="5/s", ttft_slo="500ms", tpot_slo="50ms").  A Table of one row."""
    return run("serve", arch=arch, **options)


def strategies(**options):
    """afdkit strategies: collocated and disaggregated strategies on
    devices= N ranked by goodput per device."""
    return run("strategies", **options)


def regime(**options):
    """afdkit regime: the SLO regime map on instances= N (ttft_slo= and
    tpot_slo= take lists of times with their units)."""
    return run("regime", **options)


def pareto(**options):
    """afdkit pareto: goodput (or throughput) against price over devices, tp
    sizes and architectures; price="2.99/h,3.5/h" (one per device) replaces
    the device files' prices."""
    return run("pareto", **options)
