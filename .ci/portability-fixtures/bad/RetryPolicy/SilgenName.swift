// expect: underscored
@_silgen_name("swift_EnumCaseName")
private func enumCaseName<Value>(_ value: Value) -> UnsafePointer<CChar>?
