import NIOCore
import NIOPosix
import Testing

@testable import TierCacheRedis

/// `RedisConnection.pipeline`: one resumption for the whole batch, its replies in order, and a
/// failure anywhere answering the caller once.
@Suite(.timeLimit(.minutes(5)))
struct RedisPipelineTests {
    private func connect(_ endpoint: RedisEndpoint) async throws -> RedisConnection {
        try await RedisConnection.connect(
            to: endpoint, on: MultiThreadedEventLoopGroup.singleton, connectTimeout: .milliseconds(500),
            commandTimeout: .milliseconds(300))
    }

    private func command(_ words: String...) -> [[UInt8]] { words.map { Array($0.utf8) } }

    @Test(
        "Replies come back in order, error replies as values; an empty pipeline answers nothing",
        .enabled(if: RedisServers.available, RedisServers.missingMessage))
    func repliesInOrder() async throws {
        let connection = try await connect(try #require(RedisServers.standalone))
        defer { connection.close() }
        let key = "pipeline:\(UInt64.random(in: 0...UInt64.max))"
        let replies = try await connection.pipeline([
            command("SET", key, "text"), command("GET", key), command("INCR", key), command("DEL", key),
        ])
        #expect(replies.count == 4)
        #expect(replies[0] == .simpleString("OK"))
        #expect(replies[1] == .bulkString(Array("text".utf8)))
        guard case .error = replies[2] else {
            Issue.record("INCR of a string answered \(replies[2])")
            return
        }
        #expect(replies[3] == .integer(1))
        #expect(try await connection.pipeline([]).isEmpty)
        // The connection carries on after a batch.
        #expect(try await connection.send(command("PING")) == .simpleString("PONG"))
    }

    @Test(
        "A connection that breaks or goes silent mid-batch fails the whole pipeline once",
        arguments: [MisbehavingServer.Behaviour.closeMidReply, .silent, .garbage])
    func failuresAnswerOnce(_ behaviour: MisbehavingServer.Behaviour) async throws {
        let server = try await MisbehavingServer(behaviour)
        let connection = try await connect(RedisEndpoint(host: "127.0.0.1", port: server.port))
        defer { connection.close() }
        await #expect(throws: RedisError.self) {
            try await connection.pipeline([command("GET", "a"), command("GET", "b"), command("GET", "c")])
        }
        // Closed by the failure: later batches fail at once rather than wait.
        await #expect(throws: RedisError.self) { try await connection.pipeline([command("GET", "a")]) }
        try await server.shutdown()
    }
}
