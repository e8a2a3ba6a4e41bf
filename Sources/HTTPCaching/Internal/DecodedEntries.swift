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
/// decoding when the array is the one decoded last time. The memo is keyed by the array's
/// storage address (an integer: cheaper to hash than the cache key) and checks length and cache
/// key; it holds the array, so that storage cannot be freed and reused by other bytes while the
/// entry is here. Bytes from a disk tier are a new array on every read and simply miss.
///
/// The memo keeps arrays alive that a tier may already have evicted, so it is bounded: at most
/// ``entryLimit`` entries and ``byteLimit`` bytes (entries over a sixteenth of that are not kept);
/// past either, arbitrary entries go.
final class DecodedEntries: Sendable {
    static let entryLimit = 4_096
    static let byteLimit = 32 << 20
    private let state = Mutex<(entries: [Int: (key: String, bytes: [UInt8], entry: DecodedEntry)], bytes: Int)>(([:], 0))

    /// Entries and bytes held (for tests).
    var usage: (entries: Int, bytes: Int) { state.withLock { ($0.entries.count, $0.bytes) } }

    func entry(forKey key: String, bytes: [UInt8]) -> DecodedEntry? {
        let address = Self.address(of: bytes)
        return state.withLock { state in
            guard let cached = state.entries[address], cached.bytes.count == bytes.count, cached.key == key else { return nil }
            return cached.entry
        }
    }

    func remember(_ entry: DecodedEntry, forKey key: String, bytes: [UInt8]) {
        guard bytes.count <= Self.byteLimit / 16, !bytes.isEmpty else { return }
        let address = Self.address(of: bytes)
        state.withLock { state in
            if let previous = state.entries.removeValue(forKey: address) { state.bytes -= previous.bytes.count }
            while !state.entries.isEmpty,
                  state.entries.count >= Self.entryLimit || state.bytes + bytes.count > Self.byteLimit
            {
                state.bytes -= state.entries.remove(at: state.entries.startIndex).value.bytes.count
            }
            state.entries[address] = (key, bytes, entry)
            state.bytes += bytes.count
        }
    }

    private static func address(of bytes: [UInt8]) -> Int {
        bytes.withUnsafeBufferPointer { Int(bitPattern: $0.baseAddress) }
    }
}
