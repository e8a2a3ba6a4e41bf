import NIOCore

extension ByteBuffer {
    /// The most bytes one write of a response body carries.
    ///
    /// The idle timer's write side counts time since a write *completed*: a body written whole
    /// completes only when its last byte is sent, so a slow client still reading a 40 MiB answer
    /// looked stalled after the timeout, and was cut off. Written in slices, each one sent marks
    /// progress; a client that takes none of a slice for the whole timeout is still closed.
    static let writeSliceLength = 256 << 10

    /// The readable bytes as views of at most ``writeSliceLength`` bytes each (no copy).
    var writeSlices: [ByteBuffer] {
        var rest = self
        var slices: [ByteBuffer] = []
        slices.reserveCapacity(rest.readableBytes / Self.writeSliceLength + 1)
        while rest.readableBytes > 0, let slice = rest.readSlice(length: min(Self.writeSliceLength, rest.readableBytes))
        {
            slices.append(slice)
        }
        return slices
    }
}
