/// An event of the storm simulation: what happens to the request in `slot` at `time`.
struct Event {
  /// When, in nanoseconds of virtual time.
  var time: Int64
  /// The order of scheduling, which breaks ties: events at one time happen first come first.
  var order: UInt64
  /// When the request arrived.
  var arrival: Int64
  /// The request's slot; -1 for a request that never failed, which needs none.
  var slot: Int32
  /// What happens (a raw ``StormEngine/EventKind``).
  var kind: UInt8

  @inline(__always)
  func precedes(_ other: Event) -> Bool {
    time != other.time ? time < other.time : order < other.order
  }
}

/// A binary min-heap of events by time, then order of scheduling: deterministic.
struct EventHeap {
  private var storage: [Event] = []
  private var scheduled: UInt64 = 0

  /// The earliest event.
  var top: Event? { storage.first }

  /// Schedules an event.
  mutating func push(time: Int64, arrival: Int64, slot: Int32, kind: UInt8) {
    scheduled &+= 1
    let event = Event(time: time, order: scheduled, arrival: arrival, slot: slot, kind: kind)
    storage.append(event)
    storage.withUnsafeMutableBufferPointer { heap in
      var child = heap.count - 1
      while child > 0 {
        let parent = (child - 1) / 2
        guard event.precedes(heap[parent]) else { break }
        heap[child] = heap[parent]
        child = parent
      }
      heap[child] = event
    }
  }

  /// Removes and returns the earliest event.
  mutating func pop() -> Event? {
    guard let first = storage.first else { return nil }
    let last = storage.removeLast()
    guard !storage.isEmpty else { return first }
    storage.withUnsafeMutableBufferPointer { heap in
      var parent = 0
      let count = heap.count
      while true {
        let left = 2 * parent + 1
        guard left < count else { break }
        var child = left
        if left + 1 < count, heap[left + 1].precedes(heap[left]) { child = left + 1 }
        guard heap[child].precedes(last) else { break }
        heap[parent] = heap[child]
        parent = child
      }
      heap[parent] = last
    }
    return first
  }
}

/// Latencies in microseconds, counted in buckets of at most 0.1 % width, for percentiles.
struct LatencyHistogram {
  private static let exact = 2048
  private var counts: [Int] = Array(repeating: 0, count: 2048 + 54 * 1024)
  private var total = 0

  /// Counts a latency given in nanoseconds.
  mutating func record(_ nanoseconds: Int64) {
    counts[Self.bucket(max(0, nanoseconds / 1000))] += 1
    total += 1
  }

  static func bucket(_ value: Int64) -> Int {
    guard value >= exact else { return Int(value) }
    let exponent = Int64.bitWidth - 1 - value.leadingZeroBitCount
    let mantissa = Int((value >> (exponent - 10)) & 1023)
    return exact + (exponent - 11) * 1024 + mantissa
  }

  static func lowerBound(_ bucket: Int) -> Int64 {
    guard bucket >= exact else { return Int64(bucket) }
    let exponent = (bucket - exact) / 1024 + 11
    let mantissa = Int64((bucket - exact) % 1024) | 1024
    return mantissa << (exponent - 10)
  }

  /// The latency below which `fraction` of the counted ones fall, in seconds; nil if none.
  func percentile(_ fraction: Double) -> Double? {
    guard total > 0 else { return nil }
    let rank = max(1, Int((Double(total) * fraction).rounded(.up)))
    var seen = 0
    for (bucket, count) in counts.enumerated() where count > 0 {
      seen += count
      if seen >= rank { return Double(Self.lowerBound(bucket)) / 1e6 }
    }
    return nil
  }
}
