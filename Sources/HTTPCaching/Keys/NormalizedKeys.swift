import Foundation
import HTTPTypes
@_spi(TierCacheInternals) import TierCache

/// Recently built default keys (``HTTPCacheKey/defaultKey(for:)``), by the request target they
/// were built from, so that a hit does not build (allocate, copy, lower-case, validate) the same
/// key again: a fixed table of 256 slots, each holding the last target that hashed to it.
///
/// A slot answers only when scheme, authority and path are equal to the ones it was built from,
/// so a collision costs a rebuild, never a wrong key. Only the default key function is memoised:
/// a key function of the user's own may read anything in the request.
final class NormalizedKeys: Sendable {
    static let slotCount = 256

    /// Immutable, so a reader compares its fields in place after one retain.
    private final class Slot: Sendable {
        let scheme: String
        let authority: String
        let path: String
        let key: CacheKey

        init(scheme: String, authority: String, path: String, key: CacheKey) {
            self.scheme = scheme
            self.authority = authority
            self.path = path
            self.key = key
        }
    }

    private let slots = Locked<[Slot?]>(Array(repeating: nil, count: NormalizedKeys.slotCount))

    /// `HTTPCacheKey.defaultKey(for: request)` as checked by `validating`, from the table when
    /// the same target was keyed last in its slot. Keys `validating` refuses are not kept, so
    /// each request with one is refused (and counted) again.
    func key(for request: HTTPRequest, validating: (String) -> CacheKey?) -> CacheKey? {
        guard let scheme = request.scheme, let authority = request.authority else { return nil }
        let path = request.path ?? "/"
        let index = Self.slotIndex(authority: authority, path: path)
        let slot = slots.withLock { $0[index] }
        // Bytes, not `==`: Swift's string equality takes canonically equivalent Unicode for equal
        // (`/café` precomposed and decomposed), and the key is made of the bytes, so `==` gave one
        // target another's key (its response stored under that key, served for the other).
        if let slot, Self.sameBytes(slot.path, path), Self.sameBytes(slot.authority, authority),
            Self.sameBytes(slot.scheme, scheme)
        {
            return slot.key
        }
        guard let text = HTTPCacheKey.defaultKey(scheme: scheme, authority: authority, path: path),
            let key = validating(text)
        else { return nil }
        let built = Slot(scheme: scheme, authority: authority, path: path, key: key)
        slots.withLock { $0[index] = built }
        return key
    }

    /// Whether two strings hold the same UTF-8 bytes: one `memcmp` over native strings' storage
    /// (the hit path's cost of `==` on ASCII), where `utf8.elementsEqual` steps byte by byte.
    private static func sameBytes(_ a: String, _ b: String) -> Bool {
        let compared = a.utf8.withContiguousStorageIfAvailable { a in
            b.utf8.withContiguousStorageIfAvailable { b in
                guard a.count == b.count, let first = a.baseAddress, let second = b.baseAddress else {
                    return a.count == b.count
                }
                return memcmp(first, second, a.count) == 0
            }
        }
        return (compared ?? nil) ?? a.utf8.elementsEqual(b.utf8)
    }

    /// A cheap hash of the target: eight bytes at a time, multiply and fold.
    private static func slotIndex(authority: String, path: String) -> Int {
        var hash: UInt64 = 0x9E37_79B9_7F4A_7C15 ^ UInt64(truncatingIfNeeded: authority.utf8.count)
        var path = path
        path.withUTF8 { bytes in
            let raw = UnsafeRawBufferPointer(bytes)
            var offset = 0
            while offset + 8 <= raw.count {
                hash = (hash ^ raw.loadUnaligned(fromByteOffset: offset, as: UInt64.self)) &* 0xFF51_AFD7_ED55_8CCD
                hash ^= hash >> 32
                offset += 8
            }
            while offset < raw.count {
                hash = (hash ^ UInt64(raw[offset])) &* 0xC4CE_B9FE_1A85_EC53
                offset += 1
            }
        }
        var authority = authority
        authority.withUTF8 { bytes in
            for byte in bytes.suffix(8) { hash = (hash ^ UInt64(byte)) &* 0xC4CE_B9FE_1A85_EC53 }
        }
        hash ^= hash >> 29
        return Int(truncatingIfNeeded: hash % UInt64(slotCount))
    }
}
