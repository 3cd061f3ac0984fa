import RetryPolicy

/// Where a line being typed stands within its last clause, read word by word with the clause
/// table: the argument the cursor's word would be, or the clause's words that may follow.
///
/// The line may not parse yet, so this reads words, not tokens: a word that starts a clause
/// starts one, unless it is a word of the clause being read (`after` of `hedge 2 after`).
struct ClauseReading {
  /// The shape of the value the next word would be; nil after a complete clause.
  ///
  /// An optional argument (a backoff's growth) is not expected.
  private(set) var expected: ArgumentShape?
  /// A word the clause needs next (`after` of `hedge 2`, `retry-after` of `honoring`).
  private(set) var expectedWord: String?
  /// The words of the clause that may still follow (`over`, `min`, `for` after
  /// `breaker 50%`), in order: those after the last one written.
  private(set) var followingWords: [String] = []

  init(_ words: [String]) {
    var spec: ClauseSpec?
    // The index of the next argument of `spec`; past the positional ones, where words go.
    var next = 0
    var awaitsValue = false
    for word in words {
      if let current = spec, let index = Self.wordIndex(word, in: current, from: 0) {
        next = index
        awaitsValue = current.arguments[index].shape != .none
        if !awaitsValue { next += 1 }
        continue
      }
      if let clause = Keyword(rawValue: word)?.clause {
        spec = clause.spec
        next = 0
        awaitsValue = false
        continue
      }
      if word == Keyword.retry.text {
        spec = nil
        continue
      }
      guard let current = spec else { continue }
      // A value: it fills the argument awaited, or the next positional one.
      if awaitsValue {
        awaitsValue = false
        next += 1
      } else if next < current.arguments.count, current.arguments[next].word == nil {
        // `x` and `+` start a growth; its number follows.
        if word == Keyword.x.text || word == "+" { continue }
        next += 1
      }
    }
    guard let spec else { return }
    if awaitsValue, next < spec.arguments.count {
      expected = spec.arguments[next].shape
      return
    }
    if next < spec.arguments.count {
      let argument = spec.arguments[next]
      if argument.word == nil, !argument.isOptional {
        expected = argument.shape
        return
      }
    }
    // Past the positional arguments: the first required word not written, else the optional
    // words after the last written.
    var index = next
    while index < spec.arguments.count, spec.arguments[index].word == nil { index += 1 }
    let rest = spec.arguments[index...]
    if let required = rest.first(where: { !$0.isOptional }) {
      expectedWord = required.word
      return
    }
    followingWords = rest.compactMap(\.word)
  }

  /// The index of the argument of `spec` whose word is `word`, from `start` on.
  private static func wordIndex(_ word: String, in spec: ClauseSpec, from start: Int) -> Int? {
    spec.arguments.indices.first { $0 >= start && spec.arguments[$0].word == word }
  }
}
