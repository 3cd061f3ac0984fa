import RetryPolicy

/// Policy names from method names: valid, unique, never a keyword.
enum PolicyNaming {
  /// The name a method config's first `name` gives (`helloworld_Greeter_SayHello`, or
  /// `allMethods`), made valid and unique; a warning when it had to change beyond turning
  /// `.` and `/` into `_`.
  static func unique(
    _ name: GRPCMethodName?, index: Int, used: inout Set<String>, path: String,
    reader: inout ConfigReader
  ) -> String {
    let joined = [name?.service ?? "", name?.method ?? ""].filter { !$0.isEmpty }
      .joined(separator: "_")
    let natural = String(
      joined.unicodeScalars.map { $0 == "." || $0 == "/" ? "_" : Character($0) })
    var candidate = natural.isEmpty ? "allMethods" : valid(natural)
    if candidate.isEmpty { candidate = "method\(index + 1)" }
    var result = candidate
    var suffix = 2
    while used.contains(result) {
      result = candidate + "_\(suffix)"
      suffix += 1
    }
    used.insert(result)
    if !natural.isEmpty, result != natural {
      reader.warn(
        path + ".name[0]",
        "the policy is named '\(result)': \(GRPCRecord.quoted(natural)) is no valid, unique"
          + " policy name")
    }
    return result
  }

  /// ASCII letters, digits and `_`, starting with a letter, and no keyword of the language.
  static func valid(_ text: String) -> String {
    var result = String(
      text.unicodeScalars.map { scalar -> Character in
        scalar.isASCII
          && (("a"..."z").contains(scalar) || ("A"..."Z").contains(scalar)
            || ("0"..."9").contains(scalar) || scalar == "_")
          ? Character(scalar) : "_"
      })
    if let first = result.unicodeScalars.first,
      !(("a"..."z").contains(first) || ("A"..."Z").contains(first))
    {
      result = "m" + result
    }
    let isFactor =
      result.hasPrefix(Keyword.x.text)
      && result.dropFirst(Keyword.x.text.count).allSatisfy { $0.isASCII && $0.isNumber }
    if LanguageWords.keywords.contains(result) || isFactor { result += "_" }
    return result
  }
}
