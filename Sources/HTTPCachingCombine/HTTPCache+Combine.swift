import Foundation
import HTTPCaching
import HTTPTypes
import OpenCombineShim

extension HTTPCache {
    /// A publisher that fetches `request` through the cache when subscribed.
    ///
    /// On a connectivity error it publishes the stored response instead of failing, when the
    /// cache's offline policy allows: the value's ``HTTPCacheResponse/source`` is then
    /// ``HTTPCacheResponse/Source/staleFallback``, with ``HTTPCacheResponse/storedAt`` and the
    /// ``HTTPCacheResponse/networkError``, so the subscriber knows the network failed and how old
    /// the data is. Without a usable stored response, the publisher fails with the error.
    ///
    /// Uses Combine on Apple platforms and OpenCombine elsewhere.
    public func publisher(
        for request: HTTPRequest, cachePolicy: RequestCachePolicy = .useProtocolCachePolicy, transport: @escaping Transport
    ) -> AnyPublisher<HTTPCacheResponse, any Error> {
        let subject = PassthroughSubject<HTTPCacheResponse, any Error>()
        return subject
            .handleEvents(receiveSubscription: { [self] _ in
                let box = SubjectBox(subject)
                Task {
                    do {
                        box.subject.send(try await self.response(for: request, cachePolicy: cachePolicy, transport: transport))
                        box.subject.send(completion: .finished)
                    } catch {
                        box.subject.send(completion: .failure(error))
                    }
                }
            })
            .eraseToAnyPublisher()
    }

    /// The cache-then-network pattern as a publisher: the stored response first (if any), then
    /// the response from the network; see ``HTTPCache/responses(for:transport:)``.
    public func cacheThenNetworkPublisher(for request: HTTPRequest, transport: @escaping Transport) -> AnyPublisher<HTTPCacheResponse, any Error> {
        let subject = PassthroughSubject<HTTPCacheResponse, any Error>()
        return subject
            .handleEvents(receiveSubscription: { [self] _ in
                let box = SubjectBox(subject)
                Task {
                    do {
                        for try await response in self.responses(for: request, transport: transport) { box.subject.send(response) }
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
