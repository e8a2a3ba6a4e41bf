import HTTPCaching
import HTTPTypes
import NIOCore
import NIOHTTP1
import NIOHTTPTypes
import NIOHTTPTypesHTTP1

/// Answers requests whose stored response may be used as it is on the connection's event loop,
/// without the async hop of the general path: a hit costs a lookup and a write, no task.
///
/// It works at the HTTP/1 level, right after the request decoder: a repeated hit (see
/// ``AnswerMemo``) is answered without converting the request or the response to HTTP types.
/// An HTTP/1.1 GET or HEAD without a body is held until its end; if the proxy has an answer from
/// storage it is written here, otherwise the request goes on, through the HTTP-types codec, to
/// the async path. Responses keep request order: while a request is with the async path, later
/// ones follow it there (pipelined requests are never answered out of turn); the
/// ``AsyncResponseObserver`` says when the async path's responses end.
///
/// It answers only while the channel is writable: a client that pipelines requests and reads no
/// answers would otherwise have every one of them queued in memory (a copy of the body each, for
/// answers not memoized), from a few bytes a request. Once the channel is not writable, requests
/// go to the async path, whose writer waits for the client and whose reader then stops reading.
///
/// It also closes connections idle for the configured time (the async path's own idle timer
/// cannot see the requests answered here), connections whose client began a request and sent
/// nothing more for that time, and connections whose client took none of the answers waiting for
/// it for that time. A connection still sending an answer is not idle: bodies are written in
/// slices (``NIOCore/ByteBuffer/writeSliceLength``), each one sent marking progress.
///
/// It answers an HTTP/1.0 request in HTTP/1.0 (the codec after it writes every response head
/// as 1.1, and the server's handlers keep every connection open): a body of unknown length goes
/// unchunked, ended by closing the connection (RFC 9112 §6.1, §6.3: a 1.0 client has no chunked
/// coding, and read the chunk sizes as part of the body), and a request without
/// `Connection: keep-alive` has its connection closed after the answer, as 1.0 has it.
///
/// On shutdown (`ChannelShouldQuiesceEvent`) it closes the connection itself, once every request
/// read is answered and sent, and does not pass the event on: the server's handlers behind the
/// codec never see the requests answered here, and, told, closed the connection at once with such
/// an answer half sent (on every deploy, to whoever was downloading a large hit); their own close
/// after a last answer also fails the writes still queued, the end of a large answer.
final class CacheHitFastPath: ChannelDuplexHandler, RemovableChannelHandler {
    typealias InboundIn = HTTPServerRequestPart
    typealias InboundOut = HTTPServerRequestPart
    typealias OutboundIn = HTTPServerResponsePart
    typealias OutboundOut = HTTPServerResponsePart

    private enum State {
        /// Between requests.
        case idle
        /// A GET or HEAD head arrived; waiting for its end.
        case holding(HTTPRequestHead)
        /// The current request went to the async path.
        case passing
    }

    let proxy: CachingProxy
    private var state = State.idle
    /// Requests handed to the async path whose response has not ended yet.
    private var requestsWithAsyncPath = 0
    /// Responses written (their end included) whose bytes are not all sent yet: a connection
    /// still sending is not idle, however long ago its client last wrote.
    private var responsesUnsent = 0
    /// Set once the server is shutting down: the connection closes when nothing is left to answer.
    private var isQuiescing = false
    /// This handler's context, to close the connection from when the last answer is sent.
    private var context: ChannelHandlerContext?
    /// The HTTP versions of the requests handed to the async path whose responses have not begun,
    /// and whether each asked to keep the connection, oldest first (pipelined requests are
    /// answered in order).
    private var unansweredVersions = CircularBuffer<(version: HTTPVersion, keepAlive: Bool)>()
    /// Whether the response being written ends by closing the connection (an HTTP/1.0 client,
    /// a body of unknown length).
    private var closesAfterResponse = false

    init(proxy: CachingProxy) {
        self.proxy = proxy
    }

    func handlerAdded(context: ChannelHandlerContext) {
        self.context = context
    }

    func handlerRemoved(context: ChannelHandlerContext) {
        self.context = nil
    }

    func channelRead(context: ChannelHandlerContext, data: NIOAny) {
        let part = unwrapInboundIn(data)
        switch (state, part) {
        case (.idle, .head(var head)):
            // RFC 9112 §3.2: an HTTP/1.1 request without Host gets 400. The version is known
            // here, not past the conversion to HTTP types: the request is marked for `prepare`
            // to refuse, in order with the requests before it. One pass over the fields finds
            // both names (a hit's cost is counted in such passes); a client's own mark goes.
            let (hasHost, hasMark) = Self.hostAndMark(in: head.headers)
            if hasMark { head.headers.remove(name: CachingProxy.missingHostMark.rawName) }
            if !hasHost, head.version.major == 1, head.version.minor >= 1 {
                head.headers.add(name: CachingProxy.missingHostMark.rawName, value: proxy.missingHostToken)
                pass(.head(head), context: context)
                return
            }
            // Not one that expects `100 Continue` (its body waits for it: `pass` answers it).
            if requestsWithAsyncPath == 0, context.channel.isWritable, head.version == .http1_1,
                head.method == .GET || head.method == .HEAD, !head.headers.contains(name: "connection"),
                !head.headers.contains(name: "expect")
            {
                state = .holding(head)
            } else {
                pass(.head(head), context: context)
            }
        case (.holding(let head), .end(let trailers)):
            state = .idle
            let started = ContinuousClock.now
            // An answer past the budget of bodies in flight goes to the async path, which says 503.
            if context.channel.isWritable, let answer = proxy.answerFromStorage(head),
                proxy.answerBudget.reserve(answer.body.readableBytes)
            {
                var answerHead = answer.head
                // Shutting down, the connection closes after this answer: a client that reuses
                // connections (a load balancer) must not send its next request into it.
                if isQuiescing { answerHead.headers.replaceOrAdd(name: "connection", value: "close") }
                context.write(wrapOutboundOut(.head(answerHead)), promise: nil)
                answer.body.forEachWriteSlice { context.write(wrapOutboundOut(.body(.byteBuffer($0))), promise: nil) }
                context.writeAndFlush(
                    wrapOutboundOut(.end(nil)), promise: endSent(context, releasing: answer.body.readableBytes))
                proxy.metrics.eventLoopAnswers.increment()
                proxy.record(
                    answer.outcome, method: head.method.rawValue, path: head.uri, status: Int(answer.head.status.code),
                    cacheStatus: answer.head.headers["cache-status"].last, bytesSent: answer.body.readableBytes,
                    started: started)
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

    /// Whether `headers` hold a `Host` field, and the proxy's missing-Host mark, in one pass
    /// (`ASCIICase.equals` compares lengths first, which rules out nearly every field).
    private static func hostAndMark(in headers: HTTPHeaders) -> (host: Bool, mark: Bool) {
        var host = false, marked = false
        for (name, _) in headers {
            if !host, ASCIICase.equals(name.utf8, ignoringCaseTo: "host") {
                host = true
            } else if ASCIICase.equals(name.utf8, ignoringCaseTo: CachingProxy.missingHostMarkName) {
                marked = true
            }
        }
        return (host, marked)
    }

    /// Sends `100 Continue` to a request that expects it (RFC 9110 §10.1.1) and whose body the
    /// async path will read: its client waits for that answer before sending the body (curl a
    /// second), and the origin, to which the proxy sends the body it read, is not asked. Not to a
    /// body declared over the limit, which the async path refuses with 413; not while an earlier
    /// request's answer is pending, which the interim answer would come before (the client then
    /// sends its body after its own wait); never to HTTP/1.0, which has no interim answers.
    private func answerExpectation(of request: HTTPRequestHead, context: ChannelHandlerContext) {
        guard request.version == .http1_1, requestsWithAsyncPath == 0, responsesUnsent == 0,
            request.headers["expect"].contains(where: { $0.lowercased() == "100-continue" })
        else { return }
        let declared = request.headers.first(name: "content-length").flatMap { Int($0) } ?? 0
        guard declared <= proxy.configuration.maximumRequestBodyBytes else { return }
        context.writeAndFlush(
            wrapOutboundOut(.head(HTTPResponseHead(version: request.version, status: .continue))), promise: nil)
    }

    /// Writes the async path's responses, an HTTP/1.0 request's in HTTP/1.0, and, once shutdown
    /// began, with `Connection: close`.
    func write(context: ChannelHandlerContext, data: NIOAny, promise: EventLoopPromise<Void>?) {
        switch unwrapOutboundIn(data) {
        case .head(var head) where head.status.code >= 200:
            guard let request = unansweredVersions.popFirst(), request.version.major == 1,
                request.version.minor == 0
            else {
                guard isQuiescing else { return context.write(data, promise: promise) }
                head.headers.replaceOrAdd(name: "connection", value: "close")
                return context.write(wrapOutboundOut(.head(head)), promise: promise)
            }
            head.version = request.version
            head.headers.remove(name: "transfer-encoding")
            // Without a length the body's end is the connection's (204 and 304 have no body).
            let lengthless = !head.headers.contains(name: "content-length") && head.status.mayHaveResponseBody
            closesAfterResponse = lengthless || !request.keepAlive
            head.headers.replaceOrAdd(name: "connection", value: closesAfterResponse ? "close" : "keep-alive")
            context.write(wrapOutboundOut(.head(head)), promise: promise)
        case .end where closesAfterResponse:
            closesAfterResponse = false
            let written = promise ?? context.eventLoop.makePromise()
            written.futureResult.assumeIsolated().whenComplete { _ in context.close(promise: nil) }
            context.write(data, promise: written)
        default:
            context.write(data, promise: promise)
        }
    }

    /// Hands a request head to the async path.
    private func pass(_ head: HTTPServerRequestPart, context: ChannelHandlerContext) {
        if case .head(let request) = head {
            // Recorded here, not for the hits answered above: their heads never pass `write`.
            unansweredVersions.append((request.version, request.isKeepAlive))
            answerExpectation(of: request, context: context)
        }
        requestsWithAsyncPath += 1
        state = .passing
        context.fireChannelRead(wrapInboundOut(head))
    }

    /// A response from the async path has ended.
    func asyncResponseEnded() {
        if requestsWithAsyncPath > 0 { requestsWithAsyncPath -= 1 }
    }

    /// A promise for a response's end, counting the response unsent until the end is sent (or
    /// its write fails), and then returning `bytes` to the proxy's ``AnswerBudget``.
    func endSent(_ context: ChannelHandlerContext, releasing bytes: Int = 0) -> EventLoopPromise<Void> {
        let promise = context.eventLoop.makePromise(of: Void.self)
        responsesUnsent += 1
        promise.futureResult.assumeIsolated().whenComplete { _ in
            self.proxy.answerBudget.release(bytes)
            self.responsesUnsent -= 1
            self.closeIfQuiescedAndIdle()
        }
        return promise
    }

    /// Closes the connection once shutdown began and every request read is answered and sent (a
    /// write's promise completes once its bytes are with the kernel: closing then loses none).
    private func closeIfQuiescedAndIdle() {
        guard isQuiescing, case .idle = state, requestsWithAsyncPath == 0, responsesUnsent == 0 else { return }
        context?.close(promise: nil)
    }

    func userInboundEventTriggered(context: ChannelHandlerContext, event: Any) {
        if event is ChannelShouldQuiesceEvent {
            isQuiescing = true
            return closeIfQuiescedAndIdle()
        }
        guard let idle = event as? IdleStateHandler.IdleStateEvent else {
            return context.fireUserInboundEventTriggered(event)
        }
        switch (idle, state) {
        case (.read, .idle):
            // Between requests, none waiting on the origin, nothing left to send: idle.
            if requestsWithAsyncPath == 0, responsesUnsent == 0 { context.close(promise: nil) }
        case (.read, .holding), (.read, .passing):
            // A request begun and not finished for the whole timeout (a slow-loris client): it
            // held the connection, and a task waiting for its body, for good.
            context.close(promise: nil)
        case (.write, _):
            // Answers waiting on a client that has taken none of them for the whole timeout.
            if !context.channel.isWritable { context.close(promise: nil) }
        default:
            break
        }
    }
}

/// Put in the pipeline by the server's setup (after the HTTP-types codec, where its extra
/// handlers go): places an idle timer and the ``CacheHitFastPath`` in front of the codec, and then
/// tells the fast path when a response of the async path ends.
final class AsyncResponseObserver: ChannelOutboundHandler, RemovableChannelHandler {
    typealias OutboundIn = HTTPResponsePart
    typealias OutboundOut = HTTPResponsePart

    private let fastPath: CacheHitFastPath
    private let idleTimeout: TimeAmount

    init(proxy: CachingProxy, idleTimeout: TimeAmount) {
        self.fastPath = CacheHitFastPath(proxy: proxy)
        self.idleTimeout = idleTimeout
    }

    func handlerAdded(context: ChannelHandlerContext) {
        do {
            let codec = try context.pipeline.syncOperations.context(handlerType: HTTP1ToHTTPServerCodec.self)
            try context.pipeline.syncOperations.addHandler(
                IdleStateHandler(readTimeout: idleTimeout, writeTimeout: idleTimeout), position: .before(codec.handler))
            try context.pipeline.syncOperations.addHandler(fastPath, position: .before(codec.handler))
        } catch {
            // Without the fast path every request takes the async path: slower, still correct
            // (idle connections then stay open until the client closes them).
            fastPath.proxy.logger.error("the event-loop hit path could not be installed: \(error)")
        }
    }

    func write(context: ChannelHandlerContext, data: NIOAny, promise: EventLoopPromise<Void>?) {
        guard case .end = unwrapOutboundIn(data) else { return context.write(data, promise: promise) }
        fastPath.asyncResponseEnded()
        let sent = fastPath.endSent(context)
        promise.map { sent.futureResult.cascade(to: $0) }
        context.write(data, promise: sent)
    }
}
