import CZstd
import TierCacheRecords

/// A zstd dictionary, digested once for compressing and once for decompressing.
///
/// Small values compress poorly on their own: zstd has nothing to refer back to. A dictionary
/// trained on similar values (``train(samples:capacity:)``, zstd's ZDICT) gives it that history
/// in advance: a 1 KiB JSON response compresses about 1.8× alone and about 3.4× with one.
/// Frames compressed with a dictionary decompress only with the same dictionary; records name
/// it by an id of their own (see ``EntryRecord``).
///
/// `@unchecked Sendable` is safe because the digested dictionaries are immutable after creation
/// and zstd documents them as shareable: "a CDict can be shared by multiple threads
/// concurrently", and likewise a DDict (`ZSTD_createDDict`), for read-only use; they are freed
/// only in `deinit`, when no thread can hold them.
public final class ZstdDictionary: @unchecked Sendable {
    /// The dictionary's bytes, as trained or given.
    public let bytes: [UInt8]
    /// The compression level the dictionary was digested for.
    public let level: Int32
    /// ``Checksum`` of ``bytes``: what a store's dictionary row records, so that a writer can
    /// tell that the row under an id still holds this dictionary.
    public let checksum: UInt32
    let compressionDictionary: OpaquePointer
    let decompressionDictionary: OpaquePointer

    /// Why a dictionary could not be made.
    public struct Failure: Error, CustomStringConvertible, Sendable {
        public let description: String
    }

    /// Digests `bytes` (a trained dictionary, or any bytes to use as raw content) for `level`.
    public init(bytes: [UInt8], level: Int32) throws(Failure) {
        guard !bytes.isEmpty else { throw Failure(description: "a dictionary cannot be empty") }
        let compression = bytes.withUnsafeBytes { ZSTD_createCDict($0.baseAddress, $0.count, level) }
        guard let compression else {
            throw Failure(description: "zstd could not digest the dictionary for compression")
        }
        let decompression = bytes.withUnsafeBytes { ZSTD_createDDict($0.baseAddress, $0.count) }
        guard let decompression else {
            ZSTD_freeCDict(compression)
            throw Failure(description: "zstd could not digest the dictionary for decompression")
        }
        self.bytes = bytes
        self.level = level
        self.checksum = bytes.withUnsafeBytes { Checksum.of($0) }
        self.compressionDictionary = compression
        self.decompressionDictionary = decompression
    }

    deinit {
        ZSTD_freeCDict(compressionDictionary)
        ZSTD_freeDDict(decompressionDictionary)
    }

    /// Trains a dictionary of at most `capacity` bytes on `samples` (zstd's fast-cover trainer
    /// with its default parameters).
    ///
    /// zstd asks for about 100 times the dictionary's size in samples and fails with too few;
    /// that failure is thrown, as is a set of samples it finds nothing to learn from.
    public static func train(samples: [[UInt8]], capacity: Int) throws(Failure) -> [UInt8] {
        guard capacity >= 256 else {
            throw Failure(description: "a dictionary needs at least 256 bytes; asked for \(capacity)")
        }
        guard samples.count >= 8 else { throw Failure(description: "too few samples to train on (\(samples.count))") }
        var joined: [UInt8] = []
        joined.reserveCapacity(samples.reduce(0) { $0 + $1.count })
        for sample in samples { joined.append(contentsOf: sample) }
        let sizes = samples.map { $0.count }
        var failure: String?
        let dictionary = [UInt8](unsafeUninitializedCapacity: capacity) { buffer, initialized in
            let written = joined.withUnsafeBytes { samplesBuffer in
                sizes.withUnsafeBufferPointer { sizesBuffer in
                    ZDICT_trainFromBuffer(
                        buffer.baseAddress, capacity, samplesBuffer.baseAddress, sizesBuffer.baseAddress,
                        UInt32(samples.count))
                }
            }
            if ZDICT_isError(written) != 0 {
                failure = String(cString: ZDICT_getErrorName(written))
                initialized = 0
            } else {
                initialized = written
            }
        }
        if let failure { throw Failure(description: "zstd could not train a dictionary: \(failure)") }
        return dictionary
    }
}

extension EntryRecord {
    /// A zstd dictionary and the id records name it by.
    public typealias Dictionary = RecordDictionary<ZstdDictionary>
}
