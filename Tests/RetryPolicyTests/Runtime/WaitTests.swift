import RetryPolicy
import RetryPolicySimulation
import RetryPolicyTesting
import Testing

/// Polls, for at most about a second of real time (a passing test waits a few ms), until
/// `condition` holds.
private func eventually(_ condition: @Sendable () -> Bool) async -> Bool {
  for _ in 0..<1000 {
    if condition() { return true }
    try? await Task.sleep(for: .milliseconds(1))
  }
  return condition()
}

@Suite("Runtime: waits on the system clocks free their memory when they end")
struct RuntimeWaitTests {
  @Test("a retry's delay, cancelled during the wait, frees its timer at once")
  func cancelledDelayIsFreed() async throws {
    let census = SystemTimerCensus()
    let policy = try compile(policy: "retry 1 delay 1h")
    let run = Task {
      try await SystemTimerCensus.$current.withValue(census) {
        try await policy.run { throw ConnectionLost() }
      }
    }
    #expect(await eventually { census.armed == 1 })
    run.cancel()
    await #expect(throws: CancellationError.self) { try await run.value }
    #expect(await eventually { census.live == 0 })
  }

  @Test("a retry's delay on the continuous clock counts the part it waited, cut short or not")
  func waitedDelayIsCounted() async throws {
    let census = SystemTimerCensus()
    let recorder = RetryEventRecorder()
    let policy = try compile(policy: "retry 2 delay 1h")
    let run = Task {
      try await SystemTimerCensus.$current.withValue(census) {
        try await policy.run(in: RetryEnvironment(observer: recorder.observer)) {
          throw ConnectionLost()
        }
      }
    }
    #expect(await eventually { census.armed == 1 })
    run.cancel()
    await #expect(throws: CancellationError.self) { try await run.value }
    let waited = try #require(recorder.summaries.first?.totalDelay)
    #expect(waited >= .zero && waited < .seconds(60))
    #expect(recorder.summaries.first?.outcome == .failed(.cancelled))
    let short = try compile(policy: "retry 1 delay 2ms")
    let finished = RetryEventRecorder()
    _ = try? await short.run(in: RetryEnvironment(observer: finished.observer)) {
      throw ConnectionLost()
    }
    #expect(finished.summaries.map(\.totalDelay) == [.milliseconds(2)])
  }

  @Test("a Retry-After wait, cancelled, frees its timer at once")
  func cancelledRetryAfterIsFreed() async throws {
    let census = SystemTimerCensus()
    let policy = try compile(policy: "retry 1 backoff 1s honoring retry-after")
    let run = Task {
      try await SystemTimerCensus.$current.withValue(census) {
        try await policy.run { throw ThrottledError(retryAfter: .seconds(3600)) }
      }
    }
    #expect(await eventually { census.armed == 1 })
    run.cancel()
    await #expect(throws: CancellationError.self) { try await run.value }
    #expect(await eventually { census.live == 0 })
  }

  @Test("a hedge timer is freed when the first attempt wins")
  func hedgeTimerIsFreed() async throws {
    let census = SystemTimerCensus()
    let policy = try compile(policy: "retry 1 on unavailable hedge 1 after 1h")
    let value = try await SystemTimerCensus.$current.withValue(census) {
      try await policy.runHedged { _ in
        // Wins once the hedge timer is armed.
        _ = await eventually { census.armed == 1 }
        return 7
      }
    }
    #expect(value == 7)
    #expect(census.armed == 1)
    #expect(await eventually { census.live == 0 })
  }

  @Test("a delay that ends wakes the run and frees its timer")
  func endedDelayIsFreed() async throws {
    let census = SystemTimerCensus()
    let policy = try compile(policy: "retry 1 delay 1ms")
    let attempts = Locked(0)
    try await SystemTimerCensus.$current.withValue(census) {
      try await policy.run {
        let number = attempts.withLock {
          $0 += 1; return $0
        }
        if number == 1 { throw RPCError.unavailable }
      }
    }
    #expect(attempts.withLock { $0 } == 2)
    #expect(census.armed == 1)
    #expect(await eventually { census.live == 0 })
  }
  @Test("waits on the process's timer heap each end after their own time, never before")
  func heapWaitsEndInOrder() async throws {
    // Real time: the order in which the tasks log their ends depends on the machine's load
    // (a task that starts late arms its wait late), so what is checked is what every load
    // keeps: no wait ends before its own deadline, and every timer is armed once and freed.
    let census = SystemTimerCensus()
    let log = Log()
    try await withThrowingTaskGroup(of: Void.self) { group in
      for milliseconds in [6, 1, 3] {
        group.addTask {
          let start = ContinuousClock.now
          try await SystemTimerHeap.shared.sleep(
            for: .milliseconds(milliseconds), census: census)
          let waited = start.duration(to: .now)
          log.append(waited >= .milliseconds(milliseconds) ? "\(milliseconds)" : "early")
        }
      }
      try await group.waitForAll()
    }
    #expect(log.entries.sorted() == ["1", "3", "6"])
    #expect(census.armed == 3)
    #expect(census.live == 0)
  }

  @Test("cancelled waits end at once, and the heap drops their entries")
  func cancelledHeapWaitsAreFreed() async throws {
    let census = SystemTimerCensus()
    let waits = Task {
      await withTaskGroup(of: Bool.self) { group in
        for _ in 0..<300 {
          group.addTask {
            do {
              try await SystemTimerHeap.shared.sleep(for: .seconds(3600), census: census)
              return false
            } catch {
              return error is CancellationError
            }
          }
        }
        var cancelled = 0
        for await wasCancelled in group where wasCancelled { cancelled += 1 }
        return cancelled
      }
    }
    #expect(await eventually { census.armed == 300 })
    waits.cancel()
    #expect(await waits.value == 300)
    #expect(census.live == 0)
    let (entries, waiting) = SystemTimerHeap.shared.counts
    #expect(entries <= 2 * waiting + 64)
  }
}
