// expect: underscored
extension Duration {
  var isPositive: Bool { _high > 0 || (_high == 0 && _low != 0) }
}
