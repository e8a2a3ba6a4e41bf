import Foundation
import HTTPTypes
import Synchronization
@_spi(TierCacheInternals) import TierCache

/// One exchange with the origin and when it happened.
struct Exchange: Sendable {
    var response: HTTPResponse
    var body: Data
    var requestTime: Date
    var responseTime: Date
    /// The tags the response carried (taken out of it when ``HTTPCache/Tagging`` says so).
    var tags = ResponseTags()
    /// The request sent: those that join it may differ from it in the fields
    /// ``HTTPCache/clientHopFields`` names.
    var sent: HTTPRequest
    /// Shared by the requests that joined the exchange, so that one of them stores it.
    let storing = StoreClaim()

    /// Whether this request is the one to store the exchange (or freshen what it validated): the
    /// first to ask. Each request that joined a fetch stored the same response again before,
    /// one after another (a key's writes take turns), so the last of N waited for N − 1 writes
    /// to every tier, and a purge between two of them was undone by the next. The first to ask
    /// rather than the fetch's starter: a starter cancelled before the fetch ended never asks.
    func claimsStore() -> Bool { storing.claim() }
}

/// Which of the requests sharing an exchange stores it (``Exchange/claimsStore()``).
final class StoreClaim: Sendable {
    private let claimed = Atomic<Bool>(false)

    /// True for the first caller only.
    func claim() -> Bool { !claimed.exchange(true, ordering: .relaxed) }
}

/// Fetches in flight, so concurrent misses for the same request make one network request.
///
/// The fetch runs in a task of its own, shared by the callers that join it. A cancelled caller
/// returns at once (`CancellationError`), leaving the fetch to the others; the last one to go
/// cancels it, so that a request nobody waits for any more stops reaching the origin (a 500 MB
/// download its caller gave up on ran to its end before, and was stored).
final class InFlightFetches: Sendable {
    private struct Flight {
        let id: UInt64
        let task: Task<Exchange, any Error>
        /// The callers waiting on it and not cancelled.
        var waiters: Int
    }

    private struct State {
        var flights: [String: Flight] = [:]
        var lastID: UInt64 = 0
        var joins = 0
    }

    private let state = Locked(State())

    /// How many callers have joined a fetch already in flight, ever (tests wait on it).
    var joinCount: Int { state.withLock { $0.joins } }

    /// Runs `fetch`, or joins the identical fetch already running; `joined` says which.
    func run(
        key: String, _ fetch: @escaping @Sendable () async throws -> Exchange
    ) async throws -> (Exchange, joined: Bool) {
        let (flight, joined) = state.withLock { state -> (Flight, Bool) in
            if var running = state.flights[key] {
                state.joins += 1
                running.waiters += 1
                state.flights[key] = running
                return (running, true)
            }
            state.lastID += 1
            let id = state.lastID
            let task = Task {
                // Over: the next caller starts a new one.
                defer { self.end(id, key: key) }
                return try await fetch()
            }
            let flight = Flight(id: id, task: task, waiters: 1)
            state.flights[key] = flight
            return (flight, false)
        }
        let waiter = Waiter()
        // Waiting on the task's value would outlast this caller's cancellation: its result is
        // handed to the waiter instead, which a cancellation can end first.
        Task { waiter.finish(await flight.task.result) }
        let exchange = try await withTaskCancellationHandler {
            try await withCheckedThrowingContinuation { waiter.wait($0) }
        } onCancel: {
            leave(flight.id, key: key)
            waiter.finish(.failure(CancellationError()))
        }
        return (exchange, joined)
    }

    /// A caller was cancelled: the last one to go cancels the fetch, and a new caller starts
    /// another rather than joining the cancelled one.
    private func leave(_ id: UInt64, key: String) {
        let abandoned = state.withLock { state -> Task<Exchange, any Error>? in
            guard var flight = state.flights[key], flight.id == id else { return nil }
            flight.waiters -= 1
            guard flight.waiters == 0 else {
                state.flights[key] = flight
                return nil
            }
            state.flights[key] = nil
            return flight.task
        }
        abandoned?.cancel()
    }

    /// The fetch is over: the next caller starts a new one.
    private func end(_ id: UInt64, key: String) {
        state.withLock { state in
            if state.flights[key]?.id == id { state.flights[key] = nil }
        }
    }
}

/// One caller's wait for a fetch: resumed once, by the fetch's result or by the caller's
/// cancellation, whichever comes first.
private final class Waiter: Sendable {
    private enum State {
        case idle
        case waiting(CheckedContinuation<Exchange, any Error>)
        case finished(Result<Exchange, any Error>)
        case resumed
    }

    private let state = Locked(State.idle)

    func wait(_ continuation: CheckedContinuation<Exchange, any Error>) {
        let ready = state.withLock { state -> Result<Exchange, any Error>? in
            switch state {
            case .finished(let result):
                state = .resumed
                return result
            case .idle:
                state = .waiting(continuation)
                return nil
            case .waiting, .resumed:
                return nil
            }
        }
        if let ready { continuation.resume(with: ready) }
    }

    func finish(_ result: Result<Exchange, any Error>) {
        let waiting = state.withLock { state -> CheckedContinuation<Exchange, any Error>? in
            switch state {
            case .waiting(let continuation):
                state = .resumed
                return continuation
            case .idle:
                state = .finished(result)
                return nil
            case .finished, .resumed:
                return nil
            }
        }
        waiting?.resume(with: result)
    }
}

/// Background revalidations (`stale-while-revalidate`), at most one per key.
final class BackgroundRevalidations: Sendable {
    private let tasks = Locked<[String: Task<Void, Never>]>([:])

    /// Starts `work` unless a revalidation for `key` is already running.
    func start(key: String, _ work: @escaping @Sendable () async -> Void) {
        tasks.withLock { tasks in
            guard tasks[key] == nil else { return }
            tasks[key] = Task {
                await work()
                self.finish(key)
            }
        }
    }

    private func finish(_ key: String) {
        _ = tasks.withLock { $0.removeValue(forKey: key) }
    }

    /// Waits for every revalidation running now.
    func waitForAll() async {
        while true {
            let running = tasks.withLock { Array($0.values) }
            if running.isEmpty { return }
            for task in running { await task.value }
        }
    }
}
