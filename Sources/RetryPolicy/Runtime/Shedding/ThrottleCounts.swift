import Synchronization

/// The counts of an ``AdaptiveThrottle``'s window in atomics, as ``ThrottleWindow`` keeps
/// them in plain fields: an attempt is counted and judged with one atomic addition, an
/// accept with another, and no lock.
///
/// The window is ``ThrottleWindow/bucketCount`` (20) buckets of a twentieth of `over`. Each
/// bucket's counts live in 128 bytes of their own, aligned, so that runs on other cores
/// write only the current bucket's line; beside its requests and accepts, a bucket keeps
/// the totals of the window's other buckets taken when it became the current one. The
/// current bucket's number is published in a header that runs only read. When the time
/// passes the current bucket, the throttle makes the next one current under its lock
/// (``AdaptiveThrottle``): it clears the bucket's slot, sums the others that are still in
/// the window, and publishes the number (releasing) after them.
///
/// So, one task at a time, it counts and decides exactly as ``ThrottleWindow``
/// (`ThrottleCountsTests` runs both on the same steps). With tasks on several cores, a
/// request or an accept counted in the instant the current bucket changes may land in the
/// new bucket, or be missing from the new bucket's totals of the others until the window
/// moves on: a handful of counts among the window's.
///
/// It owns nothing: the throttle allocates its memory and frees it.
@usableFromInline
package struct ThrottleCounts: @unchecked Sendable {
  // Sound: every word is an atomic; the totals of a bucket are written before its number is
  // published (releasing) and read after a load of it (acquiring).

  /// The words of a block of 128 bytes.
  private static var blockWords: Int { 16 }
  /// The blocks: the header, the random state, and one per bucket.
  private static var blockCount: Int { 2 + ThrottleWindow.bucketCount }
  /// The header's words: the current bucket's number (-1: none yet) and a bucket's width in
  /// nanoseconds (0: not configured).
  private static var currentWord: Int { 0 }
  private static var widthWord: Int { 1 }
  /// The random state's word, in the second block.
  private static var randomWord: Int { blockWords }
  /// The words of a bucket, from its block's start.
  private static var requestsWord: Int { 0 }
  private static var acceptsWord: Int { 1 }
  private static var numberWord: Int { 2 }
  private static var otherRequestsWord: Int { 3 }
  private static var otherAcceptsWord: Int { 4 }

  @usableFromInline let words: UnsafeMutablePointer<Atomic<Int>>

  /// Counts at `words`, which ``allocate(seed:)`` made.
  init(words: UnsafeMutablePointer<Atomic<Int>>) {
    self.words = words
  }

  /// Allocates the counts of an empty window that is not configured, its random state
  /// seeded with `seed`.
  static func allocate(seed: UInt64) -> ThrottleCounts {
    let bytes = UnsafeMutableRawPointer.allocate(
      byteCount: blockCount * blockWords * MemoryLayout<Atomic<Int>>.stride, alignment: 128)
    let words = bytes.bindMemory(to: Atomic<Int>.self, capacity: blockCount * blockWords)
    for index in 0..<(blockCount * blockWords) {
      (words + index).initialize(to: Atomic(0))
    }
    let counts = ThrottleCounts(words: words)
    counts.word(currentWord).pointee.store(-1, ordering: .relaxed)
    counts.word(randomWord).pointee.store(Int(truncatingIfNeeded: seed), ordering: .relaxed)
    for bucket in 0..<ThrottleWindow.bucketCount {
      counts.bucketWord(bucket, numberWord).pointee.store(-1, ordering: .relaxed)
    }
    return counts
  }

  /// Frees the memory of ``allocate(seed:)``.
  func deallocate() {
    words.deinitialize(count: Self.blockCount * Self.blockWords)
    UnsafeMutableRawPointer(words).deallocate()
  }

  @inline(__always)
  private func word(_ index: Int) -> UnsafeMutablePointer<Atomic<Int>> {
    words + index
  }

  @inline(__always)
  private func bucketWord(_ slot: Int, _ index: Int) -> UnsafeMutablePointer<Atomic<Int>> {
    words + (2 + slot) * Self.blockWords + index
  }

  /// The width of a bucket in nanoseconds; 0 before ``configure(window:)``.
  var width: Int64 {
    Int64(word(Self.widthWord).pointee.load(ordering: .relaxed))
  }

  /// Sets the window's length to `window`, as ``ThrottleWindow/init(window:)`` does; the
  /// throttle's lock is held.
  func configure(window: Duration) {
    let nanoseconds = Swift.max(
      CircuitBreakerClock.nanoseconds(window), Int64(ThrottleWindow.bucketCount))
    word(Self.widthWord).pointee.store(
      Int(nanoseconds / Int64(ThrottleWindow.bucketCount)), ordering: .relaxed)
  }

  /// The current bucket's slot when `now` is not past it (an older time counts in it too);
  /// nil when the throttle must make a later bucket current first.
  @inline(__always)
  private func currentSlot(at now: Int64) -> Int? {
    let current = word(Self.currentWord).pointee.load(ordering: .acquiring)
    let width = word(Self.widthWord).pointee.load(ordering: .relaxed)
    guard current >= 0, now < Int64((current &+ 1) &* width) else { return nil }
    return current % ThrottleWindow.bucketCount
  }

  /// Counts an attempt asked for at `now` and returns the probability that it is refused,
  /// the counts taken before its own request; nil, counting nothing, when the throttle must
  /// make a later bucket current first (``advance(to:)``).
  @inline(__always)
  func request(now: Int64, factor: Double) -> Double? {
    guard let slot = currentSlot(at: now) else { return nil }
    return request(inSlot: slot, factor: factor)
  }

  /// Counts a request in the bucket of `slot` and returns its refusal probability.
  @inline(__always)
  private func request(inSlot slot: Int, factor: Double) -> Double {
    let own = bucketWord(slot, Self.requestsWord).pointee.wrappingAdd(1, ordering: .relaxed)
      .oldValue
    let requests = own &+ bucketWord(slot, Self.otherRequestsWord).pointee.load(ordering: .relaxed)
    let accepts =
      bucketWord(slot, Self.acceptsWord).pointee.load(ordering: .relaxed)
      &+ bucketWord(slot, Self.otherAcceptsWord).pointee.load(ordering: .relaxed)
    return Self.probability(requests: requests, accepts: accepts, factor: factor)
  }

  /// max(0, (requests − K × accepts) / (requests + 1)), as ``ThrottleWindow`` computes it.
  @inline(__always)
  static func probability(requests: Int, accepts: Int, factor: Double) -> Double {
    // A healthy service, in integers: no more requests than accepts, and K at least 1.
    if requests <= accepts, factor >= 1 { return 0 }
    let excess = Double(requests) - factor * Double(accepts)
    guard excess > 0 else { return 0 }
    return excess / Double(requests &+ 1)
  }

  /// Counts an accept at `now`; false, counting nothing, when the throttle must make a later
  /// bucket current first.
  @inline(__always)
  func accept(now: Int64) -> Bool {
    guard let slot = currentSlot(at: now) else { return false }
    bucketWord(slot, Self.acceptsWord).pointee.wrappingAdd(1, ordering: .relaxed)
    return true
  }

  /// Makes the bucket of `now` current when it is later than the current one.
  ///
  /// Returns the current bucket's slot. The throttle's lock is held, and the width is set.
  func advance(to now: Int64) -> Int {
    let width = Swift.max(self.width, 1)
    let number = Int(Swift.max(now, 0) / width)
    let current = word(Self.currentWord).pointee.load(ordering: .relaxed)
    guard number > current else { return current % ThrottleWindow.bucketCount }
    let slot = number % ThrottleWindow.bucketCount
    var otherRequests = 0
    var otherAccepts = 0
    for other in 0..<ThrottleWindow.bucketCount where other != slot {
      let held = bucketWord(other, Self.numberWord).pointee.load(ordering: .relaxed)
      guard held >= 0, held > number - ThrottleWindow.bucketCount, held < number else { continue }
      otherRequests &+= bucketWord(other, Self.requestsWord).pointee.load(ordering: .relaxed)
      otherAccepts &+= bucketWord(other, Self.acceptsWord).pointee.load(ordering: .relaxed)
    }
    bucketWord(slot, Self.requestsWord).pointee.store(0, ordering: .relaxed)
    bucketWord(slot, Self.acceptsWord).pointee.store(0, ordering: .relaxed)
    bucketWord(slot, Self.numberWord).pointee.store(number, ordering: .relaxed)
    bucketWord(slot, Self.otherRequestsWord).pointee.store(otherRequests, ordering: .relaxed)
    bucketWord(slot, Self.otherAcceptsWord).pointee.store(otherAccepts, ordering: .relaxed)
    word(Self.currentWord).pointee.store(number, ordering: .releasing)
    return slot
  }

  /// Counts a request in the current bucket, which ``advance(to:)`` returned; the throttle's
  /// lock is held.
  func request(inCurrent slot: Int, factor: Double) -> Double {
    request(inSlot: slot, factor: factor)
  }

  /// Counts an accept in the current bucket, which ``advance(to:)`` returned.
  func accept(inCurrent slot: Int) {
    bucketWord(slot, Self.acceptsWord).pointee.wrappingAdd(1, ordering: .relaxed)
  }

  /// Takes back a request counted at `now`, when its bucket is still the current one.
  func withdrawRequest(now: Int64) {
    guard let slot = currentSlot(at: now) else { return }
    let number = bucketWord(slot, Self.numberWord).pointee.load(ordering: .relaxed)
    let width = Swift.max(self.width, 1)
    guard number == Int(Swift.max(now, 0) / width) else { return }
    bucketWord(slot, Self.requestsWord).pointee.wrappingSubtract(1, ordering: .relaxed)
  }

  /// The requests and accepts within the window at `now`, as ``ThrottleWindow/counts(now:)``
  /// sums them; nothing before the window is configured.
  func counts(now: Int64) -> (requests: Int, accepts: Int) {
    let width = self.width
    guard width > 0 else { return (0, 0) }
    let number = Int(Swift.max(now, 0) / width)
    var requests = 0
    var accepts = 0
    for slot in 0..<ThrottleWindow.bucketCount {
      let held = bucketWord(slot, Self.numberWord).pointee.load(ordering: .acquiring)
      guard held >= 0, held > number - ThrottleWindow.bucketCount, held <= number else {
        continue
      }
      requests &+= bucketWord(slot, Self.requestsWord).pointee.load(ordering: .relaxed)
      accepts &+= bucketWord(slot, Self.acceptsWord).pointee.load(ordering: .relaxed)
    }
    return (requests, accepts)
  }

  /// A uniform random number in [0, 1) from the throttle's own generator (SplitMix64 over
  /// one atomic state): the draws of runs whose random source is the system's.
  @inline(__always)
  func uniform() -> Double {
    let state = word(Self.randomWord).pointee.wrappingAdd(
      Int(truncatingIfNeeded: UInt64(0x9E37_79B9_7F4A_7C15)), ordering: .relaxed
    ).newValue
    var mixed = UInt64(bitPattern: Int64(state))
    mixed = (mixed ^ (mixed >> 30)) &* 0xBF58_476D_1CE4_E5B9
    mixed = (mixed ^ (mixed >> 27)) &* 0x94D0_49BB_1331_11EB
    mixed ^= mixed >> 31
    return Double(mixed >> 11) * 0x1p-53
  }
}
