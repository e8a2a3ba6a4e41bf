/// The writes and removals ``TieredURLCache`` sends its network tiers, run one at a time in the
/// order they were made: `URLCache`'s API cannot wait for them, and detached tasks, one per
/// write, reached the tier in any order (a removal before the store it followed, or an older
/// value after a newer one).
final class NetworkTierWrites: Sendable {
    private let operations: AsyncStream<@Sendable () async -> Void>.Continuation
    private let worker: Task<Void, Never>

    init() {
        let (stream, continuation) = AsyncStream.makeStream(of: (@Sendable () async -> Void).self)
        operations = continuation
        worker = Task {
            for await operation in stream { await operation() }
        }
    }

    deinit {
        // The writes already sent still run; the worker ends after the last.
        operations.finish()
    }

    /// Runs `operation` after every one sent before it.
    func send(_ operation: @escaping @Sendable () async -> Void) {
        operations.yield(operation)
    }

    /// Waits until every operation sent so far has run.
    func waitForAll() async {
        await withCheckedContinuation { (done: CheckedContinuation<Void, Never>) in
            send { done.resume() }
        }
    }
}
