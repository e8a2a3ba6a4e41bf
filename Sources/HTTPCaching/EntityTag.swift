/// An entity tag (RFC 9110 §8.8.3): an opaque validator, strong or weak (`W/"…"`).
public struct EntityTag: Hashable, Sendable, CustomStringConvertible {
    /// The tag between its quotes.
    public var opaqueTag: String
    /// Whether the tag is weak.
    public var isWeak: Bool

    /// An entity tag with `opaqueTag` between its quotes.
    public init(opaqueTag: String, isWeak: Bool) {
        self.opaqueTag = opaqueTag
        self.isWeak = isWeak
    }

    /// Parses `"xyz"` or `W/"xyz"`; `nil` for anything else (an unquoted or malformed tag).
    public init?(_ text: String) {
        var slice = text.trimmingOWS()
        isWeak = slice.hasPrefix("W/")
        if isWeak { slice = slice.dropFirst(2) }
        guard slice.count >= 2, slice.first == "\"", slice.last == "\"" else { return nil }
        let tag = slice.dropFirst().dropLast()
        guard !tag.contains("\"") else { return nil }
        opaqueTag = String(tag)
    }

    /// The tag as a field carries it: `"…"` or `W/"…"`.
    public var description: String { (isWeak ? "W/" : "") + "\"\(opaqueTag)\"" }

    /// Strong comparison: both strong and identical (§8.8.3.2).
    public func strongMatches(_ other: EntityTag) -> Bool { !isWeak && !other.isWeak && opaqueTag == other.opaqueTag }

    /// Weak comparison: identical tags, strong or weak (§8.8.3.2).
    public func weakMatches(_ other: EntityTag) -> Bool { opaqueTag == other.opaqueTag }
}
