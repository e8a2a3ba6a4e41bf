import HTTPTypes

/// A request's absolute URI as it goes to an origin: its scheme, authority and target, with each
/// byte a URI may not hold percent-encoded and everything else as the client wrote it.
///
/// Servers accept targets with bytes RFC 3986 does not allow in a URI (browsers send
/// `?tag[]=new` and `{`, `|`, `^` unencoded, and NIO parses them). Foundation's `URL(string:)`
/// on Linux does not take such a target as it is: it percent-encodes the whole path or query
/// again, `%` included, and `?q=caf%C3%A9&tag[]=new` reached the origin as
/// `?q=caf%25C3%25A9&tag%5B%5D=new`, a search for other text, whose answer was stored under the
/// client's URL. Encoding only what is not allowed leaves a string `URL` keeps as it is, and the
/// same resource for every server (RFC 3986 §2.1: an encoded byte of a character not allowed
/// means that character).
package enum RequestTarget {
    /// `scheme://authority/target` for `request`, or nil without a scheme or authority. The
    /// fragment, which a request never carries to a server, is left out (as the cache key leaves
    /// it out).
    package static func absoluteURI(of request: HTTPRequest) -> String? {
        guard let scheme = request.scheme, let authority = request.authority, !authority.isEmpty else { return nil }
        var target = Substring(request.path ?? "/")
        if let fragment = target.firstIndex(of: "#") { target = target[..<fragment] }
        if target.isEmpty || target.first == "?" { target = "/" + target }
        return scheme + "://" + authority + encodingDisallowed(target)
    }

    /// `target` with every byte a URI's path and query may not hold percent-encoded: all but
    /// unreserved characters, sub-delimiters, `:`, `@`, `/`, `?`, and `%` starting a valid escape.
    static func encodingDisallowed(_ target: Substring) -> String {
        let bytes = Array(target.utf8)
        guard bytes.indices.contains(where: { !isKept(bytes, at: $0) }) else { return String(target) }
        var encoded = [UInt8]()
        encoded.reserveCapacity(bytes.count + 16)
        let hex = Array("0123456789ABCDEF".utf8)
        for index in bytes.indices {
            if isKept(bytes, at: index) {
                encoded.append(bytes[index])
            } else {
                encoded += [UInt8(ascii: "%"), hex[Int(bytes[index] >> 4)], hex[Int(bytes[index] & 0xF)]]
            }
        }
        return String(decoding: encoded, as: UTF8.self)
    }

    /// `path` (a request target) as the cache key writes it, or nil when it is so written already
    /// (the usual case, found by one pass without allocating): up to its fragment, with each byte a
    /// URI may not hold percent-encoded as ``encodingDisallowed(_:)`` encodes it for the origin.
    /// Valid escapes stay as written, as they reach the origin (`%7c` is not `%7C` there).
    package static func keyForm(_ path: String) -> String? {
        var path = path
        // A fragment's `#` is not kept either: one pass tells both.
        let keyed = path.withUTF8 { bytes in bytes.indices.allSatisfy { isKept(bytes, at: $0) } }
        guard !keyed else { return nil }
        return encodingDisallowed(
            Substring(String(decoding: path.utf8.prefix { $0 != UInt8(ascii: "#") }, as: UTF8.self)))
    }

    /// Whether the byte at `index` stays as it is.
    private static func isKept<Bytes: RandomAccessCollection<UInt8>>(_ bytes: Bytes, at index: Int) -> Bool
    where Bytes.Index == Int {
        let byte = bytes[index]
        switch byte {
        case UInt8(ascii: "a")...UInt8(ascii: "z"), UInt8(ascii: "A")...UInt8(ascii: "Z"),
            UInt8(ascii: "0")...UInt8(ascii: "9"):
            return true
        case UInt8(ascii: "%"):
            return index + 2 < bytes.count && isHexDigit(bytes[index + 1]) && isHexDigit(bytes[index + 2])
        default:
            return "-._~!$&'()*+,;=:@/?".utf8.contains(byte)
        }
    }

    private static func isHexDigit(_ byte: UInt8) -> Bool {
        switch byte {
        case UInt8(ascii: "0")...UInt8(ascii: "9"), UInt8(ascii: "a")...UInt8(ascii: "f"),
            UInt8(ascii: "A")...UInt8(ascii: "F"):
            true
        default: false
        }
    }
}
