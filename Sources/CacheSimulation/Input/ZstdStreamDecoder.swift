import CZstd

/// zstd streaming decompression (`ZSTD_decompressStream`); several concatenated frames are fine.
final class ZstdStreamDecoder: StreamDecoder {
    private let stream: OpaquePointer
    /// `ZSTD_decompressStream` returns 0 exactly when a frame is complete; anything else at the end
    /// of the file means the file was cut short.
    private var frameComplete = true

    /// The largest window a frame may ask for: 2^28 bytes (256 MiB), the xz decoder's memory
    /// limit, twice zstd's default (128 MiB), so that `zstd --long` files up to `--long=28` read.
    /// A frame's header names its window, and the decoder reserves what it names.
    static let windowLogMax: Int32 = 28

    init() throws(TraceError.Reason) {
        guard let stream = ZSTD_createDStream() else {
            throw .decompression("zstd: cannot allocate a decompression context")
        }
        self.stream = stream
        ZSTD_DCtx_setParameter(stream, ZSTD_d_windowLogMax, Self.windowLogMax)
    }

    deinit { ZSTD_freeDStream(stream) }

    func decode(
        _ input: UnsafeRawBufferPointer, into output: UnsafeMutableRawBufferPointer
    ) throws(TraceError.Reason) -> (consumed: Int, produced: Int) {
        var inBuffer = ZSTD_inBuffer(src: input.baseAddress, size: input.count, pos: 0)
        var outBuffer = ZSTD_outBuffer(dst: output.baseAddress, size: output.count, pos: 0)
        let result = ZSTD_decompressStream(stream, &outBuffer, &inBuffer)
        if ZSTD_isError(result) != 0 {
            if ZSTD_getErrorCode(result) == ZSTD_error_frameParameter_windowTooLarge {
                throw .decompression(
                    "zstd: the frame needs a window over \(1 << (Self.windowLogMax - 20)) MiB (made with `zstd --long` above 28?); recompress it with `zstd --long=28` or less"
                )
            }
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
