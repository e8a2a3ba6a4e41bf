import Foundation
import HTTPTypes

/// A single byte range of a `Range` request (RFC 9110 §14.1.2), and how it applies to a
/// representation of a known length.
///
/// The cache answers one range from a stored (or just fetched) complete response. A `Range`
/// field it does not understand, in a unit other than `bytes`, syntactically invalid, or asking
/// for several ranges, is ignored, and the whole response is sent, as §14.2 lets a server do
/// (several ranges would need a `multipart/byteranges` body).
public enum ByteRange: Hashable, Sendable {
    /// `first-last` or `first-` (`last` nil: to the end).
    case from(first: Int, last: Int?)
    /// `-length`: the last `length` bytes.
    case suffix(length: Int)

    /// The one byte range in a `Range` field value, or nil when the field is to be ignored.
    public init?(rangeField value: String) {
        let trimmed = value.trimmingCharacters(in: .whitespaces)
        guard let equals = trimmed.firstIndex(of: "="),
            trimmed[..<equals].trimmingCharacters(in: .whitespaces).lowercased() == "bytes"
        else { return nil }
        let specs = trimmed[trimmed.index(after: equals)...].split(separator: ",", omittingEmptySubsequences: true)
            .map { $0.trimmingCharacters(in: .whitespaces) }.filter { !$0.isEmpty }
        guard specs.count == 1, let spec = specs.first, let dash = spec.firstIndex(of: "-") else { return nil }
        let firstText = spec[..<dash], lastText = spec[spec.index(after: dash)...]
        // Positions too large for an Int are past any representation's end.
        func number(_ text: Substring) -> Int? {
            guard !text.isEmpty, text.allSatisfy({ $0.isASCII && $0.isNumber }) else { return nil }
            return Int(text) ?? Int.max
        }
        if firstText.isEmpty {
            guard let length = number(lastText) else { return nil }
            self = .suffix(length: length)
        } else {
            guard let first = number(firstText) else { return nil }
            if lastText.isEmpty {
                self = .from(first: first, last: nil)
            } else {
                // A last position below the first makes the spec invalid (§14.1.1): ignored.
                guard let last = number(lastText), last >= first else { return nil }
                self = .from(first: first, last: last)
            }
        }
    }

    /// The bytes this range selects in a representation of `length` bytes (§14.1.2), or nil
    /// when it is unsatisfiable (416): a first position at or past the end, or an empty suffix.
    public func bounds(in length: Int) -> ClosedRange<Int>? {
        switch self {
        case .from(let first, let last):
            guard first < length else { return nil }
            return first...min(last ?? length - 1, length - 1)
        case .suffix(let suffix):
            guard suffix > 0, length > 0 else { return nil }
            return max(0, length - suffix)...(length - 1)
        }
    }

    /// Whether an `If-Range` value lets the range apply to `response` (RFC 9110 §13.1.5): an
    /// entity tag must match the response's strongly; a date must equal its `Last-Modified`
    /// exactly, and that `Last-Modified` must be a strong validator, which for a stored response
    /// means its `Date` is at least one second later (§8.8.2.2: otherwise the representation may
    /// have changed again within the second it names). Otherwise the whole response is sent.
    public static func ifRange(_ value: String, allowsRangeOf response: HTTPResponse) -> Bool {
        let trimmed = value.trimmingCharacters(in: .whitespaces)
        if trimmed.hasPrefix("\"") || trimmed.hasPrefix("W/") {
            guard let condition = EntityTag(trimmed), let current = response.headerFields[.eTag].flatMap(EntityTag.init)
            else { return false }
            return condition.strongMatches(current)
        }
        guard let date = HTTPDate.parse(trimmed),
            let modified = response.headerFields[.lastModified].flatMap({ HTTPDate.parse($0) }),
            let generated = response.headerFields[.date].flatMap({ HTTPDate.parse($0) }),
            generated.timeIntervalSince(modified) >= 1
        else {
            return false
        }
        return date == modified
    }
}

/// A `Content-Range` of one byte range with a known complete length (RFC 9110 §14.4), the form
/// a stored partial response must have.
public struct ContentRange: Hashable, Sendable {
    /// The first and last byte positions, inclusive.
    public var bounds: ClosedRange<Int>
    /// The length of the complete representation.
    public var completeLength: Int

    /// A content range; nil unless `bounds` lies within `completeLength`.
    public init?(bounds: ClosedRange<Int>, completeLength: Int) {
        guard bounds.lowerBound >= 0, bounds.upperBound < completeLength else { return nil }
        self.bounds = bounds
        self.completeLength = completeLength
    }

    /// Parses `bytes first-last/complete`; nil for another unit, an unknown complete length
    /// (`*`), an unsatisfied range (`*/length`), or positions out of order or past the end.
    public init?(field value: String) {
        let trimmed = value.trimmingCharacters(in: .whitespaces)
        guard trimmed.lowercased().hasPrefix("bytes ") else { return nil }
        let spec = trimmed.dropFirst(6).trimmingCharacters(in: .whitespaces)
        let parts = spec.split(separator: "/", omittingEmptySubsequences: false)
        guard parts.count == 2 else { return nil }
        let positions = parts[0].split(separator: "-", omittingEmptySubsequences: false)
        func number(_ text: Substring) -> Int? { text.allSatisfy({ $0.isASCII && $0.isNumber }) ? Int(text) : nil }
        guard positions.count == 2, let first = number(positions[0]), let last = number(positions[1]), first <= last,
            let complete = number(parts[1])
        else { return nil }
        self.init(bounds: first...last, completeLength: complete)
    }

    /// The field value: `bytes first-last/complete`.
    public var fieldValue: String { "bytes \(bounds.lowerBound)-\(bounds.upperBound)/\(completeLength)" }
}
