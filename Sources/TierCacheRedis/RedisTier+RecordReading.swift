import Foundation
import TierCache
import TierCacheRecords

extension RedisTier: RedisRecordDecoder {
    /// The largest value decoded where its record arrives, on the connection's event loop; a
    /// larger one is copied out and decoded by the task that reads it. A highly compressible
    /// value of up to the tier's capacity passes the 5% rule on its stored size, and
    /// decompressing it on the loop stalled every connection there (a coherence's tracking
    /// connection too, whose timeout then emptied the upper tiers).
    static let largestValueDecodedInPlace = 1 << 20

    /// The most value bytes one reply decodes on the event loop: an `MGET` of 128 compressible
    /// values of 1 MiB each decompressed 128 MiB there, the loop's connections waiting. The
    /// values past it are left to the reader's task.
    static let largestReplyDecodedInPlace = 4 << 20

    /// Decodes a stored record where it lies: for a `GET` or `MGET` reply, in the connection's
    /// receive buffer, on its event loop (a value over ``largestValueDecodedInPlace``, or over
    /// what is left of the reply's `budget`, is left to the reader,
    /// ``DecodedRecord/undecoded(record:)``).
    func decodeRecord(_ bytes: UnsafeRawBufferPointer, inPlaceBudget budget: Int) -> DecodedRecord {
        decodeRecord(bytes, decodingInPlaceUpTo: min(Self.largestValueDecodedInPlace, budget))
    }

    /// The record `bytes` hold; a value over `inPlaceLimit` is left undecoded (nil: the reader's
    /// task, which decodes any).
    private func decodeRecord(
        _ bytes: UnsafeRawBufferPointer, decodingInPlaceUpTo inPlaceLimit: Int? = nil
    ) -> DecodedRecord {
        do throws(EntryRecord.DecodeFailure) {
            let header = try EntryRecord.header(of: bytes)
            guard header.fullKey == nil else {
                throw EntryRecord.DecodeFailure(reason: "unexpected key in a Redis record")
            }
            let largest = EntryRecord.largestValue(inCapacity: configuration.capacity)
            guard header.originalSize <= largest else { return .largerThanTier(size: header.originalSize) }
            if let inPlaceLimit, header.originalSize > inPlaceLimit {
                return .undecoded(record: [UInt8](bytes))
            }
            let value = try EntryRecord.value(of: header, codec: codec, largestValue: largest)
            return .entry(
                CacheEntry(value: value, storedAt: header.metadata.storedAt, expiresAt: header.metadata.expiresAt))
        } catch {
            return error.isUnknownFormatVersion ? .unknownFormat : .damaged(reason: "\(error)", record: [UInt8](bytes))
        }
    }

    /// The record a `GET` reply (or an element of an `MGET` reply) read as a value holds: a bulk
    /// string is decoded, anything else is a miss.
    func decodeRecord(_ reply: RESPValue) -> DecodedRecord {
        guard case .bulkString(let record) = reply else { return .missing }
        return record.withUnsafeBytes { decodeRecord($0) }
    }

    /// The entry a decoded record is, counting the lookup: a missing key is a miss, a damaged
    /// record is a miss and is deleted, an expired one a miss. A record in a format version this
    /// code does not read is a miss left in place: in a rolling deploy, servers still on this
    /// version must not delete what newer ones write. So is one larger than this tier's capacity:
    /// a server configured larger may read it (and reading it here would allocate what it
    /// declares, whoever wrote it).
    func entry(
        from record: DecodedRecord, key: CacheKey, redisKey: [UInt8], timing: TierCounters.LookupTiming
    ) async -> CacheEntry? {
        switch record {
        case .undecoded(let stored):
            let decoded = stored.withUnsafeBytes { decodeRecord($0) }
            return await entry(from: decoded, key: key, redisKey: redisKey, timing: timing)
        case .missing:
            counters.recordLookup(hit: false, timing: timing)
            return nil
        case .unknownFormat:
            counters.recordUnknownFormat()
            counters.recordLookup(hit: false, timing: timing)
            return nil
        case .largerThanTier(let size):
            counters.recordLookup(hit: false, timing: timing)
            configuration.logger?.debug(
                "record larger than the tier left in place (a miss)",
                metadata: ["tier": "\(name)", "key": "\(key.rawValue)", "size": "\(size)"])
            return nil
        case .damaged(let reason, let stored):
            counters.recordCorruptionRemoved()
            counters.recordLookup(hit: false, timing: timing)
            configuration.logger?.warning(
                "damaged record removed (a miss)",
                metadata: ["tier": "\(name)", "key": "\(key.rawValue)", "reason": "\(reason)"])
            await removeIfUnchanged(redisKey, holding: stored)
            return nil
        case .entry(let entry):
            if entry.metadata.isExpired(at: Date()) {
                // Redis's TTL normally removes it first; clocks differ by a little.
                counters.recordExpiration()
                counters.recordLookup(hit: false, timing: timing)
                return nil
            }
            counters.recordLookup(hit: true, timing: timing)
            return entry
        }
    }

    /// Deletes `redisKey` if it still holds `record`, comparing and deleting in one script on the
    /// server: between the read that found the record damaged and its deletion, another server
    /// may have stored a good value there, which an unconditional `DEL` removed for the whole
    /// fleet. A failure is counted and leaves the record (a miss until it is written again).
    func removeIfUnchanged(_ redisKey: [UInt8], holding record: [UInt8]) async {
        do {
            _ = try await run([Self.eval, Self.deleteIfEqual, Array("1".utf8), redisKey, record], key: redisKey)
        } catch {
            counters.recordError()
        }
    }

    static let eval = Array("EVAL".utf8)
    static let deleteIfEqual = Array(
        "if redis.call('GET', KEYS[1]) == ARGV[1] then return redis.call('DEL', KEYS[1]) end return 0".utf8)
}
