/// A command's options as one typed value, read once from the command line.
///
/// Each command declares a struct of its options with their defaults, and a list of
/// ``OptionDeclaration``s binding each `--name` to a property and to the ``ValueParser`` that
/// converts its text. ``ArgumentParser`` fills the struct; the command never sees a string
/// it has to convert:
///
///     struct Options: CommandOptions {
///       var seed: UInt64 = 1
///       var isJSON = false
///       var arguments: [String] = []
///       static var declarations: [OptionDeclaration<Self>] {
///         [
///           .option("seed", value: "N", help: "Seed (0 or more).", \.seed, .seed),
///           .flag("json", help: "Print JSON.", \.isJSON),
///         ]
///       }
///     }
protocol CommandOptions: Sendable {
  /// The options as they are when none is given.
  init()
  /// The positional arguments, in order.
  var arguments: [String] { get set }
  /// Every flag and option of the command, bound to its property.
  static var declarations: [OptionDeclaration<Self>] { get }
  /// Checks what no single option can: options that need each other or exclude each other.
  func validate() throws(UsageError)
}

extension CommandOptions {
  func validate() throws(UsageError) {}

  /// The flags and options, as help lists them.
  static var optionSpecs: [OptionSpec] { declarations.map(\.spec) }
}

/// The options of a command that has none.
struct NoOptions: CommandOptions {
  var arguments: [String] = []
  static var declarations: [OptionDeclaration<Self>] { [] }
}

/// One flag or option of a command: its name and help, and how its value reaches its
/// property.
struct OptionDeclaration<Options> {
  /// The name, value name and help.
  var spec: OptionSpec
  /// Stores the option in the options, given its text (empty for a flag).
  var store: (inout Options, String) throws(UsageError) -> Void

  /// A flag: its property becomes true when it is given.
  static func flag(
    _ name: String, short: Character? = nil, help: String,
    _ property: WritableKeyPath<Options, Bool>
  ) -> OptionDeclaration {
    OptionDeclaration(spec: .flag(name, short: short, help: help)) { options, _ in
      options[keyPath: property] = true
    }
  }

  /// An option with a value, converted by `parser` into an optional property.
  static func option<Value>(
    _ name: String, value: String, help: String,
    _ property: WritableKeyPath<Options, Value?>, _ parser: ValueParser<Value>
  ) -> OptionDeclaration {
    OptionDeclaration(
      spec: .option(name, value: value, allowed: parser.choices, help: help)
    ) { (options: inout Options, text: String) throws(UsageError) in
      options[keyPath: property] = try parser.parse(text, option: "--" + name)
    }
  }

  /// An option with a value, converted by `parser` into a property that has a default.
  static func option<Value>(
    _ name: String, value: String, help: String,
    _ property: WritableKeyPath<Options, Value>, _ parser: ValueParser<Value>
  ) -> OptionDeclaration {
    OptionDeclaration(
      spec: .option(name, value: value, allowed: parser.choices, help: help)
    ) { (options: inout Options, text: String) throws(UsageError) in
      options[keyPath: property] = try parser.parse(text, option: "--" + name)
    }
  }

  /// The declarations of a group of options shared by several commands (such as
  /// ``PolicySelection``), stored in one property of these options.
  static func group<Group: CommandOptions>(
    _ property: WritableKeyPath<Options, Group>
  ) -> [OptionDeclaration] {
    Group.declarations.map { inner in
      OptionDeclaration(spec: inner.spec) {
        (options: inout Options, text: String) throws(UsageError) in
        try inner.store(&options[keyPath: property], text)
      }
    }
  }
}

extension Array {
  /// The declarations of a group of options (such as ``PolicySelection``) stored in one
  /// property of a command's options: `[…] + .group(\.selection)`.
  static func group<Options, Group: CommandOptions>(
    _ property: WritableKeyPath<Options, Group>
  ) -> [OptionDeclaration<Options>] where Element == OptionDeclaration<Options> {
    OptionDeclaration.group(property)
  }
}

/// Where a command that works on one policy takes it from: the words of the command line
/// (`-` for standard input), or `--file F` with `--policy NAME` when the file has several.
struct PolicySelection: CommandOptions {
  /// The policy file given with `--file`.
  var file: String?
  /// The policy's name in that file, given with `--policy`.
  var policyName: String?
  /// The policy's words on the command line (not used as a group: the command's own
  /// positional arguments are the words).
  var arguments: [String] = []

  static var declarations: [OptionDeclaration<Self>] {
    [
      .option("file", value: "FILE", help: "Take the policy from this policy file.", \.file, .text),
      .option(
        "policy", value: "NAME", help: "The policy's name in the file given by --file.",
        \.policyName, .text),
    ]
  }

  func validate() throws(UsageError) {
    if policyName != nil, file == nil { throw .other("'--policy' needs '--file'") }
  }
}
