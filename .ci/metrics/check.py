"""Reads the OpenMetrics text of Examples/Metrics' fixed scenario with prometheus_client's
OpenMetrics parser (which rejects what the format does not allow) and checks every family's
values. Usage: python check.py FILE"""
import math
import sys

from prometheus_client.openmetrics.parser import text_string_to_metric_families

text = open(sys.argv[1], encoding="utf-8").read()
families = {family.name: family for family in text_string_to_metric_families(text)}
expected_types = {
    "retry_policy_attempts": "counter",
    "retry_policy_runs": "counter",
    "retry_policy_refusals": "counter",
    "retry_policy_attempt_duration_seconds": "histogram",
    "retry_policy_run_duration_seconds": "histogram",
    "retry_policy_in_flight_attempts": "gauge",
    "retry_policy_breaker_state": "gauge",
}
failures = []
for name, kind in expected_types.items():
    if name not in families:
        failures.append(f"missing family {name}")
    elif families[name].type != kind:
        failures.append(f"{name} is a {families[name].type}, not a {kind}")
for name in ("retry_policy_attempt_duration_seconds", "retry_policy_run_duration_seconds"):
    if name in families and families[name].unit != "seconds":
        failures.append(f"{name} has unit {families[name].unit!r}")

samples = {}
for family in families.values():
    for sample in family.samples:
        samples[(sample.name, tuple(sorted(sample.labels.items())))] = sample.value


def check(name, value, **labels):
    key = (name, tuple(sorted(labels.items())))
    got = samples.get(key)
    if got is None or not math.isclose(got, value, rel_tol=0, abs_tol=1e-9):
        failures.append(f"{name}{labels}: expected {value}, got {got}")


REPORTS = 'reports "daily"\\eu'
for policy, success, failure, refused in [
    ("payments", 2, 2, 0), ("orders", 0, 12, 1), ("search", 0, 2, 1), ("anonymous", 0, 1, 0),
    (REPORTS, 0, 0, 0),
]:
    check("retry_policy_attempts_total", success, policy=policy, outcome="success")
    check("retry_policy_attempts_total", failure, policy=policy, outcome="failure")
    check("retry_policy_attempts_total", refused, policy=policy, outcome="refused")
check("retry_policy_runs_total", 2, policy="payments", outcome="success", reason="")
check("retry_policy_runs_total", 1, policy="orders", outcome="failure", reason="retriesExhausted")
check("retry_policy_runs_total", 1, policy="orders", outcome="failure", reason="budgetExhausted")
check("retry_policy_runs_total", 1, policy="search", outcome="failure", reason="retriesExhausted")
check("retry_policy_runs_total", 1, policy="search", outcome="failure", reason="circuitOpen")
check("retry_policy_runs_total", 1, policy="anonymous", outcome="failure", reason="errorNotMatched")
for by in ("breaker", "budget", "limit", "throttle", "rate"):
    check("retry_policy_refusals_total", 1 if by == "budget" else 0, policy="orders", by=by)
    check("retry_policy_refusals_total", 1 if by == "breaker" else 0, policy="search", by=by)
# payments: attempts of 20, 50, 50 and 50 ms; runs of 20 ms and 450 ms.
attempts = "retry_policy_attempt_duration_seconds"
for le, count in [("0.01", 0), ("0.025", 1), ("0.05", 4), ("+Inf", 4)]:
    check(attempts + "_bucket", count, policy="payments", le=le)
check(attempts + "_count", 4, policy="payments")
check(attempts + "_sum", 0.17, policy="payments")
check(attempts + "_sum", 90.0, policy="anonymous")
check(attempts + "_bucket", 0, policy="anonymous", le="60.0")
check(attempts + "_bucket", 1, policy="anonymous", le="+Inf")
runs = "retry_policy_run_duration_seconds"
for le, count in [("0.025", 1), ("0.25", 1), ("0.5", 2), ("+Inf", 2)]:
    check(runs + "_bucket", count, policy="payments", le=le)
check(runs + "_count", 2, policy="payments")
check(runs + "_sum", 0.47, policy="payments")
check(runs + "_sum", 4.0, policy="search")
check("retry_policy_in_flight_attempts", 1, policy=REPORTS)
check("retry_policy_in_flight_attempts", 0, policy="payments")
for state in ("closed", "open", "half_open"):
    check("retry_policy_breaker_state", 1 if state == "half_open" else 0, policy="search", state=state)
if any(name == "retry_policy_breaker_state" and dict(labels).get("policy") == "payments"
       for name, labels in samples):
    failures.append("a breaker state for payments, which has no breaker")

if failures:
    print("metrics-e2e: prometheus_client found:", *failures, sep="\n  ", file=sys.stderr)
    sys.exit(1)
print(f"metrics-e2e: prometheus_client parsed {len(families)} families, {len(samples)} samples, as expected")
