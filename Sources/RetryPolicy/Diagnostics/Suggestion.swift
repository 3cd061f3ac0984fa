/// Finds the nearest of some candidate words, for "did you mean" suggestions.
package enum Suggestion {
  /// The candidate nearest to `word` by edit distance, if it is near enough to be a typo.
  ///
  /// Near enough means at most one edit for words of up to four characters and at most a
  /// third of the word's length otherwise. Ties go to the earlier candidate.
  package static func nearest<S: Sequence<String>>(to word: String, in candidates: S) -> String? {
    let source = Array(word.lowercased().unicodeScalars)
    let limit = source.count <= 4 ? 1 : max(2, source.count / 3)
    var best: (word: String, distance: Int)?
    for candidate in candidates where candidate != word {
      let distance = editDistance(
        source, Array(candidate.lowercased().unicodeScalars), limit: limit)
      guard distance <= limit else { continue }
      if best.map({ distance < $0.distance }) ?? true {
        best = (candidate, distance)
      }
    }
    return best?.word
  }

  /// The Damerau–Levenshtein (optimal string alignment) distance, stopping early past `limit`.
  static func editDistance(_ a: [Unicode.Scalar], _ b: [Unicode.Scalar], limit: Int) -> Int {
    if abs(a.count - b.count) > limit { return limit + 1 }
    if a.isEmpty { return b.count }
    if b.isEmpty { return a.count }
    var previousPrevious = [Int](repeating: 0, count: b.count + 1)
    var previous = Array(0...b.count)
    var current = [Int](repeating: 0, count: b.count + 1)
    for i in 1...a.count {
      current[0] = i
      var rowMinimum = i
      for j in 1...b.count {
        let cost = a[i - 1] == b[j - 1] ? 0 : 1
        var value = min(previous[j] + 1, current[j - 1] + 1, previous[j - 1] + cost)
        if i > 1, j > 1, a[i - 1] == b[j - 2], a[i - 2] == b[j - 1] {
          value = min(value, previousPrevious[j - 2] + 1)
        }
        current[j] = value
        rowMinimum = min(rowMinimum, value)
      }
      if rowMinimum > limit { return limit + 1 }
      (previousPrevious, previous, current) = (previous, current, previousPrevious)
    }
    return previous[b.count]
  }

  /// `; did you mean 'x'?` when a suggestion exists, else the empty string.
  package static func didYouMean(_ suggestion: String?) -> String {
    suggestion.map { "; did you mean '\($0)'?" } ?? ""
  }
}
