import Foundation

/// The names error classes match by, read with the standard library's public reflection and
/// kept, so that classifying a failed attempt costs a lookup, not a reflection.
///
/// - A type's names (its own, then each superclass's, without module or generic arguments)
///   come from `String(describing:)` of the type and `Mirror`'s superclass chain, once per
///   type.
/// - An enum value's case name comes from `Mirror` (the label of a case's payload) or, for a
///   case without payload, from `String(describing:)` of the value when the enum does not
///   customize its description. It is kept by the value's bit pattern (up to 16 bytes): a
///   value's case is a function of its bits, so equal bits mean the same case. At most
///   ``caseLimit`` patterns are kept; then the cache starts over.
///
/// One process-wide instance, behind a lock (an `NSLock`: ThreadSanitizer on Linux sees its
/// locking, unlike `Synchronization.Mutex`'s).
final class ErrorNameCache: @unchecked Sendable {
  // Sound: `types` and `cases` are read and written only while `lock` is held.
  static let shared = ErrorNameCache()

  /// The most case names kept by bit pattern.
  static let caseLimit = 4096

  private struct TypeEntry {
    /// The type's name, then its superclasses' names.
    var names: [String]
    var isEnum: Bool
  }

  private struct CaseKey: Hashable {
    var type: ObjectIdentifier
    var low: UInt64
    var high: UInt64
  }

  private let lock = NSLock()
  private var types: [ObjectIdentifier: TypeEntry] = [:]
  private var cases: [CaseKey: String?] = [:]

  /// The names of the error's type and its superclasses; never empty.
  func typeNames(of error: any Error) -> [String] {
    entry(of: error).names
  }

  /// The enum case name of the error, or nil.
  func caseName(of error: any Error) -> String? {
    caseName(opening: error)
  }

  private func caseName<E: Error>(opening value: E) -> String? {
    guard entry(of: value).isEnum else { return nil }
    guard let key = Self.key(of: value) else { return Self.reflectCaseName(of: value) }
    lock.lock()
    let known = cases[key]
    lock.unlock()
    if let known { return known }
    let name = Self.reflectCaseName(of: value)
    lock.lock()
    if cases.count >= Self.caseLimit { cases.removeAll(keepingCapacity: true) }
    cases[key] = .some(name)
    lock.unlock()
    return name
  }

  private func entry<E: Error>(of error: E) -> TypeEntry {
    // The dynamic type: for a class, the instance's own class, not the static type it was
    // thrown as.
    let type = type(of: error)
    let id = ObjectIdentifier(type)
    lock.lock()
    let known = types[id]
    lock.unlock()
    if let known { return known }
    let mirror = Mirror(reflecting: error)
    var names = [Self.plainName(of: type)]
    var ancestor = mirror.superclassMirror
    while let current = ancestor {
      names.append(Self.plainName(of: current.subjectType))
      ancestor = current.superclassMirror
    }
    let entry = TypeEntry(names: names, isEnum: mirror.displayStyle == .enum)
    lock.lock()
    types[id] = entry
    lock.unlock()
    return entry
  }

  /// The bit pattern of a value of at most 16 bytes, with its type, or nil for a larger one.
  private static func key<E>(of value: E) -> CaseKey? {
    guard MemoryLayout<E>.size <= 16 else { return nil }
    var words: (UInt64, UInt64) = (0, 0)
    withUnsafeBytes(of: value) { source in
      withUnsafeMutableBytes(of: &words) { target in
        target.copyMemory(from: source)
      }
    }
    return CaseKey(type: ObjectIdentifier(E.self), low: words.0, high: words.1)
  }

  /// The case name by reflection: the payload's label, or the printed value of a case
  /// without payload when the enum does not print itself otherwise.
  private static func reflectCaseName<E>(of value: E) -> String? {
    let mirror = Mirror(reflecting: value)
    guard mirror.displayStyle == .enum else { return nil }
    if let label = mirror.children.first?.label { return label }
    guard mirror.children.isEmpty, !(value is any CustomStringConvertible),
      !(value is any CustomDebugStringConvertible), !(value is any TextOutputStreamable)
    else { return nil }
    return String(describing: value)
  }

  /// A type's name without module or generic arguments: `Envelope` for `Envelope<Int>`.
  private static func plainName(of type: Any.Type) -> String {
    let name = String(describing: type)
    guard let open = name.firstIndex(of: "<") else { return name }
    return String(name[..<open])
  }
}
