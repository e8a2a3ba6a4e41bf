import CoreMetrics

extension MetricsSystem {
    /// The factory a cache records through: `explicit` if given, else the one the process
    /// bootstrapped; `nil` when that is the no-op factory, so that a process that bootstrapped
    /// nothing pays one branch per event and never calls a handler.
    package static func resolving(_ explicit: (any MetricsFactory)?) -> (any MetricsFactory)? {
        let factory = explicit ?? MetricsSystem.factory
        return factory is NOOPMetricsHandler ? nil : factory
    }
}

/// A start time for a duration metric, read only when a timer will record it.
package struct MetricsStopwatch: Sendable {
    private let started: ContinuousClock.Instant?

    /// Starts timing when `enabled` (one clock read), else does nothing.
    @inline(__always)
    package init(enabled: Bool) {
        started = enabled ? ContinuousClock.now : nil
    }

    /// Records the time since the start in `timer`, if timing.
    @inline(__always)
    package func stop(into timer: CoreMetrics.Timer?) {
        guard let started, let timer else { return }
        let elapsed = started.duration(to: .now).components
        timer.recordNanoseconds(elapsed.seconds &* 1_000_000_000 &+ elapsed.attoseconds / 1_000_000_000)
    }
}
