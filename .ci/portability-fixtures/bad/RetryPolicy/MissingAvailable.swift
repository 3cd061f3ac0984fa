// expect: availability
/// Attoseconds, exactly.
public func exact(_ duration: Duration) -> Int128 {
  duration.attoseconds
}
