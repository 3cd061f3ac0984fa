import RetryPolicy

/// The scripted outcomes of `simulate --outcomes`: what each attempt of the simulated
/// operation does.
///
/// Syntax: a comma-separated list of outcomes, each
///
///     outcome = ( "ok" | "cancel" | CLASS ) { "*" COUNT | "@" DURATION | "~" DURATION }
///
/// - `ok`: the attempt succeeds.
/// - `cancel` (or `cancellation`, `CancellationError`): the attempt throws `CancellationError`,
///   which is never retried, even by a rule that names it.
/// - `CLASS`: the attempt fails with an error of that class, such as `serverError` or
///   `timeout` (an attempt cut off by the policy's `timeout`); a status such as `503` fails
///   with an error of that HTTP status (matched by `503`, `5xx`, `transient`).
/// - `*N`: the outcome happens N times in a row (`serverError*3`).
/// - `@D`: the error carries a Retry-After of D (`serverError@5s`), which rules with
///   `honoring retry-after` use instead of their own delay.
/// - `~D`: the attempt takes D of virtual time before it ends (`ok~200ms`).
///
/// When the script runs out, its last outcome repeats: `--outcomes serverError` fails every
/// attempt. Durations are written as in policies: `250ms`, `1.5s`, `2m`, `1h`.
package struct OutcomeScript: Sendable, Equatable {
  /// What one attempt does.
  package struct Outcome: Sendable, Equatable {
    /// How the attempt ends.
    package enum Kind: Sendable, Equatable {
      /// It returns a value.
      case success
      /// It throws `CancellationError`.
      case cancellation
      /// It throws an error of the named class.
      case failure(errorClass: String)
    }

    /// How the attempt ends.
    package var kind: Kind
    /// The Retry-After the error carries (`@D`).
    package var retryAfter: Duration?
    /// The virtual time the attempt takes (`~D`).
    package var duration: Duration?

    /// Creates the outcome `kind`, with a Retry-After and a duration if given.
    package init(kind: Kind, retryAfter: Duration? = nil, duration: Duration? = nil) {
      self.kind = kind
      self.retryAfter = retryAfter
      self.duration = duration
    }

    /// The outcome as the script writes it, without the count: `serverError@5s`.
    package var text: String {
      var text: String
      switch kind {
      case .success: text = "ok"
      case .cancellation: text = "cancel"
      case .failure(let name): text = name
      }
      if let retryAfter { text += "@" + retryAfter.policyText }
      if let duration { text += "~" + duration.policyText }
      return text
    }

    /// The error class the attempt fails with, if it fails with one.
    package var errorClass: String? {
      if case .failure(let name) = kind { return name }
      return nil
    }
  }

  /// The outcomes and how many times each happens in a row.
  package var steps: [(outcome: Outcome, count: Int)]

  /// The most times one outcome may repeat (`*N`).
  package static let maximumCount = 1_000_000

  package static func == (lhs: OutcomeScript, rhs: OutcomeScript) -> Bool {
    lhs.steps.elementsEqual(rhs.steps) { $0.outcome == $1.outcome && $0.count == $1.count }
  }

  /// A script from its parts.
  package init(steps: [(outcome: Outcome, count: Int)]) {
    self.steps = steps
  }

  /// What attempt `attempt` (counted from 1) does; past the end, the last outcome repeats.
  package func outcome(forAttempt attempt: Int) -> Outcome {
    var remaining = attempt
    for step in steps {
      if remaining <= step.count { return step.outcome }
      remaining -= step.count
    }
    return steps.last?.outcome ?? Outcome(kind: .success)
  }

  /// The script as written back: `serverError*2, ok`.
  package var text: String {
    steps.map { $0.outcome.text + ($0.count == 1 ? "" : "*\($0.count)") }
      .joined(separator: ", ")
  }

  /// Reads the `--outcomes` text; the error message names the bad part.
  package static func parse(_ text: String) throws(OutcomeScriptError) -> OutcomeScript {
    var steps: [(outcome: Outcome, count: Int)] = []
    for rawItem in text.split(separator: ",", omittingEmptySubsequences: false) {
      let item = rawItem.trimmingBlanks()
      guard !item.isEmpty else {
        throw OutcomeScriptError("empty outcome in '--outcomes \(text)'")
      }
      steps.append(try parseItem(item))
    }
    return OutcomeScript(steps: steps)
  }

  private static func parseItem(_ item: Substring) throws(OutcomeScriptError) -> (Outcome, Int) {
    var rest = item[...]
    let name = rest.prefix { $0.isASCII && ($0.isLetter || $0.isNumber || $0 == "_") }
    rest = rest.dropFirst(name.count)
    // A name, or an HTTP status (`503`), whose error matches `503`, `5xx` and `transient`.
    let isStatus = name.count == 3 && name.allSatisfy(\.isNumber)
    guard let first = name.first, first.isLetter || first == "_" || isStatus else {
      throw OutcomeScriptError(
        "invalid outcome '\(item)'; expected 'ok', 'cancel' or an error class name")
    }
    var outcome: Outcome
    switch name {
    case "ok": outcome = Outcome(kind: .success)
    // Cancellation by any of its names: a rule naming `CancellationError` never retries it.
    case "cancel", "cancellation", "CancellationError": outcome = Outcome(kind: .cancellation)
    default: outcome = Outcome(kind: .failure(errorClass: String(name)))
    }
    var count: Int?
    while let marker = rest.first {
      rest = rest.dropFirst()
      let argument = rest.prefix { $0 != "*" && $0 != "@" && $0 != "~" }
      rest = rest.dropFirst(argument.count)
      switch marker {
      case "*":
        guard count == nil, let value = Int(argument), value >= 1, value <= maximumCount else {
          throw OutcomeScriptError(
            "invalid count '\(argument)' in outcome '\(item)'; expected a whole number from 1 to \(maximumCount)"
          )
        }
        count = value
      case "@", "~":
        guard let duration = parseDuration(argument) else {
          throw OutcomeScriptError(
            "invalid duration '\(argument)' in outcome '\(item)'; write one of at most '10000h',"
              + " such as '250ms', '1.5s' or '2m'"
          )
        }
        if marker == "@" {
          guard outcome.errorClass != nil, outcome.retryAfter == nil else {
            throw OutcomeScriptError("'@' (retry-after) goes once on a failing outcome: '\(item)'")
          }
          outcome.retryAfter = duration
        } else {
          guard outcome.duration == nil else {
            throw OutcomeScriptError("'~' (attempt duration) given twice in '\(item)'")
          }
          outcome.duration = duration
        }
      default:
        throw OutcomeScriptError("unexpected '\(marker)' in outcome '\(item)'")
      }
    }
    return (outcome, count ?? 1)
  }

  /// `250ms`, `1.5s`, `2m`, `1h`: a number and a unit, as in policies; at most `10000h`, the
  /// longest duration a policy takes.
  package static func parseDuration(_ text: Substring) -> Duration? {
    let units: [(suffix: String, seconds: Double)] = [
      ("ms", 0.001), ("s", 1), ("m", 60), ("h", 3600),
    ]
    for unit in units where text.hasSuffix(unit.suffix) {
      let number = text.dropLast(unit.suffix.count)
      guard !number.isEmpty, number.allSatisfy({ $0.isASCII && ($0.isNumber || $0 == ".") }),
        number.first != ".", number.last != ".", let value = Double(number)
      else { return nil }
      let seconds = value * unit.seconds
      guard seconds.isFinite, seconds <= 36_000_000 else { return nil }
      return .saturating(seconds: seconds)
    }
    return nil
  }
}

/// Why an `--outcomes` text does not read: the message names the bad part.
package struct OutcomeScriptError: Error, Equatable, Sendable {
  /// The message, such as `invalid outcome '!'; expected …`.
  package var message: String

  /// Creates the error with its message.
  package init(_ message: String) {
    self.message = message
  }
}

extension Substring {
  /// Without leading and trailing spaces and tabs.
  fileprivate func trimmingBlanks() -> Substring {
    var text = self
    while let first = text.first, first == " " || first == "\t" { text.removeFirst() }
    while let last = text.last, last == " " || last == "\t" { text.removeLast() }
    return text
  }
}
