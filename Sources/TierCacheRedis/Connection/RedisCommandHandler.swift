import NIOCore
import Synchronization

/// Where a command's reply goes: the task waiting for it, or the batch it is one command of.
enum RedisReplyTarget {
    /// The caller of one command. Unsafe (no checked canary to allocate per command): the handler
    /// answers each pending command exactly once, by its reply or by the failure that ends the
    /// connection, and answers a command it cannot queue at once.
    case single(UnsafeContinuation<Result<RESPValue, RedisError>, Never>)
    /// One command of a pipeline: its caller is resumed once, for the whole batch.
    case batch(RedisReplyBatch)
    /// A read whose bulk strings are records, decoded in the receive buffer.
    case records(RedisRecordsTarget)
    /// The connection's own `CLIENT TRACKING` command (see ``TrackingRedirect``): the handler
    /// reads its reply (``TrackingChanges``): a refused redirect fails the reads behind it (no
    /// invalidation of theirs would reach the coherence), a refused `OFF` does not.
    case trackingChange(redirecting: Bool)

    func complete(_ result: Result<RESPValue, RedisError>) {
        switch self {
        case .single(let continuation): continuation.resume(returning: result)
        case .batch(let batch): batch.deliver(result)
        case .records(let target): target.complete(result)
        case .trackingChange: break
        }
    }
}

/// The replies of a pipeline's commands, gathered on the connection's event loop: its caller is
/// resumed once, when the last reply arrives or at the first failure, rather than once a command.
final class RedisReplyBatch {
    private var replies: [RESPValue] = []
    private let count: Int
    private var continuation: UnsafeContinuation<Result<[RESPValue], RedisError>, Never>?

    init(count: Int, continuation: UnsafeContinuation<Result<[RESPValue], RedisError>, Never>) {
        self.count = count
        self.continuation = continuation
        replies.reserveCapacity(count)
    }

    func deliver(_ result: Result<RESPValue, RedisError>) {
        guard let continuation else { return }  // already failed
        switch result {
        case .success(let reply):
            replies.append(reply)
            guard replies.count == count else { return }
            self.continuation = nil
            continuation.resume(returning: .success(replies))
        case .failure(let error):
            self.continuation = nil
            continuation.resume(returning: .failure(error))
        }
    }
}

/// Encodes commands as RESP arrays of bulk strings, decodes replies, and pairs them with their
/// callers in order: Redis answers a connection's commands in the order it received them, so any
/// number of commands can be in flight (pipelining). Every caller is answered exactly once — by
/// its reply, or by the failure that ends the connection.
///
/// Automatic pipelining: commands are encoded into one outgoing buffer, which is written and
/// flushed once at the end of the event loop's current tick, so commands that several tasks send
/// at about the same time leave in one `write(2)`, as `redis-benchmark -P` would send them.
///
/// Timeouts: one timer per connection, set for the oldest command's deadline (replies come in
/// order, so the oldest command is the one that can be late). When it fires with the oldest
/// command past its deadline, every pending command fails with ``RedisError/timeout`` and the
/// connection closes: a late reply would otherwise be taken for the next command's.
///
/// Tracking: with a ``TrackingRedirect``, a command that finds its targets changed since the
/// connection last applied them is preceded by the `CLIENT TRACKING` command that applies them.
/// If the server refuses it, the commands behind it fail (``RedisError/server(_:)``) until the
/// targets change again: a read the server would not track must not be promoted into tiers that
/// count on hearing about it.
final class RedisCommandHandler: ChannelInboundHandler {
    typealias InboundIn = ByteBuffer
    typealias OutboundOut = ByteBuffer

    private struct Pending {
        var reply: RedisReplyTarget
        var deadline: NIODeadline
    }

    private var pending = CircularBuffer<Pending>(initialCapacity: 16)
    private var received: ByteBuffer?
    private var outgoing: ByteBuffer?
    private var flushScheduled = false
    private var timer: Scheduled<Void>?
    private var context: ChannelHandlerContext?
    private let parser: RESPParser
    /// Where RESP3 pushes go (a tracking connection's invalidations); finished when the
    /// connection ends, which a push its buffer drops ends too. `nil`: pushes are dropped, as a
    /// data connection subscribes to nothing.
    private let pushes: AsyncStream<RESPValue>.Continuation?
    /// Begun when the handler fails its commands and closes the connection (``failAll``): from
    /// then on it queues nothing and reads nothing. Over TLS the channel stays active after the
    /// close until the server answers its close_notify (up to NIOSSL's shutdown timeout), and
    /// still delivers what arrives: a timed-out command's late reply would have answered a
    /// command queued since, another key's value for a read.
    private let ending: ConnectionEnding
    /// Where this connection's tracking invalidations go, and the node it is connected to; set
    /// once the connection has logged in (`CLIENT TRACKING` before `AUTH` would be refused). A
    /// class, so that the check every command makes copies one reference, not an endpoint.
    final class Tracking {
        let redirect: TrackingRedirect
        let endpoint: RedisEndpoint

        init(redirect: TrackingRedirect, endpoint: RedisEndpoint) {
            self.redirect = redirect
            self.endpoint = endpoint
        }
    }

    var tracking: Tracking?
    private var trackingChanges = TrackingChanges()

    init(
        parser: RESPParser = RESPParser(), pushes: AsyncStream<RESPValue>.Continuation? = nil,
        ending: ConnectionEnding = ConnectionEnding()
    ) {
        self.parser = parser
        self.pushes = pushes
        self.ending = ending
    }

    func handlerAdded(context: ChannelHandlerContext) {
        self.context = context
    }

    func handlerRemoved(context: ChannelHandlerContext) {
        self.context = nil
        timer?.cancel()
        failPending(.connectionFailed("the connection closed"))
        pushes?.finish()
    }

    /// Queues a command sent from outside the pipeline (``RedisConnection/send(_:)``): one hop to
    /// the event loop per command, no future. Must be called on the channel's event loop.
    func enqueue(_ arguments: [[UInt8]], deadline: NIODeadline, reply: RedisReplyTarget) {
        guard let context, context.channel.isActive, !ending.hasBegun else {
            reply.complete(.failure(.connectionFailed("the connection is closed")))
            return
        }
        enqueue(arguments, deadline: deadline, reply: reply, context: context)
    }

    /// Queues a pipeline's commands (``RedisConnection/pipeline(_:)``), whose caller is resumed
    /// once with every reply. Must be called on the channel's event loop.
    func enqueue(
        batch commands: [[[UInt8]]], deadline: NIODeadline,
        continuation: UnsafeContinuation<Result<[RESPValue], RedisError>, Never>
    ) {
        guard let context, context.channel.isActive, !ending.hasBegun else {
            continuation.resume(returning: .failure(.connectionFailed("the connection is closed")))
            return
        }
        let batch = RedisReplyBatch(count: commands.count, continuation: continuation)
        for command in commands { enqueue(command, deadline: deadline, reply: .batch(batch), context: context) }
    }

    private func enqueue(
        _ arguments: [[UInt8]], deadline: NIODeadline, reply: RedisReplyTarget, context: ChannelHandlerContext
    ) {
        if let tracking {
            if trackingChanges.needsChange(toward: tracking.redirect.generation) {
                // Written as it is, without checking the targets again: another check here could
                // find them changed once more and write the newer change first, leaving this older
                // one last on the wire while the newer generation counts as sent.
                let change = tracking.redirect.command(for: tracking.endpoint)
                write(
                    change.arguments, deadline: deadline, reply: .trackingChange(redirecting: change.redirecting),
                    context: context)
            } else if let refusal = trackingChanges.standingRefusal {
                reply.complete(.failure(Self.untracked(refusal)))
                return
            }
        }
        write(arguments, deadline: deadline, reply: reply, context: context)
    }

    /// Puts a command in the outgoing buffer, written at the end of this event loop tick.
    private func write(
        _ arguments: [[UInt8]], deadline: NIODeadline, reply: RedisReplyTarget, context: ChannelHandlerContext
    ) {
        var buffer = outgoing ?? context.channel.allocator.buffer(capacity: 256)
        Self.encode(arguments, into: &buffer)
        outgoing = buffer
        pending.append(Pending(reply: reply, deadline: deadline))
        if timer == nil { armTimer(for: deadline, context: context) }
        if !flushScheduled {
            flushScheduled = true
            // Runs on this event loop, after the tasks already queued for it: everything sent in
            // this tick goes in one write.
            context.eventLoop.assumeIsolated().execute {
                self.flushScheduled = false
                self.flushOutgoing()
            }
        }
    }

    private func flushOutgoing() {
        guard let context, let buffer = outgoing else { return }
        outgoing = nil
        context.writeAndFlush(wrapOutboundOut(buffer), promise: nil)
    }

    /// `*<count>\r\n` then `$<length>\r\n<bytes>\r\n` for each argument.
    static func encode(_ arguments: [[UInt8]], into buffer: inout ByteBuffer) {
        buffer.reserveCapacity(minimumWritableBytes: arguments.reduce(16) { $0 + $1.count + 16 })
        buffer.writeInteger(UInt8(ascii: "*"))
        writeDecimal(arguments.count, into: &buffer)
        for argument in arguments {
            buffer.writeInteger(UInt8(ascii: "$"))
            writeDecimal(argument.count, into: &buffer)
            buffer.writeBytes(argument)
            buffer.writeStaticString("\r\n")
        }
    }

    /// A non-negative count in decimal, then CRLF, without making a string.
    private static func writeDecimal(_ value: Int, into buffer: inout ByteBuffer) {
        var digits:
            (
                UInt8, UInt8, UInt8, UInt8, UInt8, UInt8, UInt8, UInt8, UInt8, UInt8,
                UInt8, UInt8, UInt8, UInt8, UInt8, UInt8, UInt8, UInt8, UInt8, UInt8
            ) =
                (0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0)
        var count = 0
        var remaining = max(0, value)
        withUnsafeMutableBytes(of: &digits) { bytes in
            repeat {
                bytes[bytes.count - 1 - count] = UInt8(ascii: "0") + UInt8(remaining % 10)
                remaining /= 10
                count += 1
            } while remaining > 0
            buffer.writeBytes(UnsafeRawBufferPointer(rebasing: bytes[(bytes.count - count)...]))
        }
        buffer.writeStaticString("\r\n")
    }

    /// Appends `incoming` to `buffered`. The bytes of replies already parsed are let go of once
    /// they are at least as many as those still unread (moving the unread ones costs no more than
    /// what it frees): a busy connection whose reads never end on a reply's boundary would
    /// otherwise keep, and copy at each growth, everything it ever received. In place, so that a
    /// uniquely held buffer is not copied.
    static func append(_ incoming: inout ByteBuffer, to buffered: inout ByteBuffer) {
        if buffered.readerIndex >= 4096, buffered.readerIndex >= buffered.readableBytes {
            buffered.discardReadBytes()
        }
        buffered.writeBuffer(&incoming)
    }

    func channelRead(context: ChannelHandlerContext, data: NIOAny) {
        // Replies to commands already failed: nobody waits for them.
        if ending.hasBegun { return }
        var incoming = unwrapInboundIn(data)
        if var buffered = received {
            // Let go of the stored copy first, so that appending does not copy the whole buffer.
            received = nil
            Self.append(&incoming, to: &buffered)
            received = buffered
        } else {
            received = incoming
        }
        do {
            replies: while var buffer = received, buffer.readableBytes > 0 {
                if trackingChanges.refusal == nil, case .records(let target)? = pending.first?.reply {
                    switch try parser.parseBulk(buffer) {
                    case .incomplete: break replies
                    case .parsed(let reply, let length):
                        pending.removeFirst()
                        target.deliver(reply, in: buffer)
                        buffer.moveReaderIndex(forwardBy: length)
                        received = buffer.readableBytes > 0 ? buffer : nil
                        continue replies
                    case .other: break  // an error reply, say: read as a value below
                    }
                }
                guard let (value, length) = try parser.parse(buffer) else { break }
                buffer.moveReaderIndex(forwardBy: length)
                received = buffer.readableBytes > 0 ? buffer : nil
                if case .push = value {
                    if case .dropped = pushes?.yield(value) {
                        // The reader's backlog is full: a dropped invalidation must not pass
                        // unnoticed, so the connection ends, which its reader takes as a loss.
                        throw RedisError.connectionFailed("the pushes' reader is too far behind; one was dropped")
                    }
                    continue
                }
                guard let next = pending.popFirst() else {
                    throw RedisError.protocolViolation("a reply nobody asked for")
                }
                if case .trackingChange(let redirecting) = next.reply {
                    trackingChanges.answered(redirecting: redirecting, value)
                } else if let refusal = trackingChanges.refusal {
                    next.reply.complete(.failure(Self.untracked(refusal)))
                } else {
                    next.reply.complete(.success(value))
                }
            }
        } catch {
            failAll(error as? RedisError ?? .protocolViolation("\(error)"), context: context)
        }
        // The timer stays set when nothing is pending: it finds nothing late, and the next
        // command sets it again; one-at-a-time commands do not each set and cancel a timer.
    }

    private static func untracked(_ refusal: String) -> RedisError {
        .server("invalidations could not be redirected, so the command was not answered: \(refusal)")
    }

    /// Sets the connection's one timer for `deadline` (the oldest pending command's).
    private func armTimer(for deadline: NIODeadline, context: ChannelHandlerContext) {
        let loop = context.eventLoop.assumeIsolated()
        timer = loop.scheduleTask(deadline: deadline) {
            self.timer = nil
            guard let context = self.context, let oldest = self.pending.first else { return }
            if oldest.deadline <= .now() {
                self.failAll(.timeout, context: context)
            } else {
                self.armTimer(for: oldest.deadline, context: context)
            }
        }
    }

    func errorCaught(context: ChannelHandlerContext, error: any Error) {
        failAll(.connectionFailed("\(error)"), context: context)
    }

    func channelInactive(context: ChannelHandlerContext) {
        timer?.cancel()
        timer = nil
        failPending(.connectionFailed("the connection closed"))
        pushes?.finish()
        if trackingChanges.isRedirected, let tracking {
            // The server forgets the keys a closed connection read: their writes will be reported
            // to nobody (``TrackingRedirect/redirectedConnectionClosed()``).
            trackingChanges.forgetRedirect()
            tracking.redirect.redirectedConnectionClosed()
        }
        context.fireChannelInactive()
    }

    private func failAll(_ error: RedisError, context: ChannelHandlerContext) {
        ending.begin()
        timer?.cancel()
        timer = nil
        failPending(error)
        received = nil
        pushes?.finish()
        context.close(promise: nil)
    }

    private func failPending(_ error: RedisError) {
        outgoing = nil
        trackingChanges.dropUnanswered()
        while let next = pending.popFirst() { next.reply.complete(.failure(error)) }
    }
}

/// Whether a connection's handler has failed its commands and closed it (``RedisCommandHandler``):
/// read by the connection's callers and its pool on any thread, set on its event loop.
final class ConnectionEnding: Sendable {
    private let begun = Atomic<Bool>(false)

    /// Whether the connection is ending.
    var hasBegun: Bool { begun.load(ordering: .relaxed) }

    /// Marks the connection as ending.
    func begin() { begun.store(true, ordering: .relaxed) }
}
