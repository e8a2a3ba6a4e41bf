import HTTPTypes

/// Secondary cache keys (RFC 9111 §4.1): which request fields a response varies on, and whether
/// a new request matches a stored response's.
public enum Vary {
    /// The lower-cased field names listed by the response's `Vary` fields, in order, without
    /// duplicates; `["*"]` when any member is `*`; empty without `Vary`.
    public static func fieldNames(of response: HTTPResponse) -> [String] {
        var names: [String] = []
        // A set, not `names.contains`: the origin decides how many names there are, and a Vary of
        // thousands of one-letter names must not cost their square.
        var seen: Set<String> = []
        for value in response.headerFields[values: .vary] {
            for member in DirectiveParser.fieldNames(value) {
                if member == "*" { return ["*"] }
                if seen.insert(member).inserted { names.append(member) }
            }
        }
        return names
    }

    /// A request field's value normalised for comparison (§4.1 allows normalisation that keeps
    /// semantics): field lines joined with ", ", runs of whitespace collapsed to one space,
    /// leading and trailing whitespace removed. `nil` when the request does not send the field.
    public static func normalizedValue(of name: String, in request: HTTPRequest) -> String? {
        guard let fieldName = HTTPField.Name(name) else { return nil }
        return normalized(request.headerFields[values: fieldName])
    }

    /// The field lines of one field, normalised as ``normalizedValue(of:in:)`` describes.
    private static func normalized(_ values: [String]) -> String? {
        guard !values.isEmpty else { return nil }
        var result = ""
        var pendingSpace = false
        for character in values.joined(separator: ", ") {
            if character == " " || character == "\t" {
                pendingSpace = !result.isEmpty
            } else {
                if pendingSpace { result.append(" ") }
                pendingSpace = false
                result.append(character)
            }
        }
        return result
    }

    /// The request's values for `names`, as a stored response records them.
    public static func varyingFields(_ names: [String], of request: HTTPRequest) -> [StoredResponse.VaryingField] {
        let value = lookup(names.count, in: request)
        return names.map { StoredResponse.VaryingField(name: $0, value: value($0)) }
    }

    /// Above this many names, the request's fields are indexed once instead of scanned per name
    /// (each scan reads every field line, so many names against many fields would cost their
    /// product); below it, the scans are cheaper than building the index.
    static let indexedLookupThreshold = 8

    /// The normalised value of a named field in `request`, for `count` names to come.
    private static func lookup(_ count: Int, in request: HTTPRequest) -> (String) -> String? {
        guard count > indexedLookupThreshold else { return { normalizedValue(of: $0, in: request) } }
        var linesByName: [String: [String]] = [:]
        for field in request.headerFields {
            linesByName[field.name.canonicalName, default: []].append(field.value)
        }
        return { name in
            guard let fieldName = HTTPField.Name(name) else { return nil }
            return normalized(linesByName[fieldName.canonicalName] ?? [])
        }
    }

    /// Whether `request` matches the request that produced `stored` on every field its `Vary`
    /// names (§4.1): same presence, same normalised value.
    public static func matches(_ request: HTTPRequest, _ stored: StoredResponse) -> Bool {
        matches(request, stored.varyingFields)
    }

    static func matches(_ request: HTTPRequest, _ varyingFields: [StoredResponse.VaryingField]) -> Bool {
        let value = lookup(varyingFields.count, in: request)
        return varyingFields.allSatisfy { value($0.name) == $0.value }
    }
}
