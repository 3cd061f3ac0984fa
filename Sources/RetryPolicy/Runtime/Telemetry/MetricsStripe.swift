// The POSIX thread-specific values come through Foundation, as the C library does in the
// other files of this folder (PolicyFileReader.swift is the one file that imports it).
import Foundation
import Synchronization

/// The stripe of every ``PolicyMetrics``' counters that the current thread writes.
///
/// The first ``ownedCount`` threads that record each own a stripe for their whole life: no
/// other thread writes it, so an addition there is a plain load and store of the cell (a
/// relaxed atomic load and store, which readers may read at any time), not a locked
/// read-modify-write, which costs several times as much and is most of what recording costs.
/// A thread that ends gives its stripe back (a thread-specific value's destructor), and the
/// next thread to record takes it over, its counts included: the release of the slot and the
/// acquiring claim order the last writes of one owner before the first of the next. Every
/// further thread shares the last stripe, ``sharedStripe``, with atomic additions. The
/// thread's slot is kept in a POSIX thread-specific value; where there is none, every thread
/// uses the shared stripe.
enum MetricsStripe {
  /// The stripes that threads own, one each.
  static let ownedCount = 7
  /// The stripes of every policy's counters: one per owner, and the shared one.
  static let count = ownedCount + 1
  /// The stripe of the threads that own none.
  static let sharedStripe = ownedCount

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

  /// The current thread's stripe, held under `key`: below ``ownedCount`` when the thread
  /// owns it.
  @inline(__always)
  static func current(_ key: Key) -> Int {
    #if canImport(Glibc) || canImport(Musl) || canImport(Darwin)
      if let value = pthread_getspecific(key.raw) {
        // The value is the stripe plus one: never null once set.
        return Int(bitPattern: value) &- 1
      }
      return ThreadSlots.claim(key.raw)
    #else
      return sharedStripe
    #endif
  }
}

#if canImport(Glibc) || canImport(Musl) || canImport(Darwin)
  /// The owned stripes that are free (one bit each) and the thread-specific key that holds a
  /// thread's stripe.
  private enum ThreadSlots {
    /// Bit `i` is set while stripe `i` has no owner.
    static let free = Atomic<UInt64>((1 << UInt64(MetricsStripe.ownedCount)) - 1)

    /// The key of the thread-specific value holding the thread's stripe plus one; its
    /// destructor frees an owned stripe when the thread ends.
    static let key: pthread_key_t = {
      var key = pthread_key_t()
      let created = pthread_key_create(&key, releaseStripe)
      // Without a key, every thread would claim a stripe of its own every time: have none.
      if created != 0 { free.store(0, ordering: .relaxed) }
      return key
    }()

    /// Claims a free owned stripe for the current thread, or the shared stripe when none is
    /// free, and keeps it in the thread's value of `key`.
    @inline(never)
    static func claim(_ key: pthread_key_t) -> Int {
      var stripe = MetricsStripe.sharedStripe
      var slots = free.load(ordering: .relaxed)
      while slots != 0 {
        let lowest = slots & (0 &- slots)
        let (exchanged, original) = free.compareExchange(
          expected: slots, desired: slots & ~lowest, ordering: .acquiring)
        if exchanged {
          stripe = lowest.trailingZeroBitCount
          break
        }
        slots = original
      }
      if pthread_setspecific(key, UnsafeRawPointer(bitPattern: stripe &+ 1)) != 0,
        stripe != MetricsStripe.sharedStripe
      {
        // Not kept, so never given back: give it back now, use the shared stripe.
        free.bitwiseOr(1 << UInt64(stripe), ordering: .releasing)
        return MetricsStripe.sharedStripe
      }
      return stripe
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

  /// Frees `stripe` if it is an owned one.
  private func giveBack(_ stripe: Int) {
    guard stripe >= 0, stripe < MetricsStripe.ownedCount else { return }
    ThreadSlots.free.bitwiseOr(1 << UInt64(stripe), ordering: .releasing)
  }
#endif
