import RetryPolicy
import RetryPolicyTesting
import Synchronization
import Testing

@Suite("Runtime: sequences")
struct RuntimeSequenceTests {
  /// A source whose first `failing` subscriptions yield 1, 2 and then fail; later ones yield
  /// 1, 2, 3 and finish.
  final class Source: Sendable {
    let failing: Int
    let subscriptions = Atomic(0)

    init(failing: Int) {
      self.failing = failing
    }

    func subscribe() -> AsyncThrowingStream<Int, any Error> {
      let number = subscriptions.add(1, ordering: .relaxed).newValue
      return AsyncThrowingStream { continuation in
        continuation.yield(1)
        continuation.yield(2)
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
    let source = Source(failing: 10)
    let policy = policy(RetryRule(behavior: .immediate(maxCount: 1)))
    var elements: [Int] = []
    await #expect(throws: ConnectionLost()) {
      for try await element in policy.retrying(source.subscribe) { elements.append(element) }
    }
    #expect(elements == [1, 2, 1, 2])
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
