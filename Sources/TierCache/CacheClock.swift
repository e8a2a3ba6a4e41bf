import Foundation

/// The source of "now" for tiers and the layers above them.
///
/// Expiry, stored-at stamps and ages all read the time through a `CacheClock`, so tests can move
/// time forward by hand instead of sleeping. ``system`` reads the wall clock.
public struct CacheClock: Sendable {
    private let _now: @Sendable () -> Date

    /// Creates a clock that asks `now` for the current time.
    ///
    /// Tiers may call `now` while they hold their own lock (a memory tier checks a hit's expiry
    /// under it, so that no clock read is paid for entries without one): it must return at once,
    /// and must not call into a cache or tier.
    public init(now: @escaping @Sendable () -> Date) { self._now = now }

    /// The current time.
    @inline(__always)
    public func now() -> Date { _now() }

    /// The wall clock.
    public static let system = CacheClock(now: { Date() })
}
