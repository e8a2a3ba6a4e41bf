import NIOCore

/// A command on its way out, with the promise its reply completes.
struct RedisRequest {
    var arguments: [[UInt8]]
    var promise: EventLoopPromise<RESPValue>
}

/// Asks the handler to give up on every pending command (the command timeout fired).
struct RedisTimeoutEvent {}

/// Encodes commands as RESP arrays of bulk strings, decodes replies, and pairs them with their
/// promises in order: Redis answers a connection's commands in the order it received them, so any
/// number of commands can be in flight (pipelining). Every promise is completed exactly once —
/// by its reply, or by the failure that ends the connection.
///
/// Writes flush themselves at the end of the event loop's current tick: commands that several
/// tasks send at about the same time leave in one `write(2)`, as a pipeline would.
final class RedisCommandHandler: ChannelDuplexHandler {
    typealias InboundIn = ByteBuffer
    typealias OutboundIn = RedisRequest
    typealias OutboundOut = ByteBuffer

    private var pending = CircularBuffer<EventLoopPromise<RESPValue>>()
    private var received: ByteBuffer?
    private var flushScheduled = false
    private let parser: RESPParser

    init(parser: RESPParser = RESPParser()) {
        self.parser = parser
    }

    func write(context: ChannelHandlerContext, data: NIOAny, promise: EventLoopPromise<Void>?) {
        let request = unwrapOutboundIn(data)
        var buffer = context.channel.allocator.buffer(capacity: 16 + request.arguments.reduce(0) { $0 + $1.count + 16 })
        buffer.writeString("*\(request.arguments.count)\r\n")
        for argument in request.arguments {
            buffer.writeString("$\(argument.count)\r\n")
            buffer.writeBytes(argument)
            buffer.writeStaticString("\r\n")
        }
        pending.append(request.promise)
        context.write(wrapOutboundOut(buffer), promise: promise)
        if !flushScheduled {
            flushScheduled = true
            // Runs on this event loop, after the writes already queued for it.
            context.eventLoop.assumeIsolated().execute {
                self.flushScheduled = false
                context.flush()
            }
        }
    }

    func channelRead(context: ChannelHandlerContext, data: NIOAny) {
        var incoming = unwrapInboundIn(data)
        if var buffered = received {
            buffered.writeBuffer(&incoming)
            received = buffered
        } else {
            received = incoming
        }
        do {
            while var buffer = received, buffer.readableBytes > 0, let (value, length) = try parser.parse(buffer) {
                buffer.moveReaderIndex(forwardBy: length)
                received = buffer.readableBytes > 0 ? buffer : nil
                if case .push = value { continue }  // RESP3 out-of-band data; nothing here subscribes
                guard let promise = pending.popFirst() else {
                    throw RedisError.protocolViolation("a reply nobody asked for")
                }
                promise.succeed(value)
            }
        } catch {
            failAll(error as? RedisError ?? .protocolViolation("\(error)"), context: context)
        }
    }

    func userInboundEventTriggered(context: ChannelHandlerContext, event: Any) {
        if event is RedisTimeoutEvent {
            failAll(.timeout, context: context)
        } else {
            context.fireUserInboundEventTriggered(event)
        }
    }

    func errorCaught(context: ChannelHandlerContext, error: any Error) {
        failAll(.connectionFailed("\(error)"), context: context)
    }

    func channelInactive(context: ChannelHandlerContext) {
        let error = RedisError.connectionFailed("the connection closed")
        while let promise = pending.popFirst() { promise.fail(error) }
        context.fireChannelInactive()
    }

    private func failAll(_ error: RedisError, context: ChannelHandlerContext) {
        while let promise = pending.popFirst() { promise.fail(error) }
        received = nil
        context.close(promise: nil)
    }
}
