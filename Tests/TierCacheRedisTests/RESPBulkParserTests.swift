import NIOCore
import Testing

@testable import TierCacheRedis

/// `RESPParser.parseBulk`, which finds a `GET` or `MGET` reply's strings in place: the same
/// replies `parse` reads, as positions in the buffer.
@Suite struct RESPBulkParserTests {
    /// The strings a bulk parse found, read back from the buffer; `nil` for nulls.
    private enum Found: Equatable {
        case one([UInt8]?)
        case many([[UInt8]?])
        case incomplete, other
    }

    private func found(_ text: String) throws -> Found {
        var buffer = ByteBuffer(string: "xx")  // a reader index past 0, as after earlier replies
        buffer.moveReaderIndex(forwardBy: 2)
        buffer.writeString(text)
        switch try RESPParser().parseBulk(buffer) {
        case .incomplete: return .incomplete
        case .other: return .other
        case .parsed(let reply, let length):
            #expect(length == text.utf8.count)
            func bytes(_ range: Range<Int>?) -> [UInt8]? {
                range.map { buffer.getBytes(at: $0.lowerBound, length: $0.count) ?? [] }
            }
            switch reply {
            case .one(let range): return .one(bytes(range))
            case .many(let ranges): return .many(ranges.map(bytes))
            }
        }
    }

    @Test func bulkStringsNullsAndArraysOfThem() throws {
        #expect(try found("$5\r\nhello\r\n") == .one(Array("hello".utf8)))
        #expect(try found("$4\r\n\r\n\r\n\r\n") == .one([13, 10, 13, 10]))
        #expect(try found("$0\r\n\r\n") == .one([]))
        #expect(try found("$-1\r\n") == .one(nil))
        #expect(try found("_\r\n") == .one(nil))
        #expect(try found("*3\r\n$1\r\na\r\n$-1\r\n_\r\n") == .many([[97], nil, nil]))
        #expect(try found("*0\r\n") == .many([]))
    }

    @Test("Other shapes are left to parse(_:), which reads them as values")
    func otherShapes() throws {
        for text in [
            "-MOVED 1 127.0.0.1:7000\r\n", ":1\r\n", "+OK\r\n", "*-1\r\n", "*1\r\n:1\r\n", "*1\r\n*0\r\n",
            ">1\r\n$1\r\na\r\n",
        ] {
            #expect(try found(text) == .other, "\(text)")
        }
    }

    @Test("Every prefix of a reply waits for more bytes")
    func incomplete() throws {
        for whole in ["$5\r\nhello\r\n", "*2\r\n$1\r\na\r\n$-1\r\n"] {
            for length in 0..<whole.utf8.count {
                let prefix = String(decoding: whole.utf8.prefix(length), as: UTF8.self)
                #expect(try found(prefix) == .incomplete, "\(prefix.debugDescription)")
            }
        }
    }

    @Test("Malformed replies throw, as parse(_:) does")
    func malformed() {
        for text in ["$5\r\nhelloXX", "$-2\r\n", "$x\r\n", "*1\r\n$1\r\naXX"] {
            #expect(throws: RedisError.self, "\(text)") { try found(text) }
        }
    }
}
