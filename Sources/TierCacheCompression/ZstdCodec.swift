import CZstd
@_spi(TierCacheInternals) import TierCache
import TierCacheRecords

/// zstd compression for tier values, shared by the disk and network tiers.
///
/// Every frame carries zstd's content checksum (XXH64, truncated to 32 bits), so a damaged value
/// fails to decompress instead of decoding to wrong bytes. Compression and decompression contexts
/// are pooled: creating one costs far more than compressing a small value.
public struct ZstdCodec: RecordCompressor {
    /// zstd frames: the LMDB and Redis tiers' records.
    public static var format: EntryRecord.PayloadFormat { .zstd }

    /// The compression level: 1 (fast, the default) to ``maximumLevel``; negative levels trade
    /// ratio for even more speed.
    public let level: Int32

    /// zstd's fastest (negative) level.
    public static var minimumLevel: Int32 { ZSTD_minCLevel() }
    /// zstd's strongest level.
    public static var maximumLevel: Int32 { ZSTD_maxCLevel() }

    private let pools: ContextPools

    /// Creates a codec; `nil` when `level` is outside zstd's range or is 0 (zstd's "default",
    /// which hides the level actually used).
    public init?(level: Int32 = 1) {
        guard level != 0, level >= ZSTD_minCLevel(), level <= ZSTD_maxCLevel() else { return nil }
        self.level = level
        self.pools = ContextPools()
    }

    /// The most bytes compressing `count` bytes can produce.
    public static func compressedBound(_ count: Int) -> Int { ZSTD_compressBound(count) }

    /// Compresses `source` into `destination` and returns the compressed size, or `nil` when the
    /// result would not fit (so the caller stores the value raw). With `dictionary`, the frame
    /// needs the same dictionary to decompress (and the dictionary's level is used).
    public func compress(
        _ source: UnsafeRawBufferPointer, into destination: UnsafeMutableRawBufferPointer,
        dictionary: ZstdDictionary? = nil
    ) -> Int? {
        let context = pools.checkOutCompressor(level: level)
        guard let pointer = context.pointer, let destinationBase = destination.baseAddress else {
            pools.checkIn(context)
            return nil
        }
        if let dictionary {
            guard ZSTD_isError(ZSTD_CCtx_refCDict(pointer, dictionary.compressionDictionary)) == 0 else {
                pools.checkIn(context)
                return nil
            }
        }
        // A pooled context must go back without the dictionary, or the next value would use it
        // (after the dictionary itself may be gone). zstd refuses to change the dictionary of a
        // context left mid-frame by a failed compression, so such a context ends its session
        // first, and one that still holds the dictionary is dropped, not pooled.
        defer {
            if dictionary != nil, ZSTD_isError(ZSTD_CCtx_refCDict(pointer, nil)) != 0 {
                ZSTD_CCtx_reset(pointer, ZSTD_reset_session_only)
                if ZSTD_isError(ZSTD_CCtx_refCDict(pointer, nil)) == 0 { pools.checkIn(context) }
            } else {
                pools.checkIn(context)
            }
        }
        let written = ZSTD_compress2(
            pointer, destinationBase, destination.count, source.baseAddress, source.count)
        guard ZSTD_isError(written) == 0 else { return nil }
        return written
    }

    /// Decompresses a frame whose content is `originalSize` bytes long, verifying its checksum.
    /// A frame compressed with a dictionary needs the same `dictionary`; with another or none,
    /// it fails (zstd detects the mismatch, or the checksum does).
    public func decompress(
        _ source: UnsafeRawBufferPointer, originalSize: Int, dictionary: ZstdDictionary? = nil
    ) throws(EntryRecord.DecodeFailure) -> [UInt8] {
        let declared = ZSTD_getFrameContentSize(source.baseAddress, source.count)
        guard declared == UInt64(originalSize) else {
            throw EntryRecord.DecodeFailure(reason: "frame declares \(declared) bytes, record says \(originalSize)")
        }
        let context = pools.checkOutDecompressor()
        defer { pools.checkIn(context) }
        guard let pointer = context.pointer else {
            throw EntryRecord.DecodeFailure(reason: "zstd could not allocate a context")
        }
        var failure: String?
        let output = [UInt8](unsafeUninitializedCapacity: originalSize) { buffer, initialized in
            let result =
                if let dictionary {
                    ZSTD_decompress_usingDDict(
                        pointer, buffer.baseAddress, originalSize, source.baseAddress, source.count,
                        dictionary.decompressionDictionary)
                } else {
                    ZSTD_decompressDCtx(pointer, buffer.baseAddress, originalSize, source.baseAddress, source.count)
                }
            if ZSTD_isError(result) != 0 {
                failure = String(cString: ZSTD_getErrorName(result))
                initialized = 0
            } else if result != originalSize {
                failure = "decompressed \(result) bytes, expected \(originalSize)"
                initialized = 0
            } else {
                initialized = originalSize
            }
        }
        if let failure { throw EntryRecord.DecodeFailure(reason: failure) }
        return output
    }
}

/// A zstd context owned by exactly one thread at a time.
///
/// `@unchecked Sendable` is safe because a context is only reachable through ``ContextPools``:
/// it is checked out (removed from the pool under its lock) before use and checked back in
/// after, so no two threads ever hold it together.
final class ZstdContext: @unchecked Sendable {
    enum Kind { case compressor, decompressor }
    let kind: Kind
    let pointer: OpaquePointer?

    init(compressorLevel level: Int32) {
        kind = .compressor
        pointer = ZSTD_createCCtx()
        if let pointer {
            ZSTD_CCtx_setParameter(pointer, ZSTD_c_compressionLevel, level)
            ZSTD_CCtx_setParameter(pointer, ZSTD_c_checksumFlag, 1)
            ZSTD_CCtx_setParameter(pointer, ZSTD_c_contentSizeFlag, 1)
            // Records name their dictionary themselves; the frame need not repeat it (4 bytes
            // of a small value's record).
            ZSTD_CCtx_setParameter(pointer, ZSTD_c_dictIDFlag, 0)
        }
    }

    init(decompressor: Void) {
        kind = .decompressor
        pointer = ZSTD_createDCtx()
    }

    deinit {
        guard let pointer else { return }
        switch kind {
        case .compressor: ZSTD_freeCCtx(pointer)
        case .decompressor: ZSTD_freeDCtx(pointer)
        }
    }
}

/// Idle contexts, at most ``limit`` of each kind kept for reuse.
final class ContextPools: Sendable {
    private let compressors = Locked<[ZstdContext]>([])
    private let decompressors = Locked<[ZstdContext]>([])
    private let limit = 16

    func checkOutCompressor(level: Int32) -> ZstdContext {
        compressors.withLock { $0.popLast() } ?? ZstdContext(compressorLevel: level)
    }

    func checkOutDecompressor() -> ZstdContext {
        decompressors.withLock { $0.popLast() } ?? ZstdContext(decompressor: ())
    }

    /// Keeps `context` for reuse, unless zstd failed to make it: a context that is not one (a
    /// moment's memory pressure) would otherwise be checked out again and again, failing every
    /// value after it.
    func checkIn(_ context: ZstdContext) {
        guard context.pointer != nil else { return }
        switch context.kind {
        case .compressor: compressors.withLock { if $0.count < limit { $0.append(context) } }
        case .decompressor: decompressors.withLock { if $0.count < limit { $0.append(context) } }
        }
    }
}
