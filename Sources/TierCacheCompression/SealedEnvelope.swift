import TierCache

/// An encrypted record: an ``EntryRecord`` (or any bytes) sealed by a ``RecordSealing``.
///
/// | offset | size | field |
/// |---|---|---|
/// | 0 | 1 | format version (2, so that readers of records alone reject it) |
/// | 1 | 3 | reserved (0) |
/// | 4 | 4 | id of the key that sealed it, little-endian |
/// | 8 | n | the sealer's box (for AES-GCM: nonce, ciphertext, tag) |
///
/// The first 8 bytes and the storage key are authenticated with the box, so a record altered
/// anywhere, relabelled with another key id, or copied under another key fails to open.
/// Everything inside, the header's times and sizes included, is encrypted; what stays visible is
/// the record's length, its key id, and its storage key unless the sealer hashes keys.
public enum SealedEnvelope {
    public static let formatVersion: UInt8 = 2
    public static let headerSize = 8

    /// Whether `bytes` is an envelope (rather than a plain record).
    public static func isSealed(_ bytes: UnsafeRawBufferPointer) -> Bool {
        bytes.first == formatVersion
    }

    /// The id of the key that sealed the envelope, or `nil` when it is too short to be one.
    public static func keyID(of bytes: UnsafeRawBufferPointer) -> UInt32? {
        guard bytes.count >= headerSize, bytes[0] == formatVersion else { return nil }
        return UInt32(littleEndian: bytes.loadUnaligned(fromByteOffset: 4, as: UInt32.self))
    }

    /// Seals `plaintext` under the sealer's current key, bound to `context` (the storage key).
    public static func seal(
        _ plaintext: UnsafeRawBufferPointer, context: UnsafeRawBufferPointer, with sealer: any RecordSealing
    ) throws -> [UInt8] {
        let keyID = sealer.currentKeyID
        var header = [UInt8](repeating: 0, count: headerSize)
        header[0] = formatVersion
        withUnsafeBytes(of: keyID.littleEndian) { header.replaceSubrange(4..<8, with: $0) }
        let box = try header.withUnsafeBytes { header in
            try withAuthenticatedData(header: header, context: context) { authenticated in
                try sealer.seal(plaintext, keyID: keyID, authenticating: authenticated)
            }
        }
        return header + box
    }

    /// Opens an envelope sealed by ``seal(_:context:with:)`` with the same `context`.
    ///
    /// - Throws: ``RecordSealingError`` when the key is unknown or authentication fails (a
    ///   truncated envelope fails authentication), or whatever the sealer throws.
    public static func open(
        _ envelope: UnsafeRawBufferPointer, context: UnsafeRawBufferPointer, with sealer: any RecordSealing
    ) throws -> [UInt8] {
        guard let keyID = keyID(of: envelope), envelope[1] == 0, envelope[2] == 0, envelope[3] == 0 else {
            throw RecordSealingError.authenticationFailed
        }
        let box = UnsafeRawBufferPointer(rebasing: envelope[headerSize...])
        return try withAuthenticatedData(
            header: UnsafeRawBufferPointer(rebasing: envelope[..<headerSize]), context: context
        ) {
            try sealer.open(box, keyID: keyID, authenticating: $0)
        }
    }

    /// The header followed by the context: what the box authenticates (one array, made once).
    private static func withAuthenticatedData<T>(
        header: UnsafeRawBufferPointer, context: UnsafeRawBufferPointer, _ body: (UnsafeRawBufferPointer) throws -> T
    ) rethrows -> T {
        var authenticated = [UInt8]()
        authenticated.reserveCapacity(header.count + context.count)
        authenticated.append(contentsOf: header)
        authenticated.append(contentsOf: context)
        return try authenticated.withUnsafeBytes(body)
    }
}
