import HTTPTypes

/// Secondary cache keys (RFC 9111 §4.1): which request fields a response varies on, and whether
/// a new request matches a stored response's.
public enum Vary {
    /// The lower-cased field names listed by the response's `Vary` fields, in order, without
    /// duplicates; `["*"]` when any member is `*`; empty without `Vary`.
    public static func fieldNames(of response: HTTPResponse) -> [String] {
        var names: [String] = []
        for value in response.headerFields[values: .vary] {
            for member in DirectiveParser.fieldNames(value) {
                if member == "*" { return ["*"] }
                if !names.contains(member) { names.append(member) }
            }
        }
        return names
    }

    /// A request field's value normalised for comparison (§4.1 allows normalisation that keeps
    /// semantics): field lines joined with ", ", runs of whitespace collapsed to one space,
    /// leading and trailing whitespace removed. `nil` when the request does not send the field.
    public static func normalizedValue(of name: String, in request: HTTPRequest) -> String? {
        guard let fieldName = HTTPField.Name(name) else { return nil }
        let values = request.headerFields[values: fieldName]
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
        names.map { StoredResponse.VaryingField(name: $0, value: normalizedValue(of: $0, in: request)) }
    }

    /// Whether `request` matches the request that produced `stored` on every field its `Vary`
    /// names (§4.1): same presence, same normalised value.
    public static func matches(_ request: HTTPRequest, _ stored: StoredResponse) -> Bool {
        matches(request, stored.varyingFields)
    }

    static func matches(_ request: HTTPRequest, _ varyingFields: [StoredResponse.VaryingField]) -> Bool {
        varyingFields.allSatisfy { normalizedValue(of: $0.name, in: request) == $0.value }
    }
}
