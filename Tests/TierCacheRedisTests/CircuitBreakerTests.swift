import Testing

@testable import TierCacheRedis

/// The breaker's states, on an injected clock.
@Suite struct CircuitBreakerTests {
    private let start = ContinuousClock.now
    private func breaker() -> CircuitBreaker {
        CircuitBreaker(options: .init(failureThreshold: 3, openDuration: .seconds(10)))
    }

    @Test("Consecutive failures open it at the threshold; a success between them starts the count again")
    func opensAtThreshold() {
        let breaker = breaker()
        for _ in 0..<2 { breaker.recordFailure(now: start) }
        breaker.recordSuccess()
        for _ in 0..<2 { breaker.recordFailure(now: start) }
        #expect(!breaker.isOpen && breaker.allows(now: start))
        breaker.recordFailure(now: start)
        #expect(breaker.isOpen && !breaker.allows(now: start + .seconds(9)))
    }

    @Test("Once open: one trial after the open duration; its success closes, its failure reopens")
    func halfOpen() {
        let breaker = breaker()
        for _ in 0..<3 { breaker.recordFailure(now: start) }
        #expect(breaker.allows(now: start + .seconds(10)))  // the trial
        #expect(!breaker.allows(now: start + .seconds(11)))  // only one
        breaker.recordFailure(now: start + .seconds(11))
        #expect(!breaker.allows(now: start + .seconds(20)))
        #expect(breaker.allows(now: start + .seconds(21)))
        breaker.recordSuccess()
        #expect(!breaker.isOpen && breaker.allows(now: start + .seconds(21)))
        // Closed and clean again: it takes the whole threshold to open it.
        for _ in 0..<2 { breaker.recordFailure(now: start + .seconds(22)) }
        #expect(!breaker.isOpen)
    }

    @Test("A trial whose outcome never comes does not keep it open")
    func lostTrial() {
        let breaker = breaker()
        for _ in 0..<3 { breaker.recordFailure(now: start) }
        #expect(breaker.allows(now: start + .seconds(10)))
        #expect(!breaker.allows(now: start + .seconds(19)))
        #expect(breaker.allows(now: start + .seconds(20)))
    }
}
