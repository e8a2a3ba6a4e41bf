import Foundation
import HTTPCaching
import HTTPTypes
import HTTPTypesFoundation
import TierCache

#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// How ``TieredURLCache`` keeps a `CachedURLResponse` in a tier: `"TUC1"`, a 4-byte big-endian
/// header length, a JSON header (status, fields, user info, policy, date, the body's length),
/// then the body as is. A record whose body is not the length its header gives (cut short by a
/// tier of the user's, or a partial copy) does not decode; records written before the length
/// was kept have none to check.
/// A format of its own (not the HTTP engine's) because a `URLCache` entry carries what
/// `URLSession` decided, not the engine's request and response times.
struct URLCacheRecord: Codable, Equatable {
    var status: Int
    /// Name-value pairs in order (a name may repeat).
    var fields: [[String]]
    var userInfo: [String: String]
    var storagePolicy: StoragePolicy
    var storedAt: Date
    /// The request fields the response's `Vary` names, with the values the storing request sent;
    /// nil in records written before they were kept.
    var varying: [VaryingField]?
    var body: Data

    /// A field `Vary` names and the storing request's value for it (nil: not sent).
    struct VaryingField: Codable, Equatable {
        var name: String
        var value: String?
    }

    private enum CodingKeys: String, CodingKey {
        case status, fields, userInfo, storagePolicy, storedAt, varying, bodyLength
    }
    /// The body's length as the header gives it; nil in records written before it was kept.
    private var bodyLength: Int?

    init(
        status: Int, fields: [[String]], userInfo: [String: String], storagePolicy: StoragePolicy, storedAt: Date,
        varying: [VaryingField]? = nil, body: Data
    ) {
        self.status = status
        self.fields = fields
        self.userInfo = userInfo
        self.storagePolicy = storagePolicy
        self.storedAt = storedAt
        self.varying = varying
        self.body = body
    }

    init(from decoder: any Decoder) throws {
        let container = try decoder.container(keyedBy: CodingKeys.self)
        status = try container.decode(Int.self, forKey: .status)
        fields = try container.decode([[String]].self, forKey: .fields)
        userInfo = try container.decode([String: String].self, forKey: .userInfo)
        let policyName = try container.decode(String.self, forKey: .storagePolicy)
        guard let policy = StoragePolicy(rawValue: policyName) else {
            throw DecodingError.dataCorruptedError(
                forKey: .storagePolicy, in: container, debugDescription: "unknown storage policy \(policyName)")
        }
        storagePolicy = policy
        storedAt = try container.decode(Date.self, forKey: .storedAt)
        varying = try container.decodeIfPresent([VaryingField].self, forKey: .varying)
        bodyLength = try container.decodeIfPresent(Int.self, forKey: .bodyLength)
        body = Data()
    }

    func encode(to encoder: any Encoder) throws {
        var container = encoder.container(keyedBy: CodingKeys.self)
        try container.encode(status, forKey: .status)
        try container.encode(fields, forKey: .fields)
        try container.encode(userInfo, forKey: .userInfo)
        try container.encode(storagePolicy.rawValue, forKey: .storagePolicy)
        try container.encode(storedAt, forKey: .storedAt)
        try container.encodeIfPresent(varying, forKey: .varying)
        try container.encode(body.count, forKey: .bodyLength)
    }

    /// The fields a response stored for `request` varies on, with `request`'s values; nil for
    /// `Vary: *`, which no later request matches (RFC 9111 §4.1).
    ///
    /// `Accept-Encoding` is left out: URLSession adds it itself (so a stored request and a later
    /// one need not show the same value) and decodes the content before a cache sees it, so the
    /// stored body is the same whatever coding was negotiated.
    static func varyingFields(
        of response: HTTPTypes.HTTPResponse, for request: HTTPTypes.HTTPRequest
    ) -> [VaryingField]? {
        let names = Vary.fieldNames(of: response)
        guard names != ["*"] else { return nil }
        return Vary.varyingFields(names.filter { $0 != "accept-encoding" }, of: request).map {
            VaryingField(name: $0.name, value: $0.value)
        }
    }

    /// Whether `request` sends what the storing request sent in every field the response's
    /// `Vary` names (normalised as the HTTP engine compares them). A record written before the
    /// values were kept matches only if its response has no `Vary`.
    func matches(_ request: URLRequest) -> Bool {
        guard let varying else { return !fields.contains { $0[0].lowercased() == "vary" } }
        guard !varying.isEmpty else { return true }
        guard let httpRequest = request.httpRequest else { return false }
        return Vary.varyingFields(varying.map(\.name), of: httpRequest).map {
            VaryingField(name: $0.name, value: $0.value)
        } == varying
    }

    static let magic: [UInt8] = Array("TUC1".utf8)

    /// Why a stored value is not a record.
    struct DecodeFailure: Error, CustomStringConvertible {
        var description: String
    }

    func encode() throws -> [UInt8] {
        let header = try JSONEncoder().encode(self)
        var bytes = Self.magic
        bytes.reserveCapacity(8 + header.count + body.count)
        let length = UInt32(header.count)
        bytes += [UInt8(length >> 24), UInt8(length >> 16 & 0xFF), UInt8(length >> 8 & 0xFF), UInt8(length & 0xFF)]
        bytes += header
        bytes += body
        return bytes
    }

    static func decode(_ bytes: [UInt8]) throws -> URLCacheRecord {
        guard bytes.count >= 8, Array(bytes[0..<4]) == magic else {
            throw DecodeFailure(description: "not a TieredURLCache record")
        }
        // Built as 32 bits, then converted: shifted as `Int`s, a first byte of 0x80 or more made a
        // negative length where an `Int` is 32 bits (watchOS on arm64_32), and the slice trapped.
        let declared = UInt32(bytes[4]) << 24 | UInt32(bytes[5]) << 16 | UInt32(bytes[6]) << 8 | UInt32(bytes[7])
        guard let length = Int(exactly: declared), length <= bytes.count - 8 else {
            throw DecodeFailure(description: "header length \(declared) exceeds the record")
        }
        var record = try JSONDecoder().decode(URLCacheRecord.self, from: Data(bytes[8..<(8 + length)]))
        guard (100...599).contains(record.status), record.fields.allSatisfy({ $0.count == 2 }) else {
            throw DecodeFailure(description: "bad status or fields")
        }
        let bodyCount = bytes.count - 8 - length
        if let expected = record.bodyLength, expected != bodyCount {
            throw DecodeFailure(description: "the body is \(bodyCount) bytes, the header says \(expected)")
        }
        record.body = Data(bytes[(8 + length)...])
        record.bodyLength = nil
        return record
    }

    /// The response as `HTTPURLResponse` for `url`.
    func urlResponse(for url: URL) -> HTTPURLResponse? {
        var headers: [String: String] = [:]
        for pair in fields {
            headers[pair[0]] = headers[pair[0]].map { "\($0), \(pair[1])" } ?? pair[1]
        }
        return HTTPURLResponse(url: url, statusCode: status, httpVersion: "HTTP/1.1", headerFields: headers)
    }
}
