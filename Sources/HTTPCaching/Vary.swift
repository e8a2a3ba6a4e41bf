import HTTPTypes
import TierCache

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
    /// leading and trailing whitespace removed. The content-negotiation fields whose syntax is
    /// known (``negotiationFields``) are normalised further, as ``normalizedPreferenceList(_:)``
    /// describes. A credential (``credentialFields``) is the first 128 bits of its normalised
    /// value's SHA-256 (`#` and 32 hexadecimal digits): stored responses keep the values they
    /// vary on, and their keys are built from them, so with the values themselves a bearer token
    /// or session cookie would be readable wherever the store keeps keys or records in the clear
    /// (Redis, an LMDB store with plain key names). A cryptographic hash, since the digest is all
    /// a lookup compares: nobody who reads one can make a credential that matches it. `nil` when
    /// the request does not send the field.
    public static func normalizedValue(of name: String, in request: HTTPRequest) -> String? {
        guard let fieldName = HTTPField.Name(name) else { return nil }
        return normalized(request.headerFields[values: fieldName], name: fieldName.canonicalName)
    }

    /// The request fields that carry credentials, compared by digest (lower case).
    public static let credentialFields: Set<String> = ["authorization", "proxy-authorization", "cookie"]

    /// The request fields normalised as preference lists (RFC 9110 §12.5): `Accept`,
    /// `Accept-Charset`, `Accept-Encoding` and `Accept-Language`. Every other field is compared
    /// with whitespace normalised only: the cache does not know its syntax.
    public static let negotiationFields: Set<String> = [
        "accept", "accept-charset", "accept-encoding", "accept-language",
    ]

    /// A preference list (RFC 9110 §12.4.2, §12.5) in a canonical form, so that two requests that
    /// ask for the same thing select the same stored response:
    /// - members split at commas outside quoted strings, empty members dropped (§5.6.1);
    /// - whitespace around `;` and `=` removed (the grammar's OWS and BWS);
    /// - lower-cased outside quoted strings: content codings, charsets and language ranges are
    ///   case-insensitive (§8.4.1, §8.3.2, RFC 4647 §2), and so are media types, subtypes and
    ///   parameter names (§8.3.1); parameter values keep their case, `charset`'s excepted
    ///   (§8.3.2): whether another parameter's value ignores case depends on the parameter
    ///   (§8.3.1), and serving one representation for another is worse than a second variant;
    /// - a weight of 1 (`q=1`, `q=1.0`, …) dropped, as it is the default, and other weights
    ///   written without trailing zeros (`q=0.50` is `q=0.5`);
    /// - members sorted by weight, highest first, and members of equal weight kept in the order
    ///   sent: RFC 9111 §4.1 reorders only "when order is not significant", and for equal weights
    ///   it is to many servers (RFC 9110 §12.5.4 says so of languages; Express's negotiator and
    ///   Rails break ties by position), so `en, fr` and `fr, en` may be answered in two languages
    ///   and `application/json, text/html` and its reverse in two formats.
    public static func normalizedPreferenceList(_ value: String) -> String {
        var members: [(weight: Int, text: String)] = []
        for member in splitOutsideQuotes(value, at: ",") {
            var parts = splitOutsideQuotes(member, at: ";").map { $0.trimmingWhitespace }
            guard let first = parts.first, !first.isEmpty else { continue }
            parts[0] = lowercasedOutsideQuotes(first)
            var weight = 1000
            var kept = [parts[0]]
            for parameter in parts.dropFirst() where !parameter.isEmpty {
                let pieces = splitOutsideQuotes(parameter, at: "=")
                let name = pieces[0].trimmingWhitespace.lowercased()
                let rest = pieces.dropFirst().joined(separator: "=").trimmingWhitespace
                if name == "q", let milli = weightInThousandths(rest) {
                    weight = milli
                    continue
                }
                guard !rest.isEmpty || pieces.count > 1 else {
                    kept.append(name)
                    continue
                }
                kept.append("\(name)=\(Self.caseInsensitiveParameters.contains(name) ? rest.lowercased() : rest)")
            }
            var text = kept.joined(separator: ";")
            if weight != 1000 { text += ";q=\(DecimalText.thousandths(weight))" }
            members.append((weight, text))
        }
        // By weight alone: `sort` is stable, so the list's order is kept among equals.
        members.sort { $0.weight > $1.weight }
        return members.map(\.text).joined(separator: ", ")
    }

    /// A weight (RFC 9110 §12.4.2: `0` or `1` with up to three decimals) in thousandths; nil when
    /// it is not one, and then the parameter is compared as written.
    private static func weightInThousandths(_ text: String) -> Int? {
        let parts = text.split(separator: ".", omittingEmptySubsequences: false)
        guard parts.count <= 2, let whole = parts.first, whole == "0" || whole == "1" else { return nil }
        var fraction = parts.count == 2 ? String(parts[1]) : ""
        guard fraction.count <= 3, fraction.allSatisfy({ $0.isASCII && $0.isNumber }) else { return nil }
        if whole == "1" { return fraction.allSatisfy({ $0 == "0" }) ? 1000 : nil }
        fraction += String(repeating: "0", count: 3 - fraction.count)
        return Int(fraction)
    }

    /// The parameters whose values ignore case (RFC 9110 §8.3.2), lower-cased.
    private static let caseInsensitiveParameters: Set<String> = ["charset"]

    /// `text` split at `separator` where it is not inside a quoted string (RFC 9110 §5.6.4).
    private static func splitOutsideQuotes(_ text: String, at separator: Character) -> [String] {
        var pieces: [String] = []
        var current = ""
        forEachCharacter(of: text) { character, isQuoted in
            if character == separator, !isQuoted {
                pieces.append(current)
                current = ""
            } else {
                current.append(character)
            }
        }
        pieces.append(current)
        return pieces
    }

    private static func lowercasedOutsideQuotes(_ text: String) -> String {
        guard text.contains("\"") else { return text.lowercased() }
        var result = ""
        forEachCharacter(of: text) { character, isQuoted in
            result += isQuoted ? String(character) : character.lowercased()
        }
        return result
    }

    /// Calls `body` with each character of `text` and whether it belongs to a quoted string
    /// (its quotes and escapes included, §5.6.4).
    private static func forEachCharacter(of text: String, _ body: (Character, _ isQuoted: Bool) -> Void) {
        var quoted = false
        var escaped = false
        for character in text {
            if escaped {
                escaped = false
                body(character, true)
            } else if quoted, character == "\\" {
                escaped = true
                body(character, true)
            } else if character == "\"" {
                quoted.toggle()
                body(character, true)
            } else {
                body(character, quoted)
            }
        }
    }

    /// The field lines of one field, normalised as ``normalizedValue(of:in:)`` describes;
    /// `name` is the field's lower-cased name.
    private static func normalized(_ values: [String], name: String) -> String? {
        guard !values.isEmpty else { return nil }
        if negotiationFields.contains(name) { return normalizedPreferenceList(values.joined(separator: ", ")) }
        if credentialFields.contains(name) { return CredentialDigest.of(collapsingWhitespace(values)) }
        return collapsingWhitespace(values)
    }

    /// Field lines joined with ", ", runs of spaces and tabs collapsed to one space, none at the ends.
    private static func collapsingWhitespace(_ values: [String]) -> String {
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
            return normalized(linesByName[fieldName.canonicalName] ?? [], name: fieldName.canonicalName)
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

extension StringProtocol {
    /// Without leading and trailing spaces and tabs (HTTP's OWS, RFC 9110 §5.6.3).
    fileprivate var trimmingWhitespace: String {
        let isWhitespace: (Character) -> Bool = { $0 == " " || $0 == "\t" }
        guard let first = firstIndex(where: { !isWhitespace($0) }), let last = lastIndex(where: { !isWhitespace($0) })
        else { return "" }
        return String(self[first...last])
    }
}
