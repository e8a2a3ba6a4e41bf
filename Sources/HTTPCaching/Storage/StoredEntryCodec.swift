import Foundation
import HTTPTypes
import TierCache

/// What the HTTP cache keeps under a key: a response, or (for a `Vary`ing resource) the index
/// of its variants, each stored under a secondary key.
enum StoredEntry: Equatable {
    case response(StoredResponse)
    case variants(VariantIndex)
}

/// The variants stored for one primary key (RFC 9111 §4.1).
struct VariantIndex: Equatable {
    /// The request fields the variants differ by (the latest response's `Vary`).
    var fieldNames: [String]
    /// Secondary keys of the stored variants, oldest first.
    var variantKeys: [CacheKey]
    /// Most variants kept per resource; the oldest is forgotten beyond it.
    static let limit = 32
}

/// The stored format of ``StoredEntry`` (version 2 or 3), little-endian:
/// magic `TCHE`, version, kind (1 response, 2 variant index), then the kind's fields with
/// length-prefixed strings. Version 2 appends to a response the time a soft purge marked it
/// stale and its tag stamps; version 1 entries (without them) still decode. Version 3 appends a
/// byte of flags (bit 0: the request carried `Authorization`), and is written only for a
/// response with a flag set, so that a release reading versions 1 and 2 still reads every other
/// entry (it drops these as undecodable: a miss). Decoding checks every length against the bytes
/// present, so a damaged or foreign value is a ``DecodeFailure``, never a crash.
enum StoredEntryCodec {
    static let magic: [UInt8] = Array("TCHE".utf8)
    /// The version written when a response has no flags to record.
    static let version: UInt8 = 2
    /// The version written when it has (``StoredEntryCodec``).
    static let flaggedVersion: UInt8 = 3
    /// Bit 0 of version 3's flags: ``StoredResponse/answeredAuthorization``.
    static let answeredAuthorizationFlag: UInt8 = 1
    static let policyCodes: [StoragePolicy: UInt8] = [.allowed: 1, .allowedInMemoryOnly: 2, .notAllowed: 3]
    /// The most header fields a stored response may have: ``HTTPCache/maximumResponseFieldCount``.
    static let maximumFieldCount = HTTPCache.maximumResponseFieldCount

    struct DecodeFailure: Error, CustomStringConvertible {
        let description: String
    }

    static func encode(_ entry: StoredEntry) -> [UInt8] {
        var writer = ByteWriter()
        writer.bytes(magic)
        let flags: UInt8
        if case .response(let stored) = entry, stored.answeredAuthorization {
            flags = answeredAuthorizationFlag
        } else {
            flags = 0
        }
        writer.u8(flags == 0 ? version : flaggedVersion)
        switch entry {
        case .response(let stored):
            writer.u8(1)
            writer.u16(UInt16(clamping: stored.response.status.code))
            writer.string(stored.response.status.reasonPhrase)
            writer.date(stored.requestTime)
            writer.date(stored.responseTime)
            writer.date(stored.storedAt)
            writer.u32(UInt32(clamping: stored.response.headerFields.count))
            for field in stored.response.headerFields {
                writer.string(field.name.rawName)
                writer.string(field.value)
            }
            writer.u32(UInt32(clamping: stored.varyingFields.count))
            for field in stored.varyingFields {
                writer.string(field.name)
                writer.u8(field.value == nil ? 0 : 1)
                writer.string(field.value ?? "")
            }
            writer.u32(UInt32(clamping: stored.userInfo.count))
            for (key, value) in stored.userInfo.sorted(by: { $0.key < $1.key }) {
                writer.string(key)
                writer.string(value)
            }
            writer.u8(Self.policyCodes[stored.storagePolicy] ?? 0)
            writer.u32(UInt32(clamping: stored.body.count))
            writer.bytes(stored.body)
            writer.u8(stored.invalidatedAt == nil ? 0 : 1)
            writer.date(stored.invalidatedAt ?? Date(timeIntervalSinceReferenceDate: 0))
            writer.u32(UInt32(clamping: stored.tagStamps.count))
            for stamp in stored.tagStamps {
                writer.string(stamp.tag)
                writer.u64(stamp.epoch)
            }
            if flags != 0 { writer.u8(flags) }
        case .variants(let index):
            writer.u8(2)
            writer.u32(UInt32(clamping: index.fieldNames.count))
            for name in index.fieldNames { writer.string(name) }
            writer.u32(UInt32(clamping: index.variantKeys.count))
            for key in index.variantKeys { writer.string(key.rawValue) }
        }
        return writer.output
    }

    static func decode(_ bytes: [UInt8]) throws(DecodeFailure) -> StoredEntry {
        var reader = ByteReader(bytes)
        guard try reader.bytes(magic.count) == magic else {
            throw DecodeFailure(description: "not an HTTP cache entry")
        }
        let entryVersion = try reader.u8()
        guard (1...flaggedVersion).contains(entryVersion) else {
            throw DecodeFailure(description: "entry format version \(entryVersion)")
        }
        switch try reader.u8() {
        case 1:
            let code = Int(try reader.u16())
            let reason = try reader.string()
            guard (100...999).contains(code) else { throw DecodeFailure(description: "status \(code)") }
            let requestTime = try reader.date(), responseTime = try reader.date(), storedAt = try reader.date()
            var fields = HTTPFields()
            let fieldCount = try reader.count()
            guard fieldCount <= Self.maximumFieldCount else {
                throw DecodeFailure(description: "\(fieldCount) fields, more than \(Self.maximumFieldCount)")
            }
            for _ in 0..<fieldCount {
                let name = try reader.string(), value = try reader.string()
                guard let fieldName = HTTPField.Name(name) else {
                    throw DecodeFailure(description: "field name \(name)")
                }
                fields.append(HTTPField(name: fieldName, value: value))
            }
            var varying: [StoredResponse.VaryingField] = []
            for _ in 0..<(try reader.count()) {
                let name = try reader.string(), present = try reader.u8(), value = try reader.string()
                varying.append(.init(name: name, value: present == 0 ? nil : value))
            }
            var userInfo: [String: String] = [:]
            for _ in 0..<(try reader.count()) {
                let key = try reader.string()
                userInfo[key] = try reader.string()
            }
            let policyCode = try reader.u8()
            guard let policy = Self.policyCodes.first(where: { $0.value == policyCode })?.key else {
                throw DecodeFailure(description: "storage policy \(policyCode)")
            }
            let body = Data(try reader.bytes(try reader.length()))
            var stored = StoredResponse(
                response: HTTPResponse(status: .init(code: code, reasonPhrase: reason), headerFields: fields),
                body: body, requestTime: requestTime, responseTime: responseTime, storedAt: storedAt,
                varyingFields: varying, userInfo: userInfo, storagePolicy: policy)
            if entryVersion >= 2 {
                let invalidated = try reader.u8(), invalidatedAt = try reader.date()
                if invalidated != 0 { stored.invalidatedAt = invalidatedAt }
                for _ in 0..<(try reader.count()) {
                    let tag = try reader.string()
                    stored.tagStamps.append(TagStamp(tag: tag, epoch: try reader.u64()))
                }
            }
            if entryVersion >= flaggedVersion {
                let flags = try reader.u8()
                guard flags & ~answeredAuthorizationFlag == 0 else {
                    throw DecodeFailure(description: "unknown flags \(flags)")
                }
                stored.answeredAuthorization = flags & answeredAuthorizationFlag != 0
            }
            guard reader.isAtEnd else { throw DecodeFailure(description: "trailing bytes") }
            return .response(stored)
        case 2:
            var names: [String] = []
            for _ in 0..<(try reader.count()) { names.append(try reader.string()) }
            var keys: [CacheKey] = []
            for _ in 0..<(try reader.count()) {
                guard let key = try? CacheKey(try reader.string()) else {
                    throw DecodeFailure(description: "a variant key that is not a key")
                }
                keys.append(key)
            }
            guard reader.isAtEnd else { throw DecodeFailure(description: "trailing bytes") }
            return .variants(VariantIndex(fieldNames: names, variantKeys: keys))
        case let kind:
            throw DecodeFailure(description: "entry kind \(kind)")
        }
    }

    private struct ByteWriter {
        var output: [UInt8] = []
        mutating func u8(_ value: UInt8) { output.append(value) }
        mutating func u16(_ value: UInt16) { withUnsafeBytes(of: value.littleEndian) { output.append(contentsOf: $0) } }
        mutating func u32(_ value: UInt32) { withUnsafeBytes(of: value.littleEndian) { output.append(contentsOf: $0) } }
        mutating func u64(_ value: UInt64) { withUnsafeBytes(of: value.littleEndian) { output.append(contentsOf: $0) } }
        mutating func date(_ date: Date) { u64(date.timeIntervalSinceReferenceDate.bitPattern) }
        mutating func bytes(_ bytes: some Sequence<UInt8>) { output.append(contentsOf: bytes) }
        mutating func string(_ text: String) {
            u32(UInt32(clamping: text.utf8.count))
            output.append(contentsOf: text.utf8)
        }
    }

    private struct ByteReader {
        let input: [UInt8]
        var offset = 0
        init(_ input: [UInt8]) { self.input = input }
        var isAtEnd: Bool { offset == input.count }

        mutating func bytes(_ count: Int) throws(DecodeFailure) -> [UInt8] {
            guard count >= 0, count <= input.count - offset else {
                throw DecodeFailure(description: "truncated at byte \(offset)")
            }
            defer { offset += count }
            return Array(input[offset..<(offset + count)])
        }
        mutating func u8() throws(DecodeFailure) -> UInt8 { try bytes(1)[0] }
        mutating func u16() throws(DecodeFailure) -> UInt16 {
            let raw = try bytes(2)
            return UInt16(raw[0]) | UInt16(raw[1]) << 8
        }
        mutating func u32() throws(DecodeFailure) -> UInt32 {
            let raw = try bytes(4)
            return raw.reversed().reduce(0) { $0 << 8 | UInt32($1) }
        }
        mutating func u64() throws(DecodeFailure) -> UInt64 {
            let raw = try bytes(8)
            return raw.reversed().reduce(0) { $0 << 8 | UInt64($1) }
        }
        /// A 32-bit length, as an `Int`: one of 2^31 or more is damage where an `Int` is 32 bits
        /// (watchOS on arm64_32), not a trap.
        mutating func length() throws(DecodeFailure) -> Int {
            let raw = try u32()
            guard let value = Int(exactly: raw) else { throw DecodeFailure(description: "length \(raw) too large") }
            return value
        }
        /// An element count, bounded by the bytes left so a damaged count cannot loop for long.
        mutating func count() throws(DecodeFailure) -> Int {
            let value = try length()
            guard value <= input.count - offset else { throw DecodeFailure(description: "count \(value) past the end") }
            return value
        }
        mutating func date() throws(DecodeFailure) -> Date {
            let seconds = Double(bitPattern: try u64())
            guard seconds.isFinite else { throw DecodeFailure(description: "time is not finite") }
            return Date(timeIntervalSinceReferenceDate: seconds)
        }
        mutating func string() throws(DecodeFailure) -> String {
            let raw = try bytes(try length())
            guard let text = String(validating: raw, as: UTF8.self) else {
                throw DecodeFailure(description: "invalid UTF-8")
            }
            return text
        }
    }
}
