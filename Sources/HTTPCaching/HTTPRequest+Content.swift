import HTTPTypes

extension HTTPRequest {
    /// Whether the request announces content (`Transfer-Encoding`, or a `Content-Length` other
    /// than 0). A GET or HEAD with content (a search API's query in the body) goes past the cache,
    /// with its body: the key cannot see the content, and the answer to one query would be stored
    /// for every other. (Over HTTP/2 content need not be announced.)
    package var announcesContent: Bool {
        headerFields[.transferEncoding] != nil
            || headerFields[.contentLength].map { $0.trimmingCharacters(in: .whitespaces) != "0" } == true
    }
}
