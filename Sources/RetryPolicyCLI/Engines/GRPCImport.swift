import Foundation
import RetryPolicy

/// `retry-policy import --from grpc`: a gRPC service config's retry, hedging and throttling
/// settings as policy text, one `policy` per method config.
enum GRPCImport {
  /// Why a config cannot be imported: a lowercase phrase.
  struct Failure: Error, Equatable {
    var message: String
  }

  /// The policy file for the service config in `data`.
  static func policyFile(_ data: Data) -> Result<String, Failure> {
    let root: [String: Any]
    do {
      guard let object = try JSONSerialization.jsonObject(with: data) as? [String: Any] else {
        return .failure(Failure(message: "a service config is a JSON object"))
      }
      root = object
    } catch {
      return .failure(Failure(message: "not valid JSON"))
    }
    guard let configs = root["methodConfig"] as? [[String: Any]], !configs.isEmpty else {
      return .failure(Failure(message: "no 'methodConfig' list in the service config"))
    }
    var budget: String?
    var text = ""
    if let throttling = root["retryThrottling"] as? [String: Any] {
      let ratio = number(throttling["tokenRatio"]) ?? 0
      let tokens = number(throttling["maxTokens"]) ?? 0
      guard ratio > 0, ratio <= 1 else {
        return .failure(
          Failure(message: "'retryThrottling.tokenRatio' must be above 0 and at most 1"))
      }
      budget = "budget \(NumberText.decimal(ratio * 100))%"
      if tokens != Double(GRPCExport.throttlingTokens) {
        text +=
          "# retryThrottling maxTokens \(NumberText.decimal(tokens)) has no counterpart;"
          + " 'budget' keeps its token ratio\n"
      }
    }
    var used: Set<String> = []
    for (index, config) in configs.enumerated() {
      switch policy(config, index: index, budget: budget, used: &used) {
      case .success(let policy): text += policy
      case .failure(let failure): return .failure(failure)
      }
    }
    return .success(text)
  }

  private static func policy(
    _ config: [String: Any], index: Int, budget: String?, used: inout Set<String>
  ) -> Result<String, Failure> {
    let names = config["name"] as? [[String: Any]] ?? []
    let described = names.map { name -> String in
      let service = name["service"] as? String ?? ""
      let method = name["method"] as? String ?? ""
      return service.isEmpty ? "every method" : method.isEmpty ? service : service + "/" + method
    }
    var name = identifier(names.first)
    if used.contains(name) { name += "\(index + 1)" }
    used.insert(name)
    var comments = [
      "# methodConfig \(index + 1): "
        + (described.isEmpty ? "no name" : described.joined(separator: ", "))
    ]
    var clauses: [String] = []
    if let retry = config["retryPolicy"] as? [String: Any] {
      let attempts = Int(number(retry["maxAttempts"]) ?? 0)
      guard attempts >= 2 else { return fail(index, "retryPolicy.maxAttempts must be 2 or more") }
      guard let initial = duration(retry["initialBackoff"]), initial > .zero,
        let maximum = duration(retry["maxBackoff"]), maximum > .zero,
        let factor = number(retry["backoffMultiplier"]), factor > 0
      else {
        return fail(
          index, "retryPolicy needs positive initialBackoff, maxBackoff and backoffMultiplier")
      }
      let codes = statusNames(retry["retryableStatusCodes"])
      guard !codes.isEmpty else {
        return fail(index, "retryPolicy.retryableStatusCodes is empty or unknown")
      }
      if attempts > GRPCExport.attemptCap {
        comments.append(
          "# maxAttempts \(attempts): gRPC clients make \(GRPCExport.attemptCap) at most")
      }
      var rule =
        "retry \(min(attempts, GRPCExport.attemptCap) - 1) on \(codes.joined(separator: ", "))"
      if factor < 1 {
        comments.append("# backoffMultiplier \(NumberText.decimal(factor)) is below 1; kept as 1")
      }
      if factor <= 1 {
        rule += " delay \(initial.policyText) jitter full"
        if maximum < initial { rule += " max \(maximum.policyText)" }
      } else {
        rule += " backoff \(initial.policyText) x\(NumberText.decimal(factor)) jitter full"
        rule += " max \(maximum.policyText)"
      }
      clauses.append(rule)
    } else if let hedging = config["hedgingPolicy"] as? [String: Any] {
      let attempts = Int(number(hedging["maxAttempts"]) ?? 0)
      guard attempts >= 2 else { return fail(index, "hedgingPolicy.maxAttempts must be 2 or more") }
      let delay = duration(hedging["hedgingDelay"]) ?? .zero
      let codes = statusNames(hedging["nonFatalStatusCodes"])
      let extra = min(attempts, GRPCExport.attemptCap) - 1
      if attempts > GRPCExport.attemptCap {
        comments.append(
          "# maxAttempts \(attempts): gRPC clients make \(GRPCExport.attemptCap) at most")
      }
      clauses.append(
        codes.isEmpty ? "retry 0" : "retry \(extra) on \(codes.joined(separator: ", "))")
      clauses.append("hedge \(extra) after \(delay.policyText)")
    } else {
      clauses.append("retry 0")
    }
    if let timeout = duration(config["timeout"]), timeout > .zero {
      clauses.append("within \(timeout.policyText)")
    }
    if let budget { clauses.append(budget) }
    return .success(
      comments.joined(separator: "\n") + "\npolicy \(name) = " + clauses.joined(separator: " ")
        + "\n")
  }

  private static func fail(_ index: Int, _ message: String) -> Result<String, Failure> {
    .failure(Failure(message: "methodConfig \(index + 1): \(message)"))
  }

  /// A policy name from a method config's first name: `helloworld_Greeter_SayHello`.
  static func identifier(_ name: [String: Any]?) -> String {
    let service = name?["service"] as? String ?? ""
    let method = name?["method"] as? String ?? ""
    let joined = [service, method].filter { !$0.isEmpty }.joined(separator: "_")
    var result = String(
      joined.unicodeScalars.map { scalar -> Character in
        scalar.isASCII && (scalar.properties.isAlphabetic || ("0"..."9").contains(scalar))
          ? Character(scalar) : "_"
      })
    if result.isEmpty { return "allMethods" }
    if let first = result.unicodeScalars.first, ("0"..."9").contains(first) {
      result = "_" + result
    }
    // Names that are keywords get a prefix.
    return (try? compile(policy: "retry 1 on \(result)")) == nil ? "method_" + result : result
  }

  /// Status codes given by name or number, as the policy language writes them.
  private static func statusNames(_ value: Any?) -> [String] {
    guard let list = value as? [Any] else { return [] }
    return list.compactMap { item -> String? in
      if let name = item as? String { return GRPCStatus.canonical(name).map(GRPCStatus.camelCase) }
      if let code = number(item) {
        return GRPCStatus.name(ofCode: Int(code)).map(GRPCStatus.camelCase)
      }
      return nil
    }
  }

  private static func number(_ value: Any?) -> Double? {
    guard let number = value as? NSNumber else { return nil }
    let double = number.doubleValue
    return double.isFinite ? double : nil
  }

  /// A protobuf JSON duration, `1.5s`, exactly; nil when malformed or above 10 000 hours.
  static func duration(_ value: Any?) -> Duration? {
    guard let text = value as? String, text.hasSuffix("s") else { return nil }
    let parts = text.dropLast().split(separator: ".", omittingEmptySubsequences: false)
    guard parts.count <= 2, let wholeText = parts.first, !wholeText.isEmpty,
      wholeText.allSatisfy(\.isASCIIDigit), wholeText.count <= 8, let whole = Int64(wholeText)
    else { return nil }
    var nanoseconds: Int64 = 0
    if parts.count == 2 {
      let fraction = parts[1]
      guard !fraction.isEmpty, fraction.count <= 9, fraction.allSatisfy(\.isASCIIDigit),
        let digits = Int64(fraction + String(repeating: "0", count: 9 - fraction.count))
      else { return nil }
      nanoseconds = digits
    }
    let result = Duration.seconds(whole) + Duration.nanoseconds(nanoseconds)
    return result <= .seconds(36_000_000) ? result : nil
  }
}

extension Character {
  fileprivate var isASCIIDigit: Bool { isASCII && isNumber }
}
