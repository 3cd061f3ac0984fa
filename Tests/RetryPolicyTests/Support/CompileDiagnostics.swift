@testable import RetryPolicy

/// The diagnostics of compiling `text`, as `LINE:COL id`, for table-driven syntax tests.
func diagnosticsOf(_ text: String) -> [String] {
  do {
    _ = try compile(policy: text)
    return []
  } catch let error as PolicyCompileError {
    return error.diagnostics.map { "\($0.line):\($0.column) \($0.id.rawValue)" }
  } catch {
    return ["\(error)"]
  }
}
