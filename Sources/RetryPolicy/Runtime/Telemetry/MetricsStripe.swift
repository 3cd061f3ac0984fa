// The POSIX thread-specific values come through Foundation, as the C library does in the
// other files of this folder (PolicyFileReader.swift is the one file that imports it).
import Foundation
import Synchronization

/// The stripe of every ``PolicyMetrics``' counters that the current thread writes.
///
/// The first ``ownedCount`` threads that record (two more than the processor count, at most
/// 16, which bounds each policy's counters at 20 stripes on any host) each own a stripe for their whole life: no other thread writes it, so an addition
/// there is a plain load and store of the cell (a relaxed atomic load and store, which readers
/// may read at any time), not a locked read-modify-write, which costs several times as much
/// and is most of what recording costs. A thread that ends gives its stripe back (a
/// thread-specific value's destructor), and the next thread to record takes it over, its
/// counts included: the release of the stripe and the acquiring claim order the last writes
/// of one owner before the first of the next. Every further thread adds atomically to one of
/// ``sharedCount`` shared stripes, chosen by its thread handle. The thread's stripe is kept in
/// a POSIX thread-specific value; where there is none, every thread uses a shared stripe.
enum MetricsStripe {
  /// The stripes that threads own, one each: two more than the processors, at most 16.
  static let ownedCount = Swift.min(
    Swift.max(ProcessInfo.processInfo.activeProcessorCount, 1) + 2, 16)
  /// The stripes the threads that own none share.
  static let sharedCount = 4
  /// The stripes of every policy's counters: the owned ones, then the shared ones.
  static let count = ownedCount + sharedCount

  /// The thread-specific key that holds each thread's stripe, found once (a static's lazy
  /// initialization costs a call at each use) and kept by the counters that use it.
  struct Key: Sendable {
    #if canImport(Glibc) || canImport(Musl) || canImport(Darwin)
      fileprivate let raw: pthread_key_t
    #endif

    /// The process's key.
    static var process: Key {
      #if canImport(Glibc) || canImport(Musl) || canImport(Darwin)
        Key(raw: ThreadSlots.key)
      #else
        Key()
      #endif
    }
  }

  /// The current thread's stripe, held under `key`, and whether the thread owns it.
  @inline(__always)
  static func current(_ key: Key) -> (stripe: Int, isOwned: Bool) {
    #if canImport(Glibc) || canImport(Musl) || canImport(Darwin)
      // The value is the stripe times two, plus one for an owned stripe, plus one: never
      // null once set.
      let code =
        pthread_getspecific(key.raw).map { Int(bitPattern: $0) &- 1 }
        ?? ThreadSlots.claim(key.raw)
      return (code &>> 1, code & 1 == 1)
    #else
      return (ownedCount, false)
    #endif
  }

  /// A shared stripe for a thread that owns none, by its handle.
  static func sharedStripe() -> Int {
    let mixed = platformThreadIdentity() &* 0x9E37_79B9_7F4A_7C15
    return ownedCount + Int(truncatingIfNeeded: mixed >> 32) % sharedCount
  }
}

#if canImport(Glibc) || canImport(Musl) || canImport(Darwin)
  /// The owned stripes that are free (one bit each) and the thread-specific key that holds a
  /// thread's stripe.
  private enum ThreadSlots {
    /// Bit `i` is set while stripe `i` has no owner.
    static let free = Atomic<UInt64>((1 << UInt64(MetricsStripe.ownedCount)) - 1)

    /// The key of the thread-specific value holding the thread's stripe (see
    /// ``MetricsStripe/current(_:)``); its destructor frees an owned stripe when the thread
    /// ends.
    static let key: pthread_key_t = {
      var key = pthread_key_t()
      let created = pthread_key_create(&key, releaseStripe)
      // Without a key, every thread would claim a stripe of its own every time: have none.
      if created != 0 { free.store(0, ordering: .relaxed) }
      return key
    }()

    /// Claims a free owned stripe for the current thread, or a shared stripe when none is
    /// free, keeps it in the thread's value of `key`, and returns its code (the stripe times
    /// two, plus one when owned).
    @inline(never)
    static func claim(_ key: pthread_key_t) -> Int {
      var code = MetricsStripe.sharedStripe() &<< 1
      var slots = free.load(ordering: .relaxed)
      while slots != 0 {
        let lowest = slots & (0 &- slots)
        let (exchanged, original) = free.compareExchange(
          expected: slots, desired: slots & ~lowest, ordering: .acquiring)
        if exchanged {
          code = lowest.trailingZeroBitCount &<< 1 | 1
          break
        }
        slots = original
      }
      if pthread_setspecific(key, UnsafeRawPointer(bitPattern: code &+ 1)) != 0 {
        // Not kept, so never given back: give it back now, use a shared stripe.
        giveBack(code)
        return MetricsStripe.sharedStripe() &<< 1
      }
      return code
    }
  }

  /// Gives an owned stripe back when its thread ends (the destructor of ``ThreadSlots/key``).
  #if canImport(Darwin)
    private func releaseStripe(_ value: UnsafeMutableRawPointer) {
      giveBack(Int(bitPattern: value) &- 1)
    }
  #else
    private func releaseStripe(_ value: UnsafeMutableRawPointer?) {
      guard let value else { return }
      giveBack(Int(bitPattern: value) &- 1)
    }
  #endif

  /// Frees the stripe of `code` if it is an owned one.
  private func giveBack(_ code: Int) {
    guard code & 1 == 1 else { return }
    let stripe = code &>> 1
    guard stripe >= 0, stripe < MetricsStripe.ownedCount else { return }
    ThreadSlots.free.bitwiseOr(1 << UInt64(stripe), ordering: .releasing)
  }
#endif
