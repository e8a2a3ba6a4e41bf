import Synchronization
@_spi(TierCacheInternals) import TierCache

/// Turns a failing Redis node into fast misses: after `failureThreshold` consecutive failures the
/// breaker opens and calls are not attempted for `openDuration`; then one call is let through
/// (half-open), and its success closes the breaker again. A trial whose outcome is never
/// reported does not keep the breaker open: another is allowed after `openDuration`.
final class CircuitBreaker: Sendable {
    struct Options: Sendable {
        var failureThreshold: Int
        var openDuration: Duration
    }

    private struct State {
        var consecutiveFailures = 0
        var openUntil: ContinuousClock.Instant?
        var trialStartedAt: ContinuousClock.Instant?
    }

    private let options: Options
    private let state = Locked(State())
    /// Whether `state` is the initial one (no failure counted, closed, no trial): read without
    /// the lock by the two calls every command makes, ``allows(now:)`` and ``recordSuccess()``,
    /// which have nothing to do then. Written under the lock whenever `state` changes.
    private let isClean = Atomic<Bool>(true)

    init(options: Options) {
        self.options = options
    }

    /// Whether a call may go ahead now (`now`: the clock's time, read only when the breaker is
    /// open: a closed, clean breaker, every command's case, costs one atomic load).
    func allows(now: ContinuousClock.Instant? = nil) -> Bool {
        if isClean.load(ordering: .acquiring) { return true }
        return state.withLock { state in
            guard let openUntil = state.openUntil else { return true }
            let now = now ?? .now
            guard now >= openUntil else { return false }
            if let trial = state.trialStartedAt, now - trial < options.openDuration { return false }
            state.trialStartedAt = now  // half-open: one trial call
            return true
        }
    }

    func recordSuccess() {
        if isClean.load(ordering: .acquiring) { return }
        state.withLock { state in
            state.consecutiveFailures = 0
            state.openUntil = nil
            state.trialStartedAt = nil
            isClean.store(true, ordering: .releasing)
        }
    }

    func recordFailure(now: ContinuousClock.Instant = .now) {
        state.withLock { state in
            state.consecutiveFailures += 1
            state.trialStartedAt = nil
            if state.consecutiveFailures >= options.failureThreshold || state.openUntil != nil {
                state.openUntil = now + options.openDuration
            }
            isClean.store(false, ordering: .releasing)
        }
    }

    var isOpen: Bool { state.withLock { $0.openUntil != nil } }
}
