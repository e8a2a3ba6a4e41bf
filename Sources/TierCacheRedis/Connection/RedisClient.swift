import NIOCore

/// Sends commands to a Redis deployment: one server, or a cluster routed by key slot.
protocol RedisClient: Sendable {
    /// Sends a command about `key` (nil: any node) and returns its reply; error replies throw
    /// ``RedisError/server(_:)``. With `readingKeyFirst`, an `EXISTS` of the key goes just ahead
    /// of it on the same connection (see ``TrackingRedirect/tracksWrittenKeys``).
    func send(_ arguments: [[UInt8]], key: [UInt8]?, readingKeyFirst: Bool) async throws(RedisError) -> RESPValue
    /// Sends a read (`GET`, `MGET`) about `key` whose bulk strings are records, decoded by
    /// `decoder` as they arrive; error replies throw ``RedisError/server(_:)``.
    func read(
        _ arguments: [[UInt8]], key: [UInt8]?, decoder: any RedisRecordDecoder
    ) async throws(RedisError) -> RedisRecordsReply
    /// The primaries holding data: the one server, or the cluster's slot owners.
    func primaries() async throws(RedisError) -> [RedisEndpoint]
    /// Sends a command to one node (`SCAN`, `INFO`, `DBSIZE`); error replies throw.
    func send(_ arguments: [[UInt8]], to node: RedisEndpoint) async throws(RedisError) -> RESPValue
    /// Reads the deployment's topology again (a cluster's slot map), so that ``primaries()``
    /// answers for now; errors leave the last one known.
    func refreshTopology() async
    /// The nodes whose circuit breaker is open.
    var nodesWithOpenCircuit: [RedisEndpoint] { get }
    func close()
}

extension RedisClient {
    /// Sends a command about `key` (nil: any node); error replies throw.
    func send(_ arguments: [[UInt8]], key: [UInt8]?) async throws(RedisError) -> RESPValue {
        try await send(arguments, key: key, readingKeyFirst: false)
    }
}

/// One Redis server.
final class StandaloneRedisClient: RedisClient {
    private let pool: RedisConnectionPool

    init(endpoint: RedisEndpoint, group: any EventLoopGroup, options: RedisConnectionPool.Options) {
        pool = RedisConnectionPool(endpoint: endpoint, group: group, options: options)
    }

    func send(_ arguments: [[UInt8]], key: [UInt8]?, readingKeyFirst: Bool) async throws(RedisError) -> RESPValue {
        let reply = try await pool.send(arguments, readingFirst: readingKeyFirst ? key : nil)
        if case .error(let message) = reply { throw .server(message) }
        return reply
    }

    func read(
        _ arguments: [[UInt8]], key: [UInt8]?, decoder: any RedisRecordDecoder
    ) async throws(RedisError) -> RedisRecordsReply {
        let reply = try await pool.read(arguments, decoder: decoder)
        if case .value(.error(let message)) = reply { throw .server(message) }
        return reply
    }

    var nodesWithOpenCircuit: [RedisEndpoint] { pool.isCircuitOpen ? [pool.endpoint] : [] }

    func primaries() -> [RedisEndpoint] { [pool.endpoint] }

    func refreshTopology() async {}

    func send(_ arguments: [[UInt8]], to node: RedisEndpoint) async throws(RedisError) -> RESPValue {
        try await send(arguments, key: nil)
    }

    func close() { pool.close() }
}
