import NIOCore
import Testing

@testable import TierCacheRedis

@Suite struct RESPParserTests {
    private func parse(_ text: String, parser: RESPParser = RESPParser()) throws -> (RESPValue, Int)? {
        try parser.parse(ByteBuffer(string: text))
    }

    @Test func resp2Replies() throws {
        #expect(try parse("+OK\r\n")?.0 == .simpleString("OK"))
        #expect(try parse("-ERR wrong\r\n")?.0 == .error("ERR wrong"))
        #expect(try parse(":-42\r\n")?.0 == .integer(-42))
        #expect(try parse("$5\r\nhello\r\n")?.0 == .bulkString(Array("hello".utf8)))
        #expect(try parse("$0\r\n\r\n")?.0 == .bulkString([]))
        #expect(try parse("$-1\r\n")?.0 == .null)
        #expect(try parse("*-1\r\n")?.0 == .null)
        #expect(try parse("*2\r\n$1\r\na\r\n:1\r\n")?.0 == .array([.bulkString([97]), .integer(1)]))
        // A binary bulk string may contain CRLF.
        #expect(try parse("$4\r\n\r\n\r\n\r\n")?.0 == .bulkString([13, 10, 13, 10]))
    }

    @Test func resp3Replies() throws {
        #expect(try parse("_\r\n")?.0 == .null)
        #expect(try parse("#t\r\n")?.0 == .boolean(true))
        #expect(try parse(",3.5\r\n")?.0 == .double(3.5))
        #expect(try parse(",inf\r\n")?.0 == .double(.infinity))
        #expect(try parse("(12345678901234567890\r\n")?.0 == .bigNumber("12345678901234567890"))
        #expect(try parse("%1\r\n+a\r\n:1\r\n")?.0 == .map([(.simpleString("a"), .integer(1))]))
        #expect(try parse("~1\r\n:1\r\n")?.0 == .array([.integer(1)]))
        #expect(try parse(">2\r\n+message\r\n+x\r\n")?.0 == .push([.simpleString("message"), .simpleString("x")]))
        #expect(try parse("=7\r\ntxt:abc\r\n")?.0 == .bulkString(Array("abc".utf8)))
        #expect(try parse("!3\r\nERR\r\n")?.0 == .error("ERR"))
    }

    /// An attribute describes the value after it, which is the reply: read as the reply, it
    /// shifted every later reply onto the wrong command.
    @Test func anAttributeIsSkippedForTheValueItDescribes() throws {
        let text = "|1\r\n+key-popularity\r\n%1\r\n$1\r\na\r\n,0.19\r\n$3\r\nfoo\r\n"
        let parsed = try #require(try parse(text))
        #expect(parsed.0 == .bulkString(Array("foo".utf8)))
        #expect(parsed.1 == text.utf8.count, "the attribute and its value, consumed together")
        #expect(try parse("|1\r\n+k\r\n:1\r\n") == nil, "the value must arrive too")
    }

    @Test func incompleteRepliesWaitForMoreBytes() throws {
        let whole = "*2\r\n$5\r\nhello\r\n:7\r\n"
        for length in 0..<whole.utf8.count {
            // Cut by bytes ("\r\n" is one Character).
            let cut = String(decoding: Array(whole.utf8.prefix(length)), as: UTF8.self)
            #expect(try parse(cut) == nil, "prefix \(length)")
        }
        #expect(try parse(whole)?.1 == whole.utf8.count)
    }

    @Test(arguments: [
        "?what\r\n", ":12x\r\n", "$abc\r\n", "$3\r\nabcd\r\n", "#x\r\n", ",nope\r\n", "+OK\rX", "$-2\r\n", "*-5\r\n",
    ])
    func garbageIsAProtocolViolation(_ text: String) {
        #expect(throws: RedisError.self) { try parse(text) }
    }

    @Test func limitsAreEnforced() throws {
        var parser = RESPParser()
        parser.maximumBulkLength = 10
        parser.maximumAggregateCount = 2
        parser.maximumDepth = 2
        parser.maximumLineLength = 8
        #expect(throws: RedisError.self) { try parse("$11\r\n", parser: parser) }
        #expect(throws: RedisError.self) { try parse("*3\r\n", parser: parser) }
        #expect(throws: RedisError.self) { try parse("*1\r\n*1\r\n*1\r\n*1\r\n:1\r\n", parser: parser) }
        #expect(throws: RedisError.self) { try parse("+" + String(repeating: "x", count: 20), parser: parser) }
        // At the limit a line parses; one byte over it, whole with its CRLF, is refused (not
        // waited on for ever), in the bulk reader too.
        #expect(try parse("+12345678\r\n", parser: parser)?.0 == .simpleString("12345678"))
        #expect(throws: RedisError.self) { try parse("+123456789\r\n", parser: parser) }
        #expect(throws: RedisError.self) { try parser.parseBulk(ByteBuffer(string: "$123456789\r\n")) }
    }
}

@Suite struct ClusterRedirectionTests {
    /// A redirected command reaches the node as the one it was sent to was reached, so that the
    /// node equals the one `CLUSTER SLOTS` names (TLS included) and is not known twice.
    @Test func aRedirectKeepsCredentialsAndTLS() throws {
        let target = RedisEndpoint(host: "10.0.0.1", port: 6380, username: "app", password: "pw", usesTLS: true)
        let moved = ClusterRedisClient.redirection("MOVED 3999 10.0.0.2:6381", moved: "MOVED ", from: target)
        #expect(moved == RedisEndpoint(host: "10.0.0.2", port: 6381, username: "app", password: "pw", usesTLS: true))
        let asked = ClusterRedisClient.redirection("ASK 3999 10.0.0.3:7000", moved: "ASK ", from: target)
        #expect(asked?.host == "10.0.0.3" && asked?.port == 7000 && asked?.usesTLS == true)
        // `cluster-preferred-endpoint-type unknown-endpoint`, or a node without a hostname: the
        // host the command went to (they were followed as hosts "" and "?").
        for unknown in ["MOVED 3999 :6381", "MOVED 3999 ?:6381"] {
            let same = ClusterRedisClient.redirection(unknown, moved: "MOVED ", from: target)
            #expect(same?.host == "10.0.0.1" && same?.port == 6381, "\(unknown)")
        }
        #expect(ClusterRedisClient.redirection("ASK 3999 ?:7001", moved: "ASK ", from: target)?.host == "10.0.0.1")
        #expect(ClusterRedisClient.redirection("MOVED 3999 nowhere", moved: "MOVED ", from: target) == nil)
        #expect(ClusterRedisClient.redirection("ERR no", moved: "MOVED ", from: target) == nil)
    }
}

@Suite struct ClusterSlotMapTests {
    func range(_ first: Int64, _ last: Int64, host: RESPValue, port: Int64) -> RESPValue {
        .array([.integer(first), .integer(last), .array([host, .integer(port), .bulkString(Array("id".utf8))])])
    }

    /// `cluster-preferred-endpoint-type unknown-endpoint` names no host (NULL, in RESP2 or 3):
    /// the node is at the host queried. (The whole map was refused as malformed, and the cluster
    /// unusable.)
    @Test func aNodeWithoutAHostIsAtTheQueriedOne() throws {
        let queried = RedisEndpoint(host: "cache.internal", port: 7000)
        let map = try ClusterRedisClient.SlotMap(
            .array([
                range(0, 8191, host: .null, port: 7000),
                range(8192, 16383, host: .bulkString(Array("?".utf8)), port: 7001),
            ]), queried: queried)
        #expect(map.coveredSlots == HashSlot.count)
        #expect(
            map.nodes.map(\.host) == ["cache.internal", "cache.internal"] && map.nodes.map(\.port) == [7000, 7001])
        #expect(throws: RedisError.self) {
            try ClusterRedisClient.SlotMap(.array([range(0, 10, host: .integer(1), port: 7000)]), queried: queried)
        }
    }

    /// A complete map of two primaries split at `split`, answered by the node at `queried`.
    func map(split: Int64, _ first: Int64 = 7000, _ second: Int64 = 7001) throws -> ClusterRedisClient.SlotMap {
        let local = RESPValue.bulkString(Array("127.0.0.1".utf8))
        return try ClusterRedisClient.SlotMap(
            .array([range(split, 16383, host: local, port: second), range(0, split - 1, host: local, port: first)]),
            queried: RedisEndpoint(host: "127.0.0.1", port: 7000))
    }

    @Test("One refresh's answers: a majority decides at once; else the most answered, a change winning a tie")
    func votes() throws {
        let old = try map(split: 8192)
        let new = try map(split: 8192, 7000, 7002)
        // The same routes whatever order the answer lists its nodes in.
        #expect(try map(split: 8192).routes == old.routes && old.routes != new.routes)
        let partial = try ClusterRedisClient.SlotMap(
            .array([range(0, 99, host: .null, port: 7003)]), queried: RedisEndpoint(host: "127.0.0.1", port: 7003))

        var majority = SlotMapVotes(asked: 3, installed: old.routes)
        #expect(majority.add(old) == nil && majority.add(partial) == nil)
        #expect(majority.add(new) == nil)
        #expect(majority.add(new)?.routes == new.routes, "two of three")

        var tie = SlotMapVotes(asked: 4, installed: old.routes)
        for answer in [old, new, old, new] { #expect(tie.add(answer) == nil) }
        #expect(tie.choice?.routes == new.routes, "the installed map loses a tie")
        var moreOld = SlotMapVotes(asked: 5, installed: old.routes)
        for answer in [new, old, old] { _ = moreOld.add(answer) }
        #expect(moreOld.choice?.routes == old.routes, "the most answered")

        var none = SlotMapVotes(asked: 2, installed: nil)
        #expect(none.choice == nil)
        _ = none.add(partial)
        #expect(none.choice?.coveredSlots == 100, "the widest partial map when none is complete")
    }
}

@Suite struct ReceiveBufferTests {
    /// Bytes of replies already parsed are let go of when more bytes arrive, once they are as many
    /// as those unread; a large reply still arriving is not moved at every read.
    @Test func parsedBytesAreLetGoOf() {
        var appended = ByteBuffer(repeating: 1, count: 100_000)
        appended.moveReaderIndex(forwardBy: 99_990)
        var incoming = ByteBuffer(repeating: 2, count: 20)
        RedisCommandHandler.append(&incoming, to: &appended)
        #expect(appended.readerIndex == 0 && appended.readableBytes == 30)
        #expect(
            appended.getBytes(at: 0, length: 30) == [UInt8](repeating: 1, count: 10) + [UInt8](repeating: 2, count: 20))
        var kept = ByteBuffer(repeating: 3, count: 100_000)
        kept.moveReaderIndex(forwardBy: 10_000)
        var more = ByteBuffer(repeating: 4, count: 20)
        RedisCommandHandler.append(&more, to: &kept)
        #expect(kept.readerIndex == 10_000 && kept.readableBytes == 90_020)
    }
}

@Suite struct HashSlotTests {
    @Test func slotsMatchTheClusterSpecification() {
        #expect(HashSlot.crc16(Array("123456789".utf8)[...]) == 0x31C3)
        #expect(HashSlot.of(Array("foo".utf8)) == 12182)
        #expect(HashSlot.of(Array("bar".utf8)) == 5061)
    }

    @Test func hashTagsGroupKeys() {
        let following = HashSlot.of(Array("{user1000}.following".utf8))
        #expect(following == HashSlot.of(Array("{user1000}.followers".utf8)))
        #expect(following == HashSlot.of(Array("user1000".utf8)))
        // An empty tag does not count: the whole key is hashed.
        #expect(HashSlot.of(Array("foo{}{bar}".utf8)) == Int(HashSlot.crc16(Array("foo{}{bar}".utf8)[...]) % 16384))
        #expect(HashSlot.of(Array("foo{{bar}}zap".utf8)) == HashSlot.of(Array("{bar".utf8)))
    }

    @Test func endpointsParse() throws {
        let endpoint = try RedisEndpoint(url: "redis://app:s%40cret@cache.internal:6380/3")
        #expect(
            endpoint
                == RedisEndpoint(host: "cache.internal", port: 6380, username: "app", password: "s@cret", database: 3))
        #expect(try RedisEndpoint(url: "redis://:pw@h").password == "pw")
        // Decoded once: "%25" is a literal "%", so "ab%2512cd" is the password "ab%12cd".
        #expect(try RedisEndpoint(url: "redis://u%2541:ab%2512cd@h").password == "ab%12cd")
        #expect(try RedisEndpoint(url: "redis://u%2541:ab%2512cd@h").username == "u%41")
        for bad in ["cache:6379", "http://h", "rediss://", "redis://h/x", "redis://"] {
            #expect(throws: RedisError.self, "\(bad)") { try RedisEndpoint(url: bad) }
        }
    }

    /// A password with a reserved character written as is makes the URL unreadable; the error
    /// says so without quoting the password (it goes to logs and reports).
    @Test(arguments: [
        "redis://default:p#ss@cache.internal:6379", "redis://app:p/ss@word@cache.internal",
        "redis://default:6379/p/ss@word@cache.internal",
    ])
    func aBadURLsErrorLeavesThePasswordOut(url: String) {
        #expect {
            try RedisEndpoint(url: url)
        } throws: { error in
            let message = "\(error)"
            return !message.contains("p#ss") && !message.contains("p/ss") && !message.contains("word@")
                && message.contains("redis://…@")
        }
    }
}

@Suite struct RESPIntegerTests {
    /// Reply lines are parsed as integers without making strings; what they accept must be what
    /// the standard library's `Int64.init(_: String)` accepts (an optional sign, then decimal
    /// digits, in range), and give the same number.
    @Test(arguments: [
        "0", "7", "-1", "+5", "-0", "1024", "000012", "9223372036854775807", "-9223372036854775808",
        "9223372036854775808", "-9223372036854775809", "99999999999999999999", "", "-", "+", "--1", "+-1", "1-",
        " 1", "1 ", "12x", "0x10", "1e3", "١", "1.0",
    ])
    func decimalsAreReadAsInt64ReadsThem(_ text: String) {
        #expect(RESPParser.decimal(Array(text.utf8)) == Int64(text), "\"\(text)\"")
    }

    @Test func lengthsAndCountsUseTheSameRules() throws {
        let parser = RESPParser()
        #expect(try parser.parse(ByteBuffer(string: ":+12\r\n"))?.0 == .integer(12))
        #expect(try parser.parse(ByteBuffer(string: ":-9223372036854775808\r\n"))?.0 == .integer(.min))
        #expect(try parser.parse(ByteBuffer(string: "$+3\r\nabc\r\n"))?.0 == .bulkString(Array("abc".utf8)))
        for bad in [":9223372036854775808\r\n", "$ 3\r\nabc\r\n", "*1x\r\n:1\r\n", ":\r\n", "#\r\n", "#tt\r\n"] {
            #expect(throws: RedisError.self, "\(bad)") { try parser.parse(ByteBuffer(string: bad)) }
        }
    }
}
