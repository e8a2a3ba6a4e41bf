import Synchronization

extension CacheEntry {
    /// What a reader made of an entry's bytes (the HTTP layer keeps the decoded response here),
    /// shared by every copy of the entry.
    ///
    /// A memory tier hands out copies of the entry it holds, so the next reader of that entry
    /// finds the decoded form and skips decoding; it lives and goes with the tier's entry, so no
    /// separate cache of decoded forms can outlive an eviction. A tier that reads from a disk or
    /// a server makes a new entry per read, with an empty memo. Changing ``CacheEntry/value``
    /// gives the entry a new, empty memo, so a memo always describes the bytes it sits beside.
    ///
    /// The memo is written once (later writes are ignored: the bytes, and therefore their
    /// meaning, do not change) and read without a lock. It also holds the entry's bytes (see
    /// ``CacheEntry/value``), so that the entry is a single reference.
    public final class Memo: Sendable {
        /// The entry's bytes.
        let bytes: [UInt8]
        // Holds one retain of the object from the successful `set` until deinit; a reader takes
        // an unretained reference, which stays valid while the reader holds the memo (and so the
        // retain), and then retains it as an ordinary strong reference.
        private let slot = Atomic<Unmanaged<AnyObject & Sendable>?>(nil)

        /// An empty memo, beside no bytes.
        public convenience init() { self.init(bytes: []) }

        /// An empty memo beside `bytes`.
        init(bytes: [UInt8]) { self.bytes = bytes }

        /// What an entry holds while its bytes are changed in place (never seen by a reader: the
        /// entry is being mutated, so no one else can read it).
        static let placeholder = Memo()

        /// The value a reader stored, if it is a `Value`.
        public func value<Value: AnyObject & Sendable>(as type: Value.Type) -> Value? {
            guard let stored = slot.load(ordering: .acquiring) else { return nil }
            return stored.takeUnretainedValue() as? Value
        }

        /// Stores `value` unless a value is stored already.
        public func setIfEmpty(_ value: some AnyObject & Sendable) {
            let retained = Unmanaged<AnyObject & Sendable>.passRetained(value)
            let (exchanged, _) = slot.compareExchange(
                expected: nil, desired: retained, ordering: .acquiringAndReleasing)
            if !exchanged { retained.release() }
        }

        deinit {
            slot.load(ordering: .acquiring)?.release()
        }
    }
}
