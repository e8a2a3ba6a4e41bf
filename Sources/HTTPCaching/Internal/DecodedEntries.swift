import Synchronization

/// A stored response and the key it is stored under. A class, so the engine passes one
/// reference around a request instead of copying the response's fields.
final class Located: Sendable {
    let response: StoredResponse
    let key: String

    init(response: StoredResponse, key: String) {
        self.response = response
        self.key = key
    }
}

/// A decoded ``StoredEntry``, with responses already located under their key.
enum DecodedEntry: Sendable {
    case response(Located)
    case variants(VariantIndex)
}

/// Decoded entries, reused while a tier keeps handing out the very same bytes.
///
/// A memory tier returns the stored byte array itself (shared copy-on-write), so a hit can skip
/// decoding when the array is the one decoded last time. Identity is checked by the array's
/// storage address and length; the memo holds the array, so its storage cannot be freed and
/// reused by other bytes while the entry is here. Bytes from a disk tier are a new array on every
/// read and simply miss. At most ``limit`` entries are kept; beyond that an arbitrary one goes.
final class DecodedEntries: Sendable {
    static let limit = 4_096
    private let entries = Mutex<[String: (bytes: [UInt8], entry: DecodedEntry)]>([:])

    func entry(forKey key: String, bytes: [UInt8]) -> DecodedEntry? {
        entries.withLock { entries in
            guard let cached = entries[key], Self.sameStorage(cached.bytes, bytes) else { return nil }
            return cached.entry
        }
    }

    func remember(_ entry: DecodedEntry, forKey key: String, bytes: [UInt8]) {
        entries.withLock { entries in
            if entries.count >= Self.limit, entries[key] == nil { entries.remove(at: entries.startIndex) }
            entries[key] = (bytes, entry)
        }
    }

    func forget(_ key: String) {
        _ = entries.withLock { $0.removeValue(forKey: key) }
    }

    private static func sameStorage(_ a: [UInt8], _ b: [UInt8]) -> Bool {
        a.count == b.count && a.withUnsafeBufferPointer { a in b.withUnsafeBufferPointer { b in a.baseAddress == b.baseAddress } }
    }
}
