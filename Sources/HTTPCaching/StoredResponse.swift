import Foundation
import HTTPTypes

/// A response as the cache keeps it: the response, its body, the times of the exchange that
/// produced it (for the age calculation of RFC 9111 §4.2.3) and the request field values its
/// `Vary` nominates (§4.1).
public struct StoredResponse: Hashable, Sendable {
    /// The response's status and header fields.
    public var response: HTTPResponse
    /// The response's content.
    public var body: [UInt8]
    /// When the request that produced the response was sent (`request_time`).
    public var requestTime: Date
    /// When the response was received (`response_time`).
    public var responseTime: Date
    /// When the cache stored it (also set by a revalidation that freshened it).
    public var storedAt: Date
    /// The request's normalised values of the fields the response's `Vary` names, lower-cased
    /// names in the order `Vary` lists them; `nil` for a field the request did not send.
    public var varyingFields: [VaryingField]
    /// Application data attached by a store hook.
    public var userInfo: [String: String]

    /// One request field nominated by `Vary`, as the request that produced the response sent it.
    public struct VaryingField: Hashable, Sendable {
        public var name: String
        public var value: String?
        public init(name: String, value: String?) {
            self.name = name
            self.value = value
        }
    }

    public init(
        response: HTTPResponse, body: [UInt8], requestTime: Date, responseTime: Date, storedAt: Date,
        varyingFields: [VaryingField] = [], userInfo: [String: String] = [:]
    ) {
        self.response = response
        self.body = body
        self.requestTime = requestTime
        self.responseTime = responseTime
        self.storedAt = storedAt
        self.varyingFields = varyingFields
        self.userInfo = userInfo
    }

    /// The response's `Cache-Control` directives.
    public var cacheControl: CacheControl {
        CacheControl(fieldValues: response.headerFields[values: .cacheControl])
    }
}
