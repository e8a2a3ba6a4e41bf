import Synchronization

/// Whether a store is failing now, so that a store going away and coming back is logged once
/// each, not once per operation (a dead Redis under load would otherwise flood the log).
package struct FailureStreak: ~Copyable, Sendable {
    private let isFailing = Atomic<Bool>(false)

    package init() {}

    /// Notes a failure; `true` for the first since the last success (the one to log loudly).
    package func noteFailure() -> Bool {
        !isFailing.exchange(true, ordering: .relaxed)
    }

    /// Notes a success; `true` when it ends a streak of failures (the recovery to log). One
    /// relaxed load while healthy.
    @inline(__always)
    package func noteSuccess() -> Bool {
        isFailing.load(ordering: .relaxed) && isFailing.exchange(false, ordering: .relaxed)
    }
}
