import CoreMetrics

#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#elseif canImport(Darwin)
import Darwin
#endif

/// A start time for a duration metric, read only when a timer will record it.
///
/// The start is monotonic nanoseconds in a plain integer, not a `ContinuousClock.Instant`: that
/// type is resilient (its layout is unknown to this module), and carrying one through the hit path
/// costs value-witness calls on every lookup even when nothing is timed (about 260 instructions
/// per `MemoryTier` lookup, by callgrind).
package struct MetricsStopwatch: Sendable {
    private let started: UInt64

    /// Starts timing when `enabled` (one clock read), else does nothing.
    @inline(__always)
    package init(enabled: Bool) {
        started = enabled ? Self.monotonicNanoseconds() : 0
    }

    /// Records the time since the start in `timer`, if timing.
    @inline(__always)
    package func stop(into timer: CoreMetrics.Timer?) {
        guard started != 0, let timer else { return }
        timer.recordNanoseconds(Int64(clamping: Self.monotonicNanoseconds() &- started))
    }

    private static func monotonicNanoseconds() -> UInt64 {
        var now = timespec()
        clock_gettime(CLOCK_MONOTONIC, &now)
        return UInt64(now.tv_sec) &* 1_000_000_000 &+ UInt64(now.tv_nsec)
    }
}
