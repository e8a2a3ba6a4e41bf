import Synchronization

/// Whether a store is failing now, so that a store going away and coming back is logged once
/// each, not once per operation (a dead Redis under load would otherwise flood the log).
package struct FailureStreak: ~Copyable, Sendable {
    private let failing = Atomic<Bool>(false)

    package init() {}

    /// Notes a failure; `true` for the first since the last success (the one to log loudly).
    package func noteFailure() -> Bool {
        !failing.exchange(true, ordering: .relaxed)
    }

    /// Whether a failure was noted since the last success (one relaxed load).
    @inline(__always)
    package var isFailing: Bool { failing.load(ordering: .relaxed) }

    /// Notes a success; `true` when it ends a streak of failures (the recovery to log). One
    /// relaxed load while healthy.
    @inline(__always)
    package func noteSuccess() -> Bool {
        failing.load(ordering: .relaxed) && failing.exchange(false, ordering: .relaxed)
    }
}
