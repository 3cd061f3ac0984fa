import RetryPolicy

/// A method config read: its policy and what goes around it.
struct ImportedPolicy {
  /// The `name` list, as given.
  var names: [GRPCMethodName]
  /// The policy's name in the file.
  var name = ""
  /// The comments printed before it, the record last.
  var comments: [String]
  /// The policy itself, without a name.
  var policy: CompiledPolicy
}
