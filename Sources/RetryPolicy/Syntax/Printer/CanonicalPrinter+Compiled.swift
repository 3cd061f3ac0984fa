// Printing compiled policies as a policy file, with comments: what `import` writes. The text
// of each policy is the compiled value's own (`CompiledPolicy.description`, which spells each
// clause from the clause table); this file lays the policies out as `print(_: SourceFileSyntax)`
// does, without making a syntax tree of them.

extension CanonicalPrinter {
  /// A compiled policy of a printed file, with the comment lines that go before it.
  package struct CommentedPolicy: Sendable, Hashable {
    /// The name after `policy`.
    package var name: String
    /// The comments printed on the lines before the policy, each made a comment line (see
    /// ``CanonicalPrinter/commentLine(_:)``).
    package var comments: [String]
    /// The policy; its own name is not read (``name`` is printed).
    package var policy: CompiledPolicy

    /// A policy named `name`, after `comments`.
    package init(name: String, comments: [String] = [], policy: CompiledPolicy) {
      self.name = name
      self.comments = comments
      self.policy = policy
    }
  }

  /// A policy file of compiled policies in canonical form, ending with a line end (empty when
  /// there is nothing to print).
  ///
  /// The `header` comments come first, then each policy after its own comments, then the
  /// `trailing` comments; one blank line stands between the header, each policy and the
  /// trailing comments. A policy of one line prints as `policy NAME = LINE`, a longer one as
  /// a block, as the formatter prints them:
  ///
  ///     # imported from service.json
  ///
  ///     # grpc-service-config: {"name": [{"service": "a"}]}
  ///     policy a = retry 2 on unavailable backoff 1s x1.6 jitter 20% max 2m
  package static func print(
    header: [String] = [], policies: [CommentedPolicy], trailing: [String] = []
  ) -> String {
    var output = header.map(commentLine)
    for (index, entry) in policies.enumerated() {
      if index > 0 || !header.isEmpty { output.append("") }
      output += entry.comments.map(commentLine)
      let lines = entry.policy.description.split(separator: "\n").map(String.init)
      let head = "\(Keyword.policy.text) \(entry.name)"
      if lines.count == 1 {
        output.append(head + " = " + lines[0])
      } else {
        output.append(head + " {")
        output += lines.map { indentation + $0 }
        output.append("}")
      }
    }
    if !trailing.isEmpty {
      if !output.isEmpty { output.append("") }
      output += trailing.map(commentLine)
    }
    return output.isEmpty ? "" : output.joined(separator: "\n") + "\n"
  }

  /// Text as one comment line of printable ASCII: `# ` before it unless it starts with `#`,
  /// every other character as `\u{…}` (so no text ends the comment early), no blanks at
  /// the end.
  package static func commentLine(_ text: String) -> String {
    var result = text.hasPrefix("#") ? "" : "# "
    for scalar in text.unicodeScalars {
      if scalar.value >= 0x20, scalar.value < 0x7F {
        result.unicodeScalars.append(scalar)
      } else {
        result += "\\u{" + String(scalar.value, radix: 16) + "}"
      }
    }
    while result.hasSuffix(" ") { result.removeLast() }
    return result
  }
}
