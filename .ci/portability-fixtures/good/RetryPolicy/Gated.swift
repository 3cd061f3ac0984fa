/// Exact.
@available(macOS 15, iOS 18, tvOS 18, watchOS 11, visionOS 2, *)
public func exact(_ duration: Duration) -> Int128 {
  duration.attoseconds
}

@available(macOS 15.0, iOS 18.0, tvOS 18.0, watchOS 11.0, visionOS 2.0, *)
extension Duration {
  /// Nested: the extension's availability covers it.
  var counter: Int {
    let lock = Mutex(0)
    return lock.withLock { $0 }
  }
}

func checked(_ duration: Duration) -> Bool {
  if #available(macOS 15, iOS 18, tvOS 18, watchOS 11, visionOS 2, *) {
    return duration.attoseconds > 0
  }
  return duration > .zero
}

// Names in comments and strings do not count: _hidden, Int128, @_silgen_name.
let text = "_hidden Int128 @_silgen_name import Glibc"
let _ = text
