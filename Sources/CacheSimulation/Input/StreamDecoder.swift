/// One decompression algorithm, fed compressed bytes in pieces.
///
/// Implementations keep their native context alive between calls and free it in `deinit`, so they
/// are classes; a reader owns exactly one and never shares it across threads.
protocol StreamDecoder: AnyObject {
    /// Decodes as much of `input` as fits into `output`.
    /// - Returns: how many input bytes were consumed and how many output bytes were produced.
    func decode(
        _ input: UnsafeRawBufferPointer, into output: UnsafeMutableRawBufferPointer
    ) throws(TraceError.Reason) -> (consumed: Int, produced: Int)

    /// Called once the file has no more bytes and the decoder produced everything it could:
    /// throws when the compressed stream stopped in the middle of a frame.
    func finish() throws(TraceError.Reason)
}

/// Files that are not compressed pass through unchanged.
final class PassthroughDecoder: StreamDecoder {
    func decode(
        _ input: UnsafeRawBufferPointer, into output: UnsafeMutableRawBufferPointer
    ) -> (consumed: Int, produced: Int) {
        let count = min(input.count, output.count)
        if count > 0, let source = input.baseAddress, let destination = output.baseAddress {
            destination.copyMemory(from: source, byteCount: count)
        }
        return (count, count)
    }

    func finish() {}
}
