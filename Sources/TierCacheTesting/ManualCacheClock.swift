import Foundation
@_spi(TierCacheInternals) import TierCache

/// A clock that moves only when a test moves it, so tests of expiry and age never sleep.
///
/// ```swift
/// let clock = ManualCacheClock()
/// let tier = try MemoryTier(.init(capacity: 1 << 20, clock: clock.cacheClock))
/// clock.advance(by: 61)
/// ```
public final class ManualCacheClock: Sendable {
    private let current: Locked<Date>

    /// Starts the clock at `start`.
    public init(start: Date = Date(timeIntervalSince1970: 1_000_000)) {
        current = Locked(start)
    }

    /// The clock's time.
    public var now: Date { current.withLock { $0 } }

    /// Moves the clock forward (or back, with a negative interval).
    public func advance(by seconds: TimeInterval) {
        current.withLock { $0 += seconds }
    }

    /// The clock as a `CacheClock` to give to tiers and caches.
    public var cacheClock: CacheClock { CacheClock { [self] in self.now } }
}
