"""afdkit from Python: the closed forms of libanalytic and the Monte Carlo engine.

Every function takes plain Python numbers, sequences or numpy arrays and
returns numpy arrays and dicts whose keys are the column names of the
matching ``afdkit`` command (docs/cli.md), so that ``pandas.DataFrame(d)``
gives the command's table.  The numbers are the command's, to the last digit:
the same library functions are called in the same order.

A workload is given as keywords, one of
    trace="FILE"                     (with prompt_col=, output_col=, time_col=,
                                      time_unit=, where={COL: VALUE}, decode_offset=,
                                      format="csv" or "jsonl")
    geometric=(mu_p, mu_d)           (Corollary 4.5)
    theta=X, nu=Y                    (given directly)
and latency coefficients as hw="paper-910c" (a preset), hw="FILE" (a
key=value latency file) or hw={...} (a dict as returned by hw(), which may
override single coefficients).

Errors of the library raise AfdkitError carrying its message; arguments of
the wrong kind raise TypeError or ValueError: a bool where a number is taken
is a TypeError; a file name is a str, bytes (decoded with os.fsdecode) or
os.PathLike, and one holding a NUL byte a ValueError, as for open(); a
number outside its range gives the command line's message (after the
argument's name instead of --OPTION).
"""

import math
import os
import warnings

import numpy as np

from ._ffi import ffi, lib, mclib

__all__ = [
    "AfdkitError", "theta", "kappa", "hw", "sweep", "ratio", "mdc", "estimate",
    "estimate_laws", "model", "mc_barrier", "mc_slot", "mc_mdc", "sim", "version",
    "plan", "pd", "goodput", "serve", "strategies", "regime", "pareto", "Table",
]

_STATUS = {
    0: "OK", 1: "EOF", 2: "EINVAL", 3: "EPARSE", 4: "ERANGE", 5: "EEMPTY", 6: "EIO",
    7: "ENOMEM", 8: "ENUMERIC", 9: "EUNSTABLE", 10: "EINFINITE", 11: "ELIMIT",
}


class AfdkitError(Exception):
    """A failure reported by the library: .status is its afd_status name
    ("EINVAL", "EUNSTABLE", ...), .line and .column locate it in an input
    file (0 when not applicable); str() is the library's message."""

    def __init__(self, message, status=0, line=0, column=0):
        super().__init__(message)
        self.status = status if isinstance(status, str) else _STATUS.get(int(status),
                                                                        str(status))
        self.line = line
        self.column = column


def _text(cstr):
    return ffi.string(cstr).decode("utf-8", "replace")


def _fail(st, err=None, where=None):
    """Raise AfdkitError for status st, with err's text and line when set and
    the file name where (as the command line prints FILE:LINE: message)."""
    text = ""
    line = column = 0
    if err is not None:
        text = _text(err.text)
        line, column = err.line, err.column
    if not text:
        text = _text(lib.afd_strerror(st))
    if where is not None:
        if line > 0 and column > 0:
            text = "%s:%d:%d: %s" % (where, line, column, text)
        elif line > 0:
            text = "%s:%d: %s" % (where, line, text)
        else:
            text = "%s: %s" % (where, text)
    raise AfdkitError(text, st, line, column)


def _check(st, err=None, where=None):
    if st != lib.AFD_OK:
        _fail(st, err, where)


def version():
    """The library's version, "MAJOR.MINOR.PATCH"."""
    return _text(lib.afd_version())


__version__ = version()


def _is_bool(v):
    return isinstance(v, (bool, np.bool_))


def _no_bools(values, name):
    """TypeError for a bool where a number is taken (True would be 1.0)."""
    if _is_bool(values) or (isinstance(values, np.ndarray) and values.dtype == bool) or (
            isinstance(values, (list, tuple)) and any(_is_bool(x) for x in values)):
        raise TypeError("%s: expected a number, not a bool" % name)


def _float(v, name):
    """A number argument as a float; a bool is refused."""
    _no_bools(v, name)
    return float(v)


def _path(p, name):
    """A file name argument (str, bytes or os.PathLike) as str, as open()
    takes it: bytes are decoded with the file system's encoding; an
    embedded NUL is a ValueError (C would cut the name there)."""
    if isinstance(p, os.PathLike):
        p = os.fspath(p)
    if isinstance(p, bytes):
        p = os.fsdecode(p)
    if not isinstance(p, str):
        raise TypeError("%s: expected a file name (str, bytes or os.PathLike), not %s"
                        % (name, type(p).__name__))
    if "\0" in p:
        raise ValueError("%s: embedded null byte in the file name" % name)
    return p


def _reals(values, name, lo=-math.inf):
    _no_bools(values, name)
    a = np.atleast_1d(np.asarray(values, dtype=float))
    if a.ndim != 1 or a.size == 0:
        raise ValueError("%s: expected a number or a non-empty list of numbers" % name)
    if not np.all(np.isfinite(a)) or np.any(a < lo):
        raise ValueError("%s: every value must be finite and >= %g" % (name, lo))
    return a


def _integers(values, name, lo, hi):
    a = _reals(values, name, lo)
    if np.any(a != np.floor(a)) or np.any(a > hi):
        raise ValueError("%s: every value must be an integer in [%d, %d]" % (name, lo, hi))
    return a


def _integer(v, name, lo, hi):
    if _is_bool(v):
        raise TypeError("%s: expected a number, not a bool" % name)
    if not float(v).is_integer() or not lo <= v <= hi:
        raise ValueError("%s must be an integer in [%d, %d]: %r" % (name, lo, hi, v))
    return int(v)


# ------------------------------------------------------------------ workloads

_WORKLOAD_KEYS = ("trace", "geometric", "theta", "nu", "prompt_col", "output_col", "time_col",
                  "time_unit", "where", "decode_offset", "format")
_MAX_KEPT_ROWS = 1 << 26
_MAX_KEPT_PAIRS = 1 << 25  # as the command line: distinct (P, D) pairs


class _Workload:
    """An afd_workload read from keywords; free()d by the with statement."""

    def __init__(self, kw, keep_rows=False, needs_lengths=False, keep_pairs=False):
        unknown = set(kw) - set(_WORKLOAD_KEYS)
        if unknown:
            raise TypeError("unexpected keyword argument(s): %s" % ", ".join(sorted(unknown)))
        self.w = ffi.new("afd_workload *")
        self._keep = []
        trace, geo = kw.get("trace"), kw.get("geometric")
        given = kw.get("theta") is not None or kw.get("nu") is not None
        kinds = (trace is not None) + (geo is not None) + given
        if kinds == 0:
            raise ValueError("no workload: give trace=FILE, geometric=(mu_p, mu_d), or "
                             "theta=X, nu=Y")
        if kinds > 1:
            raise ValueError("give only one workload: trace, geometric or theta/nu")
        if trace is None and any(kw.get(k) is not None for k in _WORKLOAD_KEYS[4:]):
            raise ValueError("prompt_col, output_col, time_col, time_unit, where, "
                             "decode_offset and format apply only to trace")
        if geo is not None:
            mu_p, mu_d = (_float(x, "geometric") for x in geo)
            if not (mu_p >= 1 and mu_d >= 1):
                raise ValueError("geometric=(mu_p, mu_d): both means must be >= 1")
            _check(lib.afd_workload_geometric(mu_p, mu_d, self.w))
        elif given:
            if needs_lengths:
                raise ValueError("theta/nu do not define request lengths; this needs trace "
                                 "or geometric")
            if kw.get("theta") is None or kw.get("nu") is None:
                raise ValueError("theta and nu go together")
            t, n = _float(kw["theta"], "theta"), _float(kw["nu"], "nu")
            if not (t >= 0 and n >= 0):
                raise ValueError("theta and nu must be >= 0")
            _check(lib.afd_workload_given(t, n, self.w))
        else:
            self._read(_path(trace, "trace"), kw, keep_rows, keep_pairs)

    def _cstr(self, s):
        if s is None:
            return ffi.NULL
        c = ffi.new("char[]", str(s).encode())
        self._keep.append(c)
        return c

    def _read(self, path, kw, keep_rows, keep_pairs=False):
        opt = ffi.new("afd_workload_trace_options *")
        cols = opt.columns
        cols.prompt_col = self._cstr(kw.get("prompt_col"))
        cols.output_col = self._cstr(kw.get("output_col"))
        cols.time_col = self._cstr(kw.get("time_col"))
        cols.time_unit = self._cstr(kw.get("time_unit"))
        cols.format = self._cstr(kw.get("format"))
        where = kw.get("where") or {}
        items = list(where.items()) if isinstance(where, dict) else list(where)
        if items:
            filters = ffi.new("afd_trace_filter[]", len(items))
            self._keep.append(filters)
            for i, (col, val) in enumerate(items):
                filters[i].column = self._cstr(col)
                filters[i].value = self._cstr(val)
            cols.where = filters
            cols.n_where = len(items)
        offset = kw.get("decode_offset")
        opt.decode_offset = _integer(offset, "decode_offset", 0, 2**63 - 1) if offset else 0
        opt.keep_rows = 1 if keep_rows else 0
        opt.max_rows = _MAX_KEPT_ROWS if keep_rows else 0
        opt.keep_pairs = 1 if keep_pairs else 0
        opt.max_pairs = _MAX_KEPT_PAIRS if keep_pairs else 0
        err = ffi.new("afd_error *")
        _check(lib.afd_workload_from_trace(os.fsencode(path), opt, self.w, err), err, path)
        self.path = path

    def __enter__(self):
        return self.w

    def __exit__(self, *exc):
        lib.afd_workload_free(self.w)
        return False


def _split(kw):
    """(workload keywords, the rest)."""
    wl = {k: v for k, v in kw.items() if k in _WORKLOAD_KEYS}
    rest = {k: v for k, v in kw.items() if k not in _WORKLOAD_KEYS}
    if rest:
        raise TypeError("unexpected keyword argument(s): %s" % ", ".join(sorted(rest)))
    return wl


def theta(**workload):
    """Workload statistics (afdkit theta): the stationary slot load theta and
    its spread nu (Lemma 4.1) with standard errors, the Hill tail index of the
    decode length, and the arrival rate and dispersion indices from the
    trace's timestamps.  Returns a dict with the command's columns."""
    with _Workload(_split(workload)) as w:
        s, a = w.stats, w.arrivals
        return {
            "n": int(s.n), "theta": s.theta, "nu": s.nu, "theta_se": s.theta_se,
            "nu_se": s.nu_se, "mean_p": s.mean_p, "mean_d": s.mean_d,
            "tail_alpha": w.tail_alpha, "tail_alpha_se": w.tail_alpha_se,
            "tail_k": int(w.tail_k), "lambda": getattr(a, "lambda"),
            "span_s": a.span, "idc_1s": a.idc[0], "idc_10s": a.idc[1], "idc_60s": a.idc[2],
            "workload": _text(lib.afd_workload_kind_name(w.kind)),
            "ey2": s.ey2, "cov_theta_nu": s.cov_theta_nu,
            "skipped": int(w.skipped), "filtered": int(w.filtered),
        }


# ------------------------------------------------------------------- hardware

_HW_REALS = ("alpha_a", "beta_a", "alpha_f", "beta_f", "alpha_c", "beta_c", "prefill_a",
             "prefill_b", "prefill_c", "decode_beta", "decode_gamma", "decode_alpha",
             "fit_max_rel_err", "afd_fit_max_rel_err")
_HW_TEXT = ("unit", "model", "device")


def _hw_dict(h):
    d = {k: getattr(h, k) for k in _HW_REALS}
    for k in _HW_TEXT:
        d[k] = _text(getattr(h, k))
    d["tp"] = int(h.tp)
    d["decode_batch_max"] = int(h.decode_batch_max)
    d["afd_tp"] = int(h.afd_tp)
    return d


def _load_hw(spec):
    """An afd_hw * from a preset name, a latency file or a dict (whose
    "hw" entry, if any, names the preset or file the other entries override)."""
    h = ffi.new("afd_hw *")
    err = ffi.new("afd_error *")
    lib.afd_hw_init(h)
    if isinstance(spec, dict):
        base = spec.get("hw")
        fields = {k: v for k, v in spec.items() if k != "hw"}
    else:
        base, fields = spec, {}
    if base is not None:
        name = _path(base, "hw")
        if lib.afd_hw_preset(os.fsencode(name), h) != lib.AFD_OK:
            st = lib.afd_hw_read(os.fsencode(name), h, err)
            if st != lib.AFD_OK:
                if st == lib.AFD_EIO and "/" not in name and "." not in name:
                    raise AfdkitError("hw: '%s' is neither a preset (%s) nor a readable "
                                      "file" % (name, _text(lib.afd_hw_preset_name(0))), st)
                _fail(st, err, name)
    for k, v in fields.items():
        if k in _HW_REALS:
            setattr(h, k, _float(v, k))
        elif k in _HW_TEXT:
            setattr(h, k, str(v).encode()[: ffi.sizeof(getattr(h, k)) - 1])
        elif k == "tp":
            h.tp = _integer(v, "tp", 0, 1024)
        elif k == "decode_batch_max":
            h.decode_batch_max = _integer(v, "decode_batch_max", 0, 10**9)
        elif k == "afd_tp":
            h.afd_tp = _integer(v, "afd_tp", 0, 1024)
        else:
            raise ValueError("hw: unknown coefficient '%s'" % k)
    _check(lib.afd_hw_check(h, err), err)
    return h


def hw(spec):
    """Latency coefficients (a preset such as "paper-910c" or a key=value file)
    as a dict: the six AFD coefficients, the serving laws (nan when absent),
    fit_max_rel_err, afd_fit_max_rel_err, unit, model, device, tp (the
    tensor-parallel size the laws time; 0 when the file does not say),
    decode_batch_max (the largest batch the decode law was fitted on; 0 when
    the file does not say) and afd_tp (the devices per instance the six
    coefficients time; 0 when the file does not say).
    Change entries and pass the dict as hw= to override them."""
    return _hw_dict(_load_hw(spec))


def _system(hw_spec, B, wl, keep_rows=False):
    B = _integer(B, "B", 1, 2**31)
    s = ffi.new("afd_system *")
    s.hw = _load_hw(hw_spec)[0]
    with _Workload(wl, keep_rows) as w:
        stats = ffi.new("afd_renewal_stats *", w.stats)
    s.B, s.theta, s.nu = B, stats.theta, stats.nu
    return s, stats


# ----------------------------------------------------------- closed forms

def kappa(r, full=False):
    """kappa_r = E[max of r iid N(0,1)] (eq. 5), for r >= 1 (real r allowed).
    A number for a number, else an array; full=True gives the dict of afdkit
    kappa: r, kappa, abserr (the quadrature's error bound)."""
    rs = _reals(r, "r", 1)
    out = np.empty(rs.size)
    err = np.empty(rs.size)
    res = ffi.new("afd_result *")
    e = ffi.new("afd_error *")
    for i, x in enumerate(rs):
        if lib.afd_kappa_check_r(float(x), e) != lib.AFD_OK:
            raise ValueError("r: %s" % _text(e.text))
        _check(lib.afd_kappa_e(float(x), res))
        out[i], err[i] = res.val, res.err
    if full:
        return {"r": rs, "kappa": out, "abserr": err}
    return float(out[0]) if np.ndim(r) == 0 else out


_SWEEP_COLUMNS = ("r", "tau_mf", "thr_mf", "tau_g", "thr_g", "bind", "p_attention", "barrier",
                  "eta_a_mf", "eta_f_mf", "eta_a_g", "eta_f_g")


class _Cost:
    """Prices per hour and powers in watts of one Attention and one FFN
    device (afdkit --price-a/--price-f, --power-a/--power-f), each pair
    (attention, ffn) or None."""

    def __init__(self, price, power, hw):
        self.price = self._pair(price, "price")
        self.power = self._pair(power, "power")
        sec = ffi.new("double *")
        self.unit_seconds = math.nan
        if (self.price or self.power) and lib.afd_unit_seconds(hw.unit, sec) == lib.AFD_OK:
            self.unit_seconds = sec[0]
        elif self.price or self.power:
            warnings.warn("the latency model's unit '%s' is not a unit of time: "
                          "thr_per_dollar and thr_per_joule are per unit of the model; the "
                          "ratios they pick are unaffected" % (_text(hw.unit) or "?"))

    @staticmethod
    def _pair(v, name):
        if v is None:
            return None
        a, f = (_float(x, name) for x in v)
        if not (a > 0 and f > 0 and math.isfinite(a) and math.isfinite(f)):
            raise ValueError("%s=(attention, ffn): both must be finite and > 0" % name)
        return a, f

    def per(self, pair, r, B, tau, per_hour):
        """Tokens per dollar (per joule) of an rA-1F bundle (afd_bundle_per_cost)."""
        if math.isnan(self.unit_seconds):
            return lib.afd_bundle_per_cost(r, B, tau, 1, pair[0], pair[1], 0)
        return lib.afd_bundle_per_cost(r, B, tau, self.unit_seconds, pair[0], pair[1], per_hour)


def sweep(r, B, hw, price=None, power=None, **workload):
    """Cycle times and throughput per instance against r (afdkit sweep): a
    dict of arrays r tau_mf thr_mf tau_g thr_g bind p_attention barrier
    eta_a_mf eta_f_mf eta_a_g eta_f_g (eq. 8, 9, 1, 11; Theorem 4.3).
    price=(attention, ffn) per device-hour adds thr_per_dollar and
    thr_per_dollar_mf, power=(attention, ffn) in watts thr_per_joule and
    thr_per_joule_mf (tokens per dollar, per joule, afd_bundle_per_cost)."""
    rs = _reals(r, "r", 1e-9)
    s, _ = _system(hw, B, _split(workload))
    cost = _Cost(price, power, s.hw)
    extra = {}
    cols = {k: [] for k in _SWEEP_COLUMNS}
    cy = ffi.new("afd_cycle *")
    for x in rs:
        st = lib.afd_cycle_eval(s, float(x), cy)
        if st != lib.AFD_OK:
            raise AfdkitError("r = %g: %s" % (x, _text(lib.afd_strerror(st))), st)
        for k in _SWEEP_COLUMNS:
            cols[k].append(_text(lib.afd_bind_name(cy.bind)) if k == "bind" else getattr(cy, k))
        for name, pair, per_hour in (("dollar", cost.price, 1), ("joule", cost.power, 0)):
            if pair is not None:
                extra.setdefault("thr_per_" + name, []).append(
                    cost.per(pair, cy.r, s.B, cy.tau_g, per_hour))
                extra.setdefault("thr_per_%s_mf" % name, []).append(
                    cost.per(pair, cy.r, s.B, cy.tau_mf, per_hour))
    cols.update(extra)
    return {k: np.array(v) for k, v in cols.items()}


def _ratio_row(r, thr, tau, bind, r_cont, se):
    lo, hi = ffi.new("double *"), ffi.new("double *")
    lib.afd_interval95(r_cont, se, lo, hi)
    return {"r": r, "thr": thr, "tau": tau, "bind": _text(lib.afd_bind_name(bind)),
            "r_cont": r_cont, "r_se": se, "r_lo": lo[0], "r_hi": hi[0]}


def ratio(B, hw, r_max=128, r=None, max_instances=None, top=5, price=None, power=None,
          **workload):
    """The recommended Attention/FFN ratio (afdkit ratio): {"mf": row, "g": row}
    with row = {r, thr, tau, bind, r_cont, r_se, r_lo, r_hi}: the mean-field
    optimum (Theorem 4.4) and the barrier-aware one (eq. 12) over the feasible
    set 1..r_max (or the list r), with delta-method standard errors from the
    trace.  price=(attention, ffn) per device-hour adds the row "cost" (the
    barrier-aware integer r with the most tokens per dollar) and
    thr_per_dollar to every row; power=(attention, ffn) in watts the row
    "energy" and thr_per_joule.  max_instances=N adds "topologies": the best
    xA-yF with x + y <= N, a dict of arrays x y r thr tau bind thr_mf."""
    s, ws = _system(hw, B, _split(workload))
    cost = _Cost(price, power, s.hw)
    err = ffi.new("afd_error *")
    mf = ffi.new("afd_mf_result *")
    _check(lib.afd_ratio_mf(s, mf, err), err)
    if r is not None:
        feasible = _integers(r, "r", 1, 1e9)
    else:
        feasible = np.arange(1, _integer(r_max, "r_max", 1, 1 << 24) + 1, dtype=float)
    lo, hi = float(feasible.min()), float(feasible.max())
    fs = ffi.new("double[]", [float(x) for x in feasible])
    g = ffi.new("afd_cycle *")
    mf_cont, mf_se = ffi.new("double *"), ffi.new("double *")
    g_cont, g_se = ffi.new("double *"), ffi.new("double *")
    st = lib.afd_ratio_g(s, fs, len(feasible), g)
    if st == lib.AFD_OK:
        st = lib.afd_ratio_se(s, b"m", 0, lo, hi, ws.theta_se, ws.nu_se, ws.cov_theta_nu,
                              mf_cont, mf_se)
    if st == lib.AFD_OK:
        st = lib.afd_ratio_se(s, b"g", g.r, lo, hi, ws.theta_se, ws.nu_se, ws.cov_theta_nu,
                              g_cont, g_se)
    if st != lib.AFD_OK:
        raise AfdkitError("barrier-aware rule: %s" % _text(lib.afd_strerror(st)), st)
    if mf.r < 1:
        warnings.warn("r*_mf = %.4g < 1: the FFN binds even with one Attention instance per "
                      "FFN; see xA-yF topologies with max_instances" % mf.r)
    if g.r == hi and len(feasible) > 1:
        warnings.warn("the barrier-aware optimum r = %.0f is the largest feasible value; "
                      "raise r_max" % g.r)
    at_mf = ffi.new("afd_cycle *")
    lib.afd_cycle_eval(s, mf.r, at_mf)
    out = {"mf": _ratio_row(mf.r, mf.thr, mf.tau, at_mf.bind, mf_cont[0], mf_se[0]),
           "g": _ratio_row(g.r, g.thr_g, g.tau_g, g.bind, g_cont[0], g_se[0])}
    for rule, pair in (("cost", cost.price), ("energy", cost.power)):
        if pair is None:
            continue
        best = ffi.new("afd_cycle *")
        r_cont, se = ffi.new("double *"), ffi.new("double *")
        w = pair[1] / pair[0]
        st = lib.afd_ratio_cost_g(s, w, fs, len(feasible), best, ffi.NULL)
        if st == lib.AFD_OK:
            st = lib.afd_ratio_cost_se(s, w, b"g", best.r, lo, hi, ws.theta_se, ws.nu_se,
                                       ws.cov_theta_nu, r_cont, se)
        if st != lib.AFD_OK:
            raise AfdkitError("rule %s: %s" % (rule, _text(lib.afd_strerror(st))), st)
        if best.r == hi and len(feasible) > 1:
            warnings.warn("the %s optimum r = %.0f is the largest feasible value; raise "
                          "r_max" % (rule, best.r))
        out[rule] = _ratio_row(best.r, best.thr_g, best.tau_g, best.bind, r_cont[0], se[0])
    for row in out.values():
        for name, pair, per_hour in (("dollar", cost.price, 1), ("joule", cost.power, 0)):
            if pair is not None:
                row["thr_per_" + name] = cost.per(pair, row["r"], s.B, row["tau"], per_hour)
    if max_instances is not None:
        n = _integer(max_instances, "max_instances", 2, 4096)
        k = _integer(top, "top", 1, 1000)
        best = ffi.new("afd_topology[]", k)
        found = ffi.new("size_t *")
        st = lib.afd_topology_search(s, n, best, k, found)
        if st != lib.AFD_OK:
            raise AfdkitError("topology search: %s" % _text(lib.afd_strerror(st)), st)
        rows = [best[i] for i in range(found[0])]
        out["topologies"] = {
            "x": np.array([t.x for t in rows], dtype=int),
            "y": np.array([t.y for t in rows], dtype=int),
            "r": np.array([t.cycle.r for t in rows]),
            "thr": np.array([t.cycle.thr_g for t in rows]),
            "tau": np.array([t.cycle.tau_g for t in rows]),
            "bind": np.array([_text(lib.afd_bind_name(t.cycle.bind)) for t in rows]),
            "thr_mf": np.array([t.cycle.thr_mf for t in rows]),
        }
    return out


def _percentile_name(prefix, p, suffix):
    """The command line's column name for a quantile: wq_p90, wq_p99_9."""
    num = "%.15g" % (100 * p)
    return "%s_p%s%s" % (prefix, num.replace(".", "_"), suffix)


def _unstable_queue(load, c, a):
    """Raise the CLI's error for an unstable queue with offered load a >= c
    (cli_unstable_queue): the smallest stable c in full below 2^53, c > a
    in 15 significant digits above, where a + 1 is no double."""
    if not math.isfinite(a):
        raise AfdkitError("unstable queue: %s overflows, so no number of servers makes it "
                          "stable" % load, lib.AFD_EUNSTABLE)
    head = "unstable queue at c = %.15g: rho = %s/c = %g >= 1; " % (c, load, a / c)
    if a < 2.0**53:
        raise AfdkitError(head + "the smallest c that makes it stable is %d"
                          % (math.floor(a) + 1), lib.AFD_EUNSTABLE)
    raise AfdkitError(head + "a stable queue needs c > %.15g" % a, lib.AFD_EUNSTABLE)


def mdc(lam, service, c, percentile=0.9):
    """The exact M/D/c queue beside its approximations (afdkit mdc): a dict of
    arrays c rho wq_exact wq_cosmetatos p_wait wq_p90 [wq_pP] wq_allen_cunneen
    wq_kingman err_cosmetatos err_allen_cunneen err_kingman lambda, one row per
    (rate, c) with the rates outermost.  Times in the unit of service, rates
    in its inverse.  An unstable configuration raises AfdkitError (EUNSTABLE)."""
    lams = _reals(lam, "lam", 0)
    if np.any(lams <= 0):
        raise ValueError("lam: every rate must be > 0")
    service = _float(service, "service")
    if not (service > 0 and math.isfinite(service)):
        raise ValueError("service must be > 0")
    cs = _integers(c, "c", 1, 1e6)
    p = _float(percentile, "percentile")
    if not 0 < p < 1:
        raise ValueError("percentile must be in (0, 1)")
    a = float(lams.max()) * service
    for x in cs:
        if not a < x:
            _unstable_queue("lambda*D", x, a)
    pcol = _percentile_name("wq", p, "")
    extra = pcol != "wq_p90"
    names = ["c", "rho", "wq_exact", "wq_cosmetatos", "p_wait", "wq_p90"]
    names += [pcol] if extra else []
    names += ["wq_allen_cunneen", "wq_kingman", "err_cosmetatos", "err_allen_cunneen",
              "err_kingman", "lambda"]
    cols = {k: [] for k in names}
    q = ffi.new("afd_mdc **")
    wq, pw, q90, qp = (ffi.new("afd_result *") for _ in range(4))
    ap = ffi.new("afd_mdc_approx *")
    for lm in lams:
        lm = float(lm)
        for cc in cs:
            ci = int(cc)
            st = lib.afd_mdc_alloc(lm, service, ci, q)
            if st == lib.AFD_ELIMIT:
                raise AfdkitError("c = %d: rho = %g: the truncated chain of the exact solution "
                                  "is too large (%s)" % (ci, lm * service / ci,
                                                         _text(lib.afd_strerror(st))), st)
            if st != lib.AFD_OK:
                raise AfdkitError("c = %d: %s" % (ci, _text(lib.afd_strerror(st))), st)
            st = lib.afd_mdc_wq_e(q[0], wq)
            if st == lib.AFD_OK:
                st = lib.afd_mdc_p_wait_e(q[0], pw)
            if st == lib.AFD_OK:
                st = lib.afd_mdc_wait_quantile_e(q[0], 0.9, q90)
            if st == lib.AFD_OK and extra:
                st = lib.afd_mdc_wait_quantile_e(q[0], p, qp)
            lib.afd_mdc_free(q[0])
            if st != lib.AFD_OK:
                raise AfdkitError("c = %d: %s" % (ci, _text(lib.afd_strerror(st))), st)
            lib.afd_mdc_approx_compare(lm, service, ci, wq.val, ap)
            row = [ci, lm * service / ci, wq.val, ap.wq_cosmetatos, pw.val, q90.val]
            row += [qp.val] if extra else []
            row += [ap.wq_allen_cunneen, ap.wq_kingman, ap.err_cosmetatos, ap.err_allen_cunneen,
                    ap.err_kingman, lm]
            for k, v in zip(names, row):
                cols[k].append(v)
    out = {k: np.array(v, dtype=float) for k, v in cols.items()}
    out["c"] = out["c"].astype(int)
    return out


# ---------------------------------------------------------------- estimator

def _load_model(spec):
    m = ffi.new("afd_model *")
    err = ffi.new("afd_error *")
    spec = _path(spec, "model")
    _check(lib.afd_model_load(os.fsencode(spec), m, err), err, spec)
    return m


def _load_device(spec):
    d = ffi.new("afd_device *")
    err = ffi.new("afd_error *")
    spec = _path(spec, "device")
    _check(lib.afd_device_load(os.fsencode(spec), d, err), err, spec)
    return d


def estimate(model, device, tp=1, phase="prefill", batch=1, seq=2048, paper_forms=False,
             no_dispatch=False, per_op=False):
    """Time of one forward pass (afdkit estimate; BestServe's estimator), in
    milliseconds: a dict of arrays module dispatch_ms compute_ms comm_ms
    time_ms, one row per module of a block and a last row "forward" for the
    whole model.  per_op=True gives the operators instead: module op
    work_flop traffic_bytes intensity bound time_ms.  model and device are
    presets (llama-3.1-70b, h100-sxm, ...) or files."""
    if phase not in ("prefill", "decode"):
        raise ValueError("phase must be prefill or decode: %r" % (phase,))
    m, d = _load_model(model), _load_device(device)
    o = ffi.new("afd_estimate_options *")
    o.tp = _integer(tp, "tp", 1, 1024)
    o.phase = lib.AFD_PREFILL if phase == "prefill" else lib.AFD_DECODE
    o.batch = _integer(batch, "batch", 1, 1000000000)
    o.seq = _integer(seq, "seq", 1, 100000000)
    o.paper_forms = 1 if paper_forms else 0
    o.no_dispatch = 1 if no_dispatch else 0
    est = ffi.new("afd_estimate *")
    err = ffi.new("afd_error *")
    _check(lib.afd_estimate_forward(m, d, o, est, err), err)
    if per_op:
        ops = [est.ops[i] for i in range(est.n_ops)]
        return {
            "module": np.array([_text(x.module) for x in ops]),
            "op": np.array([_text(x.name) for x in ops]),
            "work_flop": np.array([x.work for x in ops]),
            "traffic_bytes": np.array([x.traffic for x in ops]),
            "intensity": np.array([x.work / x.traffic if x.traffic > 0 else math.nan
                                   for x in ops]),
            "bound": np.array(["compute" if x.compute_bound else "memory" for x in ops]),
            "time_ms": np.array([x.time_s * 1e3 for x in ops]),
        }
    names, disp, comp, comm, end = [], [], [], [], []
    for i in range(4):
        mod = est.module[i]
        names.append(_text(mod.name))
        disp.append(mod.dispatch_s * 1e3)
        comp.append(mod.compute_s * 1e3)
        comm.append(mod.comm_s * 1e3)
        end.append(mod.end_s * 1e3)  # Algorithm 1's end, from the block's start
    names.append("forward")
    disp.append(est.forward_dispatch_s * 1e3)
    comp.append(est.forward_compute_s * 1e3)
    comm.append(est.forward_comm_s * 1e3)
    end.append(est.forward_s * 1e3)
    return {"module": np.array(names), "dispatch_ms": np.array(disp),
            "compute_ms": np.array(comp), "comm_ms": np.array(comm), "time_ms": np.array(end)}


def estimate_laws(model, device, tp=1):
    """The latency file afdkit estimate --out writes, as a dict for hw=: the
    prefill and decode laws fitted to the estimator and the six AFD
    coefficients, in ms."""
    m, d = _load_model(model), _load_device(device)
    h = ffi.new("afd_hw *")
    err = ffi.new("afd_error *")
    _check(lib.afd_estimate_laws(m, d, float(_integer(tp, "tp", 1, 1024)), h, err), err)
    return _hw_dict(h)


def model(spec):
    """What follows from a model description alone (afdkit model): params
    active_params weight_bytes kv_bytes_per_token layers."""
    m = _load_model(spec)
    return {"params": lib.afd_model_params(m), "active_params": lib.afd_model_active_params(m),
            "weight_bytes": lib.afd_model_weight_bytes(m),
            "kv_bytes_per_token": lib.afd_model_kv_bytes_per_token(m), "layers": m.layers}


# -------------------------------------------------------------- Monte Carlo

def _mc():
    if mclib is None:
        raise AfdkitError("the Monte Carlo library libafdmontecarlo.so was not found (it is "
                          "installed in $(libdir)/afdkit/; set AFDKIT_LIBDIR or "
                          "AFDKIT_BUILD_DIR)", lib.AFD_EIO)
    return mclib


def mc_barrier(B, r, trials=50000, seed=1, per_slot=False, threads=0, **workload):
    """The barrier overhead E[W]/(B theta) - 1 by Monte Carlo beside the CLT
    (afdkit mc barrier; Theorem 4.3): a dict of arrays r overhead_mc
    overhead_se overhead_clt z mean_w mean_w_se sd_w.  Needs trace= or
    geometric=.  Identical for any number of threads."""
    mc = _mc()
    B = _integer(B, "B", 1, 2**31)
    rs = _integers(r, "r", 1, 65536).astype(int)
    p = ffi.new("afd_barrier_mc_params *")
    res = ffi.new("afd_barrier_mc_result[]", len(rs))
    r_c = ffi.new("unsigned[]", [int(x) for x in rs])
    with _Workload(_split(workload), needs_lengths=True, keep_pairs=True) as w:
        p.workload = w
        p.B = B
        p.r = r_c
        p.n_r = len(rs)
        p.trials = _integer(trials, "trials", 2, 2**63 - 1)
        p.seed = _integer(seed, "seed", 0, 2**63 - 1)
        p.per_slot = 1 if per_slot else 0
        p.threads = _integer(threads, "threads", 0, 256)
        st = mc.afd_barrier_mc(p, res)
        if st == lib.AFD_ELIMIT:
            raise AfdkitError("refused: the run exceeds the Monte Carlo size limits (trials x r "
                              "x B slot draws at most 2^38); reduce trials, r or B", st)
        _check(st)
        th, nu = w.stats.theta, w.stats.nu
    out = {k: [] for k in ("r", "overhead_mc", "overhead_se", "overhead_clt", "z", "mean_w",
                           "mean_w_se", "sd_w")}
    for k, x in enumerate(rs):
        clt = lib.afd_barrier_overhead_clt(th, nu, float(B), float(x))
        se = res[k].overhead_se
        row = (int(x), res[k].overhead, se, clt,
               (res[k].overhead - clt) / se if se > 0 else math.nan,
               res[k].mean_w, res[k].mean_w_se, res[k].sd_w)
        for key, v in zip(out, row):
            out[key].append(v)
    d = {k: np.array(v, dtype=float) for k, v in out.items()}
    d["r"] = d["r"].astype(int)
    return d


def mc_slot(steps=10**7, warmup=None, batches=32, seed=1, **workload):
    """One decode slot as a renewal process (afdkit mc slot; Lemma 4.1): a dict
    of arrays quantity (theta, ey2) mc se exact z, plus steps, requests,
    batch_lifetimes and batch_lag1.  Standard errors by batch means."""
    mc = _mc()
    steps = _integer(steps, "steps", 2, 1 << 46)
    batches = _integer(batches, "batches", 2, 100000)
    if steps < batches:
        raise ValueError("steps must be at least batches (%d)" % batches)
    p = ffi.new("afd_slot_mc_params *")
    res = ffi.new("afd_slot_mc_result *")
    with _Workload(_split(workload), needs_lengths=True, keep_pairs=True) as w:
        p.workload = w
        p.steps = steps
        p.warmup = steps // 10 if warmup is None else _integer(warmup, "warmup", 0, 1 << 46)
        p.batches = batches
        p.seed = _integer(seed, "seed", 0, 2**63 - 1)
        p.stream = 0
        _check(mc.afd_slot_mc(p, res))
        exact = (w.stats.theta, w.stats.ey2)
    if res.batch_lifetimes < 100:
        warnings.warn("batches span only %.3g length-biased lifetimes (aim for >= 100): the "
                      "standard errors may be low; raise steps or lower batches"
                      % res.batch_lifetimes)
    mcv = (res.mean, res.mean_sq)
    se = (res.mean_se, res.mean_sq_se)
    return {"quantity": np.array(["theta", "ey2"]), "mc": np.array(mcv), "se": np.array(se),
            "exact": np.array(exact),
            "z": np.array([(m - e) / s if s > 0 else math.nan
                           for m, s, e in zip(mcv, se, exact)]),
            "steps": int(res.steps), "requests": int(res.requests),
            "batch_lifetimes": res.batch_lifetimes, "batch_lag1": res.batch_lag1}


def mc_mdc(lam, c, service=None, customers=10**6, warmup=None, batches=32, percentile=0.9,
           seed=1, service_a=0, service_b=0, service_c=0, arrivals="poisson", **workload):
    """The FCFS multi-server queue by simulation (afdkit mc mdc): a dict of
    arrays c wq_mc wq_se p_wait_mc p_wait_se wq_p90_mc wq_p90_se rho
    service_mean ttft_mean_mc ttft_mean_se ttft_p90_mc ttft_p90_se (quantile
    columns named after percentile), standard errors by batch means.

    Service: service=D (deterministic, M/D/c), or trace=FILE (with the trace
    keywords of theta) whose prompts P each take service_a + service_b P +
    service_c P^2 (--service-trace, --service-a/-b/-c).  arrivals="poisson"
    (rate lam) or "trace": the trace's own timestamps replayed in order
    (--arrivals trace; lam None keeps the trace's rate in requests per
    second, another lam stretches the times to it), every row after the
    warm-up (default 0) measured."""
    mc = _mc()
    if arrivals not in ("poisson", "trace"):
        raise ValueError("arrivals must be 'poisson' or 'trace': %r" % (arrivals,))
    replay = arrivals == "trace"
    wl = _split(workload)
    if replay and wl.get("trace") is None:
        raise ValueError("arrivals='trace' needs trace=FILE")
    if (wl.get("trace") is not None) == (service is not None):
        raise ValueError("give exactly one of service=D and trace=FILE")
    if lam is None and not replay:
        raise ValueError("lam is required")
    if lam is not None:
        lam = _float(lam, "lam")
        if not (lam > 0 and math.isfinite(lam)):
            raise ValueError("lam must be > 0 and finite")
    cs = _integers(c, "c", 1, 1 << 24).astype(int)
    customers = _integer(customers, "customers", 2, 1 << 27)
    batches = _integer(batches, "batches", 2, 100000)
    if customers < batches:
        raise ValueError("customers must be at least batches (%d)" % batches)
    q = _float(percentile, "percentile")
    if not 0 < q < 1:
        raise ValueError("percentile must be in (0, 1)")
    seed = _integer(seed, "seed", 0, 2**63 - 1)
    if warmup is not None:
        warmup = _integer(warmup, "warmup", 0, 1 << 46)
    law = ffi.new("afd_quad_service *")
    law.a, law.b, law.c = (_float(service_a, "service_a"), _float(service_b, "service_b"),
                           _float(service_c, "service_c"))
    if service is not None:
        service = _float(service, "service")
        if not (service > 0 and math.isfinite(service)):
            raise ValueError("service must be > 0 and finite")
        return _mc_mdc_run(mc, lam, cs, service, None, law, customers, warmup, batches, q,
                           seed, 0)
    with _Workload(wl, keep_rows=True) as w:
        p = ffi.new("afd_queue_sim_params *")
        p.trace = w
        p.service_fn = mc.afd_quad_service_time
        p.service_ctx = law
        es = ffi.new("double *")
        st = mc.afd_queue_sim_service_mean(p, es)
        if st == lib.AFD_EINVAL:
            raise ValueError("%s: the service time a + b P + c P^2 overflows on this trace"
                             % wl["trace"])
        _check(st, where=wl["trace"])
        if not es[0] > 0:
            raise ValueError("the service time a + b P + c P^2 is zero on this trace; give "
                             "service_a, service_b or service_c")
        scale = 0
        if replay:
            a = w.arrivals
            if w.time == ffi.NULL:
                raise AfdkitError("%s: arrivals='trace': the trace has no timestamp column "
                                  "(name one with time_col)" % wl["trace"], lib.AFD_EINVAL)
            if a.unsorted_line != 0 or not getattr(a, "lambda") > 0:
                raise AfdkitError("%s: arrivals='trace': %s" % (
                    wl["trace"], "the times must not go backwards" if a.unsorted_line != 0
                    else "the times span no interval"), lib.AFD_EINVAL)
            if lam is None:
                lam = getattr(a, "lambda")  # service times in seconds
            if warmup is None:
                warmup = 0
            customers = int(w.n_kept) - warmup
            if customers < batches:
                raise AfdkitError("%s: arrivals='trace': %d rows after the warm-up, fewer "
                                  "than batches (%d)" % (wl["trace"], customers, batches),
                                  lib.AFD_EINVAL)
            scale = getattr(a, "lambda") / lam  # times in seconds, stretched to lam
        return _mc_mdc_run(mc, lam, cs, es[0], w, law, customers, warmup, batches, q, seed,
                           scale)


def _mc_mdc_run(mc, lam, cs, es, w, law, customers, warmup, batches, q, seed, scale):
    """The rows of mc_mdc: one afd_queue_sim per c (E[S] = es; w the trace of
    the service law or None; scale > 0: replay with that time scale)."""
    for x in cs:
        if lam * es >= x:
            _unstable_queue("lambda*E[S]", x, lam * es)
    names = ["c", "wq_mc", "wq_se", "p_wait_mc", "p_wait_se", _percentile_name("wq", q, "_mc"),
             _percentile_name("wq", q, "_se"), "rho", "service_mean", "ttft_mean_mc",
             "ttft_mean_se", _percentile_name("ttft", q, "_mc"),
             _percentile_name("ttft", q, "_se")]
    cols = {k: [] for k in names}
    p = ffi.new("afd_queue_sim_params *")
    res = ffi.new("afd_queue_sim_result *")
    for x in cs:
        p.c = int(x)
        setattr(p, "lambda", lam)
        p.service = 0 if w is not None else es
        p.trace = w if w is not None else ffi.NULL
        p.service_fn = mc.afd_quad_service_time if w is not None else ffi.NULL
        p.service_ctx = law
        p.customers = customers
        p.warmup = customers // 10 if warmup is None else warmup
        p.batches = batches
        p.quantile = q
        p.seed = seed
        p.stream = 0
        p.replay = 1 if scale > 0 else 0
        p.time_scale = scale
        st = mc.afd_queue_sim(p, res)
        if st != lib.AFD_OK:
            raise AfdkitError("c = %d: %s" % (x, _text(lib.afd_strerror(st))), st)
        row = (int(x), res.wait_mean, res.wait_mean_se, res.p_wait, res.p_wait_se, res.wait_q,
               res.wait_q_se, res.rho, res.service_mean, res.sojourn_mean, res.sojourn_mean_se,
               res.sojourn_q, res.sojourn_q_se)
        for k, v in zip(names, row):
            cols[k].append(v)
    out = {k: np.array(v, dtype=float) for k, v in cols.items()}
    out["c"] = out["c"].astype(int)
    return out


_SIM_COLUMNS = ("r", "thr_sim", "tpot", "eta_a", "eta_f", "thr_g", "thr_steady",
                "thr_steady_se", "thr_mf", "tau", "barrier", "x", "y", "completed", "steps",
                "tpot_p50", "tpot_p50_se", "tpot_p90", "tpot_p90_se", "tpot_p99", "tpot_p99_se")


_GANTT_COLUMNS = ("step", "microbatch", "stage", "worker", "start", "end")
_STAGES = ("attention", "a2f", "ffn", "f2a")


def sim(B, r, hw, requests=10000, seed=1, microbatches=2, start="stationary",
        ffn_instances=1, warmup=0.2, batches=20, no_barrier=False, no_comm=False,
        async_attention=False, gantt_steps=None, **workload):
    """The decode-pipeline simulator beside the closed forms (afdkit sim;
    Section 5): a dict of arrays r thr_sim tpot eta_a eta_f thr_g thr_steady
    thr_steady_se thr_mf tau barrier x y completed steps tpot_p50 tpot_p50_se
    tpot_p90 tpot_p90_se tpot_p99 tpot_p99_se.  thr_steady carries
    its standard error thr_steady_se (batch means over time).  Each r reads
    Philox streams derived from its own (x, y): the same numbers as the
    command for any list of r and any number of threads.  gantt_steps=N (one
    r only; afdkit sim --gantt FILE --gantt-steps N) adds "gantt": the stage
    start and end times of the first N steps, a dict of arrays step
    microbatch stage worker start end (stage attention, a2f, ffn or f2a;
    worker -1 for the stages not per Attention worker)."""
    mc = _mc()
    B = _integer(B, "B", 1, 2**31)
    rs = _integers(r, "r", 1, 65536)
    y = _integer(ffn_instances, "ffn_instances", 1, 65536)
    if start not in ("fresh", "stationary"):
        raise ValueError("start must be fresh or stationary: %r" % (start,))
    warmup = _float(warmup, "warmup")
    if not 0 <= warmup < 1:
        raise ValueError("warmup must be in [0, 1)")
    h = _load_hw(hw)
    cols = {k: [] for k in _SIM_COLUMNS}
    gantt = None
    if gantt_steps is not None:
        if len(rs) != 1:
            raise ValueError("gantt_steps draws one configuration: give a single r")
        gantt_steps = _integer(gantt_steps, "gantt_steps", 1, 1000000)
        gantt = {k: [] for k in _GANTT_COLUMNS}

        @ffi.callback("afd_gantt_fn")
        def on_stage(ctx, step, mb, stage, worker, start, end):
            for k, v in zip(_GANTT_COLUMNS, (step, mb, _STAGES[stage], worker, start, end)):
                gantt[k].append(v)
    with _Workload(_split(workload), needs_lengths=True, keep_pairs=True) as w:
        s = ffi.new("afd_system *")
        s.hw = h[0]
        s.B, s.theta, s.nu = B, w.stats.theta, w.stats.nu
        params = []
        for x_r in rs:
            p = ffi.new("afd_pipeline_params *")
            p.workload = w
            p.hw = h[0]
            p.x = int(x_r * float(y))
            p.y = y
            p.B = B
            p.microbatches = _integer(microbatches, "microbatches", 1, 4096)
            p.requests = _integer(requests, "requests", 1, 1 << 40)
            p.start = lib.AFD_START_FRESH if start == "fresh" else lib.AFD_START_STATIONARY
            p.warmup = warmup
            p.batches = _integer(batches, "batches", 2, 10000)
            p.no_barrier = 1 if no_barrier else 0
            p.no_comm = 1 if no_comm else 0
            p.async_attention = 1 if async_attention else 0
            p.seed = _integer(seed, "seed", 0, 2**63 - 1)
            p.stream_base = mc.afd_pipeline_stream_base(p.x, p.y)
            if gantt is not None:
                p.gantt = on_stage
                p.gantt_steps = gantt_steps
            st = mc.afd_pipeline_check(p)
            if st == lib.AFD_ELIMIT:
                raise AfdkitError("refused: r = %.0f needs %.3g slots (x m B), more than 2^26"
                                  % (x_r, x_r * y * p.microbatches * B), st)
            if st != lib.AFD_OK:
                raise AfdkitError("r = %.0f: parameters outside the simulator's range (%s)"
                                  % (x_r, _text(lib.afd_strerror(st))), st)
            params.append(p)
        res = ffi.new("afd_pipeline_result *")
        cy = ffi.new("afd_cycle *")
        for x_r, p in zip(rs, params):
            st = mc.afd_pipeline_run(p, res)
            if st != lib.AFD_OK:
                raise AfdkitError("r = %.0f: %s" % (x_r, _text(lib.afd_strerror(st))), st)
            if lib.afd_cycle_topology(s, p.x, p.y, cy) != lib.AFD_OK:
                raise AfdkitError("r = %.0f: the closed form failed" % x_r, lib.AFD_ENUMERIC)
            row = (float(x_r), res.thr_sim, res.tpot, res.eta_a, res.eta_f, cy.thr_g,
                   res.thr_steady, res.thr_steady_se, cy.thr_mf, res.tau, res.barrier, p.x,
                   p.y, res.completed, res.steps, res.tpot_q[0], res.tpot_q_se[0],
                   res.tpot_q[1], res.tpot_q_se[1], res.tpot_q[2], res.tpot_q_se[2])
            for k, v in zip(_SIM_COLUMNS, row):
                cols[k].append(v)
    out = {k: np.array(v, dtype=float) for k, v in cols.items()}
    for k in ("x", "y", "completed", "steps"):
        out[k] = out[k].astype(np.int64)
    if gantt is not None:
        out["gantt"] = {k: np.array(v, dtype=object if k == "stage" else None)
                        for k, v in gantt.items()}
    return out


# The serving commands run the afdkit program (python/afdkit/_cli.py).
from ._cli import Table, goodput, pareto, pd, plan, regime, serve, strategies  # noqa: E402
