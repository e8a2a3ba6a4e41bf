/// Splits comma-separated lists of `name[=value]` directives, honouring quoted strings (RFC 9110
/// §5.6.4) so that a comma inside quotes does not split.
package enum DirectiveParser {
    /// Calls `body` with each directive's name and value (without surrounding whitespace; the
    /// value still quoted) in a comma-separated list, splitting only outside quoted strings.
    /// Works on the bytes in place: nothing is allocated.
    static func forEachDirective(
        in bytes: UnsafeBufferPointer<UInt8>, _ body: (UnsafeBufferPointer<UInt8>, UnsafeBufferPointer<UInt8>?) -> Void
    ) {
        var index = 0
        let count = bytes.count
        while index < count {
            var inQuotes = false, escaped = false
            let start = index
            var equals: Int?
            while index < count {
                let byte = bytes[index]
                if escaped {
                    escaped = false
                } else if inQuotes {
                    if byte == UInt8(ascii: "\\") {
                        escaped = true
                    } else if byte == UInt8(ascii: "\"") {
                        inQuotes = false
                    }
                } else if byte == UInt8(ascii: "\"") {
                    inQuotes = true
                } else if byte == UInt8(ascii: ",") {
                    break
                } else if byte == UInt8(ascii: "="), equals == nil {
                    equals = index
                }
                index += 1
            }
            let name = trim(bytes, start, equals ?? index)
            if name.count > 0 {
                body(name, equals.map { trim(bytes, $0 + 1, index) })
            }
            index += 1  // past the comma
        }
    }

    private static func trim(
        _ bytes: UnsafeBufferPointer<UInt8>, _ start: Int, _ end: Int
    ) -> UnsafeBufferPointer<UInt8> {
        var low = start, high = end
        while low < high, bytes[low] == UInt8(ascii: " ") || bytes[low] == UInt8(ascii: "\t") { low += 1 }
        while high > low, bytes[high - 1] == UInt8(ascii: " ") || bytes[high - 1] == UInt8(ascii: "\t") { high -= 1 }
        return UnsafeBufferPointer(rebasing: bytes[low..<high])
    }

    /// A value's text, unquoted with escapes resolved.
    static func unquotedString(_ bytes: UnsafeBufferPointer<UInt8>) -> String {
        unquote(Substring(String(decoding: bytes, as: UTF8.self)))
    }

    /// The directives of one field value, names lower-cased, values unquoted (built on
    /// ``forEachDirective(in:_:)``, the one splitter).
    static func directives(in fieldValue: String) -> [(name: String, value: String?)] {
        var fieldValue = fieldValue
        var result: [(String, String?)] = []
        fieldValue.withUTF8 { bytes in
            forEachDirective(in: bytes) { name, value in
                result.append((String(decoding: name, as: UTF8.self).lowercased(), value.map(unquotedString)))
            }
        }
        return result
    }

    /// The field names listed in a directive's value (`no-cache="Set-Cookie, Via"`), lower-cased;
    /// any comma-separated list of tokens (content codings) reads the same way.
    package static func fieldNames(_ value: String) -> [String] {
        value.split(separator: ",").map { $0.trimmingOWS().lowercased() }.filter { !$0.isEmpty }
    }

    /// The field names a qualified `no-cache` or `private` lists, lower-cased; nil when it lists
    /// none, or something that is not a field name (a token, RFC 9110 §5.1): the directive then
    /// reads as unqualified.
    static func qualifyingFieldNames(_ value: String) -> [String]? {
        let names = fieldNames(value)
        guard !names.isEmpty, names.allSatisfy({ $0.utf8.allSatisfy(isTokenByte) }) else { return nil }
        return names
    }

    /// Whether `byte` may appear in a token (`tchar`, RFC 9110 §5.6.2).
    private static func isTokenByte(_ byte: UInt8) -> Bool {
        switch byte {
        case UInt8(ascii: "a")...UInt8(ascii: "z"), UInt8(ascii: "A")...UInt8(ascii: "Z"),
            UInt8(ascii: "0")...UInt8(ascii: "9"):
            return true
        default:
            return "!#$%&'*+-.^_`|~".utf8.contains(byte)
        }
    }

    /// A quoted string's content with its escapes resolved, or a token as it is.
    static func unquote(_ value: Substring) -> String {
        guard value.count >= 2, value.first == "\"", value.last == "\"" else { return String(value) }
        var result = ""
        var escaped = false
        for character in value.dropFirst().dropLast() {
            if escaped {
                result.append(character)
                escaped = false
            } else if character == "\\" {
                escaped = true
            } else {
                result.append(character)
            }
        }
        return result
    }
}

extension StringProtocol {
    /// Without leading and trailing spaces and tabs (HTTP's optional whitespace).
    func trimmingOWS() -> Substring {
        var slice = self[...]
        while let first = slice.first, first == " " || first == "\t" { slice = slice.dropFirst() }
        while let last = slice.last, last == " " || last == "\t" { slice = slice.dropLast() }
        return Substring(slice)
    }
}
