import RetryPolicy

/// Reads the parts of a service config, collecting errors and warnings with their paths.
struct ConfigReader {
  var errors: [GRPCImport.Problem] = []
  var warnings: [GRPCImport.Problem] = []

  mutating func fail(_ path: String, _ message: String) {
    errors.append(GRPCImport.Problem(path: path, message: message))
  }

  mutating func warn(_ path: String, _ message: String) {
    warnings.append(GRPCImport.Problem(path: path, message: message))
  }

  /// The members of an object; a key given twice is an error (protobuf's JSON refuses it).
  mutating func object(_ value: JSONValue, at path: String) -> [JSONMember]? {
    guard case .object(let members) = value else {
      fail(path, path.isEmpty ? "a service config is a JSON object" : "is not an object")
      return nil
    }
    var seen: Set<String> = []
    for member in members where !seen.insert(member.key).inserted {
      fail(join(path, member.key), "appears twice in its object")
    }
    return members
  }

  mutating func array(_ value: JSONValue, at path: String) -> [JSONValue]? {
    guard case .array(let elements) = value else {
      fail(path, "is not an array")
      return nil
    }
    return elements
  }

  func member(_ key: String, of members: [JSONMember]) -> JSONValue? {
    members.first { $0.key == key }?.value
  }

  func join(_ path: String, _ key: String) -> String {
    path.isEmpty ? key : path + "." + key
  }

  /// A JSON number, or a string holding one (protobuf's JSON takes both), as its text.
  mutating func numberText(_ value: JSONValue, at path: String) -> String? {
    switch value {
    case .number(let text): return text
    case .string(let text):
      if case .success(.number(let number)) = GRPCConfigJSON.parse(Array(text.utf8)) {
        return number
      }
      fail(path, "failed to parse number")
      return nil
    default:
      fail(path, "is not a number")
      return nil
    }
  }

  /// A whole number in `range`, read from its text exactly: `2.9` and `1e30` are refused.
  mutating func integer(
    _ value: JSONValue, at path: String, in range: ClosedRange<Int>, field: String
  ) -> Int? {
    guard let text = numberText(value, at: path) else { return nil }
    guard let decimal = ExactDecimal(text), decimal.isIntegral else {
      fail(path, "\(text) is not a whole number; gRPC's \(field) is an integer")
      return nil
    }
    guard let whole = decimal.integerValue, range.contains(whole) else {
      fail(
        path,
        range.upperBound == Int(Int32.max)
          ? "\(text) is beyond an int32, which gRPC's \(field) is"
          : "\(text) is out of range (\(range.lowerBound) to \(range.upperBound))")
      return nil
    }
    return whole
  }

  /// A finite number.
  mutating func double(_ value: JSONValue, at path: String) -> Double? {
    guard let text = numberText(value, at: path) else { return nil }
    guard let number = Double(text), number.isFinite else {
      fail(path, "\(text) is out of range")
      return nil
    }
    return number
  }

  /// A duration in protobuf's JSON form; with `positive`, above 0.
  mutating func duration(_ value: JSONValue, at path: String, positive: Bool) -> Duration? {
    guard case .string(let text) = value else {
      fail(path, "is not a string")
      return nil
    }
    switch ProtobufDuration.parse(text) {
    case .failure(let reason):
      fail(path, reason.message(text))
      return nil
    case .success(let duration):
      if positive, duration <= .zero {
        fail(path, "must be greater than 0")
        return nil
      }
      if duration < .zero {
        fail(path, "must not be negative")
        return nil
      }
      return duration
    }
  }

  /// Status codes by name (`"UNAVAILABLE"`) or number (`14`), each once, as canonical names.
  mutating func statusCodes(_ value: JSONValue, at path: String, mayBeEmpty: Bool) -> [String]? {
    guard let elements = array(value, at: path) else { return nil }
    if elements.isEmpty, !mayBeEmpty { fail(path, "must be non-empty") }
    var codes: [String] = []
    var failed = false
    for (index, element) in elements.enumerated() {
      let elementPath = "\(path)[\(index)]"
      var code: String?
      switch element {
      case .string(let name):
        code = GRPCStatus.names.contains(name) ? name : nil
        if code == nil {
          let suggestion = GRPCStatus.canonical(name).map { "; did you mean '\($0)'?" } ?? ""
          fail(elementPath, "'\(name)' is no gRPC status code\(suggestion)")
        }
      case .number(let text):
        if let decimal = ExactDecimal(text), decimal.isIntegral, let number = decimal.integerValue,
          let name = GRPCStatus.name(ofCode: number)
        {
          code = name
        } else {
          fail(elementPath, "\(text) is no gRPC status code (0 to 16)")
        }
      default:
        fail(elementPath, "is not a status code name or number")
      }
      guard let code else {
        failed = true
        continue
      }
      if codes.contains(code) {
        fail(elementPath, "'\(code)' appears twice")
        failed = true
      }
      codes.append(code)
    }
    return failed ? nil : codes
  }

  /// `retryThrottling`, checked: `maxTokens` in 1 … 1000, `tokenRatio` above 0.
  mutating func throttling(_ root: [JSONMember]) -> GRPCThrottling? {
    guard let value = member("retryThrottling", of: root),
      let members = object(value, at: "retryThrottling")
    else { return nil }
    var tokens: Int?
    var ratio: Int?
    if let value = member("maxTokens", of: members) {
      tokens = integer(value, at: "retryThrottling.maxTokens", in: 1...1000, field: "maxTokens")
    } else {
      fail("retryThrottling.maxTokens", "field not present")
    }
    if let value = member("tokenRatio", of: members),
      let number = double(value, at: "retryThrottling.tokenRatio")
    {
      // gRPC keeps three decimals, truncating: 0.5466 is 0.546.
      let milli = (min(number, 1e9) * 1000 + 1e-6).rounded(.down)
      if number <= 0 {
        fail("retryThrottling.tokenRatio", "must be greater than 0")
      } else if milli < 1 {
        fail(
          "retryThrottling.tokenRatio",
          "gRPC keeps three decimals, so \(NumberText.decimal(number)) is 0; it must be 0.001 or more"
        )
      } else {
        ratio = Int(milli)
        if Double(Int(milli)) / 1000 != number {
          warn(
            "retryThrottling.tokenRatio",
            "gRPC keeps three decimals: \(NumberText.decimal(number)) is"
              + " \(NumberText.decimal(Double(Int(milli)) / 1000))")
        }
      }
    } else if member("tokenRatio", of: members) == nil {
      fail("retryThrottling.tokenRatio", "field not present")
    }
    guard let tokens, let ratio else { return nil }
    return GRPCThrottling(maxTokens: tokens, milliRatio: ratio)
  }

  /// The `name` list of a method config.
  mutating func names(_ value: JSONValue?, at path: String) -> [GRPCMethodName] {
    guard let value, let elements = array(value, at: path) else { return [] }
    var names: [GRPCMethodName] = []
    for (index, element) in elements.enumerated() {
      let elementPath = "\(path)[\(index)]"
      guard let members = object(element, at: elementPath) else { continue }
      var parts = ["", ""]
      for (slot, key) in ["service", "method"].enumerated() {
        guard let part = member(key, of: members) else { continue }
        guard case .string(let text) = part else {
          fail(join(elementPath, key), "is not a string")
          continue
        }
        parts[slot] = text
      }
      if parts[0].isEmpty, !parts[1].isEmpty {
        fail(join(elementPath, "method"), "method name populated without service name")
      }
      names.append(GRPCMethodName(service: parts[0], method: parts[1]))
    }
    return names
  }

  /// One method config as a policy, or nil after an error.
  mutating func methodConfig(
    _ value: JSONValue, at path: String, throttling: GRPCThrottling?
  ) -> ImportedPolicy? {
    guard let members = object(value, at: path) else { return nil }
    let errorCount = errors.count
    let names = names(member("name", of: members), at: join(path, "name"))
    var comments: [String] = []
    var policy = CompiledPolicy(rules: [])
    var clampedAttempts: String?
    let retry = member("retryPolicy", of: members)
    let hedging = member("hedgingPolicy", of: members)
    if retry != nil, hedging != nil {
      fail(path, "has both 'retryPolicy' and 'hedgingPolicy'; gRPC allows one of them")
    }
    if let retry {
      let retryPath = join(path, "retryPolicy")
      if let (rule, timeout, original) = retryRule(retry, at: retryPath, comments: &comments) {
        policy.rules = [rule]
        policy.attemptTimeout = timeout
        clampedAttempts = original
      }
    } else if let hedging {
      let hedgingPath = join(path, "hedgingPolicy")
      if let (rule, hedge, original) = hedgingRule(hedging, at: hedgingPath, comments: &comments) {
        policy.rules = [rule]
        policy.hedge = hedge
        clampedAttempts = original
      }
    } else {
      policy.rules = [RetryRule(behavior: .immediate(maxCount: 0))]
    }
    if let timeout = member("timeout", of: members),
      let deadline = duration(timeout, at: join(path, "timeout"), positive: false),
      deadline > .zero
    {
      policy.deadline = clamp(deadline, at: join(path, "timeout"), comments: &comments)
    }
    if let throttling {
      let ratio = Double(throttling.milliRatio) / 1000
      policy.budgetRatio = throttling.budgetRatio
      if ratio > 1 {
        comments.append(
          "tokenRatio \(NumberText.decimal(ratio)) is above 1; '\(Keyword.budget.text)' is at most 100%"
        )
      }
    }
    guard errors.count == errorCount else { return nil }
    let record = GRPCRecord(
      names: names, throttling: throttling, maxAttempts: clampedAttempts)
    return ImportedPolicy(
      names: names, comments: comments + [record.comment], policy: policy)
  }

  /// `maxAttempts`: an integer of 2 or more; above 5 it is clamped, with a warning.
  mutating func attempts(
    _ members: [JSONMember], at path: String, comments: inout [String]
  ) -> (Int, String?)? {
    let attemptsPath = join(path, "maxAttempts")
    guard let value = member("maxAttempts", of: members) else {
      fail(attemptsPath, "field not present")
      return nil
    }
    guard
      let attempts = integer(
        value, at: attemptsPath, in: Int(Int32.min)...Int(Int32.max), field: "maxAttempts")
    else { return nil }
    guard attempts >= 2 else {
      fail(attemptsPath, "must be at least 2")
      return nil
    }
    if attempts <= GRPCExport.attemptCap { return (attempts, nil) }
    warn(
      attemptsPath,
      "gRPC clients make \(GRPCExport.attemptCap) attempts at most: \(attempts) is clamped to"
        + " \(GRPCExport.attemptCap)")
    comments.append(
      "maxAttempts \(attempts): gRPC clients make \(GRPCExport.attemptCap) at most")
    return (GRPCExport.attemptCap, String(attempts))
  }

  private mutating func retryRule(
    _ value: JSONValue, at path: String, comments: inout [String]
  ) -> (RetryRule, Duration?, String?)? {
    guard let members = object(value, at: path) else { return nil }
    let attempts = self.attempts(members, at: path, comments: &comments)
    var parts: [Duration?] = []
    for key in ["initialBackoff", "maxBackoff"] {
      guard let value = member(key, of: members) else {
        fail(join(path, key), "field not present")
        parts.append(nil)
        continue
      }
      parts.append(duration(value, at: join(path, key), positive: true))
    }
    var multiplier: Double?
    if let value = member("backoffMultiplier", of: members) {
      multiplier = double(value, at: join(path, "backoffMultiplier"))
      if let factor = multiplier, factor <= 0 {
        fail(join(path, "backoffMultiplier"), "must be greater than 0")
        multiplier = nil
      }
    } else {
      fail(join(path, "backoffMultiplier"), "field not present")
    }
    var timeout: Duration?
    if let value = member("perAttemptRecvTimeout", of: members) {
      timeout = duration(value, at: join(path, "perAttemptRecvTimeout"), positive: true)
    }
    let hasTimeout = member("perAttemptRecvTimeout", of: members) != nil
    var codes: [String]?
    if let value = member("retryableStatusCodes", of: members) {
      codes = statusCodes(value, at: join(path, "retryableStatusCodes"), mayBeEmpty: hasTimeout)
    } else if hasTimeout {
      codes = []
    } else {
      fail(join(path, "retryableStatusCodes"), "field not present")
    }
    guard let (count, original) = attempts, let initial = parts[0], let maximum = parts[1],
      let multiplier, let codes
    else { return nil }
    var classes = codes.map(GRPCStatus.camelCase)
    if timeout != nil, let timeoutClass = ErrorClassName.timeout {
      classes.append(timeoutClass)
      comments.append(
        "perAttemptRecvTimeout is the per-attempt limit, and its expiry is retried; gRPC's C"
          + " core (grpcio) honors it only on channels with hedging enabled")
    }
    let behavior = GRPCDelays.behavior(
      retries: count - 1,
      initial: clamp(initial, at: join(path, "initialBackoff"), comments: &comments),
      maximum: maximum, multiplier: multiplier)
    var rule = RetryRule(
      behavior: behavior.behavior, errorClasses: classes, jitter: GRPCImport.jitter)
    rule.maxDelay = behavior.maxDelay
    let attemptTimeout = timeout.map {
      clamp($0, at: join(path, "perAttemptRecvTimeout"), comments: &comments)
    }
    return (rule, attemptTimeout, original)
  }

  private mutating func hedgingRule(
    _ value: JSONValue, at path: String, comments: inout [String]
  ) -> (RetryRule, HedgePolicy, String?)? {
    guard let members = object(value, at: path) else { return nil }
    let attempts = self.attempts(members, at: path, comments: &comments)
    var delay = Duration.zero
    if let value = member("hedgingDelay", of: members) {
      delay = duration(value, at: join(path, "hedgingDelay"), positive: false) ?? .zero
    }
    var codes: [String]? = []
    if let value = member("nonFatalStatusCodes", of: members) {
      codes = statusCodes(value, at: join(path, "nonFatalStatusCodes"), mayBeEmpty: true)
    }
    guard let (count, original) = attempts, let codes else { return nil }
    let extra = count - 1
    let rule = RetryRule(
      behavior: .immediate(maxCount: codes.isEmpty ? 0 : extra),
      errorClasses: codes.map(GRPCStatus.camelCase))
    let after = clamp(delay, at: join(path, "hedgingDelay"), comments: &comments)
    return (rule, HedgePolicy(count: extra, delay: after), original)
  }

  /// A duration no longer than the language's longest, 10000h, with a warning when cut.
  mutating func clamp(_ duration: Duration, at path: String, comments: inout [String]) -> Duration {
    guard duration > GRPCDelays.longest else { return duration }
    warn(path, "\(duration.protobufText) is longer than the language's 10000h; 10000h is kept")
    comments.append("\(path) \(duration.protobufText) is cut to 10000h")
    return GRPCDelays.longest
  }
}
