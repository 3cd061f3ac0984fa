/// Consumes a value so that the optimizer cannot delete the work that produced it.
@inline(never)
@_optimize(none)
func blackHole<T>(_ value: T) {}

/// Returns its argument unchanged, hiding it from the optimizer so that inputs are not
/// constant-folded.
@inline(never)
@_optimize(none)
func opaque<T>(_ value: T) -> T {
  value
}
