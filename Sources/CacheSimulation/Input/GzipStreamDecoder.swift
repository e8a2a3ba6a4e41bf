import CZlib

/// gzip decompression through zlib's `inflate`, including files made of several gzip members.
final class GzipStreamDecoder: StreamDecoder {
    private var stream = z_stream()
    private var memberComplete = false

    init() throws(TraceError.Reason) {
        // 15 window bits + 16: expect a gzip header (not raw deflate, not zlib).
        let status = inflateInit2_(&stream, 15 + 16, zlibVersion(), Int32(MemoryLayout<z_stream>.size))
        guard status == Z_OK else { throw .decompression("gzip: inflateInit2 failed (\(status))") }
    }

    deinit { inflateEnd(&stream) }

    func decode(
        _ input: UnsafeRawBufferPointer, into output: UnsafeMutableRawBufferPointer
    ) throws(TraceError.Reason) -> (consumed: Int, produced: Int) {
        if memberComplete {
            // Zero bytes after a member are padding (tape blocks, preallocated files), which GNU
            // gzip and Python's gzip skip; anything else starts another member.
            let padding = input.prefix { $0 == 0 }.count
            if padding > 0 || input.isEmpty { return (padding, 0) }
            inflateReset(&stream)
            memberComplete = false
        }
        stream.next_in = UnsafeMutablePointer(mutating: input.baseAddress?.assumingMemoryBound(to: Bytef.self))
        stream.avail_in = uInt(input.count)
        stream.next_out = output.baseAddress?.assumingMemoryBound(to: Bytef.self)
        stream.avail_out = uInt(output.count)
        let status = inflate(&stream, Z_NO_FLUSH)
        let consumed = input.count - Int(stream.avail_in)
        let produced = output.count - Int(stream.avail_out)
        switch status {
        case Z_OK, Z_BUF_ERROR:
            break
        case Z_STREAM_END:
            memberComplete = true
        default:
            let message = stream.msg.map { String(cString: $0) } ?? "error \(status)"
            throw .decompression("gzip: \(message)")
        }
        return (consumed, produced)
    }

    func finish() throws(TraceError.Reason) {
        if !memberComplete { throw .truncated("the gzip stream ends before its last member is complete") }
    }
}
