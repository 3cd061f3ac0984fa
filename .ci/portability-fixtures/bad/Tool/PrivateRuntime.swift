// expect: underscored
func typeName(_ value: Any) -> String {
  let (start, count) = _getTypeName(type(of: value), qualified: false)
  return String(decoding: UnsafeBufferPointer(start: start, count: count), as: UTF8.self)
}
