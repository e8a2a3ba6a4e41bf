import Foundation
import HTTPCaching
import HTTPTypes
import OpenCombineShim

/// Combine publishers over `HTTPCache` (OpenCombine where Combine is missing).
extension HTTPCache {
    /// A publisher that fetches `request` through the cache when subscribed.
    ///
    /// On a connectivity error it publishes the stored response instead of failing, when the
    /// cache's offline policy allows: the value's `HTTPCacheResponse.source` is then
    /// `HTTPCacheResponse.Source.staleFallback`, with `HTTPCacheResponse.storedAt` and the
    /// `HTTPCacheResponse.networkError`, so the subscriber knows the network failed and how old
    /// the data is. Without a usable stored response, the publisher fails with the error.
    ///
    /// Uses Combine on Apple platforms and OpenCombine elsewhere.
    public func publisher(
        for request: HTTPRequest, cachePolicy: RequestCachePolicy = .useProtocolCachePolicy,
        transport: @escaping Transport
    ) -> AnyPublisher<HTTPCacheResponse, any Error> {
        Self.publisher { [self] send in
            send(try await response(for: request, cachePolicy: cachePolicy, transport: transport))
        }
    }

    /// The cache-then-network pattern as a publisher: the stored response first (if any), then
    /// the response from the network; see `HTTPCache.responses(for:transport:)`.
    public func cacheThenNetworkPublisher(
        for request: HTTPRequest, transport: @escaping Transport
    ) -> AnyPublisher<HTTPCacheResponse, any Error> {
        Self.publisher { [self] send in
            for try await response in responses(for: request, transport: transport) { send(response) }
        }
    }

    /// A publisher that runs `produce` in a task of its own for each subscription, once the
    /// subscriber first asks for a value, publishing what it sends as the subscriber asks for
    /// it, and finishing when it returns (or failing with what it throws). Cancelling the
    /// subscription cancels the task. (One subject shared by every subscription, as before, gave a
    /// second subscriber, or a `retry`, the first one's completion at once, and dropped a value
    /// sent before the subscriber's demand reached it.)
    private static func publisher(
        _ produce: @escaping @Sendable (_ send: @Sendable (HTTPCacheResponse) -> Void) async throws -> Void
    ) -> AnyPublisher<HTTPCacheResponse, any Error> {
        TaskPublisher(produce: produce).eraseToAnyPublisher()
    }
}

/// The publisher of ``HTTPCache/publisher(for:cachePolicy:transport:)`` and
/// ``HTTPCache/cacheThenNetworkPublisher(for:transport:)``: a ``TaskSubscription`` per subscriber.
private struct TaskPublisher: Publisher {
    typealias Output = HTTPCacheResponse
    typealias Failure = any Error

    let produce: @Sendable (_ send: @Sendable (HTTPCacheResponse) -> Void) async throws -> Void

    func receive<Downstream: Subscriber>(subscriber: Downstream)
    where Downstream.Input == HTTPCacheResponse, Downstream.Failure == any Error {
        subscriber.receive(subscription: TaskSubscription(subscriber, produce: produce))
    }
}

/// One subscription of a ``TaskPublisher``: starts the task on the first demand, keeps what it
/// sends until the subscriber asks for it, and delivers its completion after the last value.
///
/// `@unchecked Sendable` is safe because every stored property but the lock is inside `state`,
/// read and written under the lock; the subscriber is called outside it, by one caller at a time
/// (`isDelivering`), as Combine requires.
private final class TaskSubscription<Downstream: Subscriber>: Subscription, @unchecked Sendable
where Downstream.Input == HTTPCacheResponse, Downstream.Failure == any Error {
    private struct State {
        var subscriber: Downstream?
        var demand = Subscribers.Demand.none
        var pending: [HTTPCacheResponse] = []
        var completion: Subscribers.Completion<any Error>?
        var task: Task<Void, Never>?
        var isStarted = false
        var isDelivering = false
    }

    private let lock = NSLock()
    private var state: State
    private let produce: @Sendable (_ send: @Sendable (HTTPCacheResponse) -> Void) async throws -> Void

    init(
        _ subscriber: Downstream,
        produce: @escaping @Sendable (_ send: @Sendable (HTTPCacheResponse) -> Void) async throws -> Void
    ) {
        state = State(subscriber: subscriber)
        self.produce = produce
    }

    func request(_ demand: Subscribers.Demand) {
        let start = lock.withLock { () -> Bool in
            state.demand += demand
            guard !state.isStarted, state.subscriber != nil, demand > .none else { return false }
            state.isStarted = true
            return true
        }
        if start {
            let task = Task { [self] in
                do {
                    try await produce { [self] value in
                        lock.withLock { state.pending.append(value) }
                        deliver()
                    }
                    lock.withLock { state.completion = .finished }
                } catch {
                    lock.withLock { state.completion = .failure(error) }
                }
                deliver()
            }
            // A cancel that came between the start and here found no task to cancel.
            let cancelled = lock.withLock { () -> Bool in
                state.task = task
                return state.subscriber == nil
            }
            if cancelled { task.cancel() }
        }
        deliver()
    }

    func cancel() {
        let task = lock.withLock { () -> Task<Void, Never>? in
            state.subscriber = nil
            state.pending = []
            return state.task
        }
        task?.cancel()
    }

    /// Hands the subscriber what it asked for of what is pending, then the completion once
    /// nothing is; a call made while another delivers leaves the work to that one.
    private func deliver() {
        while true {
            lock.lock()
            guard !state.isDelivering, let subscriber = state.subscriber else {
                lock.unlock()
                return
            }
            if !state.pending.isEmpty, state.demand > .none {
                let value = state.pending.removeFirst()
                state.demand -= 1
                state.isDelivering = true
                lock.unlock()
                let more = subscriber.receive(value)
                lock.withLock {
                    state.demand += more
                    state.isDelivering = false
                }
                continue
            }
            guard state.pending.isEmpty, let completion = state.completion else {
                lock.unlock()
                return
            }
            state.subscriber = nil
            lock.unlock()
            subscriber.receive(completion: completion)
            return
        }
    }
}
