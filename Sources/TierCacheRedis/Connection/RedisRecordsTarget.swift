import NIOCore
import TierCache

/// What a stored record decoded to.
enum DecodedRecord: Sendable {
    case entry(CacheEntry)
    /// No such key (a null reply).
    case missing
    /// A record written by a newer format version.
    case unknownFormat
    /// A value larger than this tier's capacity (``EntryRecord/largestValue(inCapacity:)``), not
    /// decompressed: a server whose tier is configured larger may have written it, and may read it.
    case largerThanTier(size: Int)
    /// A value too large to decompress on the connection's event loop
    /// (``RedisTier/largestValueDecodedInPlace``): the record's bytes, decoded by the reader's task.
    case undecoded(record: [UInt8])
    /// Not a record this tier can read: damaged, or written by another program. `record` is its
    /// bytes, so that it is deleted only while it is still the one read.
    case damaged(reason: String, record: [UInt8])
}

/// Decodes records where they arrive (the tier, for its `GET` and `MGET` replies).
protocol RedisRecordDecoder: Sendable {
    /// The record `bytes` hold, its value decoded in place if it is at most `budget` bytes.
    func decodeRecord(_ bytes: UnsafeRawBufferPointer, inPlaceBudget budget: Int) -> DecodedRecord
}

/// A read's reply: its records decoded in place, or, for a reply of another shape (an error
/// reply, such as a cluster's `MOVED`), the reply itself.
enum RedisRecordsReply: Sendable {
    case one(DecodedRecord)
    case many([DecodedRecord])
    case value(RESPValue)
}

/// The caller of a read whose reply is decoded in the connection's receive buffer, on its event
/// loop, as it arrives: each record goes from the bytes SwiftNIO read to the `CacheEntry` the
/// caller gets, with no `RESPValue` and no copy of the record in between.
struct RedisRecordsTarget: Sendable {
    let decoder: any RedisRecordDecoder
    let continuation: UnsafeContinuation<Result<RedisRecordsReply, RedisError>, Never>

    /// Decodes `reply`, whose ranges are positions in `buffer`.
    func deliver(_ reply: RESPParser.BulkReply, in buffer: ByteBuffer) {
        let base = buffer.readerIndex
        let decoded = buffer.withUnsafeReadableBytes { bytes -> RedisRecordsReply in
            var budget = RedisTier.largestReplyDecodedInPlace
            func record(_ range: Range<Int>?) -> DecodedRecord {
                guard let range else { return .missing }
                let decoded = decoder.decodeRecord(
                    UnsafeRawBufferPointer(rebasing: bytes[(range.lowerBound - base)..<(range.upperBound - base)]),
                    inPlaceBudget: budget)
                if case .entry(let entry) = decoded { budget -= entry.value.count }
                return decoded
            }
            switch reply {
            case .one(let range): return .one(record(range))
            case .many(let ranges): return .many(ranges.map(record))
            }
        }
        continuation.resume(returning: .success(decoded))
    }

    /// Answers with a reply of another shape, or a failure.
    func complete(_ result: Result<RESPValue, RedisError>) {
        continuation.resume(returning: result.map { .value($0) })
    }
}
