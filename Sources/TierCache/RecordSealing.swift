/// Authenticated encryption of stored records: what a disk tier needs to keep its entries
/// (values, headers, expiry times and optionally keys) unreadable and tamper-evident at rest.
///
/// TierCache's own implementation is `EncryptionAtRest` in the `TierCacheEncryption` module
/// (AES-GCM or ChaChaPoly from swift-crypto), kept in a module of its own so that apps without
/// encryption do not build swift-crypto. Conform your own type to use another cipher or a key
/// held in hardware.
///
/// A conformance must be an AEAD: ``open(_:keyID:authenticating:)`` must fail for a box that was
/// altered, for one sealed under another key, and for one sealed with other
/// `authenticating` bytes (the tier binds each record to its storage key this way, so a record
/// copied under another key fails to open).
public protocol RecordSealing: Sendable {
    /// The key new records are sealed with. Records carry the id of the key that sealed them, so
    /// records sealed under an older key stay readable while it is still offered, and are sealed
    /// again under this one when read (lazy rotation).
    var currentKeyID: UInt32 { get }

    /// Seals `plaintext` under the key `keyID`, binding `authenticating` (which is not stored).
    /// Returns the box: whatever ``open(_:keyID:authenticating:)`` needs besides the key (for
    /// AES-GCM: the nonce, the ciphertext and the tag).
    func seal(
        _ plaintext: UnsafeRawBufferPointer, keyID: UInt32, authenticating: UnsafeRawBufferPointer
    ) throws -> [UInt8]

    /// Opens a box made by ``seal(_:keyID:authenticating:)``.
    ///
    /// - Throws: ``RecordSealingError`` when the key is unknown or the box fails authentication.
    func open(_ box: UnsafeRawBufferPointer, keyID: UInt32, authenticating: UnsafeRawBufferPointer) throws -> [UInt8]

    /// The name to store `key` (a cache key's UTF-8 bytes) under instead of the key itself: a
    /// keyed hash, so the store does not reveal which URLs were cached; `nil` stores keys as they
    /// are. It must not change when the encryption key rotates (derive it from a secret of its
    /// own), or every stored entry becomes unreachable.
    func storageName(forKey key: UnsafeRawBufferPointer) -> [UInt8]?
}

/// Why a sealed record could not be opened.
public enum RecordSealingError: Error, Hashable, Sendable, CustomStringConvertible {
    /// The record was sealed under a key id the sealer was not given.
    case unknownKey(UInt32)
    /// The box failed authentication: altered, truncated, or sealed under another key with the
    /// same id.
    case authenticationFailed

    /// What went wrong, for logs.
    public var description: String {
        switch self {
        case .unknownKey(let id): "sealed under key \(id), which was not given"
        case .authenticationFailed: "authentication failed (altered, or sealed under another key)"
        }
    }
}
