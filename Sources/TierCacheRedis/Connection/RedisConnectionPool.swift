import NIOCore
import NIOPosix
import NIOSSL
@_spi(TierCacheInternals) import TierCache

/// Up to `size` connections to one node, opened on demand and shared: commands pipeline on them.
/// A broken connection is dropped and replaced on the next command; after a failed connect the
/// pool waits (backoff doubling from 50 ms to 5 s) before opening another, using the connections
/// it has meanwhile or, with none, answering `unavailable`, so a dead node costs callers nothing
/// but a fast error. A command whose new connection fails goes on a live one if there is one. Each pool has its own
/// ``CircuitBreaker``: a node that times out repeatedly is skipped without affecting the others.
final class RedisConnectionPool: Sendable {
    struct Options: Sendable {
        var size: Int
        var connectTimeout: TimeAmount
        var commandTimeout: TimeAmount
        var breaker: CircuitBreaker.Options
        /// TLS for every connection, or nil.
        var tls: RedisConnection.TLS?
        /// Where the connections' reads are tracked, when a coherence asks for it.
        var tracking: TrackingRedirect?
    }

    private struct State {
        var connections: [RedisConnection] = []
        var connecting = 0
        /// Attempts in progress on each event loop of the group, by the loop's identity (those on
        /// a loop the group picked are not counted here).
        var connectingOn: [ObjectIdentifier: Int] = [:]
        var next = 0
        var backoff: Duration = .zero
        var retryAfter: ContinuousClock.Instant?
        var closed = false
        /// Callers waiting while every slot is being opened; resumed when an attempt ends.
        var waiters: [CheckedContinuation<Void, Never>] = []
    }

    let endpoint: RedisEndpoint
    private let group: any EventLoopGroup
    /// The group's event loops, to tell whether a caller runs on one of them.
    private let loops: EventLoopMembership
    private let options: Options
    private let state = Locked(State())
    private let breaker: CircuitBreaker

    init(endpoint: RedisEndpoint, group: any EventLoopGroup, options: Options) {
        self.endpoint = endpoint
        self.group = group
        self.loops = EventLoopMembership(group)
        self.options = options
        self.breaker = CircuitBreaker(options: options.breaker)
    }

    /// Whether this node's breaker is open.
    var isCircuitOpen: Bool { breaker.isOpen }

    /// Reports how a command on one of this pool's connections went (a server error reply is a
    /// success: the node answered).
    func record(success: Bool) {
        if success { breaker.recordSuccess() } else { breaker.recordFailure() }
    }

    /// A live connection: one on the caller's event loop when the caller runs on one of the
    /// group's and such a connection exists, else an existing one round-robin, or a new one while
    /// below `size` (on the caller's event loop, when it has one). When every slot is still
    /// connecting, waits for one of those attempts instead of opening more, so a burst of callers
    /// on a cold pool opens at most `size` connections; and a caller whose loop already has an
    /// attempt in progress waits for that one, so a burst on one loop opens one connection there
    /// and leaves the other slots to the other loops.
    func connection() async throws(RedisError) -> RedisConnection {
        enum Choice {
            case use(RedisConnection)
            case open, wait
        }
        guard breaker.allows() else { throw .unavailable("\(endpoint): circuit open after repeated failures") }
        let callersLoop = loops.callersLoop
        while true {
            let choice: Choice = try state.withLock { (state: inout State) throws(RedisError) -> Choice in
                guard !state.closed else { throw .unavailable("\(endpoint): the pool is closed") }
                state.connections.removeAll { !$0.isActive }
                // The clock is read only while a failed connect's wait is on (it is cleared once
                // over), not on every command. While the pool waits, it opens nothing, with
                // connections or without: beside a live one, every command that found a free slot
                // tried again (and waited out the connect timeout where the node drops new
                // connections).
                if let retryAfter = state.retryAfter, ContinuousClock.now >= retryAfter { state.retryAfter = nil }
                let waitsToReconnect = state.retryAfter != nil
                if waitsToReconnect, state.connections.isEmpty {
                    breaker.recordFailure()  // still failing, as far as callers can tell
                    throw .unavailable("\(endpoint): waiting to reconnect after a failure")
                }
                if let callersLoop {
                    if let local = state.connections.first(where: { $0.eventLoop === callersLoop }) {
                        return .use(local)
                    }
                    if state.connectingOn[ObjectIdentifier(callersLoop), default: 0] > 0 { return .wait }
                }
                if !waitsToReconnect, state.connections.count + state.connecting < options.size {
                    state.connecting += 1
                    if let callersLoop { state.connectingOn[ObjectIdentifier(callersLoop), default: 0] += 1 }
                    return .open
                }
                guard !state.connections.isEmpty else { return .wait }
                state.next = (state.next + 1) % state.connections.count
                return .use(state.connections[state.next])
            }
            switch choice {
            case .use(let connection): return connection
            case .open:
                do {
                    return try await open(on: callersLoop)
                } catch {
                    // A command that only wanted one more connection goes on a live one.
                    if let live = state.withLock({ $0.connections.first(where: \.isActive) }) { return live }
                    throw error
                }
            case .wait: await waitForAttempt(on: callersLoop)
            }
        }
    }

    /// Returns once a connection attempt in progress ends, or at once if there is none the caller
    /// would wait for: one on the caller's `loop`, or any while no connection is open.
    private func waitForAttempt(on loop: (any EventLoop)?) async {
        await withCheckedContinuation { (continuation: CheckedContinuation<Void, Never>) in
            let waits = state.withLock { state in
                let onLoop = loop.map { state.connectingOn[ObjectIdentifier($0), default: 0] > 0 } ?? false
                guard !state.closed, onLoop || (state.connecting > 0 && state.connections.isEmpty) else { return false }
                state.waiters.append(continuation)
                return true
            }
            if !waits { continuation.resume() }
        }
    }

    private func resumeWaiters() {
        let waiters = state.withLock { state in
            defer { state.waiters = [] }
            return state.waiters
        }
        for waiter in waiters { waiter.resume() }
    }

    /// Opens a connection on `loop` (the group's choice without one), in a slot already counted
    /// in `connecting` (and `connectingOn` for the loop).
    private func open(on loop: (any EventLoop)?) async throws(RedisError) -> RedisConnection {
        let loopID = loop.map { ObjectIdentifier($0) }
        func endAttempt(_ state: inout State) {
            state.connecting -= 1
            if let loopID {
                state.connectingOn[loopID, default: 1] -= 1
                if state.connectingOn[loopID] == 0 { state.connectingOn[loopID] = nil }
            }
        }
        do {
            let connection = try await RedisConnection.connect(
                to: endpoint, on: loop ?? group, connectTimeout: options.connectTimeout,
                commandTimeout: options.commandTimeout,
                tls: options.tls, tracking: options.tracking)
            // Not a success for the breaker: a hung server still accepts connections, and only a
            // reply shows the node answering (counted per connection, a connect that reset the
            // count each time kept the breaker of a server that never answers closed).
            let keep = state.withLock { state in
                endAttempt(&state)
                state.backoff = .zero
                state.retryAfter = nil
                guard !state.closed else { return false }
                state.connections.append(connection)
                return true
            }
            resumeWaiters()
            if !keep { connection.close() }
            return connection
        } catch {
            breaker.recordFailure()
            state.withLock { state in
                endAttempt(&state)
                state.backoff = min(max(state.backoff * 2, .milliseconds(50)), .seconds(5))
                state.retryAfter = .now + state.backoff
            }
            resumeWaiters()
            throw error
        }
    }

    /// Sends one command on a pooled connection and returns its reply, error replies included.
    ///
    /// With `readingFirst`, an `EXISTS` of that key goes just ahead of the command, in the same
    /// write (see ``TrackingRedirect/tracksWrittenKeys``); with `asking`, each is preceded by
    /// `ASKING`, which covers one command.
    func send(
        _ arguments: [[UInt8]], asking: Bool = false, readingFirst key: [UInt8]? = nil
    ) async throws(RedisError) -> RESPValue {
        try await onConnection { connection throws(RedisError) in
            guard asking || key != nil else { return try await connection.send(arguments) }
            let asking: [[[UInt8]]] = asking ? [[Array("ASKING".utf8)]] : []
            let reading: [[[UInt8]]] = key.map { asking + [[Array("EXISTS".utf8), $0]] } ?? []
            let replies = try await connection.pipeline(reading + asking + [arguments])
            guard let last = replies.last else { throw .protocolViolation("a pipeline without replies") }
            // The command went through but its key's EXISTS was refused (an ACL without
            // `exists`): the server does not track the key for this process, whose upper tiers
            // would keep the value through every later write by others. Thrown, the write counts
            // as failed, and coherence removes it from the upper tiers. (A redirect or other
            // error of the command itself is returned, for the caller to handle.)
            if key != nil, case .error(let message) = replies[asking.count] {
                if case .error = last { return last }
                throw .server(
                    "EXISTS, which coherence sends before a write so that its key is tracked, was refused: \(message)")
            }
            return last
        }
    }

    /// Sends a read whose bulk strings are records, decoded in the receive buffer (see
    /// ``RedisConnection/read(_:decoder:)``); after `ASKING`, the reply comes back as a value.
    func read(
        _ arguments: [[UInt8]], asking: Bool = false, decoder: any RedisRecordDecoder
    ) async throws(RedisError) -> RedisRecordsReply {
        guard !asking else { return .value(try await send(arguments, asking: true)) }
        return try await onConnection { connection throws(RedisError) in
            try await connection.read(arguments, decoder: decoder)
        }
    }

    /// Runs `body` on a pooled connection. A connection that fails is discarded and counted
    /// against the breaker; any reply counts as a success (the node answered).
    private func onConnection<Reply>(
        _ body: (RedisConnection) async throws(RedisError) -> Reply
    ) async throws(RedisError) -> Reply {
        let connection = try await connection()
        let reply: Reply
        do {
            reply = try await body(connection)
        } catch {
            // An error reply is an answer: the connection is sound (a refused tracking redirect
            // closed a connection a command, and opened the breaker).
            if case .server = error {
                record(success: true)
                throw error
            }
            discard(connection)
            throw error
        }
        record(success: true)
        return reply
    }

    /// Forgets a connection that failed (the next command opens another) and counts the failure,
    /// once per connection: one timeout fails every command pipelined on it, and counted once
    /// each, five of them opened the breaker ("five consecutive failures") on one slow reply.
    func discard(_ connection: RedisConnection) {
        if connection.claimFailure() { breaker.recordFailure() }
        connection.close()
        state.withLock { $0.connections.removeAll { $0 === connection } }
    }

    func close() {
        let connections = state.withLock { state in
            state.closed = true
            defer { state.connections = [] }
            return state.connections
        }
        for connection in connections { connection.close() }
        resumeWaiters()
    }
}
