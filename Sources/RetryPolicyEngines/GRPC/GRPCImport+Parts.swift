import RetryPolicy

/// A JSON number's value read from its text, exactly.
///
/// It says whether it is whole, and its value when
/// it fits an `Int`. `2.9` is not whole; `2.0`, `20e-1` and `1e3` are; `1e30` is whole but
/// does not fit.
struct ExactDecimal {
  /// The significant digits, without leading zeros.
  private var digits: [UInt8]
  /// Where the decimal point stands in `digits` (may be negative or past the end).
  private var point: Int
  private var isNegative: Bool

  init?(_ text: String) {
    var bytes = Array(text.utf8)[...]
    isNegative = bytes.first == UInt8(ascii: "-")
    if isNegative { bytes = bytes.dropFirst() }
    var whole: [UInt8] = []
    var fraction: [UInt8] = []
    while let byte = bytes.first, (0x30...0x39).contains(byte) {
      whole.append(byte - 0x30)
      bytes = bytes.dropFirst()
    }
    if bytes.first == UInt8(ascii: ".") {
      bytes = bytes.dropFirst()
      while let byte = bytes.first, (0x30...0x39).contains(byte) {
        fraction.append(byte - 0x30)
        bytes = bytes.dropFirst()
      }
    }
    guard !whole.isEmpty || !fraction.isEmpty else { return nil }
    var exponent = 0
    if let byte = bytes.first, byte | 0x20 == UInt8(ascii: "e") {
      bytes = bytes.dropFirst()
      var sign = 1
      if bytes.first == UInt8(ascii: "-") || bytes.first == UInt8(ascii: "+") {
        sign = bytes.first == UInt8(ascii: "-") ? -1 : 1
        bytes = bytes.dropFirst()
      }
      guard !bytes.isEmpty else { return nil }
      while let byte = bytes.first, (0x30...0x39).contains(byte) {
        // Saturates: an exponent past a million says "out of range" as well as any.
        exponent = min(exponent * 10 + Int(byte - 0x30), 1_000_000)
        bytes = bytes.dropFirst()
      }
      exponent *= sign
    }
    guard bytes.isEmpty else { return nil }
    var all = whole + fraction
    var point = whole.count + exponent
    while let first = all.first, first == 0 {
      all.removeFirst()
      point -= 1
    }
    while let last = all.last, last == 0 { all.removeLast() }
    digits = all
    self.point = all.isEmpty ? 0 : point
  }

  /// Whether the number has no fraction.
  var isIntegral: Bool { digits.isEmpty || point >= digits.count }

  /// The value when it is whole and fits an `Int` (at most 18 digits); else nil.
  var integerValue: Int? {
    guard isIntegral else { return nil }
    guard !digits.isEmpty else { return 0 }
    guard point <= 18 else { return nil }
    var value = 0
    for index in 0..<point {
      value = value * 10 + Int(index < digits.count ? digits[index] : 0)
    }
    return isNegative ? -value : value
  }
}

/// protobuf's JSON form of `google.protobuf.Duration`: `1s`, `1.5s`, `.002s`, `-3s`, at most
/// nine decimals, at most 315,576,000,000 seconds.
enum ProtobufDuration {
  enum Reason: Error, Equatable {
    case noSuffix
    case malformed
    case outOfRange

    func message(_ text: String) -> String {
      let quoted = GRPCRecord.quoted(text)
      return switch self {
      case .noSuffix: "\(quoted) is not a duration (no 's' suffix), such as \"1.5s\""
      case .malformed: "\(quoted) is not a duration in protobuf's JSON form, such as \"1.5s\""
      case .outOfRange: "\(quoted) is beyond protobuf's 315576000000s"
      }
    }
  }

  static func parse(_ text: String) -> Result<Duration, Reason> {
    var bytes = Array(text.utf8)[...]
    guard bytes.last == UInt8(ascii: "s") else { return .failure(.noSuffix) }
    bytes = bytes.dropLast()
    let isNegative = bytes.first == UInt8(ascii: "-")
    if isNegative { bytes = bytes.dropFirst() }
    let parts = bytes.split(separator: UInt8(ascii: "."), omittingEmptySubsequences: false)
    guard parts.count <= 2, let wholePart = parts.first else { return .failure(.malformed) }
    let fractionPart = parts.count == 2 ? parts[1] : []
    guard !wholePart.isEmpty || !fractionPart.isEmpty, fractionPart.count <= 9,
      parts.count == 1 || !fractionPart.isEmpty || !wholePart.isEmpty,
      wholePart.allSatisfy({ (0x30...0x39).contains($0) }),
      fractionPart.allSatisfy({ (0x30...0x39).contains($0) })
    else { return .failure(.malformed) }
    guard wholePart.count <= 12 else { return .failure(.outOfRange) }
    var seconds: Int64 = 0
    for byte in wholePart { seconds = seconds * 10 + Int64(byte - 0x30) }
    guard seconds <= 315_576_000_000 else { return .failure(.outOfRange) }
    var nanoseconds: Int64 = 0
    for index in 0..<9 {
      let digit =
        index < fractionPart.count ? Int64(fractionPart[fractionPart.startIndex + index] - 0x30) : 0
      nanoseconds = nanoseconds * 10 + digit
    }
    let duration = Duration.seconds(seconds) + Duration.nanoseconds(nanoseconds)
    return .success(isNegative ? .zero - duration : duration)
  }
}

/// gRPC's delays as a rule's delay clause: exact whenever the language can say them.
enum GRPCDelays {
  /// The longest duration the language accepts: 10000h.
  static let longest = Duration.seconds(36_000_000)

  /// The duration nearest `seconds`, in whole nanoseconds (protobuf's precision), between
  /// 1ns and ``longest``.
  static func duration(seconds: Double) -> Duration {
    let nanoseconds = (seconds * 1e9).rounded()
    guard nanoseconds >= 1 else { return .nanoseconds(1) }
    guard nanoseconds < 3.6e16 else { return longest }
    return .nanoseconds(Int64(nanoseconds))
  }

  /// The delay clause for gRPC's delays.
  ///
  /// Retry n waits min(initial × multiplier^(n−1), maximum),
  /// n = 1 … `retries` (jitter aside, which gRPC draws after the cap):
  /// - one delay, or a multiplier of 1: `delay` with the smaller of initial and maximum;
  /// - a multiplier above 1 whose cap no jittered delay reaches (1.2 × the last delay ≤
  ///   maximum): `backoff initial xF max maximum` (the cap then never acts, and is kept for
  ///   the round trip);
  /// - otherwise (a multiplier below 1, or a cap reached): the explicit `delays` list.
  static func behavior(
    retries: Int, initial: Duration, maximum: Duration, multiplier: Double
  ) -> (behavior: RepeatBehavior, maxDelay: Duration?) {
    let first = min(initial, maximum)
    if retries <= 1 || multiplier == 1 || (multiplier > 1 && maximum <= initial) {
      return (.delayed(maxCount: retries, delay: first), nil)
    }
    let start = initial / .seconds(1)
    let cap = maximum / .seconds(1)
    var last = start
    for _ in 1..<retries { last *= multiplier }
    if multiplier > 1, multiplier <= 1000, last.isFinite, last * 1.2 <= cap, maximum <= longest {
      return (.exponential(maxCount: retries, initial: initial, multiplier: multiplier), maximum)
    }
    var delays: [Duration] = []
    var nominal = start
    for _ in 0..<retries {
      delays.append(duration(seconds: min(nominal, cap)))
      nominal *= multiplier
    }
    if let firstDelay = delays.first, delays.allSatisfy({ $0 == firstDelay }) {
      return (.delayed(maxCount: retries, delay: firstDelay), nil)
    }
    return (.customTimerDelayed(maxCount: retries, delays: delays), nil)
  }
}

/// What `import` keeps of a method config that the language cannot say.
///
/// It is a record comment before its policy: `# grpc-service-config: {"name": [...], "retryThrottling": {...}}`, in
/// JSON with every character outside printable ASCII escaped, so that it stays one comment
/// line whatever the names hold. `export --to grpc --file` reads it back.
package struct GRPCRecord: Equatable {
  /// The comment's start, before the JSON object.
  static let marker = "grpc-service-config:"

  /// The method config's `name` list, or nil when it has none.
  var names: [GRPCMethodName]?
  /// The config's `retryThrottling`.
  var throttling: GRPCThrottling?
  /// `maxAttempts` as written, when it was above gRPC's cap of 5.
  var maxAttempts: String?

  /// The comment text, `#` included.
  var comment: String {
    var members: [String] = []
    if let names {
      let entries = names.map { name -> String in
        var parts: [String] = []
        if !name.service.isEmpty { parts.append("\"service\": " + Self.quoted(name.service)) }
        if !name.method.isEmpty { parts.append("\"method\": " + Self.quoted(name.method)) }
        return "{" + parts.joined(separator: ", ") + "}"
      }
      members.append("\"name\": [" + entries.joined(separator: ", ") + "]")
    }
    if let maxAttempts { members.append("\"maxAttempts\": " + maxAttempts) }
    if let throttling {
      members.append(
        "\"retryThrottling\": {\"maxTokens\": \(throttling.maxTokens), \"tokenRatio\": "
          + Self.milliText(throttling.milliRatio) + "}")
    }
    return "# " + Self.marker + " {" + members.joined(separator: ", ") + "}"
  }

  /// The record a comment holds, or nil when it is no record.
  package static func read(_ comment: String) -> GRPCRecord? {
    var text = Substring(comment)
    guard text.first == "#" else { return nil }
    text = text.dropFirst().drop { $0 == " " }
    guard text.hasPrefix(marker) else { return nil }
    text = text.dropFirst(marker.count)
    guard case .success(.object(let members)) = GRPCConfigJSON.parse(Array(text.utf8)) else {
      return nil
    }
    var reader = ConfigReader()
    var record = GRPCRecord()
    if let names = reader.member("name", of: members) {
      record.names = reader.names(names, at: "name")
    }
    if case .number(let attempts)? = reader.member("maxAttempts", of: members) {
      record.maxAttempts = attempts
    }
    record.throttling = reader.throttling(members)
    return reader.errors.isEmpty ? record : nil
  }

  /// A string as JSON, in printable ASCII: `"a\nb"`, `"caf\u00e9"`.
  static func quoted(_ text: String) -> String {
    var result = "\""
    for unit in text.utf16 {
      switch unit {
      case 0x22: result += "\\\""
      case 0x5C: result += "\\\\"
      case 0x0A: result += "\\n"
      case 0x09: result += "\\t"
      case 0x20..<0x7F: result.unicodeScalars.append(Unicode.Scalar(UInt8(unit)))
      default:
        let hex = String(unit, radix: 16)
        result += "\\u" + String(repeating: "0", count: 4 - hex.count) + hex
      }
    }
    return result + "\""
  }

  /// Thousandths as a decimal: 546 → `0.546`, 2000 → `2`.
  static func milliText(_ milli: Int) -> String {
    let whole = milli / 1000
    var fraction = String(milli % 1000)
    guard fraction != "0" else { return String(whole) }
    fraction = String(repeating: "0", count: 3 - fraction.count) + fraction
    while fraction.hasSuffix("0") { fraction.removeLast() }
    return "\(whole).\(fraction)"
  }
}

/// Policy names from method names: valid, unique, never a keyword.
enum PolicyNaming {
  /// The name a method config's first `name` gives (`helloworld_Greeter_SayHello`, or
  /// `allMethods`), made valid and unique; a warning when it had to change beyond turning
  /// `.` and `/` into `_`.
  static func unique(
    _ name: GRPCMethodName?, index: Int, used: inout Set<String>, path: String,
    reader: inout ConfigReader
  ) -> String {
    let joined = [name?.service ?? "", name?.method ?? ""].filter { !$0.isEmpty }
      .joined(separator: "_")
    let natural = String(
      joined.unicodeScalars.map { $0 == "." || $0 == "/" ? "_" : Character($0) })
    var candidate = natural.isEmpty ? "allMethods" : valid(natural)
    if candidate.isEmpty { candidate = "method\(index + 1)" }
    var result = candidate
    var suffix = 2
    while used.contains(result) {
      result = candidate + "_\(suffix)"
      suffix += 1
    }
    used.insert(result)
    if !natural.isEmpty, result != natural {
      reader.warn(
        path + ".name[0]",
        "the policy is named '\(result)': \(GRPCRecord.quoted(natural)) is no valid, unique"
          + " policy name")
    }
    return result
  }

  /// ASCII letters, digits and `_`, starting with a letter, and no keyword of the language.
  static func valid(_ text: String) -> String {
    var result = String(
      text.unicodeScalars.map { scalar -> Character in
        scalar.isASCII
          && (("a"..."z").contains(scalar) || ("A"..."Z").contains(scalar)
            || ("0"..."9").contains(scalar) || scalar == "_")
          ? Character(scalar) : "_"
      })
    if let first = result.unicodeScalars.first,
      !(("a"..."z").contains(first) || ("A"..."Z").contains(first))
    {
      result = "m" + result
    }
    let isFactor =
      result.hasPrefix(Keyword.x.text)
      && result.dropFirst(Keyword.x.text.count).allSatisfy { $0.isASCII && $0.isNumber }
    if LanguageWords.keywords.contains(result) || isFactor { result += "_" }
    return result
  }
}

/// Prints a policy file from policy values through the canonical printer: each policy's text
/// is the compiled value's own (``CompiledPolicy/description``), read back as a syntax tree,
/// so no clause is spelt here.
enum PolicyFilePrinter {
  /// The file of these policies.
  ///
  /// It holds `header` comments, then each policy after its comments, then `trailing`
  /// comments. Every comment is made one line of printable ASCII.
  static func print(
    header: [String], policies: [(name: String, comments: [String], policy: CompiledPolicy)],
    trailing: [String] = []
  ) -> String {
    var comments: [CommentSyntax] = []
    var declarations: [PolicyDeclarationSyntax] = []
    var line = 1
    func comment(_ text: String) {
      let body = text.hasPrefix("#") ? text : "# " + text
      comments.append(CommentSyntax(text: sanitized(body), range: range(line)))
      line += 1
    }
    header.forEach(comment)
    if !header.isEmpty { line += 1 }
    for (name, notes, policy) in policies {
      notes.forEach(comment)
      var body = Parser.parsePolicy(policy.description).0
      let start = line
      let isLine = body.lines.count == 1
      for index in body.lines.indices {
        body.lines[index].range = range(isLine ? line : line + 1 + index)
      }
      let end = isLine ? line : line + body.lines.count + 1
      body.range = SourceRange(start: range(start).start, end: range(end).end)
      declarations.append(
        PolicyDeclarationSyntax(
          name: NameSyntax(text: name, range: range(start)), form: isLine ? .line : .block,
          body: body, range: body.range))
      line = end + 2
    }
    trailing.forEach(comment)
    let file = SourceFileSyntax(
      policies: declarations, comments: comments,
      range: SourceRange(start: .start, end: range(line).end))
    return CanonicalPrinter.print(file)
  }

  private static func range(_ line: Int) -> SourceRange {
    let location = SourceLocation(line: line, column: 1, offset: 0)
    return SourceRange(start: location, end: location)
  }

  /// A comment as one line of printable ASCII: other characters become `\u{…}`.
  static func sanitized(_ text: String) -> String {
    var result = ""
    for scalar in text.unicodeScalars {
      if scalar.value >= 0x20, scalar.value < 0x7F {
        result.unicodeScalars.append(scalar)
      } else {
        result += "\\u{" + String(scalar.value, radix: 16) + "}"
      }
    }
    return result
  }
}
