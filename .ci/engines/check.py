"""Checks `retry-policy export` against the real engines.

gRPC: for each policy, a local server fails the first k calls with UNAVAILABLE (or another
code); a grpcio client channel configured with the exported service config makes one call; the
attempts the server saw must equal what `explain --json` predicts (capped at gRPC's 5).
A hedging config must be accepted by the channel (grpcio parses hedgingPolicy but does not
hedge yet). Delays (issue 27): the server stamps each attempt's arrival; the gap before each
retry must fall inside the range `explain --json` gives for the imported policy (gRPC waits
its delay times a uniform factor in [0.8, 1.2], `jitter 20%`), for gRPC configs imported with
`import --from grpc` and for policies exported exactly. Envoy: the YAML and JSON exports must agree and parse strictly (unknown fields
rejected) into RouteAction, RetryPolicy, CircuitBreakers and OutlierDetection from xds-protos;
the load-shedding parts (issue 34, contract §14) too: `limit N queue M` as CircuitBreakers
thresholds, and each entry of `http_filters` as an HttpFilter whose typed_config (an Any, by
its @type) is AdaptiveConcurrency, AdmissionControl or LocalRateLimit, with their values checked
against the clauses (`rate N/s` and `rate N/m` exported from policy text, and
.ci/engines/local-ratelimit.json, the export of a rate set through the library, which a Swift
test keeps equal to the export's bytes). Every sample
exports to both engines; the script prints which exports are exact and which warn.
"""

import glob
import json
import subprocess
import sys
import threading
import time
from concurrent import futures

import grpc
import yaml
from google.protobuf import json_format
from envoy.config.cluster.v3 import circuit_breaker_pb2
from envoy.config.cluster.v3 import outlier_detection_pb2
from envoy.config.route.v3 import route_components_pb2
from envoy.extensions.filters.http.adaptive_concurrency.v3 import adaptive_concurrency_pb2
from envoy.extensions.filters.http.admission_control.v3 import admission_control_pb2
from envoy.extensions.filters.http.local_ratelimit.v3 import local_rate_limit_pb2
from envoy.extensions.filters.network.http_connection_manager.v3 import (
    http_connection_manager_pb2)

TOOL = sys.argv[1]
SERVICE, METHOD = "test.Echo", "Call"
GRPC_CAP = 5


def tool(*args):
    done = subprocess.run([TOOL, *args], capture_output=True, text=True)
    return done.returncode, done.stdout, done.stderr


class Server:
    """A server whose handler fails the first `failures` calls with `code`."""

    def __init__(self):
        self.lock = threading.Lock()
        self.calls = 0
        self.arrivals = []
        self.failures = 0
        self.code = grpc.StatusCode.UNAVAILABLE
        handler = grpc.method_handlers_generic_handler(
            SERVICE, {METHOD: grpc.unary_unary_rpc_method_handler(self.handle)})
        self.server = grpc.server(futures.ThreadPoolExecutor(max_workers=8))
        self.server.add_generic_rpc_handlers((handler,))
        self.port = self.server.add_insecure_port("127.0.0.1:0")
        self.server.start()

    def reset(self, failures, code):
        with self.lock:
            self.calls, self.failures, self.code = 0, failures, code
            self.arrivals = []

    def handle(self, request, context):
        with self.lock:
            self.calls += 1
            self.arrivals.append(time.monotonic())
            failing = self.calls <= self.failures
        if failing:
            context.abort(self.code, "failing on purpose")
        return request


def call(server, config, hedging=False):
    options = [("grpc.service_config", config), ("grpc.enable_retries", 1)]
    if hedging:
        # What makes grpcio read perAttemptRecvTimeout (and a retryPolicy without codes).
        options.append(("grpc.experimental.enable_hedging", 1))
    with grpc.insecure_channel(f"127.0.0.1:{server.port}", options=options) as channel:
        stub = channel.unary_unary(f"/{SERVICE}/{METHOD}")
        try:
            stub(b"ping", timeout=20)
            return "OK"
        except grpc.RpcError as error:
            return error.code().name


# (policy, calls the server fails, the code it fails with, whether the code is retried)
GRPC_CASES = [
    ("retry 2 on unavailable backoff 10ms jitter 20% max 50ms", 1, "UNAVAILABLE", True),
    ("retry 2 on unavailable backoff 10ms jitter 20% max 50ms", 10, "UNAVAILABLE", True),
    ("retry 4 on unavailable delay 10ms jitter 20%", 10, "UNAVAILABLE", True),
    ("retry 3 on UNAVAILABLE, resourceExhausted backoff 5ms x1.5 jitter 20%", 2,
     "RESOURCE_EXHAUSTED", True),
    ("retry 7 on unavailable backoff 5ms x1.5 jitter 20%", 10, "UNAVAILABLE", True),
    ("retry 3 on resourceExhausted backoff 5ms jitter 20%", 10, "UNAVAILABLE", False),
    ("retry 0 on unavailable", 10, "UNAVAILABLE", True),
    ("retry 3 on unavailable backoff 5ms jitter 20% within 10s budget 50%", 2, "UNAVAILABLE",
     True),
]


def predicted_attempts(policy, failures, retried):
    status, out, _ = tool("explain", "--json", policy)
    assert status == 0, policy
    explained = json.loads(out)
    retries = explained["rules"][0]["behavior"]["maxCount"]
    attempts = min(retries + 1, GRPC_CAP)
    return min(failures + 1, attempts) if retried else 1


def check_grpc(server):
    ok = True
    print(f"{'policy':<72} {'fails':>5} {'predicted':>9} {'seen':>4}")
    for policy, failures, code, retried in GRPC_CASES:
        status, config, _ = tool(
            "export", "--to", "grpc", "--service", SERVICE, "--method", METHOD, policy)
        assert status == 0, policy
        server.reset(failures, grpc.StatusCode[code])
        call(server, config)
        predicted = predicted_attempts(policy, failures, retried)
        mark = "" if predicted == server.calls else "  MISMATCH"
        ok &= predicted == server.calls
        print(f"{policy:<72} {failures:>5} {predicted:>9} {server.calls:>4}{mark}")
    # Hedging: the channel takes the config (grpcio parses hedgingPolicy, does not run it yet).
    policy = "retry 2 on unavailable hedge 2 after 50ms"
    status, config, _ = tool("export", "--to", "grpc", policy)
    assert status == 0 and "hedgingPolicy" in config
    server.reset(0, grpc.StatusCode.UNAVAILABLE)
    result = call(server, config)
    print(f"hedging config {policy!r}: accepted by the channel, call {result}")
    ok &= result == "OK"
    # A config the channel rejects fails the call: proof that configs are really parsed.
    server.reset(0, grpc.StatusCode.UNAVAILABLE)
    broken = call(server, '{"methodConfig": [{"retryPolicy": {"maxAttempts": "x"}}]}')
    print(f"a malformed service config: call {broken} (not OK: the channel parses configs)")
    ok &= broken != "OK"
    return ok


# gRPC configs whose delays grpcio's are measured against the imported policy's ranges:
# (label, retryPolicy). Each is imported with `import --from grpc`; `explain --json` of the
# imported policy gives each retry's range.
DELAY_CONFIGS = [
    ("A6's example: x2 from 100ms",
     {"maxAttempts": 4, "initialBackoff": "0.1s", "maxBackoff": "1s", "backoffMultiplier": 2}),
    ("a multiplier below 1: delays 400ms, 200ms, 100ms",
     {"maxAttempts": 4, "initialBackoff": "0.4s", "maxBackoff": "1s", "backoffMultiplier": 0.5}),
    ("a cap reached: delays 100ms, 200ms, 240ms, 240ms",
     {"maxAttempts": 5, "initialBackoff": "0.1s", "maxBackoff": "0.24s",
      "backoffMultiplier": 2}),
]
# Policies exported exactly (no warning) whose delays grpcio's are measured against.
DELAY_POLICIES = [
    "retry 3 on unavailable backoff 100ms x1.5 jitter 20% max 1s",
    "retry 2 on unavailable delay 200ms jitter 20%",
]
CALLS_PER_CONFIG = 4
# The server sees an attempt a little after the client's timer fires (threads on a shared
# machine): this much is allowed above the range's end.
SLACK = 0.04


def measure(server, config, calls):
    """The gaps between attempts the server saw, over `calls` calls that all fail."""
    gaps = []
    for _ in range(calls):
        server.reset(100, grpc.StatusCode.UNAVAILABLE)
        call(server, config)
        arrivals = list(server.arrivals)
        gaps.append([b - a for a, b in zip(arrivals, arrivals[1:])])
    return gaps


def check_delays_against(server, label, config, ranges, calls=CALLS_PER_CONFIG):
    ok = True
    factors = []
    for gaps in measure(server, config, calls):
        if len(gaps) != len(ranges):
            print(f"  {label}: {len(gaps)} retries seen, {len(ranges)} predicted  MISMATCH")
            ok = False
            continue
        for gap, (low, delay, high) in zip(gaps, ranges):
            factors.append(gap / delay)
            if not (low - 0.002 <= gap <= high + SLACK):
                print(f"  {label}: waited {gap:.4f}s, predicted {low:.4f}-{high:.4f}s  MISMATCH")
                ok = False
    if not factors:
        print(f"{label}: no retry seen  MISMATCH")
        return False
    print(f"{label:<58} factor seen {min(factors):.3f}-{max(factors):.3f}"
          f" ({len(factors)} delays){'' if ok else '  MISMATCH'}")
    return ok


def explained_ranges(args):
    status, out, err = tool("explain", "--json", *args)
    assert status == 0, err
    rows = json.loads(out)["rules"][0]["schedule"]
    return [(row["min"], row["delay"], row["max"]) for row in rows]


def check_delays(server):
    ok = True
    for label, policy in DELAY_CONFIGS:
        policy = dict(policy, retryableStatusCodes=["UNAVAILABLE"])
        config = json.dumps({"methodConfig": [
            {"name": [{"service": SERVICE, "method": METHOD}], "retryPolicy": policy}]})
        done = subprocess.run([TOOL, "import", "--from", "grpc", "-"], input=config,
                              capture_output=True, text=True)
        assert done.returncode == 0, done.stderr
        path = ".build/engines-imported.retry"
        with open(path, "w", encoding="utf-8") as file:
            file.write(done.stdout)
        name = policy_names(path)[0]
        ranges = explained_ranges(["--file", path, "--policy", name])
        ok &= check_delays_against(server, "import: " + label, config, ranges)
    # A6 writes ".1s"; gRPC's C core (grpcio) refuses that form, which `import` accepts (A6,
    # grpc-go). Shown here so that Grammar/Engines.md's note stays true.
    leading_dot = json.dumps({"methodConfig": [{"name": [{"service": SERVICE}], "retryPolicy": {
        "maxAttempts": 2, "initialBackoff": ".05s", "maxBackoff": "1s", "backoffMultiplier": 2,
        "retryableStatusCodes": ["UNAVAILABLE"]}}]})
    server.reset(0, grpc.StatusCode.UNAVAILABLE)
    print(f"a config with initialBackoff \".05s\": grpcio's call {call(server, leading_dot)}")
    for policy in DELAY_POLICIES:
        status, config, err = tool(
            "export", "--to", "grpc", "--strict", "--service", SERVICE, "--method", METHOD,
            policy)
        assert status == 0, err
        ok &= check_delays_against(server, "export: " + policy, config, explained_ranges([policy]))
    return ok


# The HTTP filters of contract §14: name -> the message its typed_config must be.
HTTP_FILTERS = {
    "envoy.filters.http.adaptive_concurrency": adaptive_concurrency_pb2.AdaptiveConcurrency,
    "envoy.filters.http.admission_control": admission_control_pb2.AdmissionControl,
    "envoy.filters.http.local_ratelimit": local_rate_limit_pb2.LocalRateLimit,
}


def parse_envoy(document, label):
    """Parses every part of an Envoy export strictly; returns the parsed messages by name."""
    parsed = {}
    unknown = set(document) - {"route", "cluster", "http_filters"}
    assert not unknown, f"{label}: unknown top-level fields {unknown}"
    route = document.get("route", {})
    json_format.ParseDict(route, route_components_pb2.RouteAction())
    if "retry_policy" in route:
        json_format.ParseDict(route["retry_policy"], route_components_pb2.RetryPolicy())
    cluster = document.get("cluster", {})
    if "circuit_breakers" in cluster:
        parsed["circuit_breakers"] = json_format.ParseDict(
            cluster["circuit_breakers"], circuit_breaker_pb2.CircuitBreakers())
    if "outlier_detection" in cluster:
        # The breaker (issue 25): failure-percentage ejection, parsed strictly.
        json_format.ParseDict(
            cluster["outlier_detection"], outlier_detection_pb2.OutlierDetection())
    unknown = set(cluster) - {"circuit_breakers", "outlier_detection"}
    assert not unknown, f"{label}: unknown cluster fields {unknown}"
    for entry in document.get("http_filters", []):
        # The whole entry as HCM's HttpFilter: typed_config is an Any, resolved by its @type.
        json_format.ParseDict(entry, http_connection_manager_pb2.HttpFilter())
        name = entry["name"]
        assert name in HTTP_FILTERS, f"{label}: unexpected filter {name}"
        message = HTTP_FILTERS[name]
        config = dict(entry["typed_config"])
        expected = "type.googleapis.com/" + message.DESCRIPTOR.full_name
        assert config.pop("@type") == expected, f"{label}: {name} has the wrong @type"
        assert name not in parsed, f"{label}: {name} twice"
        parsed[name] = json_format.ParseDict(config, message())
    return parsed


def check_envoy(text, label):
    status_yaml, out_yaml, _ = tool("export", "--to", "envoy", *text)
    status_json, out_json, _ = tool("export", "--to", "envoy", "--json", *text)
    assert status_yaml == 0 and status_json == 0, label
    document = json.loads(out_json)
    assert yaml.safe_load(out_yaml) == document, f"{label}: YAML and JSON differ"
    return parse_envoy(document, label)


def explained(policy):
    status, out, err = tool("explain", "--json", policy)
    assert status == 0, err
    return json.loads(out)


def check_shedding():
    """Each shedding clause's Envoy part, parsed strictly, holds the values §14 gives it."""
    ok = True

    def expect(label, what, seen, wanted):
        nonlocal ok
        good = seen == wanted
        ok &= good
        print(f"  {label}: {what} {seen!r}" + ("" if good else f", wanted {wanted!r}  MISMATCH"))

    for policy in ["retry 3 limit 10 queue 5", "retry 3 on serverError limit 7",
                   "retry 3 on unavailable budget 20% limit 1000000 queue 1000000 breaker 50%"]:
        limit = explained(policy)["limit"]
        thresholds = check_envoy([policy], policy)["circuit_breakers"].thresholds
        expect(policy, "thresholds", len(thresholds), 1)
        expect(policy, "max_requests", thresholds[0].max_requests.value, limit["max"])
        expect(policy, "max_pending_requests", thresholds[0].max_pending_requests.value,
               limit["queue"])
        if "budget" in policy:
            expect(policy, "budget_percent", thresholds[0].retry_budget.budget_percent.value, 20)
    for policy in ["retry 3 on serverError limit adaptive min 2 max 50 throttle x2 over 1m",
                   "retry 3 on serverError limit adaptive throttle x1.5",
                   "retry 2 on unavailable limit adaptive max 7 throttle x10 over 10s"]:
        facts = explained(policy)
        parsed = check_envoy([policy], policy)
        gradient = parsed["envoy.filters.http.adaptive_concurrency"].gradient_controller_config
        expect(policy, "max_concurrency_limit",
               gradient.concurrency_limit_params.max_concurrency_limit.value,
               facts["limit"]["adaptive"]["max"])
        expect(policy, "sample_aggregate_percentile", gradient.sample_aggregate_percentile.value,
               90)
        admission = parsed["envoy.filters.http.admission_control"]
        throttle = facts["throttle"]
        expect(policy, "sampling_window", admission.sampling_window.ToTimedelta().total_seconds(),
               throttle["window"])
        # Envoy refuses with ((requests - accepts / threshold) / (requests + 1))^(1/aggression):
        # the SRE formula when threshold is 1/K and aggression 1.
        expect(policy, "sr_threshold %", round(admission.sr_threshold.default_value.value, 4),
               round(100 / throttle["factor"], 4))
        expect(policy, "aggression", admission.aggression.default_value, 1)
        expect(policy, "max_rejection_probability %",
               admission.max_rejection_probability.default_value.value, 100)
    # `rate N/s`, `rate N/m`: the token bucket holds `burst` and gains perSecond × interval
    # each fill_interval (1s or 60s).
    for policy in ["retry 3 on serverError rate 50/s burst 80", "retry 2 rate 30/m",
                   "retry 3 limit 4 queue 2 throttle x2 rate 1000000/s burst 1000000 within 5s"]:
        rate = explained(policy)["rate"]
        bucket = check_envoy([policy], policy)["envoy.filters.http.local_ratelimit"].token_bucket
        interval = bucket.fill_interval.ToTimedelta().total_seconds()
        expect(policy, "max_tokens", bucket.max_tokens, rate["burst"])
        expect(policy, "tokens_per_fill", bucket.tokens_per_fill.value,
               round(rate["perSecond"] * interval))
        expect(policy, "fill_interval", interval, 60.0 if "/m" in policy else 1.0)
    # `rate` set through the library: the export a Swift test keeps equal to this file's bytes.
    with open(".ci/engines/local-ratelimit.json", encoding="utf-8") as file:
        label = "rate 50/s burst 80 (through the library)"
        bucket = parse_envoy(json.load(file), label)[
            "envoy.filters.http.local_ratelimit"].token_bucket
        expect(label, "max_tokens", bucket.max_tokens, 80)
        expect(label, "tokens_per_fill", bucket.tokens_per_fill.value, 50)
        expect(label, "fill_interval", bucket.fill_interval.ToTimedelta().total_seconds(), 1.0)
    # A filter config with a field the message lacks is refused: proof the configs are parsed.
    try:
        parse_envoy({"http_filters": [{"name": "envoy.filters.http.admission_control",
                                       "typed_config": {"@type": "type.googleapis.com/envoy."
                                                        "extensions.filters.http.admission_"
                                                        "control.v3.AdmissionControl",
                                                        "sr_treshold": {}}}]}, "misspelt")
        print("  a misspelt AdmissionControl field was accepted  MISMATCH")
        ok = False
    except json_format.ParseError:
        print("  a misspelt AdmissionControl field: refused")
    return ok


def check_rejects_unknown():
    try:
        json_format.ParseDict({"retry_on": "5xx", "retry_backoff": {}},
                              route_components_pb2.RetryPolicy())
    except json_format.ParseError:
        return True
    return False


def policy_names(path):
    names = []
    for line in open(path, encoding="utf-8"):
        words = line.split()
        if len(words) > 1 and words[0] == "policy":
            names.append(words[1])
    return names


def check_samples(server):
    ok = True
    for path in sorted(glob.glob("Samples/*.retry")):
        for name in policy_names(path):
            row = []
            for engine in ("grpc", "envoy"):
                status, out, err = tool("export", "--to", engine, "--file", path, "--policy", name)
                if status != 0:
                    ok = False
                    row.append(f"{engine}: FAILED {err.strip()[:80]}")
                    continue
                warnings = err.count(": warning: ")
                row.append(f"{engine}: " + ("exact" if warnings == 0 else f"{warnings} warnings"))
                if engine == "grpc":
                    server.reset(0, grpc.StatusCode.UNAVAILABLE)
                    # Accepted: a config the channel rejects fails every call with
                    # INVALID_ARGUMENT. (With grpcio 1.85.1 here, a method 'timeout' under 2s
                    # ends the call at once with DEADLINE_EXCEEDED; the config is still taken.)
                    result = call(server, out, hedging="enable_hedging" in err)
                    if warnings == 0 and "retryPolicy" in out:
                        # An exact export: grpcio's delays inside explain's ranges.
                        ranges = explained_ranges(["--file", path, "--policy", name])
                        ok &= check_delays_against(
                            server, f"  delays of {name}", out, ranges, calls=3)
                    if result != "OK":
                        row.append(f"channel call {result}")
                    ok &= result != "INVALID_ARGUMENT"
                else:
                    check_envoy(["--file", path, "--policy", name], f"{path} {name}")
            print(f"{path}:{name}: " + "; ".join(row))
    return ok


def main():
    server = Server()
    try:
        print("== gRPC: attempts predicted by 'explain --json' vs seen by the server")
        ok = check_grpc(server)
        print("== gRPC: grpcio's delays vs 'explain --json' ranges of the imported policy")
        ok &= check_delays(server)
        print("== Envoy: exports parsed strictly into RouteAction / RetryPolicy / CircuitBreakers"
              " / OutlierDetection")
        assert check_rejects_unknown(), "ParseDict accepted an unknown field"
        for policy in [
            "retry 3 on unavailable backoff 100ms x2 jitter 20% max 1s timeout 2s within 10s"
            " budget 20%",
            "retry 2 on unavailable, timeout hedge 2 after 50ms",
            "retry 5 on serverError backoff 1s x1.5 jitter 10% max 30s honoring retry-after",
            "retry forever backoff 1s within 1m",
            "retry 3 on unavailable backoff 100ms breaker 50% over 10s min 5 for 2s",
            "retry 3 on unavailable backoff 100ms budget 10% breaker 25%",
        ]:
            check_envoy([policy], policy)
            print(f"parsed: {policy}")
        print("== Envoy: shedding parts parsed strictly into CircuitBreakers / AdaptiveConcurrency"
              " / AdmissionControl / LocalRateLimit, values against 'explain --json'")
        ok &= check_shedding()
        print("== every sample, both engines")
        ok &= check_samples(server)
    finally:
        server.server.stop(None)
    print("engines-e2e: " + ("passed" if ok else "FAILED"))
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
