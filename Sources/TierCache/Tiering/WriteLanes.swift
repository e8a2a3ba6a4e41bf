import Foundation
import Synchronization

/// Keeps a ``TieredCache``'s writes and removals of one key in order, one at a time.
///
/// A write changes the tiers one after another, and a lower tier may take milliseconds (a disk
/// commit, a round trip to Redis). Two writes of one key under way at once could reach the tiers
/// in different orders: the newer value in the memory tier, the older one on disk, served again
/// once the memory tier let the newer one go (or after a restart). So a write or removal of a
/// key enters the key's lane first: while another is under way it waits its turn, then changes
/// every tier, then lets the next one in. Changes of different keys do not wait for each other.
///
/// Synchronous writes and removals (``TieredCache/storeLocally(_:forKey:policy:)``, the local
/// tiers of `TieredURLCache`) cannot await a lane; they take turns with each other instead
/// through ``withSynchronousTurn(_:_:)``, one of a fixed set of locks chosen by the key's hash,
/// held while they change the local tiers. The two kinds do not wait for each other: a
/// synchronous thread blocked on an asynchronous change could hold the very executor thread that
/// change needs to finish. Invalidations from a shared tier remove only what lies above it and
/// take no turn.
final class WriteLanes: Sendable {
    /// The keys with a change under way, and the changes waiting their turn, first come first.
    private let lanes = Locked<[CacheKey: [UnsafeContinuation<Void, Never>]]>([:])
    /// The synchronous changes' turns: 64 locks, a key's chosen by its hash (two keys sharing one
    /// only wait for each other's local writes).
    private let synchronousTurns = (0..<64).map { _ in NSLock() }

    init() {}

    /// Runs `change`, a synchronous change of `key`, once no other synchronous change of a key
    /// sharing its lock is under way.
    func withSynchronousTurn<Result, Failure: Error>(
        _ key: CacheKey, _ change: () throws(Failure) -> Result
    ) throws(Failure) -> Result {
        let lock = synchronousTurns[Int(UInt(bitPattern: key.hashValue) % UInt(synchronousTurns.count))]
        lock.lock()
        defer { lock.unlock() }
        return try change()
    }

    /// Returns once no other change of `key` is under way; the caller's change is then, until
    /// ``leave(_:)``.
    func enter(_ key: CacheKey) async {
        // Without a continuation when the lane is free, as it nearly always is.
        let entered = lanes.withLock { lanes -> Bool in
            guard lanes[key] == nil else { return false }
            lanes[key] = []
            return true
        }
        if entered { return }
        // Resumed exactly once: by `leave(_:)` of the change ahead, which hands the lane over
        // (it stays taken), or here when that change left meanwhile.
        await withUnsafeContinuation { (continuation: UnsafeContinuation<Void, Never>) in
            let entered = lanes.withLock { lanes -> Bool in
                guard lanes[key] != nil else {
                    lanes[key] = []
                    return true
                }
                lanes[key]?.append(continuation)
                return false
            }
            if entered { continuation.resume() }
        }
    }

    /// How many changes of `key` wait their turn (for tests).
    func waitingCount(_ key: CacheKey) -> Int {
        lanes.withLock { $0[key]?.count ?? 0 }
    }

    /// Whether no change of any key is under way (for tests: an idle lane is let go).
    var isIdle: Bool { lanes.withLock { $0.isEmpty } }

    /// Ends the caller's change of `key`, handing the lane to the next change waiting.
    func leave(_ key: CacheKey) {
        let next = lanes.withLock { lanes -> UnsafeContinuation<Void, Never>? in
            // In place: a copy of the queue taken out and put back would be copied to change it.
            guard lanes[key]?.isEmpty == false else {
                lanes[key] = nil
                return nil
            }
            return lanes[key]?.removeFirst()
        }
        next?.resume()
    }
}
