import Synchronization

/// The bytes of buffered answer bodies the proxy is sending, all clients together, within
/// ``CachingProxy/Configuration/maximumAnswerBytesInFlight``.
///
/// An answer from storage is a copy of the stored body (and a miss's answer holds the body it
/// fetched) until its client has taken the last byte. Bounded per answer alone, a thousand
/// clients each reading a large stored response a slice a minute (or not at all, pipelining a
/// second request) held a thousand copies for as long as they liked: tens of gigabytes, for a
/// few bytes of request each. An answer that would take the total past the budget is answered
/// 503 with `Retry-After` instead, unless the origin has acted on an unsafe request; an answer
/// larger than the whole budget is sent when nothing else is in flight, so that no response
/// becomes unservable.
final class AnswerBudget: Sendable {
    /// The most bytes in flight.
    let limit: Int
    private let inFlight = Atomic<Int>(0)

    init(limit: Int) {
        self.limit = limit
    }

    /// Counts `bytes` as in flight, unless that would pass the limit (with other answers in flight):
    /// then nothing is counted and the answer is refused.
    func reserve(_ bytes: Int) -> Bool {
        guard bytes > 0 else { return true }
        var current = inFlight.load(ordering: .relaxed)
        while true {
            guard current == 0 || current <= limit - bytes else { return false }
            let (exchanged, original) = inFlight.compareExchange(
                expected: current, desired: current + bytes, ordering: .relaxed)
            if exchanged { return true }
            current = original
        }
    }

    /// Counts `bytes` as in flight whatever the limit: for an answer that must go out (the
    /// origin's answer to an unsafe request, which a 503 would misreport as not acted on).
    func reserveRegardless(_ bytes: Int) {
        guard bytes > 0 else { return }
        inFlight.add(bytes, ordering: .relaxed)
    }

    /// Returns `bytes` reserved earlier, once the answer is sent (or its connection closed).
    func release(_ bytes: Int) {
        guard bytes > 0 else { return }
        inFlight.subtract(bytes, ordering: .relaxed)
    }
}
