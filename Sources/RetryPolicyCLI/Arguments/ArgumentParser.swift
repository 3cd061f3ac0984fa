import RetryPolicy

/// A flag (`--json`) or an option with a value (`--seed N`) of a command.
struct OptionSpec: Sendable, Equatable {
  /// The long name without dashes: `json` for `--json`.
  var name: String
  /// A one-letter name for `-x`, if any.
  var shortName: Character?
  /// The name of the value in help (`N`), or nil for a flag that takes none.
  var valueName: String?
  /// The values the option accepts, or nil for any value.
  var allowedValues: [String]?
  /// One line of help.
  var help: String

  /// A flag: present or not.
  static func flag(_ name: String, short: Character? = nil, help: String) -> OptionSpec {
    OptionSpec(name: name, shortName: short, valueName: nil, allowedValues: nil, help: help)
  }

  /// An option that takes a value: `--name VALUE` or `--name=VALUE`.
  static func option(
    _ name: String, value: String, allowed: [String]? = nil, help: String
  ) -> OptionSpec {
    OptionSpec(name: name, shortName: nil, valueName: value, allowedValues: allowed, help: help)
  }

  /// Whether the option takes a value.
  var takesValue: Bool { valueName != nil }

  /// `--seed N`, `-h, --help`, as help lists it.
  var synopsis: String {
    var text = shortName.map { "-\($0), " } ?? ""
    text += "--" + name
    if let valueName {
      text += " " + (allowedValues.map { $0.joined(separator: "|") } ?? valueName)
    }
    return text
  }
}

/// What a command accepts and how its help reads.
struct CommandSpec: Sendable {
  /// The subcommand's name, such as `check`; empty for the tool itself.
  var name: String
  /// One line: what the command does.
  var abstract: String
  /// The usage lines, without the leading `retry-policy`.
  var usage: [String]
  /// The longer explanation, paragraphs of text.
  var discussion: String
  /// The flags and options; `--help` is added to every command.
  var options: [OptionSpec]
  /// The fewest positional arguments.
  var minimumArguments: Int
  /// The most positional arguments, or nil for any number.
  var maximumArguments: Int?
  /// The name of the positional arguments in messages, such as `FILE`.
  var argumentName: String
  /// Example command lines and what they do.
  var examples: [(command: String, meaning: String)]
  /// The exit statuses and what they mean.
  var exitStatuses: [(status: Int32, meaning: String)]

  /// The options including `--help`.
  var allOptions: [OptionSpec] {
    options + [ArgumentParser.helpOption]
  }

  /// `retry-policy check` or `retry-policy`.
  var fullName: String { name.isEmpty ? "retry-policy" : "retry-policy " + name }
}

/// A mistake on the command line: reported on standard error, exit status 2.
enum UsageError: Error, Equatable, Sendable {
  /// A subcommand that does not exist.
  case unknownSubcommand(String, suggestion: String?)
  /// An option the command does not have.
  case unknownOption(String, suggestion: String?)
  /// An option that needs a value and has none.
  case missingValue(option: String, valueName: String)
  /// A flag given a value: `--json=yes`.
  case unexpectedValue(option: String)
  /// An option whose value is not one it accepts.
  case invalidValue(option: String, value: String, expected: String, suggestion: String?)
  /// An option given twice.
  case duplicateOption(String)
  /// Fewer positional arguments than the command needs.
  case missingArgument(String)
  /// More positional arguments than the command takes.
  case unexpectedArgument(String)
  /// Any other misuse, with its message.
  case other(String)

  /// The message, in the compiler's style: lowercase, names quoted, `did you mean`.
  var message: String {
    switch self {
    case .unknownSubcommand(let name, let suggestion):
      "unknown subcommand '\(name)'" + didYouMean(suggestion)
    case .unknownOption(let name, let suggestion):
      "unknown option '\(name)'" + didYouMean(suggestion)
    case .missingValue(let option, let valueName):
      "option '\(option)' needs a value (\(valueName))"
    case .unexpectedValue(let option):
      "option '\(option)' takes no value"
    case .invalidValue(let option, let value, let expected, let suggestion):
      "invalid value '\(value)' for '\(option)'; expected \(expected)"
        + (suggestion.map { "; did you mean '\($0)'?" } ?? "")
    case .duplicateOption(let option):
      "option '\(option)' given more than once"
    case .missingArgument(let name):
      "missing \(name)"
    case .unexpectedArgument(let argument):
      "unexpected argument '\(argument)'"
    case .other(let message):
      message
    }
  }

  private func didYouMean(_ suggestion: String?) -> String {
    suggestion.map { "; did you mean '\($0)'?" } ?? ""
  }
}

/// A small command-line parser: long options (`--json`, `--seed 7`, `--seed=7`), short
/// flags (`-h`), positional arguments, `-` as an argument (standard input) and `--` to end
/// the options.
///
/// `--help` anywhere before `--` asks for help and skips every other check. Unknown options
/// get a "did you mean" over the command's options.
enum ArgumentParser {
  /// What a command line asks of a command: its help, or a run with these options.
  enum Request<Options: CommandOptions> {
    /// `--help` or `-h` was given (before any `--`): every other check is skipped.
    case help
    /// Run the command with these options.
    case run(Options)
  }

  /// Parses the arguments after the subcommand's name into the command's typed options.
  ///
  /// Each option's text is converted by its declaration's ``ValueParser`` as it is read;
  /// then the argument counts of `spec` and the options' own ``CommandOptions/validate()``
  /// are checked.
  static func parse<Options: CommandOptions>(
    _ arguments: [String], for spec: CommandSpec, as type: Options.Type = Options.self
  ) throws(UsageError) -> Request<Options> {
    let end = arguments.firstIndex(of: "--") ?? arguments.endIndex
    if arguments[..<end].contains(where: { $0 == "--help" || $0 == "-h" }) {
      return .help
    }
    let declarations = Options.declarations
    let specs = declarations.map(\.spec) + [helpOption]
    var options = Options()
    var given: Set<String> = []
    var index = arguments.startIndex
    var onlyArguments = false
    while index < arguments.endIndex {
      let argument = arguments[index]
      index += 1
      if onlyArguments || argument == "-" || !argument.hasPrefix("-")
        || isNegativeNumber(argument)
      {
        options.arguments.append(argument)
        continue
      }
      if argument == "--" {
        onlyArguments = true
        continue
      }
      let (name, inlineValue) = split(argument)
      guard let declaration = find(name, in: declarations) else {
        throw .unknownOption(name, suggestion: suggestion(for: name, in: specs))
      }
      let option = declaration.spec
      let shown = "--" + option.name
      guard let valueName = option.valueName else {
        if inlineValue != nil { throw .unexpectedValue(option: shown) }
        try declaration.store(&options, "")
        continue
      }
      let value: String
      if let inlineValue {
        value = inlineValue
      } else if index < arguments.endIndex, !looksLikeOption(arguments[index]) {
        value = arguments[index]
        index += 1
      } else {
        throw .missingValue(option: shown, valueName: valueName)
      }
      if given.contains(option.name) { throw .duplicateOption(shown) }
      given.insert(option.name)
      try declaration.store(&options, value)
    }
    if options.arguments.count < spec.minimumArguments {
      throw .missingArgument(spec.argumentName)
    }
    if let maximum = spec.maximumArguments, options.arguments.count > maximum {
      throw .unexpectedArgument(options.arguments[maximum])
    }
    try options.validate()
    return .run(options)
  }

  /// `-h, --help`, which every command has.
  static let helpOption = OptionSpec.flag("help", short: "h", help: "Show this help.")

  /// `--name=value` → (`--name`, `value`); anything else → (itself, nil).
  private static func split(_ argument: String) -> (String, String?) {
    guard argument.hasPrefix("--"), let equals = argument.firstIndex(of: "=") else {
      return (argument, nil)
    }
    return (String(argument[..<equals]), String(argument[argument.index(after: equals)...]))
  }

  private static func find<Options>(
    _ name: String, in declarations: [OptionDeclaration<Options>]
  ) -> OptionDeclaration<Options>? {
    if name.hasPrefix("--") {
      let long = name.dropFirst(2)
      return declarations.first { $0.spec.name == long }
    }
    let short = name.dropFirst()
    guard short.count == 1, let letter = short.first else { return nil }
    return declarations.first { $0.spec.shortName == letter }
  }

  /// The nearest option to a misspelt one, written with its dashes (`--json`).
  static func suggestion(for name: String, in options: [OptionSpec]) -> String? {
    let bare = String(name.drop { $0 == "-" })
    if let exact = options.first(where: { $0.name == bare }) { return "--" + exact.name }
    return Suggestion.nearest(to: bare, in: options.map(\.name)).map { "--" + $0 }
  }

  /// A value that starts like an option: `--json`, `-h`, but not `-` or `-5`.
  private static func looksLikeOption(_ argument: String) -> Bool {
    argument.hasPrefix("-") && argument != "-" && !isNegativeNumber(argument)
  }

  private static func isNegativeNumber(_ argument: String) -> Bool {
    guard argument.hasPrefix("-"), argument.count > 1 else { return false }
    return argument.dropFirst().allSatisfy { $0.isASCII && ($0.isNumber || $0 == ".") }
  }
}

/// The help text of commands.
enum HelpRendering {
  /// `USAGE`, `OPTIONS`, the discussion, `EXAMPLES` and `EXIT STATUS` of a command.
  static func help(for spec: CommandSpec, subcommands: [CommandSpec] = []) -> String {
    var output = "\(spec.fullName): \(spec.abstract)\n\n"
    output += "USAGE:\n"
    for line in spec.usage {
      output += "  retry-policy \(line)\n"
    }
    if !spec.discussion.isEmpty {
      output += "\n" + spec.discussion + "\n"
    }
    if !subcommands.isEmpty {
      output += "\nSUBCOMMANDS:\n"
      let width = subcommands.map(\.name.count).max() ?? 0
      for command in subcommands {
        output += "  " + pad(command.name, to: width) + "  " + command.abstract + "\n"
      }
    }
    output += "\nOPTIONS:\n"
    let options = spec.allOptions
    let width = options.map(\.synopsis.count).max() ?? 0
    for option in options {
      output += "  " + pad(option.synopsis, to: width) + "  " + option.help + "\n"
    }
    if !spec.examples.isEmpty {
      output += "\nEXAMPLES:\n"
      for example in spec.examples {
        output += "  " + example.command + "\n"
        output += "      " + example.meaning + "\n"
      }
    }
    if !spec.exitStatuses.isEmpty {
      output += "\nEXIT STATUS:\n"
      for entry in spec.exitStatuses {
        output += "  \(entry.status)  \(entry.meaning)\n"
      }
    }
    return output
  }

  private static func pad(_ text: String, to width: Int) -> String {
    text + String(repeating: " ", count: max(0, width - text.count))
  }
}
