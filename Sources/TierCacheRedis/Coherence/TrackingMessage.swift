import TierCache

/// What a RESP3 push on a tracking connection says (https://redis.io/docs/latest/develop/reference/client-side-caching/).
enum TrackingMessage: Equatable, Sendable {
    /// These keys changed (written, deleted, expired or evicted).
    case invalidate([CacheKey])
    /// Every key may have changed: the server was flushed (`FLUSHALL`, `FLUSHDB`), or a key
    /// came that cannot be one of the tier's.
    case invalidateAll(FlushCause)

    /// Why a push could not be read as an invalidation.
    enum Malformed: Error, Equatable {
        /// Not `>2 invalidate <keys>`: a frame of another shape.
        case shape(String)
        /// A push of a kind a tracking connection does not expect (`message`, say).
        case unknownKind(String)
    }

    /// Reads `push` (`>2 invalidate [key …]`, or `>2 invalidate _` for a flush) for a tier whose
    /// keys start with `prefix`.
    ///
    /// A key without the prefix, or whose rest is not a valid cache key, cannot be mapped to the
    /// upper tiers' keys: the message then invalidates everything (a flush is always safe).
    static func decode(_ push: RESPValue, prefix: [UInt8]) -> Result<TrackingMessage, Malformed> {
        guard case .push(let elements) = push, let kind = elements.first?.string else {
            return .failure(.shape("a push without a kind"))
        }
        guard kind == "invalidate" else { return .failure(.unknownKind(kind)) }
        guard elements.count == 2 else { return .failure(.shape("invalidate with \(elements.count - 1) arguments")) }
        switch elements[1] {
        case .null:
            return .success(.invalidateAll(.serverFlushed))
        case .array(let keys):
            var decoded: [CacheKey] = []
            decoded.reserveCapacity(keys.count)
            for key in keys {
                guard case .bulkString(let bytes) = key else { return .failure(.shape("a key that is not a string")) }
                guard bytes.starts(with: prefix),
                    let text = String(validating: bytes[prefix.count...], as: UTF8.self),
                    let cacheKey = try? CacheKey(text)
                else { return .success(.invalidateAll(.foreignKey)) }
                decoded.append(cacheKey)
            }
            return .success(.invalidate(decoded))
        default:
            return .failure(.shape("invalidate with an argument that is neither keys nor null"))
        }
    }
}
