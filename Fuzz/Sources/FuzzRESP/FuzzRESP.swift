import FuzzDriver
import NIOCore

@testable import TierCacheRedis

/// The RESP2/RESP3 reply parser, on everything a server (or something pretending to be one)
/// could send, including replies split at every point.
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
            buffer.moveReaderIndex(forwardBy: parsed.1)
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
