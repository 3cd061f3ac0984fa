import Foundation

/// The names error classes match by, read with the standard library's public reflection and
/// kept, so that classifying a failed attempt costs a lookup, not a reflection.
///
/// - A type's names (its own, then each superclass's, without module or generic arguments)
///   come from `String(describing:)` of the type and `Mirror`'s superclass chain, once per
///   type.
/// - An enum value's case name comes from `Mirror` (the label of a case's payload) or, for a
///   case without payload, from `String(describing:)` of the value when the enum does not
///   customize its description. It is kept by the value's bit pattern (up to 72 bytes: a 64-byte payload and its tag): a
///   value's case is a function of its bits, so equal bits mean the same case. At most
///   ``caseLimit`` patterns are kept; then the cache starts over. Public reflection cannot
///   read the case's discriminator alone, so a value whose payload bits were not seen before
///   (a message `String` built at run time, another code) is reflected once; see
///   `ProcessWideState.md` for what each shape costs.
///
/// One process-wide instance, behind a lock (an `NSLock`: ThreadSanitizer on Linux sees its
/// locking, unlike `Synchronization.Mutex`'s).
package final class ErrorNameCache: @unchecked Sendable {
  // Sound: `types`, `cases` and `reflectionCounts` are read and written only while `lock` is
  // held.
  package static let shared = ErrorNameCache()

  /// The most case names kept by bit pattern.
  static let caseLimit = 4096

  private struct TypeEntry {
    /// The type's name, then its superclasses' names.
    var names: [String]
    var isEnum: Bool
  }

  /// A value's type and bit pattern, up to ``keyBytes`` bytes, zero-padded.
  private struct CaseKey: Hashable {
    var type: ObjectIdentifier
    var words: (UInt64, UInt64, UInt64, UInt64, UInt64, UInt64, UInt64, UInt64, UInt64)

    static func == (lhs: CaseKey, rhs: CaseKey) -> Bool {
      lhs.type == rhs.type && lhs.words.0 == rhs.words.0 && lhs.words.1 == rhs.words.1
        && lhs.words.2 == rhs.words.2 && lhs.words.3 == rhs.words.3
        && lhs.words.4 == rhs.words.4 && lhs.words.5 == rhs.words.5
        && lhs.words.6 == rhs.words.6 && lhs.words.7 == rhs.words.7
        && lhs.words.8 == rhs.words.8
    }

    func hash(into hasher: inout Hasher) {
      // The words mixed into one first (a multiply-xorshift per word): the hasher then runs
      // once, not ten times, on the path of every classified failure.
      var mixed = UInt64(UInt(bitPattern: type))
      withUnsafeBytes(of: words) { bytes in
        for word in bytes.bindMemory(to: UInt64.self) {
          mixed = (mixed ^ word) &* 0x9E37_79B9_7F4A_7C15
          mixed ^= mixed >> 29
        }
      }
      hasher.combine(mixed)
    }
  }

  /// The largest value kept by its bit pattern: a 64-byte payload and its tag.
  static let keyBytes = 72

  private let lock = NSLock()
  private var types: [ObjectIdentifier: TypeEntry] = [:]
  private var cases: [CaseKey: String?] = [:]
  /// The reflections of values made, by type: what tests read to see that a lookup spared one.
  private var reflectionCounts: [ObjectIdentifier: Int] = [:]

  /// The case-name reflections made so far of values of `type`.
  package func reflections(of type: Any.Type) -> Int {
    lock.withLock { reflectionCounts[ObjectIdentifier(type), default: 0] }
  }

  /// The names of the error's type and its superclasses; never empty.
  func typeNames(of error: any Error) -> [String] {
    entry(of: error).names
  }

  /// The enum case name of the error, or nil.
  func caseName(of error: any Error) -> String? {
    caseName(opening: error)
  }

  private func caseName<E: Error>(opening value: E) -> String? {
    let id = ObjectIdentifier(E.self)
    let key = Self.key(of: value)
    // Only enum values are kept by bit pattern, so a hit needs no look at the type.
    if let key {
      lock.lock()
      let known = cases[key]
      lock.unlock()
      if let known { return known }
    }
    guard entry(of: value).isEnum else { return nil }
    let name = Self.reflectCaseName(of: value)
    lock.lock()
    reflectionCounts[id, default: 0] += 1
    if let key {
      if cases.count >= Self.caseLimit { cases.removeAll(keepingCapacity: true) }
      cases[key] = .some(name)
    }
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

  /// The bit pattern of a value of at most ``keyBytes`` bytes, with its type, or nil for a
  /// larger one.
  private static func key<E>(of value: E) -> CaseKey? {
    guard MemoryLayout<E>.size <= keyBytes else { return nil }
    var words: (UInt64, UInt64, UInt64, UInt64, UInt64, UInt64, UInt64, UInt64, UInt64) =
      (0, 0, 0, 0, 0, 0, 0, 0, 0)
    withUnsafeBytes(of: value) { source in
      withUnsafeMutableBytes(of: &words) { target in
        target.copyMemory(from: source)
      }
    }
    return CaseKey(type: ObjectIdentifier(E.self), words: words)
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
