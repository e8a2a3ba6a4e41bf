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
    /// Whether a shared cache may reuse the response to a request with `Authorization`:
    /// `public`, `must-revalidate` or `s-maxage` (RFC 9111 §3.5).
    public var allowsSharedReuseWithAuthorization: Bool { isPublic || mustRevalidate || sharedMaxAge != nil }
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
        /// The directive's name, lower-cased.
        public var name: String
        /// The directive's argument, unquoted, if it has one.
        public var value: String?
    }

    /// The largest delta-seconds value (§1.2.2).
    public static let maximumDeltaSeconds = 2_147_483_648

    /// No directives.
    public init() {}

    /// Parses every `Cache-Control` field line of a message, in order.
    public init(fieldValues: [String]) {
        var seen: DirectiveSet = []
        for value in fieldValues {
            var value = value
            value.withUTF8 { bytes in
                DirectiveParser.forEachDirective(in: bytes) { name, argument in
                    apply(name: name, value: argument, seen: &seen)
                }
            }
        }
    }

    /// Parses one `Cache-Control` field value.
    public init(_ fieldValue: String) {
        self.init(fieldValues: [fieldValue])
    }

    /// Directives already seen, for the duplicate rule.
    private struct DirectiveSet: OptionSet {
        let rawValue: UInt8
        static let maxAge = DirectiveSet(rawValue: 1)
        static let sharedMaxAge = DirectiveSet(rawValue: 2)
    }

    /// Applies one directive. Known names are matched on the raw bytes (no allocation on the
    /// common path); only values that are kept as text, and unknown directives, become strings.
    private mutating func apply(
        name: UnsafeBufferPointer<UInt8>, value: UnsafeBufferPointer<UInt8>?, seen: inout DirectiveSet
    ) {
        func valueString() -> String? { value.map { DirectiveParser.unquotedString($0) } }
        switch KnownDirective(name) {
        case .maxAge:
            maxAge = Self.merge(maxAge, Self.deltaSeconds(value) ?? 0, firstTime: seen.insert(.maxAge).inserted)
        case .sMaxage:
            sharedMaxAge = Self.merge(
                sharedMaxAge, Self.deltaSeconds(value) ?? 0, firstTime: seen.insert(.sharedMaxAge).inserted)
        // The qualified forms apply "with one or more field names" (RFC 9111 §5.2.2.4, §5.2.2.7):
        // a list that names none (`private=""`), or anything but field names (an unterminated
        // quote, `private="X-User, max-age=0`), is the unqualified directive, the safe reading,
        // not a directive that withholds nothing, or a name that matches no field.
        case .noCache:
            if let names = valueString().flatMap(DirectiveParser.qualifyingFieldNames) {
                noCacheFieldNames += names
            } else {
                noCache = true
            }
        case .noStore: noStore = true
        case .private:
            if let names = valueString().flatMap(DirectiveParser.qualifyingFieldNames) {
                privateFieldNames += names
            } else {
                isPrivate = true
            }
        case .public: isPublic = true
        case .mustRevalidate: mustRevalidate = true
        case .proxyRevalidate: proxyRevalidate = true
        case .mustUnderstand: mustUnderstand = true
        case .noTransform: noTransform = true
        case .immutable: immutable = true
        case .onlyIfCached: onlyIfCached = true
        case .maxStale:
            // Without a value, any staleness; with an invalid one, none (the safe reading).
            maxStale = value == nil ? Int.max : (Self.deltaSeconds(value) ?? 0)
        case .minFresh: minFresh = Self.deltaSeconds(value) ?? minFresh
        case .staleWhileRevalidate: staleWhileRevalidate = Self.deltaSeconds(value) ?? staleWhileRevalidate
        case .staleIfError: staleIfError = Self.deltaSeconds(value) ?? staleIfError
        case nil:
            extensions.append(Directive(name: String(decoding: name, as: UTF8.self).lowercased(), value: valueString()))
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
        guard var text else { return nil }
        return text.withUTF8 { deltaSeconds($0) }
    }

    static func deltaSeconds(_ bytes: UnsafeBufferPointer<UInt8>?) -> Int? {
        guard var bytes, !bytes.isEmpty else { return nil }
        if bytes.count >= 2, bytes.first == UInt8(ascii: "\""), bytes.last == UInt8(ascii: "\"") {
            bytes = UnsafeBufferPointer(rebasing: bytes[(bytes.startIndex + 1)..<(bytes.endIndex - 1)])
            guard !bytes.isEmpty else { return nil }
        }
        var value = 0
        for byte in bytes {
            guard byte >= UInt8(ascii: "0"), byte <= UInt8(ascii: "9") else { return nil }
            if value < maximumDeltaSeconds {
                value = value * 10 + Int(byte - UInt8(ascii: "0"))
            }
        }
        return min(value, maximumDeltaSeconds)
    }
}

/// The directives of RFC 9111 §5.2 and RFC 5861, recognised from raw bytes.
private enum KnownDirective {
    case maxAge, sMaxage, noCache, noStore, `private`, `public`, mustRevalidate, proxyRevalidate
    case mustUnderstand, noTransform, immutable, onlyIfCached, maxStale, minFresh
    case staleWhileRevalidate, staleIfError

    private static let table: [(StaticString, KnownDirective)] = [
        ("max-age", .maxAge), ("s-maxage", .sMaxage), ("no-cache", .noCache), ("no-store", .noStore),
        ("private", .private), ("public", .public), ("must-revalidate", .mustRevalidate),
        ("proxy-revalidate", .proxyRevalidate), ("must-understand", .mustUnderstand), ("no-transform", .noTransform),
        ("immutable", .immutable), ("only-if-cached", .onlyIfCached), ("max-stale", .maxStale),
        ("min-fresh", .minFresh),
        ("stale-while-revalidate", .staleWhileRevalidate), ("stale-if-error", .staleIfError),
    ]

    /// The directive named by `name` (ASCII case-insensitive), or `nil`.
    init?(_ name: UnsafeBufferPointer<UInt8>) {
        for (candidate, directive) in Self.table where candidate.utf8CodeUnitCount == name.count {
            let matches = candidate.withUTF8Buffer { known in
                zip(known, name).allSatisfy { known, byte in known == ASCIICase.lowercase(byte) }
            }
            if matches {
                self = directive
                return
            }
        }
        return nil
    }
}
