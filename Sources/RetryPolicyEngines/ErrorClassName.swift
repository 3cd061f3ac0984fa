import RetryPolicy

/// The built-in error classes the engines name.
enum ErrorClassName {
  /// The class of an attempt cut off by the policy's per-attempt limit: the built-in class
  /// named like that policy-wide clause (taken from the language's tables, not spelt here).
  static let timeout: String? = LanguageWords.policyWideKeywords.first {
    Vocabulary.builtInErrorClasses.contains($0)
  }
}
