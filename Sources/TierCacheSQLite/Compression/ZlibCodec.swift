import CZlib
import TierCacheRecords

/// zlib compression for the SQLite tier's records: the one general-purpose compressor every Apple
/// SDK and every Linux distribution ships.
///
/// Payloads are zlib streams (RFC 1950), whose Adler-32 trailer lets a damaged value fail to
/// decompress instead of decoding to wrong bytes. The one-shot `compress2`/`uncompress` calls need
/// no context to pool: zlib allocates its small state per call.
struct ZlibCodec: RecordCompressor {
    typealias Dictionary = Never

    static var format: EntryRecord.PayloadFormat { .zlib }

    /// The compression level, 1 (fastest) to 9.
    let level: Int32

    /// A codec at `level`, or `nil` outside zlib's 1...9.
    init?(level: Int32) {
        guard (1...9).contains(level) else { return nil }
        self.level = level
    }

    static func compressedBound(_ count: Int) -> Int { Int(CZlib.compressBound(uLong(count))) }

    func compress(
        _ source: UnsafeRawBufferPointer, into destination: UnsafeMutableRawBufferPointer, dictionary: Never?
    ) -> Int? {
        guard let sourceBase = source.baseAddress, let destinationBase = destination.baseAddress else { return nil }
        var written = uLongf(destination.count)
        let status = compress2(
            destinationBase.assumingMemoryBound(to: Bytef.self), &written,
            sourceBase.assumingMemoryBound(to: Bytef.self), uLong(source.count), level)
        return status == Z_OK ? Int(written) : nil
    }

    func decompress(
        _ source: UnsafeRawBufferPointer, originalSize: Int, dictionary: Never?
    ) throws(EntryRecord.DecodeFailure) -> [UInt8] {
        guard let sourceBase = source.baseAddress, originalSize > 0 else {
            throw EntryRecord.DecodeFailure(reason: "an empty zlib stream")
        }
        // Deflate expands at most 1,032 to 1: a larger size is damage, refused before it is allocated.
        // In 64 bits: `source.count * 1_032` overflows a 32-bit `Int` from about 2 MB.
        guard UInt64(originalSize) <= UInt64(source.count) * 1_032 + 64 else {
            throw EntryRecord.DecodeFailure(
                reason: "a \(source.count)-byte zlib stream cannot hold \(originalSize) bytes")
        }
        var status: Int32 = Z_OK
        var produced = uLongf(originalSize)
        let output = [UInt8](unsafeUninitializedCapacity: originalSize) { buffer, initialized in
            status = uncompress(
                buffer.baseAddress, &produced, sourceBase.assumingMemoryBound(to: Bytef.self), uLong(source.count))
            initialized = status == Z_OK ? Int(produced) : 0
        }
        guard status == Z_OK else { throw EntryRecord.DecodeFailure(reason: "zlib stream: error \(status)") }
        guard output.count == originalSize else {
            throw EntryRecord.DecodeFailure(reason: "zlib stream of \(output.count) bytes, record says \(originalSize)")
        }
        return output
    }
}
