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

    /// A publisher that runs `produce` in a task when subscribed, publishing what it sends and
    /// finishing when it returns (or failing with what it throws).
    private static func publisher(
        _ produce: @escaping @Sendable (_ send: (HTTPCacheResponse) -> Void) async throws -> Void
    ) -> AnyPublisher<HTTPCacheResponse, any Error> {
        let subject = PassthroughSubject<HTTPCacheResponse, any Error>()
        return
            subject
            .handleEvents(receiveSubscription: { _ in
                let box = SubjectBox(subject)
                Task {
                    do {
                        try await produce { box.subject.send($0) }
                        box.subject.send(completion: .finished)
                    } catch {
                        box.subject.send(completion: .failure(error))
                    }
                }
            })
            .eraseToAnyPublisher()
    }
}

/// Carries a subject into the task that feeds it.
///
/// `@unchecked Sendable` is safe because Combine subjects are thread-safe (OpenCombine's take a
/// lock on every send), and the task is the only sender.
private final class SubjectBox: @unchecked Sendable {
    let subject: PassthroughSubject<HTTPCacheResponse, any Error>
    init(_ subject: PassthroughSubject<HTTPCacheResponse, any Error>) { self.subject = subject }
}
