/// The directives of `Cache-Control` fields (RFC 9111 §5.2), parsed once.
///
/// Parsing follows the RFC's recipient rules:
/// - directive names are case-insensitive; values may be tokens or quoted strings (§5.2);
/// - a delta-seconds value too large to represent is taken as 2^31 (§1.2.2);
/// - a `max-age` or `s-maxage` whose value is missing or invalid (negative, fractional, not a
///   number), or that appears twice with different values, makes the response stale
///   (the value 0): §4.2.1 lets a cache treat conflicting duplicates as stale, and stale is the
///   safe reading of a value it cannot trust;
/// - unknown directives are kept in ``extensions`` (§5.2.3).
///
/// The same type holds request directives (`max-stale`, `min-fresh`, `only-if-cached`) and
/// response directives; each property says which it belongs to.
public struct CacheControl: Hashable, Sendable {
    /// `max-age` (request and response), seconds.
    public var maxAge: Int?
    /// `s-maxage` (response; shared caches only), seconds.
    public var sharedMaxAge: Int?
    /// `no-cache` without field names (request and response): revalidate before every use.
    public var noCache = false
    /// `no-cache="field, ..."` (response): these fields must not be sent without revalidation.
    public var noCacheFieldNames: [String] = []
    /// `no-store` (request and response).
    public var noStore = false
    /// `private` without field names (response): shared caches must not store it.
    public var isPrivate = false
    /// `private="field, ..."` (response): shared caches must not store these fields.
    public var privateFieldNames: [String] = []
    /// `public` (response).
    public var isPublic = false
    /// `must-revalidate` (response).
    public var mustRevalidate = false
    /// `proxy-revalidate` (response; shared caches only).
    public var proxyRevalidate = false
    /// `must-understand` (response).
    public var mustUnderstand = false
    /// `no-transform` (request and response).
    public var noTransform = false
    /// `immutable` (response, RFC 8246): a fresh response will not change; skip reload revalidations.
    public var immutable = false
    /// `max-stale` (request), seconds; `Int.max` when given without a value (any staleness).
    public var maxStale: Int?
    /// `min-fresh` (request), seconds.
    public var minFresh: Int?
    /// `only-if-cached` (request).
    public var onlyIfCached = false
    /// `stale-while-revalidate` (response, RFC 5861), seconds.
    public var staleWhileRevalidate: Int?
    /// `stale-if-error` (request and response, RFC 5861), seconds.
    public var staleIfError: Int?
    /// Directives this type does not know, in order, names lower-cased.
    public var extensions: [Directive] = []

    /// An unrecognised directive.
    public struct Directive: Hashable, Sendable {
        public var name: String
        public var value: String?
    }

    /// The largest delta-seconds value (§1.2.2).
    public static let maximumDeltaSeconds = 2_147_483_648

    /// No directives.
    public init() {}

    /// Parses every `Cache-Control` field line of a message, in order.
    public init(fieldValues: [String]) {
        var seen = Set<String>()
        for value in fieldValues {
            for (name, argument) in DirectiveParser.directives(in: value) {
                apply(name: name, value: argument, firstTime: seen.insert(name).inserted)
            }
        }
    }

    /// Parses one `Cache-Control` field value.
    public init(_ fieldValue: String) {
        self.init(fieldValues: [fieldValue])
    }

    private mutating func apply(name: String, value: String?, firstTime: Bool) {
        switch name {
        case "max-age": maxAge = Self.merge(maxAge, Self.deltaSeconds(value) ?? 0, firstTime: firstTime)
        case "s-maxage": sharedMaxAge = Self.merge(sharedMaxAge, Self.deltaSeconds(value) ?? 0, firstTime: firstTime)
        case "no-cache":
            if let value {
                noCacheFieldNames += DirectiveParser.fieldNames(value)
            } else {
                noCache = true
            }
        case "no-store": noStore = true
        case "private":
            if let value {
                privateFieldNames += DirectiveParser.fieldNames(value)
            } else {
                isPrivate = true
            }
        case "public": isPublic = true
        case "must-revalidate": mustRevalidate = true
        case "proxy-revalidate": proxyRevalidate = true
        case "must-understand": mustUnderstand = true
        case "no-transform": noTransform = true
        case "immutable": immutable = true
        case "only-if-cached": onlyIfCached = true
        case "max-stale":
            // Without a value, any staleness; with an invalid one, none (the safe reading).
            maxStale = value == nil ? Int.max : (Self.deltaSeconds(value) ?? 0)
        case "min-fresh": minFresh = Self.deltaSeconds(value) ?? minFresh
        case "stale-while-revalidate": staleWhileRevalidate = Self.deltaSeconds(value) ?? staleWhileRevalidate
        case "stale-if-error": staleIfError = Self.deltaSeconds(value) ?? staleIfError
        default: extensions.append(Directive(name: name, value: value))
        }
    }

    /// Conflicting duplicates of an age directive make the response stale (§4.2.1).
    private static func merge(_ existing: Int?, _ new: Int, firstTime: Bool) -> Int {
        guard let existing, !firstTime else { return new }
        return existing == new ? existing : 0
    }

    /// A delta-seconds value (§1.2.2): digits only; the quoted form is accepted too. Values past
    /// 2^31 are 2^31; anything else is `nil`.
    static func deltaSeconds(_ text: String?) -> Int? {
        guard let text, !text.isEmpty else { return nil }
        var value = 0
        for byte in text.utf8 {
            guard byte >= UInt8(ascii: "0"), byte <= UInt8(ascii: "9") else { return nil }
            if value < maximumDeltaSeconds {
                value = value * 10 + Int(byte - UInt8(ascii: "0"))
            }
        }
        return min(value, maximumDeltaSeconds)
    }
}
