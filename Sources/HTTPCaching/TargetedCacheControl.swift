import HTTPTypes
import RawStructuredFieldValues

/// Targeted cache-control fields (RFC 9213), such as `CDN-Cache-Control`: cache directives
/// addressed to one class of cache, which that cache obeys instead of `Cache-Control`.
///
/// A targeted field is a Structured Field Dictionary (RFC 9213 §2.1, RFC 8941 §3.2), not a
/// `Cache-Control` list: `max-age=60, no-store`, with integers for the delta-seconds directives
/// and Boolean members for the rest. A field that does not parse as a Dictionary, or in which a
/// directive this cache knows has a value of the wrong type (`max-age="60"`, `max-age=1.5`,
/// `no-store=3`), is ignored as a whole, and the cache falls back to `Cache-Control`
/// (§2.1: implementations should not consume values that violate the inferred constraints, and
/// a field with a parsing error should be ignored). An empty field is ignored too (§2.2).
/// Directives this cache does not know are kept, whatever their type, as `Cache-Control`
/// extensions; parameters on members are ignored (§2.1).
///
/// ```swift
/// TargetedCacheControl.cacheControlValue(of: ["max-age=60, stale-while-revalidate=30"])
/// // "max-age=60, stale-while-revalidate=30"
/// TargetedCacheControl.cacheControlValue(of: ["max-age=\"60\""])   // nil: a string, not an integer
/// ```
public enum TargetedCacheControl {
    /// The targeted field for content delivery networks (RFC 9213 §3), the one a shared cache in
    /// front of an origin honours by default.
    public static let cdnCacheControl = "CDN-Cache-Control"

    /// Where a cache that lets a targeted field stand in for `Cache-Control` (the caching proxy)
    /// sets the origin's own `Cache-Control` aside, to give it back to clients; present, even
    /// empty, exactly when the `Cache-Control` beside it is a targeted field's.
    package static let originCacheControlField = HTTPField.Name("TierCache-Origin-Cache-Control")!
    /// Where such a cache sets the origin's `Expires` aside: RFC 9213 §2.2 has the cache ignore
    /// it too.
    package static let originExpiresField = HTTPField.Name("TierCache-Origin-Expires")!

    /// `newer`, a message updating `stored` (a 304, a HEAD's 200, a completing 206), with its
    /// `Cache-Control` and `Expires` moved to the fields that keep them aside, when a targeted
    /// field stands in for `stored`'s `Cache-Control` and `newer` repeats none (its own would have
    /// been set aside already): `stored`'s targeted directives stay in force.
    package static func settingAsideUntargeted(_ newer: HTTPFields, for stored: HTTPFields) -> HTTPFields {
        guard stored[originCacheControlField] != nil, newer[originCacheControlField] == nil else { return newer }
        var newer = newer
        if newer[.cacheControl] != nil {
            newer[originCacheControlField] = newer[values: .cacheControl].joined(separator: ", ")
            newer[values: .cacheControl] = []
        }
        if newer[.expires] != nil {
            newer[originExpiresField] = newer[values: .expires].joined(separator: ", ")
            newer[values: .expires] = []
        }
        return newer
    }

    /// Longer targeted fields are ignored as malformed: the Dictionary parser finds each member's
    /// key by a linear search, so an origin's field of tens of thousands of members would cost
    /// their square on every response. No real field comes near it.
    public static let maximumFieldLength = 8 * 1024

    /// Directives whose value is delta-seconds: a non-negative Integer (RFC 9213 §2.1).
    private static let integerDirectives: Set<String> = [
        "max-age", "s-maxage", "stale-while-revalidate", "stale-if-error",
    ]
    /// Directives that are flags: a Boolean (true: present; false: absent). `no-cache` and
    /// `private` may instead carry their field names, as an Inner List of Strings or Tokens.
    private static let flagDirectives: Set<String> = [
        "no-store", "no-cache", "private", "public", "must-revalidate", "proxy-revalidate", "must-understand",
        "no-transform", "immutable",
    ]
    private static let fieldNameListDirectives: Set<String> = ["no-cache", "private"]

    /// The `Cache-Control` field value with the same directives as a targeted field whose field
    /// lines are `fieldValues`, or nil when the field must be ignored (absent, empty, too long,
    /// not a Dictionary, or a known directive of the wrong type).
    public static func cacheControlValue(of fieldValues: [String]) -> String? {
        // Field lines of a structured field are combined with commas before parsing (RFC 8941 §4.2).
        let combined = fieldValues.joined(separator: ", ")
        guard !combined.allSatisfy({ $0 == " " || $0 == "\t" }), combined.utf8.count <= maximumFieldLength else {
            return nil
        }
        var parser = StructuredFieldValueParser(Array(combined.utf8))
        guard let dictionary = try? parser.parseDictionaryFieldValue() else { return nil }
        var directives: [String] = []
        for (name, member) in dictionary {
            switch member {
            case .item(let item):
                guard let directive = directive(name, item.rfc9651BareItem) else { return nil }
                if !directive.isEmpty { directives.append(directive) }
            case .innerList(let list):
                guard fieldNameListDirectives.contains(name) else {
                    if integerDirectives.contains(name) || flagDirectives.contains(name) { return nil }
                    continue  // an unknown directive with a list value: nothing to carry over
                }
                var fieldNames: [String] = []
                for element in list.bareInnerList {
                    switch element.rfc9651BareItem {
                    case .string(let text), .token(let text): fieldNames.append(text)
                    default: return nil
                    }
                }
                directives.append("\(name)=\"\(fieldNames.joined(separator: ", "))\"")
            }
        }
        return directives.joined(separator: ", ")
    }

    /// One member as a `Cache-Control` directive: "" for a false flag (absent), nil for a
    /// known directive with a value of the wrong type.
    private static func directive(_ name: String, _ value: RFC9651BareItem) -> String? {
        if integerDirectives.contains(name) {
            guard case .integer(let seconds) = value, seconds >= 0 else { return nil }
            return "\(name)=\(seconds)"
        }
        if flagDirectives.contains(name) {
            guard case .bool(let isSet) = value else { return nil }
            return isSet ? name : ""
        }
        // An extension: carried over in Cache-Control's own syntax when it has one.
        switch value {
        case .bool(let isSet): return isSet ? name : ""
        case .integer(let number): return "\(name)=\(number)"
        case .token(let token):
            // Structured tokens may hold ":" and "/", which a Cache-Control token may not.
            return token.allSatisfy({ $0 != ":" && $0 != "/" }) ? "\(name)=\(token)" : "\(name)=\"\(token)\""
        case .string(let text) where !text.contains("\"") && !text.contains("\\"): return "\(name)=\"\(text)\""
        default: return ""
        }
    }
}
