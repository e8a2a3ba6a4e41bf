import Foundation
import HTTPTypes
@_spi(TierCacheInternals) import TierCache

@testable import HTTPCaching

/// The origin side of engine tests: answers each request with the next scripted reply and
/// records what it was sent. (End-to-end tests of the adapters use a real HTTP server.)
final class ScriptedOrigin: Sendable {
    enum Reply: Sendable {
        case respond(HTTPResponse, String)
        case fail(URLError.Code)
    }

    private let state = Locked<(replies: [Reply], received: [HTTPRequest])>(([], []))
    private let gate = Locked<(holding: Bool, waiter: CheckedContinuation<Void, Never>?)>((false, nil))

    init(_ replies: [Reply] = []) { state.withLock { $0.replies = replies } }

    func enqueue(_ reply: Reply) { state.withLock { $0.replies.append(reply) } }
    var received: [HTTPRequest] { state.withLock { $0.received } }

    /// Makes the next exchanges wait until ``release()``.
    func hold() { gate.withLock { $0.holding = true } }

    func release() {
        gate.withLock { gate in
            gate.holding = false
            gate.waiter?.resume()
            gate.waiter = nil
        }
    }

    var transport: HTTPCache.Transport {
        { [self] request, _ in
            state.withLock { $0.received.append(request) }
            await withCheckedContinuation { continuation in
                let goOn = gate.withLock { gate -> Bool in
                    guard gate.holding else { return true }
                    gate.waiter = continuation
                    return false
                }
                if goOn { continuation.resume() }
            }
            let reply = state.withLock { state -> Reply in
                return state.replies.isEmpty
                    ? .respond(HTTPResponse(status: .internalServerError), "no reply scripted")
                    : state.replies.removeFirst()
            }
            switch reply {
            case .respond(let response, let body): return (response, Data(body.utf8))
            case .fail(let code): throw URLError(code)
            }
        }
    }
}
