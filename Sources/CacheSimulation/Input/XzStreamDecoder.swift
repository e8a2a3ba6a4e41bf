import CLzma

/// xz decompression through liblzma, concatenated streams included.
final class XzStreamDecoder: StreamDecoder {
    /// The most memory the decoder may take: 256 MiB, four times what `xz -9` needs (65 MiB). A
    /// stream's header names its dictionary's size, up to 4 GiB, and without a limit a damaged or
    /// hostile header had liblzma reserve that much.
    static let memoryLimit: UInt64 = 256 << 20

    private var stream = lzma_stream()
    private var streamEnded = false

    init() throws(TraceError.Reason) {
        // 0x08 is LZMA_CONCATENATED, a macro Swift does not import: decode every concatenated .xz stream.
        let status = lzma_stream_decoder(&stream, Self.memoryLimit, 0x08)
        guard status == LZMA_OK else { throw .decompression("xz: cannot start a decoder (\(status.rawValue))") }
    }

    deinit { lzma_end(&stream) }

    func decode(
        _ input: UnsafeRawBufferPointer, into output: UnsafeMutableRawBufferPointer
    ) throws(TraceError.Reason) -> (consumed: Int, produced: Int) {
        stream.next_in = input.baseAddress?.assumingMemoryBound(to: UInt8.self)
        stream.avail_in = input.count
        stream.next_out = output.baseAddress?.assumingMemoryBound(to: UInt8.self)
        stream.avail_out = output.count
        // LZMA_CONCATENATED needs LZMA_FINISH to tell the end of the input from a pause.
        let status = lzma_code(&stream, input.count == 0 ? LZMA_FINISH : LZMA_RUN)
        let consumed = input.count - stream.avail_in
        let produced = output.count - stream.avail_out
        switch status {
        case LZMA_OK, LZMA_BUF_ERROR:
            break
        case LZMA_STREAM_END:
            streamEnded = true
        case LZMA_DATA_ERROR, LZMA_FORMAT_ERROR:
            throw .decompression("xz: the data is damaged")
        case LZMA_MEMLIMIT_ERROR:
            throw .decompression(
                "xz: the stream needs more than \(Self.memoryLimit >> 20) MiB of memory to decode (its dictionary's size); "
                    + "compress it again with a smaller dictionary (xz -9 needs 65 MiB)")
        default:
            throw .decompression("xz: decoder error \(status.rawValue)")
        }
        return (consumed, produced)
    }

    func finish() throws(TraceError.Reason) {
        if !streamEnded { throw .truncated("the xz stream ends before it is complete") }
    }
}
