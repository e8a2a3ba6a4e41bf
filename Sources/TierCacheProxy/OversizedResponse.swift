import AsyncHTTPClient
import HTTPCaching
import HTTPTypes
import NIOCore
import Synchronization

/// An origin response too large to offer to the cache: thrown by the upstream transport so that
/// the engine stores nothing, and caught by the proxy, which streams it to the client.
///
/// Holds the head, the bytes already read, and the rest of the body still to come.
final class OversizedResponse: ResponseSentPastCache, @unchecked Sendable {
    // @unchecked Sendable: `iterator` and `buffered` are touched by one task at a time. The
    // transport's task reads until it throws this error and never touches it again; afterwards
    // only the caller for which `claim()` returned true reads (the atomic exchange lets one win
    // when a coalesced fetch hands the same error to several requests). `head` is immutable.
    let head: HTTPResponse
    private var buffered: ByteBuffer?
    private var iterator: HTTPClientResponse.Body.AsyncIterator
    private let claimed = Atomic(false)

    init(head: HTTPResponse, buffered: ByteBuffer, rest iterator: HTTPClientResponse.Body.AsyncIterator) {
        self.head = head
        self.buffered = buffered.readableBytes > 0 ? buffered : nil
        self.iterator = iterator
    }

    /// Whether the caller may stream the body: true for exactly one caller.
    func claim() -> Bool {
        !claimed.exchange(true, ordering: .acquiringAndReleasing)
    }

    /// The next part of the body, `nil` at its end. Only after a successful ``claim()``.
    func next() async throws -> ByteBuffer? {
        if let first = buffered {
            buffered = nil
            return first
        }
        return try await iterator.next()
    }
}
