import Foundation
import HTTPTypes
@_spi(TierCacheInternals) import TierCache

/// A response as the cache keeps it: the response, its body, the times of the exchange that
/// produced it (for the age calculation of RFC 9111 §4.2.3) and the request field values its
/// `Vary` nominates (§4.1).
public struct StoredResponse: Hashable, Sendable {
    /// The response's status and header fields.
    public var response: HTTPResponse {
        didSet { facts = ResponseFacts(response) }
    }
    /// What the freshness rules read from ``response``, parsed once per stored response rather
    /// than on every lookup.
    private(set) var facts: ResponseFacts
    /// The response's content.
    public var body: Data
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
    /// The storage policy the response was stored under (after hooks), which a revalidation
    /// that freshens it keeps.
    public var storagePolicy: StoragePolicy
    /// When a soft purge marked the response stale (``HTTPCache/purge(url:mode:)``,
    /// ``HTTPCache/purge(tags:mode:)``): its freshness lifetime ends there, so it is served only
    /// as a stale response may be (`stale-while-revalidate`, `stale-if-error`, the offline
    /// fallback) until a revalidation freshens it. `nil` when it was not.
    public var invalidatedAt: Date?
    /// Whether the request that produced the response carried `Authorization`, and the response
    /// does not let a shared cache reuse it (RFC 9111 §3.5; set only then). A private cache stores
    /// such responses; a shared cache that finds one in a tier it shares with a private one
    /// treats it as absent (``isForPrivateCachesOnly``).
    var answeredAuthorization = false
    /// The tags (surrogate keys) the response carried when stored, each with the epoch of its
    /// tag's purge record at that time (see ``HTTPCache/Tagging``).
    var tagStamps: [TagStamp] = []

    /// The tags (surrogate keys) the response carried when stored.
    public var tags: [String] { tagStamps.map(\.tag) }

    /// One request field nominated by `Vary`, as the request that produced the response sent it.
    public struct VaryingField: Hashable, Sendable {
        /// The field's name.
        public var name: String
        /// The field's value in the request, or nil when the request did not send it.
        public var value: String?
        /// A field nominated by `Vary`, with the value the request sent.
        public init(name: String, value: String?) {
            self.name = name
            self.value = value
        }
    }

    /// A stored response with the times RFC 9111 §4.2.3 computes its age from.
    public init(
        response: HTTPResponse, body: Data, requestTime: Date, responseTime: Date, storedAt: Date,
        varyingFields: [VaryingField] = [], userInfo: [String: String] = [:], storagePolicy: StoragePolicy = .allowed
    ) {
        self.response = response
        self.facts = ResponseFacts(response)
        self.body = body
        self.requestTime = requestTime
        self.responseTime = responseTime
        self.storedAt = storedAt
        self.varyingFields = varyingFields
        self.userInfo = userInfo
        self.storagePolicy = storagePolicy
    }

    /// The response's `Cache-Control` directives.
    public var cacheControl: CacheControl { facts.directives }

    /// Whether only a private cache may use this response: it is `private`, or still holds a
    /// field `private` names (RFC 9111 §5.2.2.7: a shared cache stores neither), or it answered a
    /// request with `Authorization` and does not say a shared cache may reuse it (§3.5). A shared
    /// cache meets one only in a tier a private cache writes too, or that it wrote itself before
    /// its mode changed.
    var isForPrivateCachesOnly: Bool { isWhollyForPrivateCaches || facts.holdsPrivateNamedFields }

    /// Whether no part of this response may serve a shared cache's clients: it is `private`, or
    /// it answered a request with `Authorization` that §3.5 does not let a shared cache reuse.
    /// (One that only holds fields `private` names may serve them without those fields.)
    var isWhollyForPrivateCaches: Bool {
        facts.directives.isPrivate || (answeredAuthorization && !facts.directives.allowsSharedReuseWithAuthorization)
    }

    /// Stored responses are equal when every stored part is.
    public static func == (lhs: StoredResponse, rhs: StoredResponse) -> Bool {
        lhs.response == rhs.response && lhs.body == rhs.body && lhs.requestTime == rhs.requestTime
            && lhs.responseTime == rhs.responseTime && lhs.storedAt == rhs.storedAt
            && lhs.varyingFields == rhs.varyingFields && lhs.userInfo == rhs.userInfo
            && lhs.storagePolicy == rhs.storagePolicy && lhs.invalidatedAt == rhs.invalidatedAt
            && lhs.tagStamps == rhs.tagStamps && lhs.answeredAuthorization == rhs.answeredAuthorization
    }

    /// Hashes the response, the body and the storage time (equal responses hash alike).
    public func hash(into hasher: inout Hasher) {
        hasher.combine(response)
        hasher.combine(body)
        hasher.combine(storedAt)
    }
}

/// The header values freshness and age depend on (RFC 9111 §4.2), parsed from a response.
/// A class so that copying a stored response (which the engine does freely) costs one retain.
final class ResponseFacts: Sendable {
    let directives: CacheControl
    /// `Date`, if valid.
    let date: Date?
    /// `Age` in seconds (§5.1).
    let age: TimeInterval
    /// Whether the response has an `Expires` field at all.
    let hasExpires: Bool
    /// `Expires`, if valid (an invalid one means already expired, §5.3).
    let expires: Date?
    /// `Last-Modified`, if valid.
    let lastModified: Date?
    /// The status code.
    let statusCode: Int
    /// Whether the response holds a field its `private="…"` names (which a shared cache drops).
    let holdsPrivateNamedFields: Bool
    /// Whether the response holds `Set-Cookie`.
    let setsCookie: Bool
    /// The response as last served with its `Age` field, reused while the age in whole seconds
    /// is unchanged: a hot entry then costs no copy of its fields per hit.
    private let lastServed = Locked<(age: Int, response: HTTPResponse)?>(nil)

    /// `response` with `Age: age` (RFC 9111 §5.1).
    func response(_ response: HTTPResponse, servedAtAge age: Int) -> HTTPResponse {
        // Only the response is copied out, not the whole remembered pair.
        if let reused = lastServed.withLock({ last -> HTTPResponse? in
            guard let last, last.age == age else { return nil }
            return last.response
        }) {
            return reused
        }
        var served = response
        served.headerFields[.age] = String(age)
        lastServed.withLock { $0 = (age, served) }
        return served
    }

    convenience init(_ response: HTTPResponse) {
        self.init(response, directives: CacheControl(fieldValues: response.headerFields[values: .cacheControl]))
    }

    /// Facts of `response` with its directives already parsed.
    init(_ response: HTTPResponse, directives: CacheControl) {
        self.directives = directives
        date = Freshness.dateValue(of: response)
        age = Freshness.ageValue(of: response)
        let expiresField = response.headerFields[.expires]
        hasExpires = expiresField != nil
        expires = expiresField.flatMap { HTTPDate.parse($0) }
        lastModified = response.headerFields[.lastModified].flatMap { HTTPDate.parse($0) }
        statusCode = response.status.code
        holdsPrivateNamedFields = directives.privateFieldNames.contains { name in
            HTTPField.Name(name).map { response.headerFields[$0] != nil } ?? false
        }
        setsCookie = response.headerFields[.setCookie] != nil
    }
}
