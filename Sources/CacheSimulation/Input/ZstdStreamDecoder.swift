import CZstd

/// zstd streaming decompression (`ZSTD_decompressStream`); several concatenated frames are fine.
final class ZstdStreamDecoder: StreamDecoder {
    private let stream: OpaquePointer
    /// `ZSTD_decompressStream` returns 0 exactly when a frame is complete; anything else at the end
    /// of the file means the file was cut short.
    private var frameComplete = true

    init() throws(TraceError.Reason) {
        guard let stream = ZSTD_createDStream() else {
            throw .decompression("zstd: cannot allocate a decompression context")
        }
        self.stream = stream
    }

    deinit { ZSTD_freeDStream(stream) }

    func decode(
        _ input: UnsafeRawBufferPointer, into output: UnsafeMutableRawBufferPointer
    ) throws(TraceError.Reason) -> (consumed: Int, produced: Int) {
        var inBuffer = ZSTD_inBuffer(src: input.baseAddress, size: input.count, pos: 0)
        var outBuffer = ZSTD_outBuffer(dst: output.baseAddress, size: output.count, pos: 0)
        let result = ZSTD_decompressStream(stream, &outBuffer, &inBuffer)
        if ZSTD_isError(result) != 0 {
            throw .decompression("zstd: " + String(cString: ZSTD_getErrorName(result)))
        }
        // A call with nothing to do reports the next frame's header size; only real progress counts.
        if inBuffer.pos > 0 || outBuffer.pos > 0 { frameComplete = result == 0 }
        return (inBuffer.pos, outBuffer.pos)
    }

    func finish() throws(TraceError.Reason) {
        if !frameComplete { throw .truncated("the zstd stream ends in the middle of a frame") }
    }
}
