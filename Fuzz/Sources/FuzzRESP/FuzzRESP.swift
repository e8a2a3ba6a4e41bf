import FuzzDriver
import NIOCore

@testable import TierCacheRedis

/// The RESP2/RESP3 reply parser, on everything a server (or something pretending to be one)
/// could send, including replies split at every point; and every push it parses read as a
/// tracking connection's invalidation (`TrackingMessage`), which must decide without crashing.
@_cdecl("FuzzRESP_main")
func fuzzMain(_ argc: Int32, _ argv: UnsafeMutablePointer<UnsafeMutablePointer<CChar>?>?) -> Int32 {
    runFuzzer(argc, argv) { data, size in
        var parser = RESPParser()
        // Small limits, so that the limit checks themselves are reached.
        parser.maximumBulkLength = 1 << 16
        parser.maximumAggregateCount = 1 << 10
        parser.maximumLineLength = 1 << 10
        let input = bytes(data, size)
        var buffer = ByteBuffer(bytes: input)
        while buffer.readableBytes > 0 {
            guard let parsed = try? parser.parse(buffer), parsed.1 > 0 else { break }
            // A reply never spans more bytes than there are.
            precondition(
                parsed.1 <= buffer.readableBytes, "a reply claimed \(parsed.1) of \(buffer.readableBytes) bytes")
            checkBulk(buffer, parser: parser, against: parsed)
            buffer.moveReaderIndex(forwardBy: parsed.1)
            if case .push = parsed.0 { checkTracking(parsed.0) }
        }
        // The same bytes arriving in pieces: every prefix is "need more" or a whole reply in it.
        for cut in stride(from: 1, to: input.count, by: max(1, input.count / 16)) {
            let prefix = ByteBuffer(bytes: input[..<cut])
            if let parsed = try? parser.parse(prefix) {
                precondition(parsed.1 <= cut, "a reply claimed bytes not yet received")
            }
        }
        return 0
    }
}

/// A push read as an invalidation for a tier under `p:`: every key it names came from a string
/// of the push that starts with the prefix.
private func checkTracking(_ push: RESPValue) {
    let prefix = Array("p:".utf8)
    guard case .success(.invalidate(let keys)) = TrackingMessage.decode(push, prefix: prefix),
        case .push(let elements) = push, elements.count == 2, case .array(let named) = elements[1]
    else { return }
    precondition(keys.count == named.count, "an invalidation lost or invented keys")
    for (key, element) in zip(keys, named) {
        precondition(element.bytes == prefix + Array(key.rawValue.utf8), "a key that the push did not name")
    }
}

/// The in-place parse of `GET` and `MGET` replies agrees with the full one: the same length, and
/// the same strings and nulls; a reply it leaves to the full parse is of another shape.
private func checkBulk(_ buffer: ByteBuffer, parser: RESPParser, against parsed: (RESPValue, Int)) {
    guard case .parsed(let reply, let length) = try? parser.parseBulk(buffer) else { return }
    precondition(length == parsed.1, "the in-place parse spans \(length) bytes, the full one \(parsed.1)")
    func value(_ range: Range<Int>?) -> RESPValue {
        range.map { .bulkString(buffer.getBytes(at: $0.lowerBound, length: $0.count) ?? []) } ?? .null
    }
    let found: RESPValue =
        switch reply {
        case .one(let range): value(range)
        case .many(let ranges): .array(ranges.map(value))
        }
    precondition(found == parsed.0, "the in-place parse read \(found), the full one \(parsed.0)")
}
