import Foundation
import NIOCore
import NIOPosix
import NIOSSL
import Synchronization

/// One TCP connection to one Redis server, with pipelining and a timeout on every command.
public final class RedisConnection: Sendable {
    /// The server this connection is to.
    public let endpoint: RedisEndpoint
    private let channel: any Channel
    private let handler: NIOLoopBound<RedisCommandHandler>
    private let commandTimeout: TimeAmount
    /// Whether a failure of this connection has been counted (``claimFailure()``).
    private let failureClaimed = Atomic<Bool>(false)
    /// Set by the handler once it has failed its commands and closed the connection.
    private let ending: ConnectionEnding

    private init(
        endpoint: RedisEndpoint, channel: any Channel, handler: NIOLoopBound<RedisCommandHandler>,
        commandTimeout: TimeAmount, ending: ConnectionEnding
    ) {
        self.endpoint = endpoint
        self.channel = channel
        self.handler = handler
        self.commandTimeout = commandTimeout
        self.ending = ending
    }

    /// TLS for a connection: the context the tier's connections share, and the name to verify.
    struct TLS: Sendable {
        var context: NIOSSLContext
        var serverName: String?
    }

    /// Connects without TLS, then logs in (`AUTH`) and selects the database when the endpoint
    /// asks for it. (A tier's connections use TLS as its ``RedisTier/Configuration/tls`` says.)
    public static func connect(
        to endpoint: RedisEndpoint, on group: any EventLoopGroup, connectTimeout: TimeAmount, commandTimeout: TimeAmount
    ) async throws(RedisError) -> RedisConnection {
        try await connect(
            to: endpoint, on: group, connectTimeout: connectTimeout, commandTimeout: commandTimeout, tls: nil)
    }

    /// Connects (through TLS when `tls` is set), then logs in (`AUTH`) and selects the database
    /// when the endpoint asks for it. With `pushes`, the connection speaks RESP3 (`HELLO 3`) and
    /// the server's pushes go there; the stream finishes when the connection ends. With
    /// `tracking`, the server tracks the keys this connection reads for the tracking connection
    /// it names (see ``TrackingRedirect``).
    static func connect(
        to endpoint: RedisEndpoint, on group: any EventLoopGroup, connectTimeout: TimeAmount,
        commandTimeout: TimeAmount,
        tls: TLS?, pushes: AsyncStream<RESPValue>.Continuation? = nil, tracking: TrackingRedirect? = nil
    ) async throws(RedisError) -> RedisConnection {
        // SNI carries names only: an address is verified against the certificate but not sent.
        let hostName = tls?.serverName ?? endpoint.host
        let serverName = Self.isAddress(hostName) ? nil : hostName
        let channel: any Channel
        let handler: NIOLoopBound<RedisCommandHandler>
        let ending = ConnectionEnding()
        do {
            channel = try await ClientBootstrap(group: group)
                .connectTimeout(connectTimeout)
                .channelOption(ChannelOptions.socketOption(.tcp_nodelay), value: 1)
                .channelInitializer { channel in
                    channel.eventLoop.makeCompletedFuture {
                        if let tls {
                            try channel.pipeline.syncOperations.addHandler(
                                try NIOSSLClientHandler(
                                    context: tls.context, serverHostname: serverName,
                                    customVerificationCallback: nil, configuration: .init()))
                        }
                        try channel.pipeline.syncOperations.addHandler(
                            RedisCommandHandler(pushes: pushes, ending: ending))
                    }
                }
                .connect(host: endpoint.host, port: endpoint.port)
                .get()
            handler = try await channel.eventLoop.submit {
                NIOLoopBound(
                    try channel.pipeline.syncOperations.handler(type: RedisCommandHandler.self),
                    eventLoop: channel.eventLoop)
            }.get()
        } catch {
            pushes?.finish()
            throw .connectionFailed("\(endpoint): \(error)")
        }
        let connection = RedisConnection(
            endpoint: endpoint, channel: channel, handler: handler, commandTimeout: commandTimeout, ending: ending)
        do {
            // A user without a password logs in with an empty one, which an ACL user with
            // `nopass` accepts: without `AUTH` the connection would run as the default user.
            if endpoint.username != nil || endpoint.password != nil {
                let password = endpoint.password ?? ""
                let auth = endpoint.username.map { ["AUTH", $0, password] } ?? ["AUTH", password]
                _ = try await connection.sendChecked(auth.map { Array($0.utf8) })
            }
            if endpoint.database != 0 {
                _ = try await connection.sendChecked([Array("SELECT".utf8), Array(String(endpoint.database).utf8)])
            }
            if pushes != nil { _ = try await connection.sendChecked([Array("HELLO".utf8), Array("3".utf8)]) }
            if let tracking {
                try await channel.eventLoop.submit {
                    handler.value.tracking = .init(redirect: tracking, endpoint: endpoint)
                }.get()
            }
        } catch {
            connection.close()
            throw error as? RedisError ?? .connectionFailed("\(endpoint): \(error)")
        }
        return connection
    }

    /// Whether `host` is an IPv4 or IPv6 address rather than a name.
    private static func isAddress(_ host: String) -> Bool {
        var v4 = in_addr(), v6 = in6_addr()
        return inet_pton(AF_INET, host, &v4) == 1 || inet_pton(AF_INET6, host, &v6) == 1
    }

    /// Whether the connection is still open, and not closing: a connection that failed its
    /// commands (a timeout) may stay active while TLS says goodbye, and takes no more.
    public var isActive: Bool { channel.isActive && !ending.hasBegun }

    /// True the first time it is called, false ever after: a connection that fails fails every
    /// command waiting on it, and only the first of their callers counts the failure.
    func claimFailure() -> Bool {
        !failureClaimed.exchange(true, ordering: .relaxed)
    }

    /// The event loop that owns the connection: its reads, writes and replies happen there.
    public var eventLoop: any EventLoop { channel.eventLoop }

    /// Sends one command and returns its reply, error replies included (the cluster layer reads
    /// `MOVED` and `ASK` from them).
    ///
    /// One hop to the connection's event loop, which encodes the command with the others sent in
    /// the same tick (see `RedisCommandHandler`), and one back with the reply: no future, no
    /// timer of its own. A caller already on that event loop (see
    /// ``RedisTier/withEventLoopAffinity(isolation:_:)``) queues the command directly.
    public func send(_ arguments: [[UInt8]]) async throws(RedisError) -> RESPValue {
        try await onEventLoop(arguments) { handler, arguments, deadline, continuation in
            handler.enqueue(arguments, deadline: deadline, reply: .single(continuation))
        }
    }

    /// Sends a read (`GET`, `MGET`) whose bulk strings are records, and decodes them with
    /// `decoder` in the receive buffer as they arrive; a reply of another shape comes back as is.
    func read(_ arguments: [[UInt8]], decoder: any RedisRecordDecoder) async throws(RedisError) -> RedisRecordsReply {
        try await onEventLoop((arguments: arguments, decoder: decoder)) { handler, read, deadline, continuation in
            handler.enqueue(
                read.arguments, deadline: deadline,
                reply: .records(RedisRecordsTarget(decoder: read.decoder, continuation: continuation)))
        }
    }

    /// Sends several commands back to back on this connection (in the same write) and returns
    /// their replies in order, error replies included. The caller is resumed once, when the last
    /// reply arrives, not once a command; any failure fails the whole pipeline.
    public func pipeline(_ commands: [[[UInt8]]]) async throws(RedisError) -> [RESPValue] {
        guard isActive else { throw .connectionFailed("\(endpoint): the connection is closed") }
        guard !commands.isEmpty else { return [] }  // a batch of none would never be answered
        return try await onEventLoop(commands) { handler, commands, deadline, continuation in
            handler.enqueue(batch: commands, deadline: deadline, continuation: continuation)
        }
    }

    /// Hands `work` to the handler on the connection's event loop (directly when the caller is
    /// already there) with the command timeout's deadline, and waits for its answer. `enqueue`
    /// captures nothing, so a command costs no closure of its own.
    private func onEventLoop<Work: Sendable, Reply>(
        _ work: Work,
        _ enqueue:
            @escaping @Sendable (
                RedisCommandHandler, Work, NIODeadline, UnsafeContinuation<Result<Reply, RedisError>, Never>
            ) -> Void
    ) async throws(RedisError) -> Reply {
        guard isActive else { throw .connectionFailed("\(endpoint): the connection is closed") }
        let deadline = NIODeadline.now() + commandTimeout
        let handler = self.handler
        let result = await withUnsafeContinuation {
            (continuation: UnsafeContinuation<Result<Reply, RedisError>, Never>) in
            if handler.eventLoop.inEventLoop {
                enqueue(handler.value, work, deadline, continuation)
            } else {
                handler.eventLoop.execute { enqueue(handler.value, work, deadline, continuation) }
            }
        }
        return try result.mapError(naming).get()
    }

    /// A connection failure names the server; other errors are as they came.
    private func naming(_ error: RedisError) -> RedisError {
        if case .connectionFailed(let detail) = error { .connectionFailed("\(endpoint): \(detail)") } else { error }
    }

    /// Like ``send(_:)``, but an error reply throws ``RedisError/server(_:)``.
    @discardableResult
    public func sendChecked(_ arguments: [[UInt8]]) async throws(RedisError) -> RESPValue {
        let reply = try await send(arguments)
        if case .error(let message) = reply { throw .server(message) }
        return reply
    }

    /// Closes the connection (asynchronously; the call does not wait).
    public func close() {
        channel.close(promise: nil)
    }
}
