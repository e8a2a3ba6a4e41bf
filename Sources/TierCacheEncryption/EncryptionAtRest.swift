import Crypto
import Foundation
import TierCache

/// Encryption at rest for a disk tier: every record sealed with AES-GCM or ChaChaPoly
/// (swift-crypto; CryptoKit on Apple platforms), and optionally every key replaced by a keyed
/// hash.
///
/// ```swift
/// let encryption = try EncryptionAtRest(currentKey: .init(id: 2, key: keyFromKeychain))
/// let disk = try LMDBTier(directory: directory, configuration: .init(capacity: 1 << 30, encryption: encryption))
/// ```
///
/// ## Keys and rotation
/// Each record carries the id of the key that sealed it. To rotate, give the new key as
/// ``currentKey`` and the old one in ``previousKeys``: records sealed under the old key stay
/// readable and are sealed again under the new one when read (`TierStatistics.recordsResealed`).
/// Once the old key is dropped, records still sealed under it are misses, left in place (another
/// process sharing the store may still hold that key) until eviction or a write of the key
/// replaces them; they are not counted in `TierStatistics.unopenableRecords`, which counts
/// records that fail to open under a key the tier holds. The key material is the app's to keep:
/// on Apple platforms in the Keychain, on Linux in the service's secret store; TierCache never
/// writes a key to disk.
///
/// Rotate a key before it has sealed 2^32 records: every seal draws a random 96-bit nonce, and
/// past that many the chance that two seals share one passes the 2^-32 NIST SP 800-38D (§8.3)
/// allows (a repeated nonce reveals the XOR of the two plaintexts, and under AES-GCM lets the
/// authentication key be recovered). Every store seals once, and so does every reseal after a
/// rotation and every dictionary: a disk tier storing 1,000 records a second reaches 2^32 in
/// about 50 days, one storing 50,000 a second in a day. Keep the count (or the key's age) across
/// launches yourself: `TierStatistics.stores` counts one process's stores since it opened the
/// tier, without reseals and dictionaries.
///
/// ## Key names
/// With ``KeyNames/hashed(with:)`` the store holds HMAC-SHA256 digests of cache keys instead of
/// the keys (URLs) themselves; the full key is kept inside the sealed record, so a lookup still
/// checks it. The hashing secret must stay the same across rotations of the encryption key:
/// changing it leaves every stored entry unreachable (they age out by eviction).
///
/// See the `TierCacheLMDB` documentation for the threat model: what this protects and what it
/// does not.
public struct EncryptionAtRest: RecordSealing {
    /// The cipher a key is used with. Both are AEADs with 96-bit random nonces and 128-bit tags.
    public enum Algorithm: Sendable, Hashable {
        /// AES-GCM (128-, 192- or 256-bit keys): fastest where the CPU has AES instructions.
        case aesGCM
        /// ChaCha20-Poly1305 (256-bit keys): fast everywhere, constant time without AES hardware.
        case chaChaPoly
    }

    /// A key and the id records sealed under it carry.
    public struct Key: Sendable {
        /// The id records name this key by; ids must differ among the keys given together.
        public var id: UInt32
        /// The key material.
        public var key: SymmetricKey
        /// The cipher; AES-GCM by default.
        public var algorithm: Algorithm

        /// A key with its id.
        public init(id: UInt32, key: SymmetricKey, algorithm: Algorithm = .aesGCM) {
            self.id = id
            self.key = key
            self.algorithm = algorithm
        }
    }

    /// How cache keys are stored.
    public enum KeyNames: Sendable {
        /// As they are (readable in the store; `tiercache inspect` lists them).
        case plain
        /// As HMAC-SHA256 digests under this secret (at least 128 bits), which must outlive key
        /// rotations.
        case hashed(with: SymmetricKey)
    }

    /// The key new records are sealed with.
    public let currentKey: Key
    /// Older keys, to read (and reseal) records sealed before a rotation.
    public let previousKeys: [Key]
    /// How cache keys are stored.
    public let keyNames: KeyNames
    private let keysByID: [UInt32: Key]

    /// Encryption with `currentKey`, reading records sealed under `previousKeys` too.
    ///
    /// - Throws: `TierCacheError.Code.invalidConfiguration` for a key of the wrong size for its
    ///   algorithm, two keys with one id, or a hashing secret under 128 bits.
    public init(currentKey: Key, previousKeys: [Key] = [], keyNames: KeyNames = .plain) throws(TierCacheError) {
        var keysByID: [UInt32: Key] = [:]
        for key in [currentKey] + previousKeys {
            let bits = key.key.bitCount
            switch key.algorithm {
            case .aesGCM where ![128, 192, 256].contains(bits):
                throw TierCacheError(
                    .invalidConfiguration, "AES-GCM key \(key.id) has \(bits) bits; it needs 128, 192 or 256")
            case .chaChaPoly where bits != 256:
                throw TierCacheError(.invalidConfiguration, "ChaChaPoly key \(key.id) has \(bits) bits; it needs 256")
            default:
                break
            }
            guard keysByID.updateValue(key, forKey: key.id) == nil else {
                throw TierCacheError(.invalidConfiguration, "two encryption keys have id \(key.id)")
            }
        }
        if case .hashed(let secret) = keyNames, secret.bitCount < 128 {
            throw TierCacheError(
                .invalidConfiguration, "the key-hashing secret has \(secret.bitCount) bits; it needs at least 128")
        }
        self.currentKey = currentKey
        self.previousKeys = previousKeys
        self.keyNames = keyNames
        self.keysByID = keysByID
    }

    /// The id of ``currentKey``, which new records are sealed with.
    public var currentKeyID: UInt32 { currentKey.id }

    /// Seals `plaintext` under key `keyID` with a fresh random nonce; the box is the nonce, the
    /// ciphertext and the tag (AES-GCM's and ChaChaPoly's combined form).
    public func seal(
        _ plaintext: UnsafeRawBufferPointer, keyID: UInt32, authenticating: UnsafeRawBufferPointer
    ) throws -> [UInt8] {
        guard let key = keysByID[keyID] else { throw RecordSealingError.unknownKey(keyID) }
        switch key.algorithm {
        case .aesGCM:
            let box = try AES.GCM.seal(plaintext, using: key.key, authenticating: authenticating)
            // `combined` is nil only for a nonce of other than 12 bytes; `seal` makes 12-byte ones.
            guard let combined = box.combined else { throw RecordSealingError.authenticationFailed }
            return [UInt8](combined)
        case .chaChaPoly:
            return [UInt8](try ChaChaPoly.seal(plaintext, using: key.key, authenticating: authenticating).combined)
        }
    }

    /// Opens a box sealed under key `keyID` with the same `authenticating` bytes.
    ///
    /// - Throws: `RecordSealingError.unknownKey(_:)` when `keyID` is not among the keys, and
    ///   `RecordSealingError.authenticationFailed` when the box does not open.
    public func open(
        _ box: UnsafeRawBufferPointer, keyID: UInt32, authenticating: UnsafeRawBufferPointer
    ) throws -> [UInt8] {
        guard let key = keysByID[keyID] else { throw RecordSealingError.unknownKey(keyID) }
        do {
            switch key.algorithm {
            case .aesGCM:
                return [UInt8](
                    try AES.GCM.open(AES.GCM.SealedBox(combined: box), using: key.key, authenticating: authenticating))
            case .chaChaPoly:
                return [UInt8](
                    try ChaChaPoly.open(
                        ChaChaPoly.SealedBox(combined: box), using: key.key, authenticating: authenticating))
            }
        } catch {
            // Too short to be a box, or the tag did not match: either way, not this key's work.
            throw RecordSealingError.authenticationFailed
        }
    }

    /// HMAC-SHA256 of `key` under the hashing secret with ``KeyNames/hashed(with:)``; `nil`
    /// (keys stored as they are) with ``KeyNames/plain``.
    public func storageName(forKey key: UnsafeRawBufferPointer) -> [UInt8]? {
        guard case .hashed(let secret) = keyNames else { return nil }
        return [UInt8](HMAC<SHA256>.authenticationCode(for: key, using: secret))
    }
}
