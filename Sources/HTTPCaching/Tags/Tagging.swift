import Foundation
import HTTPTypes

extension HTTPCache {
    /// How the engine records the tags (surrogate keys) a response carries, so that
    /// ``HTTPCache/purge(tags:mode:)`` can invalidate every stored response that carries one.
    ///
    /// Tags are read at store time from ``fieldNames``: space- or comma-separated (Fastly's
    /// `Surrogate-Key` separates with spaces, Cloudflare's `Cache-Tag` with commas; both are
    /// accepted in either field). Tags are compared exactly, case included.
    public struct Tagging: Sendable {
        /// The response fields tags are read from; `Surrogate-Key` and `Cache-Tag` by default.
        /// Empty turns tagging off.
        public var fieldNames: [HTTPField.Name]
        /// Whether those fields are removed from the responses the engine returns (and stores),
        /// as CDNs do: tags are for purging, not for clients. `true` by default.
        public var removesFields: Bool
        /// The most tags one response may carry; 256 by default. A response with more is not
        /// stored (counted in ``HTTPCacheStatistics/tagListsRefused``): stored without some of
        /// its tags, a purge of those would silently miss it.
        public var maximumTagsPerResponse: Int
        /// The longest tag, in UTF-8 bytes; 1,024 by default (Fastly's limit). A response with
        /// a longer one is not stored, as above.
        public var maximumTagLength: Int
        /// How long the engine trusts what it last read of a tag's purge record before reading it
        /// again from the lowest tier: a purge made by another process sharing that tier (a disk
        /// store, Redis) takes effect here within this time. Purges made through this engine take
        /// effect at once. 1 second by default; 0 reads the record on every use.
        public var recheckInterval: TimeInterval

        /// Tagging from `Surrogate-Key` and `Cache-Tag`, with those fields removed.
        public init(
            fieldNames: [HTTPField.Name] = Tagging.standardFieldNames, removesFields: Bool = true,
            maximumTagsPerResponse: Int = 256, maximumTagLength: Int = 1024, recheckInterval: TimeInterval = 1
        ) {
            self.fieldNames = fieldNames
            self.removesFields = removesFields
            self.maximumTagsPerResponse = maximumTagsPerResponse
            self.maximumTagLength = maximumTagLength
            self.recheckInterval = recheckInterval
        }

        /// `Surrogate-Key` (Fastly, Souin, Varnish's xkey convention) and `Cache-Tag` (Cloudflare).
        public static let standardFieldNames: [HTTPField.Name] = [
            HTTPField.Name("Surrogate-Key"), HTTPField.Name("Cache-Tag"),
        ].compactMap { $0 }

        /// No tags recorded, no fields removed.
        public static let off = Tagging(fieldNames: [])

        /// The tags `response` carries, taken out of it when ``removesFields`` says so.
        ///
        /// This runs on every response, tagged or not, and on the store path of tagged ones: the
        /// values are split as UTF-8 bytes (a tag is compared exactly, so grapheme breaking would
        /// only cost), and the fields are removed in one pass.
        func take(from response: inout HTTPResponse) -> ResponseTags {
            guard !fieldNames.isEmpty else { return ResponseTags() }
            var parser = TagListParser(maximumTagLength: maximumTagLength)
            var found = false
            for field in response.headerFields where fieldNames.contains(field.name) {
                found = true
                parser.add(list: field.value)
            }
            guard found else { return ResponseTags() }
            removeFields(from: &response.headerFields)
            return parser.finish(maximumTags: maximumTagsPerResponse)
        }

        /// `fields` without the tag fields, when ``removesFields`` says so: for a front end's
        /// responses that never went through the engine (the proxy's streamed ones).
        public func removeFields(from fields: inout HTTPFields) {
            if removesFields { fields.removeAll { fieldNames.contains($0.name) } }
        }
    }
}

/// Splits tag lists (space-, comma- or tab-separated) into distinct tags, in order, noting the
/// first bound broken.
private struct TagListParser {
    let maximumTagLength: Int
    private var tags: [String] = []
    /// Built past 16 tags: a few are told apart by a scan, a long list (an attack, a mistake) by a set.
    private var seen: Set<String>?
    private var refusal: String?

    init(maximumTagLength: Int) {
        self.maximumTagLength = maximumTagLength
    }

    mutating func add(list: String) {
        var list = list
        list.withUTF8 { bytes in
            var start = 0
            for end in 0...bytes.count {
                guard end == bytes.count || Self.isSeparator(bytes[end]) else { continue }
                if end > start {
                    add(tag: String(decoding: UnsafeBufferPointer(rebasing: bytes[start..<end]), as: UTF8.self))
                }
                start = end + 1
            }
        }
    }

    private static func isSeparator(_ byte: UInt8) -> Bool {
        byte == UInt8(ascii: " ") || byte == UInt8(ascii: ",") || byte == UInt8(ascii: "\t")
    }

    private mutating func add(tag: String) {
        if tags.count == 16 { seen = Set(tags) }
        let isNew = seen == nil ? !tags.contains(tag) : seen?.insert(tag).inserted ?? true
        guard isNew else { return }
        if tag.utf8.count > maximumTagLength, refusal == nil {
            refusal = "a tag of \(tag.utf8.count) bytes; the limit is \(maximumTagLength)"
        }
        tags.append(tag)
    }

    func finish(maximumTags: Int) -> ResponseTags {
        let refusal = tags.count > maximumTags ? "\(tags.count) tags; the limit is \(maximumTags)" : refusal
        return ResponseTags(tags: refusal == nil ? tags : [], refusal: refusal)
    }
}

/// The tags a response carried, or why they cannot be recorded.
struct ResponseTags: Hashable, Sendable {
    /// Distinct tags, in the order the fields list them.
    var tags: [String] = []
    /// Set when the list breaks a bound: the response must not be stored.
    var refusal: String?
}

/// One tag of a stored response and the epoch of that tag's record when it was stored.
struct TagStamp: Hashable, Sendable {
    var tag: String
    /// 0 until the engine stamps it, at the write.
    var epoch: UInt64
}
