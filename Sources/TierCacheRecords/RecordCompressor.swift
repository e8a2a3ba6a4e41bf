/// A compression format a tier stores ``EntryRecord`` payloads in.
///
/// Each format has a flag bit of its own in the record's header, so a record says which format
/// its payload is in, and a tier reading another tier's format (a zstd frame read by a tier that
/// only has zlib) refuses it as damage instead of decoding garbage. Frames must carry a checksum
/// of their own (zstd's content checksum, zlib's Adler-32): raw payloads get the record's.
public protocol RecordCompressor: Sendable {
    /// What a frame may need beside itself to decompress (a trained dictionary), or `Never`.
    associatedtype Dictionary: Sendable

    /// The format's flag in the record header.
    static var format: EntryRecord.PayloadFormat { get }

    /// The most bytes compressing `count` bytes can produce.
    static func compressedBound(_ count: Int) -> Int

    /// Compresses `source` into `destination` and returns the compressed size, or `nil` when the
    /// result would not fit or compression failed (the record then stores the value raw).
    func compress(
        _ source: UnsafeRawBufferPointer, into destination: UnsafeMutableRawBufferPointer, dictionary: Dictionary?
    ) -> Int?

    /// Decompresses a frame whose content is `originalSize` bytes long, verifying its checksum;
    /// throws a description of what is wrong otherwise.
    func decompress(
        _ source: UnsafeRawBufferPointer, originalSize: Int, dictionary: Dictionary?
    ) throws(EntryRecord.DecodeFailure) -> [UInt8]
}

/// A dictionary to compress with, and the id records name it by.
public struct RecordDictionary<Dictionary: Sendable>: Sendable {
    /// The id records compressed with ``dictionary`` carry.
    public let id: UInt16
    /// The dictionary.
    public let dictionary: Dictionary

    /// Pairs `dictionary` with the id records will name it by.
    public init(id: UInt16, dictionary: Dictionary) {
        self.id = id
        self.dictionary = dictionary
    }
}
