import Synchronization

/// Turns a failing Redis into fast misses: after `failureThreshold` consecutive failures the
/// breaker opens and calls are not attempted for `openDuration`; then one call is let through
/// (half-open), and its success closes the breaker again.
final class CircuitBreaker: Sendable {
    struct Options: Sendable {
        var failureThreshold: Int
        var openDuration: Duration
    }

    private struct State {
        var consecutiveFailures = 0
        var openUntil: ContinuousClock.Instant?
        var trialInFlight = false
    }

    private let options: Options
    private let state = Mutex(State())

    init(options: Options) {
        self.options = options
    }

    /// Whether a call may go ahead now.
    func allows(now: ContinuousClock.Instant = .now) -> Bool {
        state.withLock { state in
            guard let openUntil = state.openUntil else { return true }
            guard now >= openUntil, !state.trialInFlight else { return false }
            state.trialInFlight = true  // half-open: one trial call
            return true
        }
    }

    func recordSuccess() {
        state.withLock { state in
            state.consecutiveFailures = 0
            state.openUntil = nil
            state.trialInFlight = false
        }
    }

    func recordFailure(now: ContinuousClock.Instant = .now) {
        state.withLock { state in
            state.consecutiveFailures += 1
            state.trialInFlight = false
            if state.consecutiveFailures >= options.failureThreshold || state.openUntil != nil {
                state.openUntil = now + options.openDuration
            }
        }
    }

    var isOpen: Bool { state.withLock { $0.openUntil != nil } }
}
