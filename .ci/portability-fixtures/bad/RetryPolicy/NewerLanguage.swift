// expect: tools-version
struct Runner {
  nonisolated(nonsending) func run(_ body: () async throws -> Void) async rethrows {
    try await body()
  }
}
