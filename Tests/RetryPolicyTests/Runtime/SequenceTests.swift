import RetryPolicy
import RetryPolicyTesting
import Synchronization
import Testing

@Suite("Runtime: sequences")
struct RuntimeSequenceTests {
  /// A source whose first `failing` subscriptions yield 1, 2 (unless not `delivering`) and
  /// then fail; later ones yield 1, 2, 3 and finish.
  final class Source: Sendable {
    let failing: Int
    let delivering: Bool
    let subscriptions = Atomic(0)

    init(failing: Int, delivering: Bool = true) {
      self.failing = failing
      self.delivering = delivering
    }

    func subscribe() -> AsyncThrowingStream<Int, any Error> {
      let number = subscriptions.add(1, ordering: .relaxed).newValue
      return AsyncThrowingStream { continuation in
        if delivering || number > failing {
          continuation.yield(1)
          continuation.yield(2)
        }
        if number <= failing {
          continuation.finish(throwing: ConnectionLost())
        } else {
          continuation.yield(3)
          continuation.finish()
        }
      }
    }
  }

  @Test("a failed sequence is subscribed again after the delay, delivering its elements again")
  func resubscribes() async throws {
    let clock = ImmediateClock()
    let source = Source(failing: 2)
    let policy = policy(RetryRule(behavior: .delayed(maxCount: 3, delay: .seconds(1))))
    var elements: [Int] = []
    for try await element in policy.retrying(in: RetryEnvironment(clock: clock), source.subscribe) {
      elements.append(element)
    }
    #expect(elements == [1, 2, 1, 2, 1, 2, 3])
    #expect(source.subscriptions.load(ordering: .relaxed) == 3)
    #expect(clock.now.offset == .seconds(2))
  }

  @Test("when retries run out the sequence throws the last error unchanged")
  func exhausted() async throws {
    let source = Source(failing: 10, delivering: false)
    let policy = policy(RetryRule(behavior: .immediate(maxCount: 1)))
    var elements: [Int] = []
    await #expect(throws: ConnectionLost()) {
      for try await element in policy.retrying(source.subscribe) { elements.append(element) }
    }
    #expect(elements == [])
    #expect(source.subscriptions.load(ordering: .relaxed) == 2)
  }

  @Test("a subscription that delivered starts a fresh count and a fresh 'within' window")
  func longLived() async throws {
    let clock = ImmediateClock()
    let source = Source(failing: 30)
    // Each reconnect waits 1 s: 30 of them are far past both 'retry 2' and 'within 5s'.
    let policy = policy(
      RetryRule(behavior: .delayed(maxCount: 2, delay: .seconds(1))), within: .seconds(5))
    var count = 0
    for try await _ in policy.retrying(in: RetryEnvironment(clock: clock), source.subscribe) {
      count += 1
    }
    #expect(source.subscriptions.load(ordering: .relaxed) == 31)
    #expect(count == 30 * 2 + 3)
    #expect(clock.now.offset == .seconds(30))
  }

  @Test("a cancelled inner stream ends the sequence with CancellationError, not a normal end")
  func cancelledInnerStream() async throws {
    let policy = policy(RetryRule(behavior: .immediate(maxCount: 3)))
    let recorder = RetryEventRecorder()
    let sequence = policy.retrying(in: RetryEnvironment(observer: recorder.observer)) {
      AsyncStream<Int> { _ in }
    }
    let iteration = Task {
      for try await _ in sequence {}
    }
    iteration.cancel()
    await #expect(throws: CancellationError.self) { try await iteration.value }
    #expect(recorder.summaries.map(\.outcome) == [.failed(.cancelled)])
  }

  @Test("an error no rule matches ends the sequence at once")
  func unmatched() async throws {
    let source = Source(failing: 10)
    let policy = policy(RetryRule(behavior: .immediate(maxCount: 5), errorClasses: ["timeout"]))
    await #expect(throws: ConnectionLost()) {
      for try await _ in policy.retrying(source.subscribe) {}
    }
    #expect(source.subscriptions.load(ordering: .relaxed) == 1)
  }

  @Test("cancelling the iterating task during a wait ends it with CancellationError")
  func cancelled() async throws {
    let clock = ManualClock()
    let source = Source(failing: 10)
    let policy = policy(RetryRule(behavior: .delayed(maxCount: 5, delay: .seconds(3600))))
    let sequence = policy.retrying(in: RetryEnvironment(clock: clock), source.subscribe)
    let iteration = Task {
      var count = 0
      for try await _ in sequence { count += 1 }
      return count
    }
    await clock.waitForSleepers(count: 1)
    iteration.cancel()
    await #expect(throws: CancellationError.self) { try await iteration.value }
    #expect(source.subscriptions.load(ordering: .relaxed) == 1)
  }

  @Test("an observer sees one attempt per subscription and a summary at the end")
  func events() async throws {
    let recorder = RetryEventRecorder()
    let source = Source(failing: 1)
    let policy = policy(RetryRule(behavior: .immediate(maxCount: 3)))
    for try await _ in policy.retrying(
      in: RetryEnvironment(observer: recorder.observer), source.subscribe)
    {}
    #expect(
      recorder.events.map(line) == [
        "start 1", "fail 1 ConnectionLost()", "retry 1 rule 0 after 0.0", "start 2",
        "finish 2 waited 0.0 succeeded",
      ])
  }
}
