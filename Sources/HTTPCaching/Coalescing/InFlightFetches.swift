import Foundation
import HTTPTypes
@_spi(TierCacheInternals) import TierCache

/// One exchange with the origin and when it happened.
struct Exchange: Sendable {
    var response: HTTPResponse
    var body: Data
    var requestTime: Date
    var responseTime: Date
    /// The tags the response carried (taken out of it when ``HTTPCache/Tagging`` says so).
    var tags = ResponseTags()
}

/// Fetches in flight, so concurrent misses for the same request make one network request.
final class InFlightFetches: Sendable {
    private let tasks = Locked<[String: Task<Exchange, any Error>]>([:])
    private let joins = Locked(0)

    /// How many callers have joined a fetch already in flight, ever (tests wait on it).
    var joinCount: Int { joins.withLock { $0 } }

    /// Runs `fetch`, or joins the identical fetch already running; `joined` says which.
    func run(
        key: String, _ fetch: @escaping @Sendable () async throws -> Exchange
    ) async throws -> (Exchange, joined: Bool) {
        let (task, joined) = tasks.withLock { tasks -> (Task<Exchange, any Error>, Bool) in
            if let running = tasks[key] {
                joins.withLock { $0 += 1 }
                return (running, true)
            }
            let task = Task { try await fetch() }
            tasks[key] = task
            return (task, false)
        }
        defer {
            if !joined { _ = tasks.withLock { $0.removeValue(forKey: key) } }
        }
        return (try await task.value, joined)
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
