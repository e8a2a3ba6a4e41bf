import HTTPTypes
import NIOCore
import NIOHTTPTypes

/// Answers requests whose stored response may be used as it is on the connection's event loop,
/// without the async hop of the general path: a hit costs a lookup and a write, no task.
///
/// Sits in the pipeline between the HTTP codec and the server's async request handling. A
/// GET or HEAD without a body is held until its end; if ``CachingProxy/answerFromStorage(_:)``
/// has an answer it is written here, otherwise the request goes on to the async path. Responses
/// keep request order: while a request is with the async path, later ones follow it there
/// (pipelined requests are never answered out of turn).
///
/// It also closes connections idle for the configured time (the async path's own idle timer
/// cannot see the requests answered here).
final class CacheHitFastPath: ChannelDuplexHandler, RemovableChannelHandler {
    typealias InboundIn = HTTPRequestPart
    typealias InboundOut = HTTPRequestPart
    typealias OutboundIn = HTTPResponsePart
    typealias OutboundOut = HTTPResponsePart

    private enum State {
        /// Between requests.
        case idle
        /// A GET or HEAD head arrived; waiting for its end.
        case holding(HTTPRequest)
        /// The current request went to the async path.
        case passing
    }

    private let proxy: CachingProxy
    private var state = State.idle
    /// Requests handed to the async path whose response has not ended yet.
    private var requestsWithAsyncPath = 0

    init(proxy: CachingProxy) {
        self.proxy = proxy
    }

    func channelRead(context: ChannelHandlerContext, data: NIOAny) {
        let part = unwrapInboundIn(data)
        switch (state, part) {
        case (.idle, .head(let head)):
            if requestsWithAsyncPath == 0, head.method == .get || head.method == .head, head.headerFields[.connection] == nil {
                state = .holding(head)
            } else {
                pass(.head(head), context: context)
            }
        case (.holding(let head), .end(let trailers)):
            state = .idle
            let started = ContinuousClock.now
            if let answer = proxy.answerFromStorage(head), case .buffered(let body) = answer.body {
                context.write(wrapOutboundOut(.head(answer.head)), promise: nil)
                if body.readableBytes > 0 { context.write(wrapOutboundOut(.body(body)), promise: nil) }
                context.writeAndFlush(wrapOutboundOut(.end(nil)), promise: nil)
                proxy.record(answer, for: head, bytesSent: body.readableBytes, started: started)
            } else {
                pass(.head(head), context: context)
                context.fireChannelRead(wrapInboundOut(.end(trailers)))
                state = .idle
            }
        case (.holding(let head), .body):
            // A GET with a body: not for the fast path.
            pass(.head(head), context: context)
            context.fireChannelRead(data)
        case (_, .end):
            state = .idle
            context.fireChannelRead(data)
        default:
            context.fireChannelRead(data)
        }
    }

    /// Hands a request head to the async path.
    private func pass(_ head: HTTPRequestPart, context: ChannelHandlerContext) {
        requestsWithAsyncPath += 1
        state = .passing
        context.fireChannelRead(wrapInboundOut(head))
    }

    func write(context: ChannelHandlerContext, data: NIOAny, promise: EventLoopPromise<Void>?) {
        if case .end = unwrapOutboundIn(data), requestsWithAsyncPath > 0 { requestsWithAsyncPath -= 1 }
        context.write(data, promise: promise)
    }

    func userInboundEventTriggered(context: ChannelHandlerContext, event: Any) {
        if let idle = event as? IdleStateHandler.IdleStateEvent, idle == .read {
            if case .idle = state, requestsWithAsyncPath == 0 { context.close(promise: nil) }
            return
        }
        context.fireUserInboundEventTriggered(event)
    }
}
