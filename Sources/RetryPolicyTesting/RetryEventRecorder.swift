import RetryPolicy
import RetryPolicySimulation

/// Collects the events of runs, for tests to inspect.
///
///     let recorder = RetryEventRecorder()
///     let environment = RetryEnvironment(observer: recorder.observer)
///     _ = try? await policy.run(in: environment) { try await operation() }
///     #expect(recorder.summaries.last?.attempts == 3)
public final class RetryEventRecorder: Sendable {
  private let recorded = Locked<[RetryEvent]>([])

  /// Creates an empty recorder.
  public init() {}

  /// An observer to put in a `RetryEnvironment`; it records every event it sees.
  public var observer: @Sendable (RetryEvent) -> Void {
    { [self] event in record(event) }
  }

  /// Records one event.
  public func record(_ event: RetryEvent) {
    recorded.withLock { $0.append(event) }
  }

  /// The events so far, in order.
  public var events: [RetryEvent] {
    recorded.withLock { $0 }
  }

  /// The summaries of the finished runs, in order.
  public var summaries: [RetrySummary] {
    events.compactMap { event in
      if case .finished(let summary) = event { summary } else { nil }
    }
  }

  /// The delays of the scheduled retries, in order.
  public var scheduledDelays: [Duration] {
    events.compactMap { event in
      if case .retryScheduled(_, _, let delay) = event { delay } else { nil }
    }
  }
}
