"""pd, goodput, serve, strategies, regime and pareto from Python, held to
values derived by hand from the latency laws (read back through the
library, not through the command) and to the command's unit rules."""

import os

import numpy as np
import pytest

import afdkit

HERE = os.path.dirname(os.path.abspath(__file__))
SRCDIR = os.environ.get("AFDKIT_SRCDIR") or os.path.dirname(os.path.dirname(HERE))
CONV = os.path.join(SRCDIR, "notebooks-data", "AzureLLMInferenceTrace_conv.csv")
HW70 = os.path.join(SRCDIR, "notebooks-data", "llama-3.1-70b-h100-tp4.hw")
L70 = dict(model="llama-3.1-70b", device="h100-sxm", tp=4)
L8 = dict(model="llama-3.1-8b", device="h100-sxm")


def test_pd_decode_slots_follow_littles_law():
    # n sequences decode at a step S(n) = beta + (gamma + alpha theta) n
    # (ms), each for E[D] steps: n = lambda E[D] S(n), so
    # n = lambda E[D] beta / (1 - lambda E[D] (gamma + alpha theta)).
    sizes, curve, replay = afdkit.pd(trace=CONV, rate="5/s", ttft_slo="2s", tpot_slo="50ms",
                                     **L70)
    h = afdkit.hw(HW70)
    th = afdkit.theta(trace=CONV)
    lam = 5 / 1000.0  # per ms
    k = lam * th["mean_d"]
    n = k * h["decode_beta"] / (1 - k * (h["decode_gamma"] + h["decode_alpha"] * th["theta"]))
    assert sizes.unit == "ms"
    assert sizes["lambda"][0] == pytest.approx(lam, rel=1e-15)
    assert sizes["decode_slots"][0] == pytest.approx(n, rel=1e-9)
    # one prefill and one decode instance of tp 4
    assert sizes["gpus"][0] == 4 * (sizes["prefill"][0] + sizes["decode_instances"][0])
    assert list(curve["c"]) == list(range(1, len(curve["c"]) + 1))
    assert "prefill_replay" in replay


def _refused(function, readings, **options):
    """function(**options) is a usage error whose message names both
    readings of a bare number."""
    with pytest.raises(afdkit.AfdkitError) as e:
        function(**options)
    assert e.value.status == "EUSAGE"
    assert all(r in str(e.value) for r in readings), str(e.value)


def test_bare_rate_refused_naming_both_readings():
    _refused(afdkit.pd, ("5/s", "5/ms"), hw=HW70, trace=CONV, rate=5, ttft_slo="2s",
             tpot_slo="50ms")
    _refused(afdkit.strategies, ("500s", "500ms"), devices=2, tp=1, lengths=(1000, 100),
             ttft_slo=500, tpot_slo="50ms", method="closed", **L8)


def test_serve_at_low_load_ttft_is_the_prefill_time():
    # at 0.05 requests/s most requests find the instance idle: the median
    # TTFT is one prefill of 1024 tokens.  With --model/--device serve times
    # its steps from the estimator's prefill table, exact at its grid points
    # (prompt tokens 1, sqrt 2, 2, ... so 2^10 is one); the estimator is
    # computed here through the library, not through the command.
    prefill = afdkit.estimate("llama-3.1-8b", "h100-sxm", phase="prefill", batch=1,
                              seq=1024)["time_ms"][-1]
    r = afdkit.serve("colloc", lengths=(1024, 100), rate="0.05/s", requests=2000,
                     ttft_slo="500ms", tpot_slo="50ms", **L8)
    assert r["completed"][0] == 2000
    assert r["ttft_p50"][0] == pytest.approx(prefill, rel=1e-9)


def test_goodput_of_the_pools_pd_sized_is_pds_capacity():
    sizes = afdkit.pd(trace=CONV, rate="5/s", ttft_slo="2s", tpot_slo="50ms", **L70)[0]
    g = afdkit.goodput(trace=CONV, prefill=int(sizes["prefill"][0]),
                       decode=int(sizes["decode_instances"][0]), ttft_slo="2s",
                       tpot_slo="50ms", **L70)
    assert g["goodput"][0] == pytest.approx(sizes["capacity"][0], rel=1e-9)


def test_strategies_on_two_devices_and_their_price():
    # on 2 devices of tp 1: 1m, 2m and 1p1d; h100-sxm at 2.99 dollars/h
    t = afdkit.strategies(devices=2, tp=1, lengths=(1000, 100), ttft_slo="500ms",
                          tpot_slo="50ms", method="closed", **L8)
    assert sorted(t["strategy"]) == ["1m", "1p1d", "2m"]
    per_dollar = t["goodput_per_device"] * 3600 / 2.99
    np.testing.assert_allclose(t["goodput_per_dollar"], per_dollar, rtol=1e-9)


def test_regime_rows_are_the_slos_asked_for():
    t = afdkit.regime(instances=2, lengths=(1000, 100), ttft_slo=("200ms", "1s"),
                      tpot_slo=("20ms", "50ms"), method="closed", **L8)
    assert t.unit.startswith("ms")
    assert list(t["ttft_slo"]) == [200, 200, 1000, 1000]
    assert list(t["tpot_slo"]) == [20, 50, 20, 50]
    assert set(t["best"]) <= {"agg", "disagg", "hybrid", "none"}


def test_pareto_prices_are_devices_times_the_hourly_price():
    t = afdkit.pareto(device="h100-sxm,a100-80g", devices=3, tp=1, lengths=(1000, 100),
                      ttft_slo="500ms", tpot_slo="50ms", model="llama-3.1-8b")
    hourly = {"h100-sxm": 2.99, "a100-80g": 1.79}
    want = [hourly[d] * n for d, n in zip(t["device"], t["devices"])]
    np.testing.assert_allclose(t["price_per_hour"], want, rtol=1e-12)


# Llama-3.1-8B on one H100 SXM at 1000,100: the decode cap the KV memory
# gives, worked out from the model's weight and KV-cache bytes (read through
# the library): floor((0.9 x 80 GB - weights) / KV bytes per token) tokens,
# floor of that over 1100 tokens a request.  At a 50 ms TPOT SLO the step of
# that many sequences is within the SLO, so memory binds.
def _l8_cap():
    m = afdkit.model("llama-3.1-8b")
    tokens = np.floor((0.9 * 80e9 - m["weight_bytes"]) / m["kv_bytes_per_token"])
    return int(tokens // 1100)


def test_plan_rows_decode_cap_and_per_gpu_columns():
    t = afdkit.plan(gpus=2, tp=1, lengths=(1000, 100), ttft_slo="500ms", tpot_slo="50ms",
                    method="closed", **L8)
    assert sorted(t["arch"]) == ["chunked", "colloc", "disagg", "taichi"]
    assert all(g <= 2 for g in t["gpus"])
    assert _l8_cap() == 387
    assert list(t["decode_bmax"]) == [387] * 4
    # tokens/s per GPU: goodput x 100 output tokens / gpus; dollars per
    # million tokens: gpus x 2.99 $/h / (3600 x tokens/s) x 1e6
    tps = t["goodput"] * 100 / t["gpus"]
    np.testing.assert_allclose(t["tokens_per_s_per_gpu"], tps, rtol=1e-9)
    np.testing.assert_allclose(t["usd_per_mtok"], 2.99 / (3600 * tps) * 1e6, rtol=1e-9)
    # best first
    assert list(t["goodput"]) == sorted(t["goodput"], reverse=True)


def test_plan_rate_is_plans_rate_and_a_bare_one_is_refused():
    t = afdkit.plan(gpus=1, tp=1, lengths=(1000, 100), ttft_slo="500ms", tpot_slo="50ms",
                    method="closed", rate="5/s", **L8)
    assert "attainment" in t and "rate_tpot_p90" in t
    one = dict(gpus=1, tp=1, lengths=(1000, 100), tpot_slo="50ms", method="closed", **L8)
    _refused(afdkit.plan, ("5/s", "5/ms"), ttft_slo="500ms", rate=5, **one)
    _refused(afdkit.plan, ("500s", "500ms"), ttft_slo=500, **one)


def test_plan_emit_gives_the_serve_command_of_each_row():
    lines = afdkit.plan(gpus=2, tp=1, lengths=(1000, 100), ttft_slo="500ms",
                        tpot_slo="50ms", method="closed", emit="afdkit", **L8)
    assert len(lines) == 4
    for line in lines:
        assert line.startswith("afdkit serve --arch ")
        assert " --decode-bmax 387 " in line and " --lengths 1000,100 " in line
