import NIOCore

extension ByteBuffer {
    /// The most bytes one write of a response body carries.
    ///
    /// The idle timer's write side counts time since a write *completed*: a body written whole
    /// completes only when its last byte is sent, so a slow client still reading a 40 MiB answer
    /// looked stalled after the timeout, and was cut off. Written in slices, each one sent marks
    /// progress; a client that takes none of a slice for the whole timeout is still closed.
    static let writeSliceLength = 256 << 10

    /// Calls `body` with the readable bytes as views of at most ``writeSliceLength`` bytes each,
    /// in order (no copy, and no array: the event loop's hit path writes through it).
    func forEachWriteSlice(_ body: (ByteBuffer) -> Void) {
        var rest = self
        while rest.readableBytes > 0, let slice = rest.readSlice(length: min(Self.writeSliceLength, rest.readableBytes))
        {
            body(slice)
        }
    }

    /// The slices ``forEachWriteSlice(_:)`` gives, as an array (for a `ResponseBody`).
    var writeSlices: [ByteBuffer] {
        var slices: [ByteBuffer] = []
        slices.reserveCapacity(readableBytes / Self.writeSliceLength + 1)
        forEachWriteSlice { slices.append($0) }
        return slices
    }
}
