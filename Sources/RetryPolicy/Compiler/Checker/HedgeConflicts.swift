/// The rule clauses that have no meaning under `hedge` (`delay`, `backoff`, `jitter`, …),
/// kept from where they stand until the policy's end, when they are reported if the policy
/// has `hedge`, which may come on a later line.
///
/// Nearly every rule has such clauses and nearly no policy has `hedge`, so the first four
/// are kept inline: checking a policy without `hedge` allocates nothing for them.
struct HedgeConflicts {
  /// A clause's keyword (`honoring` for `honoring retry-after`) and its keyword's range.
  typealias Conflict = (keyword: Keyword, range: SourceRange)

  /// The first four, in order.
  private var inline: (Conflict?, Conflict?, Conflict?, Conflict?) = (nil, nil, nil, nil)
  /// The others, in order; its room is kept when the list is emptied.
  private var rest: [Conflict] = []
  /// How many there are.
  private(set) var count = 0

  /// Adds a clause at the end.
  mutating func append(_ keyword: Keyword, at range: SourceRange) {
    switch count {
    case 0: inline.0 = (keyword, range)
    case 1: inline.1 = (keyword, range)
    case 2: inline.2 = (keyword, range)
    case 3: inline.3 = (keyword, range)
    default: rest.append((keyword, range))
    }
    count += 1
  }

  /// Empties the list, keeping its room.
  mutating func removeAll() {
    if !rest.isEmpty { rest.removeAll(keepingCapacity: true) }
    count = 0
  }

  /// The clauses, in order.
  var all: [Conflict] {
    // The inline ones past `count` are left from before the list was last emptied.
    let first = [inline.0, inline.1, inline.2, inline.3].prefix(count).compactMap { $0 }
    return first + rest
  }
}
